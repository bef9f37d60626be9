/* lib/transport/tp_udp.c: the reliable multi-route udp path (LA-MPI's design, see
 * doc/PROTOCOL-mpi-wire.md section 5): one socket per local address ("route"), 64-bit sequence
 * numbers per (sender, receiver) pair, CRC32C over header and payload, specific and cumulative
 * ACKs, NACKs for corrupt datagrams, retransmission with truncated exponential backoff from the
 * measured RTT, striping over the routes of a peer in proportion to what each delivers, routes
 * marked down and their packets rebound, probed in the background and brought back. A small
 * thread answers route probes, so a rank that computes for minutes without calling MPI is still
 * known to be alive; it never touches the data path. */
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
#ifndef UDP_GRO
#define UDP_GRO 104 /* linux/udp.h: receive a run of datagrams in one buffer (Linux 5.0) */
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 /* linux/udp.h: generic segmentation offload (Linux 4.18) */
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#include <time.h>
#include <unistd.h>

#include "tp_internal.h"

#define UDP_MAGIC     0x6c6bu /* "lk" */
#define MAXR          8       /* routes per rank */
#define WIN           2048    /* packets in flight per peer (a power of two) */
#define RWIN          2048    /* packets held out of order per peer (== WIN) */
#define DUPTHRESH     3       /* later packets acknowledged on the same route: a hole is lost */
#define BATCH         32      /* datagrams per recvmmsg */
#define UDP_PAYLOAD   65507   /* largest IPv4 UDP payload */
#define RTO_MIN       1000    /* us */
#define RTO_INIT      20000   /* us, before the first RTT sample */
#define RTO_MAX       1000000 /* us: the truncation of the exponential backoff */
#define TIMEOUT_BURST 16      /* packets per peer resent at one timer tick */
#define PTO_MIN       200     /* us: the tail probe's shortest wait (2 RTT + 100 us, up to RTO) */
#define PROBE_EVERY   50000   /* us between probes of an up route that is owed an answer */
#define DOWN_PROBE    200000  /* us between probes of a down route */
#define GSO_MAX       48      /* datagrams per UDP_SEGMENT send */
#define FRAG_MAX      (64 * 1024)
#define EAGER_MAX     (16 * 1024)

enum ptype { P_DATA = 1, P_ACK, P_NACK, P_PROBE, P_PROBEACK };
enum pflag { F_FIRST = 1, F_LAST = 2, F_FIN = 4 };

/* Every datagram starts with this header (host byte order, one ABI per job). crc covers the
 * header (with crc = 0) and everything after it. */
struct uhdr {
	uint32_t crc;
	uint16_t magic;
	uint8_t type, flags;
	uint32_t job;     /* hash of the job name: datagrams of other jobs are dropped */
	int32_t src, dst; /* job ranks */
	uint16_t nsend;   /* DATA: how many times this packet was sent (1 first) */
	uint8_t route;    /* sender's local route index */
	uint8_t hlen;     /* DATA: tp header bytes at the start of the fragment's stream */
	uint32_t len;     /* payload bytes after this header */
	uint32_t off;     /* DATA: offset of the payload in the fragment's stream (hdr + data) */
	uint32_t flen;    /* DATA: fragment payload bytes (stream = hlen + flen) */
	uint64_t seq;     /* DATA: sequence number; NACK: the seq asked for */
	uint64_t ts;      /* sender's clock (us) when sent; echoed by ACK and PROBEACK */
	uint64_t cum;     /* piggybacked: every seq <= cum from dst has been received */
	uint64_t dlv;     /* piggybacked: every seq <= dlv from dst has been delivered */
};

struct ackbody {
	uint64_t echo_seq, echo_ts;
	uint32_t echo_nsend, pad;
	uint64_t bits[RWIN / 64]; /* bit i: seq cum + 2 + i is held (cum + 1 is missing) */
};

struct probebody {
	uint32_t reply_ip; /* network order: where the answer goes (the prober's route) */
	uint16_t reply_port, dst_route;
};

/* One local socket. */
struct lroute {
	int fd, hbfd;
	struct in_addr addr; /* bound */
	uint32_t net, mask;  /* host order, for matching peers' addresses */
	int mtu;
	struct in_addr adv; /* advertised in the card (LAMKIT_UDP_ROUTES can point it at a relay) */
	int port, hbport;   /* advertised */
};

/* A route to one peer: a local socket and one of the peer's addresses. */
struct proute {
	int lr, pr; /* local route index, peer's route index */
	struct sockaddr_in to, hbto;
	int up;
	uint64_t owed_since; /* first send on it not answered yet (0: nothing owed) */
	uint64_t last_ok, last_probe, up_at;
	int inflight;
	double rate;     /* EWMA of packets acknowledged per ms: the striping weight */
	unsigned window; /* acks in the current rate window */
	uint64_t wstart;
	uint64_t txn, acked_txn; /* transmissions on this route; latest one acknowledged */
	uint64_t sent, retx, acked, downs, ups, sent_since_up, errors;
};

struct spkt {
	struct tp_frag *f; /* NULL for FIN */
	uint64_t txn;      /* its route's transmission number of the last send */
	uint64_t seq, tsent, deadline;
	uint32_t off, n;
	uint16_t nsend;
	uint8_t flags, route, acked;
};

struct held {
	uint64_t seq;
	struct uhdr h;
	unsigned char *data;
};

struct peer {
	int known; /* card read, routes built */
	int nr;
	struct proute r[MAXR];
	char host[64];
	/* sending */
	uint64_t next_seq, una;
	struct spkt *win;
	struct tp_fifo q;    /* fragments not fully acknowledged, in order */
	struct tp_frag *cur; /* first fragment with bytes not yet packetized */
	size_t inflight_bytes, win_bytes;
	size_t qbytes; /* payload bytes of the fragments in q (tp_udp_backlog) */
	int pkt;       /* payload bytes per datagram to this peer */
	uint64_t srtt, rttvar, rto;
	uint64_t last_heard, wait_since;
	int rr; /* round robin among down routes */
	/* receiving */
	uint64_t expect, delivered;
	struct held *hold;
	int nheld;
	uint64_t hi_held; /* highest seq held out of order (meaningful while nheld) */
	unsigned char *asmb;
	size_t asm_got, asm_need;
	unsigned char asm_hdr[TP_HDR_WIRE];
	unsigned asm_hlen;
	int ack_due, ack_route;
	unsigned ack_poll;
	uint64_t echo_seq, echo_ts;
	unsigned echo_nsend;
	/* end */
	int fin_sent, fin_rcvd;
	/* counters */
	uint64_t sent, retx, dup, corrupt, nack_sent, nack_rcvd, ooo, dlv_pkts, acks_sent;
	uint64_t retx_fast, retx_timer, retx_unblock, retx_rebind; /* why (NACKs: nack_rcvd) */
	uint64_t retx_probe;
	uint64_t probe_at; /* tail probe due (0: none armed) */
};

struct faults {
	double drop, corrupt, dup, reorder;
	int delay_ms;
	uint64_t rng;
	int on;
};

struct delayed {
	uint64_t at;
	int fd;
	struct sockaddr_in to;
	size_t len;
	unsigned char *buf;
};

struct tp_udp {
	tp_t *tp;
	int nl;
	struct lroute l[MAXR];
	struct peer *p;
	uint32_t job;
	int me, size;
	int reliable, debug, stats;
	uint64_t peer_timeout, down_after, t0;
	uint64_t seq0;
	uint64_t win_pkts; /* packets in flight per peer, at most WIN (LAMKIT_UDP_WINDOW) */
	int rcvbuf;
	char host[64];
	int nwait; /* fragments not fully packetized */
	unsigned polls;
	uint64_t next_timer;
	/* receive batch */
	unsigned char *rxb;
	size_t rxsz;
	struct mmsghdr mm[BATCH];
	int gro;        /* UDP_GRO on the route sockets: one read may hold a run of datagrams */
	int *act, nact; /* peers contacted so far (known): progress walks only these */
	/* buffers for packets held out of order, kept for reuse: malloc and free per packet cost a
	 * munmap with a cross-CPU TLB flush now and then (the probe thread makes us threaded) */
	unsigned char **hpool;
	int nhpool;
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];
	/* a run of new packets to one route, sent with one sendmsg (UDP_SEGMENT) */
	struct {
		int on, n, peer, ri, shortseg;
		size_t seg, bytes;
		struct uhdr h[GSO_MAX];
		struct iovec iov[GSO_MAX * 3];
		int niov, first[GSO_MAX + 1]; /* first[i]: packet i's first iovec */
	} gb;
	/* faults */
	struct faults fi;
	struct delayed *dq;
	int ndq;
	unsigned char *scratch;
	/* probe answering thread */
	pthread_t thr;
	int thr_on, wake[2];
	atomic_int stop, linger; /* linger: flushed; the thread re-acknowledges duplicates */
	int flushed;
	struct faults thr_fi;
	uint64_t inj_drop, inj_corrupt, inj_dup, inj_reorder;
};

