/* lib/boot/jobctl_pmix.c: mpiexec's part in PMIx between the jobs of its family
 * (doc/PROTOCOL-agent.md, "PMIx across jobs"): it knows where every rank of every job of the
 * family runs, so it routes an agent's request for another job's rank's data (DMODEX) to that
 * rank's agent and the answer back; it signals the ranks a PMIx rank's job control names
 * (JOB_CTRL, what `lamkit kill` does); and it tells a job's PMIx ranks that one of them died
 * (PROC_EVENT). */
#include "core.h"
#include "jobctl_internal.h"
#include "ucall.h"

#include <pmix_common.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctl_dmx {
	uint32_t serial;
	struct agent *from, *to;
	uint32_t from_jobid, req;
	struct ctl_dmx *next;
};

static int sendw(struct agent *a, unsigned type, struct core_wbuf *w, const void *x, size_t n)
{
	int rc = -1;

	if (a && a->link && !a->done && !w->err)
		rc = boot_link_send(a->link, type, w->p, w->len, x, n);
	core_w_free(w);
	return rc;
}

/* The job of the family named ns, or NULL. */
static struct ctl *family_job(struct ctl *root, const char *ns)
{
	if (!strcmp(root->o->js->kvsname, ns))
		return root;
	for (int k = 0; k < root->nsubs; k++)
		if (!strcmp(root->subs[k]->o->js->kvsname, ns))
			return root->subs[k];
	return NULL;
}

/* The agent of c's job that runs rank (any of them for BOOT_RANK_ANY), or NULL. */
static struct agent *agent_of(struct ctl *c, uint32_t rank)
{
	for (int i = 0; i < c->nag; i++) {
		struct agent *a = &c->ag[i];
		if (a->done || !a->link || !a->started)
			continue;
		if (rank == BOOT_RANK_ANY || !c->placed)
			return a;
		for (int k = 0; k < a->nranks; k++)
			if ((uint32_t)a->ranks[k] == rank)
				return a;
	}
	return NULL;
}

static void dmodex_answer(struct agent *a, uint32_t jobid, uint32_t req, pmix_status_t st,
                          uint32_t kind, const char *p, size_t n)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, jobid);
	core_w_u32(&w, req);
	core_w_u32(&w, (uint32_t)st);
	core_w_u32(&w, kind);
	sendw(a, BOOT_MSG_DMODEX_REPLY, &w, p, n);
}

void boot_ctl_dmodex(struct agent *a, struct core_rbuf *r)
{
	struct ctl *root = boot_ctl_root(a->c), *job;
	uint32_t req = core_r_u32(r);
	const char *ns = core_r_str(r);
	uint32_t rank = core_r_u32(r);
	struct agent *to = NULL;
	struct ctl_dmx *d = NULL;

	if (r->err)
		return;
	if ((job = family_job(root, ns)) && (to = agent_of(job, rank)) &&
	    (d = calloc(1, sizeof *d))) {
		if (++root->dmx_serial == 0)
			root->dmx_serial = 1;
		*d = (struct ctl_dmx){.serial = root->dmx_serial,
		                      .from = a,
		                      .to = to,
		                      .from_jobid = a->c->o->js->jobid,
		                      .req = req,
		                      .next = root->dmx};
		struct core_wbuf w = {0};
		core_w_u32(&w, job->o->js->jobid);
		core_w_u32(&w, d->serial);
		core_w_str(&w, ns);
		core_w_u32(&w, rank);
		if (sendw(to, BOOT_MSG_DMODEX, &w, NULL, 0) == 0) {
			root->dmx = d;
			return;
		}
		free(d);
	}
	dmodex_answer(a, a->c->o->js->jobid, req, PMIX_ERR_NOT_FOUND, 0, NULL, 0);
}

