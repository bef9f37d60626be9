/* lib/transport/tp_internal.h: shared private state of the transport paths (not for lib/mpi). */
#ifndef LAMKIT_TP_INTERNAL_H
#define LAMKIT_TP_INTERNAL_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <poll.h>

#include "tp.h"

enum tp_kind { TP_SELF, TP_SHM, TP_TCP, TP_UDP, TP_MULTI };

/* Header bytes a path carries: the layer above's plus the multipath sequence number. */
#define TP_HDR_WIRE (TP_HDR_MAX + 4)

#define TP_NODE_MAX 24 /* a node token (tp_shmx_node) and its NUL */

/* A fragment waiting to be written: copied header, payload either copied after the struct
 * (ref == 0) or the caller's buffer (ref == 1, ops.sent(cookie) once written; on udp once
 * acknowledged). */
struct tp_frag {
	struct tp_frag *next;
	void *cookie;
	const char *data;
	size_t len;
	size_t done; /* bytes of (wire prefix + hdr + payload) already written (tcp) */
	uint32_t hlen;
	uint32_t pend; /* udp: packets sent and not yet acknowledged */
	int ref;
	_Alignas(8) unsigned char hdr[TP_HDR_WIRE]; /* handed up as is on the self path */
};

/* A FIFO of fragments. */
struct tp_fifo {
	struct tp_frag *head, *tail;
};

struct tp_shm;
struct tp_tcp;
struct tp_udp;
struct tp_mp;
struct tp_shmx;

struct tp {
	struct tp_cfg cfg;
	int *local_ranks; /* private copy of cfg.local_ranks */
	uint8_t *kind;    /* enum tp_kind per peer rank */
	int *slot;        /* per peer: index inside its path (local index for shm) */
	struct tp_fifo selfq;
	struct tp_shm *shm;
	struct tp_tcp *tcp;
	struct tp_tcp *tcp2; /* the second tcp connection of multipath peers (LAMKIT_TP=tcp,tcp) */
	struct tp_udp *udp;
	struct tp_mp *mp; /* peers of kind TP_MULTI: scheduling and ordering across paths */
	int yield;
	int batch_stop; /* tp_batch_stop: the layer above wants no more records in this drain */
	unsigned polls;
	/* fragments and payload bytes handed to each path (enum tp_kind), for LAMKIT_TP_STATS */
	unsigned long long sent_frags[5], sent_bytes[5];
	char err[512]; /* last failure of a path, one line (tp_error) */
	/* peers of other jobs (tp_dyn.c): indexes size .. npeers-1, over tcp, or over a pair
	 * segment's ring once switched (tp_shmx.c; slot[] then indexes its pair) */
	int npeers, cap;        /* peers known; room in kind[], slot[] and the tables below */
	uint64_t uid;           /* this process among every job (the first field of its card) */
	uint64_t *duid;         /* per peer of another job (index - size): its uid */
	char **dcard;           /* its tcp card, NULL while only its connection is known */
	struct tp_shmx *shmx;   /* pair segments with them, NULL until one is on this node */
	char node[TP_NODE_MAX]; /* node token in the card, "" when no shm between jobs */
	/* doorbell (tp_bell.c): a datagram socket a sleeping process waits on, opened when first
	 * needed, the poll set of tp_sleep, and counters for LAMKIT_TP_STATS */
	int bell_fd;
	uint8_t *gone; /* per job rank: forgotten (tp_forget), NULL until the first */
	struct pollfd *sleep_pfd;
	int sleep_cap, sleep_nfd;
	uint32_t sleep_how; /* between tp_sleep_prepare and tp_sleep_done: TP_BELL_*, else 0 */
	uint32_t own_bell;  /* the futex word when there is no node segment (tp_bell.c) */
	uint64_t sleep_us;  /* socket mode: the udp timers' bound on a sleep */
	unsigned long long nsleep, nsleep_timeout, nbell;
	unsigned long long nsleep_late; /* sleeps that ran to the timeout with a record waiting */
	unsigned long long nsleep_room; /* sleeps with fragments waiting for room in a node ring */
};