/* Time since t (0 when t is later: timestamps taken after `now` was read). */
static uint64_t ago(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (!e || !*e)
		return dflt;
	v = strtoull(e, &end, 10);
	return *end ? dflt : (uint64_t)v;
}

static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;

	while (s && *s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* ---- fault injection (LAMKIT_UDP_FAULTS) ---- */

static double rnd(struct faults *f)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return (double)((f->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* "drop=P,corrupt=P,dup=P,reorder=P,delay=MS,seed=N". 0, or -1 with the bad item in err. */
static int parse_faults(struct faults *f, const char *s, char *err, size_t errlen)
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

/* ---- sending datagrams ---- */

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

static void dq_flush(struct tp_udp *u, uint64_t now)
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
static int xmit(struct tp_udp *u, struct faults *f, int fd, const struct sockaddr_in *to,
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

static void seal(struct uhdr *h, const struct iovec *iov, int n)
{
	uint32_t c;

	h->crc = 0;
	c = tp_crc32c(0, h, sizeof(*h));
	for (int i = 1; i < n; i++)
		c = tp_crc32c(c, iov[i].iov_base, iov[i].iov_len);
	h->crc = c;
}

static void hdr_init(struct tp_udp *u, struct uhdr *h, int type, int dst, const struct peer *p)
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

/* ---- cards and routes ---- */

static int iface_mtu(const char *name)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 1500;

	if (s < 0)
		return mtu;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu >= 576)
		mtu = ifr.ifr_mtu;
	close(s);
	return mtu;
}

/* Mask and MTU of the interface holding address a (host order), if any. */
static int find_iface(uint32_t a, uint32_t *mask, int *mtu)
{
	struct ifaddrs *ifa, *i;
	int found = 0;

	if (getifaddrs(&ifa) < 0)
		return 0;
	for (i = ifa; i && !found; i = i->ifa_next) {
		const struct sockaddr_in *sin = (const void *)i->ifa_addr;
		const struct sockaddr_in *msk = (const void *)i->ifa_netmask;
		if (!sin || sin->sin_family != AF_INET || !msk || ntohl(sin->sin_addr.s_addr) != a)
			continue;
		*mask = ntohl(msk->sin_addr.s_addr);
		*mtu = iface_mtu(i->ifa_name);
		found = 1;
	}
	freeifaddrs(ifa);
	return found;
}

static int open_sock(struct tp_udp *u, struct in_addr a, int port, int *bound)
{
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_addr = a, .sin_port = htons((uint16_t)port)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), big = 4 << 20,
	    got = 0;
	int off = IP_PMTUDISC_DONT;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &off, sizeof(off));
	if (u->gro) { /* a kernel without it just delivers datagrams one by one */
		int one = 1;
		if (setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) < 0)
			u->gro = 0;
	}
	sl = sizeof(got);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &sl) == 0 &&
	    (u->rcvbuf == 0 || got < u->rcvbuf))
		u->rcvbuf = got;
	sl = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	*bound = ntohs(sa.sin_port);
	return fd;
}

static int add_route(struct tp_udp *u, struct in_addr a, uint32_t mask, int mtu, int port,
                     struct in_addr adv, int advport, char *err, size_t errlen)
{
	struct lroute *l = &u->l[u->nl];
	int bp, hp;
	char ip[INET_ADDRSTRLEN];

	if (u->nl == MAXR)
		return 0;
	l->fd = open_sock(u, a, port, &bp);
	l->hbfd = l->fd < 0 ? -1 : open_sock(u, a, port ? port + 1 : 0, &hp);
	if (l->fd < 0 || l->hbfd < 0) {
		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		snprintf(err, errlen, "udp: rank %d: cannot bind %s:%d: %s", u->me, ip, port,
		         strerror(errno));
		if (l->fd >= 0)
			close(l->fd);
		return -1;
	}
	l->addr = a;
	l->mask = mask;
	l->net = ntohl(a.s_addr) & mask;
	l->mtu = mtu;
	l->adv = advport ? adv : a;
	l->port = advport ? advport : bp;
	l->hbport = advport ? advport + 1 : hp;
	u->nl++;
	return 0;
}

/* LAMKIT_UDP_ROUTES="bindip:port@advip:advport,...": bind there, advertise the other address
 * (a relay); the probe socket is port+1, advertised at advport+1. Without it: one route per
 * IPv4 interface that is up and running, loopback only when there is no other. */
static int open_routes(struct tp_udp *u, char *err, size_t errlen)
{
	const char *spec = getenv("LAMKIT_UDP_ROUTES");
	struct ifaddrs *ifa, *i;

	if (spec && *spec) {
		char buf[512], *save = NULL, *it;
		snprintf(buf, sizeof(buf), "%s", spec);
		for (it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
			char bip[64], aip[64];
			int bport = 0, aport = 0, mtu = 1500;
			struct in_addr b, a = {0};
			uint32_t mask = 0xffffff00u;
			int n = sscanf(it, "%63[0-9.]:%d@%63[0-9.]:%d", bip, &bport, aip, &aport);
			if ((n != 2 && n != 4) || inet_pton(AF_INET, bip, &b) != 1 ||
			    (n == 4 && inet_pton(AF_INET, aip, &a) != 1) || bport < 0 ||
			    bport > 65534 || aport < 0 || aport > 65534) {
				snprintf(err, errlen,
				         "udp: LAMKIT_UDP_ROUTES item '%s': expected "
				         "bindip:port[@advip:port]",
				         it);
				return -1;
			}
			find_iface(ntohl(b.s_addr), &mask, &mtu);
			if (add_route(u, b, mask, mtu, bport, a, n == 4 ? aport : 0, err, errlen) <
			    0)
				return -1;
		}
		return 0;
	}
	if (getifaddrs(&ifa) < 0) {
		snprintf(err, errlen, "udp: getifaddrs: %s", strerror(errno));
		return -1;
	}
	for (int lo = 0; lo < 2 && u->nl == 0; lo++)
		for (i = ifa; i; i = i->ifa_next) {
			const struct sockaddr_in *sin = (const void *)i->ifa_addr;
			const struct sockaddr_in *msk = (const void *)i->ifa_netmask;
			unsigned fl = i->ifa_flags;
			if (!sin || sin->sin_family != AF_INET || !msk ||
			    (fl & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING) ||
			    !(fl & IFF_LOOPBACK) != !lo)
				continue;
			if (add_route(u, sin->sin_addr, ntohl(msk->sin_addr.s_addr),
			              iface_mtu(i->ifa_name), 0, sin->sin_addr, 0, err,
			              errlen) < 0) {
				freeifaddrs(ifa);
				return -1;
			}
		}
	freeifaddrs(ifa);
	if (u->nl == 0) {
		snprintf(err, errlen, "udp: rank %d: no IPv4 interface is up", u->me);
		return -1;
	}
	return 0;
}

/* Card lk-udp-<r>: "HOST;NETID;RCVBUF;A:PORT:HBPORT/LEN/MTU,..." */
static int publish(struct tp_udp *u, char *err, size_t errlen)
{
	char card[TP_CARD_MAX], key[32], netid[64];
	size_t n;

	tp_netid(netid, sizeof(netid));
	n = (size_t)snprintf(card, sizeof(card), "%s;%s;%d;", u->host, netid, u->rcvbuf);
	for (int i = 0; i < u->nl && n < sizeof(card); i++) {
		char ip[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &u->l[i].adv, ip, sizeof(ip));
		n += (size_t)snprintf(card + n, sizeof(card) - n, "%s%s:%d:%d/%d/%d", i ? "," : "",
		                      ip, u->l[i].port, u->l[i].hbport, tp_plen_of(u->l[i].mask),
		                      u->l[i].mtu);
	}
	if (n >= sizeof(card)) {
		snprintf(err, errlen, "udp: business card too long");
		return -1;
	}
	snprintf(key, sizeof(key), "lk-udp-%d", u->me);
	if (u->debug)
		fprintf(stderr, "lamkit udp: rank %d: card %s=%s\n", u->me, key, card);
	if (u->tp->cfg.kvs.put(u->tp->cfg.kvs.arg, key, card) < 0) {
		snprintf(err, errlen, "udp: cannot publish %s", key);
		return -1;
	}
	return 0;
}

static void route_name(const struct tp_udp *u, const struct proute *r, char *out, size_t len)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &u->l[r->lr].addr, a, sizeof(a));
	inet_ntop(AF_INET, &r->to.sin_addr, b, sizeof(b));
	snprintf(out, len, "%s->%s:%d", a, b, ntohs(r->to.sin_port));
}

/* Read peer's card and pair each of our routes with the peer's address on the same subnet
 * (each peer address used once); when nothing matches, every local route to the peer's first
 * address (the kernel's routing decides). 0, or -1 with tp_error set. */
