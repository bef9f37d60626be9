/* lib/mpi/mpi_coll2.c: gather/scatter/allgather/alltoall families (linear, ring, pairwise). */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

enum { T_GATHER = 32, T_SCATTER, T_ALLGATHER, T_ALLTOALL };

/* Local copy between two (type, count) descriptions with the same signature size. */
static int xcopy(const void *src, int scount, struct mpii_dtype *sd, void *dst, int rcount,
                 struct mpii_dtype *rd)
{
	size_t sn = sd->size * (size_t)scount, rn = rd->size * (size_t)rcount;
	char *tmp;

	if (sn > rn)
		return MPI_ERR_TRUNCATE;
	if (sd == rd && scount == rcount) {
		mpii_copy(src, dst, scount, sd);
		return MPI_SUCCESS;
	}
	tmp = malloc(sn ? sn : 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	mpii_pack(sd, scount, src, 0, tmp, sn);
	mpii_unpack(rd, rcount, dst, 0, tmp, sn);
	free(tmp);
	return MPI_SUCCESS;
}

static int check(MPI_Comm comm, struct mpii_comm **cp)
{
	*cp = mpii_comm(comm);
	if (!mpii.initialized || mpii.finalized)
		return MPI_ERR_OTHER;
	if (!*cp)
		return MPI_ERR_COMM;
	return MPI_SUCCESS;
}

/* Type lookup that tolerates an unused side (returns BYTE for an invalid handle there). */
static struct mpii_dtype *dt_or_byte(MPI_Datatype t)
{
	struct mpii_dtype *d = mpii_dt(t);

	return d ? d : mpii_dt(MPI_BYTE);
}

/* Wait for and free n requests; first error wins. */
static int wait_all(struct lk_request **r, int n)
{
	int rc = MPI_SUCCESS, k;

	for (int i = 0; i < n; i++) {
		if (!r[i])
			continue;
		k = mpii_wait(r[i], NULL);
		if (rc == MPI_SUCCESS)
			rc = k;
	}
	return rc;
}

static int gatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                   const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                   int root, struct mpii_comm *c)
{
	struct lk_request **r;
	int rc = MPI_SUCCESS;

	if (c->rank != root)
		return mpii_send(sbuf, scount, sd, root, T_GATHER, c, 1, MODE_STD);
	r = calloc((size_t)c->size, sizeof(*r));
	if (!r)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
		int cnt = rcounts ? rcounts[i] : rcount;
		char *dst = (char *)rbuf + (MPI_Aint)(displs ? displs[i] : i * rcount) * rd->extent;
		if (i == root)
			rc = sbuf == MPI_IN_PLACE ? MPI_SUCCESS
			                          : xcopy(sbuf, scount, sd, dst, cnt, rd);
		else
			rc = mpii_irecv(dst, cnt, rd, i, T_GATHER, c, 1, &r[i]);
	}
	rc = rc == MPI_SUCCESS ? wait_all(r, c->size) : rc;
	free(r);
	return rc;
}

int mpii_gather(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf, int rcount,
                struct mpii_dtype *rd, int root, struct mpii_comm *c)
{
	if (c->rank == root && !rbuf) { /* the root could not allocate: consume and drop */
		for (int i = 0; i < c->size; i++)
			if (i != root)
				mpii_recv(NULL, 0, rd, i, T_GATHER, c, 1, NULL);
		return MPI_ERR_NO_MEM;
	}
	return gatherv(sbuf, scount, sd, rbuf, NULL, NULL, rcount, rd, root, c);
}

static int scatterv(const void *sbuf, const int *scounts, const int *displs, int scount,
                    struct mpii_dtype *sd, void *rbuf, int rcount, struct mpii_dtype *rd, int root,
                    struct mpii_comm *c)
{
	struct lk_request **r;
	int rc = MPI_SUCCESS;

	if (c->rank != root)
		return mpii_recv(rbuf, rcount, rd, root, T_SCATTER, c, 1, NULL);
	r = calloc((size_t)c->size, sizeof(*r));
	if (!r)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
		int cnt = scounts ? scounts[i] : scount;
		const char *src =
		    (const char *)sbuf + (MPI_Aint)(displs ? displs[i] : i * scount) * sd->extent;
		if (i == root)
			rc = rbuf == MPI_IN_PLACE ? MPI_SUCCESS
			                          : xcopy(src, cnt, sd, rbuf, rcount, rd);
		else
			rc = mpii_isend(src, cnt, sd, i, T_SCATTER, c, 1, MODE_STD, &r[i]);
	}
	rc = rc == MPI_SUCCESS ? wait_all(r, c->size) : rc;
	free(r);
	return rc;
}

