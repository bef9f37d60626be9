/* lib/transport/tp_mp.c: several paths to one peer (tcp, udp, a second tcp connection):
 * fragments scheduled on any of them, a per-pair sequence number so the receiver hands them up in
 * the order they were sent, and ops.sent reported in send order across paths. Format and policy:
 * doc/PROTOCOL-mpi-wire.md section 7. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp_mp_int.h"

static const char *const path_names[TP_MP_PATHS] = {"tcp", "udp", "tcp2"};

const char *tp_mp_path_name(int path)
{
	return path >= 0 && path < TP_MP_PATHS ? path_names[path] : "?";
}

/* ---- the policy string ---- */

static int path_of(const char *s, size_t n)
{
	for (int i = 0; i < TP_MP_PATHS; i++)
		if (strlen(path_names[i]) == n && !strncmp(s, path_names[i], n))
			return i;
	return -1;
}

static int number(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int tp_mp_parse(const char *spec, struct tp_mp_policy *pol, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	int first = 1;

	memset(pol, 0, sizeof *pol);
	pol->small = -1;
	pol->cutoff = 16 * 1024;
	pol->window = 0; /* unset: chosen below */
	pol->sched = -1; /* unset: chosen below */
	if (strlen(spec) >= sizeof buf) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save), first = 0) {
		if (first) { /* the path list: tcp[*W],udp[*W] */
			char *s2 = NULL;
			for (char *p = strtok_r(tok, ",", &s2); p; p = strtok_r(NULL, ",", &s2)) {
				char *star = strchr(p, '*');
				long w = 1;
				int k = path_of(p, star ? (size_t)(star - p) : strlen(p));
				if (k == 0 && pol->weight[0]) /* tcp again: a second connection */
					k = TP_MP_TCP2;
				if (k < 0 || pol->weight[k] ||
				    (star && number(star + 1, 1, 1000, &w) < 0)) {
					snprintf(err, errlen,
					         "'%s' is not a path (tcp at most twice, udp once, "
					         "*WEIGHT 1-1000)",
					         p);
					return -1;
				}
				pol->weight[k] = (int)w;
				pol->order[pol->npaths++] = k;
			}
			continue;
		}
		char *eq = strchr(tok, '=');
		long v;
		if (!eq) {
			snprintf(err, errlen,
			         "option '%s' needs a value (sched=, small=, cutoff=, window=)",
			         tok);
			return -1;
		}
		*eq++ = '\0';
		if (!strcmp(tok, "sched") && (!strcmp(eq, "rate") || !strcmp(eq, "weight"))) {
			pol->sched = eq[0] == 'r' ? TP_MP_RATE : TP_MP_WEIGHT;
		} else if (!strcmp(tok, "small") && path_of(eq, strlen(eq)) >= 0) {
			pol->small = path_of(eq, strlen(eq));
		} else if (!strcmp(tok, "cutoff") && number(eq, 0, 1L << 30, &v) == 0) {
			pol->cutoff = (size_t)v;
		} else if (!strcmp(tok, "window") && number(eq, 1, 1L << 30, &v) == 0) {
			pol->window = (size_t)v;
		} else {
			snprintf(err, errlen,
			         "bad option '%s=%s' (sched=rate|weight, small=tcp|tcp2|udp, "
			         "cutoff=BYTES, "
			         "window=BYTES)",
			         tok, eq);
			return -1;
		}
	}
	if (pol->npaths == 0) {
		snprintf(err, errlen, "no path");
		return -1;
	}
	if (pol->weight[TP_MP_TCP2] && !pol->weight[0]) {
		snprintf(err, errlen, "tcp2 (a second tcp connection) needs tcp too");
		return -1;
	}
	if (pol->small < 0)
		pol->small = pol->order[0];
	/* tcp connections only: each has 8 MiB socket buffers and its large payloads are received
	 * in place, so the receiver holds no copies; a 1 MiB window starved them (tcp,tcp windowed
	 * bandwidth at 1-4 MiB was 0.5-0.6x of window=8 MiB, on loopback). With udp the window also
	 * bounds what udp has unacknowledged and what the receiver holds (section 7.2). */
	if (!pol->window)
		pol->window = pol->weight[1] ? 1024 * 1024 : 8 * 1024 * 1024;
	/* Two tcp connections are alike: split bytes by weight. Under sched=rate the second one,
	 * unmeasured, kept its weight as a rate (1 B/us) against the first one's measured 1100,
	 * and a 4 MiB blocking send, which never fills the window, never used it. */
	if (pol->sched < 0)
		pol->sched = pol->weight[1] ? TP_MP_RATE : TP_MP_WEIGHT;
	if (!pol->weight[pol->small]) {
		snprintf(err, errlen, "small=%s is not one of the paths", path_names[pol->small]);
		return -1;
	}
	return 0;
}

