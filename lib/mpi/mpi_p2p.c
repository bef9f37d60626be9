/* lib/mpi/mpi_p2p.c: point-to-point engine: eager/rendezvous protocol, matching, progress. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpii.h"
#include "pmi.h"

/* Wire header (doc/PROTOCOL-mpi-wire.md). Only the first hlen bytes travel. */
enum { H_EAGER = 1, H_RTS, H_CTS, H_DATA, H_FIN, H_ACK, H_CXL, H_CXLACK };
#define HF_SYNC 1
#define HF_SREQ 2 /* EAGER: eid carries the message's cancel id */
/* CTS: the receiver is reading; help it copy (len, addr = its buffer, off = generation) */
#define HF_COOP 4

struct hdr {
	uint16_t type, flags;
	int32_t src;  /* sender's rank in the communicator */
	uint32_t ctx; /* context id */
	int32_t tag;
	union {
		uint64_t len; /* message bytes (RTS) */
		/* EAGER with HF_SYNC: the sender's request; with HF_SREQ: the message's cancel id;
		 * neither: not sent. An EAGER message's length is its payload's. */
		uint64_t eid;
	};
	uint64_t sreq; /* sender request (RTS, CTS, FIN, ACK) */
	uint64_t addr; /* RTS: sender buffer for a get; CTS, DATA: receiver request */
	uint64_t off;  /* DATA: offset of the chunk */
};
/* EAGER: 16 bytes, 24 with eid: with the transport's 8-byte record word, a message of up to 40
 * bytes from MPI_Send (32 from MPI_Isend) fits one 64-byte line of a shm ring (16 before) */
#define HLEN_EAGER 16
#define HLEN_EID   24
#define HLEN_RTS   40
#define HLEN_CTL   40
#define HLEN_DATA  48

/* Unexpected messages, in arrival order twice: in one list of all (mpii.unexp, for receives from
 * MPI_ANY_SOURCE, probes and cancels) and in one list per bucket of (context, source), for the
 * receives that name their source, most of them. With one list only, a receive from a slow
 * source walked past every message of a source that ran ahead: a reduce of 8 B at 4 ranks on 2
 * cores, whose leaves send eagerly and run ahead of the root, spent most of its time there. A
 * bucket may hold other (context, source) pairs too; they are skipped as before. */
struct mpii_unexp {
	struct mpii_unexp *next, *prev;   /* all of them */
	struct mpii_unexp *snext, *sprev; /* its bucket's */
	uint32_t ctx;
	int src, tag, wsrc, type, flags;
	size_t len;
	uint64_t sreq, addr;
	char data[];
};

/* Freed requests kept for reuse. A window of 64 MPI_Irecv plus 64 MPI_Isend (both directions at
 * once) holds 128 requests; with room for only 64, half of every window went through calloc
 * and free (about 330 of the 740 instructions an 8-byte MPI_Isend cost). */
#define REQ_CACHE_MAX 1024
static struct lk_request *req_cache;
static int req_ncache;
static uint64_t send_seq; /* cancel ids of plain eager sends: odd, so never a request address */

/* mpii_req_new, inlined into MPI_Isend and MPI_Irecv. */
static inline __attribute__((always_inline)) struct lk_request *req_new(int kind)
{
	struct lk_request *r = req_cache;

	if (r) {
		req_cache = r->next;
		req_ncache--;
		mpii_zero(r, sizeof(*r));
	} else {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
	}
	r->kind = kind;
	return r;
}

struct lk_request *mpii_req_new(int kind)
{
	return req_new(kind);
}

void mpii_req_hold(struct lk_request *r)
{
	r->comm->refs++;
	if (!r->d->predefined)
		r->d->refs++;
	r->held = 1;
}

void mpii_req_free(struct lk_request *r)
{
	if (r->pinned) { /* the record lets go of it (and frees it) when its results are in */
		r->freed = 1;
		return;
	}
	if (r->fh)
		mpii_req_fdrop(r);
	if (r->buddy)
		r->buddy->buddy = NULL;
	if (r->held) { /* the calls only when something may be destroyed */
		if (r->comm->refs > 1)
			r->comm->refs--;
		else
			mpii_comm_release(r->comm);
		if (!r->d->predefined)
			mpii_dt_release(r->d);
	}
	if (req_ncache < REQ_CACHE_MAX) {
		r->next = req_cache;
		req_cache = r;
		req_ncache++;
	} else {
		free(r);
	}
}

