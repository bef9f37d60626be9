/* tests/pmix/pmix_event.c: a PMIx client (built against Debian's libpmix at test time) for a
 * rank's death as a PMIx event and for job control:
 *   pmix_event --die R [--exit CODE]  rank R dies (SIGKILL, or exit CODE) after the first fence;
 *                                     the others wait (20 s at most) for the event and print it
 *   pmix_event --kill R               rank 0 asks (PMIx_Job_control_nb) to kill rank R; the
 *                                     others wait for the event of its death
 *   pmix_event --signal SIG           rank 0 asks to send SIG to every rank of the job; each rank
 *                                     waits for it (10 s at most), then all fence and finalize
 *   pmix_event [--wait MS]            nobody dies: rank 0 says "ready (NSPACE)" after the fence;
 *                                     all wait MS (default 20000) for events
 *   pmix_event --kill-job NSPACE      rank 0 asks to kill every rank of job NSPACE, says how
 *                                     that went; all finalize
 *   pmix_event --spawn N CMD          rank 0 spawns N processes of CMD (PMIx_Spawn, asking for
 *                                     PMIX_NOTIFY_COMPLETION) and waits (20 s at most) for the
 *                                     PMIX_EVENT_JOB_END of that job
 * Each survivor prints "pmix_event: rank R: <event name> for rank X of <nspace> (exit code
 * N)" per event (handlers registered for PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED
 * and PMIX_EVENT_JOB_END; X is -2 for a whole job), then finalizes and exits 0. */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static volatile sig_atomic_t got_event, got_signal;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
	const pmix_proc_t *who = NULL;
	int code = -1;

	for (size_t i = 0; i < ninfo; i++) {
		if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
			who = info[i].value.data.proc;
		else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE))
			code = info[i].value.data.integer;
	}
	printf("pmix_event: rank %u: %s for rank %d of %s (exit code %d)\n", me.rank,
	       PMIx_Error_string(status), who ? (int)who->rank : -1, who ? who->nspace : "?", code);
	fflush(stdout);
	got_event++;
	if (cbfunc)
		cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void registered(pmix_status_t status, size_t ref, void *cbdata)
{
	*(volatile int *)cbdata = status == PMIX_SUCCESS ? 1 : -1;
}

static void on_signal(int sig)
{
	got_signal = sig;
}

struct done {
	volatile int done;
	pmix_status_t st;
};

static void ctrl_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
	struct done *d = cbdata;

	d->st = status;
	d->done = 1;
	if (release_fn)
		release_fn(release_cbdata);
}

static void nap(int ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&t, NULL);
}

/* Ask for job control over one target (rank PMIX_RANK_WILDCARD: the whole job). */
static pmix_status_t control(const char *nspace, pmix_rank_t rank, const char *key, int sig)
{
	pmix_proc_t t;
	pmix_info_t d;
	struct done done = {0};
	bool yes = true;

	PMIX_LOAD_PROCID(&t, nspace, rank);
	if (sig)
		PMIX_INFO_LOAD(&d, key, &sig, PMIX_INT);
	else
		PMIX_INFO_LOAD(&d, key, &yes, PMIX_BOOL);
	pmix_status_t rc = PMIx_Job_control_nb(&t, 1, &d, 1, ctrl_done, &done);
	for (int i = 0; rc == PMIX_SUCCESS && !done.done && i < 1000; i++)
		nap(10);
	PMIX_INFO_DESTRUCT(&d);
	return rc != PMIX_SUCCESS ? rc : done.done ? done.st : PMIX_ERR_TIMEOUT;
}

