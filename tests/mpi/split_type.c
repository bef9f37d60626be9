/* tests/mpi/split_type.c: the groups MPI_Comm_split_type makes for the node
 * (MPI_COMM_TYPE_SHARED) and for the socket and core a rank is bound to (Open MPI's
 * OMPI_COMM_TYPE_SOCKET / _CORE). Each rank prints
 * "split: rank R node [a,b] socket [..]|null core [..]|null" ("-" where mpi.h lacks them). */
#include <mpi.h>
#include <stdio.h>

/* Members of the group split by type, as world ranks, into out; "null" for MPI_COMM_NULL. */
static void members(int type, int rank, char *out, size_t cap)
{
	MPI_Comm c;
	int n, m[256], off = 0;

	MPI_Comm_split_type(MPI_COMM_WORLD, type, rank, MPI_INFO_NULL, &c);
	if (c == MPI_COMM_NULL) {
		snprintf(out, cap, "null");
		return;
	}
	MPI_Comm_size(c, &n);
	if (n > 256)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Allgather(&rank, 1, MPI_INT, m, 1, MPI_INT, c);
	off = snprintf(out, cap, "[");
	for (int i = 0; i < n && off < (int)cap - 16; i++)
		off += snprintf(out + off, cap - (size_t)off, "%s%d", i ? "," : "", m[i]);
	snprintf(out + off, cap - (size_t)off, "]");
	MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
	char node[2048], sock[2048], core[2048];
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	members(MPI_COMM_TYPE_SHARED, rank, node, sizeof(node));
#ifdef OMPI_COMM_TYPE_SOCKET /* lamkit's mpi.h (in Open MPI's they are enum constants) */
	members(OMPI_COMM_TYPE_SOCKET, rank, sock, sizeof(sock));
	members(OMPI_COMM_TYPE_CORE, rank, core, sizeof(core));
#else
	snprintf(sock, sizeof(sock), "-");
	snprintf(core, sizeof(core), "-");
#endif
	printf("split: rank %d node %s socket %s core %s\n", rank, node, sock, core);
	MPI_Finalize();
	return 0;
}