/* ---- state ---- */

struct tp_mp *tp_mp_create(const struct tp_mp_policy *pol, int size)
{
	struct tp_mp *m = calloc(1, sizeof *m);
	const char *e = getenv("LAMKIT_TP_STATS");

	if (!m)
		return NULL;
	const char *a = getenv("LAMKIT_MP_ACK"), *st = getenv("LAMKIT_MP_STALL_MS"),
	           *dbg = getenv("LAMKIT_TP_DEBUG");
	m->p = calloc((size_t)size, sizeof *m->p);
	m->busy = calloc((size_t)size, sizeof *m->busy);
	m->pend = calloc((size_t)size, sizeof *m->pend);
	m->ackp = calloc((size_t)size, sizeof *m->ackp);
	m->downp = calloc((size_t)size, sizeof *m->downp);
	if (!m->p || !m->busy || !m->pend || !m->ackp || !m->downp) {
		free(m->p);
		free(m->busy);
		free(m->pend);
		free(m->ackp);
		free(m->downp);
		free(m);
		return NULL;
	}
	m->pol = *pol;
	m->stats = e && *e && strcmp(e, "0") != 0;
	m->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
	/* section 7.4: a pair with tcp and udp survives a tcp failure */
	m->ack = (pol->weight[0] || pol->weight[TP_MP_TCP2]) && pol->weight[1] &&
	         !(a && !strcmp(a, "0"));
	m->stall_us = (uint64_t)(st && atoi(st) > 0 ? atoi(st) : 3000) * 1000;
	m->t0 = tp_now_us();
	for (int k = 0, n = 0; k < TP_MP_PATHS; k++)
		if (pol->weight[k])
			n += snprintf(m->name + n, sizeof m->name - (size_t)n, "%s%s", n ? "+" : "",
			              path_names[k]);
	return m;
}

static struct mp_peer *peer_of(tp_t *tp, int peer)
{
	struct tp_mp *m = tp->mp;

	if (!m->p[peer]) {
		struct mp_peer *p = calloc(1, sizeof *p);
		if (!p)
			return NULL;
		for (int k = 0; k < TP_MP_PATHS; k++)
			p->rate[k] = m->pol.weight[k]; /* until measured: the policy's weights */
		m->p[peer] = p;
	}
	return m->p[peer];
}

/* LAMKIT_TP_STATS=1: "rank A -> rank B: tcp+udp: tcp_frags= tcp_bytes= udp_frags= udp_bytes=
 * tcp_MBps= udp_MBps=; from rank B: held= max_held_bytes=" (the paths of the policy). */
