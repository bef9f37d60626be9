/* lib/mpi/mpi_nbc2.c: MPI-3 nonblocking gather/scatter/allgather/alltoall families as schedules.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

/* Type lookup that tolerates an unused side (BYTE for an invalid handle there). */
static struct mpii_dtype *dt_or_byte(MPI_Datatype t)
{
	struct mpii_dtype *d = mpii_dt(t);

	return d ? d : mpii_dt(MPI_BYTE);
}

/* Root receives every block at once. */
static void b_gatherv(struct mpii_sched *s, const void *sbuf, int scount, struct mpii_dtype *sd,
                      void *rbuf, const int *rcounts, const int *displs, int rcount,
                      struct mpii_dtype *rd, int root, const struct mpii_comm *c)
{
	if (c->rank != root) {
		mpii_sched_send(s, sbuf, scount, sd, root);
		return;
	}
	for (int i = 0; i < c->size; i++) {
		int cnt = rcounts ? rcounts[i] : rcount;
		char *dst = (char *)rbuf + (MPI_Aint)(displs ? displs[i] : i * rcount) * rd->extent;
		if (i != root)
			mpii_sched_recv(s, dst, cnt, rd, i);
		else if (sbuf != MPI_IN_PLACE)
			mpii_sched_copy(s, sbuf, scount, sd, dst, cnt, rd);
	}
}

/* Root sends every block at once. */
static void b_scatterv(struct mpii_sched *s, const void *sbuf, const int *scounts,
                       const int *displs, int scount, struct mpii_dtype *sd, void *rbuf, int rcount,
                       struct mpii_dtype *rd, int root, const struct mpii_comm *c)
{
	if (c->rank != root) {
		mpii_sched_recv(s, rbuf, rcount, rd, root);
		return;
	}
	for (int i = 0; i < c->size; i++) {
		int cnt = scounts ? scounts[i] : scount;
		const char *src =
		    (const char *)sbuf + (MPI_Aint)(displs ? displs[i] : i * scount) * sd->extent;
		if (i != root)
			mpii_sched_send(s, src, cnt, sd, i);
		else if (rbuf != MPI_IN_PLACE)
			mpii_sched_copy(s, src, cnt, sd, rbuf, rcount, rd);
	}
}

/* Every rank sends its block to every other one, all in one round. */
static void b_allgatherv(struct mpii_sched *s, const void *sbuf, int scount, struct mpii_dtype *sd,
                         void *rbuf, const int *rcounts, const int *displs, int rcount,
                         struct mpii_dtype *rd, const struct mpii_comm *c)
{
	int n = c->size, r = c->rank;

#define BLK(i) ((char *)rbuf + (MPI_Aint)(displs ? displs[i] : (i)*rcount) * rd->extent)
#define CNT(i) (rcounts ? rcounts[i] : rcount)
	if (sbuf == MPI_IN_PLACE) {
		sbuf = BLK(r);
		scount = CNT(r);
		sd = rd;
	} else {
		mpii_sched_copy(s, sbuf, scount, sd, BLK(r), CNT(r), rd);
	}
	for (int k = 1; k < n; k++) {
		int from = (r - k + n) % n;
		mpii_sched_recv(s, BLK(from), CNT(from), rd, from);
	}
	for (int k = 1; k < n; k++)
		mpii_sched_send(s, sbuf, scount, sd, (r + k) % n);
#undef BLK
#undef CNT
}

