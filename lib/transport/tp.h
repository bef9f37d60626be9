/* lib/transport/tp.h: one small interface over the per-peer message paths (self, shm, tcp, udp,
 * and several together: tcp+udp, two tcp connections). */
#ifndef LAMKIT_TP_H
#define LAMKIT_TP_H

#include <stddef.h>
#include <stdint.h>

/*
 * A transport endpoint moves fragments: a small header (at most TP_HDR_MAX bytes, opaque to the
 * transport) plus an optional payload, to one peer rank. Fragments to one peer arrive whole and in
 * the order they were sent, whatever path carries them (shm ring, tcp stream, and later a reliable
 * multi-route UDP path that must give the same guarantee). Paths are chosen per peer from
 * locality at tp_create time; the caller never sees which path is used except through the limits
 * below. Single-threaded: the caller serialises all calls.
 */

#define TP_HDR_MAX 48 /* largest header accepted by tp_send */

typedef struct tp tp_t;

/* Callbacks into the layer above. Neither may call tp_poll (tp_send is allowed). */
struct tp_ops {
	/* A fragment from `peer` arrived. hdr/data are valid only during the call. */
	void (*recv)(void *arg, int peer, const void *hdr, size_t hlen, const void *data,
	             size_t len);
	/* A tp_send that returned 1 no longer needs its payload buffer. */
	void (*sent)(void *arg, void *cookie);
	/* Optional (NULL: unused): where the payload (len > 64 KiB) of a fragment from `peer`
	 * should be received, asked once its header (as for recv) has arrived. Return memory of
	 * len bytes that stays valid until recv is called for this fragment, or NULL to have it
	 * buffered. recv then gets data == the returned pointer. Used by tcp (saves a copy). For
	 * a peer reached over several paths it may be asked before earlier fragments from that
	 * peer were handed up (recv still comes in send order). */
	void *(*place)(void *arg, int peer, const void *hdr, size_t hlen, size_t len);
};

/* Wire-up through the process manager's key-value space (PMI in lib/mpi, a table in tests). */
struct tp_kvs {
	/* Publish key=val before the fence. 0, or -1. */
	int (*put)(void *arg, const char *key, const char *val);
	/* Read a key published by anyone before the fence. 0, or -1 (missing). */
	int (*get)(void *arg, const char *key, char *val, size_t len);
	void *arg;
};

struct tp_cfg {
	int rank, size;         /* this process in the job, job size */
	const int *local_ranks; /* ranks on this node, ascending, including rank (PMI clique) */
	int nlocal;             /* entries in local_ranks */
	const char *job;        /* job name (KVS name): makes shm names unique; may be NULL */
	struct tp_kvs kvs;      /* used by tp_create (put) and tp_connect/first send (get) */
	struct tp_ops ops;      /* upcalls */
	void *arg;              /* first argument of the upcalls */
};

/* Phase 1, before the job-wide KVS fence: create the paths and publish business cards (the
 * node leader creates the shm segment, every rank with off-node peers opens a tcp listener).
 * Environment: LAMKIT_TP=tcp forces tcp between local ranks; LAMKIT_SHM_LARGE=cma|copy picks
 * the large-message method on shm (default: cma, the receiver reads; copy where the kernel
 * refuses); LAMKIT_SHM_RING, LAMKIT_SHM_EAGER, LAMKIT_SHM_FRAG override the ring size and the
 * shm limits (the eager limit is otherwise measured by the node leader: tp_shm.c pick_eager).
 * NULL with errno set and a message in err on failure. */
tp_t *tp_create(const struct tp_cfg *cfg, char *err, size_t errlen);

/* Check a transport policy (the value of LAMKIT_TP, doc/PROTOCOL-mpi-wire.md section 7) without
 * creating anything: 0, or -1 with the reason in err. */
int tp_policy_check(const char *spec, char *err, size_t errlen);

