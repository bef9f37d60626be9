/* lib/transport/tp_tcp.c: tcp path: lazy connections from KVS business cards, framed fragments. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tp_internal.h"

/*
 * Wire (doc/PROTOCOL-mpi-wire.md): the business card lk-tcp-<rank> is "PORT;NETID;A/L,A/L,..."
 * (every usable IPv4 address with its prefix length, non-loopback first; NETID names the
 * network namespace so that loopback is only tried by peers that share it). The connecting
 * side tries the addresses on one of its own subnets first, then the rest, each connect bounded
 * in time, and sends HELLO {u32 magic, i32 rank}; the accepting side answers u32 1 (ACK, use
 * this connection) or 0 (NACK, close it). Nothing else is sent before the ACK. When both sides
 * connect at once the connection opened by the lower rank wins. Then frames {u32 hlen, u32 len,
 * hdr, payload} in host byte order (one host ABI). A process of another job (MPI dynamic
 * processes, section 8) says HELLO_DYN {u32 magic, u32 ended, u64 uid} instead: its uid names it,
 * and the lower uid's connection wins. A connection to such a peer ends in order (section 8.2): the
 * side that releases the peer, or hears BYE on it, sends BYE (a frame of TP_HDR_WIRE header bytes
 * starting "lkby") as its last frame and shuts its half down; the connection is closed once both
 * BYEs went by, or at EOF. Meanwhile it "lingers" outside the peer's slot, so that a new
 * connection to the peer can be made at once.
 */

#define TCP_MAGIC  0x6c6b7463u /* "lktc" */
#define TCP_MAGICD 0x6c6b7464u /* "lktd": HELLO_DYN */
#define TCP_MAGICR 0x6c6b7472u /* "lktr": HELLO from a rank that gave a connection to us up */
#define BYE_MAGIC  0x6c6b6279u /* "lkby": the last frame on a connection to another job */
#define SCAN_MAX   8           /* up to this many connections: recv each directly, no poll() */
#define IN_SMALL   (64 * 1024) /* receive buffer for small frames; larger frames read exactly */
#define CONNECT_MS 3000        /* default bound of one connect attempt */
/* Fragment size (tp_frag_max): 512 KiB. On one host (loopback), with windows of 64 messages (9
 * interleaved passes), 256 KiB fragments moved 3840 MB/s at 1 MiB and 512 KiB 4640 (Open MPI
 * 5770); the 1 MiB ping-pong took 190-206 us instead of 210-242. Between namespace nodes (bbr)
 * one stop measured the 1 MiB ping-pong at 531 us with 512 KiB against 307 with 256 KiB and
 * kept 256 KiB between hosts; the next (3 interleaved rounds, one universe) found the opposite
 * at every size from 512 KiB: ping-pong 1 MiB 176-697 against 255-722 us, 4 MiB 783-2579 against
 * 1015-3057; a 2-rank MPI_Allgather of 1 MiB 131-146 against 197-304 (Open MPI 168-171),
 * MPI_Alltoall 147 against 213-275 (Open MPI 167-170). With a congestion control named by
 * LAMKIT_TCP_CC (not bbr), 1 MiB: between namespace nodes with cubic, 1 MiB fragments made a
 * 1 MiB ping-pong 170 us instead of 201 and 4 MiB 715 instead of 824 (fewer writev calls and
 * receives); on a connection with bbr they doubled it (896 against 462 us). */
#define TCP_FRAG_NAMED (1 << 20)
#define TCP_FRAG       (512 * 1024)
/* A frame up to this many bytes (length words, header, payload) is copied into one buffer and
 * sent with send() rather than sendmsg() of three pieces: on loopback (AMD EPYC, 2 vCPUs, spinning
 * ping-pong of 33-byte frames, 6 paired runs) a half round trip took 3.93-4.03 us instead of
 * 4.21-4.25; 0.25-0.3 us up to 512 B of payload, 0.05 at 1 KiB, nothing at 4 KiB. */
#define TCP_FLAT 640
/* Connections whose buffer may grow to a whole fragment for the layer above's multi-fragment
 * messages (tp_tcp_rx_buffer_ok): at most 16 MiB a process. */
#define TCP_BIG_BUFS 16

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

static int push(struct tp_tcp *t, struct conn *c);
static int read_frames(struct tp_tcp *t, struct conn *c, int peer);
static int start_connect(struct tp_tcp *t, int peer);

static int listen_and_publish(struct tp_tcp *t, int publish, char *err, size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	char key[32], *card = t->card;

	t->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->lfd < 0 || bind(t->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(t->lfd, 128) < 0 || getsockname(t->lfd, (struct sockaddr *)&sa, &sl) < 0) {
		snprintf(err, errlen, "tcp listener: %s", strerror(errno));
		return -1;
	}
	tp_tcp_card(&t->addr, ntohs(sa.sin_port), card);
	snprintf(key, sizeof(key), "%s-%d", t->key, t->tp->cfg.rank);
	if (t->debug)
		fprintf(stderr, "lamkit tcp: rank %d: card %s=%s\n", t->tp->cfg.rank, key, card);
	if (publish && t->tp->cfg.kvs.put(t->tp->cfg.kvs.arg, key, card) < 0) {
		snprintf(err, errlen, "tcp: cannot publish %s", key);
		return -1;
	}
	return 0;
}

/* ---- lifetime ---- */

struct tp_tcp *tp_tcp_create(tp_t *tp, int publish, char *err, size_t errlen)
{
	struct tp_tcp *t = calloc(1, sizeof(*t));
	size_t n = (size_t)tp->npeers;
	const char *e;

