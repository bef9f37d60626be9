/* tests/mpi/rma_bench.c: one-sided latency/bandwidth and Iallreduce overlap, machine-readable.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * argv: [-s scale]  (iteration counts are multiplied by scale, default 1.0)
 * Needs 2+ ranks; rank 0 is the origin, rank 1 the target of the one-sided rows.
 * Rank 0 prints '#' comment lines, then rows "op bytes us_per_op":
 *   put_flush / get_flush 8 and 1048576: MPI_Put/MPI_Get + MPI_Win_flush inside one
 *     MPI_Win_lock epoch (the target sits in MPI_Barrier);
 *   put_fence / get_fence 8: one operation per MPI_Win_fence epoch (both ranks fence);
 *   put_flush_busy 8: as put_flush, but the target computes without calling MPI (until the
 *     origin's last put sets a flag in its window, at most 3 s): passive-target progress;
 *     the time a target without it takes is then about 3 s / iterations;
 *   wc_put_flush / wc_get_flush 65536 .. 4194304: put_flush and get_flush on a window of
 *     MPI_Win_create (user memory), and wc_put_all: every rank puts that much to every other
 *     rank, MPI_Win_flush_all once per round (us per round, the slowest rank);
 *   iallreduce 8192 (doubles, all ranks): "ar" the collective alone, "compute" the loop alone,
 *     "overlap" MPI_Iallreduce, the compute loop with an MPI_Test every 1/16 of it, MPI_Wait.
 * Exits 0.
 */
static volatile double sink;

static void compute(long n)
{
	double x = 0;
	for (long i = 0; i < n; i++)
		x += (double)i * 0.5;
	sink = x;
}

static double rma_rows(MPI_Win win, char *buf, int rank, const char *op, int bytes, long iters)
{
	double t0 = 0, t = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int fence = strstr(op, "fence") != NULL, put = op[0] == 'p';
		if (!fence)
			MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
		for (long i = -iters / 10 - 1; i < iters; i++) {
			if (i == 0)
				t0 = MPI_Wtime();
			if (put)
				MPI_Put(buf, bytes, MPI_BYTE, 1, 0, bytes, MPI_BYTE, win);
			else
				MPI_Get(buf, bytes, MPI_BYTE, 1, 0, bytes, MPI_BYTE, win);
			if (fence)
				MPI_Win_fence(0, win);
			else
				MPI_Win_flush(1, win);
		}
		t = (MPI_Wtime() - t0) * 1e6 / (double)iters;
		if (!fence)
			MPI_Win_unlock(1, win);
	} else if (strstr(op, "fence")) {
		for (long i = -iters / 10 - 1; i < iters; i++)
			MPI_Win_fence(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	return t;
}

/* Windows of MPI_Win_create on user memory: rank 0 puts or gets `bytes` to rank 1 with a flush
 * per operation ("wc_put_flush", "wc_get_flush"), or every rank puts `bytes` to every other
 * under MPI_Win_lock_all with one MPI_Win_flush_all per round ("wc_put_all": us per round, the
 * slowest rank's). */
static void create_rows(int rank, int size, double scale)
{
	const int max = 4 << 20;
	char *mem = calloc(1, (size_t)max), *buf = malloc((size_t)max);
	MPI_Win win;

	memset(buf, rank + 1, (size_t)max);
	MPI_Win_create(mem, max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	for (int bytes = 64 << 10; bytes <= max; bytes *= 4) {
		long it = (long)((double)(256 << 20) / bytes * scale) + 5;
		double tp = rma_rows(win, buf, rank, "put_flush", bytes, it);
		double tg = rma_rows(win, buf, rank, "get_flush", bytes, it);
		double t0 = 0, mine, worst = 0;
		MPI_Win_lock_all(0, win);
		for (long i = -it / 10 - 1; i < it / 4 + 1; i++) {
			if (i == 0) {
				MPI_Barrier(MPI_COMM_WORLD);
				t0 = MPI_Wtime();
			}
			for (int k = 1; k < size; k++)
				MPI_Put(buf, bytes, MPI_BYTE, (rank + k) % size, 0, bytes, MPI_BYTE,
				        win);
			MPI_Win_flush_all(win);
		}
		mine = (MPI_Wtime() - t0) * 1e6 / (double)(it / 4 + 1);
		MPI_Win_unlock_all(win);
		MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rank == 0)
			printf("wc_put_flush %d %.3f\nwc_get_flush %d %.3f\nwc_put_all %d %.3f\n",
			       bytes, tp, bytes, tg, bytes, worst);
	}
	MPI_Win_free(&win);
	free(mem);
	free(buf);
}

static double ar_row(double *a, double *b, int n, long work, int mode, long iters)
{
	double t0 = 0, mine, worst = 0;
	MPI_Request q;
	int flag;

	for (long i = -2; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (mode == 0) {
			MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		} else if (mode == 1) {
			compute(work);
		} else {
			MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
			for (int k = 0; k < 16; k++) {
				compute(work / 16);
				MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
			}
			MPI_Wait(&q, MPI_STATUS_IGNORE);
		}
	}
	mine = (MPI_Wtime() - t0) * 1e6 / (double)iters;
	MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	return worst;
}

/* put + flush while the target computes outside MPI (bounded to 3 s). */
static double busy_row(MPI_Win win, char *buf, volatile char *wbuf, int rank, long iters)
{
	double t0 = 0, t = 0;
	const char one = 1;

	wbuf[4096] = 0;
	MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		t0 = MPI_Wtime(); /* no warm-up: it would absorb a target that never answers */
		for (long i = 0; i < iters; i++) {
			MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
			MPI_Win_flush(1, win);
		}
		t = (MPI_Wtime() - t0) * 1e6 / (double)iters;
		MPI_Put(&one, 1, MPI_BYTE, 1, 4096, 1, MPI_BYTE, win);
		MPI_Win_flush(1, win);
	} else if (rank == 1) {
		double s0 = MPI_Wtime();
		while (!wbuf[4096] && MPI_Wtime() - s0 < 3.0)
			compute(1000);
	}
	MPI_Win_unlock(1, win);
	MPI_Barrier(MPI_COMM_WORLD);
	return t;
}

