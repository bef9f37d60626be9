/* lib/mpi/mpi_rma.c: one-sided data movement: put, get, accumulates, compare-and-swap.
 *
 * Every operation on a target of this node is done by the origin inside its call: on mapped
 * window memory with loads and stores, on MPI_Win_create memory of another process with
 * process_vm_readv/writev. The target takes no part, so passive-target epochs progress while
 * it computes. Accumulates to a target hold its accumulate mutex for the read-modify-write.
 * Targets on other nodes get active messages (mpi_rmam.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpii.h"

enum {
	OP_PUT = MPII_RMA_PUT,
	OP_GET = MPII_RMA_GET,
	OP_ACC = MPII_RMA_ACC,
	OP_GACC = MPII_RMA_GACC,
	OP_CAS = MPII_RMA_CAS
};

/* Where the target data lies: base (mapped) or raddr (in pid), plus its type. */
struct tgt {
	struct mpii_win *w;
	int rank;
	char *base;
	uint64_t raddr;
	int count;
	struct mpii_dtype *d;
	size_t bytes;
};

/* Up to 64 runs of the target moved by one process_vm_readv/writev. */
struct batch {
	struct iovec r[64];
	int n;
	size_t want;
};

static int flush_batch(const struct tgt *t, struct batch *b, char *packed, size_t *done, int write)
{
	struct iovec l = {packed + *done, b->want};
	int pid = t->w->p[t->rank].pid;
	ssize_t got = write ? process_vm_writev(pid, &l, 1, b->r, (unsigned long)b->n, 0)
	                    : process_vm_readv(pid, &l, 1, b->r, (unsigned long)b->n, 0);

	if (got != (ssize_t)b->want) {
		char why[200];
		snprintf(why, sizeof(why),
		         "one-sided access to rank %d (pid %d) of the window: %s: %s", t->rank, pid,
		         write ? "process_vm_writev" : "process_vm_readv",
		         got < 0 ? strerror(errno) : "short transfer");
		mpii_err_detail(why);
		return MPI_ERR_OTHER;
	}
	*done += b->want;
	b->n = 0;
	b->want = 0;
	return MPI_SUCCESS;
}

/* Move the packed bytes to / from the target's runs in another process. MPI code. */
static int cma(const struct tgt *t, char *packed, int write)
{
	const struct mpii_dtype *d = t->d;
	struct batch b = {.n = 0};
	size_t done = 0;
	int rc;

	if (d->contig) {
		b.r[0].iov_base = (void *)(uintptr_t)(t->raddr + (uint64_t)d->true_lb);
		b.r[0].iov_len = t->bytes;
		b.n = 1;
		b.want = t->bytes;
		return flush_batch(t, &b, packed, &done, write);
	}
	for (int e = 0; e < t->count; e++) {
		for (int k = 0; k < d->nseg; k++) {
			uint64_t a = t->raddr + (uint64_t)((MPI_Aint)e * d->extent + d->seg[k].off);
			size_t len = d->seg[k].len;
			struct iovec *last = b.n ? &b.r[b.n - 1] : NULL;
			if (!len)
				continue;
			if (last && (uint64_t)(uintptr_t)last->iov_base + last->iov_len == a) {
				last->iov_len += len;
				b.want += len;
				continue;
			}
			if (b.n == 64 && (rc = flush_batch(t, &b, packed, &done, write)) != 0)
				return rc;
			b.r[b.n].iov_base = (void *)(uintptr_t)a;
			b.r[b.n++].iov_len = len;
			b.want += len;
		}
	}
	return b.n ? flush_batch(t, &b, packed, &done, write) : MPI_SUCCESS;
}

/* Between packed bytes and the target data: mapped memory directly, else cma. MPI code. */
static int tgt_io(const struct tgt *t, void *packed, int write)
{
	if (!t->base)
		return cma(t, packed, write);
	if (write)
		mpii_unpack(t->d, t->count, t->base, 0, packed, t->bytes);
	else
		mpii_pack(t->d, t->count, t->base, 0, packed, t->bytes);
	return MPI_SUCCESS;
}

/* Look the target up and check the access lies inside its window. MPI code. */
static int target(struct mpii_win *w, int rank, MPI_Aint disp, int count, MPI_Datatype type,
                  struct tgt *t)
{
	struct mpii_wpeer *p;
	MPI_Aint off, lo, hi;

