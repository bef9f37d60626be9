/* tests/mpi/lk_topo.c: graph topologies, MPI_Cart_map/MPI_Graph_map, zero-dimensional Cartesian
 * communicators, balanced MPI_Dims_create, topology kept by MPI_Comm_dup. */
#include "lk_util.h"

/* A ring over all ranks: node i is linked to i - 1 and i + 1 (once when size <= 2). */
static void test_graph(void)
{
	int n = lk_size, index[64], edges[128], ne = 0, t, nn, nedges, cnt, nb[4], ix[64], ed[128];
	MPI_Comm g, d;

	for (int i = 0; i < n; i++) {
		if (n > 1)
			edges[ne++] = (i + 1) % n;
		if (n > 2)
			edges[ne++] = (i + n - 1) % n;
		index[i] = ne;
	}
	MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g);
	LK_CHECK(g != MPI_COMM_NULL, "graph_create gave NULL");
	MPI_Topo_test(g, &t);
	LK_CHECK(t == MPI_GRAPH, "topo_test %d", t);
	MPI_Graphdims_get(g, &nn, &nedges);
	LK_CHECK(nn == n && nedges == ne, "graphdims %d %d", nn, nedges);
	MPI_Graph_get(g, n, ne, ix, ed);
	for (int i = 0; i < n; i++)
		LK_CHECK(ix[i] == index[i], "graph_get index[%d]=%d", i, ix[i]);
	for (int e = 0; e < ne; e++)
		LK_CHECK(ed[e] == edges[e], "graph_get edges[%d]=%d", e, ed[e]);
	MPI_Graph_neighbors_count(g, lk_rank, &cnt);
	LK_CHECK(cnt == (n > 2 ? 2 : n - 1), "neighbors_count %d", cnt);
	MPI_Graph_neighbors(g, lk_rank, 4, nb);
	if (n > 1)
		LK_CHECK(nb[0] == (lk_rank + 1) % n, "neighbors[0]=%d", nb[0]);
	/* a ring exchange over the graph's neighbours */
	if (n > 1) {
		int got = -1;
		MPI_Sendrecv(&lk_rank, 1, MPI_INT, nb[0], 3, &got, 1, MPI_INT,
		             (lk_rank + n - 1) % n, 3, g, MPI_STATUS_IGNORE);
		LK_CHECK(got == (lk_rank + n - 1) % n, "graph ring got %d", got);
	}
	MPI_Comm_dup(g, &d);
	MPI_Topo_test(d, &t);
	MPI_Graphdims_get(d, &nn, &nedges);
	LK_CHECK(t == MPI_GRAPH && nn == n && nedges == ne, "dup lost the graph (%d %d %d)", t, nn,
	         nedges);
	MPI_Comm_free(&d);
	MPI_Comm_free(&g);
	MPI_Topo_test(MPI_COMM_WORLD, &t);
	LK_CHECK(t == MPI_UNDEFINED, "world has topology %d", t);
	/* a graph over one node: only rank 0 is in it */
	index[0] = 0;
	MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &g);
	LK_CHECK((g != MPI_COMM_NULL) == (lk_rank == 0), "one-node graph membership");
	if (g != MPI_COMM_NULL)
		MPI_Comm_free(&g);
}

static void test_maps(void)
{
	int dims[2] = {1, 1}, periods[2] = {0, 0}, r, index[1] = {0}, edges[1] = {0};

	MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &r);
	LK_CHECK(r == (lk_rank == 0 ? 0 : MPI_UNDEFINED), "cart_map rank %d", r);
	dims[0] = lk_size;
	MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &r);
	LK_CHECK(r >= 0 && r < lk_size, "cart_map over all %d", r);
	MPI_Graph_map(MPI_COMM_WORLD, 1, index, edges, &r);
	LK_CHECK(r == (lk_rank == 0 ? 0 : MPI_UNDEFINED), "graph_map rank %d", r);
}

static void test_cart_zero(void)
{
	MPI_Comm c, sub;
	int dims[1], periods[1] = {1}, remain[1] = {0}, nd = -1, sz;

	MPI_Cart_create(MPI_COMM_WORLD, 0, dims, periods, 0, &c);
	LK_CHECK((c != MPI_COMM_NULL) == (lk_rank == 0), "0-d cart membership");
	if (c != MPI_COMM_NULL) {
		MPI_Comm_size(c, &sz);
		MPI_Cartdim_get(c, &nd);
		LK_CHECK(sz == 1 && nd == 0, "0-d cart size %d ndims %d", sz, nd);
		MPI_Comm_free(&c);
	}
	dims[0] = lk_size;
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
	MPI_Cart_sub(c, remain, &sub);
	LK_CHECK((sub != MPI_COMM_NULL) == (lk_rank == 0), "cart_sub to 0-d membership");
	if (sub != MPI_COMM_NULL) {
		MPI_Comm_size(sub, &sz);
		LK_CHECK(sz == 1, "cart_sub to 0-d size %d", sz);
		MPI_Comm_free(&sub);
	}
	MPI_Comm_free(&c);
}

