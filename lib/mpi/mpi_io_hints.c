/* lib/mpi/mpi_io_hints.c: MPI-IO hints (ROMIO's names, its defaults but cb_buffer_size's) and
 * the info they make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpio.h"

void mpio_hints_default(struct mpio_hints *h, int nnodes)
{
	memset(h, 0, sizeof(*h));
	/* ROMIO's default is 16 MiB. Every page of the round buffers is a new one in a process's
	 * first two-phase call, ~10 us each where memory is shadow-paged and THP is off; with huge
	 * pages (mpi_scratch.c) 4, 8 and 16 MiB made first calls alike, and 8 MiB the later reads
	 * at 4 ranks ~10 % faster than either (doc/MPI-IO.md, "A first call") */
	h->cb_buffer_size = 8 << 20;
	h->cb_nodes = nnodes > 0 ? nnodes : 1;
	h->cb_read = h->cb_write = MPIO_AUTO;
	h->ds_read = h->ds_write = MPIO_AUTO;
	h->ind_rd_buffer_size = 4 << 20;
	h->ind_wr_buffer_size = 512 << 10;
	h->user = MPI_INFO_NULL;
	h->nnodes = nnodes > 0 ? nnodes : 1;
	snprintf(h->cb_config_list, sizeof(h->cb_config_list), "*:1");
}

/* cb_config_list: "*:N" is N aggregators on each node, "*:*" every rank (MPI-IO hint syntax
 * ROMIO takes); the aggregator count follows unless cb_nodes says otherwise. */
static void config_list(struct mpio_hints *h, const char *v, int nranks)
{
	long long per;
	char *end;

	snprintf(h->cb_config_list, sizeof(h->cb_config_list), "%.255s", v);
	if (!strcmp(v, "*:*")) {
		h->cb_nodes = nranks;
		return;
	}
	if (strncmp(v, "*:", 2))
		return;
	per = strtoll(v + 2, &end, 10);
	if (*end || per <= 0)
		return;
	per *= h->nnodes;
	h->cb_nodes = (int)(per < nranks ? per : nranks);
}

/* A positive integer value of at most max, or -1. */
static long long num(const char *v, long long max)
{
	char *end;
	long long x = strtoll(v, &end, 10);

	if (end == v || *end || x <= 0 || x > max)
		return -1;
	return x;
}

static int tri(const char *v)
{
	if (!strcmp(v, "enable") || !strcmp(v, "true"))
		return MPIO_ENABLE;
	if (!strcmp(v, "disable") || !strcmp(v, "false"))
		return MPIO_DISABLE;
	if (!strcmp(v, "automatic"))
		return MPIO_AUTO;
	return -1;
}

/* Apply one key; unknown keys and values out of range are ignored, as the standard allows. */
static void apply(struct mpio_hints *h, const char *k, const char *v, int nranks)
{
	long long x;
	int t = tri(v);

	if (!strcmp(k, "cb_buffer_size") && (x = num(v, 1LL << 30)) > 0)
		h->cb_buffer_size = x;
	else if (!strcmp(k, "cb_nodes") && (x = num(v, 1 << 30)) > 0)
		h->cb_nodes = (int)(x < nranks ? x : nranks);
	else if (!strcmp(k, "romio_cb_read") && t >= 0)
		h->cb_read = t;
	else if (!strcmp(k, "romio_cb_write") && t >= 0)
		h->cb_write = t;
	else if (!strcmp(k, "romio_ds_read") && t >= 0)
		h->ds_read = t;
	else if (!strcmp(k, "romio_ds_write") && t >= 0)
		h->ds_write = t;
	else if (!strcmp(k, "ind_rd_buffer_size") && (x = num(v, 1LL << 30)) > 0)
		h->ind_rd_buffer_size = x;
	else if (!strcmp(k, "ind_wr_buffer_size") && (x = num(v, 1LL << 30)) > 0)
		h->ind_wr_buffer_size = x;
	else if (!strcmp(k, "striping_unit") && (x = num(v, 1LL << 40)) > 0)
		h->striping_unit = x;
	else if (!strcmp(k, "striping_factor") && (x = num(v, 1 << 20)) > 0)
		h->striping_factor = (int)x;
	else if (!strcmp(k, "romio_no_indep_rw") && t >= 0)
		h->no_indep_rw = t == MPIO_ENABLE;
}

int mpio_hints_set(struct mpio_hints *h, MPI_Info info, int nranks)
{
	char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
	int n = 0, flag, rc;

	if (info == MPI_INFO_NULL)
		return MPI_SUCCESS;
	rc = PMPI_Info_get_nkeys(info, &n);
	if (rc != MPI_SUCCESS)
		return MPI_ERR_INFO;
	if (h->user == MPI_INFO_NULL && (rc = PMPI_Info_create(&h->user)) != MPI_SUCCESS)
		return rc;
	/* first the list of aggregators, then cb_nodes (which wins) and the others */
	if (PMPI_Info_get(info, "cb_config_list", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS &&
	    flag)
		config_list(h, v, nranks);
	for (int i = 0; i < n; i++) {
		if (PMPI_Info_get_nthkey(info, i, k) != MPI_SUCCESS ||
		    PMPI_Info_get(info, k, MPI_MAX_INFO_VAL, v, &flag) != MPI_SUCCESS || !flag)
			continue;
		apply(h, k, v, nranks);
		if ((rc = PMPI_Info_set(h->user, k, v)) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

static const char *tri_name(int t)
{
	return t == MPIO_ENABLE ? "enable" : t == MPIO_DISABLE ? "disable" : "automatic";
}

int mpio_hints_get(const struct mpio_hints *h, MPI_Info *out)
{
	char v[32];
	int rc = h->user != MPI_INFO_NULL ? PMPI_Info_dup(h->user, out) : PMPI_Info_create(out);

#define SETN(key, x)                                                                               \
	do {                                                                                       \
		snprintf(v, sizeof(v), "%lld", (long long)(x));                                    \
		if (rc == MPI_SUCCESS)                                                             \
			rc = PMPI_Info_set(*out, key, v);                                          \
	} while (0)
#define SETS(key, s)                                                                               \
	do {                                                                                       \
		if (rc == MPI_SUCCESS)                                                             \
			rc = PMPI_Info_set(*out, key, s);                                          \
	} while (0)
	SETN("cb_buffer_size", h->cb_buffer_size);
	SETN("cb_nodes", h->cb_nodes);
	SETS("romio_cb_read", tri_name(h->cb_read));
	SETS("romio_cb_write", tri_name(h->cb_write));
	SETS("romio_ds_read", tri_name(h->ds_read));
	SETS("romio_ds_write", tri_name(h->ds_write));
	SETN("ind_rd_buffer_size", h->ind_rd_buffer_size);
	SETN("ind_wr_buffer_size", h->ind_wr_buffer_size);
	SETS("romio_no_indep_rw", h->no_indep_rw ? "true" : "false");
	SETS("cb_config_list", h->cb_config_list);
	if (h->striping_unit)
		SETN("striping_unit", h->striping_unit);
	if (h->striping_factor)
		SETN("striping_factor", h->striping_factor);
#undef SETN
#undef SETS
	return rc;
}

void mpio_hints_free(struct mpio_hints *h)
{
	if (h->user != MPI_INFO_NULL)
		PMPI_Info_free(&h->user);
}
