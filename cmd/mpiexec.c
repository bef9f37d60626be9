/* cmd/mpiexec.c: `lamkit mpiexec`: Hydra-compatible options, MPMD app contexts, the job spec;
 * runs it on the booted universe's agents, or with none booted on a transient local agent
 * (the embedded default). */
#include "bind.h"
#include "cmd.h"
#include "core.h"
#include "jobctl.h"
#include "bootlua.h"
#include "lua_host.h"
#include "tp.h"
#include "universe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char usage[] =
    "lamkit mpiexec [GLOBAL OPTIONS] [LOCAL OPTIONS] PROGRAM [ARGS] [: [LOCAL OPTIONS] PROGRAM "
    "[ARGS]]...\n"
    "\n"
    "Runs a parallel job. With a universe booted (its state file is $LAMKIT_UNIVERSE, else\n"
    "'universe' in the session directory) the ranks are placed over its nodes' slots; with none\n"
    "booted, or with --local, it runs on this host (the embedded local default: one slot per\n"
    "CPU). More ranks than slots are allowed and marked oversubscribed.\n"
    "\n"
    "Local options (per program, before it):\n"
    "  -n, -np N            number of ranks (default: the number of slots, for one program;\n"
    "                       in a universe the slots of the nodes that take ranks)\n"
    "  -env NAME VALUE      set NAME for this program's ranks\n"
    "  -envall / -envnone / -envlist A,B   which of our variables this program gets\n"
    "  -wdir DIR            working directory of this program's ranks\n"
    "Global options:\n"
    "  -genv NAME VALUE     set NAME for every rank\n"
    "  -genvall             pass our whole environment (the default)\n"
    "  -genvnone            pass none of it (only -genv/-env variables)\n"
    "  -genvlist A,B        pass only these of our variables\n"
    "  -ppn N               N consecutive ranks per node, the nodes in turn\n"
    "  --map-by node|slot   node: one rank per node in turn; slot (the default): fill each\n"
    "                       node's slots, then the next node's (past the last, start again)\n"
    "  --map-by OBJ[:MODS]  inside a node, ranks in turn on core, socket, numa, l3cache or\n"
    "                       hwthread objects (and bound to them); ppr:N:OBJ: N per object;\n"
    "                       MODS (',' or ':'): pe=M (M CPUs each), span, oversubscribe,\n"
    "                       nooversubscribe. Read from /sys on each node (doc/PLACEMENT.md)\n"
    "  --rank-by OBJ[:fill] rank order inside a node: slot, node, core, socket, numa, ...\n"
    "  --bind-to OBJ[:overload-allowed]  none, hwthread, core, l3cache, numa, socket, or\n"
    "                       auto (as before: cores for Open MPI programs of <= 2 ranks on a\n"
    "                       node, nothing else); -bind-to OBJ[:N] / -map-by OBJ: Hydra's\n"
    "  --cpus-per-rank N    N CPUs per rank (as :pe=N); --use-hwthread-cpus: a CPU is a\n"
    "                       hwthread, not a core\n"
    "  --report-bindings    print each rank's binding as Open MPI's mpirun does\n"
    "  -hosts, --host A,B   only these nodes of the universe, in this order (also nodes that\n"
    "                       are marked schedule=no)\n"
    "  --local              run on this host even when a universe is booted (also\n"
    "                       LAMKIT_UNIVERSE=none)\n"
    "  -l, --tag-output     prefix every output line with \"[rank] \"\n"
    "  --timeout SEC        kill the job after SEC seconds, exit status 124 (also "
    "MPIEXEC_TIMEOUT)\n"
    "  --kill-grace MS      after forwarding SIGINT/SIGTERM/SIGHUP, SIGKILL the ranks after MS\n"
    "                       milliseconds (default 3000; LAMKIT_KILL_GRACE)\n"
    "  --mpi KIND           auto (default), mpich, openmpi (Open MPI on PMIx), openmpi-flux (on\n"
    "                       its PMI-1 flux component), pmix (serve every app PMIx) or none: what\n"
    "                       environment ranks get\n"
    "  --tp POLICY          lamkit MPI's paths (sets LAMKIT_TP): auto (shm inside a node, tcp\n"
    "                       across), shm+udp (reliable multi-route udp across), shm+tcp,\n"
    "                       shm+tcp,udp (both, messages scheduled on either), shm+tcp,tcp (two\n"
    "                       tcp connections, large messages striped), or without shm+\n"
    "                       the same between every pair of ranks, one node too. Default: the\n"
    "                       universe schema's transport setting, else auto\n"
    "  --wait MODE          how lamkit MPI's ranks wait (sets LAMKIT_WAIT): spin (poll, the\n"
    "                       fastest when every rank has a CPU), block (yield, then sleep until\n"
    "                       a message comes), or auto (default: block where a node has more\n"
    "                       ranks than the CPUs they may use)\n"
    "  --on-node-failure abort|continue   in a universe, when a node of the job fails (its\n"
    "                       agent dies, hangs or is cut off): abort (the default) ends the job;\n"
    "                       continue lets the ranks on the other nodes go on, tells them which\n"
    "                       ranks were lost (PMI_dead_processes; lamkit's MPI returns\n"
    "                       MPI_ERR_PROC_FAILED for operations with them)\n"
    "  --pmi-port           serve PMI over TCP (PMI_PORT/PMI_ID) instead of an inherited socket\n"
    "  -v, --verbose        report each rank's pid and where the ranks go\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit status: 0, or the first failure's: a rank's exit status, 128+N for a rank killed by\n"
    "signal N, the code given to MPI_Abort, 124 for --timeout, 127/126 for a program that\n"
    "cannot be started, 128+N when mpiexec itself got signal N, 111 when an agent of the job\n"
    "cannot be reached or goes away. A rank that fails before it finalized (MPI_Finalize) ends\n"
    "the job at once; after it, the other ranks finish first. Nodes the universe's watch has\n"
    "declared down take no ranks (one line names them); -hosts naming one is an error.\n";

