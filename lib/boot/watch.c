/* lib/boot/watch.c: the universe's watch (watch.h): the head watches its members and declares
 * them down on evidence, the members watch the head and look for a new one when it goes.
 * Rules (doc/PROTOCOL-agent.md, "The watch"): only a head declares; a node declared down stays
 * down (its agent exits when it hears); "unreachable" (the network, not the agent, may be at
 * fault) needs a quorum of the nodes up; a stall of this agent is no evidence against others. */
#include "core.h"
#include "proto.h"
#include "watch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum role { R_IDLE, R_SEEK, R_MEMBER, R_HEAD, R_GONE };
enum lkind { L_MEMBER, L_HEAD, L_SEEK, L_PROBE };

#define SEEK_RETRY_MS 300  /* a candidate not ready to lead yet: ask again after this */
#define SEEK_ROUND_MS 1000 /* every candidate failed: the next round after this */

struct wlink {
	boot_watch_t *w;
	boot_link_t *l;
	int kind; /* enum lkind */
	int node; /* the node at the other end (0: not known yet) */
	int ready, asked, dead;
	int64_t t0, heard, sent; /* monotonic ms */
	struct wlink *next;
};

/* A node the head holds evidence against that needs a quorum ("unreachable"). */
struct suspect {
	int node;
	int64_t inc;
	char why[160];
};

struct boot_watch {
	struct boot_watch_opts o;
	struct boot_wview v;
	int role, lead;
	struct wlink *links;
	struct wlink *head; /* member: the link to the head; seek: the candidate being asked */
	int64_t timer, last_tick, started;
	/* seek: candidates in index order, those failed in this round marked */
	int *tried, ntried;
	int lost; /* the head we lost, 0 none */
	int64_t retry_at;
	/* head */
	struct suspect *sus;
	int nsus;
	int64_t *grace; /* per view node: no check of it before this (monotonic ms) */
	int ngrace;
	int64_t next_probe;
	int probe_rr;
};

static void tick(core_ev_t *ev, void *arg);
static void seek_next(boot_watch_t *w);
static void ask(boot_watch_t *w, const struct boot_wnode *n);
static void declare(boot_watch_t *w, int node, int64_t inc, const char *why);

static int64_t now_ms(void)
{
	return core_now_ms();
}

/* The candidate order: b has a better claim to lead than a (a newer term, or the same term
 * and a lower node). */
static int better(uint32_t ta, int ha, uint32_t tb, int hb)
{
	return tb > ta || (tb == ta && hb < ha);
}

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

static void send_frame(struct wlink *k, unsigned type, const struct core_wbuf *b)
{
	if (k->l && boot_link_send(k->l, type, b ? b->p : NULL, b ? b->len : 0, NULL, 0) == 0)
		k->sent = now_ms();
}

/* Connect to node n (view entry) for kind (L_SEEK, L_PROBE). NULL when it cannot even start
 * (the reason is then in why). */
