/* lib/boot/pmix_xjob.c: PMIx beyond one job on this agent (doc/PROTOCOL-agent.md, "PMIx across
 * jobs"): PMIx_Connect, _Disconnect and fences over part of a job or over several jobs go to
 * the job's rendezvous (XCOLL: the universe's head agent, or the family's mpiexec); a connect
 * carries the job descriptions and the participants' data, so that each agent registers the
 * other jobs' namespaces (with no local process) and answers the library's direct modex for
 * their ranks; other ranks' data of the family comes from their agent through mpiexec
 * (DMODEX). One PMIx server per process: the state here is the process's. */
#include "core.h"
#include "job_pmix_int.h"
#include "pmix_host.h"
#include "xcoll.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA_WAIT_MS 10000 /* a participant's data from the library, at most */

enum { REC_JOB = 1, REC_PROC = 2 }; /* records of a connect's contribution */

/* Another job's namespace known here: registered with the library (no local process) and
 * the data of its ranks that came with a connect, for as long as a local job holds it. */
struct xns {
	char name[PMIX_MAX_NSLEN + 1];
	int registered;
	uint32_t *holders; /* jobids of the local jobs that connected to it */
	int nholders;
	struct blob {
		pmix_rank_t rank;
		char *data;
		size_t len;
	} * blobs;
	int nblobs;
	struct xns *next;
};

/* An operation of the library waiting for the rendezvous (or our own data first). */
struct xop {
	boot_agent_t *ag;
	uint32_t serial;
	char id[160];
	int what;       /* BOOT_PMIX_CONNECT, _DISCONNECT, _FENCE */
	uint32_t via;   /* the local job whose rendezvous carries it */
	uint32_t *jobs; /* the local jobs taking part */
	int njobs;
	pmix_op_cbfunc_t opcb;
	pmix_modex_cbfunc_t mcb;
	void *cbdata;
	struct core_wbuf up; /* XCOLL_UP being built */
	size_t data_at;      /* where the data begins in up (after its u32 length) */
	int waiting, sent;
	int64_t timer;
	struct xop *next;
};

/* A direct modex asked of mpiexec, or asked of us for a local rank. */
struct dmx {
	uint32_t serial, jobid, req;
	char nspace[PMIX_MAX_NSLEN + 1]; /* the rank asked for */
	pmix_rank_t rank;
	pmix_modex_cbfunc_t cb; /* ours: the library waits */
	void *cbdata;
	int mine; /* 1: the library's request (answer cb); 0: a request for our rank (reply) */
	struct dmx *next;
};

/* How often this agent ran an operation over one set of processes. */
struct epoch {
	char key[80];
	uint32_t n;
	char **nspaces; /* the set's namespaces: the entry goes when one of them ends here */
	int nnspaces;
	struct epoch *next;
};

static struct {
	struct xns *ns;
	struct xop *ops;
	struct dmx *dmx;
	struct epoch *epochs;
	uint32_t serial;
} X;

static boot_job_t *job_of(boot_agent_t *ag, const char *nspace)
{
	for (int i = 0; i < ag->njobs; i++)
		if (ag->jobs[i]->px && !strcmp(ag->jobs[i]->js.kvsname, nspace))
			return ag->jobs[i];
	return NULL;
}

static boot_job_t *job_id(boot_agent_t *ag, uint32_t jobid)
{
	for (int i = 0; i < ag->njobs; i++)
		if (ag->jobs[i]->js.jobid == jobid)
			return ag->jobs[i];
	return NULL;
}

static uint32_t next_serial(void)
{
	if (++X.serial == 0)
		X.serial = 1;
	return X.serial;
}

static void release(void *p)
{
	free(p);
}

/* {==== other jobs' namespaces and their ranks' data */

static struct xns *xns_find(const char *name)
{
	for (struct xns *x = X.ns; x; x = x->next)
		if (!strcmp(x->name, name))
			return x;
	return NULL;
}

static struct xns *xns_get(const char *name, uint32_t holder)
{
	struct xns *x = xns_find(name);

