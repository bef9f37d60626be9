/* lib/boot/job_pmix_names.c: PMIx publish/lookup/unpublish of a job's PMIx ranks, key by key
 * on the name service PMI uses (the universe's head agent, or the job's own table), so PMI
 * and PMIx ranks share one (doc/PROTOCOL-pmi.md part 6, "Names"). */
#include "core.h"
#include "job_pmix_int.h"

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
	default:
		pd->value.type = PMIX_STRING;
		pd->value.data.string = strdup(val);
	}
}

/* The active call is done: answer it, start the next. */
void boot_job_pmix_names_finish(boot_job_t *j, pmix_status_t st)
{
	struct boot_job_pmix *px = j->px;
	struct boot_pmix_call *c = px->nq;

	px->nq = c->next;
	if (c->what == BOOT_PMIX_LOOKUP) {
		if (st == PMIX_SUCCESS && px->nfound == 0)
			st = PMIX_ERR_NOT_FOUND;
		c->lkcb(st, px->pd, (size_t)px->nfound, c->cbdata);
		for (int i = 0; i < px->nfound; i++)
			PMIX_PDATA_DESTRUCT(&px->pd[i]);
	} else {
		c->opcb(st, c->cbdata);
	}
	free(px->pd);
	px->pd = NULL;
	px->nkey = px->nfound = px->asked = 0;
	boot_pmix_call_free(c);
	if (!px->dying)
		names_next(j);
}

/* One key's answer (rc 0: done, val the lookup's value; else val the reason). */
static void names_answer(boot_job_t *j, int rc, const char *val)
{
	struct boot_job_pmix *px = j->px;
	struct boot_pmix_call *c = px->nq;

	px->asked = 0;
	if (c->what == BOOT_PMIX_LOOKUP && rc == 0 && val)
		names_decode(&px->pd[px->nfound++], c->keys[px->nkey], val, c->nspace);
	else if (c->what != BOOT_PMIX_LOOKUP && rc != 0) {
		core_log(CORE_LOG_DEBUG, "agent: job %u: PMIx name %s: %s", j->js.jobid,
		         c->keys[px->nkey], val ? val : "failed");
		boot_job_pmix_names_finish(j, val && !strcmp(val, "already_published")
		                                  ? PMIX_ERR_DUPLICATE_KEY
		                                  : PMIX_ERR_NOT_FOUND);
		return;
	}
	px->nkey++;
	names_next(j);
}

/* Ask for the active call's next key, or answer it when none is left. */
static void names_next(boot_job_t *j)
{
	struct boot_job_pmix *px = j->px;
	struct boot_pmix_call *c;

	while ((c = px->nq) && !px->asked) {
		const char *key = c->keys ? c->keys[px->nkey] : NULL;
		if (!key) {
			boot_job_pmix_names_finish(j, PMIX_SUCCESS);
			return;
		}
		if (c->what == BOOT_PMIX_LOOKUP && !px->pd) {
			size_t n = 0;
			while (c->keys[n])
				n++;
			if (!(px->pd = calloc(n + 1, sizeof *px->pd))) {
				boot_job_pmix_names_finish(j, PMIX_ERR_NOMEM);
				return;
			}
		}
		int op = c->what == BOOT_PMIX_PUBLISH  ? PMI_NAME_PUBLISH
		         : c->what == BOOT_PMIX_LOOKUP ? PMI_NAME_LOOKUP
		                                       : PMI_NAME_UNPUBLISH;
		const char *port = op == PMI_NAME_PUBLISH ? c->vals[px->nkey] : NULL;
		if (boot_job_names(j, (int)c->rank, op, key, port) == 0) {
			px->asked = 1; /* the head agent answers: boot_job_pmix_names_done */
			return;
		}
		const char *val = NULL, *why = NULL;
		int rc = pmi_server_names(j->pmi, op, key, port, &val, &why);
		names_answer(j, rc, rc == 0 ? val : why);
		return; /* names_answer went on */
	}
}

void boot_job_pmix_names_done(boot_job_t *j, int rank, int rc, const char *val)
{
	if (j->px && j->px->nq && j->px->asked && (int)j->px->nq->rank == rank)
		names_answer(j, rc, val);
}

void boot_job_pmix_names_call(boot_job_t *j, struct boot_pmix_call *c)
{
	struct boot_pmix_call **t = &j->px->nq;

	while (*t)
		t = &(*t)->next;
	c->next = NULL;
	*t = c;
	if (j->px->nq == c)
		names_next(j);
}

/* ====} */