int main(int argc, char **argv)
{
	int die = -1, code = -1, kill_r = -1, sig = 0, nspawn = 0, wait_ms = 20000;
	const char *cmd = NULL, *kill_job = NULL;
	pmix_status_t rc,
	    codes[3] = {PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED, PMIX_EVENT_JOB_END};
	pmix_proc_t all;
	volatile int reg[3] = {0, 0, 0};

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--die"))
			die = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--exit"))
			code = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--kill"))
			kill_r = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--signal"))
			sig = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--kill-job"))
			kill_job = argv[i + 1];
		else if (!strcmp(argv[i], "--wait"))
			wait_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--spawn") && i + 2 < argc)
			nspawn = atoi(argv[i + 1]), cmd = argv[i + 2], i++;
	}
	signal(SIGUSR1, on_signal);
	signal(SIGUSR2, on_signal);
	if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
		printf("pmix_event: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
		return 1;
	}
	for (int k = 0; k < 3; k++)
		PMIx_Register_event_handler(&codes[k], 1, NULL, 0, on_event, registered,
		                            (void *)&reg[k]);
	for (int i = 0; i < 500 && (!reg[0] || !reg[1] || !reg[2]); i++)
		nap(10);
	if (reg[0] != 1 || reg[1] != 1 || reg[2] != 1) {
		printf("pmix_event: rank %u: registering the handlers failed\n", me.rank);
		return 1;
	}
	PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
	if ((rc = PMIx_Fence(&all, 1, NULL, 0)) != PMIX_SUCCESS) {
		printf("pmix_event: rank %u: fence failed: %s\n", me.rank, PMIx_Error_string(rc));
		return 1;
	}
	if (sig) {
		if (me.rank == 0)
			printf("pmix_event: rank 0: job control signal %d: %s\n", sig,
			       PMIx_Error_string(control(me.nspace, PMIX_RANK_WILDCARD,
			                                 PMIX_JOB_CTRL_SIGNAL, sig)));
		for (int i = 0; i < 1000 && !got_signal; i++)
			nap(10);
		printf("pmix_event: rank %u: got signal %d\n", me.rank, (int)got_signal);
		fflush(stdout);
		PMIx_Fence(&all, 1, NULL, 0);
		PMIx_Finalize(NULL, 0);
		return got_signal ? 0 : 1;
	}
	if (nspawn > 0) {
		if (me.rank == 0) {
			pmix_app_t app;
			pmix_info_t notify;
			pmix_nspace_t child;
			bool yes = true;
			PMIX_APP_CONSTRUCT(&app);
			app.cmd = strdup(cmd);
			app.argv = calloc(2, sizeof *app.argv); /* the destructor frees it all */
			app.argv[0] = strdup(cmd);
			app.maxprocs = nspawn;
			PMIX_INFO_LOAD(&notify, PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
			rc = PMIx_Spawn(&notify, 1, &app, 1, child);
			printf("pmix_event: rank 0: spawned %d of %s: %s\n", nspawn, cmd,
			       PMIx_Error_string(rc));
			fflush(stdout);
			PMIX_APP_DESTRUCT(&app);
			PMIX_INFO_DESTRUCT(&notify);
			for (int i = 0; rc == PMIX_SUCCESS && i < 2000 && !got_event; i++)
				nap(10);
			if (!got_event)
				printf("pmix_event: rank 0: no event\n");
		}
		fflush(stdout);
		PMIx_Fence(&all, 1, NULL, 0);
		PMIx_Finalize(NULL, 0);
		return 0;
	}
	if ((int)me.rank == die) {
		nap(200);
		if (code >= 0)
			exit(code);
		raise(SIGKILL);
	}
	if (kill_job) {
		if (me.rank == 0)
			printf("pmix_event: rank 0: job control kill of job %s: %s\n", kill_job,
			       PMIx_Error_string(
			           control(kill_job, PMIX_RANK_WILDCARD, PMIX_JOB_CTRL_KILL, 0)));
		fflush(stdout);
		PMIx_Finalize(NULL, 0);
		return 0;
	}
	if (kill_r >= 0 && me.rank == 0) {
		printf("pmix_event: rank 0: job control kill of rank %d: %s\n", kill_r,
		       PMIx_Error_string(
		           control(me.nspace, (pmix_rank_t)kill_r, PMIX_JOB_CTRL_KILL, 0)));
		fflush(stdout);
	}
	if (die < 0 && kill_r < 0 && me.rank == 0) { /* the others' job may go on now */
		printf("pmix_event: rank 0: ready (%s)\n", me.nspace);
		fflush(stdout);
	}
	for (int i = 0; i < wait_ms / 10 && got_event < 2; i++)
		nap(10);
	if (!got_event)
		printf("pmix_event: rank %u: no event\n", me.rank);
	fflush(stdout);
	PMIx_Finalize(NULL, 0);
	return 0;
}