	if (!x) {
		if (!(x = calloc(1, sizeof *x)))
			return NULL;
		snprintf(x->name, sizeof x->name, "%s", name);
		x->next = X.ns;
		X.ns = x;
	}
	for (int i = 0; i < x->nholders; i++)
		if (x->holders[i] == holder)
			return x;
	uint32_t *h = realloc(x->holders, (size_t)(x->nholders + 1) * sizeof *h);
	if (h) {
		x->holders = h;
		x->holders[x->nholders++] = holder;
	}
	return x;
}

static void xns_free(struct xns *x)
{
	if (x->registered) {
		struct boot_pmix_wait *w = boot_pmix_wait_new();
		if (w) {
			PMIx_server_deregister_nspace(x->name, boot_pmix_op_cb, w);
			boot_pmix_wait(w);
		}
	}
	for (int i = 0; i < x->nblobs; i++)
		free(x->blobs[i].data);
	free(x->blobs);
	free(x->holders);
	free(x);
}

/* Register another job's namespace from its description (packed pmix_info_t), with no local
 * process. 0, or -1 (logged). */
static int xns_register(struct xns *x, const char *desc, size_t len)
{
	pmix_data_buffer_t b;
	pmix_byte_object_t bo = {.bytes = (char *)desc, .size = len};
	int32_t n = 1, count = 0;
	pmix_info_t *info = NULL;
	pmix_status_t st;

	PMIX_DATA_BUFFER_CONSTRUCT(&b);
	st = PMIx_Data_embed(&b, &bo);
	if (st == PMIX_SUCCESS)
		st = PMIx_Data_unpack(NULL, &b, &count, &n, PMIX_INT32);
	if (st == PMIX_SUCCESS && (count <= 0 || count > 1 << 20))
		st = PMIX_ERR_BAD_PARAM;
	if (st == PMIX_SUCCESS) {
		PMIX_INFO_CREATE(info, (size_t)count);
		n = count;
		st = info ? PMIx_Data_unpack(NULL, &b, info, &n, PMIX_INFO) : PMIX_ERR_NOMEM;
	}
	if (st == PMIX_SUCCESS) {
		struct boot_pmix_wait *w = boot_pmix_wait_new();
		st =
		    w ? PMIx_server_register_nspace(x->name, 0, info, (size_t)n, boot_pmix_op_cb, w)
		      : PMIX_ERR_NOMEM;
		if (st == PMIX_SUCCESS) {
			st = boot_pmix_wait(w);
		} else if (w) {
			boot_pmix_op_cb(st, w);
			boot_pmix_wait(w);
		}
		if (st == PMIX_OPERATION_SUCCEEDED)
			st = PMIX_SUCCESS;
	}
	if (info)
		PMIX_INFO_FREE(info, (size_t)count);
	PMIX_DATA_BUFFER_DESTRUCT(&b);
	if (st != PMIX_SUCCESS) {
		core_log(CORE_LOG_ERROR, "agent: PMIx: registering namespace %s here: %s", x->name,
		         PMIx_Error_string(st));
		return -1;
	}
	x->registered = 1;
	core_log(CORE_LOG_DEBUG, "agent: PMIx: namespace %s registered here (no local rank)",
	         x->name);
	return 0;
}

static void xns_keep(struct xns *x, pmix_rank_t rank, const char *data, size_t len)
{
	struct blob *b = NULL;
	char *copy = malloc(len ? len : 1);

	for (int i = 0; i < x->nblobs && !b; i++)
		if (x->blobs[i].rank == rank)
			b = &x->blobs[i];
	if (!b) {
		struct blob *v =
		    copy ? realloc(x->blobs, (size_t)(x->nblobs + 1) * sizeof *v) : NULL;
		if (!v) {
			free(copy);
			return;
		}
		x->blobs = v;
		b = &v[x->nblobs++];
		b->data = NULL;
	}
	free(b->data);
	if (len)
		memcpy(copy, data, len);
	*b = (struct blob){.rank = rank, .data = copy, .len = len};
}

/* Drop the direct-modex requests that cannot be answered any more: those about rank of
 * namespace ns (every rank: PMIX_RANK_UNDEF), or (jobid not 0) carried by that local job. The
 * library's are answered st first: its request refers to state that goes with the namespace. */
