/* lib/atollrun/atl_net.c: addresses, the listening port, all-pairs connections and the
 * connection test of libatollrun (plain blocking sockets driven by poll with deadlines). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "atl_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HELLO_MAGIC 0x41544c48u /* "ATLH": connector -> acceptor, then its ID */
#define PING_MAGIC  0x41544c50u /* "ATLP" */
#define PONG_MAGIC  0x41544c51u /* "ATLQ" */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int64_t atl_net_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_v4(const char *s, uint32_t *addr)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*addr = ntohl(a.s_addr);
	return 0;
}

int atl_net_my_addr(uint32_t *addr, char *err, size_t errlen)
{
	const char *e = getenv("ATOLLRUN_ADDR"), *ssh = getenv("SSH_CONNECTION");
	struct ifaddrs *ifa = NULL;
	char word[64];

	if (e && *e) {
		if (parse_v4(e, addr) < 0)
			return fail(err, errlen, "ATOLLRUN_ADDR '%.40s' is not an IPv4 address", e);
		return 0;
	}
	/* "client_ip client_port server_ip server_port": the address ssh reached us on */
	if (ssh && sscanf(ssh, "%*s %*s %63s", word) == 1 && parse_v4(word, addr) == 0)
		return 0;
	*addr = INADDR_LOOPBACK;
	if (getifaddrs(&ifa) < 0)
		return 0;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		*addr = ntohl(((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr);
		break;
	}
	freeifaddrs(ifa);
	return 0;
}

int atl_net_listen(int n, uint16_t *port, char *err, size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return fail(err, errlen, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, n < 128 ? 128 : n) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = errno;
		close(fd);
		return fail(err, errlen, "cannot open a TCP port: %s", strerror(e));
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* poll one fd for ev until deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short ev, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - atl_net_now_ms();
		struct pollfd p = {.fd = fd, .events = ev};
		if (left <= 0)
			return 0;
		int r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

static int io_all(int fd, void *buf, size_t len, int writing, int64_t deadline)
{
	char *p = buf;

	while (len > 0) {
		int w = wait_fd(fd, writing ? POLLOUT : POLLIN, deadline);
		if (w <= 0) {
			if (w == 0)
				errno = ETIMEDOUT;
			return -1;
		}
		ssize_t r = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int connect_to(uint64_t port, int64_t deadline)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_addr.s_addr = htonl((uint32_t)(port >> 16)),
	                         .sin_port = htons((uint16_t)(port & 0xffff))};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;
	socklen_t el = sizeof e;

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (errno != EINPROGRESS)
			goto bad;
		int w = wait_fd(fd, POLLOUT, deadline);
		if (w <= 0) {
			errno = w == 0 ? ETIMEDOUT : errno;
			goto bad;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			goto bad;
		if (e) {
			errno = e;
			goto bad;
		}
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
bad:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static void close_all(int n, int *fds)
{
	for (int j = 0; j < n; j++) {
		if (fds[j] >= 0)
			close(fds[j]);
		fds[j] = -1;
	}
}

static void port_str(uint64_t port, char *buf, size_t len)
{
	uint32_t a = (uint32_t)(port >> 16);
	snprintf(buf, len, "%u.%u.%u.%u:%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
	         (unsigned)(port & 0xffff));
}

/* Accept one connection from each higher ID: hello = magic, ID (network order). */
static int accept_higher(int me, int n, int lfd, int *fds, int64_t deadline, char *err,
                         size_t errlen)
{
	for (int k = me + 1; k < n; k++) {
		int w = wait_fd(lfd, POLLIN, deadline);
		if (w <= 0)
			return fail(err, errlen, "%d of the higher IDs did not connect in time",
			            n - k);
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) {
				k--;
				continue;
			}
			return fail(err, errlen, "accept: %s", strerror(errno));
		}
		uint32_t h[2];
		if (io_all(fd, h, sizeof h, 0, deadline) < 0 || ntohl(h[0]) != HELLO_MAGIC ||
		    (int)ntohl(h[1]) <= me || (int)ntohl(h[1]) >= n || fds[ntohl(h[1])] >= 0) {
			close(fd);
			return fail(err, errlen, "a connection to ID %d sent no valid hello", me);
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		fds[ntohl(h[1])] = fd;
	}
	return 0;
}

int atl_net_connect_all(int me, int n, const uint64_t *ports, int lfd, int *fds,
                        int64_t deadline_ms, char *err, size_t errlen)
{
	char where[32];

	for (int j = 0; j < n; j++)
		fds[j] = -1;
	for (int j = 0; j < me; j++) {
		uint32_t h[2] = {htonl(HELLO_MAGIC), htonl((uint32_t)me)};
		int fd = connect_to(ports[j], deadline_ms);
		if (fd < 0 || io_all(fd, h, sizeof h, 1, deadline_ms) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			close_all(n, fds);
			port_str(ports[j], where, sizeof where);
			return fail(err, errlen, "cannot connect to ID %d at %s: %s", j, where,
			            strerror(e));
		}
		fds[j] = fd;
	}
	if (accept_higher(me, n, lfd, fds, deadline_ms, err, errlen) < 0) {
		close_all(n, fds);
		return -1;
	}
	for (int j = 0; j < n; j++) /* handles are ordinary blocking sockets for the program */
		if (fds[j] >= 0)
			fcntl(fds[j], F_SETFL, fcntl(fds[j], F_GETFL) & ~O_NONBLOCK);
	return 0;
}

int atl_net_test_all(int me, int n, const int *fds, int64_t deadline_ms, char *err, size_t errlen)
{
	uint32_t m[2];

	/* 8-byte pings fit any socket buffer, so every send completes before any wait */
	for (int j = me + 1; j < n; j++) {
		m[0] = htonl(PING_MAGIC);
		m[1] = htonl((uint32_t)me);
		if (io_all(fds[j], m, sizeof m, 1, deadline_ms) < 0)
			return fail(err, errlen, "ping to ID %d: %s", j, strerror(errno));
	}
	for (int j = 0; j < me; j++) {
		if (io_all(fds[j], m, sizeof m, 0, deadline_ms) < 0)
			return fail(err, errlen, "no ping from ID %d: %s", j, strerror(errno));
		if (ntohl(m[0]) != PING_MAGIC || ntohl(m[1]) != (uint32_t)j)
			return fail(err, errlen, "a bad ping from ID %d", j);
		m[0] = htonl(PONG_MAGIC);
		m[1] = htonl((uint32_t)me);
		if (io_all(fds[j], m, sizeof m, 1, deadline_ms) < 0)
			return fail(err, errlen, "pong to ID %d: %s", j, strerror(errno));
	}
	for (int j = me + 1; j < n; j++) {
		if (io_all(fds[j], m, sizeof m, 0, deadline_ms) < 0)
			return fail(err, errlen, "no pong from ID %d: %s", j, strerror(errno));
		if (ntohl(m[0]) != PONG_MAGIC || ntohl(m[1]) != (uint32_t)j)
			return fail(err, errlen, "a bad pong from ID %d", j);
	}
	return 0;
}
