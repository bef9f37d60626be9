/* lib/mpi/mpi_dtype.c: datatypes: predefined table, flattened typemaps, constructors, pack. */
#include <complex.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define NPREDEF MPII_NPREDEF

struct pair_fi {
	float a;
	int b;
};
struct pair_di {
	double a;
	int b;
};
struct pair_li {
	long a;
	int b;
};
struct pair_si {
	short a;
	int b;
};
struct pair_ii {
	int a;
	int b;
};
struct pair_ldi {
	long double a;
	int b;
};

/* size: bytes an element occupies in memory (a pair type: its C struct); the data bytes of a
 * pair are its value and its int (struct padding is not sent). */
static const struct {
	size_t size, align;
	const char *name;
} basic[NPREDEF] = {
    [MPI_CHAR] = {1, 1, "MPI_CHAR"},
    [MPI_SIGNED_CHAR] = {1, 1, "MPI_SIGNED_CHAR"},
    [MPI_UNSIGNED_CHAR] = {1, 1, "MPI_UNSIGNED_CHAR"},
    [MPI_BYTE] = {1, 1, "MPI_BYTE"},
    [MPI_WCHAR] = {sizeof(int), sizeof(int), "MPI_WCHAR"},
    [MPI_SHORT] = {sizeof(short), sizeof(short), "MPI_SHORT"},
    [MPI_UNSIGNED_SHORT] = {sizeof(short), sizeof(short), "MPI_UNSIGNED_SHORT"},
    [MPI_INT] = {sizeof(int), sizeof(int), "MPI_INT"},
    [MPI_UNSIGNED] = {sizeof(int), sizeof(int), "MPI_UNSIGNED"},
    [MPI_LONG] = {sizeof(long), sizeof(long), "MPI_LONG"},
    [MPI_UNSIGNED_LONG] = {sizeof(long), sizeof(long), "MPI_UNSIGNED_LONG"},
    [MPI_LONG_LONG_INT] = {sizeof(long long), sizeof(long long), "MPI_LONG_LONG_INT"},
    [MPI_UNSIGNED_LONG_LONG] = {sizeof(long long), sizeof(long long), "MPI_UNSIGNED_LONG_LONG"},
    [MPI_FLOAT] = {sizeof(float), sizeof(float), "MPI_FLOAT"},
    [MPI_DOUBLE] = {sizeof(double), sizeof(double), "MPI_DOUBLE"},
    [MPI_LONG_DOUBLE] = {sizeof(long double), _Alignof(long double), "MPI_LONG_DOUBLE"},
    [MPI_PACKED] = {1, 1, "MPI_PACKED"},
    [MPI_LB] = {0, 1, "MPI_LB"},
    [MPI_UB] = {0, 1, "MPI_UB"},
    [MPI_FLOAT_INT] = {sizeof(struct pair_fi), _Alignof(struct pair_fi), "MPI_FLOAT_INT"},
    [MPI_DOUBLE_INT] = {sizeof(struct pair_di), _Alignof(struct pair_di), "MPI_DOUBLE_INT"},
    [MPI_LONG_INT] = {sizeof(struct pair_li), _Alignof(struct pair_li), "MPI_LONG_INT"},
    [MPI_SHORT_INT] = {sizeof(struct pair_si), _Alignof(struct pair_si), "MPI_SHORT_INT"},
    [MPI_2INT] = {sizeof(struct pair_ii), _Alignof(struct pair_ii), "MPI_2INT"},
    [MPI_LONG_DOUBLE_INT] = {sizeof(struct pair_ldi), _Alignof(struct pair_ldi),
                             "MPI_LONG_DOUBLE_INT"},
    [MPI_INT8_T] = {1, 1, "MPI_INT8_T"},
    [MPI_INT16_T] = {2, 2, "MPI_INT16_T"},
    [MPI_INT32_T] = {4, 4, "MPI_INT32_T"},
    [MPI_INT64_T] = {8, 8, "MPI_INT64_T"},
    [MPI_UINT8_T] = {1, 1, "MPI_UINT8_T"},
    [MPI_UINT16_T] = {2, 2, "MPI_UINT16_T"},
    [MPI_UINT32_T] = {4, 4, "MPI_UINT32_T"},
    [MPI_UINT64_T] = {8, 8, "MPI_UINT64_T"},
    [MPI_C_BOOL] = {sizeof(bool), sizeof(bool), "MPI_C_BOOL"},
    [MPI_AINT] = {sizeof(MPI_Aint), sizeof(MPI_Aint), "MPI_AINT"},
    [MPI_OFFSET] = {sizeof(MPI_Offset), sizeof(MPI_Offset), "MPI_OFFSET"},
    [MPI_COUNT] = {sizeof(MPI_Count), sizeof(MPI_Count), "MPI_COUNT"},
    [MPI_C_FLOAT_COMPLEX] = {sizeof(float complex), _Alignof(float complex), "MPI_C_COMPLEX"},
    [MPI_C_DOUBLE_COMPLEX] = {sizeof(double complex), _Alignof(double complex),
                              "MPI_C_DOUBLE_COMPLEX"},
    [MPI_C_LONG_DOUBLE_COMPLEX] = {sizeof(long double complex), _Alignof(long double complex),
                                   "MPI_C_LONG_DOUBLE_COMPLEX"},
    [MPI_INTEGER] = {sizeof(int), sizeof(int), "MPI_INTEGER"},
    [MPI_REAL] = {sizeof(float), sizeof(float), "MPI_REAL"},
    [MPI_DOUBLE_PRECISION] = {sizeof(double), sizeof(double), "MPI_DOUBLE_PRECISION"},
    [MPI_COMPLEX] = {sizeof(float complex), _Alignof(float complex), "MPI_COMPLEX"},
    [MPI_DOUBLE_COMPLEX] = {sizeof(double complex), _Alignof(double complex), "MPI_DOUBLE_COMPLEX"},
    [MPI_LOGICAL] = {sizeof(int), sizeof(int), "MPI_LOGICAL"},
    [MPI_CHARACTER] = {1, 1, "MPI_CHARACTER"},
    [MPI_2INTEGER] = {2 * sizeof(int), sizeof(int), "MPI_2INTEGER"},
    [MPI_2REAL] = {2 * sizeof(float), sizeof(float), "MPI_2REAL"},
    [MPI_2DOUBLE_PRECISION] = {2 * sizeof(double), sizeof(double), "MPI_2DOUBLE_PRECISION"},
    [MPI_INTEGER1] = {1, 1, "MPI_INTEGER1"},
    [MPI_INTEGER2] = {2, 2, "MPI_INTEGER2"},
    [MPI_INTEGER4] = {4, 4, "MPI_INTEGER4"},
    [MPI_INTEGER8] = {8, 8, "MPI_INTEGER8"},
    [MPI_REAL4] = {4, 4, "MPI_REAL4"},
    [MPI_REAL8] = {8, 8, "MPI_REAL8"},
    [MPI_COMPLEX8] = {sizeof(float complex), _Alignof(float complex), "MPI_COMPLEX8"},
    [MPI_COMPLEX16] = {sizeof(double complex), _Alignof(double complex), "MPI_COMPLEX16"},
    [MPI_CXX_BOOL] = {sizeof(bool), sizeof(bool), "MPI_CXX_BOOL"},
    [MPI_CXX_FLOAT_COMPLEX] = {sizeof(float complex), _Alignof(float complex),
                               "MPI_CXX_FLOAT_COMPLEX"},
    [MPI_CXX_DOUBLE_COMPLEX] = {sizeof(double complex), _Alignof(double complex),
                                "MPI_CXX_DOUBLE_COMPLEX"},
    [MPI_CXX_LONG_DOUBLE_COMPLEX] = {sizeof(long double complex), _Alignof(long double complex),
                                     "MPI_CXX_LONG_DOUBLE_COMPLEX"},
};

