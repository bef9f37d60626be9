/* lib/boot/watch.c: the universe's watch (watch.h): the head watches its members and declares
 * them down on evidence, the members watch the head and look for a new one when it goes.
 * Rules (doc/PROTOCOL-agent.md, "The watch"): only a head declares; a node declared down stays
 * down (its agent exits when it hears); "unreachable" (the network, not the agent, may be at
 * fault) needs a quorum of the nodes up; a stall of this agent is no evidence against others.
 * This file: links, the frames written on them, their callbacks, the timer and the interface;
 * the head's side is watch_head.c, a member's watch_seek.c (watch_int.h). */
#include "watch_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* {==== links */

static void l_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg);
static void l_close(boot_link_t *l, int err, const char *why, void *arg);
static void l_ready(boot_link_t *l, void *arg);

static const struct boot_link_cbs wcbs = {
    .on_ready = l_ready, .on_frame = l_frame, .on_close = l_close};

static struct wlink *link_new(boot_watch_t *w, boot_link_t *l, int kind, int node)
{
	struct wlink *k = calloc(1, sizeof *k);

	if (!k)
		return NULL;
	k->w = w;
	k->l = l;
	k->kind = kind;
	k->node = node;
	k->t0 = k->heard = k->sent = now_ms();
	k->next = w->links;
	w->links = k;
	return k;
}

/* Forget and close a link (its callbacks never run again). */
static void link_drop(boot_watch_t *w, struct wlink *k)
{
	for (struct wlink **p = &w->links; *p; p = &(*p)->next)
		if (*p == k) {
			*p = k->next;
			break;
		}
	if (w->head == k)
		w->head = NULL;
	boot_link_destroy(k->l);
	free(k);
}

void wt_send_frame(struct wlink *k, unsigned type, const struct core_wbuf *b)
{
	if (k->l && boot_link_send(k->l, type, b ? b->p : NULL, b ? b->len : 0, NULL, 0) == 0)
		k->sent = now_ms();
}

/* Connect to node n (view entry) for kind (L_SEEK, L_PROBE). NULL when it cannot even start
 * (the reason is then in why). */
struct wlink *wt_link_to(boot_watch_t *w, const struct boot_wnode *n, int kind, char *why,
                         size_t wl)
{
	char err[300], peer[400];
	int fd = boot_tcp_connect(n->addr, n->port, err, sizeof err);

	if (fd < 0) {
		snprintf(why, wl, "%s", strstr(err, "refused") ? "exited" : "unreachable");
		return NULL;
	}
	snprintf(peer, sizeof peer, "%s (%s:%d)", n->host, n->addr, n->port);
	/* the handshake's own timeout is a backstop: tick() judges a slow one first */
	boot_link_t *l = boot_link_secure(w->o.ev, fd, 1, w->o.key, peer,
	                                  2 * w->o.timeout_ms + 1000, &wcbs, NULL);
	struct wlink *k = l ? link_new(w, l, kind, n->index) : NULL;
	if (!k) {
		if (l)
			boot_link_destroy(l);
		else
			close(fd);
		snprintf(why, wl, "out of memory");
		return NULL;
	}
	boot_link_set_arg(l, k);
	return k;
}

/* Why a link closed, as evidence against the node: its kernel refused or reset (the agent is
 * gone), the network failed, or it closed in order. */
static const char *close_evidence(int err)
{
	switch (err) {
	case ECONNREFUSED:
	case ECONNRESET:
	case EPIPE:
	case 0:
		return "exited";
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ENETDOWN:
	case ETIMEDOUT:
		return "unreachable";
	default:
		return "exited";
	}
}

/* ====} */

/* {==== frames written */

static void w_me(boot_watch_t *w, struct core_wbuf *b)
{
	core_w_u32(b, (uint32_t)w->o.me);
	core_w_i64(b, w->o.inc);
	core_w_u32(b, (uint32_t)w->role);
	core_w_u32(b, (uint32_t)(w->role == R_MEMBER || w->role == R_HEAD ? w->v.head : 0));
	core_w_u32(b, w->v.term);
}

