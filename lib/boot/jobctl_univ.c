/* lib/boot/jobctl_univ.c: a job in a booted universe and the universe's watch: the ranks go to
 * the nodes the watch has up (placed again when a node turns out down before anything started),
 * the watch's view comes with the agents' HELLOs and VIEW_DOWN frames, every link has a
 * keepalive, and a node that fails while the job runs ends it (or, --on-node-failure continue,
 * the job goes on without its ranks). doc/PROTOCOL-agent.md, "The watch". */
#include "core.h"
#include "jobctl_internal.h"
#include "proto.h"
#include "ucall.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VIEW_WAIT_MS 1000 /* no view yet after this: ask a node the job does not use */
#define ROUNDS_MAX   4    /* placements before the job gives up on a universe in flux */
/* A node's agent refuses the job while the view we hold says it is up: the view can be behind
 * the watch (its head just died and the agents are still hearing who declared it down), so the
 * agents' VIEW_DOWN is waited for this long before the node is called unreachable. */
#define EARLY_WAIT_MS 2000

static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, ",");
		if (l == n && !strncmp(p, name, n))
			return 1;
		p += l + (p[l] == ',');
	}
	return 0;
}

/* The view in the HELLO of the first agent that answers among those only[] flags (NULL: all),
 * at most timeout_ms. 0, or -1 when none did (v then knows nothing). */
static int ask_view(const struct boot_universe *u, const char *only, int timeout_ms,
                    struct boot_wsummary *v)
{
	struct boot_ucall_res *r = calloc((size_t)u->nnodes + 1, sizeof *r);
	struct boot_ucall_req q = {.type = 0, .timeout_ms = timeout_ms, .view = v, .only = only};

	if (!r)
		return -1;
	boot_ucall_ex(u, &q, r);
	boot_ucall_free(r, u->nnodes);
	free(r);
	return v->known ? 0 : -1;
}

int boot_universe_view(const struct boot_universe *u, int skip, int timeout_ms,
                       struct boot_wsummary *v)
{
	char *only = skip ? malloc((size_t)u->nnodes + 1) : NULL;

	if (skip && !only)
		return -1;
	for (int i = 0; only && i < u->nnodes; i++)
		only[i] = u->nodes[i].index != skip;
	int rc = ask_view(u, only, timeout_ms, v);
	free(only);
	return rc;
}

/* Whether node index, with view v of its own, is in the watch (boot_universe_joined). */
static int joined(const struct boot_universe *u, int index, const struct boot_wsummary *v)
{
	if (!v->known || !v->head || boot_wsummary_find(v, index))
		return 0;
	if (v->head != index)
		return 1;
	/* it leads: right when every other node is down, else it found none of them yet */
	for (int i = 0; i < u->nnodes; i++)
		if (u->nodes[i].index != index && !boot_wsummary_find(v, u->nodes[i].index))
			return 0;
	return 1;
}

int boot_universe_joined(const struct boot_universe *u, int index, int timeout_ms, int *head)
{
	char *only = malloc((size_t)u->nnodes + 1);
	int64_t end = core_now_ms() + timeout_ms;
	int rc = -1;

	*head = 0;
	for (int i = 0; only && i < u->nnodes; i++)
		only[i] = u->nodes[i].index == index;
	while (only) {
		struct boot_wsummary v = {0};
		int64_t left = end - core_now_ms();
		ask_view(u, only, left < 2000 ? (int)(left > 0 ? left : 1) : 2000, &v);
		if (v.known)
			*head = v.head;
		int in = joined(u, index, &v);
		boot_wsummary_free(&v);
		if (in)
			rc = 0;
		if (in || core_now_ms() + 100 >= end)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
	}
	free(only);
	return rc;
}

int boot_universe_place_up(const struct boot_universe *u, const struct boot_wsummary *v,
                           struct boot_place_node *nodes, const char *hosts, char *err,
                           size_t errlen)
{
	int out = 0;

	for (int i = 0; v && i < u->nnodes; i++) {
		const struct boot_wdown *d = boot_wsummary_find(v, u->nodes[i].index);
		char at[200];
		if (!d)
			continue;
		if (hosts && *hosts && in_list(hosts, nodes[i].host)) {
			boot_wdown_text(d, at, sizeof at);
			return core_errprintf(
			    err, errlen,
			    "-hosts names %s, which is down (%s); 'lamkit grow %s' "
			    "brings it back",
			    nodes[i].host, at, nodes[i].host);
		}
		out += !(hosts && *hosts) && nodes[i].schedule;
		nodes[i].schedule = 0;
	}
	return out;
}

