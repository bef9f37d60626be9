/* lib/mpi/mpi_hier.c: node-aware barrier, bcast, reduce, allreduce and allgather (see mpii.h).
 *
 * A communicator that spans nodes gets two private parts, made without any communication from
 * the job's node map (PMI_process_mapping, read once at MPI_Init): `local`, the ranks of c on
 * this node in the order of c, and `leaders`, the lowest rank of c on each node in the order of
 * their lowest ranks (only the leaders hold it). The parts carry their own context ids (c's id
 * with bit 16 or 17 set, doc/PROTOCOL-mpi-wire.md), so their messages never match c's or each
 * other's, and they run the flat algorithms of mpi_coll.c. Only the leaders' step crosses the
 * network: nodes - 1 messages for a bcast or a reduce, the leaders' own pattern for a barrier,
 * an allreduce or an allgather, where the flat algorithms would send about as many as there are
 * ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"
#include "pmi.h"

#define CTX_LOCAL   0x10000u
#define CTX_LEADERS 0x20000u

struct mpii_hier {
	struct mpii_comm *c;     /* the communicator this belongs to */
	struct mpii_comm *local; /* ranks of c on my node; local rank 0 is the node's leader */
	struct mpii_comm
	    *leaders;       /* one rank of c per node, node i as rank i; NULL unless I lead */
	int *node;          /* per rank of c: its node, numbered 0.. by lowest rank */
	int *lrank;         /* per rank of c: its rank inside its node's part */
	int nnodes, *nsize; /* nodes, and the ranks of c on each */
};

static int enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("LAMKIT_COLL_HIER");
		on = !(e && strcmp(e, "0") == 0);
	}
	/* a job that survives failed ranks: flat algorithms, whose every wait is on a message (a
	 * node's ranks waiting in shared memory for a leader that returned an error would not
	 * learn of it) */
	return on && !mpii.ft;
}

/* A private part of c over the ranks world[0..n) of the job (taken over), me its rank there. */
static struct mpii_comm *part(const struct mpii_comm *c, uint32_t bit, int n, int *world)
{
	struct mpii_group *g = mpii_group_new(n, world);
	struct mpii_comm *p = g ? calloc(1, sizeof(*p)) : NULL;

	if (!p) {
		mpii_group_release(g);
		return NULL;
	}
	p->handle = MPI_COMM_NULL; /* not in the handle table: never seen by the user */
	p->refs = 1;
	p->ctx = c->ctx | bit;
	p->rank = g->rank;
	p->size = n;
	p->grp = g;
	p->errh = c->errh;
	p->hier_state = -1;
	return p;
}

void mpii_hier_free(struct mpii_hier *h)
{
	if (!h)
		return;
	mpii_comm_release(h->local);
	mpii_comm_release(h->leaders);
	free(h->node);
	free(h->lrank);
	free(h->nsize);
	free(h);
}

/* 1 with *out set, 0 when the flat algorithms apply, -1 when out of memory. */
static int build(struct mpii_comm *c, struct mpii_hier **out)
{
	int n = c->size, nn = 0, nl = 0;
	int *dense = malloc(sizeof(int) * (size_t)mpii.nwnode);
	struct mpii_hier *h = calloc(1, sizeof(*h));
	int *lw = NULL, *gw = NULL, rc = -1;

	if (!dense || !h || !(h->node = malloc(sizeof(int) * (size_t)n)) ||
	    !(h->lrank = malloc(sizeof(int) * (size_t)n)))
		goto fail;
	for (int i = 0; i < mpii.nwnode; i++)
		dense[i] = -1;
	int *count = NULL;
	for (int r = 0; r < n; r++) {
		int w = c->grp->world[r];
		if (w < 0 || w >= mpii.size) { /* a process of another job: no map for it */
			rc = 0;
			goto fail;
		}
		int *x = &dense[mpii.wnode[w]];
		if (*x < 0)
			*x = nn++;
		h->node[r] = *x;
	}
	if (nn < 2 || nn == n) { /* one node, or one rank per node: nothing to gain */
		rc = 0;
		goto fail;
	}
	count = calloc((size_t)nn, sizeof(int));
	gw = malloc(sizeof(int) * (size_t)nn);
	lw = malloc(sizeof(int) * (size_t)n);
	if (!count || !gw || !lw) {
		free(count);
		goto fail;
	}
	for (int r = 0; r < n; r++) {
		if (count[h->node[r]] == 0)
			gw[h->node[r]] = c->grp->world[r];
		h->lrank[r] = count[h->node[r]]++;
		if (h->node[r] == h->node[c->rank])
			lw[nl++] = c->grp->world[r];
	}
	h->nsize = count;
	h->nnodes = nn;
	h->c = c;
	if (!(h->local = part(c, CTX_LOCAL, nl, lw))) {
		lw = NULL;
		goto fail;
	}
	lw = NULL;
	if (h->lrank[c->rank] == 0) {
		h->leaders = part(c, CTX_LEADERS, nn, gw);
		gw = NULL;
		if (!h->leaders)
			goto fail;
	}
	free(gw);
	free(dense);
	*out = h;
	return 1;
fail:
	free(lw);
	free(gw);
	free(dense);
	mpii_hier_free(h);
	return rc;
}

