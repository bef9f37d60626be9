/* cmd/main.c: the multi-call entry point: `lamkit CMD ...` or a symlink named after CMD. */
#include "cmd.h"
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* clang-format off */
const struct cmd cmd_table[] = {
	{"boot", "lamboot", "start one agent per node of a boot schema (a universe)",
	 "lamkit boot [-v] [-k] [--boot MODULE] [--algorithm ALG] [--timeout S] [--fanout K]\n"
	 "            [--window W] [--ship | --no-ship | --ship=auto|always|never] SCHEMA\n"
	 "Starts one agent per node of SCHEMA (a Lua boot schema or a LAM bhost file, found as given,\n"
	 "in ., in $LAMKIT_HOME/etc, $TROLLIUSHOME/etc, $LAMHOME/etc, in the install's etc/) through\n"
	 "a boot module (local, ssh, rsh,\n"
	 "slurm: the schema's `boot`, else $LAMKIT_BOOT, else the best that works here, priorities\n"
	 "overridable with $LAMKIT_BOOT_<MODULE>_PRIORITY) and a launch\n"
	 "algorithm (linear, windowed, tree, thread, oneshot). Each agent gets a fresh universe key on its\n"
	 "stdin, connects back and authenticates. Then the universe state ($LAMKIT_UNIVERSE, else\n"
	 "lamkit-UID/universe in the session directory, mode 0600) is written and mpiexec, nodes,\n"
	 "grow, halt and wipe use it. $LAMKIT_TMPDIR is passed on to the agents.\n"
	 "  -v  a line per node as it comes up      -k  keep the nodes that came up when some fail\n"
	 "  -vv also every launch command line      -vvv  also the debug lines of boot itself\n"
	 "  (--verbose=N sets the level; Lua modules and algorithms see it as opts.verbose)\n"
	 "  -d  as -vvv (LAM's debug flag)\n"
	 "  -ssi KEY VALUE  LAM's SSI parameters (also on grow and recon; from the environment as\n"
	 "      LAM_MPI_SSI_KEY): boot (the module), boot_base_linear_win_size (the window),\n"
	 "      boot_<module>_priority\n"
	 "  --timeout S  seconds each node may take (default: the schema's, else 30)\n"
	 "On ssh/rsh nodes the agent is this binary's own path when the node has the same build\n"
	 "there, else `lamkit` in the node's PATH (same build), else a copy boot ships over the\n"
	 "launch channel into ~/.cache/lamkit/bin/SHA256/ (checked before it runs; the schema's\n"
	 "ship = \"auto\"). --ship: always run a shipped copy; --no-ship: never ship.\n"
	 "A bad schema is one line (file:line: what) and nothing starts. A node that fails is named\n"
	 "with the stage (launch, connect, auth, address, prolog, timeout); then the others are\n"
	 "halted (without -k). More: 'lamkit help schema', 'lamkit help ship', 'lamkit help rte'.\n",
	 cmd_boot, 0},
	{"grow", "lamgrow", "add a node to the running universe",
	 "lamkit grow [-v] [--cpu N] [--boot MODULE] [--timeout S] [--ship|--no-ship] HOST\n"
	 "Starts an agent on HOST with the boot module and options of the running universe's schema\n"
	 "and adds it with N slots (default 1).\n", cmd_grow, 0},
	{"recon", "recon", "check that every node of a schema can be reached and runs lamkit",
	 "lamkit recon [-v] [--boot MODULE] [--timeout S] SCHEMA\n"
	 "Starts a throw-away agent on every node of SCHEMA (from this host, a window at a time),\n"
	 "which authenticates and exits. Prints node, reachable, runs, version, cpus, time and the\n"
	 "problem; leaves nothing running. Exit 0 when every node works.\n", cmd_recon, 0},
	{"wipe", "wipe", "forcibly end the universe on every node and remove what it left",
	 "lamkit wipe [-n|--dry-run] [-v|--verbose] [--local] [--purge] [SCHEMA]\n"
	 "With SCHEMA, or when a universe is booted: on every node of it, through its boot module\n"
	 "(a fresh `lamkit agent --wipe` per node; no agent needs to be alive), then the universe\n"
	 "state is removed; prints a table. --local, or no universe and no SCHEMA: on this node, kills every process this user's lamkit session records name\n"
	 "(agents, ranks, and what they left running; a recorded pid now used by another process is\n"
	 "left alone), removes the registered shared-memory segments and temp files, and removes the\n"
	 "session directories under $LAMKIT_TMPDIR, $TMPDIR or /tmp (lamkit-UID/). Needs no agent.\n"
	 "  -n  only list what would be done     -v  list every process killed and path removed\n"
	 "  --purge  also remove the cache of agent binaries boot shipped (~/.cache/lamkit/bin)\n"
	 "Prints a one-line summary; problems get one line each on stderr. Exit 0, or 1 when\n"
	 "something could not be killed or removed.\n",
	 cmd_wipe, 0},
	{"halt", "lamhalt", "shut the universe down gracefully",
	 "lamkit halt [-v] [--timeout S]\n"
	 "Asks every agent of the universe to end its jobs and exit, then removes the universe state.\n"
	 "Nodes that cannot be reached are named (exit 1); 'lamkit wipe' cleans those up.\n",
	 cmd_halt, 0},
	{"nodes", "lamnodes", "list the universe's nodes, their state, slots and addresses",
	 "lamkit nodes\n"
	 "Asks every agent of the universe for its state: a table of node, host, address, cpus,\n"
	 "schedulable, up/down, jobs, ranks and uptime. Exit 1 when a node is down.\n",
	 cmd_nodes, 0},
	{"shrink", "lamshrink", "take one node out of the running universe",
	 "lamkit shrink [--force] [--timeout S] NODE\n"
	 "Halts the agent on NODE (a host name or node number from 'lamkit nodes'): its ranks are\n"
	 "killed, so every job using the node fails with a line naming it; then the node leaves the\n"
	 "universe state. A node that cannot be reached is kept unless --force.\n",
	 cmd_shrink, 0},
	{"clean", "lamclean", "end every job and rank in the universe, keep the agents",
	 "lamkit clean [-v] [--timeout S]\n"
	 "Every agent kills the ranks of every job it runs (their mpiexec report it and exit), and\n"
	 "clean waits until no rank is left (at most S seconds, default 10). The agents stay up.\n",
	 cmd_clean, 0},
	{"ps", "mpitask", "list every rank of every job across the universe",
	 "lamkit ps\n"
	 "One line per rank: job id, rank, node, host, pid, state (run, sleep, disk, stop, zombie,\n"
	 "exited), CPU time, resident memory, PMI state (-, init, fin) and command. Exit 1 when a\n"
	 "node does not answer (named on stderr).\n",
	 cmd_ps, 0},
	{"top", NULL, "the ranks of the universe, live",
	 "lamkit top [-d SECONDS] [-n ROUNDS]\n"
	 "The 'lamkit ps' table every SECONDS (default 2), with each rank's share of a CPU since\n"
	 "the previous round; on a terminal the screen is redrawn. -n: stop after ROUNDS.\n",
	 cmd_top, 0},
	{"ping", "tping", "round-trip time to each agent over its authenticated link",
	 "lamkit ping [--timeout S] [NODE...]\n"
	 "Connects to every agent (or the NODEs named: host names or node numbers), authenticates\n"
	 "and times one request and its answer. Exit 1 when a node does not answer.\n",
	 cmd_ping, 0},
	{"exec", "lamexec", "run a program that is not an MPI program on the nodes",
	 "lamkit exec [-n N] [MPIEXEC OPTIONS] PROGRAM [ARGS]\n"
	 "Runs PROGRAM once on every node of the universe (-n N: N copies, one per node in turn)\n"
	 "with mpiexec's stdio, signal and exit rules: 'lamkit mpiexec --mpi none --map-by node'.\n",
	 cmd_exec, 0},
	{"kill", NULL, "send a signal to the ranks of one job",
	 "lamkit kill JOB [SIGNAL]\n"
	 "Sends SIGNAL (a number or a name: TERM, the default, KILL, INT, HUP, USR1, STOP, CONT...)\n"
	 "to every rank of job JOB (its id from 'lamkit ps') on every node. Exit 1 when no rank of\n"
	 "that job runs.\n",
	 cmd_kill, 0},
	{"mpiexec", "mpiexec mpirun", "run a parallel job (on a local transient universe if none is booted)",
	 NULL, cmd_mpiexec, 0},
	{"mpicc", "mpicc", "compile and link a C program against lamkit's MPI library", NULL, cmd_mpicc, 0},
	{"mpicxx", "mpicxx mpic++", "compile and link a C++ program against lamkit's MPI library", NULL,
	 cmd_mpicxx, 0},
	{"mpifort", "mpifort mpif90 mpif77", "compile and link a Fortran program against lamkit's MPI library",
	 NULL, cmd_mpifort, 0},
	{"agent", NULL, "the per-node daemon (started by boot modules and mpiexec)",
	 "lamkit agent --boot ADDR[,ADDR...]:PORT --universe ID --node N [--tmpdir DIR]\n"
	 "             [--foreground] [--recon | --wipe [-n] [--purge]]\n"
	 "lamkit agent --wipe [-n] [-v] [--purge]\n"
	 "Internal. Started by boot modules with the universe key on stdin: connects back to boot,\n"
	 "authenticates, and serves the universe (daemon; --foreground under srun), or reports and\n"
	 "exits (--recon, --wipe). Exit 3: boot unreachable, 4: wrong key, 2: no key. --wipe alone: do `lamkit wipe` for this node (-n: dry run) and print one line:\n"
	 "  wipe host=H dry=0|1 killed=N gone=N reused=N untrusted=N files=N skipped=N dirs=N failed=N\n"
	 "or `wipe host=H error=MESSAGE` (exit 111). Problems go to stderr. Exit 1 if failed > 0.\n",
	 cmd_agent, 1},
	{"pmix-proxy", NULL, "a libpmi rank's PMIx client under a PMIx launcher",
	 "lamkit pmix-proxy\n"
	 "Internal. libpmi starts it when a rank finds PMIx variables and no PMI ones (srun\n"
	 "--mpi=pmix): it connects to the PMIx server as the rank and answers the rank's PMI-2\n"
	 "requests on fd 3 with PMIx calls. $LAMKIT_PMIX_PROXY names the binary libpmi runs.\n",
	 cmd_pmix_proxy, 1},
	{"atollrun", "atollrun", "start programs that speak the Atollrun stdio init protocol",
	 NULL, cmd_atollrun, 0},
	{"version", NULL, "print versions of lamkit, Lua and libsodium",
	 "lamkit version [--build]\n"
	 "Prints the versions of lamkit (and its git revision), Lua and libsodium, and whether the\n"
	 "binary is static. --build: one line naming this exact build, which boot compares with\n"
	 "the lamkit it finds on a node before running it there.\n",
	 cmd_version, 0},
	{"help", NULL, "list commands, or show one command's help or a topic",
	 "lamkit help [COMMAND | TOPIC]\n"
	 "Without an argument: the commands. With a command: its help (as COMMAND --help). Topics\n"
	 "(from doc/BOOT-LUA.md, built in): schema (boot schemas and bhost files), modules (boot\n"
	 "modules and their options), ship (finding and shipping the agent), algorithms (launch\n"
	 "algorithms), rte (the RTE configuration), promiscuous (callback addresses, verbosity).\n",
	 cmd_help, 0},
	{"lua", NULL, "run a Lua script with the lamkit module (for writing boot modules)",
	 "lamkit lua SCRIPT [ARGS...]\n"
	 "Runs SCRIPT in lamkit's embedded Lua 5.4 with the `lamkit` module and the embedded\n"
	 "scripts available through require (LAMKIT_LUA_PATH directories are searched first).\n"
	 "An integer returned by the script is the exit status.\n", cmd_lua, 0},
	{"lua-dump", NULL, "write the embedded Lua scripts into a directory to start an override",
	 "lamkit lua-dump [-f] DIR\n"
	 "Writes every embedded script as DIR/lua/... (existing files are kept unless -f).\n"
	 "Point LAMKIT_LUA_PATH at DIR/lua to use your edited copies.\n", cmd_lua_dump, 0},
	{NULL, NULL, NULL, NULL, NULL, 0},
};
/* clang-format on */

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "lamkit %s: %s (see 'lamkit %s --help')\n", cmd, msg, cmd);
	return CORE_EXIT_USAGE;
}