static void dmx_drop(boot_agent_t *ag, const char *ns, pmix_rank_t rank, uint32_t jobid,
                     pmix_status_t st)
{
	for (struct dmx **p = &X.dmx; *p;) {
		struct dmx *d = *p;
		int about = !strcmp(d->nspace, ns) && (rank == PMIX_RANK_UNDEF || d->rank == rank);
		if (!about && !(jobid && d->jobid == jobid)) {
			p = &d->next;
			continue;
		}
		*p = d->next;
		if (d->mine) {
			d->cb(st, NULL, 0, d->cbdata, NULL, NULL);
		} else {
			boot_job_t *j = job_id(ag, d->jobid);
			if (j)
				boot_job_pmix_dmodex_reply(j, d->req, st, 0, NULL, 0);
		}
		free(d);
	}
}

void boot_pmix_xjob_rank_gone(boot_job_t *j, int rank)
{
	dmx_drop(j->ag, j->js.kvsname, (pmix_rank_t)rank, 0, PMIX_ERR_NOT_FOUND);
}

static void op_done(boot_agent_t *ag, struct xop *o, pmix_status_t st, char *all, size_t len);

void boot_pmix_xjob_job_end(boot_job_t *j)
{
	uint32_t id = j->js.jobid;

	/* the library's collectives that involve the job are answered before its namespace
	 * goes: the library's tracker goes with it, and a late answer would find it freed */
	for (struct xop *o = X.ops, *next; o; o = next) {
		int mine = o->via == id;
		next = o->next;
		for (int i = 0; i < o->njobs && !mine; i++)
			mine = o->jobs[i] == id;
		if (mine)
			op_done(j->ag, o, PMIX_ERR_PROC_ABORTED, NULL, 0);
	}
	dmx_drop(j->ag, j->js.kvsname, PMIX_RANK_UNDEF, id, PMIX_ERR_NOT_FOUND);

	for (struct xns **p = &X.ns; *p;) {
		struct xns *x = *p;
		for (int i = 0; i < x->nholders; i++)
			if (x->holders[i] == id)
				x->holders[i--] = x->holders[--x->nholders];
		if (x->nholders == 0) {
			*p = x->next;
			xns_free(x);
		} else {
			p = &x->next;
		}
	}
	for (struct epoch **p = &X.epochs; *p;) {
		struct epoch *e = *p;
		int mine = 0;
		for (int i = 0; i < e->nnspaces && !mine; i++)
			mine = e->nspaces[i] && !strcmp(e->nspaces[i], j->js.kvsname);
		if (mine) {
			*p = e->next;
			core_strv_free(e->nspaces, e->nnspaces);
			free(e);
		} else {
			p = &e->next;
		}
	}
}

/* ====} */

/* {==== an operation's identity: what, over which set, the how-manieth time here */