/* The node of every job rank, read from the launcher the first time a communicator of more
 * than two ranks asks (not in MPI_Init: a job without such a collective never pays the PMI
 * round trip). NULL when the launcher gives no mapping. */
const int *mpii_node_map(void)
{
	static int asked;

	if (!asked) {
		int *m = malloc(sizeof(int) * (size_t)mpii.size), max = -1;
		asked = 1;
		if (m && PMI_Topo_node_map(m, mpii.size) == PMI_SUCCESS) {
			for (int r = 0; r < mpii.size; r++)
				if (m[r] > max)
					max = m[r];
		}
		if (max >= 0) {
			mpii.wnode = m;
			mpii.nwnode = max + 1;
		} else
			free(m);
	}
	return mpii.wnode;
}

void mpii_hier_fini(void)
{
	free(mpii.wnode);
	mpii.wnode = NULL;
}

struct mpii_hier *mpii_hier_of(struct mpii_comm *c)
{
	if (c->hier_state == 0) {
		c->hier_state = -1;
		if (!c->inter && c->size > 2 && enabled() && mpii_node_map()) {
			int rc = build(c, &c->hier);
			/* every rank decides alike from the same map; running out of memory on
			 * one rank alone would leave it flat while the others are not (a hang) */
			if (rc < 0) {
				fprintf(stderr,
				        "lamkit MPI: out of memory in a collective of rank %d\n",
				        mpii.rank);
				PMI_Abort(1, "out of memory");
			}
			if (rc > 0)
				c->hier_state = 1;
		}
	}
	return c->hier_state > 0 ? c->hier : NULL;
}

int mpii_hier_barrier(struct mpii_hier *h)
{
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);
	struct mpii_comm *l = h->local;
	int rc = MPI_SUCCESS;

	if (l->rank != 0) {
		rc = mpii_send(NULL, 0, b, 0, 1, l, 1, MODE_STD);
		return rc == MPI_SUCCESS ? mpii_recv(NULL, 0, b, 0, 2, l, 1, NULL) : rc;
	}
	for (int i = 1; i < l->size && rc == MPI_SUCCESS; i++)
		rc = mpii_recv(NULL, 0, b, MPI_ANY_SOURCE, 1, l, 1, NULL);
	if (rc == MPI_SUCCESS)
		rc = mpii_barrier(h->leaders);
	for (int i = 1; i < l->size && rc == MPI_SUCCESS; i++)
		rc = mpii_send(NULL, 0, b, i, 2, l, 1, MODE_STD);
	return rc;
}

int mpii_hier_bcast(struct mpii_hier *h, void *buf, int count, struct mpii_dtype *d, int root)
{
	int rn = h->node[root], mine = h->node[h->c->rank] == rn, rc = MPI_SUCCESS;

	/* the root's node first, from the root itself (its leader is then ready to pass it on) */
	if (mine)
		rc = mpii_bcast(buf, count, d, h->lrank[root], h->local);
	if (rc == MPI_SUCCESS && h->leaders)
		rc = mpii_bcast(buf, count, d, rn, h->leaders);
	if (rc == MPI_SUCCESS && !mine)
		rc = mpii_bcast(buf, count, d, 0, h->local);
	return rc;
}

