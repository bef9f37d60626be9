/* lib/mpi/mpi_io_datarep.c: data representations: native, internal, external32, registered. */
#include <stdlib.h>
#include <string.h>

#include "mpio.h"

enum { DR_NATIVE, DR_EXTERNAL32, DR_USER };

struct mpio_datarep {
	struct mpio_datarep *next;
	int kind;
	char name[MPI_MAX_DATAREP_STRING];
	MPI_Datarep_conversion_function *rd, *wr;
	MPI_Datarep_extent_function *ext;
	void *extra;
};

/* "internal" is lamkit's choice of representation: the native one (MPI-3.1 13.5.2). */
static struct mpio_datarep native = {NULL, DR_NATIVE, "native", NULL, NULL, NULL, NULL};
static struct mpio_datarep internal = {NULL, DR_NATIVE, "internal", NULL, NULL, NULL, NULL};
static struct mpio_datarep ext32 = {NULL, DR_EXTERNAL32, "external32", NULL, NULL, NULL, NULL};
static struct mpio_datarep *user; /* registered ones */

struct mpio_datarep *mpio_datarep_find(const char *name)
{
	if (!strcmp(name, "native") || !strcmp(name, "NATIVE"))
		return &native;
	if (!strcmp(name, "internal") || !strcmp(name, "INTERNAL"))
		return &internal;
	if (!strcmp(name, "external32") || !strcmp(name, "EXTERNAL32"))
		return &ext32;
	for (struct mpio_datarep *d = user; d; d = d->next)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

int mpio_datarep_native(const struct mpio_datarep *dr)
{
	return dr->kind == DR_NATIVE;
}

/* File bytes of one element of predefined type b in dr (-1: none). */
static MPI_Offset basic_size(const struct mpio_datarep *dr, MPI_Datatype b)
{
	struct mpii_dtype *d = mpii_dt(b);
	MPI_Aint e = 0;

	if (!d)
		return -1;
	if (dr->kind == DR_NATIVE)
		return (MPI_Offset)d->size;
	if (dr->kind == DR_EXTERNAL32)
		return mpii_ext32_size(d);
	if (dr->ext(b, &e, dr->extra) != MPI_SUCCESS || e < 0)
		return -1;
	return e;
}

MPI_Offset mpio_datarep_size(const struct mpio_datarep *dr, struct mpii_dtype *d, int count)
{
	MPI_Offset n = 0;

	if (dr->kind == DR_NATIVE)
		return (MPI_Offset)d->size * count;
	if (dr->kind == DR_EXTERNAL32) {
		long long e = mpii_ext32_size(d);
		return e < 0 ? -1 : e * count;
	}
	for (int k = 0; k < d->nseg; k++) {
		size_t bs = mpii_basic_size(d->seg[k].basic);
		MPI_Offset e = basic_size(dr, d->seg[k].basic);
		if (!bs || e < 0)
			return -1;
		n += (MPI_Offset)(d->seg[k].len / bs) * e;
	}
	return n * count;
}

/* ---- a type's layout in the file: the same constructor over the file's element sizes ---- */

static int xlate(const struct mpio_datarep *dr, MPI_Datatype t, MPI_Datatype *out);

/* Translate the old types of d into x[] (nt of them). MPI code; on failure none is left. */
static int xlate_olds(const struct mpio_datarep *dr, const struct mpii_dtype *d, MPI_Datatype *x)
{
	for (int i = 0; i < d->nt; i++) {
		int rc = xlate(dr, d->types[i], &x[i]);
		if (rc != MPI_SUCCESS) {
			while (i-- > 0)
				if (!mpii_dt(x[i])->predefined)
					PMPI_Type_free(&x[i]);
			return rc;
		}
	}
	return MPI_SUCCESS;
}

static int xlate_named(const struct mpio_datarep *dr, MPI_Datatype t, MPI_Datatype *out)
{
	MPI_Offset n;

	if (t == MPI_LB || t == MPI_UB) {
		*out = t;
		return MPI_SUCCESS;
	}
	n = basic_size(dr, t);
	if (n < 0 || n > 1 << 20)
		return MPI_ERR_CONVERSION;
	return PMPI_Type_contiguous((int)n, MPI_BYTE, out);
}

static int xlate(const struct mpio_datarep *dr, MPI_Datatype t, MPI_Datatype *out)
{
	struct mpii_dtype *d = mpii_dt(t);
	const int *I;
	const MPI_Aint *A;
	MPI_Datatype x[64], *xs = x;
	int rc, n;

	if (!d)
		return MPI_ERR_TYPE;
	if (d->combiner == MPI_COMBINER_NAMED)
		return xlate_named(dr, t, out);
	if (d->nt > 64 && !(xs = malloc(sizeof(*xs) * (size_t)d->nt)))
		return MPI_ERR_NO_MEM;
	rc = xlate_olds(dr, d, xs);
	if (rc != MPI_SUCCESS) {
		if (xs != x)
			free(xs);
		return rc;
	}
	I = d->ints;
	A = d->aints;
	n = d->ni ? I[0] : 0;
	switch (d->combiner) {
	case MPI_COMBINER_DUP:
		rc = PMPI_Type_dup(xs[0], out);
		break;
	case MPI_COMBINER_CONTIGUOUS:
		rc = PMPI_Type_contiguous(n, xs[0], out);
		break;
	case MPI_COMBINER_VECTOR:
		rc = PMPI_Type_vector(n, I[1], I[2], xs[0], out);
		break;
	case MPI_COMBINER_HVECTOR:
	case MPI_COMBINER_HVECTOR_INTEGER:
		rc = PMPI_Type_create_hvector(n, I[1], A[0], xs[0], out);
		break;
	case MPI_COMBINER_INDEXED:
		rc = PMPI_Type_indexed(n, I + 1, I + 1 + n, xs[0], out);
		break;
	case MPI_COMBINER_HINDEXED:
	case MPI_COMBINER_HINDEXED_INTEGER:
		rc = PMPI_Type_create_hindexed(n, I + 1, A, xs[0], out);
		break;
	case MPI_COMBINER_INDEXED_BLOCK:
		rc = PMPI_Type_create_indexed_block(n, I[1], I + 2, xs[0], out);
		break;
	case MPI_COMBINER_HINDEXED_BLOCK:
		rc = PMPI_Type_create_hindexed_block(n, I[1], A, xs[0], out);
		break;
	case MPI_COMBINER_STRUCT:
	case MPI_COMBINER_STRUCT_INTEGER:
		rc = PMPI_Type_create_struct(n, I + 1, A, xs, out);
		break;
	case MPI_COMBINER_SUBARRAY:
		rc = PMPI_Type_create_subarray(n, I + 1, I + 1 + n, I + 1 + 2 * n, I[1 + 3 * n],
		                               xs[0], out);
		break;
	case MPI_COMBINER_DARRAY:
		n = I[2];
		rc = PMPI_Type_create_darray(I[0], I[1], n, I + 3, I + 3 + n, I + 3 + 2 * n,
		                             I + 3 + 3 * n, I[3 + 4 * n], xs[0], out);
		break;
	case MPI_COMBINER_RESIZED:
		rc = PMPI_Type_create_resized(xs[0], A[0], A[1], out);
		break;
	default:
		rc = MPI_ERR_CONVERSION;
	}
	for (int i = 0; i < d->nt; i++)
		if (!mpii_dt(xs[i])->predefined)
			PMPI_Type_free(&xs[i]);
	if (xs != x)
		free(xs);
	return rc;
}

int mpio_datarep_type(const struct mpio_datarep *dr, MPI_Datatype t, MPI_Datatype *out)
{
	int rc = xlate(dr, t, out);

	if (rc == MPI_SUCCESS && mpii_dt(*out)->predefined) /* the caller frees what it gets */
		rc = PMPI_Type_dup(*out, out);
	if (rc != MPI_SUCCESS && rc != MPI_ERR_NO_MEM)
		rc = MPI_ERR_CONVERSION;
	return rc;
}

/* ---- conversion ---- */

int mpio_datarep_conv(const struct mpio_datarep *dr, struct mpii_dtype *d, int count, void *buf,
                      void *fbuf, int to_file)
{
	size_t n = d->size * (size_t)count;

	if (dr->kind == DR_EXTERNAL32) {
		mpii_ext32_copy(d, count, buf, fbuf, to_file);
		return MPI_SUCCESS;
	}
	if (dr->kind == DR_USER && (to_file ? dr->wr : dr->rd)) {
		MPI_Datarep_conversion_function *fn = to_file ? dr->wr : dr->rd;
		int rc = fn(buf, d->handle, count, fbuf, 0, dr->extra);
		return rc == MPI_SUCCESS ? rc : MPI_ERR_CONVERSION;
	}
	if (to_file)
		mpii_pack(d, count, buf, 0, fbuf, n);
	else
		mpii_unpack(d, count, buf, 0, fbuf, n);
	return MPI_SUCCESS;
}

MPII_ALIAS(Register_datarep)
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_fn,
                          MPI_Datarep_conversion_function *write_fn,
                          MPI_Datarep_extent_function *extent_fn, void *extra)
{
	static const char fn[] = "MPI_Register_datarep";
	struct mpio_datarep *d;

	MPII_CHECK_INIT(fn);
	if (!datarep || !*datarep || strlen(datarep) >= MPI_MAX_DATAREP_STRING || !extent_fn)
		return mpio_err(NULL, MPI_ERR_ARG, fn);
	if (mpio_datarep_find(datarep))
		return mpio_err(NULL, MPI_ERR_DUP_DATAREP, fn);
	d = calloc(1, sizeof(*d));
	if (!d)
		return mpio_err(NULL, MPI_ERR_NO_MEM, fn);
	d->kind = DR_USER;
	strcpy(d->name, datarep);
	d->rd = read_fn;
	d->wr = write_fn;
	d->ext = extent_fn;
	d->extra = extra;
	d->next = user;
	user = d;
	return MPI_SUCCESS;
}

void mpio_datarep_fini(void)
{
	while (user) {
		struct mpio_datarep *d = user;
		user = d->next;
		free(d);
	}
}