void wt_send_simple(struct wlink *k, unsigned type)
{
	struct core_wbuf b = {0};

	wt_send_frame(k, type, &b);
	core_w_free(&b);
}

void wt_send_bye(struct wlink *k, const char *why)
{
	struct core_wbuf b = {0};

	core_w_u32(&b, (uint32_t)k->w->o.me);
	core_w_str(&b, why);
	wt_send_frame(k, BOOT_MSG_WATCH_BYE, &b);
	core_w_free(&b);
}

void wt_send_down(struct wlink *k, const struct boot_wnode *n)
{
	struct core_wbuf b = {0};

	core_w_i64(&b, n->since);
	core_w_str(&b, n->why);
	wt_send_frame(k, BOOT_MSG_WATCH_DOWN, &b);
	core_w_free(&b);
	boot_link_flush(k->l, 200);
}

void wt_send_nothead(struct wlink *k)
{
	struct core_wbuf b = {0};
	boot_watch_t *w = k->w;

	core_w_u32(&b, (uint32_t)(w->role == R_MEMBER || w->role == R_HEAD ? w->v.head : 0));
	core_w_u32(&b, w->v.term);
	wt_send_frame(k, BOOT_MSG_WATCH_NOTHEAD, &b);
	core_w_free(&b);
}

void wt_send_view(boot_watch_t *w, struct wlink *only)
{
	struct core_wbuf b = {0};

	boot_wview_encode(&b, &w->v);
	for (struct wlink *k = w->links; k; k = k->next)
		if ((only ? k == only : k->kind == L_MEMBER) && k->ready && !k->dead)
			wt_send_frame(k, BOOT_MSG_WATCH_VIEW, &b);
	core_w_free(&b);
}

void wt_changed(boot_watch_t *w)
{
	if (w->role == R_HEAD) {
		w->v.version++;
		wt_send_view(w, NULL);
	}
	if (w->o.on_change)
		w->o.on_change(w->o.arg);
}

/* ====} */

/* {==== link callbacks */

static void l_ready(boot_link_t *l, void *arg)
{
	struct wlink *k = arg;
	boot_watch_t *w = k->w;
	struct core_wbuf b = {0};

	k->ready = 1;
	k->heard = now_ms();
	if (k->kind == L_SEEK) {
		struct boot_wnode *me = boot_wview_node(&w->v, w->o.me);
		core_w_u32(&b, (uint32_t)w->o.me);
		core_w_i64(&b, w->o.inc);
		core_w_u32(&b, w->v.term);
		core_w_str(&b, me ? me->host : core_hostname());
		core_w_u32(&b, (uint32_t)w->o.port);
		core_w_u32(&b, (uint32_t)w->o.cpus);
		wt_send_frame(k, BOOT_MSG_WATCH_JOIN, &b);
	} else if (k->kind == L_PROBE) {
		w_me(w, &b);
		wt_send_frame(k, BOOT_MSG_WATCH_PROBE, &b);
	}
	k->asked = 1;
	core_w_free(&b);
}

static void down_me(boot_watch_t *w, struct core_rbuf *r)
{
	core_r_i64(r);
	const char *why = core_r_str(r);

	if (w->role == R_GONE)
		return;
	w->role = R_GONE;
	w->o.on_down(w->o.arg, r->err ? "declared down" : why);
}

