/* lib/mpi/mpi_io_twophase.c: two-phase collective I/O: aggregators, file domains, rounds of
 * cb_buffer_size exchanged with the ranks and read or written whole (doc/MPI-IO.md).
 *
 * Every rank knows every rank's view (gathered once per MPI_File_set_view) and part of the
 * access, so each works out on its own which stream bytes of which rank fall in which round of
 * which aggregator: no offset lists travel. As a view maps the stream increasingly onto the
 * file, the bytes of one rank in one round are one contiguous range of its stream: one message.
 * The aggregator receives it straight into place in its round buffer (a datatype describing the
 * pieces) or sends from there, and keeps two rounds going: while the I/O thread writes (reads)
 * one, the next one's messages travel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpio.h"

enum { R_FREE, R_READING, R_MSGS, R_WRITING }; /* a round buffer's state */

struct rbuf {
	int state, round;
	char *buf;
	MPI_Offset lo, hi; /* the file bytes of the round that someone accesses */
	struct lk_request **req;
	struct mpii_dtype **types;
	int nreq;
	volatile int flag; /* the I/O thread is done */
	MPI_Offset got;
	int iorc;
	int fd;
};

struct mpio_tp {
	struct mpio_acc *a;
	struct mpio_file *f;
	const struct mpio_cinfo *all;
	const struct mpio_vset *vs;
	int tag, n, me;
	int naggs, *agg, mine; /* aggregator ranks; my index among them or -1 */
	MPI_Offset *dom;       /* naggs + 1 domain bounds */
	MPI_Offset *alo, *ahi; /* per aggregator: the bytes of its domain anyone accesses */
	MPI_Offset cbs;
	struct lk_request **preq; /* my messages to / from the aggregators */
	int npreq;
	int nrounds, next; /* as aggregator: rounds, the next to start */
	struct rbuf rb[2];
	struct mpio_run *pc; /* scratch: pieces of a round */
	int npc, cappc;
	int err;
	MPI_Offset eof;
};

/* ---- where the bytes go ---- */

/* Stream bytes [*x, *y) of rank p that lie in file bytes [f0, f1). 1 if any. */
static int range_of(const struct mpio_tp *t, int p, MPI_Offset f0, MPI_Offset f1, MPI_Offset *x,
                    MPI_Offset *y)
{
	const struct mpio_view *v = mpio_vset_of(t->vs, p);
	MPI_Offset s = t->all[p].s, e = s + t->all[p].n;

	if (!t->all[p].n || f1 <= t->all[p].lo || f0 >= t->all[p].hi)
		return 0;
	*x = mpio_view_below(v, f0);
	*y = mpio_view_below(v, f1);
	*x = *x < s ? s : *x > e ? e : *x;
	*y = *y < s ? s : *y > e ? e : *y;
	return *x < *y;
}

static MPI_Offset rounds_of(const struct mpio_tp *t, int i)
{
	return t->ahi[i] > t->alo[i] ? (t->ahi[i] - t->alo[i] + t->cbs - 1) / t->cbs : 0;
}

static void round_bounds(const struct mpio_tp *t, int i, MPI_Offset j, MPI_Offset *r0,
                         MPI_Offset *r1)
{
	*r0 = t->alo[i] + j * t->cbs;
	*r1 = *r0 + t->cbs < t->ahi[i] ? *r0 + t->cbs : t->ahi[i];
}

/* Aggregators: the first rank of each node, then the second of each, ... up to cb_nodes. */
static int pick_aggs(struct mpio_tp *t)
{
	const struct mpio_file *f = t->f;
	int want = f->h.cb_nodes < t->n ? f->h.cb_nodes : t->n;
	int *seen = calloc((size_t)f->nnodes, sizeof(int));

	t->agg = malloc(sizeof(int) * (size_t)(want > 0 ? want : 1));
	if (!seen || !t->agg) {
		free(seen);
		return MPI_ERR_NO_MEM;
	}
	t->mine = -1;
	for (int k = 0; t->naggs < want; k++) {
		int added = 0;
		memset(seen, 0, sizeof(int) * (size_t)f->nnodes);
		for (int r = 0; r < t->n && t->naggs < want; r++) {
			if (seen[f->node[r]]++ != k)
				continue;
			t->agg[t->naggs++] = r;
			added = 1;
		}
		if (!added)
			break;
	}
	for (int i = 0; i < t->naggs; i++)
		if (t->agg[i] == t->me)
			t->mine = i;
	free(seen);
	return MPI_SUCCESS;
}

