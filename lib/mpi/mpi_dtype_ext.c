/* lib/mpi/mpi_dtype_ext.c: external32 packing (MPI_Pack_external family) and
 * MPI_Type_create_darray. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

int mpii_dt_recontent(MPI_Datatype h, int combiner, int ni, const int *ints, int nt,
                      const MPI_Datatype *types);

/* ---- external32: big-endian, fixed sizes (MPI standard, "External Data Representation") ---- */

enum { K_UINT, K_SINT, K_RAW, K_LDBL }; /* how one scalar converts */

struct part {
	int kind;
	int n, m; /* native bytes, external32 bytes */
};

/* Each basic type as up to two scalars (a value-index pair, a complex number); a type with
 * no entry (m == 0) has no external32 form. */
#define S(n, m)                                                                                    \
	{                                                                                          \
		K_SINT, n, m                                                                       \
	}
#define U(n, m)                                                                                    \
	{                                                                                          \
		K_UINT, n, m                                                                       \
	}
#define R(n)                                                                                       \
	{                                                                                          \
		K_RAW, n, n                                                                        \
	}
#define LD                                                                                         \
	{                                                                                          \
		K_LDBL, sizeof(long double), 16                                                    \
	}
static const struct part ext_map[64][2] = {
    [MPI_CHAR] = {S(1, 1)},
    [MPI_SIGNED_CHAR] = {S(1, 1)},
    [MPI_UNSIGNED_CHAR] = {U(1, 1)},
    [MPI_BYTE] = {U(1, 1)},
    [MPI_WCHAR] = {U(sizeof(int), 2)},
    [MPI_SHORT] = {S(2, 2)},
    [MPI_UNSIGNED_SHORT] = {U(2, 2)},
    [MPI_INT] = {S(4, 4)},
    [MPI_UNSIGNED] = {U(4, 4)},
    [MPI_LONG] = {S(sizeof(long), 4)},
    [MPI_UNSIGNED_LONG] = {U(sizeof(long), 4)},
    [MPI_LONG_LONG_INT] = {S(8, 8)},
    [MPI_UNSIGNED_LONG_LONG] = {U(8, 8)},
    [MPI_FLOAT] = {R(4)},
    [MPI_DOUBLE] = {R(8)},
    [MPI_LONG_DOUBLE] = {LD},
    [MPI_PACKED] = {U(1, 1)},
    [MPI_FLOAT_INT] = {R(4), S(4, 4)},
    [MPI_DOUBLE_INT] = {R(8), S(4, 4)},
    [MPI_LONG_INT] = {S(sizeof(long), 4), S(4, 4)},
    [MPI_SHORT_INT] = {S(2, 2), S(4, 4)},
    [MPI_2INT] = {S(4, 4), S(4, 4)},
    [MPI_LONG_DOUBLE_INT] = {LD, S(4, 4)},
    [MPI_INT8_T] = {S(1, 1)},
    [MPI_INT16_T] = {S(2, 2)},
    [MPI_INT32_T] = {S(4, 4)},
    [MPI_INT64_T] = {S(8, 8)},
    [MPI_UINT8_T] = {U(1, 1)},
    [MPI_UINT16_T] = {U(2, 2)},
    [MPI_UINT32_T] = {U(4, 4)},
    [MPI_UINT64_T] = {U(8, 8)},
    [MPI_C_BOOL] = {U(1, 1)},
    [MPI_AINT] = {S(8, 8)},
    [MPI_OFFSET] = {S(8, 8)},
    [MPI_COUNT] = {S(8, 8)},
    [MPI_C_FLOAT_COMPLEX] = {R(4), R(4)},
    [MPI_C_DOUBLE_COMPLEX] = {R(8), R(8)},
    [MPI_C_LONG_DOUBLE_COMPLEX] = {LD, LD},
    [MPI_INTEGER] = {S(4, 4)},
    [MPI_REAL] = {R(4)},
    [MPI_DOUBLE_PRECISION] = {R(8)},
    [MPI_COMPLEX] = {R(4), R(4)},
    [MPI_DOUBLE_COMPLEX] = {R(8), R(8)},
    [MPI_LOGICAL] = {S(4, 4)},
    [MPI_CHARACTER] = {U(1, 1)},
    [MPI_2INTEGER] = {S(4, 4), S(4, 4)},
    [MPI_2REAL] = {R(4), R(4)},
    [MPI_2DOUBLE_PRECISION] = {R(8), R(8)},
    [MPI_INTEGER1] = {S(1, 1)},
    [MPI_INTEGER2] = {S(2, 2)},
    [MPI_INTEGER4] = {S(4, 4)},
    [MPI_INTEGER8] = {S(8, 8)},
    [MPI_REAL4] = {R(4)},
    [MPI_REAL8] = {R(8)},
    [MPI_COMPLEX8] = {R(4), R(4)},
    [MPI_COMPLEX16] = {R(8), R(8)},
    [MPI_CXX_BOOL] = {U(1, 1)},
    [MPI_CXX_FLOAT_COMPLEX] = {R(4), R(4)},
    [MPI_CXX_DOUBLE_COMPLEX] = {R(8), R(8)},
    [MPI_CXX_LONG_DOUBLE_COMPLEX] = {LD, LD},
};
#undef S
#undef U
#undef R
#undef LD

