/* tests/mpi/lk_coll.c: every collective over several counts and roots, IN_PLACE, loc and user ops.
 */
#include <string.h>

#include "lk_util.h"

static const int counts[] = {0, 1, 7, 1000, 70000};
#define NC ((int)(sizeof(counts) / sizeof(counts[0])))

static int v(int r, int i)
{
	return (r + 1) * 3 + i % 101;
}

/* Non-commutative: 2x2 integer matrix product on (a, b, c, d) quadruples, kept small mod 1000. */
/* cppcheck-suppress constParameter ; the MPI_User_function signature */
static void matmul(void *in, void *io, int *len, MPI_Datatype *t)
{
	int *a = in, *b = io;

	(void)t;
	for (int k = 0; k < *len; k++, a += 4, b += 4) {
		int r0 = (a[0] * b[0] + a[1] * b[2]) % 1000,
		    r1 = (a[0] * b[1] + a[1] * b[3]) % 1000;
		int r2 = (a[2] * b[0] + a[3] * b[2]) % 1000,
		    r3 = (a[2] * b[1] + a[3] * b[3]) % 1000;
		b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
	}
}

static void test_rooted(int n)
{
	int *s = malloc(sizeof(int) * (size_t)(n + 1)), *r = malloc(sizeof(int) * (size_t)(n + 1));
	int *all = malloc(sizeof(int) * (size_t)(n * lk_size + 1));
#ifdef LAMKIT_MPI
	int skip_inplace = 0;
#else
	int skip_inplace = n >= 1000;
#endif

	for (int root = 0; root<lk_size; root += lk_size> 2 ? lk_size - 1 : 1) {
		for (int i = 0; i < n; i++)
			r[i] = lk_rank == root ? v(root, i) : -1;
		MPI_Bcast(r, n, MPI_INT, root, MPI_COMM_WORLD);
		for (int i = 0; i < n; i++)
			LK_CHECK(r[i] == v(root, i), "bcast n=%d root=%d i=%d", n, root, i);
		for (int i = 0; i < n; i++)
			s[i] = v(lk_rank, i);
		MPI_Reduce(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
		for (int i = 0; i < n && lk_rank == root; i++)
			LK_CHECK(r[i] == lk_size * (lk_size + 1) / 2 * 3 + lk_size * (i % 101),
			         "reduce n=%d root=%d i=%d got %d", n, root, i, r[i]);
		if (skip_inplace) {
			/* MPICH 4.0.2 crashes on a large IN_PLACE reduce: not checked there */
		} else if (lk_rank == root) {
			memcpy(r, s, sizeof(int) * (size_t)n);
			MPI_Reduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
			for (int i = 0; i < n; i++)
				LK_CHECK(r[i] == v(lk_size - 1, i), "reduce in_place max n=%d", n);
		} else {
			MPI_Reduce(s, r, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
		}
		MPI_Gather(s, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
		for (int p = 0; p < lk_size && lk_rank == root; p++)
			for (int i = 0; i < n; i++)
				LK_CHECK(all[p * n + i] == v(p, i), "gather n=%d root=%d", n, root);
		for (int p = 0; p < lk_size && lk_rank == root; p++)
			for (int i = 0; i < n; i++)
				all[p * n + i] = v(p + 7, i);
		MPI_Scatter(all, n, MPI_INT, lk_rank == root ? MPI_IN_PLACE : r, n, MPI_INT, root,
		            MPI_COMM_WORLD);
		for (int i = 0; i < n && lk_rank != root; i++)
			LK_CHECK(r[i] == v(lk_rank + 7, i), "scatter n=%d root=%d", n, root);
	}
	free(s);
	free(r);
	free(all);
}

static void test_all(int n)
{
	int *s = malloc(sizeof(int) * (size_t)(n * lk_size + 1));
	int *r = malloc(sizeof(int) * (size_t)(n * lk_size + 1));
	int *cnt = malloc(sizeof(int) * (size_t)lk_size),
	    *dsp = malloc(sizeof(int) * (size_t)lk_size);

	for (int i = 0; i < n; i++)
		s[i] = v(lk_rank, i);
	MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < n; i++)
		LK_CHECK(r[i] == lk_size * (lk_size + 1) / 2 * 3 + lk_size * (i % 101),
		         "allreduce n=%d i=%d got %d", n, i, r[i]);
	memcpy(r, s, sizeof(int) * (size_t)n);
	MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	for (int i = 0; i < n; i++)
		LK_CHECK(r[i] == v(0, i), "allreduce in_place min n=%d", n);
	MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
	for (int p = 0; p < lk_size; p++)
		for (int i = 0; i < n; i++)
			LK_CHECK(r[p * n + i] == v(p, i), "allgather n=%d", n);
	/* v-variants: rank p contributes p % 3 * n / 2 elements, packed in reverse order */
	for (int p = 0, off = 0; p < lk_size; p++) {
		int q = lk_size - 1 - p;
		cnt[q] = q % 3 * n / 2;
		dsp[q] = off;
		off += cnt[q];
	}
	MPI_Allgatherv(s, cnt[lk_rank], MPI_INT, r, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
	for (int p = 0; p < lk_size; p++)
		for (int i = 0; i < cnt[p]; i++)
			LK_CHECK(r[dsp[p] + i] == v(p, i), "allgatherv n=%d", n);
	MPI_Gatherv(s, cnt[lk_rank], MPI_INT, r, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD);
	for (int p = 0; p < lk_size && lk_rank == 0; p++)
		for (int i = 0; i < cnt[p]; i++)
			LK_CHECK(r[dsp[p] + i] == v(p, i), "gatherv n=%d", n);
	for (int p = 0; p < lk_size; p++)
		for (int i = 0; i < n; i++)
			s[p * n + i] = lk_rank * 1000 + p * 10 + i % 7;
	MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
	for (int p = 0; p < lk_size; p++)
		for (int i = 0; i < n; i++)
			LK_CHECK(r[p * n + i] == p * 1000 + lk_rank * 10 + i % 7, "alltoall n=%d",
			         n);
	MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, n, MPI_INT, MPI_COMM_WORLD);
	for (int p = 0; p < lk_size; p++)
		for (int i = 0; i < n; i++)
			LK_CHECK(s[p * n + i] == p * 1000 + lk_rank * 10 + i % 7,
			         "alltoall in_place");
	free(s);
	free(r);
	free(cnt);
	free(dsp);
}

static void test_misc(void)
{
	struct {
		double v;
		int k;
	} di[3], dr[3];
	int x[4] = {lk_rank + 1, 1, 0, 1}, sc;
	MPI_Op mm;

	for (int i = 0; i < 3; i++) {
		di[i].v = (lk_rank * 7 + i * 3) % 5;
		di[i].k = lk_rank;
	}
	MPI_Allreduce(di, dr, 3, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
	for (int i = 0; i < 3; i++) {
		double best = 1e9;
		int who = -1;
		for (int p = 0; p < lk_size; p++)
			if ((p * 7 + i * 3) % 5 < best)
				best = (p * 7 + i * 3) % 5, who = p;
		LK_CHECK(dr[i].v == best && dr[i].k == who, "minloc %d", i);
	}
	MPI_Allreduce(di, dr, 3, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
	for (int i = 0; i < 3; i++) {
		double best = -1;
		int who = -1;
		for (int p = 0; p < lk_size; p++)
			if ((p * 7 + i * 3) % 5 > best)
				best = (p * 7 + i * 3) % 5, who = p;
		LK_CHECK(dr[i].v == best && dr[i].k == who, "maxloc %d", i);
	}
	/* user non-commutative op: product of [[r+1,1],[0,1]] in rank order */
	MPI_Op_create(matmul, 0, &mm);
	{
		MPI_Datatype quad;
		int want[4] = {1, 0, 0, 1}, y[4];
		MPI_Type_contiguous(4, MPI_INT, &quad);
		MPI_Type_commit(&quad);
		MPI_Allreduce(x, y, 1, quad, mm, MPI_COMM_WORLD);
		for (int p = 0; p < lk_size; p++) {
			int a[4] = {p + 1, 1, 0, 1}, len = 1;
			matmul(want, a, &len, NULL);
			memcpy(want, a, sizeof(a));
		}
		for (int i = 0; i < 4; i++)
			LK_CHECK(y[i] == want[i], "noncommutative allreduce [%d] %d want %d", i,
			         y[i], want[i]);
		memset(y, 0, sizeof(y));
		MPI_Reduce(x, y, 1, quad, mm, lk_size - 1, MPI_COMM_WORLD);
		for (int i = 0; i < 4 && lk_rank == lk_size - 1; i++)
			LK_CHECK(y[i] == want[i], "noncommutative reduce [%d] %d want %d", i, y[i],
			         want[i]);
		MPI_Type_free(&quad);
	}
	MPI_Op_free(&mm);
	/* scans */
	MPI_Scan(&x[0], &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(sc == (lk_rank + 1) * (lk_rank + 2) / 2, "scan %d", sc);
	MPI_Exscan(&x[0], &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(lk_rank == 0 || sc == lk_rank * (lk_rank + 1) / 2, "exscan %d", sc);
	/* reduce_scatter(_block) */
	{
		int *in = malloc(sizeof(int) * 3 * (size_t)lk_size), blk[3], rs[3], cnts[64];
		for (int i = 0; i < 3 * lk_size; i++)
			in[i] = i + lk_rank;
		MPI_Reduce_scatter_block(in, blk, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		for (int i = 0; i < 3; i++)
			LK_CHECK(blk[i] ==
			             lk_size * (3 * lk_rank + i) + lk_size * (lk_size - 1) / 2,
			         "reduce_scatter_block %d", blk[i]);
		for (int p = 0; p < lk_size && p < 64; p++)
			cnts[p] = p % 2 ? 3 : 0;
		MPI_Reduce_scatter(in, rs, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		if (lk_rank % 2) {
			int off = 3 * (lk_rank / 2);
			LK_CHECK(rs[0] == lk_size * off + lk_size * (lk_size - 1) / 2,
			         "reduce_scatter");
		}
		free(in);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* A commutative user op, x + y, on the strided type of test_reduce_large: a double every 16
 * bytes (user ops go through the same segments). */
/* cppcheck-suppress constParameter ; the MPI_User_function signature */
static void dsum(void *in, void *io, int *len, MPI_Datatype *t)
{
	const double *a = in;
	double *b = io;

	(void)t;
	for (int k = 0; k < *len; k++)
		b[2 * k] += a[2 * k];
}

/* Large reduces, where lamkit cuts the vector: Rabenseifner's (64-128 KiB, power-of-two sizes)
 * and the pipelined tree (from 128 KiB, segments of 256 KiB: 300000 ints are 5 of them, more
 * than the receives posted ahead). Every root, IN_PLACE at the root, a strided datatype (one
 * double every 16 bytes) and a commutative user op. */
static void test_reduce_large(void)
{
	static const int ns[] = {20000, 300000};
	MPI_Datatype strided;
	MPI_Op op;
#ifdef LAMKIT_MPI
	const int skip_inplace = 0;
#else
	const int skip_inplace = 1;
#endif

	MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &strided);
	MPI_Type_commit(&strided);
	MPI_Op_create(dsum, 1, &op);
	for (int k = 0; k < 2; k++) {
		int n = ns[k], *s = malloc(sizeof(int) * (size_t)n),
		    *r = malloc(sizeof(int) * (size_t)n);
		double *ds = malloc(16 * (size_t)n), *dr = malloc(16 * (size_t)n);

		for (int root = 0; root < lk_size; root++) {
			for (int i = 0; i < n; i++)
				s[i] = v(lk_rank, i);
			MPI_Reduce(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
			for (int i = 0; i < n && lk_rank == root; i++)
				LK_CHECK(r[i] ==
				             lk_size * (lk_size + 1) / 2 * 3 + lk_size * (i % 101),
				         "large reduce n=%d root=%d i=%d got %d", n, root, i, r[i]);
			if (skip_inplace) {
				/* MPICH 4.0.2 crashes on it, as in test_rooted */
			} else if (lk_rank == root) {
				memcpy(r, s, sizeof(int) * (size_t)n);
				MPI_Reduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, root,
				           MPI_COMM_WORLD);
				for (int i = 0; i < n; i++)
					LK_CHECK(r[i] == v(lk_size - 1, i),
					         "large reduce in_place max n=%d root=%d i=%d", n,
					         root, i);
			} else {
				MPI_Reduce(s, r, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
			}
			for (int i = 0; i < 2 * n; i++) {
				ds[i] = i % 2 ? -1.0 : (double)v(lk_rank, i / 2);
				dr[i] = -2.0;
			}
			MPI_Reduce(ds, dr, n, strided, op, root, MPI_COMM_WORLD);
			for (int i = 0; i < n && lk_rank == root; i++)
				LK_CHECK(dr[2 * i] == lk_size * (lk_size + 1) / 2 * 3 +
				                          lk_size * (i % 101) &&
				             dr[2 * i + 1] == -2.0,
				         "large strided user-op reduce n=%d root=%d i=%d got %g %g",
				         n, root, i, dr[2 * i], dr[2 * i + 1]);
		}
		free(s);
		free(r);
		free(ds);
		free(dr);
	}
	MPI_Op_free(&op);
	MPI_Type_free(&strided);
}

/* The collectives of a communicator on one node that go through its shared segment (barrier,
 * small allreduce, allgather, alltoall) mixed call after call with the ones that stay on
 * messages (bcast and reduce, whose root or leaves run ahead), on the world and on a half: every
 * call's result checked. Then derived types and MPI_IN_PLACE through the slots, a sum of
 * doubles whose bits must be the same on every rank, and a part just over a slot (8 KiB). */
static void test_mixed_on(MPI_Comm comm, int iters)
{
	int me, n, a[64], b[64], g[64 * 4], t[64 * 4];

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	for (int it = 0; it < iters; it++) {
		int root = it % n, x = me + it, y = -1;
		MPI_Bcast(&x, 1, MPI_INT, root, comm);
		LK_CHECK(x == root + it, "mixed %d: bcast %d", it, x);
		x = me * it;
		MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, root, comm);
		LK_CHECK(me != root || y == it * n * (n - 1) / 2, "mixed %d: reduce %d", it, y);
		for (int i = 0; i < 4; i++)
			a[i] = me + i + it;
		MPI_Allreduce(a, b, 4, MPI_INT, MPI_MAX, comm);
		for (int i = 0; i < 4; i++)
			LK_CHECK(b[i] == n - 1 + i + it, "mixed %d: allreduce [%d] %d", it, i,
			         b[i]);
		if (it % 3 == 0)
			MPI_Barrier(comm);
		a[0] = me * 1000 + it;
		MPI_Allgather(a, 1, MPI_INT, g, 1, MPI_INT, comm);
		for (int r = 0; r < n; r++)
			LK_CHECK(g[r] == r * 1000 + it, "mixed %d: allgather [%d] %d", it, r, g[r]);
		for (int r = 0; r < n; r++)
			t[r] = me * 100 + r + it;
		MPI_Alltoall(t, 1, MPI_INT, g, 1, MPI_INT, comm);
		for (int r = 0; r < n; r++)
			LK_CHECK(g[r] == r * 100 + me + it, "mixed %d: alltoall [%d] %d", it, r,
			         g[r]);
	}
}

/* Blocks of 32-64 KiB: past the usual eager limit of shared memory, sent eagerly by allgather and
 * alltoall when the node has more ranks than CPUs (mpii_coll_eager), read by the receiver
 * otherwise; bcast's root starts every child's send at once. Several calls in a row, so that
 * blocks of later calls arrive before their receives are posted. */
static void test_mid(void)
{
	static const int ints[] = {9000, 16384};
	int n = lk_size, me = lk_rank;

	for (int k = 0; k < 2; k++) {
		int m = ints[k];
		int *sb = malloc(sizeof(int) * (size_t)m * (size_t)n);
		int *rb = malloc(sizeof(int) * (size_t)m * (size_t)n);
		for (int it = 0; it < 4; it++) {
			for (int i = 0; i < m; i++)
				sb[i] = me * 1000003 + i * 7 + it;
			MPI_Allgather(sb, m, MPI_INT, rb, m, MPI_INT, MPI_COMM_WORLD);
			for (int r = 0; r < n; r++)
				LK_CHECK(rb[(size_t)r * m] == r * 1000003 + it &&
				             rb[(size_t)r * m + m - 1] ==
				                 r * 1000003 + (m - 1) * 7 + it,
				         "allgather of %d ints, call %d: block %d", m, it, r);
			for (int r = 0; r < n; r++)
				for (int i = 0; i < m; i++)
					sb[(size_t)r * m + i] = (me * 64 + r) * 100000 + i + it;
			MPI_Alltoall(sb, m, MPI_INT, rb, m, MPI_INT, MPI_COMM_WORLD);
			for (int r = 0; r < n; r++)
				LK_CHECK(rb[(size_t)r * m] == (r * 64 + me) * 100000 + it &&
				             rb[(size_t)r * m + m - 1] ==
				                 (r * 64 + me) * 100000 + m - 1 + it,
				         "alltoall of %d ints, call %d: block %d", m, it, r);
			int root = it % n;
			for (int i = 0; i < m; i++)
				sb[i] = me == root ? root * 31 + i + it : -1;
			MPI_Bcast(sb, m, MPI_INT, root, MPI_COMM_WORLD);
			LK_CHECK(sb[0] == root * 31 + it && sb[m - 1] == root * 31 + m - 1 + it,
			         "bcast of %d ints from %d, call %d: %d %d", m, root, it, sb[0],
			         sb[m - 1]);
		}
		free(sb);
		free(rb);
	}
}

static void test_shm(void)
{
	MPI_Comm half;
	MPI_Datatype vec, every2;
	int n = lk_size, me = lk_rank;

	if (n > 64)
		return;
	test_mixed_on(MPI_COMM_WORLD, 64);
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
	test_mixed_on(half, 32);
	MPI_Comm_free(&half);
	/* an allgather in place into every second int, and an alltoall from a strided send */
	MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
	MPI_Type_create_resized(vec, 0, 2 * (MPI_Aint)sizeof(int), &every2);
	MPI_Type_commit(&every2);
	{
		int r2[128], s2[128], out[64];
		for (int i = 0; i < 2 * n; i++)
			r2[i] = -1;
		r2[2 * me] = 7 * me;
		MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r2, 1, every2, MPI_COMM_WORLD);
		for (int r = 0; r < n; r++)
			LK_CHECK(r2[2 * r] == 7 * r && r2[2 * r + 1] == -1,
			         "allgather in place, strided [%d] %d %d", r, r2[2 * r],
			         r2[2 * r + 1]);
		for (int r = 0; r < n; r++)
			s2[2 * r] = me * 10 + r, s2[2 * r + 1] = -5;
		MPI_Alltoall(s2, 1, every2, out, 1, MPI_INT, MPI_COMM_WORLD);
		for (int r = 0; r < n; r++)
			LK_CHECK(out[r] == r * 10 + me, "alltoall strided [%d] %d", r, out[r]);
	}
	MPI_Type_free(&every2);
	MPI_Type_free(&vec);
	/* a floating-point sum whose value depends on the order: the same bits on every rank */
	{
		double d[3] = {me % 2 ? 1e16 : -1e16, 1.0 / (me + 3), me + 0.1}, sum[3];
		double all[64 * 3];
		MPI_Allreduce(d, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allgather(sum, 3 * (int)sizeof(double), MPI_BYTE, all, 3 * (int)sizeof(double),
		              MPI_BYTE, MPI_COMM_WORLD);
		for (int r = 0; r < n; r++)
			LK_CHECK(memcmp(&all[3 * r], sum, sizeof(sum)) == 0,
			         "allreduce of doubles: rank %d's bits differ from mine", r);
	}
	/* a part of 8 KiB + 1 per rank: past the slot, on messages */
	{
		size_t part = 8193;
		char *sb = malloc(part), *rb = malloc(part * (size_t)n);
		memset(sb, 'a' + me, part);
		MPI_Allgather(sb, (int)part, MPI_BYTE, rb, (int)part, MPI_BYTE, MPI_COMM_WORLD);
		for (int r = 0; r < n; r++)
			LK_CHECK(rb[(size_t)r * part] == 'a' + r &&
			             rb[(size_t)r * part + part - 1] == 'a' + r,
			         "allgather of 8193 B [%d]", r);
		free(sb);
		free(rb);
	}
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_coll");
	for (int k = 0; k < NC; k++) {
		test_rooted(counts[k]);
		test_all(counts[k]);
	}
	test_misc();
	test_reduce_large();
	test_mid();
	test_shm();
	return lk_finish();
}
