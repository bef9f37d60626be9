/* lib/mpi/mpi_io_access.c: MPI_File_read/write in all positionings, synchronisms and
 * coordinations: the user's buffer as a stream, independent operations, the API entry points. */
#include <stdlib.h>
#include <string.h>

#include "mpio.h"

enum { AT, IND, SHARED, ORDERED }; /* positioning */
enum {
	SPLIT_NONE,
	SPLIT_READ_AT,
	SPLIT_WRITE_AT,
	SPLIT_READ, /* split collective kinds */
	SPLIT_WRITE,
	SPLIT_READ_ORD,
	SPLIT_WRITE_ORD
};

/* ---- the stream of one access ---- */

int mpio_acc_prepare(struct mpio_acc *a, struct mpio_file *f, int write, MPI_Offset s,
                     const void *buf, int count, struct mpii_dtype *d)
{
	const struct mpio_view *v = &f->vs->v;
	int native = mpio_datarep_native(v->dr), rc = MPI_SUCCESS;

	memset(a, 0, sizeof(*a));
	a->f = f;
	a->vs = f->vs;
	f->vs->refs++;
	a->write = write;
	a->s = s;
	a->ubuf = (void *)buf;
	if (count < 0)
		return MPI_ERR_COUNT;
	if (!d || (!d->predefined && !d->committed))
		return MPI_ERR_TYPE;
	a->count = count;
	a->d = d;
	if (!d->predefined)
		d->refs++;
	a->n = native ? (MPI_Offset)d->size * count : mpio_datarep_size(v->dr, d, count);
	if (a->n < 0)
		return MPI_ERR_CONVERSION;
	if (v->esize && a->n % v->esize)
		return MPI_ERR_IO; /* not whole etypes (ROMIO's class for it) */
	if (!a->n)
		return MPI_SUCCESS;
	if (native && d->contig) {
		a->buf = mpii_at(buf, d->true_lb);
		return MPI_SUCCESS;
	}
	a->tmp = malloc((size_t)a->n);
	if (!a->tmp)
		return MPI_ERR_NO_MEM;
	a->buf = a->tmp;
	if (write)
		rc = mpio_datarep_conv(v->dr, d, count, (void *)buf, a->tmp, 1);
	return rc;
}

int mpio_acc_finish(struct mpio_acc *a, MPI_Status *st)
{
	int rc = MPI_SUCCESS;
	MPI_Offset native = a->done;
	const struct mpio_datarep *dr = a->vs ? a->vs->v.dr : NULL;

	if (!dr) { /* never prepared */
		;
	} else if (!a->write && a->tmp && a->done) {
		if (mpio_datarep_native(dr)) {
			mpii_unpack(a->d, a->count, a->ubuf, 0, a->tmp, (size_t)a->done);
		} else { /* whole elements only: a partial one cannot be converted */
			MPI_Offset per = a->n / (a->count ? a->count : 1);
			int k = per ? (int)(a->done / per) : 0;
			rc = mpio_datarep_conv(dr, a->d, k, a->ubuf, a->tmp, 0);
			native = (MPI_Offset)a->d->size * k;
		}
	} else if (!mpio_datarep_native(dr) && a->n) {
		native = (MPI_Offset)a->d->size * a->count * a->done / a->n;
	}
	if (st && st != MPI_STATUS_IGNORE) {
		st->MPI_SOURCE = MPI_ANY_SOURCE;
		st->MPI_TAG = MPI_ANY_TAG;
		st->lk_count = native;
		st->lk_cancelled = 0;
	}
	free(a->tmp);
	a->tmp = NULL;
	if (a->d && !a->d->predefined)
		mpii_dt_release(a->d);
	a->d = NULL;
	mpio_vset_release(a->vs);
	a->vs = NULL;
	return rc;
}

/* ---- checks and positions ---- */

/* MPI code for an access of this kind on f. */
static int access_ok(struct mpio_file *f, int write, int where)
{
	if (write && (f->amode & MPI_MODE_RDONLY))
		return MPI_ERR_READ_ONLY;
	if (!write && (f->amode & MPI_MODE_WRONLY))
		return MPI_ERR_ACCESS;
	if ((f->amode & MPI_MODE_SEQUENTIAL) && (where == AT || where == IND))
		return MPI_ERR_UNSUPPORTED_OPERATION;
	return MPI_SUCCESS;
}

