/* lib/mpi/mpi_sched.c: schedules of sends, receives and local steps behind nonblocking collectives.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

/* Tags of schedule messages: above every tag a blocking collective uses (< 128); the low bits
 * count the communicator's nonblocking collectives, so two in flight never share one. */
#define NBC_TAG_BASE 0x10000000
#define NBC_TAG_MASK 0x0fffffff

enum { S_SEND = 1, S_RECV, S_REDUCE, S_COPY, S_FENCE };

struct step {
	int kind;
	int peer, count, count2;
	const void *src;
	void *dst;
	struct mpii_dtype *d, *d2;
	MPI_Op op;
};

struct mpii_sched {
	struct mpii_sched *next; /* in mpii.nbc */
	struct lk_request *req;  /* the user's request */
	struct mpii_comm *c;     /* where the messages travel (collective context) */
	int tag, err, nomem;
	int n, cap, pos; /* steps, and the next one to run */
	struct step *st;
	struct lk_request **pend; /* sends/receives started since the last fence */
	int npend, cappend;
	void **tmp; /* scratch from mpii_sched_tmp */
	int ntmp;
};

struct mpii_sched *mpii_sched_new(struct mpii_comm *c)
{
	struct mpii_sched *s = calloc(1, sizeof(*s));

	if (s)
		s->c = c;
	return s;
}

void mpii_sched_free(struct mpii_sched *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		mpii_dt_release(s->st[i].d);
		mpii_dt_release(s->st[i].d2);
		if (s->st[i].kind == S_REDUCE)
			mpii_op_release(s->st[i].op);
	}
	for (int i = 0; i < s->ntmp; i++)
		mpii_tmpbuf_free(s->tmp[i]);
	free(s->tmp);
	free(s->st);
	free(s->pend);
	free(s);
}

static void hold(struct mpii_dtype *d)
{
	if (d && !d->predefined)
		d->refs++;
}

static struct step *add(struct mpii_sched *s, int kind)
{
	struct step *p;

	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 16;
		p = realloc(s->st, sizeof(*p) * (size_t)cap);
		if (!p) {
			s->nomem = 1;
			return NULL;
		}
		s->st = p;
		s->cap = cap;
	}
	p = &s->st[s->n++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	return p;
}

void mpii_sched_send(struct mpii_sched *s, const void *buf, int count, struct mpii_dtype *d,
                     int peer)
{
	struct step *p = add(s, S_SEND);

	if (!p)
		return;
	p->src = buf;
	p->count = count;
	p->d = d;
	p->peer = peer;
	hold(d);
}

void mpii_sched_recv(struct mpii_sched *s, void *buf, int count, struct mpii_dtype *d, int peer)
{
	struct step *p = add(s, S_RECV);

	if (!p)
		return;
	p->dst = buf;
	p->count = count;
	p->d = d;
	p->peer = peer;
	hold(d);
}

void mpii_sched_reduce(struct mpii_sched *s, const void *in, void *inout, int count,
                       struct mpii_dtype *d, MPI_Op op)
{
	struct step *p = add(s, S_REDUCE);

	if (!p)
		return;
	p->src = in;
	p->dst = inout;
	p->count = count;
	p->d = d;
	p->op = op;
	hold(d);
	mpii_op_hold(op);
}

void mpii_sched_copy(struct mpii_sched *s, const void *src, int scount, struct mpii_dtype *sd,
                     void *dst, int rcount, struct mpii_dtype *rd)
{
	struct step *p = add(s, S_COPY);

	if (!p)
		return;
	p->src = src;
	p->count = scount;
	p->d = sd;
	p->dst = dst;
	p->count2 = rcount;
	p->d2 = rd;
	hold(sd);
	hold(rd);
}

void mpii_sched_fence(struct mpii_sched *s)
{
	if (s->n && s->st[s->n - 1].kind != S_FENCE)
		add(s, S_FENCE);
}

void mpii_sched_tmp(struct mpii_sched *s, struct mpii_dtype *d, int count, char **base)
{
	void **t = realloc(s->tmp, sizeof(*t) * (size_t)(s->ntmp + 1));
	void *mem;

	*base = NULL;
	if (!t) {
		s->nomem = 1;
		return;
	}
	s->tmp = t;
	mem = mpii_tmpbuf(d, count, base);
	if (!mem) {
		s->nomem = 1;
		return;
	}
	s->tmp[s->ntmp++] = mem;
}

