/* lib/transport/tp_mp_fo.c: the multipath layer's end-to-end acknowledgement and tcp-udp
 * failover (doc/PROTOCOL-mpi-wire.md section 7.4): the receiver's ACKs (cum: every fragment
 * below it handed up), the sender's fragments kept until acknowledged, a tcp path put down when
 * it fails and what it carried sent again over udp, and the path tried again later. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp_mp_int.h"

#define ACK_FRAGS     64           /* handed up since the last ACK: send one */
#define ACK_BYTES     (256 * 1024) /* the same in payload bytes */
#define ACK_DELAY_US  500          /* an ACK owed goes out within this */
#define RETRY_US      1000000      /* a path down is tried again after this, doubling */
#define RETRY_MAX_US  8000000
#define STALL_LOOK_US 100000 /* how often kept fragments are looked at for a stall */

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int listed_add(int *list, int *n, int peer, int *flag)
{
	if (*flag)
		return 0;
	*flag = 1;
	list[(*n)++] = peer;
	return 1;
}

int tp_mp_keep(tp_t *tp, struct mp_peer *p, int path, uint32_t seq, struct mp_done *d,
               const void *hdr, size_t hlen, const void *data, size_t len)
{
	struct mp_keep *k = malloc(sizeof *k + (d ? 0 : len));

	if (!k)
		return -1;
	memset(k, 0, sizeof *k);
	k->seq = seq;
	k->path = path;
	k->d = d;
	k->t_sent = tp_now_us();
	k->udp_bytes = p->bytes[1];
	k->hlen = hlen;
	k->len = len;
	memcpy(k->hdr, hdr, hlen);
	if (d) { /* the caller's payload: its ops.sent waits for the ACK */
		k->data = data;
		d->need_ack = 1;
	} else { /* copied by the path, so once more here: the caller reuses its buffer */
		if (len)
			memcpy(k->copy, data, len);
		k->data = k->copy;
	}
	if (p->kt)
		p->kt->next = k;
	else
		p->kh = k;
	p->kt = k;
	tp->mp->nkept++;
	return 0;
}

void tp_mp_ack_in(tp_t *tp, struct mp_peer *p, int peer, uint32_t cum)
{
	struct mp_keep *k;

	while ((k = p->kh) && (int32_t)(cum - k->seq) > 0) {
		p->kh = k->next;
		if (!p->kh)
			p->kt = NULL;
		if (k->path != 1 && p->backoff[k->path]) { /* a path that was down delivers again */
			p->backoff[k->path] = 0;
			if (tp->mp->debug || tp->mp->stats)
				fprintf(
				    stderr,
				    "lamkit tp: rank %d -> rank %d: %s delivers again at %.3f s "
				    "(wall %.3f)\n",
				    tp->cfg.rank, peer, tp_mp_path_name(k->path),
				    (double)(tp_now_us() - tp->mp->t0) / 1e6, wall_s());
		}
		if (k->d) {
			k->d->acked = 1;
			if (k->d->written) {
				k->d->done = 1;
				tp->mp->release = 1;
			}
		}
		free(k);
		tp->mp->nkept--;
	}
}

/* The path an ACK takes: udp (it does not share the fate of the tcp connection it may be
 * acknowledging), else the first tcp path up. -1 when none. */
static int ack_path(const tp_t *tp, const struct mp_peer *p)
{
	const struct tp_mp_policy *pol = &tp->mp->pol;

	if (pol->weight[1])
		return 1;
	for (int i = 0; i < pol->npaths; i++)
		if (!p->down[pol->order[i]])
			return pol->order[i];
	return -1;
}

static void ack_send(tp_t *tp, struct mp_peer *p, int peer)
{
	uint32_t cum = p->rseq;
	int path = ack_path(tp, p);

	p->ack_due = 0;
	if (path < 0 || cum == p->racked)
		return;
	if (path == 1
	        ? tp_udp_send(tp->udp, peer, &cum, 4, NULL, 0, NULL) < 0
	        : tp_tcp_send(path == 0 ? tp->tcp : tp->tcp2, peer, &cum, 4, NULL, 0, NULL) < 0)
		return; /* the path's own failure comes up as such */
	p->racked = cum;
	p->unacked_frags = 0;
	p->unacked_bytes = 0;
	p->acks++;
}