static void l_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	struct wlink *k = arg;
	boot_watch_t *w = k->w;
	struct core_rbuf r = {.p = d, .len = len};

	if (w->role == R_GONE)
		return;
	if (type == BOOT_MSG_WATCH_DOWN) { /* whatever the link was for: final */
		down_me(w, &r);
		return;
	}
	if (k->dead)
		return;
	k->heard = now_ms();
	if (k->kind == L_MEMBER && w->nsus)
		wt_unsuspect(w, k->node);
	switch (type) {
	case BOOT_MSG_WATCH_VIEW:
		if (k->kind == L_SEEK && w->head == k && w->role == R_SEEK) {
			k->kind = L_HEAD;
			w->role = R_MEMBER;
			w->lead = 1;
			w->lost = 0;
			w->nsus = 0;
			core_log(CORE_LOG_DEBUG, "watch: node %d follows node %d", w->o.me,
			         k->node);
		}
		if (k->kind == L_HEAD)
			wt_adopt(w, &r);
		return;
	case BOOT_MSG_WATCH_NOTHEAD:
		wt_on_nothead(w, k, &r);
		return;
	case BOOT_MSG_WATCH_BYE: {
		core_r_u32(&r);
		const char *why = core_r_str(&r);
		if (k->kind == L_HEAD) {
			wt_lose_head(w, strcmp(why, "halt") ? "exited" : "halted");
		} else if (k->kind == L_MEMBER) {
			k->dead = 1;
			if (!strcmp(why, "halt")) {
				struct boot_wnode *n = boot_wview_node(&w->v, k->node);
				wt_declare(w, k->node, n ? n->inc : 0, "halted");
			} else { /* it gave up on us: see what it follows now */
				int64_t *g = wt_grace_of(w, k->node);
				if (g)
					*g = now_ms() + 200;
			}
		}
		return;
	}
	case BOOT_MSG_WATCH_STATUS: {
		int node = (int)core_r_u32(&r);
		int64_t inc = core_r_i64(&r);
		int role = (int)core_r_u32(&r), head = (int)core_r_u32(&r);
		uint32_t term = core_r_u32(&r);
		if (r.err || k->kind != L_PROBE)
			return;
		k->dead = 1; /* one answer is all a probe wants */
		wt_judge(w, k, node, inc, role, head, term);
		return;
	}
	default: /* PING, HELLO: liveness only */
		return;
	}
}

static void l_close(boot_link_t *l, int err, const char *why, void *arg)
{
	struct wlink *k = arg;
	boot_watch_t *w = k->w;

	(void)l;
	if (k->dead || w->role == R_GONE) {
		k->dead = 1;
		return;
	}
	k->dead = 1;
	if (k->kind == L_HEAD && w->head == k) {
		w->head = NULL;
		wt_lose_head(w, close_evidence(err));
	} else if (k->kind == L_SEEK && w->head == k) {
		w->head = NULL;
		wt_seek_failed(w, k->node, k->ready ? "exited" : close_evidence(err));
	} else if (k->kind == L_PROBE && !k->asked) {
		wt_suspect(w, k->node, close_evidence(err));
	} else if (k->kind == L_MEMBER && w->role == R_HEAD) {
		struct boot_wnode *n = boot_wview_node(&w->v, k->node);
		if (n && n->state == BOOT_WUP && !wt_member_link(w, k->node))
			wt_check(w, n); /* look at it at once: refused means gone */
	}
	core_log(CORE_LOG_DEBUG, "watch: %s", why);
}

/* ====} */

static void drop_dead(boot_watch_t *w)
{
	for (struct wlink *k = w->links, *nx; k; k = nx) {
		nx = k->next;
		if (k->dead)
			link_drop(w, k);
	}
}

