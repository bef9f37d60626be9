/* lib/mpi/mpi_inter.c: intercommunicators: the union channel, collectives, dup/merge/split/create.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

/* Every collective on an intercommunicator travels on its union intracommunicator (the
 * intercomm's collective context ctx + 1, ranks numbered over both groups), so nothing else
 * may use that context. Algorithms are linear: intercommunicator collectives are rare. */
enum { T_IBARRIER = 64, T_IBCAST, T_IREDUCE, T_IALLRED, T_IALLRED2, T_IGATHER, T_ISCATTER };
enum { T_IALLGATHER = 72, T_IALLTOALL, T_IRS, T_IRS2 };

static int local_first(const struct mpii_comm *ic)
{
	if (ic->order) /* groups of two jobs: the side the handshake gave */
		return ic->order == 1;
	return ic->grp->world[0] < ic->rgrp->world[0];
}

/* Union rank of remote rank r / of local rank l. */
static int urem(const struct mpii_comm *ic, int r)
{
	return local_first(ic) ? ic->grp->size + r : r;
}

static int uloc(const struct mpii_comm *ic, int l)
{
	return local_first(ic) ? l : ic->rgrp->size + l;
}

struct mpii_comm *mpii_inter_union(struct mpii_comm *ic)
{
	int nl = ic->grp->size, nr = ic->rgrp->size, *w;
	struct mpii_comm *u;

	if (ic->uni)
		return ic->uni;
	w = malloc(sizeof(int) * (size_t)(nl + nr));
	u = calloc(1, sizeof(*u));
	if (!w || !u) {
		free(w);
		free(u);
		return NULL;
	}
	memcpy(w + uloc(ic, 0), ic->grp->world, sizeof(int) * (size_t)nl);
	memcpy(w + urem(ic, 0), ic->rgrp->world, sizeof(int) * (size_t)nr);
	u->grp = mpii_group_new(nl + nr, w);
	if (!u->grp) {
		free(u);
		return NULL;
	}
	u->handle = MPI_COMM_NULL; /* never in the handle table */
	u->refs = 1;
	u->ctx = ic->ctx;
	u->rank = u->grp->rank;
	u->size = nl + nr;
	u->errh = MPI_ERRORS_RETURN;
	ic->uni = u;
	return u;
}

#define UNION(u, ic)                                                                               \
	struct mpii_comm *u = mpii_inter_union(ic);                                                \
	if (!u)                                                                                    \
	return MPI_ERR_NO_MEM

static int wait_all(struct lk_request **r, int n, int rc)
{
	for (int i = 0; i < n; i++) {
		int k;
		if (!r[i])
			continue;
		k = mpii_wait(r[i], NULL);
		if (rc == MPI_SUCCESS)
			rc = k;
	}
	free(r);
	return rc;
}

static int root_ok(const struct mpii_comm *ic, int root)
{
	return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < ic->rgrp->size);
}

int mpii_inter_uloc(const struct mpii_comm *ic, int l)
{
	return uloc(ic, l);
}

int mpii_inter_urem(const struct mpii_comm *ic, int r)
{
	return urem(ic, r);
}

/* In along a binomial tree of the local group to its leader, the leaders swap a message, out
 * along the same tree: 2 log2(n) steps inside each group and one message each way between them,
 * which is all that crosses between two jobs (a barrier over the union would make log2 of both
 * sizes of such crossings, each a new connection the first time). */