static void print_peer(const tp_t *tp, int r, const struct mp_peer *p)
{
	const struct tp_mp *m = tp->mp;
	char line[512];
	int n = snprintf(line, sizeof line, "lamkit tp: rank %d -> rank %d: %s:", tp->cfg.rank, r,
	                 m->name);

	for (int k = 0; k < TP_MP_PATHS; k++)
		if (m->pol.weight[k] && n > 0 && (size_t)n < sizeof line)
			n += snprintf(line + n, sizeof line - (size_t)n,
			              " %s_frags=%llu %s_bytes=%llu", path_names[k],
			              (unsigned long long)p->frags[k], path_names[k],
			              (unsigned long long)p->bytes[k]);
	for (int k = 0; k < TP_MP_PATHS; k++)
		if (m->pol.weight[k] && n > 0 && (size_t)n < sizeof line)
			n += snprintf(line + n, sizeof line - (size_t)n, " %s_MBps=%.0f",
			              path_names[k], p->measured[k] ? p->rate[k] : 0.0);
	if (m->ack && n > 0 && (size_t)n < sizeof line)
		snprintf(line + n, sizeof line - (size_t)n, " tcp_down=%llu resent=%llu acks=%llu",
		         (unsigned long long)p->downs, (unsigned long long)p->resent,
		         (unsigned long long)p->acks);
	fprintf(stderr, "%s; from rank %d: held=%llu max_held_bytes=%zu%s", line, r,
	        (unsigned long long)p->held_frags, p->max_held_bytes, m->ack ? "" : "\n");
	if (m->ack)
		fprintf(stderr, " dup=%llu\n", (unsigned long long)p->dups);
}

const char *tp_mp_name(const tp_t *tp)
{
	return tp->mp->name;
}

size_t tp_mp_copy_max(const tp_t *tp)
{
	size_t c = 64 * 1024; /* tcp's */

	if (tp->mp->pol.weight[1] && tp_udp_eager_max(tp->udp) < c)
		c = tp_udp_eager_max(tp->udp);
	return c;
}

void tp_mp_destroy(tp_t *tp)
{
	struct tp_mp *m = tp->mp;

	if (!m)
		return;
	for (int r = 0; r < tp->cfg.size; r++) {
		struct mp_peer *p = m->p[r];
		if (!p)
			continue;
		if (m->stats)
			print_peer(tp, r, p);
		for (int k = 0; k < TP_MP_PATHS; k++)
			while (p->hh[k]) {
				struct mp_held *h = p->hh[k];
				p->hh[k] = h->next;
				free(h);
			}
		while (p->dh) {
			struct mp_done *d = p->dh;
			p->dh = d->next;
			free(d);
		}
		for (int k = 0; k < TP_MP_PATHS; k++)
			free(p->out[k]);
		tp_mp_fo_free(tp, p);
		free(p);
	}
	free(m->p);
	free(m->busy);
	free(m->pend);
	free(m->ackp);
	free(m->downp);
	free(m);
	tp->mp = NULL;
}

/* ---- sending ---- */

static size_t backlog(tp_t *tp, int path, int peer)
{
	if (path == 1)
		return tp_udp_backlog(tp->udp, peer);
	return tp_tcp_backlog(path == 0 ? tp->tcp : tp->tcp2, peer);
}

/* Record a fragment put on path (its start in all bytes: p->all_bytes before it). */
static int out_push(struct mp_peer *p, int path, size_t len)
{
	if (p->out_n[path] == p->out_cap[path]) {
		size_t cap = p->out_cap[path] ? 2 * p->out_cap[path] : 64;
		struct mp_out *o = malloc(cap * sizeof *o);
		if (!o)
			return -1;
		for (size_t i = 0; i < p->out_n[path]; i++)
			o[i] = p->out[path][(p->out_head[path] + i) % p->out_cap[path]];
		free(p->out[path]);
		p->out[path] = o;
		p->out_cap[path] = cap;
		p->out_head[path] = 0;
	}
	p->out[path][(p->out_head[path] + p->out_n[path]) % p->out_cap[path]] =
	    (struct mp_out){p->bytes[path] + len, p->all_bytes, len};
	p->out_n[path]++;
	return 0;
}

/* Forget path's fragments that are out of its backlog bl (a path finishes in order), and
 * return how many bytes the other paths sent since the oldest one left on it was sent: what
 * the receiver may have to hold while that one is on its way. */
