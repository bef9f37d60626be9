/* tests/mpi/io_bad.c: MPI-IO on bad input: each rank prints the error class it got, so that a
 * test checks that every rank of a collective call fails (and none hangs).
 *
 * usage: io_bad open FILE   open FILE read-write (made unopenable on some ranks by the caller)
 *        io_bad view DIR    the last rank sets a view whose filetype has a negative extent
 *        io_bad eof DIR     reads past the end of a 40-byte file (collectively too, the ranks'
 *                           reads overlapping): counts, no errors
 *        io_bad full DIR    collective, then independent writes until DIR's file system is full
 *        io_bad coll DIR    rank 1 passes a negative count to MPI_File_write_at_all
 * Prints "io_bad: rank R: STEP: CLASS" lines (CLASS: MPI_SUCCESS or the class's name), then
 * "io_bad: rank R: done". Exit 0 unless a call had to succeed and did not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, bad;

static const char *cls_name(int rc)
{
	static const struct {
		int c;
		const char *n;
	} t[] = {{MPI_SUCCESS, "MPI_SUCCESS"},
	         {MPI_ERR_ACCESS, "MPI_ERR_ACCESS"},
	         {MPI_ERR_AMODE, "MPI_ERR_AMODE"},
	         {MPI_ERR_ARG, "MPI_ERR_ARG"},
	         {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
	         {MPI_ERR_FILE, "MPI_ERR_FILE"},
	         {MPI_ERR_IO, "MPI_ERR_IO"},
	         {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE"},
	         {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE"},
	         {MPI_ERR_QUOTA, "MPI_ERR_QUOTA"},
	         {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY"},
	         {MPI_ERR_TYPE, "MPI_ERR_TYPE"}};
	int c = -1;

	MPI_Error_class(rc, &c);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].c == c)
			return t[i].n;
	return "another class";
}

static void say(const char *step, int rc)
{
	printf("io_bad: rank %d: %s: %s\n", rank, step, cls_name(rc));
	fflush(stdout);
}

static void must(int rc, const char *step)
{
	if (rc != MPI_SUCCESS) {
		say(step, rc);
		bad = 1;
	}
}

static void path(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/io_bad.%s", dir, name);
}

static void t_open(const char *file)
{
	MPI_File fh;
	int rc = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

	say("open", rc);
	if (rc == MPI_SUCCESS)
		MPI_File_close(&fh);
}

static void t_view(const char *dir)
{
	char f[4096];
	MPI_File fh;
	MPI_Datatype neg;
	int rc;

	path(f, sizeof(f), dir, "view");
	must(MPI_File_open(MPI_COMM_WORLD, f,
	                   MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
	                   MPI_INFO_NULL, &fh),
	     "open");
	MPI_Type_create_resized(MPI_INT, 0, -16, &neg); /* extent -16 */
	MPI_Type_commit(&neg);
	rc = MPI_File_set_view(fh, 0, MPI_INT, rank == size - 1 ? neg : MPI_INT, "native",
	                       MPI_INFO_NULL);
	say("set_view", rc);
	must(MPI_File_close(&fh), "close");
	MPI_Type_free(&neg);
}

static void t_eof(const char *dir)
{
	char f[4096], step[64];
	int v[100] = {0}, count = -1;
	MPI_File fh;
	MPI_Status st;
	int rc;

	path(f, sizeof(f), dir, "eof");
	must(MPI_File_open(MPI_COMM_WORLD, f,
	                   MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
	                   MPI_INFO_NULL, &fh),
	     "open");
	if (rank == 0)
		must(MPI_File_write_at(fh, 0, v, 10, MPI_INT, &st), "write");
	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_read_at(fh, 0, v, 100, MPI_INT, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	snprintf(step, sizeof(step), "read 100 of 10 count %d", count);
	say(step, rc);
	rc = MPI_File_read_at(fh, 4000, v, 100, MPI_INT, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	snprintf(step, sizeof(step), "read past the end count %d", count);
	say(step, rc);
	rc = MPI_File_read_at_all(fh, 16 * (MPI_Offset)rank, v, 8, MPI_INT, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	snprintf(step, sizeof(step), "read_at_all count %d", count);
	say(step, rc);
	must(MPI_File_close(&fh), "close");
}

static void t_full(const char *dir)
{
	enum { B = 64 << 10 };
	char f[4096], step[64], *buf = calloc(1, B);
	MPI_File fh;
	MPI_Status st;
	MPI_Info info;
	int rc = MPI_SUCCESS, i;

	path(f, sizeof(f), dir, "full");
	MPI_Info_create(&info); /* two-phase I/O: the aggregators meet the full disk */
	MPI_Info_set(info, "romio_cb_write", "enable");
	must(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
	     "open");
	MPI_Info_free(&info);
	/* interleaved blocks, collectively, until the file system is full (at most 64 MiB) */
	for (i = 0; rc == MPI_SUCCESS && i < 1024 / size; i++)
		rc = MPI_File_write_at_all(fh, ((MPI_Offset)i * size + rank) * B, buf, B, MPI_BYTE,
		                           &st);
	snprintf(step, sizeof(step), "write_at_all until full (call %d)", i);
	say(step, rc);
	rc = MPI_File_write_at(fh, (MPI_Offset)(1024 + rank) * B, buf, B, MPI_BYTE, &st);
	say("write_at when full", rc);
	rc = MPI_File_close(&fh);
	say("close", rc);
	if (rank == 0)
		must(MPI_File_delete(f, MPI_INFO_NULL), "delete");
	free(buf);
}

static void t_coll(const char *dir)
{
	char f[4096];
	int v[4] = {1, 2, 3, 4}, rc;
	MPI_File fh;
	MPI_Status st;

	path(f, sizeof(f), dir, "coll");
	must(MPI_File_open(MPI_COMM_WORLD, f,
	                   MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
	                   MPI_INFO_NULL, &fh),
	     "open");
	rc = MPI_File_write_at_all(fh, 16 * (MPI_Offset)rank, v, rank == 1 ? -1 : 4, MPI_INT, &st);
	say("write_at_all", rc);
	rc = MPI_File_write_at_all(fh, 16 * (MPI_Offset)rank, v, 4, MPI_INT, &st);
	say("write_at_all again", rc);
	must(MPI_File_close(&fh), "close");
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: io_bad open|view|eof|full|coll PATH\n");
		MPI_Finalize();
		return 100;
	}
	if (!strcmp(argv[1], "open"))
		t_open(argv[2]);
	else if (!strcmp(argv[1], "view"))
		t_view(argv[2]);
	else if (!strcmp(argv[1], "eof"))
		t_eof(argv[2]);
	else if (!strcmp(argv[1], "full"))
		t_full(argv[2]);
	else if (!strcmp(argv[1], "coll"))
		t_coll(argv[2]);
	printf("io_bad: rank %d: done\n", rank);
	MPI_Finalize();
	return bad;
}