/* Phase 2, after the fence: attach to the node's shm segment (the last local rank to attach
 * unlinks it). Remote connections are still made lazily on first send. 0, or -1 + err. */
int tp_connect(tp_t *tp, char *err, size_t errlen);

/* Peer rank `peer` is gone for good (mpiexec --on-node-failure continue: its node failed):
 * drop what is queued to it (payloads held by reference are released through ops.sent),
 * close its connections and refuse new ones from it, and from now on fail sends to it (-1,
 * EPIPE) and drop what still comes from it. Peers over tcp, udp or both (multipath). */
void tp_forget(tp_t *tp, int peer);

/* Before the job's final fence: push out every queued fragment and, on udp, wait until every
 * packet is acknowledged and each peer it talked to has said it is done (FIN). From then on a
 * background thread answers retransmissions, so a peer whose last acknowledgement was lost is
 * not left waiting while this rank blocks in the fence. Bounded by timeout_ms; 0, or -1 when it
 * ran out (a peer gone). Call tp_destroy next; no tp_send/tp_poll in between. */
int tp_flush(tp_t *tp, int timeout_ms);

/* Flush queued fragments (bounded wait, `timeout_ms`), close every path and free. Accepts NULL.
 * With LAMKIT_TP_STATS=1 it first prints one line of what was sent on each path. */
void tp_destroy(tp_t *tp, int timeout_ms);

/* Send one fragment. Returns 0 when the payload was consumed (copied or written; the buffer may
 * be reused), 1 when the transport keeps a reference and will call ops.sent(cookie) later (for
 * payloads larger than tp_eager_max; on tcp also for any fragment with a cookie while earlier
 * ones to that peer are still queued, so that sent(cookie) never overtakes them; on shm for one
 * over TP_COPY_MAX with a cookie that finds the ring full or others queued), -1 with errno on
 * failure (EMSGSIZE: hlen or len over the limits, EPIPE: peer unreachable). Order per peer is
 * preserved either way, also when a policy sends to the peer over two paths (tcp,udp). A cookie is
 * NULL or an even address (a pointer to the caller's object): with two paths in use, the
 * transport tags its own cookies with the low bit. */
int tp_send(tp_t *tp, int peer, const void *hdr, size_t hlen, const void *data, size_t len,
            void *cookie);
/* A payload up to this many bytes that has to wait (a full shm ring) is copied, cookie or not;
 * a larger one with a cookie waits by reference. The layer above offers a cookie only above it:
 * a small send that is copied completes at once, which is worth more than the copy saved. */
#define TP_COPY_MAX 8192

/* Make progress on every path: deliver arrived fragments through ops.recv, push queued sends.
 * Returns the number of events handled (0 when idle), or -1 with errno on a fatal path error. */
int tp_poll(tp_t *tp);

/* tp_poll, handing up to `budget` fragments (at least 1) from one shm ring instead of one: for
 * a caller that waits for many messages (MPI_Waitall), which then pays the poll's fixed cost
 * once per batch rather than once per message. */
int tp_poll_n(tp_t *tp, int budget);

/* From ops.recv during tp_poll_n: hand up no more records in this call. The layer above says
 * so when the record was not one it waits for (an unexpected message): the budget counted
 * the requests of a wait, and records past them belong to later ones (a peer's next window),
 * which would arrive before their receives are posted and cost a copy each. */
void tp_batch_stop(tp_t *tp);

/* Largest payload the layer above should send eagerly to `peer` (a copy is cheap). */
size_t tp_eager_max(const tp_t *tp, int peer);
/* Largest payload of one fragment to `peer` (pipelined bulk data is cut into these). */
size_t tp_frag_max(const tp_t *tp, int peer);
/* Whether a fragment from `peer` that ops.place does not place may be read whole into the
 * path's own buffer without passing its memory bound (tcp: a buffer of one fragment for at most
 * 16 connections); 0 for paths that do not ask ops.place. */
int tp_rx_buffer_ok(const tp_t *tp, int peer);

