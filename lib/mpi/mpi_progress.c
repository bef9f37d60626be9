/* lib/mpi/mpi_progress.c: the progress engine: polling the transport, and how a wait spins,
 * yields or sleeps (doc/PROTOCOL-mpi-wire.md section 9). */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mpii.h"
#include "pmi.h"

/* The transport failed where no MPI call can return the error (progress, control messages).
 * The user's error handler sees it, but the job cannot go on without that peer: if the
 * handler returns, end it anyway. */
void mpii_fatal_tp(void)
{
	const char *why = tp_error(mpii.tp);

	if (!why || !*why)
		why = "transport failure";
	mpii_err_detail(why);
	mpii_err(NULL, MPI_ERR_OTHER, "progress");
	fprintf(stderr, "lamkit MPI: rank %d: %s (fatal)\n", mpii.rank, why);
	if (mpii.size > 1)
		PMI_Abort(MPI_ERR_OTHER, why);
	_exit(MPI_ERR_OTHER);
}

/* Poll the transport (under its lock while the RMA progress thread runs), handing up to budget
 * fragments of one shm ring. */
int mpii_poll_tp(int budget)
{
	int n;

	if (!mpii.tp_mt) {
		n = tp_poll_n(mpii.tp, budget);
		if (mpii.rma_waiting && n >= 0)
			n += mpii_rma_progress();
		return n;
	}
	mpii_tp_lock();
	__atomic_store_n(&mpii.poll_seq, mpii.poll_seq + 1, __ATOMIC_RELAXED);
	n = mpii_drain_deferred();
	int m = tp_poll(mpii.tp);
	n = m < 0 ? m : n + m;
	if (mpii.rma_waiting && n >= 0)
		n += mpii_rma_progress();
	mpii_tp_unlock();
	return n;
}

/* One progress step; `wait`: 0 from calls that return at once (MPI_Test, MPI_Iprobe, ...), 1
 * in a wait for a message, 2 in a wait for a word in shared memory (a window lock), which no
 * doorbell announces.
 * A rank that blocks (tp_should_yield: oversubscribed, or LAMKIT_WAIT=block) gives its CPU away
 * when idle so that ranks with work run: in a wait it yields after every empty poll for its
 * first LAMKIT_WAIT_SPIN_US (default SPIN_US) and then sleeps in the transport (tp_sleep: on a
 * futex in the node segment, or in poll() on its sockets and its doorbell; a peer wakes it
 * after writing one of its rings) and uses no CPU at all until something comes; where the
 * transport cannot sleep (udp, multipath, queued fragments) it naps instead (50 us, 200 us
 * after 8192 empty polls). Yielding, not napping, in the first part: a nap of 1 us lasts
 * about 50 (the timer slack), and ranks that napped in every fourth empty poll paid 25-100 us
 * per small collective at 4 ranks on 2 cores where yielding ones pay a few. In MPI_Test and the
 * like only every 64th empty poll in a row yields, since a rank that computes between tests
 * has work of its own (a compute + MPI_Test loop at -n 4 ran 4x slower yielding on every test).
 * A rank that spins (its job fits its CPUs) offers the CPU now and then after thousands of
 * empty polls; it sleeps only in waits known to be long (mpii_progress_sleep). Sleeping after
 * 4096 empty polls cost it bandwidth across nodes: a poll that reads part of a large tcp frame
 * counts as empty, so a rank receiving a stream slept in poll() between the pieces (1 MiB
 * bandwidth between namespace nodes ~1.4-2.1 GB/s against 2.0-3.0 without). */
#define SPIN_US       200
#define BLOCK_LONG    4096
#define BLOCK_TIMEOUT 100 /* ms: a bound on any wake-up the doorbells do not cover */
/* Poll the transport and the nonblocking collectives once: events handled. */
static int step(int budget)
{
	int n = mpii_poll_tp(budget);

	if (n < 0 && mpii.ft && mpii_ft_recover())
		n = 1; /* a peer's node failed: forgotten, go on */
	if (n < 0)
		mpii_fatal_tp();
	if (mpii.nbc)
		n += mpii_nbc_progress();
	if (mpii_io_active)
		n += mpii_io_progress();
	return n;
}

/* Sleep in the transport until a peer sends or ms pass, then poll: the events handled then, or
 * -1 when it cannot sleep now (remote lock requests wait here and need polling, the MPI-IO
 * thread has work, which it does not announce, or the transport says no). With `word` (a window
 * lock in shared memory) also wake when it no longer holds val: the releaser wakes the waiters it
 * counts in the word after it (mpi_win.c). */
