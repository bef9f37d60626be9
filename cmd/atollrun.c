/* cmd/atollrun.c: `lamkit atollrun`: start N processes (ID 0 here, the others on the
 * machinefile's hosts through the boot modules), run the Atollrun init protocol with them over
 * their stdin/stdout (lib/atollrun/atl_engine.c), then show ID 0's output and wait for all. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "atl_engine.h"
#include "atollrun_cmd.h"
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "lua_host.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define LINEBUF 16384

struct stream {
	int fd;
	size_t len;
	char buf[LINEBUF];
};

struct proc {
	int id, remote, reaped, status, said_done;
	const char *host;
	pid_t pid;
	int in;
	struct stream out, err;
	FILE *log;
	char last_err[160];
};

struct run {
	struct atl_opts o;
	int n;
	struct proc *p;
	atl_engine_t *e;
	int progress, progress_open;
	int64_t t0;
	struct boot_universe uni; /* when the hosts are the booted universe's */
	int use_uni, *node_of;    /* node_of[i]: ID i's index in uni.nodes + 1 (0: here) */
	int ngroups, nmachines;   /* for the session log: groupfile groups, machinefile hosts */
	char *held;               /* ID 0's output held while the log's step lines are written */
	size_t held_len, held_cap;
	struct pollfd *pf; /* 2 per process: stdout, stderr */
};

static volatile sig_atomic_t got_signal;
static void on_signal(int sig)
{
	got_signal = sig;
}

/* clang-format off */
static const char help[] =
"usage: lamkit atollrun [-p N] [-m MACHINEFILE] [-g GROUPFILE] [-r | --rsh=CMD] [-l] [-v]\n"
"                       [--timeout S] PROGRAM [ARGS...]          (also: atollrun ...)\n"
"Starts N processes of PROGRAM that speak the Atollrun init protocol on stdin/stdout and\n"
"gives each the port of every other one (doc/PROTOCOL-atollrun.md):\n"
"  each process sends __ATOLLRUN_INIT__; atollrun sends __YOUR_PORT__ (__YOUR_PORT_SINGLE__\n"
"  for one process), it answers __MY_PORT__<port> or __MY_PORT__FAILURE; atollrun sends\n"
"  __NUMBER_OF_PROCESSES__<n>, __YOUR_ID__<i> and n lines __REMOTE_PORT__<port>, it\n"
"  answers __PORT_VECTOR_ACCEPTED__; __INIT_CONNECTIONS__ -> __INIT_STATUS__SUCCESS,\n"
"  FAILURE or IGNORED; __FINISH_INIT__ -> __FINISHED_INIT__. Each step waits for all.\n"
"Then atollrun only watches: ID 0's output goes to stdout, every process's stderr to\n"
"stderr, and it waits for all to end. A port is a TCP endpoint, (IPv4 << 16) | TCP port\n"
"(libatollrun: Atollrun_decodePort).\n"
"  -p, --processes N     number of processes (IDs 0..N-1; default 1)\n"
"  -m, --machinefile F   hosts, one per line ('#' comments; default ~/.atollrun_machinefile\n"
"                        when it exists, else a booted universe's nodes through its boot\n"
"                        module, else all on this host). ID 0 always runs here, ID i >= 1\n"
"                        on host (i-1) mod (number of hosts). LAMKIT_UNIVERSE=none: no\n"
"                        universe.\n"
"  -g, --groupfile F     the paper's host groups (NAME: host, host ...; default\n"
"                        ~/.atollrun_groupfile). They let a password login reach a whole\n"
"                        group; with ssh keys no password is asked, so the file is only\n"
"                        checked (errors name file:line) and otherwise not used.\n"
"  -r, --rsh             reach other hosts with rsh instead of ssh\n"
"      --rsh=CMD         with this remote shell command and its options (\"ssh -F cfg\");\n"
"                        other hosts run the same lamkit path (`atollrun --exec`), which\n"
"                        ends the process when the connection goes away.\n"
"  -l, --log             every process's output also to ~/.atollrun.log/<ID>.log\n"
"  -v, --verbose         progress lines (also when stdout is a terminal) and the init time\n"
"  -t, --timeout S       seconds each init step may take (default $LAMKIT_ATOLLRUN_TIMEOUT,\n"
"                        else 60)\n"
"A failure reply, a line out of order, a process that ends or stays silent during init:\n"
"one line naming the ID, host and step; every process is ended; exit 1. After init the\n"
"exit status is the first failing process's (128+signal when killed); one that fails\n"
"ends the others. 100: usage error, 111: system-call failure, 130/143: interrupted.\n";
/* clang-format on */

