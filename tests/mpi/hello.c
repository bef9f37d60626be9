/* tests/mpi/hello.c: minimal MPI job; every rank prints "hello from rank R of N on HOST". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank = -1, size = -1, len = 0;
	char host[MPI_MAX_PROCESSOR_NAME + 1];

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		fprintf(stderr, "hello: MPI_Init failed\n");
		return 1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	memset(host, 0, sizeof(host));
	MPI_Get_processor_name(host, &len);
	if (rank < 0 || size < 1 || rank >= size) {
		fprintf(stderr, "hello: bad rank %d / size %d\n", rank, size);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	printf("hello from rank %d of %d on %s\n", rank, size, host);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
