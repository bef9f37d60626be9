/* bench/init_time.c: each rank prints "init_time: R <us>", the wall clock (CLOCK_REALTIME, in
 * microseconds) at the end of its MPI_Init; bench/pmi-startup subtracts the launch time. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	int rank;

	MPI_Init(&argc, &argv);
	clock_gettime(CLOCK_REALTIME, &ts);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	printf("init_time: %d %lld\n", rank, (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
	MPI_Finalize();
	return 0;
}
