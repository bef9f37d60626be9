/* lib/boot/job_pmix_ctl.c: what a job's PMIx ranks ask of the job's controller, and what the
 * controller tells them: PMIx_Spawn becomes the family's spawn (SPAWN, as PMI's), job control
 * becomes signals to ranks of the family (JOB_CTRL, what `lamkit kill` does), a rank's death
 * becomes a PMIx event for the others (PROC_EVENT) before the job is ended, and the end of a
 * job they spawned one for the spawners (JOB_END_EVENT). */
#include "core.h"
#include "job_pmix_int.h"
#include "pmix_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static struct boot_job_pmix_req *req_new(boot_job_t *j)
{
	struct boot_job_pmix_req *q = calloc(1, sizeof *q);

	if (q) {
		q->next = j->px->reqs;
		j->px->reqs = q;
		if (++j->px->req_serial == 0)
			j->px->req_serial = 1;
		q->serial = j->px->req_serial;
	}
	return q;
}

/* Take the waiting request of rank (spawn) or serial (job control) off the list. */
static struct boot_job_pmix_req *req_take(boot_job_t *j, int spawn, int rank, uint32_t serial)
{
	for (struct boot_job_pmix_req **p = j->px ? &j->px->reqs : NULL; p && *p; p = &(*p)->next) {
		struct boot_job_pmix_req *q = *p;
		if (q->spawn == spawn && (spawn ? q->rank == rank : q->serial == serial)) {
			*p = q->next;
			return q;
		}
	}
	return NULL;
}

static void answer(struct boot_job_pmix_req *q, pmix_status_t st, const char *nspace)
{
	if (q->spawn) {
		pmix_nspace_t ns;
		PMIX_LOAD_NSPACE(ns, nspace ? nspace : "x");
		if (!nspace)
			ns[0] = '\0';
		q->spcb(st, ns, q->cbdata);
	} else {
		q->infocb(st, NULL, 0, q->cbdata, NULL, NULL);
	}
	free(q);
}

/* PMIx_Spawn: the family's spawn, as a PMI rank's (doc/PROTOCOL-agent.md, "Spawn"). */
static void spawn_call(boot_job_t *j, struct boot_pmix_call *c)
{
	struct boot_job_pmix_req *q = NULL;
	struct core_wbuf w = {0};

	for (struct boot_job_pmix_req *p = j->px->reqs; p; p = p->next)
		if (p->spawn && p->rank == (int)c->rank) {
			c->spcb(PMIX_ERR_BAD_PARAM, NULL,
			        c->cbdata); /* one at a time per rank, as PMI's */
			return;
		}
	if (!j->ctl || j->killed || !(q = req_new(j))) {
		c->spcb(j->ctl ? PMIX_ERR_NOMEM : PMIX_ERR_UNREACH, NULL, c->cbdata);
		return;
	}
	q->spawn = 1;
	q->rank = (int)c->rank;
	q->spcb = c->spcb;
	q->cbdata = c->cbdata;
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)c->rank);
	boot_job_send(j, BOOT_MSG_SPAWN, &w, c->data, c->ndata);
	core_w_free(&w);
}

int boot_job_pmix_spawn_done(boot_job_t *j, int rank, int rc, const char *s)
{
	struct boot_job_pmix_req *q = req_take(j, 1, rank, 0);

	if (!q)
		return 0;
	/* the controller said why in one line already; the library gets a PMIx status */
	answer(q, rc ? PMIX_ERR_OUT_OF_RESOURCE : PMIX_SUCCESS, rc ? NULL : s);
	return 1;
}

/* Job control: signals to ranks of the family, through the controller. */
static void jobctrl_call(boot_job_t *j, struct boot_pmix_call *c)
{
	struct boot_job_pmix_req *q = j->ctl && !j->killed ? req_new(j) : NULL;
	struct core_wbuf w = {0};

	if (!q) {
		c->infocb(j->ctl ? PMIX_ERR_NOMEM : PMIX_ERR_UNREACH, NULL, 0, c->cbdata, NULL,
		          NULL);
		return;
	}
	q->infocb = c->infocb;
	q->cbdata = c->cbdata;
	core_log(CORE_LOG_DEBUG, "agent: job %u: rank %u asks for job control", j->js.jobid,
	         c->rank);
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, q->serial);
	core_w_u32(&w, c->rank);
	boot_job_send(j, BOOT_MSG_JOB_CTRL, &w, c->data, c->ndata);
	core_w_free(&w);
}

void boot_job_pmix_ctl_call(boot_job_t *j, struct boot_pmix_call *c)
{
	if (!j || !j->px) { /* the job is gone */
		if (c->what == BOOT_PMIX_SPAWN)
			c->spcb(PMIX_ERR_NOT_FOUND, NULL, c->cbdata);
		else
			c->infocb(PMIX_ERR_NOT_FOUND, NULL, 0, c->cbdata, NULL, NULL);
	} else if (c->what == BOOT_PMIX_SPAWN) {
		spawn_call(j, c);
	} else {
		jobctrl_call(j, c);
	}
	boot_pmix_call_free(c);
}

/* {==== a rank's death: an event for the others */

#define NINFO 5

