/* lib/mpi/mpi_op.c: reduction operations: predefined ops on every basic type, user ops. */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

struct uop {
	MPI_User_function *fn;
	int commute;
	int refs; /* the user's handle and each pending nonblocking collective using it */
};

/* b[i] = EXPR for i < n, in blocks of 16 elements and then the rest: with in and io restrict
 * (a reduction never overlaps them), -O2's vectoriser, which neither checks for overlap at run
 * time nor adds a scalar tail loop, turns the blocks into vector code (~10x on MPI_SUM of
 * chars, what large accumulates and reductions spend their time in). */
#define LOOP(T, EXPR)                                                                              \
	do {                                                                                       \
		const T *a0 = in;                                                                  \
		T *b0 = io;                                                                        \
		size_t o = 0;                                                                      \
		for (; o + 16 <= n; o += 16) {                                                     \
			const T *a = a0 + o;                                                       \
			T *b = b0 + o;                                                             \
			for (int i = 0; i < 16; i++)                                               \
				b[i] = (EXPR);                                                     \
		}                                                                                  \
		{                                                                                  \
			const T *a = a0 + o;                                                       \
			T *b = b0 + o;                                                             \
			for (size_t i = 0; i < n - o; i++)                                         \
				b[i] = (EXPR);                                                     \
		}                                                                                  \
	} while (0)

#define OPS_ORDERED(T)                                                                             \
	case MPI_MAX:                                                                              \
		LOOP(T, a[i] > b[i] ? a[i] : b[i]);                                                \
		return 0;                                                                          \
	case MPI_MIN:                                                                              \
		LOOP(T, a[i] < b[i] ? a[i] : b[i]);                                                \
		return 0;

#define OPS_ARITH(T)                                                                               \
	case MPI_SUM:                                                                              \
		LOOP(T, a[i] + b[i]);                                                              \
		return 0;                                                                          \
	case MPI_PROD:                                                                             \
		LOOP(T, a[i] * b[i]);                                                              \
		return 0;

#define OPS_LOGIC(T)                                                                               \
	case MPI_LAND:                                                                             \
		LOOP(T, a[i] && b[i]);                                                             \
		return 0;                                                                          \
	case MPI_LOR:                                                                              \
		LOOP(T, a[i] || b[i]);                                                             \
		return 0;                                                                          \
	case MPI_LXOR:                                                                             \
		LOOP(T, !a[i] != !b[i]);                                                           \
		return 0;

#define OPS_BITS(T)                                                                                \
	case MPI_BAND:                                                                             \
		LOOP(T, a[i] & b[i]);                                                              \
		return 0;                                                                          \
	case MPI_BOR:                                                                              \
		LOOP(T, a[i] | b[i]);                                                              \
		return 0;                                                                          \
	case MPI_BXOR:                                                                             \
		LOOP(T, a[i] ^ b[i]);                                                              \
		return 0;

#define INT_FN(name, T)                                                                            \
	static int name(MPI_Op op, const void *restrict in, void *restrict io, size_t n)           \
	{                                                                                          \
		switch (op) {                                                                      \
			OPS_ORDERED(T)                                                             \
			OPS_ARITH(T)                                                               \
			OPS_LOGIC(T)                                                               \
			OPS_BITS(T)                                                                \
		default:                                                                           \
			return -1;                                                                 \
		}                                                                                  \
	}

/* Logical operations on floating types are an extension MPICH also offers. */
#define FLOAT_FN(name, T)                                                                          \
	static int name(MPI_Op op, const void *restrict in, void *restrict io, size_t n)           \
	{                                                                                          \
		switch (op) {                                                                      \
			OPS_ORDERED(T)                                                             \
			OPS_ARITH(T)                                                               \
			OPS_LOGIC(T)                                                               \
		default:                                                                           \
			return -1;                                                                 \
		}                                                                                  \
	}

#define COMPLEX_FN(name, T)                                                                        \
	static int name(MPI_Op op, const void *restrict in, void *restrict io, size_t n)           \
	{                                                                                          \
		switch (op) {                                                                      \
			OPS_ARITH(T)                                                               \
		default:                                                                           \
			return -1;                                                                 \
		}                                                                                  \
	}

/* Fields are copied in and out one by one: a buffer (a received fragment, a scratch area) need
 * not be aligned for T, and a scratch area ends right after the last element's k (no tail
 * padding). */
