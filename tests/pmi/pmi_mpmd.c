/* tests/pmi/pmi_mpmd.c: one app of an MPMD job whose apps speak different wires: puts a value,
 * its first rank publishes the service MINE (port "port-of-MINE"), enters the job's fence, gets
 * the values of the ranks FIRST..FIRST+N-1 (its own wire's) and looks up the services OTHER...
 * (the other apps'), fences again. Built with lamkit's libpmi (PMI-1 API), or with -DUSE_PMI2
 * against a PMI-2 client (lamkit's or Slurm's libpmi2).   pmi_mpmd FIRST N [MINE OTHER...] */
#ifdef USE_PMI2
#include <pmi2.h>
#else
#include "pmi.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1;

static int fail(const char *what, int rc)
{
	printf("pmi_mpmd: rank %d: FAIL %s (rc %d)\n", rank, what, rc);
	fflush(stdout);
	return 1;
}

int main(int argc, char **argv)
{
	int first = argc > 2 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 0, size = 0, rc;
	char key[64], val[256], got[1024];

#ifdef USE_PMI2
	int spawned, appnum, len;
	char jobid[256];
	if ((rc = PMI2_Init(&spawned, &size, &rank, &appnum)) ||
	    (rc = PMI2_Job_GetId(jobid, sizeof jobid)))
		return fail("PMI2_Init", rc);
#define PUT(k, v)          PMI2_KVS_Put(k, v)
#define FENCE()            PMI2_KVS_Fence()
#define GET(r, k)          PMI2_KVS_Get(jobid, r, k, got, sizeof got, &len)
#define FINI()             PMI2_Finalize()
#define PUBLISH(s, p)      PMI2_Nameserv_publish(s, NULL, p)
#define LOOKUP(s, p, plen) PMI2_Nameserv_lookup(s, NULL, p, plen)
	const char *wire = "PMI-2";
#else
	int spawned;
	char kvs[256];
	if ((rc = PMI_Init(&spawned)) || (rc = PMI_Get_rank(&rank)) || (rc = PMI_Get_size(&size)) ||
	    (rc = PMI_KVS_Get_my_name(kvs, sizeof kvs)))
		return fail("PMI_Init", rc);
#define PUT(k, v)          (PMI_KVS_Put(kvs, k, v) || PMI_KVS_Commit(kvs))
#define FENCE()            PMI_Barrier()
#define GET(r, k)          PMI_KVS_Get(kvs, k, got, sizeof got)
#define FINI()             PMI_Finalize()
#define PUBLISH(s, p)      PMI_Publish_name(s, p)
#define LOOKUP(s, p, plen) PMI_Lookup_name(s, p)
	const char *wire = "PMI-1";
#endif
	snprintf(key, sizeof key, "mpmd-%d", rank);
	snprintf(val, sizeof val, "%s rank %d", wire, rank);
	char port[256];
	snprintf(port, sizeof port, "port-of-%s", argc > 3 ? argv[3] : "");
	if ((rc = PUT(key, val)) || (argc > 3 && rank == first && (rc = PUBLISH(argv[3], port))) ||
	    (rc = FENCE()))
		return fail("put/publish/fence", rc);
	for (int i = 4; i < argc; i++) {
		char want[256];
		snprintf(want, sizeof want, "port-of-%s", argv[i]);
		if ((rc = LOOKUP(argv[i], port, sizeof port)) || strcmp(port, want))
			return fail(argv[i], rc);
	}
	for (int r = first; r < first + n; r++) {
		char want[256];
		snprintf(key, sizeof key, "mpmd-%d", r);
		snprintf(want, sizeof want, "%s rank %d", wire, r);
		if ((rc = GET(r, key)) || strcmp(got, want))
			return fail(key, rc);
	}
	if ((rc = FENCE()))
		return fail("second fence", rc);
	printf("pmi_mpmd: rank %d (%s) ok: %d of its wire in a job of %d, %d services found\n",
	       rank, wire, n, size, argc > 4 ? argc - 4 : 0);
	fflush(stdout);
	FINI();
	return 0;
}