static const struct cmd *find_by_name(const char *name)
{
	for (const struct cmd *c = cmd_table; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static const struct cmd *find_by_link(const char *base)
{
	for (const struct cmd *c = cmd_table; c->name; c++) {
		const char *l = c->links;
		size_t n = strlen(base);
		while (l && *l) {
			size_t m = strcspn(l, " ");
			if (m == n && !strncmp(l, base, n))
				return c;
			l += m;
			l += *l == ' ';
		}
	}
	return NULL;
}

/* Levenshtein distance, small strings only (command names). */
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), d[32][32];

	if (la > 30 || lb > 30)
		return 99;
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++) {
		for (int j = 1; j <= lb; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			d[i][j] = c < del ? (c < ins ? c : ins) : (del < ins ? del : ins);
		}
	}
	return d[la][lb];
}

static int unknown_command(const char *name)
{
	const struct cmd *best = NULL;
	int bd = 99;

	for (const struct cmd *c = cmd_table; c->name; c++) {
		int d = distance(name, c->name);
		if (!c->hidden && d < bd) {
			bd = d;
			best = c;
		}
	}
	if (best && (bd <= 2 || (bd <= 3 && strlen(name) > 5)))
		fprintf(stderr, "lamkit: unknown command '%s'; did you mean '%s'?\n", name,
		        best->name);
	else
		fprintf(stderr, "lamkit: unknown command '%s' (see 'lamkit help')\n", name);
	return CORE_EXIT_USAGE;
}

