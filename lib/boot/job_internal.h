/* lib/boot/job_internal.h: the agent-side job structure shared by job.c and job_pmi.c. */
#ifndef LAMKIT_BOOT_JOB_INTERNAL_H
#define LAMKIT_BOOT_JOB_INTERNAL_H

#include "agent.h"
#include "bind.h"
#include "msg.h"
#include "pmi_server.h"

#include <sched.h>
#include <sys/types.h>

#define BOOT_PMI_FD_NUM 3 /* the fd number PMI_FD names in every rank */

/* What an app is, for Open MPI programs (boot_job.app_ompi). */
enum {
	BOOT_APP_OMPI = 1,       /* built with Open MPI: gets its environment and our libpmi.so */
	BOOT_APP_OMPI_SPAWN = 2, /* ... and imports MPI_Comm_spawn*, which it cannot do under us */
	BOOT_APP_PMIX = 4, /* served PMIx (job_pmix.c): Open MPI's PMIx path, any PMIx client */
};

struct boot_rank {
	boot_job_t *job;
	int rank;
	pid_t pid;
	int out_fd, err_fd;
	unsigned handed;  /* bit 1 << stream: that pipe went to the controller (IO_PIPE) */
	int pmi_fd;       /* our end of the PMI socketpair (or accepted TCP conn) */
	int pmi_child_fd; /* the rank's end until it is spawned */
	pmi_conn_t *pmi;
	int pmi_state;        /* BOOT_PMI_* */
	int adopted;          /* a singleton that started us (mpiexec -pmi_args): not our child */
	cpu_set_t *cpus;      /* the CPUs we bind it to, or NULL (job_bind.c) */
	int bind_lo, bind_hi; /* ... as logical PUs of j->topo, or -1 */
	int omp_threads;      /* bound: its CPUs, for OMP_NUM_THREADS */
	char *omp_places;     /* bound: OMP_PLACES, or NULL */
	int exited, status;
};

struct boot_job {
	boot_agent_t *ag;
	boot_link_t *ctl; /* the controller that started the job; NULL once it is gone */
	struct boot_jobspec js;
	struct boot_rank *r;
	int nranks;
	int nalive, nstreams;
	int killed, done_sent, out_paused;
	int64_t drain_timer;
	char dir[4200];
	/* stdin for rank 0 */
	int stdin_fd, stdin_eof;
	char *inq;
	size_t inlen, inoff, incap;
	/* PMI */
	pmi_server_t *pmi;
	int listen_fd;      /* PMI_PORT mode */
	char port_str[64];  /* "host:port" */
	struct anon *anons; /* PMI_PORT connections not yet identified (job_pmi.c) */
	uint32_t fence_epoch;
	int64_t fence_timer;
	/* the fence tree among the job's agents (js.fence_parent / js.fence_children) */
	boot_link_t *fence_up;       /* to the parent agent, NULL at the root */
	boot_link_t *names_up;       /* to the universe's name service (js.names_at), lazily */
	struct core_wbuf names_wait; /* NAMES frames (u32 length, payload) until it is ready */
	struct core_wbuf fence_acc;  /* this epoch's deltas: ours and our children's */
	struct core_wbuf up_wait;    /* a FENCE_UP waiting for the parent link's handshake */
	boot_link_t **fence_kids;    /* children that sent this epoch's FENCE_UP */
	int nkids, fence_in;         /* fence_in: our own ranks are in this epoch's fence */
	char ***app_env;             /* per app: the environment all its ranks share */
	int *app_ompi;               /* per app: BOOT_APP_OMPI* flags (0: not Open MPI) */
	int ompi;                    /* program built with Open MPI */
	int devnull;                 /* stdin of ranks other than 0 */
	int wdir_here;               /* js.wdir is the agent's own directory: ranks need no chdir */
	char **exe_paths;            /* per app: the executable, resolved once */
	struct core_wbuf procs;      /* "pid starttime rank" lines, written once after starting */
	char pmi_lib[4300];          /* libpmi.so written for Open MPI programs */
	struct boot_res *res;        /* registered resources (job_res.c) */
	int nres, capres;
	char node_seg[64];        /* the node's MPI segment the agent made for the ranks, or "" */
	struct boot_job_pmix *px; /* the job's PMIx ranks here (job_pmix.c), or NULL */
	/* the ranks here wait by blocking, not spinning (more ranks than the CPUs they may use,
	 * or LAMKIT_WAIT=block): they share the agent's session (job_wait.c) */
	int blocking;
	int oversub; /* more ranks here than the CPUs they may use (LAMKIT_OVERSUBSCRIBED) */
	struct boot_topo *topo;     /* this node's topology, read when ranks are bound */
	struct boot_bind_spec spec; /* the job's placement options (js.placement) */
};