int boot_ctl_universe_nodes(struct ctl *c, struct boot_place_node *nodes,
                            const struct boot_place_opts *p)
{
	struct ctl *rt = boot_ctl_root(c);
	const struct boot_universe *u = c->u;
	char err[600];
	int total = 0;

	if (p != &c->popts) {
		c->popts = *p;
		free(c->hosts_copy);
		c->hosts_copy = p->hosts ? strdup(p->hosts) : NULL;
		c->popts.hosts = c->hosts_copy;
	}
	for (int i = 0; i < u->nnodes; i++)
		total +=
		    p->hosts && *p->hosts ? in_list(p->hosts, nodes[i].host) : nodes[i].schedule;
	int out = boot_universe_place_up(u, &rt->view, nodes, p->hosts, err, sizeof err);
	if (out < 0) {
		boot_ctl_msg(c, "%s", err);
		c->exit_code = CORE_EXIT_USAGE;
		return -1;
	}
	if (out && !rt->said_down &&
	    !c->parent) { /* once per mpiexec: which, and how many are left */
		char list[800] = "";
		for (int i = 0; i < u->nnodes && strlen(list) < 600; i++) {
			const struct boot_wdown *d =
			    boot_wsummary_find(&rt->view, u->nodes[i].index);
			char at[200];
			if (!d)
				continue;
			boot_wdown_text(d, at, sizeof at);
			snprintf(list + strlen(list), sizeof list - strlen(list),
			         "%s%s is down (%s)", list[0] ? ", " : "", u->nodes[i].host, at);
		}
		boot_ctl_msg(c, "%s: placing on %d of %d nodes", list, total - out, total);
		rt->said_down = 1;
	}
	return 0;
}

/* {==== placing again before anything started */

static void replace_now(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;
	struct boot_place_node *nodes = NULL;

	c->view_timer = 0;
	for (int i = 0; i < c->nag; i++) {
		boot_link_destroy(c->ag[i].link);
		c->ag[i].link = NULL;
		free(c->ag[i].ranks);
	}
	free(c->ag);
	c->ag = NULL;
	c->nag = c->ndone = 0;
	free(c->mapping);
	c->mapping = NULL;
	c->sent_any = 0;
	c->vnext = 0;
	boot_link_destroy(c->vlink);
	c->vlink = NULL;
	if (++c->rounds >= ROUNDS_MAX) {
		boot_ctl_msg(c, "nodes keep going down while the job starts; giving up");
		c->exit_code = CORE_EXIT_SYSTEM;
		core_ev_stop(boot_ctl_root(c)->ev);
		return;
	}
	nodes = boot_universe_place_nodes(c->u);
	if (!nodes)
		boot_ctl_msg(c, "out of memory");
	if (!nodes || boot_ctl_start(c, nodes, c->u->nnodes, &c->popts, c->u) < 0)
		core_ev_stop(boot_ctl_root(c)->ev); /* said; nothing runs */
}

/* Nothing started yet and a node of the placement is down: place again (from the loop, not
 * inside the link callback that brought the news). */
static void replace_later(struct ctl *c)
{
	if (c->early_timer) {
		core_ev_timer_cancel(c->ev, c->early_timer);
		c->early_timer = 0;
	}
	if (c->view_timer)
		core_ev_timer_cancel(c->ev, c->view_timer);
	c->view_timer = core_ev_timer(c->ev, 0, replace_now, c);
	c->sent_any = -1; /* nothing starts meanwhile */
}

/* ====} */

static int down_of(struct ctl *c, const struct agent *a, char *at, size_t len)
{
	const struct boot_wdown *d =
	    boot_wsummary_find(&boot_ctl_root(c)->view, c->u->nodes[a->node].index);

	if (d && at)
		boot_wdown_text(d, at, len);
	return d != NULL;
}