	if (rank < 0 || rank >= w->comm->size)
		return MPI_ERR_RANK;
	if (count < 0)
		return MPI_ERR_COUNT;
	t->d = mpii_dt(type);
	if (!t->d)
		return MPI_ERR_TYPE;
	p = &w->p[rank];
	off = disp * p->disp_unit;
	t->w = w;
	t->rank = rank;
	t->count = count;
	t->bytes = t->d->size * (size_t)count;
	if (!t->bytes)
		return MPI_SUCCESS;
	lo = off + t->d->true_lb;
	hi = off + (MPI_Aint)(count - 1) * t->d->extent + t->d->true_ub;
	/* dynamic windows: disp is an address the target attached; its node checks remote ones */
	if (disp < 0 || lo < 0 || (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && hi > p->size))
		return MPI_ERR_RMA_RANGE;
	t->base = p->ptr ? p->ptr + off : NULL;
	t->raddr = p->addr + (uint64_t)off;
	return MPI_SUCCESS;
}

/* The predefined element type accumulates apply to (the one the target type is made of). */
static struct mpii_dtype *elem_type(const struct mpii_dtype *d)
{
	if (d->predefined)
		return (struct mpii_dtype *)d;
	return d->nseg ? mpii_dt(d->seg[0].basic) : NULL;
}

struct args {
	int kind;
	const void *obuf;
	int ocount;
	MPI_Datatype otype;
	void *rbuf;
	int rcount;
	MPI_Datatype rtype;
	const void *cbuf;
	MPI_Op op;
	struct lk_request *req; /* request-based forms: completed when the results are in */
	int req_later;          /* set when a remote operation completes req later */
};

static int pack_origin(const struct args *a, struct mpii_dtype *od, size_t bytes, char *dst)
{
	if (od->size * (size_t)a->ocount != bytes)
		return MPI_ERR_TYPE; /* signatures must match */
	mpii_pack(od, a->ocount, a->obuf, 0, dst, bytes);
	return MPI_SUCCESS;
}

/* tbytes = obytes op tbytes, both packed along the target type. Packed pair types (e.g.
 * MPI_LONG_DOUBLE_INT, size 20, extent 32) are not laid out as the op reads them: those are
 * combined in the target type's own layout. MPI code. */
static int combine(const struct tgt *t, struct mpii_dtype *ed, MPI_Op op, const char *obytes,
                   char *tbytes)
{
	char *x, *y;
	void *mx, *my;
	int rc;

	if (ed->size == (size_t)ed->extent)
		return mpii_reduce_local(obytes, tbytes, (int)(t->bytes / ed->size), ed, op);
	mx = mpii_tmpbuf(t->d, t->count, &x);
	my = mpii_tmpbuf(t->d, t->count, &y);
	rc = mx && my ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS) {
		mpii_unpack(t->d, t->count, x, 0, obytes, t->bytes);
		mpii_unpack(t->d, t->count, y, 0, tbytes, t->bytes);
		rc = mpii_reduce_local(x, y, t->count, t->d, op);
		mpii_pack(t->d, t->count, y, 0, tbytes, t->bytes);
	}
	mpii_tmpbuf_free(mx);
	mpii_tmpbuf_free(my);
	return rc;
}

/* MPI_Accumulate between contiguous buffers into mapped memory, with an op that reads dense
 * elements: combined in place, no copies. 1 if done (rc set), 0 if not applicable. */
static int acc_in_place(const struct args *a, const struct tgt *t, const struct mpii_dtype *od,
                        struct mpii_dtype *ed, int *rc)
{
	int *mtx = &t->w->lk[t->rank].acc;
	char *tp;

	if (a->kind != OP_ACC || !t->base || !t->d->contig || !od->contig ||
	    ed->size != (size_t)ed->extent || od->size * (size_t)a->ocount != t->bytes ||
	    a->op == MPI_NO_OP)
		return 0;
	tp = t->base + t->d->true_lb;
	mpii_wlock_acquire(mtx, 1);
	if (a->op == MPI_REPLACE) {
		memcpy(tp, mpii_at(a->obuf, od->true_lb), t->bytes);
		*rc = MPI_SUCCESS;
	} else {
		*rc = mpii_reduce_local(mpii_at(a->obuf, od->true_lb), tp,
		                        (int)(t->bytes / ed->size), ed, a->op);
	}
	mpii_wlock_release(mtx, 1);
	return 1;
}