static int peer_init(struct tp_udp *u, int peer)
{
	struct peer *p = &u->p[peer];
	char key[32], card[TP_CARD_MAX + 8], *f[4], *save = NULL, *it;
	struct {
		struct in_addr a;
		int port, hb, plen, mtu, used;
	} pa[MAXR];
	int npa = 0, rcv = 0, minmtu = 65535;

	if (p->known)
		return 0;
	snprintf(key, sizeof(key), "lk-udp-%d", peer);
	if (u->tp->cfg.kvs.get(u->tp->cfg.kvs.arg, key, card, sizeof(card)) < 0)
		goto bad;
	f[0] = card;
	for (int k = 1; k < 4; k++) {
		f[k] = strchr(f[k - 1], ';');
		if (!f[k])
			goto bad;
		*f[k]++ = '\0';
	}
	snprintf(p->host, sizeof(p->host), "%.63s", f[0]);
	rcv = atoi(f[2]);
	for (it = strtok_r(f[3], ",", &save); it && npa < MAXR; it = strtok_r(NULL, ",", &save)) {
		char ip[64];
		if (sscanf(it, "%63[0-9.]:%d:%d/%d/%d", ip, &pa[npa].port, &pa[npa].hb,
		           &pa[npa].plen, &pa[npa].mtu) != 5 ||
		    inet_pton(AF_INET, ip, &pa[npa].a) != 1)
			goto bad;
		pa[npa].used = 0;
		npa++;
	}
	if (npa == 0)
		goto bad;
	for (int i = 0; i < u->nl; i++)
		for (int j = 0; j < npa; j++) {
			uint32_t a = ntohl(pa[j].a.s_addr);
			if (pa[j].used || (a & u->l[i].mask) != u->l[i].net)
				continue;
			struct proute *r = &p->r[p->nr++];
			memset(r, 0, sizeof(*r));
			r->lr = i;
			r->pr = j;
			pa[j].used = 1;
			break;
		}
	if (p->nr == 0)
		for (int i = 0; i < u->nl; i++) {
			memset(&p->r[p->nr], 0, sizeof(p->r[0]));
			p->r[p->nr].lr = i;
			p->r[p->nr++].pr = 0;
		}
	for (int k = 0; k < p->nr; k++) {
		struct proute *r = &p->r[k];
		int j = r->pr;
		r->to = (struct sockaddr_in){.sin_family = AF_INET,
		                             .sin_port = htons((uint16_t)pa[j].port),
		                             .sin_addr = pa[j].a};
		r->hbto = r->to;
		r->hbto.sin_port = htons((uint16_t)pa[j].hb);
		r->up = 1;
		r->rate = 1.0;
		if (pa[j].mtu < minmtu)
			minmtu = pa[j].mtu;
		if (u->l[r->lr].mtu < minmtu)
			minmtu = u->l[r->lr].mtu;
		if (u->debug) {
			char n[96];
			route_name(u, r, n, sizeof(n));
			fprintf(stderr, "lamkit udp: rank %d -> rank %d: route %d %s\n", u->me,
			        peer, k, n);
		}
	}
	{
		uint64_t cap = env_u64("LAMKIT_UDP_PKT", UDP_PAYLOAD);
		long pk = (long)minmtu - 28 - (long)sizeof(struct uhdr);
		if (pk > UDP_PAYLOAD - (long)sizeof(struct uhdr))
			pk = UDP_PAYLOAD - (long)sizeof(struct uhdr);
		if ((uint64_t)pk > cap)
			pk = (long)cap;
		if (pk < 256)
			pk = 256;
		p->pkt = (int)(pk & ~7L);
	}
	if (rcv <= 0)
		rcv = 208 * 1024;
	/* bytes in flight: half the peer's socket buffer per route, at most WIN packets */
	p->win_bytes = (size_t)rcv / 2 * (size_t)p->nr;
	p->win = calloc(WIN, sizeof(*p->win));
	p->hold = calloc(RWIN, sizeof(*p->hold));
	if (!p->win || !p->hold) {
		snprintf(u->tp->err, sizeof(u->tp->err), "udp: out of memory");
		errno = ENOMEM;
		return -1;
	}
	p->next_seq = p->una = u->seq0;
	p->expect = u->seq0;
	p->delivered = u->seq0 - 1;
	p->rto = RTO_INIT;
	for (int k = 0; k < p->nr; k++)
		p->r[k].wstart = tp_now_us();
	p->known = 1;
	u->act[u->nact++] = peer;
	return 0;
bad:
	snprintf(u->tp->err, sizeof(u->tp->err),
	         "udp: rank %d: no usable business card %s for rank %d", u->me, key, peer);
	errno = EPIPE;
	return -1;
}

/* ---- probe answering thread ---- */

static void send_ack(struct tp_udp *u, int peer, int thread);

/* After tp_udp_flush the main thread blocks in the job's final fence and reads nothing: a peer
 * whose last acknowledgement was lost retransmits, and this answers it from the thread. */
/* The datagram size of a run received in one buffer (UDP_GRO), or 0 for a single datagram. */
static size_t gro_size(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return v > 0 ? (size_t)v : 0;
		}
	return 0;
}

static void linger_datagram(struct tp_udp *u, unsigned char *b, size_t n, int lr)
{
	struct uhdr h;
	uint32_t c;
	struct peer *p;

	if (n < sizeof(h))
		return;
	memcpy(&h, b, sizeof(h));
	c = h.crc;
	memset(b, 0, 4);
	if (tp_crc32c(0, b, n) != c || h.magic != UDP_MAGIC || h.type != P_DATA ||
	    h.job != u->job || h.dst != u->me || h.src < 0 || h.src >= u->size || h.src == u->me ||
	    !u->p[h.src].known)
		return;
	p = &u->p[h.src];
	if (h.seq >= p->expect)
		return;
	p->dup++;
	p->ack_route = lr;
	p->echo_seq = h.seq;
	p->echo_ts = h.ts;
	p->echo_nsend = h.nsend;
	send_ack(u, h.src, 1);
}

static void *prober(void *arg)
{
	struct tp_udp *u = arg;
	struct pollfd pf[2 * MAXR + 1];
	unsigned char b[512];

	for (int i = 0; i < u->nl; i++)
		pf[i] = (struct pollfd){.fd = u->l[i].hbfd, .events = POLLIN};
	pf[u->nl] = (struct pollfd){.fd = u->wake[0], .events = POLLIN};
	int nfd = u->nl + 1;

	while (!atomic_load(&u->stop)) {
		if (nfd == u->nl + 1 && atomic_load(&u->linger)) {
			for (int i = 0; i < u->nl; i++)
				pf[nfd++] = (struct pollfd){.fd = u->l[i].fd, .events = POLLIN};
		}
		if (poll(pf, (nfds_t)nfd, 1000) <= 0)
			continue;
		if (pf[u->nl].revents) {
			char c[16];
			while (read(u->wake[0], c, sizeof(c)) > 0)
				;
		}
		for (int i = u->nl + 1; i < nfd; i++) {
			ssize_t n;
			struct iovec iov = {u->rxb, u->rxsz};
			struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
			for (;;) {
				m.msg_control = u->cm[0].b;
				m.msg_controllen = sizeof(u->cm[0].b);
				if ((n = recvmsg(pf[i].fd, &m, MSG_DONTWAIT)) <= 0)
					break;
				size_t seg = gro_size(&m), len = (size_t)n;
				for (size_t off = 0; off < len; off += seg ? seg : len)
					linger_datagram(u, u->rxb + off,
					                seg && len - off > seg ? seg : len - off,
					                i - u->nl - 1);
			}
		}
		for (int i = 0; i < u->nl; i++) {
			ssize_t n;
			while ((n = recv(pf[i].fd, b, sizeof(b), MSG_DONTWAIT)) > 0) {
				struct uhdr h;
				struct probebody pb;
				uint32_t c;
				if ((size_t)n != sizeof(h) + sizeof(pb))
					continue;
				memcpy(&h, b, sizeof(h));
				memcpy(&pb, b + sizeof(h), sizeof(pb));
				c = h.crc;
				((struct uhdr *)(void *)b)->crc = 0;
				if (tp_crc32c(0, b, (size_t)n) != c || h.magic != UDP_MAGIC ||
				    h.type != P_PROBE || h.job != u->job || h.dst != u->me)
					continue;
				struct sockaddr_in to = {.sin_family = AF_INET,
				                         .sin_port = pb.reply_port,
				                         .sin_addr = {pb.reply_ip}};
				h.type = P_PROBEACK;
				h.src = u->me;
				h.dst = (int32_t)((struct uhdr *)(void *)b)->src;
				pb.dst_route = (uint16_t)i;
				struct iovec v[2] = {{&h, sizeof(h)}, {&pb, sizeof(pb)}};
				seal(&h, v, 2);
				xmit(u, &u->thr_fi, u->l[i].fd, &to, v, 2, 1);
			}
		}
	}
	return NULL;
}

/* ---- lifetime ---- */