/* job_bind.c: bind the ranks (j->r[i].cpus) as js.placement (or js.bind) asks, report the
 * bindings when asked to. 0, or -1 after telling the controller why not (the job cannot
 * start). boot_job_bind_free frees what it allocated. */
int boot_job_bind(boot_job_t *j);
void boot_job_bind_free(boot_job_t *j);

/* job_wait.c: whether the job's ranks on this node wait by blocking (sets j->blocking; ranks
 * must have their bindings). */
void boot_job_wait_mode(boot_job_t *j);

void boot_job_send(boot_job_t *j, unsigned type, const struct core_wbuf *w, const void *extra,
                   size_t elen);
void boot_job_rank_gone(boot_job_t *j, struct boot_rank *r, int status);

/* job_res.c: a PMI resource request of rank (op: PMI_RES_*); 0, or -1 with a reason. */
int boot_job_res_op(boot_job_t *j, int rank, int op, const char *kind, const char *name, char *why,
                    size_t whylen);
/* Remove or kill what rank registered (rank -1: every rank's). */
void boot_job_res_clean(boot_job_t *j, int rank);
/* Before the ranks start: make the (empty) shared-memory segment lamkit's MPI on this node
 * sizes and uses (LAMKIT_SHM_SEGMENT), recorded as shm-node in the job dir so the agent at
 * job end and `wipe` after a crash remove it. No segment (and a debug line) if that fails. */
void boot_job_res_node_segment(boot_job_t *j);
/* At job end: everything registered, and the segments lamkit's MPI recorded. */
void boot_job_res_fini(boot_job_t *j);

/* job_pmi.c */
int boot_job_pmi_init(boot_job_t *j, char *err, size_t errlen);
/* Whether rank is the singleton that started us (mpiexec -pmi_args): we adopt it, so we
 * neither start nor bind it. */
int boot_job_pmi_adopts(const boot_job_t *j, int rank);
/* Prepare the rank's PMI channel (socketpair) or adopt the singleton. 0 or -1 with err. */
int boot_job_pmi_rank(boot_job_t *j, struct boot_rank *r, char *err, size_t errlen);
/* The rank exited: drain its PMI socket, settle r->pmi_state, close the channel. */
void boot_job_pmi_rank_exit(boot_job_t *j, struct boot_rank *r);
/* Before the ranks start: tell PMI this node's topology (our ranks, our node's number, the
 * socket and core of each rank bound to a CPU) as node attribute lamkit_topo. */
void boot_job_pmi_topo(boot_job_t *j);
void boot_job_fence_down(boot_job_t *j, struct core_rbuf *r);
/* SPAWN_REPLY from the controller: answer the rank's pending spawn. */
void boot_job_spawn_reply(boot_job_t *j, struct core_rbuf *r);

void boot_job_pmi_destroy(boot_job_t *j);

/* job_pmi.c: the local part of a fence is complete (PMI delta and PMIx contribution, one
 * batch): up the tree, to the controller or, alone, answered from the loop. */
void boot_job_fence_enter(boot_job_t *j, const char *batch, size_t len);

