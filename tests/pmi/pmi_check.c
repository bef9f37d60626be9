/* tests/pmi/pmi_check.c: MPI-free libpmi check: facts, clique, put/barrier/get of every rank.
 * Usage: pmi_check [--extra [--no-walk]]; --extra also walks the KVS, uses the name service
 * and spawns /bin/true (for our own server; Hydra is not asked to serve these).
 * --no-walk skips the walk, which the PMI-2 wire cannot do. */
#include "pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1;

static int fail(const char *what, int rc)
{
	printf("pmi_check: rank %d: FAIL %s (rc %d)\n", rank, what, rc);
	fflush(stdout);
	return 1;
}

/* The value rank r publishes under key kind: short with awkward bytes, or long. */
static void value_of(char *out, size_t outlen, int r, int kind, int vmax)
{
	if (kind == 0) {
		snprintf(out, outlen, " rank %d: 100%% spaced \t%%20 ", r);
		return;
	}
	size_t n = (size_t)vmax - 1 < outlen - 1 ? (size_t)vmax - 1 : outlen - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)('a' + (r + (int)i) % 26);
	out[n] = '\0';
}

static int print_facts(int size)
{
	int csize, usize, appnum, rc, *cranks;
	char kvs[1024], line[4096];

	if ((rc = PMI_Get_universe_size(&usize)) || (rc = PMI_Get_appnum(&appnum)) ||
	    (rc = PMI_KVS_Get_my_name(kvs, sizeof(kvs))) || (rc = PMI_Get_clique_size(&csize)))
		return fail("job facts", rc);
	cranks = calloc((size_t)csize, sizeof(int));
	if (!cranks || (rc = PMI_Get_clique_ranks(cranks, csize)))
		return fail("clique ranks", rc);
	int n = 0, me = 0;
	for (int i = 0; i < csize; i++) {
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%d", i ? "," : "", cranks[i]);
		me |= cranks[i] == rank;
		if (cranks[i] < 0 || cranks[i] >= size || n >= (int)sizeof(line) - 16)
			me = 0;
	}
	free(cranks);
	printf("pmi_check: rank %d of %d, clique [%s], universe %d, appnum %d, kvs %s\n", rank,
	       size, line, usize, appnum, kvs);
	fflush(stdout);
	return me ? 0 : fail("clique does not hold my rank", 0);
}

static int exchange(int size, const char *kvs, int vmax)
{
	char key[64], val[4096], got[4096];
	int rc;

	for (int kind = 0; kind < 2; kind++) {
		snprintf(key, sizeof(key), "pmi-check-%d-%d", kind, rank);
		value_of(val, sizeof(val), rank, kind, vmax);
		if ((rc = PMI_KVS_Put(kvs, key, val)))
			return fail("put", rc);
	}
	if ((rc = PMI_KVS_Commit(kvs)) || (rc = PMI_Barrier()))
		return fail("commit/barrier", rc);
	for (int r = 0; r < size; r++) {
		for (int kind = 0; kind < 2; kind++) {
			snprintf(key, sizeof(key), "pmi-check-%d-%d", kind, r);
			value_of(val, sizeof(val), r, kind, vmax);
			if ((rc = PMI_KVS_Get(kvs, key, got, sizeof(got))))
				return fail(key, rc);
			if (strcmp(got, val) != 0)
				return fail("value differs", 0);
		}
	}
	if (PMI_KVS_Get(kvs, "pmi-check-no-such-key", got, sizeof(got)) == PMI_SUCCESS)
		return fail("missing key found", 0);
	return 0;
}

/* Walk the KVS: every rank's short value must show up once. */
static int walk(int size, const char *kvs)
{
	char key[256], val[4096], want[4096];
	int seen = 0, rc = PMI_KVS_Iter_first(kvs, key, sizeof(key), val, sizeof(val));

	for (int guard = 0; rc == PMI_SUCCESS && key[0] && guard < 100000; guard++) {
		int r;
		if (sscanf(key, "pmi-check-0-%d", &r) == 1) {
			value_of(want, sizeof(want), r, 0, 0);
			if (strcmp(val, want) != 0)
				return fail("iterated value differs", 0);
			seen++;
		}
		rc = PMI_KVS_Iter_next(kvs, key, sizeof(key), val, sizeof(val));
	}
	return rc != PMI_SUCCESS || seen != size ? fail("kvs walk", rc) : 0;
}

/* Name service round trip and a served spawn (one /bin/true, which never speaks PMI). */
static int names_and_spawn(void)
{
	char port[256];
	const char *argv[] = {"x", NULL}, **argvs[] = {argv};
	const char *cmds[] = {"/bin/true"};
	int maxprocs[] = {1}, errors[1] = {7}, rc;

	if (rank == 0 && (rc = PMI_Publish_name("pmi-check-svc", "tcp://h:1")))
		return fail("publish", rc);
	if ((rc = PMI_Barrier()) || (rc = PMI_Lookup_name("pmi-check-svc", port)))
		return fail("lookup", rc);
	if (strcmp(port, "tcp://h:1") != 0)
		return fail("looked-up port differs", 0);
	if ((rc = PMI_Barrier()))
		return fail("barrier", rc);
	if (rank == 0 && ((rc = PMI_Unpublish_name("pmi-check-svc")) ||
	                  PMI_Lookup_name("pmi-check-svc", port) == PMI_SUCCESS))
		return fail("unpublish", rc);
	if (rank == 0 && (rc = PMI_Spawn_multiple(1, cmds, argvs, maxprocs, NULL, NULL, 0, NULL,
	                                          errors)) != PMI_SUCCESS)
		return fail("spawn of /bin/true", rc);
	return 0;
}

int main(int argc, char **argv)
{
	int extra = argc > 1 && strcmp(argv[1], "--extra") == 0;
	int nowalk = argc > 2 && strcmp(argv[2], "--no-walk") == 0;
	int spawned, size, vmax, init;
	char kvs[1024];
	int rc;

	if ((rc = PMI_Init(&spawned)) || (rc = PMI_Initialized(&init)) || !init)
		return fail("init", rc);
	if ((rc = PMI_Get_rank(&rank)) || (rc = PMI_Get_size(&size)))
		return fail("rank/size", rc);
	if ((rc = PMI_KVS_Get_value_length_max(&vmax)) ||
	    (rc = PMI_KVS_Get_my_name(kvs, sizeof(kvs))))
		return fail("maxes", rc);
	if (print_facts(size) || exchange(size, kvs, vmax))
		return 1;
	if (extra && ((!nowalk && walk(size, kvs)) || names_and_spawn()))
		return 1;
	if ((rc = PMI_Barrier()) || (rc = PMI_Finalize()))
		return fail("finalize", rc);
	printf("pmi_check: rank %d ok (%d ranks, values up to %d bytes)\n", rank, size, vmax - 1);
	return 0;
}
