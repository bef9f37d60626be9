/* lib/boot/proto.h: the agent protocol (mpiexec <-> agent frames) and the job specification.
 * Wire format and rules: doc/PROTOCOL-agent.md. */
#ifndef LAMKIT_BOOT_PROTO_H
#define LAMKIT_BOOT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"

#define BOOT_PROTO_VERSION                                                                         \
	5 /* 2: SPAWN and NAMES frames, spawner, names_at, preput;                                 \
	     3: placement and slots in the job spec, REPORT;                                       \
	     4: the watch; HELLO and UNIVERSE carry its view and settings;                         \
	     5: PMIx across jobs (XCOLL, DMODEX), PROC_EVENT, JOB_CTRL, JOB_END_EVENT, NAMES to    \
	     mpiexec */

/* Frame types. A = agent, M = mpiexec (the job's controller). */
enum boot_msg {
	BOOT_MSG_HELLO = 1,      /* A->M: u32 version, str host, u32 pid, u32 cpus */
	BOOT_MSG_JOB_START = 2,  /* M->A: a job spec (boot_jobspec_encode) */
	BOOT_MSG_STARTED = 3,    /* A->M: u32 jobid, u32 n, n x (u32 rank, u32 pid) */
	BOOT_MSG_SPAWN_FAIL = 4, /* A->M: u32 jobid, u32 rank, u32 errno, str exe */
	BOOT_MSG_IO = 5,        /* A->M: u32 jobid, u32 rank, u32 stream (1,2), bytes; none = EOF */
	BOOT_MSG_STDIN = 6,     /* M->A: u32 jobid, bytes for rank 0's stdin; none = EOF */
	BOOT_MSG_STDIN_ACK = 7, /* A->M: u32 jobid, u32 bytes written to the rank's pipe */
	BOOT_MSG_RANK_EXIT = 8, /* A->M: u32 jobid, u32 rank, u32 pid, u32 wait status, u32 pmi */
	BOOT_MSG_ABORT = 9,     /* A->M: u32 jobid, u32 rank, u32 code, str message */
	BOOT_MSG_PMI_ERROR = 10,  /* A->M: u32 jobid, u32 rank, str message */
	BOOT_MSG_SIGNAL = 11,     /* M->A: u32 jobid, u32 signo: send to every rank's group */
	BOOT_MSG_KILL = 12,       /* M->A: u32 jobid: SIGKILL every rank's group now */
	BOOT_MSG_JOB_DONE = 13,   /* A->M: u32 jobid: all ranks reaped, output drained */
	BOOT_MSG_FENCE_UP = 14,   /* A->M: u32 jobid, u32 epoch, KVS delta (pmi_kvs_encode) */
	BOOT_MSG_FENCE_DOWN = 15, /* M->A: u32 jobid, u32 epoch, merged KVS */
	/* PMI spawn (doc/PROTOCOL-agent.md, "Spawn") */
	BOOT_MSG_SPAWN = 23,       /* A->M: u32 jobid, u32 rank, u32 ncmds, ncmds x (str exe,
	                              u32 nprocs, strv argv, strv info k,v,...), strv preput k,v */
	BOOT_MSG_SPAWN_REPLY = 24, /* M->A: u32 jobid, u32 rank, u32 rc, str kvsname or reason */
	/* the universe's name service, served by the head agent (doc/PROTOCOL-agent.md, "Names") */
	BOOT_MSG_NAMES = 25,       /* A->head: u32 jobid, u32 rank, u32 op (PMI_NAME_*), str name,
	                              str port ("" unless publish) */
	BOOT_MSG_NAMES_REPLY = 26, /* head->A: u32 jobid, u32 rank, u32 rc, str port or reason */
	/* output read by mpiexec itself (forked agents: doc/PROTOCOL-agent.md, "Output") */
	BOOT_MSG_IO_PIPE = 27, /* A->M: u32 jobid, u32 rank, u32 stream + the pipe's read end */
	BOOT_MSG_IO_EOF = 28,  /* M->A: u32 jobid, u32 rank, u32 stream: that pipe is at EOF */
	/* lines for the user from an agent: --report-bindings, or why the job cannot start */
	BOOT_MSG_REPORT = 29, /* A->M: u32 jobid, u32 fatal (0/1), str lines */
	/* universe frames (no jobid): doc/PROTOCOL-agent.md, "Universe" */
	BOOT_MSG_AGENT_INFO = 16,   /* A->boot: u32 node, str host, u32 pid, u32 cpus, u32 port,
	                               str version, str slurm node name, str wipe report */
	BOOT_MSG_LAUNCH = 17,       /* boot->A: u32 node, strv argv: start it, key on its stdin */
	BOOT_MSG_LAUNCH_EXIT = 18,  /* A->boot: u32 node, u32 wait status, str last stderr line */
	BOOT_MSG_UNIVERSE = 19,     /* boot->A: str universe id, u32 n, n x (u32 node, str host,
	                               str addr, u32 port, u32 cpus): boot is complete */
	BOOT_MSG_HALT = 20,         /* C->A: end every job, then exit */
	BOOT_MSG_STATUS = 21,       /* C->A: (empty) */
	BOOT_MSG_STATUS_REPLY = 22, /* A->C: u32 node, str host, u32 pid, u32 cpus, u32 njobs,
	                              u32 nranks, i64 uptime ms, str version */
	/* universe commands (ps, top, clean, kill): 40 and up */
	BOOT_MSG_PS = 40,          /* C->A: (empty) */
	BOOT_MSG_PS_REPLY = 41,    /* A->C: u32 node, str host, u32 n, n x rank record (job_ps.h) */
	BOOT_MSG_CLEAN = 42,       /* C->A: (empty): kill every job's ranks, keep serving */
	BOOT_MSG_CLEAN_REPLY = 43, /* A->C: u32 jobs, u32 ranks that were running */
	BOOT_MSG_JOB_SIGNAL = 44,  /* C->A: u32 jobid, u32 signo */
	BOOT_MSG_JOB_SIGNAL_REPLY = 45, /* A->C: u32 jobid, u32 ranks signalled (0: none here) */
	/* the watch among agents (lib/boot/watch.h; doc/PROTOCOL-agent.md, "The watch") */
	BOOT_MSG_WATCH_JOIN = 46,    /* A->head: u32 node, i64 inc, u32 term, str host, u32 port,
	                                u32 cpus */
	BOOT_MSG_WATCH_VIEW = 47,    /* head->A: the view (boot_wview_encode) */
	BOOT_MSG_WATCH_PING = 48,    /* either way: (empty) */
	BOOT_MSG_WATCH_NOTHEAD = 49, /* A->A: u32 head (0: none yet), u32 term */
	BOOT_MSG_WATCH_DOWN = 50,    /* head->A: i64 since, str why: you were declared down */
	BOOT_MSG_WATCH_BYE = 51,     /* A->A: u32 node, str why ("halt", "left") */
	BOOT_MSG_WATCH_PROBE = 52,   /* A->A: u32 node, i64 inc, u32 role, u32 head, u32 term */
	BOOT_MSG_WATCH_STATUS = 53,  /* A->A: the same fields, the answer to PROBE */
	BOOT_MSG_VIEW_DOWN = 54,     /* A->C: the view's summary (boot_wsummary_encode), changed */
	BOOT_MSG_FENCE_LOST = 55,    /* A->M: u32 jobid, str why: the link to its fence parent
	                                broke (the controller decides whose failure that is) */
	BOOT_MSG_PROC_FAILED = 56,   /* M->A: u32 jobid, str ranks lost so far ("2,3,6-7"):
	                                --on-node-failure continue, PMI_dead_processes */
	/* PMIx across jobs (doc/PROTOCOL-agent.md, "PMIx across jobs"), events, job control */
	BOOT_MSG_XCOLL_UP = 60,     /* A->rendezvous: u32 jobid, str id, u32 n, n x (str nspace,
	                               u32 need, u32 have), u32 len, bytes data (xcoll.h) */
	BOOT_MSG_XCOLL_DOWN = 61,   /* rendezvous->A: u32 jobid, str id, u32 status, u32 n,
	                               n x (u32 len, bytes): every contribution's data */
	BOOT_MSG_DMODEX = 62,       /* A->M, M->A: u32 jobid, u32 req, str nspace, u32 rank: that
	                               rank's data (the wildcard rank: the job's description) */
	BOOT_MSG_DMODEX_REPLY = 63, /* A->M, M->A: u32 jobid, u32 req, u32 status (a pmix_status_t),
	                               u32 kind (0 a rank's data, 1 the job's description), bytes */
	BOOT_MSG_PROC_EVENT = 64,   /* M->A: u32 jobid, u32 rank, u32 wait status: tell the job's
	                               PMIx ranks that rank died */
	BOOT_MSG_JOB_CTRL = 65,     /* A->M: u32 jobid, u32 req, u32 rank (who asks), u32 signo,
	                               u32 n, n x (str nspace, u32 rank): signal ranks of the family */
	BOOT_MSG_JOB_CTRL_REPLY = 66, /* M->A: u32 jobid, u32 req, u32 status (pmix_status_t) */
	BOOT_MSG_JOB_END_EVENT = 67,  /* M->A: u32 jobid, str nspace, u32 exit code: a job the
	                                 job's ranks spawned ended */
};

