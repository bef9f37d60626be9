/* lib/mpi/mpi_win.c: one-sided windows: creation over a shared control segment, epochs, attributes.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mpii.h"
#include "pmi.h"

enum { T_POST = 1, T_COMPLETE = 2 }; /* on the window's private communicator */

static struct mpii_tab wins;
static unsigned win_seq;

struct mpii_win *mpii_win(MPI_Win h)
{
	return mpii_tab_get(&wins, h);
}

void mpii_wlock_acquire(int *word, int excl)
{
	for (;;) {
		int v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		if (excl ? v == 0 : v >= 0) {
			int want = excl ? -1 : v + 1;
			if (__atomic_compare_exchange_n(word, &v, want, 0, __ATOMIC_ACQ_REL,
			                                __ATOMIC_ACQUIRE))
				return;
			continue;
		}
		mpii_progress_wait_word(word, v);
	}
}

void mpii_wlock_release(int *word, int excl)
{
	if (excl)
		__atomic_store_n(word, 0, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_sub(word, 1, __ATOMIC_SEQ_CST);
	/* stored, then counted: a waiter counts itself before its last look (mpi_p2p.c) */
	if (__atomic_load_n(mpii_wlock_waiters(word), __ATOMIC_SEQ_CST))
		tp_futex_wake((uint32_t *)word);
}

_Static_assert(offsetof(struct mpii_wlock, rw_waiters) == offsetof(struct mpii_wlock, rw) + 8 &&
                   offsetof(struct mpii_wlock, acc_waiters) ==
                       offsetof(struct mpii_wlock, acc) + 8 &&
                   sizeof(struct mpii_wlock) == 64,
               "mpii_wlock_waiters finds the count 8 bytes after the word");

/* What each rank tells the others when a window is made. */
struct winfo {
	int64_t size, addr;
	int disp_unit, pid, node, pad;
};

static void win_destroy(struct mpii_win *w)
{
	if (!w)
		return;
	mpii_rma_win_fini(w);
	if (w->seg)
		munmap(w->seg, w->seg_len);
	if (w->comm) {
		MPI_Comm h = w->comm->handle;
		PMPI_Comm_free(&h);
	}
	if (w->handle)
		mpii_tab_del(&wins, w->handle);
	free(w->p);
	free(w->att);
	free(w->locked);
	free(w->start);
	free(w->post);
	free(w);
}

/* Rank 0 makes the segment and names it; every rank maps it. NULL (and errno) on failure
 * anywhere: the outcome is agreed over the window's communicator. Under lamkit's agent the
 * name is registered through PMI before it exists (the agent removes it if rank 0 dies while it
 * has a name) and released in two phases once unlinked. */
void *mpii_map_segment(struct mpii_comm *c, size_t len)
{
	char name[64] = "", made[64] = "";
	const char *dir = getenv("LAMKIT_SESSION_DIR");
	void *p = MAP_FAILED;
	int fd = -1, ok, all, reg = 0, created = 0;

	if (c->rank == 0) {
		snprintf(name, sizeof(name), "/lkmpi-win-%d-%u", (int)getpid(), win_seq++);
		memcpy(made, name, sizeof(made));
		reg = dir && *dir && PMI_Resource_register("shm", made) == PMI_SUCCESS;
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		created = fd >= 0;
		if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
			name[0] = '\0';
	}
	mpii_bcast(name, (int)sizeof(name), mpii_dt(MPI_CHAR), 0, c);
	if (name[0] && c->rank != 0)
		fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd >= 0)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ok = p != MAP_FAILED;
	if (fd >= 0)
		close(fd);
	mpii_allreduce(&ok, &all, 1, mpii_dt(MPI_INT), MPI_MIN, c);
	if (c->rank == 0) { /* everyone has it open (or failed): no name needed */
		if (reg)
			PMI_Resource_release_begin("shm", made);
		if (created)
			shm_unlink(made);
		if (reg)
			PMI_Resource_release_end("shm", made);
	}
	if (all)
		return p;
	if (ok)
		munmap(p, len);
	mpii_err_detail("one-sided window: cannot create or map its shared-memory segment "
	                "(/dev/shm full?)");
	errno = ENOMEM;
	return NULL;
}

