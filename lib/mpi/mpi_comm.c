/* lib/mpi/mpi_comm.c: communicators: world/self, context ids, dup/split/create/free, intercomms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define NCTX_WORDS MPII_NCTX_WORDS /* 2048 ids; id i uses ctx 2i (pt2pt), 2i+1 (collectives) */

static uint64_t ctx_free[NCTX_WORDS];

static struct mpii_comm *comm_new(struct mpii_group *g, struct mpii_group *rg, uint32_t ctx)
{
	struct mpii_comm *c = calloc(1, sizeof(*c));
	int h;

	if (!c || (h = mpii_tab_add(&mpii.comms, c)) < 0) {
		free(c);
		return NULL;
	}
	c->handle = h;
	c->refs = 1;
	c->ctx = ctx;
	c->grp = g;
	c->rgrp = rg;
	c->inter = rg != NULL;
	c->rank = g->rank;
	c->size = g->size;
	c->errh = MPI_ERRORS_ARE_FATAL;
	mpii_dyn_hold(c, 1);
	return c;
}

static struct mpii_group *group_of(int n, const int *ranks)
{
	int *w = malloc(sizeof(int) * (size_t)(n + 1));

	if (!w)
		return NULL;
	memcpy(w, ranks, sizeof(int) * (size_t)n);
	return mpii_group_new(n, w);
}

int mpii_comm_init(void)
{
	struct mpii_group *gw, *gs;
	struct mpii_comm *w, *s;
	int *all = malloc(sizeof(int) * (size_t)mpii.size);

	if (!all)
		return -1;
	for (int i = 0; i < mpii.size; i++)
		all[i] = i;
	memset(ctx_free, 0xff, sizeof(ctx_free));
	ctx_free[0] &= ~(uint64_t)7; /* world, self, the accept/connect handshake */
	mpii.comms.first = 1;
	gw = mpii_group_new(mpii.size, all);
	gs = group_of(1, &mpii.rank);
	if (!gw || !gs)
		return -1;
	w = comm_new(gw, NULL, 0);
	s = comm_new(gs, NULL, 2);
	if (!w || !s || w->handle != MPI_COMM_WORLD || s->handle != MPI_COMM_SELF)
		return -1;
	mpii.comms.first = 3;
	strcpy(w->name, "MPI_COMM_WORLD");
	strcpy(s->name, "MPI_COMM_SELF");
	return 0;
}

static void comm_destroy(struct mpii_comm *c)
{
	mpii_attr_clear_comm(c);
	mpii_dyn_hold(c, -1);
	if (c->handle == mpii.parent && c->handle != MPI_COMM_NULL)
		mpii.parent = MPI_COMM_NULL;
	if (c->handle > MPI_COMM_SELF)
		mpii_ctx_free(c->ctx);
	mpii_group_release(c->grp);
	mpii_group_release(c->rgrp);
	mpii_comm_release(c->uni);
	mpii_hier_free(c->hier);
	mpii_cshm_free(c->cshm);
	if (mpii_tab_get(&mpii.comms, c->handle) == c)
		mpii_tab_del(&mpii.comms, c->handle);
	free(c->dims);
	free(c->periods);
	free(c->index);
	free(c->edges);
	free(c);
}

void mpii_comm_release(struct mpii_comm *c)
{
	if (c && --c->refs == 0)
		comm_destroy(c);
}

void mpii_comm_fini(void)
{
	for (int h = mpii.comms.n - 1; h > 0; h--)
		if (mpii.comms.v[h])
			comm_destroy(mpii.comms.v[h]);
	free(mpii.comms.v);
	memset(&mpii.comms, 0, sizeof(mpii.comms));
	for (int h = 2; h < mpii.groups.n; h++) {
		struct mpii_group *g = mpii.groups.v[h];
		if (g) {
			free(g->world);
			free(g);
		}
	}
	free(mpii.groups.v);
	memset(&mpii.groups, 0, sizeof(mpii.groups));
	mpii_dyn_fini();
}

/* ---- context ids ---- */

static uint32_t lowest(const uint64_t *mask)
{
	for (int i = 0; i < NCTX_WORDS; i++)
		if (mask[i])
			return (uint32_t)(i * 64 + __builtin_ctzll(mask[i]));
	return 0;
}

static void claim(uint32_t id)
{
	ctx_free[id / 64] &= ~((uint64_t)1 << (id % 64));
}

uint32_t mpii_ctx_alloc(struct mpii_comm *parent)
{
	uint64_t mask[NCTX_WORDS];
	uint32_t id;

	if (mpii_allreduce(ctx_free, mask, NCTX_WORDS, mpii_dt(MPI_UINT64_T), MPI_BAND, parent) !=
	    MPI_SUCCESS)
		return 0;
	id = lowest(mask);
	if (id)
		claim(id);
	return id * 2;
}