int mpii_inter_barrier(struct mpii_comm *ic)
{
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);
	int nl = ic->grp->size, l = ic->rank, top = 1, rc = MPI_SUCCESS;

	UNION(u, ic);
	while (top < nl && !(l & top)) /* the lowest set bit of l: l's parent is l - top */
		top <<= 1;
	for (int m = 1; m < top && rc == MPI_SUCCESS; m <<= 1)
		if (l + m < nl)
			rc = mpii_recv(NULL, 0, b, uloc(ic, l + m), T_IBARRIER, u, 1, NULL);
	if (rc == MPI_SUCCESS && l)
		rc = mpii_send(NULL, 0, b, uloc(ic, l - top), T_IBARRIER, u, 1, MODE_STD);
	if (rc == MPI_SUCCESS && l)
		rc = mpii_recv(NULL, 0, b, uloc(ic, l - top), T_IBARRIER, u, 1, NULL);
	if (rc == MPI_SUCCESS && !l)
		rc = mpii_sendrecv(NULL, 0, b, urem(ic, 0), NULL, 0, b, urem(ic, 0), T_IBARRIER, u,
		                   1, NULL);
	for (int m = top >> 1; m > 0 && rc == MPI_SUCCESS; m >>= 1)
		if (l + m < nl)
			rc = mpii_send(NULL, 0, b, uloc(ic, l + m), T_IBARRIER, u, 1, MODE_STD);
	return rc;
}

int mpii_inter_bcast(void *buf, int count, struct mpii_dtype *d, int root, struct mpii_comm *ic)
{
	struct lk_request **r;
	int rc = MPI_SUCCESS, nr = ic->rgrp->size;

	UNION(u, ic);
	if (!root_ok(ic, root))
		return MPI_ERR_ROOT;
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		return mpii_recv(buf, count, d, urem(ic, root), T_IBCAST, u, 1, NULL);
	r = calloc((size_t)nr, sizeof(*r));
	if (!r)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < nr && rc == MPI_SUCCESS; i++)
		rc = mpii_isend(buf, count, d, urem(ic, i), T_IBCAST, u, 1, MODE_STD, &r[i]);
	return wait_all(r, nr, rc);
}

/* rbuf = s(0) op (s(1) op (... s(nr-1))) over the vectors of the remote group, in rank order. */
static int reduce_remote(void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                         struct mpii_comm *ic, struct mpii_comm *u, int tag)
{
	int nr = ic->rgrp->size, rc;
	char *tmp;
	void *mem;

	rc = mpii_recv(rbuf, count, d, urem(ic, nr - 1), tag, u, 1, NULL);
	if (rc != MPI_SUCCESS || nr == 1)
		return rc;
	mem = mpii_tmpbuf(d, count, &tmp);
	if (!mem)
		return MPI_ERR_NO_MEM;
	for (int i = nr - 2; i >= 0 && rc == MPI_SUCCESS; i--) {
		rc = mpii_recv(tmp, count, d, urem(ic, i), tag, u, 1, NULL);
		if (rc == MPI_SUCCESS)
			rc = mpii_reduce_local(tmp, rbuf, count, d, op);
	}
	mpii_tmpbuf_free(mem);
	return rc;
}

int mpii_inter_reduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                      int root, struct mpii_comm *ic)
{
	UNION(u, ic);
	if (!root_ok(ic, root))
		return MPI_ERR_ROOT;
	if (root == MPI_PROC_NULL || count == 0)
		return MPI_SUCCESS;
	if (root == MPI_ROOT)
		return reduce_remote(rbuf, count, d, op, ic, u, T_IREDUCE);
	return mpii_send(sbuf, count, d, urem(ic, root), T_IREDUCE, u, 1, MODE_STD);
}

/* Everyone sends its vector to the remote leader; each leader reduces what its remote group
 * sent and hands the result (whole, or scattered by counts) to its own group. */
static int leader_reduce(const void *sbuf, int scount, void *rbuf, const int *counts,
                         struct mpii_dtype *d, MPI_Op op, struct mpii_comm *ic, int tag)
{
	struct lk_request *sreq = NULL;
	int rc, nl = ic->grp->size, off = 0;
	char *all = rbuf;
	void *mem = NULL;

