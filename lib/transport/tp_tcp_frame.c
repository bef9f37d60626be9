/* lib/transport/tp_tcp_frame.c: the tcp path's frames {u32 hlen, u32 len, hdr, payload}:
 * sending (at once when nothing is queued, else queued and pushed as the socket takes it) and
 * receiving (a buffer per connection, large payloads read up to their end or straight into the
 * place the layer above names: doc/PROTOCOL-mpi-wire.md section 3). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "tp_tcp_int.h"

/* A frame up to this many bytes (length words, header, payload) is copied into one buffer and
 * sent with send() rather than sendmsg() of three pieces: on loopback (AMD EPYC, 2 vCPUs, spinning
 * ping-pong of 33-byte frames, 6 paired runs) a half round trip took 3.93-4.03 us instead of
 * 4.21-4.25; 0.25-0.3 us up to 512 B of payload, 0.05 at 1 KiB, nothing at 4 KiB. */
#define TCP_FLAT 640

/* ---- sending ---- */

/* Write as much of the queue as the socket takes. Returns fragments finished, -1 on error. */
int tp_tcp_push(struct tp_tcp *t, struct conn *c)
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
	if (c->st == C_NONE && peer >= t->tp->cfg.size && tp_tcp_lingering_to(t, peer))
		c->st = C_LATER; /* connect once the ending one has ended */
	if (c->st == C_NONE && tp_tcp_start_connect(t, peer) < 0)
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
			return tp_tcp_fail_peer(t, peer);
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
	unsigned gen = c->gen;
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
		/* the layer above's answer to it failed on this connection, which was given up
		 * (tp_tcp_forget emptied the buffer): what followed in it is not ours to hand up,
		 * and a partial frame at its end would be read past the end. The peer, reset,
		 * sends what we did not acknowledge again over udp (section 7.4) */
		if (c->gen != gen)
			return n;
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
int tp_tcp_read_frames(struct tp_tcp *t, struct conn *c, int peer)
{
	unsigned gen = c->gen;
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
				if (c->gen != gen)
					return n; /* closed under us (deliver) */
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
		if (c->gen != gen)
			return n + k; /* closed under us: its buffer is empty, its fd gone */
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
