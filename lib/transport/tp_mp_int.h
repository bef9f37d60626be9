/* lib/transport/tp_mp_int.h: what the multipath layer's files share (tp_mp.c: policy,
 * scheduling, order; tp_mp_fo.c: the end-to-end acknowledgement and tcp-udp failover,
 * doc/PROTOCOL-mpi-wire.md section 7.4). */
#ifndef LAMKIT_TP_MP_INT_H
#define LAMKIT_TP_MP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "tp_internal.h"

/* A fragment that arrived ahead of its turn: its payload copied, or where ops.place put it. */
struct mp_held {
	struct mp_held *next;
	uint32_t seq, hlen;
	size_t len;
	const char *at; /* the payload: data[], or the placed memory */
	_Alignas(8) unsigned char hdr[TP_HDR_MAX];
	char data[];
};

/* A fragment tracked until its payload is out, in send order: one a path keeps by reference,
 * or one still queued here because every path had a full window (the fields after `queued`). */
struct mp_done {
	struct mp_done *next;
	void *cookie; /* the layer above's (may be NULL) */
	int peer, done;
	int report; /* tp_send returned 1 for it: the layer above waits for ops.sent */
	int queued; /* not yet handed to a path */
	/* end-to-end acknowledgement (section 7.4): on a tcp path, done = written && acked */
	int need_ack, acked, written;
	size_t hlen, len;
	const void *data; /* the caller's payload, or copy[] */
	unsigned char hdr[TP_HDR_MAX];
	unsigned char copy[]; /* a small queued payload, so the caller may reuse its buffer */
};

struct mp_peer {
	uint32_t sseq, rseq;                               /* next to send, next to hand up */
	struct mp_held *hh[TP_MP_PATHS], *ht[TP_MP_PATHS]; /* held, per arrival path */
	size_t held_bytes, max_held_bytes;
	struct mp_done *dh, *dt; /* payloads out on a path or queued, in send order */
	struct mp_done *qh;      /* the first queued one: dh..dt ends with the queued ones */
	/* Skew: every fragment out on a path, as (end of it in the path's bytes, start of it in
	 * all bytes sent to the peer), oldest first; popped as the path's backlog falls. */
	struct mp_out {
		uint64_t path_end, all_start, len;
	} * out[TP_MP_PATHS];
	size_t out_cap[TP_MP_PATHS], out_head[TP_MP_PATHS], out_n[TP_MP_PATHS];
	uint64_t all_bytes; /* payload bytes sent to the peer, all paths */
	int plisted;        /* on the pending list */
	/* scheduling: drain rate per path (B/us), measured over busy intervals: from the send that
	 * found the path idle to the poll that finds its backlog gone, busy_bytes drained */
	double rate[TP_MP_PATHS];
	uint64_t busy_since[TP_MP_PATHS];
	size_t busy_bytes[TP_MP_PATHS];
	int listed;                /* on the busy list */
	int measured[TP_MP_PATHS]; /* rate[] measured (else the policy's weight) */
	uint64_t frags[TP_MP_PATHS], bytes[TP_MP_PATHS], held_frags;
	/* end-to-end acknowledgement and failover (tp_mp_fo.c): what went on a tcp path and is
	 * not acknowledged yet, oldest first */
	struct mp_keep *kh, *kt;
	uint32_t racked;        /* receiver: the cum of the last ACK sent */
	unsigned unacked_frags; /* receiver: handed up since that ACK */
	size_t unacked_bytes;   /* receiver: their payload bytes */
	uint64_t ack_due;       /* receiver: an ACK is owed by then (0: none) */
	int acklisted;          /* on the ACK list */
	int down[TP_MP_PATHS];  /* the path failed; tried again at retry_at */
	uint64_t retry_at[TP_MP_PATHS], backoff[TP_MP_PATHS];
	int dlisted; /* on the down list */
	uint64_t downs, resent, acks, dups;
};

/* A fragment put on a tcp path, kept until an ACK covers it: sent again over udp if that path
 * fails. Its payload: the caller's (d tracks it: ops.sent waits for the ACK) or copy[]. */
struct mp_keep {
	struct mp_keep *next;
	uint32_t seq;
	int path;
	struct mp_done *d;
	uint64_t t_sent;    /* us */
	uint64_t udp_bytes; /* p->bytes[udp] when it was sent: udp made progress since? */
	size_t hlen, len;
	const void *data;
	unsigned char hdr[TP_HDR_MAX];
	unsigned char copy[];
};

struct tp_mp {
	struct tp_mp_policy pol;
	struct mp_peer **p; /* per peer rank, made on first use */
	int release;        /* some peer has finished payloads at the head of its list */
	int stats;
	char name[32];       /* "tcp+udp", "tcp+tcp2", ... */
	int *busy, nbusy;    /* peers with a busy interval open on some path */
	int *pend, npend;    /* peers with queued fragments */
	int nqueued;         /* queued fragments, all peers */
	uint64_t last_check; /* when tp_mp_poll last looked at the backlogs */
	/* section 7.4: on with tcp and udp among the paths (LAMKIT_MP_ACK=0: off) */
	int ack;
	uint64_t stall_us, t0;
	int *ackp, nackp;   /* peers owing an ACK */
	int *downp, ndownp; /* peers with a path down */
	long nkept;         /* kept fragments, all peers */
	int ack_now;        /* an ACK is due at the end of this tp_poll */
	uint64_t next_look; /* when kept fragments are looked at for a stall next */
	int debug;
};

/* tp_mp.c: hand one fragment to path with sequence number seq (no new number, no tracking).
 * The path's answer: 0 copied, 1 kept by reference, -1. */
int tp_mp_put_raw(tp_t *tp, int peer, int path, uint32_t seq, void *cookie, const void *hdr,
                  size_t hlen, const void *data, size_t len);

/* tp_mp_fo.c */
/* Keep fragment seq just put on tcp path `path` (d: its tracking entry, or NULL: copy it).
 * 0, or -1 (ENOMEM). */
int tp_mp_keep(tp_t *tp, struct mp_peer *p, int path, uint32_t seq, struct mp_done *d,
               const void *hdr, size_t hlen, const void *data, size_t len);
/* An ACK from peer (cum). */
void tp_mp_ack_in(tp_t *tp, struct mp_peer *p, int peer, uint32_t cum);
/* Receiver: fragments were handed up (large: one of at least cutoff bytes among them). */
void tp_mp_ack_owed(tp_t *tp, struct mp_peer *p, int peer, size_t bytes, int large);
/* From tp_mp_poll: ACKs owed, stalled tcp paths, paths to try again. 0 or -1. */
int tp_mp_fo_poll(tp_t *tp, uint64_t now);
/* Whether the failover has timers running (ACKs owed, paths down, fragments kept). */
int tp_mp_fo_due(const tp_t *tp);
/* When the failover's next timer is due (us, tp_now_us's clock), UINT64_MAX when none runs. */
uint64_t tp_mp_fo_next(const tp_t *tp);
/* Free what is kept for p. */
void tp_mp_fo_free(tp_t *tp, struct mp_peer *p);

#define TP_MP_SKEW 4 /* windows the paths may drift apart (what the receiver may hold) */

#endif
