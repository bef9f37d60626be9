/* lib/transport/tp_udp_int.h: what the files of the udp path share (not for the rest of the
 * transport): the datagram format, the per-peer and per-route state, and the functions one file
 * of the path calls in another. */
#ifndef LAMKIT_TP_UDP_INT_H
#define LAMKIT_TP_UDP_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#ifndef UDP_GRO
#define UDP_GRO 104 /* linux/udp.h: receive a run of datagrams in one buffer (Linux 5.0) */
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 /* linux/udp.h: generic segmentation offload (Linux 4.18) */
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

#include "tp_internal.h"

#define UDP_MAGIC     0x6c6bu /* "lk" */
#define MAXR          8       /* routes per rank */
#define WIN           2048    /* packets in flight per peer (a power of two) */
#define RWIN          2048    /* packets held out of order per peer (== WIN) */
#define DUPTHRESH     3       /* later packets acknowledged on the same route: a hole is lost */
#define BATCH         32      /* datagrams per recvmmsg */
#define UDP_PAYLOAD   65507   /* largest IPv4 UDP payload */
#define RTO_MIN       1000    /* us */
#define RTO_INIT      20000   /* us, before the first RTT sample */
#define RTO_MAX       1000000 /* us: the truncation of the exponential backoff */
#define TIMEOUT_BURST 16      /* packets per peer resent at one timer tick */
#define PTO_MIN       200     /* us: the tail probe's shortest wait (2 RTT + 100 us, up to RTO) */
#define PROBE_EVERY   50000   /* us between probes of an up route that is owed an answer */
#define DOWN_PROBE    200000  /* us between probes of a down route */
#define GSO_MAX       48      /* datagrams per UDP_SEGMENT send */
#define FRAG_MAX      (64 * 1024)
#define EAGER_MAX     (16 * 1024)

enum ptype { P_DATA = 1, P_ACK, P_NACK, P_PROBE, P_PROBEACK };
enum pflag { F_FIRST = 1, F_LAST = 2, F_FIN = 4 };

/* Every datagram starts with this header (host byte order, one ABI per job). crc covers the
 * header (with crc = 0) and everything after it. */
struct uhdr {
	uint32_t crc;
	uint16_t magic;
	uint8_t type, flags;
	uint32_t job;     /* hash of the job name: datagrams of other jobs are dropped */
	int32_t src, dst; /* job ranks */
	uint16_t nsend;   /* DATA: how many times this packet was sent (1 first) */
	uint8_t route;    /* sender's local route index */
	uint8_t hlen;     /* DATA: tp header bytes at the start of the fragment's stream */
	uint32_t len;     /* payload bytes after this header */
	uint32_t off;     /* DATA: offset of the payload in the fragment's stream (hdr + data) */
	uint32_t flen;    /* DATA: fragment payload bytes (stream = hlen + flen) */
	uint64_t seq;     /* DATA: sequence number; NACK: the seq asked for */
	uint64_t ts;      /* sender's clock (us) when sent; echoed by ACK and PROBEACK */
	uint64_t cum;     /* piggybacked: every seq <= cum from dst has been received */
	uint64_t dlv;     /* piggybacked: every seq <= dlv from dst has been delivered */
};

struct ackbody {
	uint64_t echo_seq, echo_ts;
	uint32_t echo_nsend, pad;
	uint64_t bits[RWIN / 64]; /* bit i: seq cum + 2 + i is held (cum + 1 is missing) */
};

struct probebody {
	uint32_t reply_ip; /* network order: where the answer goes (the prober's route) */
	uint16_t reply_port, dst_route;
};

/* One local socket. */
struct lroute {
	int fd, hbfd;
	struct in_addr addr; /* bound */
	uint32_t net, mask;  /* host order, for matching peers' addresses */
	int mtu;
	struct in_addr adv; /* advertised in the card (LAMKIT_UDP_ROUTES can point it at a relay) */
	int port, hbport;   /* advertised */
};

/* A route to one peer: a local socket and one of the peer's addresses. */
struct proute {
	int lr, pr; /* local route index, peer's route index */
	struct sockaddr_in to, hbto;
	int up;
	uint64_t owed_since; /* first send on it not answered yet (0: nothing owed) */
	uint64_t last_ok, last_probe, up_at;
	int inflight;
	double rate;     /* EWMA of packets acknowledged per ms: the striping weight */
	unsigned window; /* acks in the current rate window */
	uint64_t wstart;
	uint64_t txn, acked_txn; /* transmissions on this route; latest one acknowledged */
	uint64_t sent, retx, acked, downs, ups, sent_since_up, errors;
};

struct spkt {
	struct tp_frag *f; /* NULL for FIN */
	uint64_t txn;      /* its route's transmission number of the last send */
	uint64_t seq, tsent, deadline;
	uint32_t off, n;
	uint16_t nsend;
	uint8_t flags, route, acked;
};

