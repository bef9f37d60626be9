/* tests/mpi/lk_inter.c: intercommunicators: every collective (MPI_ROOT/MPI_PROC_NULL roots),
 * dup, merge, split and create on them. Needs 2 or more ranks. */
#include <string.h>

#include "lk_util.h"

static MPI_Comm ic;
static int ingrp_a, lr, ln, rn; /* member of the even group; local rank/size; remote size */

/* Job rank of remote rank r: group A holds the even job ranks, group B the odd ones. */
static int wrem(int r)
{
	return ingrp_a ? 2 * r + 1 : 2 * r;
}

static void test_rooted(void)
{
	int buf[4], root, big[64], counts[32], displs[32], sum, want;

	/* bcast from the last rank of A, then from rank 0 of B */
	for (int pass = 0; pass < 2; pass++) {
		int rootgrp_a = pass == 0, rootrank = pass == 0 ? (lk_size + 1) / 2 - 1 : 0;
		if (ingrp_a == rootgrp_a)
			root = lr == rootrank ? MPI_ROOT : MPI_PROC_NULL;
		else
			root = rootrank;
		for (int i = 0; i < 4; i++)
			buf[i] = root == MPI_ROOT ? 100 * pass + i : -1;
		MPI_Bcast(buf, 4, MPI_INT, root, ic);
		if (root >= 0)
			for (int i = 0; i < 4; i++)
				LK_CHECK(buf[i] == 100 * pass + i, "bcast pass %d [%d]=%d", pass, i,
				         buf[i]);
		if (root == MPI_PROC_NULL)
			LK_CHECK(buf[0] == -1, "bcast touched a PROC_NULL buffer");
	}
	/* reduce to rank 0 of A: sum of B's job ranks (+ i) */
	root = ingrp_a ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
	for (int i = 0; i < 3; i++)
		buf[i] = lk_rank + i;
	int out[3] = {0, 0, 0};
	MPI_Reduce(buf, out, 3, MPI_INT, MPI_SUM, root, ic);
	if (root == MPI_ROOT) {
		sum = 0;
		for (int r = 0; r < rn; r++)
			sum += wrem(r);
		for (int i = 0; i < 3; i++)
			LK_CHECK(out[i] == sum + rn * i, "reduce [%d]=%d want %d", i, out[i],
			         sum + rn * i);
	}
	/* gather(v) to rank 0 of B: rank r of A sends r + 1 copies of its job rank */
	root = ingrp_a ? 0 : (lr == 0 ? MPI_ROOT : MPI_PROC_NULL);
	memset(big, 0xff, sizeof(big));
	for (int i = 0; i < 2; i++)
		buf[i] = lk_rank * (i + 1);
	MPI_Gather(buf, 2, MPI_INT, big, 2, MPI_INT, root, ic);
	if (root == MPI_ROOT)
		for (int r = 0; r < rn; r++)
			LK_CHECK(big[2 * r] == wrem(r) && big[2 * r + 1] == 2 * wrem(r),
			         "gather from %d: %d %d", r, big[2 * r], big[2 * r + 1]);
	for (int r = 0, off = 0; r < rn; r++) {
		counts[r] = r + 1;
		displs[r] = off;
		off += r + 2; /* leave a hole */
	}
	for (int i = 0; i < 4; i++)
		buf[i] = lk_rank;
	memset(big, 0xff, sizeof(big));
	MPI_Gatherv(buf, lr + 1, MPI_INT, big, counts, displs, MPI_INT, root, ic);
	if (root == MPI_ROOT)
		for (int r = 0; r < rn; r++)
			for (int k = 0; k <= r + 1; k++)
				LK_CHECK(big[displs[r] + k] == (k <= r ? wrem(r) : -1),
				         "gatherv from %d [%d]=%d", r, k, big[displs[r] + k]);
	/* scatter(v) from rank 0 of B */
	for (int i = 0; i < 64; i++)
		big[i] = i;
	MPI_Scatter(big, 2, MPI_INT, buf, 2, MPI_INT, root, ic);
	if (root >= 0)
		LK_CHECK(buf[0] == 2 * lr && buf[1] == 2 * lr + 1, "scatter %d %d", buf[0], buf[1]);
	memset(buf, 0xff, sizeof(buf));
	MPI_Scatterv(big, counts, displs, MPI_INT, buf, lr + 1, MPI_INT, root, ic);
	if (root >= 0) {
		want = 0;
		for (int r = 0; r < lr; r++)
			want += r + 2;
		for (int k = 0; k <= lr && k < 4; k++)
			LK_CHECK(buf[k] == want + k, "scatterv [%d]=%d want %d", k, buf[k],
			         want + k);
	}
}