/* Read-modify-write under the target's accumulate mutex. */
static int accumulate(const struct args *a, const struct tgt *t, struct mpii_dtype *od,
                      char *obytes, char *tbytes)
{
	struct mpii_dtype *rd, *ed = elem_type(t->d);
	int rc = MPI_SUCCESS, *mtx = &t->w->lk[t->rank].acc;

	if (!ed || !ed->size)
		return MPI_ERR_TYPE;
	if (acc_in_place(a, t, od, ed, &rc))
		return rc;
	if (a->kind != OP_GACC || a->op != MPI_NO_OP)
		rc = pack_origin(a, od, t->bytes, obytes);
	if (rc != MPI_SUCCESS)
		return rc;
	mpii_wlock_acquire(mtx, 1);
	if (a->kind == OP_GACC || a->op != MPI_REPLACE)
		rc = tgt_io(t, tbytes, 0);
	if (rc == MPI_SUCCESS && a->kind == OP_GACC) {
		rd = mpii_dt(a->rtype);
		if (!rd || rd->size * (size_t)a->rcount != t->bytes)
			rc = MPI_ERR_TYPE;
		else
			mpii_unpack(rd, a->rcount, a->rbuf, 0, tbytes, t->bytes);
	}
	if (rc == MPI_SUCCESS && a->op == MPI_REPLACE)
		rc = tgt_io(t, obytes, 1);
	else if (rc == MPI_SUCCESS && a->op != MPI_NO_OP) {
		rc = combine(t, ed, a->op, obytes, tbytes);
		if (rc == MPI_SUCCESS)
			rc = tgt_io(t, tbytes, 1);
	}
	mpii_wlock_release(mtx, 1);
	return rc;
}

static int cas(const struct args *a, const struct tgt *t, char *tbytes)
{
	int rc, *mtx = &t->w->lk[t->rank].acc;

	if (!t->d->predefined)
		return MPI_ERR_TYPE;
	mpii_wlock_acquire(mtx, 1);
	rc = tgt_io(t, tbytes, 0);
	if (rc == MPI_SUCCESS) {
		memcpy(a->rbuf, tbytes, t->bytes);
		if (!memcmp(tbytes, a->cbuf, t->bytes))
			rc = tgt_io(t, (void *)a->obuf, 1);
	}
	mpii_wlock_release(mtx, 1);
	return rc;
}

/* An operation on a target of another node: checked and packed here, sent as messages. */
static int remote(struct args *a, const struct tgt *t, struct mpii_dtype *od)
{
	struct mpii_rma_op o = {.kind = a->kind,
	                        .trank = t->rank,
	                        .toff = (MPI_Aint)(t->raddr - t->w->p[t->rank].addr),
	                        .tcount = t->count,
	                        .td = t->d,
	                        .op = a->op,
	                        .req = a->req};
	char *packed = NULL;
	int rc = MPI_SUCCESS;

	if (a->kind == OP_ACC || a->kind == OP_GACC) {
		o.ed = elem_type(t->d);
		if (!o.ed || !o.ed->size)
			return MPI_ERR_TYPE;
	}
	if (a->kind == OP_GET) {
		o.rbuf = (void *)a->obuf, o.rcount = a->ocount, o.rd = od;
	} else if (a->kind == OP_GACC) {
		o.rbuf = a->rbuf, o.rcount = a->rcount, o.rd = mpii_dt(a->rtype);
	} else if (a->kind == OP_CAS) {
		o.rbuf = a->rbuf, o.rcount = 1, o.rd = t->d;
		if (!t->d->predefined)
			return MPI_ERR_TYPE;
		o.obytes = a->obuf;
		o.cbytes = a->cbuf;
	}
	if (o.rbuf && (!o.rd || o.rd->size * (size_t)o.rcount != t->bytes))
		return MPI_ERR_TYPE;
	if (a->kind == OP_PUT || a->kind == OP_ACC || (a->kind == OP_GACC && a->op != MPI_NO_OP)) {
		if (!(packed = malloc(t->bytes)))
			return MPI_ERR_NO_MEM;
		rc = pack_origin(a, od, t->bytes, packed);
		o.obytes = packed;
	}
	if (rc == MPI_SUCCESS)
		rc = mpii_rma_issue(t->w, &o);
	a->req_later = rc == MPI_SUCCESS && o.rbuf && a->req;
	free(packed);
	return rc;
}