/* File domains: [lo, hi) of the access in naggs even shares, bounds aligned to the striping
 * unit (or 64 KiB) when the shares are large; then what each domain's accesses span. */
static int domains(struct mpio_tp *t)
{
	MPI_Offset lo = INT64_MAX, hi = 0, size, al;

	for (int r = 0; r < t->n; r++)
		if (t->all[r].n) {
			lo = t->all[r].lo < lo ? t->all[r].lo : lo;
			hi = t->all[r].hi > hi ? t->all[r].hi : hi;
		}
	t->dom = malloc(sizeof(MPI_Offset) * (size_t)(t->naggs + 1));
	t->alo = malloc(sizeof(MPI_Offset) * (size_t)t->naggs);
	t->ahi = malloc(sizeof(MPI_Offset) * (size_t)t->naggs);
	if (!t->dom || !t->alo || !t->ahi)
		return MPI_ERR_NO_MEM;
	size = (hi - lo + t->naggs - 1) / t->naggs;
	al = t->f->h.striping_unit ? t->f->h.striping_unit : size >= (4 << 20) ? 64 << 10 : 1;
	t->dom[0] = lo;
	for (int i = 1; i < t->naggs; i++) {
		MPI_Offset b = (lo + i * size + al - 1) / al * al;
		t->dom[i] = b < t->dom[i - 1] ? t->dom[i - 1] : b > hi ? hi : b;
	}
	t->dom[t->naggs] = hi;
	for (int i = 0; i < t->naggs; i++) {
		t->alo[i] = INT64_MAX;
		t->ahi[i] = 0;
		for (int p = 0; p < t->n; p++) {
			MPI_Offset x, y, a, b;
			if (!range_of(t, p, t->dom[i], t->dom[i + 1], &x, &y))
				continue;
			a = mpio_view_off(mpio_vset_of(t->vs, p), x);
			b = mpio_view_off(mpio_vset_of(t->vs, p), y - 1) + 1;
			t->alo[i] = a < t->alo[i] ? a : t->alo[i];
			t->ahi[i] = b > t->ahi[i] ? b : t->ahi[i];
		}
	}
	return MPI_SUCCESS;
}

/* ---- this rank's messages to (write) or from (read) the aggregators ---- */

static int post_mine(struct mpio_tp *t)
{
	struct mpio_acc *a = t->a;
	int cap = 16;

	t->preq = malloc(sizeof(*t->preq) * (size_t)cap);
	if (!t->preq)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < t->naggs; i++) {
		MPI_Offset x, y, j0, j1;
		if (i == t->mine || !range_of(t, t->me, t->dom[i], t->dom[i + 1], &x, &y))
			continue;
		/* only the rounds my bytes in this domain touch */
		j0 = (mpio_view_off(&t->vs->v, x) - t->alo[i]) / t->cbs;
		j1 = (mpio_view_off(&t->vs->v, y - 1) - t->alo[i]) / t->cbs;
		for (MPI_Offset j = j0; j <= j1; j++) {
			MPI_Offset r0, r1, u, w;
			struct lk_request *r;
			int rc;
			round_bounds(t, i, j, &r0, &r1);
			if (!range_of(t, t->me, r0, r1, &u, &w))
				continue;
			if (t->npreq == cap) {
				struct lk_request **q =
				    realloc(t->preq, sizeof(*q) * (size_t)cap * 2);
				if (!q)
					return MPI_ERR_NO_MEM;
				t->preq = q;
				cap *= 2;
			}
			if (a->write)
				rc = mpii_isend(a->buf + (u - a->s), (int)(w - u),
				                mpii_dt(MPI_BYTE), t->agg[i], t->tag + (int)j,
				                t->f->comm, 0, MODE_STD, &r);
			else
				rc =
				    mpii_irecv(a->buf + (u - a->s), (int)(w - u), mpii_dt(MPI_BYTE),
				               t->agg[i], t->tag + (int)j, t->f->comm, 0, &r);
			if (rc != MPI_SUCCESS)
				return rc;
			t->preq[t->npreq++] = r;
		}
	}
	return MPI_SUCCESS;
}

/* ---- aggregator rounds ---- */

