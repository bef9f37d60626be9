/* lib/mpi/mpi_coll.c: barrier, bcast, reduce, allreduce (recursive doubling/Rabenseifner), scans.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

enum { T_BARRIER = 16, T_BCAST, T_REDUCE, T_ALLREDUCE, T_SCAN, T_EXSCAN, T_RS };

#define RABENSEIFNER_MIN 65536 /* bytes: below, recursive doubling on the whole vector */
#define BCAST_SPLIT_MIN  262144
#define BCAST_ISEND_MIN  16384
#define REDUCE_RAB_MIN   65536  /* bytes: below, a binomial tree of the whole vector */
#define REDUCE_PIPE_MIN  131072 /* bytes: from here, the pipelined tree (reduce_pipe) */

/* Copy count elements of d from src to dst (both in d's layout). */
void mpii_copy(const void *src, void *dst, int count, struct mpii_dtype *d)
{
	size_t n = d->size * (size_t)count;
	char *tmp;

	if (src == dst || !n)
		return;
	if (d->contig) {
		memmove(mpii_at(dst, d->true_lb), mpii_at(src, d->true_lb), n);
		return;
	}
	tmp = malloc(n);
	if (!tmp)
		return;
	mpii_pack(d, count, src, 0, tmp, n);
	mpii_unpack(d, count, dst, 0, tmp, n);
	free(tmp);
}

int mpii_barrier(struct mpii_comm *c)
{
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);
	struct mpii_hier *h = mpii_hier_of(c);

	if (h)
		return mpii_hier_barrier(h);
	struct mpii_cshm *s = mpii_cshm_of(c);
	if (s)
		return mpii_cshm_barrier(s);

	int err = MPI_SUCCESS;
	for (int k = 1; k < c->size; k <<= 1) {
		int rc = mpii_sendrecv(NULL, 0, b, (c->rank + k) % c->size, NULL, 0, b,
		                       (c->rank - k + c->size) % c->size, T_BARRIER, c, 1, NULL);
		/* a failed rank (--on-node-failure continue): every round still goes on, so that
		 * the others, who wait for this rank's later messages, are not left hanging */
		if (rc != MPI_SUCCESS && rc != MPI_ERR_PROC_FAILED)
			return rc;
		if (rc != MPI_SUCCESS)
			err = rc;
	}
	return err;
}

static int bcast_binomial(void *buf, int count, struct mpii_dtype *d, int root, struct mpii_comm *c)
{
	int n = c->size, vr = (c->rank - root + n) % n, mask = 1, rc;

	while (mask < n) {
		if (vr & mask) {
			rc = mpii_recv(buf, count, d, (vr - mask + root) % n, T_BCAST, c, 1, NULL);
			if (rc != MPI_SUCCESS)
				return rc;
			break;
		}
		mask <<= 1;
	}
	/* A message read by the child (RTS, then FIN): every child's RTS goes out at once and the
	 * reads overlap, instead of the next child's RTS waiting for the FIN of the one before.
	 * 64 KiB at 4 ranks on 2 cores, where each handshake waits for the child to get a CPU:
	 * 55 -> 37 us (5 paired rounds; Open MPI 35). Smaller ones go eagerly: done at once. */
	if (d->size * (size_t)count >= BCAST_ISEND_MIN) {
		struct lk_request *q[32];
		int nq = 0, k;

		rc = MPI_SUCCESS;
		for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
			if (vr + mask < n &&
			    (rc = mpii_isend(buf, count, d, (vr + mask + root) % n, T_BCAST, c, 1,
			                     MODE_STD, &q[nq])) == MPI_SUCCESS)
				nq++;
		for (int i = 0; i < nq; i++)
			if ((k = mpii_wait(q[i], NULL)) != MPI_SUCCESS && rc == MPI_SUCCESS)
				rc = k;
		return rc;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (vr + mask < n) {
			rc = mpii_send(buf, count, d, (vr + mask + root) % n, T_BCAST, c, 1,
			               MODE_STD);
			if (rc != MPI_SUCCESS)
				return rc;
		}
	}
	return MPI_SUCCESS;
}