/* Send to dst and receive from src, leaving out an empty side: the peer's matching side is
 * empty too (MPI asks the signatures to match), so it leaves it out as well. MPI code. */
static int pair(const void *sb, int scnt, struct mpii_dtype *sd, int dst, void *rb, int rcnt,
                struct mpii_dtype *rd, int src, int tag, struct mpii_comm *c)
{
	int sn = scnt > 0 && sd->size > 0, rn = rcnt > 0 && rd->size > 0;

	if (sn && rn)
		return mpii_sendrecv(sb, scnt, sd, dst, rb, rcnt, rd, src, tag, c, 1, NULL);
	if (sn)
		return mpii_send(sb, scnt, sd, dst, tag, c, 1, MODE_STD);
	if (rn)
		return mpii_recv(rb, rcnt, rd, src, tag, c, 1, NULL);
	return MPI_SUCCESS;
}

/* Ring allgather(v): in step s pass on the block received in step s - 1. */
static int allgatherv_ring(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                           const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                           struct mpii_comm *c)
{
	int n = c->size, r = c->rank, rc = MPI_SUCCESS, s0 = 0;

#define BLK(i) ((char *)rbuf + (MPI_Aint)(displs ? displs[i] : (i)*rcount) * rd->extent)
#define CNT(i) (rcounts ? rcounts[i] : rcount)
	if (sbuf != MPI_IN_PLACE && n > 1) {
		/* The first step sends the rank's own block from the send buffer, and the copy into
		 * rbuf is made while that exchange is under way: sent from the copy just made,
		 * whose lines sit dirty in this core's cache, the peer's read of it took 2.4x Open
		 * MPI's time at 64 KiB per rank and 2 ranks (alltoall, which sends from its send
		 * buffer, was level with it). */
		struct lk_request *q[2] = {NULL, NULL};
		int left = (r - 1 + n) % n;
		if (CNT(left) > 0 && rd->size > 0 &&
		    (rc = mpii_irecv(BLK(left), CNT(left), rd, left, T_ALLGATHER, c, 1, &q[0])) !=
		        MPI_SUCCESS)
			q[0] = NULL; /* not started: nothing to wait for */
		if (rc == MPI_SUCCESS && scount > 0 && sd->size > 0 &&
		    (rc = mpii_isend(sbuf, scount, sd, (r + 1) % n, T_ALLGATHER, c, 1, MODE_STD,
		                     &q[1])) != MPI_SUCCESS)
			q[1] = NULL;
		if (rc == MPI_SUCCESS)
			rc = xcopy(sbuf, scount, sd, BLK(r), CNT(r), rd);
		/* the started ones also after an error: a posted receive must not outlive the call
		 */
		int k = wait_all(q, 2);
		rc = rc == MPI_SUCCESS ? k : rc;
		s0 = 1;
	} else if (sbuf != MPI_IN_PLACE) {
		rc = xcopy(sbuf, scount, sd, BLK(r), CNT(r), rd);
	}
	/* every rank knows every block's size: an empty one is neither sent nor received */
	for (int s = s0; s < n - 1 && rc == MPI_SUCCESS; s++) {
		int sb = (r - s + n) % n, rb = (r - s - 1 + n) % n;
		rc = pair(BLK(sb), CNT(sb), rd, (r + 1) % n, BLK(rb), CNT(rb), rd, (r - 1 + n) % n,
		          T_ALLGATHER, c);
	}
#undef BLK
#undef CNT
	return rc;
}

/* The blocks go eagerly up to the limit of a symmetric collective (mpii_coll_eager). */
int mpii_allgatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                    const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                    struct mpii_comm *c)
{
	size_t saved = mpii.eager_coll;
	int rc;

	mpii.eager_coll = mpii_coll_eager(c);
	rc = allgatherv_ring(sbuf, scount, sd, rbuf, rcounts, displs, rcount, rd, c);
	mpii.eager_coll = saved;
	return rc;
}

