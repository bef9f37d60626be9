/* lib/mpi/mpi_io_coll.c: collective data access as a state machine: exchange of the ranks' parts,
 * the choice between independent and two-phase I/O, the agreement on the outcome where one is
 * needed. */
#include <stdlib.h>
#include <string.h>

#include "mpio.h"

/* Tags on the file's private communicator: the access's sequence number in the high bits (every
 * rank starts collective accesses in the same order), a step in the low 16 (two-phase rounds
 * from 0 up, the exchanges at the top). */
#define TAG(seq, sub) ((int)(((seq)&0x3fffu) << 16) | (sub))
enum { SUB_INFO = 0xfff0, SUB_FINAL };

enum { S_INFO, S_INDEP, S_TP, S_FINAL, S_DONE };

struct coll {
	struct mpio_op op;
	struct mpio_acc a;
	struct mpio_file *f;
	unsigned seq;
	int state, err;
	int agree; /* S_INDEP: agree on the outcome when the I/O is done */
	struct mpio_xg xg;
	int *lens; /* item sizes of the exchange in progress */
	struct mpio_cinfo me, *all;
	volatile int flag; /* S_INDEP: the I/O thread is done */
	int iorc;
	struct mpio_tp *tp;
	int64_t fin[2], *fins; /* S_FINAL: {-error class, end of file met} of every rank */
};

/* Start an exchange of one item of len bytes per rank (lens: everyone's, or NULL for len). */
static int xg(struct coll *x, int sub, const void *mine, int len, const int *lens, void *out)
{
	int n = x->f->comm->size;

	if (!lens) {
		free(x->lens);
		x->lens = malloc(sizeof(int) * (size_t)n);
		if (!x->lens)
			return MPI_ERR_NO_MEM;
		for (int r = 0; r < n; r++)
			x->lens[r] = len;
		lens = x->lens;
	}
	return mpio_xg_start(&x->xg, x->f->comm, TAG(x->seq, sub), mine, lens, out);
}

/* ---- the choice ---- */

static int by_lo(const void *a, const void *b)
{
	const struct mpio_cinfo *x = *(struct mpio_cinfo *const *)a,
	                        *y = *(struct mpio_cinfo *const *)b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether the ranks' file ranges interleave (ROMIO's test for two-phase in automatic mode). */
static int interleaved(const struct mpio_cinfo *all, int n)
{
	const struct mpio_cinfo **v = malloc(sizeof(*v) * (size_t)n);
	int k = 0, il = 0;

	if (!v)
		return 1;
	for (int r = 0; r < n; r++)
		if (all[r].n > 0)
			v[k++] = &all[r];
	qsort(v, (size_t)k, sizeof(*v), by_lo);
	for (int i = 1; i < k && !il; i++)
		il = v[i]->lo < v[i - 1]->hi;
	free(v);
	return il;
}

/* Whether the ranks' accesses come in pieces small enough that two-phase I/O pays: it copies
 * every byte once more (the exchange) to save the system calls of pieces written or read one
 * by one, and a call costs about as much as copying PIECE_BYTES. Pieces of 16 KiB dealt round
 * robin over 2 and 4 ranks went 1.3-2.7 times faster one by one than through an aggregator on
 * a tmpfs and a disk (bench/mpiio), 12-byte ones need the aggregator. */
#define PIECE_BYTES (8 << 10)
static int small_pieces(const struct coll *x)
{
	int64_t bytes = 0, pieces = 0;

	for (int r = 0; r < x->f->comm->size; r++) {
		bytes += x->all[r].n;
		pieces += x->all[r].pieces;
	}
	return bytes < pieces * PIECE_BYTES;
}

/* Two-phase I/O for this access? The same answer on every rank: it depends only on what all
 * ranks said and on hints every rank has the same. */