/* Allocate a fragment; copies hdr, and the payload unless ref. NULL with errno. */
struct tp_frag *tp_frag_new(const void *hdr, size_t hlen, const void *data, size_t len, int ref,
                            void *cookie);
/* Append f to q. */
void tp_fifo_push(struct tp_fifo *q, struct tp_frag *f);
/* Remove and return the head of q (NULL when empty). */
struct tp_frag *tp_fifo_pop(struct tp_fifo *q);
/* Free a fragment after it was written: calls ops.sent for referenced payloads. */
void tp_frag_done(tp_t *tp, struct tp_frag *f);

/* shm path (tp_shm.c). create: leader makes the segment and publishes its name. */
struct tp_shm *tp_shm_create(tp_t *tp, char *err, size_t errlen);
/* Attach to the node segment (non-leaders map it; last attacher unlinks). 0, or -1. */
int tp_shm_attach(struct tp_shm *s, char *err, size_t errlen);
/* Unmap and free. Accepts NULL. */
void tp_shm_destroy(struct tp_shm *s);
/* Send to local index li; same return convention as tp_send. */
int tp_shm_send(struct tp_shm *s, int li, const void *hdr, size_t hlen, const void *data,
                size_t len, void *cookie);
/* Drain inbound rings (up to budget records from the first that has one) and push queued
 * fragments; returns events handled. */
int tp_shm_poll(struct tp_shm *s, int budget);
/* Fragments still queued on the shm path. */
int tp_shm_busy(const struct tp_shm *s);
/* Limits and single-copy read for local index li. */
size_t tp_shm_eager_max(const struct tp_shm *s);
size_t tp_shm_frag_max(const struct tp_shm *s);
int tp_shm_can_get(const struct tp_shm *s);
int tp_shm_get(struct tp_shm *s, int li, void *dst, uint64_t raddr, size_t len);
int tp_shm_coop_begin(struct tp_shm *s, int li, size_t len);
uint32_t tp_shm_coop_open(struct tp_shm *s);
int tp_shm_coop_recv(struct tp_shm *s, int li, void *dst, uint64_t raddr, size_t len);
int tp_shm_coop_help(struct tp_shm *s, int li, uint32_t gen, const void *src, uint64_t rdst,
                     size_t len);
void tp_shm_stats(const struct tp_shm *s, int rank);
/* Early wraps of this process's node rings, all peers (tp_shm_wraps). */
unsigned long long tp_shm_wrapped(const struct tp_shm *s);
/* Read len bytes at raddr in process pid (process_vm_readv; `refused`: fail with EPERM, for
 * tests). 0, or -1 with errno (EPERM/ENOSYS: the kernel does not allow it here). */
int tp_cma_read(pid_t pid, void *dst, uint64_t raddr, size_t len, int refused);

/* shm between processes of different jobs on one node (tp_shmx.c, doc/PROTOCOL-mpi-wire.md
 * section 8.1): one pair segment per two processes, each direction switched from tcp to its
 * ring by a SWITCH frame. */
/* This process's node token (16 hex digits: boot id, network and pid namespaces, /dev/shm,
 * user), or "" when something is unknown (then no shm with other jobs). */
void tp_shmx_node(char *out, size_t len);
/* The card of `peer` (another job) named this node and pid: a pair segment may carry what the
 * two exchange (mapped on the first send or receive). 0, or -1 with errno (ENOMEM). */
int tp_shmx_add(tp_t *tp, int peer, uint64_t uid, long pid);
/* Unmap every pair segment (unlinking names the peers never mapped) and free. Accepts NULL. */
void tp_shmx_destroy(struct tp_shmx *x);
/* Before a send of len bytes to `peer` on tcp: map the pair segment if not done yet; switch to
 * the ring when both sides mapped it, the tcp queue to the peer is empty and the fragment fits a
 * ring (sends SWITCH, sets kind[peer] to TP_SHM). When the segment cannot be made the peer stays
 * on tcp. */