void tp_mp_ack_owed(tp_t *tp, struct mp_peer *p, int peer, size_t bytes, int large)
{
	struct tp_mp *m = tp->mp;

	p->unacked_frags++;
	p->unacked_bytes += bytes;
	if (p->unacked_frags >= ACK_FRAGS || p->unacked_bytes >= ACK_BYTES) {
		ack_send(tp, p, peer);
		return;
	}
	/* a sender may wait for this one (a payload it keeps by reference): at the end of this
	 * tp_poll (one ACK for every fragment a poll hands up), else within ACK_DELAY_US */
	uint64_t due = large ? tp_now_us() : tp_now_us() + ACK_DELAY_US;
	if (!p->ack_due || due < p->ack_due)
		p->ack_due = due;
	m->ack_now |= large;
	listed_add(m->ackp, &m->nackp, peer, &p->acklisted);
}

int tp_mp_path_down(tp_t *tp, int path, int peer, const char *why, int retry_now)
{
	struct tp_mp *m = tp->mp;
	struct mp_peer *p = m && peer >= 0 && peer < tp->cfg.size ? m->p[peer] : NULL;
	size_t n = 0, bytes = 0;

	if (!m || !m->ack || !m->pol.weight[1] || path == 1 || !p)
		return -1;
	if (p->down[path] && !retry_now)
		return 0;
	uint64_t now = tp_now_us();
	p->down[path] = 1;
	p->downs++;
	p->backoff[path] = p->backoff[path] ? p->backoff[path] * 2 : RETRY_US;
	if (p->backoff[path] > RETRY_MAX_US)
		p->backoff[path] = RETRY_MAX_US;
	p->retry_at[path] = now + p->backoff[path];
	listed_add(m->downp, &m->ndownp, peer, &p->dlisted);
	/* its connection goes, with what it still had queued (those are kept here too) */
	tp_tcp_forget(path == 0 ? tp->tcp : tp->tcp2, peer);
	p->out_n[path] = 0;
	p->busy_since[path] = 0;
	for (struct mp_keep *k = p->kh; k; k = k->next) {
		if (k->path != path)
			continue;
		void *ck = k->d ? (void *)((uintptr_t)k->d | 1u) : NULL;
		int rc = tp_mp_put_raw(tp, peer, 1, k->seq, ck, k->hdr, k->hlen, k->data, k->len);
		if (rc < 0)
			return -1;
		if (k->d && rc == 1)
			k->d->written = 0; /* udp holds it now: its own acknowledgement says when */
		k->path = 1;
		p->resent++;
		n++;
		bytes += k->len;
	}
	if (retry_now) { /* the peer made a new connection: use it */
		p->down[path] = 0;
		p->backoff[path] = 0;
	}
	if (m->debug || m->stats)
		fprintf(stderr,
		        "lamkit tp: rank %d -> rank %d: %s %s at %.3f s (wall %.3f): %s: %zu "
		        "fragment(s) (%zu bytes) again over udp; %s %.1f s\n",
		        tp->cfg.rank, peer, tp_mp_path_name(path), retry_now ? "replaced" : "down",
		        (double)(now - m->t0) / 1e6, wall_s(), why, n, bytes,
		        retry_now ? "in use again after" : "tried again in",
		        retry_now ? 0.0 : (double)p->backoff[path] / 1e6);
	return 0;
}

/* A kept fragment on a tcp path unacknowledged for stall_us while udp, sent on since, has
 * delivered everything: that connection has gone quiet without an error. */
static int stalled(tp_t *tp, struct mp_peer *p, int peer, uint64_t now)
{
	for (struct mp_keep *k = p->kh; k; k = k->next)
		if (k->path != 1 && !p->down[k->path])
			return now - k->t_sent > tp->mp->stall_us && p->bytes[1] > k->udp_bytes &&
			               tp_udp_backlog(tp->udp, peer) == 0
			           ? k->path
			           : -1;
	return -1;
}

