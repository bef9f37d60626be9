/* lib/boot/agent.h: the per-node agent: runs jobs' local ranks, serves them PMI, forwards
 * their stdio and exit status to the job's controller (mpiexec). */
#ifndef LAMKIT_BOOT_AGENT_H
#define LAMKIT_BOOT_AGENT_H

#include "conn.h"
#include "ev.h"
#include "proto.h"

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

/* {==== used between agent.c and job.c */
struct boot_agent {
	core_ev_t *ev;
	core_conn_t *ctl;
	char root[4096]; /* session dir of this agent */
	const struct boot_agent_opts *opts;
	boot_job_t **jobs;
	int njobs;
	int ctl_gone;
	int64_t poke_timer;
};

/* A job may have finished: look again from the loop (not from inside the job's callback). */
void boot_agent_poke(boot_agent_t *ag);

/* Start a job from a decoded spec (takes ownership of js). Reports failures by frames. */
boot_job_t *boot_job_start(boot_agent_t *ag, struct boot_jobspec *js);
/* Handle a controller frame addressed to this job. */
void boot_job_frame(boot_job_t *j, unsigned type, struct core_rbuf *r);
/* A child was reaped: returns 1 if it was one of this job's ranks. */
int boot_job_reaped(boot_job_t *j, pid_t pid, int status);
/* Kill every rank (SIGKILL to its process group). */
void boot_job_kill(boot_job_t *j);
/* Controller output queue drained: resume reading ranks' output. */
void boot_job_resume_output(boot_job_t *j);
/* Whether the job finished (all ranks reaped, streams closed, DONE sent). */
int boot_job_finished(const boot_job_t *j);
uint32_t boot_job_id(const boot_job_t *j);
void boot_job_destroy(boot_job_t *j);
/* ====} */

#endif
