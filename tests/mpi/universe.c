/* tests/mpi/universe.c: prints MPI_UNIVERSE_SIZE. Started without a launcher, an MPICH
 * singleton must then ask a process manager for it (mpiexec -pmi_args ...). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int *usize, flag = 0, rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
	printf("universe: rank %d of %d, universe size %d\n", rank, size, flag ? *usize : -1);
	MPI_Finalize();
	return 0;
}