static int rma(struct args *a, int trank, MPI_Aint tdisp, int tcount, MPI_Datatype ttype,
               MPI_Win win, const char *fn)
{
	struct mpii_win *w = mpii_win(win);
	struct mpii_dtype *od;
	struct tgt t = {0};
	char stack[256], *buf = stack;
	void *mem = NULL;
	int rc;

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, fn);
	if (trank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	rc = target(w, trank, tdisp, tcount, ttype, &t);
	od = a->kind == OP_CAS ? t.d : mpii_dt(a->otype);
	if (rc == MPI_SUCCESS && !od)
		rc = MPI_ERR_TYPE;
	if (rc == MPI_SUCCESS && a->ocount < 0)
		rc = MPI_ERR_COUNT;
	if ((a->kind == OP_ACC || a->kind == OP_GACC) && rc == MPI_SUCCESS && !mpii_op_valid(a->op))
		rc = MPI_ERR_OP;
	if (rc != MPI_SUCCESS || !t.bytes)
		return mpii_err(w->comm, rc, fn);
	if (w->p[trank].remote)
		return mpii_err(w->comm, remote(a, &t, od), fn);
	/* a put or get between contiguous buffers and mapped memory is one memcpy */
	if (t.base && t.d->contig && od->contig && (a->kind == OP_PUT || a->kind == OP_GET) &&
	    od->size * (size_t)a->ocount == t.bytes) {
		char *tp = t.base + t.d->true_lb;
		if (a->kind == OP_PUT)
			memcpy(tp, mpii_at(a->obuf, od->true_lb), t.bytes);
		else
			memcpy(mpii_at(a->obuf, od->true_lb), tp, t.bytes);
		return MPI_SUCCESS;
	}
	/* a contiguous origin and another process's memory (MPI_Win_create): the kernel copies
	 * straight between the two, along the target's runs. Packing into scratch first made a
	 * second copy of every byte: puts and gets of 64 KiB - 4 MiB ran at half Open MPI's speed
	 */
	if (!t.base && od->contig && (a->kind == OP_PUT || a->kind == OP_GET) &&
	    od->size * (size_t)a->ocount == t.bytes)
		return mpii_err(w->comm, cma(&t, mpii_at(a->obuf, od->true_lb), a->kind == OP_PUT),
		                fn);
	/* scratch from the collectives' cache: large operations would fault in fresh pages */
	if (t.bytes * 2 > sizeof(stack) &&
	    !(mem = mpii_tmpbuf(mpii_dt(MPI_BYTE), (int)(t.bytes * 2), &buf)))
		return mpii_err(w->comm, MPI_ERR_NO_MEM, fn);
	switch (a->kind) {
	case OP_PUT:
		rc = pack_origin(a, od, t.bytes, buf);
		if (rc == MPI_SUCCESS)
			rc = tgt_io(&t, buf, 1);
		break;
	case OP_GET:
		if (od->size * (size_t)a->ocount != t.bytes)
			rc = MPI_ERR_TYPE;
		else if ((rc = tgt_io(&t, buf, 0)) == MPI_SUCCESS)
			mpii_unpack(od, a->ocount, (void *)a->obuf, 0, buf, t.bytes);
		break;
	case OP_CAS:
		rc = cas(a, &t, buf);
		break;
	default:
		rc = accumulate(a, &t, od, buf, buf + t.bytes);
	}
	mpii_tmpbuf_free(mem);
	return mpii_err(w->comm, rc, fn);
}

MPII_ALIAS(Put)
int PMPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
             int tcount, MPI_Datatype ttype, MPI_Win win)
{
	struct args a = {.kind = OP_PUT, .obuf = obuf, .ocount = ocount, .otype = otype};

	return rma(&a, target, tdisp, tcount, ttype, win, "MPI_Put");
}

MPII_ALIAS(Get)
int PMPI_Get(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
             MPI_Datatype ttype, MPI_Win win)
{
	struct args a = {.kind = OP_GET, .obuf = obuf, .ocount = ocount, .otype = otype};

	return rma(&a, target, tdisp, tcount, ttype, win, "MPI_Get");
}

MPII_ALIAS(Accumulate)
int PMPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                    int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	struct args a = {.kind = OP_ACC, .obuf = obuf, .ocount = ocount, .otype = otype, .op = op};

	return rma(&a, target, tdisp, tcount, ttype, win, "MPI_Accumulate");
}

