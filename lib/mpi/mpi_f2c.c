/* lib/mpi/mpi_f2c.c: the C side of Fortran support: handle conversions (MPI_*_c2f/f2c, with
 * Fortran numbers for requests), MPI_Status_c2f/f2c and MPI_Type_create_f90_*. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

/* Handles other than requests are small integers already: a Fortran handle is the same
 * number. The f2c direction does not validate; a bad handle fails where it is used. */
#define MPII_IDENTITY(Kind, Type)                                                                  \
	MPII_PRAGMA(weak MPI_##Kind##_c2f = PMPI_##Kind##_c2f)                                     \
	MPI_Fint PMPI_##Kind##_c2f(Type h)                                                         \
	{                                                                                          \
		return (MPI_Fint)h;                                                                \
	}                                                                                          \
	MPII_PRAGMA(weak MPI_##Kind##_f2c = PMPI_##Kind##_f2c)                                     \
	Type PMPI_##Kind##_f2c(MPI_Fint h)                                                         \
	{                                                                                          \
		return (Type)h;                                                                    \
	}

MPII_IDENTITY(Comm, MPI_Comm)
MPII_IDENTITY(Group, MPI_Group)
MPII_IDENTITY(Type, MPI_Datatype)
MPII_IDENTITY(Op, MPI_Op)
MPII_IDENTITY(Info, MPI_Info)
MPII_IDENTITY(Errhandler, MPI_Errhandler)
MPII_IDENTITY(Win, MPI_Win)

/* ---- requests: a C request is a pointer, a Fortran one a slot number ---- */
struct mpii_ftab mpii_freq;

MPI_Fint mpii_req_fgrow(struct lk_request *r)
{
	struct mpii_ftab *t = &mpii_freq;
	int h;

	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 256;
		struct lk_request **v = realloc(t->v, sizeof(*v) * (size_t)cap);
		int *next = v ? realloc(t->next, sizeof(*next) * (size_t)cap) : NULL;

		if (v)
			t->v = v;
		if (!next)
			return -1;
		t->next = next;
		t->cap = cap;
	}
	if (t->n == 0)
		t->v[t->n++] = NULL; /* 0 is MPI_REQUEST_NULL */
	h = t->n++;
	t->v[h] = r;
	return r->fh = h;
}

void mpii_freq_fini(void)
{
	free(mpii_freq.v);
	free(mpii_freq.next);
	memset(&mpii_freq, 0, sizeof(mpii_freq));
}

MPII_PRAGMA(weak MPI_Request_c2f = PMPI_Request_c2f)
MPI_Fint PMPI_Request_c2f(MPI_Request r)
{
	MPI_Fint h = mpii_req_c2f(r);

	return h < 0 ? mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Request_c2f"), 0 : h;
}

MPII_PRAGMA(weak MPI_Request_f2c = PMPI_Request_f2c)
MPI_Request PMPI_Request_f2c(MPI_Fint h)
{
	return mpii_req_f2c(h);
}

/* A Fortran status is MPI_F_STATUS_SIZE integers holding the C status word for word. */
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "status size");

MPII_ALIAS(Status_c2f)
int PMPI_Status_c2f(const MPI_Status *c, MPI_Fint *f)
{
	if (!c || c == MPI_STATUS_IGNORE || !f)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Status_c2f");
	memcpy(f, c, sizeof(*c));
	return MPI_SUCCESS;
}

MPII_ALIAS(Status_f2c)
int PMPI_Status_f2c(const MPI_Fint *f, MPI_Status *c)
{
	if (!f || !c || c == MPI_STATUS_IGNORE)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Status_f2c");
	memcpy(c, f, sizeof(*c));
	return MPI_SUCCESS;
}

/* ---- MPI_Type_create_f90_*: the predefined type of that size, as a type of its own per
 * (p, r) whose envelope is MPI_COMBINER_F90_* with p and r; made once and kept ---- */
int mpii_dt_recontent(MPI_Datatype h, int combiner, int ni, const int *ints, int nt,
                      const MPI_Datatype *types);

#define F90_CACHE 64
static struct {
	int combiner, p, r;
	MPI_Datatype t;
} f90_cache[F90_CACHE];
static int f90_n;

static int f90_type(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out,
                    const char *fn)
{
	int ints[2] = {p, r}, rc;

	for (int i = 0; i < f90_n; i++)
		if (f90_cache[i].combiner == combiner && f90_cache[i].p == p &&
		    f90_cache[i].r == r && mpii_dt(f90_cache[i].t)) {
			*out = f90_cache[i].t;
			return MPI_SUCCESS;
		}
	if (base == MPI_DATATYPE_NULL) /* no Fortran kind has that precision and range */
		return mpii_err(NULL, MPI_ERR_ARG, fn);
	rc = PMPI_Type_dup(base, out);
	if (rc == MPI_SUCCESS)
		rc = mpii_dt_recontent(*out, combiner, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2,
		                       combiner == MPI_COMBINER_F90_INTEGER ? &r : ints, 0, NULL);
	if (rc == MPI_SUCCESS)
		rc = PMPI_Type_commit(out);
	if (rc != MPI_SUCCESS)
		return mpii_err(NULL, rc, fn);
	if (f90_n < F90_CACHE) {
		f90_cache[f90_n].combiner = combiner;
		f90_cache[f90_n].p = p;
		f90_cache[f90_n].r = r;
		f90_cache[f90_n++].t = *out;
	}
	return MPI_SUCCESS;
}

/* The real kind gfortran's SELECTED_REAL_KIND(p, r) picks: 4, 8, or none here (the 10- and
 * 16-byte kinds have no MPI type in this library). MPI_UNDEFINED means "any". */
static MPI_Datatype f90_real(int p, int r, int cplx)
{
	p = p == MPI_UNDEFINED ? 0 : p;
	r = r == MPI_UNDEFINED ? 0 : r;
	if (p <= 6 && r <= 37)
		return cplx ? MPI_COMPLEX8 : MPI_REAL4;
	if (p <= 15 && r <= 307)
		return cplx ? MPI_COMPLEX16 : MPI_REAL8;
	return MPI_DATATYPE_NULL;
}

MPII_ALIAS(Type_create_f90_real)
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
	return f90_type(MPI_COMBINER_F90_REAL, p, r, f90_real(p, r, 0), newtype,
	                "MPI_Type_create_f90_real");
}

MPII_ALIAS(Type_create_f90_complex)
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
	return f90_type(MPI_COMBINER_F90_COMPLEX, p, r, f90_real(p, r, 1), newtype,
	                "MPI_Type_create_f90_complex");
}

MPII_ALIAS(Type_create_f90_integer)
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
	MPI_Datatype base = r <= 2    ? MPI_INTEGER1
	                    : r <= 4  ? MPI_INTEGER2
	                    : r <= 9  ? MPI_INTEGER4
	                    : r <= 18 ? MPI_INTEGER8
	                              : MPI_DATATYPE_NULL;

	return f90_type(MPI_COMBINER_F90_INTEGER, 0, r, base, newtype,
	                "MPI_Type_create_f90_integer");
}