/* Pair types: size of the value and offset of the int inside the C struct. */
static const struct {
	size_t vsize, ioff;
} pairs[NPREDEF] = {
    [MPI_FLOAT_INT] = {sizeof(float), offsetof(struct pair_fi, b)},
    [MPI_DOUBLE_INT] = {sizeof(double), offsetof(struct pair_di, b)},
    [MPI_LONG_INT] = {sizeof(long), offsetof(struct pair_li, b)},
    [MPI_SHORT_INT] = {sizeof(short), offsetof(struct pair_si, b)},
    [MPI_2INT] = {sizeof(int), offsetof(struct pair_ii, b)},
    [MPI_LONG_DOUBLE_INT] = {sizeof(long double), offsetof(struct pair_ldi, b)},
};

struct mpii_dtype mpii_predef[NPREDEF];
static struct mpii_seg predef_seg[NPREDEF][2];
static size_t dt_align[NPREDEF];

size_t mpii_basic_size(int b)
{
	if (b <= 0 || b >= NPREDEF)
		return 0;
	return pairs[b].vsize ? pairs[b].vsize + sizeof(int) : basic[b].size;
}

int mpii_dt_init(void)
{
	mpii.dtypes.first = 64;
	for (int i = 1; i < NPREDEF; i++) {
		struct mpii_dtype *d = &mpii_predef[i];

		if (!basic[i].name)
			continue;
		memset(d, 0, sizeof(*d));
		d->handle = i;
		d->refs = 1;
		d->committed = d->predefined = 1;
		d->size = mpii_basic_size(i);
		d->extent = d->ub = (MPI_Aint)basic[i].size;
		d->true_ub = (MPI_Aint)(pairs[i].vsize ? pairs[i].ioff + sizeof(int) : d->size);
		d->contig = d->size == basic[i].size;
		d->combiner = MPI_COMBINER_NAMED;
		d->seg = predef_seg[i];
		d->nseg = d->size ? 1 : 0;
		predef_seg[i][0] = (struct mpii_seg){0, d->size, i};
		if (pairs[i].vsize && pairs[i].ioff != pairs[i].vsize) {
			/* value and int apart (MPI_SHORT_INT): two runs of their own types */
			predef_seg[i][0] = (struct mpii_seg){0, pairs[i].vsize, MPI_SHORT};
			predef_seg[i][1] =
			    (struct mpii_seg){(MPI_Aint)pairs[i].ioff, sizeof(int), MPI_INT};
			d->nseg = 2;
		}
		dt_align[i] = basic[i].align;
		strcpy(d->name, basic[i].name);
	}
	return 0;
}

