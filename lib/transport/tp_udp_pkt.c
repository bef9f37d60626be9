/* lib/transport/tp_udp_pkt.c: the udp path's datagrams: header and CRC32C, sending one (through
 * the fault injector of LAMKIT_UDP_FAULTS) or a run of them with one segmentation send. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tp_udp_int.h"

static double rnd(struct faults *f)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return (double)((f->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* "drop=P,corrupt=P,dup=P,reorder=P,delay=MS,seed=N". 0, or -1 with the bad item in err. */
int tp_udp_parse_faults(struct faults *f, const char *s, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *it;

	memset(f, 0, sizeof(*f));
	f->rng = 88172645463325252ull;
	if (!s || !*s)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(it, '='), *end;
		double v;
		if (!eq)
			goto bad;
		*eq = '\0';
		v = strtod(eq + 1, &end);
		if (*end || v < 0)
			goto bad;
		if (!strcmp(it, "drop"))
			f->drop = v;
		else if (!strcmp(it, "corrupt"))
			f->corrupt = v;
		else if (!strcmp(it, "dup"))
			f->dup = v;
		else if (!strcmp(it, "reorder"))
			f->reorder = v;
		else if (!strcmp(it, "delay"))
			f->delay_ms = (int)v;
		else if (!strcmp(it, "seed"))
			f->rng = (uint64_t)v * 0x9e3779b97f4a7c15ull + 1;
		else
			goto bad;
		if (strcmp(it, "seed") && strcmp(it, "delay") && v > 1)
			goto bad;
	}
	f->on = f->drop > 0 || f->corrupt > 0 || f->dup > 0 || f->reorder > 0 || f->delay_ms > 0;
	return 0;
bad:
	snprintf(err, errlen,
	         "udp: LAMKIT_UDP_FAULTS='%s': expected drop=P,corrupt=P,dup=P,reorder=P,delay=MS,"
	         "seed=N with 0 <= P <= 1",
	         s);
	return -1;
}

static int send_raw(int fd, const struct sockaddr_in *to, const struct iovec *iov, int n)
{
	struct msghdr m = {.msg_name = (void *)to,
	                   .msg_namelen = sizeof(*to),
	                   .msg_iov = (struct iovec *)iov,
	                   .msg_iovlen = (size_t)n};

	return sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -1 : 0;
}