/* Large contiguous bcast: the root scatters one chunk per rank, then a ring allgather. Not where
 * the ranks share CPUs: each of the ring's n - 1 steps waits for both of its ranks to get a CPU,
 * and the binomial tree's few long reads won (4 ranks on 2 CPUs, 4 paired rounds: 256 KiB 311
 * -> 85 us, 1 MiB 458 -> 215, 4 MiB 1931 -> 907; Open MPI 73, 256, 1015). */
static int bcast_split(char *p, size_t bytes, int root, struct mpii_comm *c)
{
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);
	int n = c->size, vr = (c->rank - root + n) % n, rc;
	size_t chunk = (bytes + (size_t)n - 1) / (size_t)n;

#define CH_OFF(i) ((size_t)(i)*chunk < bytes ? (size_t)(i)*chunk : bytes)
#define CH_LEN(i) (CH_OFF((i) + 1) - CH_OFF(i))
	if (vr == 0) {
		for (int i = 1; i < n; i++) {
			rc = mpii_send(p + CH_OFF(i), (int)CH_LEN(i), b, (i + root) % n, T_BCAST, c,
			               1, MODE_STD);
			if (rc != MPI_SUCCESS)
				return rc;
		}
	} else {
		rc = mpii_recv(p + CH_OFF(vr), (int)CH_LEN(vr), b, root, T_BCAST, c, 1, NULL);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	for (int s = 0; s < n - 1; s++) {
		int sb = (vr - s + n) % n, rb = (vr - s - 1 + n) % n;
		rc = mpii_sendrecv(p + CH_OFF(sb), (int)CH_LEN(sb), b, (c->rank + 1) % n,
		                   p + CH_OFF(rb), (int)CH_LEN(rb), b, (c->rank - 1 + n) % n,
		                   T_BCAST, c, 1, NULL);
		if (rc != MPI_SUCCESS)
			return rc;
	}
#undef CH_OFF
#undef CH_LEN
	return MPI_SUCCESS;
}

int mpii_bcast(void *buf, int count, struct mpii_dtype *d, int root, struct mpii_comm *c)
{
	size_t bytes = d->size * (size_t)count;

	if (c->size == 1 || !bytes)
		return MPI_SUCCESS;
	struct mpii_hier *h = mpii_hier_of(c);
	if (h)
		return mpii_hier_bcast(h, buf, count, d, root);
	if (d->contig && bytes >= BCAST_SPLIT_MIN && c->size > 2 && bytes >= (size_t)c->size &&
	    !mpii_shares_cpus(c))
		return bcast_split(mpii_at(buf, d->true_lb), bytes, root, c);
	size_t saved = mpii.eager_coll;
	mpii.eager_coll = mpii_coll_eager(c); /* where the ranks share CPUs (mpi_coll_shm.c) */
	int rc = bcast_binomial(buf, count, d, root, c);
	mpii.eager_coll = saved;
	return rc;
}

/* inout = in op inout, or inout = inout op in when in comes from a higher rank. */
static int combine(const void *lower, void *upper_io, char *other, int count, struct mpii_dtype *d,
                   MPI_Op op, int in_is_lower)
{
	if (in_is_lower || mpii_op_commutative(op))
		return mpii_reduce_local(lower, upper_io, count, d, op);
	/* need acc = acc op in: compute in' = acc op in into other, then copy back */
	int rc = mpii_reduce_local(upper_io, other, count, d, op);
	mpii_copy(other, upper_io, count, d);
	return rc;
}

/* Recursive doubling on the whole vector, with the usual fold for non-powers of two. */
static int allreduce_rd(char *acc, char *tmp, int count, struct mpii_dtype *d, MPI_Op op,
                        struct mpii_comm *c)
{
	int n = c->size, r = c->rank, pof2 = 1, rem, nr, rc = MPI_SUCCESS;

