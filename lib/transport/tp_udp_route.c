/* lib/transport/tp_udp_route.c: the udp path's routes: a socket pair per local address, the
 * business card, pairing with a peer's addresses, choosing a route, marking one down (its packets
 * rebound to the others) and up again, probes, and the peer timeout's message. */
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

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
int tp_udp_open_routes(struct tp_udp *u, char *err, size_t errlen)
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
int tp_udp_publish(struct tp_udp *u, char *err, size_t errlen)
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

void tp_udp_route_name(const struct tp_udp *u, const struct proute *r, char *out, size_t len)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &u->l[r->lr].addr, a, sizeof(a));
	inet_ntop(AF_INET, &r->to.sin_addr, b, sizeof(b));
	snprintf(out, len, "%s->%s:%d", a, b, ntohs(r->to.sin_port));
}

/* Read peer's card and pair each of our routes with the peer's address on the same subnet
 * (each peer address used once); when nothing matches, every local route to the peer's first
 * address (the kernel's routing decides). 0, or -1 with tp_error set. */
int tp_udp_peer_init(struct tp_udp *u, int peer)
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
			tp_udp_route_name(u, r, n, sizeof(n));
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

int tp_udp_pick_route(struct tp_udp *u, struct peer *p)
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

int tp_udp_reply_route(struct tp_udp *u, struct peer *p, int lr)
{
	for (int i = 0; i < p->nr; i++)
		if (p->r[i].lr == lr && p->r[i].up)
			return i;
	return tp_udp_pick_route(u, p);
}

void tp_udp_route_up(struct tp_udp *u, int peer, int ri)
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
		tp_udp_route_name(u, r, nm, sizeof(nm));
		fprintf(stderr,
		        "lamkit udp: rank %d -> rank %d: route %d %s up at %.3f s (wall %.3f)\n",
		        u->me, peer, ri, nm, (double)(r->up_at - u->t0) / 1e6, wall_s());
	}
}

void tp_udp_route_down(struct tp_udp *u, int peer, int ri, const char *why)
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
		tp_udp_route_name(u, r, nm, sizeof(nm));
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
			tp_udp_send_pkt(u, peer, sp, tp_udp_pick_route(u, p), 0);
		}
	}
}

void tp_udp_send_probe(struct tp_udp *u, int peer, int ri, uint64_t now)
{
	struct peer *p = &u->p[peer];
	struct proute *r = &p->r[ri];
	struct uhdr h;
	struct probebody b = {.reply_ip = u->l[r->lr].adv.s_addr,
	                      .reply_port = htons((uint16_t)u->l[r->lr].port),
	                      .dst_route = (uint16_t)r->pr};
	struct iovec iov[2] = {{&h, sizeof(h)}, {&b, sizeof(b)}};

	tp_udp_hdr_init(u, &h, P_PROBE, peer, p);
	h.route = (uint8_t)r->lr;
	h.len = sizeof(b);
	tp_udp_seal(&h, iov, 2);
	r->last_probe = now;
	if (!r->owed_since)
		r->owed_since = now;
	tp_udp_xmit(u, &u->fi, u->l[r->lr].fd, &r->hbto, iov, 2, 0);
}

int tp_udp_fail_peer(struct tp_udp *u, int peer, uint64_t now)
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
		tp_udp_route_name(u, &p->r[i], nm, sizeof(nm));
		n += (size_t)snprintf(m + n, ml - n, "%s %s (%s)", i ? "," : "", nm,
		                      p->r[i].up ? "up" : "down");
	}
	errno = ETIMEDOUT;
	return -1;
}