	if (!t || !(t->c = calloc(n, sizeof(*t->c))) || !(t->act = calloc(n, sizeof(int))) ||
	    !(t->pfd = calloc(n + 1, sizeof(*t->pfd))) ||
	    !(t->pfd_rank = calloc(n + 1, sizeof(int)))) {
		snprintf(err, errlen, "tcp: out of memory");
		tp_tcp_destroy(t);
		return NULL;
	}
	t->tp = tp;
	t->lfd = -1;
	t->n = (int)n;
	t->path = publish == 2 ? TP_MP_TCP2 : 0;
	t->key = publish == 2 ? "lk-tcp2" : "lk-tcp";
	for (size_t i = 0; i < n; i++)
		t->c[i].fd = -1;
	e = getenv("LAMKIT_TP_DEBUG");
	t->debug = e && *e && strcmp(e, "0") != 0;
	e = getenv("LAMKIT_TCP_CONNECT_MS");
	t->connect_ms = e && atoi(e) > 0 ? atoi(e) : CONNECT_MS;
	e = getenv("LAMKIT_TCP_INPLACE");
	t->no_place = e && !strcmp(e, "0");
	e = getenv("LAMKIT_TCP_CC");
	snprintf(t->cc, sizeof(t->cc), "%s", e ? e : "");
	e = getenv("LAMKIT_TP_STATS");
	t->stats = e && *e && strcmp(e, "0") != 0;
	e = getenv("LAMKIT_TCP_FRAG");
	t->frag = e && atol(e) >= 4096 && atol(e) <= (64L << 20) ? (size_t)atol(e) : 0;
	if (listen_and_publish(t, publish, err, errlen) < 0) {
		tp_tcp_destroy(t);
		return NULL;
	}
	return t;
}

/* LAMKIT_TP_STATS=1: what each connection received, and where large payloads went. */
static void print_counts(const struct tp_tcp *t, int peer)
{
	const struct tp_tcp_counts *n = &t->c[peer].n;

	if (!n->reads)
		return;
	fprintf(stderr,
	        "lamkit tcp: rank %d <- %s%d: %llu frames in %llu reads, %llu large (%llu bytes): "
	        "%llu bytes received in place, %llu moved there from the buffer, %llu delivered "
	        "from the buffer (%llu frames, %llu not placed by the layer above); buffer %zu "
	        "bytes; sent %llu frames in %llu writes (%llu partial)\n",
	        t->tp->cfg.rank, t->path ? "tcp2 " : "rank ", peer, n->frames, n->reads, n->large,
	        n->large_bytes, n->placed_bytes, n->moved_bytes, n->buffered_bytes,
	        n->buffered_frames, n->refused, t->c[peer].incap, n->sent_frames, n->writes,
	        n->partial_writes);
}

void tp_tcp_counts(const struct tp_tcp *t, int peer, struct tp_tcp_counts *out)
{
	*out = t->c[peer].n;
}

void tp_tcp_destroy(struct tp_tcp *t)
{
	int e = errno;

	if (!t)
		return;
	for (int i = 0; t->c && i < t->n; i++) {
		struct tp_frag *f;
		if (t->stats)
			print_counts(t, i);
		if (t->c[i].fd >= 0)
			close(t->c[i].fd);
		while ((f = tp_fifo_pop(&t->c[i].q)))
			free(f);
		free(t->c[i].in);
	}
	for (int i = 0; i < t->nlg; i++) {
		struct tp_frag *f;
		close(t->lg[i].fd);
		while ((f = tp_fifo_pop(&t->lg[i].q)))
			free(f);
		free(t->lg[i].in);
	}
	free(t->lg);
	if (t->lfd >= 0)
		close(t->lfd);
	free(t->c);
	free(t->act);
	free(t->pfd);
	free(t->pfd_rank);
	free(t);
	errno = e;
}

int tp_tcp_grow(struct tp_tcp *t)
{
	size_t n = (size_t)t->tp->npeers;
	struct conn *c;
	int *a, *pr;
	struct pollfd *pf;

	if ((int)n <= t->n)
		return 0;
	if (!(c = realloc(t->c, n * sizeof(*c))))
		return -1;
	t->c = c;
	if (!(a = realloc(t->act, n * sizeof(int))))
		return -1;
	t->act = a;
	if (!(pf = realloc(t->pfd, (n + 1) * sizeof(*pf))))
		return -1;
	t->pfd = pf;
	if (!(pr = realloc(t->pfd_rank, (n + 1) * sizeof(int))))
		return -1;
	t->pfd_rank = pr;
	memset(t->c + t->n, 0, (n - (size_t)t->n) * sizeof(*c));
	for (size_t i = (size_t)t->n; i < n; i++)
		t->c[i].fd = -1;
	t->n = (int)n;
	return 0;
}

const char *tp_tcp_own_card(const struct tp_tcp *t)
{
	return t->card;
}

/* Give peer's connection the socket fd (closing an older one) and list it as active. */
static void conn_set(struct tp_tcp *t, int peer, int fd, enum cstate st)
{
	struct conn *c = &t->c[peer];

	if (c->fd >= 0)
		close(c->fd);
	else
		t->act[c->act = t->nact++] = peer;
	c->fd = fd;
	c->st = st;
	c->bye_in = c->eof = c->shut = 0;
	c->ackn = 0;
	c->inlen = 0;
	c->dst = NULL;
	c->refused = 0;
	c->hint = 0;
	c->nsmall = 0;
}

/* Close peer's socket and drop it from the active list (the last entry takes its place). */
static void conn_close(struct tp_tcp *t, int peer, enum cstate st)
{
	struct conn *c = &t->c[peer];

	if (c->fd >= 0) {
		close(c->fd);
		t->act[c->act] = t->act[--t->nact];
		t->c[t->act[c->act]].act = c->act;
	}
	c->fd = -1;
	c->st = st;
	c->inlen = 0;
	c->dst = NULL;
	c->refused = 0;
	c->bye_in = c->eof = c->shut = 0;
}

/* ---- ending a connection to a peer of another job in order (section 8.2) ---- */

