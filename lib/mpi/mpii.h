/* lib/mpi/mpii.h: private types and cross-file internals of libmpi (prefix mpii_). */
#ifndef LAMKIT_MPII_H
#define LAMKIT_MPII_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"
#include "tp.h"

/* Each public routine is defined as PMPI_x; MPI_x is a weak alias a profiler may override. */
#define MPII_PRAGMA(x) _Pragma(#x)
#define MPII_ALIAS(n)  MPII_PRAGMA(weak MPI_##n = PMPI_##n)

#define MPII_TAG_UB 0x3fffffff
/* ---- handle tables: handle = index; predefined objects below `first` are never freed ---- */
struct mpii_tab {
	void **v;
	int n, cap, first;
};
/* Store obj at the lowest free index >= first. Handle, or -1 (ENOMEM). */
int mpii_tab_add(struct mpii_tab *t, void *obj);
/* Store a predefined obj at a fixed index. 0, or -1. */
int mpii_tab_set(struct mpii_tab *t, int h, void *obj);
/* Object for handle h, or NULL when h is not live. */
static inline void *mpii_tab_get(const struct mpii_tab *t, int h)
{
	return h > 0 && h < t->n ? t->v[h] : NULL;
}
/* Forget handle h. */
void mpii_tab_del(struct mpii_tab *t, int h);

/* Zero n bytes at p (n a multiple of 8, p 8-aligned) with plain 16-byte stores. gcc expands a
 * memset of a few hundred bytes of known size into `rep stosq` (and musl's memset takes it from
 * 127 bytes up), whose start-up cost, and the stall of the loads that follow it, made up a
 * third of an 8-byte MPI_Isend on the AMD EPYC machines here (perf annotate). The empty asm
 * keeps the loop from being recognised as a memset again. */
static inline void mpii_zero(void *p, size_t n)
{
	typedef uint64_t mpii_v2 __attribute__((vector_size(16), may_alias, aligned(8)));
	char *c = (char *)p;
	size_t i = 0;

	for (; i + 64 <= n; i += 64) {
		__asm__("" : "+r"(i));
		*(mpii_v2 *)(void *)(c + i) = (mpii_v2){0, 0};
		*(mpii_v2 *)(void *)(c + i + 16) = (mpii_v2){0, 0};
		*(mpii_v2 *)(void *)(c + i + 32) = (mpii_v2){0, 0};
		*(mpii_v2 *)(void *)(c + i + 48) = (mpii_v2){0, 0};
	}
	for (; i + 16 <= n; i += 16) {
		__asm__("" : "+r"(i));
		*(mpii_v2 *)(void *)(c + i) = (mpii_v2){0, 0};
	}
	if (i < n)
		*(uint64_t *)(void *)(c + i) = 0;
}

