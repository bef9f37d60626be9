/* tests/mpi/ring.c: pass a counter around the ring of ranks several times and check its value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* argv: [laps] (default 10). Prints "ring: OK laps=L size=N token=T" on rank 0, exit 0; else 1. */
int main(int argc, char **argv)
{
	int rank, size, laps = 10, lap, token = 0, bad = 0, anybad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		laps = atoi(argv[1]);
	if (laps < 1)
		laps = 1;
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;

	for (lap = 0; lap < laps; lap++) {
		int expect;
		if (rank == 0) {
			token = lap * size;
			if (size > 1) {
				token++;
				MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
				MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD,
				         MPI_STATUS_IGNORE);
				expect = lap * size + size;
			} else {
				token++;
				expect = lap + 1;
			}
		} else {
			MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			expect = lap * size + rank;
			if (token != expect) {
				fprintf(stderr, "ring: rank %d lap %d got %d expected %d\n", rank,
				        lap, token, expect);
				bad = 1;
			}
			token++;
			MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
			continue;
		}
		if (token != expect) {
			fprintf(stderr, "ring: rank 0 lap %d got %d expected %d\n", lap, token,
			        expect);
			bad = 1;
		}
	}
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0) {
		if (anybad)
			printf("ring: FAIL laps=%d size=%d\n", laps, size);
		else
			printf("ring: OK laps=%d size=%d token=%d\n", laps, size, token);
		fflush(stdout);
	}
	MPI_Finalize();
	return anybad ? 1 : 0;
}
