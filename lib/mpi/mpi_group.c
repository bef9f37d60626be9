/* lib/mpi/mpi_group.c: process groups: set operations, rank translation, comparison. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

static struct mpii_group g_empty = {.handle = MPI_GROUP_EMPTY, .refs = 1, .rank = MPI_UNDEFINED};

struct mpii_group *mpii_group(MPI_Group h)
{
	if (h == MPI_GROUP_EMPTY)
		return &g_empty;
	return mpii_tab_get(&mpii.groups, h);
}

struct mpii_group *mpii_group_new(int size, int *world)
{
	struct mpii_group *g = calloc(1, sizeof(*g));
	int h;

	mpii.groups.first = 2;
	if (!g || (h = mpii_tab_add(&mpii.groups, g)) < 0) {
		free(g);
		free(world);
		return NULL;
	}
	g->handle = h;
	g->refs = 1;
	g->size = size;
	g->world = world;
	g->rank = MPI_UNDEFINED;
	for (int i = 0; i < size; i++)
		if (world[i] == mpii.rank)
			g->rank = i;
	return g;
}

void mpii_group_release(struct mpii_group *g)
{
	if (!g || g == &g_empty || --g->refs > 0)
		return;
	mpii_tab_del(&mpii.groups, g->handle);
	free(g->world);
	free(g);
}

static int find(const struct mpii_group *g, int w)
{
	for (int i = 0; i < g->size; i++)
		if (g->world[i] == w)
			return i;
	return -1;
}

/* Hand a freshly built rank list out as a group handle (GROUP_EMPTY when n == 0). */
static int give(int n, int *world, MPI_Group *out, const char *fn)
{
	struct mpii_group *g;

	if (n == 0) {
		free(world);
		*out = MPI_GROUP_EMPTY;
		return MPI_SUCCESS;
	}
	g = mpii_group_new(n, world);
	if (!g)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn);
	*out = g->handle;
	return MPI_SUCCESS;
}

#define GET_GROUP(g, h, fn)                                                                        \
	struct mpii_group *g = mpii_group(h);                                                      \
	if (!g)                                                                                    \
	return mpii_err(NULL, MPI_ERR_GROUP, fn)

MPII_ALIAS(Group_size)
int PMPI_Group_size(MPI_Group group, int *size)
{
	GET_GROUP(g, group, "MPI_Group_size");
	*size = g->size;
	return MPI_SUCCESS;
}

MPII_ALIAS(Group_rank)
int PMPI_Group_rank(MPI_Group group, int *rank)
{
	GET_GROUP(g, group, "MPI_Group_rank");
	*rank = g->rank;
	return MPI_SUCCESS;
}

MPII_ALIAS(Group_free)
int PMPI_Group_free(MPI_Group *group)
{
	GET_GROUP(g, *group, "MPI_Group_free");
	mpii_group_release(g);
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}

MPII_ALIAS(Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group g1, int n, const int r1[], MPI_Group g2, int r2[])
{
	GET_GROUP(a, g1, "MPI_Group_translate_ranks");
	GET_GROUP(b, g2, "MPI_Group_translate_ranks");
	for (int i = 0; i < n; i++) {
		int k;

		if (r1[i] == MPI_PROC_NULL) {
			r2[i] = MPI_PROC_NULL;
			continue;
		}
		if (r1[i] < 0 || r1[i] >= a->size)
			return mpii_err(NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks");
		k = find(b, a->world[r1[i]]);
		r2[i] = k < 0 ? MPI_UNDEFINED : k;
	}
	return MPI_SUCCESS;
}

MPII_ALIAS(Group_compare)
int PMPI_Group_compare(MPI_Group g1, MPI_Group g2, int *result)
{
	int same = 1;

	GET_GROUP(a, g1, "MPI_Group_compare");
	GET_GROUP(b, g2, "MPI_Group_compare");
	if (a->size != b->size) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	for (int i = 0; i < a->size; i++) {
		if (find(b, a->world[i]) < 0) {
			*result = MPI_UNEQUAL;
			return MPI_SUCCESS;
		}
		same &= a->world[i] == b->world[i];
	}
	*result = same ? MPI_IDENT : MPI_SIMILAR;
	return MPI_SUCCESS;
}

/* kind 0 union, 1 intersection, 2 difference (order follows the first group, then second). */
static int setop(MPI_Group g1, MPI_Group g2, int kind, MPI_Group *out, const char *fn)
{
	int n = 0, *w;

	GET_GROUP(a, g1, fn);
	GET_GROUP(b, g2, fn);
	w = malloc(sizeof(int) * (size_t)(a->size + b->size + 1));
	if (!w)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn);
	for (int i = 0; i < a->size; i++) {
		int inb = find(b, a->world[i]) >= 0;
		if (kind == 0 || (kind == 1 && inb) || (kind == 2 && !inb))
			w[n++] = a->world[i];
	}
	for (int i = 0; kind == 0 && i < b->size; i++)
		if (find(a, b->world[i]) < 0)
			w[n++] = b->world[i];
	return give(n, w, out, fn);
}