/* buf + off as an address: also right for MPI_BOTTOM (NULL) with absolute displacements. */
static inline char *mpii_at(const void *buf, MPI_Aint off)
{
	return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/* ---- datatypes ---- */
struct mpii_seg {
	MPI_Aint off; /* from the buffer address */
	size_t len;   /* bytes */
	int basic;    /* predefined element type of the run */
};

struct mpii_attr;
struct mpii_greq;

struct mpii_dtype {
	int handle, refs, committed, predefined;
	int urefs;   /* user handles outstanding (MPI_Type_get_contents adds some) */
	size_t size; /* data bytes per element */
	MPI_Aint lb, ub, extent, true_lb, true_ub;
	/* lb/ub are markers (MPI_LB/MPI_UB, MPI_Type_create_resized, or a type built from one):
	 * MPI-3.1 4.1.6, they alone bound a type built from this one, with no alignment padding */
	int explicit_lb, explicit_ub;
	int contig; /* one run at true_lb and extent == size: plain memcpy */
	int nseg;
	struct mpii_seg *seg; /* flattened runs of one element */
	int combiner, ni, na, nt;
	int *ints;
	MPI_Aint *aints;
	MPI_Datatype *types;
	struct mpii_dtype **tptr; /* the types[] objects, referenced */
	struct mpii_attr *attrs;
	char name[MPI_MAX_OBJECT_NAME];
};

/* Datatype for handle, or NULL. Predefined handles are a table lookup (inline, below the global
 * state: every point-to-point call makes one). */
#define MPII_NPREDEF 63
extern struct mpii_dtype mpii_predef[MPII_NPREDEF];
static inline struct mpii_dtype *mpii_dt(MPI_Datatype h);
/* Size in bytes of predefined basic type b (0 if unknown). */
size_t mpii_basic_size(int b);
/* Pack/unpack bytes [pos, pos+n) of the packed form of count elements at buf. */
void mpii_pack(const struct mpii_dtype *d, int count, const void *buf, size_t pos, void *dst,
               size_t n);
void mpii_unpack(const struct mpii_dtype *d, int count, void *buf, size_t pos, const void *src,
                 size_t n);
/* Basic elements contained in the first `bytes` packed bytes of elements of d (-1: partial). */
long long mpii_elements(const struct mpii_dtype *d, size_t bytes);
/* external32 bytes of one element of d (-1: it holds a type external32 has no form for), and
 * the conversion of count elements between buf and the external32 stream ext (mpi_dtype_ext.c;
 * used by MPI-IO's "external32" data representation too). */
long long mpii_ext32_size(const struct mpii_dtype *d);
void mpii_ext32_copy(const struct mpii_dtype *d, int count, void *buf, void *ext, int to_ext);
/* Create the predefined types. 0, or -1. */
int mpii_dt_init(void);
void mpii_dt_fini(void);
/* Drop a reference (frees a derived type at zero). */
void mpii_dt_release(struct mpii_dtype *d);

/* ---- groups and communicators ---- */
struct mpii_group {
	int handle, refs;
	int size, rank; /* rank of this process or MPI_UNDEFINED */
	int *world;     /* group rank -> job rank */
};

struct mpii_comm {
	int handle, refs;
	uint32_t ctx; /* point-to-point context; ctx + 1 carries collectives */
	int rank, size;
	int inter;
	struct mpii_group *grp;  /* local group */
	struct mpii_group *rgrp; /* remote group of an intercommunicator */
	int errh;
	MPI_Win win; /* the window whose private communicator this is: errors name it */
	struct mpii_attr *attrs;
	char name[MPI_MAX_OBJECT_NAME];
	int topo;  /* MPI_CART, MPI_GRAPH, or 0 */
	int ndims; /* Cartesian: dimensions (may be 0) */
	int *dims, *periods;
	int nnodes, *index, *edges; /* graph: MPI_Graph_create's arguments */
	struct mpii_comm *uni;      /* intercomm: both groups as one intracomm on ctx + 1 (lazy) */
	int order; /* intercomm union order: 0 by job rank; 1 local group first, 2 remote first (the
	            * groups are of different jobs, whose job ranks say nothing: mpi_dyn.c) */
	unsigned nbc_seq;       /* nonblocking collectives started: picks each one's tag */
	struct mpii_hier *hier; /* node-aware collectives (mpi_hier.c), built on first use */
	int hier_state;         /* 0: not looked at yet, 1: hier is used, -1: flat algorithms */
	struct mpii_cshm
	    *cshm;      /* collectives in shared memory (mpi_coll_shm.c), made on first use */
	int cshm_state; /* 0: not looked at yet, 1: cshm is used, -1: not on one node */
	int one_node;   /* 0: not looked at yet, 1: every rank on this node, -1: not */
	int holds;      /* it holds the processes of other jobs in its groups (mpii_dyn_hold) */
	MPI_File file;  /* the file whose private communicator this is: errors name it */
};

/* Communicator for handle, or NULL (inline, below the global state). */
static inline struct mpii_comm *mpii_comm(MPI_Comm h);
struct mpii_group *mpii_group(MPI_Group h);
/* New group owning world[] (taken over); registers a handle. NULL on ENOMEM. */
struct mpii_group *mpii_group_new(int size, int *world);
void mpii_group_release(struct mpii_group *g);
/* Job rank of comm rank r (remote group for an intercommunicator). */
static inline int mpii_world_of(const struct mpii_comm *c, int r)
{
	return c->inter ? c->rgrp->world[r] : c->grp->world[r];
}
/* Give c a Cartesian topology (copies dims/periods). 0, or -1 (ENOMEM). */
int mpii_cart_set(struct mpii_comm *c, int ndims, const int *dims, const int *periods);
/* Give c a graph topology (copies index[nnodes] and the edges). 0, or -1 (ENOMEM). */
int mpii_graph_set(struct mpii_comm *c, int nnodes, const int *index, const int *edges);
/* Copy a distributed graph topology (mpi_dgraph.c). 0, or -1 (ENOMEM). */
int mpii_dgraph_copy(const struct mpii_comm *from, struct mpii_comm *to);
/* comm, if it has topology `topo` (MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH); else NULL with *rc
 * MPI_ERR_COMM or MPI_ERR_TOPOLOGY, reported to the error handler as from fn. */
struct mpii_comm *mpii_topo_comm(MPI_Comm comm, int topo, const char *fn, int *rc);
/* Copy from's topology to to (MPI_Comm_dup). 0, or -1 (ENOMEM). */
int mpii_topo_copy(const struct mpii_comm *from, struct mpii_comm *to);
/* Drop a reference: the communicator is destroyed with the last one (MPI_Comm_free or the
 * last request using it). */
void mpii_comm_release(struct mpii_comm *c);
/* Register a new communicator over g (and remote group rg) on ctx, inheriting parent's error
 * handler; takes over g, rg and ctx even on failure. MPI code. */
int mpii_comm_finish(struct mpii_comm *parent, struct mpii_group *g, struct mpii_group *rg,
                     uint32_t ctx, MPI_Comm *out, const char *fn);
/* Create world/self communicators. 0, or -1. */
int mpii_comm_init(void);
void mpii_comm_fini(void);

/* ---- requests ---- */
enum { RQ_SEND = 1, RQ_RECV = 2, RQ_GREQ = 3, RQ_NBC = 4, RQ_IO = 5 };
enum { MODE_STD = 0, MODE_SYNC = 1, MODE_BUF = 2, MODE_READY = 3 };

struct lk_request {
	struct lk_request *next, *prev;
	int kind, mode;
	volatile int done;
	int persistent, active, freed, cancelled, bsend;
	int pinned; /* a remote get's result record points here: freeing waits for it (mpi_rmam.c)
	             */
	int fh;     /* its Fortran handle (MPI_Request_c2f), or 0: the slot is freed with it */
	MPI_Status st;
	/* arguments */
	void *buf;
	int count;
	struct mpii_dtype *d;
	int peer, tag, wpeer; /* comm rank, tag, job rank */
	struct mpii_comm *comm;
	uint32_t ctx;
	/* protocol state */
	size_t bytes; /* send: packed size; recv: capacity */
	size_t msglen, got;
	void *tmp;
	uint64_t rid; /* remote request (CTS: the receiver's) */
	int held;     /* comm and d are referenced */
	uint64_t cid; /* send: what the receiver knows the message by (for MPI_Cancel) */
	int cxl; /* send cancel: 0 none, 1 asked (completion waits for the answer), 2 answered */
	int cxl_proto; /* the send's own protocol finished while the answer was awaited */
	int alone;     /* recv: read a large message without the sender's help (mpii_irecv_alone) */
	/* buffered send: the user's request and the one carrying the copy point at each other
	 * while both live (MPI_Cancel of an MPI_Ibsend) */
	struct lk_request *buddy;
	struct mpii_greq *greq;   /* RQ_GREQ: the user's callbacks (mpi_greq.c) */
	struct mpii_sched *sched; /* RQ_NBC: the schedule of a nonblocking collective */
};

/* Allocate a zeroed request; NULL on ENOMEM. */
struct lk_request *mpii_req_new(int kind);
/* Make a heap request hold its communicator and datatype (freed by mpii_req_free). */
void mpii_req_hold(struct lk_request *r);
/* Free (or cache) a request, dropping what it holds. */
void mpii_req_free(struct lk_request *r);
/* Start a prepared send/recv request. MPI error code. */
int mpii_start(struct lk_request *r);
/* Nonblocking internal send/recv on comm (coll: use the collective context). MPI code. */
int mpii_isend(const void *buf, int count, struct mpii_dtype *d, int dest, int tag,
               struct mpii_comm *c, int coll, int mode, struct lk_request **out);
int mpii_irecv(void *buf, int count, struct mpii_dtype *d, int src, int tag, struct mpii_comm *c,
               int coll, struct lk_request **out);
/* mpii_irecv for a pipeline whose sender has more to send: a large message from a rank on this
 * node is read by the receiver alone, the sender is not asked to copy part of it (a sender
 * with sends queued behind is slow to answer, and the receiver waited for its part). */
int mpii_irecv_alone(void *buf, int count, struct mpii_dtype *d, int src, int tag,
                     struct mpii_comm *c, int coll, struct lk_request **out);
/* Blocking internal helpers (status may be NULL). MPI code. */
int mpii_send(const void *buf, int count, struct mpii_dtype *d, int dest, int tag,
              struct mpii_comm *c, int coll, int mode);
int mpii_recv(void *buf, int count, struct mpii_dtype *d, int src, int tag, struct mpii_comm *c,
              int coll, MPI_Status *st);
int mpii_sendrecv(const void *sbuf, int scount, struct mpii_dtype *sd, int dest, void *rbuf,
                  int rcount, struct mpii_dtype *rd, int src, int tag, struct mpii_comm *c,
                  int coll, MPI_Status *st);
/* Wait for r to complete; copies status, frees non-persistent requests. MPI code from status. */
int mpii_wait(struct lk_request *r, MPI_Status *st);
/* Cancel a posted receive. 1 if cancelled. */
int mpii_cancel_recv(struct lk_request *r);
/* Ask the receiver to drop the (not yet matched) message of send r; r completes when the answer
 * arrives, with st.lk_cancelled set if the message was dropped. */
void mpii_cancel_send(struct lk_request *r);
/* Generalized requests (mpi_greq.c). Finish a done one for Wait/Test: runs query and free
 * callbacks, releases it, sets *req to null. MPI code from the callbacks. */
int mpii_greq_finish(MPI_Request *req, MPI_Status *st);
/* Status of a done one without freeing it (MPI_Request_get_status). MPI code. */
int mpii_greq_status(struct lk_request *r, MPI_Status *st);
/* MPI_Cancel / MPI_Request_free of one. MPI code. */
int mpii_greq_cancel(struct lk_request *r);
int mpii_greq_free(struct lk_request *r);
/* MPI_Cancel of a buffered send's user request u: withdraw its copy if still unmatched; u
 * completes again when the answer is known. */
void mpii_cancel_bsend(struct lk_request *u);
/* Search the unexpected queue: 1 and *st filled if a message matches. */
int mpii_probe(uint32_t ctx, int src, int tag, MPI_Status *st);
/* ---- progress (mpi_progress.c) ---- */
/* Poll the transport once (under its lock while the RMA progress thread runs), handing up to
 * budget fragments of one shm ring: events handled, or -1 (mpii_fatal_tp says why). */
int mpii_poll_tp(int budget);
/* The transport failed where no MPI call can return the error: report it and end the job. */
void mpii_fatal_tp(void) __attribute__((noreturn));
/* One progress step, for calls that return at once (MPI_Test, MPI_Iprobe, ...): when
 * oversubscribed, yields only after many empty polls in a row. */
void mpii_progress(void);
/* One progress step inside a blocking wait for a message or a request: when oversubscribed and
 * idle, yields or sleeps until a peer sends. */
void mpii_progress_wait(void);
/* The same in a wait for n messages (MPI_Waitall): up to n fragments handed up at once. */
void mpii_progress_wait_n(int n);
/* The same in a wait until the word at `word` (shared memory: a window lock, which no message
 * announces) no longer holds val: a rank that blocks sleeps until then, or until a message
 * comes (mpii_wlock_release wakes it). */
void mpii_progress_wait_word(int *word, int val);
/* One progress step in a wait expected to be long (another job starting): if idle, sleep in the
 * transport until a peer sends or ms pass. 0 when the transport cannot sleep (nap instead). */
int mpii_progress_sleep(int ms);
/* Request finished: marks done and releases a freed request. */
void mpii_complete(struct lk_request *r);

/* ---- Fortran request handles (mpi_f2c.c): slot h of the table holds the request whose
 * Fortran handle is h (0 is MPI_REQUEST_NULL); a slot is given on the first conversion and
 * taken back when the request is freed ---- */
struct mpii_ftab {
	struct lk_request **v;
	int *next; /* free slots, chained */
	int n, cap, free;
};
extern struct mpii_ftab mpii_freq;
/* A slot for r when no freed one is left: the table grows. Its handle, or -1 on ENOMEM. */
MPI_Fint mpii_req_fgrow(struct lk_request *r);
void mpii_freq_fini(void);
/* A slot for r (which has none): a freed one, else a new one. Its handle, or -1 on ENOMEM.
 * Inline: a Fortran MPI_Isend takes one and its MPI_Wait gives it back. */
static inline MPI_Fint mpii_req_fnew(struct lk_request *r)
{
	struct mpii_ftab *t = &mpii_freq;
	int h = t->free;

	if (!h)
		return mpii_req_fgrow(r);
	t->free = t->next[h];
	t->v[h] = r;
	return r->fh = h;
}
/* Give r's slot back (mpii_req_free). */
static inline void mpii_req_fdrop(struct lk_request *r)
{
	struct mpii_ftab *t = &mpii_freq;

	t->v[r->fh] = NULL;
	t->next[r->fh] = t->free;
	t->free = r->fh;
	r->fh = 0;
}
/* The Fortran handle of request r (0 for a null request, -1 on ENOMEM). */
static inline MPI_Fint mpii_req_c2f(struct lk_request *r)
{
	return !r ? 0 : r->fh ? r->fh : mpii_req_fnew(r);
}
/* The request of Fortran handle h; NULL for 0 and for a handle that names none. */
static inline struct lk_request *mpii_req_f2c(MPI_Fint h)
{
	return h > 0 && h < mpii_freq.n ? mpii_freq.v[h] : NULL;
}

/* Transport upcalls (set in mpi_init.c). */
void mpii_on_frag(void *arg, int peer, const void *hdr, size_t hlen, const void *data, size_t len);
void mpii_on_sent(void *arg, void *cookie);
/* tp ops.place: where a large fragment's payload can go directly (the user's buffer), or NULL. */
void *mpii_place(void *arg, int peer, const void *hdr, size_t hlen, size_t len);

/* ---- operations ---- */
/* Apply op: inout[i] = in[i] op inout[i] over count elements of d. MPI code. */
int mpii_reduce_local(const void *in, void *inout, int count, struct mpii_dtype *d, MPI_Op op);
int mpii_op_valid(MPI_Op op);
/* A pending operation keeps a user op alive past MPI_Op_free; release drops that hold. */
void mpii_op_hold(MPI_Op op);
void mpii_op_release(MPI_Op op);
int mpii_op_commutative(MPI_Op op);
void mpii_op_fini(void);

/* ---- errors ---- */
/* Report code on comm (NULL = world) through its error handler; returns code if it returns.
 * Inline: every MPI call ends here, nearly always with MPI_SUCCESS. */
int mpii_err_report(struct mpii_comm *c, int code, const char *fn);
static inline int mpii_err(struct mpii_comm *c, int code, const char *fn)
{
	return code == MPI_SUCCESS ? code : mpii_err_report(c, code, fn);
}
/* Say why the next error reported is happening (e.g. the transport's line naming the peer and
 * the addresses tried): the next mpii_err prints and aborts with it instead of the class text. */
void mpii_err_detail(const char *why);
/* The detail set by mpii_err_detail and not yet used, into buf ("" when none); it is used. */
const char *mpii_err_take_detail(char *buf, size_t len);
void mpii_err_fini(void);

/* ---- attributes ---- */
/* Copy comm attributes on dup (runs copy callbacks). MPI code. */
int mpii_attr_copy_comm(struct mpii_comm *from, struct mpii_comm *to);
/* Delete every attribute of a comm / type (runs delete callbacks). */
void mpii_attr_clear_comm(struct mpii_comm *c);
void mpii_attr_clear_type(struct mpii_dtype *d);
struct mpii_win;
void mpii_attr_clear_win(struct mpii_win *w);
int mpii_attr_copy_type(struct mpii_dtype *from, struct mpii_dtype *to);
void mpii_attr_fini(void);
/* Attributes set and read by the Fortran bindings (lib/mpif). Set stores the value itself:
 * a C MPI_*_get_attr of it then gets a pointer to it, as MPI's rules for mixed languages
 * want. Get gives the stored value (the address, for an attribute set from C), and the value
 * of a predefined attribute. kind: the object's, handle obj; errors reported as from fn. */
enum { MPII_ATTR_COMM, MPII_ATTR_TYPE, MPII_ATTR_WIN };
int mpii_attr_fset(int kind, int obj, int keyval, MPI_Aint val, const char *fn);
int mpii_attr_fget(int kind, int obj, int keyval, MPI_Aint *val, int *flag, const char *fn);

/* ---- collectives helpers ---- */
/* Internal blocking collectives on an intracommunicator (collective context). MPI code. */
int mpii_barrier(struct mpii_comm *c);
int mpii_bcast(void *buf, int count, struct mpii_dtype *d, int root, struct mpii_comm *c);
/* Whether an allreduce of count elements of d over n ranks takes Rabenseifner's algorithm
 * (blocking and nonblocking alike): a large enough vector, a power-of-two size, count >= n and a
 * commutative op; otherwise recursive doubling on the whole vector. */
int mpii_allreduce_rab_fits(const struct mpii_dtype *d, int count, int n, MPI_Op op);
int mpii_allreduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                   struct mpii_comm *c);
int mpii_allgather(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf, int rcount,
                   struct mpii_dtype *rd, struct mpii_comm *c);
