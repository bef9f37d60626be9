/* lib/mpi/mpi_rmam.c: one-sided operations on targets of other nodes, as active messages.
 *
 * The origin describes the target data as runs (offset, length) from the operation's byte
 * offset in the target's window, cuts the operation into messages that the transport copies
 * (doc/PROTOCOL-mpi-wire.md section 6.2), and the target applies each message in its receive
 * path: in its own MPI calls or in the progress thread (mpi_rmat.c). Accumulates take the same
 * accumulate mutex as the target node's local origins. Results (get, get_accumulate,
 * compare_and_swap) come back as RESP messages; a FLUSH or UNLOCK is answered by an ACK after
 * everything the origin sent before it, since fragments of a peer arrive in order: the ACK
 * says the operations are complete at the target.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpii.h"

enum { RH_OP = MPII_H_RMA, RH_RESP, RH_LOCK, RH_GRANT, RH_UNLOCK, RH_FLUSH, RH_ACK };

/* Same layout as the point-to-point header (mpi_p2p.c); always sent whole (48 bytes). */
struct rhdr {
	uint16_t type, flags;
	int32_t src;  /* origin's (or, for answers, target's) rank in the window */
	uint32_t ctx; /* the window's communicator context */
	int32_t tag;  /* LOCK/UNLOCK: 1 exclusive; ACK/RESP: MPI error code of the target */
	uint64_t len, sreq, addr, off;
};

/* OP payload: this, nrun runs, then the data (CAS: compare value, then the new one). */
struct ophead {
	uint32_t nrun;
	int32_t kind, basic, op;
};
struct run {
	int64_t off; /* from the operation's byte offset (hdr.addr) */
	uint64_t len;
};

/* An operation whose results are awaited (sreq of its messages). */
struct rget {
	struct rget *next;
	int trank;
	size_t bytes, left; /* left: updated under the transport lock */
	char *packed;
	void *rbuf;
	int rcount, err;
	struct mpii_dtype *rd;
	struct lk_request *req;
	volatile int done;
};

struct lockreq {
	int origin, excl;
};

struct mpii_rmaw {
	struct mpii_rmaw *next;
	struct mpii_win *w;
	uint32_t ctx;
	int n, me;
	/* origin side */
	unsigned *acks, *grants; /* answers received per target */
	char *dirty;             /* operations sent since the last ACK */
	int err;                 /* first error an ACK or RESP reported */
	struct rget *gets;
	/* target side */
	int *held, *terr;  /* per origin: lock held on our behalf (1 shared, 2 excl), error */
	struct lockreq *q; /* lock requests waiting, in arrival order */
	int nq;
};

static struct mpii_rmaw *rwins; /* changed by the main thread under the transport lock */

static struct mpii_rmaw *find(uint32_t ctx)
{
	for (struct mpii_rmaw *r = rwins; r; r = r->next)
		if (r->ctx == ctx)
			return r;
	return NULL;
}

static int wrank(const struct mpii_rmaw *r, int rank)
{
	return r->w->comm->grp->world[rank];
}

