/* lib/boot/job_pmix_names.c: PMIx publish/lookup/unpublish of a job's PMIx ranks, key by key
 * on the name service PMI uses (the universe's head agent, or the job's own table), so PMI
 * and PMIx ranks share one (doc/PROTOCOL-pmi.md part 6, "Names"). */
#include "core.h"
#include "job_pmix_int.h"
#include "names.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {==== the name service: PMIx publish/lookup/unpublish of a key each go where PMI's do (the
 * universe's head agent, or the job's own table), so PMI and PMIx ranks share one */

static void names_next(boot_job_t *j);

/* A lookup's value as PMIx data: its publisher and type when published over PMIx, else a
 * string (a PMI rank's port) of an unknown rank of the job. */
static void names_decode(pmix_pdata_t *pd, const char *key, const char *val, const char *ns)
{
	char pns[PMIX_MAX_NSLEN + 1] = "";
	unsigned rank = PMIX_RANK_UNDEF;
	int type = PMIX_STRING, off = 0;

	PMIX_PDATA_CONSTRUCT(pd);
	snprintf(pd->key, sizeof pd->key, "%s", key);
	if (val[0] == '\x1b' &&
	    sscanf(val + 1, "%255[^\x1f]\x1f%u\x1f%d\x1f%n", pns, &rank, &type, &off) == 3 && off)
		val += 1 + off;
	else
		snprintf(pns, sizeof pns, "%s", ns), rank = PMIX_RANK_UNDEF, type = PMIX_STRING;
	PMIX_LOAD_PROCID(&pd->proc, pns, (pmix_rank_t)rank);
	pd->value.type = (pmix_data_type_t)type;
	switch (type) {
	case PMIX_BOOL:
		pd->value.data.flag = strtol(val, NULL, 10) != 0;
		break;
	case PMIX_UINT8:
		pd->value.data.uint8 = (uint8_t)strtoul(val, NULL, 10);
		break;
	case PMIX_UINT16:
		pd->value.data.uint16 = (uint16_t)strtoul(val, NULL, 10);
		break;
	case PMIX_UINT32:
		pd->value.data.uint32 = (uint32_t)strtoul(val, NULL, 10);
		break;
	case PMIX_UINT64:
	case PMIX_SIZE:
		pd->value.data.uint64 = strtoull(val, NULL, 10);
		break;
	case PMIX_INT:
	case PMIX_INT32:
		pd->value.data.int32 = (int32_t)strtol(val, NULL, 10);
		break;
	case PMIX_INT64:
		pd->value.data.int64 = strtoll(val, NULL, 10);
		break;
	case PMIX_BYTE_OBJECT: {
		size_t vl = strlen(val), bin = 0, cap = vl / 4 * 3 + 3;
		char *raw = malloc(cap);
		if (raw && sodium_base642bin((unsigned char *)raw, cap, val, vl, NULL, &bin, NULL,
		                             sodium_base64_VARIANT_ORIGINAL) == 0) {
			pd->value.data.bo.bytes = raw;
			pd->value.data.bo.size = bin;
			break;
		}
		free(raw);
		pd->value.type = PMIX_STRING;
		pd->value.data.string = strdup(val);
		break;
	}
	default:
		pd->value.type = PMIX_STRING;
		pd->value.data.string = strdup(val);
	}
}

/* Call c is done: answer it and free it; the rank's next call starts. */
static void names_finish(boot_job_t *j, struct boot_pmix_call *c, pmix_status_t st)
{
	struct boot_job_pmix *px = j->px;

	for (struct boot_pmix_call **p = &px->nq; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->what == BOOT_PMIX_LOOKUP) {
		if (st == PMIX_SUCCESS && c->nfound == 0)
			st = PMIX_ERR_NOT_FOUND;
		c->lkcb(st, c->pd, (size_t)c->nfound, c->cbdata);
		for (int i = 0; i < c->nfound; i++)
			PMIX_PDATA_DESTRUCT(&c->pd[i]);
	} else {
		c->opcb(st, c->cbdata);
	}
	boot_pmix_call_free(c);
	if (!px->dying)
		names_next(j);
}

void boot_job_pmix_names_finish(boot_job_t *j, pmix_status_t st)
{
	if (j->px && j->px->nq)
		names_finish(j, j->px->nq, st);
}

