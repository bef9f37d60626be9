/* lib/mpi/mpi_nbc_inter.c: nonblocking collectives on intercommunicators, as schedules on the
 * union channel.
 *
 * The messages travel like the blocking intercommunicator collectives' (mpi_inter.c): on the
 * union intracommunicator (both groups, collective context), here under the schedule's own
 * tag. Algorithms are the blocking ones' linear patterns: a root (MPI_ROOT) talks to each
 * remote rank; reductions go to the remote group's leader (rank 0), which folds them in rank
 * order and hands the result to its own group.
 */
#include <stdlib.h>

#include "mpii.h"

/* Union ranks as the blocking collectives number them (mpi_inter.c; between two jobs the order
 * the handshake gave, not their job ranks). */
#define urem mpii_inter_urem
#define uloc mpii_inter_uloc

static int root_ok(const struct mpii_comm *ic, int root)
{
	return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < ic->rgrp->size);
}

/* Checks shared by every call, and the schedule on the union. NULL with *rc set on failure. */
static struct mpii_sched *begin(struct mpii_comm *ic, MPI_Request *req, int *rc)
{
	struct mpii_comm *u;

	if (!req) {
		*rc = MPI_ERR_REQUEST;
		return NULL;
	}
	u = mpii_inter_union(ic);
	struct mpii_sched *s = u ? mpii_sched_new(u) : NULL;
	*rc = s ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	return s;
}

static int end(struct mpii_sched *s, struct mpii_comm *ic, MPI_Request *req, int rc, const char *fn)
{
	if (rc != MPI_SUCCESS) {
		mpii_sched_free(s);
		if (req)
			*req = MPI_REQUEST_NULL;
		return mpii_err(ic, rc, fn);
	}
	return mpii_err(ic, mpii_sched_start(s, ic, req), fn);
}

int mpii_inbc_barrier(struct mpii_comm *ic, MPI_Request *req)
{
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);
	int rc, nl = ic->grp->size;
	struct mpii_sched *s = begin(ic, req, &rc);

	if (!s)
		return end(s, ic, req, rc, "MPI_Ibarrier");
	if (ic->rank != 0) { /* in to the leader; out when both groups are in */
		mpii_sched_send(s, NULL, 0, b, uloc(ic, 0));
		mpii_sched_recv(s, NULL, 0, b, uloc(ic, 0));
		mpii_sched_fence(s);
		return end(s, ic, req, rc, "MPI_Ibarrier");
	}
	for (int l = 1; l < nl; l++)
		mpii_sched_recv(s, NULL, 0, b, uloc(ic, l));
	mpii_sched_fence(s);
	mpii_sched_send(s, NULL, 0, b, urem(ic, 0));
	mpii_sched_recv(s, NULL, 0, b, urem(ic, 0));
	mpii_sched_fence(s);
	for (int l = 1; l < nl; l++)
		mpii_sched_send(s, NULL, 0, b, uloc(ic, l));
	mpii_sched_fence(s);
	return end(s, ic, req, rc, "MPI_Ibarrier");
}

int mpii_inbc_bcast(void *buf, int count, struct mpii_dtype *d, int root, struct mpii_comm *ic,
                    MPI_Request *req)
{
	int rc;
	struct mpii_sched *s = begin(ic, req, &rc);

	if (s && !root_ok(ic, root))
		rc = MPI_ERR_ROOT;
	if (s && rc == MPI_SUCCESS && root == MPI_ROOT)
		for (int i = 0; i < ic->rgrp->size; i++)
			mpii_sched_send(s, buf, count, d, urem(ic, i));
	else if (s && rc == MPI_SUCCESS && root != MPI_PROC_NULL)
		mpii_sched_recv(s, buf, count, d, urem(ic, root));
	if (s)
		mpii_sched_fence(s);
	return end(s, ic, req, rc, "MPI_Ibcast");
}

/* rbuf = s(0) op (s(1) op (... s(nr-1))) over the remote group's vectors, in rank order. MPI
 * code. */
