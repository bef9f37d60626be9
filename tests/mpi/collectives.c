/* tests/mpi/collectives.c: check results of every MPI-1/2 collective over several counts and roots.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * argv: [maxcount] (default 4099): element counts tried are 0 1 3 17 256 4099 (those <= maxcount).
 * Rank 0 prints "collectives: OK size=N checks=K" and every rank exits 0; on any wrong value the
 * offending rank prints "collectives: rank R: <what> ..." to stderr, rank 0 prints
 * "collectives: FAIL size=N errors=E" and every rank exits 1.
 */

static int g_rank, g_size;
static long g_errors, g_checks;

#define NCOUNTS 6
static const int k_counts[NCOUNTS] = {0, 1, 3, 17, 256, 4099};

/* Record one comparison; print the first few mismatches of this rank. */
static void check(const char *what, int count, int root, long idx, long got, long want)
{
	g_checks++;
	if (got == want)
		return;
	if (g_errors < 10)
		fprintf(stderr,
		        "collectives: rank %d: %s count=%d root=%d idx=%ld got %ld want %ld\n",
		        g_rank, what, count, root, idx, got, want);
	g_errors++;
}

/* Value contributed by rank r at element i (small so that sums over many ranks fit an int). */
static int val(int r, long i)
{
	return (r + 1) * (int)(i % 97 + 1);
}

/* Value owned by the root for destination rank r, element i. */
static int pat(int root, int r, long i)
{
	return root * 100000 + r * 1000 + (int)(i % 1000);
}

