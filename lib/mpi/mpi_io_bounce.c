/* lib/mpi/mpi_io_bounce.c: large transfers through a buffer the kernel has touched before, on
 * machines where the kernel's first touch of a user page is dear (doc/MPI-IO.md, "Bounce").
 *
 * On a guest whose memory is virtualised by shadow paging (PVM, nested virtualisation), the
 * kernel's first access to a page of a user buffer costs several microseconds even when the
 * program has written the page itself: a pwrite from a new buffer runs at 400-900 MB/s where a
 * second pwrite of it runs at 7-12 GB/s, and a pread into it likewise. Copying in user mode (at
 * memory speed) between the user's buffer and one the kernel already knows, and giving the
 * kernel that one, costs a copy more and spares the faults: 4.5-5.5 GB/s from a new buffer.
 * ROMIO's and OMPIO's collective buffers do the same as a side effect of aggregating.
 *
 * Once per process (at the first MPI_File_open) a probe tells whether this machine charges for
 * a first touch: 16 new pages written into a pipe, then the same pages again. If it does, a
 * call moving BOUNCE_MIN bytes or more does PROBE_BYTES of them straight and timed; slower than
 * COLD_NS a page, the buffer is new to the kernel and the call's other bytes go through the
 * bounce buffer. Where a first touch is cheap (hardware paging) nothing changes; where the
 * user's buffer is known to the kernel, a call pays a probe (about 3 us) and goes straight.
 * LAMKIT_IO_BOUNCE=always|never overrides the choice; LAMKIT_IO_STATS=1 counts. */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mpio.h"

#define PAGE         4096
#define BOUNCE_BYTES (256 << 10) /* one chunk: stays in a core's L2 cache */
#define BOUNCE_MIN   (128 << 10) /* calls moving less go straight */
#define PROBE_BYTES  (32 << 10)  /* done straight and timed */
#define COLD_NS      2000        /* a page taking longer was new to the kernel */
#define NSLOTS       2           /* the calling thread and the I/O thread */

enum { BY_AUTO, BY_ALWAYS, BY_NEVER };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int policy, dear;
static char *slot[NSLOTS];
static atomic_int busy[NSLOTS];
static atomic_llong n_large, n_bounced, b_bounced; /* LAMKIT_IO_STATS */

/* Buffers a probe found new to the kernel and that went bounced since (so are new to it still
 * but for the probe's pages): a call on one of them bounces without a probe (the probe of a
 * new buffer costs 40-100 us here, as much as the rest of a 1 MiB read), but every REPROBE-th,
 * in case the program's own system calls have shown the kernel its pages meanwhile. */
#define NFRESH  8
#define REPROBE 4
static struct fresh {
	uintptr_t lo, hi;
	unsigned uses;
} fresh[NFRESH];
static unsigned fresh_next;
static pthread_mutex_t fresh_mu = PTHREAD_MUTEX_INITIALIZER;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Nanoseconds to write n bytes of m into a pipe and read them back out. */
static int64_t through_pipe(const int p[2], const char *m, size_t n, char *sink)
{
	int64_t t0 = now_ns(), dt;

	if (write(p[1], m, n) != (ssize_t)n)
		return -1;
	dt = now_ns() - t0;
	for (size_t got = 0; got < n;) {
		ssize_t k = read(p[0], sink + got, n - got);
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return dt;
}

/* Whether the kernel's first touch of a page the program has written costs a lot more than its
 * second: 16 new pages into a pipe (64 KiB, a pipe's default capacity), then the same again;
 * three times, each with new pages, and the fastest of each kind compared, so that a
 * preemption during one write does not decide (one try said "dear" in 2 of 12 processes on
 * a machine where the other 10 said "cheap"). */
static int probe_dear(void)
{
	const size_t n = 16 * PAGE;
	int p[2], r = 0;
	char *sink;
	int64_t cold = -1, warm = -1;

	if (pipe(p) < 0)
		return 0;
	sink = malloc(n);
	for (int i = 0; sink && i < 3; i++) {
		int64_t c, w;
		char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			break;
		memset(m, 1, n);
		memset(sink, 0, n);
		c = through_pipe(p, m, n, sink);
		w = through_pipe(p, m, n, sink);
		munmap(m, n);
		if (c <= 0 || w <= 0)
			break;
		cold = cold < 0 || c < cold ? c : cold;
		warm = warm < 0 || w < warm ? w : warm;
	}
	/* 4-7 us a page against 0.25 on this PVM guest; about equal under EPT */
	r = cold > 0 && warm > 0 && cold > 4 * warm && cold > 16 * (int64_t)COLD_NS / 2;
	free(sink);
	close(p[0]);
	close(p[1]);
	return r;
}

static void init_once(void)
{
	const char *e = getenv("LAMKIT_IO_BOUNCE");

	policy = !e || !*e || !strcmp(e, "auto") ? BY_AUTO
	         : !strcmp(e, "always")          ? BY_ALWAYS
	         : !strcmp(e, "never")           ? BY_NEVER
	                                         : BY_AUTO;
	dear = policy == BY_AUTO && probe_dear();
}

int mpio_bounce_dear(void)
{
	pthread_once(&once, init_once);
	return dear;
}

/* The entry holding [lo, hi), or NULL. Under fresh_mu. */
static struct fresh *fresh_find(uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < NFRESH; i++)
		if (fresh[i].hi > fresh[i].lo && lo >= fresh[i].lo && hi <= fresh[i].hi)
			return &fresh[i];
	return NULL;
}