/* The copy of a buffered send is delivered (or withdrawn): tell the user's request. A plain
 * eager message may still wait unmatched at the receiver, so the user's request keeps its
 * cancel id; any other id names a request that is gone. */
static void bsend_done(struct lk_request *r)
{
	struct lk_request *u = r->buddy;

	u->buddy = r->buddy = NULL;
	u->cid = r->cid & 1 ? r->cid : 0;
	u->wpeer = r->wpeer;
	if (u->cxl == 1) { /* u waits for the outcome of its MPI_Cancel */
		u->cxl = 2;
		u->cancelled = r->cancelled;
		u->st.lk_cancelled = r->cancelled;
		u->done = 1;
		if (u->freed) /* MPI_Request_free while the cancel was pending */
			mpii_req_free(u);
	}
}

void mpii_complete(struct lk_request *r)
{
	if (r->kind == RQ_SEND && r->cxl == 1) {
		r->cxl_proto = 1; /* finish when the cancel is answered */
		return;
	}
	if (r->kind == RQ_SEND) {
		mpii_scratch_free(r->tmp);
		r->tmp = NULL;
		if (r->bsend) {
			free(r->buf);
			mpii.bsend_used -= (size_t)r->bsend + MPI_BSEND_OVERHEAD;
			mpii.bsend_pending--;
			if (r->buddy)
				bsend_done(r);
		}
	}
	r->done = 1; /* a persistent request stays active until Wait/Test reports it */
	if (r->freed)
		mpii_req_free(r);
}

/* A tp_send failed: the transport's own line (it names both ranks and the addresses tried)
 * goes with the MPI_ERR_OTHER the caller reports. */
static int send_failed(int wpeer)
{
	if (mpii.ft && (mpii_ft_failed(wpeer) || (mpii_ft_recover() && mpii_ft_failed(wpeer))))
		return MPI_ERR_PROC_FAILED; /* its node failed (--on-node-failure continue) */
	mpii_err_detail(tp_error(mpii.tp));
	return MPI_ERR_OTHER;
}

static inline __attribute__((always_inline)) int send_tp(int wpeer, const void *h, size_t hlen,
                                                         const void *data, size_t len, void *cookie)
{
	int rc;

	if (!mpii.tp_mt)
		return tp_send(mpii.tp, wpeer, h, hlen, data, len, cookie);
	mpii_tp_lock();
	rc = tp_send(mpii.tp, wpeer, h, hlen, data, len, cookie);
	mpii_tp_unlock();
	return rc;
}

static void ctl_send(int wpeer, struct hdr *h, size_t hlen)
{
	if (send_tp(wpeer, h, hlen, NULL, 0, NULL) < 0 &&
	    !(mpii.ft && (mpii_ft_failed(wpeer) || mpii_ft_recover())))
		mpii_fatal_tp();
}

/* After an eager send: a sender that never waits would let copies pile up in the transport
 * queues while the receiver starves; push them out, and hold the sender back past a bound. */
static void backpressure(void)
{
	if (!tp_queued(mpii.tp))
		return;
	mpii_poll_tp(1);
	while (tp_queued(mpii.tp) > 64)
		mpii_progress_wait();
}

/* ---- receive side ---- */

static void set_status(struct lk_request *r, int src, int tag, size_t len)
{
	size_t n = len <= r->bytes ? len : r->bytes;

	r->st.MPI_SOURCE = src;
	r->st.MPI_TAG = tag;
	r->st.lk_count = (long long)n;
	r->st.MPI_ERROR = len > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
	r->st.lk_cancelled = 0;
	r->msglen = len;
}

static inline __attribute__((always_inline)) void put_bytes(struct lk_request *r, size_t off,
                                                            const void *data, size_t len)
{
	if (off >= r->bytes)
		return;
	if (len > r->bytes - off)
		len = r->bytes - off;
	if (!len)
		return;
	if (r->d->contig) {
		char *dst = mpii_at(r->buf, r->d->true_lb + (MPI_Aint)off);
		if (dst != data) /* not already received in place (mpii_place) */
			memcpy(dst, data, len);
	} else
		mpii_unpack(r->d, r->count, r->buf, off, data, len);
}

