/* lib/mpi/mpi_rmat.c: the RMA progress thread: applies remote one-sided operations while the
 * main thread computes.
 *
 * The transport is single-threaded (tp.h), so while the thread exists (a window with ranks on
 * other nodes is open) every transport call of libmpi takes one recursive lock (mpii.tp_mt
 * says so; only the main thread changes it, and only while the thread does not run). The
 * thread polls only when the main thread has not polled since its last look, i.e. while the
 * main thread is outside MPI or asleep in the transport; idle, it sleeps in poll() on the
 * transport's sockets (tp_wait_fds) and a pipe that ends it, else (udp, remote lock requests
 * waiting) naps between looks (10 us after it handled something, doubling up to
 * LAMKIT_RMA_PROGRESS_US, default 200, and that long while the main thread polls itself).
 * RMA fragments it receives are applied at once; the others (and send completions) are queued
 * for the main thread, which takes the queue before it polls again, so only the main thread
 * ever touches matching queues and requests. A main thread asleep in the transport is woken
 * by whatever the thread handled (doc/PROTOCOL-mpi-wire.md section 9).
 * LAMKIT_RMA_THREAD=0: no thread, remote operations progress on the target's MPI calls.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpii.h"

static pthread_mutex_t tp_mu;
static int mu_ready;
static pthread_t th;
static int running, nwin;
static volatile int stop;
static int stop_pipe[2] = {-1, -1}; /* wakes the thread from poll() when it is to stop */
static _Thread_local int in_thread;
static long max_us = 200;
#define THREAD_SLEEP_MS 100 /* the longest the idle thread sleeps in poll() (stop is seen then) */

void mpii_tp_lock(void)
{
	pthread_mutex_lock(&tp_mu);
}

void mpii_tp_unlock(void)
{
	pthread_mutex_unlock(&tp_mu);
}

int mpii_in_thread(void)
{
	return in_thread;
}

/* ---- fragments the thread received for the main thread ----
 * The thread hands over what is not RMA in arrival order, and the main thread takes this
 * queue before polling again (both under the transport lock), so per-peer order holds. */
struct deferred {
	struct deferred *next;
	int wsrc;
	void *cookie; /* a send completion when hlen == 0 */
	size_t hlen, len;
	char hdr[TP_HDR_MAX];
	char data[];
};
static struct deferred *dq, *dq_tail;

static struct deferred *defer_new(size_t len)
{
	struct deferred *d = calloc(1, sizeof(*d) + len);

	if (!d) { /* cannot keep it: the message would be lost */
		fprintf(stderr, "lamkit MPI: rank %d: out of memory in the RMA progress thread\n",
		        mpii.rank);
		_exit(MPI_ERR_NO_MEM);
	}
	if (dq_tail)
		dq_tail->next = d;
	else
		dq = d;
	dq_tail = d;
	return d;
}

void mpii_defer_frag(int wsrc, const void *hdr, size_t hlen, const void *data, size_t len)
{
	struct deferred *d = defer_new(len);

	d->wsrc = wsrc;
	d->hlen = hlen;
	d->len = len;
	memcpy(d->hdr, hdr, hlen);
	if (len)
		memcpy(d->data, data, len);
}

void mpii_defer_sent(void *cookie)
{
	defer_new(0)->cookie = cookie;
}

int mpii_deferred(void)
{
	return dq != NULL;
}

int mpii_drain_deferred(void)
{
	int n = 0;

	while (dq) {
		struct deferred *d = dq;
		dq = d->next;
		if (!dq)
			dq_tail = NULL;
		if (d->hlen)
			mpii_on_frag(NULL, d->wsrc, d->hdr, d->hlen, d->data, d->len);
		else
			mpii_on_sent(NULL, d->cookie);
		free(d);
		n++;
	}
	return n;
}

/* Poll the transport once under the lock (held): events handled. A main thread asleep in the
 * transport is woken by anything handled: what was queued for it, and RMA answers it may wait
 * for (a GRANT, an ACK, results). */
static int thread_poll(void)
{
	int n = tp_poll(mpii.tp);

	if (mpii.rma_waiting)
		n += mpii_rma_progress();
	if (n > 0 && mpii.main_sleeping)
		tp_wake_self(mpii.tp);
	return n;
}

