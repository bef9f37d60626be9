/* lib/transport/tp_tcp_int.h: what the files of the tcp path share (not for the rest of the
 * transport): the HELLO and BYE magics, the per-peer connection state, and the functions one file
 * of the path calls in another. The wire is described at the top of tp_tcp.c and in
 * doc/PROTOCOL-mpi-wire.md sections 3, 7.4 and 8.2. */
#ifndef LAMKIT_TP_TCP_INT_H
#define LAMKIT_TP_TCP_INT_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "tp_internal.h"

#define TCP_MAGIC  0x6c6b7463u /* "lktc" */
#define TCP_MAGICD 0x6c6b7464u /* "lktd": HELLO_DYN */
#define TCP_MAGICR 0x6c6b7472u /* "lktr": HELLO from a rank that gave a connection to us up */
#define BYE_MAGIC  0x6c6b6279u /* "lkby": the last frame on a connection to another job */
#define IN_SMALL   (64 * 1024) /* receive buffer for small frames; larger frames read exactly */

/* C_LATER: a connection to this peer (another job) is still ending (BYE): fragments wait until
 * it has, or until the peer connects; then a new one is made */
enum cstate { C_NONE, C_HELLO, C_WAITPEER, C_UP, C_LATER };

struct conn {
	int fd;
	int act; /* index in tcp->act while fd >= 0 */
	enum cstate st;
	struct tp_fifo q;
	size_t qbytes; /* payload bytes in q */
	unsigned ackn;
	unsigned char ackb[4];
	char *in; /* received bytes not yet delivered: frames, the last one maybe partial */
	size_t incap, inlen;
	char *dst; /* ops.place gave this for the payload of the frame whose header is in `in` */
	size_t dlen, dgot;
	int refused; /* the layer above did not place the large frame at the start of `in` */
	/* 8 + hlen of the last large frame: a read at the start of a frame asks for this much only
	 * (0: as much as the small buffer holds), see read_size */
	size_t hint;
	unsigned nsmall; /* small frames with a payload since the last large one (hint_check) */
	struct tp_tcp_counts n; /* what this connection received (LAMKIT_TP_STATS, tests) */
	/* a connection ending in order (section 8.2): the peer sent BYE; EOF came; ours is out
	 * and our half shut down; the peer index (of a lingering connection) */
	int bye_in, eof, shut, peer, lingering;
	/* connections with this peer that ended in order (kept across connections; sent in
	 * HELLO_DYN, so that a connection that replaces one is told from one of two connects
	 * made at once) */
	unsigned ended;
	/* connections with this peer given up (tp_tcp_forget: a multipath path down): the next
	 * HELLO says so, so that the peer replaces its own one and does not take this connect
	 * for the loser of two connects made at once */
	unsigned forgot;
	/* bumped whenever the socket is closed or replaced: a frame handed up may make the layer
	 * above send, a failed send put a multipath path down and close this connection (section
	 * 7.4); whoever was reading or writing it stops when the generation moved */
	unsigned gen;
};

struct tp_tcp {
	tp_t *tp;
	int lfd;
	int n;                  /* peers the tables below have room for */
	char card[TP_CARD_MAX]; /* the listener's card */
	struct conn *c;         /* per peer rank */
	int *act, nact;         /* ranks with an open connection */
	struct conn *lg;        /* connections to peers of other jobs that are ending (BYE) */
	int nlg, lgcap;
	struct pollfd *pfd;
	int *pfd_rank;
	int nqueued;
	unsigned calls;
	int debug, connect_ms;
	int no_place; /* LAMKIT_TCP_INPLACE=0: every payload through the buffer (to measure) */
	char cc[16];  /* LAMKIT_TCP_CC: congestion control, "" or "system" = the system's */
	size_t frag;  /* LAMKIT_TCP_FRAG (to measure), or 0: TCP_FRAG, TCP_FRAG_NAMED */
	int named;    /* connections run the congestion control LAMKIT_TCP_CC named, not bbr */
	int path;  /* multipath path of this instance: 0, or TP_MP_TCP2 (the second connection) */
	int stats; /* LAMKIT_TP_STATS: print each connection's counters at the end */
	const char *key;         /* card key prefix: "lk-tcp" or "lk-tcp2" */
	struct tp_tcp_addr addr; /* own netid and subnets */
};

/* Lifetime and progress (tp_tcp.c). */
/* Give peer's connection the socket fd (closing an older one) and list it as active. */
void tp_tcp_conn_set(struct tp_tcp *t, int peer, int fd, enum cstate st);
/* Close peer's socket and drop it from the active list (the last entry takes its place). */
void tp_tcp_conn_close(struct tp_tcp *t, int peer, enum cstate st);
/* The connection to peer failed (errno says why): one line in tp_error, EPIPE. */
int tp_tcp_fail_peer(struct tp_tcp *t, int peer);

/* Connecting, accepting, the handshake (tp_tcp_conn.c). */
/* Connect to peer from its business card (bounded) and send HELLO; the ACK is read by poll. */
int tp_tcp_start_connect(struct tp_tcp *t, int peer);
/* Adopt or refuse an accepted connection after reading its HELLO (bounded blocking read). */
int tp_tcp_accept_one(struct tp_tcp *t);
/* Read the answer to our HELLO on peer's connection (state C_HELLO). */
int tp_tcp_read_ack(struct tp_tcp *t, int peer);

/* Frames (tp_tcp_frame.c). */
/* Write as much of the queue as the socket takes. Returns fragments finished, -1 on error. */
int tp_tcp_push(struct tp_tcp *t, struct conn *c);
/* Read whatever is available into the buffer (one recv when little is waiting); deliver
 * complete frames. */
int tp_tcp_read_frames(struct tp_tcp *t, struct conn *c, int peer);

/* Ending a connection to a peer of another job in order (tp_tcp_bye.c, section 8.2). */
/* Take peer's open connection out of its slot into the lingering list, BYE queued on it. */
void tp_tcp_linger(struct tp_tcp *t, int peer);
/* Whether a connection to peer is still ending. */
int tp_tcp_lingering_to(const struct tp_tcp *t, int peer);
/* Push BYE out, shut our half, read until the peer's BYE or EOF; close what ended. */
int tp_tcp_poll_linger(struct tp_tcp *t);

#endif
