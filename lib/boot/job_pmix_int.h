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
	/* name-service calls, one at a time (the head agent answers by rank): the first is
	 * active, at key `nkey`; lookup results gather in pd */
	struct boot_pmix_call *nq;
	int nkey, nfound, asked, dying;
	pmix_pdata_t *pd;
};

/* job_pmix_names.c: a publish, lookup or unpublish call of the library (owned from here on);
 * calls are served one at a time, in order. */
void boot_job_pmix_names_call(boot_job_t *j, struct boot_pmix_call *c);
/* Answer the active name-service call with st (then the next one starts unless the job is
 * ending). */
void boot_job_pmix_names_finish(boot_job_t *j, pmix_status_t st);

#endif