#define PAIR_FN(name, T)                                                                           \
	static int name(MPI_Op op, const void *in, void *io, size_t n)                             \
	{                                                                                          \
		if (op != MPI_MINLOC && op != MPI_MAXLOC)                                          \
			return -1;                                                                 \
		for (size_t i = 0; i < n; i++) {                                                   \
			const char *pa = (const char *)in + i * sizeof(T);                         \
			char *pb = (char *)io + i * sizeof(T);                                     \
			T a, b;                                                                    \
			memcpy(&a.v, pa + offsetof(T, v), sizeof(a.v));                            \
			memcpy(&a.k, pa + offsetof(T, k), sizeof(a.k));                            \
			memcpy(&b.v, pb + offsetof(T, v), sizeof(b.v));                            \
			memcpy(&b.k, pb + offsetof(T, k), sizeof(b.k));                            \
			int better = op == MPI_MINLOC ? a.v < b.v : a.v > b.v;                     \
			if (better)                                                                \
				memcpy(pb + offsetof(T, v), &a.v, sizeof(a.v));                    \
			if (better || (a.v == b.v && a.k < b.k))                                   \
				memcpy(pb + offsetof(T, k), &a.k, sizeof(a.k));                    \
		}                                                                                  \
		return 0;                                                                          \
	}

INT_FN(op_schar, signed char)
INT_FN(op_uchar, unsigned char)
INT_FN(op_char, char)
INT_FN(op_short, short)
INT_FN(op_ushort, unsigned short)
INT_FN(op_int, int)
INT_FN(op_uint, unsigned)
INT_FN(op_long, long)
INT_FN(op_ulong, unsigned long)
INT_FN(op_llong, long long)
INT_FN(op_ullong, unsigned long long)
INT_FN(op_i8, int8_t)
INT_FN(op_i16, int16_t)
INT_FN(op_i32, int32_t)
INT_FN(op_i64, int64_t)
INT_FN(op_u8, uint8_t)
INT_FN(op_u16, uint16_t)
INT_FN(op_u32, uint32_t)
INT_FN(op_u64, uint64_t)
FLOAT_FN(op_float, float)
FLOAT_FN(op_double, double)
FLOAT_FN(op_ldouble, long double)
COMPLEX_FN(op_cfloat, float complex)
COMPLEX_FN(op_cdouble, double complex)
COMPLEX_FN(op_cldouble, long double complex)

static int op_bool(MPI_Op op, const void *in, void *io, size_t n)
{
	switch (op) {
		OPS_LOGIC(bool)
	default:
		return -1;
	}
}

static int op_byte(MPI_Op op, const void *in, void *io, size_t n)
{
	switch (op) {
		OPS_BITS(unsigned char)
	default:
		return -1;
	}
}

struct p_fi {
	float v;
	int k;
};
struct p_di {
	double v;
	int k;
};
struct p_li {
	long v;
	int k;
};
struct p_si {
	short v;
	int k;
};
struct p_ii {
	int v;
	int k;
};
struct p_ldi {
	long double v;
	int k;
};
PAIR_FN(op_fi, struct p_fi)
PAIR_FN(op_di, struct p_di)
PAIR_FN(op_li, struct p_li)
PAIR_FN(op_si, struct p_si)
PAIR_FN(op_ii, struct p_ii)
PAIR_FN(op_ldi, struct p_ldi)
struct p_ff {
	float v, k;
};
struct p_dd {
	double v, k;
};
PAIR_FN(op_ff, struct p_ff)
PAIR_FN(op_dd, struct p_dd)

typedef int (*op_fn)(MPI_Op, const void *, void *, size_t);

static op_fn type_fn(int t)
{
	switch (t) {
	case MPI_CHAR:
		return op_char;
	case MPI_SIGNED_CHAR:
		return op_schar;
	case MPI_UNSIGNED_CHAR:
		return op_uchar;
	case MPI_BYTE:
		return op_byte;
	case MPI_SHORT:
		return op_short;
	case MPI_UNSIGNED_SHORT:
		return op_ushort;
	case MPI_INT:
	case MPI_WCHAR:
	case MPI_INTEGER:
	case MPI_LOGICAL:
		return op_int;
	case MPI_UNSIGNED:
		return op_uint;
	case MPI_LONG:
	case MPI_AINT:
		return op_long;
	case MPI_UNSIGNED_LONG:
		return op_ulong;
	case MPI_LONG_LONG_INT:
	case MPI_OFFSET:
	case MPI_COUNT:
		return op_llong;
	case MPI_UNSIGNED_LONG_LONG:
		return op_ullong;
	case MPI_INT8_T:
	case MPI_INTEGER1:
		return op_i8;
	case MPI_INT16_T:
	case MPI_INTEGER2:
		return op_i16;
	case MPI_INT32_T:
	case MPI_INTEGER4:
		return op_i32;
	case MPI_INT64_T:
	case MPI_INTEGER8:
		return op_i64;
	case MPI_UINT8_T:
		return op_u8;
	case MPI_UINT16_T:
		return op_u16;
	case MPI_UINT32_T:
		return op_u32;
	case MPI_UINT64_T:
		return op_u64;
	case MPI_FLOAT:
	case MPI_REAL:
	case MPI_REAL4:
		return op_float;
	case MPI_DOUBLE:
	case MPI_DOUBLE_PRECISION:
	case MPI_REAL8:
		return op_double;
	case MPI_CHARACTER:
		return op_char;
	case MPI_LONG_DOUBLE:
		return op_ldouble;
	case MPI_C_BOOL:
	case MPI_CXX_BOOL:
		return op_bool;
	case MPI_C_FLOAT_COMPLEX:
	case MPI_COMPLEX:
	case MPI_COMPLEX8:
	case MPI_CXX_FLOAT_COMPLEX:
		return op_cfloat;
	case MPI_C_DOUBLE_COMPLEX:
	case MPI_DOUBLE_COMPLEX:
	case MPI_COMPLEX16:
	case MPI_CXX_DOUBLE_COMPLEX:
		return op_cdouble;
	case MPI_C_LONG_DOUBLE_COMPLEX:
	case MPI_CXX_LONG_DOUBLE_COMPLEX:
		return op_cldouble;
	case MPI_FLOAT_INT:
		return op_fi;
	case MPI_DOUBLE_INT:
		return op_di;
	case MPI_LONG_INT:
		return op_li;
	case MPI_SHORT_INT:
		return op_si;
	case MPI_2INT:
	case MPI_2INTEGER:
		return op_ii;
	case MPI_2REAL:
		return op_ff;
	case MPI_2DOUBLE_PRECISION:
		return op_dd;
	case MPI_LONG_DOUBLE_INT:
		return op_ldi;
	default:
		return NULL;
	}
}