static void dt_free(struct mpii_dtype *d)
{
	mpii_attr_clear_type(d);
	for (int i = 0; d->tptr && i < d->nt; i++)
		mpii_dt_release(d->tptr[i]);
	free(d->tptr);
	free(d->seg);
	free(d->ints);
	free(d->aints);
	free(d->types);
	free(d);
}

void mpii_dt_release(struct mpii_dtype *d)
{
	if (d && !d->predefined && --d->refs == 0)
		dt_free(d);
}

void mpii_dt_fini(void)
{
	for (int h = mpii.dtypes.first; h < mpii.dtypes.n; h++) {
		struct mpii_dtype *d = mpii.dtypes.v[h];
		if (d) {
			mpii.dtypes.v[h] = NULL;
			d->refs = 1;
			free(d->tptr); /* the referenced types are being freed by this loop too */
			d->tptr = NULL;
			dt_free(d);
		}
	}
	free(mpii.dtypes.v);
	memset(&mpii.dtypes, 0, sizeof(mpii.dtypes));
}

/* ---- pack / unpack ---- */

static void copy_runs(const struct mpii_dtype *d, char *buf, size_t pos, char *packed, size_t n,
                      int to_packed)
{
	size_t e = pos / d->size, r = pos % d->size;
	int k = 0;

	while (r >= d->seg[k].len) {
		r -= d->seg[k].len;
		k++;
	}
	while (n) {
		char *p = mpii_at(buf, (MPI_Aint)e * d->extent + d->seg[k].off + (MPI_Aint)r);
		size_t m = d->seg[k].len - r < n ? d->seg[k].len - r : n;

		if (to_packed)
			memcpy(packed, p, m);
		else
			memcpy(p, packed, m);
		packed += m;
		n -= m;
		r = 0;
		if (++k == d->nseg) {
			k = 0;
			e++;
		}
	}
}

