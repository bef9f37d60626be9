/* bench/fortran_bench.c: the C twin of bench/fortran_bench.f90 (the same loops, the same
 * lines), so bench/fortran can give the cost of the Fortran bindings over the C calls. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXB (4 * 1024 * 1024)

static double min(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	static const int sizes[] = {0, 8, 64, 512, 4096, 32768, 262144, 1048576, MAXB};
	int rank, np, rnk, flag, n, it, peer;
	double t0, best, t;
	char *buf = malloc(MAXB);
	double *a = malloc(MAXB + 8), *b = malloc(MAXB + 8);
	MPI_Request req = MPI_REQUEST_NULL, reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	memset(buf, 'x', MAXB);
	for (int i = 0; i < MAXB / 8 + 1; i++)
		a[i] = 1;
	peer = 1 - rank;
	if (rank == 0)
		printf("# fortran_bench.c ranks=%d\n", np);
	n = 2000000;
	best = 1e30;
	for (int r = 0; r < 5; r++) {
		t0 = MPI_Wtime();
		for (int i = 0; i < n; i++)
			MPI_Comm_rank(MPI_COMM_WORLD, &rnk);
		best = min(best, MPI_Wtime() - t0);
	}
	if (rank == 0)
		printf("call_comm_rank %d %.5f\n", 0, best / n * 1e6);
	best = 1e30;
	for (int r = 0; r < 5; r++) {
		t0 = MPI_Wtime();
		for (int i = 0; i < n; i++)
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		best = min(best, MPI_Wtime() - t0);
	}
	if (rank == 0)
		printf("call_test_null %d %.5f\n", 0, best / n * 1e6);
	n = 200000;
	best = 1e30;
	for (int r = 0; r < 5; r++) {
		t0 = MPI_Wtime();
		for (int i = 0; i < n; i++) {
			MPI_Irecv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &reqs[0]);
			MPI_Isend(buf + 8, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &reqs[1]);
			MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
		}
		best = min(best, MPI_Wtime() - t0);
	}
	if (rank == 0)
		printf("call_self_isend %d %.5f\n", 8, best / n * 1e6);
	if (np == 2) {
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			int s = sizes[k];
			it = 400000000 / (s + 20000);
			it = it < 20 ? 20 : it > 20000 ? 20000 : it;
			best = 1e30;
			for (int r = 0; r < 3; r++) {
				MPI_Barrier(MPI_COMM_WORLD);
				t0 = MPI_Wtime();
				for (int i = 0; i < it; i++) {
					if (rank == 0) {
						MPI_Send(buf, s, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
						MPI_Recv(buf, s, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
						         MPI_STATUS_IGNORE);
					} else {
						MPI_Recv(buf, s, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
						         MPI_STATUS_IGNORE);
						MPI_Send(buf, s, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
					}
				}
				t = (MPI_Wtime() - t0) / it / 2;
				MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
				              MPI_COMM_WORLD);
				best = min(best, t);
			}
			if (rank == 0)
				printf("pingpong %d %.3f\n", s, best * 1e6);
		}
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			int s = sizes[k];
			it = 400000000 / (s + 20000);
			it = it < 20 ? 20 : it > 20000 ? 20000 : it;
			best = 1e30;
			for (int r = 0; r < 3; r++) {
				MPI_Barrier(MPI_COMM_WORLD);
				t0 = MPI_Wtime();
				for (int i = 0; i < it; i++)
					MPI_Allreduce(a, b, s / 8, MPI_DOUBLE, MPI_SUM,
					              MPI_COMM_WORLD);
				t = (MPI_Wtime() - t0) / it;
				MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
				              MPI_COMM_WORLD);
				best = min(best, t);
			}
			if (rank == 0)
				printf("allreduce %d %.3f\n", s, best * 1e6);
		}
	}
	MPI_Finalize();
	free(buf);
	free(a);
	free(b);
	return 0;
}