static int use_tp(const struct coll *x)
{
	const struct mpio_file *f = x->f;
	int hint = x->a.write ? f->h.cb_write : f->h.cb_read, any = 0;

	for (int r = 0; r < f->comm->size; r++) {
		any |= x->all[r].n > 0;
		if (x->all[r].overlap)
			return 0; /* a view that is not increasing: each rank reads on its own */
	}
	if (!any || hint == MPIO_DISABLE || f->atomic) /* atomic: each rank locks its own access */
		return 0;
	return hint == MPIO_ENABLE || (interleaved(x->all, f->comm->size) && small_pieces(x));
}

/* Whether the ranks going independent wait for each other at the end (the outcome exchange).
 * Not for ROMIO's case, ranks whose accesses only write or read their own bytes: each returns
 * when its own system calls are done, with its own outcome, as ROMIO's independent path does.
 * Waiting there made every rank as late as the slowest one plus the time to hear of it (a
 * contiguous write_at_all of 1 MiB a rank on 2 ranks, with another program on the CPUs: the
 * first rank done waited 0.3-5 ms for the second's message). They wait when some rank's write
 * sieves: its read-modify-write rewrites bytes around its own, and a rank already out of the
 * call could write those meanwhile (ROMIO's two-phase writes end with an allreduce for the same
 * reason); and in atomic mode, where a collective call is one atomic unit for each rank. */
static int need_agreement(const struct coll *x)
{
	if (x->f->atomic)
		return 1;
	for (int r = 0; r < x->f->comm->size; r++)
		if (x->all[r].rmw)
			return 1;
	return 0;
}

/* ---- the machine ---- */

static void indep_run(void *arg)
{
	struct coll *x = arg;
	struct mpio_acc *a = &x->a;

	x->iorc = mpio_pio(a->f, &a->vs->v, a->write, a->buf, a->s, a->n, &a->done);
}

/* Everyone's parts are known: go independent or two-phase. */
static void decide(struct coll *x)
{
	int n = x->f->comm->size;

	for (int r = 0; r < n; r++)
		if (x->all[r].err != MPI_SUCCESS) { /* a rank's arguments were wrong: all fail */
			x->err = x->all[r].err;
			x->state = S_DONE;
			return;
		}
	if (!use_tp(x)) {
		x->state = S_INDEP;
		x->agree = need_agreement(x);
		if (!x->a.n)
			x->flag = 1;
		else if ((x->iorc = mpio_thread_run(indep_run, x, &x->flag, x->a.blocking)) !=
		         MPI_SUCCESS)
			x->flag = 1;
		return;
	}
	x->state = S_TP;
}

/* Run the exchange in progress; 1 when it is done (with x->err from it). */
static int xg_done(struct coll *x)
{
	if (!mpio_xg_step(&x->xg))
		return 0;
	if (x->xg.err != MPI_SUCCESS && x->err == MPI_SUCCESS)
		x->err = x->xg.err;
	mpio_xg_free(&x->xg);
	return 1;
}

static void to_final(struct coll *x)
{
	MPI_Offset eof = INT64_MAX;

	if (x->tp) {
		int rc = mpio_tp_result(x->tp, &eof);
		if (x->err == MPI_SUCCESS)
			x->err = rc;
	}
	x->fin[0] = -(int64_t)x->err;
	x->fin[1] = eof;
	x->state = S_FINAL;
	x->fins = malloc(sizeof(x->fin) * (size_t)x->f->comm->size);
	if (!x->fins) {
		x->err = MPI_ERR_NO_MEM;
		x->state = S_DONE; /* cannot take part: the others will not hear of it */
		return;
	}
	xg(x, SUB_FINAL, x->fin, (int)sizeof(x->fin), NULL, x->fins);
}

static int step(struct mpio_op *op)
{
	struct coll *x = (struct coll *)op;

	for (;;) {
		switch (x->state) {
		case S_INFO:
			if (!xg_done(x))
				return 0;
			if (x->err != MPI_SUCCESS) {
				x->state = S_DONE;
				break;
			}
			decide(x);
			break;
		case S_TP:
			if (!x->tp) {
				x->err = mpio_tp_start(&x->a, x->all, TAG(x->seq, 0), &x->tp);
				if (x->err != MPI_SUCCESS) {
					to_final(x);
					break;
				}
			}
			if (!mpio_tp_step(x->tp))
				return 0;
			to_final(x);
			break;
		case S_INDEP:
			if (!__atomic_load_n(&x->flag, __ATOMIC_ACQUIRE))
				return 0;
			x->err = x->iorc;
			if (!x->agree) {
				x->state = S_DONE;
				break;
			}
			to_final(x);
			break;
		case S_FINAL:
			if (!xg_done(x))
				return 0;
			x->state = S_DONE;
			break;
		case S_DONE:
			return 1;
		}
	}
}