/* Send one RMA message (any thread, under the transport lock when it is in use). */
static int send_msg(const struct mpii_rmaw *r, int rank, struct rhdr *h, const void *data,
                    size_t len)
{
	int rc;

	h->src = r->me;
	h->ctx = r->ctx;
	h->len = len;
	MPII_TP_LOCK();
	rc = tp_send(mpii.tp, wrank(r, rank), h, sizeof(*h), data, len, NULL);
	MPII_TP_UNLOCK();
	if (rc < 0)
		mpii_err_detail(tp_error(mpii.tp));
	return rc < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* From a receive path: a send that fails here means the peer is gone; the job cannot go on. */
static void answer(const struct mpii_rmaw *r, int rank, struct rhdr *h, const void *data,
                   size_t len)
{
	if (send_msg(r, rank, h, data, len) != MPI_SUCCESS) {
		fprintf(stderr, "lamkit MPI: rank %d: one-sided answer to rank %d failed: %s\n",
		        mpii.rank, wrank(r, rank), tp_error(mpii.tp));
		_exit(MPI_ERR_OTHER);
	}
}

int mpii_rma_win_init(struct mpii_win *w)
{
	struct mpii_rmaw *r = calloc(1, sizeof(*r));
	int n = w->comm->size;

	if (!r)
		return MPI_ERR_NO_MEM;
	r->w = w;
	r->n = n;
	r->me = w->comm->rank;
	r->ctx = w->comm->ctx;
	r->acks = calloc((size_t)n, sizeof(unsigned));
	r->grants = calloc((size_t)n, sizeof(unsigned));
	r->dirty = calloc((size_t)n, 1);
	r->held = calloc((size_t)n, sizeof(int));
	r->terr = calloc((size_t)n, sizeof(int));
	r->q = calloc((size_t)n, sizeof(*r->q));
	if (!r->acks || !r->grants || !r->dirty || !r->held || !r->terr || !r->q) {
		w->rm = r;
		mpii_rma_win_fini(w);
		return MPI_ERR_NO_MEM;
	}
	w->rm = r;
	mpii_rma_thread(1);
	MPII_TP_LOCK();
	r->next = rwins;
	rwins = r;
	MPII_TP_UNLOCK();
	return MPI_SUCCESS;
}

static void reap(struct mpii_rmaw *r, int all);

void mpii_rma_win_fini(struct mpii_win *w)
{
	struct mpii_rmaw *r = w->rm, **pp;
	int counted = 0;

	if (!r)
		return;
	MPII_TP_LOCK();
	for (pp = &rwins; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			counted = 1;
			break;
		}
	mpii.rma_waiting -= r->nq;
	MPII_TP_UNLOCK();
	if (counted) /* outside the lock: stopping the thread changes mpii.tp_mt */
		mpii_rma_thread(0);
	reap(r, 1);
	free(r->acks);
	free(r->grants);
	free(r->dirty);
	free(r->held);
	free(r->terr);
	free(r->q);
	free(r);
	w->rm = NULL;
}

/* ---- origin ---- */

/* Free the finished result records (all: every one, the window goes away). Main thread. */
static void reap(struct mpii_rmaw *r, int all)
{
	struct rget **pp = &r->gets;

	while (*pp) {
		struct rget *g = *pp;
		if (!all && !g->done) {
			pp = &g->next;
			continue;
		}
		*pp = g->next;
		if (g->err && !r->err)
			r->err = g->err;
		if (g->req) { /* let go of the user's request; freed meanwhile: ours to free */
			g->req->pinned = 0;
			if (g->req->freed)
				mpii_req_free(g->req);
		}
		if (g->rd)
			mpii_dt_release(g->rd);
		free(g->packed);
		free(g);
	}
}

/* The target data as runs from the operation's offset, adjacent pieces merged. NULL on
 * ENOMEM. */
static struct run *runs_of(const struct mpii_dtype *d, int count, int *nrun)
{
	size_t cap = d->contig ? 1 : (size_t)count * (size_t)(d->nseg ? d->nseg : 1);
	struct run *v = malloc(sizeof(*v) * (cap ? cap : 1));
	int n = 0;

	if (!v)
		return NULL;
	if (d->contig) {
		v[0].off = d->true_lb;
		v[0].len = d->size * (size_t)count;
		*nrun = 1;
		return v;
	}
	for (int e = 0; e < count; e++)
		for (int k = 0; k < d->nseg; k++) {
			int64_t off = (int64_t)e * d->extent + d->seg[k].off;
			if (!d->seg[k].len)
				continue;
			if (n && v[n - 1].off + (int64_t)v[n - 1].len == off)
				v[n - 1].len += d->seg[k].len;
			else
				v[n++] = (struct run){off, d->seg[k].len};
		}
	*nrun = n;
	return v;
}

/* Largest message payload to a peer that the transport copies (so our buffers are free on
 * return): tcp copies up to its eager limit, udp only 16 KiB. */
static size_t msg_max(int wpeer)
{
	size_t m = tp_eager_max(mpii.tp, wpeer);

	if (strcmp(tp_path_name(mpii.tp, wpeer), "tcp") && m > 16384)
		m = 16384;
	return m < 1024 ? 1024 : m;
}

struct cut {
	struct mpii_rmaw *r;
	const struct mpii_rma_op *o;
	struct rget *g;
	char *msg;
	size_t max, esz, data, done; /* data: bytes in the message; done: packed bytes sent */
	int nrun;
};

static int cut_send(struct cut *c)
{
	struct ophead *oh = (struct ophead *)c->msg;
	struct rhdr h = {.type = RH_OP,
	                 .addr = (uint64_t)c->o->toff,
	                 .sreq = (uint64_t)(uintptr_t)c->g,
	                 .off = c->done};
	size_t rl = sizeof(*oh) + sizeof(struct run) * (size_t)c->nrun;
	int rc;

	oh->nrun = (uint32_t)c->nrun;
	oh->kind = c->o->kind;
	oh->basic = c->o->ed ? c->o->ed->handle : MPI_BYTE;
	oh->op = c->o->op;
	size_t dl = c->o->obytes && c->o->kind != MPII_RMA_GET ? c->data : 0;

	if (dl)
		memcpy(c->msg + rl, c->o->obytes + c->done, dl);
	rc = send_msg(c->r, c->o->trank, &h, c->msg, rl + dl);
	c->done += c->data;
	c->data = 0;
	c->nrun = 0;
	return rc;
}

/* Cut the runs into messages of at most c->max bytes, splitting a run at element bounds. */
static int cut_runs(struct cut *c, const struct run *v, int n)
{
	struct run *mr = (struct run *)(c->msg + sizeof(struct ophead));
	int rc = MPI_SUCCESS;

	for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
		struct run x = v[i];
		while (x.len && rc == MPI_SUCCESS) {
			size_t used =
			    sizeof(struct ophead) + sizeof(struct run) * (size_t)(c->nrun + 1);
			size_t room = c->max > used + c->data ? c->max - used - c->data : 0;
			size_t take = x.len <= room ? x.len : room - room % c->esz;
			if (!take) {
				rc = cut_send(c);
				continue;
			}
			mr[c->nrun++] = (struct run){x.off, take};
			c->data += take;
			x.off += (int64_t)take;
			x.len -= take;
		}
	}
	if (rc == MPI_SUCCESS && c->nrun)
		rc = cut_send(c);
	return rc;
}

