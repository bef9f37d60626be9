/* lib/boot/watch_seek.c: a member of the watch (doc/PROTOCOL-agent.md, "The watch"): watching
 * its head, losing it, asking the nodes up in index order for the head, leading when every
 * lower one failed, and the view the head sends. */
#include "watch_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mark_tried(boot_watch_t *w, int node);

void wt_lose_head(boot_watch_t *w, const char *why)
{
	struct wlink *k = w->head;

	if (w->role != R_MEMBER)
		return;
	w->lost = w->v.head;
	core_log(CORE_LOG_WARN, "watch: lost the head, node %d: %s", w->lost, why);
	w->nsus = 0;
	wt_remember(w, w->lost, why);
	if (k) {
		if (k->ready && strcmp(why, "halted") != 0)
			wt_send_bye(k, "left");
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
	wt_seek_next(w);
}

static int was_tried(boot_watch_t *w, int node)
{
	for (int i = 0; i < w->ntried; i++)
		if (w->tried[i] == node)
			return 1;
	return 0;
}

/* Take node off this round's list of candidates asked. */
static void untry(boot_watch_t *w, int node)
{
	for (int i = 0; i < w->ntried; i++)
		if (w->tried[i] == node)
			w->tried[i--] = w->tried[--w->ntried];
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
void wt_seek_failed(boot_watch_t *w, int node, const char *why)
{
	if (w->head && w->head->node == node) {
		w->head->dead = 1;
		w->head = NULL;
	}
	core_log(CORE_LOG_DEBUG, "watch: node %d cannot be asked: %s", node, why);
	wt_remember(w, node, why); /* the evidence a new head starts with */
	wt_seek_next(w);
}

void wt_ask(boot_watch_t *w, const struct boot_wnode *n)
{
	char why[64];

	mark_tried(w, n->index);
	w->head = wt_link_to(w, n, L_SEEK, why, sizeof why);
	if (!w->head)
		wt_seek_failed(w, n->index, why);
}

/* Ask the next candidate (the lowest node up not asked in this round); ourselves when we may
 * lead and every lower one failed; after a whole round, wait and start again. */
void wt_seek_next(boot_watch_t *w)
{
	if (w->role != R_SEEK || w->head || now_ms() < w->retry_at)
		return;
	for (int i = 0; i < w->v.nn; i++) {
		struct boot_wnode *n = &w->v.n[i];
		if (n->state != BOOT_WUP || was_tried(w, n->index))
			continue;
		if (n->index == w->o.me) {
			if (w->lead) {
				wt_become_head(w);
				return;
			}
			mark_tried(w, n->index);
			continue;
		}
		wt_ask(w, n);
		return;
	}
	/* nobody answered: a grown agent alone may lead; try again */
	w->lead = 1;
	w->ntried = 0;
	w->retry_at = now_ms() + SEEK_ROUND_MS;
}

void wt_seek_tick(boot_watch_t *w, int64_t now)
{
	struct wlink *k = w->head;

	if (!k) {
		wt_seek_next(w);
		return;
	}
	if (now - k->t0 > w->o.timeout_ms && (!k->ready || now - k->heard > w->o.timeout_ms))
		wt_seek_failed(w, k->node,
		               k->ready ? "no answer"
		                        : boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
}

void wt_member_tick(boot_watch_t *w, int64_t now)
{
	struct wlink *k = w->head;

	if (!k) {
		wt_lose_head(w, "exited");
		return;
	}
	if (now - k->heard > w->o.timeout_ms)
		wt_lose_head(w, boot_watch_evidence(boot_link_fd(k->l), w->o.timeout_ms));
	else if (now - k->sent >= w->o.interval_ms)
		wt_send_simple(k, BOOT_MSG_WATCH_PING);
}

/* The head's view: ours from now on. */
void wt_adopt(boot_watch_t *w, struct core_rbuf *r)
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

/* NOTHEAD on link k: our head handed us over, or the candidate asked is not the head; ask
 * the one it names. */
void wt_on_nothead(boot_watch_t *w, struct wlink *k, struct core_rbuf *r)
{
	int head = (int)core_r_u32(r);
	uint32_t term = core_r_u32(r);

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
	if (h && head != w->o.me && h->state == BOOT_WUP && was_tried(w, head) && head != w->lost) {
		/* a node that answers follows it, and it is not the head we gave up on: what kept
		 * us from it may have passed (a grown agent right after its network came back found
		 * the head unreachable once and then asked the others in turn for ever, each
		 * naming the head it never asked again). Shortly, it is asked again */
		untry(w, head);
		if (k->kind == L_SEEK && w->ntried && w->tried[w->ntried - 1] == k->node)
			w->ntried--;
		w->retry_at = now_ms() + SEEK_RETRY_MS;
		return;
	}
	if (!h || head == w->o.me || h->state != BOOT_WUP || was_tried(w, head)) {
		/* it knows no head yet, or still follows the one we gave up on (it has not
		 * noticed yet): ask it again shortly rather than pass it over */
		if (k->kind == L_SEEK && w->ntried && w->tried[w->ntried - 1] == k->node)
			w->ntried--;
		w->retry_at = now_ms() + SEEK_RETRY_MS;
		return;
	}
	wt_ask(w, h);
}
