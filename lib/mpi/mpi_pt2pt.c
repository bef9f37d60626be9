/* lib/mpi/mpi_pt2pt.c: MPI point-to-point routines: argument checks, modes, probe, bsend. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

/* Validate the common arguments; on success *cp and *dp are set. MPI code. Inlined into each
 * caller: it is most of what MPI_Isend and MPI_Irecv cost beyond the message itself. */
static inline __attribute__((always_inline)) int check(MPI_Comm comm, int count, MPI_Datatype type,
                                                       int peer, int tag, int recv,
                                                       struct mpii_comm **cp,
                                                       struct mpii_dtype **dp)
{
	struct mpii_comm *c = mpii_comm(comm);
	int n;

	*cp = c;
	if (!mpii.initialized || mpii.finalized)
		return MPI_ERR_OTHER;
	if (!c)
		return MPI_ERR_COMM;
	*dp = mpii_dt(type);
	if (!*dp)
		return MPI_ERR_TYPE;
	if (count < 0)
		return MPI_ERR_COUNT;
	n = c->inter ? c->rgrp->size : c->size;
	if (peer != MPI_PROC_NULL && (peer < 0 || peer >= n) && !(recv && peer == MPI_ANY_SOURCE))
		return MPI_ERR_RANK;
	if ((tag < 0 || tag > MPII_TAG_UB) && !(recv && tag == MPI_ANY_TAG))
		return MPI_ERR_TAG;
	return MPI_SUCCESS;
}

#define CHECK(fn, recv)                                                                            \
	struct mpii_comm *c;                                                                       \
	struct mpii_dtype *d;                                                                      \
	int rc = check(comm, count, type, peer, tag, recv, &c, &d);                                \
	if (rc != MPI_SUCCESS)                                                                     \
	return mpii_err(c, rc, fn)

static void fill(struct lk_request *r, const void *buf, int count, struct mpii_dtype *d, int peer,
                 int tag, struct mpii_comm *c)
{
	r->buf = (void *)buf;
	r->count = count;
	r->d = d;
	r->peer = peer;
	r->tag = tag;
	r->comm = c;
	r->ctx = c->ctx;
}

/* Copy the message into (accounted) buffer space and send it from there. user: the request
 * the caller gets (MPI_Ibsend, MPI_Bsend_init), linked for MPI_Cancel, or NULL. MPI code. */
static int bsend(const void *buf, int count, struct mpii_dtype *d, int peer, int tag,
                 struct mpii_comm *c, struct lk_request *user)
{
	size_t n = d->size * (size_t)count;
	struct lk_request *r;
	void *copy;

