/* lib/transport/tp_tcp.c: tcp path: lazy connections from KVS business cards, framed fragments. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tp_internal.h"

/*
 * Wire (doc/PROTOCOL-mpi-wire.md): the connecting side sends HELLO {u32 magic, i32 rank}; the
 * accepting side answers u32 1 (ACK, use this connection) or 0 (NACK, close it). Nothing else
 * is sent before the ACK. When both sides connect at once the connection opened by the lower
 * rank wins. Then frames {u32 hlen, u32 len, hdr, payload} in host byte order (one host ABI).
 */

#define TCP_MAGIC 0x6c6b7463u /* "lktc" */

enum cstate { C_NONE, C_HELLO, C_WAITPEER, C_UP };

struct conn {
	int fd;
	enum cstate st;
	struct tp_fifo q;
	unsigned ackn;
	unsigned char ackb[4];
	uint32_t pre[2]; /* incoming frame prefix */
	size_t pren;     /* bytes of prefix read */
	char *buf;       /* incoming hdr + payload */
	size_t bufcap, got;
};

struct tp_tcp {
	tp_t *tp;
	int lfd;
	struct conn *c; /* per peer rank */
	struct pollfd *pfd;
	int *pfd_rank;
	int nqueued;
};

static void pick_addr(char *out, size_t len)
{
	const char *e = getenv("LAMKIT_TCP_ADDR");
	struct ifaddrs *ifa, *i;

	snprintf(out, len, "127.0.0.1");
	if (e && *e) {
		snprintf(out, len, "%s", e);
		return;
	}
	if (getifaddrs(&ifa) < 0)
		return;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(void *)i->ifa_addr;
		if (!sin || sin->sin_family != AF_INET || ntohl(sin->sin_addr.s_addr) >> 24 == 127)
			continue;
		inet_ntop(AF_INET, &sin->sin_addr, out, (socklen_t)len);
		break;
	}
	freeifaddrs(ifa);
}

static int listen_and_publish(struct tp_tcp *t, char *err, size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	char host[64], key[32], card[96];

	t->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->lfd < 0 || bind(t->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(t->lfd, 128) < 0 || getsockname(t->lfd, (struct sockaddr *)&sa, &sl) < 0) {
		snprintf(err, errlen, "tcp listener: %s", strerror(errno));
		return -1;
	}
	pick_addr(host, sizeof(host));
	snprintf(card, sizeof(card), "%s:%d", host, ntohs(sa.sin_port));
	snprintf(key, sizeof(key), "lk-tcp-%d", t->tp->cfg.rank);
	if (t->tp->cfg.kvs.put(t->tp->cfg.kvs.arg, key, card) < 0) {
		snprintf(err, errlen, "tcp: cannot publish %s", key);
		return -1;
	}
	return 0;
}

struct tp_tcp *tp_tcp_create(tp_t *tp, char *err, size_t errlen)
{
	struct tp_tcp *t = calloc(1, sizeof(*t));
	size_t n = (size_t)tp->cfg.size;

	if (!t || !(t->c = calloc(n, sizeof(*t->c))) ||
	    !(t->pfd = calloc(n + 1, sizeof(*t->pfd))) ||
	    !(t->pfd_rank = calloc(n + 1, sizeof(int)))) {
		snprintf(err, errlen, "tcp: out of memory");
		tp_tcp_destroy(t);
		return NULL;
	}
	t->tp = tp;
	t->lfd = -1;
	for (size_t i = 0; i < n; i++)
		t->c[i].fd = -1;
	if (listen_and_publish(t, err, errlen) < 0) {
		tp_tcp_destroy(t);
		return NULL;
	}
	return t;
}

void tp_tcp_destroy(struct tp_tcp *t)
{
	int e = errno;

	if (!t)
		return;
	for (int i = 0; t->c && i < t->tp->cfg.size; i++) {
		struct tp_frag *f;
		if (t->c[i].fd >= 0)
			close(t->c[i].fd);
		while ((f = tp_fifo_pop(&t->c[i].q)))
			free(f);
		free(t->c[i].buf);
	}
	if (t->lfd >= 0)
		close(t->lfd);
	free(t->c);
	free(t->pfd);
	free(t->pfd_rank);
	free(t);
	errno = e;
}

static void tune(int fd)
{
	int one = 1, big = 4 << 20;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
}

static int set_timeouts(int fd, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -1;
	return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Blocking connect (bounded by SO_SNDTIMEO) and HELLO; then non-blocking, waiting for the ACK. */
static int start_connect(struct tp_tcp *t, int peer)
{
	char key[32], card[96], *colon;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	uint32_t hello[2] = {TCP_MAGIC, (uint32_t)t->tp->cfg.rank};
	struct conn *c = &t->c[peer];
	int fd;

	snprintf(key, sizeof(key), "lk-tcp-%d", peer);
	if (t->tp->cfg.kvs.get(t->tp->cfg.kvs.arg, key, card, sizeof(card)) < 0 ||
	    !(colon = strrchr(card, ':'))) {
		errno = EPIPE;
		return -1;
	}
	*colon = '\0';
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, card, &sa.sin_addr) != 1) {
		errno = EPIPE;
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (set_timeouts(fd, 10000) < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		errno = EPIPE;
		return -1;
	}
	tune(fd);
	c->fd = fd;
	c->st = C_HELLO;
	c->ackn = 0;
	return 0;
}

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
		w = writev(c->fd, iov + k, 3 - k);
		if (w < 0)
			return errno == EAGAIN || errno == EINTR ? n : -1;
		f->done += (size_t)w;
		if (f->done < total)
			return n;
		tp_fifo_pop(&c->q);
		t->nqueued--;
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
	int ref = len > 64 * 1024;
	size_t done = 0;

	if (len > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (c->st == C_NONE && start_connect(t, peer) < 0)
		return -1;
	if (c->st == C_UP && !c->q.head) {
		uint32_t pre[2] = {(uint32_t)hlen, (uint32_t)len};
		struct iovec iov[3] = {{pre, 8}, {(void *)hdr, hlen}, {(void *)data, len}};
		ssize_t w = writev(c->fd, iov, 3);

		if (w == (ssize_t)(8 + hlen + len))
			return 0;
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		done = w > 0 ? (size_t)w : 0;
	}
	f = tp_frag_new(hdr, hlen, data, len, ref, cookie);
	if (!f)
		return -1;
	f->done = done;
	tp_fifo_push(&c->q, f);
	t->nqueued++;
	return ref;
}

