/* lib/boot/ucall.c: one request to every agent of the universe, in parallel, bounded in time. */
#include "ucall.h"
#include "core.h"
#include "link.h"
#include "proto.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct call {
	struct boot_ucall_res *r;
	const struct boot_unode *n;
	boot_link_t *l;
	const struct boot_ucall_req *q;
	int *open;
	core_ev_t *ev;
	int64_t t0, t0_us, t_sent;
	int sent, ready;
	struct call *all; /* every call of this boot_ucall_ex, nall of them (q->together) */
	int nall;
	struct boot_wsummary *view; /* shared by all calls */
};

/* q->together: once every link still open is ready, send the request on all of them at once. */
static void send_now(struct call *c)
{
	if (!c->q->type)
		return;
	c->t_sent = core_now_ns() / 1000;
	if (boot_link_send(c->l, c->q->type, c->q->payload, c->q->plen, NULL, 0) == 0)
		c->sent = 1;
}

static void send_ready(struct call *all, int n)
{
	for (int i = 0; i < n; i++)
		if (all[i].l && all[i].ready && !all[i].sent)
			send_now(&all[i]);
}

static void send_together(struct call *all, int n)
{
	int open = 0, ready = 0;

	for (int i = 0; i < n; i++)
		if (all[i].l) {
			open++;
			ready += all[i].ready;
		}
	if (open && ready == open)
		send_ready(all, n);
}

struct grace {
	struct call *all;
	int n;
};

/* Half the time gone and a link still not up (an agent that accepts but never answers): the
 * nodes that are up get the request now, rather than none at all. */
static void on_grace(core_ev_t *ev, void *arg)
{
	const struct grace *g = arg;

	(void)ev;
	send_ready(g->all, g->n);
}

static void finish(struct call *c)
{
	if (c->l) {
		boot_link_destroy(c->l);
		c->l = NULL;
		if (--*c->open == 0)
			core_ev_stop(c->ev);
		else if (c->q->together) /* the others may have waited for this one */
			send_together(c->all, c->nall);
	}
}

static void on_ready(boot_link_t *l, void *arg)
{
	struct call *c = arg;

	(void)l;
	c->ready = 1;
	c->r->conn_us = core_now_ns() / 1000 - c->t0_us;
	if (c->q->together)
		send_together(c->all, c->nall);
	else
		send_now(c);
}

/* The watch's view came (HELLO's tail, or VIEW_DOWN): stop waiting for the nodes it names
 * down. */
static void got_view(struct call *c, struct core_rbuf *r)
{
	if (boot_wsummary_decode(r, c->view) < 0)
		return;
	if (!c->q->type) { /* only the view was wanted */
		core_ev_stop(c->ev);
		return;
	}
	for (int i = 0; i < c->nall; i++) {
		struct call *o = &c->all[i];
		const struct boot_wdown *d = o->n ? boot_wsummary_find(c->view, o->n->index) : NULL;
		char at[200];
		if (!d || o->r->ok || o->r->down || o == c)
			continue;
		boot_wdown_text(d, at, sizeof at);
		o->r->down = 1;
		o->r->fall = *d;
		snprintf(o->r->why, sizeof o->r->why, "%s: down: %s", o->n->host, at);
		if (o->l)
			finish(o);
	}
}

static void on_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	struct call *c = arg;

	if (type == BOOT_MSG_HELLO || type == BOOT_MSG_VIEW_DOWN) {
		struct core_rbuf r = {.p = d, .len = len};
		if (type == BOOT_MSG_HELLO) {
			core_r_u32(&r);
			core_r_str(&r);
			core_r_u32(&r);
			core_r_u32(&r);
		}
		got_view(c, &r);
		return;
	}
	if (!c->q->reply_type || type != c->q->reply_type)
		return; /* HELLO, or frames we did not ask for */
	c->r->rtt = core_now_ns() / 1000 - c->t_sent;
	c->r->reply = malloc(len + 1);
	if (c->r->reply) {
		memcpy(c->r->reply, d, len);
		c->r->rlen = len;
	}
	c->r->ok = 1;
	c->r->ms = core_now_ms() - c->t0;
	finish(c);
}