MPII_ALIAS(Group_union)
int PMPI_Group_union(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
	return setop(g1, g2, 0, out, "MPI_Group_union");
}

MPII_ALIAS(Group_intersection)
int PMPI_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
	return setop(g1, g2, 1, out, "MPI_Group_intersection");
}

MPII_ALIAS(Group_difference)
int PMPI_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
	return setop(g1, g2, 2, out, "MPI_Group_difference");
}

MPII_ALIAS(Group_incl)
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
	int *w;

	GET_GROUP(g, group, "MPI_Group_incl");
	if (n < 0 || n > g->size)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Group_incl");
	w = malloc(sizeof(int) * (size_t)(n + 1));
	if (!w)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Group_incl");
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size) {
			free(w);
			return mpii_err(NULL, MPI_ERR_RANK, "MPI_Group_incl");
		}
		w[i] = g->world[ranks[i]];
	}
	return give(n, w, out, "MPI_Group_incl");
}

MPII_ALIAS(Group_excl)
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
	int *w, *drop, k = 0;

	GET_GROUP(g, group, "MPI_Group_excl");
	w = malloc(sizeof(int) * (size_t)(g->size + 1));
	drop = calloc((size_t)g->size + 1, sizeof(int));
	if (!w || !drop) {
		free(w);
		free(drop);
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Group_excl");
	}
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size) {
			free(w);
			free(drop);
			return mpii_err(NULL, MPI_ERR_RANK, "MPI_Group_excl");
		}
		drop[ranks[i]] = 1;
	}
	for (int i = 0; i < g->size; i++)
		if (!drop[i])
			w[k++] = g->world[i];
	free(drop);
	return give(k, w, out, "MPI_Group_excl");
}

/* Expand ranges to a rank list; NULL on error (*rc set). */
static int *expand(const struct mpii_group *g, int n, int ranges[][3], int *count, int *rc)
{
	int total = 0, k = 0, *v;

	for (int i = 0; i < n; i++) {
		int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
		if (s == 0 || f < 0 || f >= g->size || l < 0 || l >= g->size || (s > 0 && f > l) ||
		    (s < 0 && f < l)) {
			*rc = MPI_ERR_RANK;
			return NULL;
		}
		total += (l - f) / s + 1;
	}
	v = malloc(sizeof(int) * (size_t)(total + 1));
	if (!v) {
		*rc = MPI_ERR_NO_MEM;
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
		for (int r = f; s > 0 ? r <= l : r >= l; r += s)
			v[k++] = r;
	}
	*count = total;
	return v;
}

MPII_ALIAS(Group_range_incl)
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *out)
{
	int cnt = 0, rc = MPI_SUCCESS, *r;

	GET_GROUP(g, group, "MPI_Group_range_incl");
	r = expand(g, n, ranges, &cnt, &rc);
	if (!r)
		return mpii_err(NULL, rc, "MPI_Group_range_incl");
	rc = PMPI_Group_incl(group, cnt, r, out);
	free(r);
	return rc;
}

MPII_ALIAS(Group_range_excl)
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *out)
{
	int cnt = 0, rc = MPI_SUCCESS, *r;

	GET_GROUP(g, group, "MPI_Group_range_excl");
	r = expand(g, n, ranges, &cnt, &rc);
	if (!r)
		return mpii_err(NULL, rc, "MPI_Group_range_excl");
	rc = PMPI_Group_excl(group, cnt, r, out);
	free(r);
	return rc;
}