/* Every pair exchanges its blocks in one round; IN_PLACE sends from a snapshot of rbuf. */
static int b_alltoall(struct mpii_sched *s, struct mpii_a2a *a, const struct mpii_comm *c,
                      int in_place)
{
	int n = c->size, r = c->rank, scnt, rcnt;
	struct mpii_dtype *sd, *rd;
	const char *sp;
	char *rp;

	if (in_place) {
		MPI_Aint hi = 0;
		char *copy;
		a->st = a->rt;
		a->sc = a->rc;
		a->sdp = a->rdp;
		a->scount = a->rcount;
		a->sd = a->rd;
		for (int i = 0; i < n; i++) {
			rp = mpii_a2a_rptr(a, i, &rd, &rcnt);
			if (!rd)
				return MPI_ERR_TYPE;
			MPI_Aint end =
			    rcnt ? (rp - a->rbuf) + (MPI_Aint)(rcnt - 1) * rd->extent + rd->true_ub
			         : 0;
			if (end > hi)
				hi = end;
		}
		mpii_sched_tmp(s, mpii_dt(MPI_BYTE), (int)hi, &copy);
		if (!copy)
			return MPI_ERR_NO_MEM;
		memcpy(copy, a->rbuf, (size_t)hi);
		a->sbuf = copy;
	}
	for (int k = 0; k < n; k++) {
		int from = (r - k + n) % n;
		rp = mpii_a2a_rptr(a, from, &rd, &rcnt);
		if (!rd)
			return MPI_ERR_TYPE;
		if (k)
			mpii_sched_recv(s, rp, rcnt, rd, from);
	}
	for (int k = 0; k < n; k++) {
		int to = (r + k) % n;
		sp = mpii_a2a_sptr(a, to, &sd, &scnt);
		if (!sd)
			return MPI_ERR_TYPE;
		if (k) {
			mpii_sched_send(s, sp, scnt, sd, to);
		} else {
			rp = mpii_a2a_rptr(a, r, &rd, &rcnt);
			mpii_sched_copy(s, sp, scnt, sd, rp, rcnt, rd);
		}
	}
	return MPI_SUCCESS;
}

/* ---- public routines ---- */

#define NBC_BEGIN(fn, icall)                                                                       \
	struct mpii_comm *c;                                                                       \
	struct mpii_sched *s = NULL;                                                               \
	int rc = mpii_nbc_check(comm, req, &c);                                                    \
	if (rc == MPI_SUCCESS && c->inter)                                                         \
		return (icall);                                                                    \
	if (rc != MPI_SUCCESS)                                                                     \
		return mpii_err(c, rc, fn);                                                        \
	s = mpii_sched_new(c)

#define NBC_ROOT(fn)                                                                               \
	if (root < 0 || root >= c->size) {                                                         \
		mpii_sched_free(s);                                                                \
		return mpii_err(c, MPI_ERR_ROOT, fn);                                              \
	}

#define NBC_END(fn) return mpii_err(c, mpii_sched_start(s, c, req), fn)

MPII_ALIAS(Igather)
int PMPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Igather",
	          mpii_inbc_gatherv(sbuf, scount, mpii_dt(stype), rbuf, NULL, NULL, rcount,
	                            mpii_dt(rtype), root, c, req, "MPI_Igather"));
	NBC_ROOT("MPI_Igather");
	if (s)
		b_gatherv(s, sbuf, scount, dt_or_byte(stype), rbuf, NULL, NULL, rcount,
		          dt_or_byte(rtype), root, c);
	NBC_END("MPI_Igather");
}

MPII_ALIAS(Igatherv)
int PMPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                  const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Igatherv",
	          mpii_inbc_gatherv(sbuf, scount, mpii_dt(stype), rbuf, rcounts, displs, 0,
	                            mpii_dt(rtype), root, c, req, "MPI_Igatherv"));
	NBC_ROOT("MPI_Igatherv");
	if (s)
		b_gatherv(s, sbuf, scount, dt_or_byte(stype), rbuf, rcounts, displs, 0,
		          dt_or_byte(rtype), root, c);
	NBC_END("MPI_Igatherv");
}

MPII_ALIAS(Iscatter)
int PMPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Iscatter",
	          mpii_inbc_scatterv(sbuf, NULL, NULL, scount, mpii_dt(stype), rbuf, rcount,
	                             mpii_dt(rtype), root, c, req, "MPI_Iscatter"));
	NBC_ROOT("MPI_Iscatter");
	if (s)
		b_scatterv(s, sbuf, NULL, NULL, scount, dt_or_byte(stype), rbuf, rcount,
		           dt_or_byte(rtype), root, c);
	NBC_END("MPI_Iscatter");
}