struct held {
	uint64_t seq;
	struct uhdr h;
	unsigned char *data;
};

struct peer {
	int known; /* card read, routes built */
	int nr;
	struct proute r[MAXR];
	char host[64];
	/* sending */
	uint64_t next_seq, una;
	struct spkt *win;
	struct tp_fifo q;    /* fragments not fully acknowledged, in order */
	struct tp_frag *cur; /* first fragment with bytes not yet packetized */
	size_t inflight_bytes, win_bytes;
	size_t qbytes; /* payload bytes of the fragments in q (tp_udp_backlog) */
	int pkt;       /* payload bytes per datagram to this peer */
	uint64_t srtt, rttvar, rto;
	uint64_t last_heard, wait_since;
	int rr; /* round robin among down routes */
	/* receiving */
	uint64_t expect, delivered;
	struct held *hold;
	int nheld;
	uint64_t hi_held; /* highest seq held out of order (meaningful while nheld) */
	unsigned char *asmb;
	size_t asm_got, asm_need;
	unsigned char asm_hdr[TP_HDR_WIRE];
	unsigned asm_hlen;
	int ack_due, ack_route;
	unsigned ack_poll;
	uint64_t echo_seq, echo_ts;
	unsigned echo_nsend;
	/* end */
	int fin_sent, fin_rcvd;
	int gone; /* tp_forget: nothing more to or from it */
	/* counters */
	uint64_t sent, retx, dup, corrupt, nack_sent, nack_rcvd, ooo, dlv_pkts, acks_sent;
	uint64_t retx_fast, retx_timer, retx_unblock, retx_rebind; /* why (NACKs: nack_rcvd) */
	uint64_t retx_probe;
	uint64_t probe_at; /* tail probe due (0: none armed) */
};

struct faults {
	double drop, corrupt, dup, reorder;
	int delay_ms;
	uint64_t rng;
	int on;
};

struct delayed {
	uint64_t at;
	int fd;
	struct sockaddr_in to;
	size_t len;
	unsigned char *buf;
};

struct tp_udp {
	tp_t *tp;
	int nl;
	struct lroute l[MAXR];
	struct peer *p;
	uint32_t job;
	int me, size;
	int reliable, debug, stats;
	uint64_t peer_timeout, down_after, t0;
	uint64_t seq0;
	uint64_t win_pkts; /* packets in flight per peer, at most WIN (LAMKIT_UDP_WINDOW) */
	int rcvbuf;
	char host[64];
	int nwait; /* fragments not fully packetized */
	unsigned polls;
	uint64_t next_timer;
	/* receive batch */
	unsigned char *rxb;
	size_t rxsz;
	struct mmsghdr mm[BATCH];
	int gro;        /* UDP_GRO on the route sockets: one read may hold a run of datagrams */
	int *act, nact; /* peers contacted so far (known): progress walks only these */
	/* buffers for packets held out of order, kept for reuse: malloc and free per packet cost a
	 * munmap with a cross-CPU TLB flush now and then (the probe thread makes us threaded) */
	unsigned char **hpool;
	int nhpool;
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];
	/* a run of new packets to one route, sent with one sendmsg (UDP_SEGMENT) */
	struct {
		int on, n, peer, ri, shortseg;
		size_t seg, bytes;
		struct uhdr h[GSO_MAX];
		struct iovec iov[GSO_MAX * 3];
		int niov, first[GSO_MAX + 1]; /* first[i]: packet i's first iovec */
	} gb;
	/* faults */
	struct faults fi;
	struct delayed *dq;
	int ndq;
	unsigned char *scratch;
	/* probe answering thread */
	pthread_t thr;
	int thr_on, wake[2];
	atomic_int stop, linger; /* linger: flushed; the thread re-acknowledges duplicates */
	int flushed;
	struct faults thr_fi;
	uint64_t inj_drop, inj_corrupt, inj_dup, inj_reorder;
};

/* Time since t (0 when t is later: timestamps taken after `now` was read). */
static inline uint64_t ago(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

static inline uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (!e || !*e)
		return dflt;
	v = strtoull(e, &end, 10);
	return *end ? dflt : (uint64_t)v;
}

/* Datagrams (tp_udp_pkt.c): format, CRC, sending one or a batch, the fault injector. */
/* "drop=P,corrupt=P,dup=P,reorder=P,delay=MS,seed=N" (LAMKIT_UDP_FAULTS) into f. 0, or -1 with
 * the bad item in err. */
int tp_udp_parse_faults(struct faults *f, const char *s, char *err, size_t errlen);
/* Fill a header of `type` to dst, with the piggybacked cum/dlv of peer p and the clock. */
void tp_udp_hdr_init(struct tp_udp *u, struct uhdr *h, int type, int dst, const struct peer *p);
/* Set h->crc over the header and iov[1..n-1] (iov[0] is the header). */
void tp_udp_seal(struct uhdr *h, const struct iovec *iov, int n);
/* Send one datagram through the fault injector f (thread: from the probe thread, nothing
 * delayed or counted). 0, or -1 with errno on a hard error. */