static uint64_t out_ahead(struct mp_peer *p, int path, size_t bl)
{
	uint64_t done = p->bytes[path] > bl ? p->bytes[path] - bl : 0;
	const struct mp_out *o;

	while (p->out_n[path] && p->out[path][p->out_head[path]].path_end <= done) {
		p->out_head[path] = (p->out_head[path] + 1) % p->out_cap[path];
		p->out_n[path]--;
	}
	if (!p->out_n[path])
		return 0;
	o = &p->out[path][p->out_head[path]];
	/* all bytes since it started, less this path's own from it on */
	return p->all_bytes - o->all_start - (p->bytes[path] - (o->path_end - o->len));
}

/* Which path carries the next fragment of len bytes. Small ones take the policy's small path
 * (latency); larger ones go to a path whose backlog to the peer is under the window, where they
 * finish first: (backlog + len) / drain rate (sched=rate; the rate is measured by tp_mp_poll),
 * or in fixed proportion to the weights (sched=weight). -1 when every path is full: the
 * fragment waits here, so that neither path runs far ahead of the other and the receiver holds
 * little. bl gets the backlogs seen. */
static int choose(tp_t *tp, struct mp_peer *p, int peer, size_t len, size_t bl[TP_MP_PATHS])
{
	const struct tp_mp_policy *pol = &tp->mp->pol;
	int best = -1;
	double bestv = 0;

	uint64_t ahead[TP_MP_PATHS];

	if (pol->npaths == 1 || len < pol->cutoff) {
		if (pol->npaths == 1 || !p->down[pol->small])
			return pol->npaths == 1 ? pol->order[0] : pol->small;
		for (int i = 0; i < pol->npaths; i++) /* the small path failed: the next one up */
			if (!p->down[pol->order[i]])
				return pol->order[i];
		return -1;
	}
	for (int k = 0; k < TP_MP_PATHS; k++) {
		bl[k] = pol->weight[k] ? backlog(tp, k, peer) : 0;
		ahead[k] = out_ahead(p, k, bl[k]);
	}
	for (int i = 0; i < pol->npaths; i++) {
		int k = pol->order[i], skewed = 0;
		double v;
		if (bl[k] >= pol->window || p->down[k])
			continue;
		/* the receiver holds what arrives beyond the oldest fragment still out on the
		 * other path: no more than TP_MP_SKEW windows of it */
		for (int j = 0; j < TP_MP_PATHS; j++)
			if (j != k && !p->down[j] && p->out_n[j] &&
			    ahead[j] + len > TP_MP_SKEW * pol->window)
				skewed = 1;
		if (skewed)
			continue;
		if (pol->sched == TP_MP_RATE)
			v = (double)(bl[k] + len) / (p->rate[k] > 1e-3 ? p->rate[k] : 1e-3);
		else
			v = (double)(p->bytes[k] + len) / pol->weight[k];
		if (best < 0 || v < bestv) {
			best = k;
			bestv = v;
		}
	}
	return best;
}

/* A large fragment went out on path: open a busy interval there if none is open (the backlog
 * it found counts as drained within it), else add to the open one. */
static void busy_add(tp_t *tp, struct mp_peer *p, int peer, int path, size_t before, size_t len)
{
	struct tp_mp *m = tp->mp;

	if (p->busy_since[path]) {
		p->busy_bytes[path] += len;
		return;
	}
	if (m->pol.sched != TP_MP_RATE || len < m->pol.cutoff)
		return; /* small fragments alone are latency, not rate */
	p->busy_since[path] = tp_now_us();
	p->busy_bytes[path] = before + len;
	if (!p->listed) {
		p->listed = 1;
		m->busy[m->nbusy++] = peer;
	}
}

static int dispatch(tp_t *tp, struct mp_peer *p, int peer);

/* Hand queued fragments to paths that have room again. Then close busy intervals whose
 * backlog is gone: rate = bytes drained / time busy. An interval is
 * only measured when the previous look was recent (the program was in MPI, polling): else the
 * path may have been idle for most of it. A long interval is measured and restarted, so the
 * rate follows a path that changes under load. */
