/* lib/mpi/mpio.h: MPI-IO internals shared by the mpi_io*.c files (prefix mpio_; doc/MPI-IO.md). */
#ifndef LAMKIT_MPIO_H
#define LAMKIT_MPIO_H

#include <stdint.h>

#include "mpii.h"

/* ---- hints (mpi_io_hints.c) ---- */
enum { MPIO_AUTO = 0, MPIO_ENABLE = 1, MPIO_DISABLE = 2 };

struct mpio_hints {
	MPI_Offset cb_buffer_size;     /* bytes an aggregator handles per round */
	int cb_nodes;                  /* aggregators (set from the node count at open) */
	int cb_read, cb_write;         /* two-phase collective I/O: MPIO_AUTO/ENABLE/DISABLE */
	int ds_read, ds_write;         /* data sieving of independent noncontiguous access */
	MPI_Offset ind_rd_buffer_size; /* sieve window of independent reads */
	MPI_Offset ind_wr_buffer_size; /* ... and writes */
	MPI_Offset striping_unit;      /* 0: not given (file domains then align to 64 KiB) */
	int striping_factor;
	int no_indep_rw; /* romio_no_indep_rw: only the aggregators open the file (accepted) */
	int nnodes;      /* nodes of the file's ranks */
	char cb_config_list[256]; /* "*:N" (N aggregators a node) or "*:*" (every rank); other
	                           * forms (host lists) are kept and reported, not used */
	MPI_Info user;            /* every key the user gave (MPI_File_get_info reports them too) */
};

/* Defaults (MPICH's ROMIO ones) into h; cb_nodes = nnodes. */
void mpio_hints_default(struct mpio_hints *h, int nnodes);
/* Take the keys lamkit knows from info (MPI_INFO_NULL: none) and remember all of them; cb_nodes
 * is kept to at most nranks. The same info on every rank (collective callers) gives the same
 * hints everywhere. MPI code. */
int mpio_hints_set(struct mpio_hints *h, MPI_Info info, int nranks);
/* The hints file as ROMIO reads it: the file ROMIO_HINTS names, else /etc/romio-hints; lines
 * of a key and a value, '#' comments. mpio_hints_fetch (collective over c) has rank 0 read it and
 * gives every rank its text (empty: none); mpio_hints_file applies it (text is cut up) under
 * the keys user sets, which win, and remembers its keys for MPI_File_get_info. MPI code. */
#define MPIO_HINTS_TEXT 8192
int mpio_hints_fetch(struct mpii_comm *c, char text[MPIO_HINTS_TEXT]);
int mpio_hints_file(struct mpio_hints *h, char *text, MPI_Info user, int nranks, int rank);
/* A new info object with the hints in effect. MPI code. */
int mpio_hints_get(const struct mpio_hints *h, MPI_Info *out);
void mpio_hints_free(struct mpio_hints *h);

/* ---- data representations (mpi_io_datarep.c) ---- */
struct mpio_datarep;
/* The representation called name ("native", "internal", "external32" or registered), or NULL. */
struct mpio_datarep *mpio_datarep_find(const char *name);
/* Whether dr is the native representation (no conversion, file bytes = memory bytes). */
int mpio_datarep_native(const struct mpio_datarep *dr);
/* A datatype whose flattened runs give where t's data lies in a file of representation dr
 * (MPI-3.1 13.5.1: portable types scaled to the file's element sizes, byte displacements
 * kept). *out is a new handle the caller frees. MPI code (MPI_ERR_CONVERSION: t holds a type
 * dr has no form for). */
int mpio_datarep_type(const struct mpio_datarep *dr, MPI_Datatype t, MPI_Datatype *out);
/* Bytes of count elements of d in representation dr (-1: no form). */
MPI_Offset mpio_datarep_size(const struct mpio_datarep *dr, struct mpii_dtype *d, int count);
/* Convert count elements of d between memory buf and the file stream fbuf (to_file: memory
 * to file). MPI code. */
