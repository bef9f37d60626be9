/* tests/pmix/pmix_tool.c: a PMIx tool (built against Debian's libpmix at test time) that
 * connects to an agent's PMIx server and asks it for job control:
 *   pmix_tool --uri URI --kill NSPACE   connect to the server at URI (a rank's
 *                                       PMIX_SERVER_URI41), kill every rank of job NSPACE
 *   pmix_tool --pid PID --kill NSPACE   the same, finding the server of agent PID through its
 *                                       rendezvous file (PMIX_SERVER_TMPDIR in the environment)
 * Prints "pmix_tool: connected as NSPACE:RANK" and "pmix_tool: kill of NSPACE: STATUS"; exit 0
 * when the server answered success, 1 otherwise. */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct done {
	volatile int done;
	pmix_status_t st;
};

static void ctrl_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
	struct done *d = cbdata;

	(void)info;
	(void)ninfo;
	d->st = status;
	d->done = 1;
	if (release_fn)
		release_fn(release_cbdata);
}

int main(int argc, char **argv)
{
	const char *uri = NULL, *victim = NULL;
	pid_t pid = 0;
	pmix_proc_t me, target;
	pmix_info_t info[2], kill;
	struct done done = {0};
	bool yes = true;
	size_t n = 0;
	pmix_status_t rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--uri"))
			uri = argv[i + 1];
		else if (!strcmp(argv[i], "--pid"))
			pid = (pid_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--kill"))
			victim = argv[i + 1];
	}
	if ((!uri && !pid) || !victim) {
		fprintf(stderr, "usage: pmix_tool --uri URI|--pid PID --kill NSPACE\n");
		return 100;
	}
	if (uri)
		PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_URI, uri, PMIX_STRING);
	else
		PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
	if ((rc = PMIx_tool_init(&me, info, n)) != PMIX_SUCCESS) {
		printf("pmix_tool: PMIx_tool_init failed: %s\n", PMIx_Error_string(rc));
		return 1;
	}
	printf("pmix_tool: connected as %s:%u\n", me.nspace, me.rank);
	PMIX_LOAD_PROCID(&target, victim, PMIX_RANK_WILDCARD);
	PMIX_INFO_LOAD(&kill, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
	rc = PMIx_Job_control_nb(&target, 1, &kill, 1, ctrl_done, &done);
	for (int i = 0; rc == PMIX_SUCCESS && !done.done && i < 1000; i++) {
		struct timespec t = {0, 10000000L};
		nanosleep(&t, NULL);
	}
	if (rc == PMIX_SUCCESS)
		rc = done.done ? done.st : PMIX_ERR_TIMEOUT;
	printf("pmix_tool: kill of %s: %s\n", victim, PMIx_Error_string(rc));
	fflush(stdout);
	PMIx_tool_finalize();
	return rc == PMIX_SUCCESS ? 0 : 1;
}