void tp_shmx_try_switch(tp_t *tp, int peer, size_t len);
/* A tcp frame came from `peer` (another job, with a card of this node): map the pair segment if
 * not done yet, so that the peer can switch. */
void tp_shmx_heard(tp_t *tp, int peer);
/* A SWITCH frame (hlen TP_HDR_WIRE on tcp) from `peer`: poll its ring from now on. 0, or -1
 * (EPROTO: no pair segment mapped for it, with a line in tp->err). */
int tp_shmx_switch_in(tp_t *tp, int peer, const void *hdr);
/* Send on the ring of pair `slot` (tp->slot[peer]); same return convention as tp_send. */
int tp_shmx_send(struct tp_shmx *x, int slot, const void *hdr, size_t hlen, const void *data,
                 size_t len, void *cookie);
/* `peer` released us (its BYE came, or a new connection from it), or we release it: hand up what
 * it wrote on its ring, drop what waits for room in ours, unmap the pair segment (unlinking a
 * name the peer never mapped) and go back to tcp; a later send or frame maps a new one. */
void tp_shmx_bye(tp_t *tp, int peer);
/* Pair segments mapped now (0 for NULL). */
int tp_shmx_mapped(const struct tp_shmx *x);
/* Drain the inbound rings that were switched (one record per call) and push queued fragments.
 * Events handled, or -1 (EPIPE) when fragments wait for a peer that has ended. */
int tp_shmx_poll(struct tp_shmx *x);
/* Fragments queued for pair rings (0 for NULL). */
int tp_shmx_busy(const struct tp_shmx *x);
/* The limits of a peer of another job on this node (whatever path carries it now). 0, or -1
 * (not such a peer). */
int tp_shmx_limits(const tp_t *tp, int peer, size_t *eager, size_t *frag);
/* Single-copy reads from a peer of another job on this node. */
int tp_shmx_can_get(const tp_t *tp, int peer);
int tp_shmx_get(tp_t *tp, int peer, void *dst, uint64_t raddr, size_t len);

/* tcp path (tp_tcp*.c). create: open a listener; publish 1 publishes its card lk-tcp-RANK (the
 * job's tcp path, multipath path 0), 2 makes the instance of the second connection to each
 * multipath peer (card lk-tcp2-RANK, multipath path TP_MP_TCP2, job ranks only), 0 publishes
 * nothing (a listener for peers of other jobs). */
struct tp_tcp *tp_tcp_create(tp_t *tp, int publish, char *err, size_t errlen);
/* Make room for tp->npeers peers (peers of other jobs were added). 0, or -1 (ENOMEM). */
int tp_tcp_grow(struct tp_tcp *t);
/* The listener's card "PORT;NETID;A/L,..." (tp_dyn.c puts the uid in front). */
const char *tp_tcp_own_card(const struct tp_tcp *t);
/* Connect to peer now if not connected yet (bounded). 0, or -1 with the reason in tp_error. */
int tp_tcp_reach(struct tp_tcp *t, int peer);
/* Close every connection and free. Accepts NULL. */
void tp_tcp_destroy(struct tp_tcp *t);
/* End the connection to peer (another job) in order: BYE after what is queued, our half shut
 * down, closed once the peer's BYE or EOF came (doc/PROTOCOL-mpi-wire.md section 8.2). The
 * peer's slot is free at once: a later send connects anew. 0. */
int tp_tcp_release(struct tp_tcp *t, int peer);
/* Connections ending that way now (0 for NULL). */
int tp_tcp_lingering(const struct tp_tcp *t);
/* Whether peer has a connection (up or being made). */
int tp_tcp_connected(const struct tp_tcp *t, int peer);
/* Send to peer rank; connects lazily. Same return convention as tp_send. */
int tp_tcp_send(struct tp_tcp *t, int peer, const void *hdr, size_t hlen, const void *data,
                size_t len, void *cookie);
