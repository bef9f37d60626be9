/* lib/boot/jobctl.h: the job controller inside mpiexec: starts the job on its agents, prints
 * the ranks' output line by line, feeds stdin to rank 0, forwards signals, completes the PMI
 * fences of jobs spread over several agents, and decides the job's exit status (the first
 * failure's). */
#ifndef LAMKIT_BOOT_JOBCTL_H
#define LAMKIT_BOOT_JOBCTL_H

#include "place.h"
#include "proto.h"
#include "universe.h"
#include "watch.h"

#include <sys/types.h>

/* Exit status of a job that ran out of --timeout (as timeout(1)). */
#define BOOT_EXIT_TIMEOUT 124
/* Exit status when a program could not be started: not found / not executable (as sh). */
#define BOOT_EXIT_NOTFOUND 127
#define BOOT_EXIT_NOEXEC   126

/* How long mpiexec waits for an agent's connection and handshake. */
#define BOOT_AGENT_CONNECT_MS 5000
/* How long mpiexec waits for the agents' JOB_DONE after it sent KILL. */
#define BOOT_AGENT_KILL_MS 10000

struct boot_run_opts {
	/* The job. boot_run_local sends it as it is (ranks/nagents for one agent); the others
	 * place its size ranks and send each agent its own ranks, nagents, process_mapping,
	 * universe_size and oversubscribed. */
	struct boot_jobspec *js;
	int timeout_s;     /* 0 = none */
	int kill_grace_ms; /* after forwarding SIGINT/TERM/HUP, SIGKILL after this */
	int verbose;
	int singinit_fd; /* >= 0: adopt this singleton's PMI socket as rank 0 (local only) */
	pid_t singinit_pid;
	/* universe: what happens when a node of the job fails (--on-node-failure) */
	int on_node_failure;
	/* universe: the watch's view when mpiexec asked already (boot_universe_view), or NULL */
	const struct boot_wsummary *view;
	/* universe: one rank per node up (lamkit exec, one app): the job's size is counted again
	 * whenever it is placed, so that a node found down at the start leaves it one rank less
	 * rather than a second rank on another node */
	int per_node;
};

enum { BOOT_NODEFAIL_ABORT = 0, BOOT_NODEFAIL_CONTINUE = 1 };

/* Run the job on one transient local agent (forked from us). Returns the exit status. */
int boot_run_local(const struct boot_run_opts *o);

/* Run the job on the agents of a booted universe: place the ranks over its nodes, connect to
 * each node used (secure links, in parallel, BOOT_AGENT_CONNECT_MS each) and start its part.
 * A node that cannot be reached ends the job with 111; a placement error (unknown -hosts
 * entry, no schedulable node) returns 100 before anything starts. Returns the exit status. */
int boot_run_universe(const struct boot_run_opts *o, const struct boot_universe *u,
                      const struct boot_place_opts *p);

/* The nodes of a universe as placement sees them (pointing into u). malloc'd; free(). */
struct boot_place_node *boot_universe_place_nodes(const struct boot_universe *u);
/* Ask the universe's agents (in parallel, at most timeout_ms) for the watch's view: the first
 * HELLO that comes. Node index `skip` (0: none) is not asked: `grow` asks the others whether a
 * node is down, not the node's own agent, which may still run cut off, leading itself in a view
 * of its own where it is up. 0, or -1 when no agent answered (v then knows nothing). */
int boot_universe_view(const struct boot_universe *u, int skip, int timeout_ms,
                       struct boot_wsummary *v);
/* Wait (at most timeout_ms) until the agent of node `index`, just started by `grow`, is in the
 * universe's watch: its own view names a head and not itself down, and a head of its own only
 * when it is the one node up. 0 (*head: the head it follows), or -1 (*head: what it last
 * said, 0 when it named none yet). */
int boot_universe_joined(const struct boot_universe *u, int index, int timeout_ms, int *head);
/* Nodes the view has down no longer take ranks (their schedule is cleared). -1 with one line in
 * err when the -hosts filter names one of them; else how many of the nodes that would take
 * ranks were taken out (nodes has u->nnodes entries, in u's order). */
int boot_universe_place_up(const struct boot_universe *u, const struct boot_wsummary *v,
                           struct boot_place_node *nodes, const char *hosts, char *err,
                           size_t errlen);
/* The nodes --local-agents k[:slots] stands for: "<hostname>:1".."<hostname>:k" with slots
 * each (<= 0: this host's CPU count). One malloc'd block (names included); free(). */
struct boot_place_node *boot_local_agent_nodes(int k, int slots);

/* Testing aid (mpiexec --local-agents K[:S]): fork k transient local agents, treat them as
 * nodes "<hostname>:1".."<hostname>:k" of slots each (<= 0: this host's CPU count), and run
 * the job across them as boot_run_universe would (plain socketpair links). */
int boot_run_local_agents(const struct boot_run_opts *o, int k, int slots,
                          const struct boot_place_opts *p);

#endif