struct tp_udp *tp_udp_create(tp_t *tp, char *err, size_t errlen)
{
	struct tp_udp *u = calloc(1, sizeof(*u));
	const char *e;
	size_t rx;

	if (!u) {
		snprintf(err, errlen, "udp: out of memory");
		return NULL;
	}
	u->tp = tp;
	u->me = tp->cfg.rank;
	u->size = tp->cfg.size;
	u->wake[0] = u->wake[1] = -1;
	u->job = fnv32(tp->cfg.job ? tp->cfg.job : "");
	u->t0 = tp_now_us();
	e = getenv("LAMKIT_TP_DEBUG");
	u->debug = e && *e && strcmp(e, "0") != 0;
	e = getenv("LAMKIT_TP_STATS");
	u->stats = e && *e && strcmp(e, "0") != 0;
	u->reliable = env_u64("LAMKIT_UDP_RELIABLE", 1) != 0;
	u->peer_timeout = env_u64("LAMKIT_UDP_PEER_TIMEOUT_MS", 30000) * 1000;
	u->down_after = env_u64("LAMKIT_UDP_ROUTE_DOWN_MS", 300) * 1000;
	u->seq0 = env_u64("LAMKIT_UDP_SEQ0", 1);
	u->win_pkts = env_u64("LAMKIT_UDP_WINDOW", 1024);
	if (u->win_pkts < 16 || u->win_pkts > WIN)
		u->win_pkts = u->win_pkts < 16 ? 16 : WIN;
	if (u->seq0 == 0)
		u->seq0 = 1;
	if (gethostname(u->host, sizeof(u->host) - 1) < 0)
		snprintf(u->host, sizeof(u->host), "?");
	for (size_t k = 0; u->host[k]; k++)
		if (u->host[k] == ';' || u->host[k] == ',')
			u->host[k] = '_';
	if (parse_faults(&u->fi, getenv("LAMKIT_UDP_FAULTS"), err, errlen) < 0)
		goto fail;
	u->thr_fi = u->fi;
	u->gb.on = !u->fi.on && env_u64("LAMKIT_UDP_GSO", 1) != 0;
	u->thr_fi.rng ^= 0x5bd1e995u + (uint64_t)u->me;
	u->fi.rng += (uint64_t)u->me * 0x9e3779b97f4a7c15ull;
	u->p = calloc((size_t)u->size, sizeof(*u->p));
	u->act = calloc((size_t)u->size, sizeof(*u->act));
	u->dq = calloc(4096, sizeof(*u->dq));
	u->scratch = malloc(UDP_PAYLOAD + 64);
	if (!u->p || !u->act || !u->dq || !u->scratch) {
		snprintf(err, errlen, "udp: out of memory");
		goto fail;
	}
	u->gro = env_u64("LAMKIT_UDP_GRO", 0) != 0; /* measured: see doc section 5.4 */
	if (open_routes(u, err, errlen) < 0)
		goto fail;
	rx = 0;
	for (int i = 0; i < u->nl; i++)
		if ((size_t)u->l[i].mtu > rx)
			rx = (size_t)u->l[i].mtu;
	if (u->gro)
		rx = UDP_PAYLOAD + 64; /* a run of datagrams fills up to one maximal datagram */
	u->rxsz = rx > UDP_PAYLOAD ? UDP_PAYLOAD + 64 : rx + 64;
	u->rxb = malloc(u->rxsz * BATCH);
	if (!u->rxb) {
		snprintf(err, errlen, "udp: out of memory");
		goto fail;
	}
	if (publish(u, err, errlen) < 0)
		goto fail;
	if (pipe2(u->wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pthread_create(&u->thr, NULL, prober, u)) {
		snprintf(err, errlen, "udp: cannot start the probe thread");
		goto fail;
	}
	u->thr_on = 1;
	return u;
fail:
	tp_udp_destroy(u, 0);
	return NULL;
}

/* ---- the send side ---- */

static int pick_route(struct tp_udp *u, struct peer *p)
{
	int best = -1;
	double bv = 0;

	(void)u;
	for (int i = 0; i < p->nr; i++) {
		struct proute *r = &p->r[i];
		double v;
		if (!r->up)
			continue;
		v = (r->inflight + 1) / (r->rate > 0.05 ? r->rate : 0.05);
		if (best < 0 || v < bv) {
			best = i;
			bv = v;
		}
	}
	if (best < 0) /* every route down: keep trying them in turn */
		best = p->rr++ % p->nr;
	return best;
}

static void route_down(struct tp_udp *u, int peer, int ri, const char *why);
static void ack_one(struct tp_udp *u, struct peer *p, uint64_t seq, uint64_t now);

static void gso_flush(struct tp_udp *u);
static int gso_add(struct tp_udp *u, int peer, int ri, const struct uhdr *h,
                   const struct iovec *iov, int n);

/* The tail probe: when the last packets of a burst are lost, no later packet's acknowledgement
 * reveals it and only their timeout would (an RTO, at least 1 ms and often several under load).
 * So PTO after the newest send or the last progress, while nothing new is queued, the newest
 * unacknowledged packet goes again: its acknowledgement either ends the episode or, echoing
 * that transmission (so it counts as news from its route), shows the holes before it as lost. */
static uint64_t pto(const struct peer *p)
{
	uint64_t t = 2 * p->srtt + 100;

	if (t < PTO_MIN)
		t = PTO_MIN;
	return t < p->rto ? t : p->rto;
}

static void arm_probe(struct tp_udp *u, struct peer *p, uint64_t now)
{
	if (!p->srtt || p->una == p->next_seq) {
		p->probe_at = 0;
		return;
	}
	p->probe_at = now + pto(p);
	if (p->probe_at < u->next_timer)
		u->next_timer = p->probe_at;
}

/* (Re)send packet s to peer over route ri; with `batch`, new packets of one route may go out
 * together (gso_flush sends them). */
static int send_pkt(struct tp_udp *u, int peer, struct spkt *s, int ri, int batch)
{
	struct peer *p = &u->p[peer];
	struct proute *r = &p->r[ri];
	struct uhdr h;
	struct iovec iov[3];
	int n = 1;
	uint64_t now = tp_now_us(), back;

	hdr_init(u, &h, P_DATA, peer, p);
	h.seq = s->seq;
	h.flags = s->flags;
	h.route = (uint8_t)r->lr;
	h.nsend = ++s->nsend;
	h.off = s->off;
	h.len = s->n;
	if (s->f) {
		struct tp_frag *f = s->f;
		size_t a = s->off, e = (size_t)s->off + s->n;
		h.hlen = (uint8_t)f->hlen;
		h.flen = (uint32_t)f->len;
		if (a < f->hlen) {
			size_t k = (e < f->hlen ? e : f->hlen) - a;
			iov[n++] = (struct iovec){f->hdr + a, k};
			a += k;
		}
		if (a < e)
			iov[n++] = (struct iovec){(char *)f->data + (a - f->hlen), e - a};
	}
	iov[0] = (struct iovec){&h, sizeof(h)};
	if (u->reliable)
		seal(&h, iov, n);
	if (s->nsend > 1) {
		if (s->route != ri)
			p->r[s->route].inflight--, r->inflight++;
		r->retx++;
		p->retx++;
	} else {
		r->inflight++;
		p->sent++;
	}
	s->route = (uint8_t)ri;
	s->txn = ++r->txn;
	s->tsent = now;
	back = p->rto << (s->nsend - 1 < 6 ? s->nsend - 1 : 6);
	s->deadline = now + (back > RTO_MAX ? RTO_MAX : back);
	if (s->deadline < u->next_timer) /* an idle endpoint's next tick is up to 100 ms away */
		u->next_timer = s->deadline;
	if (s->nsend == 1)
		arm_probe(u, p, now);
	r->sent++;
	r->sent_since_up++;
	if (!r->owed_since)
		r->owed_since = now;
	if (!p->wait_since)
		p->wait_since = now;
	if (p->nheld == 0)
		p->ack_due = 0; /* the cumulative ack rode along */
	if (batch && u->gb.on && gso_add(u, peer, ri, &h, iov, n))
		return 0;
	if (xmit(u, &u->fi, u->l[r->lr].fd, &r->to, iov, n, 0) < 0) {
		r->errors++;
		if (r->up && (errno == ENETUNREACH || errno == EHOSTUNREACH || errno == ENETDOWN ||
		              errno == EADDRNOTAVAIL || errno == EPERM))
			route_down(u, peer, ri, strerror(errno));
	}
	return 0;
}

/* Queue a sealed datagram in the batch when it fits the batch's segment size (the last one may
 * be shorter). 1 when queued, 0 when the caller must send it alone. */
static int gso_add(struct tp_udp *u, int peer, int ri, const struct uhdr *h,
                   const struct iovec *iov, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (len * 2 > 65000)
		return 0; /* one datagram fills a segmentation send: nothing to gain */
	if (u->gb.n && (u->gb.peer != peer || u->gb.ri != ri || len > u->gb.seg || u->gb.shortseg ||
	                u->gb.n == GSO_MAX || u->gb.bytes + len > 65000))
		gso_flush(u);
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
static void gso_flush(struct tp_udp *u)
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
				route_down(u, peer, ri, strerror(e));
		}
	}
	u->gb.n = 0;
	u->gb.niov = 0;
}

