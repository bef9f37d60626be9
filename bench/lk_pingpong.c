/* bench/lk_pingpong.c: quick 2-rank ping-pong latency and windowed bandwidth, 0 B - 4 MiB. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXB   (4 << 20)
#define WINDOW 64

static double lat(char *buf, int n, int iters, int rank)
{
	double t0 = 0;

	for (int i = -iters / 10; i < iters; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(buf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

static double bw(char *buf, int n, int iters, int rank)
{
	MPI_Request req[WINDOW];
	double t0 = 0;
	char ack;

	for (int i = -2; i < iters; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		for (int w = 0; w < WINDOW; w++) {
			if (rank == 0)
				MPI_Isend(buf, n, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[w]);
			else
				MPI_Irecv(buf, n, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[w]);
		}
		MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
		if (rank == 0)
			MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	}
	return (double)n * WINDOW * iters / (MPI_Wtime() - t0) / 1e6;
}

/* One line per size: latency (half round trip) and windowed bandwidth. */
static void run_size(char *buf, int n, int rank)
{
	int it = n <= 65536 ? 20000 : 2000000 / (n / 256);
	int bit = n <= 65536 ? 200 : (2000 / (n / 4096) > 20 ? 2000 / (n / 4096) : 20);
	double l = lat(buf, n, it, rank), b = n ? bw(buf, n, bit, rank) : 0;

	if (rank == 0)
		printf("%10d %12.3f %12.1f\n", n, l, b);
}

/* argv: optional message sizes in bytes (default 0 and 1 B ... 4 MiB in powers of two). */
int main(int argc, char **argv)
{
	int rank, size;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "lk_pingpong: needs exactly 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	buf = malloc(MAXB);
	memset(buf, 1, MAXB);
	if (rank == 0)
		printf("%10s %12s %12s\n", "bytes", "lat_us", "bw_MB/s");
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			run_size(buf, atoi(argv[i]) > MAXB ? MAXB : atoi(argv[i]), rank);
	else
		for (int n = 0; n <= MAXB; n = n ? n * 2 : 1)
			run_size(buf, n, rank);
	free(buf);
	MPI_Finalize();
	return 0;
}
