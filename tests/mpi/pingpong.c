/* tests/mpi/pingpong.c: OSU-style 2-rank latency, bandwidth and bi-directional bandwidth table. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * argv: [-m minbytes] [-M maxbytes] [-w window] [-s scale]
 *   sizes: 0 (if minbytes is 0, the default), then doubling from max(minbytes,1) up to maxbytes
 *   (default 4194304)
 *   window: nonblocking sends in flight for the bandwidth tests (default 64)
 *   scale: multiplies iteration counts (default 1.0; 0.1 for a quick run)
 * Needs at least 2 ranks (ranks >= 2 wait, polling gently so as not to steal the CPU). Rank 0
 * prints comment lines starting with '#' and one row per size: "size lat_us bw_MBps bibw_MBps" (lat
 * = half round trip in microseconds, MB = 1e6 bytes). Exits 0; 1 with a message on stderr if run
 * with fewer than 2 ranks.
 */
#define TAG_DATA 1
#define TAG_ACK  2
#define TAG_DONE 3
#define MAXWIN   1024

static int g_rank;
static char *g_sbuf, *g_rbuf;

static long iters_for(long size, long small, long budget, double scale)
{
	long n = size > 0 ? budget / size : small;
	if (n > small)
		n = small;
	n = (long)(n * scale);
	return n < 4 ? 4 : n;
}

static double latency(long size, long iters)
{
	int peer = 1 - g_rank;
	double t0 = 0;
	for (long i = -iters / 10 - 1; i < iters; i++) { /* negative i = warm-up */
		if (i == 0)
			t0 = MPI_Wtime();
		if (g_rank == 0) {
			MPI_Send(g_sbuf, (int)size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD);
			MPI_Recv(g_rbuf, (int)size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(g_rbuf, (int)size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			MPI_Send(g_sbuf, (int)size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

/* Uni-directional (bidir = 0: rank 0 sends, rank 1 acks) or bi-directional bandwidth in MB/s. */
static double bandwidth(long size, long iters, int win, int bidir)
{
	int peer = 1 - g_rank, ack = 0;
	MPI_Request rq[2 * MAXWIN];
	MPI_Status st[2 * MAXWIN];
	double t0 = 0;
	for (long i = -iters / 10 - 1; i < iters; i++) {
		int n = 0;
		if (i == 0)
			t0 = MPI_Wtime();
		if (bidir || g_rank == 1)
			for (int w = 0; w < win; w++)
				MPI_Irecv(g_rbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				          MPI_COMM_WORLD, &rq[n++]);
		if (bidir || g_rank == 0)
			for (int w = 0; w < win; w++)
				MPI_Isend(g_sbuf, (int)size, MPI_CHAR, peer, TAG_DATA,
				          MPI_COMM_WORLD, &rq[n++]);
		MPI_Waitall(n, rq, st);
		if (g_rank == 0)
			MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
	}
	double t = MPI_Wtime() - t0;
	return (bidir ? 2.0 : 1.0) * (double)size * win * iters / t / 1e6;
}

int main(int argc, char **argv)
{
	int size_world, win = 64;
	long minb = 0, maxb = 4L << 20;
	double scale = 1.0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size_world);
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
	if (maxb < 1 || maxb > (1L << 30))
		maxb = 4L << 20;
	if (size_world < 2) {
		fprintf(stderr, "pingpong: needs at least 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	g_sbuf = malloc((size_t)maxb);
	g_rbuf = malloc((size_t)maxb);
	if (!g_sbuf || !g_rbuf)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(g_sbuf, 'a' + g_rank, (size_t)maxb); /* touch the pages before timing */
	memset(g_rbuf, 0, (size_t)maxb);
	if (g_rank == 0) {
		printf("# pingpong: ranks=%d window=%d scale=%g wtick=%g\n", size_world, win, scale,
		       MPI_Wtick());
		printf("# size lat_us bw_MBps bibw_MBps\n");
		fflush(stdout);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (g_rank > 1) {
		MPI_Request rq;
		int done = 0, dummy;
		MPI_Irecv(&dummy, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD, &rq);
		while (!done) {
			MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
			if (!done)
				usleep(2000);
		}
	}
	for (long s = minb > 0 ? minb : 0; s <= maxb; s = s > 0 ? s * 2 : (minb > 1 ? minb : 1)) {
		if (g_rank > 1)
			break;
		double lat = latency(s, iters_for(s, 20000, 256L << 20, scale));
		long bwit = iters_for(s * win, 2000, 1L << 30, scale);
		double bw = bandwidth(s, bwit, win, 0);
		double bibw = bandwidth(s, bwit, win, 1);
		if (g_rank == 0) {
			printf("%ld %.3f %.1f %.1f\n", s, lat, bw, bibw);
			fflush(stdout);
		}
	}
	if (g_rank == 0) /* release the idle ranks */
		for (int r = 2; r < size_world; r++)
			MPI_Send(&win, 1, MPI_INT, r, TAG_DONE, MPI_COMM_WORLD);
	free(g_sbuf);
	free(g_rbuf);
	MPI_Finalize();
	return 0;
}