int mpio_datarep_conv(const struct mpio_datarep *dr, struct mpii_dtype *d, int count, void *buf,
                      void *fbuf, int to_file);
void mpio_datarep_fini(void);

/* ---- views (mpi_io_view.c) ---- */
struct mpio_run {
	MPI_Offset off, len; /* file bytes, from the start of a tile */
};

/* A view: the data of the file as one stream of bytes (in the file's representation). Stream
 * byte s lies at disp + (s / size) * ext + run[k].off + (s % size - pre[k]) for the k with
 * pre[k] <= s % size < pre[k + 1]: runs increase and do not overlap, so the map is increasing
 * within a tile (the standard's monotonic filetype), and across tiles unless tiles_overlap. */
struct mpio_view {
	MPI_Offset disp;
	MPI_Datatype etype, ftype; /* the user's types (each held by one reference) */
	char rep[MPI_MAX_DATAREP_STRING];
	struct mpio_datarep *dr;
	MPI_Offset esize;     /* etype bytes in the file representation */
	MPI_Offset ext, size; /* a tile's extent and data bytes */
	int nrun;             /* runs per tile */
	struct mpio_run *run; /* nrun runs */
	MPI_Offset *pre;      /* nrun + 1 prefix sums of the run lengths */
	int contig;           /* one run covering the tile: the map is linear */
	int overlap;          /* runs overlap (a read-only file may): the map is not increasing,
	                       * only independent access per run works */
	int tiles_overlap;    /* a tile's runs reach past its extent into the next tile's: the map
	                       * is increasing within a tile, not across tiles */
};

/* A view as set by MPI_File_set_view, with every rank's (for two-phase I/O). Operations hold
 * it, so a later MPI_File_set_view does not change what an operation in progress uses. */
struct mpio_vset {
	int refs, n;
	struct mpio_view v;    /* mine */
	struct mpio_view *all; /* every rank's, n of them; NULL: all the same as v */
};
/* The view of rank p. */
static inline const struct mpio_view *mpio_vset_of(const struct mpio_vset *vs, int p)
{
	return vs->all ? &vs->all[p] : &vs->v;
}
/* Drop a reference (the last frees it). Accepts NULL. */
void mpio_vset_release(struct mpio_vset *vs);
/* A set holding the byte view for every one of n ranks. NULL on ENOMEM. */
struct mpio_vset *mpio_vset_default(int n);

/* The byte view (disp 0, MPI_BYTE, MPI_BYTE, native). MPI code. */
int mpio_view_default(struct mpio_view *v);
void mpio_view_free(struct mpio_view *v);
/* File offset of stream byte s (s >= 0, size > 0). */
MPI_Offset mpio_view_off(const struct mpio_view *v, MPI_Offset s);
/* Whether stream bytes [s, s + n) of v map to file offsets out of order (overlapping runs, or
 * tiles that overlap and an access across them). */
int mpio_view_overlaps(const struct mpio_view *v, MPI_Offset s, MPI_Offset n);
/* Number of stream bytes whose file offset is below f (an increasing map: not tiles_overlap). */
MPI_Offset mpio_view_below(const struct mpio_view *v, MPI_Offset f);
/* The view in a flat form another rank can rebuild (mpio_view_from_wire): *len bytes, malloc'ed
 * into *out. MPI code. */
int mpio_view_to_wire(const struct mpio_view *v, char **out, int *len);
/* Rebuild a view of another rank (types left null). 0, or -1 (malformed or ENOMEM). */
int mpio_view_from_wire(struct mpio_view *v, const char *w, int len);

/* Pieces of stream bytes [s, s + n) in file order, adjacent pieces merged. */
struct mpio_it {
	const struct mpio_view *v;
	MPI_Offset tile, left, inrun;
	int k;
};
void mpio_it_init(struct mpio_it *it, const struct mpio_view *v, MPI_Offset s, MPI_Offset n);
/* Next piece: 1 with *off and *len, 0 at the end. */
int mpio_it_next(struct mpio_it *it, MPI_Offset *off, MPI_Offset *len);

