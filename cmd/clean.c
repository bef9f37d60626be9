/* cmd/clean.c: `lamkit clean` (lamclean): end every job and rank in the universe and keep the
 * agents; `lamkit kill JOB [SIGNAL]`: signal the ranks of one job on every node. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "msg.h"
#include "proto.h"
#include "ucall.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Ranks still running on the asked nodes, -1 when one did not answer. */
static int ranks_left(const struct boot_universe *u, struct boot_ucall_res *r)
{
	int left = 0;

	if (boot_ucall(u, BOOT_MSG_STATUS, BOOT_MSG_STATUS_REPLY, 5000, r) +
	        boot_ucall_down(r, u->nnodes) !=
	    u->nnodes)
		left = -1;
	for (int i = 0; i < u->nnodes && left >= 0; i++) {
		if (r[i].down)
			continue;
		struct core_rbuf rb = {.p = r[i].reply, .len = r[i].rlen};
		core_r_u32(&rb);
		core_r_str(&rb);
		core_r_u32(&rb);
		core_r_u32(&rb);
		core_r_u32(&rb);
		left += (int)core_r_u32(&rb);
	}
	boot_ucall_free(r, u->nnodes);
	return left;
}

int cmd_clean(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096];
	int verbose = 0, timeout = 10;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = 1;
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			timeout = atoi(argv[++i]);
		else
			return cmd_usage_error("clean", "unknown argument '%s'", argv[i]);
	}
	if (bootlua_need_universe("clean", &u, path, sizeof path))
		return 1;
	struct boot_ucall_res *r = calloc((size_t)u.nnodes + 1, sizeof *r);
	if (!r) {
		boot_universe_free(&u);
		return CORE_EXIT_SYSTEM;
	}
	/* Ranks ending under our clean on one node make their job abort, and that can end the
	 * job's ranks on another node before our clean reaches it: that agent then finds fewer to
	 * end. The ranks running when clean was asked are what it ended. */
	int before = ranks_left(&u, r);
	struct boot_ucall_req cq = {.type = BOOT_MSG_CLEAN,
	                            .reply_type = BOOT_MSG_CLEAN_REPLY,
	                            .timeout_ms = 5000,
	                            .together = 1};
	int nok = boot_ucall_ex(&u, &cq, r), ndown = boot_ucall_down(r, u.nnodes);
	unsigned ranks = 0;
	for (int i = 0; i < u.nnodes; i++) {
		if (!r[i].ok) {
			fprintf(stderr, "lamkit clean: %s\n", r[i].why);
			continue;
		}
		struct core_rbuf rb = {.p = r[i].reply, .len = r[i].rlen};
		unsigned j = core_r_u32(&rb), k = core_r_u32(&rb);
		if (verbose && !rb.err)
			printf("lamkit clean: %s: ended %u job(s), %u rank(s)\n", u.nodes[i].host,
			       j, k);
		ranks += rb.err ? 0 : k;
	}
	boot_ucall_free(r, u.nnodes);
	if (before > (int)ranks)
		ranks = (unsigned)before;
	/* the agents kill in the background: wait (bounded) until no rank is left */
	int left = -1;
	int64_t end = core_now_ms() + (int64_t)timeout * 1000;
	while (nok + ndown == u.nnodes && (left = ranks_left(&u, r)) > 0 && core_now_ms() < end)
		usleep(50000);
	free(r);
	int rc = 0;
	if (nok + ndown != u.nnodes) {
		fprintf(stderr, "lamkit clean: %d of %d node(s) could not be reached\n",
		        u.nnodes - nok - ndown, u.nnodes);
		rc = 1;
	} else if (left != 0) {
		fprintf(stderr, "lamkit clean: %d rank(s) still running after %d s\n", left,
		        timeout);
		rc = 1;
	} else {
		printf("lamkit clean: ended %u rank(s) on %d node(s); the agents keep running%s\n",
		       ranks, nok, ndown ? " (the nodes down are named above)" : "");
	}
	boot_universe_free(&u);
	return rc;
}

static const struct {
	const char *name;
	int sig;
} signames[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
                {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT},
                {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"ALRM", SIGALRM}};

/* "TERM", "SIGTERM", "term", "15" -> 15; 0 if unknown. */
static int parse_signal(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (isdigit((unsigned char)*s))
		return !*end && v > 0 && v < 65 ? (int)v : 0;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof signames / sizeof signames[0]; i++)
		if (!strcasecmp(s, signames[i].name))
			return signames[i].sig;
	return 0;
}

int cmd_kill(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096], *end;
	int sig = SIGTERM;

	if (argc < 2 || argc > 3)
		return cmd_usage_error("kill", "wants JOB [SIGNAL] (job ids: 'lamkit ps')");
	unsigned long job = strtoul(argv[1], &end, 10);
	if (*end || !job || job > 0xffffffffu)
		return cmd_usage_error("kill", "'%s' is not a job id (see 'lamkit ps')", argv[1]);
	if (argc == 3 && !(sig = parse_signal(argv[2])))
		return cmd_usage_error(
		    "kill", "unknown signal '%s' (a number, or TERM, KILL, INT...)", argv[2]);
	if (bootlua_need_universe("kill", &u, path, sizeof path))
		return 1;
	struct boot_ucall_res *r = calloc((size_t)u.nnodes + 1, sizeof *r);
	struct core_wbuf w = {0};
	core_w_u32(&w, (uint32_t)job);
	core_w_u32(&w, (uint32_t)sig);
	struct boot_ucall_req q = {.type = BOOT_MSG_JOB_SIGNAL,
	                           .reply_type = BOOT_MSG_JOB_SIGNAL_REPLY,
	                           .payload = w.p,
	                           .plen = w.len,
	                           .timeout_ms = 5000,
	                           .together = 1};
	int nok = r ? boot_ucall_ex(&u, &q, r) : 0;
	unsigned ranks = 0, nodes = 0;
	if (r) /* nodes declared down are named, and are not a failure of kill */
		nok += boot_ucall_down(r, u.nnodes);
	for (int i = 0; r && i < u.nnodes; i++) {
		if (!r[i].ok) {
			fprintf(stderr, "lamkit kill: %s\n", r[i].why);
			continue;
		}
		struct core_rbuf rb = {.p = r[i].reply, .len = r[i].rlen};
		core_r_u32(&rb);
		unsigned k = core_r_u32(&rb);
		if (!rb.err && k) {
			ranks += k;
			nodes++;
		}
	}
	core_w_free(&w);
	if (r)
		boot_ucall_free(r, u.nnodes);
	free(r);
	int rc = 0;
	if (!ranks) {
		fprintf(stderr,
		        "lamkit kill: no running rank of job %lu in the universe%s (see "
		        "'lamkit ps')\n",
		        job, nok == u.nnodes ? "" : " (some nodes did not answer)");
		rc = 1;
	} else {
		printf("lamkit kill: signal %d sent to %u rank(s) of job %lu on %u node(s)\n", sig,
		       ranks, job, nodes);
		rc = nok == u.nnodes ? 0 : 1;
	}
	boot_universe_free(&u);
	return rc;
}
