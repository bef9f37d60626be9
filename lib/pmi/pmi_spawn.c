/* lib/pmi/pmi_spawn.c: collects and parses one PMI-1 "mcmd=spawn ... endcmd" block, bounded. */
#include "pmi_spawn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The block's text is one growing buffer of "key\0value\0" records (the fields) followed by
 * the line being collected; fields are offsets into it, so growing it moves nothing that is
 * held. The pointer arrays of the parsed request are made by pmi_spawn_parse. */
struct pmi_spawn {
	char *text;
	size_t used; /* bytes of finished records */
	size_t cur;  /* bytes of the line being collected, after them */
	size_t cap;
	size_t *field; /* offset of each record */
	int nfields, fcap;
	int next;          /* where the next field lookup starts (lists come in order) */
	int over;          /* a bound was passed: OVER_* */
	size_t over_bytes; /* the longest line seen past PMI_SPAWN_LINE_MAX */
	int argc_asked;    /* argcnt when over PMI_SPAWN_ARGS_MAX */
	int kept;          /* the line being collected is in text (not dropped) */
	char head[8];      /* its first bytes even when dropped: "endcmd" must still end it */
	char **argv, **preput, **info;
	char detail[192];
};

enum { OVER_NONE, OVER_LINE, OVER_BYTES, OVER_FIELDS };

struct pmi_spawn *pmi_spawn_new(void)
{
	struct pmi_spawn *sp = calloc(1, sizeof(*sp));

	if (!sp)
		errno = ENOMEM;
	return sp;
}

void pmi_spawn_free(struct pmi_spawn *sp)
{
	if (!sp)
		return;
	free(sp->text);
	free(sp->field);
	free(sp->argv);
	free(sp->preput);
	free(sp->info);
	free(sp);
}

static void mark(struct pmi_spawn *sp, int why)
{
	if (!sp->over)
		sp->over = why;
}

/* Room for n more bytes of text. 0, or -1 (the block is marked). */
static int grow(struct pmi_spawn *sp, size_t n)
{
	size_t need = sp->used + sp->cur + n + 2; /* + the record's two NULs */

	if (need > PMI_SPAWN_BYTES_MAX) {
		mark(sp, OVER_BYTES);
		return -1;
	}
	if (need <= sp->cap)
		return 0;
	size_t cap = sp->cap ? sp->cap : 1024;
	while (cap < need)
		cap *= 2;
	char *t = realloc(sp->text, cap);
	if (!t) {
		mark(sp, OVER_BYTES);
		return -1;
	}
	sp->text = t;
	sp->cap = cap;
	return 0;
}

void pmi_spawn_more(struct pmi_spawn *sp, const char *buf, size_t len)
{
	for (size_t i = 0; sp->cur + i < sizeof(sp->head) && i < len; i++)
		sp->head[sp->cur + i] = buf[i];
	if (sp->cur == 0)
		sp->kept = 1;
	if (sp->cur + len > PMI_SPAWN_LINE_MAX) {
		mark(sp, OVER_LINE);
		if (sp->cur + len > sp->over_bytes)
			sp->over_bytes = sp->cur + len;
		sp->kept = 0;
	}
	if (sp->kept && grow(sp, len) == 0)
		memcpy(sp->text + sp->used + sp->cur, buf, len);
	else
		sp->kept = 0; /* counted, not kept: the line is dropped at its end */
	sp->cur += len;
}

/* The collected line `key=value` becomes a record. */
static void end_field(struct pmi_spawn *sp)
{
	char *line = sp->text + sp->used;
	char *eq = memchr(line, '=', sp->cur);

	if (!eq || eq == line)
		return; /* no field: skipped */
	if (sp->nfields >= PMI_SPAWN_FIELDS_MAX) {
		mark(sp, OVER_FIELDS);
		return;
	}
	if (sp->nfields == sp->fcap) {
		int cap = sp->fcap ? 2 * sp->fcap : 32;
		size_t *f = realloc(sp->field, (size_t)cap * sizeof(*f));
		if (!f) {
			mark(sp, OVER_FIELDS);
			return;
		}
		sp->field = f;
		sp->fcap = cap;
	}
	*eq = '\0';
	line[sp->cur] = '\0'; /* grow() kept room for it */
	sp->field[sp->nfields++] = sp->used;
	sp->used += sp->cur + 1;
}

int pmi_spawn_eol(struct pmi_spawn *sp)
{
	int end = 0;

	if (sp->cur == 6 && memcmp(sp->head, "endcmd", 6) == 0)
		end = 1;
	else if (sp->cur > 0 && sp->kept)
		end_field(sp);
	/* else: empty, or dropped past a bound (the block is marked) */
	sp->cur = 0;
	return end;
}

int pmi_spawn_first(struct pmi_spawn *sp, const char *line, size_t len)
{
	size_t i = 0;

	while (i < len) {
		while (i < len && line[i] == ' ')
			i++;
		size_t start = i;
		while (i < len && line[i] != ' ')
			i++;
		if (i > start) {
			pmi_spawn_more(sp, line + start, i - start);
			pmi_spawn_eol(sp);
		}
	}
	return 0;
}