/* The layout once every rank's size is known: lock lines, then the memory of ALLOCATE/SHARED
 * windows, rank after rank (each start 16-byte aligned for ALLOCATE, contiguous for SHARED as
 * MPI asks). A window over several nodes has one segment per node (made over nc, the ranks of
 * this node), with every rank's lock line but only this node's memory. MPI code. */
static int layout(struct mpii_win *w, const struct winfo *info, struct mpii_comm *nc)
{
	int n = w->comm->size, node = info[w->comm->rank].node;
	size_t ctl = ((sizeof(struct mpii_wlock) * (size_t)n) + 4095) & ~(size_t)4095, off = 0;
	size_t *at = malloc(sizeof(size_t) * (size_t)n);

	if (!at)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++) {
		if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE)
			off = (off + 15) & ~(size_t)15;
		at[i] = off;
		if (w->flavor != MPI_WIN_FLAVOR_CREATE && info[i].node == node)
			off += (size_t)info[i].size;
	}
	w->seg_len = ctl + off + 64;
	w->seg = mpii_map_segment(nc, w->seg_len);
	if (!w->seg) {
		free(at);
		return MPI_ERR_NO_MEM;
	}
	w->lk = w->seg;
	for (int i = 0; i < n; i++) {
		struct mpii_wpeer *p = &w->p[i];
		p->size = (MPI_Aint)info[i].size;
		p->disp_unit = info[i].disp_unit;
		p->pid = info[i].pid;
		p->addr = (uint64_t)info[i].addr;
		p->remote = info[i].node != node;
		if (p->remote)
			p->addr = 0; /* offsets travel, not addresses */
		else if (w->flavor != MPI_WIN_FLAVOR_CREATE)
			p->ptr = p->size ? (char *)w->seg + ctl + at[i] : NULL; /* as MPICH: none */
		else if (i == w->comm->rank)
			p->ptr = w->base;
	}
	free(at);
	return MPI_SUCCESS;
}

/* Lay the window out: on one node as always; over several nodes with a segment per node and
 * the remote state of mpi_rmam.c, registered everywhere before anyone may send. MPI code. */