	while (pof2 * 2 <= n)
		pof2 *= 2;
	rem = n - pof2;
	if (r < 2 * rem) {
		if (r % 2 == 0) {
			rc = mpii_send(acc, count, d, r + 1, T_ALLREDUCE, c, 1, MODE_STD);
			nr = -1;
		} else {
			rc = mpii_recv(tmp, count, d, r - 1, T_ALLREDUCE, c, 1, NULL);
			if (rc == MPI_SUCCESS)
				rc = mpii_reduce_local(tmp, acc, count, d, op);
			nr = r / 2;
		}
	} else {
		nr = r - rem;
	}
	for (int mask = 1; nr >= 0 && mask < pof2 && rc == MPI_SUCCESS; mask <<= 1) {
		int np = nr ^ mask, peer = np < rem ? np * 2 + 1 : np + rem;
		rc = mpii_sendrecv(acc, count, d, peer, tmp, count, d, peer, T_ALLREDUCE, c, 1,
		                   NULL);
		if (rc == MPI_SUCCESS)
			rc = combine(tmp, acc, tmp, count, d, op, peer < r);
	}
	if (rc == MPI_SUCCESS && r < 2 * rem) {
		if (r % 2)
			rc = mpii_send(acc, count, d, r - 1, T_ALLREDUCE, c, 1, MODE_STD);
		else
			rc = mpii_recv(acc, count, d, r + 1, T_ALLREDUCE, c, 1, NULL);
	}
	return rc;
}

/* Block i of n of a vector of count elements starts at element BOFF(i). */
#define BOFF(i) ((int)((long long)count * (i) / n))

/* Reduce-scatter by recursive halving, the first half of Rabenseifner's algorithms: rank
 * (c->rank - root) mod n ends with block vr of the reduced vector in acc (tmp: scratch of the
 * whole vector); *plo, *phi: the block range it holds (vr, vr + 1). The first step sends straight
 * from src: only the kept half is copied. Needs a commutative op, a power-of-two size and
 * count >= size. */
static int reduce_scatter_halving(const char *src, char *acc, char *tmp, int count,
                                  struct mpii_dtype *d, MPI_Op op, int root, int tag,
                                  struct mpii_comm *c, int *plo, int *phi)
{
	int n = c->size, vr = (c->rank - root + n) % n, lo = 0, hi = n, rc = MPI_SUCCESS;
	MPI_Aint ext = d->extent;

	for (int mask = n / 2; mask > 0 && rc == MPI_SUCCESS; mask >>= 1) {
		int vp = vr ^ mask, peer = (vp + root) % n, mid = (lo + hi) / 2;
		int klo = vr < vp ? lo : mid, khi = vr < vp ? mid : hi; /* the half I keep */
		int slo = vr < vp ? mid : lo, shi = vr < vp ? hi : mid;
		const char *from = mask == n / 2 ? src : acc;

		rc = mpii_sendrecv(from + BOFF(slo) * ext, BOFF(shi) - BOFF(slo), d, peer,
		                   tmp + BOFF(klo) * ext, BOFF(khi) - BOFF(klo), d, peer, tag, c, 1,
		                   NULL);
		if (from != acc)
			mpii_copy(from + BOFF(klo) * ext, acc + BOFF(klo) * ext,
			          BOFF(khi) - BOFF(klo), d);
		if (rc == MPI_SUCCESS)
			rc = mpii_reduce_local(tmp + BOFF(klo) * ext, acc + BOFF(klo) * ext,
			                       BOFF(khi) - BOFF(klo), d, op);
		lo = klo;
		hi = khi;
	}
	*plo = lo;
	*phi = hi;
	return rc;
}

/* Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling. Same
 * conditions as reduce_scatter_halving. */
static int allreduce_rab(const char *src, char *acc, char *tmp, int count, struct mpii_dtype *d,
                         MPI_Op op, struct mpii_comm *c)
{
	int n = c->size, r = c->rank, lo, hi;
	MPI_Aint ext = d->extent;
	int rc = reduce_scatter_halving(src, acc, tmp, count, d, op, 0, T_ALLREDUCE, c, &lo, &hi);

	for (int mask = 1; mask < n && rc == MPI_SUCCESS; mask <<= 1) {
		int peer = r ^ mask, plo = lo ^ mask, phi = plo + (hi - lo);
		rc = mpii_sendrecv(acc + BOFF(lo) * ext, BOFF(hi) - BOFF(lo), d, peer,
		                   acc + BOFF(plo) * ext, BOFF(phi) - BOFF(plo), d, peer,
		                   T_ALLREDUCE, c, 1, NULL);
		if (plo < lo)
			lo = plo;
		else
			hi = phi;
	}
	return rc;
}