/* Accept, read and write whatever is ready without blocking; returns events or -1. */
int tp_tcp_poll(struct tp_tcp *t);
/* Fragments still queued on the tcp path. */
int tp_tcp_busy(const struct tp_tcp *t);
/* tp_forget on tcp: drop the queue to peer (ops.sent for referenced payloads), close. */
void tp_tcp_forget(struct tp_tcp *t, int peer);
/* Whether fragments to peer are still queued on tcp (not yet handed to the kernel). */
int tp_tcp_queued_to(const struct tp_tcp *t, int peer);
/* Largest fragment the tcp path is given (tp_frag_max). */
size_t tp_tcp_frag_max(const struct tp_tcp *t);
/* Whether a large frame from peer may be read whole into its connection's buffer
 * (tp_rx_buffer_ok). */
int tp_tcp_rx_buffer_ok(const struct tp_tcp *t, int peer);
/* What one connection carried (LAMKIT_TP_STATS=1 prints it at the end). A payload over 64 KiB
 * ("large") is received in place (placed_bytes, by the kernel into the memory ops.place named),
 * or moved there with memcpy from the connection's buffer when the read that brought its header
 * brought part of it too (moved_bytes), or delivered whole from the buffer (buffered_bytes:
 * ops.place said NULL, `refused` times, or was never asked because the whole frame had come in
 * one read). */
struct tp_tcp_counts {
	unsigned long long reads, frames, large, large_bytes, placed_bytes, moved_bytes;
	unsigned long long buffered_bytes, buffered_frames, refused;
	unsigned long long writes, partial_writes, sent_frames;
};
void tp_tcp_counts(const struct tp_tcp *t, int peer, struct tp_tcp_counts *out);

/* tcp business cards (tp_tcp_addr.c, format in doc/PROTOCOL-mpi-wire.md section 3). */
#define TP_CARD_MAX 600 /* card bytes: a PMI-1 put line stays under 1024 */
#define TP_CAND_MAX 40  /* addresses read from one card */
#define TP_NETS_MAX 32  /* own interface subnets remembered for matching */

struct tp_tcp_addr {
	char netid[64]; /* boot id + network namespace inode, "-" when unknown */
	struct {
		uint32_t addr, mask; /* host byte order */
	} nets[TP_NETS_MAX];         /* own interfaces that are up, non-loopback */
	int nnets;
};

struct tp_tcp_cand {
	struct in_addr a;
	int plen, lo, tried;
};

/* Fill ad (netid, own subnets) and write "PORT;NETID;A/L,..." (at most TP_CARD_MAX bytes) from
 * LAMKIT_TCP_ADDR (comma-separated, optional /len) or the interfaces up and running. */
void tp_tcp_card(struct tp_tcp_addr *ad, int port, char *card);
/* Parse a card (changed in place) into cv[TP_CAND_MAX]; the count, or -1 if malformed. */
int tp_tcp_card_parse(char *card, int *port, char **netid, struct tp_tcp_cand *cv);
/* Next candidate to try: loopback first when same_net (skipped otherwise), then addresses on
 * one of our subnets, then the rest in card order. Marks it tried; -1 when none is left. */
int tp_tcp_next_cand(const struct tp_tcp_addr *ad, struct tp_tcp_cand *cv, int n, int same_net);

/* udp path (tp_udp*.c, doc/PROTOCOL-mpi-wire.md section 5): reliable, multi-route. */
struct tp_udp *tp_udp_create(tp_t *tp, char *err, size_t errlen);
/* Drain (every fragment acknowledged, FIN from every peer, bounded by timeout_ms), print the
 * counters when LAMKIT_TP_STATS=1, close and free. Accepts NULL. */