static void tick(core_ev_t *ev, void *arg)
{
	boot_watch_t *w = arg;
	int64_t now = now_ms();

	w->timer = 0;
	if (w->role == R_GONE)
		return;
	/* this agent did not run for a while (stopped, starved): what it did not hear meanwhile
	 * says nothing about the others; give every link a fresh window */
	if (w->last_tick && now - w->last_tick > 2 * w->o.interval_ms + 1000)
		for (struct wlink *k = w->links; k; k = k->next)
			k->heard = now;
	w->last_tick = now;
	for (struct wlink *k = w->links; k; k = k->next) /* probes answer within the timeout */
		if (k->kind == L_PROBE && !k->dead && now - k->t0 > w->o.timeout_ms) {
			k->dead = 1;
			wt_suspect(w, k->node,
			           k->ready
			               ? "no answer"
			               : boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
		}
	if (w->role == R_HEAD)
		wt_head_tick(w, now);
	else if (w->role == R_MEMBER)
		wt_member_tick(w, now);
	else if (w->role == R_SEEK)
		wt_seek_tick(w, now);
	drop_dead(w);
	if (w->role != R_GONE)
		w->timer = core_ev_timer(ev, w->o.interval_ms / 2, tick, w);
}

boot_watch_t *boot_watch_create(const struct boot_watch_opts *o)
{
	boot_watch_t *w = calloc(1, sizeof *w);

	if (!w)
		return NULL;
	w->o = *o;
	if (w->o.interval_ms <= 0)
		w->o.interval_ms = BOOT_WATCH_INTERVAL_MS;
	if (w->o.timeout_ms <= 0)
		w->o.timeout_ms = BOOT_WATCH_TIMEOUT_MS;
	if (w->o.timeout_ms < 2 * w->o.interval_ms)
		w->o.timeout_ms = 2 * w->o.interval_ms;
	return w;
}

int boot_watch_start(boot_watch_t *w, const struct boot_wnode *nodes, int n, int lead)
{
	int low = INT_MAX;

	for (int i = 0; i < n; i++) {
		struct boot_wnode *x = boot_wview_add(&w->v, nodes[i].index);
		if (!x)
			return -1;
		*x = nodes[i];
		x->state = BOOT_WUP;
		if (x->index == w->o.me)
			x->inc = w->o.inc;
		if (x->index < low)
			low = x->index;
	}
	w->started = now_ms();
	w->lead = 0;
	if (lead && w->o.me == low) {
		wt_become_head(w);
	} else {
		w->role = R_SEEK;
		wt_seek_next(w);
	}
	w->timer = core_ev_timer(w->o.ev, w->o.interval_ms / 2, tick, w);
	return 0;
}

int boot_watch_frame(boot_watch_t *w, boot_link_t *l, unsigned type, struct core_rbuf *r)
{
	if (!w || w->role == R_GONE)
		return 0;
	if (type == BOOT_MSG_WATCH_PROBE) {
		int node = (int)core_r_u32(r);
		int64_t inc = core_r_i64(r);
		int role = (int)core_r_u32(r), head = (int)core_r_u32(r);
		uint32_t term = core_r_u32(r);
		struct wlink tmp = {.w = w, .l = l};
		struct core_wbuf b = {0};
		if (r->err)
			return 0;
		w_me(w, &b);
		wt_send_frame(&tmp, BOOT_MSG_WATCH_STATUS, &b);
		core_w_free(&b);
		wt_judge(w, &tmp, node, inc, role, head, term);
		return 0;
	}
	if (type != BOOT_MSG_WATCH_JOIN)
		return 0;
	struct wlink *k = link_new(w, l, L_PROBE, 0);
	if (!k)
		return 0;
	k->ready = 1;
	k->asked = 1;
	wt_on_join(w, k, r);
	if (k->kind != L_MEMBER) { /* turned away: the agent keeps the link until it closes */
		for (struct wlink **p = &w->links; *p; p = &(*p)->next)
			if (*p == k) {
				*p = k->next;
				break;
			}
		free(k);
		return 0;
	}
	boot_link_set_cbs(l, &wcbs, k);
	return 1;
}

void boot_watch_summary(const boot_watch_t *w, struct core_wbuf *wb)
{
	struct boot_wview none = {0};

	boot_wsummary_encode(wb, w ? &w->v : &none);
}

const struct boot_wview *boot_watch_view(const boot_watch_t *w)
{
	return &w->v;
}

void boot_watch_bye(boot_watch_t *w)
{
	if (!w || w->role == R_GONE)
		return;
	for (struct wlink *k = w->links; k; k = k->next)
		if (k->ready && !k->dead && (k->kind == L_MEMBER || k->kind == L_HEAD)) {
			wt_send_bye(k, "halt");
			boot_link_flush(k->l, 200);
		}
	w->role = R_GONE;
}

void boot_watch_destroy(boot_watch_t *w)
{
	if (!w)
		return;
	if (w->timer)
		core_ev_timer_cancel(w->o.ev, w->timer);
	while (w->links)
		link_drop(w, w->links);
	boot_wview_free(&w->v);
	free(w->tried);
	free(w->sus);
	free(w->grace);
	free(w);
}