static int cmp_proc(const void *a, const void *b)
{
	const pmix_proc_t *x = a, *y = b;
	int c = strncmp(x->nspace, y->nspace, PMIX_MAX_NSLEN);

	return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* The distinct namespaces of sorted procs, NULL-terminated (pointing into procs). */
static const char **nspaces_of(const pmix_proc_t *p, size_t n, int *count)
{
	const char **v = calloc(n + 1, sizeof *v);
	int k = 0;

	for (size_t i = 0; v && i < n; i++)
		if (!k || strncmp(v[k - 1], p[i].nspace, PMIX_MAX_NSLEN))
			v[k++] = p[i].nspace;
	*count = k;
	return v;
}

static int make_id(struct xop *o, pmix_proc_t *p, size_t n, const char **nss)
{
	unsigned char h[16];
	char hex[33], key[80];
	crypto_generichash_state st;
	struct epoch *e;

	if (sodium_init() < 0 || crypto_generichash_init(&st, NULL, 0, sizeof h) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char r[16];
		crypto_generichash_update(&st, (const unsigned char *)p[i].nspace,
		                          strnlen(p[i].nspace, PMIX_MAX_NSLEN) + 1);
		snprintf(r, sizeof r, "%u", p[i].rank);
		crypto_generichash_update(&st, (const unsigned char *)r, strlen(r) + 1);
	}
	crypto_generichash_final(&st, h, sizeof h);
	sodium_bin2hex(hex, sizeof hex, h, sizeof h);
	snprintf(key, sizeof key, "%c:%s",
	         o->what == BOOT_PMIX_CONNECT      ? 'c'
	         : o->what == BOOT_PMIX_DISCONNECT ? 'd'
	                                           : 'f',
	         hex);
	for (e = X.epochs; e && strcmp(e->key, key); e = e->next)
		;
	if (!e) {
		int k = 0;
		while (nss[k])
			k++;
		if (!(e = calloc(1, sizeof *e)) ||
		    !(e->nspaces = calloc((size_t)k + 1, sizeof(char *)))) {
			free(e);
			return -1;
		}
		for (int i = 0; i < k; i++)
			e->nspaces[i] = strdup(nss[i]);
		e->nnspaces = k;
		snprintf(e->key, sizeof e->key, "%s", key);
		e->next = X.epochs;
		X.epochs = e;
	}
	snprintf(o->id, sizeof o->id, "%s:%u", key, ++e->n);
	return 0;
}

/* ====} */

/* {==== collectives over several jobs */

static void op_unlink(struct xop *o)
{
	for (struct xop **p = &X.ops; *p; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			return;
		}
}

/* Answer the library and drop the operation. */
static void op_done(boot_agent_t *ag, struct xop *o, pmix_status_t st, char *all, size_t len)
{
	op_unlink(o);
	if (o->timer)
		core_ev_timer_cancel(ag->ev, o->timer);
	if (o->mcb)
		o->mcb(st, all, len, o->cbdata, all ? release : NULL, all);
	else
		free(all);
	if (o->opcb)
		o->opcb(st, o->cbdata);
	core_w_free(&o->up);
	free(o->jobs);
	free(o);
}

static void op_send(boot_agent_t *ag, struct xop *o)
{
	boot_job_t *via = job_id(ag, o->via);
	uint32_t n = (uint32_t)(o->up.len - o->data_at);

	if (o->sent)
		return;
	o->sent = 1;
	if (o->timer)
		core_ev_timer_cancel(ag->ev, o->timer);
	o->timer = 0;
	for (int i = 0; !o->up.err && i < 4; i++) /* the data's length, now known (LE) */
		o->up.p[o->data_at - 4 + (size_t)i] = (char)(n >> (8 * i));
	if (!via || boot_job_rdv_send(via, BOOT_MSG_XCOLL_UP, &o->up) < 0) {
		core_log(CORE_LOG_ERROR, "agent: PMIx %s: no rendezvous to send it to", o->id);
		op_done(ag, o, PMIX_ERR_UNREACH, NULL, 0);
	}
}

static void on_data_late(core_ev_t *ev, void *arg)
{
	uint32_t serial = (uint32_t)(uintptr_t)arg;

	for (struct xop *o = X.ops; o; o = o->next)
		if (o->serial == serial && !o->sent) {
			o->timer = 0;
			core_log(
			    CORE_LOG_ERROR,
			    "agent: PMIx %s: %d participants' data not given by the library in "
			    "%d s; going on without it",
			    o->id, o->waiting, DATA_WAIT_MS / 1000);
			op_send(o->ag, o);
			return;
		}
}

static void rec(struct core_wbuf *w, uint32_t kind, const char *ns, pmix_rank_t rank, const char *p,
                size_t n)
{
	core_w_u32(w, kind);
	core_w_str(w, ns);
	core_w_u32(w, rank);
	core_w_u32(w, (uint32_t)n);
	core_w_bytes(w, p, n);
}

/* Whether rank takes part (procs sorted; a wildcard entry covers every rank of its ns). */
static int takes_part(const pmix_proc_t *p, size_t n, const char *ns, pmix_rank_t rank)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(p[i].nspace, ns, PMIX_MAX_NSLEN) &&
		    (p[i].rank == rank || p[i].rank == PMIX_RANK_WILDCARD))
			return 1;
	return 0;
}