/* Drop the fragments of queue q (the peer is gone or released: nobody waits for them). */
static void drop_queue(struct tp_tcp *t, struct conn *c)
{
	struct tp_frag *f;

	while ((f = tp_fifo_pop(&c->q))) {
		t->nqueued--;
		tp_frag_done(t->tp, f);
	}
	c->qbytes = 0;
}

/* Take peer's open connection out of its slot (which is then C_NONE: a later send connects
 * anew) into the lingering list, with BYE queued after whatever is queued on it. */
static void linger(struct tp_tcp *t, int peer)
{
	struct conn *c = &t->c[peer], *l;
	unsigned char hdr[TP_HDR_WIRE] = {0};
	uint32_t magic = BYE_MAGIC;
	struct tp_frag *f;

	if (t->nlg == t->lgcap) {
		int cap = t->lgcap + 4;
		l = realloc(t->lg, sizeof *l * (size_t)cap);
		if (!l) { /* no room to end it in order: end it at once */
			c->ended++;
			drop_queue(t, c);
			conn_close(t, peer, C_NONE);
			return;
		}
		t->lg = l;
		t->lgcap = cap;
	}
	memcpy(hdr, &magic, sizeof magic);
	l = &t->lg[t->nlg++];
	*l = *c;
	l->peer = peer;
	l->lingering = 1;
	if ((f = tp_frag_new(hdr, sizeof hdr, NULL, 0, 0, NULL))) {
		tp_fifo_push(&l->q, f);
		t->nqueued++;
	}
	t->act[c->act] = t->act[--t->nact];
	t->c[t->act[c->act]].act = c->act;
	c->ended++;
	if (t->debug)
		fprintf(stderr, "lamkit tcp: rank %d -> peer %d: BYE%s, connection ending (%u)\n",
		        t->tp->cfg.rank, peer, l->bye_in ? " answered" : "", c->ended);
	memset(&c->q, 0, sizeof c->q);
	c->qbytes = 0;
	c->in = NULL;
	c->incap = 0;
	c->fd = -1;
	conn_close(t, peer, C_NONE);
}

/* Whether a connection to peer is still ending. */
static int lingering_to(const struct tp_tcp *t, int peer)
{
	for (int i = 0; i < t->nlg; i++)
		if (t->lg[i].peer == peer)
			return 1;
	return 0;
}

/* Close lingering connection i (the last takes its place). */
static void linger_end(struct tp_tcp *t, int i, const char *why)
{
	struct conn *l = &t->lg[i];

	if (t->debug)
		fprintf(stderr, "lamkit tcp: rank %d -> peer %d: connection closed (%s)\n",
		        t->tp->cfg.rank, l->peer, why);
	int peer = l->peer;

	drop_queue(t, l);
	close(l->fd);
	free(l->in);
	t->lg[i] = t->lg[--t->nlg];
	/* one connection between two processes at a time: what waited for this one to end goes
	 * on a new one now (a peer that cannot be reached any more: dropped, as at EPIPE) */
	if (t->c[peer].st == C_LATER && !lingering_to(t, peer)) {
		t->c[peer].st = C_NONE;
		if (start_connect(t, peer) < 0)
			drop_queue(t, &t->c[peer]);
	}
}

/* Push BYE out, then shut our half; read what the peer still sends until its BYE or EOF. A
 * peer that has gone (an error on the socket) ends it too: nothing waits for it any more. */
static int poll_linger(struct tp_tcp *t)
{
	int n = 0;

	for (int i = t->nlg - 1; i >= 0; i--) {
		struct conn *l = &t->lg[i];
		int k = 0, gone = 0;
		if (l->q.head && (k = push(t, l)) < 0)
			gone = 1;
		n += k > 0 ? k : 0;
		if (!gone && !l->q.head && !l->shut) {
			shutdown(l->fd, SHUT_WR);
			l->shut = 1;
		}
		if (!gone && !l->bye_in && (k = read_frames(t, l, l->peer)) < 0)
			gone = 1;
		n += k > 0 ? k : 0;
		if (gone || l->eof || (l->shut && l->bye_in)) {
			linger_end(t, i, gone ? strerror(errno) : l->eof ? "EOF" : "both BYEs");
			n++;
		}
	}
	return n;
}

void tp_tcp_forget(struct tp_tcp *t, int peer)
{
	drop_queue(t, &t->c[peer]);
	conn_close(t, peer, C_NONE);
	t->c[peer].forgot++;
}

int tp_tcp_release(struct tp_tcp *t, int peer)
{
	struct conn *c = &t->c[peer];

	/* a connect not answered yet is left to finish (closed unread, the ACK would make the
	 * kernel reset the peer's side), and fragments that wait for the peer's own connection
	 * are not dropped: either goes at the next release */
	if (c->st == C_UP && c->fd >= 0)
		linger(t, peer);
	else if (c->st == C_WAITPEER && !c->q.head)
		c->st = C_NONE;
	if (c->fd < 0) {
		free(c->in);
		c->in = NULL;
		c->incap = 0;
	}
	return 0;
}

int tp_tcp_connected(const struct tp_tcp *t, int peer)
{
	return t->c[peer].fd >= 0;
}

int tp_tcp_lingering(const struct tp_tcp *t)
{
	return t ? t->nlg : 0;
}

/* Congestion control: the system's, unless LAMKIT_TCP_CC names one ("system": the system's).
 * Between two nodes' namespaces (veth, 5 us minimum rtt) bbr, this machine's default, kept cwnd
 * at 190-450 packets (2x its bandwidth-delay estimate plus a few bursts) and paced at 9-25
 * Gbit/s: a 1 MiB message (724 packets) waited for 2-4 rounds of acks, so a 1 MiB ping-pong took
 * 458 us against 170 with cubic and 1 MiB fragments (bench/pingpong-sizes-netns). But streams of
 * 1-4 MiB messages in flight (bench/pingpong-tcp --netns -s 0.1, bandwidth) stalled with cubic:
 * in each of 6 runs some size fell to 220-1600 MB/s, against a steady 2000-3400 with bbr. So
 * the default stays the system's; cubic or reno is an opt-in for ping-pong-bound codes. */