int mpii_hier_reduce(struct mpii_hier *h, const void *sbuf, void *rbuf, int count,
                     struct mpii_dtype *d, MPI_Op op, int root, struct mpii_comm *c)
{
	const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* in place: only at the root */
	int rn = h->node[root], rc;
	char *acc = NULL;
	void *mem = NULL;

	if (h->leaders && !(mem = mpii_tmpbuf(d, count, &acc)))
		return MPI_ERR_NO_MEM;
	/* each node's sum at its leader; then the leaders' at the root's leader */
	rc = mpii_reduce_flat(in, acc, count, d, op, 0, h->local);
	if (rc == MPI_SUCCESS && h->leaders)
		rc = mpii_reduce_flat(acc, c->rank == root ? rbuf : acc, count, d, op, rn,
		                      h->leaders);
	if (rc == MPI_SUCCESS && h->lrank[root] != 0 && h->node[c->rank] == rn) {
		if (c->rank == root)
			rc = mpii_recv(rbuf, count, d, 0, 3, h->local, 1, NULL);
		else if (h->leaders)
			rc = mpii_send(acc, count, d, h->lrank[root], 3, h->local, 1, MODE_STD);
	}
	mpii_tmpbuf_free(mem);
	return rc;
}

int mpii_hier_allreduce(struct mpii_hier *h, const void *sbuf, void *rbuf, int count,
                        struct mpii_dtype *d, MPI_Op op)
{
	int rc =
	    mpii_reduce_flat(sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, d, op, 0, h->local);

	if (rc == MPI_SUCCESS && h->leaders)
		rc = mpii_allreduce(MPI_IN_PLACE, rbuf, count, d, op, h->leaders);
	if (rc == MPI_SUCCESS)
		rc = mpii_bcast(rbuf, count, d, 0, h->local);
	return rc;
}

int mpii_hier_allgather(struct mpii_hier *h, const void *sbuf, int scount, struct mpii_dtype *sd,
                        void *rbuf, int rcount, struct mpii_dtype *rd)
{
	struct mpii_comm *c = h->c, *l = h->local;
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);
	size_t sz = rd->size * (size_t)rcount; /* packed bytes of one rank */
	int n = c->size, me = c->rank, rc = MPI_SUCCESS;
	int *off = malloc(sizeof(int) * 2 * (size_t)h->nnodes);
	char *all = malloc(sz * (size_t)n + 1);

	if (!off || !all) {
		free(off);
		free(all);
		return MPI_ERR_NO_MEM;
	}
	/* everything packed, node by node, each node's ranks in order: node i's at off[i] */
	for (int i = 0, o = 0; i < h->nnodes; i++) {
		off[i] = o;
		off[h->nnodes + i] = h->nsize[i] * (int)sz;
		o += off[h->nnodes + i];
	}
	char *mine = all + off[h->node[me]];
	if (sbuf == MPI_IN_PLACE)
		mpii_pack(rd, rcount, (char *)rbuf + (MPI_Aint)me * rcount * rd->extent, 0,
		          mine + (size_t)l->rank * sz, sz);
	else
		mpii_pack(sd, scount, sbuf, 0, mine + (size_t)l->rank * sz, sz);
	if (l->rank != 0) {
		rc = mpii_send(mine + (size_t)l->rank * sz, (int)sz, b, 0, 4, l, 1, MODE_STD);
	} else {
		for (int i = 1; i < l->size && rc == MPI_SUCCESS; i++)
			rc = mpii_recv(mine + (size_t)i * sz, (int)sz, b, i, 4, l, 1, NULL);
		if (rc == MPI_SUCCESS)
			rc = mpii_allgatherv(MPI_IN_PLACE, 0, b, all, off + h->nnodes, off, 0, b,
			                     h->leaders);
	}
	if (rc == MPI_SUCCESS)
		rc = mpii_bcast(all, (int)(sz * (size_t)n), b, 0, l);
	for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
		if (r != me || sbuf != MPI_IN_PLACE)
			mpii_unpack(rd, rcount, (char *)rbuf + (MPI_Aint)r * rcount * rd->extent, 0,
			            all + off[h->node[r]] + (size_t)h->lrank[r] * sz, sz);
	free(off);
	free(all);
	return rc;
}