MPII_ALIAS(Iscatterv)
int PMPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                   void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                   MPI_Request *req)
{
	NBC_BEGIN("MPI_Iscatterv",
	          mpii_inbc_scatterv(sbuf, scounts, displs, 0, mpii_dt(stype), rbuf, rcount,
	                             mpii_dt(rtype), root, c, req, "MPI_Iscatterv"));
	NBC_ROOT("MPI_Iscatterv");
	if (s)
		b_scatterv(s, sbuf, scounts, displs, 0, dt_or_byte(stype), rbuf, rcount,
		           dt_or_byte(rtype), root, c);
	NBC_END("MPI_Iscatterv");
}

MPII_ALIAS(Iallgather)
int PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	NBC_BEGIN("MPI_Iallgather",
	          mpii_inbc_allgatherv(sbuf, scount, mpii_dt(stype), rbuf, NULL, NULL, rcount,
	                               mpii_dt(rtype), c, req, "MPI_Iallgather"));
	if (s)
		b_allgatherv(s, sbuf, scount, dt_or_byte(stype), rbuf, NULL, NULL, rcount,
		             dt_or_byte(rtype), c);
	NBC_END("MPI_Iallgather");
}

MPII_ALIAS(Iallgatherv)
int PMPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                     MPI_Request *req)
{
	NBC_BEGIN("MPI_Iallgatherv",
	          mpii_inbc_allgatherv(sbuf, scount, mpii_dt(stype), rbuf, rcounts, displs, 0,
	                               mpii_dt(rtype), c, req, "MPI_Iallgatherv"));
	if (s)
		b_allgatherv(s, sbuf, scount, dt_or_byte(stype), rbuf, rcounts, displs, 0,
		             dt_or_byte(rtype), c);
	NBC_END("MPI_Iallgatherv");
}

/* Build and start an alltoall-family schedule. MPI code. */
static int a2a_start(struct mpii_sched *s, struct mpii_a2a *a, struct mpii_comm *c, int in_place,
                     MPI_Request *req)
{
	int rc = s ? b_alltoall(s, a, c, in_place) : MPI_ERR_NO_MEM;

	if (rc != MPI_SUCCESS) {
		mpii_sched_free(s);
		*req = MPI_REQUEST_NULL;
		return rc;
	}
	return mpii_sched_start(s, c, req);
}

MPII_ALIAS(Ialltoall)
int PMPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	struct mpii_a2a a = {.sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount};

	a.sd = dt_or_byte(stype);
	a.rd = dt_or_byte(rtype);
	NBC_BEGIN("MPI_Ialltoall", mpii_inbc_alltoall(&a, c, req, "MPI_Ialltoall"));
	return mpii_err(c, a2a_start(s, &a, c, sbuf == MPI_IN_PLACE, req), "MPI_Ialltoall");
}

MPII_ALIAS(Ialltoallv)
int PMPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                    void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                    MPI_Comm comm, MPI_Request *req)
{
	struct mpii_a2a a = {.sbuf = sbuf,
	                     .rbuf = rbuf,
	                     .sc = scounts,
	                     .sdp = sdispls,
	                     .rc = rcounts,
	                     .rdp = rdispls};

	a.sd = dt_or_byte(stype);
	a.rd = dt_or_byte(rtype);
	NBC_BEGIN("MPI_Ialltoallv", mpii_inbc_alltoall(&a, c, req, "MPI_Ialltoallv"));
	return mpii_err(c, a2a_start(s, &a, c, sbuf == MPI_IN_PLACE, req), "MPI_Ialltoallv");
}

MPII_ALIAS(Ialltoallw)
int PMPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                    const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                    const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                    MPI_Request *req)
{
	struct mpii_a2a a = {.sbuf = sbuf,
	                     .rbuf = rbuf,
	                     .sc = scounts,
	                     .sdp = sdispls,
	                     .rc = rcounts,
	                     .rdp = rdispls,
	                     .st = stypes,
	                     .rt = rtypes,
	                     .bytes_disp = 1};

	NBC_BEGIN("MPI_Ialltoallw", mpii_inbc_alltoall(&a, c, req, "MPI_Ialltoallw"));
	return mpii_err(c, a2a_start(s, &a, c, sbuf == MPI_IN_PLACE, req), "MPI_Ialltoallw");
}