static inline __attribute__((always_inline)) void recv_eager(struct lk_request *r, int wsrc,
                                                             int src, int tag, int flags,
                                                             uint64_t sreq, const void *data,
                                                             size_t len)
{
	set_status(r, src, tag, len);
	put_bytes(r, 0, data, len);
	if (flags & HF_SYNC) {
		struct hdr h = {.type = H_ACK, .sreq = sreq};
		ctl_send(wsrc, &h, HLEN_CTL);
	}
	if (r->kind == RQ_RECV && !r->freed)
		r->done = 1; /* all that mpii_complete would do */
	else
		mpii_complete(r);
}

static void recv_rts(struct lk_request *r, int wsrc, int src, int tag, size_t len, uint64_t sreq,
                     uint64_t addr)
{
	struct hdr h = {.sreq = sreq};
	size_t n;
	void *tmp = NULL;

	set_status(r, src, tag, len);
	r->wpeer = wsrc;
	n = (size_t)r->st.lk_count;
	if (addr && tp_can_get(mpii.tp, wsrc)) {
		void *dst =
		    r->d->contig ? mpii_at(r->buf, r->d->true_lb) : (tmp = mpii_scratch(n ? n : 1));
		int rc;
		if (dst && !r->alone && tp_coop_begin(mpii.tp, wsrc, n)) {
			/* the sender, waiting for this FIN anyway, copies part of it into dst */
			struct hdr c = {.type = H_CTS, .flags = HF_COOP, .len = n, .sreq = sreq};
			c.addr = (uint64_t)(uintptr_t)dst;
			c.off = tp_coop_open(mpii.tp);
			ctl_send(wsrc, &c, HLEN_DATA);
			rc = tp_coop_recv(mpii.tp, wsrc, dst, addr, n);
		} else
			rc = dst ? tp_get(mpii.tp, wsrc, dst, addr, n) : -1;
		if (rc < 0 && errno == ESRCH) {
			/* the sender is gone (killed): as when its tcp connection ends, the message
			 * never completes, and the process manager ends the job and says why */
			mpii_scratch_free(tmp);
			return;
		}
		if (rc < 0 && dst && !tp_can_get(mpii.tp, wsrc)) {
			/* the get is not permitted here (e.g. Yama ptrace_scope): the transport has
			 * turned it off, and this message goes the pipelined way */
			mpii_scratch_free(tmp);
			goto cts;
		}
		if (rc < 0) {
			char why[160];
			snprintf(why, sizeof(why),
			         "reading a %zu-byte message from job rank %d: %s", n, wsrc,
			         dst ? strerror(errno) : "out of memory");
			mpii_err_detail(why);
			r->st.MPI_ERROR = MPI_ERR_OTHER;
		} else if (tmp)
			mpii_unpack(r->d, r->count, r->buf, 0, tmp, n);
		mpii_scratch_free(tmp);
		h.type = H_FIN;
		ctl_send(wsrc, &h, HLEN_CTL);
		mpii_complete(r);
		return;
	}
cts:
	r->got = 0;
	h.type = H_CTS;
	h.addr = (uint64_t)(uintptr_t)r;
	ctl_send(wsrc, &h, HLEN_CTL);
}

static int matches(uint32_t ctx, int src, int tag, uint32_t rctx, int rsrc, int rtag)
{
	return ctx == rctx && (rsrc == src || rsrc == MPI_ANY_SOURCE) &&
	       (rtag == tag || rtag == MPI_ANY_TAG);
}

/* Remove a request from the posted-receive queue. */
static void posted_unlink(struct lk_request *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		mpii.posted = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		mpii.posted_tail = r->prev;
}

static struct lk_request *take_posted(uint32_t ctx, int src, int tag)
{
	struct lk_request *r;

	for (r = mpii.posted; r; r = r->next) {
		if (!matches(ctx, src, tag, r->ctx, r->peer, r->tag))
			continue;
		posted_unlink(r);
		return r;
	}
	return NULL;
}

#define UNEXP_BUCKETS 256
static struct {
	struct mpii_unexp *head, *tail;
} ubucket[UNEXP_BUCKETS];

static inline unsigned ubucket_of(uint32_t ctx, int src)
{
	return ((unsigned)src ^ ctx ^ ctx >> 8 ^ ctx >> 16) & (UNEXP_BUCKETS - 1);
}