/* Etypes of count elements of d in f's view (-1 on a bad type). */
static MPI_Offset etypes(struct mpio_file *f, int count, struct mpii_dtype *d)
{
	const struct mpio_view *v = &f->vs->v;
	MPI_Offset n = d && count >= 0 ? mpio_datarep_size(v->dr, d, count) : -1;

	return n < 0 || !v->esize ? n : n / v->esize;
}

/* ---- independent operations ---- */

struct indep {
	struct mpio_op op;
	struct mpio_acc a;
	volatile int flag; /* the I/O thread is done */
	int rc;
};

static void indep_run(void *arg)
{
	struct indep *x = arg;
	struct mpio_acc *a = &x->a;

	x->rc = mpio_pio(a->f, &a->vs->v, a->write, a->buf, a->s, a->n, &a->done);
}

static int indep_step(struct mpio_op *op)
{
	struct indep *x = (struct indep *)op;

	return __atomic_load_n(&x->flag, __ATOMIC_ACQUIRE);
}

static void indep_fini(struct mpio_op *op)
{
	struct indep *x = (struct indep *)op;
	MPI_Status st = {0};
	int rc = mpio_acc_finish(&x->a, &st);

	x->a.f->pending--;
	mpio_req_complete(op->req, x->rc != MPI_SUCCESS ? x->rc : rc, &st);
	free(x);
}

/* Where an independent access starts (stream byte), and the pointer moved past it. */
static int position(struct mpio_file *f, int where, MPI_Offset offset, MPI_Offset ne, MPI_Offset *s)
{
	int rc = MPI_SUCCESS;

	if (where == AT) {
		if (offset < 0)
			return MPI_ERR_ARG;
		*s = offset;
	} else if (where == IND) {
		*s = f->fp;
		f->fp += ne;
	} else {
		rc = mpio_shared_fetch_add(f, ne, s);
	}
	*s *= f->vs->v.esize;
	return rc;
}

static int indep(MPI_File fh, int write, int where, MPI_Offset offset, const void *buf, int count,
                 MPI_Datatype type, MPI_Status *st, MPI_Request *req, const char *fn)
{
	struct mpio_acc a;
	struct indep *x;
	MPI_Offset s = 0, ne;
	int rc;

	MPIO_FILE(f, fh, fn);
	if (req)
		*req = MPI_REQUEST_NULL;
	rc = access_ok(f, write, where);
	ne = etypes(f, count, mpii_dt(type));
	if (rc == MPI_SUCCESS && ne < 0)
		rc = count < 0 ? MPI_ERR_COUNT : mpii_dt(type) ? MPI_ERR_CONVERSION : MPI_ERR_TYPE;
	if (rc == MPI_SUCCESS)
		rc = position(f, where, offset, ne, &s);
	if (rc == MPI_SUCCESS)
		rc = mpio_acc_prepare(&a, f, write, s, buf, count, mpii_dt(type));
	else
		memset(&a, 0, sizeof(a));
	if (rc != MPI_SUCCESS) {
		mpio_acc_finish(&a, NULL);
		return mpio_err(f, rc, fn);
	}
	if (!req) {
		rc = mpio_pio(f, &a.vs->v, write, a.buf, a.s, a.n, &a.done);
		if (where == IND && a.done < a.n) /* the pointer stops where a read stopped */
			f->fp -= (a.n - a.done) / a.vs->v.esize;
		if (rc == MPI_SUCCESS)
			rc = mpio_acc_finish(&a, st);
		else
			mpio_acc_finish(&a, NULL);
		return mpio_err(f, rc, fn);
	}
	x = calloc(1, sizeof(*x));
	if (x && !(x->op.req = mpio_req_new(f))) {
		free(x);
		x = NULL;
	}
	if (!x) {
		mpio_acc_finish(&a, NULL);
		return mpio_err(f, MPI_ERR_NO_MEM, fn);
	}
	x->a = a;
	x->op.step = indep_step;
	x->op.fini = indep_fini;
	*req = x->op.req;
	f->pending++;
	if (!a.n)
		x->flag = 1;
	else if ((rc = mpio_thread_run(indep_run, x, &x->flag, 0)) != MPI_SUCCESS) {
		x->rc = rc;
		x->flag = 1;
	}
	mpio_op_start(&x->op);
	return MPI_SUCCESS;
}

