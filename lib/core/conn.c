/* lib/core/conn.c: framed connections: one input buffer, one output buffer, epoll-driven. */
#include "conn.h"
#include "core.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define HIGH_WATER (1u << 20)
#define LOW_WATER  (256u << 10)
#define DIRECT_MIN 4096 /* a frame this large with nothing queued is written at once */
#define FDS_MAX    16   /* descriptors carried by one sendmsg (and so got by one recvmsg) */

struct core_conn {
	core_ev_t *ev;
	int fd, failed, paused, closing, in_cb, dead, was_high;
	int64_t flush_timer; /* a write of the queue is due after this pass of the loop */
	core_conn_frame_f on_frame;
	core_conn_close_f on_close;
	core_conn_drain_f on_drain;
	void *arg;
	char *in;
	size_t inlen, incap;
	char *out;
	size_t outoff, outlen, outcap;
	uint64_t sent; /* bytes written since the start: where the queue begins */
	/* descriptor passing (unix sockets, core_conn_pass_fds): fds waiting to be sent, each
	 * with where its frame begins in the stream (never written before the fd), and fds
	 * received, oldest first, for the frames they came with to take */
	int pass_fds, nfds_in;
	struct fd_out {
		int fd;
		uint64_t at;
	} * fds_out;
	size_t nfds_out, fds_out_cap, fds_in_cap;
	int *fds_in;
};

static void conn_update(core_conn_t *c)
{
	unsigned e = 0;

	if (c->fd < 0)
		return;
	if (!c->paused && !c->closing)
		e |= CORE_EV_READ;
	if (c->outlen > c->outoff && !c->failed && !c->flush_timer)
		e |= CORE_EV_WRITE;
	core_ev_fd_mod(c->ev, c->fd, e);
}

static void conn_fail(core_conn_t *c, int err)
{
	if (c->closing)
		return;
	c->closing = 1;
	if (err)
		c->failed = 1;
	conn_update(c);
	if (c->on_close)
		c->on_close(c, err, c->arg);
}

/* write() of the queue, or sendmsg() carrying up to FDS_MAX of the waiting descriptors: the
 * receiver gets them with these bytes, which begin at or before the frame of each. With more
 * waiting, the bytes stop before the frame of the first one left, which goes next time. */
static ssize_t write_out(core_conn_t *c)
{
	struct iovec iov = {c->out + c->outoff, c->outlen - c->outoff};
	union {
		char buf[CMSG_SPACE(sizeof(int) * FDS_MAX)];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	size_t k = c->nfds_out < FDS_MAX ? c->nfds_out : FDS_MAX;

	if (k == 0)
		return write(c->fd, iov.iov_base, iov.iov_len);
	if (k < c->nfds_out) /* > 0: frames are in order, each at least a header long */
		iov.iov_len = (size_t)(c->fds_out[k].at - c->sent);
	memset(&u, 0, sizeof u);
	m.msg_control = u.buf;
	m.msg_controllen = CMSG_SPACE(sizeof(int) * k);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * k);
	for (size_t i = 0; i < k; i++)
		memcpy(CMSG_DATA(cm) + i * sizeof(int), &c->fds_out[i].fd, sizeof(int));
	ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL);
	if (n > 0) { /* the peer holds its own copies now */
		for (size_t i = 0; i < k; i++)
			close(c->fds_out[i].fd);
		c->nfds_out -= k;
		memmove(c->fds_out, c->fds_out + k, c->nfds_out * sizeof *c->fds_out);
	}
	return n;
}

/* Write the queue as far as the socket takes it without waiting: 0, or the errno of a write
 * that failed (the queue is left as it was). */
static int write_queue(core_conn_t *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = write_out(c);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0)
			return errno;
		c->outoff += (size_t)n;
		c->sent += (size_t)n;
	}
	if (c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	return 0;
}

static void conn_write(core_conn_t *c)
{
	int err = write_queue(c);

	if (err) {
		c->outoff = c->outlen = 0;
		conn_fail(c, err);
		return;
	}
	if (c->was_high && c->outlen - c->outoff < LOW_WATER) {
		c->was_high = 0;
		if (c->on_drain)
			c->on_drain(c, c->arg);
	}
}