void tp_udp_destroy(struct tp_udp *u, int timeout_ms);
int tp_udp_send(struct tp_udp *u, int peer, const void *hdr, size_t hlen, const void *data,
                size_t len, void *cookie);
/* The same, the payload always copied (0 or -1): for a sender that will not be told when a
 * payload kept by reference is done with (tp_mp.c: a fragment with no tracking entry). */
int tp_udp_send_copy(struct tp_udp *u, int peer, const void *hdr, size_t hlen, const void *data,
                     size_t len);
int tp_udp_poll(struct tp_udp *u);
/* Every packet acknowledged and FINs exchanged (bounded); then the probe thread answers
 * retransmissions while the caller blocks elsewhere. 0, or -1 on timeout. */
int tp_udp_flush(struct tp_udp *u, int timeout_ms);
/* Fragments not yet handed to the network once (waiting for window room). */
int tp_udp_busy(const struct tp_udp *u);
/* For a sleeper: the route sockets into pfd (room for max) and the time until the next timer
 * is due, when less than *timeout_us. Their count (more than max: call again with that much
 * room), or -1 when the endpoint must be polled now (an ack owed, a timer due, datagrams held
 * back by the fault injector). */
int tp_udp_sleep_fds(struct tp_udp *u, struct pollfd *pfd, int max, uint64_t *timeout_us);
/* tp_forget on udp: drop what waits for peer or its acknowledgement, stop retransmitting,
 * ignore its datagrams, do not wait for its FIN. */
void tp_udp_forget(struct tp_udp *u, int peer);
size_t tp_udp_eager_max(const struct tp_udp *u);
size_t tp_udp_frag_max(const struct tp_udp *u);

/* Fragments queued or in flight to peer, in bytes: tcp counts its queue and the kernel's unsent
 * and unacknowledged bytes (SIOCOUTQ), udp what is not yet acknowledged. For multipath
 * scheduling. */
size_t tp_tcp_backlog(struct tp_tcp *t, int peer);
size_t tp_udp_backlog(const struct tp_udp *u, int peer);

/* Multipath (tp_mp.c, doc/PROTOCOL-mpi-wire.md section 7): tcp, udp and a second tcp connection
 * to one peer. */
#define TP_MP_PATHS 3 /* index 0 = tcp, 1 = udp, 2 = the second tcp connection */
#define TP_MP_TCP2  2
enum { TP_MP_RATE, TP_MP_WEIGHT };
struct tp_mp_policy {
	int npaths, order[TP_MP_PATHS]; /* paths in the order listed */
	int weight[TP_MP_PATHS];        /* 0 = path not used */
	int small;                      /* path for payloads under cutoff */
	size_t cutoff;
	size_t window; /* a path takes large fragments while its backlog is under this */
	int sched;     /* TP_MP_RATE (adaptive) or TP_MP_WEIGHT */
};
/* Parse the remote part of LAMKIT_TP ("tcp*2,udp;sched=rate;small=tcp;cutoff=16384"). 0, or -1
 * with a reason in err. */
int tp_mp_parse(const char *spec, struct tp_mp_policy *pol, char *err, size_t errlen);
struct tp_mp *tp_mp_create(const struct tp_mp_policy *pol, int size);
/* Print the counters (LAMKIT_TP_STATS=1) and free; sets tp->mp to NULL. */
void tp_mp_destroy(tp_t *tp);
int tp_mp_send(tp_t *tp, int peer, const void *hdr, size_t hlen, const void *data, size_t len,
               void *cookie);
/* A fragment from a TP_MULTI peer arrived on path (0 tcp, 1 udp, 2 tcp2). placed: data is where
 * ops.place said (it stays there, so a fragment ahead of its turn is held without a copy). 0, or
 * -1 (EPROTO: no sequence number or an old one; ENOMEM). */
int tp_mp_recv(tp_t *tp, int path, int peer, const void *hdr, size_t hlen, const void *data,
               size_t len, int placed);