/* ---- files (mpi_io_file.c) ---- */
struct mpio_op;

struct mpio_file {
	int handle;
	int fd;
	int amode;
	char *path;             /* as opened, any "ufs:"-style prefix removed */
	struct mpii_comm *comm; /* private duplicate: errors (file handler), exchanges */
	MPI_Comm ch;            /* its handle */
	int nranks;             /* its size */
	int *node;              /* node index (0 ..) of each rank of comm */
	int nnodes;
	struct mpio_hints h;
	struct mpio_vset *vs; /* the view */
	MPI_Offset fp;        /* individual file pointer, etypes */
	int64_t epoch;        /* views set so far: the shared pointer of an older one counts as 0 */
	int atomic;
	unsigned seq;             /* collective data accesses started (their tags) */
	char *shfp_path;          /* the shared pointer's file */
	int shfp_pid;             /* rank 0's pid at open: part of that file's name */
	int shfp_fd;              /* -1 until first used */
	struct lk_request *split; /* split collective in progress */
	int split_kind;           /* which one (SPLIT_*: mpi_io_access.c) */
	int pending;              /* nonblocking operations not complete */
};

/* Whether errhandler eh exists and may be attached to a file (mpi_err.c). */
int mpii_errh_file_ok(MPI_Errhandler eh);
/* File for handle, or NULL. */
struct mpio_file *mpio_file(MPI_File fh);
/* Declare f for handle fh in an API function fn; return its error when MPI is not up or fh is not
 * a file. */
#define MPIO_FILE(f, fh, fn)                                                                       \
	struct mpio_file *f = mpio_file(fh);                                                       \
	if (!mpii.initialized || mpii.finalized)                                                   \
		return mpii_err(NULL, MPI_ERR_OTHER, fn);                                          \
	if (!f)                                                                                    \
	return mpio_err(NULL, MPI_ERR_FILE, fn)
/* The end of the file in etypes of f's view, rounded up (MPI_SEEK_END). MPI code. */
int mpio_end_etypes(struct mpio_file *f, MPI_Offset *e);
/* Report code on f (NULL: MPI_FILE_NULL) through its error handler. */
int mpio_err(struct mpio_file *f, int code, const char *fn);
/* The error class of errno value e for an I/O call. */
int mpio_errno_class(int e);
/* Agree on an error over f's communicator: every rank gets the lowest failing rank's code
 * (MPI_SUCCESS when none failed). Collective. */
int mpio_agree(struct mpii_comm *c, int code);
/* Close every file still open, without communication (MPI_Finalize). */
void mpio_files_fini(void);

/* ---- independent access (mpi_io_posix.c) ---- */
/* Read or write the stream bytes [s, s + n) of view v at buf (n bytes, the stream in file
 * representation): one pread/pwrite per run, or, for many small runs, data sieving (a window of
 * the file read whole; for writes, modified and written back under a byte-range lock). In
 * atomic mode the whole range is locked for the access. *done: bytes transferred (a read
 * stops at the end of file). MPI code. */
int mpio_pio(struct mpio_file *f, const struct mpio_view *v, int write, char *buf, MPI_Offset s,
             MPI_Offset n, MPI_Offset *done);
/* Whether mpio_pio writing stream bytes [s, s + n) of v would sieve some window (read it,
 * modify it and write it back, over bytes of the file it does not write): the same windows,
 * without the system calls. */
int mpio_pio_sieves(const struct mpio_file *f, const struct mpio_view *v, MPI_Offset s,
                    MPI_Offset n);
/* pread/pwrite of exactly n bytes at off, retried on EINTR and short transfers (a read stops at
 * the end of file). Bytes done, or -1 with errno. */