/* What this agent knows of one namespace of the set, and (connect) its records. */
static void contribute_ns(boot_agent_t *ag, struct xop *o, const pmix_proc_t *p, size_t n,
                          const char *ns, struct core_wbuf *recs)
{
	boot_job_t *j = job_of(ag, ns);
	uint32_t need = 0, have = 0;
	int wild = 0, described = 0;

	for (size_t i = 0; i < n; i++)
		if (!strncmp(p[i].nspace, ns, PMIX_MAX_NSLEN)) {
			wild |= p[i].rank == PMIX_RANK_WILDCARD;
			need++;
		}
	if (wild) /* the whole job: its PMIx ranks, which only its agents know */
		need = j ? (uint32_t)boot_job_pmix_size(j) : BOOT_XCOLL_UNKNOWN;
	for (int i = 0; j && i < j->nranks; i++) {
		pmix_rank_t r = (pmix_rank_t)j->r[i].rank;
		if (!boot_job_rank_pmix(j, j->r[i].rank) || !takes_part(p, n, ns, r))
			continue;
		have++;
		if (o->what != BOOT_PMIX_CONNECT)
			continue;
		if (!described) { /* every agent of the job says what it is: the others keep one */
			char *desc = NULL;
			size_t dl = 0;
			if (boot_job_pmix_describe(j, &desc, &dl) == 0)
				rec(recs, REC_JOB, ns, PMIX_RANK_WILDCARD, desc, dl);
			free(desc);
			described = 1;
		}
		if (boot_pmix_dmodex_local(ns, r, (void *)(uintptr_t)o->serial) == 0)
			o->waiting++;
	}
	core_w_str(&o->up, ns);
	core_w_u32(&o->up, need);
	core_w_u32(&o->up, have);
}

static void op_start(boot_agent_t *ag, struct boot_pmix_call *c)
{
	struct xop *o = calloc(1, sizeof *o);
	int nns = 0;
	const char **nss = NULL;
	struct core_wbuf recs = {0};

	if (o) {
		o->ag = ag;
		o->serial = next_serial();
		o->what = c->what;
		o->opcb = c->opcb;
		o->mcb = c->what == BOOT_PMIX_FENCE ? c->cbfunc : NULL;
		o->cbdata = c->cbdata;
		qsort(c->procs, c->nprocs, sizeof *c->procs, cmp_proc);
		nss = nspaces_of(c->procs, c->nprocs, &nns);
	}
	if (!o || !nss || make_id(o, c->procs, c->nprocs, nss) < 0 ||
	    !(o->jobs = calloc((size_t)nns, sizeof *o->jobs))) {
		free(nss);
		if (o)
			free(o->jobs);
		free(o);
		if (c->what == BOOT_PMIX_FENCE)
			c->cbfunc(PMIX_ERR_NOMEM, NULL, 0, c->cbdata, NULL, NULL);
		else
			c->opcb(PMIX_ERR_NOMEM, c->cbdata);
		return;
	}
	for (int i = 0; i < nns; i++) {
		boot_job_t *j = job_of(ag, nss[i]);
		if (j) {
			o->jobs[o->njobs++] = j->js.jobid;
			if (!o->via || (j->ctl && !job_id(ag, o->via)->ctl))
				o->via = j->js.jobid;
		}
	}
	o->next = X.ops;
	X.ops = o;
	core_w_u32(&o->up, o->via);
	core_w_str(&o->up, o->id);
	core_w_u32(&o->up, (uint32_t)nns);
	for (int i = 0; i < nns; i++)
		contribute_ns(ag, o, c->procs, c->nprocs, nss[i], &recs);
	free(nss);
	core_w_u32(&o->up, 0); /* the data's length: op_send fills it in */
	o->data_at = o->up.len;
	if (c->what == BOOT_PMIX_FENCE && c->collect)
		core_w_bytes(&o->up, c->data, c->ndata);
	core_w_bytes(&o->up, recs.p, recs.len);
	if (recs.err)
		o->up.err = 1;
	core_w_free(&recs);
	core_log(CORE_LOG_DEBUG, "agent: PMIx %s: %zu participants, %d local jobs", o->id,
	         c->nprocs, o->njobs);
	if (!o->njobs) {
		op_done(ag, o, PMIX_ERR_NOT_FOUND, NULL, 0);
		return;
	}
	if (o->waiting)
		o->timer =
		    core_ev_timer(ag->ev, DATA_WAIT_MS, on_data_late, (void *)(uintptr_t)o->serial);
	else
		op_send(ag, o);
}