	UNION(u, ic);
	rc = mpii_isend(sbuf, scount, d, urem(ic, 0), tag, u, 1, MODE_STD, &sreq);
	if (rc != MPI_SUCCESS)
		return rc;
	if (ic->rank == 0) {
		if (counts && !(mem = mpii_tmpbuf(d, scount, &all)))
			rc = MPI_ERR_NO_MEM;
		if (rc == MPI_SUCCESS)
			rc = reduce_remote(all, scount, d, op, ic, u, tag);
		for (int l = 0; l < nl && rc == MPI_SUCCESS; l++) {
			char *p = all + (MPI_Aint)off * d->extent;
			int n = counts ? counts[l] : scount;
			if (l == 0 && counts)
				mpii_copy(p, rbuf, n, d);
			else if (l > 0)
				rc = mpii_send(p, n, d, uloc(ic, l), tag + 1, u, 1, MODE_STD);
			off += counts ? n : 0;
		}
		mpii_tmpbuf_free(mem);
	} else {
		rc = mpii_recv(rbuf, counts ? counts[ic->rank] : scount, d, uloc(ic, 0), tag + 1, u,
		               1, NULL);
	}
	{
		int k = mpii_wait(sreq, NULL);
		return rc == MPI_SUCCESS ? k : rc;
	}
}

int mpii_inter_allreduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                         struct mpii_comm *ic)
{
	if (count == 0)
		return mpii_inter_barrier(ic);
	return leader_reduce(sbuf, count, rbuf, NULL, d, op, ic, T_IALLRED);
}

int mpii_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                              struct mpii_dtype *d, MPI_Op op, struct mpii_comm *ic)
{
	int total = 0;

	for (int l = 0; l < ic->grp->size; l++)
		total += rcounts[l];
	if (total == 0)
		return mpii_inter_barrier(ic);
	return leader_reduce(sbuf, total, rbuf, rcounts, d, op, ic, T_IRS);
}

int mpii_inter_gatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                       const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                       int root, struct mpii_comm *ic)
{
	struct lk_request **r;
	int rc = MPI_SUCCESS, nr = ic->rgrp->size;

	UNION(u, ic);
	if (!root_ok(ic, root))
		return MPI_ERR_ROOT;
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		return mpii_send(sbuf, scount, sd, urem(ic, root), T_IGATHER, u, 1, MODE_STD);
	r = calloc((size_t)nr, sizeof(*r));
	if (!r)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < nr && rc == MPI_SUCCESS; i++) {
		char *p = (char *)rbuf + (MPI_Aint)(displs ? displs[i] : i * rcount) * rd->extent;
		rc = mpii_irecv(p, rcounts ? rcounts[i] : rcount, rd, urem(ic, i), T_IGATHER, u, 1,
		                &r[i]);
	}
	return wait_all(r, nr, rc);
}

int mpii_inter_scatterv(const void *sbuf, const int *scounts, const int *displs, int scount,
                        struct mpii_dtype *sd, void *rbuf, int rcount, struct mpii_dtype *rd,
                        int root, struct mpii_comm *ic)
{
	struct lk_request **r;
	int rc = MPI_SUCCESS, nr = ic->rgrp->size;

	UNION(u, ic);
	if (!root_ok(ic, root))
		return MPI_ERR_ROOT;
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		return mpii_recv(rbuf, rcount, rd, urem(ic, root), T_ISCATTER, u, 1, NULL);
	r = calloc((size_t)nr, sizeof(*r));
	if (!r)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < nr && rc == MPI_SUCCESS; i++) {
		const char *p =
		    (const char *)sbuf + (MPI_Aint)(displs ? displs[i] : i * scount) * sd->extent;
		rc = mpii_isend(p, scounts ? scounts[i] : scount, sd, urem(ic, i), T_ISCATTER, u, 1,
		                MODE_STD, &r[i]);
	}
	return wait_all(r, nr, rc);
}

int mpii_inter_allgatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                          const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                          struct mpii_comm *ic)
{
	struct lk_request **r;
	int rc = MPI_SUCCESS, nr = ic->rgrp->size;

	UNION(u, ic);
	r = calloc((size_t)(2 * nr), sizeof(*r));
	if (!r)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < nr && rc == MPI_SUCCESS; i++) {
		char *p = (char *)rbuf + (MPI_Aint)(displs ? displs[i] : i * rcount) * rd->extent;
		rc = mpii_irecv(p, rcounts ? rcounts[i] : rcount, rd, urem(ic, i), T_IALLGATHER, u,
		                1, &r[i]);
	}
	for (int i = 0; i < nr && rc == MPI_SUCCESS; i++)
		rc = mpii_isend(sbuf, scount, sd, urem(ic, i), T_IALLGATHER, u, 1, MODE_STD,
		                &r[nr + i]);
	return wait_all(r, 2 * nr, rc);
}