/* After the pass of the loop in which frames were queued: write them together, directly.
 * Waiting for epoll to report the socket writable instead costs two epoll_ctl() and a pass
 * of the loop for each batch (four or five syscalls a rank when an agent starts a job);
 * only what the socket does not take now waits for EPOLLOUT. */
static void on_flush(core_ev_t *ev, void *arg)
{
	core_conn_t *c = arg;

	c->flush_timer = 0;
	c->in_cb = 1;
	if (!c->failed && c->fd >= 0)
		conn_write(c);
	c->in_cb = 0;
	if (c->dead) {
		free(c);
		return;
	}
	conn_update(c);
}

/* Frames were queued: have them written after this pass of the loop. */
static void flush_later(core_conn_t *c)
{
	if (!c->flush_timer && c->outlen > c->outoff && !c->failed) {
		c->flush_timer = core_ev_timer(c->ev, 0, on_flush, c);
		if (c->flush_timer < 0)
			c->flush_timer = 0; /* no memory: EPOLLOUT it is */
	}
	conn_update(c);
}

static uint32_t get32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static void conn_dispatch(core_conn_t *c)
{
	size_t off = 0;

	while (!c->dead && !c->closing && !c->paused && c->inlen - off >= CORE_FRAME_HDR) {
		uint32_t len = get32(c->in + off);
		unsigned type = (unsigned char)c->in[off + 4] | (unsigned char)c->in[off + 5] << 8;
		if (len > CORE_FRAME_MAX) {
			conn_fail(c, EMSGSIZE);
			return;
		}
		if (c->inlen - off < CORE_FRAME_HDR + len)
			break;
		c->on_frame(c, type, c->in + off + CORE_FRAME_HDR, len, c->arg);
		off += CORE_FRAME_HDR + len;
	}
	if (!c->dead && off) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
}

/* Keep a received descriptor for core_conn_take_fd. 0, or -1 (closed it: no memory). */
static int keep_fd(core_conn_t *c, int fd)
{
	if ((size_t)c->nfds_in == c->fds_in_cap) {
		size_t cap = c->fds_in_cap ? c->fds_in_cap * 2 : 8;
		int *p = realloc(c->fds_in, cap * sizeof *p);
		if (!p) {
			close(fd);
			return -1;
		}
		c->fds_in = p;
		c->fds_in_cap = cap;
	}
	c->fds_in[c->nfds_in++] = fd;
	return 0;
}

/* recvmsg into the input buffer, keeping the descriptors that came along. A descriptor lost
 * (no fd left for it: MSG_CTRUNC, or no memory) would hand the next frames the wrong ones,
 * so that fails the connection: -1 with errno. */
static ssize_t recv_fds(core_conn_t *c)
{
	struct iovec iov = {c->in + c->inlen, c->incap - c->inlen};
	union {
		char buf[CMSG_SPACE(sizeof(int) * FDS_MAX)];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	ssize_t n = recvmsg(c->fd, &m, MSG_CMSG_CLOEXEC);

	int lost = 0;

	if (n < 0)
		return n;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
			if (keep_fd(c, fd) < 0)
				lost = ENOMEM;
		}
	}
	if (m.msg_flags & MSG_CTRUNC)
		lost = EMFILE;
	if (lost) {
		errno = lost;
		return -1;
	}
	return n;
}

static int conn_read(core_conn_t *c)
{
	if (c->incap - c->inlen < 65536) {
		size_t need = c->inlen + 65536, cap = c->incap ? c->incap : 65536;
		while (cap < need)
			cap *= 2;
		char *p = realloc(c->in, cap);
		if (!p)
			return -1;
		c->in = p;
		c->incap = cap;
	}
	ssize_t n = c->pass_fds ? recv_fds(c) : read(c->fd, c->in + c->inlen, c->incap - c->inlen);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (n <= 0)
		return n == 0 ? 0 : -1;
	c->inlen += (size_t)n;
	return 1;
}

static void on_io(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	core_conn_t *c = arg;

	c->in_cb = 1;
	if (c->flush_timer) { /* due after this pass anyway: write before reading, as ever */
		core_ev_timer_cancel(ev, c->flush_timer);
		c->flush_timer = 0;
		events |= CORE_EV_WRITE;
	}
	if ((events & CORE_EV_WRITE) && !c->failed)
		conn_write(c);
	if ((events & CORE_EV_READ) && !c->paused && !c->closing && !c->dead) {
		int r = conn_read(c);
		conn_dispatch(c);
		if (r <= 0 && !c->dead)
			conn_fail(c, r == 0 ? 0 : (errno ? errno : EIO));
	}
	c->in_cb = 0;
	if (c->dead) {
		free(c);
		return;
	}
	conn_update(c);
}

