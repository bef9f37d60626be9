/* tests/unit/t_mpio.c: MPI-IO as a singleton against a model: random filetypes (increasing
 * blocks with gaps), random displacements, offsets and lengths, written and read through
 * independent access (runs, data sieving windows) and through two-phase I/O forced on (many
 * small rounds); every byte of the file is compared with a plain array the same writes went
 * into, and every read with the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "tap.h"

enum { FILE_MAX = 1 << 20, MAXBLK = 12 };

static unsigned char model[FILE_MAX];
static long model_len;
static unsigned seed = 12345;

static unsigned rnd(unsigned n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 8) % n;
}

struct ftype {
	int n;
	MPI_Aint off[MAXBLK];
	int len[MAXBLK];
	MPI_Aint ext;
	long size;
};

/* A random filetype: 1..MAXBLK increasing blocks with gaps, extent past the last one. */
static MPI_Datatype make_type(struct ftype *t)
{
	MPI_Datatype h, r;
	MPI_Aint at = rnd(8);

	t->n = 1 + (int)rnd(MAXBLK);
	t->size = 0;
	for (int i = 0; i < t->n; i++) {
		t->off[i] = at;
		t->len[i] = 1 + (int)rnd(300);
		at += t->len[i] + (rnd(3) ? rnd(200) : 0);
		t->size += t->len[i];
	}
	t->ext = at + rnd(64);
	MPI_Type_create_hindexed(t->n, t->len, t->off, MPI_BYTE, &h);
	MPI_Type_create_resized(h, 0, t->ext, &r);
	MPI_Type_free(&h);
	MPI_Type_commit(&r);
	return r;
}

/* File offset of stream byte s of view (disp, t). */
static long map(long disp, const struct ftype *t, long s)
{
	long tile = s / t->size, r = s % t->size;
	int k = 0;

	while (r >= t->len[k])
		r -= t->len[k++];
	return disp + tile * t->ext + t->off[k] + r;
}

static void round_trip(MPI_File fh, int coll, int iter, int *bad)
{
	struct ftype t;
	MPI_Datatype ft = make_type(&t);
	long disp = rnd(5000), s = rnd(3000), n = 1 + rnd(20000);
	unsigned char *buf = malloc((size_t)n), *back = malloc((size_t)n);
	MPI_Status st;
	int cnt = -1;

	while (map(disp, &t, s + n - 1) >= FILE_MAX)
		n /= 2;
	for (long i = 0; i < n; i++)
		buf[i] = (unsigned char)rnd(256);
	MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
	if (coll)
		MPI_File_write_at_all(fh, s, buf, (int)n, MPI_BYTE, &st);
	else
		MPI_File_write_at(fh, s, buf, (int)n, MPI_BYTE, &st);
	for (long i = 0; i < n; i++) {
		long f = map(disp, &t, s + i);
		model[f] = buf[i];
		if (f + 1 > model_len)
			model_len = f + 1;
	}
	memset(back, 0, (size_t)n);
	if (coll)
		MPI_File_read_at_all(fh, s, back, (int)n, MPI_BYTE, &st);
	else
		MPI_File_read_at(fh, s, back, (int)n, MPI_BYTE, &st);
	MPI_Get_count(&st, MPI_BYTE, &cnt);
	if (cnt != n || memcmp(back, buf, (size_t)n)) {
		if ((*bad)++ < 3)
			printf(
			    "# iteration %d (%s): %d blocks, disp %ld, s %ld, n %ld: read %d bytes "
			    "back%s\n",
			    iter, coll ? "two-phase" : "independent", t.n, disp, s, n, cnt,
			    cnt == n ? ", other data" : "");
	}
	MPI_Type_free(&ft);
	free(buf);
	free(back);
}

/* A read through a random view that runs past the end of the file: the count is the stream
 * bytes below the end (a prefix, the map being increasing), those bytes the model's. */
