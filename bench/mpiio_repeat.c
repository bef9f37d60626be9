/* bench/mpiio_repeat.c: the same collective access several times on one file, to tell a first
 * call (new buffers, new pages) from the calls after it. Each rank's blocks of B bytes are dealt
 * round robin (a vector view), M MiB a rank; N write_at_all, then N read_at_all. Any MPI.
 *
 * usage: mpiio_repeat FILE [-b BLOCK] [-s MiB] [-n CALLS] [-c CB_BUFFER_SIZE]
 * (defaults 1024, 16, 5, the MPI's own cb_buffer_size; -c sets the hint at open)
 * Rank 0 prints "write: a b c ... MB/s" and "read: ..." (all ranks' bytes / the slowest rank's
 * time of each call, MB = 1e6 B); the data read back is checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, calls = 5, bad = 0, allbad = 0;
	long blk = 1024, mib = 16;
	const char *cbs = NULL;
	MPI_Info info = MPI_INFO_NULL;
	MPI_Datatype chunk, vec, ft;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-b"))
			blk = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			mib = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-n"))
			calls = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-c"))
			cbs = argv[i + 1];
	}
	long bytes = mib << 20, nblk = blk > 0 ? bytes / blk : 0;
	if (argc < 2 || nblk <= 0 || bytes % blk || calls <= 0) {
		if (rank == 0)
			fprintf(stderr,
			        "usage: mpiio_repeat FILE [-b BLOCK] [-s MiB] [-n CALLS] [-c "
			        "CB_BUFFER_SIZE]\n");
		MPI_Finalize();
		return 100;
	}
	char *buf = malloc((size_t)bytes);
	memset(buf, rank + 1, (size_t)bytes);
	MPI_Type_contiguous((int)blk, MPI_BYTE, &chunk);
	MPI_Type_commit(&chunk);
	MPI_Type_vector((int)nblk, 1, size, chunk, &vec);
	MPI_Type_create_resized(vec, 0, (MPI_Aint)blk * nblk * size, &ft);
	MPI_Type_commit(&ft);
	if (rank == 0)
		MPI_File_delete(argv[1], MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (cbs) {
		MPI_Info_create(&info);
		MPI_Info_set(info, "cb_buffer_size", cbs);
	}
	MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
	if (cbs)
		MPI_Info_free(&info);
	MPI_File_set_view(fh, (MPI_Offset)rank * blk, chunk, ft, "native", MPI_INFO_NULL);
	for (int op = 0; op < 2; op++) {
		if (rank == 0)
			printf("%s:", op ? "read" : "write");
		for (int i = 0; i < calls; i++) {
			double t, dt, mx;
			MPI_Barrier(MPI_COMM_WORLD);
			t = MPI_Wtime();
			if (op)
				MPI_File_read_at_all(fh, 0, buf, (int)nblk, chunk,
				                     MPI_STATUS_IGNORE);
			else
				MPI_File_write_at_all(fh, 0, buf, (int)nblk, chunk,
				                      MPI_STATUS_IGNORE);
			dt = MPI_Wtime() - t;
			MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			if (rank == 0)
				printf(" %.0f", (double)bytes * size / mx / 1e6);
		}
		if (rank == 0)
			printf(" MB/s\n");
	}
	for (long i = 0; i < bytes; i += 4093)
		bad += buf[i] != (char)(rank + 1);
	MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && allbad)
		fprintf(stderr, "mpiio_repeat: %d bytes read back wrong\n", allbad);
	MPI_File_close(&fh);
	MPI_Type_free(&ft);
	MPI_Type_free(&vec);
	MPI_Type_free(&chunk);
	if (rank == 0)
		MPI_File_delete(argv[1], MPI_INFO_NULL);
	free(buf);
	MPI_Finalize();
	return allbad ? 1 : 0;
}