static size_t gather(unsigned char *dst, const struct iovec *iov, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		memcpy(dst + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	return len;
}

static void dq_push(struct tp_udp *u, int fd, const struct sockaddr_in *to, const unsigned char *b,
                    size_t len, uint64_t at)
{
	struct delayed *d;

	if (u->ndq == 4096) {
		struct iovec v = {(void *)b, len};
		send_raw(fd, to, &v, 1);
		return;
	}
	d = &u->dq[u->ndq];
	d->buf = malloc(len);
	if (!d->buf)
		return;
	memcpy(d->buf, b, len);
	d->len = len;
	d->fd = fd;
	d->to = *to;
	d->at = at;
	u->ndq++;
}

void tp_udp_dq_flush(struct tp_udp *u, uint64_t now)
{
	for (int i = 0; i < u->ndq;) {
		struct delayed *d = &u->dq[i];
		if (d->at > now) {
			i++;
			continue;
		}
		struct iovec v = {d->buf, d->len};
		send_raw(d->fd, &d->to, &v, 1);
		free(d->buf);
		*d = u->dq[--u->ndq];
	}
}

/* Send one datagram through the fault injector. 0, or -1 with errno on a hard error. */
int tp_udp_xmit(struct tp_udp *u, struct faults *f, int fd, const struct sockaddr_in *to,
                const struct iovec *iov, int n, int thread)
{
	unsigned char *b;
	size_t len;
	int copies = 1;

	if (!f->on)
		goto plain;
	if (f->drop > 0 && rnd(f) < f->drop) {
		if (!thread)
			u->inj_drop++;
		return 0;
	}
	if (f->dup > 0 && rnd(f) < f->dup) {
		copies = 2;
		if (!thread)
			u->inj_dup++;
	}
	if (thread) {
		unsigned char tb[1024];
		len = gather(tb, iov, n);
		if (f->corrupt > 0 && rnd(f) < f->corrupt)
			tb[(size_t)(rnd(f) * (double)len) % len] ^=
			    (unsigned char)(1u << (int)(rnd(f) * 8));
		struct iovec v = {tb, len};
		while (copies--)
			send_raw(fd, to, &v, 1);
		return 0;
	}
	b = u->scratch;
	len = gather(b, iov, n);
	if (f->corrupt > 0 && rnd(f) < f->corrupt) {
		b[(size_t)(rnd(f) * (double)len) % len] ^= (unsigned char)(1u << (int)(rnd(f) * 8));
		u->inj_corrupt++;
	}
	while (copies--) {
		if (f->reorder > 0 && rnd(f) < f->reorder) {
			u->inj_reorder++;
			dq_push(u, fd, to, b, len, tp_now_us() + 200 + (uint64_t)(rnd(f) * 800));
		} else if (f->delay_ms > 0) {
			dq_push(u, fd, to, b, len, tp_now_us() + (uint64_t)f->delay_ms * 1000);
		} else {
			struct iovec v = {b, len};
			if (send_raw(fd, to, &v, 1) < 0 && errno != EAGAIN && errno != ENOBUFS)
				return -1;
		}
	}
	return 0;
plain:
	if (send_raw(fd, to, iov, n) < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR)
		return -1;
	return 0;
}

void tp_udp_seal(struct uhdr *h, const struct iovec *iov, int n)
{
	uint32_t c;

	h->crc = 0;
	c = tp_crc32c(0, h, sizeof(*h));
	for (int i = 1; i < n; i++)
		c = tp_crc32c(c, iov[i].iov_base, iov[i].iov_len);
	h->crc = c;
}

void tp_udp_hdr_init(struct tp_udp *u, struct uhdr *h, int type, int dst, const struct peer *p)
{
	memset(h, 0, sizeof(*h));
	h->magic = UDP_MAGIC;
	h->type = (uint8_t)type;
	h->job = u->job;
	h->src = u->me;
	h->dst = dst;
	h->ts = tp_now_us();
	h->cum = p->expect - 1;
	h->dlv = p->delivered;
}

/* Queue a sealed datagram in the batch when it fits the batch's segment size (the last one may
 * be shorter). 1 when queued, 0 when the caller must send it alone. */
int tp_udp_gso_add(struct tp_udp *u, int peer, int ri, const struct uhdr *h,
                   const struct iovec *iov, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (len * 2 > 65000)
		return 0; /* one datagram fills a segmentation send: nothing to gain */
	if (u->gb.n && (u->gb.peer != peer || u->gb.ri != ri || len > u->gb.seg || u->gb.shortseg ||
	                u->gb.n == GSO_MAX || u->gb.bytes + len > 65000))
		tp_udp_gso_flush(u);
	if (!u->gb.n) {
		u->gb.peer = peer;
		u->gb.ri = ri;
		u->gb.seg = len;
		u->gb.bytes = 0;
		u->gb.niov = 0;
	}
	u->gb.h[u->gb.n] = *h;
	u->gb.first[u->gb.n] = u->gb.niov;
	u->gb.iov[u->gb.niov++] = (struct iovec){&u->gb.h[u->gb.n], sizeof(*h)};
	for (int i = 1; i < n; i++)
		u->gb.iov[u->gb.niov++] = iov[i];
	u->gb.n++;
	u->gb.bytes += len;
	u->gb.shortseg = len < u->gb.seg;
	return 1;
}

/* Send the batch: one sendmsg whose payload the kernel cuts into gb.seg-byte datagrams. If the
 * kernel refuses segmentation, send them one by one and stop batching. */
void tp_udp_gso_flush(struct tp_udp *u)
{
	struct proute *r;
	char cbuf[CMSG_SPACE(sizeof(uint16_t))];
	struct msghdr m = {0};
	int fd;

	if (!u->gb.n)
		return;
	r = &u->p[u->gb.peer].r[u->gb.ri];
	fd = u->l[r->lr].fd;
	m.msg_name = &r->to;
	m.msg_namelen = sizeof(r->to);
	m.msg_iov = u->gb.iov;
	m.msg_iovlen = (size_t)u->gb.niov;
	if (u->gb.n > 1) {
		struct cmsghdr *cm;
		uint16_t seg = (uint16_t)u->gb.seg;
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
	}
	if (sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		int e = errno, peer = u->gb.peer, ri = u->gb.ri;
		if (u->gb.n > 1 &&
		    (e == EIO || e == EINVAL || e == ENOPROTOOPT || e == EOPNOTSUPP)) {
			/* no segmentation offload here: one datagram per call from now on */
			u->gb.on = 0;
			u->gb.first[u->gb.n] = u->gb.niov;
			for (int i = 0; i < u->gb.n; i++)
				send_raw(fd, &r->to, u->gb.iov + u->gb.first[i],
				         u->gb.first[i + 1] - u->gb.first[i]);
		} else if (e != EAGAIN && e != ENOBUFS && e != EINTR) {
			r->errors++;
			u->gb.n = u->gb.niov = 0;
			if (r->up && (e == ENETUNREACH || e == EHOSTUNREACH || e == ENETDOWN ||
			              e == EADDRNOTAVAIL || e == EPERM))
				tp_udp_route_down(u, peer, ri, strerror(e));
		}
	}
	u->gb.n = 0;
	u->gb.niov = 0;
}

/* The datagram size of a run received in one buffer (UDP_GRO), or 0 for a single datagram. */
size_t tp_udp_gro_size(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return v > 0 ? (size_t)v : 0;
		}
	return 0;
}
