/* tests/mpi/placement.c: where the MPI library thinks each rank is. Every rank prints
 * "placement: rank R of N node [A,B,...] local L env I/K" where the node group is
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (the ranks it shares memory with, as the library
 * derives them from PMI_process_mapping), L its rank in that group, and I/K the launcher's
 * MPI_LOCALRANKID/MPI_LOCALNRANKS. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, lrank, lsize, members[256], off = 0;
	char list[2048] = "";
	const char *id = getenv("MPI_LOCALRANKID"), *nl = getenv("MPI_LOCALNRANKS");
	MPI_Comm node;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &lrank);
	MPI_Comm_size(node, &lsize);
	if (lsize > 256) {
		fprintf(stderr, "placement: more than 256 ranks on a node\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node);
	for (int i = 0; i < lsize && off < (int)sizeof(list) - 16; i++)
		off += snprintf(list + off, sizeof(list) - (size_t)off, "%s%d", i ? "," : "",
		                members[i]);
	printf("placement: rank %d of %d node [%s] local %d env %s/%s\n", rank, size, list, lrank,
	       id ? id : "-", nl ? nl : "-");
	fflush(stdout);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return 0;
}