/* ---- collective operations ---- */

/* Ordered access: each rank's place after the ranks below it, the shared pointer moved past
 * all of them (rank 0 moves it). Collective. MPI code; *s the stream byte. */
static int ordered(struct mpio_file *f, MPI_Offset ne, MPI_Offset *s)
{
	struct mpii_comm *c = f->comm;
	MPI_Offset *all = malloc(sizeof(MPI_Offset) * (size_t)c->size), base = 0, before = 0,
	           total = 0;
	int rc = all ? MPI_SUCCESS : MPI_ERR_NO_MEM, err = rc;

	if (rc == MPI_SUCCESS)
		rc = mpii_allgather(&ne, 1, mpii_dt(MPI_OFFSET), all, 1, mpii_dt(MPI_OFFSET), c);
	else /* take part in the allgather all the same */
		rc = mpii_allgather(&ne, 1, mpii_dt(MPI_OFFSET), &base, 0, mpii_dt(MPI_OFFSET), c);
	for (int r = 0; rc == MPI_SUCCESS && err == MPI_SUCCESS && r < c->size; r++) {
		before += r < c->rank ? all[r] : 0;
		total += all[r];
	}
	if (rc == MPI_SUCCESS && c->rank == 0)
		err = err != MPI_SUCCESS ? err : mpio_shared_fetch_add(f, total, &base);
	if (rc == MPI_SUCCESS)
		rc = mpii_bcast(&base, 1, mpii_dt(MPI_OFFSET), 0, c);
	free(all);
	*s = (base + before) * f->vs->v.esize;
	return rc != MPI_SUCCESS ? rc : mpio_agree(c, err);
}

/* Start a collective access; its request in *r. A rank whose arguments are wrong still takes
 * part (its error travels with its part of the exchange, so every rank fails). MPI code. */
static int coll_start(struct mpio_file *f, int write, int where, MPI_Offset offset, const void *buf,
                      int count, MPI_Datatype type, int blocking, struct lk_request **r)
{
	struct mpio_acc a = {0};
	MPI_Offset s = 0, ne = etypes(f, count, mpii_dt(type));
	int rc = access_ok(f, write, where);

	if (rc == MPI_SUCCESS && ne < 0)
		rc = count < 0 ? MPI_ERR_COUNT : mpii_dt(type) ? MPI_ERR_CONVERSION : MPI_ERR_TYPE;
	if (where == ORDERED) {
		int orc = ordered(f, ne < 0 ? 0 : ne, &s);
		rc = rc != MPI_SUCCESS ? rc : orc;
	} else if (rc == MPI_SUCCESS) {
		rc = position(f, where, offset, ne, &s);
	}
	if (rc == MPI_SUCCESS)
		rc = mpio_acc_prepare(&a, f, write, s, buf, count, mpii_dt(type));
	if (rc != MPI_SUCCESS) { /* an empty access that carries the error to the others */
		mpio_acc_finish(&a, NULL);
		memset(&a, 0, sizeof(a));
		a.f = f;
		a.vs = f->vs;
		f->vs->refs++;
		a.write = write;
		a.err = rc;
	}
	a.blocking = blocking;
	*r = mpio_req_new(f);
	if (!*r) {
		mpio_acc_finish(&a, NULL);
		return MPI_ERR_NO_MEM;
	}
	f->pending++;
	return mpio_coll_start(&a, *r);
}

static int coll(MPI_File fh, int write, int where, MPI_Offset offset, const void *buf, int count,
                MPI_Datatype type, MPI_Status *st, MPI_Request *req, const char *fn)
{
	struct lk_request *r;
	MPI_Offset before;
	int rc;

	MPIO_FILE(f, fh, fn);
	if (req)
		*req = MPI_REQUEST_NULL;
	before = f->fp;
	rc = coll_start(f, write, where, offset, buf, count, type, !req, &r);
	if (rc != MPI_SUCCESS)
		return mpio_err(f, rc, fn);
	if (req) {
		*req = r;
		return MPI_SUCCESS;
	}
	mpio_wait(r);
	rc = r->st.MPI_ERROR;
	if (rc == MPI_SUCCESS && where == IND && mpii_dt(type) && mpii_dt(type)->size) {
		/* a read that stopped at the end of the file moves the pointer that far only */
		MPI_Offset got = r->st.lk_count / (MPI_Offset)mpii_dt(type)->size;
		f->fp = before + etypes(f, (int)got, mpii_dt(type));
	}
	if (st && st != MPI_STATUS_IGNORE)
		*st = r->st;
	mpii_req_free(r);
	return mpio_err(f, rc, fn);
}