/* Linear gather to root (non-roots send once and are done); rbuf matters at the root only. A
 * root that could not allocate passes rbuf NULL: the members' messages are taken and dropped,
 * and the result is MPI_ERR_NO_MEM. */
int mpii_gather(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf, int rcount,
                struct mpii_dtype *rd, int root, struct mpii_comm *c);
/* Allocate a new context id agreed over parent (collective). ctx or 0 on failure. */
uint32_t mpii_ctx_alloc(struct mpii_comm *parent);
void mpii_ctx_free(uint32_t ctx);

/* Scratch buffers (mpi_scratch.c, kept for reuse) and copies shared by the collectives. */
void *mpii_tmpbuf(struct mpii_dtype *d, int count, char **base);
void mpii_tmpbuf_free(void *mem);
/* n bytes (16-byte aligned) from the same kept buffers; mpii_scratch_free gives them back. */
void *mpii_scratch(size_t n);
void mpii_scratch_free(void *data);
/* How many buffers are kept, and their bytes (tests/unit/t_mpi_scratch). */
int mpii_scratch_kept(size_t *bytes);
/* Free what is kept (MPI_Finalize). */
void mpii_tmpbuf_fini(void);
void mpii_copy(const void *src, void *dst, int count, struct mpii_dtype *d);