/* The parts of basic type b into p; their number (0: no external32 form). */
static int ext_parts(int b, struct part p[2])
{
	if (b <= 0 || b >= 64 || !ext_map[b][0].m)
		return 0;
	p[0] = ext_map[b][0];
	p[1] = ext_map[b][1];
	return p[1].m ? 2 : 1;
}

/* Native (little- or big-endian host) integer of n bytes <-> m big-endian bytes. */
static void int_out(const unsigned char *src, int n, unsigned char *dst, int m)
{
	uint64_t v = 0;

	memcpy(&v, src, (size_t)n); /* the low n bytes of v on a little-endian host */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v >>= 8 * (8 - n);
#endif
	for (int i = m - 1; i >= 0; i--, v >>= 8)
		dst[i] = (unsigned char)v;
}

static void int_in(const unsigned char *src, int m, unsigned char *dst, int n, int sign)
{
	uint64_t v = 0;

	for (int i = 0; i < m; i++)
		v = v << 8 | src[i];
	if (sign && m < 8 && (v >> (8 * m - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * m);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v <<= 8 * (8 - n);
#endif
	memcpy(dst, &v, (size_t)n);
}

/* long double <-> IEEE binary128, big-endian. */
static void ldbl_out(const unsigned char *src, unsigned char *dst)
{
#if LDBL_MANT_DIG == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t mant, hi, lo;
	uint16_t se;

	memcpy(&mant, src, 8);
	memcpy(&se, src + 8, 2);
	mant &= ~(uint64_t)0 >> 1; /* x87 keeps the integer bit explicit; binary128 does not */
	hi = (uint64_t)se << 48 | mant >> 15;
	lo = mant << 49;
	for (int i = 7; i >= 0; i--, hi >>= 8, lo >>= 8) {
		dst[i] = (unsigned char)hi;
		dst[8 + i] = (unsigned char)lo;
	}
#elif LDBL_MANT_DIG == 113
	for (int i = 0; i < 16; i++)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		dst[i] = src[15 - i];
#else
		dst[i] = src[i];
#endif
#else
#error "external32 long double: unsupported long double format"
#endif
}

static void ldbl_in(const unsigned char *src, unsigned char *dst)
{
#if LDBL_MANT_DIG == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t hi = 0, lo = 0, mant;
	uint16_t se;

	for (int i = 0; i < 8; i++) {
		hi = hi << 8 | src[i];
		lo = lo << 8 | src[8 + i];
	}
	se = (uint16_t)(hi >> 48);
	mant = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
	if (se & 0x7fff)
		mant |= (uint64_t)1 << 63;
	memset(dst, 0, sizeof(long double));
	memcpy(dst, &mant, 8);
	memcpy(dst + 8, &se, 2);
#else
	ldbl_out(src, dst); /* binary128 both ways: a byte reversal, its own inverse */
#endif
}

static void raw_swap(const unsigned char *src, unsigned char *dst, int n)
{
	for (int i = 0; i < n; i++)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		dst[i] = src[n - 1 - i];
#else
		dst[i] = src[i];
#endif
}

/* external32 bytes of one element of d (0 if d holds a type external32 does not define: -1). */
static long long ext_size(const struct mpii_dtype *d)
{
	long long n = 0;

	for (int k = 0; k < d->nseg; k++) {
		struct part p[2];
		int np = ext_parts(d->seg[k].basic, p);
		size_t bs = mpii_basic_size(d->seg[k].basic);

		if (!np || !bs)
			return -1;
		n += (long long)(d->seg[k].len / bs) * (p[0].m + (np > 1 ? p[1].m : 0));
	}
	return n;
}

/* Convert count elements of d between buf and the external32 stream ext (out: to ext). */
static void ext_copy(const struct mpii_dtype *d, int count, char *buf, unsigned char *ext, int out)
{
	for (int e = 0; e < count; e++) {
		for (int k = 0; k < d->nseg; k++) {
			const struct mpii_seg *s = &d->seg[k];
			struct part p[2];
			int np = ext_parts(s->basic, p);
			size_t bs = mpii_basic_size(s->basic);
			unsigned char *nat =
			    (unsigned char *)mpii_at(buf, (MPI_Aint)e * d->extent + s->off);

			for (size_t i = 0; i < s->len / bs; i++) {
				for (int j = 0; j < np; j++) {
					const struct part *q = &p[j];
					if (q->kind == K_LDBL)
						out ? ldbl_out(nat, ext) : ldbl_in(ext, nat);
					else if (q->kind == K_RAW)
						out ? raw_swap(nat, ext, q->n)
						    : raw_swap(ext, nat, q->n);
					else if (out)
						int_out(nat, q->n, ext, q->m);
					else
						int_in(ext, q->m, nat, q->n, q->kind == K_SINT);
					nat += q->n;
					ext += q->m;
				}
			}
		}
	}
}

long long mpii_ext32_size(const struct mpii_dtype *d)
{
	return ext_size(d);
}

void mpii_ext32_copy(const struct mpii_dtype *d, int count, void *buf, void *ext, int to_ext)
{
	ext_copy(d, count, buf, ext, to_ext);
}

static int check_rep(const char *datarep)
{
	return datarep && !strcmp(datarep, "external32");
}

MPII_ALIAS(Pack_external_size)
int PMPI_Pack_external_size(const char datarep[], int count, MPI_Datatype type, MPI_Aint *size)
{
	struct mpii_dtype *d = mpii_dt(type);
	long long n = d ? ext_size(d) : -1;

	if (!check_rep(datarep))
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Pack_external_size");
	if (n < 0)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Pack_external_size");
	if (count < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, "MPI_Pack_external_size");
	*size = (MPI_Aint)(n * count);
	return MPI_SUCCESS;
}

/* Common checks of Pack_external/Unpack_external; *bytes = the external32 size. MPI code. */
static int ext_check(const char *rep, int count, MPI_Datatype type, MPI_Aint room, MPI_Aint pos,
                     struct mpii_dtype **dp, MPI_Aint *bytes)
{
	long long n;

	if (!mpii.initialized || mpii.finalized)
		return MPI_ERR_OTHER;
	if (!check_rep(rep))
		return MPI_ERR_ARG;
	*dp = mpii_dt(type);
	if (!*dp || (n = ext_size(*dp)) < 0)
		return MPI_ERR_TYPE;
	if (count < 0)
		return MPI_ERR_COUNT;
	*bytes = (MPI_Aint)(n * count);
	if (pos < 0 || pos + *bytes > room)
		return MPI_ERR_TRUNCATE;
	return MPI_SUCCESS;
}

MPII_ALIAS(Pack_external)
int PMPI_Pack_external(const char datarep[], const void *in, int count, MPI_Datatype type,
                       void *out, MPI_Aint outsize, MPI_Aint *pos)
{
	struct mpii_dtype *d;
	MPI_Aint n;
	int rc = ext_check(datarep, count, type, outsize, *pos, &d, &n);

	if (rc != MPI_SUCCESS)
		return mpii_err(NULL, rc, "MPI_Pack_external");
	ext_copy(d, count, (char *)in, (unsigned char *)out + *pos, 1);
	*pos += n;
	return MPI_SUCCESS;
}

MPII_ALIAS(Unpack_external)
int PMPI_Unpack_external(const char datarep[], const void *in, MPI_Aint insize, MPI_Aint *pos,
                         void *out, int count, MPI_Datatype type)
{
	struct mpii_dtype *d;
	MPI_Aint n;
	int rc = ext_check(datarep, count, type, insize, *pos, &d, &n);

	if (rc != MPI_SUCCESS)
		return mpii_err(NULL, rc, "MPI_Unpack_external");
	ext_copy(d, count, out, (unsigned char *)in + *pos, 0);
	*pos += n;
	return MPI_SUCCESS;
}

/* ---- MPI_Type_create_darray ---- */

/* Index ranges [start, start+len) of one dimension that the process at coordinate c owns.
 * *n ranges in increasing order into st/ln (room for gsize). MPI code. */
static int dim_ranges(int distrib, int darg, int gsize, int psize, int c, int *st, int *ln, int *n)
{
	*n = 0;
	if (distrib == MPI_DISTRIBUTE_NONE) {
		st[0] = 0;
		ln[0] = gsize;
		*n = 1;
		return MPI_SUCCESS;
	}
	if (distrib == MPI_DISTRIBUTE_BLOCK) {
		if (darg == MPI_DISTRIBUTE_DFLT_DARG)
			darg = (gsize + psize - 1) / psize;
		if (darg <= 0 || (long long)darg * psize < gsize)
			return MPI_ERR_ARG;
		if ((long long)c * darg < gsize) {
			st[0] = c * darg;
			ln[0] = gsize - st[0] < darg ? gsize - st[0] : darg;
			*n = 1;
		}
		return MPI_SUCCESS;
	}
	if (distrib != MPI_DISTRIBUTE_CYCLIC)
		return MPI_ERR_ARG;
	if (darg == MPI_DISTRIBUTE_DFLT_DARG)
		darg = 1;
	if (darg <= 0)
		return MPI_ERR_ARG;
	for (long long b = c; b * darg < gsize; b += psize) {
		st[*n] = (int)(b * darg);
		ln[*n] = gsize - st[*n] < darg ? gsize - st[*n] : darg;
		(*n)++;
	}
	return MPI_SUCCESS;
}

/* One dimension around t: the owned ranges of elements of extent stride, then resized to the
 * whole dimension. Frees t unless it is keep. MPI code. */
static int dim_type(int distrib, int darg, int gsize, int psize, int c, MPI_Aint stride,
                    MPI_Datatype keep, MPI_Datatype *t)
{
	int *st = malloc(sizeof(int) * (size_t)gsize), *ln = malloc(sizeof(int) * (size_t)gsize);
	MPI_Aint *disp = malloc(sizeof(MPI_Aint) * (size_t)gsize);
	MPI_Datatype h = MPI_DATATYPE_NULL, r;
	int n = 0, rc = st && ln && disp ? MPI_SUCCESS : MPI_ERR_NO_MEM;

	if (rc == MPI_SUCCESS)
		rc = dim_ranges(distrib, darg, gsize, psize, c, st, ln, &n);
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
		disp[i] = (MPI_Aint)st[i] * stride;
	if (rc == MPI_SUCCESS)
		rc = PMPI_Type_create_hindexed(n, ln, disp, *t, &h);
	if (rc == MPI_SUCCESS) {
		rc = PMPI_Type_create_resized(h, 0, stride * gsize, &r);
		PMPI_Type_free(&h);
	}
	if (*t != keep)
		PMPI_Type_free(t);
	if (rc == MPI_SUCCESS)
		*t = r;
	free(st);
	free(ln);
	free(disp);
	return rc;
}

static int darray_args(int size, int rank, int nd, const int *gsizes, const int *distribs,
                       const int *dargs, const int *psizes, int order)
{
	long long procs = 1;

	if (size <= 0 || rank < 0 || rank >= size || nd <= 0)
		return MPI_ERR_ARG;
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return MPI_ERR_ARG;
	for (int i = 0; i < nd; i++) {
		if (gsizes[i] <= 0 || psizes[i] <= 0)
			return MPI_ERR_ARG;
		if (distribs[i] == MPI_DISTRIBUTE_NONE && psizes[i] != 1)
			return MPI_ERR_ARG;
		if (distribs[i] != MPI_DISTRIBUTE_NONE && dargs[i] != MPI_DISTRIBUTE_DFLT_DARG &&
		    dargs[i] <= 0)
			return MPI_ERR_ARG;
		procs *= psizes[i];
	}
	return procs == size ? MPI_SUCCESS : MPI_ERR_ARG;
}

MPII_ALIAS(Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                            const int dargs[], const int psizes[], int order, MPI_Datatype old,
                            MPI_Datatype *out)
{
	static const char fn[] = "MPI_Type_create_darray";
	struct mpii_dtype *o = mpii_dt(old);
	MPI_Datatype t = old;
	MPI_Aint stride;
	int rc, rem = rank, *coord, *ints;

	if (!o)
		return mpii_err(NULL, MPI_ERR_TYPE, fn);
	rc = darray_args(size, rank, ndims, gsizes, distribs, dargs, psizes, order);
	if (rc != MPI_SUCCESS)
		return mpii_err(NULL, rc, fn);
	coord = malloc(sizeof(int) * (size_t)ndims);
	ints = malloc(sizeof(int) * (size_t)(4 * ndims + 4));
	if (!coord || !ints) {
		free(coord);
		free(ints);
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn);
	}
	for (int i = ndims - 1; i >= 0; i--) { /* the process grid is row-major in either order */
		coord[i] = rem % psizes[i];
		rem /= psizes[i];
	}
	stride = o->extent;
	for (int k = 0; k < ndims && rc == MPI_SUCCESS; k++) {
		int i = order == MPI_ORDER_C ? ndims - 1 - k : k; /* fastest-varying first */
		rc = dim_type(distribs[i], dargs[i], gsizes[i], psizes[i], coord[i], stride, old,
		              &t);
		stride *= gsizes[i];
	}
	if (rc == MPI_SUCCESS) {
		*out = t;
		ints[0] = size;
		ints[1] = rank;
		ints[2] = ndims;
		memcpy(ints + 3, gsizes, sizeof(int) * (size_t)ndims);
		memcpy(ints + 3 + ndims, distribs, sizeof(int) * (size_t)ndims);
		memcpy(ints + 3 + 2 * ndims, dargs, sizeof(int) * (size_t)ndims);
		memcpy(ints + 3 + 3 * ndims, psizes, sizeof(int) * (size_t)ndims);
		ints[3 + 4 * ndims] = order;
		rc = mpii_dt_recontent(t, MPI_COMBINER_DARRAY, 4 * ndims + 4, ints, 1, &old);
	}
	free(coord);
	free(ints);
	return rc == MPI_SUCCESS ? rc : mpii_err(NULL, rc, fn);
}