/* ---- split collectives: begin starts the nonblocking operation, end waits for it ---- */

static int split_begin(MPI_File fh, int kind, int write, int where, MPI_Offset offset,
                       const void *buf, int count, MPI_Datatype type, const char *fn)
{
	struct lk_request *r;
	int rc;

	MPIO_FILE(f, fh, fn);
	if (f->split)
		return mpio_err(f, MPI_ERR_OTHER, fn); /* one split collective at a time per file */
	rc = coll_start(f, write, where, offset, buf, count, type, 0, &r);
	if (rc != MPI_SUCCESS)
		return mpio_err(f, rc, fn);
	f->split = r;
	f->split_kind = kind;
	return MPI_SUCCESS;
}

static int split_end(MPI_File fh, int kind, MPI_Status *st, const char *fn)
{
	struct lk_request *r;
	int rc;

	MPIO_FILE(f, fh, fn);
	if (!f->split || f->split_kind != kind)
		return mpio_err(f, MPI_ERR_OTHER, fn); /* no matching begin */
	r = f->split;
	f->split = NULL;
	mpio_wait(r);
	rc = r->st.MPI_ERROR;
	if (st && st != MPI_STATUS_IGNORE)
		*st = r->st;
	mpii_req_free(r);
	return mpio_err(f, rc, fn);
}

/* ---- the API ---- */

#define RD_FN(Name, call)                                                                          \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, void *buf, int count, MPI_Datatype type,                 \
	                     MPI_Status *status)                                                   \
	{                                                                                          \
		return call;                                                                       \
	}
#define WR_FN(Name, call)                                                                          \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, const void *buf, int count, MPI_Datatype type,           \
	                     MPI_Status *status)                                                   \
	{                                                                                          \
		return call;                                                                       \
	}
#define RD_AT_FN(Name, call)                                                                       \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, void *buf, int count,                 \
	                     MPI_Datatype type, MPI_Status *status)                                \
	{                                                                                          \
		return call;                                                                       \
	}
#define WR_AT_FN(Name, call)                                                                       \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, const void *buf, int count,           \
	                     MPI_Datatype type, MPI_Status *status)                                \
	{                                                                                          \
		return call;                                                                       \
	}
#define IRD_FN(Name, call)                                                                         \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, void *buf, int count, MPI_Datatype type,                 \
	                     MPI_Request *req)                                                     \
	{                                                                                          \
		return call;                                                                       \
	}
#define IWR_FN(Name, call)                                                                         \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, const void *buf, int count, MPI_Datatype type,           \
	                     MPI_Request *req)                                                     \
	{                                                                                          \
		return call;                                                                       \
	}
#define IRD_AT_FN(Name, call)                                                                      \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, void *buf, int count,                 \
	                     MPI_Datatype type, MPI_Request *req)                                  \
	{                                                                                          \
		return call;                                                                       \
	}
#define IWR_AT_FN(Name, call)                                                                      \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, const void *buf, int count,           \
	                     MPI_Datatype type, MPI_Request *req)                                  \
	{                                                                                          \
		return call;                                                                       \
	}