int main(int argc, char **argv)
{
	int rank, size, n = 8192;
	double scale = 1.0, ar, cp, ov;
	char *buf, *wbuf;
	double *a, *b;
	MPI_Win win;
	long work = 1, iters;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "-s"))
			scale = atof(argv[i + 1]);
	if (size < 2) {
		if (rank == 0)
			printf("# rma_bench needs 2 ranks\n");
		MPI_Finalize();
		return 0;
	}
	buf = calloc(1, 1 << 20);
	MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbuf, &win);
	if (rank == 0)
		printf("# rma_bench: ranks=%d origin 0, target 1; us per operation\n", size);
	MPI_Win_fence(0, win);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	for (int k = 0; k < 2; k++) {
		int bytes = k ? 1 << 20 : 8;
		long it = (long)((k ? 200 : 20000) * scale) + 5;
		double tp = rma_rows(win, buf, rank, "put_flush", bytes, it);
		double tg = rma_rows(win, buf, rank, "get_flush", bytes, it);
		if (rank == 0)
			printf("put_flush %d %.3f\nget_flush %d %.3f\n", bytes, tp, bytes, tg);
	}
	{
		double tb = busy_row(win, buf, wbuf, rank, (long)(2000 * scale) + 5);
		if (rank == 0)
			printf("put_flush_busy 8 %.3f\n", tb);
	}
	iters = (long)(5000 * scale) + 5;
	{
		double tp, tg;
		MPI_Win_fence(0, win);
		tp = rma_rows(win, buf, rank, "put_fence", 8, iters);
		tg = rma_rows(win, buf, rank, "get_fence", 8, iters);
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
		if (rank == 0)
			printf("put_fence 8 %.3f\nget_fence 8 %.3f\n", tp, tg);
	}
	MPI_Win_free(&win);
	create_rows(rank, size, scale);
	a = calloc((size_t)n, sizeof(double));
	b = calloc((size_t)n, sizeof(double));
	iters = (long)(200 * scale) + 5;
	ar = ar_row(a, b, n, 0, 0, iters);
	/* compute as long as the allreduce takes, so perfect overlap halves the sum */
	MPI_Bcast(&ar, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	for (double t = 0; t < ar;) {
		double t0 = MPI_Wtime();
		work *= 2;
		compute(work);
		t = (MPI_Wtime() - t0) * 1e6;
		MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	}
	cp = ar_row(a, b, n, work, 1, iters);
	ov = ar_row(a, b, n, work, 2, iters);
	if (rank == 0)
		printf("iallreduce_ar %d %.3f\niallreduce_compute %d %.3f\niallreduce_overlap %d "
		       "%.3f\n",
		       n * 8, ar, n * 8, cp, n * 8, ov);
	free(a);
	free(b);
	free(buf);
	MPI_Finalize();
	return 0;
}