/* The thread's poll set: the transport's sockets after the stop pipe (pfd[0]); count, 0 when
 * the thread should nap instead. Under the lock. */
static int wait_set(struct pollfd **pfd, int *cap, int *ms)
{
	int n = tp_wait_fds(mpii.tp, *pfd + 1, *cap - 1, ms);

	if (n > *cap - 1) {
		struct pollfd *p = realloc(*pfd, sizeof *p * (size_t)(n + 1));
		if (!p)
			return 0;
		*pfd = p;
		*cap = n + 1;
		n = tp_wait_fds(mpii.tp, *pfd + 1, *cap - 1, ms);
		if (n > *cap - 1)
			return 0;
	}
	(*pfd)[0] = (struct pollfd){.fd = stop_pipe[0], .events = POLLIN};
	return n > 0 ? n + 1 : 0;
}

static void *thread_main(void *arg)
{
	unsigned seen = __atomic_load_n(&mpii.poll_seq, __ATOMIC_RELAXED);
	struct pollfd *pfd = malloc(sizeof *pfd * 16);
	long us = 10;
	int nfd, cap = 16, ms;

	(void)arg;
	in_thread = 1;
	while (!stop && pfd) {
		unsigned now = __atomic_load_n(&mpii.poll_seq, __ATOMIC_RELAXED);
		if (now != seen || pthread_mutex_trylock(&tp_mu) != 0) {
			seen = now; /* the main thread is in MPI and makes progress itself */
			us = max_us;
			nanosleep(&(struct timespec){0, us * 1000}, NULL);
			continue;
		}
		int n = thread_poll();
		/* idle with nothing that needs polling: sleep until a socket has something (the
		 * main thread, asleep in the transport too, wakes as well and takes it), bounded */
		ms = THREAD_SLEEP_MS;
		nfd = n > 0 || mpii.rma_waiting || stop_pipe[0] < 0 ? 0 : wait_set(&pfd, &cap, &ms);
		pthread_mutex_unlock(&tp_mu);
		us = n > 0 ? 10 : (us * 2 > max_us ? max_us : us * 2);
		if (nfd > 0 && !stop)
			poll(pfd, (nfds_t)nfd, ms);
		else if (n <= 0)
			nanosleep(&(struct timespec){0, us * 1000}, NULL);
		seen = __atomic_load_n(&mpii.poll_seq, __ATOMIC_RELAXED);
	}
	free(pfd);
	return NULL;
}

static void close_stop_pipe(void)
{
	for (int i = 0; i < 2; i++) {
		if (stop_pipe[i] >= 0)
			close(stop_pipe[i]);
		stop_pipe[i] = -1;
	}
}

/* A window with remote ranks appears (up) or goes (down): the thread runs while one exists. */
void mpii_rma_thread(int up)
{
	const char *e = getenv("LAMKIT_RMA_THREAD");

	if (!up) {
		if (--nwin == 0 && running) {
			stop = 1;
			if (stop_pipe[1] >= 0 && write(stop_pipe[1], "", 1) < 0)
				(void)0; /* the thread then sees stop within THREAD_SLEEP_MS */
			pthread_join(th, NULL);
			close_stop_pipe();
			running = 0;
			mpii.tp_mt = 0;
			mpii_drain_deferred(); /* what it received for us is not lost */
		}
		return;
	}
	if (nwin++ > 0 || (e && !strcmp(e, "0")))
		return;
	if (!mu_ready) {
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&tp_mu, &a);
		pthread_mutexattr_destroy(&a);
		mu_ready = 1;
		e = getenv("LAMKIT_RMA_PROGRESS_US");
		if (e && atol(e) >= 10 && atol(e) <= 1000000)
			max_us = atol(e);
	}
	stop = 0;
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		stop_pipe[0] = stop_pipe[1] = -1; /* the thread naps instead of sleeping */
	mpii.tp_mt = 1; /* before the thread exists: every transport call from now on locks */
	if (pthread_create(&th, NULL, thread_main, NULL) != 0) {
		mpii.tp_mt = 0; /* progress on MPI calls only */
		close_stop_pipe();
	} else {
		running = 1;
	}
}

void mpii_rma_fini(void)
{
	if (running) {
		nwin = 1;
		mpii_rma_thread(0);
	}
	nwin = 0;
}
