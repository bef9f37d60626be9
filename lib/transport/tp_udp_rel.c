/* lib/transport/tp_udp_rel.c: the udp path's reliability: the send window, acknowledgements
 * (cumulative, selective, echoed), RTT and RTO, fast retransmission, the tail probe, in-order
 * delivery with reassembly, and the timers. */
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
int tp_udp_send_pkt(struct tp_udp *u, int peer, struct spkt *s, int ri, int batch)
{
	struct peer *p = &u->p[peer];
	struct proute *r = &p->r[ri];
	struct uhdr h;
	struct iovec iov[3];
	int n = 1;
	uint64_t now = tp_now_us(), back;

	tp_udp_hdr_init(u, &h, P_DATA, peer, p);
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
		tp_udp_seal(&h, iov, n);
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
	if (batch && u->gb.on && tp_udp_gso_add(u, peer, ri, &h, iov, n))
		return 0;
	if (tp_udp_xmit(u, &u->fi, u->l[r->lr].fd, &r->to, iov, n, 0) < 0) {
		r->errors++;
		if (r->up && (errno == ENETUNREACH || errno == EHOSTUNREACH || errno == ENETDOWN ||
		              errno == EADDRNOTAVAIL || errno == EPERM))
			tp_udp_route_down(u, peer, ri, strerror(errno));
	}
	return 0;
}

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

/* Turn queued fragment bytes into packets while the window has room. */
void tp_udp_fill_window(struct tp_udp *u, int peer)
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
		             : tp_udp_pick_route(u, p);
		tp_udp_send_pkt(u, peer, s, ri, 1);
		if (!u->reliable) /* test knob: no acknowledgements, a packet is done when sent */
			ack_one(u, p, s->seq, s->tsent);
	}
	tp_udp_gso_flush(u);
}

void tp_udp_complete_head(struct tp_udp *u, struct peer *p)
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

void tp_udp_handle_cum(struct tp_udp *u, int peer, uint64_t cum, uint64_t now)
{
	struct peer *p = &u->p[peer];
	uint64_t end = cum + 1 < p->next_seq ? cum + 1 : p->next_seq;

	if (cum + 1 <= p->una)
		return;
	for (uint64_t s = p->una; s < end; s++)
		ack_one(u, p, s, now);
	tp_udp_complete_head(u, p);
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
void tp_udp_cum_rtt(struct peer *p, uint64_t cum, uint64_t now)
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
		tp_udp_send_pkt(u, peer, sp, tp_udp_pick_route(u, p), 0);
		n++;
	}
}

void tp_udp_on_ack(struct tp_udp *u, int peer, const struct uhdr *h, const struct ackbody *a,
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
	tp_udp_handle_cum(u, peer, h->cum, now);
	for (int w = 0; w < RWIN / 64; w++)
		for (uint64_t bits = a->bits[w]; bits; bits &= bits - 1)
			ack_one(u, p, h->cum + 2 + (uint64_t)(w * 64 + __builtin_ctzll(bits)), now);
	if (a->echo_ts && a->echo_ts <= now)
		rtt_sample(p, now - a->echo_ts);
	tp_udp_complete_head(u, p);
	fast_retransmit(u, peer, h->cum, a, now);
}

void tp_udp_send_ack(struct tp_udp *u, int peer, int thread)
{
	struct peer *p = &u->p[peer];
	struct ackbody a;
	struct uhdr h;
	int ri = tp_udp_reply_route(u, p, p->ack_route);
	struct iovec iov[2] = {{&h, sizeof(h)}, {&a, sizeof(a)}};

	memset(&a, 0, sizeof(a));
	tp_udp_hdr_init(u, &h, P_ACK, peer, p);
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
	tp_udp_seal(&h, iov, 2);
	tp_udp_xmit(u, thread ? &u->thr_fi : &u->fi, u->l[p->r[ri].lr].fd, &p->r[ri].to, iov, 2,
	            thread);
	p->ack_due = 0;
	p->acks_sent++;
}

void tp_udp_send_nack(struct tp_udp *u, int peer, uint64_t seq, int lr)
{
	struct peer *p = &u->p[peer];
	struct uhdr h;
	int ri = tp_udp_reply_route(u, p, lr);
	struct iovec iov[1] = {{&h, sizeof(h)}};

	tp_udp_hdr_init(u, &h, P_NACK, peer, p);
	h.seq = seq;
	h.route = (uint8_t)p->r[ri].lr;
	tp_udp_seal(&h, iov, 1);
	tp_udp_xmit(u, &u->fi, u->l[p->r[ri].lr].fd, &p->r[ri].to, iov, 1, 0);
	p->nack_sent++;
}

#define HOLD_SMALL 2048 /* held packets up to this size come from the pool */
#define HOLD_POOL  4096 /* buffers the pool keeps at most (8 MiB) */

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

static unsigned char *hold_buf(struct tp_udp *u, size_t len)
{
	if (len <= HOLD_SMALL && u->nhpool)
		return u->hpool[--u->nhpool];
	return malloc(len <= HOLD_SMALL ? HOLD_SMALL : len);
}

void tp_udp_hold_put(struct tp_udp *u, unsigned char *b, size_t len)
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

int tp_udp_on_data(struct tp_udp *u, int peer, const struct uhdr *h, const unsigned char *d, int lr)
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
		tp_udp_hold_put(u, s->data, s->h.len);
		s->data = NULL;
		p->nheld--;
		if (k < 0)
			return -1;
		n += k;
		p->expect++;
	}
	return n;
}

/* The window is full and its oldest packet is still unacknowledged: that hole holds everything
 * back, so it goes again after a round trip rather than at its backed-off timeout. */
void tp_udp_unblock(struct tp_udp *u, int peer, uint64_t now)
{
	struct peer *p = &u->p[peer];
	struct spkt *o = &p->win[p->una % WIN];
	uint64_t wait = p->srtt + p->rttvar > 1000 ? p->srtt + p->rttvar : 1000;

	if (p->una < p->next_seq && !o->acked && ago(now, o->tsent) >= wait) {
		p->retx_unblock++;
		tp_udp_send_pkt(u, peer, o, tp_udp_pick_route(u, p), 0);
	}
}

/* Retransmissions, route health, probes, the peer timeout. */
int tp_udp_timers(struct tp_udp *u, uint64_t now)
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
					tp_udp_route_down(u, peer, i, "no answer");
				else if (r->owed_since &&
				         ago(now, r->owed_since) > (2 * p->rto < u->down_after / 3
				                                        ? 2 * p->rto
				                                        : u->down_after / 3) &&
				         ago(now, r->last_probe) > PROBE_EVERY)
					tp_udp_send_probe(u, peer, i, now);
			} else if (ago(now, r->last_probe) > DOWN_PROBE &&
			           (owed || p->q.head || !p->fin_rcvd)) {
				tp_udp_send_probe(u, peer, i, now);
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
				tp_udp_send_pkt(
				    u, peer, sp,
				    p->r[sp->route].up ? sp->route : tp_udp_pick_route(u, p), 0);
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
					ri = tp_udp_pick_route(u, p);
				p->retx_timer++;
				tp_udp_send_pkt(u, peer, sp, ri, 0);
			}
			if (sp->deadline < next)
				next = sp->deadline;
		}
		{
			uint64_t since =
			    p->last_heard > p->wait_since ? p->last_heard : p->wait_since;
			if (since && ago(now, since) > u->peer_timeout)
				return tp_udp_fail_peer(u, peer, now);
		}
	}
	u->next_timer = next;
	return 0;
}
