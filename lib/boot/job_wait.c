/* lib/boot/job_wait.c: how a job's ranks on this node wait: spinning, or blocking (yield, then
 * sleep on a doorbell; doc/PROTOCOL-mpi-wire.md section 9). */
#include "job_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/*
 * The ranks decide for themselves (tp_should_yield), from LAMKIT_WAIT, the older LAMKIT_YIELD,
 * and LAMKIT_OVERSUBSCRIBED, which the agent sets from what it knows best: how many of the
 * job's ranks run here and how many CPUs they may use between them (the union of their
 * bindings, or the agent's own CPUs when they are not bound). The agent decides the same way,
 * for one more thing: ranks that block share the agent's session. With the kernel's autogroup
 * (one scheduling group per session) a rank in a session of its own yields only to its own
 * group, i.e. to nobody: 4 yielding ranks on 2 cores took 3-8 ms per barrier where ranks in
 * one group take 10-20 us (Open MPI's mpirun keeps its ranks in one session too). Spinning
 * ranks keep a session each: there the group is what gives each rank its share (spawn.c).
 */

/* CPUs the job's ranks here may use between them. */
static int usable_cpus(const boot_job_t *j)
{
	cpu_set_t all, set;
	int bound = 0;

	CPU_ZERO(&all);
	for (int i = 0; i < j->nranks; i++)
		if (j->r[i].cpus) {
			CPU_OR(&all, &all, j->r[i].cpus);
			bound++;
		}
	if (bound < j->nranks) { /* some run wherever the agent may */
		if (sched_getaffinity(0, sizeof set, &set) < 0)
			return 0;
		CPU_OR(&all, &all, &set);
	}
	return CPU_COUNT(&all);
}

void boot_job_wait_mode(boot_job_t *j)
{
	const char *w = boot_env_get(j->js.env, "LAMKIT_WAIT");
	const char *y = boot_env_get(j->js.env, "LAMKIT_YIELD");
	int cpus;

	j->oversub = (cpus = usable_cpus(j)) > 0 && j->nranks > cpus;
	if (w && !strcmp(w, "block"))
		j->blocking = 1;
	else if (w && !strcmp(w, "spin"))
		j->blocking = 0;
	else if (y && *y)
		j->blocking = strcmp(y, "0") != 0;
	else
		j->blocking = j->oversub;
}