/* LAMKIT_REDUCE=binomial|rab|pipe: one algorithm for every reduce it can do (to measure);
 * unset: the choice of mpii_reduce_flat. */
enum { RED_AUTO, RED_BINOMIAL, RED_RAB, RED_PIPE };
static int reduce_forced(void)
{
	static int alg = -1;

	if (alg < 0) {
		const char *e = getenv("LAMKIT_REDUCE");
		alg = !e                       ? RED_AUTO
		      : !strcmp(e, "binomial") ? RED_BINOMIAL
		      : !strcmp(e, "rab")      ? RED_RAB
		      : !strcmp(e, "pipe")     ? RED_PIPE
		                               : RED_AUTO;
	}
	return alg;
}

/* Rabenseifner's reduce: reduce-scatter by recursive halving, then a binomial gather of the
 * blocks to the root, which receives them straight into rbuf. Each rank combines 1/n of the
 * vector instead of the root and its tree combining all of it in turn, and a leaf that must
 * receive cannot run ahead of its root. Same conditions as reduce_scatter_halving. */
static int reduce_rab(const char *src, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                      int root, struct mpii_comm *c)
{
	int n = c->size, vr = (c->rank - root + n) % n, lo, hi, rc;
	MPI_Aint ext = d->extent;
	char *acc = rbuf, *tmp;
	void *m1 = NULL, *m2 = mpii_tmpbuf(d, count, &tmp);

	if (c->rank != root)
		m1 = mpii_tmpbuf(d, count, &acc);
	if (!m2 || (c->rank != root && !m1)) {
		mpii_tmpbuf_free(m1);
		mpii_tmpbuf_free(m2);
		return MPI_ERR_NO_MEM;
	}
	rc = reduce_scatter_halving(src, acc, tmp, count, d, op, root, T_REDUCE, c, &lo, &hi);
	for (int mask = 1; mask < n && rc == MPI_SUCCESS; mask <<= 1) {
		if (vr & mask) { /* hand blocks [lo, hi) to the rank below and stop */
			rc = mpii_send(acc + BOFF(lo) * ext, BOFF(hi) - BOFF(lo), d,
			               (vr - mask + root) % n, T_REDUCE, c, 1, MODE_STD);
			break;
		}
		/* blocks [hi, hi + mask) from the rank above */
		rc = mpii_recv(acc + BOFF(hi) * ext, BOFF(hi + mask) - BOFF(hi), d,
		               (vr + mask + root) % n, T_REDUCE, c, 1, NULL);
		hi += mask;
	}
	mpii_tmpbuf_free(m1);
	mpii_tmpbuf_free(m2);
	return rc;
}
#undef BOFF

int mpii_allreduce_rab_fits(const struct mpii_dtype *d, int count, int n, MPI_Op op)
{
	return d->size * (size_t)count >= RABENSEIFNER_MIN && (n & (n - 1)) == 0 && count >= n &&
	       mpii_op_commutative(op);
}

int mpii_allreduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                   struct mpii_comm *c)
{
	char *tmp;
	void *mem;
	int rc, n = c->size;
	struct mpii_hier *h = count > 0 && mpii_op_commutative(op) ? mpii_hier_of(c) : NULL;

	if (h)
		return mpii_hier_allreduce(h, sbuf, rbuf, count, d, op);
	struct mpii_cshm *s = count > 0 ? mpii_cshm_of(c) : NULL;
	if (s && (rc = mpii_cshm_allreduce(s, sbuf, rbuf, count, d, op)) != MPII_CSHM_NO)
		return rc;

	int rab = mpii_allreduce_rab_fits(d, count, n, op);

	if (sbuf != MPI_IN_PLACE && (n == 1 || !rab))
		mpii_copy(sbuf, rbuf, count, d);
	if (n == 1 || count == 0)
		return MPI_SUCCESS;
	mem = mpii_tmpbuf(d, count, &tmp);
	if (!mem)
		return MPI_ERR_NO_MEM;
	if (rab)
		rc = allreduce_rab(sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, tmp, count, d, op, c);
	else
		rc = allreduce_rd(rbuf, tmp, count, d, op, c);
	mpii_tmpbuf_free(mem);
	return rc;
}