/* Whether `peer` can be read directly with tp_get (single-copy rendezvous). */
int tp_can_get(const tp_t *tp, int peer);
/* Copy len bytes at address `raddr` in peer's memory to dst. 0, or -1 with errno. */
int tp_get(tp_t *tp, int peer, void *dst, uint64_t raddr, size_t len);

/* A large message copied by both sides (doc/PROTOCOL-mpi-wire.md, section 4). The receiver:
 * tp_coop_begin says whether `peer` (a rank of this job on this node's segment) may help with
 * len bytes now (it is not reading a large message itself) and, when yes, marks this process
 * as reading one until tp_coop_recv returns (call that next); tp_coop_open opens this process's
 * copy slot and returns its generation, which the receiver hands to the sender with the
 * address of its buffer; tp_coop_recv then copies chunks of the message from raddr in peer
 * until none is left and waits for the chunks the sender took (0, or -1 with errno: ESRCH the
 * sender is gone, EPERM/ENOSYS reads are refused and tp_can_get turns false). The sender:
 * tp_coop_help writes the chunks it can still take into rdst while the receiver's slot has that
 * generation; it returns how many it copied. */
int tp_coop_begin(tp_t *tp, int peer, size_t len);
uint32_t tp_coop_open(tp_t *tp);
int tp_coop_recv(tp_t *tp, int peer, void *dst, uint64_t raddr, size_t len);
int tp_coop_help(tp_t *tp, int peer, uint32_t gen, const void *src, uint64_t rdst, size_t len);

/* Name of the path used for peer ("self", "shm", "tcp", "udp", "tcp+udp", "tcp+tcp2"), for
 * diagnostics. */
const char *tp_path_name(const tp_t *tp, int peer);

/* Times this endpoint's node rings went back to their start early (tp_ring.h, TP_RING_WINDOW). */
unsigned long long tp_shm_wraps(const tp_t *tp);

/* Fragments waiting in this endpoint's send queues (the peer has not made room yet). */
int tp_queued(const tp_t *tp);

/* One line describing the last tp_send/tp_poll failure (e.g. the tcp peer and every address
 * tried), or "" when there was none. Valid until the next call. */
const char *tp_error(const tp_t *tp);

/* Sleep until a peer may have sent something (a tcp connection or the listener is readable, or
 * a peer wrote one of this process's shm rings and rang its doorbell), at most timeout_ms:
 * 1 woken, 0 timed out, -1 when this endpoint cannot sleep (udp or multipath paths, fragments
 * still queued, a job that fits its CPUs with node rings: poll instead). Call it only after
 * tp_poll came back empty; run tp_poll after it. */
int tp_sleep(tp_t *tp, int timeout_ms);
/* tp_sleep in three parts, for a caller whose transport lock another thread also takes (the
 * RMA progress thread): tp_sleep_prepare under the lock (-1 cannot sleep, 1 a ring has a
 * record already: do not wait, 0 wait), tp_sleep_wait without it (1 woken, 0 timed out), and
 * tp_sleep_done under it again, whatever prepare said unless -1. `watched`: another thread
 * watches the sockets (tp_wait_fds) and calls tp_wake_self when it took something for us. */
int tp_sleep_prepare(tp_t *tp, int watched);
int tp_sleep_wait(tp_t *tp, int timeout_ms);
void tp_sleep_done(tp_t *tp);
/* Instead of tp_sleep_wait: also wake when the 32-bit word at `word` (in memory shared with
 * other processes) no longer holds val and its writer calls tp_futex_wake on it, e.g. a window
 * lock. 1 woken, 0 timed out. */
int tp_sleep_wait_word(tp_t *tp, const uint32_t *word, uint32_t val, int timeout_ms);
/* Wake every process waiting on `word` in tp_sleep_wait_word. */
void tp_futex_wake(uint32_t *word);
/* Under the lock, from another thread that handed the sleeper something (between its
 * prepare and done): wake it. */
