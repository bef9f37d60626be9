/* lib/transport/tp_mp.c: several paths to one peer (tcp and udp): fragments scheduled on either,
 * a per-pair sequence number so the receiver hands them up in the order they were sent, and
 * ops.sent reported in send order across paths. Format and policy: doc/PROTOCOL-mpi-wire.md
 * section 7. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp_internal.h"

/* A fragment that arrived ahead of its turn, copied. */
struct mp_held {
	struct mp_held *next;
	uint32_t seq, hlen;
	size_t len;
	_Alignas(8) unsigned char hdr[TP_HDR_MAX];
	char data[];
};

/* A fragment whose payload a path still holds: ops.sent for it waits for every earlier one. */
struct mp_done {
	struct mp_done *next;
	void *cookie; /* the layer above's (may be NULL) */
	int peer, done;
	int report; /* tp_send returned 1 for it: the layer above waits for ops.sent */
};

struct mp_peer {
	uint32_t sseq, rseq;                               /* next to send, next to hand up */
	struct mp_held *hh[TP_MP_PATHS], *ht[TP_MP_PATHS]; /* held, per arrival path */
	size_t held_bytes, max_held_bytes;
	struct mp_done *dh, *dt; /* payloads out on a path, in send order */
	/* scheduling: backlog seen at the last decision, bytes added since, drain rate (B/us) */
	size_t last_backlog[TP_MP_PATHS], added[TP_MP_PATHS];
	double rate[TP_MP_PATHS];
	uint64_t last_us;
	uint64_t frags[TP_MP_PATHS], bytes[TP_MP_PATHS], held_frags;
};

struct tp_mp {
	struct tp_mp_policy pol;
	struct mp_peer **p; /* per peer rank, made on first use */
	int release;        /* some peer has finished payloads at the head of its list */
	int stats;
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static const char *const path_names[TP_MP_PATHS] = {"tcp", "udp"};

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
	pol->sched = TP_MP_RATE;
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
				if (k < 0 || pol->weight[k] ||
				    (star && number(star + 1, 1, 1000, &w) < 0)) {
					snprintf(err, errlen,
					         "'%s' is not a path (tcp or udp, each once, "
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
			snprintf(err, errlen, "option '%s' needs a value (sched=, small=, cutoff=)",
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
		} else {
			snprintf(
			    err, errlen,
			    "bad option '%s=%s' (sched=rate|weight, small=tcp|udp, cutoff=BYTES)",
			    tok, eq);
			return -1;
		}
	}
	if (pol->npaths == 0) {
		snprintf(err, errlen, "no path");
		return -1;
	}
	if (pol->small < 0)
		pol->small = pol->order[0];
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
	m->p = calloc((size_t)size, sizeof *m->p);
	if (!m->p) {
		free(m);
		return NULL;
	}
	m->pol = *pol;
	m->stats = e && *e && strcmp(e, "0") != 0;
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
			fprintf(
			    stderr,
			    "lamkit tp: rank %d -> rank %d: tcp+udp: tcp_frags=%llu tcp_bytes=%llu "
			    "udp_frags=%llu udp_bytes=%llu; from rank %d: held=%llu "
			    "max_held_bytes=%zu\n",
			    tp->cfg.rank, r, (unsigned long long)p->frags[0],
			    (unsigned long long)p->bytes[0], (unsigned long long)p->frags[1],
			    (unsigned long long)p->bytes[1], r, (unsigned long long)p->held_frags,
			    p->max_held_bytes);
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
		free(p);
	}
	free(m->p);
	free(m);
	tp->mp = NULL;
}

/* ---- sending ---- */

static size_t backlog(tp_t *tp, int path, int peer)
{
	return path == 0 ? tp_tcp_backlog(tp->tcp, peer) : tp_udp_backlog(tp->udp, peer);
}

/* Which path carries the next fragment of len bytes. Small ones take the policy's small path
 * (latency); larger ones go where they finish first: (backlog + len) / drain rate, the rate
 * measured from how fast each path's backlog to this peer went down (sched=rate), or in fixed
 * proportion to the weights (sched=weight). */
