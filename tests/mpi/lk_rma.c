/* tests/mpi/lk_rma.c: one-sided communication: every window flavour, fence, PSCW, locks, atomics,
 * derived target types, and passive-target progress while the target computes. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lk_util.h"

#define N 64

/* Fence epochs: put to the right neighbour, get from the left, sum into rank 0. */
static void test_fence(MPI_Win win, int *mem)
{
	int right = (lk_rank + 1) % lk_size, left = (lk_rank + lk_size - 1) % lk_size;
	int src[N], got[N], one = lk_rank + 1;

	for (int i = 0; i < N; i++) {
		mem[i] = -1;
		src[i] = lk_rank * 1000 + i;
	}
	MPI_Win_fence(0, win);
	MPI_Put(src, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win);
	MPI_Accumulate(&one, 1, MPI_INT, 0, N - 1, 1, MPI_INT, MPI_SUM, win);
	MPI_Win_fence(0, win);
	for (int i = 0; i < N / 2; i++)
		LK_CHECK(mem[i] == left * 1000 + i, "fence put: mem[%d]=%d", i, mem[i]);
	if (lk_rank == 0)
		LK_CHECK(mem[N - 1] == -1 + lk_size * (lk_size + 1) / 2, "fence accumulate %d",
		         mem[N - 1]);
	MPI_Get(got, N / 2, MPI_INT, left, 0, N / 2, MPI_INT, win);
	MPI_Win_fence(0, win);
	for (int i = 0; i < N / 2; i++)
		LK_CHECK(got[i] == ((left + lk_size - 1) % lk_size) * 1000 + i, "fence get [%d]=%d",
		         i, got[i]);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}

/* A strided target type: 4 blocks of 2 ints every 5 ints, against 8 contiguous ints. */
static void test_derived(MPI_Win win, int *mem)
{
	MPI_Datatype vec;
	int src[8], back[8], right = (lk_rank + 1) % lk_size,
	                     left = (lk_rank + lk_size - 1) % lk_size;

	MPI_Type_vector(4, 2, 5, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (int i = 0; i < N; i++)
		mem[i] = 0;
	for (int i = 0; i < 8; i++)
		src[i] = lk_rank * 100 + i + 1;
	MPI_Win_fence(0, win);
	MPI_Put(src, 8, MPI_INT, right, 1, 1, vec, win);
	MPI_Win_fence(0, win);
	for (int b = 0, k = 0; b < 4; b++)
		for (int j = 0; j < 5; j++) {
			int want = j < 2 ? left * 100 + (k++) + 1 : 0;
			LK_CHECK(mem[1 + b * 5 + j] == want, "vector put: mem[%d]=%d want %d",
			         1 + b * 5 + j, mem[1 + b * 5 + j], want);
		}
	MPI_Win_fence(0, win); /* everyone has checked before the next updates */
	MPI_Accumulate(src, 8, MPI_INT, right, 1, 1, vec, MPI_SUM, win);
	MPI_Win_fence(0, win);
	MPI_Get(back, 8, MPI_INT, right, 1, 1, vec, win);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	for (int i = 0; i < 8; i++)
		LK_CHECK(back[i] == 2 * src[i], "vector accumulate+get [%d]=%d", i, back[i]);
	MPI_Type_free(&vec);
}

/* Post/start/complete/wait: expose to the left neighbour, access the right one. */
static void test_pscw(MPI_Win win, int *mem)
{
	MPI_Group world, lg, rg;
	int right = (lk_rank + 1) % lk_size, left = (lk_rank + lk_size - 1) % lk_size, v, flag = 0;

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &left, &lg);
	MPI_Group_incl(world, 1, &right, &rg);
	mem[3] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_post(lg, 0, win);
	MPI_Win_start(rg, 0, win);
	v = lk_rank + 7;
	MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win);
	MPI_Win_complete(win);
	while (!flag)
		MPI_Win_test(win, &flag);
	LK_CHECK(mem[3] == left + 7, "pscw put: %d", mem[3]);
	MPI_Group_free(&lg);
	MPI_Group_free(&rg);
	MPI_Group_free(&world);
}