struct app_opts {
	struct boot_app app;
	int env_mode; /* 0 = inherit global, 1 = all, 2 = none, 3 = list */
	char *envlist;
	int n_given;
};

struct opts {
	struct app_opts *apps;
	int napps;
	char **genv;
	int ngenv;
	int genv_mode; /* 1 = all, 2 = none, 3 = list */
	char *genvlist;
	int ppn, tag, timeout, grace, verbose, pmi_port, mpi_kind, bind;
	int by_node, local, local_agents, local_slots;
	struct boot_bind_spec place; /* --map-by, --bind-to & co. (lib/boot/bind.h) */
	int place_given;
	int on_node_failure, per_node;
	char *hosts;
	char *wdir;
	int singinit_port;
	pid_t singinit_pid;
};

static int add_str(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, (size_t)(*n + 2) * sizeof *nv);

	if (!nv)
		return -1;
	*v = nv;
	nv[(*n)++] = strdup(s);
	nv[*n] = NULL;
	return nv[*n - 1] ? 0 : -1;
}

static int add_kv(char ***v, int *n, const char *k, const char *val)
{
	char buf[8192];

	if (snprintf(buf, sizeof buf, "%s=%s", k, val) >= (int)sizeof buf)
		return -1;
	return add_str(v, n, buf);
}

static int parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/* Normalise "--opt=value" and "--opt"/"-opt": returns the bare name; *inl gets the value. */
static const char *opt_name(char *arg, char **inl)
{
	*inl = NULL;
	while (*arg == '-')
		arg++;
	char *eq = strchr(arg, '=');
	if (eq) {
		*eq = '\0';
		*inl = eq + 1;
	}
	return arg;
}

static int is(const char *a, const char *b)
{
	return !strcmp(a, b);
}

static struct app_opts *new_app(struct opts *o)
{
	struct app_opts *a = realloc(o->apps, (size_t)(o->napps + 1) * sizeof *a);

	if (!a)
		return NULL;
	o->apps = a;
	a = &o->apps[o->napps++];
	memset(a, 0, sizeof *a);
	return a;
}

#define NEED(k)                                                                                    \
	do {                                                                                       \
		if (!inl && i + (k) >= argc) {                                                     \
			rc = cmd_usage_error("mpiexec", "option '%s' needs %s", argv[i],           \
			                     (k) == 2 ? "a name and a value" : "a value");         \
			free(copy);                                                                \
			return rc;                                                                 \
		}                                                                                  \
	} while (0)
/* an inline value points into argv, not into the option's copy (freed after the option) */
#define VAL() (inl ? argv[i] + (inl - copy) : argv[++i])

/* Parse one app context starting at argv[*ip]; stops after its program's arguments (before
 * ":" or the end). Global options may appear in any context. 0, or an exit status. */