/* Typed local copy between two descriptions of the same signature. MPI code. */
static int copy(const struct step *p)
{
	size_t sn = p->d->size * (size_t)p->count, rn = p->d2->size * (size_t)p->count2;
	char *tmp;

	if (sn > rn)
		return MPI_ERR_TRUNCATE;
	if (p->d == p->d2 && p->count == p->count2) {
		mpii_copy(p->src, p->dst, p->count, p->d);
		return MPI_SUCCESS;
	}
	tmp = malloc(sn ? sn : 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	mpii_pack(p->d, p->count, p->src, 0, tmp, sn);
	mpii_unpack(p->d2, p->count2, p->dst, 0, tmp, sn);
	free(tmp);
	return MPI_SUCCESS;
}

static int start_msg(struct mpii_sched *s, const struct step *p)
{
	struct lk_request *r = NULL;
	int rc;

	if (s->npend == s->cappend) {
		int cap = s->cappend ? s->cappend * 2 : 8;
		struct lk_request **q = realloc(s->pend, sizeof(*q) * (size_t)cap);
		if (!q)
			return MPI_ERR_NO_MEM;
		s->pend = q;
		s->cappend = cap;
	}
	if (p->kind == S_SEND)
		rc = mpii_isend(p->src, p->count, p->d, p->peer, s->tag, s->c, 1, MODE_STD, &r);
	else
		rc = mpii_irecv(p->dst, p->count, p->d, p->peer, s->tag, s->c, 1, &r);
	if (rc != MPI_SUCCESS) {
		if (r)
			mpii_req_free(r);
		return rc;
	}
	s->pend[s->npend++] = r;
	return MPI_SUCCESS;
}

/* Reap the finished sends/receives of the current round. 1 if none is left. */
static int reap(struct mpii_sched *s)
{
	int k = 0;

	for (int i = 0; i < s->npend; i++) {
		struct lk_request *r = s->pend[i];
		mpii_ft_check(r);
		if (!r->done) {
			s->pend[k++] = r;
			continue;
		}
		if (r->st.MPI_ERROR != MPI_SUCCESS && !s->err)
			s->err = r->st.MPI_ERROR;
		mpii_req_free(r);
	}
	s->npend = k;
	return k == 0;
}

/* Run steps until one must wait. 1 when the schedule is finished. */
static int advance(struct mpii_sched *s)
{
	while (reap(s)) {
		if (s->pos == s->n || s->err)
			return 1;
		while (s->pos < s->n && !s->err) {
			const struct step *p = &s->st[s->pos++];
			int rc = MPI_SUCCESS;

			if (p->kind == S_FENCE)
				break;
			if (p->kind == S_SEND || p->kind == S_RECV)
				rc = start_msg(s, p);
			else if (p->kind == S_REDUCE)
				rc = mpii_reduce_local(p->src, p->dst, p->count, p->d, p->op);
			else
				rc = copy(p);
			if (rc != MPI_SUCCESS)
				s->err = rc;
		}
	}
	return 0;
}

/* The schedule has ended: complete the user's request with its outcome. */
static void finish(struct mpii_sched *s)
{
	struct lk_request *r = s->req;

	r->st.MPI_SOURCE = MPI_ANY_SOURCE;
	r->st.MPI_TAG = MPI_ANY_TAG;
	r->st.MPI_ERROR = s->err;
	r->st.lk_count = 0;
	r->st.lk_cancelled = 0;
	r->sched = NULL;
	mpii_sched_free(s);
	mpii_complete(r);
}

int mpii_sched_start(struct mpii_sched *s, struct mpii_comm *uc, MPI_Request *req)
{
	struct lk_request *r;

	*req = MPI_REQUEST_NULL;
	if (!s)
		return MPI_ERR_NO_MEM;
	r = s->nomem ? NULL : mpii_req_new(RQ_NBC);
	if (!r) {
		mpii_sched_free(s);
		return MPI_ERR_NO_MEM;
	}
	r->comm = uc;
	r->d = mpii_dt(MPI_BYTE);
	mpii_req_hold(r);
	r->active = 1;
	r->sched = s;
	s->req = r;
	s->tag = NBC_TAG_BASE | (int)(uc->nbc_seq++ & NBC_TAG_MASK);
	*req = r;
	if (advance(s)) {
		finish(s);
		return MPI_SUCCESS;
	}
	s->next = mpii.nbc;
	mpii.nbc = s;
	return MPI_SUCCESS;
}

int mpii_nbc_progress(void)
{
	static int busy; /* a send below may wait in progress: no re-entry */
	struct mpii_sched **pp = &mpii.nbc, *s;
	int steps = 0;

	if (busy)
		return 0;
	busy = 1;
	while ((s = *pp)) {
		int pos = s->pos;
		if (advance(s)) {
			*pp = s->next;
			finish(s);
			steps++;
			continue;
		}
		steps += s->pos != pos;
		pp = &s->next;
	}
	busy = 0;
	return steps;
}