int tp_mp_poll(tp_t *tp)
{
	struct tp_mp *m = tp->mp;
	uint64_t now = tp_now_us();
	int fresh = now - m->last_check <= 200, j = 0;

	if (m->ack_now) /* a sender waits for it: whatever the time since the last look */
		tp_mp_fo_poll(tp, now);
	if (now - m->last_check < 10)
		return 0; /* tcp's backlog is a system call: not on every poll */
	m->last_check = now;
	if (tp_mp_fo_poll(tp, now) < 0)
		return -1;
	for (int i = 0; i < m->npend; i++) {
		int peer = m->pend[i];
		struct mp_peer *p = m->p[peer];
		if (dispatch(tp, p, peer) < 0)
			return -1;
		if (p->qh)
			m->pend[j++] = peer;
		else
			p->plisted = 0;
	}
	m->npend = j;
	j = 0;
	for (int i = 0; i < m->nbusy; i++) {
		int peer = m->busy[i], open = 0;
		struct mp_peer *p = m->p[peer];
		for (int k = 0; k < TP_MP_PATHS; k++) {
			if (!p->busy_since[k])
				continue;
			size_t bl = backlog(tp, k, peer);
			uint64_t dt = now - p->busy_since[k];
			if (bl == 0 || dt >= 5000) {
				size_t done = p->busy_bytes[k] > bl ? p->busy_bytes[k] - bl : 0;
				if (fresh && dt >= 20 && done > 0) {
					double r = (double)done / (double)dt;
					p->rate[k] =
					    p->measured[k] ? 0.5 * p->rate[k] + 0.5 * r : r;
					p->measured[k] = 1;
				}
				p->busy_since[k] = bl ? now : 0;
				p->busy_bytes[k] = bl;
			}
			open |= p->busy_since[k] != 0;
		}
		if (open)
			m->busy[j++] = peer;
		else
			p->listed = 0;
	}
	m->nbusy = j;
	return 0;
}

int tp_mp_poll_due(const tp_t *tp)
{
	return tp->mp && (tp->mp->nbusy || tp->mp->npend || tp->mp->ack_now || tp_mp_fo_due(tp));
}

int tp_mp_sleep_us(const tp_t *tp, uint64_t *us)
{
	const struct tp_mp *m = tp->mp;
	uint64_t due, now;

	if (m->nbusy || m->npend || m->ack_now || m->release)
		return -1;
	due = tp_mp_fo_next(tp);
	if (due == UINT64_MAX)
		return 0;
	now = tp_now_us();
	if (due <= now)
		return -1;
	if (due - now < *us)
		*us = due - now;
	return 0;
}

int tp_mp_queued(const tp_t *tp)
{
	return tp->mp ? tp->mp->nqueued : 0;
}

/* A new entry at the tail of peer's list. */
static struct mp_done *track_new(struct mp_peer *p, int peer, void *cookie, size_t copy)
{
	struct mp_done *d = malloc(sizeof *d + copy);

	if (!d)
		return NULL;
	memset(d, 0, sizeof *d);
	d->cookie = cookie;
	d->peer = peer;
	if (p->dt)
		p->dt->next = d;
	else
		p->dh = d;
	p->dt = d;
	return d;
}

int tp_mp_put_raw(tp_t *tp, int peer, int path, uint32_t seq, void *cookie, const void *hdr,
                  size_t hlen, const void *data, size_t len)
{
	unsigned char h2[TP_HDR_WIRE];

	memcpy(h2, hdr, hlen);
	memcpy(h2 + hlen, &seq, 4);
	/* udp keeps a large payload by reference until its own acknowledgement; without a cookie
	 * nobody would hear when that is (a copy kept in mp_keep, freed by the end-to-end ACK, or
	 * the caller's buffer, reused at once), so such a payload is copied */
	if (path == 1)
		return cookie ? tp_udp_send(tp->udp, peer, h2, hlen + 4, data, len, cookie)
		              : tp_udp_send_copy(tp->udp, peer, h2, hlen + 4, data, len);
	return tp_tcp_send(path == 0 ? tp->tcp : tp->tcp2, peer, h2, hlen + 4, data, len, cookie);
}