void boot_ctl_dmodex_reply(struct agent *a, struct core_rbuf *r)
{
	struct ctl *root = boot_ctl_root(a->c);
	uint32_t serial = core_r_u32(r), st = core_r_u32(r), kind = core_r_u32(r);
	size_t n = r->len - r->off;
	const char *p = core_r_bytes(r, n);

	if (r->err)
		return;
	for (struct ctl_dmx **q = &root->dmx; *q; q = &(*q)->next) {
		struct ctl_dmx *d = *q;
		if (d->serial != serial || d->to != a)
			continue;
		*q = d->next;
		dmodex_answer(d->from, d->from_jobid, d->req, (pmix_status_t)st, kind, p, n);
		free(d);
		return;
	}
}

void boot_ctl_dmodex_gone(struct agent *a)
{
	struct ctl *root = boot_ctl_root(a->c);

	for (struct ctl_dmx **q = &root->dmx; *q;) {
		struct ctl_dmx *d = *q;
		if (d->to != a && d->from != a) {
			q = &d->next;
			continue;
		}
		*q = d->next;
		if (d->to == a)
			dmodex_answer(d->from, d->from_jobid, d->req, PMIX_ERR_NOT_FOUND, 0, NULL,
			              0);
		free(d);
	}
}

void boot_ctl_pmix_free(struct ctl *c)
{
	while (c->dmx) {
		struct ctl_dmx *d = c->dmx;
		c->dmx = d->next;
		free(d);
	}
}

/* Send signo to `n` ranks (ranks: n x u32, as in the frame) of job c, all of them when
 * ranks is NULL. */
static void signal_ranks(struct ctl *c, uint32_t signo, const char *ranks, uint32_t n)
{
	for (int i = 0; i < c->nag; i++) {
		struct core_wbuf w = {0};
		core_w_u32(&w, c->o->js->jobid);
		core_w_u32(&w, signo);
		if (ranks) {
			core_w_u32(&w, n);
			core_w_bytes(&w, ranks, (size_t)n * 4);
		}
		if (c->ag[i].started)
			sendw(&c->ag[i], BOOT_MSG_SIGNAL, &w, NULL, 0);
		else
			core_w_free(&w);
	}
}

/* Another mpiexec's job in the universe (namespace kvs_<pid>_<jobid>): what `lamkit kill`
 * does, JOB_SIGNAL to every node, whole jobs only. Blocks mpiexec's loop for the round trip
 * (5 s at most). */
static pmix_status_t universe_signal(struct ctl *root, const char *ns, uint32_t rank,
                                     uint32_t signo)
{
	int pid;
	unsigned job, ranks = 0;
	char tail;

	if (!root->u || sscanf(ns, "kvs_%d_%u%c", &pid, &job, &tail) != 2 || !job)
		return PMIX_ERR_NOT_FOUND;
	if (rank != BOOT_RANK_ANY)
		return PMIX_ERR_NOT_SUPPORTED; /* `lamkit kill` signals a whole job */
	struct boot_ucall_res *res = calloc((size_t)root->u->nnodes + 1, sizeof *res);
	struct core_wbuf w = {0};
	core_w_u32(&w, job);
	core_w_u32(&w, signo);
	struct boot_ucall_req q = {.type = BOOT_MSG_JOB_SIGNAL,
	                           .reply_type = BOOT_MSG_JOB_SIGNAL_REPLY,
	                           .payload = w.p,
	                           .plen = w.len,
	                           .timeout_ms = 5000,
	                           .together = 1};
	if (res && !w.err)
		boot_ucall_ex(root->u, &q, res);
	for (int i = 0; res && i < root->u->nnodes; i++) {
		struct core_rbuf rb = {.p = res[i].reply, .len = res[i].rlen};
		core_r_u32(&rb);
		unsigned k = core_r_u32(&rb);
		if (res[i].ok && !rb.err)
			ranks += k;
	}
	if (res)
		boot_ucall_free(res, root->u->nnodes);
	free(res);
	core_w_free(&w);
	return ranks ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
}

