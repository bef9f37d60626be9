/* tests/pmix/pmix_keys.c: print what PMIx_Get answers for the standard job, node, app and
 * process keys, one "rank R: KEY = VALUE" line each ("(not found)" otherwise), so a launcher's
 * answers can be compared key by key with another's (bench/pmix, doc/PROTOCOL-pmi.md part 6).
 * Built against Debian's libpmix.   pmix_keys [RANK] (only that rank prints; default 0) */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t me;

static void show(const char *name, const char *key, pmix_rank_t rank)
{
	pmix_proc_t p;
	pmix_value_t *v = NULL;
	char buf[512];

	PMIX_LOAD_PROCID(&p, me.nspace, rank);
	if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v) {
		printf("rank %u: %s = (not found)\n", me.rank, name);
		return;
	}
	switch (v->type) {
	case PMIX_STRING:
		snprintf(buf, sizeof buf, "\"%s\"", v->data.string);
		break;
	case PMIX_UINT32:
		snprintf(buf, sizeof buf, "%u", v->data.uint32);
		break;
	case PMIX_UINT16:
		snprintf(buf, sizeof buf, "%u", v->data.uint16);
		break;
	case PMIX_PROC_RANK:
		snprintf(buf, sizeof buf, "%u", v->data.rank);
		break;
	case PMIX_BOOL:
		snprintf(buf, sizeof buf, "%s", v->data.flag ? "true" : "false");
		break;
	case PMIX_PROC:
		snprintf(buf, sizeof buf, "%s:%u", v->data.proc->nspace, v->data.proc->rank);
		break;
	default:
		snprintf(buf, sizeof buf, "(type %s)", PMIx_Data_type_string(v->type));
	}
	printf("rank %u: %s = %s\n", me.rank, name, buf);
	PMIX_VALUE_RELEASE(v);
}

#define JOB(k)  show(#k, k, PMIX_RANK_WILDCARD)
#define MINE(k) show(#k, k, me.rank)

int main(int argc, char **argv)
{
	pmix_rank_t who = argc > 1 ? (pmix_rank_t)atoi(argv[1]) : 0;

	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
		printf("pmix_keys: PMIx_Init failed\n");
		return 1;
	}
	if (me.rank == who) {
		JOB(PMIX_JOBID);
		JOB(PMIX_JOB_SIZE);
		JOB(PMIX_UNIV_SIZE);
		JOB(PMIX_MAX_PROCS);
		JOB(PMIX_NUM_NODES);
		JOB(PMIX_JOB_NUM_APPS);
		JOB(PMIX_LOCAL_SIZE);
		JOB(PMIX_LOCAL_PEERS);
		JOB(PMIX_LOCALLDR);
		JOB(PMIX_NODE_SIZE);
		JOB(PMIX_TMPDIR);
		JOB(PMIX_NSDIR);
		JOB(PMIX_SPAWNED);
		MINE(PMIX_RANK);
		MINE(PMIX_GLOBAL_RANK);
		MINE(PMIX_APP_RANK);
		MINE(PMIX_APPNUM);
		MINE(PMIX_APP_SIZE);
		MINE(PMIX_APPLDR);
		MINE(PMIX_LOCAL_RANK);
		MINE(PMIX_NODE_RANK);
		MINE(PMIX_NODEID);
		MINE(PMIX_HOSTNAME);
		MINE(PMIX_PROCDIR);
		MINE(PMIX_LOCALITY_STRING);
		MINE(PMIX_CPUSET);
		MINE(PMIX_PARENT_ID);
		MINE(PMIX_PROC_PID);
		MINE(PMIX_WDIR);
	}
	fflush(stdout);
	PMIx_Finalize(NULL, 0);
	return 0;
}
