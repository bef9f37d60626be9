/* tests/mpi/io_cyclic.c: a collective write of a block-cyclic 2D array (MPI_Type_create_darray,
 * CYCLIC(B) x CYCLIC(B) over a 2D process grid) into FILE, then rank 0 reads the file back and
 * checks every element: the same bytes whichever MPI wrote them.
 *
 * usage: io_cyclic FILE [N [B]]   an N x N array of int64 (default 512, blocks of B = 16);
 *        element (i, j) holds i * N + j. Prints "io_cyclic: OK bytes=..." or the first bad
 *        element; exit 0 when every element is right. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, n = 512, b = 16, dims[2] = {0, 0}, gs[2], dist[2], dargs[2], tsize, rc;
	int64_t *buf, *all;
	MPI_Datatype dt;
	MPI_File fh;
	MPI_Status st;
	long k = 0, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: io_cyclic FILE [N [B]]\n");
		MPI_Finalize();
		return 100;
	}
	if (argc > 2)
		n = atoi(argv[2]);
	if (argc > 3)
		b = atoi(argv[3]);
	MPI_Dims_create(size, 2, dims);
	gs[0] = gs[1] = n;
	dist[0] = dist[1] = MPI_DISTRIBUTE_CYCLIC;
	dargs[0] = dargs[1] = b;
	MPI_Type_create_darray(size, rank, 2, gs, dist, dargs, dims, MPI_ORDER_C, MPI_INT64_T, &dt);
	MPI_Type_commit(&dt);
	MPI_Type_size(dt, &tsize);
	buf = malloc((size_t)tsize + 8);
	for (int i = 0; i < n; i++) /* my elements, in the darray's (row-major) order */
		for (int j = 0; j < n; j++)
			if ((i / b) % dims[0] == rank / dims[1] &&
			    (j / b) % dims[1] == rank % dims[1])
				buf[k++] = (int64_t)i * n + j;
	rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
	                   MPI_INFO_NULL, &fh);
	if (rc == MPI_SUCCESS)
		rc = MPI_File_set_view(fh, 0, MPI_INT64_T, dt, "native", MPI_INFO_NULL);
	if (rc == MPI_SUCCESS)
		rc = MPI_File_write_all(fh, buf, (int)k, MPI_INT64_T, &st);
	if (rc == MPI_SUCCESS)
		rc = MPI_File_close(&fh);
	if (rc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int len;
		MPI_Error_string(rc, msg, &len);
		fprintf(stderr, "io_cyclic: rank %d: %s\n", rank, msg);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		all = malloc(sizeof(int64_t) * (size_t)n * n);
		rc = MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
		if (rc == MPI_SUCCESS)
			rc = MPI_File_read_at(fh, 0, all, n * n, MPI_INT64_T, &st);
		if (rc == MPI_SUCCESS)
			MPI_File_close(&fh);
		for (long i = 0; rc == MPI_SUCCESS && i < (long)n * n && !bad; i++)
			if (all[i] != i) {
				printf("io_cyclic: element %ld is %lld\n", i, (long long)all[i]);
				bad = 1;
			}
		if (rc != MPI_SUCCESS)
			printf("io_cyclic: reading back failed\n");
		else if (!bad)
			printf("io_cyclic: OK bytes=%ld ranks=%d\n", (long)n * n * 8, size);
		free(all);
	}
	MPI_Bcast(&bad, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	MPI_Type_free(&dt);
	free(buf);
	MPI_Finalize();
	return bad || rc != MPI_SUCCESS;
}