/* One key's answer (rc 0: done, val the lookup's value; else val the reason). */
static void names_answer(boot_job_t *j, struct boot_pmix_call *c, int rc, const char *val)
{
	c->asked = 0;
	if (c->what == BOOT_PMIX_LOOKUP && rc == 0 && val)
		names_decode(&c->pd[c->nfound++], c->keys[c->nkey], val, c->nspace);
	else if (c->what != BOOT_PMIX_LOOKUP && rc != 0) {
		core_log(CORE_LOG_DEBUG, "agent: job %u: PMIx name %s: %s", j->js.jobid,
		         c->keys[c->nkey], val ? val : "failed");
		names_finish(j, c,
		             val && !strcmp(val, "already_published") ? PMIX_ERR_DUPLICATE_KEY
		                                                      : PMIX_ERR_NOT_FOUND);
		return;
	}
	c->nkey++;
	names_next(j);
}

/* The first call of its rank in the queue (a rank's calls go in order, ranks side by side:
 * the service answers by rank, and one rank's waiting lookup must not hold up another's
 * publish). */
static int names_first(const struct boot_job_pmix *px, const struct boot_pmix_call *c)
{
	for (const struct boot_pmix_call *p = px->nq; p != c; p = p->next)
		if (p->rank == c->rank)
			return 0;
	return 1;
}

/* Ask for call c's next key, or answer it when none is left. 1 when c was finished. */
static int names_step(boot_job_t *j, struct boot_pmix_call *c)
{
	const char *key = c->keys ? c->keys[c->nkey] : NULL;

	if (!key) {
		names_finish(j, c, PMIX_SUCCESS);
		return 1;
	}
	if (c->what == BOOT_PMIX_LOOKUP && !c->pd) {
		size_t n = 0;
		while (c->keys[n])
			n++;
		if (!(c->pd = calloc(n + 1, sizeof *c->pd))) {
			names_finish(j, c, PMIX_ERR_NOMEM);
			return 1;
		}
	}
	int op =
	    c->what == BOOT_PMIX_PUBLISH  ? (c->once ? BOOT_NAME_PUBLISH_ONCE : PMI_NAME_PUBLISH)
	    : c->what == BOOT_PMIX_LOOKUP ? (c->wait_ms ? BOOT_NAME_LOOKUP_WAIT : PMI_NAME_LOOKUP)
	                                  : PMI_NAME_UNPUBLISH;
	char ms[24];
	const char *port = NULL;
	if (c->what == BOOT_PMIX_PUBLISH)
		port = c->vals[c->nkey];
	else if (op == BOOT_NAME_LOOKUP_WAIT)
		snprintf(ms, sizeof ms, "%d", c->wait_ms > 0 ? c->wait_ms : 0), port = ms;
	if (boot_job_names(j, (int)c->rank, op, key, port) == 0) {
		c->asked = 1; /* the service answers: boot_job_pmix_names_done */
		return 0;
	}
	/* no service to ask: the job's own table (which cannot wait) */
	const char *val = NULL, *why = NULL;
	int pop = op == BOOT_NAME_PUBLISH_ONCE  ? PMI_NAME_PUBLISH
	          : op == BOOT_NAME_LOOKUP_WAIT ? PMI_NAME_LOOKUP
	                                        : op;
	int rc = pmi_server_names(j->pmi, pop, key, port, &val, &why);
	names_answer(j, c, rc, rc == 0 ? val : why);
	return 1; /* names_answer went on */
}

/* Start what can start: each rank's first call, if it is not waiting for an answer. */
static void names_next(boot_job_t *j)
{
	struct boot_job_pmix *px = j->px;

	for (struct boot_pmix_call *c = px->nq; c;) {
		struct boot_pmix_call *next = c->next;
		if (!c->asked && names_first(px, c) && names_step(j, c))
			return; /* the queue changed under us; names_answer/finish went on */
		c = next;
	}
}

void boot_job_pmix_names_done(boot_job_t *j, int rank, int rc, const char *val)
{
	if (!j->px)
		return;
	for (struct boot_pmix_call *c = j->px->nq; c; c = c->next)
		if ((int)c->rank == rank) {
			if (c->asked)
				names_answer(j, c, rc, val);
			return;
		}
}

void boot_job_pmix_names_call(boot_job_t *j, struct boot_pmix_call *c)
{
	struct boot_pmix_call **t = &j->px->nq;

	while (*t)
		t = &(*t)->next;
	c->next = NULL;
	*t = c;
	names_next(j);
}

/* ====} */