/* A pipelined reduce: the binomial tree of mpii_reduce_flat with the vector cut into segments of
 * REDUCE_SEG bytes, each combined while the next ones travel. Segments are larger than tcp's
 * eager limit (64 KiB): each goes by rendezvous, and the REDUCE_DEPTH receives a rank posts
 * ahead for each child pace that child (an eager stream ran ahead of its root, into unexpected
 * messages). The first child's segments are received straight into the accumulator (rbuf at the
 * root) and combined with the rank's own input there: nothing is copied. The receives read alone
 * (mpii_irecv_alone): with the sender's help in each copy, a 2-rank reduce of 1 MiB on one node
 * took 139-159 us instead of 100-115. Commutative ops. */
#define REDUCE_SEG   (256 * 1024)
#define REDUCE_DEPTH 4
static int reduce_pipe(const char *src, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                       int root, struct mpii_comm *c)
{
	int n = c->size, vr = (c->rank - root + n) % n, parent = -1, nk = 0, kids[32];
	int seg = d->size >= REDUCE_SEG ? 1 : (int)(REDUCE_SEG / (d->size ? d->size : 1));
	int nseg = (count - 1) / seg + 1, rc = MPI_SUCCESS, direct; /* count > 0 */
	MPI_Aint ext = d->extent;
	char *acc, *slots = NULL;
	void *m1 = NULL, *m2 = NULL;
	struct lk_request *rq[32][REDUCE_DEPTH], *sq[REDUCE_DEPTH];

	for (int mask = 1; mask < n; mask <<= 1) {
		if (vr & mask) {
			parent = (vr - mask + root) % n;
			break;
		}
		if (vr + mask < n)
			kids[nk++] = (vr + mask + root) % n;
	}
	if (!nk)
		acc = (char *)src; /* a leaf sends its input */
	else if (c->rank == root)
		acc = rbuf;
	else if (!(m1 = mpii_tmpbuf(d, count, &acc)))
		return MPI_ERR_NO_MEM;
	/* the first child's segments go straight into acc unless acc holds the input already */
	direct = nk && acc != src;
	if (nk - direct > 0 && !(m2 = mpii_tmpbuf(d, seg * REDUCE_DEPTH * (nk - direct), &slots))) {
		mpii_tmpbuf_free(m1);
		return MPI_ERR_NO_MEM;
	}
#define SEGN(s) ((s) == nseg - 1 ? count - (s)*seg : seg)
#define SLOT(k, s)                                                                                 \
	(slots + ((size_t)((k)-direct) * REDUCE_DEPTH + (size_t)((s) % REDUCE_DEPTH)) * seg * ext)
#define RDST(k, s) ((k) < direct ? acc + (MPI_Aint)(s)*seg * ext : SLOT(k, s))
	for (int k = 0; k < nk; k++)
		for (int s = 0; s < REDUCE_DEPTH; s++)
			rq[k][s] = NULL;
	for (int s = 0; s < REDUCE_DEPTH; s++)
		sq[s] = NULL;
	for (int k = 0; k < nk && rc == MPI_SUCCESS; k++)
		for (int s = 0; s < nseg && s < REDUCE_DEPTH && rc == MPI_SUCCESS; s++)
			rc = mpii_irecv_alone(RDST(k, s), SEGN(s), d, kids[k], T_REDUCE, c, 1,
			                      &rq[k][s]);
	for (int s = 0; s < nseg && rc == MPI_SUCCESS; s++) {
		char *a = acc + (MPI_Aint)s * seg * ext;

		for (int k = 0; k < nk && rc == MPI_SUCCESS; k++) {
			rc = mpii_wait(rq[k][s % REDUCE_DEPTH], NULL);
			rq[k][s % REDUCE_DEPTH] = NULL;
			if (rc == MPI_SUCCESS)
				rc = mpii_reduce_local(k < direct ? src + (MPI_Aint)s * seg * ext
				                                  : SLOT(k, s),
				                       a, SEGN(s), d, op);
			if (rc == MPI_SUCCESS && s + REDUCE_DEPTH < nseg)
				rc = mpii_irecv_alone(RDST(k, s + REDUCE_DEPTH),
				                      SEGN(s + REDUCE_DEPTH), d, kids[k], T_REDUCE,
				                      c, 1, &rq[k][s % REDUCE_DEPTH]);
		}
		if (parent < 0 || rc != MPI_SUCCESS)
			continue;
		if (sq[s % REDUCE_DEPTH]) {
			rc = mpii_wait(sq[s % REDUCE_DEPTH], NULL);
			sq[s % REDUCE_DEPTH] = NULL;
		}
		if (rc == MPI_SUCCESS)
			rc = mpii_isend(a, SEGN(s), d, parent, T_REDUCE, c, 1, MODE_STD,
			                &sq[s % REDUCE_DEPTH]);
	}
	/* the last sends; after an error also the receives, those not matched yet withdrawn (a
	 * child that failed too sends no more) */
	for (int s = 0; s < REDUCE_DEPTH; s++) {
		int r2;

		for (int k = 0; k < nk; k++)
			if (rq[k][s]) {
				mpii_cancel_recv(rq[k][s]);
				mpii_wait(rq[k][s], NULL);
			}
		if (sq[s] && (r2 = mpii_wait(sq[s], NULL)) != MPI_SUCCESS && rc == MPI_SUCCESS)
			rc = r2;
	}
#undef SEGN
#undef SLOT
#undef RDST
	mpii_tmpbuf_free(m1);
	mpii_tmpbuf_free(m2);
	return rc;
}