static int sleep_step(int ms, int *word, int val)
{
	unsigned *nwait = word ? mpii_wlock_waiters(word) : NULL;
	int r;

	if (mpii.rma_waiting || __atomic_load_n(&mpii_io_thread_busy, __ATOMIC_ACQUIRE))
		return -1;
	if (!mpii.tp_mt && !word) {
		if (tp_sleep(mpii.tp, ms) < 0)
			return -1;
		return step(1); /* what woke it, handed up in this call */
	}
	/* the RMA progress thread may poll meanwhile: it wakes us when it queues something for
	 * us (mpi_rmat.c), so the queue is looked at under the lock with the words set */
	MPII_TP_LOCK();
	r = mpii.tp_mt && mpii_deferred() ? 1 : tp_sleep_prepare(mpii.tp, mpii.tp_mt);
	if (r >= 0)
		mpii.main_sleeping = 1;
	MPII_TP_UNLOCK();
	if (r < 0)
		return -1;
	if (r == 0 && word) {
		__atomic_add_fetch(nwait, 1, __ATOMIC_SEQ_CST);
		/* counted, then looked at: a release after this look sees the count */
		if (__atomic_load_n(word, __ATOMIC_SEQ_CST) == val)
			tp_sleep_wait_word(mpii.tp, (const uint32_t *)word, (uint32_t)val, ms);
		__atomic_sub_fetch(nwait, 1, __ATOMIC_RELAXED);
	} else if (r == 0) {
		tp_sleep_wait(mpii.tp, ms);
	}
	MPII_TP_LOCK();
	tp_sleep_done(mpii.tp);
	mpii.main_sleeping = 0;
	MPII_TP_UNLOCK();
	return step(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* How long a blocking rank yields in a wait before it sleeps (LAMKIT_WAIT_SPIN_US). */
static uint64_t spin_ns(void)
{
	static uint64_t ns = UINT64_MAX;

	if (ns == UINT64_MAX) {
		const char *e = getenv("LAMKIT_WAIT_SPIN_US");
		char *end;
		unsigned long long v = e && *e ? strtoull(e, &end, 10) : SPIN_US;
		ns = (e && *e && *end ? SPIN_US : v) * 1000u;
	}
	return ns;
}

static int *wait_word, wait_val; /* mpii_progress_wait_word's, for progress(2, ...) */
static int *last_word, last_val; /* the word and value of the last progress(2, ...) */

static void progress(int wait, int budget)
{
	static unsigned idle;
	static uint64_t since;
	int n;

	if (step(budget) > 0) {
		idle = 0;
		return;
	}
	/* a wait for a word in shared memory ends with no event of the transport: a new word or
	 * value is a new wait, with its own time to yield before it sleeps (without this, every
	 * barrier in a segment after the first 200 us of them slept at once, and paid a wake-up:
	 * 4 ranks on 2 cores, 26-28 us a barrier against 12 when yielding) */
	if (wait == 2 && (wait_word != last_word || wait_val != last_val)) {
		last_word = wait_word;
		last_val = wait_val;
		idle = 0;
	}
	if (mpii.ft && wait && (idle + 1) % 64 == 0 && mpii_ft_poll(0) > 0) {
		idle = 0; /* a failure: what waited on it completed */
		return;
	}
	if (!mpii.yield) {
		if (++idle > BLOCK_LONG && wait && idle % 8 == 0)
			sched_yield();
		return;
	}
	if (idle++ == 0)
		since = now_ns();
	if (!wait) {
		if (idle % 64 == 0)
			sched_yield();
		return;
	}
	if (now_ns() - since < spin_ns()) {
		sched_yield();
		return;
	}
	if ((wait == 1 || wait_word) &&
	    (n = sleep_step(BLOCK_TIMEOUT, wait == 2 ? wait_word : NULL, wait_val)) >= 0) {
		if (n > 0)
			idle = 0;
		return;
	}
	nanosleep(&(struct timespec){0, idle < 8192 ? 50000 : 200000}, NULL);
}

void mpii_progress(void)
{
	progress(0, 1);
}

void mpii_progress_wait(void)
{
	progress(1, 1);
}

void mpii_progress_wait_n(int n)
{
	progress(1, n);
}

void mpii_progress_wait_word(int *word, int val)
{
	wait_word = word;
	wait_val = val;
	progress(2, 1);
	wait_word = NULL;
}

int mpii_progress_sleep(int ms)
{
	return step(1) > 0 || sleep_step(ms, NULL, 0) >= 0;
}
