/* tests/pmi/pmi_paper.c: the PMI paper's calls that MPICH did not keep (PMI_Spawn,
 * PMI_Args_to_info, PMI_KVS_iter_first/_next), as a program written against the paper uses
 * them. Rank 0 of the parent job walks its KVS with the iterators, then spawns 2 children with
 * PMI_Spawn and prints the KVS name it got; each child prints its own KVS name. Lines:
 *   "paper: walked K pairs, mine OK", "paper: spawned 2 as KVS NAME",
 *   "paper: child R of KVS NAME",
 * and "paper: FAIL why" (exit 1) on any error. "pmi_paper nowalk" skips the walk (the PMI-2
 * wire has no way to walk a KVS). */
#include "pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *why, int rc)
{
	printf("paper: FAIL %s (rc %d)\n", why, rc);
	fflush(stdout);
	return 1;
}

/* Put two pairs, barrier, walk the KVS: both must be there. */
static int walk(const char *kvs, int rank)
{
	char key[64], *k, *v;
	int kl = 0, vl = 0, n = 0, seen = 0, rc;

	snprintf(key, sizeof(key), "paper-%d-a", rank);
	if ((rc = PMI_KVS_Put(kvs, key, "one")) != PMI_SUCCESS ||
	    (rc = PMI_KVS_Put(kvs, "paper-x", "two")) != PMI_SUCCESS ||
	    (rc = PMI_KVS_Commit(kvs)) != PMI_SUCCESS || (rc = PMI_Barrier()) != PMI_SUCCESS)
		return fail("put/commit/barrier", rc);
	PMI_KVS_Get_key_length_max(&kl);
	PMI_KVS_Get_value_length_max(&vl);
	k = malloc((size_t)kl);
	v = malloc((size_t)vl);
	if (!k || !v)
		return fail("memory", 0);
	for (rc = PMI_KVS_iter_first(kvs, k, v); rc == PMI_SUCCESS && k[0];
	     rc = PMI_KVS_iter_next(kvs, k, v)) {
		n++;
		seen += (strcmp(k, key) == 0 && strcmp(v, "one") == 0) ||
		        (strcmp(k, "paper-x") == 0 && strcmp(v, "two") == 0);
	}
	free(k);
	free(v);
	if (rc != PMI_SUCCESS || seen < 2)
		return fail("the iterators did not walk my pairs", rc);
	printf("paper: walked %d pairs, mine OK\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	int spawned = 0, rank = -1, rc;
	char kvs[256], got[256] = "";

	if ((rc = PMI_Args_to_info(&argc, &argv, NULL)) != PMI_SUCCESS || argc < 1)
		return fail("PMI_Args_to_info", rc);
	if ((rc = PMI_Init(&spawned)) != PMI_SUCCESS || (rc = PMI_Get_rank(&rank)) != PMI_SUCCESS ||
	    (rc = PMI_KVS_Get_my_name(kvs, sizeof(kvs))) != PMI_SUCCESS)
		return fail("PMI_Init", rc);
	if (spawned) {
		printf("paper: child %d of KVS %s\n", rank, kvs);
		fflush(stdout);
		PMI_Barrier();
		PMI_Finalize();
		return 0;
	}
	if ((argc < 2 || strcmp(argv[1], "nowalk") != 0) && walk(kvs, rank))
		return 1;
	if (rank == 0) {
		const char *args[] = {"child", NULL};
		if ((rc = PMI_Spawn(argv[0], args, 2, got, sizeof(got))) != PMI_SUCCESS)
			return fail("PMI_Spawn", rc);
		if (!got[0] || strcmp(got, kvs) == 0)
			return fail("PMI_Spawn gave no new KVS name", 0);
		printf("paper: spawned 2 as KVS %s\n", got);
		fflush(stdout);
	}
	PMI_Barrier();
	PMI_Finalize();
	return 0;
}