static void notified(pmix_status_t st, void *cbdata)
{
	pmix_info_t *info = cbdata;

	PMIX_INFO_FREE(info, NINFO);
}

/* Notify job j's PMIx ranks here (and nobody else: the server would reach every client that
 * registered for the code) of `code` about `affected`, with its exit code; to handlers
 * registered for the code only (non_default), or to default handlers too. */
static void notify(boot_job_t *j, pmix_status_t code, const pmix_proc_t *affected, int exit_code,
                   int non_default)
{
	pmix_info_t *info;
	pmix_proc_t src, to;
	pmix_status_t term = exit_code ? PMIX_ERR_JOB_TERMINATED : PMIX_SUCCESS;
	bool yes = true;

	PMIX_INFO_CREATE(info, NINFO);
	if (!info)
		return;
	PMIX_LOAD_PROCID(&to, j->js.kvsname, PMIX_RANK_WILDCARD);
	PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, affected, PMIX_PROC);
	PMIX_INFO_LOAD(&info[1], PMIX_EXIT_CODE, &exit_code, PMIX_INT);
	PMIX_INFO_LOAD(&info[2], PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_PROC);
	PMIX_INFO_LOAD(&info[3], PMIX_JOB_TERM_STATUS, &term, PMIX_STATUS);
	PMIX_INFO_LOAD(&info[4], non_default ? PMIX_EVENT_NON_DEFAULT : PMIX_EVENT_DO_NOT_CACHE,
	               &yes, PMIX_BOOL);
	/* the source is the affected proc: the library sends nothing back to the source, and a
	 * wildcard source of the job's own namespace would be every rank of it */
	src = *affected;
	pmix_status_t st =
	    PMIx_Notify_event(code, &src, PMIX_RANGE_CUSTOM, info, NINFO, notified, info);
	if (st != PMIX_SUCCESS) {
		core_log(CORE_LOG_ERROR, "agent: job %u: PMIx event %s: %s", j->js.jobid,
		         PMIx_Error_string(code), PMIx_Error_string(st));
		PMIX_INFO_FREE(info, NINFO);
	}
}

void boot_job_pmix_proc_died(boot_job_t *j, int rank, int status)
{
	int code = WIFEXITED(status)     ? WEXITSTATUS(status)
	           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
	                                 : 1;
	pmix_proc_t who;

	if (!j->px || !boot_pmix_running(j->ag))
		return;
	core_log(CORE_LOG_DEBUG, "agent: job %u: telling its PMIx ranks that rank %d died (%d)",
	         j->js.jobid, rank, code);
	PMIX_LOAD_PROCID(&who, j->js.kvsname, (pmix_rank_t)rank);
	notify(j, PMIX_ERR_PROC_ABORTED, &who, code, 0);
	notify(j, PMIX_EVENT_PROC_TERMINATED, &who, code, 1); /* to those who asked for it only */
}

/* A job that j's ranks spawned ended (exit code: the first failure's, 0 if none). */
static void job_ended(boot_job_t *j, const char *nspace, int code)
{
	pmix_proc_t all;

	if (!j->px || !boot_pmix_running(j->ag))
		return;
	core_log(CORE_LOG_DEBUG, "agent: job %u: telling its PMIx ranks that job %s ended (%d)",
	         j->js.jobid, nspace, code);
	PMIX_LOAD_PROCID(&all, nspace, PMIX_RANK_WILDCARD);
	notify(j, PMIX_EVENT_JOB_END, &all, code, 1);
}

/* ====} */

void boot_job_pmix_ctl_frame(boot_job_t *j, unsigned type, struct core_rbuf *r)
{
	switch (type) {
	case BOOT_MSG_XCOLL_DOWN: /* no universe: the family's mpiexec is the rendezvous */
		boot_pmix_xjob_down(j, r);
		break;
	case BOOT_MSG_DMODEX:
		boot_pmix_xjob_dmodex_req(j, r);
		break;
	case BOOT_MSG_DMODEX_REPLY:
		boot_pmix_xjob_dmodex_reply(j, r);
		break;
	case BOOT_MSG_JOB_END_EVENT: {
		const char *ns = core_r_str(r);
		int code = (int)core_r_u32(r);
		if (!r->err)
			job_ended(j, ns, code);
		break;
	}
	case BOOT_MSG_PROC_EVENT: {
		int rank = (int)core_r_u32(r), st = (int)core_r_u32(r);
		if (!r->err)
			boot_job_pmix_proc_died(j, rank, st);
		break;
	}
	case BOOT_MSG_JOB_CTRL_REPLY: {
		uint32_t serial = core_r_u32(r), st = core_r_u32(r);
		struct boot_job_pmix_req *q = r->err ? NULL : req_take(j, 0, 0, serial);
		if (q)
			answer(q, (pmix_status_t)(int32_t)st, NULL);
		break;
	}
	}
}

void boot_job_pmix_ctl_fini(boot_job_t *j)
{
	while (j->px && j->px->reqs) {
		struct boot_job_pmix_req *q = j->px->reqs;
		j->px->reqs = q->next;
		answer(q, PMIX_ERR_TIMEOUT, NULL);
	}
}