static void unexp_unlink(struct mpii_unexp *u)
{
	unsigned b = ubucket_of(u->ctx, u->src);

	if (u->prev)
		u->prev->next = u->next;
	else
		mpii.unexp = u->next;
	if (u->next)
		u->next->prev = u->prev;
	else
		mpii.unexp_tail = u->prev;
	if (u->sprev)
		u->sprev->snext = u->snext;
	else
		ubucket[b].head = u->snext;
	if (u->snext)
		u->snext->sprev = u->sprev;
	else
		ubucket[b].tail = u->sprev;
}

/* The oldest unexpected message a receive of (ctx, src, tag) matches, or NULL. */
static struct mpii_unexp *unexp_find(uint32_t ctx, int src, int tag)
{
	struct mpii_unexp *u;

	if (src == MPI_ANY_SOURCE) {
		for (u = mpii.unexp; u; u = u->next)
			if (matches(u->ctx, u->src, u->tag, ctx, src, tag))
				return u;
		return NULL;
	}
	for (u = ubucket[ubucket_of(ctx, src)].head; u; u = u->snext)
		if (matches(u->ctx, u->src, u->tag, ctx, src, tag))
			return u;
	return NULL;
}

static void add_unexp(int wsrc, const struct hdr *h, const void *data, size_t len)
{
	struct mpii_unexp *u = malloc(sizeof(*u) + len);

	tp_batch_stop(mpii.tp); /* what the wait that took it waits for is not behind it */

	if (!u) {
		mpii_err(NULL, MPI_ERR_NO_MEM, "unexpected message");
		return;
	}
	u->ctx = h->ctx;
	u->src = h->src;
	u->tag = h->tag;
	u->wsrc = wsrc;
	u->type = h->type;
	u->flags = h->flags;
	u->len = h->type == H_EAGER ? len : (size_t)h->len;
	u->sreq = h->type == H_RTS ? h->sreq : h->flags & (HF_SYNC | HF_SREQ) ? h->eid : 0;
	u->addr = h->type == H_RTS ? h->addr : 0;
	if (len)
		memcpy(u->data, data, len);
	u->next = NULL;
	u->prev = mpii.unexp_tail;
	if (mpii.unexp_tail)
		mpii.unexp_tail->next = u;
	else
		mpii.unexp = u;
	mpii.unexp_tail = u;
	unsigned b = ubucket_of(u->ctx, u->src);
	u->snext = NULL;
	u->sprev = ubucket[b].tail;
	if (ubucket[b].tail)
		ubucket[b].tail->snext = u;
	else
		ubucket[b].head = u;
	ubucket[b].tail = u;
}

static void on_data(const struct hdr *h, const void *data, size_t len)
{
	struct lk_request *r = (struct lk_request *)(uintptr_t)h->addr;

	put_bytes(r, (size_t)h->off, data, len);
	r->got += len;
	if (r->got >= r->msglen)
		mpii_complete(r);
}

static void on_cts(const struct hdr *h)
{
	struct lk_request *r = (struct lk_request *)(uintptr_t)h->sreq;
	const char *src = r->tmp ? r->tmp : mpii_at(r->buf, r->d->true_lb);
	size_t frag;
	struct hdr d = {.type = H_DATA, .addr = h->addr};

	if (h->flags & HF_COOP) { /* the receiver reads it; its FIN completes r */
		tp_coop_help(mpii.tp, r->wpeer, (uint32_t)h->off, src, h->addr, (size_t)h->len);
		return;
	}
	frag = tp_frag_max(mpii.tp, r->wpeer);
	/* The short piece goes first and the last fragment is a full one: a full fragment that has
	 * to wait is kept by reference and reported through mpii_on_sent once every fragment
	 * before it has left. A short last one would be copied into the queue and count as sent
	 * while earlier queued fragments still point into the caller's buffer. */
	size_t n = r->bytes % frag ? r->bytes % frag : frag;

	for (size_t off = 0; off < r->bytes; off += n, n = frag) {
		int last = off + n >= r->bytes, rc;

		d.off = off;
		rc = send_tp(r->wpeer, &d, HLEN_DATA, src + off, n, last ? r : NULL);
		if (rc < 0)
			mpii_fatal_tp();
		if (last && rc == 0)
			mpii_complete(r);
	}
}

/* A sender asks to withdraw a message: drop it if it is still unexpected here, and answer. */
static void on_cancel(int wsrc, const struct hdr *h)
{
	struct mpii_unexp *u;
	struct hdr a = {.type = H_CXLACK, .sreq = h->addr};

	for (u = mpii.unexp; u; u = u->next)
		if (u->wsrc == wsrc && u->sreq == h->sreq && u->ctx == h->ctx)
			break;
	if (u) {
		unexp_unlink(u);
		free(u);
		a.off = 1;
	}
	ctl_send(wsrc, &a, HLEN_DATA);
}

