/* lib/mpi/mpi_dgraph.c: distributed graph topologies (MPI-2.2 MPI_Dist_graph_*). */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

/* A distributed graph keeps, in the communicator's graph arrays, index = {indegree, outdegree,
 * weighted} and edges = sources, source weights, destinations, destination weights. */
static int dgraph_set(struct mpii_comm *c, int in, const int *src, const int *sw, int out,
                      const int *dst, const int *dw, int weighted)
{
	int *ix = malloc(sizeof(int) * 3), *ed = malloc(sizeof(int) * (size_t)(2 * (in + out) + 1));

	if (!ix || !ed) {
		free(ix);
		free(ed);
		return -1;
	}
	ix[0] = in;
	ix[1] = out;
	ix[2] = weighted;
	for (int i = 0; i < in; i++) {
		ed[i] = src[i];
		ed[in + i] = weighted && sw ? sw[i] : 1;
	}
	for (int i = 0; i < out; i++) {
		ed[2 * in + i] = dst[i];
		ed[2 * in + out + i] = weighted && dw ? dw[i] : 1;
	}
	free(c->index);
	free(c->edges);
	c->index = ix;
	c->edges = ed;
	c->nnodes = 3;
	c->topo = MPI_DIST_GRAPH;
	return 0;
}

int mpii_dgraph_copy(const struct mpii_comm *from, struct mpii_comm *to)
{
	const int *ix = from->index, *ed = from->edges;
	int in = ix[0], out = ix[1];

	return dgraph_set(to, in, ed, ed + in, out, ed + 2 * in, ed + 2 * in + out, ix[2]);
}

static int ranks_ok(int n, const int *r, int size)
{
	for (int i = 0; i < n; i++)
		if (r[i] < 0 || r[i] >= size)
			return 0;
	return 1;
}

/* The new communicator (a plain copy of old's group, as for the other topologies) with the
 * graph attached. MPI code. */
static int dgraph_comm(struct mpii_comm *c, int in, const int *src, const int *sw, int out,
                       const int *dst, const int *dw, int weighted, MPI_Comm *newc, const char *fn)
{
	int rc = PMPI_Comm_split(c->handle, 0, c->rank, newc);

	if (rc != MPI_SUCCESS)
		return rc;
	if (dgraph_set(mpii_comm(*newc), in, src, sw, out, dst, dw, weighted) < 0) {
		PMPI_Comm_free(newc);
		return mpii_err(c, MPI_ERR_NO_MEM, fn);
	}
	return MPI_SUCCESS;
}

MPII_ALIAS(Dist_graph_create_adjacent)
int PMPI_Dist_graph_create_adjacent(MPI_Comm old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *out)
{
	static const char fn[] = "MPI_Dist_graph_create_adjacent";
	struct mpii_comm *c = mpii_comm(old);

	(void)info;
	(void)reorder;
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, fn);
	if (indegree < 0 || outdegree < 0 || !ranks_ok(indegree, sources, c->size) ||
	    !ranks_ok(outdegree, destinations, c->size))
		return mpii_err(c, MPI_ERR_ARG, fn);
	return dgraph_comm(c, indegree, sources, sourceweights, outdegree, destinations,
	                   destweights, sourceweights != MPI_UNWEIGHTED, out, fn);
}

/* Every edge s -> d named here, as records {0 = out-edge of s, d, w} for s and {1 = in-edge
 * of d, s, w} for d, grouped by the rank that keeps them. *sc: ints per rank. */
static int *edge_records(int n, const int *srcs, const int *deg, const int *dst, const int *w,
                         int size, int *sc, int *sd)
{
	int ne = 0, *rec, *fill = calloc((size_t)size, sizeof(int));

	for (int i = 0; i < n; i++)
		ne += deg[i];
	rec = malloc(sizeof(int) * (size_t)(6 * ne + 1));
	if (!rec || !fill) {
		free(rec);
		free(fill);
		return NULL;
	}
	memset(sc, 0, sizeof(int) * (size_t)size);
	for (int i = 0, e = 0; i < n; i++)
		for (int k = 0; k < deg[i]; k++, e++) {
			sc[srcs[i]] += 3;
			sc[dst[e]] += 3;
		}
	for (int r = 0; r < size; r++)
		sd[r] = r ? sd[r - 1] + sc[r - 1] : 0;
	for (int i = 0, e = 0; i < n; i++)
		for (int k = 0; k < deg[i]; k++, e++) {
			int s = srcs[i], d = dst[e], wt = w != MPI_UNWEIGHTED ? w[e] : 1;
			int *a = rec + sd[s] + fill[s];
			a[0] = 0, a[1] = d, a[2] = wt;
			fill[s] += 3;
			a = rec + sd[d] + fill[d]; /* after the first: s may be d */
			a[0] = 1, a[1] = s, a[2] = wt;
			fill[d] += 3;
		}
	free(fill);
	return rec;
}