/* Per-peer buffer descriptions of the alltoall family (alltoallw: byte displacements). */
struct mpii_a2a {
	const char *sbuf;
	char *rbuf;
	const int *sc, *sdp, *rc, *rdp;
	const MPI_Datatype *st, *rt;
	int scount, rcount, bytes_disp;
	struct mpii_dtype *sd, *rd;
};
/* Address, type and count of the block sent to / received from peer i. */
const char *mpii_a2a_sptr(const struct mpii_a2a *a, int i, struct mpii_dtype **d, int *cnt);
char *mpii_a2a_rptr(const struct mpii_a2a *a, int i, struct mpii_dtype **d, int *cnt);

/* ---- schedules of nonblocking collectives (mpi_sched.c) ----
 * A schedule is a list of steps run in order: a send or receive starts and is not waited for,
 * a local copy or reduction runs at once, and a fence waits for every send and receive started
 * since the previous one. Messages travel on the communicator's collective context under a tag
 * of their own per collective (every rank starts collectives in the same order), so they never
 * match a blocking collective's or another schedule's. Progress (mpii_progress and every wait)
 * advances each schedule as far as it can. */
struct mpii_sched;
/* New empty schedule on intracommunicator c (the union for an intercommunicator). NULL on
 * ENOMEM. */
struct mpii_sched *mpii_sched_new(struct mpii_comm *c);
/* Append a step. Datatypes are referenced until the schedule ends. Each records ENOMEM in the
 * schedule, reported by mpii_sched_start, so callers need not check. */
void mpii_sched_send(struct mpii_sched *s, const void *buf, int count, struct mpii_dtype *d,
                     int peer);