static void test_dims(void)
{
	static const int cases[][5] = {
	    /* n, ndims, expected dims (non-increasing, most balanced) */
	    {72, 2, 9, 8, 0}, {180, 2, 15, 12, 0}, {1323, 2, 49, 27, 0},
	    {64, 3, 4, 4, 4}, {30, 3, 5, 3, 2},    {12, 3, 3, 2, 2},
	    {7, 2, 7, 1, 0},  {24, 2, 6, 4, 0},    {1, 3, 1, 1, 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int d[3] = {0, 0, 0};
		MPI_Dims_create(cases[i][0], cases[i][1], d);
		for (int k = 0; k < cases[i][1]; k++)
			LK_CHECK(d[k] == cases[i][2 + k], "dims_create(%d, %d)[%d]=%d want %d",
			         cases[i][0], cases[i][1], k, d[k], cases[i][2 + k]);
	}
	int d[2] = {0, 3};
	MPI_Dims_create(24, 2, d);
	LK_CHECK(d[0] == 8 && d[1] == 3, "dims_create with a fixed dim: %d %d", d[0], d[1]);
	/* two splits with the same spread: MPICH's choice (the larger smallest factor) */
	int d4[4] = {0, 0, 0, 0};
	MPI_Dims_create(590520, 4, d4);
	LK_CHECK(d4[0] == 38 && d4[1] == 37 && d4[2] == 21 && d4[3] == 20,
	         "dims_create(590520, 4): %d %d %d %d", d4[0], d4[1], d4[2], d4[3]);
}

/* MPI_UNWEIGHTED through a volatile: gcc 12 takes the constant for an empty array and warns. */
static int *volatile unweighted;

/* Weight of the edge a -> b of a test graph (0: no edge); self edges included. */
static int edge_w(int a, int b)
{
	return (a + b) % 3 ? 0 : 10 * a + b + 1;
}

/* The neighbours of this rank in c must be exactly those of edge_w (order free). */
static void check_dgraph(MPI_Comm c, int weighted, const char *what)
{
	int in = -1, out = -1, w = -1, st = -1, nin = 0, nout = 0;
	int *src = malloc(sizeof(int) * (size_t)lk_size * 4), *sw = src + lk_size;
	int *dst = sw + lk_size, *dw = dst + lk_size;

	MPI_Topo_test(c, &st);
	MPI_Dist_graph_neighbors_count(c, &in, &out, &w);
	for (int j = 0; j < lk_size; j++) {
		nin += edge_w(j, lk_rank) != 0;
		nout += edge_w(lk_rank, j) != 0;
	}
	LK_CHECK(st == MPI_DIST_GRAPH && in == nin && out == nout && w == weighted,
	         "%s: topo %d in %d/%d out %d/%d weighted %d", what, st, in, nin, out, nout, w);
	MPI_Dist_graph_neighbors(c, in, src, weighted ? sw : unweighted, out, dst,
	                         weighted ? dw : unweighted);
	for (int i = 0; i < in && i < nin; i++)
		LK_CHECK(edge_w(src[i], lk_rank) && (!weighted || sw[i] == edge_w(src[i], lk_rank)),
		         "%s: source %d weight %d", what, src[i], sw[i]);
	for (int i = 0; i < out && i < nout; i++)
		LK_CHECK(edge_w(lk_rank, dst[i]) && (!weighted || dw[i] == edge_w(lk_rank, dst[i])),
		         "%s: destination %d weight %d", what, dst[i], dw[i]);
	free(src);
}

static void test_dist_graph(void)
{
	int n = lk_size, *src = malloc(sizeof(int) * (size_t)n * (4 + 2 * n)), *sw = src + n;
	int *deg = sw + n, *one = deg + n, *dst = one + n, *dw = dst + n * n, in = 0, out = 0;
	MPI_Comm c, dup;

	for (int j = 0; j < n; j++) {
		if (edge_w(j, lk_rank))
			src[in] = j, sw[in++] = edge_w(j, lk_rank);
		if (edge_w(lk_rank, j))
			dst[out] = j, dw[out++] = edge_w(lk_rank, j);
	}
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, src, sw, out, dst, dw, MPI_INFO_NULL, 0,
	                               &c);
	check_dgraph(c, 1, "adjacent");
	MPI_Comm_dup(c, &dup);
	check_dgraph(dup, 1, "dup of adjacent");
	MPI_Comm_free(&dup);
	MPI_Comm_free(&c);
	unweighted = MPI_UNWEIGHTED;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, src, unweighted, out, dst, unweighted,
	                               MPI_INFO_NULL, 0, &c);
	check_dgraph(c, 0, "adjacent unweighted");
	MPI_Comm_free(&c);
	/* general form, each rank naming its incoming edges (one source each) */
	for (int i = 0; i < in; i++)
		deg[i] = 1, one[i] = lk_rank;
	MPI_Dist_graph_create(MPI_COMM_WORLD, in, src, deg, one, sw, MPI_INFO_NULL, 1, &c);
	check_dgraph(c, 1, "create from incoming edges");
	MPI_Comm_free(&c);
	/* general form, rank 0 naming every edge */
	int k = 0, ns = 0;
	for (int a = 0; lk_rank == 0 && a < n; a++) {
		deg[ns] = 0;
		for (int b = 0; b < n; b++)
			if (edge_w(a, b))
				dst[k] = b, dw[k++] = edge_w(a, b), deg[ns]++;
		src[ns++] = a;
	}
	MPI_Dist_graph_create(MPI_COMM_WORLD, ns, src, deg, dst, dw, MPI_INFO_NULL, 0, &c);
	check_dgraph(c, 1, "create from rank 0");
	MPI_Comm_free(&c);
	free(src);
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_topo");
	if (lk_size > 64) {
		if (lk_rank == 0)
			printf("lk_topo: at most 64 ranks\n");
		MPI_Finalize();
		return 1;
	}
	test_graph();
	test_maps();
	test_cart_zero();
	test_dims();
	test_dist_graph();
	return lk_finish();
}
