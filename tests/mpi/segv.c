/* tests/mpi/segv.c: one rank dies of SIGSEGV (or another signal) after MPI_Init; the others block.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * argv: [rank [signo [delay_ms]]], defaults 1, 0, 100 (rank >= size means the last rank).
 * The chosen rank prints "segv: rank R dying of signal S" (flushed), sleeps delay_ms, then:
 * signo 0 = a real invalid memory write (SIGSEGV, 11), otherwise raise(signo) with the default
 * action restored. Other ranks print "segv: rank R blocking in MPI_Barrier" and block forever.
 * The launcher is expected to end the job. Observed: Hydra 4.0.2 exits with S (11 for SEGV),
 * mpirun.openmpi 4.1.4 with 128+S (139).
 * If the rank survives it prints "segv: FAIL ..." and exits 99.
 */
static int *volatile g_bad; /* NULL, but the compiler cannot prove it */

int main(int argc, char **argv)
{
	int rank, size, who = 1, sig = 0, delay = 100;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		who = atoi(argv[1]);
	if (argc > 2)
		sig = atoi(argv[2]);
	if (argc > 3)
		delay = atoi(argv[3]);
	if (who < 0 || who >= size)
		who = size - 1;
	if (rank == who) {
		printf("segv: rank %d dying of signal %d\n", rank, sig ? sig : SIGSEGV);
		fflush(stdout);
		if (delay > 0)
			usleep((useconds_t)delay * 1000);
		if (sig == 0) {
			signal(SIGSEGV, SIG_DFL);
			*g_bad = 42;
			sig = SIGSEGV;
		}
		signal(sig, SIG_DFL);
		raise(sig);
		/* cppcheck-suppress unreachableCode ; reached if the signal is blocked */
		printf("segv: FAIL rank %d: still alive after signal %d\n", rank, sig);
		return 99;
	}
	printf("segv: rank %d blocking in MPI_Barrier\n", rank);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("segv: FAIL rank %d: MPI_Barrier returned\n", rank);
	return 99;
}
