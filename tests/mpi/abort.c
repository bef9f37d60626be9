/* tests/mpi/abort.c: one rank calls MPI_Abort after MPI_Init while the others block forever. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * argv: [rank [code [delay_ms]]], defaults 1, 7, 100 (rank >= size means the last rank).
 * The chosen rank prints "abort: rank R calling MPI_Abort(code=C)" to stdout (flushed), sleeps
 * delay_ms so that the others are surely blocked, then calls MPI_Abort(MPI_COMM_WORLD, C).
 * Other ranks print "abort: rank R blocking in MPI_Barrier" (even ranks) or "... in MPI_Recv"
 * (odd ranks) and never return. The launcher is expected to end the job with exit status C.
 * If MPI_Abort ever returns or a blocked call completes, the rank prints "abort: FAIL ..." and
 * exits 99.
 */
int main(int argc, char **argv)
{
	int rank, size, who = 1, code = 7, delay = 100, buf = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		who = atoi(argv[1]);
	if (argc > 2)
		code = atoi(argv[2]);
	if (argc > 3)
		delay = atoi(argv[3]);
	if (who < 0 || who >= size)
		who = size - 1;
	if (rank == who) {
		printf("abort: rank %d calling MPI_Abort(code=%d)\n", rank, code);
		fflush(stdout);
		if (delay > 0)
			usleep((useconds_t)delay * 1000);
		MPI_Abort(MPI_COMM_WORLD, code);
		printf("abort: FAIL rank %d: MPI_Abort returned\n", rank);
		return 99;
	}
	if (rank % 2 == 0) {
		printf("abort: rank %d blocking in MPI_Barrier\n", rank);
		fflush(stdout);
		MPI_Barrier(MPI_COMM_WORLD);
	} else {
		printf("abort: rank %d blocking in MPI_Recv\n", rank);
		fflush(stdout);
		MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	printf("abort: FAIL rank %d: blocking call returned\n", rank);
	return 99;
}