	if (peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (mpii.bsend_used + n + MPI_BSEND_OVERHEAD > mpii.bsend_size)
		return MPI_ERR_BUFFER;
	copy = malloc(n ? n : 1);
	r = mpii_req_new(RQ_SEND);
	if (!copy || !r) {
		free(copy);
		if (r)
			mpii_req_free(r);
		return MPI_ERR_NO_MEM;
	}
	mpii_pack(d, count, buf, 0, copy, n);
	fill(r, copy, (int)n, mpii_dt(MPI_BYTE), peer, tag, c);
	mpii_req_hold(r);
	r->bsend = (int)n;
	r->freed = 1;
	mpii.bsend_used += n + MPI_BSEND_OVERHEAD;
	mpii.bsend_pending++;
	if (user) {
		if (user->buddy) /* a restarted persistent request forgets its earlier copy */
			user->buddy->buddy = NULL;
		user->buddy = r;
		r->buddy = user;
		user->cid = 0;
		user->cxl = user->cancelled = 0;
	}
	return mpii_start(r);
}

MPII_ALIAS(Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm)
{
	CHECK("MPI_Send", 0);
	if (peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	return mpii_err(c, mpii_send(buf, count, d, peer, tag, c, 0, MODE_STD), "MPI_Send");
}

MPII_ALIAS(Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm)
{
	CHECK("MPI_Rsend", 0);
	if (peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	return mpii_err(c, mpii_send(buf, count, d, peer, tag, c, 0, MODE_READY), "MPI_Rsend");
}

MPII_ALIAS(Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm)
{
	CHECK("MPI_Ssend", 0);
	if (peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	return mpii_err(c, mpii_send(buf, count, d, peer, tag, c, 0, MODE_SYNC), "MPI_Ssend");
}

MPII_ALIAS(Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm)
{
	CHECK("MPI_Bsend", 0);
	return mpii_err(c, bsend(buf, count, d, peer, tag, c, NULL), "MPI_Bsend");
}

MPII_ALIAS(Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
              MPI_Status *status)
{
	CHECK("MPI_Recv", 1);
	return mpii_err(c, mpii_recv(buf, count, d, peer, tag, c, 0, status), "MPI_Recv");
}

static int isend_mode(const void *buf, int count, MPI_Datatype type, int peer, int tag,
                      MPI_Comm comm, MPI_Request *req, int mode, const char *fn)
{
	struct lk_request *r;

	CHECK(fn, 0);
	if (mode == MODE_BUF) {
		r = mpii_req_new(RQ_SEND);
		if (!r)
			return mpii_err(c, MPI_ERR_NO_MEM, fn);
		fill(r, NULL, 0, mpii_dt(MPI_BYTE), peer, tag, c);
		mpii_req_hold(r);
		r->mode = MODE_BUF;
		r->done = 1; /* the data is buffered: the request is complete */
		rc = bsend(buf, count, d, peer, tag, c, r);
		if (rc != MPI_SUCCESS) {
			mpii_req_free(r);
			r = MPI_REQUEST_NULL;
		}
	} else {
		rc = mpii_isend(buf, count, d, peer, tag, c, 0, mode, &r);
	}
	*req = r;
	return mpii_err(c, rc, fn);
}

MPII_ALIAS(Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
               MPI_Request *req)
{
	struct lk_request *r;

	CHECK("MPI_Isend", 0);
	rc = mpii_isend(buf, count, d, peer, tag, c, 0, MODE_STD, &r);
	*req = r;
	return mpii_err(c, rc, "MPI_Isend");
}

MPII_ALIAS(Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                MPI_Request *req)
{
	return isend_mode(buf, count, type, peer, tag, comm, req, MODE_SYNC, "MPI_Issend");
}

MPII_ALIAS(Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                MPI_Request *req)
{
	return isend_mode(buf, count, type, peer, tag, comm, req, MODE_READY, "MPI_Irsend");
}

MPII_ALIAS(Ibsend)
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                MPI_Request *req)
{
	return isend_mode(buf, count, type, peer, tag, comm, req, MODE_BUF, "MPI_Ibsend");
}

MPII_ALIAS(Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
               MPI_Request *req)
{
	struct lk_request *r;

	CHECK("MPI_Irecv", 1);
	rc = mpii_irecv(buf, count, d, peer, tag, c, 0, &r);
	*req = r;
	return mpii_err(c, rc, "MPI_Irecv");
}

/* Persistent requests start inactive (done) and are armed by MPI_Start. */
static int init_req(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                    MPI_Request *req, int kind, int mode, const char *fn)
{
	struct lk_request *r;

	CHECK(fn, kind == RQ_RECV);
	r = mpii_req_new(kind);
	if (!r)
		return mpii_err(c, MPI_ERR_NO_MEM, fn);
	fill(r, buf, count, d, peer, tag, c);
	mpii_req_hold(r);
	r->mode = mode;
	r->persistent = 1;
	r->done = 1;
	r->st.MPI_SOURCE = MPI_ANY_SOURCE;
	r->st.MPI_TAG = MPI_ANY_TAG;
	*req = r;
	return MPI_SUCCESS;
}

MPII_ALIAS(Send_init)
int PMPI_Send_init(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
	return init_req(buf, count, type, peer, tag, comm, req, RQ_SEND, MODE_STD, "MPI_Send_init");
}

MPII_ALIAS(Ssend_init)
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
	return init_req(buf, count, type, peer, tag, comm, req, RQ_SEND, MODE_SYNC,
	                "MPI_Ssend_init");
}

MPII_ALIAS(Rsend_init)
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
	return init_req(buf, count, type, peer, tag, comm, req, RQ_SEND, MODE_READY,
	                "MPI_Rsend_init");
}

MPII_ALIAS(Bsend_init)
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
	return init_req(buf, count, type, peer, tag, comm, req, RQ_SEND, MODE_BUF,
	                "MPI_Bsend_init");
}

MPII_ALIAS(Recv_init)
int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
	return init_req(buf, count, type, peer, tag, comm, req, RQ_RECV, MODE_STD, "MPI_Recv_init");
}

/* Arm a persistent request (MPI_Start). MPI code. */
int mpii_start_persistent(struct lk_request *r);
int mpii_start_persistent(struct lk_request *r)
{
	int rc;

	if (!r->persistent || r->active)
		return MPI_ERR_REQUEST;
	if (r->mode != MODE_BUF)
		return mpii_start(r);
	memset(&r->st, 0, sizeof(r->st));
	r->done = r->active = 1; /* buffered: complete, but Wait/Test report it (and a cancel) */
	rc = bsend(r->buf, r->count, r->d, r->peer, r->tag, r->comm, r);
	return rc;
}

