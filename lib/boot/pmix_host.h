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
		BOOT_PMIX_CONNECT,
		BOOT_PMIX_DISCONNECT,
		BOOT_PMIX_SPAWN,
		BOOT_PMIX_JOBCTRL,
		BOOT_PMIX_DMODEX_DATA, /* the library answered our PMIx_server_dmodex_request */
	} what;
	char nspace[PMIX_MAX_NSLEN + 1];
	pmix_rank_t rank; /* the caller (FENCE: PMIX_RANK_WILDCARD when the whole job takes part;
	                   * DMODEX: the rank asked for) */
	int status;       /* ABORT: the code; DMODEX_DATA: the library's status */
	char *msg;        /* ABORT: the message (malloc'd) */
	/* FENCE: this node's contribution; SPAWN: the commands as a SPAWN frame has them (after
	 * the rank); JOBCTRL: u32 signo, u32 n, n x (str nspace, u32 rank); DMODEX_DATA: the
	 * rank's data (all malloc'd) */
	char *data;
	size_t ndata;
	int partial; /* FENCE: over some of the job's ranks, or over other jobs' too */
	int collect; /* FENCE: with data (PMIX_COLLECT_DATA) */
	/* FENCE (partial), CONNECT, DISCONNECT: the participants (malloc'd) */
	pmix_proc_t *procs;
	size_t nprocs;
	pmix_modex_cbfunc_t cbfunc;
	void *cbdata;
	void *ctx; /* DMODEX_DATA: whose request (pmix_xjob.c) */
	/* PUBLISH, LOOKUP, UNPUBLISH: the names (NULL-terminated, malloc'd), PUBLISH their values
	 * as the name service keeps them (pmi_names_plain: publisher, type, value) */
	char **keys, **vals;
	int once;                /* PUBLISH: for one reading (PMIX_PERSIST_FIRST_READ) */
	int wait_ms;             /* LOOKUP: wait for the names this long (PMIX_WAIT), 0 = not */
	int nkey, nfound, asked; /* names: this call's progress (job_pmix_names.c) */
	pmix_pdata_t *pd;
	pmix_op_cbfunc_t opcb; /* also CONNECT, DISCONNECT */
	pmix_lookup_cbfunc_t lkcb;
	pmix_spawn_cbfunc_t spcb;
	pmix_info_cbfunc_t infocb; /* JOBCTRL */
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

/* Ask the library for a local rank's data (PMIx_server_dmodex_request); the answer comes to
 * the agent's loop as a DMODEX_DATA call carrying ctx. 0, or -1 (then no call comes). */
int boot_pmix_dmodex_local(const char *nspace, pmix_rank_t rank, void *ctx);

/* pmix_xjob.c: the server stops: everything waiting across jobs is answered, what was kept of
 * other jobs goes. */
void boot_pmix_xjob_fini(boot_agent_t *ag);

/* job_pmix.c: one call for the job of its namespace (which may be gone: then answer it). */
void boot_job_pmix_call(boot_agent_t *ag, struct boot_pmix_call *c);

#endif
