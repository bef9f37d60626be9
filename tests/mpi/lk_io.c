/* tests/mpi/lk_io.c: MPI-IO: files, views, independent, collective, nonblocking, split, shared
 * and ordered access, atomic mode, external32, errors (runs under MPICH's ROMIO too). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lk_util.h"

static char fname[512];

/* A fresh name for this test's file, the same on every rank. */
static const char *file_name(const char *what)
{
	if (lk_rank == 0) {
		const char *dir = getenv("LK_IO_DIR") ? getenv("LK_IO_DIR") : getenv("TMPDIR");
		snprintf(fname, sizeof(fname), "%s/lk_io.%d.%s", dir ? dir : "/tmp", (int)getpid(),
		         what);
	}
	MPI_Bcast(fname, (int)sizeof(fname), MPI_CHAR, 0, MPI_COMM_WORLD);
	return fname;
}

static MPI_File open_rw(const char *what, int extra)
{
	MPI_File fh = MPI_FILE_NULL;
	int rc = MPI_File_open(MPI_COMM_WORLD, file_name(what),
	                       MPI_MODE_CREATE | MPI_MODE_RDWR | extra, MPI_INFO_NULL, &fh);

	LK_CHECK(rc == MPI_SUCCESS, "open %s: %d", what, rc);
	return fh;
}

static int error_class(int rc)
{
	int cls = -1;

	MPI_Error_class(rc, &cls);
	return cls;
}

/* sync-barrier-sync: what one rank wrote is visible to the others (MPI-3.1 13.6.1). */
static void settle(MPI_File fh)
{
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
}

/* ---- files, explicit offsets, individual pointers ---- */

