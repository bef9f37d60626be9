/* lib/mpi/mpi_nbc.c: MPI-3 nonblocking barrier, bcast, reductions and scans as schedules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

int mpii_nbc_check(MPI_Comm comm, MPI_Request *req, struct mpii_comm **cp)
{
	*cp = mpii_comm(comm);
	if (!mpii.initialized || mpii.finalized)
		return MPI_ERR_OTHER;
	if (!*cp)
		return MPI_ERR_COMM;
	return req ? MPI_SUCCESS : MPI_ERR_REQUEST;
}

/* Binomial tree from root. */
static void b_bcast(struct mpii_sched *s, void *buf, int count, struct mpii_dtype *d, int root,
                    const struct mpii_comm *c)
{
	int n = c->size, vr = (c->rank - root + n) % n, mask = 1;

	if (n == 1 || !count || !d->size)
		return;
	while (mask < n) {
		if (vr & mask) {
			mpii_sched_recv(s, buf, count, d, (vr - mask + root) % n);
			mpii_sched_fence(s);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (vr + mask < n)
			mpii_sched_send(s, buf, count, d, (vr + mask + root) % n);
	mpii_sched_fence(s);
}

/* Reduce in (count elements of d) to out at root: a binomial tree rooted at root for a
 * commutative op; otherwise rooted at 0, where each rank folds in the ranks above it in order,
 * and 0 hands the result to root. */
static void b_reduce(struct mpii_sched *s, const void *in, void *out, int count,
                     struct mpii_dtype *d, MPI_Op op, int root, const struct mpii_comm *c)
{
	int n = c->size, comm_op = mpii_op_commutative(op), eff = comm_op ? root : 0;
	int vr = (c->rank - eff + n) % n;
	char *acc = NULL, *tmp = NULL;

	if (!count)
		return;
	if (c->rank == root && eff == root)
		acc = out;
	else
		mpii_sched_tmp(s, d, count, &acc);
	mpii_sched_copy(s, in, count, d, acc, count, d);
	for (int mask = 1; mask < n; mask <<= 1) {
		if (vr & mask) {
			mpii_sched_send(s, acc, count, d, (vr - mask + eff) % n);
			break;
		}
		if (vr + mask >= n)
			continue;
		if (!tmp)
			mpii_sched_tmp(s, d, count, &tmp);
		mpii_sched_recv(s, tmp, count, d, (vr + mask + eff) % n);
		mpii_sched_fence(s);
		if (comm_op) {
			mpii_sched_reduce(s, tmp, acc, count, d, op);
		} else { /* acc covers the lower ranks: acc = acc op tmp */
			mpii_sched_reduce(s, acc, tmp, count, d, op);
			mpii_sched_copy(s, tmp, count, d, acc, count, d);
		}
	}
	if (eff != root && c->rank == eff)
		mpii_sched_send(s, acc, count, d, root);
	else if (eff != root && c->rank == root)
		mpii_sched_recv(s, out, count, d, eff);
	mpii_sched_fence(s);
}

/* Rabenseifner's allreduce, as the blocking allreduce_rab (mpi_coll.c), for the same vectors
 * (mpii_allreduce_rab_fits): reduce-scatter by recursive halving, then allgather by recursive
 * doubling. Each rank moves and combines about the vector once instead of the whole vector per
 * round: 2 ranks, 64 KiB on one node, Iallreduce + Wait 46-50 -> 30-37 us at real-time priority
 * (the blocking call: 31-34). The first round sends straight from sbuf and copies only the half
 * it keeps. */
#define BOFF(i) ((long long)count * (i) / n)
static void b_allreduce_rab(struct mpii_sched *s, const void *sbuf, void *rbuf, int count,
                            struct mpii_dtype *d, MPI_Op op, const struct mpii_comm *c)
{
	int n = c->size, r = c->rank, lo = 0, hi = n;
	MPI_Aint ext = d->extent;
	const char *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	char *acc = rbuf, *tmp = NULL;

	mpii_sched_tmp(s, d, count, &tmp);
	if (!tmp)
		return;
	for (int mask = n / 2; mask > 0; mask >>= 1) {
		int peer = r ^ mask, mid = (lo + hi) / 2;
		int klo = r < peer ? lo : mid, khi = r < peer ? mid : hi; /* the half I keep */
		int slo = r < peer ? mid : lo, shi = r < peer ? hi : mid;
		const char *from = mask == n / 2 ? src : acc;
		MPI_Aint at = (MPI_Aint)BOFF(klo) * ext; /* where the kept half starts */
		int kn = (int)(BOFF(khi) - BOFF(klo));

		mpii_sched_send(s, from + BOFF(slo) * ext, (int)(BOFF(shi) - BOFF(slo)), d, peer);
		mpii_sched_recv(s, tmp + at, kn, d, peer);
		if (from != acc)
			mpii_sched_copy(s, from + at, kn, d, acc + at, kn, d);
		mpii_sched_fence(s);
		mpii_sched_reduce(s, tmp + at, acc + at, kn, d, op);
		lo = klo;
		hi = khi;
	}
	for (int mask = 1; mask < n; mask <<= 1) {
		int peer = r ^ mask, plo = lo ^ mask, phi = plo + (hi - lo);

		mpii_sched_send(s, acc + BOFF(lo) * ext, (int)(BOFF(hi) - BOFF(lo)), d, peer);
		mpii_sched_recv(s, acc + BOFF(plo) * ext, (int)(BOFF(phi) - BOFF(plo)), d, peer);
		mpii_sched_fence(s);
		if (plo < lo)
			lo = plo;
		else
			hi = phi;
	}
}
#undef BOFF

/* Recursive doubling, as the blocking allreduce_rd (mpi_coll.c): ranks exchange their partial
 * results both ways at once, one round per doubling (a reduce then a bcast would take two
 * message times per level, each waiting for the other side's next progress call); beyond the
 * largest power of two, the extra ranks first fold into their even neighbours, which hand them
 * the result at the end. The lower rank's data stays on the left for non-commutative ops. */
static void b_allreduce(struct mpii_sched *s, const void *sbuf, void *rbuf, int count,
                        struct mpii_dtype *d, MPI_Op op, const struct mpii_comm *c)
{
	int n = c->size, r = c->rank, pof2 = 1, rem, nr;
	char *tmp = NULL;

	if (n > 1 && mpii_allreduce_rab_fits(d, count, n, op)) {
		b_allreduce_rab(s, sbuf, rbuf, count, d, op, c);
		return;
	}
	if (sbuf != MPI_IN_PLACE)
		mpii_sched_copy(s, sbuf, count, d, rbuf, count, d);
	if (n == 1 || !count)
		return;
	mpii_sched_tmp(s, d, count, &tmp);
	while (pof2 * 2 <= n)
		pof2 *= 2;
	rem = n - pof2;
	nr = r - rem;
	if (r < 2 * rem && r % 2 == 0) {
		mpii_sched_send(s, rbuf, count, d, r + 1);
		mpii_sched_fence(s); /* rbuf is sent before the result lands there */
		nr = -1;
	} else if (r < 2 * rem) {
		mpii_sched_recv(s, tmp, count, d, r - 1);
		mpii_sched_fence(s);
		mpii_sched_reduce(s, tmp, rbuf, count, d, op);
		nr = r / 2;
	}
	for (int mask = 1; nr >= 0 && mask < pof2; mask <<= 1) {
		int np = nr ^ mask, peer = np < rem ? np * 2 + 1 : np + rem;
		mpii_sched_send(s, rbuf, count, d, peer);
		mpii_sched_recv(s, tmp, count, d, peer);
		mpii_sched_fence(s);
		if (peer < r || mpii_op_commutative(op)) {
			mpii_sched_reduce(s, tmp, rbuf, count, d, op);
		} else { /* rbuf = rbuf op tmp */
			mpii_sched_reduce(s, rbuf, tmp, count, d, op);
			mpii_sched_copy(s, tmp, count, d, rbuf, count, d);
		}
	}
	if (r < 2 * rem && r % 2)
		mpii_sched_send(s, rbuf, count, d, r - 1);
	else if (r < 2 * rem)
		mpii_sched_recv(s, rbuf, count, d, r + 1);
	mpii_sched_fence(s);
}

/* Inclusive (excl 0) or exclusive prefix reduction along the chain of ranks. */
static void b_scan(struct mpii_sched *s, const void *in, void *out, int count, struct mpii_dtype *d,
                   MPI_Op op, const struct mpii_comm *c, int excl)
{
	char *mine, *pre;

	if (!count)
		return;
	mpii_sched_tmp(s, d, count, &mine);
	mpii_sched_copy(s, in, count, d, mine, count, d);
	if (c->rank > 0) {
		mpii_sched_tmp(s, d, count, &pre);
		mpii_sched_recv(s, pre, count, d, c->rank - 1);
		mpii_sched_fence(s);
		if (excl)
			mpii_sched_copy(s, pre, count, d, out, count, d);
		mpii_sched_reduce(s, pre, mine, count, d, op);
	}
	if (!excl)
		mpii_sched_copy(s, mine, count, d, out, count, d);
	if (c->rank + 1 < c->size)
		mpii_sched_send(s, mine, count, d, c->rank + 1);
	mpii_sched_fence(s);
}

/* ---- public routines ---- */

#define NBC_BEGIN(fn, count, type, icall)                                                          \
	struct mpii_comm *c;                                                                       \
	struct mpii_dtype *d = NULL;                                                               \
	struct mpii_sched *s;                                                                      \
	int rc = mpii_nbc_check(comm, req, &c);                                                    \
	if (rc == MPI_SUCCESS && !(d = mpii_dt(type)))                                             \
		rc = MPI_ERR_TYPE;                                                                 \
	if (rc == MPI_SUCCESS && (count) < 0)                                                      \
		rc = MPI_ERR_COUNT;                                                                \
	if (rc == MPI_SUCCESS && c->inter)                                                         \
		return (icall);                                                                    \
	if (rc != MPI_SUCCESS)                                                                     \
		return mpii_err(c, rc, fn);                                                        \
	s = mpii_sched_new(c)

#define NBC_END(fn) return mpii_err(c, mpii_sched_start(s, c, req), fn)

int mpii_nbc_inter(const char *fn)
{
	char why[200];

	snprintf(why, sizeof(why),
	         "%s on an intercommunicator is not supported by lamkit's MPI (use the blocking "
	         "call, or MPI_Intercomm_merge first)",
	         fn);
	mpii_err_detail(why);
	return MPI_ERR_COMM;
}

MPII_ALIAS(Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);

	NBC_BEGIN("MPI_Ibarrier", 0, MPI_BYTE, mpii_inbc_barrier(c, req));
	/* dissemination: round k reaches 2^k ranks ahead */
	for (int k = 1; s && k < c->size; k <<= 1) {
		mpii_sched_send(s, NULL, 0, b, (c->rank + k) % c->size);
		mpii_sched_recv(s, NULL, 0, b, (c->rank - k + c->size) % c->size);
		mpii_sched_fence(s);
	}
	NBC_END("MPI_Ibarrier");
}

MPII_ALIAS(Ibcast)
int PMPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Ibcast", count, type, mpii_inbc_bcast(buf, count, d, root, c, req));
	if (root < 0 || root >= c->size) {
		mpii_sched_free(s);
		return mpii_err(c, MPI_ERR_ROOT, "MPI_Ibcast");
	}
	if (s)
		b_bcast(s, buf, count, d, root, c);
	NBC_END("MPI_Ibcast");
}