/* The library gave a participant's data for a connect (or for another agent's request). */
static void data_given(boot_agent_t *ag, struct boot_pmix_call *c)
{
	uint32_t serial = (uint32_t)(uintptr_t)c->ctx;

	for (struct xop *o = X.ops; o; o = o->next) {
		if (o->serial != serial)
			continue;
		if (o->sent)
			return; /* too late: it went without */
		if (c->status == PMIX_SUCCESS)
			rec(&o->up, REC_PROC, c->nspace, c->rank, c->data, c->ndata);
		if (--o->waiting == 0)
			op_send(ag, o);
		return;
	}
	for (struct dmx **p = &X.dmx; *p; p = &(*p)->next) {
		struct dmx *d = *p;
		if (d->serial != serial || d->mine)
			continue;
		*p = d->next;
		boot_job_t *j = job_id(ag, d->jobid);
		if (j)
			boot_job_pmix_dmodex_reply(j, d->req, c->status, 0, c->data, c->ndata);
		free(d);
		return;
	}
}

/* A connect's records: other jobs' namespaces are registered, their ranks' data kept. */
static pmix_status_t take_records(boot_agent_t *ag, struct xop *o, struct core_rbuf *r)
{
	while (r->off < r->len && !r->err) {
		uint32_t kind = core_r_u32(r);
		const char *ns = core_r_str(r);
		pmix_rank_t rank = core_r_u32(r);
		uint32_t n = core_r_u32(r);
		const char *p = core_r_bytes(r, n);
		if (r->err)
			break;
		if (job_of(ag, ns))
			continue; /* a namespace served here: the library has all of it */
		struct xns *x = NULL;
		for (int i = 0; i < o->njobs; i++)
			x = xns_get(ns, o->jobs[i]);
		if (!x)
			return PMIX_ERR_NOMEM;
		if (kind == REC_JOB && !x->registered && xns_register(x, p, n) < 0)
			return PMIX_ERROR;
		if (kind == REC_PROC)
			xns_keep(x, rank, p, n);
	}
	return r->err ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
}

void boot_pmix_xjob_down(boot_job_t *j, struct core_rbuf *r)
{
	const char *id = core_r_str(r);
	uint32_t status = core_r_u32(r), n = core_r_u32(r);
	struct xop *o;

	for (o = X.ops; o && strcmp(o->id, id); o = o->next)
		;
	if (r->err || !o) {
		core_log(CORE_LOG_DEBUG, "agent: job %u: XCOLL_DOWN for no operation (%s)",
		         j->js.jobid, id);
		return;
	}
	if (status != BOOT_XCOLL_OK) {
		core_log(CORE_LOG_ERROR, "agent: PMIx %s failed at the rendezvous: %s", id,
		         status == BOOT_XCOLL_GONE ? "a participating job ended"
		                                   : "more participants than the operation has");
		op_done(j->ag, o, PMIX_ERR_PROC_ABORTED, NULL, 0);
		return;
	}
	struct core_wbuf all = {0};
	pmix_status_t st = PMIX_SUCCESS;
	for (uint32_t i = 0; i < n && st == PMIX_SUCCESS; i++) {
		uint32_t len = core_r_u32(r);
		const char *p = core_r_bytes(r, len);
		if (r->err) {
			st = PMIX_ERR_BAD_PARAM;
			break;
		}
		if (o->what == BOOT_PMIX_FENCE) {
			core_w_bytes(&all, p, len);
		} else if (o->what == BOOT_PMIX_CONNECT) {
			struct core_rbuf rr = {.p = p, .len = len};
			st = take_records(j->ag, o, &rr);
		}
	}
	if (all.err)
		st = PMIX_ERR_NOMEM;
	if (st != PMIX_SUCCESS)
		core_log(CORE_LOG_ERROR, "agent: PMIx %s: %s", id, PMIx_Error_string(st));
	op_done(j->ag, o, st, st == PMIX_SUCCESS ? all.p : NULL, all.len);
	if (st != PMIX_SUCCESS)
		core_w_free(&all);
}