/* One run of n elements of basic type t. */
static int apply(MPI_Op op, int t, const void *in, void *io, size_t n)
{
	op_fn f;

	if (op == MPI_REPLACE) {
		memcpy(io, in, n * (size_t)mpii_dt(t)->extent);
		return 0;
	}
	if (op == MPI_NO_OP)
		return 0;
	f = type_fn(t);
	return f ? f(op, in, io, n) : -1;
}

int mpii_op_valid(MPI_Op op)
{
	return (op >= MPI_MAX && op <= MPI_NO_OP) || mpii_tab_get(&mpii.ops, op) != NULL;
}

int mpii_op_commutative(MPI_Op op)
{
	struct uop *u = mpii_tab_get(&mpii.ops, op);

	return u ? u->commute : 1;
}

int mpii_reduce_local(const void *in, void *inout, int count, struct mpii_dtype *d, MPI_Op op)
{
	struct uop *u = op >= 32 ? mpii_tab_get(&mpii.ops, op) : NULL;

	if (u) {
		MPI_Datatype h = d->handle;
		u->fn((void *)in, inout, &count, &h);
		return MPI_SUCCESS;
	}
	if (op < MPI_MAX || op > MPI_NO_OP)
		return MPI_ERR_OP;
	if (d->predefined)
		return apply(op, d->handle, in, inout, (size_t)count) < 0 ? MPI_ERR_OP
		                                                          : MPI_SUCCESS;
	for (int e = 0; e < count; e++) {
		for (int k = 0; k < d->nseg; k++) {
			MPI_Aint o = (MPI_Aint)e * d->extent + d->seg[k].off;
			size_t bs = mpii_basic_size(d->seg[k].basic);
			if (apply(op, d->seg[k].basic, (const char *)in + o, (char *)inout + o,
			          d->seg[k].len / bs) < 0)
				return MPI_ERR_OP;
		}
	}
	return MPI_SUCCESS;
}

void mpii_op_fini(void)
{
	for (int h = mpii.ops.first; h < mpii.ops.n; h++)
		free(mpii.ops.v[h]);
	free(mpii.ops.v);
	memset(&mpii.ops, 0, sizeof(mpii.ops));
}

MPII_ALIAS(Op_create)
int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
	struct uop *u = malloc(sizeof(*u));
	int h;

	mpii.ops.first = 32;
	if (!u || (h = mpii_tab_add(&mpii.ops, u)) < 0) {
		free(u);
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Op_create");
	}
	u->fn = fn;
	u->commute = commute;
	u->refs = 1;
	*op = h;
	return MPI_SUCCESS;
}

MPII_ALIAS(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
	struct uop *u = *op >= 32 ? mpii_tab_get(&mpii.ops, *op) : NULL;

	if (!u)
		return mpii_err(NULL, MPI_ERR_OP, "MPI_Op_free");
	mpii_op_release(*op);
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}

void mpii_op_hold(MPI_Op op)
{
	struct uop *u = op >= 32 ? mpii_tab_get(&mpii.ops, op) : NULL;

	if (u)
		u->refs++;
}

void mpii_op_release(MPI_Op op)
{
	struct uop *u = op >= 32 ? mpii_tab_get(&mpii.ops, op) : NULL;

	if (u && --u->refs == 0) {
		mpii_tab_del(&mpii.ops, op);
		free(u);
	}
}

MPII_ALIAS(Op_commutative)
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
	if (!mpii_op_valid(op))
		return mpii_err(NULL, MPI_ERR_OP, "MPI_Op_commutative");
	*commute = mpii_op_commutative(op);
	return MPI_SUCCESS;
}

MPII_ALIAS(Reduce_local)
int PMPI_Reduce_local(const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Reduce_local");
	return mpii_err(NULL, mpii_reduce_local(in, inout, count, d, op), "MPI_Reduce_local");
}