/* Op and root checks of the reductions (root < 0: none). MPI code; frees s on failure. */
static int red_check(struct mpii_sched *s, MPI_Op op, int root, const struct mpii_comm *c)
{
	int rc = MPI_SUCCESS;

	if (root >= 0 && root >= c->size)
		rc = MPI_ERR_ROOT;
	else if (!mpii_op_valid(op))
		rc = MPI_ERR_OP;
	if (rc != MPI_SUCCESS)
		mpii_sched_free(s);
	return rc;
}

MPII_ALIAS(Ireduce)
int PMPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Ireduce", count, type,
	          mpii_inbc_reduce(sbuf, rbuf, count, d, op, root, c, req));
	if (root < 0)
		root = c->size;
	if ((rc = red_check(s, op, root, c)) != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Ireduce");
	if (s)
		b_reduce(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, d, op, root, c);
	NBC_END("MPI_Ireduce");
}

MPII_ALIAS(Iallreduce)
int PMPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Iallreduce", count, type,
	          mpii_inbc_allreduce(sbuf, rbuf, count, d, op, c, req));
	if ((rc = red_check(s, op, -1, c)) != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Iallreduce");
	if (s)
		b_allreduce(s, sbuf, rbuf, count, d, op, c);
	NBC_END("MPI_Iallreduce");
}

