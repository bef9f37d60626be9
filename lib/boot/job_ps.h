/* lib/boot/job_ps.h: what `lamkit ps`, `clean` and `kill` ask of an agent's jobs: a record per
 * rank (state, CPU time, memory from /proc), and a signal to one job. Frames PS, CLEAN and
 * JOB_SIGNAL of doc/PROTOCOL-agent.md. */
#ifndef LAMKIT_BOOT_JOB_PS_H
#define LAMKIT_BOOT_JOB_PS_H

#include "agent.h"
#include "msg.h"

/* Append one record per rank of j to w: u32 jobid, u32 rank, u32 pid, u32 pmi (0 none,
 * 1 initialized, 2 finalized), str state ("run", "sleep", "disk", "stop", "zombie", "exited"),
 * i64 CPU time in ms (user + system), i64 resident memory in KiB, str command (the app's argv
 * joined, at most 200 bytes). Returns the number of records. */
int boot_job_ps(const boot_job_t *j, struct core_wbuf *w);
/* Send sig to the process group of every rank of j that is still running (terminal stop
 * signals become SIGSTOP, as for mpiexec's forwarding). Returns the number of ranks. */
int boot_job_signal(boot_job_t *j, int sig);

#endif
