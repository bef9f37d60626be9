/* lib/mpi/mpi_f2c.c: MPI_*_c2f / MPI_*_f2c handle conversions and MPI_Status_c2f/f2c. */
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