/* Turn queued fragment bytes into packets while the window has room. */
static void fill_window(struct tp_udp *u, int peer)
{
	struct peer *p = &u->p[peer];

	while (p->cur) {
		struct tp_frag *f = p->cur;
		size_t total = f->hlen + f->len, n = total - f->done;
		struct spkt *s;

		if (p->next_seq - p->una >= u->win_pkts ||
		    (p->inflight_bytes > 0 && p->inflight_bytes + (size_t)p->pkt > p->win_bytes))
			break;
		if (n > (size_t)p->pkt)
			n = (size_t)p->pkt;
		s = &p->win[p->next_seq % WIN];
		memset(s, 0, sizeof(*s));
		s->f = f;
		s->seq = p->next_seq++;
		s->off = (uint32_t)f->done;
		s->n = (uint32_t)n;
		s->flags =
		    (uint8_t)((f->done == 0 ? F_FIRST : 0) | (f->done + n == total ? F_LAST : 0));
		f->done += n;
		f->pend++;
		p->inflight_bytes += n;
		if (f->done == total) {
			p->cur = f->next;
			u->nwait--;
		}
		/* a run of packets stays on one route while it fits one segmentation send: striping
		 * packet by packet would send every datagram alone (measured: 2.5x slower) */
		int ri = u->gb.on && u->gb.n && u->gb.peer == peer && p->r[u->gb.ri].up &&
		                 u->gb.n < GSO_MAX && u->gb.bytes + (size_t)p->pkt * 2 <= 65000
		             ? u->gb.ri
		             : pick_route(u, p);
		send_pkt(u, peer, s, ri, 1);
		if (!u->reliable) /* test knob: no acknowledgements, a packet is done when sent */
			ack_one(u, p, s->seq, s->tsent);
	}
	gso_flush(u);
}

static void complete_head(struct tp_udp *u, struct peer *p)
{
	struct tp_frag *f;

	while (p->una < p->next_seq && p->win[p->una % WIN].acked)
		p->una++;
	while ((f = p->q.head) && f != p->cur && f->pend == 0) {
		tp_fifo_pop(&p->q);
		p->qbytes -= f->len;
		tp_frag_done(u->tp, f);
	}
	if (p->una == p->next_seq)
		p->wait_since = 0;
}

int tp_udp_send(struct tp_udp *u, int peer, const void *hdr, size_t hlen, const void *data,
                size_t len, void *cookie)
{
	struct peer *p = &u->p[peer];
	struct tp_frag *f;
	int ref;

	if (len > UINT32_MAX / 2) {
		errno = EMSGSIZE;
		return -1;
	}
	if (!p->known && peer_init(u, peer) < 0)
		return -1;
	/* Payloads are kept until acknowledged: large ones by reference, and a message's last
	 * fragment also when earlier ones are still unacknowledged (ops.sent comes in order). */
	ref = len > EAGER_MAX || (cookie && p->q.head);
	f = tp_frag_new(hdr, hlen, data, len, ref, cookie);
	if (!f)
		return -1;
	f->pend = 0;
	tp_fifo_push(&p->q, f);
	p->qbytes += len;
	if (!p->cur)
		p->cur = f;
	u->nwait++;
	fill_window(u, peer);
	return ref;
}

/* ---- acknowledgements ---- */

static void ack_one(struct tp_udp *u, struct peer *p, uint64_t seq, uint64_t now)
{
	struct spkt *s;
	struct proute *r;

	if (seq < p->una || seq >= p->next_seq)
		return;
	s = &p->win[seq % WIN];
	if (s->acked || s->seq != seq)
		return;
	s->acked = 1;
	r = &p->r[s->route];
	/* Only a packet sent once says which transmission arrived (Karn): the acknowledgement of
	 * a resent one may be for its first copy on another route, and taking it as news from
	 * this route would declare the packets sent just before it here lost (fast_retransmit). */
	if (s->nsend == 1 && s->txn > r->acked_txn)
		r->acked_txn = s->txn;
	r->inflight--;
	r->acked++;
	r->window++;
	r->last_ok = now;
	r->owed_since = 0;
	p->inflight_bytes -= s->n;
	if (s->f)
		s->f->pend--;
	(void)u;
}

static void route_up(struct tp_udp *u, int peer, int ri)
{
	struct peer *p = &u->p[peer];
	struct proute *r = &p->r[ri];
	double sum = 0;
	int n = 0;

	if (r->up)
		return;
	for (int i = 0; i < p->nr; i++)
		if (p->r[i].up)
			sum += p->r[i].rate, n++;
	r->up = 1;
	r->ups++;
	r->up_at = tp_now_us();
	r->sent_since_up = 0;
	r->owed_since = 0;
	r->rate = n ? sum / n : 1.0;
	if (u->debug || u->stats) {
		char nm[96];
		route_name(u, r, nm, sizeof(nm));
		fprintf(stderr,
		        "lamkit udp: rank %d -> rank %d: route %d %s up at %.3f s (wall %.3f)\n",
		        u->me, peer, ri, nm, (double)(r->up_at - u->t0) / 1e6, wall_s());
	}
}

static void handle_cum(struct tp_udp *u, int peer, uint64_t cum, uint64_t now)
{
	struct peer *p = &u->p[peer];
	uint64_t end = cum + 1 < p->next_seq ? cum + 1 : p->next_seq;

	if (cum + 1 <= p->una)
		return;
	for (uint64_t s = p->una; s < end; s++)
		ack_one(u, p, s, now);
	complete_head(u, p);
	arm_probe(u, p, now); /* progress: the tail probe waits again */
}

static void rtt_sample(struct peer *p, uint64_t rtt)
{
	if (!p->srtt) {
		p->srtt = rtt;
		p->rttvar = rtt / 2;
	} else {
		uint64_t d = rtt > p->srtt ? rtt - p->srtt : p->srtt - rtt;
		p->rttvar = (3 * p->rttvar + d) / 4;
		p->srtt = (7 * p->srtt + rtt) / 8;
	}
	p->rto = p->srtt + 4 * p->rttvar;
	if (p->rto < RTO_MIN)
		p->rto = RTO_MIN;
	if (p->rto > RTO_MAX)
		p->rto = RTO_MAX;
}

/* A cumulative ack carried by data (ping-pong traffic needs no ACK datagrams): an RTT sample
 * from the newest packet it covers when that one was sent once (Karn). Without it the RTO stayed
 * at its 20 ms start and every loss in a ping-pong cost that much. */
static void cum_rtt(struct peer *p, uint64_t cum, uint64_t now)
{
	struct spkt *s;

	if (cum < p->una || cum >= p->next_seq)
		return;
	s = &p->win[cum % WIN];
	if (!s->acked && s->seq == cum && s->nsend == 1 && s->tsent <= now)
		rtt_sample(p, now - s->tsent);
}

/* Holes below packets the receiver holds were lost (or are late): send them again now rather
 * than at their timeout, once per round trip each. */
static void fast_retransmit(struct tp_udp *u, int peer, uint64_t cum, const struct ackbody *a,
                            uint64_t now)
{
	struct peer *p = &u->p[peer];
	uint64_t hi = 0, n = 0, reo = p->srtt / 4 > 50 ? p->srtt / 4 : 50;

	for (int w = RWIN / 64 - 1; w >= 0 && !hi; w--)
		if (a->bits[w])
			hi = cum + 2 + (uint64_t)(w * 64 + 63 - __builtin_clzll(a->bits[w]));
	if (!hi)
		return;
	/* Routes differ in delay, so packets overtake each other across routes all the time; on
	 * one route they do not. A hole is lost once DUPTHRESH packets sent after it on the same
	 * route were acknowledged (its new transmission then starts the count again). */
	for (uint64_t s = p->una; s < hi && s < p->next_seq && n < 256; s++) {
		struct spkt *sp = &p->win[s % WIN];
		if (sp->acked || sp->txn >= p->r[sp->route].acked_txn)
			continue;
		/* Fewer than DUPTHRESH later ones arrived (a burst's tail): lost too once it is a
		 * quarter round trip older than the newest arrival (time, not count, as RACK);
		 * until then its deadline is brought forward to that moment. */
		if (sp->txn + DUPTHRESH > p->r[sp->route].acked_txn && ago(now, sp->tsent) < reo) {
			if (sp->deadline > sp->tsent + reo) {
				sp->deadline = sp->tsent + reo;
				if (sp->deadline < u->next_timer)
					u->next_timer = sp->deadline;
			}
			continue;
		}
		p->retx_fast++;
		send_pkt(u, peer, sp, pick_route(u, p), 0);
		n++;
	}
}

