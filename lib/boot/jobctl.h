/* lib/boot/jobctl.h: the job controller inside mpiexec: starts the job on its agents, prints
 * the ranks' output line by line, feeds stdin to rank 0, forwards signals, and decides the
 * job's exit status (the first failure's). */
#ifndef LAMKIT_BOOT_JOBCTL_H
#define LAMKIT_BOOT_JOBCTL_H

#include "proto.h"

#include <sys/types.h>

/* Exit status of a job that ran out of --timeout (as timeout(1)). */
#define BOOT_EXIT_TIMEOUT 124
/* Exit status when a program could not be started: not found / not executable (as sh). */
#define BOOT_EXIT_NOTFOUND 127
#define BOOT_EXIT_NOEXEC   126

struct boot_run_opts {
	struct boot_jobspec *js; /* ranks/nagents filled for one local agent */
	int timeout_s;           /* 0 = none */
	int kill_grace_ms;       /* after forwarding SIGINT/TERM/HUP, SIGKILL after this */
	int verbose;
	int singinit_fd; /* >= 0: adopt this singleton's PMI socket as rank 0 */
	pid_t singinit_pid;
};

/* Run the job on a transient local agent (forked from us). Returns the exit status. */
int boot_run_local(const struct boot_run_opts *o);

#endif