MPI_Offset mpio_pread(int fd, void *buf, MPI_Offset n, MPI_Offset off);
MPI_Offset mpio_pwrite(int fd, const void *buf, MPI_Offset n, MPI_Offset off);
/* ---- large transfers through a bounce buffer where the kernel's first touch of a page is
 * dear (mpi_io_bounce.c) ---- */
enum { MPIO_COPY_STRAIGHT, MPIO_COPY_PROBE, MPIO_COPY_BOUNCE };
struct mpio_copy {
	int how;            /* MPIO_COPY_*: straight, not decided yet, or through bb */
	int slot;           /* which bounce buffer bb is (-1: none taken) */
	MPI_Offset pos;     /* bytes of the call done */
	MPI_Offset n;       /* bytes of the call */
	uintptr_t lo;       /* where its buffer starts */
	MPI_Offset skip;    /* where in them the probe starts */
	MPI_Offset seen;    /* bytes of the probe done */
	int64_t ns;         /* ... and their time */
	MPI_Offset bounced; /* bytes that went through bb */
	char *bb;
};
/* The way for one call moving the n bytes at buf (its transfers share one decision). */
void mpio_copy_init(struct mpio_copy *c, const void *buf, MPI_Offset n);
/* mpio_pwrite (write) or mpio_pread of n bytes at off from/to buf, the call's way. */
MPI_Offset mpio_copy_io(struct mpio_copy *c, int write, int fd, void *buf, MPI_Offset n,
                        MPI_Offset off);
/* The call is over: its bounce buffer back for the next. */
void mpio_copy_done(struct mpio_copy *c);
/* Whether this machine's kernel pays much for its first touch of a user page (probed once). */
int mpio_bounce_dear(void);
void mpio_bounce_fini(void);
/* Byte-range lock of [off, off + len) (len 0: to the end), shared or exclusive; unlock. */
int mpio_lock(int fd, int excl, MPI_Offset off, MPI_Offset len);
void mpio_unlock(int fd, MPI_Offset off, MPI_Offset len);

/* ---- one data access: the user's buffer and its stream (mpi_io_access.c) ---- */
struct mpio_acc {
	struct mpio_file *f;
	struct mpio_vset *vs; /* the view when the access was started (held) */
	int write;
	MPI_Offset s; /* first stream byte (file representation) */
	MPI_Offset n; /* stream bytes */
	char *buf;    /* the stream: the user's memory or tmp */
	char *tmp;    /* owned: packed or converted data */
	void *ubuf;   /* the user's buffer, count elements of d */
	int count;
	struct mpii_dtype *d; /* held */
	MPI_Offset done;      /* stream bytes transferred */
	int err;      /* collective: this rank's arguments were wrong (it still takes part) */
	int blocking; /* the caller waits for it: system calls run in its thread */
};
/* Fill a from the user's arguments at stream byte s: the stream is the user's memory when it
 * is contiguous and native, otherwise packed/converted (write) or allocated (read). MPI code. */
int mpio_acc_prepare(struct mpio_acc *a, struct mpio_file *f, int write, MPI_Offset s,
                     const void *buf, int count, struct mpii_dtype *d);
/* Done: unpack/convert what a read got into the user's buffer, fill st (may be NULL or
 * MPI_STATUS_IGNORE), free tmp and drop d. MPI code. */
int mpio_acc_finish(struct mpio_acc *a, MPI_Status *st);

/* ---- collective access (mpi_io_coll.c, mpi_io_twophase.c) ---- */
/* Start a collective access described by a (prepared; taken over) as a state machine on f's
 * communicator, completed through req. MPI code. */
int mpio_coll_start(struct mpio_acc *a, struct lk_request *req);

/* An allgather of one item per rank (item r: lens[r] bytes) over c by point-to-point messages
 * under tag, advanced by steps (mpi_io_xchg.c). */