/* Pieces (file offset, length) of rank p's stream bytes [x, y) into t->pc. MPI code. */
static int pieces_of(struct mpio_tp *t, int p, MPI_Offset x, MPI_Offset y)
{
	struct mpio_it it;
	MPI_Offset off, len;

	t->npc = 0;
	mpio_it_init(&it, mpio_vset_of(t->vs, p), x, y - x);
	while (mpio_it_next(&it, &off, &len)) {
		if (t->npc == t->cappc) {
			int cap = t->cappc ? t->cappc * 2 : 64;
			struct mpio_run *q = realloc(t->pc, sizeof(*q) * (size_t)cap);
			if (!q)
				return MPI_ERR_NO_MEM;
			t->pc = q;
			t->cappc = cap;
		}
		t->pc[t->npc++] = (struct mpio_run){off, len};
	}
	return MPI_SUCCESS;
}

/* A datatype over a round buffer whose file start is base: the pieces in t->pc. Not a handle:
 * marked predefined so that no request counts references to it; freed with the round. */
static struct mpii_dtype *pieces_type(const struct mpio_tp *t, MPI_Offset base)
{
	struct mpii_dtype *d = calloc(1, sizeof(*d));

	if (!d || !(d->seg = malloc(sizeof(*d->seg) * (size_t)t->npc))) {
		free(d);
		return NULL;
	}
	d->refs = 1;
	d->committed = d->predefined = 1;
	d->combiner = MPI_COMBINER_NAMED;
	for (int k = 0; k < t->npc; k++) {
		d->seg[k] = (struct mpii_seg){(MPI_Aint)(t->pc[k].off - base), (size_t)t->pc[k].len,
		                              MPI_BYTE};
		d->size += (size_t)t->pc[k].len;
	}
	d->nseg = t->npc;
	d->true_lb = d->seg[0].off;
	d->ub = d->extent = d->true_ub = d->seg[t->npc - 1].off + (MPI_Aint)d->seg[t->npc - 1].len;
	return d;
}

/* Copy my own pieces t->pc between my stream at sp and the round buffer (file start base). */
static void self_copy(struct mpio_tp *t, char *sp, char *buf, MPI_Offset base, int to_buf)
{
	for (int k = 0; k < t->npc; k++) {
		char *b = buf + (t->pc[k].off - base);
		if (to_buf)
			memcpy(b, sp, (size_t)t->pc[k].len);
		else
			memcpy(sp, b, (size_t)t->pc[k].len);
		sp += t->pc[k].len;
	}
}