static int win_layout(struct mpii_win *w, const struct winfo *info)
{
	struct mpii_comm *c = w->comm;
	MPI_Comm nc;
	int spans = 0, rc;

	for (int i = 0; i < c->size; i++)
		spans |= info[i].node != info[0].node;
	if (!spans)
		return layout(w, info, c);
	if (w->flavor == MPI_WIN_FLAVOR_SHARED) {
		char why[200];
		for (int i = 0; i < c->size; i++)
			if (info[i].node != info[0].node) {
				snprintf(
				    why, sizeof(why),
				    "MPI_Win_allocate_shared needs every rank on one node: ranks "
				    "0 and %d of the communicator are on different nodes",
				    i);
				break;
			}
		mpii_err_detail(why);
		return MPI_ERR_RMA_SHARED;
	}
	rc = PMPI_Comm_split(c->handle, info[c->rank].node, c->rank, &nc);
	if (rc != MPI_SUCCESS)
		return rc;
	rc = layout(w, info, mpii_comm(nc));
	PMPI_Comm_free(&nc);
	if (rc == MPI_SUCCESS)
		rc = mpii_rma_win_init(w);
	/* collective outcome: a rank that failed must not leave the others sending to it */
	int ok = rc == MPI_SUCCESS, all = 0;
	mpii_allreduce(&ok, &all, 1, mpii_dt(MPI_INT), MPI_MIN, c);
	return rc != MPI_SUCCESS ? rc : all ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int win_make(void *base, MPI_Aint size, int disp_unit, MPI_Info hinfo, MPI_Comm comm,
                    int flavor, MPI_Win *out, const char *fn)
{
	struct mpii_comm *c = mpii_comm(comm);
	struct mpii_win *w;
	struct winfo me = {.size = size, .addr = (int64_t)(uintptr_t)base, .disp_unit = disp_unit};
	struct winfo *info;
	MPI_Comm dup;
	int rc, h;

	*out = MPI_WIN_NULL;
	if (!mpii.initialized || mpii.finalized)
		return mpii_err(NULL, MPI_ERR_OTHER, fn);
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, fn);
	if (size < 0)
		return mpii_err(c, MPI_ERR_SIZE, fn);
	if (disp_unit <= 0)
		return mpii_err(c, MPI_ERR_DISP, fn);
	rc = PMPI_Comm_dup(comm, &dup);
	if (rc != MPI_SUCCESS)
		return rc;
	w = calloc(1, sizeof(*w));
	info = calloc((size_t)c->size, sizeof(*info));
	if (w) {
		w->comm = mpii_comm(dup);
		w->p = calloc((size_t)c->size, sizeof(*w->p));
		w->locked = calloc((size_t)c->size, sizeof(int));
	}
	if (!w || !info || !w->p || !w->locked) { /* collective: the others fail in layout */
		if (w)
			win_destroy(w);
		else
			PMPI_Comm_free(&dup);
		free(info);
		return mpii_err(c, MPI_ERR_NO_MEM, fn);
	}
	w->flavor = flavor;
	w->base = base;
	w->size = size;
	w->disp_unit = disp_unit;
	me.pid = (int)getpid();
	me.node = mpii.node;
	rc = mpii_allgather(&me, (int)sizeof(me), mpii_dt(MPI_BYTE), info, (int)sizeof(me),
	                    mpii_dt(MPI_BYTE), w->comm);
	if (rc == MPI_SUCCESS)
		rc = win_layout(w, info);
	free(info);
	wins.first = 1; /* 0 is MPI_WIN_NULL */
	h = rc == MPI_SUCCESS ? mpii_tab_add(&wins, w) : -1;
	if (rc == MPI_SUCCESS && h < 0)
		rc = MPI_ERR_NO_MEM;
	if (rc != MPI_SUCCESS) {
		win_destroy(w);
		return mpii_err(c, rc, fn);
	}
	w->handle = h;
	/* a window's errors go to its own handler, MPI_ERRORS_ARE_FATAL until set (MPI-4.0
	 * section 9.3), whatever the communicator it was made from has */
	w->comm->win = h;
	w->comm->errh = MPI_ERRORS_ARE_FATAL;
	if (flavor != MPI_WIN_FLAVOR_CREATE)
		w->base = w->p[c->rank].ptr;
	snprintf(w->name, sizeof(w->name), "%s", "");
	mpii_win_hints(w, hinfo, 1);
	*out = h;
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_create)
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
	return win_make(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, win,
	                "MPI_Win_create");
}

MPII_ALIAS(Win_create_dynamic)
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	return win_make(NULL, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC, win,
	                "MPI_Win_create_dynamic");
}

int mpii_win_attached(const struct mpii_win *w, uint64_t addr, size_t len)
{
	for (int i = 0; i < w->natt; i++) {
		uint64_t b = (uint64_t)(uintptr_t)w->att[i].base;
		if (addr >= b && addr + len <= b + (uint64_t)w->att[i].size)
			return 1;
	}
	return 0;
}

/* Origins of this node reach attached memory by address (process_vm_readv/writev), those of
 * other nodes through this process's receive path, which checks the list. */
MPII_ALIAS(Win_attach)
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
	struct mpii_win *w = mpii_win(win);

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_attach");
	if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return mpii_err(w->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach");
	if (size < 0)
		return mpii_err(w->comm, MPI_ERR_SIZE, "MPI_Win_attach");
	MPII_TP_LOCK();
	if (w->natt == w->catt) {
		int cap = w->catt ? w->catt * 2 : 8;
		struct mpii_wreg *a = realloc(w->att, sizeof(*a) * (size_t)cap);
		if (!a) {
			MPII_TP_UNLOCK();
			return mpii_err(w->comm, MPI_ERR_NO_MEM, "MPI_Win_attach");
		}
		w->att = a;
		w->catt = cap;
	}
	w->att[w->natt++] = (struct mpii_wreg){base, size};
	MPII_TP_UNLOCK();
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_detach)
int PMPI_Win_detach(MPI_Win win, const void *base)
{
	struct mpii_win *w = mpii_win(win);
	int i, found;

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_detach");
	if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return mpii_err(w->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach");
	MPII_TP_LOCK();
	for (i = 0; i < w->natt && w->att[i].base != base; i++)
		;
	found = i < w->natt;
	if (found)
		w->att[i] = w->att[--w->natt];
	MPII_TP_UNLOCK();
	return found ? MPI_SUCCESS : mpii_err(w->comm, MPI_ERR_ARG, "MPI_Win_detach");
}

MPII_ALIAS(Win_allocate)
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
	int rc = win_make(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, win,
	                  "MPI_Win_allocate");

	*(void **)baseptr = rc == MPI_SUCCESS ? mpii_win(*win)->base : NULL;
	return rc;
}