void mpii_pack(const struct mpii_dtype *d, int count, const void *buf, size_t pos, void *dst,
               size_t n)
{
	(void)count;
	if (!n)
		return;
	if (d->contig)
		memcpy(dst, mpii_at(buf, d->true_lb + (MPI_Aint)pos), n);
	else
		copy_runs(d, (char *)buf, pos, dst, n, 1);
}

void mpii_unpack(const struct mpii_dtype *d, int count, void *buf, size_t pos, const void *src,
                 size_t n)
{
	(void)count;
	if (!n)
		return;
	if (d->contig)
		memcpy(mpii_at(buf, d->true_lb + (MPI_Aint)pos), src, n);
	else
		copy_runs(d, buf, pos, (char *)src, n, 0);
}

/* Basic elements in one element of predefined b (2 for the value-index pairs); *first gets the
 * bytes of the first part of a pair. */
static int parts(int b, size_t *first)
{
	switch (b) {
	case MPI_2INTEGER:
	case MPI_2REAL:
	case MPI_2DOUBLE_PRECISION:
		*first = basic[b].size / 2;
		return 2;
	default:
		*first = pairs[b].vsize;
		return pairs[b].vsize ? 2 : 1;
	}
}

long long mpii_elements(const struct mpii_dtype *d, size_t bytes)
{
	long long n = 0;
	size_t full, r;

	if (!d->size)
		return 0;
	full = bytes / d->size;
	r = bytes % d->size;
	for (int k = 0; k < d->nseg; k++) {
		size_t bs = mpii_basic_size(d->seg[k].basic), len = d->seg[k].len, first;
		int per = parts(d->seg[k].basic, &first);
		if (!bs)
			continue;
		n += (long long)(full * (len / bs)) * per;
		if (r) {
			size_t m = r < len ? r : len;
			n += (long long)(m / bs) * per;
			if (m % bs && (per == 1 || m % bs != first))
				return -1;
			n += m % bs ? 1 : 0;
			r -= m;
		}
	}
	return n;
}

/* ---- constructors ---- */

struct builder {
	struct mpii_seg *seg;
	int nseg, cap;
	size_t size, align;
	MPI_Aint lb, ub;
	int any, explicit_lb, explicit_ub;
	MPI_Aint xlb, xub;
};

static int add_run(struct builder *b, MPI_Aint off, size_t len, int bt)
{
	struct mpii_seg *last = b->nseg ? &b->seg[b->nseg - 1] : NULL;

	if (!len)
		return 0;
	if (last && last->basic == bt && last->off + (MPI_Aint)last->len == off) {
		last->len += len;
		return 0;
	}
	if (b->nseg == b->cap) {
		int cap = b->cap ? b->cap * 2 : 8;
		struct mpii_seg *s = realloc(b->seg, sizeof(*s) * (size_t)cap);
		if (!s)
			return -1;
		b->seg = s;
		b->cap = cap;
	}
	b->seg[b->nseg++] = (struct mpii_seg){off, len, bt};
	return 0;
}