static int parse_context(struct opts *o, int argc, char **argv, int *ip)
{
	struct app_opts *a = new_app(o);
	int i = *ip;

	if (!a)
		return CORE_EXIT_SYSTEM;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		char *copy = strdup(argv[i]), *inl;
		if (!copy)
			return CORE_EXIT_SYSTEM;
		const char *n = opt_name(copy, &inl);
		int rc = 0, valued = 0;
		if (is(n, "n") || is(n, "np")) {
			NEED(1);
			if (parse_int(VAL(), 1, 1 << 20, &a->app.nprocs) < 0)
				rc = cmd_usage_error(
				    "mpiexec", "-n needs a positive number, got '%s'", argv[i]);
			a->n_given = 1;
		} else if (is(n, "env") || is(n, "genv")) {
			NEED(2);
			const char *k = argv[++i], *v = argv[++i];
			if (!*k || strchr(k, '='))
				rc = cmd_usage_error("mpiexec", "bad variable name '%s'", k);
			else if (n[0] == 'g' ? add_kv(&o->genv, &o->ngenv, k, v)
			                     : add_kv(&a->app.env, &a->app.nenv, k, v))
				rc = CORE_EXIT_SYSTEM;
		} else if (is(n, "genvall") || is(n, "envall")) {
			*(n[0] == 'g' ? &o->genv_mode : &a->env_mode) = 1;
		} else if (is(n, "genvnone") || is(n, "envnone")) {
			*(n[0] == 'g' ? &o->genv_mode : &a->env_mode) = 2;
		} else if (is(n, "genvlist") || is(n, "envlist")) {
			NEED(1);
			*(n[0] == 'g' ? &o->genv_mode : &a->env_mode) = 3;
			*(n[0] == 'g' ? &o->genvlist : &a->envlist) = VAL();
		} else if (is(n, "wdir") || is(n, "dir")) {
			NEED(1);
			a->app.wdir = VAL();
		} else if (is(n, "gwdir")) {
			NEED(1);
			o->wdir = VAL();
		} else if (is(n, "ppn")) {
			NEED(1);
			if (parse_int(VAL(), 1, 1 << 20, &o->ppn) < 0)
				rc = cmd_usage_error("mpiexec", "-ppn needs a positive number");
		} else if (boot_bind_is_option(n, &valued)) {
			/* placement (lib/boot/bind.h): Open MPI's options, Hydra's single-dash ones
			 */
			int hydra = argv[i][1] != '-';
			char why[400];
			if (valued)
				NEED(1);
			const char *k = valued ? VAL() : NULL;
			if (boot_bind_option(&o->place, n, k, hydra, why, sizeof why) < 0)
				rc = cmd_usage_error("mpiexec", "%s", why);
			o->place_given = 1;
			if (is(n, "map-by"))
				o->by_node = o->place.map == BOOT_MAP_NODE;
		} else if (is(n, "hosts") || is(n, "host") || is(n, "H")) {
			NEED(1);
			o->hosts = VAL();
		} else if (is(n, "local")) {
			o->local = 1;
		} else if (is(n, "on-node-failure")) {
			NEED(1);
			const char *k = VAL();
			o->on_node_failure = is(k, "abort")      ? BOOT_NODEFAIL_ABORT
			                     : is(k, "continue") ? BOOT_NODEFAIL_CONTINUE
			                                         : -1;
			if (o->on_node_failure < 0)
				rc = cmd_usage_error(
				    "mpiexec", "--on-node-failure: abort or continue, not '%s'", k);
		} else if (is(n, "per-node")) { /* lamkit exec: one rank per node up */
			o->per_node = 1;
		} else if (is(n, "local-agents")) { /* testing aid: K[:SLOTS] forked agents */
			NEED(1);
			const char *k = VAL();
			char kk[32];
			size_t kl = strcspn(k, ":");
			snprintf(kk, sizeof kk, "%.*s", (int)(kl < 31 ? kl : 31), k);
			if (parse_int(kk, 1, 1024, &o->local_agents) < 0 ||
			    (k[kl] && parse_int(k + kl + 1, 1, 1 << 20, &o->local_slots) < 0))
				rc =
				    cmd_usage_error("mpiexec", "--local-agents needs K or K:SLOTS");
		} else if (is(n, "l") || is(n, "tag-output") || is(n, "prepend-rank")) {
			o->tag = 1;
		} else if (is(n, "timeout")) {
			NEED(1);
			if (parse_int(VAL(), 1, INT_MAX / 1000, &o->timeout) < 0)
				rc = cmd_usage_error("mpiexec", "--timeout needs seconds > 0");
		} else if (is(n, "kill-grace")) {
			NEED(1);
			if (parse_int(VAL(), 0, 3600000, &o->grace) < 0)
				rc = cmd_usage_error("mpiexec", "--kill-grace needs milliseconds");
		} else if (is(n, "mpi")) {
			NEED(1);
			const char *k = VAL();
			o->mpi_kind = is(k, "auto")           ? BOOT_MPI_AUTO
			              : is(k, "mpich")        ? BOOT_MPI_MPICH
			              : is(k, "openmpi")      ? BOOT_MPI_OPENMPI
			              : is(k, "openmpi-flux") ? BOOT_MPI_OPENMPI_FLUX
			              : is(k, "pmix")         ? BOOT_MPI_PMIX
			              : is(k, "none")         ? BOOT_MPI_NONE
			                                      : -1;
			if (o->mpi_kind < 0)
				rc = cmd_usage_error(
				    "mpiexec",
				    "--mpi: auto, mpich, openmpi, openmpi-flux, pmix "
				    "or none, not '%s'",
				    k);
		} else if (is(n, "tp")) {
			NEED(1);
			const char *k = VAL();
			char why[200];
			if (tp_policy_check(k, why, sizeof why) < 0)
				rc = cmd_usage_error(
				    "mpiexec",
				    "--tp '%s': %s (auto, shm+tcp, shm+udp, "
				    "shm+tcp,udp, shm+tcp,tcp, tcp, udp, tcp,udp; see "
				    "doc/PROTOCOL-mpi-wire.md section 7)",
				    k, why);
			else if (add_kv(&o->genv, &o->ngenv, "LAMKIT_TP", k) < 0)
				rc = cmd_usage_error("mpiexec", "out of memory");
		} else if (is(n, "wait")) {
			NEED(1);
			const char *k = VAL();
			if (tp_wait_check(k) < 0)
				rc = cmd_usage_error("mpiexec",
				                     "--wait: auto, block or spin, not '%s'", k);
			else if (add_kv(&o->genv, &o->ngenv, "LAMKIT_WAIT", k) < 0)
				rc = cmd_usage_error("mpiexec", "out of memory");
		} else if (is(n, "pmi-port")) {
			o->pmi_port = 1;
		} else if (is(n, "v") || is(n, "verbose")) {
			o->verbose = 1;
		} else if (is(n, "h") || is(n, "help")) {
			free(copy);
			printf("usage: %s", usage);
			return -1;
		} else if (is(n, "pmi_args")) {
			/* an MPICH singleton asks for a process manager: port iface key pid */
			if (i + 4 >= argc)
				rc = cmd_usage_error("mpiexec",
				                     "-pmi_args needs PORT IFACE KEY PID");
			else if (parse_int(argv[i + 1], 1, 65535, &o->singinit_port) < 0 ||
			         parse_int(argv[i + 4], 1, INT_MAX, &o->singinit_pid) < 0)
				rc = cmd_usage_error("mpiexec", "-pmi_args: bad port or pid");
			i += 4;
		} else {
			rc = cmd_usage_error("mpiexec", "unknown option '%s'", argv[i]);
		}
		free(copy);
		if (rc)
			return rc;
	}
	if (o->singinit_port && i >= argc) {
		static char *singleton_argv[] = {"(singleton)", NULL};
		*ip = i;
		a->app.exe = singleton_argv[0]; /* adopted, never started */
		a->app.argv = singleton_argv;
		a->app.argc = 1;
		a->app.nprocs = 1;
		a->n_given = 1;
		return 0;
	}
	if (i >= argc || !strcmp(argv[i], ":"))
		return cmd_usage_error("mpiexec", "no program to run%s",
		                       o->napps > 1 ? " after ':'" : "");
	a->app.exe = argv[i];
	int start = i;
	while (i < argc && strcmp(argv[i], ":"))
		i++;
	a->app.argc = i - start;
	a->app.argv = argv + start;
	*ip = i < argc ? i + 1 : i;
	if (i < argc && *ip >= argc)
		return cmd_usage_error("mpiexec", "nothing after ':'");
	return 0;
}
#undef NEED
#undef VAL