void boot_pmix_xjob_rdv_lost(boot_job_t *j)
{
	for (struct xop *o = X.ops, *next; o; o = next) {
		next = o->next;
		if (o->via == j->js.jobid)
			op_done(j->ag, o, PMIX_ERR_UNREACH, NULL, 0);
	}
}

/* ====} */

/* {==== direct modex: another job's rank's data */

/* The family of a job: its KVS name without the spawn suffixes ("kvs_1_2_s3" -> "kvs_1_2"). */
static size_t family_len(const char *ns)
{
	size_t n = strlen(ns);
	const char *s = strstr(ns, "_s");

	while (s) {
		size_t k = 2;
		while (s[k] >= '0' && s[k] <= '9')
			k++;
		if (k > 2 && (s[k] == '\0' || (s[k] == '_' && s[k + 1] == 's')))
			return (size_t)(s - ns);
		s = strstr(s + 1, "_s");
	}
	return n;
}

static void dmodex_ask(boot_agent_t *ag, struct boot_pmix_call *c)
{
	struct xns *x = xns_find(c->nspace);
	size_t fl = family_len(c->nspace);
	boot_job_t *via = NULL;

	/* registering a namespace makes the library ask again for every request of it still
	 * pending, with the same cbdata: the first asking answers, once */
	for (struct dmx *d = X.dmx; d; d = d->next)
		if (d->mine && d->cbdata == c->cbdata)
			return;
	for (int i = 0; x && i < x->nblobs; i++)
		if (x->blobs[i].rank == c->rank) {
			char *d = malloc(x->blobs[i].len ? x->blobs[i].len : 1);
			if (d && x->blobs[i].len)
				memcpy(d, x->blobs[i].data, x->blobs[i].len);
			c->cbfunc(d ? PMIX_SUCCESS : PMIX_ERR_NOMEM, d, d ? x->blobs[i].len : 0,
			          c->cbdata, d ? release : NULL, d);
			return;
		}
	if (x && x->registered && c->rank == PMIX_RANK_WILDCARD) {
		c->cbfunc(PMIX_SUCCESS, NULL, 0, c->cbdata, NULL, NULL);
		return;
	}
	for (int i = 0; i < ag->njobs && !via; i++) {
		boot_job_t *j = ag->jobs[i];
		if (j->ctl && !j->killed && family_len(j->js.kvsname) == fl &&
		    !strncmp(j->js.kvsname, c->nspace, fl))
			via = j;
	}
	struct dmx *d = via ? calloc(1, sizeof *d) : NULL;
	if (!d) {
		/* every fence collects all of a job's data: nobody else has it */
		c->cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, c->cbdata, NULL, NULL);
		return;
	}
	*d = (struct dmx){.serial = next_serial(),
	                  .jobid = via->js.jobid,
	                  .rank = c->rank,
	                  .cb = c->cbfunc,
	                  .cbdata = c->cbdata,
	                  .mine = 1,
	                  .next = X.dmx};
	snprintf(d->nspace, sizeof d->nspace, "%s", c->nspace);
	X.dmx = d;
	struct core_wbuf w = {0};
	core_w_u32(&w, via->js.jobid);
	core_w_u32(&w, d->serial);
	core_w_str(&w, c->nspace);
	core_w_u32(&w, c->rank);
	boot_job_send(via, BOOT_MSG_DMODEX, &w, NULL, 0);
	core_w_free(&w);
}

void boot_pmix_xjob_dmodex_reply(boot_job_t *j, struct core_rbuf *r)
{
	uint32_t serial = core_r_u32(r), st = core_r_u32(r), kind = core_r_u32(r);
	size_t n = r->len - r->off;
	const char *p = core_r_bytes(r, n);
	struct dmx *d = NULL;

	for (struct dmx **q = &X.dmx; *q; q = &(*q)->next)
		if ((*q)->serial == serial && (*q)->mine) {
			d = *q;
			*q = d->next;
			break;
		}
	if (!d)
		return;
	pmix_status_t s = r->err ? PMIX_ERR_BAD_PARAM : (pmix_status_t)(int32_t)st;
	char *copy = NULL;
	if (s == PMIX_SUCCESS && kind == 1) { /* a job's description: register it here */
		struct core_rbuf rr = {.p = p, .len = n};
		const char *ns = core_r_str(&rr);
		uint32_t dl = core_r_u32(&rr);
		const char *desc = core_r_bytes(&rr, dl);
		struct xns *x = rr.err || job_of(j->ag, ns) ? NULL : xns_get(ns, j->js.jobid);
		if (x && (x->registered || xns_register(x, desc, dl) == 0)) {
			/* the library asks again for what it waits for in that namespace: that
			 * request is answered from here (dmodex_ask); this one must not be */
			free(d);
			return;
		}
		s = PMIX_ERR_NOT_FOUND;
	} else if (s == PMIX_SUCCESS && (copy = malloc(n ? n : 1))) {
		if (n)
			memcpy(copy, p, n);
	} else if (s == PMIX_SUCCESS) {
		s = PMIX_ERR_NOMEM;
	}
	d->cb(s, copy, copy ? n : 0, d->cbdata, copy ? release : NULL, copy);
	free(d);
}