void mpii_sched_recv(struct mpii_sched *s, void *buf, int count, struct mpii_dtype *d, int peer);
/* inout = in op inout. */
void mpii_sched_reduce(struct mpii_sched *s, const void *in, void *inout, int count,
                       struct mpii_dtype *d, MPI_Op op);
/* Typed copy (signatures must match; a longer source is MPI_ERR_TRUNCATE). */
void mpii_sched_copy(struct mpii_sched *s, const void *src, int scount, struct mpii_dtype *sd,
                     void *dst, int rcount, struct mpii_dtype *rd);
void mpii_sched_fence(struct mpii_sched *s);
/* Scratch for count elements of d owned by the schedule; *base is element 0 (NULL on ENOMEM,
 * recorded). */
void mpii_sched_tmp(struct mpii_sched *s, struct mpii_dtype *d, int count, char **base);
/* Start s and hand back its request (the user communicator uc holds it). Runs the first steps
 * now. On failure s is freed and *req is MPI_REQUEST_NULL. MPI code. */
int mpii_sched_start(struct mpii_sched *s, struct mpii_comm *uc, MPI_Request *req);
/* Drop a schedule that was never started. Accepts NULL. */
void mpii_sched_free(struct mpii_sched *s);
/* Advance every schedule in progress (called by mpii_progress). Steps taken. */
int mpii_nbc_progress(void);
/* Checks shared by the MPI_I* collectives (*cp NULL when comm is not valid). MPI code. */
int mpii_nbc_check(MPI_Comm comm, MPI_Request *req, struct mpii_comm **cp);
/* The MPI code (with its one-line reason) for an MPI_I* collective on an intercommunicator. */
int mpii_nbc_inter(const char *fn);

/* Nonblocking collectives on intercommunicator ic (mpi_nbc_inter.c): schedules on its union,
 * with the blocking ones' semantics (root MPI_ROOT / MPI_PROC_NULL / a remote rank). MPI codes,
 * reported through ic's error handler. */
int mpii_inbc_barrier(struct mpii_comm *ic, MPI_Request *req);
int mpii_inbc_bcast(void *buf, int count, struct mpii_dtype *d, int root, struct mpii_comm *ic,
                    MPI_Request *req);
int mpii_inbc_reduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                     int root, struct mpii_comm *ic, MPI_Request *req);
int mpii_inbc_allreduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                        struct mpii_comm *ic, MPI_Request *req);
int mpii_inbc_gatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                      const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                      int root, struct mpii_comm *ic, MPI_Request *req, const char *fn);
int mpii_inbc_scatterv(const void *sbuf, const int *scounts, const int *displs, int scount,
                       struct mpii_dtype *sd, void *rbuf, int rcount, struct mpii_dtype *rd,
                       int root, struct mpii_comm *ic, MPI_Request *req, const char *fn);
int mpii_inbc_allgatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                         const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                         struct mpii_comm *ic, MPI_Request *req, const char *fn);
int mpii_inbc_alltoall(const struct mpii_a2a *a, struct mpii_comm *ic, MPI_Request *req,
                       const char *fn);
/* Reduce_scatter (rcounts per local rank) or reduce_scatter_block (rcounts NULL, rcount each):
 * each group gets the reduction of the other group's vectors, scattered. */
int mpii_inbc_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, int rcount,
                             struct mpii_dtype *d, MPI_Op op, struct mpii_comm *ic,
                             MPI_Request *req, const char *fn);

/* ---- one-sided communication (mpi_win.c, mpi_rma.c) ----
 * On each node a control segment (POSIX shm) holds one lock line per rank; window memory from
 * MPI_Win_allocate(_shared) of the node's ranks lives in the same segment, mapped by each of
 * them, so origins read and write it directly; memory given to MPI_Win_create is reached with
 * process_vm_readv/writev. Either way the target takes no part (passive progress). Targets on
 * other nodes get active messages (mpi_rmam.c). */
struct mpii_wlock {
	int rw;  /* MPI_Win_lock: 0 free, > 0 shared holders, -1 exclusive */
	int acc; /* accumulate mutex: accumulates to this rank are atomic per element and op */
	/* ranks asleep waiting for rw / acc to change (mpii_wlock_waiters): a release wakes them */
	unsigned rw_waiters, acc_waiters;
	char pad[48];
};

struct mpii_wpeer {
	char *ptr;     /* window of this rank in our address space, or NULL (use addr) */
	uint64_t addr; /* its base address in its own process */
	MPI_Aint size;
	int disp_unit;
	int pid;
	int remote; /* on another node: reached by active messages (mpi_rmam.c) */
};

struct mpii_rmaw; /* a window's state for ranks on other nodes (mpi_rmam.c) */

struct mpii_wreg { /* memory attached to a dynamic window */
	char *base;
	MPI_Aint size;
};

struct mpii_win {
	int handle;
	int flavor;
	struct mpii_comm *comm; /* a private duplicate: fence and PSCW messages */
	void *base;
	MPI_Aint size;
	int disp_unit;
	struct mpii_wpeer *p;  /* per rank of comm */
	struct mpii_wlock *lk; /* per rank, in the control segment */
	void *seg;             /* the mapping */
	size_t seg_len;
	int *locked; /* lock type this rank holds on each target (0 none) */
	int lock_all;
	int *start; /* PSCW access epoch: targets (comm ranks) */
	int nstart;
	struct lk_request **post; /* exposure epoch: receives of the origins' completions */
	int npost;
	int fence_open;
	struct mpii_rmaw *rm;  /* NULL when every rank shares this node */
	struct mpii_wreg *att; /* MPI_Win_create_dynamic: memory attached here */
	int natt, catt;
	char name[MPI_MAX_OBJECT_NAME];
	struct mpii_attr *attrs;
	/* MPI_Win_set_info hints, as last set (none changes what this library does: each only
	 * allows it to do less, which it never needs to) */
	char no_locks[8], acc_order[32], acc_ops[16], same_size[8], same_disp[8], noncontig[8];
};
/* Window for handle, or NULL. */
struct mpii_win *mpii_win(MPI_Win h);
/* Take the info keys a window knows from info (MPI_INFO_NULL: none), after resetting every one
 * to its default if reset (mpi_winfo.c). */
