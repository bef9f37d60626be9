/* lib/transport/tp_tcp_conn.c: the tcp path's connections: connecting from a business card
 * (bounded, address by address), HELLO (HELLO_DYN to a process of another job, "lktr" after a
 * multipath path was given up), accepting and choosing between two connects made at once, the
 * answer, and the socket options (doc/PROTOCOL-mpi-wire.md sections 3, 7.4 and 8). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tp_tcp_int.h"

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
int tp_tcp_start_connect(struct tp_tcp *t, int peer)
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
	tp_tcp_conn_set(t, peer, fd, C_HELLO);
	return 0;
}

/* ---- accepting ---- */

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
int tp_tcp_accept_one(struct tp_tcp *t)
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
		tp_tcp_linger(t, p);
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
	tp_tcp_conn_set(t, p, fd, C_UP); /* our own attempt, if any, loses to the lower rank's */
	return 1;
}

int tp_tcp_read_ack(struct tp_tcp *t, int peer)
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
		return tp_tcp_push(t, c) < 0 ? -1 : 1;
	}
	tp_tcp_conn_close(t, peer, C_WAITPEER); /* the peer's own connection to us wins */
	return 1;
}
