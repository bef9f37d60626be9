/* lib/transport/tp_udp.c: the reliable multi-route udp path (LA-MPI's design, see
 * doc/PROTOCOL-mpi-wire.md section 5): one socket per local address ("route"), 64-bit sequence
 * numbers per (sender, receiver) pair, CRC32C over header and payload, specific and cumulative
 * ACKs, NACKs for corrupt datagrams, retransmission with truncated exponential backoff from the
 * measured RTT, striping over the routes of a peer in proportion to what each delivers, routes
 * marked down and their packets rebound, probed in the background and brought back. A small
 * thread answers route probes, so a rank that computes for minutes without calling MPI is still
 * known to be alive; it never touches the data path. This file: the path's lifetime, its
 * interface (tp_internal.h) and the dispatch of what arrives; the rest is in tp_udp_pkt.c
 * (datagrams), tp_udp_route.c (routes, probing), tp_udp_rel.c (reliability, timers) and
 * tp_udp_thread.c (the probe thread). */
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

static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;

	while (s && *s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

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
	if (tp_udp_parse_faults(&u->fi, getenv("LAMKIT_UDP_FAULTS"), err, errlen) < 0)
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
	if (tp_udp_open_routes(u, err, errlen) < 0)
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
	if (tp_udp_publish(u, err, errlen) < 0)
		goto fail;
	if (pipe2(u->wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pthread_create(&u->thr, NULL, tp_udp_prober, u)) {
		snprintf(err, errlen, "udp: cannot start the probe thread");
		goto fail;
	}
	u->thr_on = 1;
	return u;
fail:
	tp_udp_destroy(u, 0);
	return NULL;
}

static int udp_send(struct tp_udp *u, int peer, const void *hdr, size_t hlen, const void *data,
                    size_t len, void *cookie, int may_ref)
{
	struct peer *p = &u->p[peer];
	struct tp_frag *f;
	int ref;

	if (len > UINT32_MAX / 2) {
		errno = EMSGSIZE;
		return -1;
	}
	if (!p->known && tp_udp_peer_init(u, peer) < 0)
		return -1;
	/* Payloads are kept until acknowledged: large ones by reference, and a message's last
	 * fragment also when earlier ones are still unacknowledged (ops.sent comes in order). */
	ref = may_ref && (len > EAGER_MAX || (cookie && p->q.head));
	f = tp_frag_new(hdr, hlen, data, len, ref, cookie);
	if (!f)
		return -1;
	f->pend = 0;
	tp_fifo_push(&p->q, f);
	p->qbytes += len;
	if (!p->cur)
		p->cur = f;
	u->nwait++;
	tp_udp_fill_window(u, peer);
	return ref;
}

int tp_udp_send(struct tp_udp *u, int peer, const void *hdr, size_t hlen, const void *data,
                size_t len, void *cookie)
{
	return udp_send(u, peer, hdr, hlen, data, len, cookie, 1);
}

int tp_udp_send_copy(struct tp_udp *u, int peer, const void *hdr, size_t hlen, const void *data,
                     size_t len)
{
	return udp_send(u, peer, hdr, hlen, data, len, NULL, 0);
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
					tp_udp_send_nack(u, h.src, h.seq, lr);
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
	if (p->gone)
		return 0;
	if (!p->known && tp_udp_peer_init(u, peer) < 0)
		return -1;
	p->last_heard = now;
	switch (h.type) {
	case P_DATA:
		tp_udp_cum_rtt(p, h.cum, now);
		tp_udp_handle_cum(u, peer, h.cum, now);
		return tp_udp_on_data(u, peer, &h, b + sizeof(h), lr);
	case P_ACK:
		if (h.len == sizeof(struct ackbody)) {
			struct ackbody a;
			memcpy(&a, b + sizeof(h), sizeof(a));
			tp_udp_on_ack(u, peer, &h, &a, now);
		}
		return 0;
	case P_NACK:
		p->nack_rcvd++;
		if (h.seq >= p->una && h.seq < p->next_seq && !p->win[h.seq % WIN].acked)
			tp_udp_send_pkt(u, peer, &p->win[h.seq % WIN], tp_udp_pick_route(u, p), 0);
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
					tp_udp_route_up(u, peer, i);
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
			       seg = u->gro ? tp_udp_gro_size(&u->mm[i].msg_hdr) : 0;
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
		tp_udp_dq_flush(u, now);
	if (u->reliable && now >= u->next_timer && tp_udp_timers(u, now) < 0)
		return -1;
	for (int ai = 0; ai < u->nact; ai++) {
		int peer = u->act[ai];
		struct peer *p = &u->p[peer];
		if (p->cur) {
			tp_udp_fill_window(u, peer);
			if (p->cur && u->reliable)
				tp_udp_unblock(u, peer, now);
		}
		if (!u->reliable)
			tp_udp_complete_head(u, p);
		/* An ack waits one poll, so that a reply can carry it instead; out-of-order
		 * arrivals and acks owed since an earlier poll go at once. */
		if (p->ack_due && (p->nheld || p->ack_poll != u->polls))
			tp_udp_send_ack(u, peer, 0);
	}
	return n;
}

int tp_udp_sleep_fds(struct tp_udp *u, struct pollfd *pfd, int max, uint64_t *timeout_us)
{
	uint64_t now = tp_now_us();

	if (u->ndq) /* datagrams the fault injector holds back go out on time */
		return -1;
	for (int ai = 0; ai < u->nact; ai++) /* an ack owed goes out on the next poll */
		if (u->p[u->act[ai]].ack_due)
			return -1;
	if (u->reliable) {
		if (u->next_timer <= now)
			return -1;
		if (u->next_timer - now < *timeout_us)
			*timeout_us = u->next_timer - now;
	}
	if (u->nl > max)
		return u->nl;
	for (int i = 0; i < u->nl; i++)
		pfd[i] = (struct pollfd){.fd = u->l[i].fd, .events = POLLIN};
	return u->nl;
}

void tp_udp_forget(struct tp_udp *u, int peer)
{
	struct peer *p = &u->p[peer];
	struct tp_frag *f;
	int packetized = 1;

	p->gone = 1;
	while ((f = tp_fifo_pop(&p->q))) {
		if (f == p->cur)
			packetized = 0;
		if (!packetized)
			u->nwait--;
		tp_frag_done(u->tp, f);
	}
	p->cur = NULL;
	p->qbytes = p->inflight_bytes = 0;
	p->una = p->next_seq;
	for (int i = 0; p->hold && i < RWIN; i++) {
		tp_udp_hold_put(u, p->hold[i].data, p->hold[i].h.len);
		p->hold[i].data = NULL;
	}
	p->nheld = 0;
	for (int i = 0; i < p->nr; i++)
		p->r[i].inflight = 0, p->r[i].owed_since = 0;
	p->fin_sent = p->fin_rcvd = 1; /* nothing to say goodbye to */
	p->ack_due = 0;
	p->probe_at = p->wait_since = p->last_heard = 0;
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
	tp_udp_send_pkt(u, peer, s, tp_udp_pick_route(u, p), 0);
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
			tp_udp_route_name(u, r, nm, sizeof(nm));
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
			tp_udp_hold_put(u, p->hold[i].data, p->hold[i].h.len);
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