/* Is NAME (of "NAME=value") in the comma list? */
static int in_list(const char *list, const char *kv)
{
	size_t kl = strcspn(kv, "=");

	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ",");
		if (n == kl && !strncmp(p, kv, n))
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* The base environment (mode 1 all, 2 none, 3 list) plus -genv; per-app modes become -env
 * entries of that app. 0, or -1 on ENOMEM. */
static int build_env(struct opts *o, struct boot_jobspec *js)
{
	int mode = o->genv_mode ? o->genv_mode : 1;

	for (char **e = environ; *e; e++)
		if ((mode == 1 || (mode == 3 && in_list(o->genvlist, *e))) &&
		    add_str(&js->env, &js->nenv, *e) < 0)
			return -1;
	for (int i = 0; i < o->ngenv; i++)
		if (add_str(&js->env, &js->nenv, o->genv[i]) < 0)
			return -1;
	for (int a = 0; a < o->napps; a++) {
		struct app_opts *ap = &o->apps[a];
		if (ap->env_mode == 0 || ap->env_mode == mode)
			continue;
		/* the app wants more of our environment than the job's base gives it */
		char **extra = NULL;
		int nextra = 0;
		for (char **e = environ; *e; e++)
			if ((ap->env_mode == 1 ||
			     (ap->env_mode == 3 && in_list(ap->envlist, *e))) &&
			    add_str(&extra, &nextra, *e) < 0)
				return -1;
		for (int i = 0; i < ap->app.nenv; i++)
			if (add_str(&extra, &nextra, ap->app.env[i]) < 0)
				return -1;
		core_strv_free(ap->app.env, ap->app.nenv);
		ap->app.env = extra;
		ap->app.nenv = nextra;
	}
	if (!js->env)
		js->env = calloc(1, sizeof *js->env);
	return js->env ? 0 : -1;
}