static void on_ack(struct tp_udp *u, int peer, const struct uhdr *h, const struct ackbody *a,
                   uint64_t now)
{
	struct peer *p = &u->p[peer];

	/* The transmission the ack echoes arrived: news from its route even when it was a resend
	 * (Karn's doubt is about which copy an ack is for; the echo says). */
	if (a->echo_seq >= p->una && a->echo_seq < p->next_seq) {
		struct spkt *e = &p->win[a->echo_seq % WIN];
		if (e->seq == a->echo_seq && e->nsend == a->echo_nsend &&
		    e->txn > p->r[e->route].acked_txn)
			p->r[e->route].acked_txn = e->txn;
	}
	handle_cum(u, peer, h->cum, now);
	for (int w = 0; w < RWIN / 64; w++)
		for (uint64_t bits = a->bits[w]; bits; bits &= bits - 1)
			ack_one(u, p, h->cum + 2 + (uint64_t)(w * 64 + __builtin_ctzll(bits)), now);
	if (a->echo_ts && a->echo_ts <= now)
		rtt_sample(p, now - a->echo_ts);
	complete_head(u, p);
	fast_retransmit(u, peer, h->cum, a, now);
}

static int reply_route(struct tp_udp *u, struct peer *p, int lr)
{
	for (int i = 0; i < p->nr; i++)
		if (p->r[i].lr == lr && p->r[i].up)
			return i;
	return pick_route(u, p);
}

static void send_ack(struct tp_udp *u, int peer, int thread)
{
	struct peer *p = &u->p[peer];
	struct ackbody a;
	struct uhdr h;
	int ri = reply_route(u, p, p->ack_route);
	struct iovec iov[2] = {{&h, sizeof(h)}, {&a, sizeof(a)}};

	memset(&a, 0, sizeof(a));
	hdr_init(u, &h, P_ACK, peer, p);
	h.route = (uint8_t)p->r[ri].lr;
	h.len = sizeof(a);
	a.echo_seq = p->echo_seq;
	a.echo_ts = p->echo_ts;
	a.echo_nsend = p->echo_nsend;
	if (p->nheld)
		for (int i = 0; i < RWIN - 1 && p->expect + 1 + (uint64_t)i <= p->hi_held; i++) {
			uint64_t s = p->expect + 1 + (uint64_t)i;
			if (p->hold[s % RWIN].data && p->hold[s % RWIN].seq == s)
				a.bits[i / 64] |= 1ull << (i % 64);
		}
	seal(&h, iov, 2);
	xmit(u, thread ? &u->thr_fi : &u->fi, u->l[p->r[ri].lr].fd, &p->r[ri].to, iov, 2, thread);
	p->ack_due = 0;
	p->acks_sent++;
}

static void send_nack(struct tp_udp *u, int peer, uint64_t seq, int lr)
{
	struct peer *p = &u->p[peer];
	struct uhdr h;
	int ri = reply_route(u, p, lr);
	struct iovec iov[1] = {{&h, sizeof(h)}};

	hdr_init(u, &h, P_NACK, peer, p);
	h.seq = seq;
	h.route = (uint8_t)p->r[ri].lr;
	seal(&h, iov, 1);
	xmit(u, &u->fi, u->l[p->r[ri].lr].fd, &p->r[ri].to, iov, 1, 0);
	p->nack_sent++;
}

static void send_probe(struct tp_udp *u, int peer, int ri, uint64_t now)
{
	struct peer *p = &u->p[peer];
	struct proute *r = &p->r[ri];
	struct uhdr h;
	struct probebody b = {.reply_ip = u->l[r->lr].adv.s_addr,
	                      .reply_port = htons((uint16_t)u->l[r->lr].port),
	                      .dst_route = (uint16_t)r->pr};
	struct iovec iov[2] = {{&h, sizeof(h)}, {&b, sizeof(b)}};

	hdr_init(u, &h, P_PROBE, peer, p);
	h.route = (uint8_t)r->lr;
	h.len = sizeof(b);
	seal(&h, iov, 2);
	r->last_probe = now;
	if (!r->owed_since)
		r->owed_since = now;
	xmit(u, &u->fi, u->l[r->lr].fd, &r->hbto, iov, 2, 0);
}

/* ---- the receive side ---- */

union hbuf {
	unsigned char b[TP_HDR_WIRE];
	uint64_t align;
};

/* Hand one in-order packet up (reassembling fragments that span several). */
static int deliver(struct tp_udp *u, int peer, const struct uhdr *h, const unsigned char *d)
{
	struct peer *p = &u->p[peer];
	union hbuf hb;
	size_t total = (size_t)h->hlen + h->flen;

	p->delivered = h->seq;
	p->dlv_pkts++;
	if (h->flags & F_FIN) {
		p->fin_rcvd = 1;
		return 0;
	}
	if (h->hlen > TP_HDR_WIRE || (size_t)h->off + h->len > total)
		return 0; /* cannot happen with a valid crc from our own code */
	if ((h->flags & (F_FIRST | F_LAST)) == (F_FIRST | F_LAST)) {
		memcpy(hb.b, d, h->hlen);
		memset(hb.b + h->hlen, 0, TP_HDR_WIRE - h->hlen);
		return tp_up_recv(u->tp, 1, peer, hb.b, h->hlen, d + h->hlen, h->flen, 0) < 0 ? -1
		                                                                              : 1;
	}
	if (h->flags & F_FIRST) {
		if (!p->asmb || p->asm_need < total) {
			unsigned char *nb = realloc(p->asmb, total > FRAG_MAX + TP_HDR_WIRE
			                                         ? total
			                                         : FRAG_MAX + TP_HDR_WIRE);
			if (!nb)
				return -1;
			p->asmb = nb;
		}
		p->asm_need = total > FRAG_MAX + TP_HDR_WIRE ? total : FRAG_MAX + TP_HDR_WIRE;
		p->asm_got = 0;
		p->asm_hlen = h->hlen;
	}
	if (h->off != p->asm_got || !p->asmb)
		return 0;
	memcpy(p->asmb + p->asm_got, d, h->len);
	p->asm_got += h->len;
	if (!(h->flags & F_LAST))
		return 0;
	memcpy(hb.b, p->asmb, p->asm_hlen);
	memset(hb.b + p->asm_hlen, 0, TP_HDR_WIRE - p->asm_hlen);
	return tp_up_recv(u->tp, 1, peer, hb.b, p->asm_hlen, p->asmb + p->asm_hlen,
	                  p->asm_got - p->asm_hlen, 0) < 0
	           ? -1
	           : 1;
}

#define HOLD_SMALL 2048 /* held packets up to this size come from the pool */
#define HOLD_POOL  4096 /* buffers the pool keeps at most (8 MiB) */

static unsigned char *hold_buf(struct tp_udp *u, size_t len)
{
	if (len <= HOLD_SMALL && u->nhpool)
		return u->hpool[--u->nhpool];
	return malloc(len <= HOLD_SMALL ? HOLD_SMALL : len);
}

static void hold_put(struct tp_udp *u, unsigned char *b, size_t len)
{
	if (!b)
		return;
	if (len <= HOLD_SMALL) {
		if (!u->hpool)
			u->hpool = malloc(HOLD_POOL * sizeof(*u->hpool));
		if (u->hpool && u->nhpool < HOLD_POOL) {
			u->hpool[u->nhpool++] = b;
			return;
		}
	}
	free(b);
}

static int on_data(struct tp_udp *u, int peer, const struct uhdr *h, const unsigned char *d, int lr)
{
	struct peer *p = &u->p[peer];
	int n = 0, k;

	p->ack_due = 1;
	p->ack_route = lr;
	p->ack_poll = u->polls;
	p->echo_seq = h->seq;
	p->echo_ts = h->ts;
	p->echo_nsend = h->nsend;
	if (!u->reliable) {
		/* test knob: no order, no duplicates check, no acknowledgement */
		p->ack_due = 0;
		return deliver(u, peer, h, d);
	}
	if (h->seq < p->expect) {
		p->dup++;
		return 0;
	}
	if (h->seq >= p->expect + RWIN)
		return 0; /* beyond the receive window: the sender retransmits later */
	if (h->seq > p->expect) {
		struct held *s = &p->hold[h->seq % RWIN];
		if (s->data && s->seq == h->seq) {
			p->dup++;
			return 0;
		}
		s->data = hold_buf(u, h->len);
		if (!s->data)
			return -1;
		memcpy(s->data, d, h->len);
		s->seq = h->seq;
		s->h = *h;
		if (!p->nheld || h->seq > p->hi_held)
			p->hi_held = h->seq;
		p->nheld++;
		p->ooo++;
		return 0;
	}
	if ((k = deliver(u, peer, h, d)) < 0)
		return -1;
	n += k;
	p->expect++;
	for (;;) {
		struct held *s = &p->hold[p->expect % RWIN];
		if (!s->data || s->seq != p->expect)
			break;
		k = deliver(u, peer, &s->h, s->data);
		hold_put(u, s->data, s->h.len);
		s->data = NULL;
		p->nheld--;
		if (k < 0)
			return -1;
		n += k;
		p->expect++;
	}
	return n;
}