/* Reduce to root. Commutative ops: from REDUCE_PIPE_MIN bytes the pipelined tree, from
 * REDUCE_RAB_MIN Rabenseifner's (power-of-two sizes), below a binomial tree of the whole vector;
 * other ops: an ordered chain at rank 0. 2 ranks, 1 MiB of doubles, against the binomial tree:
 * on one node 215-290 -> 80-110 us (Open MPI 78-92), over tcp on one host 327-398 -> 189 (one
 * run 394; Open MPI 186-216); 64 KiB over tcp called back to back 72-85 -> 22-26 (Rabenseifner's:
 * the leaf must receive before it sends again). */
int mpii_reduce_flat(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                     int root, struct mpii_comm *c)
{
	int n = c->size, comm_op = mpii_op_commutative(op), eff = comm_op ? root : 0;
	int vr = (c->rank - eff + n) % n, rc = MPI_SUCCESS;
	int alg = reduce_forced(), rab_ok = (n & (n - 1)) == 0 && count >= n;
	size_t bytes = d->size * (size_t)count;
	const char *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	char *acc, *tmp;
	void *m1, *m2;

	if (alg == RED_AUTO)
		alg = bytes >= REDUCE_PIPE_MIN            ? RED_PIPE
		      : bytes >= REDUCE_RAB_MIN && rab_ok ? RED_RAB
		                                          : RED_BINOMIAL;
	/* With more ranks than cores each exchange of Rabenseifner's reduce waits for its partner
	 * to be scheduled, and a binomial tree's leaves, sending eagerly, run ahead of their
	 * parents; the pipelined tree's parents post their receives ahead and pace them (4 ranks on
	 * 2 cores, 64 KiB, medians of 5 paired runs: Rabenseifner's 154 us, binomial 162, pipelined
	 * 59, Open MPI 40). The ranks of a one-node communicator agree on blocking (tp.c): they
	 * choose alike. */
	if (alg == RED_RAB && reduce_forced() == RED_AUTO && mpii.yield && mpii_cshm_of(c))
		alg = RED_PIPE;
	if (comm_op && n > 1 && count > 0 && alg == RED_PIPE)
		return reduce_pipe(src, rbuf, count, d, op, root, c);
	if (comm_op && n > 1 && alg == RED_RAB && rab_ok)
		return reduce_rab(src, rbuf, count, d, op, root, c);
	m1 = mpii_tmpbuf(d, count, &acc);
	m2 = mpii_tmpbuf(d, count, &tmp);
	if (!m1 || !m2) {
		mpii_tmpbuf_free(m1);
		mpii_tmpbuf_free(m2);
		return MPI_ERR_NO_MEM;
	}
	mpii_copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, acc, count, d);
	for (int mask = 1; mask < n && rc == MPI_SUCCESS; mask <<= 1) {
		if (vr & mask) {
			rc = mpii_send(acc, count, d, (vr - mask + eff) % n, T_REDUCE, c, 1,
			               MODE_STD);
			break;
		}
		if (vr + mask < n) {
			rc = mpii_recv(tmp, count, d, (vr + mask + eff) % n, T_REDUCE, c, 1, NULL);
			if (rc == MPI_SUCCESS)
				rc = combine(tmp, acc, tmp, count, d, op, 0);
		}
	}
	if (rc == MPI_SUCCESS && eff != root) {
		if (c->rank == eff)
			rc = mpii_send(acc, count, d, root, T_REDUCE, c, 1, MODE_STD);
		else if (c->rank == root)
			rc = mpii_recv(acc, count, d, eff, T_REDUCE, c, 1, NULL);
	}
	if (rc == MPI_SUCCESS && c->rank == root)
		mpii_copy(acc, rbuf, count, d);
	mpii_tmpbuf_free(m1);
	mpii_tmpbuf_free(m2);
	return rc;
}

