/* tests/mpi/lk_rma_nodes.c: one-sided communication whose targets may be on other nodes: large
 * transfers cut into messages, request-based operations, every flush, lock_all with NOCHECK,
 * get_accumulate/fetch_and_op/compare_and_swap, passive progress while the target computes
 * (bounded time), and a dynamic window (MPI_Win_create_dynamic/attach/detach). Complements
 * lk_rma.c, which runs across nodes too. */
#include <string.h>
#include <time.h>

#include "lk_util.h"

#ifdef LAMKIT_MPI
#define BIG (1 << 18) /* ints: 1 MiB */
#else
/* MPICH 4.0 over UCX's default transports, ranks on one host but told they are on different
 * nodes (lamkit mpiexec --local-agents), returns wrong data for a 1 MiB MPI_Get and then
 * crashes in ucp_get_rep_handler (fine with UCX_TLS=tcp,self): others move 16 KiB here. */
#define BIG (1 << 12)
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 1 MiB put to the right neighbour and get from the left under fence, then checked. */
static void test_big(MPI_Win win, int *mem)
{
	int right = (lk_rank + 1) % lk_size, left = (lk_rank + lk_size - 1) % lk_size;
	int *src = malloc(sizeof(int) * BIG), *back = malloc(sizeof(int) * BIG), bad = 0;

	for (int i = 0; i < BIG; i++)
		src[i] = lk_rank * 1000003 + i;
	MPI_Win_fence(0, win);
	MPI_Put(src, BIG, MPI_INT, right, 0, BIG, MPI_INT, win);
	MPI_Win_fence(0, win);
	for (int i = 0; i < BIG; i++)
		bad += mem[i] != left * 1000003 + i;
	LK_CHECK(!bad, "1 MiB put from %d: %d wrong", left, bad);
	MPI_Get(back, BIG, MPI_INT, left, 0, BIG, MPI_INT, win);
	MPI_Win_fence(0, win);
	bad = 0;
	for (int i = 0; i < BIG; i++)
		bad += back[i] != ((left + lk_size - 1) % lk_size) * 1000003 + i;
	LK_CHECK(!bad, "1 MiB get from %d: %d wrong", left, bad);
	free(src);
	free(back);
}