void mpii_cancel_bsend(struct lk_request *u)
{
	struct lk_request *r = u->buddy;

	if (u->cxl || u->cancelled)
		return;
	if (!r) { /* the copy went out as a plain eager message */
		mpii_cancel_send(u);
		return;
	}
	u->cxl = 1;
	u->done = 0;
	mpii_cancel_send(r);
}

void mpii_cancel_send(struct lk_request *r)
{
	struct hdr h = {.type = H_CXL, .ctx = r->ctx, .sreq = r->cid};

	if (r->cxl || !r->cid || r->peer < 0 || r->cancelled)
		return;
	if (r->done) { /* a plain eager send completes at once; its message may still wait */
		r->done = 0;
		r->cxl_proto = 1;
	}
	r->cxl = 1;
	r->active = 1;
	h.addr = (uint64_t)(uintptr_t)r;
	ctl_send(r->wpeer, &h, HLEN_RTS);
}

void mpii_on_frag(void *arg, int wsrc, const void *hdr, size_t hlen, const void *data, size_t len)
{
	const struct hdr *h = hdr;
	struct lk_request *r;

	(void)arg;
	if (h->type >= MPII_H_RMA) {
		mpii_rma_frag(wsrc, hdr, data, len);
		return;
	}
	if (mpii.tp_mt && mpii_in_thread()) {
		mpii_defer_frag(wsrc, hdr, hlen, data, len);
		return;
	}
	switch (h->type) {
	case H_EAGER:
		r = take_posted(h->ctx, h->src, h->tag);
		if (r)
			recv_eager(r, wsrc, h->src, h->tag, h->flags,
			           h->flags & HF_SYNC ? h->eid : 0, data, len);
		else
			add_unexp(wsrc, h, data, len);
		break;
	case H_RTS:
		r = take_posted(h->ctx, h->src, h->tag);
		if (r)
			recv_rts(r, wsrc, h->src, h->tag, (size_t)h->len, h->sreq, h->addr);
		else
			add_unexp(wsrc, h, NULL, 0);
		break;
	case H_CTS:
		on_cts(h);
		break;
	case H_DATA:
		on_data(h, data, len);
		break;
	case H_FIN:
	case H_ACK:
		mpii_complete((struct lk_request *)(uintptr_t)h->sreq);
		break;
	case H_CXL:
		on_cancel(wsrc, h);
		break;
	case H_CXLACK:
		r = (struct lk_request *)(uintptr_t)h->sreq;
		r->cxl = 2;
		if (h->off) {
			r->cancelled = 1;
			r->st.lk_cancelled = 1;
			r->st.MPI_ERROR = MPI_SUCCESS;
		}
		if (h->off || r->cxl_proto)
			mpii_complete(r);
		break;
	default:
		mpii_err(NULL, MPI_ERR_INTERN, "bad fragment");
	}
}

/* A DATA fragment's payload of a contiguous receive goes straight into the user's buffer: the
 * receive is posted and matched (DATA only follows our CTS). Anything else is buffered. So is
 * every fragment of a message of several, while the path can keep a buffer of one fragment
 * for this peer (tp_rx_buffer_ok): read whole into the connection's buffer and copied out
 * here, they move faster than in place. Interleaved pairs on the AMD EPYC machine (ratios
 * buffered/in place, ping-pong / windows of 64): loopback 1-4 MiB 1.09-1.18 / 1.18-1.30 when
 * copies between the CPUs are fast, 0.98-1.04 / 1.00-1.04 when slow; between two namespace
 * nodes 1.13-1.18 / 1.16-1.49 and 1.06-1.08 / 1.09-1.10. A message of one fragment stays in
 * place: buffered, its ping-pong took up to twice as long (256 KiB between namespace nodes
 * 0.49). Why the kernel's copy into the user's buffer is the slower one, 64 KiB-1 MiB bounce
 * buffers and pauses between reads did not tell (doc/PROTOCOL-mpi-wire.md section 3). */