static void print_cmd_help(const struct cmd *c)
{
	printf("lamkit %s: %s\n", c->name, c->summary);
	if (c->usage)
		printf("\nusage: %s", c->usage);
	if (c->links)
		printf("\nAlso runs as: %s\n", c->links);
}

/* Topics: sections of doc/BOOT-LUA.md, embedded (cmd_doc_blobs): from the heading that starts
 * with `from` to the next heading that starts with `to`. */
extern const struct core_blob cmd_doc_blobs[];
static const struct {
	const char *name, *from, *to;
} topics[] = {{"schema", "## 3.", "## 4."},          {"modules", "## 4.", "### Finding"},
              {"ship", "### Finding", "**slurm.**"}, {"algorithms", "## 5.", "## 5a."},
              {"rte", "## 5a.", "## 5b."},           {"promiscuous", "## 5b.", "## 6."}};

static int print_topic(const char *name)
{
	const struct core_blob *b = core_blob_find(cmd_doc_blobs, "doc/BOOT-LUA.md");

	for (size_t i = 0; b && i < sizeof topics / sizeof topics[0]; i++) {
		if (strcmp(name, topics[i].name))
			continue;
		const char *p = (const char *)b->data, *end = p + b->len, *start = NULL;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (!start && !strncmp(p, topics[i].from, strlen(topics[i].from)))
				start = p;
			else if (start && !strncmp(p, topics[i].to, strlen(topics[i].to)))
				break;
			if (start)
				printf("%.*s\n", (int)len, p);
			p += len + 1;
		}
		return start ? 0 : 1;
	}
	return -1;
}