static int build_job(struct opts *o, struct boot_jobspec *js, int slots, char *err, size_t errlen)
{
	static char kvs[64], mapping[64], cwd[4096];
	int size = 0;

	for (int a = 0; a < o->napps; a++) {
		struct app_opts *ap = &o->apps[a];
		if (!ap->n_given)
			ap->app.nprocs = o->napps == 1 ? slots : 1;
		ap->app.first_rank = size;
		if (size > (1 << 20) - ap->app.nprocs)
			return core_errprintf(err, errlen, "too many ranks");
		size += ap->app.nprocs;
	}
	if (!js->jobid)
		js->jobid = 1;
	snprintf(kvs, sizeof kvs, "kvs_%d_%u", (int)getpid(), js->jobid);
	js->kvsname = kvs;
	js->size = size;
	js->universe_size = size > slots ? size : slots;
	js->tag_output = o->tag;
	js->pmi_port = o->pmi_port;
	js->mpi_kind = o->mpi_kind;
	js->oversubscribed = size > slots;
	js->bind = o->bind;
	js->slots = slots; /* the agents' own slots when placed over nodes (jobctl.c) */
	if (o->place_given) {
		static char place[256];
		boot_bind_text(&o->place, place, sizeof place);
		js->placement = place;
	}
	if (!o->wdir && !getcwd(cwd, sizeof cwd))
		return core_errprintf(err, errlen, "cannot read the current directory: %s",
		                      strerror(errno));
	js->wdir = o->wdir ? o->wdir : cwd;
	if (build_env(o, js) < 0)
		return core_errprintf(err, errlen, "out of memory");
	js->napps = o->napps;
	js->apps = calloc((size_t)o->napps, sizeof *js->apps);
	js->ranks = calloc((size_t)size, sizeof *js->ranks);
	if (!js->apps || !js->ranks)
		return core_errprintf(err, errlen, "out of memory");
	for (int a = 0; a < o->napps; a++)
		js->apps[a] = o->apps[a].app;
	/* one host: every rank here, in one block */
	snprintf(mapping, sizeof mapping, "(vector,(0,1,%d))", size);
	js->process_mapping = mapping;
	for (int r = 0; r < size; r++)
		js->ranks[r] = r;
	js->nranks = size;
	js->nagents = 1;
	return 0;
}