static int *xalloc(long n)
{
	int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
	if (!p) {
		fprintf(stderr, "collectives: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

/* Fill n ints with a sentinel. */
static void fill(int *p, long n, int v)
{
	for (long i = 0; i < n; i++)
		p[i] = v;
}

/* Variable per-rank counts used by the v-variants: base count plus 0..2 depending on rank. */
static int vcount(int r, int count)
{
	return count == 0 ? 0 : count + (r % 3);
}

static void test_bcast(int count, int root)
{
	int *b = xalloc(count);
	for (int i = 0; i < count; i++)
		b[i] = g_rank == root ? pat(root, 0, i) : -1;
	MPI_Bcast(b, count, MPI_INT, root, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++)
		check("bcast", count, root, i, b[i], pat(root, 0, i));
	free(b);
}

static void test_reduce(int count, int root)
{
	int *s = xalloc(count), *r = xalloc(count);
	long tri = (long)g_size * (g_size + 1) / 2;
	for (int i = 0; i < count; i++)
		s[i] = val(g_rank, i);
	fill(r, count, -1);
	MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
	if (g_rank == root)
		for (int i = 0; i < count; i++)
			check("reduce-sum", count, root, i, r[i], tri * (i % 97 + 1));
	fill(r, count, -1);
	MPI_Reduce(s, r, count, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
	if (g_rank == root)
		for (int i = 0; i < count; i++)
			check("reduce-max", count, root, i, r[i], val(g_size - 1, i));
	free(s);
	free(r);
}

static void test_allreduce(int count)
{
	int *s = xalloc(count), *r = xalloc(count);
	double *ds = malloc((size_t)(count + 1) * sizeof(double));
	double *dr = malloc((size_t)(count + 1) * sizeof(double));
	long tri = (long)g_size * (g_size + 1) / 2;
	if (!ds || !dr)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < count; i++) {
		s[i] = val(g_rank, i);
		ds[i] = 0.5 * val(g_rank, i);
	}
	MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++)
		check("allreduce-sum", count, -1, i, r[i], tri * (i % 97 + 1));
	MPI_Allreduce(s, r, count, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++)
		check("allreduce-min", count, -1, i, r[i], val(0, i));
	MPI_Allreduce(ds, dr, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++)
		check("allreduce-dsum", count, -1, i, (long)(dr[i] * 2.0 + 0.5),
		      tri * (i % 97 + 1));
	for (int i = 0; i < count; i++)
		s[i] = 1 << (g_rank % 31);
	MPI_Allreduce(s, r, count, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
	{
		long want = 0;
		for (int q = 0; q < g_size; q++)
			want |= 1L << (q % 31);
		for (int i = 0; i < count; i++)
			check("allreduce-bor", count, -1, i, r[i], want);
	}
	/* MPI_IN_PLACE */
	for (int i = 0; i < count; i++)
		r[i] = val(g_rank, i);
	MPI_Allreduce(MPI_IN_PLACE, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++)
		check("allreduce-inplace", count, -1, i, r[i], tri * (i % 97 + 1));
	free(s);
	free(r);
	free(ds);
	free(dr);
}

static void test_gather(int count, int root)
{
	int *s = xalloc(count), *r = xalloc((long)count * g_size);
	for (int i = 0; i < count; i++)
		s[i] = pat(g_rank, root, i);
	fill(r, (long)count * g_size, -1);
	MPI_Gather(s, count, MPI_INT, r, count, MPI_INT, root, MPI_COMM_WORLD);
	if (g_rank == root)
		for (int q = 0; q < g_size; q++)
			for (int i = 0; i < count; i++)
				check("gather", count, root, (long)q * count + i,
				      r[(long)q * count + i], pat(q, root, i));
	free(s);
	free(r);
}

/* Counts and displacements (with a gap of one element between blocks) for the v-variants. */
static long layout(int count, int *cnt, int *dsp)
{
	long off = 0;
	for (int q = 0; q < g_size; q++) {
		cnt[q] = vcount(q, count);
		dsp[q] = (int)off;
		off += cnt[q] + 1;
	}
	return off;
}

static void test_gatherv(int count, int root)
{
	int *cnt = xalloc(g_size), *dsp = xalloc(g_size);
	long total = layout(count, cnt, dsp);
	int mine = vcount(g_rank, count);
	int *s = xalloc(mine), *r = xalloc(total);
	for (int i = 0; i < mine; i++)
		s[i] = pat(g_rank, root, i);
	fill(r, total, -7);
	MPI_Gatherv(s, mine, MPI_INT, r, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD);
	if (g_rank == root)
		for (int q = 0; q < g_size; q++) {
			for (int i = 0; i < cnt[q]; i++)
				check("gatherv", count, root, dsp[q] + i, r[dsp[q] + i],
				      pat(q, root, i));
			check("gatherv-gap", count, root, dsp[q] + cnt[q], r[dsp[q] + cnt[q]], -7);
		}
	free(s);
	free(r);
	free(cnt);
	free(dsp);
}

static void test_scatter(int count, int root)
{
	int *s = xalloc((long)count * g_size), *r = xalloc(count);
	if (g_rank == root)
		for (int q = 0; q < g_size; q++)
			for (int i = 0; i < count; i++)
				s[(long)q * count + i] = pat(root, q, i);
	fill(r, count, -1);
	MPI_Scatter(s, count, MPI_INT, r, count, MPI_INT, root, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++)
		check("scatter", count, root, i, r[i], pat(root, g_rank, i));
	free(s);
	free(r);
}

static void test_scatterv(int count, int root)
{
	int *cnt = xalloc(g_size), *dsp = xalloc(g_size);
	long total = layout(count, cnt, dsp);
	int mine = vcount(g_rank, count);
	int *s = xalloc(total), *r = xalloc(mine + 1);
	if (g_rank == root)
		for (int q = 0; q < g_size; q++)
			for (int i = 0; i < cnt[q]; i++)
				s[dsp[q] + i] = pat(root, q, i);
	fill(r, mine + 1, -7);
	MPI_Scatterv(s, cnt, dsp, MPI_INT, r, mine, MPI_INT, root, MPI_COMM_WORLD);
	for (int i = 0; i < mine; i++)
		check("scatterv", count, root, i, r[i], pat(root, g_rank, i));
	check("scatterv-tail", count, root, mine, r[mine], -7);
	free(s);
	free(r);
	free(cnt);
	free(dsp);
}

static void test_allgather(int count)
{
	int *s = xalloc(count), *r = xalloc((long)count * g_size);
	for (int i = 0; i < count; i++)
		s[i] = pat(g_rank, 0, i);
	fill(r, (long)count * g_size, -1);
	MPI_Allgather(s, count, MPI_INT, r, count, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < g_size; q++)
		for (int i = 0; i < count; i++)
			check("allgather", count, -1, (long)q * count + i, r[(long)q * count + i],
			      pat(q, 0, i));
	free(s);
	free(r);
}

static void test_allgatherv(int count)
{
	int *cnt = xalloc(g_size), *dsp = xalloc(g_size);
	long total = layout(count, cnt, dsp);
	int mine = vcount(g_rank, count);
	int *s = xalloc(mine), *r = xalloc(total);
	for (int i = 0; i < mine; i++)
		s[i] = pat(g_rank, 1, i);
	fill(r, total, -7);
	MPI_Allgatherv(s, mine, MPI_INT, r, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < g_size; q++) {
		for (int i = 0; i < cnt[q]; i++)
			check("allgatherv", count, -1, dsp[q] + i, r[dsp[q] + i], pat(q, 1, i));
		check("allgatherv-gap", count, -1, dsp[q] + cnt[q], r[dsp[q] + cnt[q]], -7);
	}
	free(s);
	free(r);
	free(cnt);
	free(dsp);
}

/* Element i sent from rank src to rank dst by the all-to-all tests. */
static int a2a(int src, int dst, long i)
{
	return (src % 2048) * (1 << 20) + (dst % 1024) * (1 << 10) + (int)(i % 1024);
}

static void test_alltoall(int count)
{
	long n = (long)count * g_size;
	int *s = xalloc(n), *r = xalloc(n);
	for (int q = 0; q < g_size; q++)
		for (int i = 0; i < count; i++)
			s[(long)q * count + i] = a2a(g_rank, q, i);
	fill(r, n, -1);
	MPI_Alltoall(s, count, MPI_INT, r, count, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < g_size; q++)
		for (int i = 0; i < count; i++)
			check("alltoall", count, -1, (long)q * count + i, r[(long)q * count + i],
			      a2a(q, g_rank, i));
	free(s);
	free(r);
}

/* Count sent from src to dst by alltoallv. */
static int a2av_count(int src, int dst, int count)
{
	return count == 0 ? 0 : count + (src + 2 * dst) % 3;
}

static void test_alltoallv(int count)
{
	int *sc = xalloc(g_size), *sd = xalloc(g_size), *rc = xalloc(g_size), *rd = xalloc(g_size);
	long soff = 0, roff = 0;
	for (int q = 0; q < g_size; q++) {
		sc[q] = a2av_count(g_rank, q, count);
		sd[q] = (int)soff;
		soff += sc[q];
		rc[q] = a2av_count(q, g_rank, count);
		rd[q] = (int)roff;
		roff += rc[q] + 1;
	}
	int *s = xalloc(soff), *r = xalloc(roff);
	for (int q = 0; q < g_size; q++)
		for (int i = 0; i < sc[q]; i++)
			s[sd[q] + i] = a2a(g_rank, q, i);
	fill(r, roff, -7);
	MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < g_size; q++) {
		for (int i = 0; i < rc[q]; i++)
			check("alltoallv", count, -1, rd[q] + i, r[rd[q] + i], a2a(q, g_rank, i));
		check("alltoallv-gap", count, -1, rd[q] + rc[q], r[rd[q] + rc[q]], -7);
	}
	free(s);
	free(r);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
}

static void test_reduce_scatter(int count)
{
	int *rc = xalloc(g_size);
	long total = 0, first = 0;
	for (int q = 0; q < g_size; q++) {
		rc[q] = vcount(q, count);
		if (q < g_rank)
			first += rc[q];
		total += rc[q];
	}
	int *s = xalloc(total), *r = xalloc(rc[g_rank] + 1);
	long tri = (long)g_size * (g_size + 1) / 2;
	for (long i = 0; i < total; i++)
		s[i] = val(g_rank, i);
	fill(r, rc[g_rank] + 1, -7);
	MPI_Reduce_scatter(s, r, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < rc[g_rank]; i++)
		check("reduce_scatter", count, -1, i, r[i], tri * ((first + i) % 97 + 1));
	check("reduce_scatter-tail", count, -1, rc[g_rank], r[rc[g_rank]], -7);
	free(s);
	free(r);
	free(rc);
}

static void test_scan(int count)
{
	int *s = xalloc(count), *r = xalloc(count);
	for (int i = 0; i < count; i++)
		s[i] = val(g_rank, i);
	fill(r, count, -1);
	MPI_Scan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	long upto = (long)(g_rank + 1) * (g_rank + 2) / 2;
	for (int i = 0; i < count; i++)
		check("scan", count, -1, i, r[i], upto * (i % 97 + 1));
	fill(r, count, -1);
	MPI_Exscan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	long before = (long)g_rank * (g_rank + 1) / 2;
	if (g_rank > 0) /* rank 0's exscan result is undefined */
		for (int i = 0; i < count; i++)
			check("exscan", count, -1, i, r[i], before * (i % 97 + 1));
	free(s);
	free(r);
}

struct pair {
	int v, k;
};

static void test_minmaxloc(int count)
{
	struct pair *s = malloc((size_t)(count + 1) * sizeof(*s));
	struct pair *mn = malloc((size_t)(count + 1) * sizeof(*s));
	struct pair *mx = malloc((size_t)(count + 1) * sizeof(*s));
	if (!s || !mn || !mx)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < count; i++) {
		s[i].v = (g_rank * 37 + i) % 11; /* many ties: lowest index must win */
		s[i].k = g_rank;
	}
	MPI_Allreduce(s, mn, count, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
	MPI_Reduce(s, mx, count, MPI_2INT, MPI_MAXLOC, 0, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++) {
		int minv = 1 << 30, mink = -1, maxv = -1, maxk = -1;
		for (int q = 0; q < g_size; q++) {
			int v = (q * 37 + i) % 11;
			if (v < minv)
				minv = v, mink = q;
			if (v > maxv)
				maxv = v, maxk = q;
		}
		check("minloc-val", count, -1, i, mn[i].v, minv);
		check("minloc-idx", count, -1, i, mn[i].k, mink);
		if (g_rank == 0) {
			check("maxloc-val", count, 0, i, mx[i].v, maxv);
			check("maxloc-idx", count, 0, i, mx[i].k, maxk);
		}
	}
	free(s);
	free(mn);
	free(mx);
}

/* Non-commutative user op on pairs (a,b) = affine maps x -> a*x+b mod P, composed in rank order. */
#define AFF_P 65521L
/* cppcheck-suppress constParameter ; the MPI_User_function signature is fixed */
static void affine_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	struct pair *x = in, *y = inout;
	(void)dt;
	for (int i = 0; i < *len; i++) {
		long a = ((long)x[i].v * y[i].v) % AFF_P;
		long b = ((long)y[i].v * x[i].k + y[i].k) % AFF_P;
		y[i].v = (int)a;
		y[i].k = (int)b;
	}
}

static void test_userop(int count, int root)
{
	MPI_Op op;
	struct pair *s = malloc((size_t)(count + 1) * sizeof(*s));
	struct pair *r = malloc((size_t)(count + 1) * sizeof(*s));
	if (!s || !r)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Op_create(affine_op, 0, &op);
	for (int i = 0; i < count; i++) {
		s[i].v = g_rank + 2;
		s[i].k = g_rank * 3 + 1 + i;
	}
	MPI_Reduce(s, r, count, MPI_2INT, op, root, MPI_COMM_WORLD);
	if (g_rank == root)
		for (int i = 0; i < count; i++) {
			long a = 1, b = 0;
			for (int q = 0; q < g_size;
			     q++) { /* apply rank q's map after the previous ones */
				long qa = q + 2, qb = q * 3 + 1 + i;
				a = (a * qa) % AFF_P;
				b = (qa * b + qb) % AFF_P;
			}
			check("userop-a", count, root, i, r[i].v, a);
			check("userop-b", count, root, i, r[i].k, b);
		}
	MPI_Op_free(&op);
	free(s);
	free(r);
}

int main(int argc, char **argv)
{
	int maxcount = 4099, roots[3];
	long errs = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_size);
	if (argc > 1)
		maxcount = atoi(argv[1]);
	roots[0] = 0;
	roots[1] = g_size - 1;
	roots[2] = g_size / 2;
	for (int b = 0; b < 5; b++)
		MPI_Barrier(MPI_COMM_WORLD);
	for (int c = 0; c < NCOUNTS; c++) {
		int count = k_counts[c];
		if (count > maxcount)
			continue;
		for (int k = 0; k < 3; k++) {
			int root = roots[k];
			test_bcast(count, root);
			test_reduce(count, root);
			test_gather(count, root);
			test_gatherv(count, root);
			test_scatter(count, root);
			test_scatterv(count, root);
			test_userop(count, root);
		}
		test_allreduce(count);
		test_allgather(count);
		test_allgatherv(count);
		test_alltoall(count);
		test_alltoallv(count);
		test_reduce_scatter(count);
		test_scan(count);
		test_minmaxloc(count);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Allreduce(&g_errors, &errs, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	long checks = 0;
	MPI_Reduce(&g_checks, &checks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (g_rank == 0) {
		if (errs)
			printf("collectives: FAIL size=%d errors=%ld\n", g_size, errs);
		else
			printf("collectives: OK size=%d checks=%ld\n", g_size, checks);
		fflush(stdout);
	}
	MPI_Finalize();
	return errs ? 1 : 0;
}