static struct wlink *link_to(boot_watch_t *w, const struct boot_wnode *n, int kind, char *why,
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

static void send_simple(struct wlink *k, unsigned type)
{
	struct core_wbuf b = {0};

	send_frame(k, type, &b);
	core_w_free(&b);
}

static void send_bye(struct wlink *k, const char *why)
{
	struct core_wbuf b = {0};

	core_w_u32(&b, (uint32_t)k->w->o.me);
	core_w_str(&b, why);
	send_frame(k, BOOT_MSG_WATCH_BYE, &b);
	core_w_free(&b);
}

static void send_down(struct wlink *k, const struct boot_wnode *n)
{
	struct core_wbuf b = {0};

	core_w_i64(&b, n->since);
	core_w_str(&b, n->why);
	send_frame(k, BOOT_MSG_WATCH_DOWN, &b);
	core_w_free(&b);
	boot_link_flush(k->l, 200);
}

static void send_nothead(struct wlink *k)
{
	struct core_wbuf b = {0};
	boot_watch_t *w = k->w;

	core_w_u32(&b, (uint32_t)(w->role == R_MEMBER || w->role == R_HEAD ? w->v.head : 0));
	core_w_u32(&b, w->v.term);
	send_frame(k, BOOT_MSG_WATCH_NOTHEAD, &b);
	core_w_free(&b);
}

static void send_view(boot_watch_t *w, struct wlink *only)
{
	struct core_wbuf b = {0};

	boot_wview_encode(&b, &w->v);
	for (struct wlink *k = w->links; k; k = k->next)
		if ((only ? k == only : k->kind == L_MEMBER) && k->ready && !k->dead)
			send_frame(k, BOOT_MSG_WATCH_VIEW, &b);
	core_w_free(&b);
}

static void changed(boot_watch_t *w)
{
	if (w->role == R_HEAD) {
		w->v.version++;
		send_view(w, NULL);
	}
	if (w->o.on_change)
		w->o.on_change(w->o.arg);
}

/* ====} */

/* {==== the head */

static int64_t *grace_of(boot_watch_t *w, int node)
{
	for (int i = 0; i < w->v.nn; i++)
		if (w->v.n[i].index == node)
			return i < w->ngrace ? &w->grace[i] : NULL;
	return NULL;
}

static void grace_reset(boot_watch_t *w, int64_t until)
{
	int64_t *g = realloc(w->grace, (size_t)(w->v.nn + 1) * sizeof *g);

	if (!g)
		return;
	w->grace = g;
	w->ngrace = w->v.nn;
	for (int i = 0; i < w->v.nn; i++)
		g[i] = until;
}

static struct wlink *member_link(boot_watch_t *w, int node)
{
	for (struct wlink *k = w->links; k; k = k->next)
		if (k->kind == L_MEMBER && k->node == node && !k->dead)
			return k;
	return NULL;
}

static struct wlink *probe_link(boot_watch_t *w, int node)
{
	for (struct wlink *k = w->links; k; k = k->next)
		if (k->kind == L_PROBE && k->node == node && !k->dead)
			return k;
	return NULL;
}

/* Whether the nodes this head is in touch with may declare an unreachable one down: more than
 * half of those up, or exactly half with the lowest of them. */
static int quorum(boot_watch_t *w)
{
	int up = 0, conn = 1, low_up = INT_MAX, low_mine = w->o.me;

	for (int i = 0; i < w->v.nn; i++)
		if (w->v.n[i].state == BOOT_WUP) {
			up++;
			if (w->v.n[i].index < low_up)
				low_up = w->v.n[i].index;
		}
	for (struct wlink *k = w->links; k; k = k->next)
		if (k->kind == L_MEMBER && k->ready && !k->dead) {
			conn++;
			if (k->node < low_mine)
				low_mine = k->node;
		}
	return 2 * conn > up || (2 * conn == up && low_mine == low_up);
}

/* Keep the evidence against node (once) without acting on it. */
static void remember(boot_watch_t *w, int node, const char *why)
{
	struct boot_wnode *n = boot_wview_node(&w->v, node);

	if (!n || n->state != BOOT_WUP || node == w->o.me)
		return;
	for (int i = 0; i < w->nsus; i++)
		if (w->sus[i].node == node)
			return;
	struct suspect *s = realloc(w->sus, (size_t)(w->nsus + 1) * sizeof *s);
	if (!s)
		return;
	w->sus = s;
	s[w->nsus] = (struct suspect){.node = node, .inc = n->inc};
	snprintf(s[w->nsus].why, sizeof s[w->nsus].why, "%s", why);
	w->nsus++;
}

/* Head: evidence against node. What its host said for it (exited, no answer) declares it at
 * once; "unreachable" waits for a quorum (head_tick). */
static void suspect(boot_watch_t *w, int node, const char *why)
{
	struct boot_wnode *n = boot_wview_node(&w->v, node);

	if (!n || n->state != BOOT_WUP || node == w->o.me)
		return;
	if (strncmp(why, "unreachable", 11) != 0) {
		declare(w, node, n->inc, why);
		return;
	}
	int had = w->nsus;
	remember(w, node, why);
	if (w->nsus > had)
		core_log(CORE_LOG_INFO, "watch: node %d is %s; declared down once a quorum agrees",
		         node, why);
}

static void unsuspect(boot_watch_t *w, int node)
{
	for (int i = 0; i < w->nsus; i++)
		if (w->sus[i].node == node)
			w->sus[i--] = w->sus[--w->nsus];
}

static void declare(boot_watch_t *w, int node, int64_t inc, const char *why)
{
	struct boot_wnode *n = boot_wview_node(&w->v, node);

	unsuspect(w, node);
	if (!n || n->state != BOOT_WUP || (inc && n->inc && inc != n->inc) || node == w->o.me)
		return;
	n->state = BOOT_WDOWN;
	n->since = boot_wall_ms();
	snprintf(n->why, sizeof n->why, "%s", why);
	core_log(CORE_LOG_WARN, "watch: node %d (%s) declared down (wall %.3f): %s", node, n->host,
	         (double)n->since / 1000, why);
	for (struct wlink *k = w->links; k; k = k->next)
		if (k->node == node && !k->dead) {
			if (k->ready)
				send_down(k, n);
			k->dead = 1; /* dropped at the next tick, outside any callback */
		}
	changed(w);
}

static void become_head(boot_watch_t *w)
{
	w->role = R_HEAD;
	w->lead = 1;
	w->v.term++;
	w->v.head = w->o.me;
	w->v.version = 0;
	grace_reset(w, now_ms() + 2 * w->o.timeout_ms);
	core_log(CORE_LOG_INFO, "watch: node %d leads the universe (term %u)", w->o.me, w->v.term);
	/* what this agent learnt while looking for a head: the old head, lower candidates */
	int n = w->nsus;
	struct suspect *ev = n ? malloc((size_t)n * sizeof *ev) : NULL;
	if (ev)
		memcpy(ev, w->sus, (size_t)n * sizeof *ev);
	w->nsus = 0;
	for (int i = 0; ev && i < n; i++)
		suspect(w, ev[i].node, ev[i].why);
	free(ev);
	w->lost = 0;
	changed(w);
}

/* A head with a better claim exists: hand the members over and join it. */
static void yield_to(boot_watch_t *w, int head, uint32_t term)
{
	core_log(CORE_LOG_INFO, "watch: node %d (term %u) leads; node %d follows", head, term,
	         w->o.me);
	w->v.head = head;
	w->v.term = term;
	for (struct wlink *k = w->links; k; k = k->next)
		if (k->kind == L_MEMBER && !k->dead) {
			if (k->ready)
				send_nothead(k);
			boot_link_flush(k->l, 100);
			k->dead = 1;
		}
	w->role = R_SEEK;
	w->ntried = 0;
	w->nsus = 0;
	w->lost = 0;
	w->retry_at = 0;
	struct boot_wnode *h = boot_wview_node(&w->v, head);
	if (h)
		ask(w, h);
	else
		seek_next(w);
}

/* A PROBE or STATUS from node `node` (inc, role, head, term): what it says about the heads. */
static void judge(boot_watch_t *w, struct wlink *k, int node, int64_t inc, int role, int head,
                  uint32_t term)
{
	struct boot_wnode *n = boot_wview_node(&w->v, node);

	if (n && n->state == BOOT_WDOWN && (!inc || !n->inc || inc <= n->inc)) {
		send_down(k, n); /* declared: it has to go, whatever it thinks */
		return;
	}
	if (w->role != R_HEAD)
		return;
	if (role == R_HEAD && node != w->o.me && better(w->v.term, w->o.me, term, node)) {
		yield_to(w, node, term);
	} else if (role == R_MEMBER && head && head != w->o.me) {
		struct boot_wnode *h = boot_wview_node(&w->v, head);
		char why[64];
		if (h && !probe_link(w, head))
			link_to(w, h, L_PROBE, why, sizeof why); /* another head: meet it */
	} else if (role != R_HEAD) {
		int64_t *g = grace_of(w, node);
		if (g) /* alive, seeking: it joins soon */
			*g = now_ms() + w->o.timeout_ms;
	}
}

/* A node joins (JOIN on link k): a member, or turned away. */
static void on_join(boot_watch_t *w, struct wlink *k, struct core_rbuf *r)
{
	int node = (int)core_r_u32(r);
	int64_t inc = core_r_i64(r);
	core_r_u32(r); /* its term */
	const char *host = core_r_str(r);
	int port = (int)core_r_u32(r), cpus = (int)core_r_u32(r);

	if (r->err || node <= 0 || node == w->o.me)
		return;
	if (w->role != R_HEAD) {
		send_nothead(k);
		return;
	}
	struct boot_wnode *n = boot_wview_node(&w->v, node);
	if (n && n->inc && inc <= n->inc && (n->state == BOOT_WDOWN || inc < n->inc)) {
		send_down(k, n);
		return;
	}
	struct wlink *old = member_link(w, node);
	if (old && old != k)
		old->dead = 1;
	if (!n && !(n = boot_wview_add(&w->v, node)))
		return;
	int news = n->inc != inc || n->state != BOOT_WUP || n->port != port;
	n->inc = inc;
	n->state = BOOT_WUP;
	n->since = 0;
	n->why[0] = '\0';
	snprintf(n->host, sizeof n->host, "%s", host);
	n->port = port;
	n->cpus = cpus;
	boot_tcp_peer_addr(boot_link_fd(k->l), n->addr, sizeof n->addr);
	unsuspect(w, node);
	k->kind = L_MEMBER;
	k->node = node;
	if (w->ngrace != w->v.nn)
		grace_reset(w, now_ms() + w->o.timeout_ms);
	if (news) {
		core_log(CORE_LOG_INFO, "watch: node %d (%s) joined", node, host);
		changed(w); /* sends everyone the view, the new member too */
	} else {
		send_view(w, k);
	}
}

/* Head: a member's link went away without a reason, or a node never joined: look at it. */
static void check(boot_watch_t *w, struct boot_wnode *n)
{
	char why[64];

	if (probe_link(w, n->index))
		return;
	if (!link_to(w, n, L_PROBE, why, sizeof why))
		suspect(w, n->index, why);
}

static void head_tick(boot_watch_t *w, int64_t now)
{
	for (struct wlink *k = w->links; k; k = k->next) {
		if (k->kind != L_MEMBER || k->dead)
			continue;
		if (now - k->heard > w->o.timeout_ms)
			suspect(w, k->node,
			        boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
		else if (now - k->sent >= w->o.interval_ms) {
			send_simple(k, BOOT_MSG_WATCH_PING);
		}
	}
	for (int i = 0; i < w->v.nn; i++) {
		struct boot_wnode *n = &w->v.n[i];
		if (n->index == w->o.me || n->state != BOOT_WUP || member_link(w, n->index) ||
		    (i < w->ngrace && now < w->grace[i]))
			continue;
		if (i < w->ngrace)
			w->grace[i] = now + w->o.timeout_ms;
		check(w, n);
	}
	for (int i = 0; i < w->nsus && quorum(w);) {
		struct suspect s = w->sus[i];
		declare(w, s.node, s.inc, s.why);
	}
	/* without a quorum this head may be the cut-off one: ask around who leads */
	if (!quorum(w) && now >= w->next_probe && w->v.nn > 1) {
		w->next_probe = now + w->o.timeout_ms;
		for (int t = 0; t < w->v.nn; t++) {
			struct boot_wnode *n = &w->v.n[w->probe_rr++ % w->v.nn];
			char why[64];
			if (n->index == w->o.me || probe_link(w, n->index) ||
			    member_link(w, n->index))
				continue;
			link_to(w, n, L_PROBE, why, sizeof why);
			break;
		}
	}
}

/* ====} */

/* {==== members */

static void mark_tried(boot_watch_t *w, int node);

static void lose_head(boot_watch_t *w, const char *why)
{
	struct wlink *k = w->head;

	if (w->role != R_MEMBER)
		return;
	w->lost = w->v.head;
	core_log(CORE_LOG_WARN, "watch: lost the head, node %d: %s", w->lost, why);
	w->nsus = 0;
	remember(w, w->lost, why);
	if (k) {
		if (k->ready && strcmp(why, "halted") != 0)
			send_bye(k, "left");
		boot_link_flush(k->l, 100);
		k->dead = 1;
		w->head = NULL;
	}
	w->role = R_SEEK;
	w->ntried = 0;
	w->retry_at = 0;
	/* a head that no longer answers is not asked again in this round; one whose link closed
	 * is: a refused connection then says its agent is gone */
	if (strcmp(why, "exited") != 0)
		mark_tried(w, w->lost);
	seek_next(w);
}

static int was_tried(boot_watch_t *w, int node)
{
	for (int i = 0; i < w->ntried; i++)
		if (w->tried[i] == node)
			return 1;
	return 0;
}

static void mark_tried(boot_watch_t *w, int node)
{
	int *t = realloc(w->tried, (size_t)(w->ntried + 1) * sizeof *t);

	if (t) {
		w->tried = t;
		w->tried[w->ntried++] = node;
	}
}

/* The candidate asked did not answer: remember what it did, go on to the next. */
static void seek_failed(boot_watch_t *w, int node, const char *why)
{
	if (w->head && w->head->node == node) {
		w->head->dead = 1;
		w->head = NULL;
	}
	core_log(CORE_LOG_DEBUG, "watch: node %d cannot be asked: %s", node, why);
	remember(w, node, why); /* the evidence a new head starts with */
	seek_next(w);
}

static void ask(boot_watch_t *w, const struct boot_wnode *n)
{
	char why[64];

	mark_tried(w, n->index);
	w->head = link_to(w, n, L_SEEK, why, sizeof why);
	if (!w->head)
		seek_failed(w, n->index, why);
}

/* Ask the next candidate (the lowest node up not asked in this round); ourselves when we may
 * lead and every lower one failed; after a whole round, wait and start again. */
static void seek_next(boot_watch_t *w)
{
	if (w->role != R_SEEK || w->head || now_ms() < w->retry_at)
		return;
	for (int i = 0; i < w->v.nn; i++) {
		struct boot_wnode *n = &w->v.n[i];
		if (n->state != BOOT_WUP || was_tried(w, n->index))
			continue;
		if (n->index == w->o.me) {
			if (w->lead) {
				become_head(w);
				return;
			}
			mark_tried(w, n->index);
			continue;
		}
		ask(w, n);
		return;
	}
	/* nobody answered: a grown agent alone may lead; try again */
	w->lead = 1;
	w->ntried = 0;
	w->retry_at = now_ms() + SEEK_ROUND_MS;
}

static void seek_tick(boot_watch_t *w, int64_t now)
{
	struct wlink *k = w->head;

	if (!k) {
		seek_next(w);
		return;
	}
	if (now - k->t0 > w->o.timeout_ms && (!k->ready || now - k->heard > w->o.timeout_ms))
		seek_failed(w, k->node,
		            k->ready ? "no answer"
		                     : boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
}

static void member_tick(boot_watch_t *w, int64_t now)
{
	struct wlink *k = w->head;

	if (!k) {
		lose_head(w, "exited");
		return;
	}
	if (now - k->heard > w->o.timeout_ms)
		lose_head(w, boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
	else if (now - k->sent >= w->o.interval_ms)
		send_simple(k, BOOT_MSG_WATCH_PING);
}

/* The head's view: ours from now on. */
static void adopt(boot_watch_t *w, struct core_rbuf *r)
{
	struct boot_wview nv = {0};

	if (boot_wview_decode(r, &nv) < 0)
		return;
	const struct boot_wnode *me = boot_wview_node(&nv, w->o.me);
	if (me && ((me->state == BOOT_WDOWN && me->inc == w->o.inc) || me->inc > w->o.inc)) {
		w->role = R_GONE;
		w->o.on_down(w->o.arg,
		             me->inc > w->o.inc ? "a newer agent took its place" : me->why);
		boot_wview_free(&nv);
		return;
	}
	boot_wview_free(&w->v);
	w->v = nv;
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
		send_frame(k, BOOT_MSG_WATCH_JOIN, &b);
	} else if (k->kind == L_PROBE) {
		w_me(w, &b);
		send_frame(k, BOOT_MSG_WATCH_PROBE, &b);
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
		unsuspect(w, k->node);
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
			adopt(w, &r);
		return;
	case BOOT_MSG_WATCH_NOTHEAD: {
		int head = (int)core_r_u32(&r);
		uint32_t term = core_r_u32(&r);
		if (k->kind == L_HEAD) { /* our head handed us over */
			k->dead = 1;
			w->head = NULL;
			w->role = R_SEEK;
			w->ntried = 0;
		} else if (k->kind == L_SEEK && w->head == k) {
			k->dead = 1;
			w->head = NULL;
		} else {
			return;
		}
		struct boot_wnode *h = head ? boot_wview_node(&w->v, head) : NULL;
		if (term > w->v.term && h)
			w->v.term = term;
		if (!h || head == w->o.me || h->state != BOOT_WUP || was_tried(w, head)) {
			/* it knows no head yet, or still follows the one we gave up on (it has not
			 * noticed yet): ask it again shortly rather than pass it over */
			if (k->kind == L_SEEK && w->ntried && w->tried[w->ntried - 1] == k->node)
				w->ntried--;
			w->retry_at = now_ms() + SEEK_RETRY_MS;
			return;
		}
		ask(w, h);
		return;
	}
	case BOOT_MSG_WATCH_BYE: {
		core_r_u32(&r);
		const char *why = core_r_str(&r);
		if (k->kind == L_HEAD) {
			lose_head(w, strcmp(why, "halt") ? "exited" : "halted");
		} else if (k->kind == L_MEMBER) {
			k->dead = 1;
			if (!strcmp(why, "halt")) {
				struct boot_wnode *n = boot_wview_node(&w->v, k->node);
				declare(w, k->node, n ? n->inc : 0, "halted");
			} else { /* it gave up on us: see what it follows now */
				int64_t *g = grace_of(w, k->node);
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
		judge(w, k, node, inc, role, head, term);
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
		lose_head(w, close_evidence(err));
	} else if (k->kind == L_SEEK && w->head == k) {
		w->head = NULL;
		seek_failed(w, k->node, k->ready ? "exited" : close_evidence(err));
	} else if (k->kind == L_PROBE && !k->asked) {
		suspect(w, k->node, close_evidence(err));
	} else if (k->kind == L_MEMBER && w->role == R_HEAD) {
		struct boot_wnode *n = boot_wview_node(&w->v, k->node);
		if (n && n->state == BOOT_WUP && !member_link(w, k->node))
			check(w, n); /* look at it at once: refused means gone */
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
			suspect(w, k->node,
			        k->ready
			            ? "no answer"
			            : boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
		}
	if (w->role == R_HEAD)
		head_tick(w, now);
	else if (w->role == R_MEMBER)
		member_tick(w, now);
	else if (w->role == R_SEEK)
		seek_tick(w, now);
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
		become_head(w);
	} else {
		w->role = R_SEEK;
		seek_next(w);
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
		send_frame(&tmp, BOOT_MSG_WATCH_STATUS, &b);
		core_w_free(&b);
		judge(w, &tmp, node, inc, role, head, term);
		return 0;
	}
	if (type != BOOT_MSG_WATCH_JOIN)
		return 0;
	struct wlink *k = link_new(w, l, L_PROBE, 0);
	if (!k)
		return 0;
	k->ready = 1;
	k->asked = 1;
	on_join(w, k, r);
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
			send_bye(k, "halt");
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