/* Atomics under lock_all: every fetched counter value is unique, the total adds up; exactly one
 * compare-and-swap wins. */
static void test_atomics(MPI_Win win, int *mem)
{
	enum { ITER = 200 };
	int got[ITER], one = 1, sum = 0, mine = lk_rank, old = -2, minus = -1, wins, bad = 0;
	long long total;

	mem[0] = 0;
	mem[1] = -1;
	MPI_Win_fence(0, win);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	MPI_Win_lock_all(0, win);
	for (int i = 0; i < ITER; i++)
		MPI_Fetch_and_op(&one, &got[i], MPI_INT, 0, 0, MPI_SUM, win);
	MPI_Compare_and_swap(&mine, &minus, &old, MPI_INT, 0, 1, win);
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 1; i < ITER; i++)
		bad += got[i] <= got[i - 1];
	LK_CHECK(!bad, "fetch_and_op values not increasing (%d times)", bad);
	for (int i = 0; i < ITER; i++)
		sum += got[i];
	total = sum;
	MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	{ /* distinct values 0 .. n*ITER-1 sum to this */
		long long n = (long long)lk_size * ITER;
		LK_CHECK(total == n * (n - 1) / 2, "fetch_and_op values not unique: sum %lld",
		         total);
	}
	if (lk_rank == 0)
		LK_CHECK(mem[0] == lk_size * ITER, "fetch_and_op counter %d", mem[0]);
	wins = old == -1;
	MPI_Allreduce(MPI_IN_PLACE, &wins, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(wins == 1, "%d compare-and-swaps won", wins);
	if (lk_rank == 0)
		LK_CHECK(mem[1] >= 0 && mem[1] < lk_size, "cas left %d", mem[1]);
	/* get_accumulate: NO_OP reads, REPLACE swaps */
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == lk_size - 1) {
		int r = -5, nv = 4242, prev = -5;
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Get_accumulate(NULL, 0, MPI_INT, &r, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP,
		                   win);
		MPI_Get_accumulate(&nv, 1, MPI_INT, &prev, 1, MPI_INT, 0, 0, 1, MPI_INT,
		                   MPI_REPLACE, win);
		MPI_Win_unlock(0, win);
		LK_CHECK(r == lk_size * ITER && prev == r, "get_accumulate no_op %d replace %d", r,
		         prev);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		LK_CHECK(mem[0] == 4242, "replace result %d", mem[0]);
		MPI_Win_unlock(0, win);
	}
}