/* Strided accumulate of doubles into every rank under lock_all(NOCHECK) + flush_all. */
static void test_strided_acc(MPI_Win win, void *mem)
{
	MPI_Datatype vec;
	double v[64], *d = mem;

	for (int i = 0; i < 128; i++)
		d[i] = 0;
	for (int i = 0; i < 64; i++)
		v[i] = lk_rank + i * 0.5;
	MPI_Type_vector(64, 1, 2, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
	for (int t = 0; t < lk_size; t++)
		MPI_Accumulate(v, 64, MPI_DOUBLE, t, 0, 1, vec, MPI_SUM, win);
	MPI_Win_flush_all(win);
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	double ranks = (double)lk_size * (lk_size - 1) / 2;
	for (int i = 0; i < 64; i++) {
		LK_CHECK(d[2 * i] == ranks + lk_size * i * 0.5, "strided sum [%d] = %g", i,
		         d[2 * i]);
		LK_CHECK(d[2 * i + 1] == 0, "stride gap [%d] touched: %g", i, d[2 * i + 1]);
	}
	MPI_Type_free(&vec);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Request-based operations against the last rank (another node when ranks are spread). */
static void test_requests(MPI_Win win, int *mem)
{
	int t = lk_size - 1, x = 7, got[4] = {0}, old = -1;
	MPI_Request rq[4];

	mem[0] = 100;
	mem[1] = 0;
	mem[2] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
	MPI_Raccumulate(&x, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, win, &rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Win_flush(t, win);
	MPI_Rget(&got[0], 1, MPI_INT, t, 0, 1, MPI_INT, win, &rq[0]);
	MPI_Rget_accumulate(&x, 1, MPI_INT, &old, 1, MPI_INT, t, 2, 1, MPI_INT, MPI_SUM, win,
	                    &rq[1]);
	MPI_Rput(&x, 1, MPI_INT, t, 3 + lk_rank % 4, 1, MPI_INT, win, &rq[2]);
	for (int i = 0; i < 3; i++)
		MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
	LK_CHECK(got[0] == 100, "Rget got %d", got[0]);
	LK_CHECK(old >= 0 && old % 7 == 0 && old < 7 * lk_size, "Rget_accumulate old %d", old);
	MPI_Win_flush_local(t, win);
	MPI_Win_unlock(t, win);
#ifdef LAMKIT_MPI /* MPICH 4.0 refuses MPI_Request_free on RMA requests ("invalid (kind=12)") */
	/* requests freed before their results arrive: the operations still complete at the
	 * unlock, and the requests go away (the asan build would report one left behind) */
	got[1] = got[2] = -1;
	MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
	MPI_Rget(&got[1], 1, MPI_INT, t, 0, 1, MPI_INT, win, &rq[0]);
	MPI_Rget_accumulate(&x, 1, MPI_INT, &got[2], 1, MPI_INT, t, 0, 1, MPI_INT, MPI_NO_OP, win,
	                    &rq[1]);
	MPI_Rput(&x, 1, MPI_INT, t, 3 + lk_rank % 4, 1, MPI_INT, win, &rq[2]);
	MPI_Raccumulate(&x, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, win, &rq[3]);
	for (int i = 0; i < 4; i++)
		MPI_Request_free(&rq[i]);
	MPI_Win_unlock(t, win);
	LK_CHECK(got[1] == 100 && got[2] == 100, "freed Rget / Rget_accumulate got %d, %d", got[1],
	         got[2]);
#else
	MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
	MPI_Accumulate(&x, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, win);
	MPI_Win_unlock(t, win);
#endif
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == t) {
		LK_CHECK(mem[1] == 14 * lk_size, "Raccumulate total %d", mem[1]);
		LK_CHECK(mem[2] == 7 * lk_size, "Rget_accumulate total %d", mem[2]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Fetch_and_op and compare_and_swap from every rank on rank 0's counters, exclusive lock
 * for a get-accumulate NO_OP read at the end. */
static void test_atomic_ops(MPI_Win win, void *base)
{
	long one = 1, prev = -1, me = lk_rank + 1, cmp = 0, res = -1, sum = 0, all = 0, *mem = base;

	mem[0] = 0;
	mem[1] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	for (int i = 0; i < 10; i++) {
		MPI_Fetch_and_op(&one, &prev, MPI_LONG, 0, 0, MPI_SUM, win);
		MPI_Win_flush(0, win);
		sum += prev;
	}
	MPI_Compare_and_swap(&me, &cmp, &res, MPI_LONG, 0, 1, win);
	MPI_Win_unlock(0, win);
	MPI_Allreduce(&sum, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	long n = 10L * lk_size;
	LK_CHECK(all == n * (n - 1) / 2, "fetched values sum %ld, want %ld", all, n * (n - 1) / 2);
	int won = res == 0, winners = 0;
	MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(winners == 1, "%d ranks won the compare-and-swap", winners);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
	MPI_Get_accumulate(NULL, 0, MPI_LONG, &res, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_NO_OP, win);
	MPI_Win_unlock(0, win);
	LK_CHECK(res == n, "counter %ld, want %ld", res, n);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 computes without calling MPI (up to 20 s, until every update has arrived); every other
 * rank times lock + accumulate + flush + unlock against it. Without progress at the target each
 * would wait out those 20 s; with it, each must take under 10 s (a bound that a loaded machine
 * or ASan cannot reach, and that no progress cannot meet). */
static void test_passive_time(MPI_Win win, volatile int *mem)
{
	double worst = 0;

	mem[0] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		double t0 = now();
		while (mem[0] < 10 * (lk_size - 1) && now() - t0 < 20) {
			__sync_synchronize();
#ifndef LAMKIT_MPI /* other MPIs may need the target to call MPI (lamkit: a thread) */
			int flag;
			MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
#endif
		}
		LK_CHECK(mem[0] == 10 * (lk_size - 1), "passive: %d of %d updates in %.1f s",
		         mem[0], 10 * (lk_size - 1), now() - t0);
	} else {
		int one = 1;
		for (int i = 0; i < 10; i++) {
			double t0 = now();
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
			MPI_Win_flush(0, win);
			MPI_Win_unlock(0, win);
			if (now() - t0 > worst)
				worst = now() - t0;
		}
		LK_CHECK(worst < 10.0, "passive: lock+acc+flush+unlock took %.3f s", worst);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* A dynamic window: each rank attaches memory and publishes its address; put to the right
 * neighbour under fence, accumulate into rank 0 under a lock. */
static void test_dynamic(void)
{
	int *mem = calloc(16, sizeof(int)), right = (lk_rank + 1) % lk_size, v = lk_rank + 1;
	MPI_Aint mine, *addr = malloc(sizeof(MPI_Aint) * (size_t)lk_size);
	MPI_Win win;

	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_attach(win, mem, sizeof(int) * 16);
	MPI_Get_address(mem, &mine);
	MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
	MPI_Win_fence(0, win);
	MPI_Put(&v, 1, MPI_INT, right, addr[right] + (MPI_Aint)sizeof(int), 1, MPI_INT, win);
	MPI_Win_fence(0, win);
	LK_CHECK(mem[1] == (lk_rank + lk_size - 1) % lk_size + 1, "dynamic put got %d", mem[1]);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	MPI_Accumulate(&v, 1, MPI_INT, 0, addr[0] + (MPI_Aint)(2 * sizeof(int)), 1, MPI_INT,
	               MPI_SUM, win);
	MPI_Win_unlock(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0)
		LK_CHECK(mem[2] == lk_size * (lk_size + 1) / 2, "dynamic accumulate %d", mem[2]);
	MPI_Win_detach(win, mem);
	MPI_Win_free(&win);
	free(addr);
	free(mem);
}

/* A shared-memory window across nodes is refused with MPI_ERR_RMA_SHARED. */
static void test_shared_refused(void)
{
#ifndef LAMKIT_MPI /* MPICH maps it when the "nodes" share a host */
	return;
#endif
	int *p, rc, cls = 0, nodes = 0, mine = 0, lowest;
	MPI_Comm node;
	MPI_Win win;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &mine);
	lowest = mine == 0;
	MPI_Allreduce(&lowest, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Comm_free(&node);
	if (nodes < 2)
		return;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win);
	MPI_Error_class(rc, &cls);
	LK_CHECK(cls == MPI_ERR_RMA_SHARED, "allocate_shared across nodes gave class %d", cls);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
	MPI_Win win;
	int *mem, *cmem = calloc(BIG, sizeof(int));

	lk_init(&argc, &argv, "lk_rma_nodes");
	MPI_Win_allocate((MPI_Aint)sizeof(int) * BIG, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
	                 &mem, &win);
	test_big(win, mem);
	test_strided_acc(win, mem);
	test_requests(win, mem);
	test_passive_time(win, mem);
	MPI_Win_free(&win);
	MPI_Win_create(cmem, (MPI_Aint)sizeof(int) * BIG, sizeof(long), MPI_INFO_NULL,
	               MPI_COMM_WORLD, &win);
	test_atomic_ops(win, cmem);
	MPI_Win_free(&win);
	MPI_Win_create(cmem, (MPI_Aint)sizeof(int) * BIG, sizeof(int), MPI_INFO_NULL,
	               MPI_COMM_WORLD, &win);
	test_big(win, cmem);
	test_passive_time(win, cmem);
	MPI_Win_free(&win);
	test_dynamic();
	test_shared_refused();
	free(cmem);
	return lk_finish();
}
