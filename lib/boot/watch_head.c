/* lib/boot/watch_head.c: the watch's head (doc/PROTOCOL-agent.md, "The watch"): the evidence it
 * holds against its members, the quorum an "unreachable" one needs, declaring, leading, meeting
 * another head, taking JOINs. */
#include "watch_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t *wt_grace_of(boot_watch_t *w, int node)
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

struct wlink *wt_member_link(boot_watch_t *w, int node)
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
void wt_remember(boot_watch_t *w, int node, const char *why)
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
void wt_suspect(boot_watch_t *w, int node, const char *why)
{
	struct boot_wnode *n = boot_wview_node(&w->v, node);

	if (!n || n->state != BOOT_WUP || node == w->o.me)
		return;
	if (strncmp(why, "unreachable", 11) != 0) {
		wt_declare(w, node, n->inc, why);
		return;
	}
	int had = w->nsus;
	wt_remember(w, node, why);
	if (w->nsus > had)
		core_log(CORE_LOG_INFO, "watch: node %d is %s; declared down once a quorum agrees",
		         node, why);
}

void wt_unsuspect(boot_watch_t *w, int node)
{
	for (int i = 0; i < w->nsus; i++)
		if (w->sus[i].node == node)
			w->sus[i--] = w->sus[--w->nsus];
}

void wt_declare(boot_watch_t *w, int node, int64_t inc, const char *why)
{
	struct boot_wnode *n = boot_wview_node(&w->v, node);

	wt_unsuspect(w, node);
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
				wt_send_down(k, n);
			k->dead = 1; /* dropped at the next tick, outside any callback */
		}
	wt_changed(w);
}

void wt_become_head(boot_watch_t *w)
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
		wt_suspect(w, ev[i].node, ev[i].why);
	free(ev);
	w->lost = 0;
	wt_changed(w);
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
				wt_send_nothead(k);
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
		wt_ask(w, h);
	else
		wt_seek_next(w);
}

/* A PROBE or STATUS from node `node` (inc, role, head, term): what it says about the heads. */
void wt_judge(boot_watch_t *w, struct wlink *k, int node, int64_t inc, int role, int head,
              uint32_t term)
{
	struct boot_wnode *n = boot_wview_node(&w->v, node);

	/* declared, or replaced by a newer agent of its node (grow): it has to go, whatever it
	 * thinks. A replaced one, cut off for a while, may lead a view of its own with a newer
	 * term: met, it must not be yielded to */
	if (n && n->state == BOOT_WDOWN && (!inc || !n->inc || inc <= n->inc)) {
		wt_send_down(k, n);
		return;
	}
	if (n && inc && n->inc && inc < n->inc) {
		struct boot_wnode old = *n;
		old.since = boot_wall_ms();
		snprintf(old.why, sizeof old.why, "a newer agent took its place");
		wt_send_down(k, &old);
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
			wt_link_to(w, h, L_PROBE, why, sizeof why); /* another head: meet it */
	} else if (role != R_HEAD) {
		int64_t *g = wt_grace_of(w, node);
		if (g) /* alive, seeking: it joins soon */
			*g = now_ms() + w->o.timeout_ms;
	}
}

/* A node joins (JOIN on link k): a member, or turned away. */
void wt_on_join(boot_watch_t *w, struct wlink *k, struct core_rbuf *r)
{
	int node = (int)core_r_u32(r);
	int64_t inc = core_r_i64(r);
	core_r_u32(r); /* its term */
	const char *host = core_r_str(r);
	int port = (int)core_r_u32(r), cpus = (int)core_r_u32(r);

	if (r->err || node <= 0 || node == w->o.me)
		return;
	if (w->role != R_HEAD) {
		wt_send_nothead(k);
		return;
	}
	struct boot_wnode *n = boot_wview_node(&w->v, node);
	if (n && n->inc && inc <= n->inc && (n->state == BOOT_WDOWN || inc < n->inc)) {
		wt_send_down(k, n);
		return;
	}
	struct wlink *old = wt_member_link(w, node);
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
	wt_unsuspect(w, node);
	k->kind = L_MEMBER;
	k->node = node;
	if (w->ngrace != w->v.nn)
		grace_reset(w, now_ms() + w->o.timeout_ms);
	if (news) {
		core_log(CORE_LOG_INFO, "watch: node %d (%s) joined", node, host);
		wt_changed(w); /* sends everyone the view, the new member too */
	} else {
		wt_send_view(w, k);
	}
}

/* Head: a member's link went away without a reason, or a node never joined: look at it. */
void wt_check(boot_watch_t *w, struct boot_wnode *n)
{
	char why[64];

	if (probe_link(w, n->index))
		return;
	if (!wt_link_to(w, n, L_PROBE, why, sizeof why))
		wt_suspect(w, n->index, why);
}

void wt_head_tick(boot_watch_t *w, int64_t now)
{
	for (struct wlink *k = w->links; k; k = k->next) {
		if (k->kind != L_MEMBER || k->dead)
			continue;
		if (now - k->heard > w->o.timeout_ms)
			wt_suspect(w, k->node,
			           boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
		else if (now - k->sent >= w->o.interval_ms) {
			wt_send_simple(k, BOOT_MSG_WATCH_PING);
		}
	}
	for (int i = 0; i < w->v.nn; i++) {
		struct boot_wnode *n = &w->v.n[i];
		if (n->index == w->o.me || n->state != BOOT_WUP || wt_member_link(w, n->index) ||
		    (i < w->ngrace && now < w->grace[i]))
			continue;
		if (i < w->ngrace)
			w->grace[i] = now + w->o.timeout_ms;
		wt_check(w, n);
	}
	for (int i = 0; i < w->nsus && quorum(w);) {
		struct suspect s = w->sus[i];
		wt_declare(w, s.node, s.inc, s.why);
	}
	/* without a quorum this head may be the cut-off one: ask around who leads */
	if (!quorum(w) && now >= w->next_probe && w->v.nn > 1) {
		w->next_probe = now + w->o.timeout_ms;
		for (int t = 0; t < w->v.nn; t++) {
			struct boot_wnode *n = &w->v.n[w->probe_rr++ % w->v.nn];
			char why[64];
			if (n->index == w->o.me || probe_link(w, n->index) ||
			    wt_member_link(w, n->index))
				continue;
			wt_link_to(w, n, L_PROBE, why, sizeof why);
			break;
		}
	}
}