static void set_cc(struct tp_tcp *t, int fd)
{
	char cur[16] = "";
	socklen_t l = sizeof(cur) - 1;
	int rc = 0;

	if (t->cc[0] && strcmp(t->cc, "system"))
		rc = setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, t->cc, (socklen_t)strlen(t->cc));
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cur, &l) < 0)
		cur[0] = '\0';
	t->named = t->cc[0] && strcmp(t->cc, "system") && rc == 0 && strncmp(cur, "bbr", 3) != 0;
	if (t->debug)
		fprintf(stderr, "lamkit tcp: rank %d: congestion control %s%s\n", t->tp->cfg.rank,
		        cur, rc < 0 ? " (LAMKIT_TCP_CC refused)" : "");
}

static void tune(struct tp_tcp *t, int fd)
{
	int one = 1, big = 4 << 20;

	/* 4 MiB buffers (the kernel doubles them, up to wmem_max/rmem_max): 1-4 MiB ping-pong
	 * bandwidth on loopback measured 1.2-1.6x that of the kernel's autotuning here; between
	 * namespace nodes autotuning was no faster at 128 KiB-4 MiB either. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	set_cc(t, fd);
}

/* ---- connecting ---- */

/* Nonblocking connect bounded by ms, then HELLO (HELLO_DYN to a peer of another job). The fd, or
 * -1 with errno. */
static int try_connect(struct tp_tcp *t, int peer, struct in_addr a, int port)
{
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = a};
	uint32_t hello[4] = {t->c[peer].forgot ? TCP_MAGICR : TCP_MAGIC, (uint32_t)t->tp->cfg.rank,
	                     0, 0};
	size_t hl = 8;
	long end = tp_now_ms() + t->connect_ms;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), e = 0;
	socklen_t el = sizeof(e);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int k = 0;
		if (errno != EINPROGRESS)
			goto fail;
		while (tp_now_ms() < end && (k = poll(&p, 1, (int)(end - tp_now_ms()))) < 0 &&
		       errno == EINTR)
			;
		if (k <= 0) {
			errno = k == 0 ? ETIMEDOUT : errno;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			goto fail;
		if (e) {
			errno = e;
			goto fail;
		}
	}
	if (peer >= t->tp->cfg.size) {
		hello[0] = TCP_MAGICD;
		hello[1] = t->c[peer].ended;
		memcpy(hello + 2, &t->tp->uid, 8);
		hl = 16;
	}
	if (send(fd, hello, hl, MSG_NOSIGNAL) != (ssize_t)hl)
		goto fail;
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* Append "a.b.c.d:port (reason)" to the error text. */
static void note_failure(char *msg, size_t len, struct in_addr a, int port, int e)
{
	char ip[INET_ADDRSTRLEN];
	size_t n = strlen(msg);

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	if (n < len)
		snprintf(msg + n, len - n, "%s%s:%d (%s)", msg[n - 1] == ':' ? " " : ", ", ip, port,
		         e == ETIMEDOUT ? "timed out" : strerror(e));
}