/* job_pmi.c: a name-service request of rank to the job's rendezvous (the universe's head
 * agent, js.names_at, or without a universe the family's mpiexec): 0 when sent (the answer
 * comes to the rank's PMI conn, or to boot_job_pmix_names_done), 1 when there is none to ask
 * (the job's own table serves). */
int boot_job_names(boot_job_t *j, int rank, int op, const char *name, const char *port);
/* A NAMES_REPLY (r after the jobid) for one of the job's ranks. */
void boot_job_names_reply(boot_job_t *j, struct core_rbuf *r);
/* Send a frame (w: from the jobid on) to the job's rendezvous: the head agent's link (opened
 * if need be; queued during its handshake) or, without a universe, the controller. 0, or -1. */
int boot_job_rdv_send(boot_job_t *j, unsigned type, const struct core_wbuf *w);

/* job_pmix.c: the job's PMIx ranks on this agent. */
/* The head agent answered a PMIx rank's name-service request (no PMI conn waited for it). */
void boot_job_pmix_names_done(boot_job_t *j, int rank, int rc, const char *val);
/* Whether app is served PMIx. */
int boot_job_app_pmix(const boot_job_t *j, const struct boot_app *app);
/* This agent's ranks that speak PMI-1/PMI-2 (the PMI engine waits for these in a fence). */
int boot_job_pmi_nlocal(const boot_job_t *j);
/* Before the ranks start: the agent's PMIx server (started if need be) gets the job as a
 * namespace. Nothing when no rank here is PMIx. 0, or -1 with err. */
int boot_job_pmix_init(boot_job_t *j, char *err, size_t errlen);
/* A PMIx rank's registration and environment (replaces *envp). 0 or -1 (errno). */
int boot_job_pmix_env(boot_job_t *j, struct boot_rank *r, char ***envp);
/* The PMI ranks entered a fence with delta: 1 when the PMIx side takes it from here (it
 * calls boot_job_fence_enter once its own ranks are in too), 0 when this job has none. */
int boot_job_fence_pmi(boot_job_t *j, const char *delta, size_t len);
/* The fence ended with the merged batch: answer the PMIx server. */
void boot_job_pmix_fence_done(boot_job_t *j, const char *batch, size_t len);
/* Job end: the namespace goes, a fence still open is answered. Accepts a job without. */
void boot_job_pmix_fini(boot_job_t *j);
/* This agent's PMIx ranks of the job that may hear a PMIx event (0 without). */
int boot_job_pmix_listeners(const boot_job_t *j);
/* A frame of the job's rendezvous link (r after the jobid): XCOLL_DOWN. */
void boot_job_pmix_rdv_frame(boot_job_t *j, unsigned type, struct core_rbuf *r);
/* The link to the rendezvous is lost: the operations waiting on it fail. */
void boot_job_pmix_rdv_lost(boot_job_t *j);
/* job_pmix_ctl.c: a controller frame for the job's PMIx side (r after the jobid): XCOLL_DOWN,
 * DMODEX, DMODEX_REPLY, PROC_EVENT, JOB_CTRL_REPLY, JOB_END_EVENT. */
void boot_job_pmix_ctl_frame(boot_job_t *j, unsigned type, struct core_rbuf *r);
/* Tell the job's PMIx ranks here that `rank` died with wait status `status` (a PMIx event:
 * PMIX_ERR_PROC_ABORTED, and PMIX_EVENT_PROC_TERMINATED to those who asked for it). Nothing
 * when the job has no PMIx rank here. Also for a node's or a rank's loss reported otherwise. */
void boot_job_pmix_proc_died(boot_job_t *j, int rank, int status);

/* job_env.c: the environment of one rank; NULL-terminated, malloc'd. */
char **boot_job_env(boot_job_t *j, const struct boot_app *app, const struct boot_rank *r,
                    int localid);
void boot_env_free(char **envp);
/* Free the per-app environments cached by boot_job_env. */
void boot_job_env_free_cache(boot_job_t *j);
/* Value of NAME in envp, or NULL. */
const char *boot_env_get(char *const *envp, const char *name);

#endif