void boot_pmix_xjob_dmodex_req(boot_job_t *j, struct core_rbuf *r)
{
	uint32_t req = core_r_u32(r);
	const char *ns = core_r_str(r);
	pmix_rank_t rank = core_r_u32(r);

	if (r->err)
		return;
	if (!j->px || strcmp(ns, j->js.kvsname)) {
		boot_job_pmix_dmodex_reply(j, req, PMIX_ERR_NOT_FOUND, 0, NULL, 0);
		return;
	}
	if (rank == PMIX_RANK_WILDCARD) {
		char *desc = NULL;
		size_t dl = 0;
		struct core_wbuf w = {0};
		if (boot_job_pmix_describe(j, &desc, &dl) == 0) {
			core_w_str(&w, ns);
			core_w_u32(&w, (uint32_t)dl);
			core_w_bytes(&w, desc, dl);
		}
		boot_job_pmix_dmodex_reply(j, req, desc && !w.err ? PMIX_SUCCESS : PMIX_ERROR, 1,
		                           w.p, w.len);
		free(desc);
		core_w_free(&w);
		return;
	}
	struct dmx *d = calloc(1, sizeof *d);
	if (!d) {
		boot_job_pmix_dmodex_reply(j, req, PMIX_ERR_NOMEM, 0, NULL, 0);
		return;
	}
	*d = (struct dmx){
	    .serial = next_serial(), .jobid = j->js.jobid, .req = req, .rank = rank, .next = X.dmx};
	snprintf(d->nspace, sizeof d->nspace, "%s", ns);
	X.dmx = d;
	if (boot_pmix_dmodex_local(ns, rank, (void *)(uintptr_t)d->serial) < 0) {
		X.dmx = d->next;
		free(d);
		boot_job_pmix_dmodex_reply(j, req, PMIX_ERR_NOT_FOUND, 0, NULL, 0);
	}
}

/* ====} */

void boot_pmix_xjob_call(boot_agent_t *ag, struct boot_pmix_call *c)
{
	switch (c->what) {
	case BOOT_PMIX_CONNECT:
	case BOOT_PMIX_DISCONNECT:
	case BOOT_PMIX_FENCE:
		op_start(ag, c);
		break;
	case BOOT_PMIX_DMODEX:
		dmodex_ask(ag, c);
		break;
	case BOOT_PMIX_DMODEX_DATA:
		data_given(ag, c);
		break;
	default:
		break;
	}
	boot_pmix_call_free(c);
}

void boot_pmix_xjob_fini(boot_agent_t *ag)
{
	while (X.ops)
		op_done(ag, X.ops, PMIX_ERR_TIMEOUT, NULL, 0);
	while (X.dmx) {
		struct dmx *d = X.dmx;
		X.dmx = d->next;
		if (d->mine)
			d->cb(PMIX_ERR_TIMEOUT, NULL, 0, d->cbdata, NULL, NULL);
		free(d);
	}
	while (X.ns) {
		struct xns *x = X.ns;
		X.ns = x->next;
		x->registered = 0; /* the server goes: nothing to deregister */
		xns_free(x);
	}
	while (X.epochs) {
		struct epoch *e = X.epochs;
		X.epochs = e->next;
		core_strv_free(e->nspaces, e->nnspaces);
		free(e);
	}
}