/* The view changed or came: what it means for the job c. */
static void view_check(struct ctl *c)
{
	char at[200];

	if (!c->u || c->sent_any < 0)
		return;
	for (int i = 0; i < c->nag; i++) {
		struct agent *a = &c->ag[i];
		if (a->done || a->lost || !down_of(c, a, at, sizeof at))
			continue;
		if (!c->sent_any) {
			replace_later(c);
			return;
		}
		char why[260];
		snprintf(why, sizeof why, "is down (%s)", at);
		boot_ctl_node_failed(a, why);
	}
	if (c->early_timer)
		return; /* a refused node may be declared down yet: nothing starts meanwhile */
	for (int i = 0; i < c->nag; i++) /* a node that failed to answer and is not down */
		if (c->ag[i].early[0] && boot_ctl_root(c)->view.known) {
			boot_ctl_unreachable(&c->ag[i], c->ag[i].early);
			return;
		}
	/* the placement holds once every node of it said hello: the first HELLO may come from
	 * an agent that has not heard the latest view yet (a new head has just declared a node
	 * of the placement down), and a later one brings it; a node that never says hello is
	 * found down (placed again around it) or fails to answer (as above). Starting on the
	 * first ones to answer ended the job (111) on news that came a moment later */
	for (int i = 0; i < c->nag; i++)
		if (!c->ag[i].hello && !c->ag[i].started && !c->ag[i].done)
			return;
	for (int i = 0; i < c->nag; i++)
		if (!c->ag[i].started && !c->ag[i].done && c->ag[i].link && !c->killed)
			boot_ctl_start_agent(&c->ag[i]);
}

static void view_check_all(struct ctl *rt)
{
	view_check(rt);
	for (int k = 0; k < rt->nsubs; k++)
		view_check(rt->subs[k]);
}

void boot_ctl_view(struct agent *a, struct core_rbuf *r)
{
	struct ctl *rt = boot_ctl_root(a->c);

	if (boot_wsummary_decode(r, &rt->view) < 0)
		return;
	view_check_all(rt);
}

/* {==== a link only to learn the view (the job's own nodes did not tell) */

static void v_close(boot_link_t *l, int err, const char *why, void *arg);

static void v_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	struct ctl *c = arg;
	struct core_rbuf r = {.p = d, .len = len};

	if (type != BOOT_MSG_HELLO)
		return;
	core_r_u32(&r);
	core_r_str(&r);
	core_r_u32(&r);
	core_r_u32(&r);
	if (boot_wsummary_decode(&r, &boot_ctl_root(c)->view) < 0)
		return;
	v_close(l, 0, NULL, c); /* done with it */
}

static void open_viewer(struct ctl *c);

static void v_close(boot_link_t *l, int err, const char *why, void *arg)
{
	struct ctl *c = arg;

	(void)err, (void)why;
	if (c->vlink == l) {
		boot_link_destroy(l);
		c->vlink = NULL;
	}
	if (boot_ctl_root(c)->view.known)
		view_check_all(boot_ctl_root(c));
	else
		open_viewer(c); /* that one could not tell: the next node */
}

static const struct boot_link_cbs vcbs = {.on_frame = v_frame, .on_close = v_close};

/* Connect to the next node (in the universe's order) that the job does not use, to read the
 * view in its HELLO; when none is left, the agents' own failures stand. */
static void open_viewer(struct ctl *c)
{
	const struct boot_universe *u = c->u;
	char err[300], peer[400];

	if (c->vlink)
		return;
	while (c->vnext < u->nnodes) {
		const struct boot_unode *n = &u->nodes[c->vnext++];
		int used = 0;
		for (int i = 0; i < c->nag; i++)
			used |= c->ag[i].node == c->vnext - 1;
		if (used)
			continue;
		int fd = boot_tcp_connect(n->addr, n->port, err, sizeof err);
		if (fd < 0)
			continue;
		snprintf(peer, sizeof peer, "%s (%s:%d)", n->host, n->addr, n->port);
		c->vlink =
		    boot_link_secure(c->ev, fd, 1, u->key, peer, BOOT_AGENT_CONNECT_MS, &vcbs, c);
		if (c->vlink)
			return;
		close(fd);
	}
	/* nobody else to ask: the job's own links may still tell; when none is left, the first
	 * early failure decides, as without a watch */
	for (int i = 0; i < c->nag; i++)
		if (c->ag[i].link && !c->ag[i].done)
			return;
	for (int i = 0; i < c->nag; i++)
		if (c->ag[i].early[0]) {
			boot_ctl_unreachable(&c->ag[i], c->ag[i].early);
			return;
		}
}

static void on_view_timer(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	c->view_timer = 0;
	if (!boot_ctl_root(c)->view.known && !c->sent_any)
		open_viewer(c);
}

/* ====} */