static void past_end(MPI_File fh, int coll, const char *what)
{
	struct ftype t;
	MPI_Datatype ft = make_type(&t);
	long disp = rnd(1000), want = 0, n = 0, s;
	unsigned char *back;
	MPI_Status st;
	int cnt = -1, same = 1;

	while (map(disp, &t, n) < model_len) /* stream bytes below the end from 0 */
		n++;
	s = n > 100 ? n - 100 : 0; /* start a little before the end, read well past it */
	want = n - s;
	back = calloc(1, (size_t)want + 5000);
	MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
	if (coll)
		MPI_File_read_at_all(fh, s, back, (int)want + 5000, MPI_BYTE, &st);
	else
		MPI_File_read_at(fh, s, back, (int)want + 5000, MPI_BYTE, &st);
	MPI_Get_count(&st, MPI_BYTE, &cnt);
	for (long i = 0; i < want && same; i++)
		same = back[i] == model[map(disp, &t, s + i)];
	ok(cnt == want && same, "%s: a read past the end gets the %ld bytes below it (count %d)",
	   what, want, cnt);
	MPI_Type_free(&ft);
	free(back);
}

static void check_file(MPI_File fh, const char *what)
{
	unsigned char *all = malloc(FILE_MAX);
	MPI_Offset size = -1;
	MPI_Status st;
	long bad = -1;

	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	MPI_File_get_size(fh, &size);
	MPI_File_read_at(fh, 0, all, (int)model_len, MPI_BYTE, &st);
	for (long i = 0; i < model_len && bad < 0; i++)
		if (all[i] != model[i])
			bad = i;
	ok(size == model_len && bad < 0,
	   "%s: the file is the model (size %lld of %ld, first bad %ld)", what, (long long)size,
	   model_len, bad);
	free(all);
}

/* A filetype whose data reaches past its extent into the next tile's (lb past the first block,
 * as parallel HDF5 builds for a chunked collective write), on a file opened for writing: the
 * view is allowed (ROMIO allows it) and an access within one tile puts every block where the
 * type says, independent and collective alike. */
static void tiles_overlap(const char *path)
{
	static const int len[3] = {8, 8, 8};
	static const MPI_Aint off[3] = {0, 64, 200};
	MPI_Datatype h, ft;
	MPI_File fh;
	MPI_Status st;
	unsigned char buf[24], back[24], file[208];
	int rc, cnt = -1, same = 1;

	for (int i = 0; i < 24; i++)
		buf[i] = (unsigned char)(i + 1);
	MPI_Type_create_hindexed(3, len, off, MPI_BYTE, &h);
	MPI_Type_create_resized(h, 100, 50, &ft); /* tile i + 1 starts at 50: inside tile i */
	MPI_Type_commit(&ft);
	MPI_File_open(MPI_COMM_SELF, path,
	              MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
	              &fh);
	rc = MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
	ok(rc == MPI_SUCCESS, "a writable file takes a view whose tiles overlap (rc %d)", rc);
	for (int coll = 0; coll < 2 && rc == MPI_SUCCESS; coll++) {
		buf[0] = (unsigned char)(100 + coll);
		rc = coll ? MPI_File_write_at_all(fh, 0, buf, 24, MPI_BYTE, &st)
		          : MPI_File_write_at(fh, 0, buf, 24, MPI_BYTE, &st);
		memset(back, 0, sizeof(back));
		if (rc == MPI_SUCCESS)
			rc = coll ? MPI_File_read_at_all(fh, 0, back, 24, MPI_BYTE, &st)
			          : MPI_File_read_at(fh, 0, back, 24, MPI_BYTE, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		ok(rc == MPI_SUCCESS && cnt == 24 && !memcmp(back, buf, 24),
		   "%s: one tile of it written and read back (rc %d, count %d)",
		   coll ? "collective" : "independent", rc, cnt);
	}
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	memset(file, 0, sizeof(file));
	MPI_File_read_at(fh, 0, file, 208, MPI_BYTE, &st);
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 8; i++)
			same = same && file[off[k] + i] == buf[8 * k + i];
	ok(same && file[8] == 0 && file[63] == 0 && file[72] == 0 && file[199] == 0,
	   "the blocks are at 0, 64 and 200 of the file, nothing between them");
	MPI_File_close(&fh);
	MPI_Type_free(&ft);
	MPI_Type_free(&h);
}

/* ---- a registered data representation: ints byte-swapped in the file ---- */

static int swap_extent(MPI_Datatype t, MPI_Aint *ext, void *extra)
{
	int size;

	(void)extra;
	MPI_Type_size(t, &size);
	*ext = size;
	return MPI_SUCCESS;
}