static int by_off(const void *a, const void *b)
{
	const struct mpio_run *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The file bytes [*lo, *hi) of round j anyone accesses, and whether some byte in it nobody
 * writes (then a write reads the round first). MPI code. */
static int round_span(struct mpio_tp *t, MPI_Offset j, MPI_Offset *lo, MPI_Offset *hi, int *holes)
{
	MPI_Offset r0, r1, x, y, sum = 0, end;
	struct mpio_run *all = NULL;
	int nall = 0, cap = 0, rc = MPI_SUCCESS;

	round_bounds(t, t->mine, j, &r0, &r1);
	*lo = INT64_MAX;
	*hi = 0;
	for (int p = 0; p < t->n && rc == MPI_SUCCESS; p++) {
		if (!range_of(t, p, r0, r1, &x, &y))
			continue;
		if ((rc = pieces_of(t, p, x, y)) != MPI_SUCCESS)
			break;
		*lo = t->pc[0].off < *lo ? t->pc[0].off : *lo;
		end = t->pc[t->npc - 1].off + t->pc[t->npc - 1].len;
		*hi = end > *hi ? end : *hi;
		sum += y - x;
		if (!t->a->write)
			continue;
		if (nall + t->npc > cap) {
			struct mpio_run *q;
			cap = (nall + t->npc) * 2;
			if (!(q = realloc(all, sizeof(*q) * (size_t)cap))) {
				rc = MPI_ERR_NO_MEM;
				break;
			}
			all = q;
		}
		memcpy(all + nall, t->pc, sizeof(*all) * (size_t)t->npc);
		nall += t->npc;
	}
	*holes = 0;
	if (rc == MPI_SUCCESS && t->a->write && *lo < *hi) {
		*holes = sum < *hi - *lo;
		if (!*holes) { /* as many bytes as the span: holes only if some overlap */
			qsort(all, (size_t)nall, sizeof(*all), by_off);
			end = *lo;
			for (int k = 0; k < nall && !*holes; k++) {
				*holes = all[k].off > end;
				end = all[k].off + all[k].len > end ? all[k].off + all[k].len : end;
			}
		}
	}
	free(all);
	return rc;
}

static void io_run(void *arg)
{
	struct rbuf *b = arg;
	MPI_Offset n = b->hi - b->lo;

	b->iorc = MPI_SUCCESS;
	if (b->state == R_READING) {
		b->got = mpio_pread(b->fd, b->buf, n, b->lo);
		if (b->got < 0) {
			b->iorc = mpio_errno_class(errno);
			b->got = 0;
		}
		if (b->got < n) /* beyond the end of the file: zeros */
			memset(b->buf + b->got, 0, (size_t)(n - b->got));
	} else if (mpio_pwrite(b->fd, b->buf, n, b->lo) < 0) {
		b->iorc = mpio_errno_class(errno);
	}
}

/* Start the messages of round b->round with every rank but me (mine are copied). MPI code. */
static int round_msgs(struct mpio_tp *t, struct rbuf *b)
{
	MPI_Offset r0, r1, x, y;
	int rc = MPI_SUCCESS;

	round_bounds(t, t->mine, b->round, &r0, &r1);
	b->nreq = 0;
	for (int p = 0; p < t->n && rc == MPI_SUCCESS; p++) {
		struct mpii_dtype *d = NULL;
		struct lk_request *r;
		char *at;
		int cnt;

		if (!range_of(t, p, r0, r1, &x, &y) || (rc = pieces_of(t, p, x, y)) != MPI_SUCCESS)
			continue;
		if (p == t->me) {
			self_copy(t, t->a->buf + (x - t->a->s), b->buf, b->lo, t->a->write);
			continue;
		}
		if (t->npc == 1) { /* one piece: plain bytes in place */
			at = b->buf + (t->pc[0].off - b->lo);
			cnt = (int)t->pc[0].len;
		} else {
			if (!(d = pieces_type(t, b->lo)))
				return MPI_ERR_NO_MEM;
			b->types[b->nreq] = d;
			at = b->buf;
			cnt = 1;
		}
		if (t->a->write)
			rc = mpii_irecv(at, cnt, d ? d : mpii_dt(MPI_BYTE), p, t->tag + b->round,
			                t->f->comm, 0, &r);
		else
			rc = mpii_isend(at, cnt, d ? d : mpii_dt(MPI_BYTE), p, t->tag + b->round,
			                t->f->comm, 0, MODE_STD, &r);
		if (rc == MPI_SUCCESS)
			b->req[b->nreq++] = r;
		else if (d) {
			free(d->seg);
			free(d);
			b->types[b->nreq] = NULL;
		}
	}
	return rc;
}

static void round_free(struct rbuf *b)
{
	for (int k = 0; k < b->nreq; k++) {
		if (b->req[k])
			mpii_req_free(b->req[k]);
		if (b->types[k]) {
			free(b->types[k]->seg);
			free(b->types[k]);
		}
		b->req[k] = NULL;
		b->types[k] = NULL;
	}
	b->nreq = 0;
	b->state = R_FREE;
}

static void note(struct mpio_tp *t, int rc)
{
	if (rc != MPI_SUCCESS && t->err == MPI_SUCCESS)
		t->err = rc;
}

/* Begin round j in buffer b. */
static void round_begin(struct mpio_tp *t, struct rbuf *b, int j)
{
	int holes, rc;

	b->round = j;
	rc = round_span(t, j, &b->lo, &b->hi, &holes);
	note(t, rc);
	if (rc != MPI_SUCCESS || b->lo >= b->hi) { /* nobody's: nothing to do */
		b->state = R_FREE;
		return;
	}
	if (!t->a->write || holes) {
		b->state = R_READING;
		b->flag = 0;
		rc = mpio_thread_run(io_run, b, &b->flag, t->a->blocking);
		note(t, rc);
		if (rc != MPI_SUCCESS)
			b->state = R_FREE;
		return;
	}
	b->state = R_MSGS;
	note(t, round_msgs(t, b));
}

/* Advance buffer b; 1 when it is free. */
static int round_step(struct mpio_tp *t, struct rbuf *b)
{
	switch (b->state) {
	case R_READING:
		if (!__atomic_load_n(&b->flag, __ATOMIC_ACQUIRE))
			return 0;
		note(t, b->iorc);
		if (!t->a->write && b->got < b->hi - b->lo && b->lo + b->got < t->eof)
			t->eof = b->lo + b->got;
		b->state = R_MSGS;
		note(t, round_msgs(t, b));
		return 0;
	case R_MSGS:
		for (int k = 0; k < b->nreq; k++)
			if (!b->req[k]->done)
				return 0;
		for (int k = 0; k < b->nreq; k++)
			note(t, b->req[k]->st.MPI_ERROR);
		if (!t->a->write || t->err != MPI_SUCCESS) {
			round_free(b);
			return 1;
		}
		round_free(b);
		b->state = R_WRITING;
		b->flag = 0;
		note(t, mpio_thread_run(io_run, b, &b->flag, t->a->blocking));
		return 0;
	case R_WRITING:
		if (!__atomic_load_n(&b->flag, __ATOMIC_ACQUIRE))
			return 0;
		note(t, b->iorc);
		b->state = R_FREE;
		return 1;
	default:
		return 1;
	}
}

/* ---- the interface ---- */

int mpio_tp_start(struct mpio_acc *a, const struct mpio_cinfo *all, int tag, struct mpio_tp **out)
{
	struct mpio_tp *t = calloc(1, sizeof(*t));
	int rc;

	*out = t;
	if (!t)
		return MPI_ERR_NO_MEM;
	t->a = a;
	t->f = a->f;
	t->all = all;
	t->vs = a->vs;
	t->tag = tag;
	t->n = a->f->comm->size;
	t->me = a->f->comm->rank;
	/* two round buffers of half cb_buffer_size each: an aggregator's buffers take what ROMIO's
	 * one does, and a first call, whose buffers are new pages, touches half as many (2 ranks,
	 * 1 KiB blocks, 16 MiB a rank, a first write_all with cb_buffer_size 16 MiB: 140-172 ->
	 * 307-330 MB/s; the default is 8 MiB now, mpi_io_hints.c) */
	t->cbs = a->f->h.cb_buffer_size >= 128 << 10 ? a->f->h.cb_buffer_size / 2
	                                             : a->f->h.cb_buffer_size;
	t->eof = INT64_MAX;
	rc = pick_aggs(t);
	if (rc == MPI_SUCCESS)
		rc = domains(t);
	/* rounds are numbered in 16 bits of the tag: a larger buffer for huge domains */
	for (int i = 0; rc == MPI_SUCCESS && i < t->naggs; i++)
		while (rounds_of(t, i) > 0xff00)
			t->cbs *= 2;
	if (rc == MPI_SUCCESS)
		rc = post_mine(t);
	if (rc == MPI_SUCCESS && t->mine >= 0) {
		/* a domain smaller than a round needs no more than itself: every new page of a
		 * first call counts */
		MPI_Offset span = t->ahi[t->mine] - t->alo[t->mine];
		size_t rbytes = (size_t)(span < t->cbs ? span : t->cbs);
		t->nrounds = (int)rounds_of(t, t->mine);
		for (int k = 0; k < 2 && k < t->nrounds && rc == MPI_SUCCESS; k++) {
			struct rbuf *b = &t->rb[k];
			b->fd = t->f->fd;
			b->buf = mpii_scratch(rbytes);
			b->req = calloc((size_t)t->n, sizeof(*b->req));
			b->types = calloc((size_t)t->n, sizeof(*b->types));
			if (!b->buf || !b->req || !b->types)
				rc = MPI_ERR_NO_MEM;
		}
	}
	return rc;
}

int mpio_tp_step(struct mpio_tp *t)
{
	int busy = 0;

	for (int k = 0; k < 2; k++) {
		struct rbuf *b = &t->rb[k];
		if (b->state != R_FREE && !round_step(t, b))
			busy = 1;
		while (b->state == R_FREE && t->next < t->nrounds) {
			round_begin(t, b, t->next++);
			if (b->state != R_FREE)
				busy = 1;
		}
	}
	for (int k = 0; k < t->npreq; k++)
		if (!t->preq[k]->done)
			return 0;
	return !busy;
}

int mpio_tp_result(const struct mpio_tp *t, MPI_Offset *eof)
{
	for (int k = 0; k < t->npreq; k++)
		if (t->preq[k]->st.MPI_ERROR != MPI_SUCCESS)
			return t->preq[k]->st.MPI_ERROR;
	*eof = t->eof;
	return t->err;
}

void mpio_tp_free(struct mpio_tp *t)
{
	if (!t)
		return;
	for (int k = 0; k < 2; k++) {
		if (t->rb[k].req)
			round_free(&t->rb[k]);
		mpii_scratch_free(t->rb[k].buf);
		free(t->rb[k].req);
		free(t->rb[k].types);
	}
	for (int k = 0; k < t->npreq; k++)
		mpii_req_free(t->preq[k]);
	free(t->preq);
	free(t->agg);
	free(t->dom);
	free(t->alo);
	free(t->ahi);
	free(t->pc);
	free(t);
}