/* Hand one fragment to path, with the next sequence number; d is its entry (or NULL for an
 * untracked small copy). A tcp path that fails (with udp there) is put down and the fragment
 * goes over udp (section 7.4). The path's answer: 0 copied, 1 kept by reference, -1. */
static int put(tp_t *tp, struct mp_peer *p, int peer, int path, struct mp_done *d, const void *hdr,
               size_t hlen, const void *data, size_t len, size_t before)
{
	void *pc = d ? (void *)((uintptr_t)d | 1u) : NULL;
	int rc = tp_mp_put_raw(tp, peer, path, p->sseq, pc, hdr, hlen, data, len);

	if (rc < 0 && path != 1 && tp->mp->ack &&
	    tp_mp_path_down(tp, path, peer, tp_error(tp)[0] ? tp_error(tp) : strerror(errno), 0) ==
	        0) {
		path = 1;
		before = tp_udp_backlog(tp->udp, peer);
		rc = tp_mp_put_raw(tp, peer, path, p->sseq, pc, hdr, hlen, data, len);
	}
	if (rc < 0)
		return -1;
	/* kept until acknowledged: a tcp connection that fails loses what it had taken. By
	 * reference when the caller (or d, for a queued copy) keeps the payload until ops.sent */
	struct mp_done *kd = d && (d->cookie || d->queued || rc == 1) ? d : NULL;
	if (tp->mp->ack && path != 1 &&
	    tp_mp_keep(tp, p, path, p->sseq, kd, hdr, hlen, data, len) < 0)
		return -1;
	if (tp->mp->pol.npaths > 1 && out_push(p, path, len) < 0)
		p->out_n[path] = 0; /* no memory for the record: the skew bound lapses, no more */
	p->sseq++;
	p->frags[path]++;
	p->bytes[path] += len;
	p->all_bytes += len;
	busy_add(tp, p, peer, path, before, len);
	return rc;
}

/* Hand queued fragments to paths while one has room. 0, or -1 (a path failed). */
static int dispatch(tp_t *tp, struct mp_peer *p, int peer)
{
	struct mp_done *d;

	while ((d = p->qh)) {
		size_t bl[TP_MP_PATHS] = {0};
		int path = choose(tp, p, peer, d->len, bl), rc;
		if (path < 0)
			return 0;
		rc = put(tp, p, peer, path, d, d->hdr, d->hlen, d->data, d->len, bl[path]);
		if (rc < 0)
			return -1;
		p->qh = d->next;
		d->queued = 0;
		tp->mp->nqueued--;
		if (rc == 0) { /* copied: reported in its turn (and, kept, once acknowledged) */
			d->written = 1;
			if (!d->need_ack) {
				d->done = 1;
				tp->mp->release = 1;
			}
		}
	}
	return 0;
}