/* A result record for o, registered before its messages go. NULL on ENOMEM. */
static struct rget *rget_new(struct mpii_rmaw *r, const struct mpii_rma_op *o, size_t bytes)
{
	struct rget *g = calloc(1, sizeof(*g));

	if (!g || !(g->packed = malloc(bytes ? bytes : 1))) {
		free(g);
		return NULL;
	}
	g->trank = o->trank;
	g->bytes = g->left = bytes;
	g->rbuf = o->rbuf;
	g->rcount = o->rcount;
	g->rd = o->rd;
	if (!g->rd->predefined)
		g->rd->refs++;
	g->req = o->req;
	if (g->req)
		g->req->pinned = 1;
	g->next = r->gets;
	r->gets = g;
	return g;
}

static int issue_cas(struct mpii_rmaw *r, const struct mpii_rma_op *o, struct rget *g)
{
	size_t esz = o->td->size;
	char msg[sizeof(struct ophead) + sizeof(struct run) + 64];
	struct ophead *oh = (struct ophead *)msg;
	struct run *rn = (struct run *)(msg + sizeof(*oh));
	struct rhdr h = {.type = RH_OP, .addr = (uint64_t)o->toff, .sreq = (uint64_t)(uintptr_t)g};

	if (esz > 32)
		return MPI_ERR_TYPE;
	*oh = (struct ophead){1, MPII_RMA_CAS, o->td->handle, MPI_REPLACE};
	*rn = (struct run){o->td->true_lb, esz};
	memcpy(msg + sizeof(*oh) + sizeof(*rn), o->cbytes, esz);
	memcpy(msg + sizeof(*oh) + sizeof(*rn) + esz, o->obytes, esz);
	return send_msg(r, o->trank, &h, msg, sizeof(*oh) + sizeof(*rn) + 2 * esz);
}