core_conn_t *core_conn_create(core_ev_t *ev, int fd, core_conn_frame_f on_frame,
                              core_conn_close_f on_close, void *arg)
{
	core_conn_t *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	*c = (core_conn_t){
	    .ev = ev, .fd = fd, .on_frame = on_frame, .on_close = on_close, .arg = arg};
	if (core_fd_nonblock(fd, 1) < 0 || core_ev_fd(ev, fd, CORE_EV_READ, on_io, c) < 0) {
		free(c);
		return NULL;
	}
	return c;
}

void core_conn_destroy(core_conn_t *c)
{
	int saved = errno;

	if (!c)
		return;
	if (c->flush_timer) {
		core_ev_timer_cancel(c->ev, c->flush_timer);
		c->flush_timer = 0;
	}
	if (c->fd >= 0) {
		core_ev_fd_del(c->ev, c->fd);
		close(c->fd);
		c->fd = -1;
	}
	free(c->in);
	free(c->out);
	c->in = c->out = NULL;
	for (size_t i = 0; i < c->nfds_out; i++)
		close(c->fds_out[i].fd);
	free(c->fds_out);
	c->fds_out = NULL;
	for (int i = 0; i < c->nfds_in; i++)
		close(c->fds_in[i]);
	free(c->fds_in);
	c->fds_in = NULL;
	c->nfds_out = 0;
	c->nfds_in = 0;
	c->dead = 1;
	if (!c->in_cb)
		free(c);
	errno = saved;
}

static void put32(char *p, uint32_t v)
{
	p[0] = (char)(v & 0xff);
	p[1] = (char)(v >> 8 & 0xff);
	p[2] = (char)(v >> 16 & 0xff);
	p[3] = (char)(v >> 24 & 0xff);
}

/* Append the frame header h, a and b to the output queue, less the first `skip` bytes of
 * the frame (already written). 0, or -1 with errno. */
static int queue(core_conn_t *c, const char *h, const void *a, size_t alen, const void *b,
                 size_t blen, size_t skip)
{
	const struct {
		const void *p;
		size_t n;
	} part[3] = {{h, CORE_FRAME_HDR}, {a, alen}, {b, blen}};
	size_t len = CORE_FRAME_HDR + alen + blen - skip;

	if (c->outcap - c->outlen < len) {
		if (c->outoff > 0) {
			memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
			c->outlen -= c->outoff;
			c->outoff = 0;
		}
		size_t cap = c->outcap ? c->outcap : 65536;
		while (cap - c->outlen < len)
			cap *= 2;
		if (cap != c->outcap) {
			char *p = realloc(c->out, cap);
			if (!p)
				return -1;
			c->out = p;
			c->outcap = cap;
		}
	}
	for (int i = 0; i < 3; i++) {
		size_t k = skip < part[i].n ? skip : part[i].n;
		skip -= k;
		if (part[i].n > k)
			memcpy(c->out + c->outlen, (const char *)part[i].p + k, part[i].n - k);
		c->outlen += part[i].n - k;
	}
	return 0;
}

