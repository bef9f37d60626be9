/* tests/mpi/lk_dtype.c: derived datatypes: layouts on the wire, extents, pack, contents. */
#include <string.h>

#include "lk_util.h"

struct rec {
	int a;
	double b;
	char c;
};

/* Rank 0 sends with stype/sbuf, rank 1 receives with rtype into rbuf; both sides then compare
 * the packed signature of what was sent with what arrived. */
static void xfer(MPI_Datatype st, int sc, const void *sbuf, MPI_Datatype rt, int rc, void *rbuf,
                 const char *what)
{
	int ss, rs;
	char *a, *b;
	int pa = 0, pb = 0;

	MPI_Pack_size(sc, st, MPI_COMM_WORLD, &ss);
	MPI_Pack_size(rc, rt, MPI_COMM_WORLD, &rs);
	a = malloc((size_t)ss + 1);
	b = malloc((size_t)rs + 1);
	if (lk_rank == 0) {
		MPI_Send(sbuf, sc, st, 1, 0, MPI_COMM_WORLD);
	} else if (lk_rank == 1) {
		MPI_Status s;
		int n;
		MPI_Recv(rbuf, rc, rt, 0, 0, MPI_COMM_WORLD, &s);
		MPI_Get_count(&s, rt, &n);
		LK_CHECK(n == rc, "%s: count %d want %d", what, n, rc);
		MPI_Pack(sbuf, sc, st, a, ss, &pa, MPI_COMM_WORLD);
		MPI_Pack(rbuf, rc, rt, b, rs, &pb, MPI_COMM_WORLD);
		LK_CHECK(pa == pb && memcmp(a, b, (size_t)pa) == 0, "%s: data differs", what);
	}
	free(a);
	free(b);
}

static void test_vector_indexed(void)
{
	enum { N = 1000 };
	double *m = malloc(sizeof(double) * N * 8), *col = calloc(N, sizeof(double));
	double *out = calloc(N * 8, sizeof(double));
	int bl[4] = {1, 2, 3, 4}, dp[4] = {0, 5, 11, 30}, ib[3] = {7, 1, 20}, sz;
	MPI_Datatype vec, idx, blk, hv, cont, vr;
	MPI_Aint lb, ext;

	for (int i = 0; i < N * 8; i++)
		m[i] = i * 0.5;
	MPI_Type_vector(N, 1, 8, MPI_DOUBLE, &vec); /* one column of an N x 8 matrix */
	MPI_Type_commit(&vec);
	MPI_Type_size(vec, &sz);
	MPI_Type_get_extent(vec, &lb, &ext);
	LK_CHECK(sz == N * 8 && lb == 0 && ext == (MPI_Aint)((N - 1) * 8 + 1) * 8, "vector extent");
	xfer(vec, 1, m + 3, MPI_DOUBLE, N, col, "vector->contig");
	if (lk_rank == 1)
		LK_CHECK(col[N - 1] == ((N - 1) * 8 + 3) * 0.5, "vector column value");
	for (int i = 0; i < N; i++)
		col[i] = -i;
	xfer(MPI_DOUBLE, N, col, vec, 1, out + 5, "contig->vector");

	MPI_Type_indexed(4, bl, dp, MPI_DOUBLE, &idx);
	MPI_Type_commit(&idx);
	xfer(idx, 3, m, idx, 3, out + 4000, "indexed x3");
	MPI_Type_create_indexed_block(3, 2, ib, MPI_DOUBLE, &blk);
	MPI_Type_commit(&blk);
	xfer(blk, 2, m, MPI_DOUBLE, 12, col, "indexed_block");
	MPI_Type_create_hvector(10, 3, 100, MPI_DOUBLE, &hv);
	MPI_Type_commit(&hv);
	xfer(hv, 2, m, hv, 2, out + 3000, "hvector");
	MPI_Type_contiguous(7, vec, &cont);
	MPI_Type_free(&vec);
	MPI_Type_commit(&cont);
	MPI_Type_size(cont, &sz);
	LK_CHECK(sz == 7 * N * 8, "contiguous of freed vector size %d", sz);
	MPI_Type_create_resized(MPI_INT, -4, 16, &vr);
	MPI_Type_get_extent(vr, &lb, &ext);
	LK_CHECK(lb == -4 && ext == 16, "resized lb %ld ext %ld", (long)lb, (long)ext);
	MPI_Type_get_true_extent(vr, &lb, &ext);
	LK_CHECK(lb == 0 && ext == 4, "resized true lb %ld ext %ld", (long)lb, (long)ext);
	MPI_Type_free(&cont);
	MPI_Type_free(&idx);
	MPI_Type_free(&blk);
	MPI_Type_free(&hv);
	MPI_Type_free(&vr);
	free(m);
	free(col);
	free(out);
}

