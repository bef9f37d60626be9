/* lib/mpi/mpi_io_hints.c: MPI-IO hints (ROMIO's names, its defaults but cb_buffer_size's), the
 * hints file ROMIO reads (ROMIO_HINTS), and the info they make. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- the hints file ---- */

#define HINTS_FILE "/etc/romio-hints" /* ROMIO's, when ROMIO_HINTS is not set */

/* Once a process: a problem with the hints file is said by the first file's rank 0, once. */
static int hints_warned;

__attribute__((format(printf, 2, 3))) static void hints_warn(int rank, const char *fmt, ...)
{
	va_list ap;

	if (rank != 0 || hints_warned)
		return;
	hints_warned = 1;
	fputs("lamkit mpi-io: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The hints file's name: ROMIO_HINTS, else ROMIO's default (*from_env says which; may be NULL). */
static const char *hints_path(int *from_env)
{
	const char *env = getenv("ROMIO_HINTS");
	int set = env && *env;

	if (from_env)
		*from_env = set;
	return set ? env : HINTS_FILE;
}

/* Rank 0 reads the hints file into text (at most MPIO_HINTS_TEXT - 1 bytes, whole lines); every
 * rank gets the same text. */
int mpio_hints_fetch(struct mpii_comm *c, char text[MPIO_HINTS_TEXT])
{
	int len = 0, rc, from_env;
	const char *path = hints_path(&from_env);

	text[0] = 0;
	if (c->rank == 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t k = 0;
		if (fd < 0 && from_env)
			hints_warn(0, "ROMIO_HINTS=%s: %s; no hints are taken from it", path,
			           strerror(errno));
		while (fd >= 0 && len < MPIO_HINTS_TEXT - 1 &&
		       (k = read(fd, text + len, (size_t)(MPIO_HINTS_TEXT - 1 - len))) > 0)
			len += (int)k;
		if (fd >= 0 && len == MPIO_HINTS_TEXT - 1 && read(fd, &text[len], 1) == 1) {
			while (len > 0 && text[len - 1] != '\n')
				len--; /* only whole lines */
			hints_warn(0, "%s: longer than %d bytes: the lines after that are not read",
			           path, MPIO_HINTS_TEXT - 1);
		}
		if (fd >= 0)
			close(fd);
		text[len] = 0;
	}
	rc = mpii_bcast(&len, 1, mpii_dt(MPI_INT), 0, c);
	if (rc == MPI_SUCCESS && len > 0)
		rc = mpii_bcast(text, len, mpii_dt(MPI_CHAR), 0, c);
	text[rc == MPI_SUCCESS && len > 0 && len < MPIO_HINTS_TEXT ? len : 0] = 0;
	return rc;
}

/* Whether info (may be MPI_INFO_NULL) sets key. */
static int user_has(MPI_Info info, const char *key)
{
	int len, flag = 0;

	return info != MPI_INFO_NULL &&
	       PMPI_Info_get_valuelen(info, key, &len, &flag) == MPI_SUCCESS && flag;
}

int mpio_hints_file(struct mpio_hints *h, char *text, MPI_Info user, int nranks, int rank)
{
	const char *path = hints_path(NULL);
	struct {
		const char *k, *v;
	} kv[256];
	int n = 0, rc;
	long no = 0;

	for (char *line = text, *next; *line; line = next) {
		char *save = NULL, *k, *v;
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		no++;
		k = strtok_r(line, " \t\r", &save);
		if (!k || k[0] == '#')
			continue;
		v = strtok_r(NULL, " \t\r", &save);
		if (!v || strtok_r(NULL, " \t\r", &save) || strlen(k) > MPI_MAX_INFO_KEY ||
		    strlen(v) > MPI_MAX_INFO_VAL) {
			hints_warn(rank, "%s:%ld: not a key and a value (\"%s ...\"); line skipped",
			           path, no, k);
			continue;
		}
		if (n == (int)(sizeof(kv) / sizeof(kv[0]))) {
			hints_warn(rank, "%s:%ld: more than %d hints; the rest are not read", path,
			           no, n);
			break;
		}
		if (user_has(user, k)) /* the program's own info wins, as in ROMIO */
			continue;
		kv[n].k = k;
		kv[n++].v = v;
	}
	/* the list of aggregators first, then cb_nodes (which wins), as in mpio_hints_set */
	for (int i = 0; i < n; i++)
		if (!strcmp(kv[i].k, "cb_config_list"))
			config_list(h, kv[i].v, nranks);
	for (int i = 0; i < n; i++) {
		if (strcmp(kv[i].k, "cb_config_list"))
			apply(h, kv[i].k, kv[i].v, nranks);
		if (h->user == MPI_INFO_NULL && (rc = PMPI_Info_create(&h->user)) != MPI_SUCCESS)
			return rc;
		if ((rc = PMPI_Info_set(h->user, kv[i].k, kv[i].v)) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
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