/* A DMODEX's or a JOB_CTRL target's rank meaning "the whole job" (PMIx's wildcard rank). */
#define BOOT_RANK_ANY 0xfffffffeu
/* JOB_CTRL's asker that is no rank of the job: a PMIx tool connected to the agent. */
#define BOOT_RANK_TOOL 0xfffffff0u

/* What RANK_EXIT says about the rank's PMI session. */
enum { BOOT_PMI_NONE = 0, BOOT_PMI_INIT = 1, BOOT_PMI_FINALIZED = 2 };

/* CPU binding: auto = as the program's own launcher would (Open MPI's mpirun binds each rank
 * to a core when a node has at most 2 ranks and they fit; Hydra binds nothing). */
enum boot_bind { BOOT_BIND_AUTO = 0, BOOT_BIND_NONE, BOOT_BIND_CORE };

/* Which MPI the program was built with: decides the environment it gets. */
enum boot_mpi_kind {
	BOOT_MPI_AUTO = 0,
	BOOT_MPI_MPICH,
	BOOT_MPI_OPENMPI, /* Open MPI on its PMIx component */
	BOOT_MPI_NONE,
	BOOT_MPI_OPENMPI_FLUX, /* Open MPI on its flux component (PMI-1, our libpmi.so) */
	BOOT_MPI_PMIX,         /* every app served PMIx */
};

