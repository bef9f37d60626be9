/* lib/boot/jobctl_internal.h: the job controller's state, shared by jobctl.c (frames, stdin,
 * fences, signals, the failure policy) and jobctl_run.c (forking, placing, connecting). */
#ifndef LAMKIT_BOOT_JOBCTL_INTERNAL_H
#define LAMKIT_BOOT_JOBCTL_INTERNAL_H

#include "jobctl.h"
#include "link.h"
#include "outbuf.h"
#include "watch.h"

#include <stdint.h>
#include <sys/types.h>

struct ctl;
struct ctl_pipe;

#define BOOT_FENCE_FANOUT 4 /* children per agent in a job's fence tree */

struct agent {
	struct ctl *c;
	boot_link_t *link;
	char host[256];  /* the node, as messages name it */
	char where[400]; /* "host (addr:port)" for connection messages */
	int node;        /* index in the node list placed over */
	int *ranks;      /* the ranks it runs (placed jobs) */
	int nranks, cpus;
	pid_t pid; /* a forked local agent, else -1 */
	int fd;    /* its socket until the link wraps it */
	int started, done, fence_up;
	int ran;               /* sent STARTED: its ranks are forked */
	char fence_parent[80]; /* universe jobs: "addr:port" of its parent in the fence tree */
	int fence_children;
	int hello;          /* universe: its HELLO came (with the watch's view) */
	int64_t heard;      /* universe: when a frame last came from it (monotonic ms) */
	int lost;           /* --on-node-failure continue: its node failed, its ranks are lost */
	char early[300];    /* universe: why its link failed before the view came */
	int64_t lost_timer; /* its fence parent's link broke: whose failure, decided then */
	char lost_why[300];
};

struct ctl {
	const struct boot_run_opts *o;
	core_ev_t *ev;
	boot_outbuf_t *out;
	struct ctl_pipe *pipes; /* [rank * 2 + stream - 1]: pipes read here (jobctl_io.c) */
	pid_t *pids;            /* by rank */
	struct agent *ag;
	int nag, ndone;
	int placed;          /* each agent gets its own ranks; else o->js goes as it is */
	int host_from_hello; /* one local agent: name its host as it does */
	char *mapping;
	int universe_size;
	int exit_code, failed, killed;
	int late;       /* a rank failed after it finalized: exit_code and why are set, the job
	                 * goes on (jobctl.c, fail_late) */
	char why[1024]; /* the first failure, printed when the job is over */
	int64_t grace_timer, kill_timer;
	/* stdin, to the agent of rank 0 (ag[0]) */
	int stdin_on, stdin_file;
	int64_t pump_timer;
	size_t inflight;
	/* the fence of a job over several agents */
	uint32_t epoch; /* the last one completed */
	int nup;
	char *kvs;
	size_t kvslen, kvscap;
	/* where jobs run, for the jobs ranks spawn (jobctl_spawn.c): a universe, k forked agents
	 * standing for nodes, or (u NULL, local_k 0) one forked local agent per job */
	const struct boot_universe *u;
	int local_k, local_slots;
	/* a spawned job: the job that holds its family (mpiexec's own), its name in messages,
	 * what it runs (owned) and the rank whose PMI spawn waits for it to start */
	struct ctl *parent;
	char label[64];
	struct boot_run_opts own_o;
	struct boot_jobspec own_js;
	struct agent *req_ag;
	int req_rank, replied;
	/* mpiexec's own job: the jobs its ranks (and theirs) spawned */
	struct ctl **subs;
	int nsubs;
	/* a universe: the watch's view (the root's is the family's), the placement options kept
	 * to place again around nodes found down before anything started, how often that
	 * happened, whether any agent got its part, a link opened only to learn the view, the
	 * keepalive timer and the watch's bounds */
	struct boot_wsummary view;
	struct boot_place_opts popts;
	int rounds, sent_any, said_down; /* sent_any -1: being placed again */
	boot_link_t *vlink;
	int vnext;
	int64_t view_timer, ka_timer;
	int64_t early_timer; /* a refused agent not down in the view yet: the view's grace */
	int ka_interval, ka_timeout;
	char *hosts_copy;
	int nlost; /* --on-node-failure continue: agents whose node failed */
	/* mpiexec's own job, no universe: the family's rendezvous (doc/PROTOCOL-agent.md, "PMIx
	 * across jobs"): its name service and its collectives over several jobs */
	struct boot_names *names;
	struct boot_xcoll *xcoll;
	/* PMIx: this job's ranks that may hear PMIx events (STARTED says), when they got a
	 * death event the kill waits (EVENT_GRACE_MS), and (mpiexec's own job) direct-modex
	 * requests between agents of the family in flight (jobctl_pmix.c) */
	int npmix;
	int64_t event_timer;
	int ctrl_sig;       /* the last signal PMIx job control sent this job's ranks */
	char ctrl_who[100]; /* and who asked for it ("rank 0", "spawned job 1: rank 2") */
	struct ctl_dmx *dmx;
	uint32_t dmx_serial;
};