int mpii_inter_alltoall(const struct mpii_a2a *a, struct mpii_comm *ic)
{
	struct lk_request **r;
	struct mpii_dtype *d;
	int rc = MPI_SUCCESS, nr = ic->rgrp->size, cnt;

	UNION(u, ic);
	r = calloc((size_t)(2 * nr), sizeof(*r));
	if (!r)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < nr && rc == MPI_SUCCESS; i++) {
		char *p = mpii_a2a_rptr(a, i, &d, &cnt);
		rc =
		    d ? mpii_irecv(p, cnt, d, urem(ic, i), T_IALLTOALL, u, 1, &r[i]) : MPI_ERR_TYPE;
	}
	for (int i = 0; i < nr && rc == MPI_SUCCESS; i++) {
		const char *p = mpii_a2a_sptr(a, i, &d, &cnt);
		rc = d ? mpii_isend(p, cnt, d, urem(ic, i), T_IALLTOALL, u, 1, MODE_STD, &r[nr + i])
		       : MPI_ERR_TYPE;
	}
	return wait_all(r, 2 * nr, rc);
}

/* ---- constructors ---- */

int mpii_inter_dup(struct mpii_comm *ic, MPI_Comm *out)
{
	uint32_t ctx;

	UNION(u, ic);
	ctx = mpii_ctx_alloc(u);
	if (!ctx)
		return MPI_ERR_INTERN;
	ic->grp->refs++;
	ic->rgrp->refs++;
	return mpii_comm_finish(ic, ic->grp, ic->rgrp, ctx, out, NULL);
}

int mpii_inter_merge(struct mpii_comm *ic, int high, MPI_Comm *out)
{
	int nl = ic->grp->size, nr = ic->rgrp->size, *hi, *w, theirs, lowfirst, rc;
	uint32_t ctx;

	UNION(u, ic);
	hi = malloc(sizeof(int) * (size_t)u->size);
	w = malloc(sizeof(int) * (size_t)u->size);
	rc = hi && w ? mpii_allgather(&high, 1, mpii_dt(MPI_INT), hi, 1, mpii_dt(MPI_INT), u)
	             : MPI_ERR_NO_MEM;
	if (rc != MPI_SUCCESS) {
		free(hi);
		free(w);
		return rc;
	}
	theirs = hi[urem(ic, 0)];
	free(hi);
	/* the group with high == 0 first; on a tie, the union order */
	lowfirst = high != theirs ? high < theirs : local_first(ic);
	memcpy(w + (lowfirst ? 0 : nr), ic->grp->world, sizeof(int) * (size_t)nl);
	memcpy(w + (lowfirst ? nl : 0), ic->rgrp->world, sizeof(int) * (size_t)nr);
	ctx = mpii_ctx_alloc(u);
	if (!ctx) {
		free(w);
		return MPI_ERR_INTERN;
	}
	struct mpii_group *g = mpii_group_new(nl + nr, w);
	if (!g) {
		mpii_ctx_free(ctx);
		return MPI_ERR_NO_MEM;
	}
	return mpii_comm_finish(ic, g, NULL, ctx, out, NULL);
}

/* Job ranks of the processes of one side (union ranks [first, first + n)) whose color is
 * `color`, ordered by (key, rank); *cnt gets their number. NULL on ENOMEM. */
static int *members(const int *ck, int first, int n, int color, const struct mpii_comm *u, int *cnt)
{
	int *w = malloc(sizeof(int) * (size_t)(n + 1)), k = 0;

	if (!w)
		return NULL;
	for (int i = first; i < first + n; i++) {
		int j = k++;
		if (ck[2 * i] != color) {
			k--;
			continue;
		}
		while (j > 0 && ck[2 * w[j - 1] + 1] > ck[2 * i + 1]) {
			w[j] = w[j - 1];
			j--;
		}
		w[j] = i;
	}
	for (int i = 0; i < k; i++)
		w[i] = u->grp->world[w[i]];
	*cnt = k;
	return w;
}

