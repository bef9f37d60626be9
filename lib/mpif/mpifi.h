/* lib/mpif/mpifi.h: internals of libmpifort shared by the generated bindings (mpif_gen.c) and
 * the hand-written ones: sentinels, argument conversions, the gfortran conventions. */
#ifndef LAMKIT_MPIFI_H
#define LAMKIT_MPIFI_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ISO_Fortran_binding.h" /* gfortran's, copied into the build by lib/mpif/BUILD.gn */
#include "mpii.h"

/* MPI_X_f08 / mpi_x_ are weak aliases of the profiling names a tool can interpose on. */
#define MPIF_WEAK(alias, name) MPII_PRAGMA(weak alias = name)

/* gfortran's LOGICAL values. */
#define MPIF_TRUE  1
#define MPIF_FALSE 0

/* The sentinels: common blocks of mpif.h and the modules (/lamkit_bottom/ is lamkit_bottom_),
 * defined here, recognised by address. */
extern MPI_Fint lamkit_bottom_[1], lamkit_in_place_[1], lamkit_status_ignore_[MPI_F_STATUS_SIZE],
    lamkit_statuses_ignore_[MPI_F_STATUS_SIZE], lamkit_errcodes_ignore_[1], lamkit_unweighted_[1],
    lamkit_weights_empty_[1];
extern char lamkit_argv_null_[1], lamkit_argvs_null_[1];

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE as C knows them. */
static inline void *mpif_buf(void *p)
{
	return p == (void *)lamkit_bottom_     ? MPI_BOTTOM
	       : p == (void *)lamkit_in_place_ ? MPI_IN_PLACE
	                                       : p;
}

/* An mpi_f08 choice buffer (a TS 29113 descriptor): its address; a non-contiguous array
 * section becomes count = 1 of a new datatype *tmp (to free after the call) spanning it, made
 * from *count elements of *type (when count and type are NULL, it is an error). *rc gets an
 * MPI error code on failure. */
void *mpif_cdesc_slow(CFI_cdesc_t *d, int *count, MPI_Datatype *type, MPI_Datatype *tmp, int *rc);
static inline int mpif_contiguous(const CFI_cdesc_t *d)
{
	CFI_index_t sm = (CFI_index_t)d->elem_len;

	for (int i = 0; i < d->rank; i++) {
		if (d->dim[i].sm != sm && d->dim[i].extent > 1)
			return 0;
		sm *= d->dim[i].extent;
	}
	return 1;
}
static inline void *mpif_cdesc(CFI_cdesc_t *d, int *count, MPI_Datatype *type, MPI_Datatype *tmp,
                               int *rc)
{
	if (d->rank == 0 || mpif_contiguous(d))
		return mpif_buf(d->base_addr);
	return mpif_cdesc_slow(d, count, type, tmp, rc);
}

/* A status argument: MPI_STATUS_IGNORE, the Fortran array itself, or (not 8-byte aligned, as
 * the C status needs) tmp holding a copy, written back by mpif_st_done. */
static inline MPI_Status *mpif_st(MPI_Fint *f, MPI_Status *tmp, int in)
{
	if (f == lamkit_status_ignore_ || f == lamkit_statuses_ignore_)
		return MPI_STATUS_IGNORE;
	if ((uintptr_t)f & (_Alignof(MPI_Status) - 1)) {
		memcpy(tmp, f, sizeof(*tmp));
		return tmp;
	}
	(void)in;
	return (MPI_Status *)(void *)f;
}
static inline void mpif_st_done(MPI_Fint *f, MPI_Status *c, MPI_Status *tmp)
{
	if (c == tmp)
		memcpy(f, tmp, sizeof(*tmp));
}
/* An array of n statuses likewise (NULL on ENOMEM); mpif_sts_done copies back and frees. */
MPI_Status *mpif_sts_copy(MPI_Fint *f, int n);
static inline MPI_Status *mpif_sts(MPI_Fint *f, int n)
{
	if (f == lamkit_statuses_ignore_ || f == lamkit_status_ignore_)
		return MPI_STATUSES_IGNORE;
	if ((uintptr_t)f & (_Alignof(MPI_Status) - 1))
		return mpif_sts_copy(f, n);
	return (MPI_Status *)(void *)f;
}
void mpif_sts_copy_done(MPI_Fint *f, MPI_Status *c, int n);
static inline void mpif_sts_done(MPI_Fint *f, MPI_Status *c, int n)
{
	if (c && c != MPI_STATUSES_IGNORE && (void *)c != (void *)f)
		mpif_sts_copy_done(f, c, n);
}

/* Requests: Fortran numbers (mpii_req_c2f), arrays through a C copy (s: 16 on the stack; more
 * are malloc'ed, NULL on ENOMEM); mpif_reqs_out writes the numbers back and frees. */
static inline MPI_Fint mpif_req_c2f(MPI_Request r)
{
	MPI_Fint h = mpii_req_c2f(r);

	return h < 0 ? 0 : h;
}
static inline MPI_Request *mpif_reqs_in(const MPI_Fint *f, int n, MPI_Request *s)
{
	MPI_Request *c = n <= 16 ? s : (MPI_Request *)malloc(sizeof(*c) * (size_t)n);

	for (int i = 0; c && i < n; i++)
		c[i] = mpii_req_f2c(f[i]);
	return c;
}
static inline void mpif_reqs_out(MPI_Fint *f, MPI_Request *c, int n, MPI_Request *s)
{
	if (!c)
		return;
	for (int i = 0; i < n; i++)
		f[i] = c[i] ? mpif_req_c2f(c[i]) : 0;
	if (c != s)
		free(c);
}

/* LOGICAL arrays as C ints (s: 16 on the stack; in: convert the values) and back. */
int *mpif_logs_in(const MPI_Fint *f, int n, int *s, int in);
void mpif_logs_out(MPI_Fint *f, const int *c, int n);
/* MPI-1's INTEGER addresses as MPI_Aint (s: 16 on the stack). */
MPI_Aint *mpif_iaints_in(const MPI_Fint *f, int n, MPI_Aint *s);
/* Free a copy made by one of the above unless it is the stack buffer. */
static inline void mpif_free(void *p, void *s)
{
	if (p != s)
		free(p);
}

/* 1-based indices out (Waitsome, Testsome). */
void mpif_idx_out(MPI_Fint *idx, int n);
/* Error code, weight arrays: their sentinels as C's. */
static inline int *mpif_errs(MPI_Fint *f)
{
	return f == lamkit_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : f;
}
static inline int *mpif_wts(MPI_Fint *f)
{
	return f == lamkit_unweighted_      ? MPI_UNWEIGHTED
	       : f == lamkit_weights_empty_ ? MPI_WEIGHTS_EMPTY
	                                    : f;
}

/* Strings: a CHARACTER(len) argument as a C string without the trailing blanks (and the
 * leading ones if lead) (buf if it fits, else malloc'ed; NULL on ENOMEM); a C string into a
 * CHARACTER(len), blank-padded (nothing when rc is an error); a malloc'ed C buffer of n + 1
 * bytes. */
char *mpif_str_in(const char *f, size_t len, char *buf, size_t buflen, int lead);
void mpif_str_out(char *f, size_t len, const char *c, int rc);
char *mpif_str_buf(int n);
/* The number of dimensions of Cartesian communicator comm (0 when it is not one). */
int mpif_cartdim(MPI_Fint comm);
/* MPI_ERR_NO_MEM, through the error handler. */
int mpif_nomem(const char *fn);

#endif