/* One line "lamkit mpiexec: ..." on stderr. */
void boot_ctl_msg(struct ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The first failure decides the exit status, is said last, and ends the job (KILL). */
void boot_ctl_fail(struct ctl *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The agent's connection or handshake failed: the job ends with 111 and one line. */
void boot_ctl_unreachable(struct agent *a, const char *why);
/* why without the peer text it begins with (followed by ": "). */
const char *boot_ctl_after_peer(const char *why, const char *peer);
/* Send the agent its part of the job (once its link is ready). */
void boot_ctl_start_agent(struct agent *a);
/* The callbacks of every agent link (arg = the struct agent). */
extern const struct boot_link_cbs boot_ctl_link_cbs;

/* Set up the loop, output, signals and nag empty agents. 0, or -1 (said; exit_code set). */
int boot_ctl_init(struct ctl *c, const struct boot_run_opts *o, int nag);
/* Run until every agent is done, then print what is left and the failure. */
void boot_ctl_loop(struct ctl *c);
/* Hang up, reap forked agents, free. Returns the exit status. */
int boot_ctl_end(struct ctl *c);
/* Wait for the forked agents (at most 5 s in all, then SIGKILL). */
void boot_ctl_reap_agents(struct ctl *c);

/* mpiexec's own job (the family's root); c itself when it is. */
struct ctl *boot_ctl_root(struct ctl *c);
/* Start c's job: one forked local agent (nodes NULL: c->o->js goes as it is), or placed over
 * nodes (freed here) through forked agents (u NULL) or the universe's. 0, or -1 (said,
 * exit_code set). Does not run the loop. */
int boot_ctl_start(struct ctl *c, struct boot_place_node *nodes, int nnodes,
                   const struct boot_place_opts *p, const struct boot_universe *u);

/* A frame from agent a of a universe job carried the watch's view (HELLO's tail or VIEW_DOWN,
 * r at the summary): keep it, place again around the nodes down if nothing started yet, or
 * end (or go on without) the agents of nodes now down. */
void boot_ctl_view(struct agent *a, struct core_rbuf *r);
/* Agent a's node failed while the job runs (why: one line): the job ends, or with
 * --on-node-failure continue goes on without its ranks. */
void boot_ctl_node_failed(struct agent *a, const char *why);
/* Universe: a's link failed before its part started: place again, learn the view, or fail. */
void boot_ctl_early_failure(struct agent *a, const char *why);
/* Agent a lost the link to its parent in the job's fence tree: a consequence when the parent
 * fails (its own failure says so), else after a grace the job's failure. */
void boot_ctl_fence_lost(struct agent *a, const char *why);
/* Universe: start the keepalive on the agents' links. */
void boot_ctl_keepalive(struct ctl *c);
/* Universe: take the nodes down in the view out of nodes (u->nnodes entries), keeping p (a
 * copy) for placing again; says once which are down. 0, or -1 (said, exit code set). */
int boot_ctl_universe_nodes(struct ctl *c, struct boot_place_node *nodes,
                            const struct boot_place_opts *p);
/* Universe: every agent link of c is being made: wait for the view (bounded). */
void boot_ctl_universe_connected(struct ctl *c);
/* Agent a is gone while its part ran (why: one line after "the agent on HOST"): the job ends
 * with 111 unless an earlier failure decided it. */
void boot_ctl_lose(struct agent *a, const char *why);
/* --on-node-failure continue: agent a's node failed (why as above): its ranks are lost, the
 * others are told (PROC_FAILED: PMI_dead_processes) and go on; fences count the others. */
void boot_ctl_continue_without(struct agent *a, const char *why);

/* jobctl_io.c: an IO_PIPE frame from agent a (r after the jobid) brought fd, the read end of
 * a rank's stdout or stderr: read it here until EOF, then tell the agent (IO_EOF). fd < 0:
 * nothing came; a bad frame closes fd. */
void boot_ctl_pipe_open(struct agent *a, struct core_rbuf *r, int fd);
/* Read what is left in the pipes agent a handed over (all pipes: a NULL) and close them: its
 * JOB_DONE came or it is gone. */
void boot_ctl_pipes_drain(struct ctl *c, const struct agent *a);
/* Drain and close every pipe, free the table. */
void boot_ctl_pipes_free(struct ctl *c);

/* jobctl_pmix.c: PMIx between the jobs of the family (doc/PROTOCOL-agent.md, "PMIx across
 * jobs"): a DMODEX from agent a (r after the jobid) goes to the agent of the rank asked for; a
 * DMODEX_REPLY from it goes back to the asker. */
void boot_ctl_dmodex(struct agent *a, struct core_rbuf *r);
void boot_ctl_dmodex_reply(struct agent *a, struct core_rbuf *r);
/* Agent a is gone: requests it was to answer are answered "not found". */
void boot_ctl_dmodex_gone(struct agent *a);
/* The end: requests still in flight are dropped. */
void boot_ctl_pmix_free(struct ctl *c);
/* JOB_CTRL from agent a (r after the jobid): signal the ranks it names, answer it. */
void boot_ctl_jobctrl(struct agent *a, struct core_rbuf *r);
/* Tell the PMIx ranks of c's job that `rank` died (wait status st): PROC_EVENT to its agents.
 * Nothing when the job has no PMIx rank. Returns whether any was told. */
int boot_ctl_notify_death(struct ctl *c, int rank, int st);
/* --on-node-failure continue: agent a's node failed; the job's PMIx ranks hear of each of its
 * ranks as of a rank killed (PROC_EVENT). Nothing when the job has no PMIx rank. */
void boot_ctl_notify_lost(struct ctl *c, const struct agent *a);
/* Spawned job c is over and the family lives: the PMIx ranks of the job that spawned it hear
 * PMIX_EVENT_JOB_END (JOB_END_EVENT to its agents). Nothing otherwise. */
void boot_ctl_notify_job_end(struct ctl *c);

/* jobctl_spawn.c: agent a's rank asks for a new job (BOOT_MSG_SPAWN): place and start it as a
 * spawned job of the family, or answer rc=-1 with one line said. */
void boot_ctl_spawn(struct agent *a, struct core_rbuf *r);
/* Agent a of a spawned job started its ranks: once all did, answer the spawning rank. */
void boot_ctl_spawn_started(struct agent *a);
/* Free a spawned job (its links closed and agents reaped by the caller first). */
void boot_ctl_spawn_free(struct ctl *sub);

#endif
