/* lib/pmi/pmi_spawn.c: collects and parses one PMI-1 "mcmd=spawn ... endcmd" block, bounded. */
#include "pmi_spawn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pmi_spawn {
	size_t used;
	int nfields;
	const char *key[PMI_SPAWN_FIELDS_MAX];
	const char *val[PMI_SPAWN_FIELDS_MAX];
	char *argv[PMI_SPAWN_LIST_MAX + 1];
	char *preput[2 * PMI_SPAWN_LIST_MAX + 1];
	char *info[2 * PMI_SPAWN_LIST_MAX + 1];
	char text[PMI_SPAWN_BYTES_MAX];
};

struct pmi_spawn *pmi_spawn_new(void)
{
	struct pmi_spawn *sp = calloc(1, sizeof(*sp));

	if (!sp)
		errno = ENOMEM;
	return sp;
}

void pmi_spawn_free(struct pmi_spawn *sp)
{
	free(sp);
}

/* Store field key=value (value may hold spaces); a token without '=' is skipped. */
static int add_field(struct pmi_spawn *sp, const char *tok, size_t len)
{
	const char *eq = memchr(tok, '=', len);

	if (!eq || eq == tok)
		return 0;
	if (sp->nfields >= PMI_SPAWN_FIELDS_MAX || sp->used + len + 2 > sizeof(sp->text)) {
		errno = E2BIG;
		return -1;
	}
	size_t klen = (size_t)(eq - tok);
	char *k = sp->text + sp->used;
	memcpy(k, tok, klen);
	k[klen] = '\0';
	char *v = k + klen + 1;
	memcpy(v, eq + 1, len - klen - 1);
	v[len - klen - 1] = '\0';
	sp->used += len + 1;
	sp->key[sp->nfields] = k;
	sp->val[sp->nfields++] = v;
	return 0;
}

int pmi_spawn_add(struct pmi_spawn *sp, const char *line, size_t len, int first)
{
	size_t i = 0;

	if (!first)
		return add_field(sp, line, len);
	while (i < len) {
		while (i < len && line[i] == ' ')
			i++;
		size_t start = i;
		while (i < len && line[i] != ' ')
			i++;
		if (i > start && add_field(sp, line + start, i - start) < 0)
			return -1;
	}
	return 0;
}

static const char *field(const struct pmi_spawn *sp, const char *key)
{
	for (int i = 0; i < sp->nfields; i++) {
		if (strcmp(sp->key[i], key) == 0)
			return sp->val[i];
	}
	return NULL;
}

/* Integer field in [lo, hi]; `def` when absent (def < lo: required). 0 or -1. */
static int int_field(const struct pmi_spawn *sp, const char *key, int lo, int hi, int def, int *out)
{
	const char *v = field(sp, key);

	if (!v) {
		*out = def;
		return def < lo ? -1 : 0;
	}
	if (pmi_wire_parse_int(v, strlen(v), out) < 0 || *out < lo || *out > hi)
		return -1;
	return 0;
}

/* Fill out[0..n) with fields fmt % (i + base); -1 if one is missing. */
static int list_fields(const struct pmi_spawn *sp, const char *fmt, int n, int base, char **out,
                       int stride)
{
	char key[48];

	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), fmt, i + base);
		const char *v = field(sp, key);
		if (!v)
			return -1;
		out[i * stride] = (char *)v;
	}
	return 0;
}

static int bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	errno = EINVAL;
	return -1;
}

int pmi_spawn_parse(struct pmi_spawn *sp, struct pmi_spawn_req *req, char *err, size_t errlen)
{
	const int L = PMI_SPAWN_LIST_MAX;

	memset(req, 0, sizeof(*req));
	if (int_field(sp, "nprocs", 1, PMI_SPAWN_NPROCS_MAX, -1, &req->nprocs) < 0)
		return bad(err, errlen, "bad_nprocs");
	req->exe = field(sp, "execname");
	if (!req->exe || !*req->exe)
		return bad(err, errlen, "missing_execname");
	if (int_field(sp, "totspawns", 1, L, 1, &req->totspawns) < 0 ||
	    int_field(sp, "spawnssofar", 0, L, req->totspawns, &req->spawnssofar) < 0)
		return bad(err, errlen, "bad_totspawns");
	if (int_field(sp, "argcnt", 0, L, 0, &req->argc) < 0 ||
	    list_fields(sp, "arg%d", req->argc, field(sp, "arg0") ? 0 : 1, sp->argv, 1) < 0)
		return bad(err, errlen, "bad_args");
	sp->argv[req->argc] = NULL;
	req->argv = sp->argv;
	if (int_field(sp, "preput_num", 0, L, 0, &req->npreput) < 0 ||
	    list_fields(sp, "preput_key_%d", req->npreput, 0, sp->preput, 2) < 0 ||
	    list_fields(sp, "preput_val_%d", req->npreput, 0, sp->preput + 1, 2) < 0)
		return bad(err, errlen, "bad_preput");
	sp->preput[2 * req->npreput] = NULL;
	req->preput = sp->preput;
	if (int_field(sp, "info_num", 0, L, 0, &req->ninfo) < 0 ||
	    list_fields(sp, "info_key_%d", req->ninfo, 0, sp->info, 2) < 0 ||
	    list_fields(sp, "info_val_%d", req->ninfo, 0, sp->info + 1, 2) < 0)
		return bad(err, errlen, "bad_info");
	sp->info[2 * req->ninfo] = NULL;
	req->info = sp->info;
	return 0;
}