void atl_print_help(void)
{
	fputs(help, stdout);
}

/* {==== output, logs and progress */

/* The paper's session log ("[atollrun.py] requesting ports ........... 0 1 --- OK"), with
 * lamkit's name in the brackets; on stdout, only when r->progress (-v, or stdout a terminal). */
static void say(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->progress)
		return;
	fputs("[atollrun] ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* "name ....": the name and dots to the paper's column, at least three. */
static void step_head(const char *name)
{
	int dots = 27 - (int)strlen(name);

	printf("[atollrun] %s %.*s", name, dots < 3 ? 3 : dots, "..........................");
}

/* ID 0's lines that came while the log's step lines were being written: held until the init
 * is over, so that the log reads as the paper's (bounded: past HELD_MAX they go out at once). */
#define HELD_MAX (1 << 20)
static void held_flush(struct run *r)
{
	if (r->held_len)
		fwrite(r->held, 1, r->held_len, stdout);
	free(r->held);
	r->held = NULL;
	r->held_len = r->held_cap = 0;
	fflush(stdout);
}

static void progress_cb(void *ctx, enum atl_step step, int id)
{
	struct run *r = ctx;

	if (!r->progress || step == ATL_STEP_INIT) /* INIT is the paper's CONNECTING MACHINES */
		return;
	if (id >= 0) {
		printf(" %d", id);
		fflush(stdout);
		return;
	}
	if (r->progress_open)
		printf(" --- OK\n");
	r->progress_open = 0;
	if (step == ATL_STEP_PORT)
		say(r, ">>> PERFORM INITIALIZATION...");
	if (step == ATL_STEP_FINISH) { /* what __INIT_CONNECTIONS__ got, as the paper's log says */
		int ignored = 0;
		step_head("checking results");
		for (int i = 0; i < r->n; i++) {
			printf(" %d", i);
			ignored |= atl_engine_init_status(r->e, i) == ATL_STATUS_IGNORED;
		}
		printf(" --- %s\n", ignored ? "IGNORED" : "OK");
	}
	if (step == ATL_STEP_RUN) {
		say(r, "init of %d process(es) finished in %.3f s", r->n,
		    (double)(core_now_ms() - r->t0) / 1000);
		say(r, ">>> OBSERVING PROGRAMS...");
		held_flush(r);
	} else {
		step_head(atl_step_name(step));
		r->progress_open = 1;
	}
	fflush(stdout);
}

static void output_cb(void *ctx, int id, const char *line)
{
	struct run *r = ctx;
	size_t n = strlen(line) + 1;

	if (id == 0 && r->progress && atl_engine_step(r->e) != ATL_STEP_RUN &&
	    r->held_len + n <= HELD_MAX) {
		if (r->held_len + n > r->held_cap) {
			size_t cap = r->held_cap ? r->held_cap * 2 : 4096;
			while (cap < r->held_len + n)
				cap *= 2;
			char *h = realloc(r->held, cap);
			if (!h) {
				held_flush(r);
				fputs(line, stdout);
				putchar('\n');
				return;
			}
			r->held = h;
			r->held_cap = cap;
		}
		memcpy(r->held + r->held_len, line, n - 1);
		r->held[r->held_len + n - 1] = '\n';
		r->held_len += n;
	} else if (id == 0) {
		held_flush(r);
		fputs(line, stdout);
		putchar('\n');
	}
	if (r->p[id].log)
		fprintf(r->p[id].log, "%s\n", line);
}

static int send_cb(void *ctx, int id, const char *line)
{
	struct run *r = ctx;
	char buf[128];
	int len = snprintf(buf, sizeof buf, "%s\n", line);

	if (r->p[id].in < 0 || len >= (int)sizeof buf)
		return -1;
	return core_write_all(r->p[id].in, buf, (size_t)len);
}

static int open_logs(struct run *r)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	const char *home = getenv("HOME");

	snprintf(dir, sizeof dir, "%s/.atollrun.log", home && *home ? home : ".");
	if (core_mkdir_p(dir, 0700) < 0) {
		fprintf(stderr, "atollrun: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < r->n; i++) {
		snprintf(path, sizeof path, "%s/%d.log", dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || !(r->p[i].log = fdopen(fd, "w"))) {
			fprintf(stderr, "atollrun: cannot write %s: %s\n", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		setvbuf(r->p[i].log, NULL, _IOLBF, 0);
	}
	return 0;
}

/* ====} */

/* {==== hosts and launch commands */

/* No machinefile: a booted universe's schedulable nodes are the hosts (ID i >= 1 on node
 * (i-1) mod K), started through its boot module. 0 (also when there is none), or -1. */
static int use_universe(struct run *r)
{
	char path[4096], err[2048];
	const char *e = getenv("LAMKIT_UNIVERSE");
	int k = 0, *sched;

	if (e && !strcmp(e, "none"))
		return 0;
	int have = bootlua_load_universe(&r->uni, path, sizeof path, err, sizeof err);
	if (have != 0) {
		if (have < 0)
			fprintf(stderr, "atollrun: %s; 'lamkit wipe' removes it\n", err);
		return have < 0 ? -1 : 0;
	}
	sched = calloc((size_t)r->uni.nnodes + 1, sizeof *sched);
	r->node_of = calloc((size_t)r->n, sizeof *r->node_of);
	if (!sched || !r->node_of) {
		free(sched);
		return -1;
	}
	for (int j = 0; j < r->uni.nnodes; j++)
		if (r->uni.nodes[j].schedule)
			sched[k++] = j;
	for (int j = 0; k == 0 && j < r->uni.nnodes; j++)
		sched[k++] = j;
	for (int i = 0; i < r->n; i++) {
		int j = i == 0 ? -1 : sched[(i - 1) % k];
		r->node_of[i] = j + 1;
		r->p[i].host = j < 0 ? core_hostname() : r->uni.nodes[j].host;
	}
	free(sched);
	r->use_uni = 1;
	r->nmachines = k;
	return 0;
}

/* hosts[i] for every ID: ID 0 here, the others from the machinefile in turn. */
static int assign_hosts(struct run *r, char ***mhosts, int *nm)
{
	char err[512];

	*nm = 0;
	*mhosts = NULL;
	if (r->o.machinefile_given || access(r->o.machinefile, F_OK) == 0) {
		*nm = atl_read_machinefile(r->o.machinefile, mhosts, err, sizeof err);
		if (*nm < 0) {
			fprintf(stderr, "atollrun: %s\n", err);
			return -1;
		}
		if (*nm == 0 && r->n > 1) {
			fprintf(stderr, "atollrun: %s lists no hosts (one host per line)\n",
			        r->o.machinefile);
			return -1;
		}
	}
	if (r->o.groupfile_given || access(r->o.groupfile, F_OK) == 0) {
		int g = atl_read_groupfile(r->o.groupfile, err, sizeof err);
		if (g < 0) {
			fprintf(stderr, "atollrun: %s\n", err);
			return -1;
		}
		r->ngroups = g;
	}
	if (*nm == 0 && r->n > 1 && !r->o.machinefile_given && use_universe(r) < 0)
		return -1;
	if (r->use_uni)
		return 0;
	r->nmachines = *nm;
	for (int i = 0; i < r->n; i++)
		r->p[i].host = i == 0 || *nm == 0 ? core_hostname() : (*mhosts)[(i - 1) % *nm];
	return 0;
}

/* The head of the paper's session log: the command line, the group file, where each ID goes. */
static void log_setup(struct run *r)
{
	char args[512] = "";

	if (!r->progress)
		return;
	for (int k = 1; k < r->o.argc; k++)
		snprintf(args + strlen(args), sizeof args - strlen(args), "%s%s", k > 1 ? " " : "",
		         r->o.argv[k]);
	say(r, ">>> SCANNING COMMAND LINE...");
	say(r, "processes      = %d", r->n);
	say(r, "machinefile    = %s%s", r->o.machinefile,
	    r->o.machinefile_given || access(r->o.machinefile, F_OK) == 0 ? "" : " (none)");
	say(r, "groupfile      = %s%s", r->o.groupfile,
	    r->o.groupfile_given || access(r->o.groupfile, F_OK) == 0 ? "" : " (none)");
	say(r, "program        = %s", r->o.argv[0]);
	say(r, "program args   = %s", args);
	say(r, "stdout logging = %s", r->o.log ? "ENABLED" : "DISABLED");
	if (r->ngroups) {
		say(r, ">>> READING GROUP FILE...");
		say(r, "found %d group(s) (ssh keys need no group logins: checked, not used)",
		    r->ngroups);
	}
	say(r, ">>> MAPPING ID<->MACHINE...");
	if (r->use_uni)
		say(r, "found %d node(s) in the booted universe (%s)", r->nmachines,
		    r->uni.module ? r->uni.module : "?");
	else
		say(r, "found %d remote machines in machinefile", r->nmachines);
	for (int i = 0; i < r->n; i++)
		say(r, "mapped ID %d --> %s", i, i == 0 ? "localhost" : r->p[i].host);
	say(r, ">>> CONNECTING MACHINES...");
}

/* Split the -r command line on blanks. */
static int split_words(const char *s, char **w, int max)
{
	static char buf[1024];
	int n = 0;

	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t && n < max;
	     t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

static void push_argv(lua_State *L, char **v, int n)
{
	lua_createtable(L, n, 0);
	for (int k = 0; k < n; k++) {
		lua_pushstring(L, v[k]);
		lua_rawseti(L, -2, k + 1);
	}
}

/* Push {schema=, module=, nodes={{host=, cpu=, schedule=, <the schema's keys>}...}}. */
static void push_universe(lua_State *L, const struct boot_universe *u)
{
	lua_newtable(L);
	lua_pushstring(L, u->schema ? u->schema : "");
	lua_setfield(L, -2, "schema");
	lua_pushstring(L, u->module ? u->module : "");
	lua_setfield(L, -2, "module");
	lua_createtable(L, u->nnodes, 0);
	for (int j = 0; j < u->nnodes; j++) {
		const struct boot_unode *n = &u->nodes[j];
		lua_newtable(L);
		for (int k = 0; n->kv && n->kv[k]; k++) {
			const char *eq = strchr(n->kv[k], '=');
			if (!eq)
				continue;
			lua_pushlstring(L, n->kv[k], (size_t)(eq - n->kv[k]));
			lua_pushstring(L, eq + 1);
			lua_settable(L, -3);
		}
		lua_pushstring(L, n->host);
		lua_setfield(L, -2, "host");
		lua_pushinteger(L, n->cpus);
		lua_setfield(L, -2, "cpu");
		lua_pushboolean(L, n->schedule);
		lua_setfield(L, -2, "schedule");
		lua_rawseti(L, -2, j + 1);
	}
	lua_setfield(L, -2, "nodes");
}

/* The launch argv of every ID through lua/atollrun.lua (boot modules). *argvs[i] is a
 * NULL-terminated malloc'd vector. 0, or -1 (message printed). */
static int launch_argvs(struct run *r, char ****argvs)
{
	char err[1024], self[PATH_MAX], cwd[PATH_MAX], tmo[16], *rw[32];
	int nrw = split_words(r->o.rsh, rw, 32);
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	lua_State *L = core_lua_new(err, sizeof err);

	if (!L || sl <= 0 || !getcwd(cwd, sizeof cwd) || nrw == 0) {
		fprintf(stderr, "atollrun: %s\n", L ? "cannot find this binary or the cwd" : err);
		core_lua_close(L);
		return -1;
	}
	self[sl] = 0;
	snprintf(tmo, sizeof tmo, "%d", r->o.timeout);
	lua_createtable(L, r->n, 0);
	for (int i = 0; i < r->n; i++) {
		lua_pushstring(L, r->p[i].host);
		lua_rawseti(L, -2, i + 1);
	}
	if (r->use_uni) {
		lua_pop(L, 1);
		push_universe(L, &r->uni);
		lua_createtable(L, r->n, 0);
		for (int i = 0; i < r->n; i++) {
			lua_pushinteger(L, r->node_of[i]);
			lua_rawseti(L, -2, i + 1);
		}
	}
	push_argv(L, r->o.argv, r->o.argc);
	char *pre[] = {self, "atollrun", "--exec", cwd, tmo};
	int skip = r->use_uni; /* the universe's module finds lamkit on each node itself */
	push_argv(L, pre + skip, 5 - skip);
	for (int k = 0; k < r->o.argc; k++) {
		lua_pushstring(L, r->o.argv[k]);
		lua_rawseti(L, -2, 6 - skip + k);
	}
	if (r->use_uni)
		lua_pushstring(L, self);
	else
		push_argv(L, rw, nrw);
	if (core_lua_call(L, "atollrun", r->use_uni ? "argvs_universe" : "argvs",
	                  r->use_uni ? 5 : 4, 2, err, sizeof err) < 0) {
		fprintf(stderr, "atollrun: %s\n", err);
		core_lua_close(L);
		return -1;
	}
	*argvs = calloc((size_t)r->n, sizeof **argvs);
	for (int i = 0; *argvs && i < r->n; i++) {
		lua_rawgeti(L, -2, i + 1);
		int m = (int)luaL_len(L, -1);
		char **v = calloc((size_t)m + 1, sizeof *v);
		for (int k = 0; v && k < m; k++) {
			lua_rawgeti(L, -1, k + 1);
			v[k] = strdup(lua_tostring(L, -1));
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		lua_rawgeti(L, -1, i + 1);
		r->p[i].remote = lua_toboolean(L, -1);
		lua_pop(L, 1);
		(*argvs)[i] = v;
	}
	core_lua_close(L);
	return *argvs ? 0 : -1;
}

/* ====} */

/* {==== processes */

static int spawn_one(struct proc *p, char **argv)
{
	int in[2], out[2], err[2];
	char path[PATH_MAX];

	if (boot_spawn_resolve(argv[0], getenv("PATH"), NULL, path, sizeof path) < 0) {
		fprintf(stderr, "atollrun: ID %d on %s: cannot run %s: %s\n", p->id, p->host,
		        argv[0], strerror(errno));
		return -1;
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		fprintf(stderr, "atollrun: pipe: %s\n", strerror(errno));
		return -1;
	}
	struct boot_spawn sp = {.path = path,
	                        .argv = argv,
	                        .envp = environ,
	                        .fd_in = in[0],
	                        .fd_out = out[1],
	                        .fd_err = err[1],
	                        .extra_fd = -1,
	                        .new_session = 1,
	                        .cpu = -1,
	                        .pdeathsig = SIGKILL};
	p->pid = boot_spawn(&sp);
	int e = errno;
	close(in[0]);
	close(out[1]);
	close(err[1]);
	p->in = in[1];
	p->out.fd = out[0];
	p->err.fd = err[0];
	core_fd_nonblock(p->out.fd, 1);
	core_fd_nonblock(p->err.fd, 1);
	if (p->pid < 0) {
		fprintf(stderr, "atollrun: ID %d on %s: cannot run %s: %s\n", p->id, p->host, path,
		        strerror(e));
		return -1;
	}
	return 0;
}

static void reap(struct run *r)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (int i = 0; i < r->n; i++)
			if (r->p[i].pid == pid && !r->p[i].reaped) {
				r->p[i].reaped = 1;
				r->p[i].status = st;
			}
}

static int all_reaped(const struct run *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->p[i].pid > 0 && !r->p[i].reaped)
			return 0;
	return 1;
}

/* SIGTERM every process group, SIGKILL after 3 s; reap them all (10 s at most). */
static void end_all(struct run *r)
{
	int64_t t0 = core_now_ms();
	int killed = 0;

	for (int i = 0; i < r->n; i++)
		if (r->p[i].pid > 0 && !r->p[i].reaped)
			kill(-r->p[i].pid, SIGTERM);
	while (!all_reaped(r) && core_now_ms() - t0 < 10000) {
		if (!killed && core_now_ms() - t0 >= 3000) {
			for (int i = 0; i < r->n; i++)
				if (r->p[i].pid > 0 && !r->p[i].reaped)
					kill(-r->p[i].pid, SIGKILL);
			killed = 1;
		}
		usleep(20000);
		reap(r);
	}
}

/* ====} */

/* {==== the poll loop */

static void stream_line(struct run *r, struct proc *p, int is_err, char *line)
{
	if (!is_err) {
		atl_engine_line(r->e, p->id, line, core_now_ms());
		return;
	}
	fprintf(stderr, "%s\n", line);
	if (p->log)
		fprintf(p->log, "%s\n", line);
	if (*line)
		snprintf(p->last_err, sizeof p->last_err, "%s", line);
}

/* Read what is there; split lines (an over-long line is passed on in pieces). */
static void drain(struct run *r, struct proc *p, int is_err)
{
	struct stream *s = is_err ? &p->err : &p->out;

	for (;;) {
		ssize_t got = read(s->fd, s->buf + s->len, sizeof s->buf - 1 - s->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return;
		if (got > 0)
			s->len += (size_t)got;
		char *start = s->buf, *nl;
		s->buf[s->len] = 0;
		while ((nl = memchr(start, '\n', s->len - (size_t)(start - s->buf))) != NULL) {
			*nl = 0;
			stream_line(r, p, is_err, start);
			start = nl + 1;
		}
		s->len -= (size_t)(start - s->buf);
		memmove(s->buf, start, s->len);
		if (got <= 0 || s->len == sizeof s->buf - 1) {
			if (s->len) {
				s->buf[s->len] = 0;
				stream_line(r, p, is_err, s->buf);
				s->len = 0;
			}
			if (got > 0)
				continue;
			close(s->fd);
			s->fd = -1;
			if (!is_err)
				atl_engine_eof(r->e, p->id);
			return;
		}
	}
}

/* One round: reap, poll (at most 100 ms or until the step deadline), read. */
static void pump(struct run *r)
{
	struct pollfd *pf = r->pf;
	int np = 0;

	reap(r);
	for (int i = 0; i < r->n; i++) {
		pf[np++] = (struct pollfd){.fd = r->p[i].out.fd, .events = POLLIN};
		pf[np++] = (struct pollfd){.fd = r->p[i].err.fd, .events = POLLIN};
	}
	int64_t wait = 100, dl = atl_engine_deadline(r->e);
	if (dl >= 0 && dl - core_now_ms() < wait)
		wait = dl - core_now_ms() < 0 ? 0 : dl - core_now_ms();
	fflush(stdout);
	if (poll(pf, (nfds_t)np, (int)wait) > 0)
		for (int k = 0; k < np; k++)
			if (pf[k].fd >= 0 && pf[k].revents)
				drain(r, &r->p[k / 2], k % 2);
	atl_engine_tick(r->e, core_now_ms());
}

static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void describe_end(const struct proc *p, char *buf, size_t len)
{
	buf[0] = 0;
	if (!p)
		return;
	if (p->reaped && WIFEXITED(p->status))
		snprintf(buf, len, "; exit status %d", WEXITSTATUS(p->status));
	else if (p->reaped)
		snprintf(buf, len, "; killed by signal %d", WTERMSIG(p->status));
	if (p->last_err[0])
		snprintf(buf + strlen(buf), len - strlen(buf), "; its last error line: %s",
		         p->last_err);
}

/* Init failed: let the one at fault finish saying why (1 s), report, end everyone. */
static int init_failed(struct run *r)
{
	enum atl_step step;
	const char *what;
	char why[400];
	int id = atl_engine_failure(r->e, &step, &what);
	struct proc *p = id >= 0 ? &r->p[id] : NULL;

	for (int64_t t0 = core_now_ms(); p && core_now_ms() - t0 < 1000;) {
		if (p->err.fd >= 0 &&
		    poll(&(struct pollfd){.fd = p->err.fd, .events = POLLIN}, 1, 20) > 0)
			drain(r, p, 1);
		else
			usleep(20000);
		reap(r);
		if (p->reaped && p->err.fd < 0)
			break;
	}
	if (r->progress_open)
		printf(" --- FAILED\n");
	held_flush(r);
	describe_end(p, why, sizeof why);
	fprintf(stderr, "atollrun: ID %d on %s failed at %s: %s%s; ending all %d process(es)\n", id,
	        p ? p->host : "?", atl_step_name(step), what, why, r->n);
	end_all(r);
	return 1;
}

/* After init: wait for all; the first failure ends the others. */
static int watch(struct run *r)
{
	int rc = 0;
	int64_t all_gone = -1;

	for (;;) {
		pump(r);
		for (int i = 0; i < r->n && !rc; i++) {
			struct proc *p = &r->p[i];
			if (p->reaped && p->status == 0 && !p->said_done) {
				p->said_done = 1;
				say(r, "ID %d has finished", i);
			}
			if (p->reaped && p->status != 0) {
				char why[400];
				rc = exit_code(p->status);
				describe_end(p, why, sizeof why);
				fflush(stdout);
				fprintf(stderr,
				        "atollrun: ID %d on %s ended badly%s; ending the others\n",
				        i, p->host, why);
				end_all(r);
			}
		}
		int open = 0;
		for (int i = 0; i < r->n; i++)
			open += (r->p[i].out.fd >= 0) + (r->p[i].err.fd >= 0);
		if (all_reaped(r) && all_gone < 0)
			all_gone = core_now_ms();
		/* what the processes left holding their pipes gets 2 s */
		if (all_reaped(r) && (!open || core_now_ms() - all_gone > 2000)) {
			if (!rc)
				for (int i = 0; i < r->n; i++)
					if (!r->p[i].said_done && r->p[i].status == 0)
						say(r, "ID %d has finished", i);
			say(r, ">>> CLEANUP CONNECTIONS...");
			break;
		}
		if (got_signal) {
			fprintf(stderr, "atollrun: interrupted (signal %d); ending all processes\n",
			        (int)got_signal);
			end_all(r);
			return 128 + got_signal;
		}
	}
	return rc;
}

/* ====} */

static int start_all(struct run *r)
{
	char ***argvs = NULL;
	char ev[16];
	int rc = 0;

	snprintf(ev, sizeof ev, "%d", r->o.timeout);
	setenv("LAMKIT_ATOLLRUN", "1", 1);
	setenv("LAMKIT_ATOLLRUN_TIMEOUT", ev, 1);
	if (launch_argvs(r, &argvs) < 0)
		return -1;
	for (int i = 0; i < r->n && rc == 0; i++) {
		r->p[i].id = i;
		rc = spawn_one(&r->p[i], argvs[i]);
		if (rc == 0) /* keys, not the paper's passwords: nothing to ask */
			say(r, "connecting ID %d ... [%-10s] ... %s", i,
			    r->p[i].remote ? (r->use_uni ? r->uni.module : r->o.rsh) : "local",
			    r->p[i].remote ? "STARTED" : "NO AUTHENTICATION");
	}
	for (int i = 0; i < r->n; i++) {
		for (int k = 0; argvs[i] && argvs[i][k]; k++)
			free(argvs[i][k]);
		free(argvs[i]);
	}
	free(argvs);
	return rc;
}

static int run_all(struct run *r)
{
	struct atl_engine_ops ops = {
	    .ctx = r, .send = send_cb, .output = output_cb, .progress = progress_cb};

	r->e = atl_engine_create(r->n, (int64_t)r->o.timeout * 1000, &ops);
	if (!r->e) {
		fprintf(stderr, "atollrun: %s\n", strerror(errno));
		return CORE_EXIT_SYSTEM;
	}
	r->t0 = core_now_ms();
	atl_engine_start(r->e, r->t0);
	if (start_all(r) < 0) {
		end_all(r);
		return 1;
	}
	while (atl_engine_step(r->e) != ATL_STEP_RUN && atl_engine_step(r->e) != ATL_FAILED) {
		pump(r);
		if (got_signal) {
			fprintf(stderr,
			        "atollrun: interrupted (signal %d) during init; ending all\n",
			        (int)got_signal);
			end_all(r);
			return 128 + got_signal;
		}
	}
	if (atl_engine_step(r->e) == ATL_FAILED)
		return init_failed(r);
	return watch(r);
}

int cmd_atollrun(int argc, char **argv)
{
	struct run r = {0};
	char **mhosts = NULL;
	int nm = 0, rc;

	if (argc > 1 && !strcmp(argv[1], "--exec"))
		return atl_exec_main(argc - 1, argv + 1);
	rc = atl_parse_opts(argc, argv, &r.o);
	if (rc)
		return rc == 1 ? 0 : rc;
	r.n = r.o.nprocs;
	r.progress = r.o.verbose || isatty(STDOUT_FILENO);
	r.p = calloc((size_t)r.n, sizeof *r.p);
	r.pf = calloc((size_t)r.n * 2, sizeof *r.pf);
	boot_spawn_raise_nofile(); /* 3 pipes per process */
	if (!r.p || !r.pf) {
		free(r.pf);
		free(r.p);
		fprintf(stderr, "atollrun: out of memory for %d processes\n", r.n);
		return CORE_EXIT_SYSTEM;
	}
	for (int i = 0; i < r.n; i++)
		r.p[i] = (struct proc){.id = i, .pid = -1, .in = -1, .out.fd = -1, .err.fd = -1};
	rc = assign_hosts(&r, &mhosts, &nm) < 0 || (r.o.log && open_logs(&r) < 0) ? CORE_EXIT_USAGE
	                                                                          : 0;
	if (rc == 0) {
		log_setup(&r);
		signal(SIGPIPE, SIG_IGN);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
		rc = run_all(&r);
	}
	held_flush(&r);
	for (int i = 0; i < r.n; i++) {
		struct proc *p = &r.p[i];
		if (p->in >= 0)
			close(p->in);
		if (p->out.fd >= 0)
			close(p->out.fd);
		if (p->err.fd >= 0)
			close(p->err.fd);
		if (p->log)
			fclose(p->log);
	}
	atl_engine_destroy(r.e);
	boot_universe_free(&r.uni);
	free(r.node_of);
	core_strv_free(mhosts, nm);
	free(r.p);
	free(r.pf);
	return rc;
}
