/* lib/mpi/mpi_dtype_api.c: MPI_Type_* constructors and queries, MPI_Pack/Unpack, addresses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

int mpii_dt_make(int n, const int *blens, const MPI_Aint *disps, const MPI_Datatype *types, int pad,
                 int combiner, int ni, const int *ints, int na, const MPI_Aint *aints, int nt,
                 const MPI_Datatype *ctypes, MPI_Datatype *out);
int mpii_dt_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out);

static int ret(int rc, const char *fn)
{
	return rc == MPI_SUCCESS ? rc : mpii_err(NULL, rc, fn);
}

/* count blocks of blen old elements, block i at disp(i) bytes; one old type for all. */
static int make_uniform(int count, const int *blens, int blen, const MPI_Aint *disps,
                        MPI_Aint stride, MPI_Datatype old, int combiner, int ni, const int *ints,
                        int na, const MPI_Aint *aints, MPI_Datatype *out, const char *fn)
{
	int n = count > 0 ? count : 0, rc;
	int *bl = malloc(sizeof(int) * (size_t)(n + 1));
	MPI_Aint *dp = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
	MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(n + 1));

	if (count < 0) {
		rc = MPI_ERR_COUNT;
	} else if (!mpii_dt(old)) {
		rc = MPI_ERR_TYPE;
	} else if (!bl || !dp || !ty) {
		rc = MPI_ERR_NO_MEM;
	} else {
		for (int i = 0; i < n; i++) {
			bl[i] = blens ? blens[i] : blen;
			dp[i] = disps ? disps[i] : (MPI_Aint)i * stride;
			ty[i] = old;
		}
		rc = mpii_dt_make(n, bl, dp, ty, 0, combiner, ni, ints, na, aints, 1, &old, out);
	}
	free(bl);
	free(dp);
	free(ty);
	return ret(rc, fn);
}

MPII_ALIAS(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *out)
{
	struct mpii_dtype *o = mpii_dt(old);
	MPI_Aint zero = 0;

	if (!o)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_contiguous");
	return make_uniform(1, NULL, count, &zero, 0, old, MPI_COMBINER_CONTIGUOUS, 1, &count, 0,
	                    NULL, out, "MPI_Type_contiguous");
}

MPII_ALIAS(Type_vector)
int PMPI_Type_vector(int count, int blen, int stride, MPI_Datatype old, MPI_Datatype *out)
{
	struct mpii_dtype *o = mpii_dt(old);
	int ints[3] = {count, blen, stride};

	if (!o)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_vector");
	return make_uniform(count, NULL, blen, NULL, (MPI_Aint)stride * o->extent, old,
	                    MPI_COMBINER_VECTOR, 3, ints, 0, NULL, out, "MPI_Type_vector");
}

MPII_ALIAS(Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blen, MPI_Aint stride, MPI_Datatype old,
                             MPI_Datatype *out)
{
	int ints[2] = {count, blen};

	return make_uniform(count, NULL, blen, NULL, stride, old, MPI_COMBINER_HVECTOR, 2, ints, 1,
	                    &stride, out, "MPI_Type_create_hvector");
}

MPII_ALIAS(Type_hvector)
int PMPI_Type_hvector(int count, int blen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *out)
{
	return PMPI_Type_create_hvector(count, blen, stride, old, out);
}

static int indexed(int count, const int *blens, const MPI_Aint *bytes, MPI_Datatype old,
                   int combiner, int ni, const int *ints, int na, MPI_Datatype *out, const char *fn)
{
	return make_uniform(count, blens, 0, bytes, 0, old, combiner, ni, ints, na, bytes, out, fn);
}

/* ints for indexed-like contents: count, blens..., displs... */
static int *pack_ints(int count, const int *a, int alen, const int *b)
{
	int *v = malloc(sizeof(int) * (size_t)(1 + alen + (b ? count : 0)));

	if (!v)
		return NULL;
	v[0] = count;
	memcpy(v + 1, a, sizeof(int) * (size_t)alen);
	if (b)
		memcpy(v + 1 + alen, b, sizeof(int) * (size_t)count);
	return v;
}