MPII_ALIAS(Win_allocate_shared)
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
	int rc = win_make(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, win,
	                  "MPI_Win_allocate_shared");

	*(void **)baseptr = rc == MPI_SUCCESS ? mpii_win(*win)->base : NULL;
	return rc;
}

#define WIN(fn)                                                                                    \
	struct mpii_win *w = mpii_win(win);                                                        \
	if (!w)                                                                                    \
	return mpii_err(NULL, MPI_ERR_WIN, fn)

MPII_ALIAS(Win_shared_query)
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
	WIN("MPI_Win_shared_query");
	if (w->flavor != MPI_WIN_FLAVOR_SHARED)
		return mpii_err(w->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query");
	if (rank == MPI_PROC_NULL) { /* the lowest rank with memory */
		rank = 0;
		for (int i = w->comm->size - 1; i >= 0; i--)
			if (w->p[i].size > 0)
				rank = i;
	}
	if (rank < 0 || rank >= w->comm->size)
		return mpii_err(w->comm, MPI_ERR_RANK, "MPI_Win_shared_query");
	*size = w->p[rank].size;
	*disp_unit = w->p[rank].disp_unit;
	*(void **)baseptr = w->p[rank].ptr;
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_free)
int PMPI_Win_free(MPI_Win *win)
{
	struct mpii_win *w = mpii_win(*win);
	int rc;

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_free");
	mpii_attr_clear_win(w); /* delete callbacks see the window still valid */
	/* nobody may still be reading or writing the memory that goes away */
	rc = mpii_barrier(w->comm);
	win_destroy(w);
	*win = MPI_WIN_NULL;
	return rc;
}

MPII_ALIAS(Win_get_group)
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	WIN("MPI_Win_get_group");
	return PMPI_Comm_group(w->comm->handle, group);
}

int mpii_win_predefined(struct mpii_win *w, int key, void *val)
{
	static const int unified = MPI_WIN_UNIFIED;

	switch (key) {
	case MPI_WIN_BASE:
		*(void **)val = w->base;
		return 1;
	case MPI_WIN_SIZE:
		*(MPI_Aint **)val = &w->size;
		return 1;
	case MPI_WIN_DISP_UNIT:
		*(int **)val = &w->disp_unit;
		return 1;
	case MPI_WIN_CREATE_FLAVOR:
		*(int **)val = &w->flavor;
		return 1;
	case MPI_WIN_MODEL:
		*(const int **)val = &unified;
		return 1;
	default:
		return 0;
	}
}

/* ---- synchronisation: an operation on this node is complete when its call returns, so
 * epochs only order memory and exclude other origins; those on other nodes are complete when
 * their targets have answered a FLUSH or UNLOCK (mpi_rmam.c) ---- */

MPII_ALIAS(Win_fence)
int PMPI_Win_fence(int assert, MPI_Win win)
{
	int rc;

	WIN("MPI_Win_fence");
	/* operations to other nodes are complete at their targets before the barrier */
	rc = w->rm ? mpii_rma_flush(w, -1) : MPI_SUCCESS;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rc == MPI_SUCCESS && !(assert &MPI_MODE_NOPRECEDE &&assert &MPI_MODE_NOSUCCEED))
		rc = mpii_barrier(w->comm);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return mpii_err(w->comm, rc, "MPI_Win_fence");
}

