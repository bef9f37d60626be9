/* lib/mpif/mpif.c: the run-time support of lamkit's Fortran bindings: the sentinels, argument
 * conversions, descriptors of non-contiguous sections, the predefined attribute callbacks. */
#include "mpifi.h"

/* The common blocks of the sentinels, of the sizes mpif.h and the modules give them (the
 * linker warns when a common and its definition differ), 64-byte aligned (no less than a
 * common gets). */
#define MPIF_SENTINEL __attribute__((aligned(64)))
MPI_Fint lamkit_bottom_[1] MPIF_SENTINEL, lamkit_in_place_[1] MPIF_SENTINEL,
    lamkit_status_ignore_[MPI_F_STATUS_SIZE] MPIF_SENTINEL,
    lamkit_statuses_ignore_[MPI_F_STATUS_SIZE] MPIF_SENTINEL,
    lamkit_errcodes_ignore_[1] MPIF_SENTINEL, lamkit_unweighted_[1] MPIF_SENTINEL,
    lamkit_weights_empty_[1] MPIF_SENTINEL;
char lamkit_argv_null_[1] MPIF_SENTINEL, lamkit_argvs_null_[1] MPIF_SENTINEL;

int mpif_nomem(const char *fn)
{
	return mpii_err(NULL, MPI_ERR_NO_MEM, fn);
}

/* ---- non-contiguous sections of mpi_f08 ---- */

void *mpif_cdesc_slow(CFI_cdesc_t *d, int *count, MPI_Datatype *type, MPI_Datatype *tmp, int *rc)
{
	MPI_Aint lb, extent;
	MPI_Datatype t, next;
	long long nelem = 1;
	int per;

	if (!count || !type) {
		*rc = mpii_err(NULL, MPI_ERR_BUFFER,
		               "a non-contiguous array section as a buffer whose layout is not one "
		               "count and datatype (use a contiguous copy)");
		return NULL;
	}
	for (int i = 0; i < d->rank; i++)
		nelem *= d->dim[i].extent;
	if (PMPI_Type_get_extent(*type, &lb, &extent) != MPI_SUCCESS || extent <= 0 ||
	    (MPI_Aint)d->elem_len % extent != 0) {
		*rc = mpii_err(NULL, MPI_ERR_TYPE,
		               "the datatype of a non-contiguous array section does not divide its "
		               "elements");
		return NULL;
	}
	per = (int)((MPI_Aint)d->elem_len / extent);
	if ((long long)*count != nelem * per) {
		*rc = mpii_err(NULL, MPI_ERR_COUNT,
		               "the count of a non-contiguous array section is not its size");
		return NULL;
	}
	/* each array element is per elements of type; then one hvector per dimension */
	*rc = per == 1 ? PMPI_Type_dup(*type, &t) : PMPI_Type_contiguous(per, *type, &t);
	for (int i = 0; i < d->rank && *rc == MPI_SUCCESS; i++) {
		*rc = PMPI_Type_create_hvector((int)d->dim[i].extent, 1, (MPI_Aint)d->dim[i].sm, t,
		                               &next);
		PMPI_Type_free(&t);
		t = next;
	}
	if (*rc == MPI_SUCCESS)
		*rc = PMPI_Type_commit(&t);
	if (*rc != MPI_SUCCESS)
		return NULL;
	*tmp = *type = t;
	*count = nelem ? 1 : 0;
	return d->base_addr;
}

/* ---- arrays ---- */

MPI_Status *mpif_sts_copy(MPI_Fint *f, int n)
{
	MPI_Status *c = malloc(sizeof(*c) * (size_t)(n > 0 ? n : 1));

	if (c && n > 0)
		memcpy(c, f, sizeof(*c) * (size_t)n);
	return c;
}

void mpif_sts_copy_done(MPI_Fint *f, MPI_Status *c, int n)
{
	if (n > 0)
		memcpy(f, c, sizeof(*c) * (size_t)n);
	free(c);
}

int *mpif_logs_in(const MPI_Fint *f, int n, int *s, int in)
{
	int *c = n <= 16 ? s : malloc(sizeof(*c) * (size_t)n);

	for (int i = 0; c && i < n; i++)
		c[i] = in ? f[i] != 0 : 0;
	return c;
}

void mpif_logs_out(MPI_Fint *f, const int *c, int n)
{
	for (int i = 0; c && i < n; i++)
		f[i] = c[i] ? MPIF_TRUE : MPIF_FALSE;
}

MPI_Aint *mpif_iaints_in(const MPI_Fint *f, int n, MPI_Aint *s)
{
	MPI_Aint *c = n <= 16 ? s : malloc(sizeof(*c) * (size_t)n);

	for (int i = 0; c && i < n; i++)
		c[i] = f[i];
	return c;
}

void mpif_idx_out(MPI_Fint *idx, int n)
{
	if (n == MPI_UNDEFINED)
		return;
	for (int i = 0; i < n; i++)
		idx[i]++;
}