static void log_connected(const struct tp_tcp *t, int peer, int fd, struct in_addr a, int port)
{
	struct sockaddr_in me;
	socklen_t ml = sizeof(me);
	char ip[INET_ADDRSTRLEN], mine[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
		inet_ntop(AF_INET, &me.sin_addr, mine, sizeof(mine));
	fprintf(stderr, "lamkit tcp: rank %d -> rank %d: connected %s -> %s:%d\n", t->tp->cfg.rank,
	        peer, mine, ip, port);
}

/* Connect to peer from its business card (bounded) and send HELLO; the ACK is read by poll. */
static int start_connect(struct tp_tcp *t, int peer)
{
	char key[32], card[TP_CARD_MAX + 8], *netid = NULL;
	struct tp_tcp_cand cv[TP_CAND_MAX];
	int port = 0, n, i, fd = -1, same;
	char *msg = t->tp->err;
	size_t ml = sizeof(t->tp->err);

	snprintf(key, sizeof(key), "%s-%d", t->key, peer);
	snprintf(msg, ml, "tcp: rank %d cannot reach rank %d:", t->tp->cfg.rank, peer);
	if (peer >= t->tp->cfg.size) { /* another job's: the card tp_add_peer was given */
		const char *dc = t->tp->dcard[peer - t->tp->cfg.size];
		snprintf(key, sizeof(key), "of peer %d (another job)", peer);
		snprintf(msg, ml,
		         "tcp: rank %d cannot reach peer %d of another job:", t->tp->cfg.rank,
		         peer);
		snprintf(card, sizeof(card), "%s", dc ? dc : "");
	}
	if ((peer < t->tp->cfg.size &&
	     t->tp->cfg.kvs.get(t->tp->cfg.kvs.arg, key, card, sizeof(card)) < 0) ||
	    (n = tp_tcp_card_parse(card, &port, &netid, cv)) < 0) {
		snprintf(msg, ml, "tcp: rank %d: no usable business card %s for rank %d",
		         t->tp->cfg.rank, key, peer);
		errno = EPIPE;
		return -1;
	}
	same = strcmp(netid, "-") ? strcmp(netid, t->addr.netid) == 0 : t->tp->slot[peer] >= 0;
	while ((i = tp_tcp_next_cand(&t->addr, cv, n, same)) >= 0) {
		fd = try_connect(t, peer, cv[i].a, port);
		if (fd >= 0)
			break;
		note_failure(msg, ml, cv[i].a, port, errno);
	}
	if (fd < 0) {
		if (msg[strlen(msg) - 1] == ':')
			snprintf(msg + strlen(msg), ml - strlen(msg),
			         " no usable address in card %s", key);
		errno = EPIPE;
		return -1;
	}
	msg[0] = '\0';
	if (t->debug)
		log_connected(t, peer, fd, cv[i].a, port);
	tune(t, fd);
	conn_set(t, peer, fd, C_HELLO);
	return 0;
}

/* The connection to peer failed (errno says why): one line in tp_error, EPIPE. */
static int fail_peer(struct tp_tcp *t, int peer)
{
	snprintf(t->tp->err, sizeof(t->tp->err), "tcp: rank %d: %sconnection to rank %d: %s",
	         t->tp->cfg.rank, t->path ? "second " : "", peer, strerror(errno));
	errno = EPIPE;
	return -1;
}

/* The connection to peer failed while polling: a multipath peer that also has udp goes on
 * without it (doc/PROTOCOL-mpi-wire.md section 7.4): 1; else 0, the caller fails. */
static int failover(struct tp_tcp *t, int peer)
{
	tp_t *tp = t->tp;
	char why[160];

	if (peer >= tp->cfg.size || tp->kind[peer] != TP_MULTI || !tp->mp)
		return 0;
	snprintf(why, sizeof why, "%s", strerror(errno));
	return tp_mp_path_down(tp, t == tp->tcp ? 0 : TP_MP_TCP2, peer, why, 0) == 0;
}

/* ---- sending ---- */

/* Write as much of the queue as the socket takes. Returns fragments finished, -1 on error. */
static int push(struct tp_tcp *t, struct conn *c)
{
	struct tp_frag *f;
	int n = 0;

	while ((f = c->q.head)) {
		uint32_t pre[2] = {f->hlen, (uint32_t)f->len};
		struct iovec iov[3] = {{pre, 8}, {f->hdr, f->hlen}, {(void *)f->data, f->len}};
		size_t skip = f->done, total = 8 + f->hlen + f->len;
		int k = 0;
		ssize_t w;

		while (k < 2 && skip >= iov[k].iov_len)
			skip -= iov[k++].iov_len;
		iov[k].iov_base = (char *)iov[k].iov_base + skip;
		iov[k].iov_len -= skip;
		struct msghdr m = {.msg_iov = iov + k, .msg_iovlen = (size_t)(3 - k)};
		w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
		c->n.writes++;
		if (w < 0)
			return errno == EAGAIN || errno == EINTR ? n : -1;
		f->done += (size_t)w;
		if (f->done < total) {
			c->n.partial_writes++;
			return n;
		}
		c->n.sent_frames++;
		tp_fifo_pop(&c->q);
		t->nqueued--;
		c->qbytes -= f->len;
		tp_frag_done(t->tp, f);
		n++;
	}
	return n;
}

int tp_tcp_send(struct tp_tcp *t, int peer, const void *hdr, size_t hlen, const void *data,
                size_t len, void *cookie)
{
	struct conn *c = &t->c[peer];
	struct tp_frag *f;
	/* With fragments still queued, a small last fragment must not report its message sent
	 * before them: keep it by reference too, so ops.sent(cookie) comes after they are out. */
	int ref = len > 64 * 1024 || (cookie && c->q.head);
	size_t done = 0;

	if (len > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (c->st == C_NONE && peer >= t->tp->cfg.size && lingering_to(t, peer))
		c->st = C_LATER; /* connect once the ending one has ended */
	if (c->st == C_NONE && start_connect(t, peer) < 0)
		return -1; /* why is in tp_error() */
	if (c->st == C_UP && !c->q.head) {
		uint32_t pre[2] = {(uint32_t)hlen, (uint32_t)len};
		ssize_t w;

		/* not write(v): a peer of another job that is gone is EPIPE here, not SIGPIPE */
		if (8 + hlen + len <= TCP_FLAT) {
			char flat[TCP_FLAT];
			memcpy(flat, pre, 8);
			memcpy(flat + 8, hdr, hlen);
			if (len)
				memcpy(flat + 8 + hlen, data, len);
			w = send(c->fd, flat, 8 + hlen + len, MSG_NOSIGNAL);
		} else {
			struct iovec iov[3] = {{pre, 8}, {(void *)hdr, hlen}, {(void *)data, len}};
			struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 3 : 2};
			w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
		}

		c->n.writes++;
		if (w == (ssize_t)(8 + hlen + len)) {
			c->n.sent_frames++;
			return 0;
		}
		c->n.partial_writes++;
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return fail_peer(t, peer);
		done = w > 0 ? (size_t)w : 0;
	}
	f = tp_frag_new(hdr, hlen, data, len, ref, cookie);
	if (!f)
		return -1;
	f->done = done;
	tp_fifo_push(&c->q, f);
	t->nqueued++;
	c->qbytes += len;
	return ref;
}

/* ---- receiving ---- */

/* Read a HELLO (bounded): the peer index it names (a peer of another job is added when new), or
 * -1 when it is malformed. *wins: the connection is taken when ours to that peer is pending;
 * *newer: a peer of another job ended more connections with us than we know of (its BYE on
 * the one we have up is on the way: this one replaces it), or a rank of the job gave its
 * connection to us up (HELLO "lktr") and this one replaces it. */
static int read_hello(struct tp_tcp *t, int fd, int *wins, int *newer)
{
	uint32_t hello[2];
	uint64_t uid;
	int p;

	if (recv(fd, hello, 8, MSG_WAITALL) != 8)
		return -1;
	if (hello[0] == TCP_MAGIC || hello[0] == TCP_MAGICR) {
		p = (int)hello[1];
		*wins = p < t->tp->cfg.rank;
		*newer = hello[0] == TCP_MAGICR;
		return p >= 0 && p < t->tp->cfg.size ? p : -1;
	}
	if (hello[0] != TCP_MAGICD || t->path || recv(fd, &uid, 8, MSG_WAITALL) != 8 || !uid)
		return -1; /* the second connection's listener serves the job's ranks only */
	p = tp_dyn_peer(t->tp, uid);
	if (p < 0 || tp_tcp_grow(t) < 0)
		return -1;
	*wins = uid < t->tp->uid;
	*newer = hello[1] > t->c[p].ended;
	return p;
}

/* Adopt or refuse an accepted connection after reading its HELLO (bounded blocking read). */
static int accept_one(struct tp_tcp *t)
{
	uint32_t ans;
	struct conn *c;
	struct timeval tv = {5, 0};
	int fd = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC), p, me = t->tp->cfg.rank, wins = 0;
	int newer = 0;

	if (fd < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    (p = read_hello(t, fd, &wins, &newer)) < 0) {
		close(fd);
		return 0;
	}
	c = &t->c[p];
	if (p < t->tp->cfg.size && t->tp->gone && t->tp->gone[p]) { /* tp_forget: never again */
		close(fd);
		return 0;
	}
	if (p >= t->tp->cfg.size && c->st == C_UP && newer) {
		/* not the loser of two connects at once: the peer released us, and its BYE is on
		 * the way in the old connection, after its last frames */
		tp_shmx_bye(t->tp, p);
		linger(t, p);
	}
	/* a multipath peer that gave the connection we have up (a failure it saw, we did not)
	 * connects again saying so: take the new one, and send again what the old one had. A
	 * plain HELLO while one is up is the loser of two connects made at once: refused below */
	if (c->st == C_UP && newer && p < t->tp->cfg.size && t->tp->kind[p] == TP_MULTI &&
	    t->tp->mp)
		tp_mp_path_down(t->tp, t == t->tp->tcp ? 0 : TP_MP_TCP2, p,
		                "the peer connected anew", 1);
	ans = c->st == C_NONE || c->st == C_WAITPEER || c->st == C_LATER ||
	      (c->st == C_HELLO && wins);
	if (send(fd, &ans, 4, MSG_NOSIGNAL) != 4 || !ans || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		return 0;
	}
	if (t->debug)
		fprintf(stderr, "lamkit tcp: rank %d <- rank %d: accepted\n", me, p);
	tune(t, fd);
	conn_set(t, p, fd, C_UP); /* our own attempt, if any, loses to the lower rank's */
	return 1;
}