struct boot_app {
	char *exe;   /* as given; resolved in PATH on the node */
	char **argv; /* argv[0] = exe, NULL-terminated */
	int argc;
	int nprocs;
	int first_rank;
	char *wdir; /* NULL = the job's */
	char **env; /* -env additions "K=V", NULL-terminated */
	int nenv;
};

struct boot_jobspec {
	uint32_t jobid;
	char *kvsname;
	int size, universe_size;
	int tag_output; /* -l: prefix lines with [rank] */
	int pmi_port;   /* serve PMI over TCP (PMI_PORT + PMI_ID) instead of PMI_FD */
	int mpi_kind;   /* enum boot_mpi_kind, forced by --mpi */
	int oversubscribed;
	int bind;   /* enum boot_bind */
	char *wdir; /* the job's working directory */
	char **env; /* the base environment "K=V" (after -genv*), NULL-terminated */
	int nenv;
	struct boot_app *apps;
	int napps;
	char *process_mapping; /* PMI_process_mapping value */
	int *ranks;            /* ranks this agent runs */
	int nranks;
	int nagents; /* agents the job spans: 1 = the fence completes locally */
	/* the fence tree among the job's agents (universe jobs): where this agent sends its
	 * merged FENCE_UP ("addr:port", "" = it is the root or the controller merges), and how
	 * many child agents send theirs to it. Both empty/0: FENCE_UP goes to the controller. */
	char *fence_parent;
	int fence_children;
	/* spawned jobs (MPI_Comm_spawn): the KVS name of the job that spawned this one ("" = none;
	 * ranks get PMI_SPAWNED=1 and PMI-2's spawner-jobid) and the keys its KVS starts with
	 * (npreput pairs key, value: the parent's port) */
	char *spawner;
	/* "addr:port" of the agent that serves the universe's name service (its head), "" = each
	 * job's own table (no universe) */
	char *names_at;
	char **preput;
	int npreput; /* strings in preput (2 per key) */
	/* --map-by, --rank-by, --bind-to & co. (bind.h's canonical text; "" = none given: `bind`
	 * decides) and the slots of the node the spec goes to */
	char *placement;
	int slots;
	int *clique; /* unused on the wire; filled per agent */
};

/* Encode / decode a job spec. Decoding allocates; free with boot_jobspec_free.
 * decode returns 0, or -1 (EINVAL) on a malformed payload. */
void boot_jobspec_encode(struct core_wbuf *w, const struct boot_jobspec *js);
int boot_jobspec_decode(struct boot_jobspec *js, const char *p, size_t len);
void boot_jobspec_free(struct boot_jobspec *js);
/* The app of a rank, or NULL. */
const struct boot_app *boot_jobspec_app(const struct boot_jobspec *js, int rank);

#endif