static void swap4(unsigned char *to, const unsigned char *from, int n)
{
	for (int i = 0; i < n; i++)
		for (int b = 0; b < 4; b++)
			to[4 * i + b] = from[4 * i + 3 - b];
}

static int swap_write(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos,
                      void *extra)
{
	(void)t;
	(void)extra;
	swap4((unsigned char *)file, (unsigned char *)user + 4 * pos, count);
	return MPI_SUCCESS;
}

static int swap_read(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, void *extra)
{
	(void)t;
	(void)extra;
	swap4((unsigned char *)user + 4 * pos, (unsigned char *)file, count);
	return MPI_SUCCESS;
}

static void datarep(const char *path)
{
	int v[3] = {0x01020304, 7, -1}, back[3] = {0}, cls = -1, rc;
	unsigned char raw[12];
	MPI_File fh;
	MPI_Status st;

	ok(MPI_Register_datarep("lk_swap", swap_read, swap_write, swap_extent, NULL) == MPI_SUCCESS,
	   "MPI_Register_datarep");
	rc = MPI_Register_datarep("lk_swap", swap_read, swap_write, swap_extent, NULL);
	MPI_Error_class(rc, &cls);
	ok(cls == MPI_ERR_DUP_DATAREP, "registering it again: MPI_ERR_DUP_DATAREP (%d)", cls);
	MPI_File_open(MPI_COMM_SELF, path,
	              MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
	              &fh);
	ok(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "lk_swap", MPI_INFO_NULL) == MPI_SUCCESS,
	   "a view in the registered representation");
	MPI_File_write_at(fh, 0, v, 3, MPI_INT, &st);
	MPI_File_read_at(fh, 0, back, 3, MPI_INT, &st);
	ok(!memcmp(v, back, sizeof(v)), "written and read back through its conversions");
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	MPI_File_read_at(fh, 0, raw, 12, MPI_BYTE, &st);
	ok(raw[0] == 1 && raw[3] == 4 && raw[4] == 0 && raw[7] == 7 && raw[11] == 0xff,
	   "the file holds the converted bytes");
	rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no_such_rep", MPI_INFO_NULL);
	MPI_Error_class(rc, &cls);
	ok(cls == MPI_ERR_UNSUPPORTED_DATAREP, "an unknown representation: class %d", cls);
	MPI_File_close(&fh);
}

static MPI_File open_file(const char *path, const char *cb, const char *ds)
{
	MPI_Info info;
	MPI_File fh;

	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_cb_write", cb);
	MPI_Info_set(info, "romio_cb_read", cb);
	MPI_Info_set(info, "cb_buffer_size", "4096");
	MPI_Info_set(info, "romio_ds_write", ds);
	MPI_Info_set(info, "romio_ds_read", ds);
	MPI_Info_set(info, "ind_wr_buffer_size", "2048");
	MPI_Info_set(info, "ind_rd_buffer_size", "3000");
	MPI_File_open(MPI_COMM_SELF, path,
	              MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info, &fh);
	MPI_Info_free(&info);
	return fh;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *cb, *ds, *what;
		int coll;
	} modes[] = {{"disable", "enable", "independent, data sieving", 0},
	             {"disable", "disable", "independent, one call per run", 0},
	             {"enable", "automatic", "two-phase, 4 KiB rounds", 1}};
	char path[256];

	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		MPI_File fh;
		int bad = 0;

		snprintf(path, sizeof(path), "%s/t_mpio.%d.%zu",
		         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), m);
		memset(model, 0, sizeof(model));
		model_len = 0;
		fh = open_file(path, modes[m].cb, modes[m].ds);
		for (int i = 0; i < 150; i++)
			round_trip(fh, modes[m].coll, i, &bad);
		ok(!bad, "%s: 150 random views, every read gives back what was written (%d bad)",
		   modes[m].what, bad);
		past_end(fh, modes[m].coll, modes[m].what);
		check_file(fh, modes[m].what);
		MPI_File_close(&fh);
		ok(access(path, F_OK) != 0, "%s: DELETE_ON_CLOSE", modes[m].what);
	}
	snprintf(path, sizeof(path), "%s/t_mpio.%d.rep",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	datarep(path);
	snprintf(path, sizeof(path), "%s/t_mpio.%d.tiles",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	tiles_overlap(path);
	MPI_Finalize();
	return done_testing();
}