/* Append blen copies of old at byte displacement disp. */
static int add_block(struct builder *b, const struct mpii_dtype *o, int blen, MPI_Aint disp)
{
	MPI_Aint lo, hi;

	if (o->handle == MPI_LB || o->handle == MPI_UB) {
		if (o->handle == MPI_LB)
			b->xlb = b->explicit_lb ? (disp < b->xlb ? disp : b->xlb) : disp;
		else
			b->xub = b->explicit_ub ? (disp > b->xub ? disp : b->xub) : disp;
		b->explicit_lb |= o->handle == MPI_LB;
		b->explicit_ub |= o->handle == MPI_UB;
		return 0;
	}
	if (blen <= 0)
		return 0;
	for (int i = 0; i < blen; i++) {
		MPI_Aint base = disp + (MPI_Aint)i * o->extent;
		for (int k = 0; k < o->nseg; k++)
			if (add_run(b, base + o->seg[k].off, o->seg[k].len, o->seg[k].basic) < 0)
				return -1;
	}
	lo = disp + o->lb + (o->extent < 0 ? (MPI_Aint)(blen - 1) * o->extent : 0);
	hi = disp + o->ub + (o->extent > 0 ? (MPI_Aint)(blen - 1) * o->extent : 0);
	if (!b->any || lo < b->lb)
		b->lb = lo;
	if (!b->any || hi > b->ub)
		b->ub = hi;
	/* an old type with explicit bounds brings its markers along, one pair per copy */
	if (o->explicit_lb) {
		b->xlb = b->explicit_lb && b->xlb < lo ? b->xlb : lo;
		b->explicit_lb = 1;
	}
	if (o->explicit_ub) {
		b->xub = b->explicit_ub && b->xub > hi ? b->xub : hi;
		b->explicit_ub = 1;
	}
	b->any = 1;
	b->size += o->size * (size_t)blen;
	return 0;
}

static size_t type_align(const struct mpii_dtype *o)
{
	size_t a = 1;

	for (int k = 0; k < o->nseg; k++)
		if (dt_align[o->seg[k].basic] > a)
			a = dt_align[o->seg[k].basic];
	return a;
}

/* Finish: extents, contiguity, handle. pad: round the extent to the alignment (struct). */
static struct mpii_dtype *finish(struct builder *b, int pad)
{
	struct mpii_dtype *d = calloc(1, sizeof(*d));
	int h;

	if (!d || (h = mpii_tab_add(&mpii.dtypes, d)) < 0) {
		free(d);
		free(b->seg);
		return NULL;
	}
	d->handle = h;
	d->refs = 1;
	d->urefs = 1;
	d->size = b->size;
	d->seg = b->seg;
	d->nseg = b->nseg;
	d->lb = b->explicit_lb ? b->xlb : b->lb;
	d->ub = b->explicit_ub ? b->xub : b->ub;
	d->explicit_lb = b->explicit_lb;
	d->explicit_ub = b->explicit_ub;
	if (pad && !b->explicit_ub && b->align > 1 && d->ub > d->lb) {
		MPI_Aint ext = d->ub - d->lb, a = (MPI_Aint)b->align;
		d->ub = d->lb + (ext + a - 1) / a * a;
	}
	d->extent = d->ub - d->lb;
	for (int k = 0; k < d->nseg; k++) {
		MPI_Aint lo = d->seg[k].off, hi = lo + (MPI_Aint)d->seg[k].len;
		if (!k || lo < d->true_lb)
			d->true_lb = lo;
		if (!k || hi > d->true_ub)
			d->true_ub = hi;
	}
	d->contig = (MPI_Aint)d->size == d->extent;
	for (int k = 1; k < d->nseg && d->contig; k++)
		d->contig = d->seg[k].off == d->seg[k - 1].off + (MPI_Aint)d->seg[k - 1].len;
	return d;
}

/* The general constructor: n blocks of blens[i] copies of types[i] at byte disps[i]. */
static int build(int n, const int *blens, const MPI_Aint *disps, const MPI_Datatype *types, int pad,
                 struct mpii_dtype **out)
{
	struct builder b = {0};