void *mpii_place(void *arg, int peer, const void *hdr, size_t hlen, size_t len)
{
	const struct hdr *h = hdr;
	struct lk_request *r;

	(void)arg;
	(void)hlen;
	if (h->type != H_DATA || (mpii.tp_mt && mpii_in_thread()))
		return NULL;
	r = (struct lk_request *)(uintptr_t)h->addr;
	if (!r->d->contig || h->off > r->bytes || len > r->bytes - (size_t)h->off)
		return NULL;
	if (r->msglen > tp_frag_max(mpii.tp, peer) && tp_rx_buffer_ok(mpii.tp, peer))
		return NULL;
	return mpii_at(r->buf, r->d->true_lb + (MPI_Aint)h->off);
}

void mpii_on_sent(void *arg, void *cookie)
{
	(void)arg;
	if (cookie && mpii.tp_mt && mpii_in_thread())
		mpii_defer_sent(cookie);
	else if (cookie)
		mpii_complete(cookie);
}

static int match_unexp(struct lk_request *r)
{
	struct mpii_unexp *u = unexp_find(r->ctx, r->peer, r->tag);

	if (!u)
		return 0;
	unexp_unlink(u);
	if (u->type == H_EAGER)
		recv_eager(r, u->wsrc, u->src, u->tag, u->flags, u->sreq, u->data, u->len);
	else
		recv_rts(r, u->wsrc, u->src, u->tag, u->len, u->sreq, u->addr);
	free(u);
	return 1;
}

static void complete_null(struct lk_request *r)
{
	r->st.MPI_SOURCE = MPI_PROC_NULL;
	r->st.MPI_TAG = MPI_ANY_TAG;
	r->st.MPI_ERROR = MPI_SUCCESS;
	r->st.lk_count = 0;
	r->st.lk_cancelled = 0;
	mpii_complete(r);
}

static int recv_start(struct lk_request *r)
{
	r->bytes = r->d->size * (size_t)r->count;
	if (r->peer == MPI_PROC_NULL) {
		complete_null(r);
		return MPI_SUCCESS;
	}
	if (mpii.unexp && match_unexp(r))
		return MPI_SUCCESS;
	if (mpii.nfailed && mpii_ft_failed(mpii_world_of(r->comm, r->peer))) {
		r->st.MPI_SOURCE = r->peer;
		r->st.MPI_ERROR = MPI_ERR_PROC_FAILED;
		mpii_complete(r);
		return MPI_SUCCESS; /* the request says it (MPI_Wait returns it) */
	}
	r->next = NULL;
	r->prev = mpii.posted_tail;
	if (mpii.posted_tail)
		mpii.posted_tail->next = r;
	else
		mpii.posted = r;
	mpii.posted_tail = r;
	return MPI_SUCCESS;
}

/* ---- send side ---- */

/* Whether a message of bytes goes eagerly to job rank w: a test without a call into the
 * transport when it is no longer than the smallest limit of the job's ranks. A symmetric
 * collective may raise the limit for its own sends (mpii.eager_coll): the receiver takes an
 * eager message of any size, so only the sender chooses. */
static inline int eager(size_t bytes, int w)
{
	return (bytes <= mpii.eager_min && w < mpii.size) || bytes <= tp_eager_max(mpii.tp, w) ||
	       (bytes <= mpii.eager_coll && bytes <= tp_frag_max(mpii.tp, w));
}