static int read_ack(struct tp_tcp *t, int peer)
{
	struct conn *c = &t->c[peer];
	ssize_t r = recv(c->fd, c->ackb + c->ackn, 4 - c->ackn, 0);
	uint32_t ans;

	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (r == 0)
		ans = 0;
	else if ((c->ackn += (unsigned)r) < 4)
		return 0;
	else
		memcpy(&ans, c->ackb, 4);
	if (ans) {
		c->st = C_UP;
		return push(t, c) < 0 ? -1 : 1;
	}
	conn_close(t, peer, C_WAITPEER); /* the peer's own connection to us wins */
	return 1;
}

union hdrbuf {
	unsigned char b[TP_HDR_WIRE];
	uint64_t align;
};

/* Copy a frame's header for the layer above: aligned, zero after hlen. */
static const void *hdr_copy(union hdrbuf *h, const char *p, uint32_t hlen)
{
	memcpy(h->b, p, hlen);
	memset(h->b + hlen, 0, TP_HDR_WIRE - hlen);
	return h->b;
}

/* The path a frame on connection c is handed up on. */
static int up_path(const struct tp_tcp *t, const struct conn *c)
{
	return c->lingering ? TP_PATH_ENDING : t->path;
}

/* Whether the frame at p (prefix pre) is BYE from a peer of another job. */
static int is_bye(const struct tp_tcp *t, int peer, const char *p, const uint32_t *pre)
{
	uint32_t magic;

	if (peer < t->tp->cfg.size || pre[0] != TP_HDR_WIRE || pre[1])
		return 0;
	memcpy(&magic, p + 8, 4);
	return magic == BYE_MAGIC;
}

/* Hand every complete frame at the start of c->in up, keep the partial rest. */
static int deliver(struct tp_tcp *t, struct conn *c, int peer)
{
	union hdrbuf h;
	size_t off = 0;
	int n = 0;

	while (c->inlen - off >= 8) {
		uint32_t pre[2];
		memcpy(pre, c->in + off, 8);
		if (pre[0] > TP_HDR_WIRE) {
			errno = EPROTO;
			return -1;
		}
		if (c->inlen - off < 8 + (size_t)pre[0] + pre[1])
			break;
		if (is_bye(t, peer, c->in + off, pre)) {
			/* the peer's last frame: the connection ends (section 8.2) */
			c->bye_in = 1;
			off = c->inlen;
			break;
		}
		c->n.frames++;
		if (pre[1] > IN_SMALL) {
			c->hint = 8 + (size_t)pre[0];
			c->nsmall = 0;
			c->n.large++;
			c->n.large_bytes += pre[1];
			c->n.buffered_frames++;
			c->n.buffered_bytes += pre[1];
		}
		if (tp_up_recv(t->tp, up_path(t, c), peer, hdr_copy(&h, c->in + off + 8, pre[0]),
		               pre[0], c->in + off + 8 + pre[0], pre[1], 0) < 0)
			return -1;
		off += 8 + (size_t)pre[0] + pre[1];
		n++;
	}
	if (off) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
	return n;
}

/* Bytes the frame at the start of c->in needs in all (8 while its prefix is incomplete). */
static size_t frame_need(const struct conn *c)
{
	uint32_t pre[2];

	if (c->inlen < 8)
		return 8;
	memcpy(pre, c->in, 8);
	return 8 + (size_t)pre[0] + pre[1];
}

/* Header length of the frame at the start of c->in (its prefix is there). */
static size_t hdr_len(const struct conn *c)
{
	uint32_t hlen;

	memcpy(&hlen, c->in, 4);
	return hlen;
}

/* Payloads may be received in place when the layer above asks for it. From a multipath peer that
 * may be before earlier fragments on another path were handed up: tp_mp.c then holds the
 * fragment's header until its turn, the payload stays where it was placed. */
static int can_place(const struct tp_tcp *t)
{
	return t->tp->cfg.ops.place && !t->no_place;
}