/* The value of field `key`, looked for from where the last lookup ended (lists are sent in
 * order, so a list of n is read in n steps, not n * n). */
static const char *field(struct pmi_spawn *sp, const char *key)
{
	for (int k = 0; k < sp->nfields; k++) {
		int i = (sp->next + k) % sp->nfields;
		const char *kk = sp->text + sp->field[i];
		if (strcmp(kk, key) == 0) {
			sp->next = i + 1;
			return kk + strlen(kk) + 1;
		}
	}
	return NULL;
}

/* Integer field in [lo, hi]; `def` when absent (def < lo: required). 0 or -1. */
static int int_field(struct pmi_spawn *sp, const char *key, int lo, int hi, int def, int *out)
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
static int list_fields(struct pmi_spawn *sp, const char *fmt, int n, int base, char **out,
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

/* A block past a bound: the reason word, and the line for the user in sp->detail. */
static int over(struct pmi_spawn *sp, char *err, size_t errlen)
{
	switch (sp->over) {
	case OVER_LINE:
		snprintf(
		    sp->detail, sizeof(sp->detail),
		    "a spawn line of %zu bytes (an argument, info or preput value) is over the "
		    "bound of %d bytes",
		    sp->over_bytes, PMI_SPAWN_LINE_MAX);
		return bad(err, errlen, "arg_too_long");
	case OVER_FIELDS:
		snprintf(sp->detail, sizeof(sp->detail),
		         "a spawn request of more than %d fields is over the bound (%d arguments "
		         "per command)",
		         PMI_SPAWN_FIELDS_MAX, PMI_SPAWN_ARGS_MAX);
		return bad(err, errlen, "too_many_fields");
	default:
		snprintf(sp->detail, sizeof(sp->detail),
		         "a spawn request of more than %d bytes per command is over the bound",
		         PMI_SPAWN_BYTES_MAX);
		return bad(err, errlen, "request_too_big");
	}
}

/* Pointer arrays for n entries (+ NULL). 0 or -1. */
static int vec(char ***v, int n)
{
	free(*v);
	*v = calloc((size_t)n + 1, sizeof(**v));
	return *v ? 0 : -1;
}

int pmi_spawn_parse(struct pmi_spawn *sp, struct pmi_spawn_req *req, char *err, size_t errlen)
{
	const int L = PMI_SPAWN_LIST_MAX;

	memset(req, 0, sizeof(*req));
	sp->detail[0] = '\0';
	sp->next = 0;
	if (sp->over)
		return over(sp, err, errlen);
	if (int_field(sp, "nprocs", 1, PMI_SPAWN_NPROCS_MAX, -1, &req->nprocs) < 0)
		return bad(err, errlen, "bad_nprocs");
	req->exe = field(sp, "execname");
	if (!req->exe || !*req->exe)
		return bad(err, errlen, "missing_execname");
	if (int_field(sp, "totspawns", 1, L, 1, &req->totspawns) < 0 ||
	    int_field(sp, "spawnssofar", 0, L, req->totspawns, &req->spawnssofar) < 0)
		return bad(err, errlen, "bad_totspawns");
	if (int_field(sp, "argcnt", 0, 1 << 30, 0, &req->argc) < 0)
		return bad(err, errlen, "bad_args");
	if (req->argc > PMI_SPAWN_ARGS_MAX) {
		snprintf(sp->detail, sizeof(sp->detail),
		         "a spawn command with %d arguments is over the bound of %d", req->argc,
		         PMI_SPAWN_ARGS_MAX);
		return bad(err, errlen, "too_many_args");
	}
	if (vec(&sp->argv, req->argc) < 0)
		return bad(err, errlen, "out_of_memory");
	if (list_fields(sp, "arg%d", req->argc, field(sp, "arg0") ? 0 : 1, sp->argv, 1) < 0)
		return bad(err, errlen, "bad_args");
	req->argv = sp->argv;
	if (int_field(sp, "preput_num", 0, L, 0, &req->npreput) < 0)
		return bad(err, errlen, "bad_preput");
	if (vec(&sp->preput, 2 * req->npreput) < 0)
		return bad(err, errlen, "out_of_memory");
	if (list_fields(sp, "preput_key_%d", req->npreput, 0, sp->preput, 2) < 0 ||
	    list_fields(sp, "preput_val_%d", req->npreput, 0, sp->preput + 1, 2) < 0)
		return bad(err, errlen, "bad_preput");
	req->preput = sp->preput;
	if (int_field(sp, "info_num", 0, L, 0, &req->ninfo) < 0)
		return bad(err, errlen, "bad_info");
	if (vec(&sp->info, 2 * req->ninfo) < 0)
		return bad(err, errlen, "out_of_memory");
	if (list_fields(sp, "info_key_%d", req->ninfo, 0, sp->info, 2) < 0 ||
	    list_fields(sp, "info_val_%d", req->ninfo, 0, sp->info + 1, 2) < 0)
		return bad(err, errlen, "bad_info");
	req->info = sp->info;
	return 0;
}

const char *pmi_spawn_detail(const struct pmi_spawn *sp)
{
	return sp->detail;
}