/* Comm ranks of group g's members, into a new array (*n entries). MPI code. */
static int group_ranks(struct mpii_win *w, MPI_Group group, int **out, int *n)
{
	struct mpii_group *g = mpii_group(group);
	const struct mpii_group *cg = w->comm->grp;

	*out = NULL;
	*n = 0;
	if (!g)
		return MPI_ERR_GROUP;
	*out = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1));
	if (!*out)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < g->size; i++) {
		int r = -1;
		for (int k = 0; k < cg->size && r < 0; k++)
			if (cg->world[k] == g->world[i])
				r = k;
		if (r < 0) {
			free(*out);
			*out = NULL;
			return MPI_ERR_GROUP;
		}
		(*out)[i] = r;
	}
	*n = g->size;
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_post)
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	int *r, n, rc;

	WIN("MPI_Win_post");
	(void)assert;
	if (w->post)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_post");
	rc = group_ranks(w, group, &r, &n);
	if (rc == MPI_SUCCESS && !(w->post = calloc((size_t)(n ? n : 1), sizeof(*w->post))))
		rc = MPI_ERR_NO_MEM;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
		rc = mpii_irecv(NULL, 0, mpii_dt(MPI_BYTE), r[i], T_COMPLETE, w->comm, 0,
		                &w->post[i]);
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
		rc = mpii_send(NULL, 0, mpii_dt(MPI_BYTE), r[i], T_POST, w->comm, 0, MODE_STD);
	w->npost = n;
	free(r);
	return mpii_err(w->comm, rc, "MPI_Win_post");
}

MPII_ALIAS(Win_start)
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	int rc;

	WIN("MPI_Win_start");
	if (w->start)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_start");
	rc = group_ranks(w, group, &w->start, &w->nstart);
	/* the targets' memory is ready once each has posted */
	for (int i = 0; rc == MPI_SUCCESS && i < w->nstart && !(assert &MPI_MODE_NOCHECK); i++)
		rc = mpii_recv(NULL, 0, mpii_dt(MPI_BYTE), w->start[i], T_POST, w->comm, 0, NULL);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return mpii_err(w->comm, rc, "MPI_Win_start");
}

MPII_ALIAS(Win_complete)
int PMPI_Win_complete(MPI_Win win)
{
	int rc = MPI_SUCCESS;

	WIN("MPI_Win_complete");
	if (!w->start)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_complete");
	if (w->rm) /* gets from other nodes must have landed; puts are ordered before COMPLETE */
		rc = mpii_rma_flush(w, -1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; rc == MPI_SUCCESS && i < w->nstart; i++)
		rc = mpii_send(NULL, 0, mpii_dt(MPI_BYTE), w->start[i], T_COMPLETE, w->comm, 0,
		               MODE_STD);
	free(w->start);
	w->start = NULL;
	w->nstart = 0;
	return mpii_err(w->comm, rc, "MPI_Win_complete");
}

/* End the exposure epoch if every origin has completed (block: wait for them). 1 if ended. */
static int post_end(struct mpii_win *w, int block)
{
	for (int i = 0; i < w->npost; i++)
		while (!w->post[i]->done) {
			if (!block)
				return 0;
			mpii_progress_wait();
		}
	for (int i = 0; i < w->npost; i++)
		mpii_req_free(w->post[i]);
	free(w->post);
	w->post = NULL;
	w->npost = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 1;
}