/* The arguments of a get-accumulate (MPI_Get_accumulate, MPI_Rget_accumulate). */
static struct args gacc_args(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf,
                             int rcount, MPI_Datatype rtype, int tcount, MPI_Datatype ttype,
                             MPI_Op op)
{
	struct args a = {.kind = OP_GACC,
	                 .obuf = obuf,
	                 .ocount = ocount,
	                 .otype = otype,
	                 .rbuf = rbuf,
	                 .rcount = rcount,
	                 .rtype = rtype,
	                 .op = op};

	if (op == MPI_NO_OP) { /* the origin buffer is ignored */
		a.ocount = tcount;
		a.otype = ttype;
	}
	return a;
}

MPII_ALIAS(Get_accumulate)
int PMPI_Get_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount,
                        MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                        MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	struct args a = gacc_args(obuf, ocount, otype, rbuf, rcount, rtype, tcount, ttype, op);

	return rma(&a, target, tdisp, tcount, ttype, win, "MPI_Get_accumulate");
}

MPII_ALIAS(Fetch_and_op)
int PMPI_Fetch_and_op(const void *obuf, void *rbuf, MPI_Datatype type, int target, MPI_Aint tdisp,
                      MPI_Op op, MPI_Win win)
{
	return PMPI_Get_accumulate(obuf, 1, type, rbuf, 1, type, target, tdisp, 1, type, op, win);
}

MPII_ALIAS(Compare_and_swap)
int PMPI_Compare_and_swap(const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype type,
                          int target, MPI_Aint tdisp, MPI_Win win)
{
	struct args a = {.kind = OP_CAS, .obuf = obuf, .ocount = 1, .rbuf = rbuf, .cbuf = cbuf};

	return rma(&a, target, tdisp, 1, type, win, "MPI_Compare_and_swap");
}

/* Request-based forms: on this node the operation is complete on return, so is the request;
 * a remote put or accumulate is complete locally on return (its data was copied), a remote
 * get completes its request when the results have arrived. */
static int req_op(struct args *a, int trank, MPI_Aint tdisp, int tcount, MPI_Datatype ttype,
                  MPI_Win win, MPI_Request *req, const char *fn)
{
	struct mpii_win *w = mpii_win(win);
	struct lk_request *r;
	int rc;

	*req = MPI_REQUEST_NULL;
	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, fn);
	r = mpii_req_new(RQ_NBC);
	if (!r)
		return mpii_err(w->comm, MPI_ERR_NO_MEM, fn);
	r->comm = w->comm;
	r->d = mpii_dt(MPI_BYTE);
	mpii_req_hold(r);
	r->active = 1;
	r->st.MPI_SOURCE = MPI_ANY_SOURCE;
	r->st.MPI_TAG = MPI_ANY_TAG;
	a->req = r;
	rc = rma(a, trank, tdisp, tcount, ttype, win, fn);
	if (rc != MPI_SUCCESS) {
		mpii_req_free(r);
		return rc;
	}
	if (!a->req_later)
		r->done = 1;
	*req = r;
	return MPI_SUCCESS;
}

MPII_ALIAS(Rput)
int PMPI_Rput(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
              int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	struct args a = {.kind = OP_PUT, .obuf = obuf, .ocount = ocount, .otype = otype};

	return req_op(&a, target, tdisp, tcount, ttype, win, req, "MPI_Rput");
}

MPII_ALIAS(Rget)
int PMPI_Rget(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
              MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	struct args a = {.kind = OP_GET, .obuf = obuf, .ocount = ocount, .otype = otype};

	return req_op(&a, target, tdisp, tcount, ttype, win, req, "MPI_Rget");
}

MPII_ALIAS(Raccumulate)
int PMPI_Raccumulate(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                     int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
	struct args a = {.kind = OP_ACC, .obuf = obuf, .ocount = ocount, .otype = otype, .op = op};

	return req_op(&a, target, tdisp, tcount, ttype, win, req, "MPI_Raccumulate");
}

MPII_ALIAS(Rget_accumulate)
int PMPI_Rget_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount,
                         MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                         MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
	struct args a = gacc_args(obuf, ocount, otype, rbuf, rcount, rtype, tcount, ttype, op);

	return req_op(&a, target, tdisp, tcount, ttype, win, req, "MPI_Rget_accumulate");
}