	for (int i = 0; i < n; i++) {
		struct mpii_dtype *o = mpii_dt(types[i]);
		size_t a;

		if (!o)
			return MPI_ERR_TYPE;
		if (blens[i] < 0)
			return MPI_ERR_ARG;
		if (add_block(&b, o, blens[i], disps[i]) < 0) {
			free(b.seg);
			return MPI_ERR_NO_MEM;
		}
		a = type_align(o);
		if (a > b.align)
			b.align = a;
	}
	*out = finish(&b, pad);
	return *out ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Record the constructor's arguments for MPI_Type_get_contents; holds the old types. */
static int set_contents(struct mpii_dtype *d, int combiner, int ni, const int *ints, int na,
                        const MPI_Aint *aints, int nt, const MPI_Datatype *types)
{
	d->combiner = combiner;
	d->ints = malloc(sizeof(int) * (size_t)(ni + 1));
	d->aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
	d->types = malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
	d->tptr = calloc((size_t)nt + 1, sizeof(*d->tptr));
	if (!d->ints || !d->aints || !d->types || !d->tptr)
		return MPI_ERR_NO_MEM;
	if (ni)
		memcpy(d->ints, ints, sizeof(int) * (size_t)ni);
	if (na)
		memcpy(d->aints, aints, sizeof(MPI_Aint) * (size_t)na);
	if (nt)
		memcpy(d->types, types, sizeof(MPI_Datatype) * (size_t)nt);
	d->ni = ni;
	d->na = na;
	d->nt = nt;
	for (int i = 0; i < nt; i++) {
		struct mpii_dtype *o = mpii_dt(types[i]);
		if (o && !o->predefined) {
			o->refs++;
			d->tptr[i] = o;
		}
	}
	return MPI_SUCCESS;
}

/* Build + contents + handle out; on failure frees. Used by every public constructor. */
int mpii_dt_make(int n, const int *blens, const MPI_Aint *disps, const MPI_Datatype *types, int pad,
                 int combiner, int ni, const int *ints, int na, const MPI_Aint *aints, int nt,
                 const MPI_Datatype *ctypes, MPI_Datatype *out);
int mpii_dt_make(int n, const int *blens, const MPI_Aint *disps, const MPI_Datatype *types, int pad,
                 int combiner, int ni, const int *ints, int na, const MPI_Aint *aints, int nt,
                 const MPI_Datatype *ctypes, MPI_Datatype *out)
{
	struct mpii_dtype *d;
	int rc = build(n, blens, disps, types, pad, &d);

	if (rc != MPI_SUCCESS)
		return rc;
	rc = set_contents(d, combiner, ni, ints, na, aints, nt, ctypes);
	if (rc != MPI_SUCCESS) {
		mpii_tab_del(&mpii.dtypes, d->handle);
		dt_free(d);
		return rc;
	}
	*out = d->handle;
	return MPI_SUCCESS;
}

/* Resized copy of old with explicit lb and extent. */
int mpii_dt_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out);
int mpii_dt_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out)
{
	struct mpii_dtype *d, *o = mpii_dt(old);
	int one = 1, rc;
	MPI_Aint zero = 0, a[2] = {lb, extent};

	if (!o)
		return MPI_ERR_TYPE;
	rc = mpii_dt_make(1, &one, &zero, &old, 0, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old,
	                  out);
	if (rc != MPI_SUCCESS)
		return rc;
	d = mpii_dt(*out);
	d->lb = lb;
	d->ub = lb + extent;
	d->extent = extent;
	d->explicit_lb = d->explicit_ub = 1;
	d->contig = (MPI_Aint)d->size == d->extent;
	for (int k = 1; k < d->nseg && d->contig; k++)
		d->contig = d->seg[k].off == d->seg[k - 1].off + (MPI_Aint)d->seg[k - 1].len;
	return MPI_SUCCESS;
}

/* Replace the recorded constructor of h (a type built from simpler ones, e.g. a subarray)
 * with the one the user called. MPI code. */
int mpii_dt_recontent(MPI_Datatype h, int combiner, int ni, const int *ints, int nt,
                      const MPI_Datatype *types);
int mpii_dt_recontent(MPI_Datatype h, int combiner, int ni, const int *ints, int nt,
                      const MPI_Datatype *types)
{
	struct mpii_dtype *d = mpii_dt(h);

	for (int i = 0; d->tptr && i < d->nt; i++)
		mpii_dt_release(d->tptr[i]);
	free(d->tptr);
	free(d->ints);
	free(d->aints);
	free(d->types);
	d->tptr = NULL;
	d->ints = NULL;
	d->aints = NULL;
	d->types = NULL;
	d->ni = d->na = d->nt = 0;
	return set_contents(d, combiner, ni, ints, 0, NULL, nt, types);
}