void mpii_win_hints(struct mpii_win *w, MPI_Info info, int reset);
/* Whether key is a predefined window attribute; if so its value is stored at *(void **)val. */
int mpii_win_predefined(struct mpii_win *w, int key, void *val);
/* Whether [addr, addr + len) lies in memory attached to dynamic window w (under the transport
 * lock when the progress thread runs). */
int mpii_win_attached(const struct mpii_win *w, uint64_t addr, size_t len);
/* Acquire / release a spin word of the control segment (progress while waiting). */
void mpii_wlock_acquire(int *word, int excl);
void mpii_wlock_release(int *word, int excl);
/* The count of sleepers waiting on a lock word (&lk->rw or &lk->acc). */
static inline unsigned *mpii_wlock_waiters(int *word)
{
	/* rw_waiters and acc_waiters sit 8 bytes after rw and acc */
	return (unsigned *)(void *)(word + 2);
}

/* ---- one-sided communication with ranks on other nodes (mpi_rmam.c) ----
 * Operations on a target off this node travel as active messages (doc/PROTOCOL-mpi-wire.md
 * section 6.2) applied by the target's receive path: by its own MPI calls, or, while a window
 * with remote ranks exists, by a progress thread that polls the transport while the main
 * thread is outside MPI. While that thread runs, every transport call takes mpii_tp_lock. */
enum { MPII_RMA_PUT = 1, MPII_RMA_GET, MPII_RMA_ACC, MPII_RMA_GACC, MPII_RMA_CAS };
/* First wire type of the RMA messages (types below it are point-to-point). */
#define MPII_H_RMA 9
/* Set up / tear down remote state of a window whose ranks span nodes (collective over
 * w->comm; the window is found by its context from then on). MPI code. */
int mpii_rma_win_init(struct mpii_win *w);
void mpii_rma_win_fini(struct mpii_win *w);
/* One operation to remote target trank: the origin's data packed (obytes, may be NULL for a
 * get), the target's type (count elements of td at byte offset toff), the basic element type
 * and op of accumulates, and where results go (rbuf/rcount/rd; for CAS cbuf is the compare
 * value). req, if not NULL, is completed when the results are in. MPI code. */
struct mpii_rma_op {
	int kind, trank;
	MPI_Aint toff;
	int tcount;
	struct mpii_dtype *td, *ed;
	MPI_Op op;
	const char *obytes, *cbytes;
	void *rbuf;
	int rcount;
	struct mpii_dtype *rd;
	struct lk_request *req;
};
int mpii_rma_issue(struct mpii_win *w, const struct mpii_rma_op *o);
/* Synchronisation with remote targets. Flush: every operation to trank (-1: all) is complete
 * at the target. Lock/unlock: the target's rw word, taken and released by the target on our
 * behalf. MPI codes. */
int mpii_rma_flush(struct mpii_win *w, int trank);
int mpii_rma_lock(struct mpii_win *w, int trank, int excl);
int mpii_rma_unlock(struct mpii_win *w, int trank, int excl);
/* An RMA fragment arrived (from mpii_on_frag). */
void mpii_rma_frag(int wsrc, const void *hdr, const void *data, size_t len);
/* Retry lock requests that wait at this target (under the transport lock). Steps taken. */
int mpii_rma_progress(void);
/* A window with remote ranks is made (up = 1) or freed (0): the progress thread runs while
 * one exists. */
void mpii_rma_thread(int up);
/* Stop the progress thread (MPI_Finalize). */
void mpii_rma_fini(void);
/* Transport lock (recursive); used only while mpii.tp_mt is set. */
void mpii_tp_lock(void);
void mpii_tp_unlock(void);
#define MPII_TP_LOCK()                                                                             \
	do {                                                                                       \
		if (mpii.tp_mt)                                                                    \
			mpii_tp_lock();                                                            \
	} while (0)
#define MPII_TP_UNLOCK()                                                                           \
	do {                                                                                       \
		if (mpii.tp_mt)                                                                    \
			mpii_tp_unlock();                                                          \
	} while (0)
/* In the progress thread: point-to-point fragments and send completions are queued for the
 * main thread (mpi_p2p.c) instead of handled. */
int mpii_in_thread(void);
void mpii_defer_frag(int wsrc, const void *hdr, size_t hlen, const void *data, size_t len);
void mpii_defer_sent(void *cookie);
/* Main thread, under the transport lock: handle what the thread queued. Count. */
int mpii_drain_deferred(void);
/* Under the transport lock: whether the thread queued something the main thread has not
 * taken yet. */
int mpii_deferred(void);

/* ---- MPI-IO (mpi_io*.c, lib/mpi/mpio.h) ----
 * While I/O operations are in progress (mpii_io_active), every progress step advances them;
 * while the I/O thread has work (mpii_io_thread_busy) a wait does not sleep in the transport:
 * the thread, not a peer, is what it waits for, and it rings no doorbell. */
extern int mpii_io_active, mpii_io_thread_busy;
int mpii_io_progress(void);
/* Complete what is pending, close the files left open, stop the I/O thread (MPI_Finalize). */
void mpii_io_fini(void);

/* ---- intercommunicators (mpi_inter.c) ---- */
/* The union intracommunicator of ic (both groups, the one holding the lower job rank at its
 * rank 0 first), built on first use and kept until ic is destroyed. NULL on ENOMEM. */
struct mpii_comm *mpii_inter_union(struct mpii_comm *ic);
/* Collectives on an intercommunicator; root is MPI_ROOT, MPI_PROC_NULL or a remote rank.
 * MPI codes. */
int mpii_inter_barrier(struct mpii_comm *ic);
int mpii_inter_bcast(void *buf, int count, struct mpii_dtype *d, int root, struct mpii_comm *ic);
int mpii_inter_reduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                      int root, struct mpii_comm *ic);
int mpii_inter_allreduce(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                         struct mpii_comm *ic);
int mpii_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                              struct mpii_dtype *d, MPI_Op op, struct mpii_comm *ic);
/* Gather(v) (rcounts NULL: rcount each) and scatter(v) likewise. */
/* Union rank of local rank l / of remote rank r of intercommunicator ic. */
int mpii_inter_uloc(const struct mpii_comm *ic, int l);
int mpii_inter_urem(const struct mpii_comm *ic, int r);
int mpii_inter_gatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                       const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                       int root, struct mpii_comm *ic);
int mpii_inter_scatterv(const void *sbuf, const int *scounts, const int *displs, int scount,
                        struct mpii_dtype *sd, void *rbuf, int rcount, struct mpii_dtype *rd,
                        int root, struct mpii_comm *ic);
