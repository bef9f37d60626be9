/* tests/pmix/pmix_fence.c: a PMIx client (built against Debian's libpmix at test time) that
 * checks the job facts the launcher registered, then puts a value, fences with data
 * collection and gets every PMIx peer's value; optionally times fences.
 *   pmix_fence [--peers FIRST N] [--fences K] [--die R] [--time ITERS] [--half]
 *              [--svc MINE OTHER...]
 * --peers: the job's PMIx ranks are FIRST..FIRST+N-1 (an MPMD job mixing PMI and PMIx; default
 * all); --fences: fences in all (the first collects the values); --die R: rank R kills itself
 * instead of entering the first fence; --time: ITERS more fences with data, rank 0 prints the
 * mean in microseconds; --half: then each half of the peers (the first N/2, the others) fences
 * over its own ranks only, with data, and gets its half's values put since; --svc: the first of the
 * peers publishes MINE (port "port-of-MINE") before the first fence, every rank looks up the OTHER
 * services after it (the last option). (Keys starting with "pmix" are reserved to PMIx itself.)
 * Prints "pmix_fence: rank R ok (S ranks)" on success. */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;

static int fail(const char *what, pmix_status_t rc)
{
	printf("pmix_fence: rank %u: FAIL %s (%s)\n", me.rank, what, PMIx_Error_string(rc));
	fflush(stdout);
	return 1;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int get_u32(const char *key, pmix_rank_t rank, uint32_t *out)
{
	pmix_proc_t p;
	pmix_value_t *v = NULL;

	PMIX_LOAD_PROCID(&p, me.nspace, rank);
	if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
		return -1;
	if (v->type == PMIX_UINT32)
		*out = v->data.uint32;
	else if (v->type == PMIX_UINT16)
		*out = v->data.uint16;
	else
		*out = (uint32_t)-1;
	PMIX_VALUE_RELEASE(v);
	return 0;
}

/* --half: a fence over the ranks of my half of first..first+n-1 only, with data; then the
 * values my half put before it. 0, or -1 (said). */
static int fence_half(int first, int n)
{
	int lo = (int)me.rank < first + n / 2 ? first : first + n / 2;
	int hi = lo == first ? first + n / 2 : first + n;
	pmix_proc_t *procs = calloc((size_t)(hi - lo), sizeof *procs);
	pmix_info_t collect;
	pmix_value_t v;
	char key[64], val[128];
	bool yes = true;
	pmix_status_t rc;

	if (!procs)
		return fail("calloc", PMIX_ERR_NOMEM);
	for (int r = lo; r < hi; r++)
		PMIX_LOAD_PROCID(&procs[r - lo], me.nspace, (pmix_rank_t)r);
	snprintf(key, sizeof key, "lk-half-%u", me.rank);
	snprintf(val, sizeof val, "half value of rank %u", me.rank);
	PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
	if ((rc = PMIx_Put(PMIX_GLOBAL, key, &v)) != PMIX_SUCCESS ||
	    (rc = PMIx_Commit()) != PMIX_SUCCESS)
		return fail("PMIx_Put/Commit (half)", rc);
	PMIX_VALUE_DESTRUCT(&v);
	PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
	if ((rc = PMIx_Fence(procs, (size_t)(hi - lo), &collect, 1)) != PMIX_SUCCESS)
		return fail("PMIx_Fence (half)", rc);
	PMIX_INFO_DESTRUCT(&collect);
	for (int r = lo; r < hi; r++) {
		pmix_value_t *got = NULL;
		char want[128];
		snprintf(key, sizeof key, "lk-half-%d", r);
		snprintf(want, sizeof want, "half value of rank %d", r);
		if ((rc = PMIx_Get(&procs[r - lo], key, NULL, 0, &got)) != PMIX_SUCCESS)
			return fail(key, rc);
		if (got->type != PMIX_STRING || strcmp(got->data.string, want))
			return fail("wrong half value", PMIX_ERROR);
		PMIX_VALUE_RELEASE(got);
	}
	printf("pmix_fence: rank %u half %d-%d ok\n", me.rank, lo, hi - 1);
	free(procs);
	return 0;
}

int main(int argc, char **argv)
{
	int first = 0, n = -1, fences = 1, die = -1, iters = 0, svc = 0, half = 0;
	pmix_status_t rc;
	uint32_t size = 0, lrank = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--peers") && i + 2 < argc) {
			first = atoi(argv[++i]);
			n = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--fences") && i + 1 < argc) {
			fences = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--die") && i + 1 < argc) {
			die = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
			iters = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--half")) {
			half = 1;
		} else if (!strcmp(argv[i], "--svc") && i + 1 < argc) {
			svc = ++i;
			break;
		}
	}
	if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS)
		return fail("PMIx_Init", rc);
	if (get_u32(PMIX_JOB_SIZE, PMIX_RANK_WILDCARD, &size) < 0 || size < 1)
		return fail("PMIx_Get(PMIX_JOB_SIZE)", PMIX_ERR_NOT_FOUND);
	if (get_u32(PMIX_LOCAL_RANK, me.rank, &lrank) < 0)
		return fail("PMIx_Get(PMIX_LOCAL_RANK)", PMIX_ERR_NOT_FOUND);
	if (n < 0)
		n = (int)size;
	char key[64], val[128];
	pmix_value_t v;
	snprintf(key, sizeof key, "lk-fence-%u", me.rank);
	snprintf(val, sizeof val, "value of rank %u of %s", me.rank, me.nspace);
	PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
	if ((rc = PMIx_Put(PMIX_GLOBAL, key, &v)) != PMIX_SUCCESS ||
	    (rc = PMIx_Commit()) != PMIX_SUCCESS)
		return fail("PMIx_Put/Commit", rc);
	PMIX_VALUE_DESTRUCT(&v);
	if (die == (int)me.rank)
		raise(SIGKILL);
	if (svc && (int)me.rank == first) {
		pmix_info_t pub;
		char port[256];
		snprintf(port, sizeof port, "port-of-%s", argv[svc]);
		PMIX_INFO_LOAD(&pub, argv[svc], port, PMIX_STRING);
		if ((rc = PMIx_Publish(&pub, 1)) != PMIX_SUCCESS)
			return fail("PMIx_Publish", rc);
		PMIX_INFO_DESTRUCT(&pub);
	}
	pmix_info_t collect;
	bool yes = true;
	PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
	if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS)
		return fail("PMIx_Fence", rc);
	for (int r = first; r < first + n; r++) {
		pmix_proc_t p;
		pmix_value_t *got = NULL;
		char want[128];
		PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)r);
		snprintf(key, sizeof key, "lk-fence-%d", r);
		snprintf(want, sizeof want, "value of rank %d of %s", r, me.nspace);
		if ((rc = PMIx_Get(&p, key, NULL, 0, &got)) != PMIX_SUCCESS)
			return fail(key, rc);
		if (got->type != PMIX_STRING || strcmp(got->data.string, want))
			return fail("wrong value", PMIX_ERROR);
		PMIX_VALUE_RELEASE(got);
	}
	for (int i = svc ? svc + 1 : argc; i < argc; i++) {
		pmix_pdata_t pd;
		char want[256];
		PMIX_PDATA_CONSTRUCT(&pd);
		snprintf(pd.key, sizeof pd.key, "%s", argv[i]);
		snprintf(want, sizeof want, "port-of-%s", argv[i]);
		if ((rc = PMIx_Lookup(&pd, 1, NULL, 0)) != PMIX_SUCCESS)
			return fail(argv[i], rc);
		if (pd.value.type != PMIX_STRING || strcmp(pd.value.data.string, want))
			return fail("wrong service port", PMIX_ERROR);
		PMIX_PDATA_DESTRUCT(&pd);
	}
	for (int f = 1; f < fences; f++)
		if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
			return fail("PMIx_Fence", rc);
	if (iters > 0) {
		double t0 = now_us();
		for (int i = 0; i < iters; i++)
			if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS)
				return fail("PMIx_Fence (timed)", rc);
		if (me.rank == 0)
			printf("pmix_fence: %d ranks: %.1f us per fence with data\n", (int)size,
			       (now_us() - t0) / iters);
	}
	if (half && fence_half(first, n) < 0)
		return 1;
	printf("pmix_fence: rank %u ok (%u ranks)\n", me.rank, size);
	fflush(stdout);
	PMIX_INFO_DESTRUCT(&collect);
	if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
		return fail("PMIx_Finalize", rc);
	return 0;
}