static int fold_remote(struct mpii_sched *s, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                       struct mpii_comm *ic)
{
	int nr = ic->rgrp->size;
	char **tmp = NULL;

	if (!count)
		return MPI_SUCCESS;
	if (nr > 1 && !(tmp = calloc((size_t)nr, sizeof(*tmp))))
		return MPI_ERR_NO_MEM;
	mpii_sched_recv(s, rbuf, count, d, urem(ic, nr - 1));
	for (int i = nr - 2; i >= 0; i--) {
		mpii_sched_tmp(s, d, count, &tmp[i]);
		mpii_sched_recv(s, tmp[i], count, d, urem(ic, i));
	}
	mpii_sched_fence(s);
	for (int i = nr - 2; i >= 0; i--)
		mpii_sched_reduce(s, tmp[i], rbuf, count, d, op);
	free(tmp);
	return MPI_SUCCESS;
}

int mpii_inbc_reduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                     int root, struct mpii_comm *ic, MPI_Request *req)
{
	int rc;
	struct mpii_sched *s = begin(ic, req, &rc);

	if (s && !root_ok(ic, root))
		rc = MPI_ERR_ROOT;
	else if (s && !mpii_op_valid(op))
		rc = MPI_ERR_OP;
	if (s && rc == MPI_SUCCESS && root == MPI_ROOT)
		rc = fold_remote(s, rbuf, count, d, op, ic);
	else if (s && rc == MPI_SUCCESS && root != MPI_PROC_NULL && count)
		mpii_sched_send(s, sbuf, count, d, urem(ic, root));
	if (s)
		mpii_sched_fence(s);
	return end(s, ic, req, rc, "MPI_Ireduce");
}

int mpii_inbc_allreduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                        struct mpii_comm *ic, MPI_Request *req)
{
	int rc;
	struct mpii_sched *s = begin(ic, req, &rc);

	if (s && !mpii_op_valid(op))
		rc = MPI_ERR_OP;
	if (!s || rc != MPI_SUCCESS || !count)
		return end(s, ic, req, rc, "MPI_Iallreduce");
	mpii_sched_send(s, sbuf, count, d, urem(ic, 0)); /* to the remote leader */
	if (ic->rank == 0) {
		rc = fold_remote(s, rbuf, count, d, op, ic);
		for (int l = 1; l < ic->grp->size; l++)
			mpii_sched_send(s, rbuf, count, d, uloc(ic, l));
	} else {
		mpii_sched_recv(s, rbuf, count, d, uloc(ic, 0));
	}
	mpii_sched_fence(s);
	return end(s, ic, req, rc, "MPI_Iallreduce");
}

/* Gather(v) to a root (rcounts NULL: rcount each, displs NULL: packed blocks). */
int mpii_inbc_gatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                      const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                      int root, struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
	int rc;
	struct mpii_sched *s = begin(ic, req, &rc);

	if (s && !root_ok(ic, root))
		rc = MPI_ERR_ROOT;
	else if (s && root == MPI_ROOT && !rd)
		rc = MPI_ERR_TYPE;
	else if (s && root >= 0 && !sd)
		rc = MPI_ERR_TYPE;
	if (s && rc == MPI_SUCCESS && root == MPI_ROOT) {
		for (int i = 0; i < ic->rgrp->size; i++) {
			MPI_Aint at = (MPI_Aint)(displs ? displs[i] : i * rcount) * rd->extent;
			mpii_sched_recv(s, (char *)rbuf + at, rcounts ? rcounts[i] : rcount, rd,
			                urem(ic, i));
		}
	} else if (s && rc == MPI_SUCCESS && root != MPI_PROC_NULL) {
		mpii_sched_send(s, sbuf, scount, sd, urem(ic, root));
	}
	if (s)
		mpii_sched_fence(s);
	return end(s, ic, req, rc, fn);
}

int mpii_inbc_scatterv(const void *sbuf, const int *scounts, const int *displs, int scount,
                       struct mpii_dtype *sd, void *rbuf, int rcount, struct mpii_dtype *rd,
                       int root, struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
	int rc;
	struct mpii_sched *s = begin(ic, req, &rc);

	if (s && !root_ok(ic, root))
		rc = MPI_ERR_ROOT;
	else if (s && root == MPI_ROOT && !sd)
		rc = MPI_ERR_TYPE;
	else if (s && root >= 0 && !rd)
		rc = MPI_ERR_TYPE;
	if (s && rc == MPI_SUCCESS && root == MPI_ROOT) {
		for (int i = 0; i < ic->rgrp->size; i++) {
			MPI_Aint at = (MPI_Aint)(displs ? displs[i] : i * scount) * sd->extent;
			mpii_sched_send(s, (const char *)sbuf + at, scounts ? scounts[i] : scount,
			                sd, urem(ic, i));
		}
	} else if (s && rc == MPI_SUCCESS && root != MPI_PROC_NULL) {
		mpii_sched_recv(s, rbuf, rcount, rd, urem(ic, root));
	}
	if (s)
		mpii_sched_fence(s);
	return end(s, ic, req, rc, fn);
}