int mpii_inter_allgatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                          const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                          struct mpii_comm *ic);
int mpii_inter_alltoall(const struct mpii_a2a *a, struct mpii_comm *ic);
/* Communicator constructors on an intercommunicator. MPI codes. */
int mpii_inter_dup(struct mpii_comm *ic, MPI_Comm *out);
int mpii_inter_merge(struct mpii_comm *ic, int high, MPI_Comm *out);
int mpii_inter_split(struct mpii_comm *ic, int color, int key, MPI_Comm *out);
int mpii_inter_create(struct mpii_comm *ic, struct mpii_group *g, MPI_Comm *out);

/* ---- node-aware collectives (mpi_hier.c) ----
 * On an intracommunicator whose ranks span several nodes with more than one rank on some node,
 * the blocking barrier, bcast, reduce and allreduce (commutative ops) and allgather work in three
 * steps: inside each node over shared memory, between one leader per node (its lowest rank), inside
 * each node again. Only the leaders' step crosses the network. LAMKIT_COLL_HIER=0 keeps the flat
 * algorithms everywhere (every rank of a job must see the same value). */
struct mpii_hier;
/* c's node structure, or NULL when the flat algorithms apply. Local computation only: every
 * rank of c reaches the same answer from the job's node map. */
struct mpii_hier *mpii_hier_of(struct mpii_comm *c);
void mpii_hier_free(struct mpii_hier *h);
/* Free the job's node map (MPI_Finalize). */
void mpii_hier_fini(void);
int mpii_hier_barrier(struct mpii_hier *h);
int mpii_hier_bcast(struct mpii_hier *h, void *buf, int count, struct mpii_dtype *d, int root);
int mpii_hier_reduce(struct mpii_hier *h, const void *sbuf, void *rbuf, int count,
                     struct mpii_dtype *d, MPI_Op op, int root, struct mpii_comm *c);
int mpii_hier_allreduce(struct mpii_hier *h, const void *sbuf, void *rbuf, int count,
                        struct mpii_dtype *d, MPI_Op op);
int mpii_hier_allgather(struct mpii_hier *h, const void *sbuf, int scount, struct mpii_dtype *sd,
                        void *rbuf, int rcount, struct mpii_dtype *rd);
/* The node of every job rank (PMI_Topo_node_map, asked once), or NULL without a map. */
const int *mpii_node_map(void);

/* ---- collectives in shared memory (mpi_coll_shm.c) ----
 * On an intracommunicator of 3 to 64 ranks all on one node, barrier, and allreduce (contiguous
 * types), allgather and alltoall of small messages (a rank's part up to 8 KiB) go through one
 * segment shared by its ranks instead of messages. LAMKIT_COLL_SHM=0
 * turns it off (every rank of a job must see the same value). */
struct mpii_cshm;
#define MPII_CSHM_NO (-1) /* the call does not fit: use the message algorithms */
/* c's segment, made collectively at the first call (every rank of c reaches this call in the
 * same collective), or NULL when c is not on one node. */
struct mpii_cshm *mpii_cshm_of(struct mpii_comm *c);
/* The eager limit for the sends of allgather, alltoall and bcast on c: 0 when the usual limit
 * holds (mpi_coll_shm.c). */
size_t mpii_coll_eager(struct mpii_comm *c);
/* Whether c's ranks share the CPUs of one node: an intracommunicator all on one node whose ranks
 * block (mpii.yield), where an algorithm of many rounds pays a scheduler round per step. */
int mpii_shares_cpus(struct mpii_comm *c);
void mpii_cshm_free(struct mpii_cshm *s);
int mpii_cshm_barrier(struct mpii_cshm *s);
int mpii_cshm_allreduce(struct mpii_cshm *s, const void *sbuf, void *rbuf, int count,
                        struct mpii_dtype *d, MPI_Op op);
int mpii_cshm_allgather(struct mpii_cshm *s, const void *sbuf, int scount, struct mpii_dtype *sd,
                        void *rbuf, int rcount, struct mpii_dtype *rd);
int mpii_cshm_alltoall(struct mpii_cshm *s, const void *sbuf, int scount, struct mpii_dtype *sd,
                       void *rbuf, int rcount, struct mpii_dtype *rd);
/* A segment of len bytes shared by the ranks of c (all on one node), made by rank 0: every rank
 * calls it; NULL on every rank when it failed on one (mpi_win.c). */
void *mpii_map_segment(struct mpii_comm *c, size_t len);

/* The flat ring allgather(v) (mpi_coll2.c): rcounts/displs NULL for a plain allgather. */
int mpii_allgatherv(const void *sbuf, int scount, struct mpii_dtype *sd, void *rbuf,
                    const int *rcounts, const int *displs, int rcount, struct mpii_dtype *rd,
                    struct mpii_comm *c);
/* The flat reduce to root (mpi_coll.c), for the node and leader steps. */
int mpii_reduce_flat(const void *sbuf, void *rbuf, int count, struct mpii_dtype *d, MPI_Op op,
                     int root, struct mpii_comm *c);

/* ---- dynamic processes (mpi_dyn.c, mpi_spawn.c; doc/PROTOCOL-mpi-wire.md section 8) ---- */
#define MPII_CTX_PORT   4  /* context of the accept/connect handshake (id 2, never allocated) */
#define MPII_NCTX_WORDS 32 /* words of a context id mask */
/* The context ids free on every member of c (an allreduce over c). MPI code. */
int mpii_ctx_mask(struct mpii_comm *c, uint64_t *mask);
/* This process's own free context ids (no communication): mpii_ctx_mask's contribution. */
void mpii_ctx_mine(uint64_t *mask);
/* Lowest id set in mask (0: none); take id on this process. */
uint32_t mpii_ctx_lowest(const uint64_t *mask);
void mpii_ctx_claim(uint32_t id);
/* A new port name (MPI_MAX_PORT_NAME bytes). MPI code. */
int mpii_open_port(char *port);
/* Accept on / connect to port, collectively over intracommunicator c with root `root` (port is
 * significant there): the intercommunicator in *out. MPI code (MPI_ERR_PORT: bad port, nobody
 * answered in time). */
