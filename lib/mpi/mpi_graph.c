/* lib/mpi/mpi_graph.c: graph topologies, MPI_Cart_map/MPI_Graph_map, copying a topology. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

int mpii_graph_set(struct mpii_comm *c, int nnodes, const int *index, const int *edges)
{
	int ne = nnodes > 0 ? index[nnodes - 1] : 0;
	int *ix = malloc(sizeof(int) * (size_t)(nnodes + 1)),
	    *ed = malloc(sizeof(int) * (size_t)(ne + 1));

	if (!ix || !ed) {
		free(ix);
		free(ed);
		return -1;
	}
	if (nnodes > 0)
		memcpy(ix, index, sizeof(int) * (size_t)nnodes);
	if (ne > 0)
		memcpy(ed, edges, sizeof(int) * (size_t)ne);
	free(c->index);
	free(c->edges);
	c->index = ix;
	c->edges = ed;
	c->nnodes = nnodes;
	c->topo = MPI_GRAPH;
	return 0;
}

int mpii_topo_copy(const struct mpii_comm *from, struct mpii_comm *to)
{
	if (from->topo == MPI_CART)
		return mpii_cart_set(to, from->ndims, from->dims, from->periods);
	if (from->topo == MPI_GRAPH)
		return mpii_graph_set(to, from->nnodes, from->index, from->edges);
	if (from->topo == MPI_DIST_GRAPH)
		return mpii_dgraph_copy(from, to);
	return 0;
}

static int graph_args_ok(int nnodes, const int *index, const int *edges)
{
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i ? index[i - 1] : 0))
			return 0;
	for (int e = 0; nnodes > 0 && e < index[nnodes - 1]; e++)
		if (edges[e] < 0 || edges[e] >= nnodes)
			return 0;
	return 1;
}

MPII_ALIAS(Graph_create)
int PMPI_Graph_create(MPI_Comm old, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *out)
{
	struct mpii_comm *c = mpii_comm(old);
	int rc;

	(void)reorder;
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Graph_create");
	if (nnodes < 0 || nnodes > c->size)
		return mpii_err(c, MPI_ERR_ARG, "MPI_Graph_create");
	if (!graph_args_ok(nnodes, index, edges))
		return mpii_err(c, MPI_ERR_ARG, "MPI_Graph_create");
	rc = PMPI_Comm_split(old, c->rank < nnodes ? 0 : MPI_UNDEFINED, c->rank, out);
	if (rc != MPI_SUCCESS || *out == MPI_COMM_NULL)
		return rc;
	if (mpii_graph_set(mpii_comm(*out), nnodes, index, edges) < 0)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Graph_create");
	return MPI_SUCCESS;
}

MPII_ALIAS(Graphdims_get)
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	int rc;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_GRAPH, "MPI_Graphdims_get", &rc);

	if (!c)
		return rc;
	*nnodes = c->nnodes;
	*nedges = c->nnodes ? c->index[c->nnodes - 1] : 0;
	return MPI_SUCCESS;
}

MPII_ALIAS(Graph_get)
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
	int rc, ne;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_GRAPH, "MPI_Graph_get", &rc);

	if (!c)
		return rc;
	ne = c->nnodes ? c->index[c->nnodes - 1] : 0;
	if (maxindex > 0)
		memcpy(index, c->index,
		       sizeof(int) * (size_t)(maxindex < c->nnodes ? maxindex : c->nnodes));
	if (maxedges > 0)
		memcpy(edges, c->edges, sizeof(int) * (size_t)(maxedges < ne ? maxedges : ne));
	return MPI_SUCCESS;
}

MPII_ALIAS(Graph_neighbors_count)
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *n)
{
	int rc;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_GRAPH, "MPI_Graph_neighbors_count", &rc);

	if (!c)
		return rc;
	if (rank < 0 || rank >= c->nnodes)
		return mpii_err(c, MPI_ERR_RANK, "MPI_Graph_neighbors_count");
	*n = c->index[rank] - (rank ? c->index[rank - 1] : 0);
	return MPI_SUCCESS;
}

MPII_ALIAS(Graph_neighbors)
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxn, int neighbors[])
{
	int rc, first, n;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_GRAPH, "MPI_Graph_neighbors", &rc);

	if (!c)
		return rc;
	if (rank < 0 || rank >= c->nnodes)
		return mpii_err(c, MPI_ERR_RANK, "MPI_Graph_neighbors");
	first = rank ? c->index[rank - 1] : 0;
	n = c->index[rank] - first;
	for (int i = 0; i < n && i < maxn; i++)
		neighbors[i] = c->edges[first + i];
	return MPI_SUCCESS;
}

/* The mapping functions keep the calling order: rank r < the topology's size keeps r. */
MPII_ALIAS(Cart_map)
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
	struct mpii_comm *c = mpii_comm(comm);
	long n = 1;

	(void)periods;
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Cart_map");
	if (ndims < 0)
		return mpii_err(c, MPI_ERR_DIMS, "MPI_Cart_map");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return mpii_err(c, MPI_ERR_DIMS, "MPI_Cart_map");
		n *= dims[i];
	}
	if (n > c->size)
		return mpii_err(c, MPI_ERR_DIMS, "MPI_Cart_map");
	*newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

MPII_ALIAS(Graph_map)
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
	struct mpii_comm *c = mpii_comm(comm);

	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Graph_map");
	if (nnodes < 1 || nnodes > c->size || !graph_args_ok(nnodes, index, edges))
		return mpii_err(c, MPI_ERR_ARG, "MPI_Graph_map");
	*newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
