/* lib/boot/link.c: plain or secure frame links, and the few TCP calls the universe needs. */
#include "link.h"
#include "conn.h"
#include "core.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct boot_link {
	core_conn_t *plain;
	boot_sconn_t *sec;
	struct boot_link_cbs cbs;
	void *arg;
	char peer[128];
};

/* {==== plain */

static void p_frame(core_conn_t *c, unsigned type, const char *d, size_t len, void *arg)
{
	boot_link_t *l = arg;

	l->cbs.on_frame(l, type, d, len, l->arg);
}

static void p_close(core_conn_t *c, int err, void *arg)
{
	boot_link_t *l = arg;
	char why[256];

	if (err)
		snprintf(why, sizeof why, "%s: connection failed: %s", l->peer, strerror(err));
	else
		snprintf(why, sizeof why, "%s: connection closed by the peer", l->peer);
	l->cbs.on_close(l, err, why, l->arg);
}

static void p_drain(core_conn_t *c, void *arg)
{
	boot_link_t *l = arg;

	if (l->cbs.on_drain)
		l->cbs.on_drain(l, l->arg);
}

/* ====} */

/* {==== secure */

static void s_ready(boot_sconn_t *s, void *arg)
{
	boot_link_t *l = arg;

	if (l->cbs.on_ready)
		l->cbs.on_ready(l, l->arg);
}

static void s_frame(boot_sconn_t *s, unsigned type, const char *d, size_t len, void *arg)
{
	boot_link_t *l = arg;

	l->cbs.on_frame(l, type, d, len, l->arg);
}

static void s_close(boot_sconn_t *s, int err, const char *why, void *arg)
{
	boot_link_t *l = arg;

	l->cbs.on_close(l, err, why, l->arg);
}

static void s_drain(boot_sconn_t *s, void *arg)
{
	boot_link_t *l = arg;

	if (l->cbs.on_drain)
		l->cbs.on_drain(l, l->arg);
}

/* ====} */

static boot_link_t *link_alloc(const char *peer, const struct boot_link_cbs *cbs, void *arg)
{
	boot_link_t *l = calloc(1, sizeof *l);

	if (!l)
		return NULL;
	l->cbs = *cbs;
	l->arg = arg;
	snprintf(l->peer, sizeof l->peer, "%s", peer ? peer : "peer");
	return l;
}

boot_link_t *boot_link_plain(core_ev_t *ev, int fd, const char *peer,
                             const struct boot_link_cbs *cbs, void *arg)
{
	boot_link_t *l = link_alloc(peer, cbs, arg);

	if (!l)
		return NULL;
	l->plain = core_conn_create(ev, fd, p_frame, p_close, l);
	if (!l->plain) {
		free(l);
		return NULL;
	}
	core_conn_on_drain(l->plain, p_drain);
	core_conn_pass_fds(l->plain); /* a socketpair to a forked agent */
	return l;
}

boot_link_t *boot_link_secure(core_ev_t *ev, int fd, int initiator,
                              const unsigned char key[BOOT_KEY_LEN], const char *peer,
                              int handshake_ms, const struct boot_link_cbs *cbs, void *arg)
{
	boot_link_t *l = link_alloc(peer, cbs, arg);
	const struct boot_sconn_cbs scbs = {
	    .on_ready = s_ready, .on_frame = s_frame, .on_close = s_close};

	if (!l)
		return NULL;
	l->sec = boot_sconn_create(ev, fd, initiator, key, l->peer, handshake_ms, &scbs, l);
	if (!l->sec) {
		free(l);
		return NULL;
	}
	boot_sconn_on_drain(l->sec, s_drain);
	return l;
}

void boot_link_destroy(boot_link_t *l)
{
	if (!l)
		return;
	int e = errno;
	core_conn_destroy(l->plain);
	boot_sconn_destroy(l->sec);
	free(l);
	errno = e;
}

int boot_link_send(boot_link_t *l, unsigned type, const void *a, size_t alen, const void *b,
                   size_t blen)
{
	if (!l) {
		errno = EPIPE;
		return -1;
	}
	if (l->sec)
		return boot_sconn_send(l->sec, type, a, alen, b, blen);
	return core_conn_send(l->plain, type, a, alen, b, blen);
}

int boot_link_send_fd(boot_link_t *l, unsigned type, const void *a, size_t alen, int fd)
{
	if (!l || l->sec) {
		errno = !l ? EPIPE : ENOTSUP;
		return -1;
	}
	return core_conn_send_fd(l->plain, type, a, alen, fd);
}

