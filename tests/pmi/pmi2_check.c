/* tests/pmi/pmi2_check.c: MPI-free PMI-2 API check, built against lamkit's pmi2.h/libpmi and
 * against Slurm's (Debian libpmi2): job facts, node attributes (put by the node's first rank,
 * waited for by the others), put/fence/get of every rank's values, name service.
 * Usage: pmi2_check [--no-names] [--plain]: skip the name service (Slurm's srun does not
 * serve it); values without ';', '=' and spaces (Hydra's PMI-2 mangles those). */
#include "pmi2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1, plain;

static int fail(const char *what, int rc)
{
	printf("pmi2_check: rank %d: FAIL %s (rc %d)\n", rank, what, rc);
	fflush(stdout);
	return 1;
}

/* Rank r's value: ';' (doubled on the wire), '=' and spaces, then a long tail. */
static void value_of(char *out, size_t outlen, int r)
{
	int n = snprintf(out, outlen, plain ? "r%d" : "r%d;a=b; c ;;", r);

	for (; n < 600 && (size_t)n < outlen - 1; n++)
		out[n] = (char)('a' + (r + n) % 26);
	out[n] = '\0';
}

static int node_attrs(int nlocal, const char *first)
{
	char v[PMI2_MAX_VALLEN];
	int found = 0, rc;

	/* the lowest rank of the node (first in the mapping's clique) stores, the rest wait */
	if (atoi(first) == rank) {
		snprintf(v, sizeof(v), plain ? "from rank %d, %d local" : "from rank %d; %d local",
		         rank, nlocal);
		if ((rc = PMI2_Info_PutNodeAttr("pmi2-check-attr", v)))
			return fail("putnodeattr", rc);
	}
	if ((rc = PMI2_Info_GetNodeAttr("pmi2-check-attr", v, sizeof(v), &found, 1)) || !found)
		return fail("getnodeattr (wait)", rc);
	printf("pmi2_check: rank %d nodeattr '%s'\n", rank, v);
	if ((rc = PMI2_Info_GetNodeAttr("pmi2-check-none", v, sizeof(v), &found, 0)) || found)
		return fail("missing node attribute found", rc);
	return 0;
}

static int exchange(int size, const char *jobid)
{
	char key[64], val[PMI2_MAX_VALLEN], got[PMI2_MAX_VALLEN];
	int rc, len;

	snprintf(key, sizeof(key), "pmi2-check-%d", rank);
	value_of(val, sizeof(val), rank);
	if ((rc = PMI2_KVS_Put(key, val)) || (rc = PMI2_KVS_Fence()))
		return fail("put/fence", rc);
	for (int r = 0; r < size; r++) {
		snprintf(key, sizeof(key), "pmi2-check-%d", r);
		value_of(val, sizeof(val), r);
		if ((rc = PMI2_KVS_Get(jobid, r, key, got, sizeof(got), &len)))
			return fail(key, rc);
		if (strcmp(got, val) != 0 || len != (int)strlen(val))
			return fail("value differs", 0);
	}
	if (PMI2_KVS_Get(jobid, PMI2_ID_NULL, "pmi2-check-none", got, sizeof(got), &len) ==
	    PMI2_SUCCESS)
		return fail("missing key found", 0);
	return 0;
}

static int names(void)
{
	char port[256];
	int rc;

	if (rank == 0 && (rc = PMI2_Nameserv_publish("pmi2-check-svc", NULL, "tcp://h;1")))
		return fail("publish", rc);
	if ((rc = PMI2_KVS_Fence()) ||
	    (rc = PMI2_Nameserv_lookup("pmi2-check-svc", NULL, port, sizeof(port))))
		return fail("lookup", rc);
	if (strcmp(port, "tcp://h;1") != 0)
		return fail("looked-up port differs", 0);
	if ((rc = PMI2_KVS_Fence()))
		return fail("fence", rc);
	if (rank == 0 &&
	    ((rc = PMI2_Nameserv_unpublish("pmi2-check-svc", NULL)) ||
	     PMI2_Nameserv_lookup("pmi2-check-svc", NULL, port, sizeof(port)) == PMI2_SUCCESS))
		return fail("unpublish", rc);
	return 0;
}

int main(int argc, char **argv)
{
	int spawned, size, appnum, found, rc;
	char jobid[256], map[PMI2_MAX_ATTRVALUE], usize[64], first[16] = "0";
	int names_too = 1;

	for (int i = 1; i < argc; i++) {
		names_too &= strcmp(argv[i], "--no-names") != 0;
		plain |= strcmp(argv[i], "--plain") == 0;
	}

	if ((rc = PMI2_Init(&spawned, &size, &rank, &appnum)) || !PMI2_Initialized())
		return fail("init", rc);
	if ((rc = PMI2_Job_GetId(jobid, sizeof(jobid))))
		return fail("job id", rc);
	if ((rc = PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof(map), &found)) || !found)
		return fail("PMI_process_mapping", rc);
	if ((rc = PMI2_Info_GetJobAttr("universeSize", usize, sizeof(usize), &found)) || !found)
		snprintf(usize, sizeof(usize), "?");
	/* the node's first rank from a one-block mapping "(vector,(0,N,ppn))", which repeats
	 * until every rank is placed: node (rank / ppn) % N, whose first rank is node * ppn */
	int nodes = 0, ppn = 0;
	if (sscanf(map, "(vector,(0,%d,%d))", &nodes, &ppn) == 2 && ppn > 0 && nodes > 0)
		snprintf(first, sizeof(first), "%d", (rank / ppn) % nodes * ppn);
	printf("pmi2_check: rank %d of %d, appnum %d, spawned %d, job %s, mapping %s, universe "
	       "%s\n",
	       rank, size, appnum, spawned, jobid, map, usize);
	fflush(stdout);
	if (node_attrs(ppn, first) || exchange(size, jobid) || (names_too && names()))
		return 1;
	if ((rc = PMI2_KVS_Fence()) || (rc = PMI2_Finalize()))
		return fail("finalize", rc);
	printf("pmi2_check: rank %d ok (%d ranks)\n", rank, size);
	return 0;
}
