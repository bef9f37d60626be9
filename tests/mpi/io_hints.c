/* tests/mpi/io_hints.c: the hints a file gets. Opens DIR/io_hints.dat collectively with an info
 * holding the KEY=VALUE arguments, writes and reads back a block a rank collectively, and prints
 * every key of MPI_File_get_info as "io_hints: rank R: KEY=VALUE" (so that a test sees what
 * ROMIO_HINTS and the program's own info made of them, on every rank).
 *
 * usage: io_hints DIR [KEY=VALUE ...]
 * Exit 0 when every call succeeded and the data read back is what was written. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 4096

int main(int argc, char **argv)
{
	char path[4096], k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
	int rank, nk = 0, flag, bad = 0, buf[N], got[N];
	MPI_Info info, used;
	MPI_File fh;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 2) {
		fprintf(stderr, "usage: io_hints DIR [KEY=VALUE ...]\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Info_create(&info);
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq)
			continue;
		*eq = 0;
		MPI_Info_set(info, argv[i], eq + 1);
	}
	snprintf(path, sizeof(path), "%s/io_hints.dat", argv[1]);
	for (int i = 0; i < N; i++)
		buf[i] = rank * N + i;
	bad |= MPI_File_open(MPI_COMM_WORLD, path,
	                     MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info,
	                     &fh) != MPI_SUCCESS;
	MPI_Info_free(&info);
	if (bad) {
		printf("io_hints: rank %d: open failed\n", rank);
		MPI_Finalize();
		return 1;
	}
	bad |= MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof(buf), buf, N, MPI_INT, &st) !=
	       MPI_SUCCESS;
	bad |= MPI_File_read_at_all(fh, (MPI_Offset)rank * sizeof(buf), got, N, MPI_INT, &st) !=
	       MPI_SUCCESS;
	bad |= memcmp(buf, got, sizeof(buf)) != 0;
	MPI_File_get_info(fh, &used);
	MPI_Info_get_nkeys(used, &nk);
	for (int i = 0; i < nk; i++) {
		MPI_Info_get_nthkey(used, i, k);
		MPI_Info_get(used, k, MPI_MAX_INFO_VAL, v, &flag);
		printf("io_hints: rank %d: %s=%s\n", rank, k, flag ? v : "(none)");
	}
	MPI_Info_free(&used);
	bad |= MPI_File_close(&fh) != MPI_SUCCESS;
	printf("io_hints: rank %d: %s\n", rank, bad ? "FAILED" : "done");
	MPI_Finalize();
	return bad;
}