/* Remember [lo, hi) as new to the kernel (is_new) or forget it. A range found new again keeps
 * its count of uses, so that its next re-probe times bytes none before it did. */
static void fresh_mark(uintptr_t lo, uintptr_t hi, int is_new)
{
	int kept = 0;

	pthread_mutex_lock(&fresh_mu);
	for (int i = 0; i < NFRESH; i++) {
		if (is_new && fresh[i].lo == lo && fresh[i].hi == hi)
			kept = 1;
		else if (fresh[i].lo < hi && lo < fresh[i].hi) /* overlapping: out of date */
			fresh[i].lo = fresh[i].hi = 0;
	}
	if (is_new && !kept)
		fresh[fresh_next++ % NFRESH] = (struct fresh){lo, hi, 0};
	pthread_mutex_unlock(&fresh_mu);
}

void mpio_copy_init(struct mpio_copy *c, const void *buf, MPI_Offset n)
{
	struct fresh *e;

	pthread_once(&once, init_once);
	memset(c, 0, sizeof(*c));
	c->n = n;
	c->lo = (uintptr_t)buf;
	c->slot = -1;
	if (n < BOUNCE_MIN || policy == BY_NEVER || (policy == BY_AUTO && !dear))
		c->how = MPIO_COPY_STRAIGHT;
	else
		c->how = policy == BY_ALWAYS ? MPIO_COPY_BOUNCE : MPIO_COPY_PROBE;
	if (c->how != MPIO_COPY_PROBE)
		return;
	/* A call probes its first bytes, but a re-probe of a remembered buffer probes others than
	 * the last probe did: a probe leaves the pages it did straight known to the kernel. Bytes
	 * before a probe go bounced. */
	pthread_mutex_lock(&fresh_mu);
	e = fresh_find(c->lo, c->lo + (uintptr_t)n);
	if (e && ++e->uses % REPROBE)
		c->how = MPIO_COPY_BOUNCE;
	else if (e)
		c->skip =
		    (MPI_Offset)((e->uses / REPROBE) % (unsigned)(n / PROBE_BYTES)) * PROBE_BYTES;
	pthread_mutex_unlock(&fresh_mu);
}

/* A bounce buffer of BOUNCE_BYTES, or NULL when both are in use (then straight). */
static char *take(struct mpio_copy *c)
{
	for (int i = 0; i < NSLOTS; i++) {
		int z = 0;
		if (!atomic_compare_exchange_strong(&busy[i], &z, 1))
			continue;
		if (!slot[i]) {
			void *m = mmap(NULL, BOUNCE_BYTES, PROT_READ | PROT_WRITE,
			               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED) {
				atomic_store(&busy[i], 0);
				return NULL;
			}
			slot[i] = m;
		}
		c->slot = i;
		return slot[i];
	}
	return NULL;
}

void mpio_copy_done(struct mpio_copy *c)
{
	if (c->n >= BOUNCE_MIN)
		atomic_fetch_add(&n_large, 1);
	if (c->bounced) {
		atomic_fetch_add(&n_bounced, 1);
		atomic_fetch_add(&b_bounced, (long long)c->bounced);
	}
	c->bounced = 0;
	c->n = 0;
	if (c->slot >= 0)
		atomic_store(&busy[c->slot], 0);
	c->slot = -1;
	c->bb = NULL;
}