int core_conn_send(core_conn_t *c, unsigned type, const void *a, size_t alen, const void *b,
                   size_t blen)
{
	size_t len = alen + blen;

	if (c->failed || c->fd < 0) {
		errno = EPIPE;
		return -1;
	}
	if (len > CORE_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (c->outoff > 0 && c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	char h[CORE_FRAME_HDR];
	put32(h, (uint32_t)len);
	h[4] = (char)(type & 0xff);
	h[5] = (char)(type >> 8 & 0xff);
	h[6] = h[7] = 0;
	size_t done = 0;
	if (len >= DIRECT_MIN && c->outlen == 0) {
		/* a large frame (output forwarding) with nothing ahead of it: straight from the
		 * caller's bytes, one writev, no copy into the queue; only the rest is queued. An
		 * error is left for the next write from the event loop to find. */
		struct iovec iov[3] = {{h, CORE_FRAME_HDR}, {(void *)a, alen}, {(void *)b, blen}};
		ssize_t n;
		while ((n = writev(c->fd, iov, 3)) < 0 && errno == EINTR)
			;
		done = n > 0 ? (size_t)n : 0;
		c->sent += done;
		if (done == CORE_FRAME_HDR + len)
			return 0;
	}
	if (queue(c, h, a, alen, b, blen, done) < 0)
		return -1;
	if (c->outlen - c->outoff >= HIGH_WATER)
		c->was_high = 1;
	/* no write here: frames queued during one pass of the event loop leave together in one
	 * write() right after this pass */
	flush_later(c);
	return 0;
}

size_t core_conn_queued(const core_conn_t *c)
{
	return c->outlen - c->outoff;
}

int core_conn_congested(const core_conn_t *c)
{
	return c->outlen - c->outoff >= HIGH_WATER;
}

void core_conn_on_drain(core_conn_t *c, core_conn_drain_f cb)
{
	c->on_drain = cb;
}

void core_conn_pause(core_conn_t *c, int paused)
{
	if (c->paused == paused)
		return;
	c->paused = paused;
	conn_update(c);
	if (!paused && !c->in_cb) {
		c->in_cb = 1;
		conn_dispatch(c); /* frames that arrived while paused */
		c->in_cb = 0;
		if (c->dead)
			free(c);
	}
}

int core_conn_flush(core_conn_t *c, int timeout_ms)
{
	int64_t end = core_now_ms() + timeout_ms;

	while (c->outoff < c->outlen && !c->failed && c->fd >= 0) {
		int64_t left = end - core_now_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd p = {.fd = c->fd, .events = POLLOUT};
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -1;
		/* a failing write calls on_close, which may destroy the conn: hold it */
		int outer = c->in_cb;
		c->in_cb = 1;
		conn_write(c);
		c->in_cb = outer;
		if (c->dead) {
			if (!outer)
				free(c);
			errno = EPIPE;
			return -1;
		}
	}
	return c->failed ? -1 : 0;
}

int core_conn_fd(const core_conn_t *c)
{
	return c->fd;
}

void core_conn_pass_fds(core_conn_t *c)
{
	c->pass_fds = 1;
}

int core_conn_send_fd(core_conn_t *c, unsigned type, const void *a, size_t alen, int fd)
{
	if (!c->pass_fds) {
		errno = ENOTSUP;
		return -1;
	}
	if (c->failed || c->fd < 0) {
		errno = EPIPE;
		return -1;
	}
	if (c->nfds_out == c->fds_out_cap) {
		size_t cap = c->fds_out_cap ? c->fds_out_cap * 2 : 16;
		struct fd_out *p = realloc(c->fds_out, cap * sizeof *p);
		if (!p)
			return -1;
		c->fds_out = p;
		c->fds_out_cap = cap;
	}
	uint64_t at = c->sent + (c->outlen - c->outoff);
	char h[CORE_FRAME_HDR];
	put32(h, (uint32_t)alen);
	h[4] = (char)(type & 0xff);
	h[5] = (char)(type >> 8 & 0xff);
	h[6] = h[7] = 0;
	/* queued, never written directly: the next write from the queue begins at or before
	 * this frame, so the fd reaches the peer no later than the frame does */
	if (queue(c, h, a, alen, NULL, 0, 0) < 0)
		return -1;
	c->fds_out[c->nfds_out++] = (struct fd_out){fd, at};
	/* A sender that queues descriptors in a loop (an agent spawning ranks hands over two
	 * pipes a rank) would otherwise hold them all until the event loop runs: each one it
	 * holds is copied into every child it starts next and closed again at that child's exec,
	 * N^2/2 closes for a job of N (-n 64 of a static do-nothing rank: 0.29 ms less CPU with
	 * them sent 16 at a time). So a sendmsg's worth goes now. An error is left for the event
	 * loop's next write to find and report: no callback runs inside the caller's send. */
	if (c->nfds_out >= FDS_MAX)
		(void)write_queue(c);
	flush_later(c);
	return 0;
}

int core_conn_take_fd(core_conn_t *c)
{
	if (c->nfds_in == 0)
		return -1;
	int fd = c->fds_in[0];
	memmove(c->fds_in, c->fds_in + 1, (size_t)(c->nfds_in - 1) * sizeof *c->fds_in);
	c->nfds_in--;
	return fd;
}
