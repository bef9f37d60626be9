/* lib/boot/agent.h: the per-node agent: runs jobs' local ranks, serves them PMI, forwards
 * their stdio and exit status to the job's controller (mpiexec). Two ways to run: transient
 * (forked by mpiexec, one controller over a socketpair, ends with it) and universe (a daemon
 * booted by `lamkit boot`: authenticated controllers connect to its port, it starts child
 * agents of a launch tree, it ends on HALT or a signal). */
#ifndef LAMKIT_BOOT_AGENT_H
#define LAMKIT_BOOT_AGENT_H

#include "auth.h"
#include "ev.h"
#include "link.h"
#include "proto.h"
#include "watch.h"

#include <sys/types.h>

typedef struct boot_agent boot_agent_t;
typedef struct boot_job boot_job_t;

struct boot_agent_opts {
	const char *name; /* session sub-directory name, e.g. "local-<pid>" */
	int singinit_fd;  /* >= 0: a singleton's PMI socket to adopt as rank 0 of the first job */
	pid_t singinit_pid;
};

/* Serve the controller on ctl_fd until it hangs up and every job is gone (ranks killed and
 * reaped). Returns an exit status for the agent process. */
int boot_agent_run(int ctl_fd, const struct boot_agent_opts *o);

/* A universe agent, already connected and authenticated to its origin (boot or grow). */
struct boot_agent_uopts {
	const char *name; /* session sub-directory name: "u<id>-n<node>" */
	const char *universe;
	int node;
	int listen_fd; /* our port for controllers */
	int port;
	const unsigned char *key;
	core_ev_t *ev;       /* the loop the origin link lives on */
	boot_link_t *origin; /* the link to boot (ownership passes to the agent) */
	int booted;          /* UNIVERSE already received */
	/* called once the agent stops serving (halt, signal), before it hangs up on its
	 * controllers: `lamkit halt` returns after it (the RTE epilog runs here); may be NULL */
	void (*before_exit)(void *arg);
	void *arg;
};
int boot_agent_serve(const struct boot_agent_uopts *o);

/* {==== used between agent.c and job.c */
struct ctlr;
struct ulaunch;
struct early;
struct boot_agent {
	core_ev_t *ev;
	char root[4096]; /* session dir of this agent */
	const struct boot_agent_opts *opts;
	const struct boot_agent_uopts *uopts; /* universe mode, else NULL */
	struct ctlr *ctls;                    /* controller links */
	int nctls;
	boot_job_t **jobs;
	int njobs;
	int booted;   /* universe: the origin said the universe is complete */
	int stopping; /* transient: the controller is gone; universe: HALT or a signal */
	int64_t poke_timer;
	int64_t started_ms;
	struct ulaunch *launches; /* child agents being started for the launch tree */
	int nlaunches;
	struct early *early; /* fence contributions for jobs whose JOB_START is still on its way */
	int nearly;
	struct boot_names *names; /* the universe's name service, when this is its head */
	struct boot_xcoll *xcoll; /* its collectives over several jobs, when this is its head */
	struct boot_pmix *pmix;   /* the PMIx server (pmix_host.c), once a job needs it */
	boot_watch_t *watch;      /* universe: the watch among agents, once UNIVERSE came */
	int64_t inc;              /* this agent's incarnation (start, unix ms) */
	int declared_down;        /* the watch declared this node down: end everything, exit */
};

/* A job may have finished: look again from the loop (not from inside the job's callback). */
void boot_agent_poke(boot_agent_t *ag);

/* Start a job from a decoded spec (takes ownership of js) for controller ctl. Reports
 * failures by frames. */
boot_job_t *boot_job_start(boot_agent_t *ag, struct boot_jobspec *js, boot_link_t *ctl);
/* Handle a controller frame addressed to this job. */
void boot_job_frame(boot_job_t *j, unsigned type, struct core_rbuf *r);
/* A child was reaped: returns 1 if it was one of this job's ranks. */
int boot_job_reaped(boot_job_t *j, pid_t pid, int status);
/* Kill every rank (SIGKILL to its process group). */
void boot_job_kill(boot_job_t *j);
/* The job's controller is gone: kill it and send nothing more. */
void boot_job_orphan(boot_job_t *j);
/* A child agent's FENCE_UP (after the jobid) arrived on link from (the job's fence tree). */
void boot_job_fence_child(boot_job_t *j, boot_link_t *from, struct core_rbuf *r);
/* Link l is going away: forget it as a fence child. */
void boot_job_forget_link(boot_job_t *j, boot_link_t *l);
/* Controller output queue drained: resume reading ranks' output. */
void boot_job_resume_output(boot_job_t *j);
/* Whether the job finished (all ranks reaped, streams closed, DONE sent). */
int boot_job_finished(const boot_job_t *j);
uint32_t boot_job_id(const boot_job_t *j);
boot_link_t *boot_job_ctl(const boot_job_t *j);
int boot_job_nranks(const boot_job_t *j);
void boot_job_destroy(boot_job_t *j);
/* ====} */

#endif