int mpii_ctx_mask(struct mpii_comm *c, uint64_t *mask)
{
	return mpii_allreduce(ctx_free, mask, NCTX_WORDS, mpii_dt(MPI_UINT64_T), MPI_BAND, c);
}

void mpii_ctx_mine(uint64_t *mask)
{
	memcpy(mask, ctx_free, sizeof(ctx_free));
}

uint32_t mpii_ctx_lowest(const uint64_t *mask)
{
	return lowest(mask);
}

void mpii_ctx_claim(uint32_t id)
{
	claim(id);
}

void mpii_ctx_free(uint32_t ctx)
{
	uint32_t id = ctx / 2;

	if (id > 1 && id < NCTX_WORDS * 64)
		ctx_free[id / 64] |= (uint64_t)1 << (id % 64);
}

/* ---- queries ---- */

#define GET_COMM(c, h, fn)                                                                         \
	struct mpii_comm *c = mpii_comm(h);                                                        \
	if (!c)                                                                                    \
	return mpii_err(NULL, MPI_ERR_COMM, fn)

MPII_ALIAS(Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	GET_COMM(c, comm, "MPI_Comm_size");
	*size = c->size;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	GET_COMM(c, comm, "MPI_Comm_rank");
	*rank = c->rank;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	GET_COMM(c, comm, "MPI_Comm_group");
	c->grp->refs++;
	*group = c->grp->handle;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	GET_COMM(c, comm, "MPI_Comm_remote_group");
	if (!c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Comm_remote_group");
	c->rgrp->refs++;
	*group = c->rgrp->handle;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_remote_size)
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	GET_COMM(c, comm, "MPI_Comm_remote_size");
	if (!c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Comm_remote_size");
	*size = c->rgrp->size;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	GET_COMM(c, comm, "MPI_Comm_test_inter");
	*flag = c->inter;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
	GET_COMM(c, comm, "MPI_Comm_set_name");
	snprintf(c->name, sizeof(c->name), "%s", name);
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *len)
{
	GET_COMM(c, comm, "MPI_Comm_get_name");
	*len = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_compare)
int PMPI_Comm_compare(MPI_Comm c1, MPI_Comm c2, int *result)
{
	int rc;

	GET_COMM(a, c1, "MPI_Comm_compare");
	GET_COMM(b, c2, "MPI_Comm_compare");
	if (a == b) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	if (a->inter != b->inter) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	PMPI_Group_compare(a->grp->handle, b->grp->handle, &rc);
	if (rc != MPI_UNEQUAL && a->inter) {
		int rr;
		PMPI_Group_compare(a->rgrp->handle, b->rgrp->handle, &rr);
		if (rr == MPI_UNEQUAL || (rr == MPI_SIMILAR))
			rc = rr;
	}
	*result = rc == MPI_IDENT ? MPI_CONGRUENT : rc;
	return MPI_SUCCESS;
}

/* ---- constructors ---- */

int mpii_comm_finish(struct mpii_comm *parent, struct mpii_group *g, struct mpii_group *rg,
                     uint32_t ctx, MPI_Comm *out, const char *fn)
{
	struct mpii_comm *c = comm_new(g, rg, ctx);

	if (!c) {
		mpii_ctx_free(ctx);
		mpii_group_release(g);
		mpii_group_release(rg);
		return fn ? mpii_err(parent, MPI_ERR_NO_MEM, fn) : MPI_ERR_NO_MEM;
	}
	c->errh = parent->errh;
	if (rg && parent->inter) /* dup, split, create of an intercommunicator: same sides */
		c->order = parent->order;
	*out = c->handle;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	struct mpii_comm *nc;
	uint32_t ctx;
	int rc;

	GET_COMM(c, comm, "MPI_Comm_dup");
	*out = MPI_COMM_NULL;
	if (c->inter) {
		rc = mpii_inter_dup(c, out);
	} else {
		ctx = mpii_ctx_alloc(c);
		if (!ctx)
			return mpii_err(c, MPI_ERR_INTERN, "MPI_Comm_dup");
		c->grp->refs++;
		rc = mpii_comm_finish(c, c->grp, NULL, ctx, out, NULL);
	}
	if (rc != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Comm_dup");
	nc = mpii_comm(*out);
	rc = MPI_SUCCESS;
	if (mpii_topo_copy(c, nc) < 0)
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = mpii_attr_copy_comm(c, nc);
	if (rc != MPI_SUCCESS) {
		/* a failed copy callback: no new communicator */
		mpii_tab_del(&mpii.comms, nc->handle);
		mpii_comm_release(nc);
		*out = MPI_COMM_NULL;
	}
	return mpii_err(c, rc, "MPI_Comm_dup");
}

MPII_ALIAS(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
	struct mpii_group *g;
	uint32_t ctx;

	GET_COMM(c, comm, "MPI_Comm_create");
	g = mpii_group(group);
	if (!g)
		return mpii_err(c, MPI_ERR_GROUP, "MPI_Comm_create");
	if (c->inter)
		return mpii_err(c, mpii_inter_create(c, g, out), "MPI_Comm_create");
	ctx = mpii_ctx_alloc(c);
	if (!ctx)
		return mpii_err(c, MPI_ERR_INTERN, "MPI_Comm_create");
	if (g->rank == MPI_UNDEFINED) {
		mpii_ctx_free(ctx);
		*out = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	g->refs++;
	return mpii_comm_finish(c, g, NULL, ctx, out, "MPI_Comm_create");
}

struct ck {
	int color, key;
};

MPII_ALIAS(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
	struct ck me = {color, key}, *all;
	struct mpii_group *g;
	int *w, n = 0, rc;
	uint32_t ctx;

	GET_COMM(c, comm, "MPI_Comm_split");
	if (c->inter)
		return mpii_err(c, mpii_inter_split(c, color, key, out), "MPI_Comm_split");
	all = malloc(sizeof(*all) * (size_t)c->size);
	w = malloc(sizeof(int) * (size_t)c->size);
	if (!all || !w) {
		free(all);
		free(w);
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Comm_split");
	}
	rc = mpii_allgather(&me, 2, mpii_dt(MPI_INT), all, 2, mpii_dt(MPI_INT), c);
	ctx = rc == MPI_SUCCESS ? mpii_ctx_alloc(c) : 0;
	if (!ctx || color == MPI_UNDEFINED) {
		free(all);
		free(w);
		mpii_ctx_free(ctx);
		*out = MPI_COMM_NULL;
		return ctx ? MPI_SUCCESS : mpii_err(c, MPI_ERR_INTERN, "MPI_Comm_split");
	}
	/* members of my colour ordered by (key, old rank): insertion sort keeps it stable */
	for (int r = 0; r < c->size; r++) {
		int j = n++;
		if (all[r].color != color) {
			n--;
			continue;
		}
		while (j > 0 && all[w[j - 1]].key > all[r].key) {
			w[j] = w[j - 1];
			j--;
		}
		w[j] = r;
	}
	for (int i = 0; i < n; i++)
		w[i] = c->grp->world[w[i]];
	free(all);
	g = mpii_group_new(n, w);
	if (!g) {
		mpii_ctx_free(ctx);
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Comm_split");
	}
	return mpii_comm_finish(c, g, NULL, ctx, out, "MPI_Comm_split");
}

MPII_ALIAS(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
	GET_COMM(c, *comm, "MPI_Comm_free");
	if (c->handle <= MPI_COMM_SELF)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Comm_free");
	/* delete callbacks still see a valid handle; pending requests keep the object (not the
	 * handle) until they are freed */
	mpii_attr_clear_comm(c);
	mpii_tab_del(&mpii.comms, c->handle);
	mpii_comm_release(c);
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

/* ---- intercommunicators ---- */

MPII_ALIAS(Intercomm_merge)
int PMPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *out)
{
	GET_COMM(c, inter, "MPI_Intercomm_merge");
	if (!c->inter)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Intercomm_merge");
	return mpii_err(c, mpii_inter_merge(c, high ? 1 : 0, out), "MPI_Intercomm_merge");
}

/* Whether a member of g is a process of another job (a peer index past the job's ranks). */
static int has_foreign(const struct mpii_group *g)
{
	for (int i = 0; i < g->size; i++)
		if (g->world[i] >= mpii.size)
			return 1;
	return 0;
}

/* The leaders' exchange of MPI_Intercomm_create: the remote group's size and members, the
 * context id free on both sides. Members are job ranks, or (mode 1: a process of another job is
 * involved, whose job ranks mean nothing here) transport cards, gathered and handed out by the
 * caller. hdr = {remote size, id, mode}; *rw the remote job ranks (mode 0). MPI code. */
static int ic_leaders(struct mpii_comm *c, struct mpii_comm *p, int rleader, int tag, int dyn,
                      uint64_t *mask, int hdr[3], int **rw)
{
	struct mpii_dtype *it = mpii_dt(MPI_INT), *u64 = mpii_dt(MPI_UINT64_T);
	uint64_t rmask[NCTX_WORDS] = {0};
	int me[2] = {c->size, dyn || mpii_world_of(p, rleader) >= mpii.size}, them[2] = {0, 0};
	int rc = mpii_sendrecv(me, 2, it, rleader, them, 2, it, rleader, tag, p, 0, NULL);

	hdr[0] = them[0];
	hdr[2] = me[1] || them[1];
	if (rc == MPI_SUCCESS && !hdr[2]) {
		*rw = malloc(sizeof(int) * (size_t)(them[0] + 1));
		rc = *rw ? mpii_sendrecv(c->grp->world, c->size, it, rleader, *rw, them[0], it,
		                         rleader, tag, p, 0, NULL)
		         : MPI_ERR_NO_MEM;
	}
	if (rc == MPI_SUCCESS)
		rc = mpii_sendrecv(mask, NCTX_WORDS, u64, rleader, rmask, NCTX_WORDS, u64, rleader,
		                   tag, p, 0, NULL);
	for (int i = 0; i < NCTX_WORDS; i++)
		mask[i] &= rmask[i];
	hdr[1] = (int)lowest(mask);
	return rc;
}

/* Mode 1: the remote group's cards reach every member through the leaders; *rw their peers.
 * *order: the union order (mpii_comm.order), the group whose rank 0's card sorts lower first. */
static int ic_cards(struct mpii_comm *c, int lleader, struct mpii_comm *p, int rleader, int tag,
                    int rsize, int **rw, int *order)
{
	char *mine = NULL, *theirs = malloc((size_t)rsize * MPII_CARD + 1);
	struct mpii_dtype *ch = mpii_dt(MPI_CHAR);
	int rc = theirs ? mpii_cards(c, &mine) : MPI_ERR_NO_MEM;

	if (rc == MPI_SUCCESS && c->rank == lleader)
		rc = mpii_sendrecv(mine, c->size * MPII_CARD, ch, rleader, theirs,
		                   rsize * MPII_CARD, ch, rleader, tag, p, 0, NULL);
	if (rc == MPI_SUCCESS)
		rc = mpii_bcast(theirs, rsize * MPII_CARD, ch, lleader, c);
	if (rc == MPI_SUCCESS && !(*rw = malloc(sizeof(int) * (size_t)(rsize + 1))))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS) {
		/* every member has both lists: their first cards decide alike everywhere */
		*order = strncmp(mine, theirs, MPII_CARD) < 0 ? 1 : 2;
		rc = mpii_cards_world(theirs, rsize, *rw);
	}
	free(mine);
	free(theirs);
	return rc;
}

MPII_ALIAS(Intercomm_create)
int PMPI_Intercomm_create(MPI_Comm local, int lleader, MPI_Comm peer, int rleader, int tag,
                          MPI_Comm *out)
{
	struct mpii_dtype *it = mpii_dt(MPI_INT), *u64 = mpii_dt(MPI_UINT64_T);
	uint64_t mask[NCTX_WORDS];
	int hdr[3] = {0, 0, 0}, rsize = 0, *rw = NULL, rc, dyn = 0, mine, order = 0;
	struct mpii_group *rg;

	GET_COMM(c, local, "MPI_Intercomm_create");
	mine = has_foreign(c->grp);
	rc = mpii_allreduce(ctx_free, mask, NCTX_WORDS, u64, MPI_BAND, c);
	if (rc == MPI_SUCCESS)
		rc = mpii_allreduce(&mine, &dyn, 1, it, MPI_MAX, c);
	if (c->rank == lleader && rc == MPI_SUCCESS) {
		struct mpii_comm *p = mpii_comm(peer);

		if (!p)
			return mpii_err(c, MPI_ERR_COMM, "MPI_Intercomm_create");
		rc = ic_leaders(c, p, rleader, tag, dyn, mask, hdr, &rw);
	}
	if (rc == MPI_SUCCESS)
		rc = mpii_bcast(hdr, 3, it, lleader, c);
	rsize = hdr[0];
	if (rc == MPI_SUCCESS && hdr[2]) {
		rc = ic_cards(c, lleader, mpii_comm(peer), rleader, tag, rsize, &rw, &order);
	} else if (rc == MPI_SUCCESS) {
		if (c->rank != lleader)
			rw = malloc(sizeof(int) * (size_t)(rsize + 1));
		rc = rw ? mpii_bcast(rw, rsize, it, lleader, c) : MPI_ERR_NO_MEM;
	}
	if (rc != MPI_SUCCESS || !rw || !hdr[1]) {
		free(rw);
		return mpii_err(c, MPI_ERR_INTERN, "MPI_Intercomm_create");
	}
	claim((uint32_t)hdr[1]);
	rg = mpii_group_new(rsize, rw);
	if (!rg)
		return mpii_err(c, MPI_ERR_NO_MEM, "MPI_Intercomm_create");
	c->grp->refs++;
	rc = mpii_comm_finish(c, c->grp, rg, (uint32_t)hdr[1] * 2, out, "MPI_Intercomm_create");
	if (rc == MPI_SUCCESS) /* with processes of two jobs, job ranks give no common order */
		mpii_comm(*out)->order = order;
	return rc;
}