MPII_ALIAS(Win_wait)
int PMPI_Win_wait(MPI_Win win)
{
	WIN("MPI_Win_wait");
	if (!w->post)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_wait");
	post_end(w, 1);
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_test)
int PMPI_Win_test(MPI_Win win, int *flag)
{
	WIN("MPI_Win_test");
	if (!w->post)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_test");
	mpii_progress();
	*flag = post_end(w, 0);
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_lock)
int PMPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
	WIN("MPI_Win_lock");
	if (type != MPI_LOCK_EXCLUSIVE && type != MPI_LOCK_SHARED)
		return mpii_err(w->comm, MPI_ERR_LOCKTYPE, "MPI_Win_lock");
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank < 0 || rank >= w->comm->size)
		return mpii_err(w->comm, MPI_ERR_RANK, "MPI_Win_lock");
	if (w->locked[rank] || w->lock_all)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock");
	if (!(assert &MPI_MODE_NOCHECK) && w->p[rank].remote) {
		int rc = mpii_rma_lock(w, rank, type == MPI_LOCK_EXCLUSIVE);
		if (rc != MPI_SUCCESS)
			return mpii_err(w->comm, rc, "MPI_Win_lock");
	} else if (!(assert &MPI_MODE_NOCHECK))
		mpii_wlock_acquire(&w->lk[rank].rw, type == MPI_LOCK_EXCLUSIVE);
	w->locked[rank] = assert &MPI_MODE_NOCHECK ? -type : type;
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_unlock)
int PMPI_Win_unlock(int rank, MPI_Win win)
{
	int t;

	WIN("MPI_Win_unlock");
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank < 0 || rank >= w->comm->size)
		return mpii_err(w->comm, MPI_ERR_RANK, "MPI_Win_unlock");
	t = w->locked[rank];
	if (!t)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock");
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	w->locked[rank] = 0;
	if (w->p[rank].remote) /* returns once the operations are complete at the target */
		return mpii_err(w->comm,
		                t > 0 ? mpii_rma_unlock(w, rank, t == MPI_LOCK_EXCLUSIVE)
		                      : mpii_rma_flush(w, rank),
		                "MPI_Win_unlock");
	if (t > 0)
		mpii_wlock_release(&w->lk[rank].rw, t == MPI_LOCK_EXCLUSIVE);
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_lock_all)
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
	WIN("MPI_Win_lock_all");
	if (w->lock_all)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all");
	for (int i = 0; i < w->comm->size; i++)
		if (w->locked[i])
			return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all");
	for (int i = 0; i < w->comm->size && !(assert &MPI_MODE_NOCHECK); i++) {
		int rc = w->p[i].remote ? mpii_rma_lock(w, i, 0) : MPI_SUCCESS;
		if (rc != MPI_SUCCESS)
			return mpii_err(w->comm, rc, "MPI_Win_lock_all");
		if (!w->p[i].remote)
			mpii_wlock_acquire(&w->lk[i].rw, 0);
	}
	w->lock_all = assert &MPI_MODE_NOCHECK ? 2 : 1;
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_unlock_all)
int PMPI_Win_unlock_all(MPI_Win win)
{
	WIN("MPI_Win_unlock_all");
	if (!w->lock_all)
		return mpii_err(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all");
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int rc = w->rm && w->lock_all == 2 ? mpii_rma_flush(w, -1) : MPI_SUCCESS;
	for (int i = 0; i < w->comm->size && w->lock_all == 1; i++) {
		int e = w->p[i].remote ? mpii_rma_unlock(w, i, 0) : MPI_SUCCESS;
		if (!w->p[i].remote)
			mpii_wlock_release(&w->lk[i].rw, 0);
		if (rc == MPI_SUCCESS)
			rc = e;
	}
	w->lock_all = 0;
	return mpii_err(w->comm, rc, "MPI_Win_unlock_all");
}

/* Operations on this node complete in their calls: a flush only orders memory. Those to
 * other nodes (rank, or -1 for all) are complete once their targets have answered. */
static int flush(MPI_Win win, int rank, const char *fn)
{
	int rc = MPI_SUCCESS;

	WIN(fn);
	if (rank != MPI_PROC_NULL && (rank < -1 || rank >= w->comm->size))
		return mpii_err(w->comm, MPI_ERR_RANK, fn);
	if (w->rm && rank != MPI_PROC_NULL)
		rc = mpii_rma_flush(w, rank);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return mpii_err(w->comm, rc, fn);
}

MPII_ALIAS(Win_flush)
int PMPI_Win_flush(int rank, MPI_Win win)
{
	return flush(win, rank, "MPI_Win_flush");
}

MPII_ALIAS(Win_flush_all)
int PMPI_Win_flush_all(MPI_Win win)
{
	return flush(win, -1, "MPI_Win_flush_all");
}

MPII_ALIAS(Win_flush_local)
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
	return flush(win, rank, "MPI_Win_flush_local");
}

MPII_ALIAS(Win_flush_local_all)
int PMPI_Win_flush_local_all(MPI_Win win)
{
	return flush(win, -1, "MPI_Win_flush_local_all");
}

MPII_ALIAS(Win_sync)
int PMPI_Win_sync(MPI_Win win)
{
	WIN("MPI_Win_sync");
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return MPI_SUCCESS;
}
