/* tests/mpi/exitcode.c: chosen rank(s) exit with a given status before or after MPI_Finalize. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * argv: [rank [code [mode]]], defaults 1, 3, "after". rank -1 = every rank; rank >= size = the
 * last rank. mode:
 *   after   all ranks call MPI_Finalize; then the chosen rank calls exit(code), others return 0.
 *   return  as "after" but the chosen rank returns code from main.
 *   before  the chosen rank calls exit(code) without MPI_Finalize (after a barrier, so every
 *           rank is past MPI_Init); the others call MPI_Finalize and return 0 (they may hang in
 *           MPI_Finalize: the launcher has to end them).
 *   sleep   as "before" but the other ranks sleep 30 s instead of finalizing (no MPI traffic).
 *   late    as "after", but the other ranks print their line 1 s after MPI_Finalize (the output
 *           a launcher loses if it kills them when the chosen rank fails); a negative code is
 *           a signal the chosen rank raises instead of exiting.
 * Each rank prints "exitcode: rank R exiting with C (mode M)" just before leaving.
 */
int main(int argc, char **argv)
{
	int rank, size, who = 1, code = 3;
	const char *mode = "after";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		who = atoi(argv[1]);
	if (argc > 2)
		code = atoi(argv[2]);
	if (argc > 3)
		mode = argv[3];
	if (who >= size)
		who = size - 1;
	int chosen = who < 0 || rank == who;
	if (strcmp(mode, "after") && strcmp(mode, "return") && strcmp(mode, "before") &&
	    strcmp(mode, "sleep") && strcmp(mode, "late")) {
		if (rank == 0)
			fprintf(stderr, "exitcode: unknown mode '%s'\n", mode);
		MPI_Finalize();
		return 100;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (!strcmp(mode, "before") || !strcmp(mode, "sleep")) {
		if (chosen) {
			printf("exitcode: rank %d exiting with %d (mode %s)\n", rank, code, mode);
			fflush(stdout);
			exit(code);
		}
		if (!strcmp(mode, "sleep"))
			sleep(30);
		MPI_Finalize();
		printf("exitcode: rank %d exiting with 0 (mode %s)\n", rank, mode);
		return 0;
	}
	MPI_Finalize();
	if (!strcmp(mode, "late")) {
		if (chosen && code < 0)
			raise(-code);
		if (chosen)
			exit(code);
		sleep(1);
	}
	printf("exitcode: rank %d exiting with %d (mode %s)\n", rank, chosen ? code : 0, mode);
	fflush(stdout);
	if (!chosen)
		return 0;
	if (!strcmp(mode, "return"))
		return code;
	exit(code);
}