static int int_indexed(int count, const int *blens, int blen, const int *displs, MPI_Datatype old,
                       int combiner, MPI_Datatype *out, const char *fn)
{
	struct mpii_dtype *o = mpii_dt(old);
	int n = count > 0 ? count : 0, rc;
	MPI_Aint *b = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
	int *bl = malloc(sizeof(int) * (size_t)(n + 1));
	int *ints = blens ? pack_ints(n, blens, n, displs) : pack_ints(n, &blen, 1, displs);

	if (!o || count < 0 || !b || !bl || !ints) {
		rc = !o ? MPI_ERR_TYPE : count < 0 ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;
	} else {
		for (int i = 0; i < n; i++) {
			b[i] = (MPI_Aint)displs[i] * o->extent;
			bl[i] = blens ? blens[i] : blen;
		}
		rc = make_uniform(n, bl, 0, b, 0, old, combiner, blens ? 1 + 2 * n : 2 + n, ints, 0,
		                  NULL, out, fn);
	}
	free(b);
	free(bl);
	free(ints);
	return rc == MPI_SUCCESS ? rc : ret(rc, fn);
}

MPII_ALIAS(Type_indexed)
int PMPI_Type_indexed(int count, const int blens[], const int displs[], MPI_Datatype old,
                      MPI_Datatype *out)
{
	return int_indexed(count, blens, 0, displs, old, MPI_COMBINER_INDEXED, out,
	                   "MPI_Type_indexed");
}

MPII_ALIAS(Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blen, const int displs[], MPI_Datatype old,
                                   MPI_Datatype *out)
{
	return int_indexed(count, NULL, blen, displs, old, MPI_COMBINER_INDEXED_BLOCK, out,
	                   "MPI_Type_create_indexed_block");
}

MPII_ALIAS(Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int blens[], const MPI_Aint displs[],
                              MPI_Datatype old, MPI_Datatype *out)
{
	int *ints = pack_ints(count > 0 ? count : 0, blens, count > 0 ? count : 0, NULL);
	int rc;

	if (!ints)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Type_create_hindexed");
	rc = indexed(count, blens, displs, old, MPI_COMBINER_HINDEXED, 1 + count, ints, count, out,
	             "MPI_Type_create_hindexed");
	free(ints);
	return rc;
}

MPII_ALIAS(Type_hindexed)
int PMPI_Type_hindexed(int count, const int blens[], const MPI_Aint displs[], MPI_Datatype old,
                       MPI_Datatype *out)
{
	return PMPI_Type_create_hindexed(count, blens, displs, old, out);
}

MPII_ALIAS(Type_create_struct)
int PMPI_Type_create_struct(int count, const int blens[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype *out)
{
	int *ints;
	int rc;

	if (count < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, "MPI_Type_create_struct");
	ints = pack_ints(count, blens, count, NULL);
	if (!ints)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Type_create_struct");
	rc = mpii_dt_make(count, blens, displs, types, 1, MPI_COMBINER_STRUCT, 1 + count, ints,
	                  count, displs, count, types, out);
	free(ints);
	return ret(rc, "MPI_Type_create_struct");
}

MPII_ALIAS(Type_struct)
int PMPI_Type_struct(int count, const int blens[], const MPI_Aint displs[],
                     const MPI_Datatype types[], MPI_Datatype *out)
{
	return PMPI_Type_create_struct(count, blens, displs, types, out);
}

MPII_ALIAS(Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out)
{
	return ret(mpii_dt_resized(old, lb, extent, out), "MPI_Type_create_resized");
}

MPII_ALIAS(Type_dup)
int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *out)
{
	struct mpii_dtype *o = mpii_dt(old), *d;
	int one = 1, rc;
	MPI_Aint zero = 0;

	if (!o)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_dup");
	rc =
	    mpii_dt_make(1, &one, &zero, &old, 0, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &old, out);
	if (rc != MPI_SUCCESS)
		return ret(rc, "MPI_Type_dup");
	d = mpii_dt(*out);
	d->lb = o->lb;
	d->ub = o->ub;
	d->extent = o->extent;
	d->contig = o->contig;
	d->committed = o->committed;
	rc = mpii_attr_copy_type(o, d);
	if (rc != MPI_SUCCESS) /* a failed copy callback: no new type */
		PMPI_Type_free(out);
	return ret(rc, "MPI_Type_dup");
}