static void test_struct(void)
{
	struct rec r[5] = {{0, 0, 0}}, g[5];
	int bl[3] = {1, 1, 1}, ni, na, nt, comb, ints[8], cnt;
	MPI_Aint d[3], base, addrs[8], lb, ext;
	MPI_Datatype t[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st, types[8], dup;

	MPI_Get_address(&r[0], &base);
	MPI_Get_address(&r[0].a, &d[0]);
	MPI_Get_address(&r[0].b, &d[1]);
	MPI_Get_address(&r[0].c, &d[2]);
	for (int i = 0; i < 3; i++)
		d[i] -= base;
	MPI_Type_create_struct(3, bl, d, t, &st);
	MPI_Type_commit(&st);
	MPI_Type_get_extent(st, &lb, &ext);
	LK_CHECK(ext == (MPI_Aint)sizeof(struct rec), "struct extent %ld", (long)ext);
	for (int i = 0; i < 5; i++) {
		r[i].a = i;
		r[i].b = i * 1.5;
		r[i].c = (char)('a' + i);
	}
	memset(g, 0, sizeof(g));
	xfer(st, 5, r, st, 5, g, "struct");
	if (lk_rank == 1)
		LK_CHECK(g[4].a == 4 && g[4].b == 6.0 && g[4].c == 'e', "struct values");
	MPI_Type_get_envelope(st, &ni, &na, &nt, &comb);
	LK_CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nt == 3, "struct envelope");
	MPI_Type_get_contents(st, 8, 8, 8, ints, addrs, types);
	LK_CHECK(ints[0] == 3 && addrs[1] == d[1] && types[2] == MPI_CHAR, "struct contents");
	MPI_Type_dup(st, &dup);
	MPI_Type_get_envelope(dup, &ni, &na, &nt, &comb);
	LK_CHECK(comb == MPI_COMBINER_DUP && nt == 1, "dup envelope");
	MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb);
	LK_CHECK(comb == MPI_COMBINER_NAMED, "named envelope");
	/* Get_elements on a partial struct message */
	if (lk_rank == 0) {
		MPI_Send(r, 3, MPI_INT, 1, 7, MPI_COMM_WORLD);
	} else if (lk_rank == 1) {
		MPI_Status s;
		int buf[3];
		MPI_Recv(buf, 3, MPI_INT, 0, 7, MPI_COMM_WORLD, &s);
		MPI_Get_elements(&s, MPI_INT, &cnt);
		LK_CHECK(cnt == 3, "get_elements %d", cnt);
	}
	MPI_Type_free(&dup);
	MPI_Type_free(&st);
}

static void test_pack(void)
{
	int v[10], w[10], pos = 0, sz;
	double x = 3.25, y = 0;
	char buf[256];

	for (int i = 0; i < 10; i++)
		v[i] = i * i;
	MPI_Pack(v, 10, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
	MPI_Pack(&x, 1, MPI_DOUBLE, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
	MPI_Pack_size(10, MPI_INT, MPI_COMM_WORLD, &sz);
	LK_CHECK(sz >= 40, "pack_size %d", sz);
	if (lk_rank == 0) {
		MPI_Send(buf, pos, MPI_PACKED, 1, 3, MPI_COMM_WORLD);
	} else if (lk_rank == 1) {
		MPI_Recv(buf, sizeof(buf), MPI_PACKED, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		pos = 0;
		MPI_Unpack(buf, sizeof(buf), &pos, w, 10, MPI_INT, MPI_COMM_WORLD);
		MPI_Unpack(buf, sizeof(buf), &pos, &y, 1, MPI_DOUBLE, MPI_COMM_WORLD);
		LK_CHECK(w[9] == 81 && y == 3.25, "unpack values");
	}
}

static void test_subarray(void)
{
	int a[6][8], got[12], sizes[2] = {6, 8}, sub[2] = {3, 4}, starts[2] = {2, 3};
	int ni, na, nt, comb, sz;
	MPI_Datatype t, f;
	MPI_Aint lb, ext;

	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 8; j++)
			a[i][j] = i * 100 + j;
	MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
	MPI_Type_commit(&t);
	MPI_Type_size(t, &sz);
	MPI_Type_get_extent(t, &lb, &ext);
	LK_CHECK(sz == 48 && lb == 0 && ext == (MPI_Aint)sizeof(a), "subarray size %d ext %ld", sz,
	         (long)ext);
	MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
	LK_CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nt == 1, "subarray envelope");
	xfer(t, 1, a, MPI_INT, 12, got, "subarray C");
	if (lk_rank == 1)
		LK_CHECK(got[0] == 203 && got[3] == 206 && got[4] == 303 && got[11] == 406,
		         "subarray C values %d %d %d", got[0], got[4], got[11]);
	/* Fortran order on the same memory: dims are (8 fastest, 6) */
	sizes[0] = 8, sizes[1] = 6, sub[0] = 4, sub[1] = 3, starts[0] = 3, starts[1] = 2;
	MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &f);
	MPI_Type_commit(&f);
	xfer(f, 1, a, MPI_INT, 12, got, "subarray Fortran");
	if (lk_rank == 1)
		LK_CHECK(got[0] == 203 && got[11] == 406, "subarray Fortran values");
	MPI_Type_free(&t);
	MPI_Type_free(&f);
}

