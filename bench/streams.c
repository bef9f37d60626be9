/* bench/streams.c: streams of nonblocking messages between 2 ranks (issue #16 item 5), timed per
 * window so that a loaded machine can still be read. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * argv: [-m minbytes] [-M maxbytes] [-w window] [-s scale]
 *   sizes: 0 (ping-pong only, when minbytes is 0, the default), then doubling from
 *   max(minbytes, 8) to maxbytes (default 4194304); window: messages
 *   per MPI_Waitall (default 64); scale multiplies the iteration counts (default 1.0).
 * The patterns: one way, rank 1 posts `window` MPI_Irecv and rank 0 `window` MPI_Isend, both
 * end in one MPI_Waitall, then rank 1 sends a 4-byte ack; both ways, each rank posts its
 * receives and its sends and waits for all of them, then the same ack. Plus a blocking
 * ping-pong of the same size. Rank 0 prints '#' comment lines and one row per size:
 *   "size lat_us bw_MBps bibw_MBps bwmed_MBps bibwmed_MBps"
 * lat = half round trip (median of batches of 64 round trips), bw/bibw = bytes moved over the
 * whole timed loop, *med = the same from the median window (a window in which a rank was
 * descheduled by other load weighs no more than any other). MB = 1e6 bytes. Extra ranks idle.
 */
#define TAG_DATA 11
#define TAG_ACK  12
#define MAXWIN   1024

static int g_rank;
static char *g_sbuf, *g_rbuf;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long count_for(long bytes, long most, long budget, double scale)
{
	long n = bytes > 0 ? budget / bytes : most;
	if (n > most)
		n = most;
	n = (long)(n * scale);
	return n < 8 ? 8 : n;
}

/* Half round trip in microseconds: the median over batches of 64 round trips. */
static double latency(long size, long batches, double *t)
{
	int peer = 1 - g_rank;

	for (long b = -batches / 10 - 1; b < batches; b++) { /* negative b = warm-up */
		double t0 = MPI_Wtime();
		for (int i = 0; i < 64; i++) {
			if (g_rank == 0) {
				MPI_Send(g_sbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				         MPI_COMM_WORLD);
				MPI_Recv(g_rbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(g_rbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(g_sbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				         MPI_COMM_WORLD);
			}
		}
		if (b >= 0)
			t[b] = MPI_Wtime() - t0;
	}
	return median(t, batches) * 1e6 / 128.0;
}

/* Windows of nonblocking messages; *med gets MB/s of the median window, the result is MB/s of
 * the whole loop. */
static double stream(long size, long iters, int win, int bidir, double *t, double *med)
{
	int peer = 1 - g_rank, ack = 0;
	MPI_Request rq[2 * MAXWIN];
	double total = 0, bytes = (bidir ? 2.0 : 1.0) * (double)size * win;

	for (long i = -iters / 10 - 1; i < iters; i++) {
		int n = 0;
		double t0 = MPI_Wtime();
		if (bidir || g_rank == 1)
			for (int w = 0; w < win; w++)
				MPI_Irecv(g_rbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				          MPI_COMM_WORLD, &rq[n++]);
		if (bidir || g_rank == 0)
			for (int w = 0; w < win; w++)
				MPI_Isend(g_sbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				          MPI_COMM_WORLD, &rq[n++]);
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
		if (g_rank == 0)
			MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
		if (i >= 0) {
			t[i] = MPI_Wtime() - t0;
			total += t[i];
		}
	}
	*med = bytes / median(t, iters) / 1e6;
	return bytes * (double)iters / total / 1e6;
}

int main(int argc, char **argv)
{
	int nranks, win = 64;
	long minb = 0, maxb = 4L << 20, most = 2000;
	double scale = 1.0, *t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-m"))
			minb = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-M"))
			maxb = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-w"))
			win = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			scale = atof(argv[i + 1]);
	}
	if (win < 1 || win > MAXWIN)
		win = 64;
	if (minb < 0)
		minb = 0;
	if (maxb < minb || maxb > (1L << 30))
		maxb = 4L << 20;
	if (scale <= 0)
		scale = 1.0;
	if (nranks < 2) {
		fprintf(stderr, "streams: needs at least 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	g_sbuf = malloc((size_t)maxb);
	g_rbuf = malloc((size_t)maxb);
	t = malloc(sizeof(*t) * (size_t)(most * (scale > 1 ? scale : 1) + 16));
	if (!g_sbuf || !g_rbuf || !t)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(g_sbuf, 'a' + g_rank, (size_t)maxb); /* touch the pages before timing */
	memset(g_rbuf, 0, (size_t)maxb);
	if (g_rank == 0) {
		printf("# streams: ranks=%d window=%d scale=%g\n", nranks, win, scale);
		printf("# size lat_us bw_MBps bibw_MBps bwmed_MBps bibwmed_MBps\n");
		fflush(stdout);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (minb == 0 && g_rank < 2) {
		double lat = latency(0, count_for(0, most, 64L << 20, scale), t);
		if (g_rank == 0) {
			printf("0 %.3f 0.0 0.0 0.0 0.0\n", lat);
			fflush(stdout);
		}
	}
	for (long s = minb > 8 ? minb : 8; s <= maxb && g_rank < 2; s *= 2) {
		double lat = latency(s, count_for(s * 64, most, 64L << 20, scale), t);
		long it = count_for(s * win, most, 256L << 20, scale);
		double bwm, bibwm, bw = stream(s, it, win, 0, t, &bwm);
		double bibw = stream(s, it, win, 1, t, &bibwm);
		if (g_rank == 0) {
			printf("%ld %.3f %.1f %.1f %.1f %.1f\n", s, lat, bw, bibw, bwm, bibwm);
			fflush(stdout);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	free(t);
	free(g_sbuf);
	free(g_rbuf);
	MPI_Finalize();
	return 0;
}