/* Reduce the whole vector to rank 0, which sends each rank its block. */
static void b_reduce_scatter(struct mpii_sched *s, const void *sbuf, void *rbuf, const int *rcounts,
                             int rcount, struct mpii_dtype *d, MPI_Op op, const struct mpii_comm *c)
{
	int total = 0, off = 0;
	char *all = NULL;

	for (int i = 0; i < c->size; i++)
		total += rcounts ? rcounts[i] : rcount;
	if (!total)
		return;
	if (c->rank == 0)
		mpii_sched_tmp(s, d, total, &all);
	b_reduce(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, all, total, d, op, 0, c);
	for (int i = 0; i < c->size; i++) {
		int cnt = rcounts ? rcounts[i] : rcount;
		char *blk = all ? all + (MPI_Aint)off * d->extent : NULL;
		if (c->rank == 0 && i == 0)
			mpii_sched_copy(s, blk, cnt, d, rbuf, cnt, d);
		else if (c->rank == 0)
			mpii_sched_send(s, blk, cnt, d, i);
		else if (i == c->rank)
			mpii_sched_recv(s, rbuf, cnt, d, 0);
		off += cnt;
	}
	mpii_sched_fence(s);
}

MPII_ALIAS(Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                         MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN(
	    "MPI_Ireduce_scatter", 0, type,
	    mpii_inbc_reduce_scatter(sbuf, rbuf, rcounts, 0, d, op, c, req, "MPI_Ireduce_scatter"));
	for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
		if (rcounts[i] < 0)
			rc = MPI_ERR_COUNT;
	if (rc != MPI_SUCCESS || (rc = red_check(s, op, -1, c)) != MPI_SUCCESS) {
		if (rc == MPI_ERR_COUNT)
			mpii_sched_free(s);
		return mpii_err(c, rc, "MPI_Ireduce_scatter");
	}
	if (s)
		b_reduce_scatter(s, sbuf, rbuf, rcounts, 0, d, op, c);
	NBC_END("MPI_Ireduce_scatter");
}

