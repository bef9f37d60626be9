/* lib/mpi/mpi_io_req.c: I/O requests, operations in progress and the I/O thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpio.h"

int mpii_io_active;
int mpii_io_thread_busy; /* jobs queued or running in the I/O thread */

static struct mpio_op *ops; /* in progress, newest first */

/* ---- the I/O thread: runs queued system calls while the rank computes ---- */
struct job {
	struct job *next;
	void (*fn)(void *);
	void *arg;
	volatile int *flag;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct job *q, *q_tail;
static pthread_t th;
static int th_up, th_stop;

static void *worker(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&mu);
	for (;;) {
		struct job *j;

		while (!q && !th_stop)
			pthread_cond_wait(&cv, &mu);
		if (!q)
			break;
		j = q;
		q = j->next;
		if (!q)
			q_tail = NULL;
		pthread_mutex_unlock(&mu);
		j->fn(j->arg);
		__atomic_store_n(j->flag, 1, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&mpii_io_thread_busy, 1, __ATOMIC_RELEASE);
		free(j);
		pthread_mutex_lock(&mu);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int mpio_thread_run(void (*fn)(void *), void *arg, volatile int *flag, int here)
{
	struct job *j = here ? NULL : calloc(1, sizeof(*j));

	if (here) {
		fn(arg);
		__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
		return MPI_SUCCESS;
	}
	if (!j)
		return MPI_ERR_NO_MEM;
	*j = (struct job){NULL, fn, arg, flag};
	pthread_mutex_lock(&mu);
	if (!th_up) {
		pthread_attr_t at;
		int rc;

		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 256 * 1024);
		th_stop = 0;
		rc = pthread_create(&th, &at, worker, NULL);
		pthread_attr_destroy(&at);
		if (rc != 0) { /* no thread: run it here, the operation is then done at once */
			pthread_mutex_unlock(&mu);
			free(j);
			fn(arg);
			__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
			return MPI_SUCCESS;
		}
		th_up = 1;
	}
	__atomic_fetch_add(&mpii_io_thread_busy, 1, __ATOMIC_RELEASE);
	if (q_tail)
		q_tail->next = j;
	else
		q = j;
	q_tail = j;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	return MPI_SUCCESS;
}

static void thread_stop(void)
{
	if (!th_up)
		return;
	pthread_mutex_lock(&mu);
	th_stop = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL); /* the queue is empty first: every operation was waited for */
	th_up = 0;
}

/* ---- requests and operations ---- */

struct lk_request *mpio_req_new(struct mpio_file *f)
{
	struct lk_request *r = mpii_req_new(RQ_IO);

	if (!r)
		return NULL;
	r->comm = f->comm;
	r->d = mpii_dt(MPI_BYTE);
	mpii_req_hold(r);
	r->active = 1;
	r->st.MPI_SOURCE = MPI_ANY_SOURCE;
	r->st.MPI_TAG = MPI_ANY_TAG;
	return r;
}

void mpio_req_complete(struct lk_request *req, int code, const MPI_Status *st)
{
	if (st)
		req->st = *st;
	req->st.MPI_ERROR = code;
	mpii_complete(req);
}

void mpio_op_start(struct mpio_op *op)
{
	if (op->step(op)) {
		op->fini(op);
		return;
	}
	op->next = ops;
	ops = op;
	mpii_io_active = 1;
}

int mpii_io_progress(void)
{
	static int busy; /* a step's sends may wait in progress: no re-entry */
	struct mpio_op **pp = &ops, *op;
	int n = 0;

	if (busy)
		return 0;
	busy = 1;
	while ((op = *pp)) {
		if (op->step(op)) {
			*pp = op->next;
			op->fini(op);
			n++;
			continue;
		}
		pp = &op->next;
	}
	mpii_io_active = ops != NULL;
	busy = 0;
	return n;
}

void mpio_wait(struct lk_request *r)
{
	while (!r->done)
		mpii_progress_wait();
}

void mpii_io_fini(void)
{
	/* a nonblocking operation the program never waited for: a collective one the other ranks
	 * never started would wait for ever, so not longer than a minute */
	for (double t0 = PMPI_Wtime(); ops && PMPI_Wtime() - t0 < 60.0;)
		mpii_progress_wait();
	thread_stop();
	mpio_files_fini();
	mpio_datarep_fini();
	mpio_bounce_fini();
}