/* Read-modify-write by get and put under an exclusive lock: no update is lost. */
static void test_exclusive(MPI_Win win, int *mem)
{
	enum { ITER = 100 };
	int v;

	mem[5] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < ITER; i++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Get(&v, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
		MPI_Win_flush(0, win);
		v++;
		MPI_Put(&v, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		LK_CHECK(mem[5] == lk_size * ITER, "exclusive lock lost updates: %d of %d", mem[5],
		         lk_size * ITER);
		MPI_Win_unlock(0, win);
	}
}

/* Rank 0 computes without calling MPI until the others' passive-target updates have all
 * landed in its window (lamkit needs no call from the target; other MPIs get MPI_Iprobe). */
static void test_passive(MPI_Win win, volatile int *mem)
{
	int one = 1;

	mem[7] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		time_t t0 = time(NULL);
		int flag, seen = 0;
		for (long spin = 0; spin < 2000000000L; spin++) {
			__sync_synchronize();
			seen = mem[7];
			if (seen >= lk_size - 1)
				break;
#ifndef LAMKIT_MPI
			MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
#else
			(void)flag;
			if (spin % 4096 == 0 && time(NULL) - t0 > 30)
				break;
#endif
		}
		LK_CHECK(seen == lk_size - 1, "passive target: %d of %d updates seen in %ld s",
		         seen, lk_size - 1, (long)(time(NULL) - t0));
	} else {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Accumulate(&one, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_SUM, win);
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* MAXLOC on a pair type, whose packed form (12 bytes) differs from its layout (16). */
static void test_pair(MPI_Win win, int *mem)
{
	struct {
		double v;
		int k;
	} *t = (void *)(mem + 8), mine[2];

	if (lk_rank == 0)
		for (int i = 0; i < 2; i++)
			t[i].v = -1, t[i].k = -1;
	for (int i = 0; i < 2; i++) {
		mine[i].v = (lk_rank * 7 + i * 3) % 5;
		mine[i].k = lk_rank;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	MPI_Accumulate(mine, 2, MPI_DOUBLE_INT, 0, 8, 2, MPI_DOUBLE_INT, MPI_MAXLOC, win);
	MPI_Win_unlock(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		for (int i = 0; i < 2; i++) {
			double best = -1;
			int who = -1;
			for (int p = 0; p < lk_size; p++)
				if ((p * 7 + i * 3) % 5 > best)
					best = (p * 7 + i * 3) % 5, who = p;
			LK_CHECK(t[i].v == best && t[i].k == who, "maxloc accumulate [%d]: %g,%d",
			         i, t[i].v, t[i].k);
		}
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void run_all(MPI_Win win, int *mem, const char *what)
{
	(void)what;
	test_fence(win, mem);
	test_derived(win, mem);
	test_pscw(win, mem);
	test_atomics(win, mem);
	test_exclusive(win, mem);
	test_pair(win, mem);
	test_passive(win, mem);
}

static void test_shared(void)
{
	MPI_Comm node;
	MPI_Win win;
	int *mine, nr, me, *peer, du, flag;
	MPI_Aint sz;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &nr);
	MPI_Comm_rank(node, &me);
	MPI_Win_allocate_shared((MPI_Aint)(sizeof(int) * (me + 1)), sizeof(int), MPI_INFO_NULL,
	                        node, &mine, &win);
	MPI_Win_lock_all(0, win);
	for (int i = 0; i <= me; i++)
		mine[i] = me * 10 + i;
	MPI_Win_sync(win);
	MPI_Barrier(node);
	MPI_Win_sync(win);
	for (int r = 0; r < nr; r++) {
		MPI_Win_shared_query(win, r, &sz, &du, &peer);
		LK_CHECK(sz == (MPI_Aint)sizeof(int) * (r + 1) && du == (int)sizeof(int),
		         "shared_query size %ld unit %d", (long)sz, du);
		for (int i = 0; i <= r; i++)
			LK_CHECK(peer[i] == r * 10 + i, "shared load rank %d [%d]=%d", r, i,
			         peer[i]);
		if (r > 0) { /* contiguous by default */
			int *prev;
			MPI_Aint psz;
			MPI_Win_shared_query(win, r - 1, &psz, &du, &prev);
			LK_CHECK((char *)prev + psz == (char *)peer,
			         "shared window not contiguous");
		}
	}
	MPI_Win_unlock_all(win);
	{
		int *flav;
		MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flav, &flag);
		LK_CHECK(flag && *flav == MPI_WIN_FLAVOR_SHARED, "flavor attribute");
	}
	MPI_Win_free(&win);
	LK_CHECK(win == MPI_WIN_NULL, "win_free sets MPI_WIN_NULL");
	MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
	MPI_Win win;
	int *mem = malloc(sizeof(int) * N), *amem, flag;
	void *base;
	MPI_Aint *size;

	lk_init(&argc, &argv, "lk_rma");
	MPI_Win_create(mem, (MPI_Aint)sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
	               &win);
	MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
	LK_CHECK(flag && base == mem, "MPI_WIN_BASE");
	MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag);
	LK_CHECK(flag && *size == (MPI_Aint)sizeof(int) * N, "MPI_WIN_SIZE");
	run_all(win, mem, "create");
	MPI_Win_free(&win);
	MPI_Win_allocate((MPI_Aint)sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
	                 &amem, &win);
	run_all(win, amem, "allocate");
#ifdef LAMKIT_MPI
	{ /* outside the target's window: an error, not a write into its other memory */
		int x = 1, rc;
		MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		rc = MPI_Put(&x, 1, MPI_INT, 0, N, 1, MPI_INT, win);
		MPI_Win_unlock(0, win);
		LK_CHECK(rc == MPI_ERR_RMA_RANGE, "put past the window end gave %d", rc);
	}
#endif
	MPI_Win_free(&win);
	test_shared();
	free(mem);
	return lk_finish();
}