/* ---- strings ---- */

char *mpif_str_in(const char *f, size_t len, char *buf, size_t buflen, int lead)
{
	char *c;

	while (len > 0 && f[len - 1] == ' ')
		len--;
	while (lead && len > 0 && *f == ' ')
		f++, len--;
	c = len < buflen ? buf : malloc(len + 1);
	if (c) {
		memcpy(c, f, len);
		c[len] = '\0';
	}
	return c;
}

void mpif_str_out(char *f, size_t len, const char *c, int rc)
{
	size_t n;

	if (rc != MPI_SUCCESS || !c)
		return;
	n = strlen(c);
	if (n > len)
		n = len;
	memcpy(f, c, n);
	memset(f + n, ' ', len - n);
}

char *mpif_str_buf(int n)
{
	char *c = malloc((size_t)(n > 0 ? n : 0) + 1);

	if (c)
		c[0] = '\0';
	return c;
}

int mpif_cartdim(MPI_Fint comm)
{
	int nd = 0, status = MPI_UNDEFINED;

	if (PMPI_Topo_test((MPI_Comm)comm, &status) != MPI_SUCCESS || status != MPI_CART)
		return 0;
	PMPI_Cartdim_get((MPI_Comm)comm, &nd);
	return nd;
}

/* ---- MPI_F_sync_reg: a call the compiler cannot look into ---- */
void mpi_f_sync_reg_(void *buf);
void mpi_f_sync_reg_(void *buf)
{
	__asm__ volatile("" : : "r"(buf) : "memory");
}
void MPI_F_sync_reg_f08(CFI_cdesc_t *buf);
void MPI_F_sync_reg_f08(CFI_cdesc_t *buf)
{
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* ---- the predefined attribute callbacks (mpif.h EXTERNAL MPI_COMM_DUP_FN ..., mpi_f08's
 * PROCEDURE MPI_COMM_DUP_FN ...): what C's do, with Fortran's arguments (all by reference,
 * attribute values INTEGER(KIND=MPI_ADDRESS_KIND), flag a LOGICAL) ---- */
#define MPIF_COPY_FN(name, dup)                                                                    \
	void name(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,   \
	          MPI_Fint *flag, MPI_Fint *ierr);                                                 \
	void name(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,   \
	          MPI_Fint *flag, MPI_Fint *ierr)                                                  \
	{                                                                                          \
		(void)obj, (void)keyval, (void)extra;                                              \
		if (dup)                                                                           \
			*out = *in;                                                                \
		*flag = dup ? MPIF_TRUE : MPIF_FALSE;                                              \
		*ierr = MPI_SUCCESS;                                                               \
	}
#define MPIF_DELETE_FN(name)                                                                       \
	void name(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra,                 \
	          MPI_Fint *ierr);                                                                 \
	void name(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra, MPI_Fint *ierr) \
	{                                                                                          \
		(void)obj, (void)keyval, (void)val, (void)extra;                                   \
		*ierr = MPI_SUCCESS;                                                               \
	}
MPIF_COPY_FN(mpi_comm_null_copy_fn_, 0)
MPIF_COPY_FN(mpi_comm_dup_fn_, 1)
MPIF_DELETE_FN(mpi_comm_null_delete_fn_)
MPIF_COPY_FN(mpi_type_null_copy_fn_, 0)
MPIF_COPY_FN(mpi_type_dup_fn_, 1)
MPIF_DELETE_FN(mpi_type_null_delete_fn_)
MPIF_COPY_FN(mpi_win_null_copy_fn_, 0)
MPIF_COPY_FN(mpi_win_dup_fn_, 1)
MPIF_DELETE_FN(mpi_win_null_delete_fn_)

/* MPI_CONVERSION_FN_NULL (MPI_REGISTER_DATAREP): never called, known by its address. */
void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *type, MPI_Fint *count, void *filebuf,
                             MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierr);
void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *type, MPI_Fint *count, void *filebuf,
                             MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierr)
{
	(void)userbuf, (void)type, (void)count, (void)filebuf, (void)position, (void)extra;
	*ierr = MPI_SUCCESS;
}

/* MPI-1's MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN: INTEGER attribute values. */
void mpi_null_copy_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
                       MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierr);
void mpi_null_copy_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
                       MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierr)
{
	*flag = MPIF_FALSE;
	*ierr = MPI_SUCCESS;
}
void mpi_dup_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out,
                 MPI_Fint *flag, MPI_Fint *ierr);
void mpi_dup_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out,
                 MPI_Fint *flag, MPI_Fint *ierr)
{
	*out = *in;
	*flag = MPIF_TRUE;
	*ierr = MPI_SUCCESS;
}
void mpi_null_delete_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *extra,
                         MPI_Fint *ierr);
void mpi_null_delete_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *extra,
                         MPI_Fint *ierr)
{
	*ierr = MPI_SUCCESS;
}