/* The outcome every rank agreed on, the bytes this rank transferred. */
static void finish(struct coll *x, MPI_Status *st)
{
	struct mpio_acc *a = &x->a;
	int64_t eof = INT64_MAX;

	if (x->fins && x->err == MPI_SUCCESS)
		for (int r = 0; r < x->f->comm->size; r++) {
			if (-x->fins[2 * r] != MPI_SUCCESS && x->err == MPI_SUCCESS)
				x->err = (int)-x->fins[2 * r];
			if (x->fins[2 * r + 1] < eof)
				eof = x->fins[2 * r + 1];
		}
	if (x->tp && x->err == MPI_SUCCESS) { /* two-phase: a read stops at the end of the file */
		a->done = a->n;
		if (!a->write && eof != INT64_MAX && a->n) {
			MPI_Offset got = mpio_view_below(&a->vs->v, eof) - a->s;
			a->done = got < 0 ? 0 : got < a->n ? got : a->n;
		}
	}
	if (x->err != MPI_SUCCESS)
		a->done = 0;
	mpio_acc_finish(a, st);
}

static void fini(struct mpio_op *op)
{
	struct coll *x = (struct coll *)op;
	MPI_Status st = {0};

	finish(x, &st);
	x->f->pending--;
	mpio_req_complete(op->req, x->err, &st);
	if (x->tp)
		mpio_tp_free(x->tp);
	mpio_xg_free(&x->xg);
	free(x->lens);
	free(x->all);
	free(x->fins);
	free(x);
}

/* About how many runs of the file n stream bytes of view v fall in: a tile's runs, pro rata
 * (a contiguous view: one). */
static int64_t pieces(const struct mpio_view *v, MPI_Offset n)
{
	if (v->contig || !v->size)
		return 1;
	return 1 + (int64_t)((double)n * v->nrun / (double)v->size);
}

int mpio_coll_start(struct mpio_acc *a, struct lk_request *req)
{
	struct mpio_file *f = a->f;
	struct coll *x = calloc(1, sizeof(*x));

	if (!x || !(x->all = malloc(sizeof(*x->all) * (size_t)f->comm->size))) {
		free(x);
		mpio_acc_finish(a, NULL);
		f->pending--;
		mpio_req_complete(req, MPI_ERR_NO_MEM, NULL);
		return MPI_SUCCESS; /* the request carries it */
	}
	x->a = *a;
	x->f = f;
	x->seq = f->seq++;
	x->op.req = req;
	x->op.step = step;
	x->op.fini = fini;
	x->me.s = a->s;
	x->me.n = a->n;
	x->me.err = a->err;
	/* a view whose tiles overlap goes independent even within one tile: two-phase I/O inverts
	 * the map (mpio_view_below), which is only right for an increasing one */
	x->me.overlap = a->vs->v.overlap || a->vs->v.tiles_overlap;
	x->me.pieces = a->n ? pieces(&a->vs->v, a->n) : 0;
	x->me.rmw = a->write && a->err == MPI_SUCCESS && mpio_pio_sieves(f, &a->vs->v, a->s, a->n);
	if (a->n) {
		x->me.lo = mpio_view_off(&a->vs->v, a->s);
		x->me.hi = mpio_view_off(&a->vs->v, a->s + a->n - 1) + 1;
	}
	x->err = xg(x, SUB_INFO, &x->me, (int)sizeof(x->me), NULL, x->all);
	if (x->err != MPI_SUCCESS)
		x->state = S_DONE;
	mpio_op_start(&x->op);
	return MPI_SUCCESS;
}