int tp_udp_xmit(struct tp_udp *u, struct faults *f, int fd, const struct sockaddr_in *to,
                const struct iovec *iov, int n, int thread);
/* Send the datagrams the injector delayed whose time came. */
void tp_udp_dq_flush(struct tp_udp *u, uint64_t now);
/* Queue a sealed datagram to (peer, route ri) in the segmentation batch. 1 when queued, 0 when
 * the caller must send it alone. */
int tp_udp_gso_add(struct tp_udp *u, int peer, int ri, const struct uhdr *h,
                   const struct iovec *iov, int n);
/* Send the batch (one sendmsg the kernel cuts into datagrams, or one by one without it). */
void tp_udp_gso_flush(struct tp_udp *u);
/* The datagram size of a run received in one buffer (UDP_GRO), or 0 for a single datagram. */
size_t tp_udp_gro_size(struct msghdr *m);

/* Routes and probing (tp_udp_route.c). */
/* Open one socket pair per route (LAMKIT_UDP_ROUTES, or the interfaces up). 0, or -1. */
int tp_udp_open_routes(struct tp_udp *u, char *err, size_t errlen);
/* Publish the card lk-udp-RANK. 0, or -1 with a reason in err. */
int tp_udp_publish(struct tp_udp *u, char *err, size_t errlen);
/* "local->peer:port" of a route, for messages. */
void tp_udp_route_name(const struct tp_udp *u, const struct proute *r, char *out, size_t len);
/* Read peer's card and build its routes (once). 0, or -1 with tp_error set. */
int tp_udp_peer_init(struct tp_udp *u, int peer);
/* The up route to p with the least work per rate (every route down: the next in turn). */
int tp_udp_pick_route(struct tp_udp *u, struct peer *p);
/* The up route to p through local route lr, else tp_udp_pick_route. */
int tp_udp_reply_route(struct tp_udp *u, struct peer *p, int lr);
/* Mark route ri to peer up / down (down rebinds its packets in flight to the others). */
void tp_udp_route_up(struct tp_udp *u, int peer, int ri);
void tp_udp_route_down(struct tp_udp *u, int peer, int ri, const char *why);
/* Send a probe on route ri to the peer's probe socket. */
void tp_udp_send_probe(struct tp_udp *u, int peer, int ri, uint64_t now);
/* The peer timeout passed: the reason in tp_error, errno ETIMEDOUT, -1. */
int tp_udp_fail_peer(struct tp_udp *u, int peer, uint64_t now);

/* Reliability and timers (tp_udp_rel.c). */
/* (Re)send packet s to peer over route ri; with `batch`, into the segmentation batch. 0. */
int tp_udp_send_pkt(struct tp_udp *u, int peer, struct spkt *s, int ri, int batch);
/* Turn queued fragment bytes into packets while the window has room. */
void tp_udp_fill_window(struct tp_udp *u, int peer);
/* Advance una past acknowledged packets and complete fragments fully acknowledged. */
void tp_udp_complete_head(struct tp_udp *u, struct peer *p);
/* A cumulative acknowledgement from peer: every seq <= cum arrived. */
void tp_udp_handle_cum(struct tp_udp *u, int peer, uint64_t cum, uint64_t now);
/* An RTT sample from a cumulative acknowledgement carried by data. */
void tp_udp_cum_rtt(struct peer *p, uint64_t cum, uint64_t now);
/* An ACK datagram from peer. */
void tp_udp_on_ack(struct tp_udp *u, int peer, const struct uhdr *h, const struct ackbody *a,
                   uint64_t now);
/* Send an ACK (cumulative + held bitmap + echo) to peer (thread: from the probe thread). */
void tp_udp_send_ack(struct tp_udp *u, int peer, int thread);
/* Ask peer again for seq (a corrupt datagram arrived on local route lr). */
void tp_udp_send_nack(struct tp_udp *u, int peer, uint64_t seq, int lr);
/* A DATA datagram from peer on local route lr: in order, held or dropped. Fragments handed up,
 * or -1. */
int tp_udp_on_data(struct tp_udp *u, int peer, const struct uhdr *h, const unsigned char *d,
                   int lr);
/* Give back a buffer of a held packet (pool or free). */
void tp_udp_hold_put(struct tp_udp *u, unsigned char *b, size_t len);
/* The window is full and its oldest packet unacknowledged: resend it after a round trip. */
void tp_udp_unblock(struct tp_udp *u, int peer, uint64_t now);
/* Retransmissions, route health, probes, the peer timeout. 0, or -1 (a peer timed out). */
int tp_udp_timers(struct tp_udp *u, uint64_t now);

/* The probe answering thread (tp_udp_thread.c). */
void *tp_udp_prober(void *arg);

#endif
