/* lib/boot/job_ps.c: per-rank records for `lamkit ps`/`top` and a signal to one job. */
#include "job_ps.h"
#include "core.h"
#include "job_internal.h"
#include "proto.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* State letter, utime+stime (ticks) and rss (pages) from /proc/PID/stat; 0 or -1. */
static int proc_stat(pid_t pid, char *state, long long *ticks, long long *pages)
{
	char path[64], buf[1024];
	unsigned long long ut = 0, st = 0;
	long long rss = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	if (!p || sscanf(p + 2,
	                 "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
	                 "%*d %*d %*u %*u %lld",
	                 state, &ut, &st, &rss) != 4)
		return -1;
	*ticks = (long long)(ut + st);
	*pages = rss;
	return 0;
}

static const char *state_name(char c)
{
	switch (c) {
	case 'R':
		return "run";
	case 'S':
	case 'I':
		return "sleep";
	case 'D':
		return "disk";
	case 'T':
	case 't':
		return "stop";
	case 'Z':
	case 'X':
		return "zombie";
	}
	return "?";
}

static const struct boot_app *app_of(const boot_job_t *j, int rank)
{
	for (int a = 0; a < j->js.napps; a++) {
		const struct boot_app *app = &j->js.apps[a];
		if (rank >= app->first_rank && rank < app->first_rank + app->nprocs)
			return app;
	}
	return NULL;
}

int boot_job_ps(const boot_job_t *j, struct core_wbuf *w)
{
	long tck = sysconf(_SC_CLK_TCK), pg = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < j->nranks; i++) {
		const struct boot_rank *r = &j->r[i];
		const struct boot_app *app = app_of(j, r->rank);
		char state = 0, cmd[201] = "";
		long long ticks = 0, pages = 0;
		size_t used = 0;
		if (!r->exited && r->pid > 0 && proc_stat(r->pid, &state, &ticks, &pages) < 0)
			state = 0;
		for (int k = 0; app && k < app->argc && used + 1 < sizeof cmd; k++)
			used += (size_t)snprintf(cmd + used, sizeof cmd - used, "%s%s",
			                         k ? " " : "", app->argv[k]);
		core_w_u32(w, j->js.jobid);
		core_w_u32(w, (uint32_t)r->rank);
		core_w_u32(w, (uint32_t)(r->pid > 0 ? r->pid : 0));
		int pmi = r->pmi_state; /* settled at exit; live from the connection before */
		if (r->pmi && pmi_conn_finalized(r->pmi))
			pmi = BOOT_PMI_FINALIZED;
		else if (r->pmi && pmi_conn_initialized(r->pmi))
			pmi = BOOT_PMI_INIT;
		core_w_u32(w, (uint32_t)pmi);
		core_w_str(w, r->exited || !state ? "exited" : state_name(state));
		core_w_i64(w, tck > 0 ? ticks * 1000 / tck : 0);
		core_w_i64(w, pages * (pg > 0 ? pg : 4096) / 1024);
		core_w_str(w, cmd);
	}
	return j->nranks;
}

int boot_job_signal(boot_job_t *j, int sig)
{
	int n = 0;

	if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
		sig = SIGSTOP;
	for (int i = 0; i < j->nranks; i++)
		if (j->r[i].pid > 0 && !j->r[i].exited && kill(-j->r[i].pid, sig) == 0)
			n++;
	return n;
}