/* Freeing a datatype and a communicator while a request still uses them is legal. */
static void test_free_pending(void)
{
	double src[400], dst[400];
	MPI_Datatype vec;
	MPI_Comm dup;
	MPI_Request r = MPI_REQUEST_NULL;

	for (int i = 0; i < 400; i++)
		src[i] = i, dst[i] = -1;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Type_vector(100, 1, 4, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	if (lk_rank == 0)
		MPI_Isend(src, 1, vec, 1, 4, dup, &r);
	else if (lk_rank == 1)
		MPI_Irecv(dst, 1, vec, 0, 4, dup, &r);
	MPI_Type_free(&vec);
	MPI_Comm_free(&dup);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	if (lk_rank == 1)
		LK_CHECK(dst[396] == 396 && dst[1] == -1, "vector after free %g", dst[396]);
}

/* Explicit bounds (MPI_LB/MPI_UB markers, MPI_Type_create_resized) bound every type built
 * from them, with no alignment padding (MPI-3.1 4.1.6-4.1.7); then the HLRS suite's "Ring
 * Send Bottom": N elements of struct{1 x T at &buf} sent from MPI_BOTTOM to the next rank. */
static MPI_Aint extent_of(MPI_Datatype t, MPI_Aint *lb)
{
	MPI_Aint l, e;

	MPI_Type_get_extent(t, &l, &e);
	if (lb)
		*lb = l;
	return e;
}

static void ring_bottom(MPI_Datatype t, int n, const char *what)
{
	MPI_Aint lb, ext = extent_of(t, &lb), addr;
	int sz, one = 1, to = (lk_rank + 1) % lk_size, from = (lk_rank + lk_size - 1) % lk_size;
	MPI_Datatype bt;
	char *sbuf, *rbuf, *want;

	MPI_Type_size(t, &sz);
	/* the buffer starts at the type's lb: data lies in [lb, lb + n * extent) */
	sbuf = calloc((size_t)(n * ext), 1);
	rbuf = calloc((size_t)(n * ext), 1);
	want = calloc((size_t)(n * ext), 1);
	char *pk = malloc((size_t)sz * (size_t)n);
	for (int i = 0; i < sz * n; i++)
		pk[i] = (char)(from * 31 + i + 1);
	int pos = 0; /* what the previous rank sends, laid out by t */
	MPI_Unpack(pk, sz * n, &pos, want - lb, n, t, MPI_COMM_SELF);
	for (int i = 0; i < sz * n; i++)
		pk[i] = (char)(lk_rank * 31 + i + 1);
	pos = 0;
	MPI_Unpack(pk, sz * n, &pos, sbuf - lb, n, t, MPI_COMM_SELF);
	MPI_Get_address(sbuf - lb, &addr);
	MPI_Type_create_struct(1, &one, &addr, &t, &bt);
	MPI_Type_commit(&bt);
	LK_CHECK(extent_of(bt, NULL) == ext, "%s: struct{1 x T at &buf} extent %ld, T's %ld", what,
	         (long)extent_of(bt, NULL), (long)ext);
	MPI_Sendrecv(MPI_BOTTOM, n, bt, to, 9, rbuf - lb, n, t, from, 9, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
	LK_CHECK(memcmp(rbuf, want, (size_t)(n * ext)) == 0,
	         "%s: ring from MPI_BOTTOM: data differs", what);
	MPI_Type_free(&bt);
	free(pk);
	free(sbuf);
	free(rbuf);
	free(want);
}

static void test_explicit_bounds(void)
{
	int bl2[2] = {1, 1}, one = 1, bl8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	MPI_Aint d2[2] = {0, 8}, zero = 0, lb;
	MPI_Aint d8[8] = {-17, -1, 0, 2, -9, 6, -17, 10};
	MPI_Datatype t2[2] = {MPI_DOUBLE, MPI_CHAR}, in, rs, outer, mix, smix, s2, s3, c3;
#ifndef OPEN_MPI
	MPI_Datatype t8[8] = {MPI_LB,   MPI_CHAR,  MPI_SHORT,  MPI_INT,
	                      MPI_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_UB};
#else /* its MPI-3 mpi.h has no MPI_LB/MPI_UB: the same bounds by resizing */
	MPI_Datatype t8[8] = {MPI_CHAR, MPI_CHAR,  MPI_SHORT,  MPI_INT,
	                      MPI_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_CHAR},
	             six;
#endif

	MPI_Type_create_struct(2, bl2, d2, t2, &in);
	LK_CHECK(extent_of(in, NULL) == 16, "struct{double; char}: padded to 16");
	MPI_Type_create_resized(in, 0, 9, &rs);
	MPI_Type_create_struct(1, &one, &zero, &rs, &outer);
	LK_CHECK(extent_of(outer, &lb) == 9 && lb == 0,
	         "struct{resized(struct{double; char}, 0, 9)}: extent %ld, want 9 (no padding)",
	         (long)extent_of(outer, NULL));
#ifndef OPEN_MPI
	MPI_Type_create_struct(8, bl8, d8, t8, &mix); /* the suite's MIX_LB_UB */
#else
	MPI_Type_create_struct(6, bl8 + 1, d8 + 1, t8 + 1, &six);
	MPI_Type_create_resized(six, -17, 27, &mix);
	MPI_Type_free(&six);
#endif
	MPI_Type_create_struct(1, &one, &zero, &mix, &smix);
	LK_CHECK(extent_of(mix, &lb) == 27 && lb == -17, "MIX_LB_UB: lb %ld extent %ld", (long)lb,
	         (long)extent_of(mix, NULL));
	LK_CHECK(extent_of(smix, &lb) == 27 && lb == -17, "struct{MIX_LB_UB}: lb %ld extent %ld",
	         (long)lb, (long)extent_of(smix, NULL));
	/* markers alone bound the struct, whatever else it holds (MPI-3.1 4.1.6; Open MPI 4.1
	 * agrees; MPICH 4.0 counts the other members too and pads: 24 and 32, so not under it) */
	MPI_Datatype ta[2] = {rs, MPI_CHAR}, tb[2] = {MPI_DOUBLE, rs};
	MPI_Aint da[2] = {0, 16}, db[2] = {0, 16};
	MPI_Type_create_struct(2, bl2, da, ta, &s2);
	MPI_Type_create_struct(2, bl2, db, tb, &s3);
#ifndef MPICH_VERSION
	LK_CHECK(extent_of(s2, &lb) == 9 && lb == 0, "struct{rs@0, char@16}: lb %ld extent %ld",
	         (long)lb, (long)extent_of(s2, NULL));
	LK_CHECK(extent_of(s3, &lb) == 9 && lb == 16, "struct{double@0, rs@16}: lb %ld extent %ld",
	         (long)lb, (long)extent_of(s3, NULL));
#endif
	MPI_Type_contiguous(3, rs, &c3);
	LK_CHECK(extent_of(c3, &lb) == 27 && lb == 0, "contiguous(3, rs): extent %ld",
	         (long)extent_of(c3, NULL));
	MPI_Type_commit(&rs);
	MPI_Type_commit(&mix);
	ring_bottom(rs, 5, "resized(struct{double; char}, 0, 9)");
	ring_bottom(mix, 5, "MIX_LB_UB");
	ring_bottom(MPI_DOUBLE, 5, "MPI_DOUBLE");
	MPI_Type_free(&in);
	MPI_Type_free(&rs);
	MPI_Type_free(&outer);
	MPI_Type_free(&mix);
	MPI_Type_free(&smix);
	MPI_Type_free(&s2);
	MPI_Type_free(&s3);
	MPI_Type_free(&c3);
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_dtype");
	if (lk_size < 2) {
		if (lk_rank == 0)
			printf("lk_dtype: needs 2 or more ranks\n");
		MPI_Finalize();
		return 1;
	}
	test_vector_indexed();
	test_struct();
	test_pack();
	test_subarray();
	test_free_pending();
	test_explicit_bounds();
	return lk_finish();
}
