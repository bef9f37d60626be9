/* lib/mpi/mpi_info.c: MPI_Info objects (ordered key/value lists; no key is interpreted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

struct info {
	int n;
	char **key, **val;
};

static struct mpii_tab infos;
static struct info env; /* MPI_INFO_ENV: no keys (the launcher does not report any) */

static struct info *get(MPI_Info h)
{
	return h == MPI_INFO_ENV ? &env : mpii_tab_get(&infos, h);
}

static int find(const struct info *in, const char *key)
{
	for (int i = 0; i < in->n; i++)
		if (strcmp(in->key[i], key) == 0)
			return i;
	return -1;
}

MPII_ALIAS(Info_create)
int PMPI_Info_create(MPI_Info *info)
{
	struct info *in = calloc(1, sizeof(*in));
	int h;

	infos.first = MPI_INFO_ENV + 1;
	if (!in || (h = mpii_tab_add(&infos, in)) < 0) {
		free(in);
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create");
	}
	*info = h;
	return MPI_SUCCESS;
}

MPII_ALIAS(Info_set)
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	struct info *in = get(info);
	int i;
	char *k, *v, **nk, **nv;

	if (!in || in == &env) /* MPI_INFO_ENV is read-only */
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_set");
	if (!*key || strlen(key) > MPI_MAX_INFO_KEY)
		return mpii_err(NULL, MPI_ERR_INFO_KEY, "MPI_Info_set");
	if (strlen(value) > MPI_MAX_INFO_VAL)
		return mpii_err(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set");
	v = strdup(value);
	if (!v)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_set");
	i = find(in, key);
	if (i >= 0) {
		free(in->val[i]);
		in->val[i] = v;
		return MPI_SUCCESS;
	}
	k = strdup(key);
	nk = realloc(in->key, sizeof(char *) * (size_t)(in->n + 1));
	if (nk)
		in->key = nk;
	nv = nk ? realloc(in->val, sizeof(char *) * (size_t)(in->n + 1)) : NULL;
	if (nv)
		in->val = nv;
	if (!k || !nk || !nv) {
		free(k);
		free(v);
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_set");
	}
	in->key[in->n] = k;
	in->val[in->n++] = v;
	return MPI_SUCCESS;
}

MPII_ALIAS(Info_get)
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	struct info *in = get(info);
	int i;

	if (!in)
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_get");
	i = find(in, key);
	*flag = i >= 0;
	if (i >= 0)
		snprintf(value, (size_t)valuelen + 1, "%s", in->val[i]);
	return MPI_SUCCESS;
}

MPII_ALIAS(Info_get_valuelen)
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	struct info *in = get(info);
	int i;

	if (!in)
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_get_valuelen");
	i = find(in, key);
	*flag = i >= 0;
	if (i >= 0)
		*valuelen = (int)strlen(in->val[i]);
	return MPI_SUCCESS;
}

MPII_ALIAS(Info_delete)
int PMPI_Info_delete(MPI_Info info, const char *key)
{
	struct info *in = get(info);
	int i;

	if (!in)
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_delete");
	i = find(in, key);
	if (i < 0)
		return mpii_err(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete");
	free(in->key[i]);
	free(in->val[i]);
	memmove(in->key + i, in->key + i + 1, sizeof(char *) * (size_t)(in->n - i - 1));
	memmove(in->val + i, in->val + i + 1, sizeof(char *) * (size_t)(in->n - i - 1));
	in->n--;
	return MPI_SUCCESS;
}

MPII_ALIAS(Info_get_nkeys)
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	struct info *in = get(info);

	if (!in)
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_get_nkeys");
	*nkeys = in->n;
	return MPI_SUCCESS;
}

MPII_ALIAS(Info_get_nthkey)
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	struct info *in = get(info);

	if (!in)
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_get_nthkey");
	if (n < 0 || n >= in->n)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey");
	snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", in->key[n]);
	return MPI_SUCCESS;
}

MPII_ALIAS(Info_dup)
int PMPI_Info_dup(MPI_Info info, MPI_Info *out)
{
	struct info *in = get(info);
	int rc;

	if (!in)
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_dup");
	rc = PMPI_Info_create(out);
	for (int i = 0; rc == MPI_SUCCESS && i < in->n; i++)
		rc = PMPI_Info_set(*out, in->key[i], in->val[i]);
	return rc;
}

MPII_ALIAS(Info_free)
int PMPI_Info_free(MPI_Info *info)
{
	struct info *in = get(*info);

	if (!in || in == &env)
		return mpii_err(NULL, MPI_ERR_INFO, "MPI_Info_free");
	for (int i = 0; i < in->n; i++) {
		free(in->key[i]);
		free(in->val[i]);
	}
	free(in->key);
	free(in->val);
	free(in);
	mpii_tab_del(&infos, *info);
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}
