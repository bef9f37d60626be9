/* lib/mpi/mpi_winfo.c: a window's name and its info hints. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mpii.h"

#define WIN(fn)                                                                                    \
	struct mpii_win *w = mpii_win(win);                                                        \
	if (!w)                                                                                    \
	return mpii_err(NULL, MPI_ERR_WIN, fn)

MPII_ALIAS(Win_set_name)
int PMPI_Win_set_name(MPI_Win win, const char *name)
{
	WIN("MPI_Win_set_name");
	snprintf(w->name, sizeof(w->name), "%s", name);
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_get_name)
int PMPI_Win_get_name(MPI_Win win, char *name, int *len)
{
	WIN("MPI_Win_get_name");
	snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name);
	*len = (int)strlen(name);
	return MPI_SUCCESS;
}

/* ---- info hints (MPI-4.0 section 12.2.7): the window keeps the standard keys it knows,
 * validated, and reports each (its default until set); unknown keys and bad values are
 * ignored, as the standard allows ---- */

static const char *const bools[] = {"true", "false", NULL};
static const char *const ops[] = {"same_op", "same_op_no_op", NULL};

static const struct hint {
	const char *key;
	size_t off, len;
	const char *const *ok; /* NULL: accumulate_ordering's syntax */
	const char *def;
} hints[] = {
#define FIELD(f) offsetof(struct mpii_win, f), sizeof(((struct mpii_win *)0)->f)
    {"no_locks", FIELD(no_locks), bools, "false"},
    {"accumulate_ordering", FIELD(acc_order), NULL, "rar,raw,war,waw"},
    {"accumulate_ops", FIELD(acc_ops), ops, "same_op_no_op"},
    {"same_size", FIELD(same_size), bools, "false"},
    {"same_disp_unit", FIELD(same_disp), bools, "false"},
    {"alloc_shared_noncontig", FIELD(noncontig), bools, "false"},
#undef FIELD
};

/* "none", or a comma-separated list of rar, raw, war, waw. */
static int order_ok(const char *v)
{
	if (strcmp(v, "none") == 0)
		return 1;
	for (;;) {
		if (strncmp(v, "rar", 3) && strncmp(v, "raw", 3) && strncmp(v, "war", 3) &&
		    strncmp(v, "waw", 3))
			return 0;
		v += 3;
		if (!*v)
			return 1;
		if (*v++ != ',')
			return 0;
	}
}

static int hint_ok(const struct hint *h, const char *v)
{
	if (strlen(v) >= h->len)
		return 0;
	if (!h->ok)
		return order_ok(v);
	for (int i = 0; h->ok[i]; i++)
		if (strcmp(v, h->ok[i]) == 0)
			return 1;
	return 0;
}

/* Take the known keys of info (defaults first when reset). */
void mpii_win_hints(struct mpii_win *w, MPI_Info info, int reset)
{
	char v[MPI_MAX_INFO_VAL + 1];
	int flag;

	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		const struct hint *h = &hints[i];
		char *at = (char *)w + h->off;
		if (reset)
			snprintf(at, h->len, "%s", h->def);
		flag = 0;
		if (info != MPI_INFO_NULL &&
		    PMPI_Info_get(info, h->key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS &&
		    flag && hint_ok(h, v))
			snprintf(at, h->len, "%s", v);
	}
}

MPII_ALIAS(Win_set_info)
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
	WIN("MPI_Win_set_info");
	mpii_win_hints(w, info, 0);
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_get_info)
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
	int rc;

	WIN("MPI_Win_get_info");
	rc = PMPI_Info_create(info);
	for (size_t i = 0; rc == MPI_SUCCESS && i < sizeof(hints) / sizeof(hints[0]); i++)
		rc = PMPI_Info_set(*info, hints[i].key, (char *)w + hints[i].off);
	return mpii_err(w->comm, rc, "MPI_Win_get_info");
}