static void route_down(struct tp_udp *u, int peer, int ri, const char *why)
{
	struct peer *p = &u->p[peer];
	struct proute *r = &p->r[ri];
	int other = -1;

	if (!r->up)
		return;
	r->up = 0;
	r->downs++;
	r->owed_since = 0;
	r->last_probe = tp_now_us();
	if (u->debug || u->stats) {
		char nm[96];
		route_name(u, r, nm, sizeof(nm));
		fprintf(
		    stderr,
		    "lamkit udp: rank %d -> rank %d: route %d %s down at %.3f s (wall %.3f): %s\n",
		    u->me, peer, ri, nm, (double)(tp_now_us() - u->t0) / 1e6, wall_s(), why);
	}
	for (int i = 0; i < p->nr; i++)
		if (p->r[i].up)
			other = i;
	if (other < 0)
		return;
	/* rebind: what was in flight on the dead route goes out again on the others now */
	for (uint64_t s = p->una; s < p->next_seq; s++) {
		struct spkt *sp = &p->win[s % WIN];
		if (!sp->acked && sp->route == ri) {
			p->retx_rebind++;
			send_pkt(u, peer, sp, pick_route(u, p), 0);
		}
	}
}

static int fail_peer(struct tp_udp *u, int peer, uint64_t now)
{
	struct peer *p = &u->p[peer];
	char *m = u->tp->err;
	size_t ml = sizeof(u->tp->err), n;
	uint64_t since = p->last_heard > p->wait_since ? p->last_heard : p->wait_since;

	n = (size_t)snprintf(m, ml,
	                     "udp: rank %d (%s) got no answer from rank %d (%s) for %.1f s; routes "
	                     "tried:",
	                     u->me, u->host, peer, p->host, (double)ago(now, since) / 1e6);
	for (int i = 0; i < p->nr && n < ml; i++) {
		char nm[96];
		route_name(u, &p->r[i], nm, sizeof(nm));
		n += (size_t)snprintf(m + n, ml - n, "%s %s (%s)", i ? "," : "", nm,
		                      p->r[i].up ? "up" : "down");
	}
	errno = ETIMEDOUT;
	return -1;
}

/* Retransmissions, route health, probes, the peer timeout. */
static int timers(struct tp_udp *u, uint64_t now)
{
	uint64_t next = now + 100000;

	for (int ai = 0; ai < u->nact; ai++) {
		int peer = u->act[ai];
		struct peer *p = &u->p[peer];
		int owed = p->known && p->una < p->next_seq;
		if (!p->known)
			continue;
		for (int i = 0; i < p->nr; i++) {
			struct proute *r = &p->r[i];
			if (r->up) {
				if (r->owed_since && ago(now, r->owed_since) > u->down_after)
					route_down(u, peer, i, "no answer");
				else if (r->owed_since &&
				         ago(now, r->owed_since) > (2 * p->rto < u->down_after / 3
				                                        ? 2 * p->rto
				                                        : u->down_after / 3) &&
				         ago(now, r->last_probe) > PROBE_EVERY)
					send_probe(u, peer, i, now);
			} else if (ago(now, r->last_probe) > DOWN_PROBE &&
			           (owed || p->q.head || !p->fin_rcvd)) {
				send_probe(u, peer, i, now);
			}
			/* rate: acknowledged packets per ms over windows of about 20 ms */
			if (ago(now, r->wstart) > 20000) {
				double inst =
				    (double)r->window * 1000.0 / (double)ago(now, r->wstart);
				r->rate =
				    r->window || r->inflight ? 0.7 * r->rate + 0.3 * inst : r->rate;
				r->window = 0;
				r->wstart = now;
			}
		}
		if (owed || p->nr > 1)
			for (int i = 0; i < p->nr; i++)
				if (!p->r[i].up || p->r[i].owed_since)
					next = now + 20000 < next ? now + 20000 : next;
		if (!owed)
			continue;
		if (p->probe_at && now >= p->probe_at) {
			p->probe_at = 0; /* one probe until there is progress again */
			for (uint64_t sq = p->next_seq; !p->cur && sq-- > p->una;) {
				struct spkt *sp = &p->win[sq % WIN];
				if (sp->acked)
					continue;
				p->retx_probe++;
				send_pkt(u, peer, sp,
				         p->r[sp->route].up ? sp->route : pick_route(u, p), 0);
				break;
			}
		}
		if (p->probe_at && p->probe_at < next)
			next = p->probe_at;
		int nto = 0;
		for (uint64_t s = p->una; s < p->next_seq; s++) {
			struct spkt *sp = &p->win[s % WIN];
			if (sp->acked)
				continue;
			if (now >= sp->deadline && ++nto > TIMEOUT_BURST) {
				/* a receiver busy computing answers nothing for a while: resending
				 * the whole window would only make duplicates. The oldest go now;
				 * the rest wait one more RTO (not backed off), and what was really
				 * lost past them is found by the acknowledgements their resends
				 * bring back. */
				sp->deadline = now + p->rto;
			} else if (now >= sp->deadline) {
				int ri = sp->route;
				if (!p->r[ri].up || p->nr > 1)
					ri = pick_route(u, p);
				p->retx_timer++;
				send_pkt(u, peer, sp, ri, 0);
			}
			if (sp->deadline < next)
				next = sp->deadline;
		}
		{
			uint64_t since =
			    p->last_heard > p->wait_since ? p->last_heard : p->wait_since;
			if (since && ago(now, since) > u->peer_timeout)
				return fail_peer(u, peer, now);
		}
	}
	u->next_timer = next;
	return 0;
}

/* Check and dispatch one datagram that arrived on local route lr. */
static int on_datagram(struct tp_udp *u, unsigned char *b, size_t n, int lr, uint64_t now)
{
	struct uhdr h;
	uint32_t c;
	int peer;
	struct peer *p;

	if (n < sizeof(h))
		return 0;
	memcpy(&h, b, sizeof(h));
	c = h.crc;
	if (u->reliable) {
		memset(b, 0, 4);
		if (tp_crc32c(0, b, n) != c) {
			/* corrupt: ask again for the seq it seems to carry (a wrong guess only
			 * costs a duplicate, which the receiver drops) */
			if (h.type == P_DATA && h.magic == UDP_MAGIC && h.job == u->job &&
			    h.dst == u->me && h.src >= 0 && h.src < u->size && h.src != u->me &&
			    u->p[h.src].known) {
				p = &u->p[h.src];
				p->corrupt++;
				if (h.seq >= p->expect && h.seq < p->expect + RWIN &&
				    !(p->hold[h.seq % RWIN].data &&
				      p->hold[h.seq % RWIN].seq == h.seq))
					send_nack(u, h.src, h.seq, lr);
			} else if (h.src >= 0 && h.src < u->size) {
				u->p[h.src].corrupt++;
			}
			return 0;
		}
	}
	if (h.magic != UDP_MAGIC || h.job != u->job || h.dst != u->me || h.src < 0 ||
	    h.src >= u->size || h.src == u->me || sizeof(h) + h.len != n)
		return 0; /* not ours */
	peer = h.src;
	p = &u->p[peer];
	if (!p->known && peer_init(u, peer) < 0)
		return -1;
	p->last_heard = now;
	switch (h.type) {
	case P_DATA:
		cum_rtt(p, h.cum, now);
		handle_cum(u, peer, h.cum, now);
		return on_data(u, peer, &h, b + sizeof(h), lr);
	case P_ACK:
		if (h.len == sizeof(struct ackbody)) {
			struct ackbody a;
			memcpy(&a, b + sizeof(h), sizeof(a));
			on_ack(u, peer, &h, &a, now);
		}
		return 0;
	case P_NACK:
		p->nack_rcvd++;
		if (h.seq >= p->una && h.seq < p->next_seq && !p->win[h.seq % WIN].acked)
			send_pkt(u, peer, &p->win[h.seq % WIN], pick_route(u, p), 0);
		return 0;
	case P_PROBEACK:
		if (h.len == sizeof(struct probebody)) {
			for (int i = 0; i < p->nr; i++)
				if (p->r[i].lr == h.route) {
					struct probebody pb;
					memcpy(&pb, b + sizeof(h), sizeof(pb));
					if (p->r[i].pr != pb.dst_route)
						continue;
					p->r[i].last_ok = now;
					p->r[i].owed_since = 0;
					route_up(u, peer, i);
				}
		}
		return 0;
	default:
		return 0;
	}
}