MPII_ALIAS(Sendrecv)
int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                  int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                  MPI_Status *status)
{
	struct mpii_comm *c, *c2;
	struct mpii_dtype *sd, *rd;
	struct lk_request *s, *r;
	int rc = check(comm, scount, stype, dest, stag, 0, &c, &sd);

	if (rc == MPI_SUCCESS)
		rc = check(comm, rcount, rtype, source, rtag, 1, &c2, &rd);
	if (rc != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Sendrecv");
	rc = mpii_irecv(rbuf, rcount, rd, source, rtag, c, 0, &r);
	if (rc != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Sendrecv");
	rc = mpii_isend(sbuf, scount, sd, dest, stag, c, 0, MODE_STD, &s);
	if (rc != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Sendrecv");
	mpii_wait(s, NULL);
	return mpii_err(c, mpii_wait(r, status), "MPI_Sendrecv");
}

MPII_ALIAS(Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                          int rtag, MPI_Comm comm, MPI_Status *status)
{
	struct mpii_comm *c, *c2;
	struct mpii_dtype *d, *rd;
	struct lk_request *s, *r;
	size_t n;
	void *tmp;
	MPI_Status st;
	int rc = check(comm, count, type, dest, stag, 0, &c, &d);

	if (rc == MPI_SUCCESS)
		rc = check(comm, count, type, source, rtag, 1, &c2, &rd);
	if (rc != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Sendrecv_replace");
	n = d->size * (size_t)count;
	tmp = malloc(n ? n : 1);
	if (!tmp)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
	rc = mpii_irecv(tmp, (int)n, mpii_dt(MPI_BYTE), source, rtag, c, 0, &r);
	if (rc == MPI_SUCCESS)
		rc = mpii_isend(buf, count, d, dest, stag, c, 0, MODE_STD, &s);
	if (rc != MPI_SUCCESS) {
		free(tmp);
		return mpii_err(c, rc, "MPI_Sendrecv_replace");
	}
	mpii_wait(s, NULL);
	rc = mpii_wait(r, &st);
	mpii_unpack(d, count, buf, 0, tmp, (size_t)st.lk_count);
	free(tmp);
	if (status && status != MPI_STATUS_IGNORE)
		*status = st;
	return mpii_err(c, rc, "MPI_Sendrecv_replace");
}

static void null_status(MPI_Status *st)
{
	if (!st || st == MPI_STATUS_IGNORE)
		return;
	st->MPI_SOURCE = MPI_PROC_NULL;
	st->MPI_TAG = MPI_ANY_TAG;
	st->MPI_ERROR = MPI_SUCCESS;
	st->lk_count = 0;
	st->lk_cancelled = 0;
}

MPII_ALIAS(Iprobe)
int PMPI_Iprobe(int peer, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	int count = 0;
	MPI_Datatype type = MPI_BYTE;

	CHECK("MPI_Iprobe", 1);
	if (peer == MPI_PROC_NULL) {
		*flag = 1;
		null_status(status);
		return MPI_SUCCESS;
	}
	*flag = mpii_probe(c->ctx, peer, tag, status);
	if (!*flag) {
		mpii_progress();
		*flag = mpii_probe(c->ctx, peer, tag, status);
	}
	return MPI_SUCCESS;
}

MPII_ALIAS(Probe)
int PMPI_Probe(int peer, int tag, MPI_Comm comm, MPI_Status *status)
{
	int count = 0;
	MPI_Datatype type = MPI_BYTE;

	CHECK("MPI_Probe", 1);
	if (peer == MPI_PROC_NULL) {
		null_status(status);
		return MPI_SUCCESS;
	}
	while (!mpii_probe(c->ctx, peer, tag, status))
		mpii_progress_wait();
	return MPI_SUCCESS;
}

MPII_ALIAS(Buffer_attach)
int PMPI_Buffer_attach(void *buf, int size)
{
	if (mpii.bsend_buf || size < 0)
		return mpii_err(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach");
	mpii.bsend_buf = buf;
	mpii.bsend_size = (size_t)size;
	return MPI_SUCCESS;
}

MPII_ALIAS(Buffer_detach)
int PMPI_Buffer_detach(void *bufp, int *size)
{
	while (mpii.bsend_pending)
		mpii_progress_wait();
	*(void **)bufp = mpii.bsend_buf;
	*size = (int)mpii.bsend_size;
	mpii.bsend_buf = NULL;
	mpii.bsend_size = 0;
	return MPI_SUCCESS;
}
