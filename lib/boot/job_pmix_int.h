/* lib/boot/job_pmix_int.h: a job's PMIx state on this agent, shared by job_pmix.c (namespace,
 * environment, fence, the server's calls) and job_pmix_names.c (the name service). */
#ifndef LAMKIT_BOOT_JOB_PMIX_INT_H
#define LAMKIT_BOOT_JOB_PMIX_INT_H

#include "job_internal.h"
#include "pmix_host.h"

struct boot_job_pmix {
	int nlocal; /* this agent's PMIx ranks */
	int npmi;   /* this agent's PMI ranks (the PMI engine's nlocal) */
	int nregistered;
	int registered; /* the namespace */
	/* the local half of a fence: the PMI ranks' delta and the PMIx server's contribution */
	int pmi_in, px_in, entered;
	struct core_wbuf pmi_delta;
	char *px_data;
	size_t px_len;
	pmix_modex_cbfunc_t px_cb;
	void *px_cbdata;
	/* name-service calls in the order they came: each rank's first is active (the service
	 * answers by rank), at its key `nkey`; lookup results gather in its pd */
	struct boot_pmix_call *nq;
	int dying;
	/* spawns (by rank) and job-control requests (by serial) waiting for the controller */
	struct boot_job_pmix_req {
		int spawn, rank;
		uint32_t serial;
		pmix_spawn_cbfunc_t spcb;
		pmix_info_cbfunc_t infocb;
		void *cbdata;
		struct boot_job_pmix_req *next;
	} * reqs;
	uint32_t req_serial;
};

/* job_pmix.c */
/* Whether rank is served PMIx; the job's PMIx ranks, on every agent. */
int boot_job_rank_pmix(const boot_job_t *j, int rank);
int boot_job_pmix_size(const boot_job_t *j);
/* The job as another agent's server registers it (no local process): a pmix_info_t array
 * packed (PMIx_Data_pack: u32 count, then the array). 0 with *data malloc'd, or -1. */
int boot_job_pmix_describe(const boot_job_t *j, char **data, size_t *len);
/* DMODEX_REPLY to the controller: req's answer (kind 0 a rank's data, 1 the job's
 * description as "str nspace, u32 len, bytes"). */
void boot_job_pmix_dmodex_reply(boot_job_t *j, uint32_t req, int status, uint32_t kind,
                                const char *data, size_t len);

/* job_pmix_ctl.c: the library's spawn and job-control calls (c owned from here on; j may be
 * NULL: the job is gone, the call is answered). */
void boot_job_pmix_ctl_call(boot_job_t *j, struct boot_pmix_call *c);
/* SPAWN_REPLY for a PMIx rank's spawn: 1 when one waited for it. */
int boot_job_pmix_spawn_done(boot_job_t *j, int rank, int rc, const char *s);
/* Job end: spawns and job-control requests still waiting are answered. */
void boot_job_pmix_ctl_fini(boot_job_t *j);

/* pmix_xjob.c: PMIx beyond one job (the process's PMIx server's, not one job's). */
/* CONNECT, DISCONNECT, a fence over part of a job or several, DMODEX, DMODEX_DATA (owned). */
void boot_pmix_xjob_call(boot_agent_t *ag, struct boot_pmix_call *c);
/* XCOLL_DOWN (r after the jobid) on job j's rendezvous link. */
void boot_pmix_xjob_down(boot_job_t *j, struct core_rbuf *r);
/* Job j's rendezvous link is gone: its operations fail. */
void boot_pmix_xjob_rdv_lost(boot_job_t *j);
/* DMODEX from the controller for job j's rank (r after the jobid): answer with its data. */
void boot_pmix_xjob_dmodex_req(boot_job_t *j, struct core_rbuf *r);
/* DMODEX_REPLY from the controller (r after the jobid): the library's request is answered. */
void boot_pmix_xjob_dmodex_reply(boot_job_t *j, struct core_rbuf *r);
/* Rank of job j died here: requests for its data that the library still holds (it will
 * never commit it) are answered "not found". */
void boot_pmix_xjob_rank_gone(boot_job_t *j, int rank);
/* Job j ends here: the direct-modex requests about it or carried by it are answered "not
 * found"; what it held of other jobs goes when nobody else holds it. */
void boot_pmix_xjob_job_end(boot_job_t *j);

/* job_pmix_names.c: a publish, lookup or unpublish call of the library (owned from here on);
 * each rank's calls are served in order. */
void boot_job_pmix_names_call(boot_job_t *j, struct boot_pmix_call *c);
/* Answer the first name-service call with st (then the next ones start unless the job is
 * ending). */
void boot_job_pmix_names_finish(boot_job_t *j, pmix_status_t st);

#endif