/* Each rank gets every remote rank's block; all messages posted at once. */
int mpii_inbc_allgatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                         const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                         struct mpii_comm *ic, MPI_Request *req, const char *fn)
{
	int rc;
	struct mpii_sched *s = begin(ic, req, &rc);

	if (s && (!sd || !rd))
		rc = MPI_ERR_TYPE;
	for (int i = 0; s && rc == MPI_SUCCESS && i < ic->rgrp->size; i++) {
		MPI_Aint at = (MPI_Aint)(displs ? displs[i] : i * rcount) * rd->extent;
		mpii_sched_recv(s, (char *)rbuf + at, rcounts ? rcounts[i] : rcount, rd,
		                urem(ic, i));
		mpii_sched_send(s, sbuf, scount, sd, urem(ic, i));
	}
	if (s)
		mpii_sched_fence(s);
	return end(s, ic, req, rc, fn);
}

/* Block i of sbuf goes to remote rank i, block i of rbuf comes from it. */
int mpii_inbc_alltoall(const struct mpii_a2a *a, struct mpii_comm *ic, MPI_Request *req,
                       const char *fn)
{
	int rc, cnt;
	struct mpii_sched *s = begin(ic, req, &rc);
	struct mpii_dtype *d;

	for (int i = 0; s && rc == MPI_SUCCESS && i < ic->rgrp->size; i++) {
		char *rp = mpii_a2a_rptr(a, i, &d, &cnt);
		if (!d) {
			rc = MPI_ERR_TYPE;
			break;
		}
		mpii_sched_recv(s, rp, cnt, d, urem(ic, i));
		const char *sp = mpii_a2a_sptr(a, i, &d, &cnt);
		if (!d) {
			rc = MPI_ERR_TYPE;
			break;
		}
		mpii_sched_send(s, sp, cnt, d, urem(ic, i));
	}
	if (s)
		mpii_sched_fence(s);
	return end(s, ic, req, rc, fn);
}

/* Every rank's vector (the sum of rcounts, the same in both groups) goes to the remote leader,
 * which folds its remote group's vectors like MPI_Iallreduce and hands block l of the result to
 * local rank l (rcounts NULL: rcount each). */
int mpii_inbc_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, int rcount,
                             struct mpii_dtype *d, MPI_Op op, struct mpii_comm *ic,
                             MPI_Request *req, const char *fn)
{
	int rc, nl = ic->grp->size, total = 0, off = 0;
	struct mpii_sched *s = begin(ic, req, &rc);
	char *all = NULL;

	for (int l = 0; l < nl; l++) {
		int n = rcounts ? rcounts[l] : rcount;
		if (n < 0)
			rc = MPI_ERR_COUNT;
		total += n;
	}
	if (s && rc == MPI_SUCCESS && !mpii_op_valid(op))
		rc = MPI_ERR_OP;
	if (!s || rc != MPI_SUCCESS || !total)
		return end(s, ic, req, rc, fn);
	mpii_sched_send(s, sbuf, total, d, urem(ic, 0));
	if (ic->rank == 0) {
		mpii_sched_tmp(s, d, total, &all);
		rc = fold_remote(s, all, total, d, op, ic);
		for (int l = 0; l < nl && all; l++) {
			int n = rcounts ? rcounts[l] : rcount;
			char *blk = all + (MPI_Aint)off * d->extent;
			if (l == 0)
				mpii_sched_copy(s, blk, n, d, rbuf, n, d);
			else
				mpii_sched_send(s, blk, n, d, uloc(ic, l));
			off += n;
		}
	} else {
		mpii_sched_recv(s, rbuf, rcounts ? rcounts[ic->rank] : rcount, d, uloc(ic, 0));
	}
	mpii_sched_fence(s);
	return end(s, ic, req, rc, fn);
}