static int choose(tp_t *tp, struct mp_peer *p, int peer, size_t len)
{
	const struct tp_mp_policy *pol = &tp->mp->pol;
	size_t bl[TP_MP_PATHS] = {0};
	int best = -1;
	double bestv = 0;

	if (pol->npaths == 1 || len < pol->cutoff)
		return pol->npaths == 1 ? pol->order[0] : pol->small;
	if (pol->sched == TP_MP_RATE) {
		uint64_t now = now_us(), dt = now - p->last_us;
		for (int i = 0; i < pol->npaths; i++) {
			int k = pol->order[i];
			bl[k] = backlog(tp, k, peer);
			size_t before = p->last_backlog[k] + p->added[k];
			/* a path that had something to drain: how much went, per microsecond */
			if (p->last_us && dt >= 2000 && before > 0) {
				double r =
				    (double)(before > bl[k] ? before - bl[k] : 0) / (double)dt;
				if (r > 0 || bl[k] > 0)
					p->rate[k] = 0.7 * p->rate[k] + 0.3 * r;
			}
		}
		if (!p->last_us || dt >= 2000) {
			for (int k = 0; k < TP_MP_PATHS; k++) {
				p->last_backlog[k] = bl[k];
				p->added[k] = 0;
			}
			p->last_us = now;
		}
	}
	for (int i = 0; i < pol->npaths; i++) {
		int k = pol->order[i];
		double v = pol->sched == TP_MP_RATE
		               ? (double)(bl[k] + len) / (p->rate[k] > 1e-3 ? p->rate[k] : 1e-3)
		               : (double)(p->bytes[k] + len) / pol->weight[k];
		if (best < 0 || v < bestv) {
			best = k;
			bestv = v;
		}
	}
	return best;
}

int tp_mp_send(tp_t *tp, int peer, const void *hdr, size_t hlen, const void *data, size_t len,
               void *cookie)
{
	struct mp_peer *p = peer_of(tp, peer);
	unsigned char h2[TP_HDR_WIRE];
	struct mp_done *d = NULL;
	int path, rc, track;

	if (!p)
		return -1;
	if ((uintptr_t)cookie & 1u) { /* the low bit tags our own cookies (tp.h) */
		errno = EINVAL;
		return -1;
	}
	path = choose(tp, p, peer, len);
	memcpy(h2, hdr, hlen);
	memcpy(h2 + hlen, &p->sseq, 4);
	/* A payload the path may keep by reference is tracked, so that the layer above hears of
	 * it (and of any later one) only once every earlier one on the other path is out too. */
	track = cookie != NULL || len > (path == 0 ? (size_t)64 * 1024 : tp_udp_eager_max(tp->udp));
	if (track) {
		d = malloc(sizeof *d);
		if (!d)
			return -1;
		*d = (struct mp_done){.cookie = cookie, .peer = peer};
		if (p->dt)
			p->dt->next = d;
		else
			p->dh = d;
		p->dt = d;
	}
	void *pc = d ? (void *)((uintptr_t)d | 1u) : NULL;
	rc = path == 0 ? tp_tcp_send(tp->tcp, peer, h2, hlen + 4, data, len, pc)
	               : tp_udp_send(tp->udp, peer, h2, hlen + 4, data, len, pc);
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
	p->sseq++;
	p->frags[path]++;
	p->bytes[path] += len;
	p->added[path] += len;
	if (!d)
		return rc; /* copied (a path keeps no untracked payload by reference) */
	if (rc == 1) {
		d->report = 1;
		return 1;
	}
	/* the path copied it: done now, but reported only after the earlier ones */
	d->done = 1;
	if (p->dh == d) {
		p->dh = NULL;
		p->dt = NULL;
		free(d);
		return 0;
	}
	tp->mp->release = 1;
	if (!cookie)
		return 0; /* nothing to report: the layer above may reuse its buffer now */
	d->report = 1;
	return 1;
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

int tp_mp_recv(tp_t *tp, int path, int peer, const void *hdr, size_t hlen, const void *data,
               size_t len)
{
	struct mp_peer *p = peer_of(tp, peer);
	uint32_t seq;

	if (!p)
		return -1;
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
		if ((int32_t)(seq - p->rseq) < 0) {
			snprintf(tp->err, sizeof tp->err,
			         "tp: rank %d: fragment %u from rank %d on %s came after %u was "
			         "handed up",
			         tp->cfg.rank, seq, peer, path_names[path], p->rseq);
			errno = EPROTO;
			return -1;
		}
		struct mp_held *h = malloc(sizeof *h + len);
		if (!h)
			return -1;
		h->next = NULL;
		h->seq = seq;
		h->hlen = (uint32_t)hlen;
		h->len = len;
		memcpy(h->hdr, hdr, hlen);
		if (len)
			memcpy(h->data, data, len);
		if (p->ht[path])
			p->ht[path]->next = h;
		else
			p->hh[path] = h;
		p->ht[path] = h;
		p->held_bytes += len;
		p->held_frags++;
		if (p->held_bytes > p->max_held_bytes)
			p->max_held_bytes = p->held_bytes;
		return 0;
	}
	up(tp, peer, hdr, hlen, data, len);
	p->rseq++;
	for (int more = 1; more;) { /* whatever was waiting for this one */
		more = 0;
		for (int k = 0; k < TP_MP_PATHS; k++) {
			struct mp_held *h = p->hh[k];
			if (!h || h->seq != p->rseq)
				continue;
			p->hh[k] = h->next;
			if (!p->hh[k])
				p->ht[k] = NULL;
			p->held_bytes -= h->len;
			up(tp, peer, h->hdr, h->hlen, h->data, h->len);
			free(h);
			p->rseq++;
			more = 1;
		}
	}
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