static void on_early_timer(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	(void)ev;
	c->early_timer = 0;
	view_check(c); /* still up in the view: unreachable after all */
}

void boot_ctl_early_failure(struct agent *a, const char *why)
{
	struct ctl *c = a->c, *rt = boot_ctl_root(c);

	if (c->sent_any < 0)
		return; /* being placed again */
	if (rt->view.known) {
		if (down_of(c, a, NULL, 0) && !c->sent_any) {
			replace_later(c);
		} else if (!c->sent_any) { /* the view may be behind the watch: EARLY_WAIT_MS */
			snprintf(a->early, sizeof a->early, "%s", why);
			boot_link_destroy(a->link);
			a->link = NULL;
			if (!c->early_timer)
				c->early_timer =
				    core_ev_timer(c->ev, EARLY_WAIT_MS, on_early_timer, c);
		} else {
			boot_ctl_unreachable(a, why);
		}
		return;
	}
	/* no view yet: it may be down already; another node can tell */
	snprintf(a->early, sizeof a->early, "%s", why);
	boot_link_destroy(a->link);
	a->link = NULL;
	open_viewer(c);
}

void boot_ctl_universe_connected(struct ctl *c)
{
	if (!boot_ctl_root(c)->view.known && !c->view_timer)
		c->view_timer = core_ev_timer(c->ev, VIEW_WAIT_MS, on_view_timer, c);
}

/* {==== keepalive and node failures while the job runs */

static void ka_tick(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;
	int64_t now = core_now_ms();

	c->ka_timer = 0;
	for (int i = 0; i < c->nag; i++) {
		struct agent *a = &c->ag[i];
		if (!a->started || a->done || a->lost || !a->link)
			continue;
		if (now - a->heard > c->ka_timeout) {
			char why[200];
			snprintf(why, sizeof why, "is down (%s for %.1f s)",
			         boot_watch_evidence(boot_link_fd(a->link), c->ka_timeout),
			         (double)(now - a->heard) / 1000);
			boot_ctl_node_failed(a, why);
		} else if (now - a->heard >= c->ka_interval) {
			boot_link_send(a->link, BOOT_MSG_STATUS, NULL, 0, NULL, 0);
		}
	}
	if (c->ndone < c->nag)
		c->ka_timer = core_ev_timer(ev, c->ka_interval / 2, ka_tick, c);
}

void boot_ctl_keepalive(struct ctl *c)
{
	const struct boot_universe *u = c->u;

	if (!u || u->watch_off || c->ka_timer)
		return;
	c->ka_interval = u->watch_interval_ms > 0 ? u->watch_interval_ms : BOOT_WATCH_INTERVAL_MS;
	c->ka_timeout = u->watch_timeout_ms > 0 ? u->watch_timeout_ms : BOOT_WATCH_TIMEOUT_MS;
	c->ka_timer = core_ev_timer(c->ev, c->ka_interval / 2, ka_tick, c);
}

static void on_fence_lost(core_ev_t *ev, void *arg)
{
	struct agent *a = arg;
	struct ctl *c = a->c;
	int i = (int)(a - c->ag), p = (i - 1) / BOOT_FENCE_FANOUT;

	a->lost_timer = 0;
	if (i > 0 && p < c->nag && !c->ag[p].done && !c->ag[p].lost && !a->done)
		boot_ctl_fail(c, CORE_EXIT_SYSTEM,
		              "the agent on %s lost its link to the agent on %s (the job's fence "
		              "tree): %s",
		              a->host, c->ag[p].host, a->lost_why);
}

void boot_ctl_fence_lost(struct agent *a, const char *why)
{
	if (a->lost_timer)
		return;
	snprintf(a->lost_why, sizeof a->lost_why, "%s", why ? why : "");
	/* the parent's own link (or the watch) tells within moments when it is the parent that
	 * failed: then that failure is the job's, and this one a consequence */
	a->lost_timer = core_ev_timer(a->c->ev, 1000, on_fence_lost, a);
}

void boot_ctl_node_failed(struct agent *a, const char *why)
{
	struct ctl *c = a->c, *rt = boot_ctl_root(c);

	if (a->done || a->lost)
		return;
	if (rt->o->on_node_failure == BOOT_NODEFAIL_CONTINUE && c->sent_any > 0 && !c->killed &&
	    !rt->failed && !rt->killed)
		boot_ctl_continue_without(a, why);
	else
		boot_ctl_lose(a, why);
}

/* ====} */