static int args_ok(int n, const int *srcs, const int *deg, const int *dst, int size)
{
	int ne = 0;

	if (n < 0 || !ranks_ok(n, srcs, size))
		return 0;
	for (int i = 0; i < n; i++) {
		if (deg[i] < 0)
			return 0;
		ne += deg[i];
	}
	return ranks_ok(ne, dst, size);
}

/* Split received records into in- and out-edges and make the communicator. MPI code. */
static int from_records(struct mpii_comm *c, const int *rec, int nrec, int weighted, MPI_Comm *out)
{
	int *e = malloc(sizeof(int) * (size_t)(2 * nrec + 1)), in = 0, o = 0, rc;
	int *src, *sw, *dst, *dw;

	if (!e)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Dist_graph_create");
	src = e;
	sw = e + nrec;
	for (int i = 0; i < nrec; i++)
		in += rec[3 * i] == 1;
	dst = e + in;
	dw = sw + in;
	for (int i = 0, k = 0; i < nrec; i++) {
		const int *r = rec + 3 * i;
		if (r[0] == 1) {
			src[k] = r[1];
			sw[k++] = r[2];
		} else {
			dst[o] = r[1];
			dw[o++] = r[2];
		}
	}
	rc = dgraph_comm(c, in, src, sw, o, dst, dw, weighted, out, "MPI_Dist_graph_create");
	free(e);
	return rc;
}

MPII_ALIAS(Dist_graph_create)
int PMPI_Dist_graph_create(MPI_Comm old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *out)
{
	static const char fn[] = "MPI_Dist_graph_create";
	struct mpii_comm *c = mpii_comm(old);
	int *cnt, *rec = NULL, *got = NULL, rc = MPI_ERR_NO_MEM, nget = 0;

	(void)info;
	(void)reorder;
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, fn);
	if (!args_ok(n, sources, degrees, destinations, c->size))
		return mpii_err(c, MPI_ERR_ARG, fn);
	cnt = malloc(sizeof(int) * (size_t)(4 * c->size)); /* send counts, displs; receive */
	if (cnt)
		rec = edge_records(n, sources, degrees, destinations, weights, c->size, cnt,
		                   cnt + c->size);
	if (rec)
		rc = PMPI_Alltoall(cnt, 1, MPI_INT, cnt + 2 * c->size, 1, MPI_INT, old);
	for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++) {
		cnt[3 * c->size + r] = nget;
		nget += cnt[2 * c->size + r];
	}
	if (rc == MPI_SUCCESS && !(got = malloc(sizeof(int) * (size_t)(nget + 1))))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = PMPI_Alltoallv(rec, cnt, cnt + c->size, MPI_INT, got, cnt + 2 * c->size,
		                    cnt + 3 * c->size, MPI_INT, old);
	if (rc == MPI_SUCCESS)
		rc = from_records(c, got, nget / 3, weights != MPI_UNWEIGHTED, out);
	free(cnt);
	free(rec);
	free(got);
	return rc == MPI_SUCCESS ? rc : mpii_err(c, rc, fn);
}

MPII_ALIAS(Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
	int rc;
	struct mpii_comm *c =
	    mpii_topo_comm(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors_count", &rc);

	if (!c)
		return rc;
	*indegree = c->index[0];
	*outdegree = c->index[1];
	*weighted = c->index[2];
	return MPI_SUCCESS;
}

MPII_ALIAS(Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxin, int sources[], int sourceweights[],
                              int maxout, int destinations[], int destweights[])
{
	int rc, in, out;
	struct mpii_comm *c = mpii_topo_comm(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors", &rc);
	const int *ed;

	if (!c)
		return rc;
	in = c->index[0];
	out = c->index[1];
	ed = c->edges;
	for (int i = 0; i < in && i < maxin; i++) {
		sources[i] = ed[i];
		if (c->index[2] && sourceweights != MPI_UNWEIGHTED)
			sourceweights[i] = ed[in + i];
	}
	for (int i = 0; i < out && i < maxout; i++) {
		destinations[i] = ed[2 * in + i];
		if (c->index[2] && destweights != MPI_UNWEIGHTED)
			destweights[i] = ed[2 * in + out + i];
	}
	return MPI_SUCCESS;
}