static void test_basic(void)
{
	enum { N = 1000 };
	int buf[N], got[N], amode = 0, cmp, count, flag;
	MPI_File fh = open_rw("basic", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Group g, wg;
	MPI_Offset size, pos, off;
	MPI_Status st;
	MPI_Info info;
	char v[MPI_MAX_INFO_VAL + 1];

	MPI_File_get_amode(fh, &amode);
	LK_CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE), "amode %d",
	         amode);
	MPI_File_get_group(fh, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Group_compare(g, wg, &cmp);
	LK_CHECK(cmp == MPI_IDENT, "file group is not the communicator's (%d)", cmp);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);
	for (int i = 0; i < N; i++)
		buf[i] = lk_rank * N + i;
	LK_CHECK(MPI_File_write_at(fh, (MPI_Offset)lk_rank * N * 4, buf, N, MPI_INT, &st) ==
	             MPI_SUCCESS,
	         "write_at");
	MPI_Get_count(&st, MPI_INT, &count);
	LK_CHECK(count == N, "write_at count %d", count);
	settle(fh);
	MPI_File_get_size(fh, &size);
	LK_CHECK(size == (MPI_Offset)lk_size * N * 4, "size %lld", (long long)size);
	/* the next rank's block, through the individual pointer */
	int peer = (lk_rank + 1) % lk_size;
	MPI_File_seek(fh, (MPI_Offset)peer * N * 4, MPI_SEEK_SET);
	MPI_File_read(fh, got, N, MPI_INT, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	LK_CHECK(count == N && got[0] == peer * N && got[N - 1] == peer * N + N - 1,
	         "read of rank %d's block: count %d, %d..%d", peer, count, got[0], got[N - 1]);
	MPI_File_get_position(fh, &pos);
	LK_CHECK(pos == (MPI_Offset)(peer + 1) * N * 4, "position %lld", (long long)pos);
	MPI_File_seek(fh, -4, MPI_SEEK_CUR);
	MPI_File_read(fh, got, 1, MPI_INT, &st);
	LK_CHECK(got[0] == peer * N + N - 1, "seek cur: %d", got[0]);
	MPI_File_seek(fh, 0, MPI_SEEK_END);
	MPI_File_get_position(fh, &pos);
	LK_CHECK(pos == size, "seek end: %lld", (long long)pos);
	MPI_File_get_byte_offset(fh, 12, &off);
	LK_CHECK(off == 12, "byte offset %lld", (long long)off);
	/* reading past the end: nothing, and no error */
	LK_CHECK(MPI_File_read_at(fh, size + 100, got, N, MPI_INT, &st) == MPI_SUCCESS,
	         "read past the end fails");
	MPI_Get_count(&st, MPI_INT, &count);
	LK_CHECK(count == 0, "read past the end: count %d", count);
	/* partly past: what is there */
	MPI_File_read_at(fh, size - 8, got, N, MPI_INT, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	LK_CHECK(count == 2 && got[1] == lk_size * N - 1, "read across the end: count %d", count);
	/* grow, shrink */
	MPI_File_preallocate(fh, size + 4096);
	MPI_File_get_size(fh, &pos);
	LK_CHECK(pos == size + 4096, "preallocate: size %lld", (long long)pos);
	MPI_File_set_size(fh, 400);
	MPI_File_get_size(fh, &pos);
	LK_CHECK(pos == 400, "set_size: size %lld", (long long)pos);
	MPI_File_get_info(fh, &info);
	MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
	LK_CHECK(flag && atoi(v) > 0, "cb_buffer_size hint missing");
	MPI_Info_free(&info);
	LK_CHECK(MPI_File_close(&fh) == MPI_SUCCESS, "close");
	LK_CHECK(fh == MPI_FILE_NULL, "close did not reset the handle");
	MPI_Barrier(MPI_COMM_WORLD);
	LK_CHECK(access(fname, F_OK) != 0, "DELETE_ON_CLOSE left %s", fname);
}

/* ---- views: interleaved (block-cyclic) in 1D and 2D, noncontiguous memory ---- */

/* Rank 0 reads the whole file as bytes and checks every int against want(i). */
static void check_file(MPI_File fh, int n, int (*want)(int), const char *what)
{
	int *all, bad = 0;
	MPI_Status st;

	if (lk_rank != 0)
		return;
	all = malloc(sizeof(int) * (size_t)n);
	MPI_File_read_at(fh, 0, all, n, MPI_INT, &st);
	for (int i = 0; i < n; i++)
		if (all[i] != want(i) && bad++ < 3)
			LK_CHECK(0, "%s: int %d is %d, want %d", what, i, all[i], want(i));
	LK_CHECK(!bad, "%s: %d ints wrong", what, bad);
	free(all);
}

static int ident(int i)
{
	return i;
}

static int neg(int i)
{
	return -i;
}

static void test_cyclic(void)
{
	enum { B = 3, K = 500 }; /* blocks of B ints, K blocks per rank */
	int *buf = malloc(sizeof(int) * B * K), *got = malloc(sizeof(int) * B * K), count;
	MPI_File fh = open_rw("cyclic", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Datatype vec, ft;
	MPI_Status st;
	MPI_Offset disp;
	MPI_Datatype et, t2;
	char rep[MPI_MAX_DATAREP_STRING];

	MPI_Type_vector(K, B, B * lk_size, MPI_INT, &vec);
	MPI_Type_create_resized(vec, 0, (MPI_Aint)B * K * lk_size * 4, &ft);
	MPI_Type_commit(&ft);
	for (int k = 0; k < K; k++)
		for (int b = 0; b < B; b++)
			buf[k * B + b] = (k * lk_size + lk_rank) * B + b;
	MPI_File_set_view(fh, (MPI_Offset)lk_rank * B * 4, MPI_INT, ft, "native", MPI_INFO_NULL);
	MPI_File_get_view(fh, &disp, &et, &t2, rep);
	LK_CHECK(disp == (MPI_Offset)lk_rank * B * 4 && et == MPI_INT && !strcmp(rep, "native"),
	         "get_view: disp %lld rep %s", (long long)disp, rep);
	MPI_Type_free(&t2);
	LK_CHECK(MPI_File_write_all(fh, buf, B * K, MPI_INT, &st) == MPI_SUCCESS, "write_all");
	MPI_Get_count(&st, MPI_INT, &count);
	LK_CHECK(count == B * K, "write_all count %d", count);
	memset(got, 0, sizeof(int) * B * K);
	LK_CHECK(MPI_File_read_at_all(fh, 0, got, B * K, MPI_INT, &st) == MPI_SUCCESS,
	         "read_at_all");
	LK_CHECK(!memcmp(got, buf, sizeof(int) * B * K), "read_at_all: other data");
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	check_file(fh, B * K * lk_size, ident, "write_all of a block-cyclic view");
	MPI_Barrier(MPI_COMM_WORLD);
	/* the same pattern with independent writes: interleaved sieving windows under locks */
	for (int i = 0; i < B * K; i++)
		buf[i] = -buf[i];
	MPI_File_set_view(fh, (MPI_Offset)lk_rank * B * 4, MPI_INT, ft, "native", MPI_INFO_NULL);
	LK_CHECK(MPI_File_write(fh, buf, B * K, MPI_INT, &st) == MPI_SUCCESS, "write");
	settle(fh);
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	check_file(fh, B * K * lk_size, neg, "independent writes of a block-cyclic view");
	MPI_File_close(&fh);
	MPI_Type_free(&vec);
	MPI_Type_free(&ft);
	free(buf);
	free(got);
}

enum { G = 48 }; /* a G x G array of ints, value = row * G + column */

static int cell(int i)
{
	return i;
}

static void test_darray(void)
{
	int dims[2] = {0, 0}, gs[2] = {G, G},
	    dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
	int dargs[2] = {4, 2}, n, *buf, *got, k = 0;
	MPI_File fh = open_rw("darray", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Datatype dt;
	MPI_Aint lb, ext;
	MPI_Status st;

	MPI_Dims_create(lk_size, 2, dims);
	MPI_Type_create_darray(lk_size, lk_rank, 2, gs, dist, dargs, dims, MPI_ORDER_C, MPI_INT,
	                       &dt);
	MPI_Type_commit(&dt);
	MPI_Type_size(dt, &n);
	n /= 4;
	MPI_Type_get_extent(dt, &lb, &ext);
	buf = malloc(sizeof(int) * (size_t)(n + 1));
	got = malloc(sizeof(int) * (size_t)(n + 1));
	/* my cells in the darray's order: row-major over the cells I own */
	int pr = lk_rank / dims[1], pc = lk_rank % dims[1];
	for (int r = 0; r < G; r++)
		for (int c = 0; c < G; c++)
			if ((r / dargs[0]) % dims[0] == pr && (c / dargs[1]) % dims[1] == pc)
				buf[k++] = r * G + c;
	LK_CHECK(k == n, "darray holds %d cells, %d expected", n, k);
	MPI_File_set_view(fh, 0, MPI_INT, dt, "native", MPI_INFO_NULL);
	LK_CHECK(MPI_File_write_all(fh, buf, n, MPI_INT, &st) == MPI_SUCCESS, "darray write_all");
	LK_CHECK(MPI_File_read_at_all(fh, 0, got, n, MPI_INT, &st) == MPI_SUCCESS,
	         "darray read_at_all");
	LK_CHECK(!memcmp(got, buf, sizeof(int) * (size_t)n), "darray read back differs");
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	check_file(fh, G * G, cell, "darray write_all");
	MPI_File_close(&fh);
	MPI_Type_free(&dt);
	free(buf);
	free(got);
}

/* Memory with a stride: every other int of m goes to the file, contiguously. */
static void test_memtype(void)
{
	enum { N = 300 };
	int m[2 * N], back[2 * N], all[N];
	MPI_File fh = open_rw("memtype", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Datatype every2;
	MPI_Status st;

	MPI_Type_vector(N, 1, 2, MPI_INT, &every2);
	MPI_Type_commit(&every2);
	for (int i = 0; i < 2 * N; i++)
		m[i] = i % 2 ? -1 : lk_rank * N + i / 2;
	MPI_File_write_at_all(fh, (MPI_Offset)lk_rank * N * 4, m, 1, every2, &st);
	MPI_File_read_at_all(fh, (MPI_Offset)lk_rank * N * 4, all, N, MPI_INT, &st);
	for (int i = 0; i < N; i++)
		LK_CHECK(all[i] == lk_rank * N + i, "strided memory: int %d is %d", i, all[i]);
	memset(back, 0x7f, sizeof(back));
	MPI_File_read_at(fh, (MPI_Offset)lk_rank * N * 4, back, 1, every2, &st);
	for (int i = 0; i < 2 * N; i++)
		LK_CHECK(back[i] == (i % 2 ? 0x7f7f7f7f : lk_rank * N + i / 2),
		         "read into strided memory: int %d is %d", i, back[i]);
	MPI_File_close(&fh);
	MPI_Type_free(&every2);
}

/* ---- nonblocking and split collective ---- */

static void test_nonblocking(void)
{
	enum { N = 2000 };
	int a[N], b[N], ra[N], rb[N], flag = 0, count;
	MPI_File fh = open_rw("nb", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Request rq[2];
	MPI_Status st[2], s1;
	MPI_Offset base = (MPI_Offset)lk_rank * 2 * N * 4;

	for (int i = 0; i < N; i++) {
		a[i] = lk_rank * 2 * N + i;
		b[i] = lk_rank * 2 * N + N + i;
	}
	MPI_File_iwrite_at(fh, base, a, N, MPI_INT, &rq[0]);
	MPI_File_iwrite_at(fh, base + N * 4, b, N, MPI_INT, &rq[1]);
	LK_CHECK(MPI_Waitall(2, rq, st) == MPI_SUCCESS, "Waitall of iwrite_at");
	MPI_Get_count(&st[1], MPI_INT, &count);
	LK_CHECK(count == N, "iwrite_at count %d", count);
	MPI_File_iread_at(fh, base, ra, N, MPI_INT, &rq[0]);
	while (!flag)
		MPI_Test(&rq[0], &flag, &s1);
	LK_CHECK(!memcmp(ra, a, sizeof(a)), "iread_at data");
	/* nonblocking collective, the other half of the neighbour's part */
	int peer = (lk_rank + 1) % lk_size;
	MPI_File_iread_at_all(fh, (MPI_Offset)peer * 2 * N * 4 + N * 4, rb, N, MPI_INT, &rq[0]);
	MPI_Wait(&rq[0], &s1);
	LK_CHECK(rb[0] == peer * 2 * N + N && rb[N - 1] == peer * 2 * N + 2 * N - 1,
	         "iread_at_all data %d..%d", rb[0], rb[N - 1]);
	for (int i = 0; i < N; i++)
		a[i] = -a[i];
	MPI_File_seek(fh, base, MPI_SEEK_SET);
	MPI_File_iwrite_all(fh, a, N, MPI_INT, &rq[0]);
	MPI_Wait(&rq[0], &s1);
	/* split collectives */
	MPI_File_read_at_all_begin(fh, base, ra, N, MPI_INT);
	MPI_File_read_at_all_end(fh, ra, &s1);
	MPI_Get_count(&s1, MPI_INT, &count);
	LK_CHECK(count == N && ra[5] == a[5], "read_at_all_begin/end: count %d, %d", count, ra[5]);
	MPI_File_seek(fh, base + N * 4, MPI_SEEK_SET);
	MPI_File_write_all_begin(fh, b, N, MPI_INT);
	MPI_File_write_all_end(fh, b, &s1);
	MPI_File_seek(fh, base, MPI_SEEK_SET);
	MPI_File_read_all_begin(fh, rb, N, MPI_INT);
	MPI_File_read_all_end(fh, rb, &s1);
	LK_CHECK(!memcmp(rb, a, sizeof(a)), "read_all_begin/end data");
	MPI_File_close(&fh);
}

/* ---- shared file pointer: shared, ordered, seek_shared ---- */

static void test_shared(void)
{
	int v = 1000 + lk_rank, *all = calloc((size_t)lk_size, sizeof(int)), got = -1;
	MPI_File fh = open_rw("shared", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Offset pos;
	MPI_Status st;

	MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL); /* pointers in ints */
	LK_CHECK(MPI_File_write_shared(fh, &v, 1, MPI_INT, &st) == MPI_SUCCESS, "write_shared");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_get_position_shared(fh, &pos);
	LK_CHECK(pos == lk_size, "shared position after write_shared: %lld", (long long)pos);
	settle(fh);
	if (lk_rank == 0) { /* every rank's int once, in some order */
		MPI_File_read_at(fh, 0, all, lk_size, MPI_INT, &st);
		for (int r = 0; r < lk_size; r++) {
			int seen = 0;
			for (int i = 0; i < lk_size; i++)
				seen += all[i] == 1000 + r;
			LK_CHECK(seen == 1, "write_shared: rank %d's int found %d times", r, seen);
		}
	}
	v = 2000 + lk_rank;
	LK_CHECK(MPI_File_write_ordered(fh, &v, 1, MPI_INT, &st) == MPI_SUCCESS, "write_ordered");
	MPI_File_seek_shared(fh, lk_size, MPI_SEEK_SET);
	LK_CHECK(MPI_File_read_ordered(fh, &got, 1, MPI_INT, &st) == MPI_SUCCESS, "read_ordered");
	LK_CHECK(got == 2000 + lk_rank, "read_ordered: %d", got);
#ifdef LAMKIT_MPI /* MPICH 4.0.2's ROMIO reports 2 * size - 1 here on some ranks */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_get_position_shared(fh, &pos);
	LK_CHECK(pos == 2 * lk_size, "shared position after read_ordered: %lld", (long long)pos);
#endif
	MPI_File_seek_shared(fh, -1, MPI_SEEK_END);
	MPI_File_read_ordered_begin(fh, &got, lk_rank == 0 ? 1 : 0, MPI_INT);
	MPI_File_read_ordered_end(fh, &got, &st);
	if (lk_rank == 0)
		LK_CHECK(got == 2000 + lk_size - 1, "seek_shared end: %d", got);
	MPI_File_close(&fh);
	free(all);
}

/* ---- atomic mode: overlapping writes leave one writer's data whole ---- */

static void test_atomic(void)
{
	enum { N = 16384 };
	int *buf = malloc(sizeof(int) * N), flag = 0, bad = 0;
	MPI_File fh = open_rw("atomic", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Status st;

	MPI_File_set_atomicity(fh, 1);
	MPI_File_get_atomicity(fh, &flag);
	LK_CHECK(flag == 1, "atomicity %d", flag);
	for (int i = 0; i < N; i++)
		buf[i] = lk_rank;
	MPI_File_write_at(fh, 0, buf, N, MPI_INT, &st);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_read_at(fh, 0, buf, N, MPI_INT, &st);
	for (int i = 1; i < N; i++)
		bad += buf[i] != buf[0];
	LK_CHECK(!bad, "atomic mode: %d ints of another writer among rank %d's", bad, buf[0]);
	MPI_File_set_atomicity(fh, 0);
	MPI_File_close(&fh);
	free(buf);
}

/* ---- external32: big-endian in the file ---- */

static void test_external32(void)
{
	int v[2] = {0x01020304, -2}, back[2] = {0, 0};
	unsigned char raw[8];
	MPI_File fh = open_rw("ext32", MPI_MODE_DELETE_ON_CLOSE);
	MPI_Aint ext = 0;
	MPI_Status st;

	MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
	MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext);
	LK_CHECK(ext == 8, "external32 extent of MPI_DOUBLE: %ld", (long)ext);
	if (lk_rank == 0)
		MPI_File_write_at(fh, 0, v, 2, MPI_INT, &st);
	settle(fh);
	MPI_File_read_at(fh, 0, back, 2, MPI_INT, &st);
	LK_CHECK(back[0] == v[0] && back[1] == v[1], "external32 round trip: %x %d", back[0],
	         back[1]);
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	MPI_File_read_at(fh, 0, raw, 8, MPI_BYTE, &st);
	LK_CHECK(raw[0] == 1 && raw[3] == 4 && raw[4] == 0xff && raw[7] == 0xfe,
	         "external32 bytes %02x %02x %02x %02x", raw[0], raw[3], raw[4], raw[7]);
	MPI_File_close(&fh);
}

/* ---- errors ---- */

static int handled;
static void on_error(MPI_File *fh, int *code, ...)
{
	(void)fh;
	if (*code != MPI_SUCCESS)
		handled++;
}

static void test_errors(void)
{
	MPI_File fh = MPI_FILE_NULL, fh2 = MPI_FILE_NULL;
	MPI_Errhandler eh;
	MPI_Status st;
	int rc, b = 0;

	MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
	LK_CHECK(eh == MPI_ERRORS_RETURN, "the default file error handler is not ERRORS_RETURN");
	rc = MPI_File_open(MPI_COMM_WORLD, file_name("missing"), MPI_MODE_RDONLY, MPI_INFO_NULL,
	                   &fh);
	LK_CHECK(error_class(rc) == MPI_ERR_NO_SUCH_FILE, "open of a missing file: class %d",
	         error_class(rc));
	rc = MPI_File_open(MPI_COMM_WORLD, file_name("amode"), MPI_MODE_RDONLY | MPI_MODE_CREATE,
	                   MPI_INFO_NULL, &fh);
	LK_CHECK(error_class(rc) == MPI_ERR_AMODE, "RDONLY|CREATE: class %d", error_class(rc));
	fh = open_rw("errs", MPI_MODE_DELETE_ON_CLOSE);
	rc = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
	                   MPI_INFO_NULL, &fh2);
	LK_CHECK(error_class(rc) == MPI_ERR_FILE_EXISTS, "EXCL of an existing file: class %d",
	         error_class(rc));
	MPI_File_create_errhandler(on_error, &eh);
	MPI_File_set_errhandler(fh, eh);
	MPI_Errhandler_free(&eh);
	rc = MPI_File_read_at(fh, -4, &b, 1, MPI_INT, &st);
	LK_CHECK(rc != MPI_SUCCESS && handled == 1, "negative offset: rc %d, handler called %d", rc,
	         handled);
	LK_CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f/f2c");
	MPI_File_close(&fh);
	/* writes to a read-only file */
	fh = open_rw("ro", 0);
	MPI_File_close(&fh);
	MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
	              MPI_INFO_NULL, &fh);
	rc = MPI_File_write_at(fh, 0, &b, 1, MPI_INT, &st);
	LK_CHECK(error_class(rc) == MPI_ERR_READ_ONLY, "write to a read-only file: class %d",
	         error_class(rc));
	MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_io");
	test_basic();
	test_cyclic();
	test_darray();
	test_memtype();
	test_nonblocking();
	test_shared();
	test_atomic();
	test_external32();
	test_errors();
	return lk_finish();
}