/* "tcp+udp", "tcp+tcp2", ...: the paths of the policy, for tp_path_name. */
const char *tp_mp_name(const tp_t *tp);
/* Largest payload a multipath send copies (the smallest of its paths' eager limits). */
size_t tp_mp_copy_max(const tp_t *tp);
/* A path is done with a payload sent with a tagged cookie (low bit set). */
void tp_mp_sent(tp_t *tp, void *tagged);
/* Report copied payloads whose turn came (called from tp_poll when tp_mp_release_due). */
void tp_mp_release(tp_t *tp);
int tp_mp_release_due(const tp_t *tp);
/* Hand queued fragments to paths with room, measure the paths' drain rates (sched=rate):
 * called from tp_poll when tp_mp_poll_due. 0, or -1 when a path failed. */
int tp_mp_poll(tp_t *tp);
int tp_mp_poll_due(const tp_t *tp);
/* For a sleeper: -1 when the multipath layer needs polling now (it measures its paths, holds
 * fragments for their turn, or a timer of its failover is due), else the microseconds until the
 * failover's next timer (an ACK owed, a path to try again, a kept fragment that could stall;
 * UINT64_MAX: none). */
int tp_mp_sleep_us(const tp_t *tp, uint64_t *us);
/* tcp path `path` (0 or TP_MP_TCP2) to multipath peer `peer` failed (why: one line): when
 * udp is among the pair's paths and the end-to-end acknowledgement is on (section 7.4), its
 * connection is closed, what it carried unacknowledged goes again over udp and the path is
 * tried again later (retry_now: at once, the peer connected anew): 0. Else -1. */
int tp_mp_path_down(tp_t *tp, int path, int peer, const char *why, int retry_now);
/* Send every ACK owed now (section 7.4; before the final fence). */
void tp_mp_flush_acks(tp_t *tp);
/* Fragments queued in the multipath layer (every path's window full). */
int tp_mp_queued(const tp_t *tp);
const char *tp_mp_path_name(int path);
/* Fragments sent to peer on each path, and fragments from it that had to wait for their turn
 * (tests and statistics). 0, or -1 when peer is not a multipath peer in use. */
int tp_mp_counts(const tp_t *tp, int peer, uint64_t frags[TP_MP_PATHS], uint64_t *held);
/* The most payload bytes from peer that waited for their turn at once. */
size_t tp_mp_max_held(const tp_t *tp, int peer);
/* Section 7.4's counters of the pair with peer: times a tcp path went down, fragments sent
 * again over udp, ACKs sent, duplicates dropped. 0, or -1 when not a multipath peer in use. */
int tp_mp_fo_counts(const tp_t *tp, int peer, uint64_t *downs, uint64_t *resent, uint64_t *acks,
                    uint64_t *dups);

/* `path` of a tcp connection to a peer of another job that is ending (BYE, section 8.2): its last
 * frames are handed up, but they map no pair segment and a SWITCH on it is void. */
#define TP_PATH_ENDING (-1)

/* Monotonic time, for every clock of the transport (timeouts, pacing, probes). */
static inline uint64_t tp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline uint64_t tp_now_us(void)
{
	return tp_now_ns() / 1000u;
}
static inline long tp_now_ms(void)
{
	return (long)(tp_now_ns() / 1000000u);
}

/* Hand a fragment from peer up (through the multipath layer for TP_MULTI peers). placed: data is
 * where ops.place said. 0 or -1. */
static inline int tp_up_recv(tp_t *tp, int path, int peer, const void *hdr, size_t hlen,
                             const void *data, size_t len, int placed)
{
	if (peer >= tp->cfg.size) {
		if (hlen == TP_HDR_WIRE) /* no header of the layer above is this long: SWITCH */
			return path == TP_PATH_ENDING ? 0 : tp_shmx_switch_in(tp, peer, hdr);
		if (tp->slot[peer] >= 0 && path != TP_PATH_ENDING)
			tp_shmx_heard(tp, peer);
	}
	if (tp->kind[peer] == TP_MULTI)
		return tp_mp_recv(tp, path, peer, hdr, hlen, data, len, placed);
	tp->cfg.ops.recv(tp->cfg.arg, peer, hdr, hlen, data, len);
	return 0;
}