/* ---- public routines ---- */

static int coll_check(MPI_Comm comm, struct mpii_comm **cp, int count, MPI_Datatype type,
                      struct mpii_dtype **dp)
{
	*cp = mpii_comm(comm);
	if (!mpii.initialized || mpii.finalized)
		return MPI_ERR_OTHER;
	if (!*cp)
		return MPI_ERR_COMM;
	if (count < 0)
		return MPI_ERR_COUNT;
	*dp = mpii_dt(type);
	return *dp ? MPI_SUCCESS : MPI_ERR_TYPE;
}

#define COLL(fn, count, type)                                                                      \
	struct mpii_comm *c;                                                                       \
	struct mpii_dtype *d = NULL;                                                               \
	int rc = coll_check(comm, &c, count, type, &d);                                            \
	if (rc != MPI_SUCCESS)                                                                     \
	return mpii_err(c, rc, fn)

MPII_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
	COLL("MPI_Barrier", 0, MPI_BYTE);
	if (c->inter)
		return mpii_err(c, mpii_inter_barrier(c), "MPI_Barrier");
	return mpii_err(c, mpii_barrier(c), "MPI_Barrier");
}

MPII_ALIAS(Bcast)
int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	COLL("MPI_Bcast", count, type);
	if (c->inter)
		return mpii_err(c, mpii_inter_bcast(buf, count, d, root, c), "MPI_Bcast");
	if (root < 0 || root >= c->size)
		return mpii_err(c, MPI_ERR_ROOT, "MPI_Bcast");
	return mpii_err(c, mpii_bcast(buf, count, d, root, c), "MPI_Bcast");
}

MPII_ALIAS(Reduce)
int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm)
{
	COLL("MPI_Reduce", count, type);
	if (c->inter && mpii_op_valid(op))
		return mpii_err(c, mpii_inter_reduce(sbuf, rbuf, count, d, op, root, c),
		                "MPI_Reduce");
	if (root < 0 || root >= c->size)
		return mpii_err(c, MPI_ERR_ROOT, "MPI_Reduce");
	if (!mpii_op_valid(op))
		return mpii_err(c, MPI_ERR_OP, "MPI_Reduce");
	if (count == 0)
		return MPI_SUCCESS;
	struct mpii_hier *h = count > 0 && mpii_op_commutative(op) ? mpii_hier_of(c) : NULL;
	if (h)
		return mpii_err(c, mpii_hier_reduce(h, sbuf, rbuf, count, d, op, root, c),
		                "MPI_Reduce");
	return mpii_err(c, mpii_reduce_flat(sbuf, rbuf, count, d, op, root, c), "MPI_Reduce");
}

