/* lib/boot/names.c: a name service's table, with lookups that wait for their name and names
 * published for one reading (names.h). Names outlive the jobs that published them, until
 * unpublished or the table goes (the head agent or mpiexec exits). */
#include "names.h"
#include "core.h"
#include "pmi_server.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MAX_MS 3600000 /* a waiting lookup's bound, whatever it asked for */

struct name {
	char *name, *port;
	int once; /* removed by the first lookup that finds it */
};

struct waiter {
	struct boot_names *n;
	boot_link_t *l;
	uint32_t jobid, rank;
	char *name;
	int64_t timer;
	struct waiter *next;
};

struct boot_names {
	core_ev_t *ev;
	struct name *v;
	int nv;
	struct waiter *w; /* in arrival order */
};

boot_names_t *boot_names_create(core_ev_t *ev)
{
	boot_names_t *n = calloc(1, sizeof *n);

	if (n)
		n->ev = ev;
	return n;
}

static void waiter_free(boot_names_t *n, struct waiter *w)
{
	if (w->timer)
		core_ev_timer_cancel(n->ev, w->timer);
	free(w->name);
	free(w);
}

void boot_names_destroy(boot_names_t *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->nv; i++) {
		free(n->v[i].name);
		free(n->v[i].port);
	}
	free(n->v);
	while (n->w) {
		struct waiter *w = n->w;
		n->w = w->next;
		waiter_free(n, w);
	}
	free(n);
}

static void reply(boot_link_t *l, uint32_t jobid, uint32_t rank, int rc, const char *s)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, jobid);
	core_w_u32(&w, rank);
	core_w_u32(&w, (uint32_t)rc);
	core_w_str(&w, s);
	if (!w.err)
		boot_link_send(l, BOOT_MSG_NAMES_REPLY, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

static int find(const boot_names_t *n, const char *name)
{
	for (int i = 0; i < n->nv; i++)
		if (!strcmp(n->v[i].name, name))
			return i;
	return -1;
}

static void drop(boot_names_t *n, int i)
{
	free(n->v[i].name);
	free(n->v[i].port);
	n->v[i] = n->v[--n->nv];
}

/* Answer a lookup of entry i (which goes if it was published for one reading). */
static void found(boot_names_t *n, int i, boot_link_t *l, uint32_t jobid, uint32_t rank)
{
	reply(l, jobid, rank, 0, n->v[i].port);
	if (n->v[i].once)
		drop(n, i);
}

static void unlink_waiter(boot_names_t *n, struct waiter *w)
{
	for (struct waiter **p = &n->w; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			return;
		}
}

static void on_wait_timeout(core_ev_t *ev, void *arg)
{
	struct waiter *w = arg;
	boot_names_t *n = w->n;

	w->timer = 0;
	unlink_waiter(n, w);
	reply(w->l, w->jobid, w->rank, 1, "not_found");
	waiter_free(n, w);
}

/* Name i was just published: the lookups waiting for it get it, in the order they came (only
 * the first, if it is for one reading). */
static void wake(boot_names_t *n, int i)
{
	struct waiter **p = &n->w;

	while (*p && i >= 0) {
		struct waiter *w = *p;
		if (strcmp(w->name, n->v[i].name)) {
			p = &w->next;
			continue;
		}
		*p = w->next;
		int once = n->v[i].once;
		found(n, i, w->l, w->jobid, w->rank);
		waiter_free(n, w);
		if (once)
			break;
	}
}

static void wait_for(boot_names_t *n, boot_link_t *l, uint32_t jobid, uint32_t rank,
                     const char *name, const char *ms)
{
	struct waiter *w = calloc(1, sizeof *w), **t = &n->w;
	char *nm = strdup(name);
	long t_ms = strtol(ms, NULL, 10);
	int count = 0;

	for (struct waiter *x = n->w; x; x = x->next)
		count++;
	if (!w || !nm || count >= BOOT_NAMES_MAX) {
		free(w);
		free(nm);
		reply(l, jobid, rank, 1, "table_full");
		return;
	}
	if (t_ms <= 0 || t_ms > WAIT_MAX_MS)
		t_ms = WAIT_MAX_MS;
	*w = (struct waiter){.n = n, .l = l, .jobid = jobid, .rank = rank, .name = nm};
	w->timer = core_ev_timer(n->ev, t_ms, on_wait_timeout, w);
	while (*t)
		t = &(*t)->next;
	*t = w;
}

static void publish(boot_names_t *n, boot_link_t *l, uint32_t jobid, uint32_t rank,
                    const char *name, const char *port, int once)
{
	struct name *nn = NULL;
	char *a = NULL, *b = NULL;

	if (find(n, name) >= 0) {
		reply(l, jobid, rank, 1, "already_published");
		return;
	}
	if (n->nv < BOOT_NAMES_MAX)
		nn = realloc(n->v, (size_t)(n->nv + 1) * sizeof *nn);
	if (nn)
		n->v = nn;
	if (!nn || !(a = strdup(name)) || !(b = strdup(port))) {
		free(a);
		reply(l, jobid, rank, 1, "table_full");
		return;
	}
	n->v[n->nv++] = (struct name){a, b, once};
	core_log(CORE_LOG_DEBUG, "names: %s published by job %u rank %u%s", a, jobid, rank,
	         once ? " (for one reading)" : "");
	reply(l, jobid, rank, 0, "");
	wake(n, n->nv - 1);
}

void boot_names_serve(boot_names_t *n, boot_link_t *l, struct core_rbuf *r)
{
	uint32_t jobid = core_r_u32(r), rank = core_r_u32(r), op = core_r_u32(r);
	const char *name = core_r_str(r), *port = core_r_str(r);
	int i;

	if (r->err || !*name)
		return;
	i = find(n, name);
	switch (op) {
	case PMI_NAME_LOOKUP:
	case BOOT_NAME_LOOKUP_WAIT:
		if (i >= 0)
			found(n, i, l, jobid, rank);
		else if (op == BOOT_NAME_LOOKUP_WAIT)
			wait_for(n, l, jobid, rank, name, port);
		else
			reply(l, jobid, rank, 1, "not_found");
		break;
	case PMI_NAME_UNPUBLISH:
		if (i >= 0)
			drop(n, i);
		reply(l, jobid, rank, i < 0, i < 0 ? "not_found" : "");
		break;
	case PMI_NAME_PUBLISH:
	case BOOT_NAME_PUBLISH_ONCE:
		publish(n, l, jobid, rank, name, port, op == BOOT_NAME_PUBLISH_ONCE);
		break;
	default:
		reply(l, jobid, rank, 1, "unknown_op");
	}
}

void boot_names_forget(boot_names_t *n, const boot_link_t *l)
{
	struct waiter **p = n ? &n->w : NULL;

	while (p && *p) {
		struct waiter *w = *p;
		if (w->l != l) {
			p = &w->next;
			continue;
		}
		*p = w->next;
		waiter_free(n, w);
	}
}