MPII_ALIAS(Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Ireduce_scatter_block", rcount, type,
	          mpii_inbc_reduce_scatter(sbuf, rbuf, NULL, rcount, d, op, c, req,
	                                   "MPI_Ireduce_scatter_block"));
	if ((rc = red_check(s, op, -1, c)) != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Ireduce_scatter_block");
	if (s)
		b_reduce_scatter(s, sbuf, rbuf, NULL, rcount, d, op, c);
	NBC_END("MPI_Ireduce_scatter_block");
}

MPII_ALIAS(Iscan)
int PMPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
               MPI_Request *req)
{
	NBC_BEGIN("MPI_Iscan", count, type, mpii_err(c, mpii_nbc_inter("MPI_Iscan"), "MPI_Iscan"));
	if ((rc = red_check(s, op, -1, c)) != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Iscan");
	if (s)
		b_scan(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, d, op, c, 0);
	NBC_END("MPI_Iscan");
}

MPII_ALIAS(Iexscan)
int PMPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Iexscan", count, type,
	          mpii_err(c, mpii_nbc_inter("MPI_Iexscan"), "MPI_Iexscan"));
	if ((rc = red_check(s, op, -1, c)) != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Iexscan");
	if (s)
		b_scan(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, d, op, c, 1);
	NBC_END("MPI_Iexscan");
}
