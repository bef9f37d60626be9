/* lib/boot/pmix_host.h: the agent as a PMIx server host (OpenPMIx's server library, one per
 * agent, started at the first job that has PMIx ranks). The library calls the host from its
 * own progress thread; pmix_host.c queues those calls and runs them on the agent's loop, where
 * job_pmix.c maps them onto what the agent does for PMI (tree fence, abort, exits). */
#ifndef LAMKIT_BOOT_PMIX_HOST_H
#define LAMKIT_BOOT_PMIX_HOST_H

#include "agent.h"

#include <pmix.h>
#include <pmix_server.h>

/* A server call, moved to the agent's loop. */
struct boot_pmix_call {
	enum {
		BOOT_PMIX_CONNECTED,
		BOOT_PMIX_FINALIZED,
		BOOT_PMIX_ABORT,
		BOOT_PMIX_FENCE,
		BOOT_PMIX_DMODEX,
		BOOT_PMIX_PUBLISH,
		BOOT_PMIX_LOOKUP,
		BOOT_PMIX_UNPUBLISH,
	} what;
	char nspace[PMIX_MAX_NSLEN + 1];
	pmix_rank_t rank; /* the caller (FENCE: PMIX_RANK_WILDCARD when the whole job takes part) */
	int status;       /* ABORT: the code */
	char *msg;        /* ABORT: the message (malloc'd) */
	char *data;       /* FENCE: this node's contribution (malloc'd) */
	size_t ndata;
	int partial; /* FENCE: over some of the job's ranks, or over other jobs' too */
	pmix_modex_cbfunc_t cbfunc;
	void *cbdata;
	/* PUBLISH, LOOKUP, UNPUBLISH: the names (NULL-terminated, malloc'd), PUBLISH their values
	 * as the name service keeps them (pmi_names_plain: publisher, type, value) */
	char **keys, **vals;
	pmix_op_cbfunc_t opcb;
	pmix_lookup_cbfunc_t lkcb;
	struct boot_pmix_call *next;
};

/* Start this agent's PMIx server if it is not running (session files under the agent's
 * directory). 0, or -1 with a one-line reason in err. */
int boot_pmix_start(boot_agent_t *ag, char *err, size_t errlen);
/* Whether the server runs. */
int boot_pmix_running(const boot_agent_t *ag);
/* Serve the calls queued so far (a rank exited: its finalize is queued before it could exit,
 * and must count before its exit is judged). Nothing when no server runs. */
void boot_pmix_drain(boot_agent_t *ag);
/* Stop the server (agent teardown). Accepts an agent that never started one. */
void boot_pmix_stop(boot_agent_t *ag);

/* Wait for a PMIx operation the agent started with cbfunc = boot_pmix_op_cb: its status.
 * Bounded (10 s, then PMIX_ERR_TIMEOUT). */
struct boot_pmix_wait;
pmix_status_t boot_pmix_wait(struct boot_pmix_wait *w);
struct boot_pmix_wait *boot_pmix_wait_new(void);
void boot_pmix_op_cb(pmix_status_t status, void *cbdata);

/* Free a call's strings and the call. */
void boot_pmix_call_free(struct boot_pmix_call *c);

/* job_pmix.c: one call for the job of its namespace (which may be gone: then answer it). */
void boot_job_pmix_call(boot_agent_t *ag, struct boot_pmix_call *c);

#endif
