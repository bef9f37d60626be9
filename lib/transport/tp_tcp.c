/* lib/transport/tp_tcp.c: tcp path: lazy connections from KVS business cards, framed fragments.
 * This file: the path's lifetime, its interface (tp_internal.h) and progress (which connection
 * to read or write, the listener); the rest is in tp_tcp_conn.c (connecting, accepting, HELLO),
 * tp_tcp_frame.c (sending and receiving frames) and tp_tcp_bye.c (ending a connection to another
 * job in order), sharing tp_tcp_int.h; business cards in tp_tcp_addr.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp_tcp_int.h"

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

#define SCAN_MAX   8    /* up to this many connections: recv each directly, no poll() */
#define CONNECT_MS 3000 /* default bound of one connect attempt */
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
/* Connections whose buffer may grow to a whole fragment for the layer above's multi-fragment
 * messages (tp_tcp_rx_buffer_ok): at most 16 MiB a process. */
#define TCP_BIG_BUFS 16

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
void tp_tcp_conn_set(struct tp_tcp *t, int peer, int fd, enum cstate st)
{
	struct conn *c = &t->c[peer];

	if (c->fd >= 0)
		close(c->fd);
	else
		t->act[c->act = t->nact++] = peer;
	c->fd = fd;
	c->st = st;
	c->gen++;
	c->bye_in = c->eof = c->shut = 0;
	c->ackn = 0;
	c->inlen = 0;
	c->dst = NULL;
	c->refused = 0;
	c->hint = 0;
	c->nsmall = 0;
}

/* Close peer's socket and drop it from the active list (the last entry takes its place). */
void tp_tcp_conn_close(struct tp_tcp *t, int peer, enum cstate st)
{
	struct conn *c = &t->c[peer];

	if (c->fd >= 0) {
		close(c->fd);
		t->act[c->act] = t->act[--t->nact];
		t->c[t->act[c->act]].act = c->act;
	}
	c->fd = -1;
	c->st = st;
	c->gen++;
	c->inlen = 0;
	c->dst = NULL;
	c->refused = 0;
	c->bye_in = c->eof = c->shut = 0;
}

int tp_tcp_connected(const struct tp_tcp *t, int peer)
{
	return t->c[peer].fd >= 0;
}

/* The connection to peer failed (errno says why): one line in tp_error, EPIPE. */
int tp_tcp_fail_peer(struct tp_tcp *t, int peer)
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

/* ---- progress ---- */

/* Read and write what peer's connection allows; `rev` is poll's answer, or ~0 to just try. */
static int handle(struct tp_tcp *t, int peer, short rev)
{
	struct conn *c = &t->c[peer];
	unsigned gen = c->gen;
	int n = 0, k;

	if (c->st == C_HELLO)
		return rev ? tp_tcp_read_ack(t, peer) : 0;
	if (rev & (POLLIN | POLLHUP | POLLERR)) {
		k = tp_tcp_read_frames(t, c, peer);
		if (k < 0)
			return -1;
		n += k;
		if (c->gen != gen) /* closed under us (a multipath failover): dealt with */
			return n;
		if (c->eof) {
			tp_tcp_conn_close(t, peer, C_NONE);
			return n;
		}
		if (c->bye_in) { /* the peer released us: answer BYE, and end it in order */
			tp_shmx_bye(t->tp, peer);
			tp_tcp_linger(t, peer);
			return n + 1;
		}
	}
	if (c->q.head) {
		k = tp_tcp_push(t, c);
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
			return tp_tcp_fail_peer(t, t->pfd_rank[i]);
		}
		n += k;
	}
	while (t->pfd[0].revents && (k = tp_tcp_accept_one(t)) > 0)
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
	int n = t->nlg ? tp_tcp_poll_linger(t) : 0, k;

	if (t->nact > SCAN_MAX)
		return n + poll_many(t);
	/* Few connections: a recv on each costs no more than a poll() and saves one per frame.
	 * Backwards, so that a connection closed (and replaced by the last) is not skipped. */
	for (int i = t->nact - 1; i >= 0; i--) {
		int r = t->act[i];
		if ((k = handle(t, r, (short)~0)) < 0) {
			if (failover(t, r))
				continue;
			return tp_tcp_fail_peer(t, r);
		}
		n += k;
	}
	/* The listener is looked at on every 16th poll, with or without connections, and through
	 * poll(): an accept4 that finds nothing costs 3.5-4 us here (the kernel makes and frees a
	 * socket for it), a poll() of the one descriptor 0.3. A rank whose peers all sit on its
	 * node still listens (another job may connect), and accepting on each of its polls put
	 * accept4 in 7 % of the CPU of MPI_Comm_spawn of 32 children on 2 cores (perf). */
	if ((++t->calls & 15) == 0 && listener_ready(t))
		while ((k = tp_tcp_accept_one(t)) > 0)
			n += k;
	return n;
}

int tp_tcp_reach(struct tp_tcp *t, int peer)
{
	if (t->c[peer].st == C_NONE && tp_tcp_lingering_to(t, peer))
		t->c[peer].st = C_LATER;
	return t->c[peer].st == C_NONE ? tp_tcp_start_connect(t, peer) : 0;
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