/*
 * Doorbells (tp_bell.c, doc/PROTOCOL-mpi-wire.md section 9). A process about to sleep in
 * tp_sleep stores 1 in its `sleeping` word in every shared segment it reads rings from, then
 * looks at its rings once more, then waits in poll() on its sockets and its bell, a datagram
 * socket bound to the abstract name "lamkit-bell-<uid>". A producer that wrote a ring record
 * calls tp_bell_check on the consumer's word: the first to find it set clears it and sends one
 * byte to the consumer's bell. The fences on both sides make sure that either the sleeper sees
 * the record or the producer sees the word.
 */
#define TP_BELL_FUTEX  1 /* the sleeper waits on the word itself (FUTEX_WAIT) */
#define TP_BELL_SOCKET 2 /* the sleeper waits in poll() on its bell socket */
void tp_bell_ring(tp_t *tp, uint64_t uid);
/* Wake a sleeper that left `how` in its word (which the caller has cleared). */
void tp_bell_wake(tp_t *tp, uint32_t *word, uint32_t how, uint64_t uid);
static inline void tp_bell_check(tp_t *tp, uint32_t *word, uint64_t uid)
{
	uint32_t how;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(word, __ATOMIC_RELAXED) &&
	    (how = __atomic_exchange_n(word, 0, __ATOMIC_ACQ_REL)) != 0)
		tp_bell_wake(tp, word, how, uid);
}
/* Close the bell. */
void tp_bell_close(tp_t *tp);
/* The sleeper's side in each kind of segment: set (1) or clear (0) its words; whether a ring it
 * reads holds a record. */
void tp_shm_sleeping(struct tp_shm *s, uint32_t v);
int tp_shm_ready(const struct tp_shm *s);
/* This process's `sleeping` word in the node segment (the futex a ring-only sleeper waits on). */
uint32_t *tp_shm_bell_word(struct tp_shm *s);
/* Whether a fragment waiting for room in one of this process's node rings fits now. */
int tp_shm_room(struct tp_shm *s);
void tp_shmx_sleeping(struct tp_shmx *x, uint32_t v);
int tp_shmx_ready(const struct tp_shmx *x);
/* The listener's and every connection's fd into pfd (room for max): the count. */
int tp_tcp_pollfds(const struct tp_tcp *t, struct pollfd *pfd, int max);
/* Entries tp_tcp_pollfds may write. */
int tp_tcp_nfds(const struct tp_tcp *t);

/* Peers of other jobs (tp_dyn.c). The peer whose uid is uid, added without a card when unknown
 * (a connection from another job arrived before tp_add_peer named it). Index, or -1 (ENOMEM). */
int tp_dyn_peer(tp_t *tp, uint64_t uid);
/* A random nonzero 64-bit id for this process (getrandom, else time and pid). */
uint64_t tp_new_uid(void);
/* Free the tables of peers of other jobs. */
void tp_dyn_free(tp_t *tp);

/* Prefix length of a netmask (host byte order). */
int tp_plen_of(uint32_t mask);

/* Boot id + network namespace inode ("-" when unknown): equal only inside one namespace. */
void tp_netid(char *out, size_t len);

/* CRC32C (Castagnoli): SSE4.2 instruction when the CPU has it, else a table. Chainable:
 * tp_crc32c(tp_crc32c(0, a, n), b, m) == crc of a then b. */
uint32_t tp_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t tp_crc32c_sw(uint32_t crc, const void *buf, size_t len);
int tp_crc32c_hw(void);

#endif
