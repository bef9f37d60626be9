/* lib/mpi/mpi_topo.c: Cartesian topologies, MPI_Dims_create and the node-local comm split. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

int mpii_cart_set(struct mpii_comm *c, int ndims, const int *dims, const int *periods)
{
	int *d = malloc(sizeof(int) * (size_t)(ndims + 1)),
	    *p = malloc(sizeof(int) * (size_t)(ndims + 1));

	if (!d || !p) {
		free(d);
		free(p);
		return -1;
	}
	if (ndims > 0)
		memcpy(d, dims, sizeof(int) * (size_t)ndims);
	for (int i = 0; i < ndims; i++)
		p[i] = periods[i] ? 1 : 0;
	free(c->dims);
	free(c->periods);
	c->dims = d;
	c->periods = p;
	c->ndims = ndims;
	c->topo = MPI_CART;
	return 0;
}

/* MPI_Dims_create's "balanced" split of n into k factors, as MPICH chooses it: the smallest
 * spread (largest - smallest factor); among equal spreads the largest smallest factor, then
 * the largest next-to-smallest, and so on. Factors are non-increasing. */
struct dims_search {
	int k, ndiv;
	const int *div; /* divisors of the original n, descending */
	int cur[64], best[64];
	long spread;
};

static int fits(long d, int m, long n) /* d^m >= n */
{
	long p = 1;

	for (int i = 0; i < m && p < n; i++)
		p *= d;
	return p >= n;
}

/* a beats b on a tie: compared from the smallest factor up, a's is larger. */
static int later(const int *a, const int *b, int k)
{
	for (int i = k - 1; i >= 0; i--)
		if (a[i] != b[i])
			return a[i] > b[i];
	return 0;
}

static void dims_try(struct dims_search *s, int i, long n, long maxv)
{
	if (i == s->k - 1) {
		long spread = (i ? s->cur[0] : n) - n;
		if (n > maxv)
			return;
		s->cur[i] = (int)n;
		if (s->spread < 0 || spread < s->spread ||
		    (spread == s->spread && later(s->cur, s->best, s->k))) {
			s->spread = spread;
			memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
		}
		return;
	}
	for (int j = 0; j < s->ndiv; j++) {
		long d = s->div[j];
		if (d > maxv || n % d)
			continue;
		if (!fits(d, s->k - i, n))
			break; /* smaller factors cannot hold the rest either */
		if (i > 0 && s->spread >= 0 && s->cur[0] - d > s->spread)
			break; /* the spread only grows from here */
		s->cur[i] = (int)d;
		dims_try(s, i + 1, n / d, d);
	}
}

static int balance(int n, int k, int *out)
{
	struct dims_search s = {.k = k, .spread = -1};
	int *div = malloc(sizeof(int) * 4096), nd = 0, nhi = 0;

	if (!div)
		return -1;
	/* divisors descending: the large ones (n / d) fill the front, the small ones the back */
	for (long d = 1; d * d <= n; d++)
		if (n % d == 0) {
			div[2048 + nhi++] = (int)d;
			if (d * d != n)
				div[nd++] = (int)(n / d);
		}
	for (int i = nhi - 1; i >= 0; i--)
		div[nd++] = div[2048 + i];
	s.div = div;
	s.ndiv = nd;
	if (k > 64) { /* more dimensions than the search keeps: only ones past the 64th */
		for (int i = 64; i < k; i++)
			out[i] = 1;
		s.k = k = 64;
	}
	dims_try(&s, 0, n, n);
	memcpy(out, s.best, sizeof(int) * (size_t)k);
	free(div);
	return 0;
}

MPII_ALIAS(Dims_create)
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
	int fixed = 1, nfree = 0, *free_dims;

	if (nnodes < 1 || ndims < 0)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Dims_create");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return mpii_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
		if (dims[i])
			fixed *= dims[i];
		else
			nfree++;
	}
	if (nnodes % fixed || (!nfree && fixed != nnodes))
		return mpii_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
	if (!nfree)
		return MPI_SUCCESS;
	free_dims = malloc(sizeof(int) * (size_t)nfree);
	if (!free_dims)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Dims_create");
	if (balance(nnodes / fixed, nfree, free_dims) < 0) {
		free(free_dims);
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Dims_create");
	}
	for (int i = 0, k = 0; i < ndims; i++)
		if (!dims[i])
			dims[i] = free_dims[k++];
	free(free_dims);
	return MPI_SUCCESS;
}

MPII_ALIAS(Cart_create)
int PMPI_Cart_create(MPI_Comm old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *out)
{
	struct mpii_comm *c = mpii_comm(old), *nc;
	long n = 1;
	int rc;

	(void)reorder;
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Cart_create");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return mpii_err(c, MPI_ERR_DIMS, "MPI_Cart_create");
		n *= dims[i];
	}
	if (ndims < 0 || n > c->size)
		return mpii_err(c, MPI_ERR_DIMS, "MPI_Cart_create");
	rc = PMPI_Comm_split(old, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, out);
	if (rc != MPI_SUCCESS || *out == MPI_COMM_NULL)
		return rc;
	nc = mpii_comm(*out);
	if (mpii_cart_set(nc, ndims, dims, periods) < 0)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Cart_create");
	return MPI_SUCCESS;
}

struct mpii_comm *mpii_topo_comm(MPI_Comm comm, int topo, const char *fn, int *rc)
{
	struct mpii_comm *c = mpii_comm(comm);