int mpii_rma_issue(struct mpii_win *w, const struct mpii_rma_op *o)
{
	struct mpii_rmaw *r = w->rm;
	size_t bytes = o->td->size * (size_t)o->tcount;
	int want = o->kind == MPII_RMA_GET || o->kind == MPII_RMA_GACC || o->kind == MPII_RMA_CAS;
	struct cut c = {.r = r, .o = o, .esz = 1};
	struct run *v;
	int n, rc;

	if (want && !(c.g = rget_new(r, o, bytes)))
		return MPI_ERR_NO_MEM;
	r->dirty[o->trank] = 1;
	if (o->kind == MPII_RMA_CAS)
		return issue_cas(r, o, c.g);
	if (o->kind == MPII_RMA_ACC || o->kind == MPII_RMA_GACC)
		c.esz = o->ed->size;
	c.max = msg_max(wrank(r, o->trank));
	v = runs_of(o->td, o->tcount, &n);
	c.msg = malloc(c.max);
	rc = v && c.msg ? cut_runs(&c, v, n) : MPI_ERR_NO_MEM;
	free(v);
	free(c.msg);
	if (rc != MPI_SUCCESS && c.g) /* nothing more comes for it: done with the error */
		c.g->err = rc, c.g->left = 0, c.g->done = 1;
	return rc;
}

/* Wait until *ctr reaches want (an answer from a target). */
static void wait_ctr(unsigned *ctr, unsigned want)
{
	while ((int)(__atomic_load_n(ctr, __ATOMIC_ACQUIRE) - want) < 0)
		mpii_progress_wait();
}

static int take_err(struct mpii_rmaw *r)
{
	int e;

	MPII_TP_LOCK(); /* answers may be handled by the progress thread */
	reap(r, 0);
	e = r->err;
	r->err = 0;
	MPII_TP_UNLOCK();
	return e;
}

int mpii_rma_flush(struct mpii_win *w, int trank)
{
	struct mpii_rmaw *r = w->rm;
	unsigned *want = calloc((size_t)r->n, sizeof(unsigned));
	int rc = want ? MPI_SUCCESS : MPI_ERR_NO_MEM;

	for (int t = 0; t < r->n && rc == MPI_SUCCESS; t++) {
		struct rhdr h = {.type = RH_FLUSH};
		if ((trank >= 0 && t != trank) || !r->dirty[t] || !w->p[t].remote)
			continue;
		want[t] = __atomic_load_n(&r->acks[t], __ATOMIC_ACQUIRE) + 1;
		rc = send_msg(r, t, &h, NULL, 0);
	}
	for (int t = 0; t < r->n && want; t++)
		if (want[t]) {
			wait_ctr(&r->acks[t], want[t]);
			r->dirty[t] = 0;
		}
	free(want);
	if (rc == MPI_SUCCESS)
		rc = take_err(r);
	return rc;
}

int mpii_rma_lock(struct mpii_win *w, int trank, int excl)
{
	struct mpii_rmaw *r = w->rm;
	struct rhdr h = {.type = RH_LOCK, .tag = excl};
	unsigned want = __atomic_load_n(&r->grants[trank], __ATOMIC_ACQUIRE) + 1;
	int rc = send_msg(r, trank, &h, NULL, 0);

	if (rc == MPI_SUCCESS)
		wait_ctr(&r->grants[trank], want);
	return rc;
}

int mpii_rma_unlock(struct mpii_win *w, int trank, int excl)
{
	struct mpii_rmaw *r = w->rm;
	struct rhdr h = {.type = RH_UNLOCK, .tag = excl};
	unsigned want = __atomic_load_n(&r->acks[trank], __ATOMIC_ACQUIRE) + 1;
	int rc = send_msg(r, trank, &h, NULL, 0);

	if (rc == MPI_SUCCESS)
		wait_ctr(&r->acks[trank], want);
	r->dirty[trank] = 0;
	return rc == MPI_SUCCESS ? take_err(r) : rc;
}

