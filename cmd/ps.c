/* cmd/ps.c: `lamkit ps` (mpitask): one line per rank of every job across the universe; and
 * `lamkit top`: the same table, refreshed, with the CPU share each rank used since the last. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "proto.h"
#include "ucall.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct prow {
	unsigned job, rank, pid, pmi, node;
	char host[64], state[16], cmd[201];
	long long cpu_ms, rss_kb;
	double pcpu; /* top: % of one CPU since the previous round, -1 unknown */
};

static int by_job_rank(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Ask every agent; rows sorted by job and rank. Returns the number of rows, -1 on failure;
 * *down gets the number of agents that did not answer (named on stderr). */
static int collect(const struct boot_universe *u, const char *cmd, struct prow **out, int *down)
{
	struct boot_ucall_res *r = calloc((size_t)u->nnodes + 1, sizeof *r);
	struct prow *rows = NULL;
	int n = 0, cap = 0;

	if (!r)
		return -1;
	*down = u->nnodes - boot_ucall(u, BOOT_MSG_PS, BOOT_MSG_PS_REPLY, 5000, r) -
	        boot_ucall_down(r, u->nnodes); /* declared down: named, not a failure */
	for (int i = 0; i < u->nnodes; i++) {
		if (!r[i].ok) {
			fprintf(stderr, "lamkit %s: %s\n", cmd, r[i].why);
			continue;
		}
		struct core_rbuf rb = {.p = r[i].reply, .len = r[i].rlen};
		core_r_u32(&rb);
		core_r_str(&rb);
		unsigned cnt = core_r_u32(&rb);
		for (unsigned k = 0; k < cnt && !rb.err; k++) {
			if (n == cap) {
				struct prow *nr =
				    realloc(rows, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *nr);
				if (!nr)
					break;
				rows = nr;
			}
			struct prow *p = &rows[n];
			p->job = core_r_u32(&rb);
			p->rank = core_r_u32(&rb);
			p->pid = core_r_u32(&rb);
			p->pmi = core_r_u32(&rb);
			snprintf(p->state, sizeof p->state, "%s", core_r_str(&rb));
			p->cpu_ms = core_r_i64(&rb);
			p->rss_kb = core_r_i64(&rb);
			snprintf(p->cmd, sizeof p->cmd, "%s", core_r_str(&rb));
			snprintf(p->host, sizeof p->host, "%s", u->nodes[i].host);
			p->node = (unsigned)u->nodes[i].index;
			p->pcpu = -1;
			if (!rb.err)
				n++;
		}
	}
	boot_ucall_free(r, u->nnodes);
	free(r);
	if (n)
		qsort(rows, (size_t)n, sizeof *rows, by_job_rank);
	*out = rows;
	return n;
}

static const char *pmi_name(unsigned s)
{
	return s == BOOT_PMI_FINALIZED ? "fin" : s == BOOT_PMI_INIT ? "init" : "-";
}

static void print_rows(const struct prow *rows, int n, int top)
{
	printf("%-10s %5s %-4s %-12s %8s %-6s %10s %9s%s %-4s %s\n", "job", "rank", "node", "host",
	       "pid", "state", "cpu", "rss", top ? "   %cpu" : "", "pmi", "command");
	for (int i = 0; i < n; i++) {
		const struct prow *p = &rows[i];
		char cpu[32], rss[32], pc[16] = "";
		long long s = p->cpu_ms / 1000;
		snprintf(cpu, sizeof cpu, "%lld:%02lld.%02lld", s / 60, s % 60,
		         p->cpu_ms % 1000 / 10);
		if (p->rss_kb >= 10 * 1024)
			snprintf(rss, sizeof rss, "%lldM", p->rss_kb / 1024);
		else
			snprintf(rss, sizeof rss, "%lldK", p->rss_kb);
		if (top && p->pcpu >= 0)
			snprintf(pc, sizeof pc, " %6.1f", p->pcpu);
		else if (top)
			snprintf(pc, sizeof pc, " %6s", "-");
		printf("%-10u %5u %-4u %-12s %8u %-6s %10s %9s%s %-4s %s\n", p->job, p->rank,
		       p->node, p->host, p->pid, p->state, cpu, rss, pc, pmi_name(p->pmi), p->cmd);
	}
}

int cmd_ps(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096];
	struct prow *rows = NULL;
	int down = 0;

	for (int i = 1; i < argc; i++)
		return cmd_usage_error("ps", "unknown argument '%s'", argv[i]);
	if (bootlua_need_universe("ps", &u, path, sizeof path))
		return 1;
	int n = collect(&u, "ps", &rows, &down);
	if (n >= 0)
		print_rows(rows, n, 0);
	free(rows);
	boot_universe_free(&u);
	return n < 0 ? CORE_EXIT_SYSTEM : down ? 1 : 0;
}

/* %cpu of each row from the previous round's CPU time of the same node and pid. */
static void share(struct prow *rows, int n, const struct prow *prev, int np, double dt_ms)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < np && dt_ms > 0; k++)
			if (prev[k].node == rows[i].node && prev[k].pid == rows[i].pid &&
			    prev[k].job == rows[i].job)
				rows[i].pcpu =
				    100.0 * (double)(rows[i].cpu_ms - prev[k].cpu_ms) / dt_ms;
}

int cmd_top(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096];
	double delay = 2;
	long iters = -1;

	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		if (!strcmp(argv[i], "-d") && i + 1 < argc) {
			delay = strtod(argv[++i], &end);
			if (*end || !(delay >= 0.1) || delay > 3600)
				return cmd_usage_error("top", "-d wants seconds >= 0.1, not '%s'",
				                       argv[i]);
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			iters = strtol(argv[++i], &end, 10);
			if (*end || iters < 1)
				return cmd_usage_error("top", "-n wants a count >= 1, not '%s'",
				                       argv[i]);
		} else {
			return cmd_usage_error("top", "unknown argument '%s'", argv[i]);
		}
	}
	if (bootlua_need_universe("top", &u, path, sizeof path))
		return 1;
	int tty = isatty(1), rc = 0;
	struct prow *prev = NULL;
	int np = 0;
	int64_t tprev = 0;
	for (long it = 0; iters < 0 || it < iters; it++) {
		struct prow *rows = NULL;
		int down = 0;
		if (it)
			usleep((useconds_t)(delay * 1e6));
		int64_t now = core_now_ms();
		int n = collect(&u, "top", &rows, &down);
		if (n < 0) {
			rc = CORE_EXIT_SYSTEM;
			break;
		}
		share(rows, n, prev, np, (double)(now - tprev));
		unsigned jobs = 0;
		for (int i = 0; i < n; i++)
			jobs += !i || rows[i].job != rows[i - 1].job;
		time_t t = time(NULL);
		char ts[32];
		strftime(ts, sizeof ts, "%H:%M:%S", localtime(&t));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("lamkit top - %s: %d node(s)%s, %u job(s), %d rank(s)\n\n", ts, u.nnodes,
		       down ? " (some down)" : "", jobs, n);
		print_rows(rows, n, 1);
		if (!tty)
			putchar('\n');
		fflush(stdout);
		free(prev);
		prev = rows;
		np = n;
		tprev = now;
		rc = down ? 1 : 0;
	}
	free(prev);
	boot_universe_free(&u);
	return rc;
}