static int send_start(struct lk_request *r)
{
	struct hdr h = {.src = r->comm->rank, .ctx = r->ctx, .tag = r->tag};
	const char *src;

	r->bytes = r->d->size * (size_t)r->count;
	if (r->peer == MPI_PROC_NULL) {
		complete_null(r);
		return MPI_SUCCESS;
	}
	r->wpeer = mpii_world_of(r->comm, r->peer);
	if (mpii_ft_failed(r->wpeer))
		return MPI_ERR_PROC_FAILED;
	src = mpii_at(r->buf, r->d->true_lb);
	if (!r->d->contig && r->bytes) {
		r->tmp = mpii_scratch(r->bytes);
		if (!r->tmp)
			return MPI_ERR_NO_MEM;
		mpii_pack(r->d, r->count, r->buf, 0, r->tmp, r->bytes);
		src = r->tmp;
	}
	r->cid = (uint64_t)(uintptr_t)r;
	r->cxl = r->cxl_proto = 0;
	if (eager(r->bytes, r->wpeer)) {
		h.type = H_EAGER;
		h.flags = r->mode == MODE_SYNC ? HF_SYNC : HF_SREQ;
		if (h.flags == HF_SREQ) /* may complete now: its address may name another send */
			r->cid = (++send_seq << 1) | 1;
		h.eid = r->cid;
		/* A plain send over TP_COPY_MAX offers itself as the cookie: a payload the
		 * transport cannot take now (a full shm ring, a tcp queue) may then wait by
		 * reference (rc 1), a copy fewer, and complete the request when it leaves. Smaller
		 * ones are copied and done at once. Windows of 64 MPI_Isend of 32 KiB both ways,
		 * twice the shm ring: 15.0 -> 30.8 GB/s (5 paired runs; 8.7 -> 12.3 while copies
		 * between the CPUs were slow). A synchronous send completes by its ACK, never by
		 * the transport. */
		void *ck = h.flags == HF_SREQ && r->bytes > TP_COPY_MAX ? r : NULL;
		int rc = send_tp(r->wpeer, &h, HLEN_EID, src, r->bytes, ck);
		if (rc < 0)
			return send_failed(r->wpeer);
		if (rc == 0 && h.flags == HF_SREQ) { /* taken: done now (rc 1: when it leaves) */
			if (!r->tmp && !r->bsend && !r->freed)
				r->done = 1; /* all that mpii_complete would do */
			else
				mpii_complete(r);
		}
		backpressure();
		return MPI_SUCCESS;
	}
	h.type = H_RTS;
	h.len = r->bytes;
	h.sreq = r->cid;
	h.addr = tp_can_get(mpii.tp, r->wpeer) ? (uint64_t)(uintptr_t)src : 0;
	return send_tp(r->wpeer, &h, HLEN_RTS, NULL, 0, NULL) < 0 ? send_failed(r->wpeer)
	                                                          : MPI_SUCCESS;
}

int mpii_start(struct lk_request *r)
{
	r->done = 0;
	r->active = 1;
	r->cancelled = 0;
	memset(&r->st, 0, sizeof(r->st));
	return r->kind == RQ_SEND ? send_start(r) : recv_start(r);
}

/* ---- internal API used by the MPI_ routines and collectives ---- */

static void fill(struct lk_request *r, const void *buf, int count, struct mpii_dtype *d, int peer,
                 int tag, struct mpii_comm *c, int coll)
{
	r->buf = (void *)buf;
	r->count = count;
	r->d = d;
	r->peer = peer;
	r->tag = tag;
	r->comm = c;
	r->ctx = c->ctx + (coll ? 1 : 0);
}

/* A new request is zeroed: of what mpii_start resets, only `active` needs setting. */
int mpii_isend(const void *buf, int count, struct mpii_dtype *d, int dest, int tag,
               struct mpii_comm *c, int coll, int mode, struct lk_request **out)
{
	struct lk_request *r = req_new(RQ_SEND);

	*out = r;
	if (!r)
		return MPI_ERR_NO_MEM;
	fill(r, buf, count, d, dest, tag, c, coll);
	mpii_req_hold(r);
	r->mode = mode;
	r->active = 1;
	return send_start(r);
}

static int irecv(void *buf, int count, struct mpii_dtype *d, int src, int tag, struct mpii_comm *c,
                 int coll, int alone, struct lk_request **out)
{
	struct lk_request *r = req_new(RQ_RECV);

	*out = r;
	if (!r)
		return MPI_ERR_NO_MEM;
	fill(r, buf, count, d, src, tag, c, coll);
	mpii_req_hold(r);
	r->active = 1;
	r->alone = alone;
	return recv_start(r);
}

int mpii_irecv(void *buf, int count, struct mpii_dtype *d, int src, int tag, struct mpii_comm *c,
               int coll, struct lk_request **out)
{
	return irecv(buf, count, d, src, tag, c, coll, 0, out);
}

int mpii_irecv_alone(void *buf, int count, struct mpii_dtype *d, int src, int tag,
                     struct mpii_comm *c, int coll, struct lk_request **out)
{
	return irecv(buf, count, d, src, tag, c, coll, 1, out);
}

static void wait_done(struct lk_request *r)
{
	while (!r->done) {
		mpii_progress_wait();
		mpii_ft_check(r);
	}
}

int mpii_send(const void *buf, int count, struct mpii_dtype *d, int dest, int tag,
              struct mpii_comm *c, int coll, int mode)
{
	struct lk_request r;
	int rc;