#define F(n) "MPI_File_" #n
/* explicit offsets */
RD_AT_FN(read_at, indep(fh, 0, AT, offset, buf, count, type, status, NULL, F(read_at)))
WR_AT_FN(write_at, indep(fh, 1, AT, offset, buf, count, type, status, NULL, F(write_at)))
RD_AT_FN(read_at_all, coll(fh, 0, AT, offset, buf, count, type, status, NULL, F(read_at_all)))
WR_AT_FN(write_at_all, coll(fh, 1, AT, offset, buf, count, type, status, NULL, F(write_at_all)))
IRD_AT_FN(iread_at, indep(fh, 0, AT, offset, buf, count, type, NULL, req, F(iread_at)))
IWR_AT_FN(iwrite_at, indep(fh, 1, AT, offset, buf, count, type, NULL, req, F(iwrite_at)))
IRD_AT_FN(iread_at_all, coll(fh, 0, AT, offset, buf, count, type, NULL, req, F(iread_at_all)))
IWR_AT_FN(iwrite_at_all, coll(fh, 1, AT, offset, buf, count, type, NULL, req, F(iwrite_at_all)))
/* individual file pointers */
RD_FN(read, indep(fh, 0, IND, 0, buf, count, type, status, NULL, F(read)))
WR_FN(write, indep(fh, 1, IND, 0, buf, count, type, status, NULL, F(write)))
RD_FN(read_all, coll(fh, 0, IND, 0, buf, count, type, status, NULL, F(read_all)))
WR_FN(write_all, coll(fh, 1, IND, 0, buf, count, type, status, NULL, F(write_all)))
IRD_FN(iread, indep(fh, 0, IND, 0, buf, count, type, NULL, req, F(iread)))
IWR_FN(iwrite, indep(fh, 1, IND, 0, buf, count, type, NULL, req, F(iwrite)))
IRD_FN(iread_all, coll(fh, 0, IND, 0, buf, count, type, NULL, req, F(iread_all)))
IWR_FN(iwrite_all, coll(fh, 1, IND, 0, buf, count, type, NULL, req, F(iwrite_all)))
/* the shared file pointer */
RD_FN(read_shared, indep(fh, 0, SHARED, 0, buf, count, type, status, NULL, F(read_shared)))
WR_FN(write_shared, indep(fh, 1, SHARED, 0, buf, count, type, status, NULL, F(write_shared)))
IRD_FN(iread_shared, indep(fh, 0, SHARED, 0, buf, count, type, NULL, req, F(iread_shared)))
IWR_FN(iwrite_shared, indep(fh, 1, SHARED, 0, buf, count, type, NULL, req, F(iwrite_shared)))
RD_FN(read_ordered, coll(fh, 0, ORDERED, 0, buf, count, type, status, NULL, F(read_ordered)))
WR_FN(write_ordered, coll(fh, 1, ORDERED, 0, buf, count, type, status, NULL, F(write_ordered)))

/* split collectives */
MPII_ALIAS(File_read_at_all_begin)
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                MPI_Datatype type)
{
	return split_begin(fh, SPLIT_READ_AT, 0, AT, offset, buf, count, type,
	                   F(read_at_all_begin));
}

MPII_ALIAS(File_write_at_all_begin)
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype type)
{
	return split_begin(fh, SPLIT_WRITE_AT, 1, AT, offset, buf, count, type,
	                   F(write_at_all_begin));
}

#define BEGIN_RD(Name, kind, where)                                                                \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, void *buf, int count, MPI_Datatype type)                 \
	{                                                                                          \
		return split_begin(fh, kind, 0, where, 0, buf, count, type, F(Name));              \
	}
#define BEGIN_WR(Name, kind, where)                                                                \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, const void *buf, int count, MPI_Datatype type)           \
	{                                                                                          \
		return split_begin(fh, kind, 1, where, 0, buf, count, type, F(Name));              \
	}
#define END_RD(Name, kind)                                                                         \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, void *buf, MPI_Status *status)                           \
	{                                                                                          \
		(void)buf;                                                                         \
		return split_end(fh, kind, status, F(Name));                                       \
	}
#define END_WR(Name, kind)                                                                         \
	MPII_ALIAS(File_##Name)                                                                    \
	int PMPI_File_##Name(MPI_File fh, const void *buf, MPI_Status *status)                     \
	{                                                                                          \
		(void)buf;                                                                         \
		return split_end(fh, kind, status, F(Name));                                       \
	}
BEGIN_RD(read_all_begin, SPLIT_READ, IND)
BEGIN_WR(write_all_begin, SPLIT_WRITE, IND)
BEGIN_RD(read_ordered_begin, SPLIT_READ_ORD, ORDERED)
BEGIN_WR(write_ordered_begin, SPLIT_WRITE_ORD, ORDERED)
END_RD(read_at_all_end, SPLIT_READ_AT)
END_WR(write_at_all_end, SPLIT_WRITE_AT)
END_RD(read_all_end, SPLIT_READ)
END_WR(write_all_end, SPLIT_WRITE)
END_RD(read_ordered_end, SPLIT_READ_ORD)
END_WR(write_ordered_end, SPLIT_WRITE_ORD)