MPII_ALIAS(Allreduce)
int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
	COLL("MPI_Allreduce", count, type);
	if (!mpii_op_valid(op))
		return mpii_err(c, MPI_ERR_OP, "MPI_Allreduce");
	if (c->inter)
		return mpii_err(c, mpii_inter_allreduce(sbuf, rbuf, count, d, op, c),
		                "MPI_Allreduce");
	return mpii_err(c, mpii_allreduce(sbuf, rbuf, count, d, op, c), "MPI_Allreduce");
}

MPII_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm)
{
	int total = 0, before = 0;
	char *all;
	void *mem;

	COLL("MPI_Reduce_scatter", 0, type);
	if (!mpii_op_valid(op))
		return mpii_err(c, MPI_ERR_OP, "MPI_Reduce_scatter");
	if (c->inter)
		return mpii_err(c, mpii_inter_reduce_scatter(sbuf, rbuf, rcounts, d, op, c),
		                "MPI_Reduce_scatter");
	for (int i = 0; i < c->size; i++) {
		if (i < c->rank)
			before += rcounts[i];
		total += rcounts[i];
	}
	mem = mpii_tmpbuf(d, total, &all);
	if (!mem)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Reduce_scatter");
	rc = mpii_allreduce(sbuf == MPI_IN_PLACE ? rbuf : sbuf, all, total, d, op, c);
	if (rc == MPI_SUCCESS)
		mpii_copy(all + (MPI_Aint)before * d->extent, rbuf, rcounts[c->rank], d);
	mpii_tmpbuf_free(mem);
	return mpii_err(c, rc, "MPI_Reduce_scatter");
}

MPII_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
	int *counts;

	COLL("MPI_Reduce_scatter_block", rcount, type);
	counts = malloc(sizeof(int) * (size_t)c->size);
	if (!counts)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Reduce_scatter_block");
	for (int i = 0; i < c->size; i++)
		counts[i] = rcount;
	rc = PMPI_Reduce_scatter(sbuf, rbuf, counts, type, op, comm);
	free(counts);
	return rc;
}

/* Inclusive (excl == 0) or exclusive prefix reduction along a chain of ranks. */
static int scan(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                struct mpii_comm *c, int excl)
{
	char *mine, *pre;
	void *m1 = mpii_tmpbuf(d, count, &mine), *m2 = mpii_tmpbuf(d, count, &pre);
	int rc = MPI_SUCCESS, tag = excl ? T_EXSCAN : T_SCAN;

	if (!m1 || !m2) {
		mpii_tmpbuf_free(m1);
		mpii_tmpbuf_free(m2);
		return MPI_ERR_NO_MEM;
	}
	mpii_copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, mine, count, d);
	if (c->rank > 0) {
		rc = mpii_recv(pre, count, d, c->rank - 1, tag, c, 1, NULL);
		if (excl)
			mpii_copy(pre, rbuf, count, d);
		if (rc == MPI_SUCCESS)
			rc = mpii_reduce_local(pre, mine, count, d, op);
	}
	if (!excl)
		mpii_copy(mine, rbuf, count, d);
	if (rc == MPI_SUCCESS && c->rank + 1 < c->size)
		rc = mpii_send(mine, count, d, c->rank + 1, tag, c, 1, MODE_STD);
	mpii_tmpbuf_free(m1);
	mpii_tmpbuf_free(m2);
	return rc;
}

MPII_ALIAS(Scan)
int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	COLL("MPI_Scan", count, type);
	if (c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Scan");
	if (!mpii_op_valid(op))
		return mpii_err(c, MPI_ERR_OP, "MPI_Scan");
	return mpii_err(c, scan(sbuf, rbuf, count, d, op, c, 0), "MPI_Scan");
}

MPII_ALIAS(Exscan)
int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm)
{
	COLL("MPI_Exscan", count, type);
	if (c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Exscan");
	if (!mpii_op_valid(op))
		return mpii_err(c, MPI_ERR_OP, "MPI_Exscan");
	return mpii_err(c, scan(sbuf, rbuf, count, d, op, c, 1), "MPI_Exscan");
}