/* The partial frame at the start of c->in has a large payload: ask the layer above where it
 * goes; if it says, move what has arrived there and receive the rest straight into it. */
static void try_place(struct tp_tcp *t, struct conn *c, int peer)
{
	union hdrbuf h;
	uint32_t pre[2];
	size_t have;

	if (c->inlen < 8 || !can_place(t) || c->refused)
		return;
	memcpy(pre, c->in, 8);
	if (pre[1] <= IN_SMALL || c->inlen < 8 + (size_t)pre[0])
		return;
	c->dst = t->tp->cfg.ops.place(t->tp->cfg.arg, peer, hdr_copy(&h, c->in + 8, pre[0]), pre[0],
	                              pre[1]);
	if (!c->dst) {
		c->n.refused++;
		c->refused = 1; /* not asked again for this frame: it is read whole */
		return;
	}
	have = c->inlen - 8 - pre[0];
	memcpy(c->dst, c->in + 8 + pre[0], have);
	c->n.moved_bytes += have;
	c->dlen = pre[1];
	c->dgot = have;
	c->inlen = 8 + pre[0];
}

/* The placed payload is complete: deliver it with its header. */
static int placed_done(struct tp_tcp *t, struct conn *c, int peer)
{
	union hdrbuf h;
	uint32_t hlen;
	char *dst = c->dst;

	memcpy(&hlen, c->in, 4);
	c->dst = NULL;
	c->inlen = 0;
	c->hint = 8 + (size_t)hlen;
	c->nsmall = 0;
	c->n.frames++;
	c->n.large++;
	c->n.large_bytes += c->dlen;
	return tp_up_recv(t->tp, up_path(t, c), peer, hdr_copy(&h, c->in + 8, hlen), hlen, dst,
	                  c->dlen, 1) < 0
	           ? -1
	           : 1;
}

/* How much to ask for in the next recv into the buffer, for a frame that needs `need` bytes (8
 * while its prefix is incomplete). A large frame: up to the end of its header when its payload
 * may go in place (ops.place is asked then; this read asked for the small buffer's end while
 * the prefix was in and the header not), else up to its end, so that what follows stays in the
 * socket. Otherwise as much as the small buffer holds (IN_SMALL + 64), whatever the buffer grew
 * to for a large frame that was not placed: reading its whole capacity swallowed the next large
 * frames, which were then copied out of the buffer. But on a connection that carries large
 * frames (c->hint), only up to the header of the next frame (its first c->hint bytes): a large
 * payload then goes in place from its first byte, instead of the first read's share (a quarter
 * of a 256 KiB fragment) being moved there from the buffer. *hinted: the read was so limited. */
static size_t read_size(const struct tp_tcp *t, const struct conn *c, size_t need, int *hinted)
{
	*hinted = 0;
	if (need > IN_SMALL && c->inlen < 8 + hdr_len(c) && can_place(t))
		return 8 + hdr_len(c) - c->inlen;
	if (need > IN_SMALL)
		return need - c->inlen;
	if (c->hint && can_place(t)) {
		*hinted = 1;
		return c->inlen < 8 ? c->hint - c->inlen : need - c->inlen + c->hint;
	}
	return IN_SMALL + 64 - c->inlen;
}

/* After a read limited to the next header (read_size) filled, with the frames it completed
 * delivered: a small frame with a payload still partial at the start of the buffer costs one
 * more recv than a read of the whole small buffer would have. The second in a row without a
 * large frame between says the connection carries small messages now: read them as before
 * until the next large frame. Frames without a payload (the rendezvous' control frames
 * between large ones) do not count. */
static void hint_check(struct conn *c)
{
	uint32_t pre[2];

	if (c->inlen < 8)
		return;
	memcpy(pre, c->in, 8);
	if (pre[1] && pre[1] <= IN_SMALL && ++c->nsmall >= 2)
		c->hint = 0;
}

/* Read whatever is available into the buffer (one recv when little is waiting); deliver
 * complete frames. Large frames are read up to their end only, so nothing is moved, or straight
 * into the place the layer above gave (try_place). */
static int read_frames(struct tp_tcp *t, struct conn *c, int peer)
{
	int n = 0, k, hinted;

	for (;;) {
		size_t need = frame_need(c), want;
		ssize_t r;

		if (c->dst) {
			want = c->dlen - c->dgot;
			r = recv(c->fd, c->dst + c->dgot, want, 0);
			c->n.reads++;
			if (r > 0)
				c->n.placed_bytes += (size_t)r;
			if (r <= 0) {
				if (r < 0 && (errno == EAGAIN || errno == EINTR))
					return n;
				errno = r < 0 ? errno : ECONNRESET;
				return -1;
			}
			if ((c->dgot += (size_t)r) == c->dlen) {
				if ((k = placed_done(t, c, peer)) < 0)
					return -1;
				n += k;
			}
			if ((size_t)r < want)
				return n;
			continue;
		}
		want = read_size(t, c, need, &hinted);
		if (c->inlen + want > c->incap || !c->in) {
			size_t cap =
			    c->inlen + want > IN_SMALL + 64 ? c->inlen + want : IN_SMALL + 64;
			char *nb = realloc(c->in, cap);
			if (!nb)
				return -1;
			c->in = nb;
			c->incap = cap;
		}
		r = recv(c->fd, c->in + c->inlen, want, 0);
		c->n.reads++;
		if (r < 0 && errno == ECONNRESET && !c->inlen && peer >= t->tp->cfg.size) {
			/* a process of another job closed with something of ours unread (it ended
			 * without MPI_Comm_disconnect, or our BYE crossed its end): it finished */
			c->eof = 1;
			return n;
		}
		if (r < 0)
			return errno == EAGAIN || errno == EINTR ? n : -1;
		if (r == 0) {
			if (c->inlen) {
				errno = ECONNRESET;
				return -1;
			}
			c->eof = 1; /* the peer finished: the caller closes */
			return n;
		}
		c->inlen += (size_t)r;
		if ((k = deliver(t, c, peer)) < 0)
			return -1;
		if (k > 0)
			c->refused = 0; /* the frame at the start is a new one */
		n += k;
		if (c->bye_in)
			return n; /* nothing comes after BYE */
		if (hinted && (size_t)r == want)
			hint_check(c);
		try_place(t, c, peer);
		if ((size_t)r < want)
			return n; /* drained for now */
	}
}