/* MPICH's singleton listens on 127.0.0.1:port for its process manager; connect to it. */
static int singinit_connect(int port, char *err, size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		core_errprintf(err, errlen, "cannot reach the singleton's port 127.0.0.1:%d: %s",
		               port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* What build_job and parsing allocated (the strings of argv are not ours). */
static void free_job(struct opts *o, struct boot_jobspec *js)
{
	core_strv_free(js->env, js->nenv);
	free(js->apps);
	free(js->ranks);
	core_strv_free(o->genv, o->ngenv);
	for (int a = 0; a < o->napps; a++)
		core_strv_free(o->apps[a].app.env, o->apps[a].app.nenv);
	free(o->apps);
}

enum { RUN_LOCAL, RUN_AGENTS, RUN_UNIVERSE };

/* -hosts with no universe: only this host may be named. 0, or 100 (said). */
static int check_local_hosts(const char *hosts)
{
	const char *me = core_hostname();
	size_t ml = strlen(me);

	for (const char *p = hosts; p && *p;) {
		size_t n = strcspn(p, ",");
		int mine = (n == ml && !strncmp(p, me, n)) ||
		           (n > ml && !strncmp(p, me, ml) && p[ml] == '.') ||
		           (n == 9 && !strncmp(p, "localhost", 9));
		if (n && !mine) {
			fprintf(
			    stderr,
			    "lamkit mpiexec: host '%.*s' is not in the universe (nodes: %s); with "
			    "no universe booted jobs run on this host\n",
			    (int)(n > 200 ? 200 : n), p, me);
			return CORE_EXIT_USAGE;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}

/* Whether the job's transport policy was given (--tp, -genv LAMKIT_TP, or the environment). */
static int tp_given(const struct opts *o)
{
	for (int i = 0; i < o->ngenv; i++)
		if (!strncmp(o->genv[i], "LAMKIT_TP=", 10))
			return 1;
	return o->genv_mode != 2 && getenv("LAMKIT_TP");
}

/* The universe schema's transport setting for this job: the string it recorded, or what its
 * function returns for the job (lua/transport.lua calls it). 0 with spec set ("" for none), or
 * -1 with one line in err. */
static int universe_transport(const struct boot_universe *u, const struct opts *o, int slots,
                              char *spec, size_t len, char *err, size_t errlen)
{
	char why[300];
	int size = 0;

	spec[0] = '\0';
	if (!u->transport || !*u->transport)
		return 0;
	if (strcmp(u->transport, "function") != 0) {
		snprintf(spec, len, "%s", u->transport);
	} else {
		lua_State *L = core_lua_new(err, errlen);
		if (!L)
			return -1;
		bootlua_register(L);
		for (int a = 0; a < o->napps; a++)
			size += o->apps[a].n_given ? o->apps[a].app.nprocs
			        : o->napps == 1    ? slots
			                           : 1;
		lua_pushstring(L, u->schema ? u->schema : "");
		lua_createtable(L, 0, 3);
		lua_pushinteger(L, size);
		lua_setfield(L, -2, "size");
		lua_pushstring(L, u->id);
		lua_setfield(L, -2, "universe");
		lua_createtable(L, u->nnodes, 0);
		for (int i = 0; i < u->nnodes; i++) {
			lua_createtable(L, 0, 2);
			lua_pushstring(L, u->nodes[i].host);
			lua_setfield(L, -2, "name");
			lua_pushinteger(L, u->nodes[i].cpus);
			lua_setfield(L, -2, "slots");
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "nodes");
		if (core_lua_call(L, "transport", "policy", 2, 1, err, errlen) < 0) {
			core_lua_close(L);
			return -1;
		}
		snprintf(spec, len, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
		core_lua_close(L);
	}
	if (tp_policy_check(spec, why, sizeof why) < 0)
		return core_errprintf(err, errlen, "%s: transport '%s': %s", u->schema, spec, why);
	return 0;
}

/* This host's CPUs: what the topology the agents read says under LAMKIT_SYSFS (tests on a
 * synthetic machine), else the CPUs we may use. */
static int local_cpus(void)
{
	struct boot_topo t;
	char err[300];
	int n;

	if (!getenv("LAMKIT_SYSFS") || boot_topo_read(&t, err, sizeof err) < 0)
		return core_cpu_count();
	n = t.npu;
	boot_topo_free(&t);
	return n;
}

/* A universe node's shape from its schema keys (sockets, cores_per_socket, threads_per_core;
 * missing ones count 1, all missing: one socket of its slots). */
static int node_shape(const struct boot_unode *n, struct boot_topo *t)
{
	int v[3] = {1, 0, 1};
	static const char *const key[3] = {"sockets=", "cores_per_socket=", "threads_per_core="};

	for (char **kv = n->kv; kv && *kv; kv++)
		for (int k = 0; k < 3; k++)
			if (!strncmp(*kv, key[k], strlen(key[k])))
				v[k] = atoi(*kv + strlen(key[k]));
	if (v[1] <= 0)
		v[1] = n->cpus / (v[0] > 0 ? v[0] : 1) / (v[2] > 0 ? v[2] : 1);
	return boot_topo_shape(t, v[0], v[1] > 0 ? v[1] : 1, v[2]);
}

/* --map-by ppr:N:OBJ: N ranks per object of a node, i.e. -ppn N x (objects per node), counted
 * on this host's topology (LAMKIT_SYSFS) or from the first universe node's shape: nodes are
 * taken to be alike. Without -n, that many on each node that takes ranks. 0, or an exit
 * status (said). */
static int ppr_nodes(struct opts *o, const struct boot_universe *u, int mode, int *slots)
{
	struct boot_topo t;
	char err[600];
	int ppn, nn = mode == RUN_AGENTS ? o->local_agents : 1;

	if (o->ppn)
		return cmd_usage_error("mpiexec", "-ppn and --map-by ppr do not go together");
	if (mode == RUN_UNIVERSE) {
		if (u->nnodes < 1 || node_shape(&u->nodes[0], &t) < 0)
			return cmd_usage_error("mpiexec",
			                       "--map-by ppr: the universe's nodes have no "
			                       "usable shape (sockets, cores_per_socket)");
		nn = 0;
		for (int k = 0; k < u->nnodes; k++)
			nn += o->hosts && *o->hosts ? in_list(o->hosts, u->nodes[k].host)
			                            : u->nodes[k].schedule;
	} else if (boot_topo_read(&t, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit mpiexec: --map-by ppr: %s\n", err);
		return CORE_EXIT_SYSTEM;
	}
	ppn = boot_bind_ppr_count(&o->place, &t);
	boot_topo_free(&t);
	if (ppn < 1)
		return cmd_usage_error("mpiexec", "--map-by ppr: no %s on these nodes",
		                       boot_bind_obj_name(o->place.ppr_obj));
	o->ppn = ppn;
	*slots = ppn * (nn > 0 ? nn : 1);
	long want = 0;
	for (int a = 0; a < o->napps; a++)
		want += o->apps[a].n_given ? o->apps[a].app.nprocs : 0;
	if (want > *slots)
		return cmd_usage_error(
		    "mpiexec",
		    "--map-by ppr:%d:%s places at most %d ranks (%d on each of %d "
		    "node%s), not %ld",
		    o->place.ppr_n, boot_bind_obj_name(o->place.ppr_obj), *slots, ppn, nn,
		    nn == 1 ? "" : "s", want);
	return 0;
}

/* The booted universe, if any: RUN_UNIVERSE (u loaded) or RUN_LOCAL; -1 after saying why
 * the state file cannot be used. */
static int find_universe(struct boot_universe *u)
{
	char path[4096], err[1024];
	const char *e = getenv("LAMKIT_UNIVERSE");

	if (e && !strcmp(e, "none"))
		return RUN_LOCAL;
	if (boot_universe_path(path, sizeof path, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit mpiexec: %s\n", err);
		return -1;
	}
	if (boot_universe_load(u, path, err, sizeof err) == 0)
		return RUN_UNIVERSE;
	if (errno == ENOENT)
		return RUN_LOCAL;
	fprintf(stderr,
	        "lamkit mpiexec: %s; the universe state file is unusable ('lamkit wipe' cleans "
	        "up)\n",
	        err);
	return -1;
}

/* A job id no other job of the universe is likely to have. */
static uint32_t new_jobid(void)
{
	uint32_t id = 0;

	if (getrandom(&id, sizeof id, GRND_NONBLOCK) != (ssize_t)sizeof id)
		id = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL);
	id &= 0x7fffffffu;
	return id ? id : 1;
}

int cmd_mpiexec(int argc, char **argv)
{
	struct opts o = {.grace = 3000};
	struct boot_jobspec js = {0};
	struct boot_universe u = {0};
	struct boot_wsummary view = {0};
	struct boot_place_node *nodes = NULL;
	char err[1024];
	const char *s;
	int i = 1, rc, mode, nnodes = 0, slots = local_cpus();

	if ((s = getenv("LAMKIT_KILL_GRACE")) && parse_int(s, 0, 3600000, &o.grace) < 0)
		return cmd_usage_error("mpiexec",
		                       "LAMKIT_KILL_GRACE must be milliseconds, not '%s'", s);
	if ((s = getenv("MPIEXEC_TIMEOUT")) && *s &&
	    parse_int(s, 1, INT_MAX / 1000, &o.timeout) < 0)
		return cmd_usage_error("mpiexec", "MPIEXEC_TIMEOUT must be seconds > 0, not '%s'",
		                       s);
	if (argc < 2)
		return cmd_usage_error("mpiexec", "no program to run");
	boot_bind_init(&o.place);
	while (i < argc) {
		rc = parse_context(&o, argc, argv, &i);
		if (rc) {
			free_job(&o, &js);
			return rc < 0 ? 0 : rc;
		}
	}
	if (o.ppn && o.by_node) {
		rc = cmd_usage_error("mpiexec", "-ppn and --map-by node do not go together");
		goto out;
	}
	if (boot_bind_check(&o.place, err, sizeof err) < 0) {
		rc = cmd_usage_error("mpiexec", "%s", err);
		goto out;
	}
	if (o.singinit_port)
		mode = RUN_LOCAL; /* a singleton is adopted by an agent on its own host */
	else if (o.local_agents)
		mode = RUN_AGENTS;
	else if (o.local)
		mode = RUN_LOCAL;
	else if ((mode = find_universe(&u)) < 0) {
		rc = CORE_EXIT_SYSTEM;
		goto out;
	}
	if (mode == RUN_LOCAL && (rc = check_local_hosts(o.hosts)) != 0)
		goto out;
	if (mode == RUN_AGENTS) {
		if (!o.local_slots && getenv("LAMKIT_SYSFS"))
			o.local_slots = slots; /* the synthetic machine's, as each agent sees it */
		nodes = boot_local_agent_nodes(o.local_agents, o.local_slots);
		nnodes = o.local_agents;
	} else if (mode == RUN_UNIVERSE) {
		nodes = boot_universe_place_nodes(&u);
		nnodes = u.nnodes;
		js.jobid = new_jobid();
		/* no -n: as many ranks as the nodes up have slots; the watch's view says which */
		int any_default = o.per_node;
		for (int a = 0; a < o.napps; a++)
			any_default |= !o.apps[a].n_given;
		if (nodes && any_default && !u.watch_off &&
		    boot_universe_view(&u, 0, 5000, &view) == 0 &&
		    boot_universe_place_up(&u, &view, nodes, o.hosts, err, sizeof err) < 0) {
			fprintf(stderr, "lamkit mpiexec: %s\n", err);
			rc = CORE_EXIT_USAGE;
			goto out;
		}
	}
	if (o.per_node && nodes) /* one rank per node that takes ranks: count them as slots */
		for (int k = 0; k < nnodes; k++)
			nodes[k].cpus = 1;
	if (mode != RUN_LOCAL &&
	    (slots = nodes ? boot_place_slots(nodes, nnodes, o.hosts, err, sizeof err)
	                   : core_errprintf(err, sizeof err, "out of memory")) < 0) {
		fprintf(stderr, "lamkit mpiexec: %s\n", err);
		rc = nodes ? CORE_EXIT_USAGE : CORE_EXIT_SYSTEM;
		goto out;
	}
	if (o.place.map == BOOT_MAP_PPR && (rc = ppr_nodes(&o, &u, mode, &slots)) != 0)
		goto out;
	if (mode == RUN_UNIVERSE && !tp_given(&o)) {
		char spec[256];
		if (universe_transport(&u, &o, slots, spec, sizeof spec, err, sizeof err) < 0) {
			fprintf(stderr, "lamkit mpiexec: %s\n", err);
			rc = CORE_EXIT_USAGE;
			goto out;
		}
		if (spec[0] && add_kv(&o.genv, &o.ngenv, "LAMKIT_TP", spec) < 0) {
			rc = CORE_EXIT_SYSTEM;
			goto out;
		}
	}
	if (mode == RUN_UNIVERSE && o.on_node_failure == BOOT_NODEFAIL_CONTINUE &&
	    add_kv(&o.genv, &o.ngenv, "LAMKIT_FT", "1") < 0) { /* lamkit's MPI survives failures */
		rc = CORE_EXIT_SYSTEM;
		goto out;
	}
	if (build_job(&o, &js, slots, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit mpiexec: %s\n", err);
		rc = CORE_EXIT_SYSTEM;
		goto out;
	}
	struct boot_run_opts ro = {.js = &js,
	                           .timeout_s = o.timeout,
	                           .kill_grace_ms = o.grace,
	                           .verbose = o.verbose,
	                           .singinit_fd = -1,
	                           .on_node_failure = o.on_node_failure,
	                           .view = &view,
	                           .per_node = o.per_node && o.napps == 1 && !o.apps[0].n_given};
	struct boot_place_opts po = {.ppn = o.ppn, .by_node = o.by_node, .hosts = o.hosts};
	if (o.singinit_port) {
		ro.singinit_fd = singinit_connect(o.singinit_port, err, sizeof err);
		ro.singinit_pid = o.singinit_pid;
		if (ro.singinit_fd < 0) {
			fprintf(stderr, "lamkit mpiexec: %s\n", err);
			rc = 1;
			goto out;
		}
	}
	if (mode == RUN_AGENTS)
		rc = boot_run_local_agents(&ro, o.local_agents, o.local_slots, &po);
	else if (mode == RUN_UNIVERSE)
		rc = boot_run_universe(&ro, &u, &po);
	else
		rc = boot_run_local(&ro);
out:
	free(nodes);
	boot_wsummary_free(&view);
	boot_universe_free(&u);
	free_job(&o, &js);
	return rc;
}