	if (mode != MODE_SYNC && d->contig && dest >= 0) {
		size_t bytes = d->size * (size_t)count;
		int w = mpii_world_of(c, dest);

		if (eager(bytes, w)) {
			struct hdr h = {.type = H_EAGER,
			                .src = c->rank,
			                .ctx = c->ctx + (coll ? 1 : 0),
			                .tag = tag};
			if (send_tp(w, &h, HLEN_EAGER, mpii_at(buf, d->true_lb), bytes, NULL) < 0)
				return send_failed(w);
			backpressure();
			return MPI_SUCCESS;
		}
	}
	mpii_zero(&r, sizeof(r));
	r.kind = RQ_SEND;
	r.mode = mode;
	fill(&r, buf, count, d, dest, tag, c, coll);
	rc = mpii_start(&r);
	if (rc != MPI_SUCCESS)
		return rc;
	wait_done(&r);
	return r.st.MPI_ERROR;
}

int mpii_recv(void *buf, int count, struct mpii_dtype *d, int src, int tag, struct mpii_comm *c,
              int coll, MPI_Status *st)
{
	struct lk_request r;

	/* a stack request: only the fields the receive path reads are set */
	r.kind = RQ_RECV;
	r.done = r.freed = r.persistent = r.active = 0;
	fill(&r, buf, count, d, src, tag, c, coll);
	recv_start(&r);
	wait_done(&r);
	if (st && st != MPI_STATUS_IGNORE)
		*st = r.st;
	return r.st.MPI_ERROR;
}

int mpii_sendrecv(const void *sbuf, int scount, struct mpii_dtype *sd, int dest, void *rbuf,
                  int rcount, struct mpii_dtype *rd, int src, int tag, struct mpii_comm *c,
                  int coll, MPI_Status *st)
{
	struct lk_request r, *s;
	int rc;

	mpii_zero(&r, sizeof(r));
	r.kind = RQ_RECV;
	fill(&r, rbuf, rcount, rd, src, tag, c, coll);
	mpii_start(&r);
	rc = mpii_isend(sbuf, scount, sd, dest, tag, c, coll, MODE_STD, &s);
	if (rc != MPI_SUCCESS) {
		if (s)
			mpii_req_free(s);
		if (rc != MPI_ERR_PROC_FAILED) {
			mpii_cancel_recv(&r);
			return rc;
		}
		wait_done(&r); /* the source may be alive and send: take it (no hang there) */
		if (st && st != MPI_STATUS_IGNORE)
			*st = r.st;
		return rc;
	}
	wait_done(s);
	rc = s->st.MPI_ERROR;
	mpii_req_free(s);
	wait_done(&r);
	if (st && st != MPI_STATUS_IGNORE)
		*st = r.st;
	return rc != MPI_SUCCESS ? rc : r.st.MPI_ERROR;
}

int mpii_wait(struct lk_request *r, MPI_Status *st)
{
	int rc;

	wait_done(r);
	rc = r->st.MPI_ERROR;
	if (st && st != MPI_STATUS_IGNORE)
		*st = r->st;
	if (!r->persistent)
		mpii_req_free(r);
	return rc;
}

void mpii_fail_posted(int w)
{
	for (struct lk_request *r = mpii.posted, *nx; r; r = nx) {
		nx = r->next;
		if (r->peer < 0 || !r->comm || mpii_world_of(r->comm, r->peer) != w)
			continue;
		posted_unlink(r);
		r->st.MPI_SOURCE = r->peer;
		r->st.MPI_ERROR = MPI_ERR_PROC_FAILED;
		mpii_complete(r);
	}
}

int mpii_cancel_recv(struct lk_request *r)
{
	struct lk_request *p;

	for (p = mpii.posted; p && p != r; p = p->next)
		;
	if (!p)
		return 0;
	posted_unlink(r);
	r->cancelled = 1;
	r->st.lk_cancelled = 1;
	r->st.MPI_ERROR = MPI_SUCCESS;
	mpii_complete(r);
	return 1;
}

int mpii_probe(uint32_t ctx, int src, int tag, MPI_Status *st)
{
	struct mpii_unexp *u = unexp_find(ctx, src, tag);

	if (!u)
		return 0;
	if (st && st != MPI_STATUS_IGNORE) {
		st->MPI_SOURCE = u->src;
		st->MPI_TAG = u->tag;
		st->MPI_ERROR = MPI_SUCCESS;
		st->lk_cancelled = 0;
		st->lk_count = (long long)u->len;
	}
	return 1;
}