static void test_all(void)
{
	int x = lk_rank, sum = 0, got, buf[64], sb[64], counts[32], displs[32];

	MPI_Barrier(ic);
	MPI_Allreduce(&x, &got, 1, MPI_INT, MPI_SUM, ic);
	for (int r = 0; r < rn; r++)
		sum += wrem(r);
	LK_CHECK(got == sum, "allreduce %d want %d", got, sum);
	MPI_Allreduce(&x, &got, 1, MPI_INT, MPI_MAX, ic);
	LK_CHECK(got == wrem(rn - 1), "allreduce max %d", got);
	memset(buf, 0xff, sizeof(buf));
	MPI_Allgather(&x, 1, MPI_INT, buf, 1, MPI_INT, ic);
	for (int r = 0; r < rn; r++)
		LK_CHECK(buf[r] == wrem(r), "allgather [%d]=%d", r, buf[r]);
	for (int r = 0; r < rn; r++) {
		counts[r] = r + 1;
		displs[r] = r * (r + 1) / 2;
	}
	for (int i = 0; i < 8; i++)
		sb[i] = lk_rank;
	MPI_Allgatherv(sb, lr + 1, MPI_INT, buf, counts, displs, MPI_INT, ic);
	for (int r = 0; r < rn; r++)
		for (int k = 0; k <= r; k++)
			LK_CHECK(buf[displs[r] + k] == wrem(r), "allgatherv %d/%d", r, k);
	/* alltoall: to remote rank j send 1000 * my job rank + j */
	for (int j = 0; j < rn; j++)
		sb[j] = 1000 * lk_rank + j;
	MPI_Alltoall(sb, 1, MPI_INT, buf, 1, MPI_INT, ic);
	for (int j = 0; j < rn; j++)
		LK_CHECK(buf[j] == 1000 * wrem(j) + lr, "alltoall from %d: %d", j, buf[j]);
	/* alltoallv/w: two ints to each, reversed placement */
	int sc[32], sd[32], rc[32], rd[32], sdb[32], rdb[32];
	MPI_Datatype ty[32];
	for (int j = 0; j < rn; j++) {
		sc[j] = rc[j] = 2;
		sd[j] = 2 * j;
		rd[j] = 2 * (rn - 1 - j);
		sdb[j] = sd[j] * (int)sizeof(int);
		rdb[j] = rd[j] * (int)sizeof(int);
		ty[j] = MPI_INT;
		sb[2 * j] = lk_rank;
		sb[2 * j + 1] = j;
	}
	MPI_Alltoallv(sb, sc, sd, MPI_INT, buf, rc, rd, MPI_INT, ic);
	for (int j = 0; j < rn; j++)
		LK_CHECK(buf[rd[j]] == wrem(j) && buf[rd[j] + 1] == lr, "alltoallv from %d", j);
	memset(buf, 0xff, sizeof(buf));
	MPI_Alltoallw(sb, sc, sdb, ty, buf, rc, rdb, ty, ic);
	for (int j = 0; j < rn; j++)
		LK_CHECK(buf[rd[j]] == wrem(j) && buf[rd[j] + 1] == lr, "alltoallw from %d", j);
}

/* Reduce_scatter: both groups use vectors of 6 elements, split as evenly as possible. */
static void test_reduce_scatter(void)
{
	int rcounts[32] = {0}, sb[6], out[6], off = 0, rsum = 0;

	for (int l = 0; l < ln; l++)
		rcounts[l] = 6 / ln + (l < 6 % ln);
	for (int l = 0; l < lr; l++)
		off += rcounts[l];
	for (int i = 0; i < 6; i++)
		sb[i] = lk_rank + i;
	for (int r = 0; r < rn; r++)
		rsum += wrem(r);
	MPI_Reduce_scatter(sb, out, rcounts, MPI_INT, MPI_SUM, ic);
	for (int k = 0; k < rcounts[lr]; k++)
		LK_CHECK(out[k] == rsum + rn * (off + k), "reduce_scatter [%d]=%d", k, out[k]);
	if (ln == rn) { /* the block variant needs equal groups */
		int b[64], o[2];
		for (int i = 0; i < 2 * ln; i++)
			b[i] = lk_rank + i;
		MPI_Reduce_scatter_block(b, o, 2, MPI_INT, MPI_SUM, ic);
		for (int k = 0; k < 2; k++)
			LK_CHECK(o[k] == rsum + rn * (2 * lr + k), "reduce_scatter_block [%d]=%d",
			         k, o[k]);
	}
}