int cmd_help(int argc, char **argv)
{
	if (argc > 1) {
		const struct cmd *c = find_by_name(argv[1]);
		int t = c ? -1 : print_topic(argv[1]);
		if (t >= 0)
			return t;
		if (!c)
			return unknown_command(argv[1]);
		if (c->run && c->usage == NULL) {
			char *hv[] = {(char *)c->name, "--help", NULL};
			return c->run(2, hv);
		}
		print_cmd_help(c);
		return 0;
	}
	printf("usage: lamkit COMMAND [ARGS...]   (or a symlink named after the command)\n\n");
	for (const struct cmd *c = cmd_table; c->name; c++)
		if (!c->hidden)
			printf("  %-9s %s%s\n", c->name, c->summary,
			       c->run ? "" : " [not yet built]");
	printf("\n'lamkit COMMAND --help' shows one command's options; 'lamkit help TOPIC' one of\n"
	       "schema, modules, ship, algorithms, rte, promiscuous.\n");
	return 0;
}

static int run_cmd(const struct cmd *c, int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) &&
	    (c->usage || !c->run)) {
		print_cmd_help(c);
		return 0;
	}
	if (!c->run) {
		fprintf(stderr, "lamkit %s: not yet implemented in lamkit %s\n", c->name,
		        LAMKIT_VERSION);
		return 1;
	}
	return c->run(argc, argv);
}

int main(int argc, char **argv)
{
	const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
	const struct cmd *c;

	base = base ? base + 1 : (argc > 0 && argv[0] ? argv[0] : "lamkit");
	if (strcmp(base, "lamkit") != 0 && (c = find_by_link(base))) {
		core_progname = base;
		argv[0] = (char *)c->name;
		return run_cmd(c, argc, argv);
	}
	if (argc < 2) {
		cmd_help(1, argv);
		return CORE_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cmd_version(1, argv + 1);
	c = find_by_name(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return run_cmd(c, argc - 1, argv + 1);
}