static void on_close(boot_link_t *l, int err, const char *why, void *arg)
{
	struct call *c = arg;

	if (!c->q->reply_type && c->sent && !err) {
		c->r->ok = 1;
		c->r->ms = core_now_ms() - c->t0;
	} else if (!c->r->ok && !c->r->down) {
		snprintf(c->r->why, sizeof c->r->why, "%s: %s", c->n->host, why);
	}
	finish(c);
}

static void on_timeout(core_ev_t *ev, void *arg)
{
	core_ev_stop(ev);
}

int boot_ucall(const struct boot_universe *u, unsigned type, unsigned reply_type, int timeout_ms,
               struct boot_ucall_res *res)
{
	struct boot_ucall_req q = {
	    .type = type, .reply_type = reply_type, .timeout_ms = timeout_ms};

	return boot_ucall_ex(u, &q, res);
}

int boot_ucall_ex(const struct boot_universe *u, const struct boot_ucall_req *q,
                  struct boot_ucall_res *res)
{
	int timeout_ms = q->timeout_ms;
	static const struct boot_link_cbs cbs = {
	    .on_ready = on_ready, .on_frame = on_frame, .on_close = on_close};
	core_ev_t *ev = core_ev_create();
	struct call *calls = calloc((size_t)u->nnodes + 1, sizeof *calls);
	int open = 0, nok = 0;
	struct boot_wsummary own = {0}, *view = q->view ? q->view : &own;

	memset(res, 0, (size_t)u->nnodes * sizeof *res);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < u->nnodes; i++) {
		const struct boot_unode *n = &u->nodes[i];
		struct call *c = &calls[i];
		char peer[300], err[300];
		if (!ev || !calls) {
			snprintf(res[i].why, sizeof res[i].why, "%s: out of memory", n->host);
			continue;
		}
		if (q->only && !q->only[i]) {
			res[i].skipped = 1;
			continue;
		}
		*c = (struct call){.r = &res[i],
		                   .n = n,
		                   .q = q,
		                   .open = &open,
		                   .ev = ev,
		                   .t0 = core_now_ms(),
		                   .t0_us = core_now_ns() / 1000,
		                   .all = calls,
		                   .nall = u->nnodes,
		                   .view = view};
		snprintf(peer, sizeof peer, "%s:%d", n->addr, n->port);
		int fd = boot_tcp_connect(n->addr, n->port, err, sizeof err);
		if (fd < 0) {
			snprintf(res[i].why, sizeof res[i].why, "%s: %s", n->host, err);
			continue;
		}
		c->l = boot_link_secure(ev, fd, 1, u->key, peer, timeout_ms, &cbs, c);
		if (!c->l) {
			close(fd);
			snprintf(res[i].why, sizeof res[i].why, "%s: %s", n->host, strerror(errno));
			continue;
		}
		open++;
	}
	if (open) {
		struct grace g = {calls, u->nnodes};
		int64_t tg = q->together ? core_ev_timer(ev, timeout_ms / 2, on_grace, &g) : 0;
		int64_t t = core_ev_timer(ev, timeout_ms, on_timeout, NULL);
		core_ev_run(ev);
		core_ev_timer_cancel(ev, t);
		if (tg > 0)
			core_ev_timer_cancel(ev, tg);
	}
	for (int i = 0; calls && i < u->nnodes; i++) {
		if (calls[i].l && !res[i].down) {
			snprintf(res[i].why, sizeof res[i].why,
			         "%s (%s:%d): no answer within %d ms", u->nodes[i].host,
			         u->nodes[i].addr, u->nodes[i].port, timeout_ms);
			boot_link_destroy(calls[i].l);
		}
		nok += res[i].ok;
	}
	free(calls);
	if (ev)
		core_ev_destroy(ev);
	boot_wsummary_free(&own);
	return nok;
}

int boot_ucall_down(const struct boot_ucall_res *res, int n)
{
	int d = 0;

	for (int i = 0; i < n; i++)
		d += res[i].down;
	return d;
}

void boot_ucall_free(struct boot_ucall_res *res, int n)
{
	for (int i = 0; i < n; i++) {
		free(res[i].reply);
		res[i].reply = NULL;
	}
}