int tp_mp_send(tp_t *tp, int peer, const void *hdr, size_t hlen, const void *data, size_t len,
               void *cookie)
{
	struct tp_mp *m = tp->mp;
	struct mp_peer *p = peer_of(tp, peer);
	struct mp_done *d = NULL;
	size_t bl[TP_MP_PATHS] = {0};
	int path, rc;

	if (!p)
		return -1;
	if ((uintptr_t)cookie & 1u) { /* the low bit tags our own cookies (tp.h) */
		errno = EINVAL;
		return -1;
	}
	if (!p->qh && (path = choose(tp, p, peer, len, bl)) >= 0) {
		/* A payload the path may keep by reference is tracked, so that the layer above
		 * hears of it (and of any later one) only once every earlier one on the other path
		 * is out too. */
		if ((cookie != NULL ||
		     len > (path != 1 ? (size_t)64 * 1024 : tp_udp_eager_max(tp->udp))) &&
		    !(d = track_new(p, peer, cookie, 0)))
			return -1;
		rc = put(tp, p, peer, path, d, hdr, hlen, data, len, bl[path]);
		if (rc < 0) {
			if (d) { /* still the tail: nothing after it was sent */
				struct mp_done **pp = &p->dh, *prev = NULL;
				while (*pp != d) {
					prev = *pp;
					pp = &(*pp)->next;
				}
				*pp = NULL;
				p->dt = prev;
				free(d);
			}
			return -1;
		}
		if (!d)
			return rc; /* copied (a path keeps no untracked payload by reference) */
		if (rc == 1) {
			d->report = 1;
			return 1;
		}
		/* the path copied it: done now (kept on tcp: once acknowledged), but reported only
		 * after the earlier ones */
		d->written = 1;
		d->done = !d->need_ack;
		if (d->done && p->dh == d) {
			p->dh = NULL;
			p->dt = NULL;
			free(d);
			return 0;
		}
		m->release |= d->done;
		if (!cookie)
			return 0; /* nothing to report: the layer above may reuse its buffer now */
		d->report = 1;
		return 1;
	}
	/* Every path is full (or earlier fragments wait): queue it, in order. A small payload is
	 * copied, a large one kept by reference as a path would. */
	int small = len <= tp_mp_copy_max(tp);
	if (!(d = track_new(p, peer, cookie, small ? len : 0)))
		return -1;
	d->queued = 1;
	d->hlen = hlen;
	d->len = len;
	memcpy(d->hdr, hdr, hlen);
	if (small) {
		if (len)
			memcpy(d->copy, data, len);
		d->data = d->copy;
	} else {
		d->data = data;
	}
	if (!p->qh)
		p->qh = d;
	m->nqueued++;
	if (!p->plisted) {
		p->plisted = 1;
		m->pend[m->npend++] = peer;
	}
	d->report = !small || cookie;
	return d->report;
}

/* Report finished payloads at the head of each peer's list, in send order. */
static void release_peer(tp_t *tp, struct mp_peer *p)
{
	struct mp_done *d;

	while ((d = p->dh) && d->done) {
		p->dh = d->next;
		if (!p->dh)
			p->dt = NULL;
		void *c = d->cookie;
		int report = d->report;
		free(d);
		if (report && tp->cfg.ops.sent)
			tp->cfg.ops.sent(tp->cfg.arg, c);
	}
}

void tp_mp_sent(tp_t *tp, void *tagged)
{
	struct mp_done *d = (struct mp_done *)((uintptr_t)tagged & ~(uintptr_t)1);
	struct mp_peer *p = tp->mp->p[d->peer];

	d->written = 1;
	if (!d->need_ack || d->acked) /* kept on tcp: its ACK too (section 7.4) */
		d->done = 1;
	release_peer(tp, p);
}

void tp_mp_release(tp_t *tp)
{
	struct tp_mp *m = tp->mp;

	m->release = 0;
	for (int r = 0; r < tp->cfg.size; r++)
		if (m->p[r] && m->p[r]->dh && m->p[r]->dh->done)
			release_peer(tp, m->p[r]);
}

int tp_mp_release_due(const tp_t *tp)
{
	return tp->mp && tp->mp->release;
}

/* ---- receiving ---- */

static void up(tp_t *tp, int peer, const void *hdr, size_t hlen, const void *data, size_t len)
{
	union {
		unsigned char b[TP_HDR_MAX];
		uint64_t align;
	} h;

	memcpy(h.b, hdr, hlen);
	memset(h.b + hlen, 0, TP_HDR_MAX - hlen);
	tp->cfg.ops.recv(tp->cfg.arg, peer, h.b, hlen, data, len);
}

/* Whether fragment seq is held already (a copy sent again after a failover). */
static int mp_is_held(const struct mp_peer *p, uint32_t seq)
{
	for (int k = 0; k < TP_MP_PATHS; k++)
		for (const struct mp_held *h = p->hh[k]; h; h = h->next)
			if (h->seq == seq)
				return 1;
	return 0;
}