static void test_constructors(void)
{
	MPI_Comm dup, merged, sub, cr;
	MPI_Group g, sg;
	int n, r, flag, x, res;

	MPI_Comm_dup(ic, &dup);
	MPI_Comm_test_inter(dup, &flag);
	MPI_Comm_remote_size(dup, &n);
	LK_CHECK(flag && n == rn, "dup is inter %d remote size %d", flag, n);
	MPI_Comm_compare(ic, dup, &res);
	LK_CHECK(res == MPI_CONGRUENT, "compare inter dup %d", res);
	x = lr;
	MPI_Allreduce(&lr, &x, 1, MPI_INT, MPI_SUM, dup);
	LK_CHECK(x == rn * (rn - 1) / 2, "allreduce on dup %d", x);
	/* group B asks to go high: A's ranks come first */
	MPI_Intercomm_merge(dup, !ingrp_a, &merged);
	MPI_Comm_rank(merged, &r);
	MPI_Comm_size(merged, &n);
	LK_CHECK(n == lk_size && r == (ingrp_a ? lr : rn + lr), "merge rank %d size %d", r, n);
	MPI_Comm_free(&merged);
	MPI_Comm_free(&dup);
	/* split by local parity, reversed keys */
	MPI_Comm_split(ic, lr % 2, -lr, &sub);
	if (sub == MPI_COMM_NULL) {
		LK_CHECK(rn < 2 && lr % 2 == 1, "split gave NULL with a remote partner");
	} else {
		int want_l = (ln + 1 - lr % 2) / 2, want_r = (rn + 1 - lr % 2) / 2, sr, rs;
		MPI_Comm_size(sub, &n);
		MPI_Comm_rank(sub, &sr);
		MPI_Comm_remote_size(sub, &rs);
		LK_CHECK(n == want_l && rs == want_r && sr == want_l - 1 - lr / 2,
		         "split inter size %d/%d rank %d remote %d/%d", n, want_l, sr, rs, want_r);
		MPI_Allreduce(&lk_rank, &x, 1, MPI_INT, MPI_MAX, sub);
		int w = -1;
		for (int q = 0; q < rn; q++)
			if (q % 2 == lr % 2 && wrem(q) > w)
				w = wrem(q);
		LK_CHECK(x == w, "allreduce on split inter %d want %d", x, w);
		MPI_Comm_free(&sub);
	}
	/* create: every group drops its rank 0 (when it has more than one) */
	MPI_Comm_group(ic, &g);
	int zero = 0;
	if (ln > 1)
		MPI_Group_excl(g, 1, &zero, &sg);
	else
		MPI_Group_incl(g, 1, &zero, &sg);
	MPI_Comm_create(ic, sg, &cr);
	if (ln > 1 && lr == 0) {
		LK_CHECK(cr == MPI_COMM_NULL, "create: excluded rank got a comm");
	} else {
		int wl = ln > 1 ? ln - 1 : 1, wr = rn > 1 ? rn - 1 : 1;
		LK_CHECK(cr != MPI_COMM_NULL, "create: member got NULL");
		if (cr != MPI_COMM_NULL) {
			MPI_Comm_size(cr, &n);
			MPI_Comm_remote_size(cr, &r);
			LK_CHECK(n == wl && r == wr, "create sizes %d %d", n, r);
			MPI_Barrier(cr);
			MPI_Comm_free(&cr);
		}
	}
	MPI_Group_free(&sg);
	MPI_Group_free(&g);
}

int main(int argc, char **argv)
{
	MPI_Comm local;

	lk_init(&argc, &argv, "lk_inter");
	if (lk_size < 2) {
		if (lk_rank == 0)
			printf("lk_inter: needs 2 or more ranks\n");
		MPI_Finalize();
		return 1;
	}
	ingrp_a = lk_rank % 2 == 0;
	MPI_Comm_split(MPI_COMM_WORLD, !ingrp_a, lk_rank, &local);
	MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, ingrp_a ? 1 : 0, 7, &ic);
	MPI_Comm_rank(ic, &lr);
	MPI_Comm_size(ic, &ln);
	MPI_Comm_remote_size(ic, &rn);
	for (int rep = 0; rep < 2; rep++) {
		test_rooted();
		test_all();
		test_reduce_scatter();
		test_constructors();
	}
	MPI_Comm_free(&ic);
	MPI_Comm_free(&local);
	return lk_finish();
}