int boot_link_take_fd(boot_link_t *l)
{
	return l && l->plain ? core_conn_take_fd(l->plain) : -1;
}

int boot_link_ready(const boot_link_t *l)
{
	return l && (l->plain || boot_sconn_ready(l->sec));
}

size_t boot_link_queued(const boot_link_t *l)
{
	return !l ? 0 : l->sec ? boot_sconn_queued(l->sec) : core_conn_queued(l->plain);
}

int boot_link_congested(const boot_link_t *l)
{
	return !l ? 0 : l->sec ? boot_sconn_congested(l->sec) : core_conn_congested(l->plain);
}

void boot_link_pause(boot_link_t *l, int paused)
{
	if (l && l->sec)
		boot_sconn_pause(l->sec, paused);
	else if (l)
		core_conn_pause(l->plain, paused);
}

int boot_link_flush(boot_link_t *l, int timeout_ms)
{
	if (!l)
		return 0;
	return l->sec ? boot_sconn_flush(l->sec, timeout_ms)
	              : core_conn_flush(l->plain, timeout_ms);
}

int boot_link_shutdown_write(boot_link_t *l)
{
	int fd = boot_link_fd(l);

	if (fd < 0) {
		errno = EPIPE;
		return -1;
	}
	return shutdown(fd, SHUT_WR);
}

int boot_link_fd(const boot_link_t *l)
{
	return !l ? -1 : l->sec ? boot_sconn_fd(l->sec) : core_conn_fd(l->plain);
}

const char *boot_link_peer(const boot_link_t *l)
{
	return l ? l->peer : "";
}

void boot_link_set_arg(boot_link_t *l, void *arg)
{
	l->arg = arg;
}

void *boot_link_arg(const boot_link_t *l)
{
	return l->arg;
}

void boot_link_set_cbs(boot_link_t *l, const struct boot_link_cbs *cbs, void *arg)
{
	l->cbs = *cbs;
	l->arg = arg;
}

/* {==== TCP */

static int fill_addr(const char *addr, int port, struct sockaddr_storage *ss, socklen_t *sl)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*sl = sizeof *a4;
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*sl = sizeof *a6;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

int boot_tcp_connect(const char *addr, int port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1;

	if (fill_addr(addr, port, &ss, &sl) < 0)
		return core_errprintf(err, errlen, "%s: not a numeric address", addr);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return core_errprintf(err, errlen, "socket: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return core_errprintf(err, errlen, "connect %s:%d: %s", addr, port, strerror(e));
	}
	return fd;
}

int boot_tcp_connect_wait(const char *addr, int port, int timeout_ms, char *err, size_t errlen)
{
	int fd = boot_tcp_connect(addr, port, err, errlen);

	if (fd < 0)
		return -1;
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int64_t end = core_now_ms() + timeout_ms;
	for (;;) {
		int64_t left = end - core_now_ms();
		int n = poll(&p, 1, left > 0 ? (int)left : 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return core_errprintf(err, errlen, "connect %s:%d: no answer within %d ms",
			                      addr, port, timeout_ms);
		}
		break;
	}
	int e = 0;
	socklen_t el = sizeof e;
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
	if (e) {
		close(fd);
		return core_errprintf(err, errlen, "connect %s:%d: %s", addr, port, strerror(e));
	}
	core_fd_nonblock(fd, 0);
	return fd;
}

int boot_tcp_listen(int *port, char *err, size_t errlen)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)*port)};
	socklen_t al = sizeof a;
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return core_errprintf(err, errlen, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	/* accepted sockets inherit it: without it an agent's second small frame in a row (a
	 * rank's exit, then JOB_DONE) waited for the controller's delayed ACK, 40 ms a job */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		int e = errno;
		close(fd);
		return core_errprintf(err, errlen, "listen on port %d: %s", *port, strerror(e));
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static void fmt_sa(const struct sockaddr_storage *ss, char *buf, size_t len, int with_port)
{
	char a[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a4->sin_addr, a, sizeof a);
		port = ntohs(a4->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a6->sin6_addr, a, sizeof a);
		port = ntohs(a6->sin6_port);
	}
	if (with_port)
		snprintf(buf, len, "%s:%d", a, port);
	else
		snprintf(buf, len, "%s", a);
}

void boot_tcp_peer(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl = sizeof ss;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(buf, len, "?");
		return;
	}
	fmt_sa(&ss, buf, len, 1);
}

int boot_tcp_peer_addr(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl = sizeof ss;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	fmt_sa(&ss, buf, len, 0);
	return 0;
}

/* ====} */