int mpii_allgather(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf, int rcount,
                   struct mpii_dtype *rd, struct mpii_comm *c)
{
	struct mpii_hier *h = rcount > 0 && rd->size > 0 ? mpii_hier_of(c) : NULL;

	if (h)
		return mpii_hier_allgather(h, sbuf, scount, sd, rbuf, rcount, rd);
	struct mpii_cshm *s = rcount > 0 && rd->size > 0 ? mpii_cshm_of(c) : NULL;
	int rc = s ? mpii_cshm_allgather(s, sbuf, scount, sd, rbuf, rcount, rd) : MPII_CSHM_NO;
	if (rc != MPII_CSHM_NO)
		return rc;
	return mpii_allgatherv(sbuf, scount, sd, rbuf, NULL, NULL, rcount, rd, c);
}

/* Pairwise exchange; types per peer (alltoallw passes byte displacements). */
const char *mpii_a2a_sptr(const struct mpii_a2a *a, int i, struct mpii_dtype **d, int *cnt)
{
	*d = a->st ? mpii_dt(a->st[i]) : a->sd;
	*cnt = a->sc ? a->sc[i] : a->scount;
	if (a->bytes_disp)
		return a->sbuf + a->sdp[i];
	return a->sbuf + (MPI_Aint)(a->sdp ? a->sdp[i] : i * a->scount) * (*d)->extent;
}

char *mpii_a2a_rptr(const struct mpii_a2a *a, int i, struct mpii_dtype **d, int *cnt)
{
	*d = a->rt ? mpii_dt(a->rt[i]) : a->rd;
	*cnt = a->rc ? a->rc[i] : a->rcount;
	if (a->bytes_disp)
		return a->rbuf + a->rdp[i];
	return a->rbuf + (MPI_Aint)(a->rdp ? a->rdp[i] : i * a->rcount) * (*d)->extent;
}

/* MPI_Alltoall of small blocks (A2A_LINEAR_MAX bytes and less) on more than 2 ranks: every
 * receive and send posted at once, the own block copied, then one wait, so that a rank that
 * blocks waits once for all its peers instead of once per step of the pairwise exchange. Every
 * rank of the call takes the same branch (the counts are alike); mixing them would be safe
 * anyway: each pair exchanges one message each way under the same tag either way. */
#define A2A_LINEAR_MAX 1024
static int alltoall_linear(struct mpii_a2a *a, struct mpii_comm *c)
{
	int n = c->size, r = c->rank, rc = MPI_SUCCESS, k, scnt, rcnt;
	struct lk_request **q = calloc(2 * (size_t)n, sizeof(*q));
	struct mpii_dtype *sd, *rd;

	if (!q)
		return MPI_ERR_NO_MEM;
	for (int s = 1; s < n && rc == MPI_SUCCESS; s++) {
		int src = (r - s + n) % n;
		char *rp = mpii_a2a_rptr(a, src, &rd, &rcnt);
		if (rcnt > 0 && rd->size > 0 &&
		    (rc = mpii_irecv(rp, rcnt, rd, src, T_ALLTOALL, c, 1, &q[src])) != MPI_SUCCESS)
			q[src] = NULL; /* not started: nothing to wait for */
	}
	for (int s = 1; s < n && rc == MPI_SUCCESS; s++) {
		int dst = (r + s) % n;
		const char *sp = mpii_a2a_sptr(a, dst, &sd, &scnt);
		if (scnt > 0 && sd->size > 0 &&
		    (rc = mpii_isend(sp, scnt, sd, dst, T_ALLTOALL, c, 1, MODE_STD, &q[n + dst])) !=
		        MPI_SUCCESS)
			q[n + dst] = NULL;
	}
	if (rc == MPI_SUCCESS) {
		const char *sp = mpii_a2a_sptr(a, r, &sd, &scnt);
		char *rp = mpii_a2a_rptr(a, r, &rd, &rcnt);
		rc = xcopy(sp, scnt, sd, rp, rcnt, rd);
	}
	/* the started ones also after an error: a posted receive must not outlive the call */
	k = wait_all(q, 2 * n);
	free(q);
	return rc == MPI_SUCCESS ? k : rc;
}