int tp_mp_recv(tp_t *tp, int path, int peer, const void *hdr, size_t hlen, const void *data,
               size_t len, int placed)
{
	struct mp_peer *p = peer_of(tp, peer);
	uint32_t seq;

	if (!p)
		return -1;
	if (hlen == 4 && tp->mp->ack) { /* an ACK (section 7.4): no header of the layer above */
		uint32_t cum;
		memcpy(&cum, hdr, 4);
		tp_mp_ack_in(tp, p, peer, cum);
		return 0;
	}
	if (hlen < 4 || hlen - 4 > TP_HDR_MAX) {
		snprintf(
		    tp->err, sizeof tp->err,
		    "tp: rank %d: a fragment from rank %d on %s has no multipath sequence number "
		    "(do both use the same LAMKIT_TP?)",
		    tp->cfg.rank, peer, path_names[path]);
		errno = EPROTO;
		return -1;
	}
	hlen -= 4;
	memcpy(&seq, (const char *)hdr + hlen, 4);
	if (seq != p->rseq) {
		/* ahead of its turn (each path is in order, so the gap is on the other one) */
		if ((int32_t)(seq - p->rseq) < 0 && tp->mp->ack) {
			p->dups++; /* sent again after a failover, and here already */
			return 0;
		}
		if (tp->mp->ack && mp_is_held(p, seq)) {
			p->dups++;
			return 0;
		}
		if ((int32_t)(seq - p->rseq) < 0) {
			snprintf(tp->err, sizeof tp->err,
			         "tp: rank %d: fragment %u from rank %d on %s came after %u was "
			         "handed up",
			         tp->cfg.rank, seq, peer, path_names[path], p->rseq);
			errno = EPROTO;
			return -1;
		}
		/* a placed payload stays where it is (the layer above gave that memory until recv)
		 */
		struct mp_held *h = malloc(sizeof *h + (placed ? 0 : len));
		if (!h)
			return -1;
		h->next = NULL;
		h->seq = seq;
		h->hlen = (uint32_t)hlen;
		h->len = len;
		memcpy(h->hdr, hdr, hlen);
		h->at = placed ? data : h->data;
		if (len && !placed)
			memcpy(h->data, data, len);
		if (p->ht[path])
			p->ht[path]->next = h;
		else
			p->hh[path] = h;
		p->ht[path] = h;
		p->held_bytes += placed ? 0 : len;
		p->held_frags++;
		if (p->held_bytes > p->max_held_bytes)
			p->max_held_bytes = p->held_bytes;
		return 0;
	}
	up(tp, peer, hdr, hlen, data, len);
	p->rseq++;
	/* a payload over TP_COPY_MAX may be one its sender waits for (kept by reference until
	 * acknowledged): acknowledged at once */
	size_t upb = len;
	int large = len > TP_COPY_MAX;
	for (int more = 1; more;) { /* whatever was waiting for this one */
		more = 0;
		for (int k = 0; k < TP_MP_PATHS; k++) {
			struct mp_held *h = p->hh[k];
			if (!h || h->seq != p->rseq)
				continue;
			p->hh[k] = h->next;
			if (!p->hh[k])
				p->ht[k] = NULL;
			p->held_bytes -= h->at == h->data ? h->len : 0;
			up(tp, peer, h->hdr, h->hlen, h->at, h->len);
			upb += h->len;
			large |= h->len > TP_COPY_MAX;
			free(h);
			p->rseq++;
			more = 1;
		}
	}
	if (tp->mp->ack)
		tp_mp_ack_owed(tp, p, peer, upb, large);
	return 0;
}

int tp_mp_counts(const tp_t *tp, int peer, uint64_t frags[TP_MP_PATHS], uint64_t *held)
{
	const struct mp_peer *p =
	    tp->mp && peer >= 0 && peer < tp->cfg.size ? tp->mp->p[peer] : NULL;

	if (!p)
		return -1;
	for (int k = 0; k < TP_MP_PATHS; k++)
		frags[k] = p->frags[k];
	*held = p->held_frags;
	return 0;
}

size_t tp_mp_max_held(const tp_t *tp, int peer)
{
	const struct mp_peer *p =
	    tp->mp && peer >= 0 && peer < tp->cfg.size ? tp->mp->p[peer] : NULL;

	return p ? p->max_held_bytes : 0;
}