void boot_ctl_jobctrl(struct agent *a, struct core_rbuf *r)
{
	struct ctl *root = boot_ctl_root(a->c);
	uint32_t req = core_r_u32(r), who = core_r_u32(r), signo = core_r_u32(r);
	uint32_t n = core_r_u32(r);
	pmix_status_t st = PMIX_SUCCESS;

	if (r->err || signo == 0 || signo >= 65 || n > (r->len - r->off) / 5)
		st = PMIX_ERR_BAD_PARAM;
	for (uint32_t i = 0; i < n && st != PMIX_ERR_BAD_PARAM; i++) {
		const char *ns = core_r_str(r);
		uint32_t rank = core_r_u32(r);
		struct ctl *job = r->err ? NULL : family_job(root, ns);
		if (!job && !r->err) { /* another job of the universe, or none */
			pmix_status_t us = universe_signal(root, ns, rank, signo);
			if (us != PMIX_SUCCESS)
				st = us;
			if (a->c->o->verbose)
				boot_ctl_msg(
				    a->c, "%sjob control: signal %u to job %s of the universe: %s",
				    a->c->label, signo, ns,
				    us == PMIX_SUCCESS ? "sent" : "not found");
			continue;
		}
		if (!job) {
			st = PMIX_ERR_BAD_PARAM;
			continue;
		}
		if (a->c->o->verbose && rank == BOOT_RANK_ANY)
			boot_ctl_msg(a->c, "%sjob control: signal %u to every rank of %s",
			             a->c->label, signo, ns);
		else if (a->c->o->verbose)
			boot_ctl_msg(a->c, "%sjob control: signal %u to rank %u of %s", a->c->label,
			             signo, rank, ns);
		char one[4];
		for (int k = 0; k < 4; k++)
			one[k] = (char)(rank >> (8 * k));
		signal_ranks(job, signo, rank == BOOT_RANK_ANY ? NULL : one, 1);
		/* a rank this signal kills is named with who sent it */
		job->ctrl_sig = (int)signo;
		if (who == BOOT_RANK_TOOL)
			snprintf(job->ctrl_who, sizeof job->ctrl_who, "a PMIx tool on %.60s",
			         a->host);
		else
			snprintf(job->ctrl_who, sizeof job->ctrl_who, "%srank %u", a->c->label,
			         who);
	}
	struct core_wbuf w = {0};
	core_w_u32(&w, a->c->o->js->jobid);
	core_w_u32(&w, req);
	core_w_u32(&w, (uint32_t)st);
	sendw(a, BOOT_MSG_JOB_CTRL_REPLY, &w, NULL, 0);
}

int boot_ctl_notify_death(struct ctl *c, int rank, int st)
{
	int told = 0;

	if (c->npmix <= 0)
		return 0;
	for (int i = 0; i < c->nag; i++) {
		struct core_wbuf w = {0};
		if (!c->ag[i].started)
			continue;
		core_w_u32(&w, c->o->js->jobid);
		core_w_u32(&w, (uint32_t)rank);
		core_w_u32(&w, (uint32_t)st);
		told += sendw(&c->ag[i], BOOT_MSG_PROC_EVENT, &w, NULL, 0) == 0;
	}
	return told > 0;
}

void boot_ctl_notify_job_end(struct ctl *c)
{
	struct ctl *p = c->parent, *r = boot_ctl_root(c);

	if (!p || c->ndone < c->nag || p->npmix <= 0 || r->failed || r->killed)
		return;
	for (int i = 0; i < p->nag; i++) {
		struct core_wbuf w = {0};
		if (!p->ag[i].started)
			continue;
		core_w_u32(&w, p->o->js->jobid);
		core_w_str(&w, c->o->js->kvsname);
		core_w_u32(&w, 0);
		sendw(&p->ag[i], BOOT_MSG_JOB_END_EVENT, &w, NULL, 0);
	}
}

void boot_ctl_notify_lost(struct ctl *c, const struct agent *a)
{
	for (int k = 0; k < a->nranks; k++) /* as if killed: PMIX_EXIT_CODE 137 */
		boot_ctl_notify_death(c, a->ranks[k], SIGKILL);
}