static int drain_socket(struct tp_udp *u, int lr, uint64_t now)
{
	int n = 0, k, got;

	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < BATCH; i++) {
			u->iov[i] = (struct iovec){u->rxb + (size_t)i * u->rxsz, u->rxsz};
			u->mm[i].msg_hdr = (struct msghdr){.msg_iov = &u->iov[i], .msg_iovlen = 1};
			if (u->gro) {
				u->mm[i].msg_hdr.msg_control = u->cm[i].b;
				u->mm[i].msg_hdr.msg_controllen = sizeof(u->cm[i].b);
			}
		}
		got = recvmmsg(u->l[lr].fd, u->mm, BATCH, MSG_DONTWAIT, NULL);
		if (got <= 0)
			break;
		for (int i = 0; i < got; i++) {
			unsigned char *b = u->rxb + (size_t)i * u->rxsz;
			size_t len = u->mm[i].msg_len,
			       seg = u->gro ? gro_size(&u->mm[i].msg_hdr) : 0;
			for (size_t off = 0; off < len; off += seg ? seg : len) {
				if ((k = on_datagram(u, b + off,
				                     seg && len - off > seg ? seg : len - off, lr,
				                     now)) < 0)
					return -1;
				n += k;
			}
		}
		if (got < BATCH)
			break;
	}
	return n;
}

/* The window is full and its oldest packet is still unacknowledged: that hole holds everything
 * back, so it goes again after a round trip rather than at its backed-off timeout. */
static void unblock(struct tp_udp *u, int peer, uint64_t now)
{
	struct peer *p = &u->p[peer];
	struct spkt *o = &p->win[p->una % WIN];
	uint64_t wait = p->srtt + p->rttvar > 1000 ? p->srtt + p->rttvar : 1000;

	if (p->una < p->next_seq && !o->acked && ago(now, o->tsent) >= wait) {
		p->retx_unblock++;
		send_pkt(u, peer, o, pick_route(u, p), 0);
	}
}

int tp_udp_poll(struct tp_udp *u)
{
	uint64_t now = tp_now_us();
	int n = 0, k;

	u->polls++;
	for (int i = 0; i < u->nl; i++) {
		if ((k = drain_socket(u, i, now)) < 0)
			return -1;
		n += k;
	}
	if (u->ndq)
		dq_flush(u, now);
	if (u->reliable && now >= u->next_timer && timers(u, now) < 0)
		return -1;
	for (int ai = 0; ai < u->nact; ai++) {
		int peer = u->act[ai];
		struct peer *p = &u->p[peer];
		if (p->cur) {
			fill_window(u, peer);
			if (p->cur && u->reliable)
				unblock(u, peer, now);
		}
		if (!u->reliable)
			complete_head(u, p);
		/* An ack waits one poll, so that a reply can carry it instead; out-of-order
		 * arrivals and acks owed since an earlier poll go at once. */
		if (p->ack_due && (p->nheld || p->ack_poll != u->polls))
			send_ack(u, peer, 0);
	}
	return n;
}

int tp_udp_busy(const struct tp_udp *u)
{
	return u->nwait;
}

size_t tp_udp_backlog(const struct tp_udp *u, int peer)
{
	return u->p[peer].qbytes;
}

size_t tp_udp_eager_max(const struct tp_udp *u)
{
	(void)u;
	return EAGER_MAX;
}

size_t tp_udp_frag_max(const struct tp_udp *u)
{
	(void)u;
	return FRAG_MAX;
}

/* ---- the end ---- */

static void send_fin(struct tp_udp *u, int peer)
{
	struct peer *p = &u->p[peer];
	struct spkt *s;

	if (p->next_seq - p->una >= WIN)
		return; /* try again next round */
	s = &p->win[p->next_seq % WIN];
	memset(s, 0, sizeof(*s));
	s->seq = p->next_seq++;
	s->flags = F_FIN;
	p->fin_sent = 1;
	send_pkt(u, peer, s, pick_route(u, p), 0);
}

/* Every packet acknowledged (our FIN too) and a FIN from every peer we exchanged anything with.
 * 0, or -1 when timeout_ms passed first (a peer gone or unreachable). */
static int drain(struct tp_udp *u, int timeout_ms)
{
	uint64_t end = tp_now_us() + (uint64_t)timeout_ms * 1000;

	for (;;) {
		int done = 1;
		for (int peer = 0; peer < u->size; peer++) {
			struct peer *p = &u->p[peer];
			if (!p->known || (p->next_seq == u->seq0 && p->expect == u->seq0))
				continue;
			if (!p->fin_sent && !p->cur)
				send_fin(u, peer);
			if (p->cur || !p->fin_sent || !p->fin_rcvd || p->una != p->next_seq)
				done = 0;
		}
		if (done)
			return 0;
		if (tp_now_us() >= end || tp_udp_poll(u) < 0)
			return -1;
		if (u->tp->yield)
			sched_yield();
		else
			nanosleep(&(struct timespec){0, 20000}, NULL);
	}
}

int tp_udp_flush(struct tp_udp *u, int timeout_ms)
{
	int rc = 0;

	if (u->flushed)
		return 0;
	if (u->reliable)
		rc = drain(u, timeout_ms);
	u->flushed = 1;
	atomic_store(&u->linger, 1);
	if (u->thr_on && write(u->wake[1], "x", 1) < 0) {
		/* the thread looks again within a second */
	}
	return rc;
}

static void print_stats(struct tp_udp *u)
{
	for (int peer = 0; peer < u->size; peer++) {
		struct peer *p = &u->p[peer];
		if (!p->known)
			continue;
		fprintf(
		    stderr,
		    "lamkit udp: rank %d -> rank %d (%s): sent=%llu retransmitted=%llu (fast=%llu "
		    "timeout=%llu window=%llu probe=%llu rebound=%llu) nack_rcvd=%llu rtt_us=%llu "
		    "rto_us=%llu; "
		    "from it: delivered=%llu dup=%llu corrupt=%llu nack=%llu ooo=%llu acks=%llu\n",
		    u->me, peer, p->host, (unsigned long long)p->sent, (unsigned long long)p->retx,
		    (unsigned long long)p->retx_fast, (unsigned long long)p->retx_timer,
		    (unsigned long long)p->retx_unblock, (unsigned long long)p->retx_probe,
		    (unsigned long long)p->retx_rebind, (unsigned long long)p->nack_rcvd,
		    (unsigned long long)p->srtt, (unsigned long long)p->rto,
		    (unsigned long long)p->dlv_pkts, (unsigned long long)p->dup,
		    (unsigned long long)p->corrupt, (unsigned long long)p->nack_sent,
		    (unsigned long long)p->ooo, (unsigned long long)p->acks_sent);
		for (int i = 0; i < p->nr; i++) {
			struct proute *r = &p->r[i];
			char nm[96];
			route_name(u, r, nm, sizeof(nm));
			fprintf(stderr,
			        "lamkit udp: rank %d -> rank %d route %d %s: sent=%llu "
			        "retransmitted=%llu "
			        "acked=%llu down=%llu up=%llu sent_since_up=%llu errors=%llu "
			        "state=%s\n",
			        u->me, peer, i, nm, (unsigned long long)r->sent,
			        (unsigned long long)r->retx, (unsigned long long)r->acked,
			        (unsigned long long)r->downs, (unsigned long long)r->ups,
			        (unsigned long long)r->sent_since_up, (unsigned long long)r->errors,
			        r->up ? "up" : "down");
		}
	}
	if (u->fi.on)
		fprintf(
		    stderr,
		    "lamkit udp: rank %d injected: drop=%llu corrupt=%llu dup=%llu reorder=%llu\n",
		    u->me, (unsigned long long)u->inj_drop, (unsigned long long)u->inj_corrupt,
		    (unsigned long long)u->inj_dup, (unsigned long long)u->inj_reorder);
}

void tp_udp_destroy(struct tp_udp *u, int timeout_ms)
{
	int e = errno;

	if (!u)
		return;
	if (u->p && u->reliable && timeout_ms > 0)
		tp_udp_flush(u, timeout_ms);
	if (u->stats && u->p)
		print_stats(u);
	if (u->thr_on) {
		atomic_store(&u->stop, 1);
		if (write(u->wake[1], "x", 1) < 0) {
			/* the thread wakes within a second anyway */
		}
		pthread_join(u->thr, NULL);
	}
	for (int i = 0; i < 2; i++)
		if (u->wake[i] >= 0)
			close(u->wake[i]);
	for (int i = 0; i < u->nl; i++) {
		close(u->l[i].fd);
		close(u->l[i].hbfd);
	}
	for (int peer = 0; u->p && peer < u->size; peer++) {
		struct peer *p = &u->p[peer];
		struct tp_frag *f;
		while ((f = tp_fifo_pop(&p->q)))
			free(f);
		for (int i = 0; p->hold && i < RWIN; i++)
			hold_put(u, p->hold[i].data, p->hold[i].h.len);
		free(p->hold);
		free(p->win);
		free(p->asmb);
	}
	for (int i = 0; i < u->ndq; i++)
		free(u->dq[i].buf);
	free(u->dq);
	free(u->scratch);
	free(u->rxb);
	for (int i = 0; i < u->nhpool; i++)
		free(u->hpool[i]);
	free(u->hpool);
	free(u->p);
	free(u->act);
	free(u);
	errno = e;
}