int tp_mp_fo_poll(tp_t *tp, uint64_t now)
{
	struct tp_mp *m = tp->mp;
	int j = 0;

	if (!m->ack)
		return 0;
	m->ack_now = 0;
	for (int i = 0; i < m->nackp; i++) {
		int peer = m->ackp[i];
		struct mp_peer *p = m->p[peer];
		if (p->ack_due && now >= p->ack_due)
			ack_send(tp, p, peer);
		if (p->ack_due)
			m->ackp[j++] = peer;
		else
			p->acklisted = 0;
	}
	m->nackp = j;
	j = 0;
	for (int i = 0; i < m->ndownp; i++) {
		int peer = m->downp[i], left = 0;
		struct mp_peer *p = m->p[peer];
		for (int k = 0; k < TP_MP_PATHS; k++) {
			if (p->down[k] && now >= p->retry_at[k]) {
				p->down[k] =
				    0; /* the next fragment it gets tries it (a new connect) */
				if (m->debug || m->stats)
					fprintf(
					    stderr,
					    "lamkit tp: rank %d -> rank %d: %s tried again at %.3f "
					    "s\n",
					    tp->cfg.rank, peer, tp_mp_path_name(k),
					    (double)(now - m->t0) / 1e6);
			}
			left |= p->down[k];
		}
		if (left)
			m->downp[j++] = peer;
		else
			p->dlisted = 0;
	}
	m->ndownp = j;
	if (now < m->next_look || !m->nkept)
		return 0;
	m->next_look = now + STALL_LOOK_US;
	for (int peer = 0; peer < tp->cfg.size; peer++) {
		struct mp_peer *p = m->p[peer];
		int path = p && p->kh ? stalled(tp, p, peer, now) : -1;
		if (path >= 0 &&
		    tp_mp_path_down(tp, path, peer, "no acknowledgement while udp delivers", 0) < 0)
			return -1;
	}
	return 0;
}

void tp_mp_flush_acks(tp_t *tp)
{
	struct tp_mp *m = tp->mp;

	for (int i = 0; m->ack && i < m->nackp; i++) {
		struct mp_peer *p = m->p[m->ackp[i]];
		if (p->ack_due)
			ack_send(tp, p, m->ackp[i]);
		p->acklisted = 0;
	}
	m->nackp = 0;
}

int tp_mp_fo_counts(const tp_t *tp, int peer, uint64_t *downs, uint64_t *resent, uint64_t *acks,
                    uint64_t *dups)
{
	const struct mp_peer *p =
	    tp->mp && peer >= 0 && peer < tp->cfg.size ? tp->mp->p[peer] : NULL;

	if (!p)
		return -1;
	*downs = p->downs;
	*resent = p->resent;
	*acks = p->acks;
	*dups = p->dups;
	return 0;
}

int tp_mp_fo_due(const tp_t *tp)
{
	const struct tp_mp *m = tp->mp;

	return m->ack && (m->nackp || m->ndownp || m->nkept);
}

uint64_t tp_mp_fo_next(const tp_t *tp)
{
	const struct tp_mp *m = tp->mp;
	uint64_t due = UINT64_MAX;

	if (!m->ack)
		return due;
	for (int i = 0; i < m->nackp; i++) {
		const struct mp_peer *p = m->p[m->ackp[i]];
		if (p->ack_due && p->ack_due < due)
			due = p->ack_due;
	}
	for (int i = 0; i < m->ndownp; i++)
		for (int k = 0; k < TP_MP_PATHS; k++)
			if (m->p[m->downp[i]]->down[k] && m->p[m->downp[i]]->retry_at[k] < due)
				due = m->p[m->downp[i]]->retry_at[k];
	/* a kept fragment can be found stalled (stalled(), above: the first one on a tcp path
	 * that is up) only stall_us after it went, and no sooner than the next look */
	for (int peer = 0; m->nkept && peer < tp->cfg.size; peer++) {
		const struct mp_peer *p = m->p[peer];
		for (const struct mp_keep *k = p ? p->kh : NULL; k; k = k->next) {
			if (k->path == 1 || p->down[k->path])
				continue;
			uint64_t t = k->t_sent + m->stall_us + 1;
			t = t < m->next_look ? m->next_look : t;
			due = t < due ? t : due;
			break;
		}
	}
	return due;
}

void tp_mp_fo_free(tp_t *tp, struct mp_peer *p)
{
	while (p->kh) {
		struct mp_keep *k = p->kh;
		p->kh = k->next;
		free(k);
		tp->mp->nkept--;
	}
	p->kt = NULL;
}