struct mpio_xg {
	struct mpii_comm *c;
	int tag;
	const int *lens; /* the caller's, alive until the end */
	char *out;       /* the items in rank order (the caller's; NULL: drop them) */
	char *tmp;       /* the items gathered so far, from this rank's on */
	MPI_Offset *off; /* where each of them starts in tmp */
	int have, dist, cnt;
	struct lk_request *rs, *rr;
	int err;
};
/* Start with this rank's item. MPI code (also in x->err). */
int mpio_xg_start(struct mpio_xg *x, struct mpii_comm *c, int tag, const void *mine,
                  const int *lens, char *out);
/* Advance; 1 when done (x->err then says how). */
int mpio_xg_step(struct mpio_xg *x);
void mpio_xg_free(struct mpio_xg *x);

/* What each rank tells the others about its part of a collective access. */
struct mpio_cinfo {
	int64_t s, n;   /* stream bytes [s, s + n) */
	int64_t lo, hi; /* the file bytes they span (n > 0) */
	int64_t pieces; /* about how many runs of the file they are in */
	int32_t err, overlap;
	int32_t rmw; /* a write that, done independently, would read-modify-write (sieve) */
	int32_t unused;
};

/* Two-phase I/O of one collective access (mpi_io_twophase.c): the ranks' parts (all, in rank
 * order) and views (f->all) known. Aggregators (by default one rank per node) each own a file
 * domain, an even share of the bytes the access spans, and handle it in rounds of
 * cb_buffer_size: the ranks send them the stream bytes that fall in the round (a write: the
 * aggregator reads the round first only where nobody writes, then writes it whole) or receive
 * theirs from it (a read: the aggregator reads the round whole). tag: a value the other
 * collective accesses of the file in progress do not have. */
struct mpio_tp;
int mpio_tp_start(struct mpio_acc *a, const struct mpio_cinfo *all, int tag, struct mpio_tp **out);
/* Advance; 1 when this rank's part is done. */
int mpio_tp_step(struct mpio_tp *t);
/* This rank's outcome: an MPI code, and the lowest end of file its reads met (INT64_MAX). */
int mpio_tp_result(const struct mpio_tp *t, MPI_Offset *eof);
void mpio_tp_free(struct mpio_tp *t);

/* ---- shared file pointer (mpi_io_shared.c) ---- */
/* Add delta (etypes) to the shared pointer atomically; its value before into *old. MPI code. */
int mpio_shared_fetch_add(struct mpio_file *f, MPI_Offset delta, MPI_Offset *old);
/* Set it (rank 0 of a collective caller). MPI code. */
int mpio_shared_set(struct mpio_file *f, MPI_Offset val);
/* Remove its file (at close, after every rank is done). */
void mpio_shared_remove(struct mpio_file *f);

/* ---- operations in progress (mpi_io_req.c) ----
 * An operation completes a request: independent ones run their system calls in the I/O thread
 * while the caller computes, collective ones advance as state machines in every progress step
 * (mpii_io_progress, from the progress engine). */
struct mpio_op {
	struct mpio_op *next;
	struct lk_request *req;
	/* step: advance; 1 when finished (then the op is freed by its owner through fini) */
	int (*step)(struct mpio_op *op);
	void (*fini)(struct mpio_op *op);
	int err;
};
/* A new request of an I/O operation on f (holds f's communicator). NULL on ENOMEM. */
struct lk_request *mpio_req_new(struct mpio_file *f);
/* Run op until done in the progress engine; op->step is first called now. */
void mpio_op_start(struct mpio_op *op);
/* Complete req with code and st (count bytes in lk_count). */
void mpio_req_complete(struct lk_request *req, int code, const MPI_Status *st);
/* Ask the I/O thread to run fn(arg); *flag becomes 1 (release) when it has. With here set, run
 * it at once instead: the call of a blocking operation waits for it anyway, and a thread
 * doing it while the caller polls would only share the caller's CPU. MPI code. */
int mpio_thread_run(void (*fn)(void *), void *arg, volatile int *flag, int here);
/* Wait until r completes (progress meanwhile). */
void mpio_wait(struct lk_request *r);

#endif
