/* lib/mpi/mpi_dtype_x.c: MPI-3 datatype routines: MPI_Type_create_hindexed_block and the
 * MPI_Count ("_x") queries, which MPI-IO programs (HDF5, MPICH's I/O tests) call. */
#include <stdlib.h>

#include "mpii.h"

int mpii_dt_make(int n, const int *blens, const MPI_Aint *disps, const MPI_Datatype *types, int pad,
                 int combiner, int ni, const int *ints, int na, const MPI_Aint *aints, int nt,
                 const MPI_Datatype *ctypes, MPI_Datatype *out);

MPII_ALIAS(Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blen, const MPI_Aint displs[], MPI_Datatype old,
                                    MPI_Datatype *out)
{
	static const char fn[] = "MPI_Type_create_hindexed_block";
	int n = count > 0 ? count : 0, ints[2] = {count, blen}, rc;
	int *bl = malloc(sizeof(int) * (size_t)(n + 1));
	MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(n + 1));

	if (count < 0 || blen < 0)
		rc = count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG;
	else if (!mpii_dt(old))
		rc = MPI_ERR_TYPE;
	else if (!bl || !ty)
		rc = MPI_ERR_NO_MEM;
	else {
		for (int i = 0; i < n; i++) {
			bl[i] = blen;
			ty[i] = old;
		}
		rc = mpii_dt_make(n, bl, displs, ty, 0, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, n,
		                  displs, 1, &old, out);
	}
	free(bl);
	free(ty);
	return rc == MPI_SUCCESS ? rc : mpii_err(NULL, rc, fn);
}

MPII_ALIAS(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype type, MPI_Count *size)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_size_x");
	*size = (MPI_Count)d->size;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_get_extent_x)
int PMPI_Type_get_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_extent_x");
	*lb = d->lb;
	*extent = d->extent;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_get_true_extent_x)
int PMPI_Type_get_true_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_true_extent_x");
	*lb = d->true_lb;
	*extent = d->true_ub - d->true_lb;
	return MPI_SUCCESS;
}

MPII_ALIAS(Get_elements_x)
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
	struct mpii_dtype *d = mpii_dt(type);
	long long n;

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Get_elements_x");
	n = mpii_elements(d, (size_t)status->lk_count);
	*count = n < 0 ? MPI_UNDEFINED : (MPI_Count)n;
	return MPI_SUCCESS;
}

MPII_ALIAS(Status_set_elements_x)
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype type, MPI_Count count)
{
	struct mpii_dtype *d = mpii_dt(type);
	size_t per = 0;

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Status_set_elements_x");
	for (int k = 0; k < d->nseg; k++)
		per = mpii_basic_size(d->seg[k].basic);
	status->lk_count = (long long)(per ? per : d->size) * count;
	return MPI_SUCCESS;
}