static int alltoall(struct mpii_a2a *a, struct mpii_comm *c, int in_place)
{
	int n = c->size, r = c->rank, rc = MPI_SUCCESS, scnt, rcnt;
	struct mpii_dtype *sd, *rd;
	void *copy = NULL;

	if (in_place) {
		/* the send side is a snapshot of the receive buffer */
		a->st = a->rt;
		a->sc = a->rc;
		a->sdp = a->rdp;
		a->scount = a->rcount;
		a->sd = a->rd;
		MPI_Aint hi = 0;
		for (int i = 0; i < n; i++) {
			char *p = mpii_a2a_rptr(a, i, &rd, &rcnt);
			MPI_Aint end =
			    rcnt ? (p - a->rbuf) + (MPI_Aint)(rcnt - 1) * rd->extent + rd->true_ub
			         : 0;
			if (end > hi)
				hi = end;
		}
		copy = malloc(hi > 0 ? (size_t)hi : 1);
		if (!copy)
			return MPI_ERR_NO_MEM;
		memcpy(copy, a->rbuf, (size_t)hi);
		a->sbuf = copy;
	}
	if (n > 2 && !a->sc && !a->st && !a->rc && !a->rt && a->sd && a->rd &&
	    (size_t)a->scount * a->sd->size <= A2A_LINEAR_MAX) {
		rc = alltoall_linear(a, c);
		free(copy);
		return rc;
	}
	size_t saved = mpii.eager_coll;
	mpii.eager_coll = mpii_coll_eager(c); /* the blocks go eagerly up to its limit */
	for (int s = 0; s < n && rc == MPI_SUCCESS; s++) {
		int dst = (r + s) % n, src = (r - s + n) % n;
		const char *sp = mpii_a2a_sptr(a, dst, &sd, &scnt);
		char *rp = mpii_a2a_rptr(a, src, &rd, &rcnt);
		if (!sd || !rd)
			rc = MPI_ERR_TYPE;
		else if (s == 0)
			rc = xcopy(sp, scnt, sd, rp, rcnt, rd);
		else
			rc = pair(sp, scnt, sd, dst, rp, rcnt, rd, src, T_ALLTOALL, c);
	}
	mpii.eager_coll = saved;
	free(copy);
	return rc;
}

/* intercommunicator roots (MPI_ROOT, MPI_PROC_NULL, a remote rank) are checked there */
#define ROOT_OK(c, root) ((c)->inter || ((root) >= 0 && (root) < (c)->size))

MPII_ALIAS(Gather)
int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
	struct mpii_comm *c;
	int rc = check(comm, &c);

	if (rc == MPI_SUCCESS && !ROOT_OK(c, root))
		rc = MPI_ERR_ROOT;
	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_gatherv(sbuf, scount, dt_or_byte(stype), rbuf, NULL,
		                                   NULL, rcount, dt_or_byte(rtype), root, c)
		              : gatherv(sbuf, scount, dt_or_byte(stype), rbuf, NULL, NULL, rcount,
		                        dt_or_byte(rtype), root, c);
	return mpii_err(c, rc, "MPI_Gather");
}

MPII_ALIAS(Gatherv)
int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
	struct mpii_comm *c;
	int rc = check(comm, &c);

	if (rc == MPI_SUCCESS && !ROOT_OK(c, root))
		rc = MPI_ERR_ROOT;
	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_gatherv(sbuf, scount, dt_or_byte(stype), rbuf, rcounts,
		                                   displs, 0, dt_or_byte(rtype), root, c)
		              : gatherv(sbuf, scount, dt_or_byte(stype), rbuf, rcounts, displs, 0,
		                        dt_or_byte(rtype), root, c);
	return mpii_err(c, rc, "MPI_Gatherv");
}

MPII_ALIAS(Scatter)
int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm)
{
	struct mpii_comm *c;
	int rc = check(comm, &c);

	if (rc == MPI_SUCCESS && !ROOT_OK(c, root))
		rc = MPI_ERR_ROOT;
	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_scatterv(sbuf, NULL, NULL, scount, dt_or_byte(stype),
		                                    rbuf, rcount, dt_or_byte(rtype), root, c)
		              : scatterv(sbuf, NULL, NULL, scount, dt_or_byte(stype), rbuf, rcount,
		                         dt_or_byte(rtype), root, c);
	return mpii_err(c, rc, "MPI_Scatter");
}