/* Read and write what peer's connection allows; `rev` is poll's answer, or ~0 to just try. */
static int handle(struct tp_tcp *t, int peer, short rev)
{
	struct conn *c = &t->c[peer];
	int n = 0, k;

	if (c->st == C_HELLO)
		return rev ? read_ack(t, peer) : 0;
	if (rev & (POLLIN | POLLHUP | POLLERR)) {
		k = read_frames(t, c, peer);
		if (k < 0)
			return -1;
		n += k;
		if (c->eof) {
			conn_close(t, peer, C_NONE);
			return n;
		}
		if (c->bye_in) { /* the peer released us: answer BYE, and end it in order */
			tp_shmx_bye(t->tp, peer);
			linger(t, peer);
			return n + 1;
		}
	}
	if (c->q.head) {
		k = push(t, c);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

/* Many connections: one poll() says which to visit. */
static int poll_many(struct tp_tcp *t)
{
	int np = 0, n = 0, k;

	t->pfd[np].fd = t->lfd;
	t->pfd[np++].events = POLLIN;
	for (int i = 0; i < t->nact; i++) {
		int r = t->act[i];
		t->pfd_rank[np] = r;
		t->pfd[np].fd = t->c[r].fd;
		t->pfd[np++].events = (short)(POLLIN | (t->c[r].q.head ? POLLOUT : 0));
	}
	if (poll(t->pfd, (nfds_t)np, 0) <= 0)
		return 0;
	for (int i = 1; i < np; i++) {
		if (!t->pfd[i].revents || t->c[t->pfd_rank[i]].fd != t->pfd[i].fd)
			continue;
		if ((k = handle(t, t->pfd_rank[i], t->pfd[i].revents)) < 0) {
			if (failover(t, t->pfd_rank[i]))
				continue;
			return fail_peer(t, t->pfd_rank[i]);
		}
		n += k;
	}
	while (t->pfd[0].revents && (k = accept_one(t)) > 0)
		n += k;
	return n;
}

/* Whether a connection waits to be accepted. */
static int listener_ready(const struct tp_tcp *t)
{
	struct pollfd p = {.fd = t->lfd, .events = POLLIN};

	return t->lfd >= 0 && poll(&p, 1, 0) > 0;
}

int tp_tcp_poll(struct tp_tcp *t)
{
	int n = t->nlg ? poll_linger(t) : 0, k;

	if (t->nact > SCAN_MAX)
		return n + poll_many(t);
	/* Few connections: a recv on each costs no more than a poll() and saves one per frame.
	 * Backwards, so that a connection closed (and replaced by the last) is not skipped. */
	for (int i = t->nact - 1; i >= 0; i--) {
		int r = t->act[i];
		if ((k = handle(t, r, (short)~0)) < 0) {
			if (failover(t, r))
				continue;
			return fail_peer(t, r);
		}
		n += k;
	}
	/* The listener is looked at on every 16th poll, with or without connections, and through
	 * poll(): an accept4 that finds nothing costs 3.5-4 us here (the kernel makes and frees a
	 * socket for it), a poll() of the one descriptor 0.3. A rank whose peers all sit on its
	 * node still listens (another job may connect), and accepting on each of its polls put
	 * accept4 in 7 % of the CPU of MPI_Comm_spawn of 32 children on 2 cores (perf). */
	if ((++t->calls & 15) == 0 && listener_ready(t))
		while ((k = accept_one(t)) > 0)
			n += k;
	return n;
}

int tp_tcp_reach(struct tp_tcp *t, int peer)
{
	if (t->c[peer].st == C_NONE && lingering_to(t, peer))
		t->c[peer].st = C_LATER;
	return t->c[peer].st == C_NONE ? start_connect(t, peer) : 0;
}

size_t tp_tcp_backlog(struct tp_tcp *t, int peer)
{
	struct conn *c = &t->c[peer];
	int k = 0;

	if (c->fd >= 0 && ioctl(c->fd, SIOCOUTQ, &k) < 0)
		k = 0;
	return c->qbytes + (size_t)(k > 0 ? k : 0);
}

int tp_tcp_nfds(const struct tp_tcp *t)
{
	return t ? 1 + t->nact : 0;
}

int tp_tcp_pollfds(const struct tp_tcp *t, struct pollfd *pfd, int max)
{
	int n = 0;

	if (!t)
		return 0;
	if (t->lfd >= 0 && n < max)
		pfd[n++] = (struct pollfd){.fd = t->lfd, .events = POLLIN};
	for (int i = 0; i < t->nact && n < max; i++)
		pfd[n++] = (struct pollfd){.fd = t->c[t->act[i]].fd, .events = POLLIN};
	return n;
}

int tp_tcp_busy(const struct tp_tcp *t)
{
	return t->nqueued;
}

int tp_tcp_queued_to(const struct tp_tcp *t, int peer)
{
	return t->c[peer].q.head != NULL;
}

int tp_tcp_rx_buffer_ok(const struct tp_tcp *t, int peer)
{
	int big = 0;

	if (t->c[peer].incap > IN_SMALL + 64)
		return 1;
	for (int i = 0; i < t->nact; i++)
		if (t->c[t->act[i]].incap > IN_SMALL + 64 && ++big >= TCP_BIG_BUFS)
			return 0;
	return 1;
}

size_t tp_tcp_frag_max(const struct tp_tcp *t)
{
	return t->frag ? t->frag : t->named ? TCP_FRAG_NAMED : TCP_FRAG;
}