/* LAMKIT_IO_STATS=1: one line at MPI_Finalize of what went through the bounce buffer, so that a
 * test can see which way transfers went. */
void mpio_bounce_fini(void)
{
	const char *e = getenv("LAMKIT_IO_STATS");

	if (e && *e && strcmp(e, "0"))
		fprintf(
		    stderr,
		    "lamkit mpi-io: pid %d: first touch %s; %lld of %lld large transfers bounced "
		    "(%lld bytes)\n",
		    (int)getpid(),
		    policy == BY_AUTO ? (dear ? "dear (probed)" : "cheap (probed)")
		                      : (policy == BY_ALWAYS ? "not probed (always bounce)"
		                                             : "not probed (never bounce)"),
		    (long long)atomic_load(&n_bounced), (long long)atomic_load(&n_large),
		    (long long)atomic_load(&b_bounced));
	for (int i = 0; i < NSLOTS; i++) {
		if (slot[i])
			munmap(slot[i], BOUNCE_BYTES);
		slot[i] = NULL;
		atomic_store(&busy[i], 0);
	}
}

static MPI_Offset bounced(struct mpio_copy *c, int write, int fd, char *buf, MPI_Offset n,
                          MPI_Offset off)
{
	MPI_Offset done = 0;

	while (done < n) {
		size_t m = n - done > BOUNCE_BYTES ? BOUNCE_BYTES : (size_t)(n - done);
		MPI_Offset k;
		if (write) {
			memcpy(c->bb, buf + done, m);
			c->bounced += (MPI_Offset)m;
			k = mpio_pwrite(fd, c->bb, (MPI_Offset)m, off + done);
		} else {
			k = mpio_pread(fd, c->bb, (MPI_Offset)m, off + done);
			if (k > 0) {
				memcpy(buf + done, c->bb, (size_t)k);
				c->bounced += k;
			}
		}
		if (k < 0)
			return -1; /* with the call's errno, as mpio_pwrite/mpio_pread */
		done += k;
		if (k < (MPI_Offset)m)
			break; /* the end of the file */
	}
	return done;
}

MPI_Offset mpio_copy_io(struct mpio_copy *c, int write, int fd, void *buf, MPI_Offset n,
                        MPI_Offset off)
{
	char *b = buf;
	MPI_Offset done = 0;

	while (done < n) {
		MPI_Offset at = c->pos + done, m = n - done, k;
		int how = c->how, timed = 0;
		int64_t t0 = 0;
		if (how == MPIO_COPY_PROBE && at < c->skip) { /* before the probe: bounced */
			how = MPIO_COPY_BOUNCE;
			m = c->skip - at < m ? c->skip - at : m;
		} else if (how == MPIO_COPY_PROBE) { /* the probe: straight and timed */
			how = MPIO_COPY_STRAIGHT;
			m = c->skip + PROBE_BYTES - at < m ? c->skip + PROBE_BYTES - at : m;
			timed = 1;
			t0 = now_ns();
		}
		if (how == MPIO_COPY_BOUNCE && !c->bb && !(c->bb = take(c)))
			how = c->how = MPIO_COPY_STRAIGHT; /* both buffers in use */
		if (how == MPIO_COPY_BOUNCE)
			k = bounced(c, write, fd, b + done, m, off + done);
		else
			k = write ? mpio_pwrite(fd, b + done, m, off + done)
			          : mpio_pread(fd, b + done, m, off + done);
		if (k < 0)
			return -1;
		if (timed && c->how == MPIO_COPY_PROBE) {
			c->ns += now_ns() - t0;
			c->seen += k;
			/* the pages were new to the kernel: the rest of the call goes bounced */
			if (c->seen >= PROBE_BYTES || k < m) {
				c->how = c->ns > (c->seen / PAGE) * COLD_NS ? MPIO_COPY_BOUNCE
				                                            : MPIO_COPY_STRAIGHT;
				fresh_mark(c->lo, c->lo + (uintptr_t)c->n,
				           c->how == MPIO_COPY_BOUNCE);
			}
		}
		done += k;
		if (k < m)
			break; /* the end of the file */
	}
	c->pos += done;
	return done;
}