MPII_ALIAS(Scatterv)
int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                  void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	struct mpii_comm *c;
	int rc = check(comm, &c);

	if (rc == MPI_SUCCESS && !ROOT_OK(c, root))
		rc = MPI_ERR_ROOT;
	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_scatterv(sbuf, scounts, displs, 0, dt_or_byte(stype),
		                                    rbuf, rcount, dt_or_byte(rtype), root, c)
		              : scatterv(sbuf, scounts, displs, 0, dt_or_byte(stype), rbuf, rcount,
		                         dt_or_byte(rtype), root, c);
	return mpii_err(c, rc, "MPI_Scatterv");
}

MPII_ALIAS(Allgather)
int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm)
{
	struct mpii_comm *c;
	int rc = check(comm, &c);

	if (rc == MPI_SUCCESS && !c->inter && (rcount == 0 || dt_or_byte(rtype)->size == 0))
		return MPI_SUCCESS; /* nothing to move, on every rank (signatures match) */
	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_allgatherv(sbuf, scount, dt_or_byte(stype), rbuf, NULL,
		                                      NULL, rcount, dt_or_byte(rtype), c)
		              : mpii_allgather(sbuf, scount, dt_or_byte(stype), rbuf, rcount,
		                               dt_or_byte(rtype), c);
	return mpii_err(c, rc, "MPI_Allgather");
}

MPII_ALIAS(Allgatherv)
int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
	struct mpii_comm *c;
	int rc = check(comm, &c);

	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_allgatherv(sbuf, scount, dt_or_byte(stype), rbuf,
		                                      rcounts, displs, 0, dt_or_byte(rtype), c)
		              : mpii_allgatherv(sbuf, scount, dt_or_byte(stype), rbuf, rcounts,
		                                displs, 0, dt_or_byte(rtype), c);
	return mpii_err(c, rc, "MPI_Allgatherv");
}

MPII_ALIAS(Alltoall)
int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
	struct mpii_comm *c;
	struct mpii_a2a a = {.sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount};
	int rc = check(comm, &c);

	a.sd = dt_or_byte(stype);
	a.rd = dt_or_byte(rtype);
	if (rc == MPI_SUCCESS && !c->inter && (rcount == 0 || a.rd->size == 0))
		return MPI_SUCCESS; /* nothing to move, on every rank (signatures match) */
	struct mpii_cshm *s = rc == MPI_SUCCESS && !c->inter ? mpii_cshm_of(c) : NULL;
	if (s &&
	    (rc = mpii_cshm_alltoall(s, sbuf, scount, a.sd, rbuf, rcount, a.rd)) == MPII_CSHM_NO)
		rc = MPI_SUCCESS;
	else if (s)
		return mpii_err(c, rc, "MPI_Alltoall");
	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_alltoall(&a, c) : alltoall(&a, c, sbuf == MPI_IN_PLACE);
	return mpii_err(c, rc, "MPI_Alltoall");
}

MPII_ALIAS(Alltoallv)
int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                   void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                   MPI_Comm comm)
{
	struct mpii_comm *c;
	struct mpii_a2a a = {.sbuf = sbuf,
	                     .rbuf = rbuf,
	                     .sc = scounts,
	                     .sdp = sdispls,
	                     .rc = rcounts,
	                     .rdp = rdispls};
	int rc = check(comm, &c);

	a.sd = dt_or_byte(stype);
	a.rd = dt_or_byte(rtype);
	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_alltoall(&a, c) : alltoall(&a, c, sbuf == MPI_IN_PLACE);
	return mpii_err(c, rc, "MPI_Alltoallv");
}

MPII_ALIAS(Alltoallw)
int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                   const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
	struct mpii_comm *c;
	struct mpii_a2a a = {.sbuf = sbuf,
	                     .rbuf = rbuf,
	                     .sc = scounts,
	                     .sdp = sdispls,
	                     .rc = rcounts,
	                     .rdp = rdispls,
	                     .st = stypes,
	                     .rt = rtypes,
	                     .bytes_disp = 1};
	int rc = check(comm, &c);

	if (rc == MPI_SUCCESS)
		rc = c->inter ? mpii_inter_alltoall(&a, c) : alltoall(&a, c, sbuf == MPI_IN_PLACE);
	return mpii_err(c, rc, "MPI_Alltoallw");
}