void tp_wake_self(tp_t *tp);
/* The sockets a second thread may wait on in poll() for this endpoint's traffic (tcp
 * connections and the listener, udp routes), under the lock: their count (0: none, or poll
 * now), written to pfd when at most max (else call again with that much room); *timeout_ms is
 * lowered to when a udp timer is due. */
struct pollfd;
int tp_wait_fds(tp_t *tp, struct pollfd *pfd, int max, int *timeout_ms);

/* Whether this process waits by blocking (yields the CPU when idle, then sleeps on its
 * doorbell; doc/PROTOCOL-mpi-wire.md section 9) rather than spinning: LAMKIT_WAIT=block or
 * spin (mpiexec --wait), else the older LAMKIT_YIELD=1|0, else LAMKIT_OVERSUBSCRIBED=1|0 (the
 * launcher's placement puts more ranks on a CPU than it has), else more local ranks than
 * online CPUs. */
int tp_should_yield(const tp_t *tp);
/* That decision from the environment for nlocal ranks on ncpu CPUs (tp_create's): 1 block. */
int tp_wait_mode(int nlocal, long ncpu);
/* Whether mode is a value LAMKIT_WAIT takes (auto, block, spin): 0, or -1. */
int tp_wait_check(const char *mode);

/*
 * Peers of other jobs (MPI dynamic processes, doc/PROTOCOL-mpi-wire.md section 8). Peer indexes
 * 0 .. size-1 are the job's ranks; a process of another job gets the next free index >= size when
 * its card is first given (or when its connection arrives first) and keeps it until tp_destroy.
 * Those on another node are reached over tcp; on this node (same node token in the card) first
 * over tcp, then each direction over a shared ring once both have named each other
 * (doc/PROTOCOL-mpi-wire.md section 8.1), unless the policy keeps shm out (LAMKIT_TP=tcp).
 */
#define TP_DYN_CARD_MAX 640 /* bytes of a card from tp_card, with its NUL */

/* This process's card for other jobs, "UID:NODE:PID@PORT;NETID;A/L,..." (":NODE:PID" left out
 * when shm is off), into card[len] (with len at least TP_DYN_CARD_MAX it is whole; shorter,
 * addresses at the end are left out to fit). Opens a tcp listener if there was none. 0, or -1
 * with the reason in tp_error. */
int tp_card(tp_t *tp, char *card, size_t len);

/* The peer index of the process whose card is `card` (the same index each time for the same
 * process, this rank's own for its own card). A card of this node maps the pair segment with
 * that process. -1 with errno: EINVAL malformed card, ENOMEM. */
int tp_add_peer(tp_t *tp, const char *card);

/* Connect to a peer of another job now (bounded by the tcp connect timeout) so that a process
 * that is gone is seen here, not at a later send. 0, or -1 with the reason in tp_error. */
int tp_reach(tp_t *tp, int peer);

/* Peers known: the job's size plus the peers of other jobs so far. */
int tp_npeers(const tp_t *tp);

/* Let a peer of another job go (MPI_Comm_disconnect, when no communicator holds it any more):
 * hand up what it wrote on its ring, unmap the pair segment, end the tcp connection in order
 * (BYE, doc/PROTOCOL-mpi-wire.md section 8.2) and free its buffers. Call it when nothing is in
 * flight to or from it. The index stays the peer's: a later tp_add_peer with its card, a send
 * to it or a connection from it reach it again. The peer's BYE does the same here when it lets
 * this process go first. 0, or -1 with errno EINVAL (not a peer of another job). */
int tp_release(tp_t *tp, int peer);

/* What this endpoint holds for peers of other jobs: open tcp connections to them (with those
 * still ending), those ending, pair segments mapped. For tests and LAMKIT_TP_STATS. */
struct tp_dyn_counts {
	int conns, lingering, segments;
};
void tp_dyn_counts(const tp_t *tp, struct tp_dyn_counts *out);

#endif