int mpii_accept(const char *port, int root, struct mpii_comm *c, MPI_Comm *out);
int mpii_connect(const char *port, int root, struct mpii_comm *c, MPI_Comm *out);
/* Every member's transport card (MPII_CARD bytes each, in rank order of c) into *cards
 * (malloc'ed; an allgather over c). MPI code. */
#define MPII_CARD TP_DYN_CARD_MAX
int mpii_cards(struct mpii_comm *c, char **cards);
/* The peer index of each of the n cards into w[] (the cards are changed). MPI code. */
int mpii_cards_world(char *cards, int n, int *w);
/* The card in a port name, or NULL when it is not one of ours. */
const char *mpii_port_card(const char *port);
/* A communicator with a handle holds each process of other jobs in its groups: take the holds
 * (d = 1, when it is made) or drop them (d = -1, when it is destroyed; nothing for a private
 * communicator that never took any): mpi_comm.c. */
void mpii_dyn_hold(struct mpii_comm *c, int d);
/* Let every process of another job that no communicator holds go (tp_release): what
 * MPI_Comm_disconnect does after freeing its communicator. */
void mpii_dyn_release_idle(void);
/* Free the table of holds (MPI_Finalize, after the communicators). */
void mpii_dyn_fini(void);
/* MPI_Comm_spawn without a handshake (doc/PROTOCOL-mpi-wire.md section 8, "Spawn"): the
 * parents gather their masks and cards at the root before the children start
 * (mpii_spawn_gather: members_at_root), the root picks the id and gives it and the parents'
 * cards to the children through their KVS; the children's root sends HELLO and their cards
 * (mpii_spawn_connect, in MPI_Init: nobody waits for an answer), the parents' root shares them
 * (mpii_spawn_accept). MPI codes. */
int mpii_spawn_gather(struct mpii_comm *c, int root, uint64_t *mask, char **cards);
int mpii_spawn_accept(const char *port, int root, struct mpii_comm *c, int id, int nchildren,
                      MPI_Comm *out);
int mpii_spawn_connect(const char *port, int id, char *pcards, int np, struct mpii_comm *c,
                       MPI_Comm *out);
/* A spawned process: connect to the parents' port (MPI_Init). MPI code. */
int mpii_spawn_init(const char *kvsname);

/* ---- failed processes (mpi_ft.c; mpiexec --on-node-failure continue) ---- */
/* LAMKIT_FT=1: learn failures, complete what waits on them with MPI_ERR_PROC_FAILED. */
void mpii_ft_init(void);
void mpii_ft_fini(void);
/* Ask the launcher which ranks failed (PMI_dead_processes) when force or every 50 ms; mark
 * the new ones. How many were new. */
int mpii_ft_poll(int force);
/* The transport failed: wait (bounded) for the launcher to name failed ranks and forget
 * them. 1 when it did (go on), 0 when nothing new came (the failure is the job's). */
int mpii_ft_recover(void);
/* Job rank w failed: forget it in the transport, fail the receives posted for it. */
void mpii_ft_mark(int w);
/* r waits on a failed rank: complete it with MPI_ERR_PROC_FAILED. */
void mpii_ft_fail_req(struct lk_request *r);
/* mpi_p2p.c: fail every receive posted for job rank w (a specific source). */
void mpii_fail_posted(int w);

/* ---- global state ---- */
struct mpii_unexp;

struct mpii_state {
	int initialized, finalized, thread_level, appnum, universe;
	int rank, size;
	int node;   /* lowest job rank on this node (MPI_COMM_TYPE_SHARED) */
	int socket; /* lowest job rank bound to my socket / core; -1 when not bound */
	int core;
	int *wnode; /* node of each job rank (PMI_process_mapping, read at first need by mpi_hier.c)
	             */
	int nwnode; /* node numbers are below this */
	tp_t *tp;
	int yield;
	struct mpii_tab comms, groups, dtypes, ops, errhs;
	struct lk_request *posted, *posted_tail;
	struct mpii_unexp *unexp, *unexp_tail;
	size_t bsend_size, bsend_used;
	void *bsend_buf;
	int bsend_pending;
	struct mpii_sched *nbc; /* schedules of nonblocking collectives in progress */
	MPI_Comm parent;        /* MPI_Comm_get_parent */
	int tp_mt;              /* the RMA progress thread runs: lock around the transport */
	int rma_waiting;        /* remote lock requests queued at this target */
	unsigned poll_seq;      /* transport polls by the main thread while tp_mt */
	int main_sleeping;      /* the main thread sleeps in the transport (under the tp lock) */
	size_t eager_min;       /* the smallest tp_eager_max of the job's ranks */
	size_t eager_coll;      /* while allgather, alltoall or bcast runs: sent eagerly up to this
	                         * (and what the transport takes), see mpii_coll_eager */
	int ft;                 /* LAMKIT_FT=1: failed ranks are survived (mpi_ft.c) */
	int nfailed;            /* ranks known failed */
	unsigned char *failed;  /* per job rank, when ft */
	char pname[MPI_MAX_PROCESSOR_NAME];
};
extern struct mpii_state mpii;

static inline struct mpii_comm *mpii_comm(MPI_Comm h)
{
	return mpii_tab_get(&mpii.comms, h);
}

/* In a wait on r: when ranks have failed, r may never complete by itself. */
static inline void mpii_ft_check(struct lk_request *r)
{
	if (__builtin_expect(mpii.nfailed != 0, 0) && !r->done)
		mpii_ft_fail_req(r);
}
/* Whether job rank w is known failed. */
static inline int mpii_ft_failed(int w)
{
	return __builtin_expect(mpii.nfailed != 0, 0) && w >= 0 && w < mpii.size && mpii.failed[w];
}

static inline struct mpii_dtype *mpii_dt(MPI_Datatype h)
{
	if (h > 0 && h < MPII_NPREDEF)
		return mpii_predef[h].handle ? &mpii_predef[h] : NULL;
	return mpii_tab_get(&mpii.dtypes, h);
}

/* Shortcuts used by the API files. */
#define MPII_CHECK_INIT(fn)                                                                        \
	do {                                                                                       \
		if (!mpii.initialized || mpii.finalized)                                           \
			return mpii_err(NULL, MPI_ERR_OTHER, fn);                                  \
	} while (0)

#endif
