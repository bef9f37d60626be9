/* lib/boot/xcoll.c: the rendezvous' side of collectives over several jobs (xcoll.h): the
 * contributions of each operation are counted per namespace and kept until every participant
 * is in, then every contributor gets all of them, in the order they came. */
#include "xcoll.h"
#include "core.h"
#include "proto.h"

#include <stdlib.h>
#include <string.h>

#define OPS_MAX 4096 /* operations pending at once */

struct contrib {
	boot_link_t *l;
	uint32_t jobid;
	char *data;
	size_t len;
};

struct ns {
	char *name;
	uint32_t need; /* BOOT_XCOLL_UNKNOWN until a contributor knows */
	uint32_t have;
};

struct op {
	char *id;
	struct ns *ns;
	int nns;
	struct contrib *c;
	int nc;
	struct op *next;
};

struct boot_xcoll {
	struct op *ops;
	int nops;
};

boot_xcoll_t *boot_xcoll_create(void)
{
	return calloc(1, sizeof(struct boot_xcoll));
}

static void op_free(struct op *o)
{
	for (int i = 0; i < o->nns; i++)
		free(o->ns[i].name);
	for (int i = 0; i < o->nc; i++)
		free(o->c[i].data);
	free(o->ns);
	free(o->c);
	free(o->id);
	free(o);
}

void boot_xcoll_destroy(boot_xcoll_t *x)
{
	if (!x)
		return;
	while (x->ops) {
		struct op *o = x->ops;
		x->ops = o->next;
		op_free(o);
	}
	free(x);
}

static void op_unlink(boot_xcoll_t *x, struct op *o)
{
	for (struct op **p = &x->ops; *p; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			x->nops--;
			return;
		}
}

/* Answer every contributor (but `skip`) and drop the operation. */
static void finish(boot_xcoll_t *x, struct op *o, uint32_t status, const boot_link_t *skip)
{
	struct core_wbuf all = {0};

	core_w_u32(&all, status);
	core_w_u32(&all, status == BOOT_XCOLL_OK ? (uint32_t)o->nc : 0);
	for (int i = 0; status == BOOT_XCOLL_OK && i < o->nc; i++) {
		core_w_u32(&all, (uint32_t)o->c[i].len);
		core_w_bytes(&all, o->c[i].data, o->c[i].len);
	}
	if (all.err) { /* too big to answer: say so rather than leave them waiting */
		core_w_free(&all);
		core_w_u32(&all, BOOT_XCOLL_MISMATCH);
		core_w_u32(&all, 0);
	}
	for (int i = 0; i < o->nc; i++) {
		struct core_wbuf w = {0};
		if (o->c[i].l == skip)
			continue;
		core_w_u32(&w, o->c[i].jobid);
		core_w_str(&w, o->id);
		if (!w.err && !all.err &&
		    boot_link_send(o->c[i].l, BOOT_MSG_XCOLL_DOWN, w.p, w.len, all.p, all.len) < 0)
			core_log(CORE_LOG_ERROR, "xcoll: cannot answer %s: %s",
			         boot_link_peer(o->c[i].l), o->id);
		core_w_free(&w);
	}
	core_w_free(&all);
	op_unlink(x, o);
	op_free(o);
}

static struct op *op_get(boot_xcoll_t *x, const char *id)
{
	struct op *o;

	for (o = x->ops; o; o = o->next)
		if (!strcmp(o->id, id))
			return o;
	if (x->nops >= OPS_MAX || !(o = calloc(1, sizeof *o)) || !(o->id = strdup(id))) {
		free(o);
		return NULL;
	}
	o->next = x->ops;
	x->ops = o;
	x->nops++;
	return o;
}

static struct ns *ns_get(struct op *o, const char *name)
{
	for (int i = 0; i < o->nns; i++)
		if (!strcmp(o->ns[i].name, name))
			return &o->ns[i];
	struct ns *v = realloc(o->ns, (size_t)(o->nns + 1) * sizeof *v);
	if (!v)
		return NULL;
	o->ns = v;
	if (!(v[o->nns].name = strdup(name)))
		return NULL;
	v[o->nns].need = BOOT_XCOLL_UNKNOWN;
	v[o->nns].have = 0;
	return &v[o->nns++];
}

/* 1 when every namespace's need is known and met, -1 when one is exceeded. */
static int complete(const struct op *o)
{
	int done = o->nns > 0;

	for (int i = 0; i < o->nns; i++) {
		if (o->ns[i].need != BOOT_XCOLL_UNKNOWN && o->ns[i].have > o->ns[i].need)
			return -1;
		if (o->ns[i].need == BOOT_XCOLL_UNKNOWN || o->ns[i].have < o->ns[i].need)
			done = 0;
	}
	return done;
}

void boot_xcoll_up(boot_xcoll_t *x, boot_link_t *l, struct core_rbuf *r)
{
	uint32_t jobid = core_r_u32(r);
	const char *id = core_r_str(r);
	uint32_t nns = core_r_u32(r);
	struct op *o;

	if (r->err || !*id || nns == 0 || nns > (r->len - r->off) / 9 || !(o = op_get(x, id)))
		return;
	for (uint32_t i = 0; i < nns && !r->err; i++) {
		const char *name = core_r_str(r);
		uint32_t need = core_r_u32(r), have = core_r_u32(r);
		struct ns *s = r->err ? NULL : ns_get(o, name);
		if (!s)
			break;
		if (need != BOOT_XCOLL_UNKNOWN && (s->need == BOOT_XCOLL_UNKNOWN || need > s->need))
			s->need = need;
		s->have += have;
	}
	uint32_t n = core_r_u32(r);
	const char *data = core_r_bytes(r, n);
	struct contrib *c = r->err ? NULL : realloc(o->c, (size_t)(o->nc + 1) * sizeof *c);
	char *copy = c ? malloc(n + 1) : NULL;
	if (c)
		o->c = c;
	if (!copy) {
		core_log(CORE_LOG_ERROR, "xcoll: %s from %s: %s", id, boot_link_peer(l),
		         r->err ? "malformed" : "out of memory");
		if (o->nc == 0) {
			op_unlink(x, o);
			op_free(o);
		}
		return;
	}
	if (n)
		memcpy(copy, data, n);
	o->c[o->nc++] = (struct contrib){.l = l, .jobid = jobid, .data = copy, .len = n};
	int done = complete(o);
	if (done)
		finish(x, o, done > 0 ? BOOT_XCOLL_OK : BOOT_XCOLL_MISMATCH, NULL);
}

void boot_xcoll_forget(boot_xcoll_t *x, const boot_link_t *l)
{
	struct op *o = x ? x->ops : NULL;

	while (o) {
		struct op *next = o->next;
		for (int i = 0; i < o->nc; i++)
			if (o->c[i].l == l) {
				finish(x, o, BOOT_XCOLL_GONE, l);
				break;
			}
		o = next;
	}
}