	*rc = !c ? MPI_ERR_COMM : c->topo != topo ? MPI_ERR_TOPOLOGY : MPI_SUCCESS;
	if (*rc != MPI_SUCCESS)
		mpii_err(c, *rc, fn);
	return *rc == MPI_SUCCESS ? c : NULL;
}

MPII_ALIAS(Cartdim_get)
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	int rc;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_CART, "MPI_Cartdim_get", &rc);

	if (c)
		*ndims = c->ndims;
	return rc;
}

static void coords_of(const struct mpii_comm *c, int rank, int *coords)
{
	for (int i = c->ndims - 1; i >= 0; i--) {
		coords[i] = rank % c->dims[i];
		rank /= c->dims[i];
	}
}

MPII_ALIAS(Cart_coords)
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	int rc, *tmp;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_CART, "MPI_Cart_coords", &rc);

	if (!c)
		return rc;
	if (rank < 0 || rank >= c->size)
		return mpii_err(c, MPI_ERR_RANK, "MPI_Cart_coords");
	tmp = malloc(sizeof(int) * (size_t)c->ndims);
	if (!tmp)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Cart_coords");
	coords_of(c, rank, tmp);
	memcpy(coords, tmp, sizeof(int) * (size_t)(maxdims < c->ndims ? maxdims : c->ndims));
	free(tmp);
	return MPI_SUCCESS;
}

MPII_ALIAS(Cart_get)
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	int rc, n;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_CART, "MPI_Cart_get", &rc);

	if (!c)
		return rc;
	n = maxdims < c->ndims ? maxdims : c->ndims;
	memcpy(dims, c->dims, sizeof(int) * (size_t)n);
	memcpy(periods, c->periods, sizeof(int) * (size_t)n);
	return PMPI_Cart_coords(comm, c->rank, maxdims, coords);
}

MPII_ALIAS(Cart_rank)
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	int rc, r = 0;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_CART, "MPI_Cart_rank", &rc);

	if (!c)
		return rc;
	for (int i = 0; i < c->ndims; i++) {
		int x = coords[i];
		if (c->periods[i])
			x = ((x % c->dims[i]) + c->dims[i]) % c->dims[i];
		else if (x < 0 || x >= c->dims[i])
			return mpii_err(c, MPI_ERR_RANK, "MPI_Cart_rank");
		r = r * c->dims[i] + x;
	}
	*rank = r;
	return MPI_SUCCESS;
}

/* Neighbour of `rank` at offset disp along dir, or MPI_PROC_NULL off a non-periodic edge. */
static int neighbour(const struct mpii_comm *c, const int *me, int dir, int disp)
{
	int r = 0;

	for (int i = 0; i < c->ndims; i++) {
		int x = me[i] + (i == dir ? disp : 0);
		if (c->periods[i])
			x = ((x % c->dims[i]) + c->dims[i]) % c->dims[i];
		else if (x < 0 || x >= c->dims[i])
			return MPI_PROC_NULL;
		r = r * c->dims[i] + x;
	}
	return r;
}

MPII_ALIAS(Cart_shift)
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *source, int *dest)
{
	int rc, *me;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_CART, "MPI_Cart_shift", &rc);

	if (!c)
		return rc;
	if (direction < 0 || direction >= c->ndims)
		return mpii_err(c, MPI_ERR_ARG, "MPI_Cart_shift");
	me = malloc(sizeof(int) * (size_t)c->ndims);
	if (!me)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Cart_shift");
	coords_of(c, c->rank, me);
	*dest = neighbour(c, me, direction, disp);
	*source = neighbour(c, me, direction, -disp);
	free(me);
	return MPI_SUCCESS;
}

MPII_ALIAS(Cart_sub)
int PMPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *out)
{
	int rc, color = 0, key = 0, nd = 0, *me, *dims, *per;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_CART, "MPI_Cart_sub", &rc);

	if (!c)
		return rc;
	me = malloc(sizeof(int) * (size_t)c->ndims * 3);
	if (!me)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Cart_sub");
	dims = me + c->ndims;
	per = dims + c->ndims;
	coords_of(c, c->rank, me);
	for (int i = 0; i < c->ndims; i++) {
		if (remain[i]) {
			key = key * c->dims[i] + me[i];
			dims[nd] = c->dims[i];
			per[nd++] = c->periods[i];
		} else {
			color = color * c->dims[i] + me[i];
		}
	}
	/* no dimension left: like a zero-dimensional MPI_Cart_create, rank 0 alone (as MPICH) */
	if (nd == 0)
		color = c->rank == 0 ? 0 : MPI_UNDEFINED;
	rc = PMPI_Comm_split(comm, color, key, out);
	if (rc == MPI_SUCCESS && *out != MPI_COMM_NULL &&
	    mpii_cart_set(mpii_comm(*out), nd, dims, per) < 0)
		rc = mpii_err(c, MPI_ERR_NO_MEM, "MPI_Cart_sub");
	free(me);
	return rc;
}

MPII_ALIAS(Topo_test)
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
	struct mpii_comm *c = mpii_comm(comm);

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Topo_test");
	*status = c->topo ? c->topo : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
	int color = MPI_UNDEFINED;

	(void)info;
	if (type == MPI_COMM_TYPE_SHARED)
		color = mpii.node;
	else if (type == OMPI_COMM_TYPE_SOCKET || type == OMPI_COMM_TYPE_CORE)
		color = type == OMPI_COMM_TYPE_SOCKET ? mpii.socket : mpii.core;
	else if (type != MPI_UNDEFINED)
		return mpii_err(mpii_comm(comm), MPI_ERR_ARG, "MPI_Comm_split_type");
	return PMPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, out);
}