/* Build the intercommunicator of local members lw[nl] and remote members rw[nr] on ctx, or
 * MPI_COMM_NULL when a side is empty or this process is not a member. */
static int finish_pair(struct mpii_comm *ic, int *lw, int nl, int *rw, int nr, int member,
                       uint32_t ctx, MPI_Comm *out)
{
	struct mpii_group *g, *rg;

	*out = MPI_COMM_NULL;
	if (!member || nl == 0 || nr == 0) {
		free(lw);
		free(rw);
		mpii_ctx_free(ctx);
		return MPI_SUCCESS;
	}
	g = mpii_group_new(nl, lw);
	rg = mpii_group_new(nr, rw);
	if (!g || !rg) {
		mpii_group_release(g);
		mpii_group_release(rg);
		mpii_ctx_free(ctx);
		return MPI_ERR_NO_MEM;
	}
	return mpii_comm_finish(ic, g, rg, ctx, out, NULL);
}

int mpii_inter_split(struct mpii_comm *ic, int color, int key, MPI_Comm *out)
{
	int me[2] = {color, key}, *ck, *lw = NULL, *rw = NULL, nl = 0, nr = 0, rc;
	uint32_t ctx = 0;

	UNION(u, ic);
	ck = malloc(sizeof(int) * 2 * (size_t)u->size);
	rc = ck ? mpii_allgather(me, 2, mpii_dt(MPI_INT), ck, 2, mpii_dt(MPI_INT), u)
	        : MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS && !(ctx = mpii_ctx_alloc(u)))
		rc = MPI_ERR_INTERN;
	if (rc == MPI_SUCCESS && color != MPI_UNDEFINED) {
		lw = members(ck, uloc(ic, 0), ic->grp->size, color, u, &nl);
		rw = members(ck, urem(ic, 0), ic->rgrp->size, color, u, &nr);
		if (!lw || !rw)
			rc = MPI_ERR_NO_MEM;
	}
	free(ck);
	if (rc != MPI_SUCCESS) {
		free(lw);
		free(rw);
		mpii_ctx_free(ctx);
		return rc;
	}
	return finish_pair(ic, lw, nl, rw, nr, color != MPI_UNDEFINED, ctx, out);
}

int mpii_inter_create(struct mpii_comm *ic, struct mpii_group *g, MPI_Comm *out)
{
	int mine = g->rank, *all, *lw = NULL, *rw = NULL, nr = 0, rc, first;
	uint32_t ctx = 0;

	UNION(u, ic);
	all = malloc(sizeof(int) * (size_t)u->size);
	rc = all ? mpii_allgather(&mine, 1, mpii_dt(MPI_INT), all, 1, mpii_dt(MPI_INT), u)
	         : MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS && !(ctx = mpii_ctx_alloc(u)))
		rc = MPI_ERR_INTERN;
	lw = malloc(sizeof(int) * (size_t)(g->size + 1));
	rw = malloc(sizeof(int) * (size_t)(ic->rgrp->size + 1));
	if (rc == MPI_SUCCESS && (!lw || !rw))
		rc = MPI_ERR_NO_MEM;
	if (rc != MPI_SUCCESS) {
		free(all);
		free(lw);
		free(rw);
		mpii_ctx_free(ctx);
		return rc;
	}
	/* remote members in the order of the group the remote side passed */
	first = urem(ic, 0);
	for (int i = 0; i < ic->rgrp->size; i++)
		if (all[first + i] >= 0 && all[first + i] < ic->rgrp->size) {
			rw[all[first + i]] = ic->rgrp->world[i];
			nr++;
		}
	free(all);
	memcpy(lw, g->world, sizeof(int) * (size_t)g->size);
	return finish_pair(ic, lw, g->size, rw, nr, mine != MPI_UNDEFINED, ctx, out);
}