MPII_ALIAS(Type_commit)
int PMPI_Type_commit(MPI_Datatype *type)
{
	struct mpii_dtype *d = mpii_dt(*type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_commit");
	d->committed = 1;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_free)
int PMPI_Type_free(MPI_Datatype *type)
{
	struct mpii_dtype *d = mpii_dt(*type);

	if (!d || d->predefined)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_free");
	if (--d->urefs <= 0)
		mpii_tab_del(&mpii.dtypes, d->handle);
	mpii_dt_release(d);
	*type = MPI_DATATYPE_NULL;
	return MPI_SUCCESS;
}

#define GET_TYPE(d, h, fn)                                                                         \
	struct mpii_dtype *d = mpii_dt(h);                                                         \
	if (!d)                                                                                    \
	return mpii_err(NULL, MPI_ERR_TYPE, fn)

MPII_ALIAS(Type_size)
int PMPI_Type_size(MPI_Datatype type, int *size)
{
	GET_TYPE(d, type, "MPI_Type_size");
	*size = (int)d->size;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
	GET_TYPE(d, type, "MPI_Type_get_extent");
	*lb = d->lb;
	*extent = d->extent;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
	GET_TYPE(d, type, "MPI_Type_get_true_extent");
	*lb = d->true_lb;
	*extent = d->true_ub - d->true_lb;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_extent)
int PMPI_Type_extent(MPI_Datatype type, MPI_Aint *extent)
{
	GET_TYPE(d, type, "MPI_Type_extent");
	*extent = d->extent;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_lb)
int PMPI_Type_lb(MPI_Datatype type, MPI_Aint *lb)
{
	GET_TYPE(d, type, "MPI_Type_lb");
	*lb = d->lb;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_ub)
int PMPI_Type_ub(MPI_Datatype type, MPI_Aint *ub)
{
	GET_TYPE(d, type, "MPI_Type_ub");
	*ub = d->ub;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype type, int *nints, int *naddrs, int *ntypes, int *combiner)
{
	GET_TYPE(d, type, "MPI_Type_get_envelope");
	*nints = d->ni;
	*naddrs = d->na;
	*ntypes = d->nt;
	*combiner = d->combiner;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype type, int maxints, int maxaddrs, int maxtypes, int ints[],
                           MPI_Aint addrs[], MPI_Datatype types[])
{
	GET_TYPE(d, type, "MPI_Type_get_contents");
	if (d->predefined || maxints < d->ni || maxaddrs < d->na || maxtypes < d->nt)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Type_get_contents");
	if (d->ni)
		memcpy(ints, d->ints, sizeof(int) * (size_t)d->ni);
	if (d->na)
		memcpy(addrs, d->aints, sizeof(MPI_Aint) * (size_t)d->na);
	for (int i = 0; i < d->nt; i++) {
		struct mpii_dtype *o = d->tptr[i];
		types[i] = d->types[i];
		if (!o)
			continue;
		/* the caller owns (and frees) the returned derived types: give a live handle */
		if (mpii_tab_get(&mpii.dtypes, o->handle) != o) {
			int h = mpii_tab_add(&mpii.dtypes, o);
			if (h < 0)
				return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Type_get_contents");
			o->handle = h;
			o->urefs = 0;
		}
		o->refs++;
		o->urefs++;
		types[i] = o->handle;
	}
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_set_name)
int PMPI_Type_set_name(MPI_Datatype type, const char *name)
{
	GET_TYPE(d, type, "MPI_Type_set_name");
	snprintf(d->name, sizeof(d->name), "%s", name);
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_get_name)
int PMPI_Type_get_name(MPI_Datatype type, char *name, int *len)
{
	GET_TYPE(d, type, "MPI_Type_get_name");
	*len = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", d->name);
	return MPI_SUCCESS;
}

MPII_ALIAS(Get_address)
int PMPI_Get_address(const void *loc, MPI_Aint *addr)
{
	*addr = (MPI_Aint)(uintptr_t)loc;
	return MPI_SUCCESS;
}

MPII_ALIAS(Address)
int PMPI_Address(void *loc, MPI_Aint *addr)
{
	*addr = (MPI_Aint)(uintptr_t)loc;
	return MPI_SUCCESS;
}

MPII_ALIAS(Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPII_ALIAS(Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
	return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

MPII_ALIAS(Pack_size)
int PMPI_Pack_size(int count, MPI_Datatype type, MPI_Comm comm, int *size)
{
	GET_TYPE(d, type, "MPI_Pack_size");
	(void)comm;
	*size = (int)(d->size * (size_t)count);
	return MPI_SUCCESS;
}

MPII_ALIAS(Pack)
int PMPI_Pack(const void *in, int count, MPI_Datatype type, void *out, int outsize, int *pos,
              MPI_Comm comm)
{
	size_t n;

	GET_TYPE(d, type, "MPI_Pack");
	(void)comm;
	n = d->size * (size_t)count;
	if (count < 0 || *pos < 0 || (size_t)*pos + n > (size_t)outsize)
		return mpii_err(mpii_comm(comm), MPI_ERR_TRUNCATE, "MPI_Pack");
	mpii_pack(d, count, in, 0, (char *)out + *pos, n);
	*pos += (int)n;
	return MPI_SUCCESS;
}

MPII_ALIAS(Unpack)
int PMPI_Unpack(const void *in, int insize, int *pos, void *out, int count, MPI_Datatype type,
                MPI_Comm comm)
{
	size_t n;

	GET_TYPE(d, type, "MPI_Unpack");
	n = d->size * (size_t)count;
	if (count < 0 || *pos < 0 || (size_t)*pos + n > (size_t)insize)
		return mpii_err(mpii_comm(comm), MPI_ERR_TRUNCATE, "MPI_Unpack");
	mpii_unpack(d, count, out, 0, (const char *)in + *pos, n);
	*pos += (int)n;
	return MPI_SUCCESS;
}

int mpii_dt_recontent(MPI_Datatype h, int combiner, int ni, const int *ints, int nt,
                      const MPI_Datatype *types);

/* Subarray as nested hvectors (outermost dimension last built), placed at its start offset
 * inside a resized type spanning the whole array. */
static int subarray(int nd, const int *sizes, const int *subsizes, const int *starts, int order,
                    MPI_Datatype old, MPI_Datatype *out)
{
	struct mpii_dtype *o = mpii_dt(old);
	MPI_Aint stride = o->extent, disp = 0;
	MPI_Datatype t = old, n;
	int one = 1, rc = MPI_SUCCESS;

	for (int k = 0; k < nd && rc == MPI_SUCCESS; k++) {
		int i = order == MPI_ORDER_C ? nd - 1 - k : k; /* fastest-varying first */
		rc = PMPI_Type_create_hvector(subsizes[i], 1, stride, t, &n);
		if (t != old)
			PMPI_Type_free(&t);
		t = n;
		disp += (MPI_Aint)starts[i] * stride;
		stride *= sizes[i];
	}
	if (rc == MPI_SUCCESS)
		rc = PMPI_Type_create_hindexed(1, &one, &disp, t, &n);
	if (t != old && rc == MPI_SUCCESS)
		PMPI_Type_free(&t);
	if (rc == MPI_SUCCESS)
		rc = PMPI_Type_create_resized(n, 0, stride, out);
	if (rc == MPI_SUCCESS)
		PMPI_Type_free(&n);
	return rc;
}

MPII_ALIAS(Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                              const int starts[], int order, MPI_Datatype old, MPI_Datatype *out)
{
	int *ints, rc;

	if (!mpii_dt(old))
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_create_subarray");
	if (ndims <= 0 || (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Type_create_subarray");
	for (int i = 0; i < ndims; i++)
		if (sizes[i] <= 0 || subsizes[i] <= 0 || starts[i] < 0 ||
		    starts[i] + subsizes[i] > sizes[i])
			return mpii_err(NULL, MPI_ERR_ARG, "MPI_Type_create_subarray");
	rc = subarray(ndims, sizes, subsizes, starts, order, old, out);
	if (rc != MPI_SUCCESS)
		return mpii_err(NULL, rc, "MPI_Type_create_subarray");
	ints = malloc(sizeof(int) * (size_t)(3 * ndims + 2));
	if (!ints)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Type_create_subarray");
	ints[0] = ndims;
	memcpy(ints + 1, sizes, sizeof(int) * (size_t)ndims);
	memcpy(ints + 1 + ndims, subsizes, sizeof(int) * (size_t)ndims);
	memcpy(ints + 1 + 2 * ndims, starts, sizeof(int) * (size_t)ndims);
	ints[1 + 3 * ndims] = order;
	rc = mpii_dt_recontent(*out, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 1, &old);
	free(ints);
	return ret(rc, "MPI_Type_create_subarray");
}

MPII_ALIAS(Type_match_size)
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *type)
{
	static const MPI_Datatype real[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
	static const MPI_Datatype integer[] = {MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG_LONG};
	static const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
	                                    MPI_C_LONG_DOUBLE_COMPLEX};
	const MPI_Datatype *v = typeclass == MPI_TYPECLASS_REAL      ? real
	                        : typeclass == MPI_TYPECLASS_INTEGER ? integer
	                        : typeclass == MPI_TYPECLASS_COMPLEX ? cplx
	                                                             : NULL;
	int n = typeclass == MPI_TYPECLASS_INTEGER ? 4 : 3;

	for (int i = 0; v && i < n; i++) {
		if ((int)mpii_dt(v[i])->size == size) {
			*type = v[i];
			return MPI_SUCCESS;
		}
	}
	return mpii_err(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
}