/* Adopt or refuse an accepted connection after reading its HELLO (bounded blocking read). */
static int accept_one(struct tp_tcp *t)
{
	uint32_t hello[2], ans;
	struct conn *c;
	int fd = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC), p, me = t->tp->cfg.rank;

	if (fd < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (set_timeouts(fd, 5000) < 0 || recv(fd, hello, 8, MSG_WAITALL) != 8 ||
	    hello[0] != TCP_MAGIC || (int)hello[1] < 0 || (int)hello[1] >= t->tp->cfg.size) {
		close(fd);
		return 0;
	}
	p = (int)hello[1];
	c = &t->c[p];
	ans = c->st == C_NONE || c->st == C_WAITPEER || (c->st == C_HELLO && p < me);
	if (send(fd, &ans, 4, MSG_NOSIGNAL) != 4 || !ans || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		return 0;
	}
	if (c->fd >= 0)
		close(c->fd); /* our own attempt loses to the lower rank's */
	tune(fd);
	c->fd = fd;
	c->st = C_UP;
	return 1;
}

static int read_ack(struct tp_tcp *t, struct conn *c)
{
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
	close(c->fd); /* the peer's own connection to us wins */
	c->fd = -1;
	c->st = C_WAITPEER;
	return 1;
}

/* Read whatever is available; deliver complete frames. */
static int read_frames(struct tp_tcp *t, struct conn *c, int peer)
{
	int n = 0;

	for (;;) {
		ssize_t r;

		if (c->pren < 8) {
			r = recv(c->fd, (char *)c->pre + c->pren, 8 - c->pren, 0);
		} else {
			size_t want = (size_t)c->pre[0] + c->pre[1];
			if (want > c->bufcap) {
				char *nb = realloc(c->buf, want);
				if (!nb)
					return -1;
				c->buf = nb;
				c->bufcap = want;
			}
			r = want > c->got ? recv(c->fd, c->buf + c->got, want - c->got, 0) : 0;
		}
		if (r < 0)
			return errno == EAGAIN || errno == EINTR ? n : -1;
		if (r == 0 && c->pren == 0) {
			close(c->fd); /* the peer finished */
			c->fd = -1;
			c->st = C_NONE;
			return n;
		}
		if (r == 0 && (c->pren < 8 || (size_t)c->pre[0] + c->pre[1] > c->got)) {
			errno = ECONNRESET;
			return -1;
		}
		if (c->pren < 8) {
			c->pren += (size_t)r;
			if (c->pren == 8 && c->pre[0] > TP_HDR_MAX) {
				errno = EPROTO;
				return -1;
			}
			if (c->pren < 8)
				continue;
		} else {
			c->got += (size_t)r;
		}
		if (c->pren == 8 && c->got == (size_t)c->pre[0] + c->pre[1]) {
			t->tp->cfg.ops.recv(t->tp->cfg.arg, peer, c->buf, c->pre[0],
			                    c->buf + c->pre[0], c->pre[1]);
			c->pren = 0;
			c->got = 0;
			n++;
		}
	}
}

static int handle(struct tp_tcp *t, int peer, short rev)
{
	struct conn *c = &t->c[peer];
	int n = 0, k;

	if (c->st == C_HELLO)
		return rev ? read_ack(t, c) : 0;
	if (rev & (POLLIN | POLLHUP | POLLERR)) {
		k = read_frames(t, c, peer);
		if (k < 0)
			return -1;
		n += k;
		if (c->fd < 0)
			return n;
	}
	if (c->q.head) {
		k = push(t, c);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

int tp_tcp_poll(struct tp_tcp *t)
{
	int np = 0, n = 0, k;

	t->pfd[np].fd = t->lfd;
	t->pfd[np++].events = POLLIN;
	for (int r = 0; r < t->tp->cfg.size; r++) {
		if (t->c[r].fd < 0)
			continue;
		t->pfd_rank[np] = r;
		t->pfd[np].fd = t->c[r].fd;
		t->pfd[np++].events = (short)(POLLIN | (t->c[r].q.head ? POLLOUT : 0));
	}
	if (poll(t->pfd, (nfds_t)np, 0) <= 0)
		return 0;
	for (int i = 1; i < np; i++) {
		if (!t->pfd[i].revents)
			continue;
		k = handle(t, t->pfd_rank[i], t->pfd[i].revents);
		if (k < 0) {
			errno = EPIPE;
			return -1;
		}
		n += k;
	}
	while (t->pfd[0].revents && (k = accept_one(t)) > 0)
		n += k;
	return n;
}

int tp_tcp_busy(const struct tp_tcp *t)
{
	return t->nqueued;
}