/* A RESP: results of one message land in the record; the last one unpacks them. */
static void on_resp(const struct rhdr *h, const void *data, size_t len)
{
	struct rget *g = (struct rget *)(uintptr_t)h->sreq;

	if (h->tag && !g->err)
		g->err = h->tag;
	if (h->off <= g->bytes && len <= g->bytes - h->off)
		memcpy(g->packed + h->off, data, len);
	g->left -= len <= g->left ? len : g->left;
	if (g->left)
		return;
	if (!g->err)
		mpii_unpack(g->rd, g->rcount, g->rbuf, 0, g->packed, g->bytes);
	if (g->req) {
		g->req->st.MPI_ERROR = g->err;
		__atomic_store_n(&g->req->done, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
}

/* ---- target ---- */

/* Spin on the accumulate mutex without progress: a receive path may not poll, and local
 * origins hold it only for one read-modify-write. */
static void acc_lock(int *word)
{
	for (int v = 0;
	     !__atomic_compare_exchange_n(word, &v, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	     v = 0)
		sched_yield();
}

/* t = o op t over len bytes of elements of ed (o may be unaligned). MPI code. */
static int apply(char *t, const char *o, size_t len, struct mpii_dtype *ed, MPI_Op op)
{
	size_t esz = ed->size, ext = (size_t)ed->extent;
	char *x, *y = NULL;
	int rc = MPI_SUCCESS;

	if (op == MPI_REPLACE) {
		memcpy(t, o, len);
		return MPI_SUCCESS;
	}
	if (op == MPI_NO_OP)
		return MPI_SUCCESS;
	x = malloc(len / esz * ext + 1);
	if (esz != ext)
		y = malloc(len / esz * ext + 1);
	if (!x || (esz != ext && !y)) {
		free(x);
		free(y);
		return MPI_ERR_NO_MEM;
	}
	if (esz == ext) { /* aligned copy of the origin data, combined in place */
		memcpy(x, o, len);
		rc = mpii_reduce_local(x, t, (int)(len / esz), ed, op);
	} else { /* pair types with padding: spread out to their extent and back */
		for (size_t i = 0; i < len / esz; i++) {
			memcpy(x + i * ext, o + i * esz, esz);
			memcpy(y + i * ext, t + i * esz, esz);
		}
		rc = mpii_reduce_local(x, y, (int)(len / esz), ed, op);
		for (size_t i = 0; i < len / esz; i++)
			memcpy(t + i * esz, y + i * ext, esz);
	}
	free(x);
	free(y);
	return rc;
}

/* Apply one OP message to our window. MPI code; *reply gets the old data for results. */
static int on_op(struct mpii_rmaw *r, const struct rhdr *h, const char *data, size_t len,
                 char *reply)
{
	struct mpii_win *w = r->w;
	struct mpii_wpeer *me = &w->p[r->me];
	const struct ophead *oh = (const void *)data;
	const char *src;
	struct mpii_dtype *ed;
	size_t rl, got = 0;
	int rc = MPI_SUCCESS, locked = 0;

	if (len < sizeof(*oh) || (rl = sizeof(*oh) + sizeof(struct run) * oh->nrun) > len)
		return MPI_ERR_INTERN;
	ed = mpii_dt(oh->basic);
	if (!ed || !ed->size)
		return MPI_ERR_TYPE;
	src = data + rl;
	if (oh->kind == MPII_RMA_ACC || oh->kind == MPII_RMA_GACC || oh->kind == MPII_RMA_CAS) {
		acc_lock(&w->lk[r->me].acc);
		locked = 1;
	}
	for (uint32_t i = 0; i < oh->nrun && rc == MPI_SUCCESS; i++) {
		struct run rn;
		memcpy(&rn, data + sizeof(*oh) + sizeof(rn) * i, sizeof(rn));
		int64_t off = (int64_t)h->addr + rn.off;
		char *t;
		if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC &&
		    mpii_win_attached(w, (uint64_t)off, rn.len))
			t = (char *)(uintptr_t)off;
		else if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && off >= 0 && me->ptr &&
		         off + (int64_t)rn.len <= (int64_t)me->size)
			t = me->ptr + off;
		else {
			rc = MPI_ERR_RMA_RANGE;
			break;
		}
		if (reply)
			memcpy(reply + got, t, rn.len);
		if (oh->kind == MPII_RMA_PUT)
			memcpy(t, src + got, rn.len);
		else if (oh->kind == MPII_RMA_CAS) {
			if (!memcmp(t, src, rn.len))
				memcpy(t, src + rn.len, rn.len);
		} else if (oh->kind != MPII_RMA_GET && oh->op != MPI_NO_OP)
			rc = apply(t, src + got, rn.len, ed, oh->op);
		got += rn.len;
	}
	if (locked)
		mpii_wlock_release(&w->lk[r->me].acc, 1);
	return rc;
}

static size_t op_bytes(const char *data, size_t len)
{
	const struct ophead *oh = (const void *)data;
	size_t n = 0;

	if (len < sizeof(*oh) || sizeof(*oh) + sizeof(struct run) * oh->nrun > len)
		return 0;
	for (uint32_t i = 0; i < oh->nrun; i++) {
		struct run rn;
		memcpy(&rn, data + sizeof(*oh) + sizeof(rn) * i, sizeof(rn));
		n += rn.len;
	}
	return n;
}

/* Take our rw word for an origin without waiting. 1 if taken. */
static int try_lock(struct mpii_rmaw *r, int origin, int excl)
{
	int *word = &r->w->lk[r->me].rw, v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	if (excl ? v != 0 : v < 0)
		return 0;
	if (!__atomic_compare_exchange_n(word, &v, excl ? -1 : v + 1, 0, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE))
		return 0;
	r->held[origin] = excl ? 2 : 1;
	struct rhdr g = {.type = RH_GRANT};
	answer(r, origin, &g, NULL, 0);
	return 1;
}

int mpii_rma_progress(void)
{
	int n = 0;

	for (struct mpii_rmaw *r = rwins; r; r = r->next)
		while (r->nq && try_lock(r, r->q[0].origin, r->q[0].excl)) {
			memmove(r->q, r->q + 1, sizeof(*r->q) * (size_t)--r->nq);
			mpii.rma_waiting--;
			n++;
		}
	return n;
}

static void on_lock(struct mpii_rmaw *r, int origin, int excl)
{
	if (!r->nq && try_lock(r, origin, excl))
		return;
	if (r->nq < r->n) { /* one request per origin at a time */
		r->q[r->nq++] = (struct lockreq){origin, excl};
		mpii.rma_waiting++;
	}
}

static void on_target(struct mpii_rmaw *r, const struct rhdr *h, const void *data, size_t len)
{
	struct rhdr a = {.type = RH_ACK};
	int o = h->src;

	if (o < 0 || o >= r->n)
		return;
	switch (h->type) {
	case RH_OP: {
		const struct ophead *oh = data;
		size_t rb = 0;
		char *reply = NULL;
		int rc;
		if (h->sreq && len >= sizeof(*oh)) {
			rb = op_bytes(data, len);
			reply = calloc(1, rb ? rb : 1);
		}
		rc = h->sreq && !reply ? MPI_ERR_NO_MEM : on_op(r, h, data, len, reply);
		if (rc && !r->terr[o])
			r->terr[o] = rc;
		if (h->sreq) {
			struct rhdr re = {
			    .type = RH_RESP, .sreq = h->sreq, .off = h->off, .tag = rc};
			answer(r, o, &re, reply, reply ? rb : 0);
		}
		free(reply);
		break;
	}
	case RH_LOCK:
		on_lock(r, o, h->tag);
		break;
	case RH_UNLOCK:
		if (r->held[o])
			mpii_wlock_release(&r->w->lk[r->me].rw, r->held[o] == 2);
		r->held[o] = 0;
		/* fall through */
	case RH_FLUSH:
		a.tag = r->terr[o];
		r->terr[o] = 0;
		answer(r, o, &a, NULL, 0);
		if (h->type == RH_UNLOCK && r->nq)
			mpii_rma_progress();
		break;
	default:
		break;
	}
}

void mpii_rma_frag(int wsrc, const void *hdr, const void *data, size_t len)
{
	struct rhdr h;
	struct mpii_rmaw *r;

	memcpy(&h, hdr, sizeof(h));
	r = find(h.ctx);
	if (!r || h.src < 0 || h.src >= r->n) {
		fprintf(stderr,
		        "lamkit MPI: rank %d: one-sided message type %d from rank %d for no window "
		        "(ignored)\n",
		        mpii.rank, h.type, wsrc);
		return;
	}
	switch (h.type) {
	case RH_RESP:
		on_resp(&h, data, len);
		break;
	case RH_GRANT:
		__atomic_fetch_add(&r->grants[h.src], 1, __ATOMIC_RELEASE);
		break;
	case RH_ACK:
		if (h.tag && !r->err)
			r->err = h.tag;
		__atomic_fetch_add(&r->acks[h.src], 1, __ATOMIC_RELEASE);
		break;
	default:
		on_target(r, &h, data, len);
	}
}
