/* lib/transport/tp_shm.c: shm path: per-pair lock-free SPSC rings in one node segment, CMA get. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tp_internal.h"
#include "tp_ring.h"

/*
 * Segment layout (doc/PROTOCOL-mpi-wire.md): a header line, the pids of the local ranks, each
 * local rank's doorbell slot {u32 sleeping, u32 0, u64 uid} (tp_bell.c), each local rank's
 * copy slot (one line: the large message it is receiving with its sender's help, below), then
 * one ring per ordered pair (i -> j) at rings_off + (i * nlocal + j) * stride (tp_ring.h: a
 * 64-byte control line holding the consumer's position, then `rbytes` of records).
 */

#define SHM_MAGIC   0x6c616d6b6974736dULL /* "lamkitsm" */
#define LINE        TP_RING_LINE
#define ALIGN(x, a) TP_RING_ALIGN(x, a)

struct seg_hdr {
	uint64_t magic;
	uint32_t nlocal;
	uint32_t rbytes;
	uint32_t attached;
	uint32_t eager; /* the node's eager limit, chosen by the rank that made the segment */
};

struct bell_slot {
	uint32_t sleeping;
	uint32_t pad;
	uint64_t uid;
};

/* A receiver's copy slot. claim = generation << 32 | next chunk to take; done = chunks copied
 * (or given up) by either side; fail = a helper's write failed. Only the receiver opens it.
 * busy: the rank is reading a large message (with help or not), so it would not answer a
 * request for help soon: two ranks streaming to each other each copy their own. */
struct coop_slot {
	uint64_t claim;
	uint32_t done;
	uint32_t fail;
	uint32_t busy;
	char pad[TP_RING_LINE - 20];
};

struct tp_shm {
	tp_t *tp;
	char name[96];
	char *regfile;
	int nlocal, me;
	char *base;
	size_t size, bells_off, coop_off, rings_off, stride;
	uint32_t rbytes;
	struct tp_ring_tx *tx;
	struct tp_ring_rx *rx;
	int *peers, npeers;
	int next; /* peer index polled first */
	int cma;
	/* LAMKIT_SHM_LARGE=cma-refused (for tests): every read fails, as under Yama */
	int refused;
	size_t eager, frag;
	size_t eager_env; /* LAMKIT_SHM_EAGER, 0 if unset */
	int nqueued;
	int32_t *pids;
	struct bell_slot *bells;
	struct coop_slot *coop;
	uint32_t gen; /* generation of my copy slot's last opening */
	/* LAMKIT_SHM_LARGE=cma-help-refused (for tests): every write of a helping sender fails */
	int help_refused;
	/* LAMKIT_TP_STATS: messages read with help asked, chunks I read of them, chunks the
	 * senders wrote, messages read again because a helper failed; chunks I wrote for others */
	unsigned long long co_msgs, co_mine, co_theirs, co_reread, co_helped;
	/* LAMKIT_SHM_COOP: the smallest message copied with the sender's help, 0: never */
	size_t coop_min;
};

static size_t env_size(const char *name, size_t dflt, size_t lo, size_t hi)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (!e || !*e)
		return dflt;
	v = strtoull(e, &end, 0);
	if (*end || v < lo || v > hi)
		return dflt;
	return (size_t)v;
}

static void layout(struct tp_shm *s, int nlocal, uint32_t rbytes)
{
	s->nlocal = nlocal;
	s->rbytes = rbytes;
	s->stride = LINE + rbytes;
	s->bells_off = ALIGN(LINE + sizeof(int32_t) * (size_t)nlocal, LINE);
	s->coop_off = ALIGN(s->bells_off + sizeof(struct bell_slot) * (size_t)nlocal, LINE);
	s->rings_off = ALIGN(s->coop_off + sizeof(struct coop_slot) * (size_t)nlocal, 4096);
	s->size = s->rings_off + s->stride * (size_t)nlocal * (size_t)nlocal;
}

static uint32_t pick_ring_bytes(int nlocal)
{
	uint32_t r = 1u << 20;

	while (r > 32768 && (size_t)nlocal * (size_t)nlocal * r > (128u << 20))
		r >>= 1;
	return (uint32_t)env_size("LAMKIT_SHM_RING", r, 16384, 1u << 26) & ~(uint32_t)(LINE - 1);
}

static uint32_t job_hash(const char *job)
{
	uint32_t h = 2166136261u;

	for (; job && *job; job++)
		h = (h ^ (uint8_t)*job) * 16777619u;
	return h;
}

static void set_regfile(struct tp_shm *s)
{
	const char *dir = getenv("LAMKIT_SESSION_DIR");
	size_t n;

	if (!dir || !*dir)
		return;
	n = strlen(dir) + sizeof(s->name) + 8;
	s->regfile = malloc(n);
	if (s->regfile)
		snprintf(s->regfile, n, "%s/shm-%s", dir, s->name + 1);
}

/* Leader: record the segment name in $LAMKIT_SESSION_DIR so a wipe can remove it after a crash. */
static void register_segment(struct tp_shm *s)
{
	int fd;

	if (!s->regfile)
		return;
	fd = open(s->regfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (dprintf(fd, "%s\n", s->name) < 0)
		(void)0;
	close(fd);
}

static int map_segment(struct tp_shm *s, int fd)
{
	void *p = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -1;
	s->base = p;
	s->pids = (int32_t *)(s->base + LINE);
	s->bells = (struct bell_slot *)(s->base + s->bells_off);
	s->coop = (struct coop_slot *)(s->base + s->coop_off);
	return 0;
}

/* The eager limit. A message up to it goes through the ring, copied twice (into the ring by
 * the sender, out by the receiver); a larger one the receiver reads from the sender's buffer
 * with process_vm_readv, copied once, after an RTS (and a FIN back). Which is cheaper depends
 * on the host far more than on the MPI: on an earlier one (2 cores, KVM) a 16 KiB message
 * read took 1.7 us against 3.3-3.4 through the ring, and windows of 64 both ways moved 19-20
 * GB/s read against 6.3-7.6 (so 8 KiB was the limit); on this one (2 cores, AMD EPYC, Firecracker,
 * Linux 6.18) a read costs 1.2 us plus 0.35 us per page (16 KiB: 2.8 us, 32 KiB 4.0) while a 16 KiB
 * memcpy takes 0.3 us, and through the ring 16 KiB moved in 1.0-1.1 us against 3.0-3.6 read,
 * one way 19-28 GB/s against 4.9-5.9, both ways 18-35 against 9-11; 32 KiB 1.8-2.0 us
 * against 4.1-4.9, one way 21-27 against 7-8 (2026-11-27, bench/streams). A ping-pong
 * through the ring pays two copies where a read pays one read, and so does each rank of a
 * stream both ways: so above EAGER_LOW, up to EAGER_HIGH, a size goes through the ring when
 * two copies of it cost less than one read of it, as timed here (the best of 5 of each: a
 * rank that loses its CPU meanwhile only makes one of them look dearer). A full ring: a
 * window of 64 messages of 32 KiB both ways is twice the 1 MiB ring; while the senders queued
 * copies of what did not fit, it moved 12-15 GB/s, level with the read or a little below (0.97
 * of the better peer, paired), and a 2 MiB ring took it to 26-27 but cost 2.4 ms more CPU in
 * MPI_Init at -n 2 (prefault). Queued by reference instead (tp_shm_send) it moves 31 GB/s. At
 * 64 KiB the ring lost both ways (9.6 GB/s against 17-18 read), so the read keeps those. */
#define EAGER_LOW  8192
#define EAGER_HIGH 32768

static size_t pick_eager(const struct tp_shm *s)
{
	size_t e = EAGER_LOW, cap = s->rbytes / 16 < s->frag ? s->rbytes / 16 : s->frag;
	char *src, *dst;

	if (!s->cma || s->refused || cap <= EAGER_LOW ||
	    !(src = aligned_alloc(4096, 2 * EAGER_HIGH)))
		return e < cap ? e : cap;
	dst = src + EAGER_HIGH;
	memset(src, 1, 2 * EAGER_HIGH);
	for (size_t m = 2 * EAGER_LOW; m <= EAGER_HIGH && m <= cap; m *= 2) {
		uint64_t rd = UINT64_MAX, cp = UINT64_MAX;
		for (int i = 0; i < 5; i++) {
			uint64_t t0 = tp_now_ns();
			if (tp_cma_read(getpid(), dst, (uint64_t)(uintptr_t)src, m, 0) < 0)
				goto out;
			uint64_t t1 = tp_now_ns();
			memcpy(dst, src, m);
			__asm__ volatile("" ::"r"(dst) : "memory"); /* the copy happens */
			uint64_t t2 = tp_now_ns();
			rd = t1 - t0 < rd ? t1 - t0 : rd;
			cp = t2 - t1 < cp ? t2 - t1 : cp;
		}
		if (2 * cp >= rd)
			break;
		e = m;
	}
out:
	free(src);
	return e;
}

/* The segment lamkit's agent made for this node before the ranks started
 * ($LAMKIT_SHM_SEGMENT, empty until the leader sizes it; the agent records and removes it):
 * its fd, or -1 to make one here as under a foreign launcher. A segment already sized is not
 * ours (a process that inherited the environment): left alone. */
static int agent_segment(struct tp_shm *s)
{
	const char *n = getenv("LAMKIT_SHM_SEGMENT");
	struct stat st;
	int fd;

	if (!n || n[0] != '/' || strchr(n + 1, '/') || strlen(n) >= sizeof(s->name))
		return -1;
	fd = shm_open(n, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size != 0 || st.st_uid != geteuid()) {
		close(fd);
		return -1;
	}
	snprintf(s->name, sizeof(s->name), "%s", n);
	return fd;
}

static int create_segment(struct tp_shm *s, char *err, size_t errlen)
{
	char key[32];
	struct seg_hdr *h;
	int fd;

	fd = agent_segment(s);
	if (fd < 0) {
		snprintf(s->name, sizeof(s->name), "/lkmpi-%08x-%d-%d", job_hash(s->tp->cfg.job),
		         s->tp->cfg.rank, (int)getpid());
		set_regfile(s);
		fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		snprintf(err, errlen, "shm_open %s: %s", s->name, strerror(errno));
		return -1;
	}
	register_segment(s);
	if (ftruncate(fd, (off_t)s->size) < 0 || map_segment(s, fd) < 0) {
		snprintf(err, errlen, "shm segment %s (%zu bytes): %s", s->name, s->size,
		         strerror(errno));
		close(fd);
		shm_unlink(s->name);
		return -1;
	}
	close(fd);
	h = (struct seg_hdr *)s->base;
	h->nlocal = (uint32_t)s->nlocal;
	h->rbytes = s->rbytes;
	if (!s->eager_env)
		s->eager = pick_eager(s);
	h->eager = (uint32_t)s->eager;
	__atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
	snprintf(key, sizeof(key), "lk-shm-%d", s->tp->cfg.rank);
	if (s->tp->cfg.kvs.put(s->tp->cfg.kvs.arg, key, s->name) < 0) {
		snprintf(err, errlen, "shm: cannot publish %s", key);
		return -1;
	}
	return 0;
}

struct tp_shm *tp_shm_create(tp_t *tp, char *err, size_t errlen)
{
	struct tp_shm *s = calloc(1, sizeof(*s));
	const char *large = getenv("LAMKIT_SHM_LARGE");

	if (!s) {
		snprintf(err, errlen, "shm: out of memory");
		return NULL;
	}
	s->tp = tp;
	for (int i = 0; i < tp->cfg.nlocal; i++)
		if (tp->local_ranks[i] == tp->cfg.rank)
			s->me = i;
	layout(s, tp->cfg.nlocal, pick_ring_bytes(tp->cfg.nlocal));
	/* Large messages: the receiver reads them itself (CMA) unless LAMKIT_SHM_LARGE=copy asks
	 * for the pipelined copy through the ring (doc/PROTOCOL-mpi-wire.md, section 4, has the
	 * figures behind this default). Where the kernel refuses the read, the first refusal turns
	 * it off (tp_shm_get). */
	s->refused = large && strcmp(large, "cma-refused") == 0;
	s->help_refused = large && strcmp(large, "cma-help-refused") == 0;
	s->cma = large && *large ? strcmp(large, "cma") == 0 || s->refused || s->help_refused : 1;
	/* at most 8 MiB: a ring record holds 24 bits of length (tp_ring.h) */
	s->frag = env_size("LAMKIT_SHM_FRAG", s->rbytes / 4 < 65536 ? s->rbytes / 4 : 65536, 1024,
	                   s->rbytes / 4 < (1u << 23) ? s->rbytes / 4 : (1u << 23));
	/* the eager limit: LAMKIT_SHM_EAGER, else what the segment's maker measured (pick_eager;
	 * the others take it from the segment's header when they attach) */
	s->eager_env = env_size("LAMKIT_SHM_EAGER", 0, 64, s->rbytes / 4);
	s->eager = s->eager_env ? s->eager_env : EAGER_LOW;
	if (s->eager > s->rbytes / 16 && !s->eager_env)
		s->eager = s->rbytes / 16;
	if (s->eager > s->frag)
		s->eager = s->frag;
	s->coop_min = env_size("LAMKIT_SHM_COOP", 65536, 0, SIZE_MAX);
	if (s->me == 0 && create_segment(s, err, errlen) < 0) {
		tp_shm_destroy(s);
		return NULL;
	}
	return s;
}

static int open_segment(struct tp_shm *s, char *err, size_t errlen)
{
	char key[32];
	struct stat st;
	struct seg_hdr *h;
	int fd;

	snprintf(key, sizeof(key), "lk-shm-%d", s->tp->local_ranks[0]);
	if (s->tp->cfg.kvs.get(s->tp->cfg.kvs.arg, key, s->name, sizeof(s->name)) < 0) {
		snprintf(err, errlen, "shm: no %s in the KVS", key);
		errno = ENOENT;
		return -1;
	}
	set_regfile(s);
	fd = shm_open(s->name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size != s->size ||
	    map_segment(s, fd) < 0) {
		snprintf(err, errlen, "shm: cannot attach %s: %s", s->name,
		         fd < 0 ? strerror(errno) : "size mismatch or mmap failed");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	h = (struct seg_hdr *)s->base;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC ||
	    h->nlocal != (uint32_t)s->nlocal || h->rbytes != s->rbytes) {
		snprintf(err, errlen, "shm: segment %s has a foreign layout", s->name);
		errno = EPROTO;
		return -1;
	}
	if (!s->eager_env && h->eager >= 64 && h->eager <= s->frag)
		s->eager = h->eager;
	return 0;
}

static char *ring_at(struct tp_shm *s, int from, int to)
{
	return s->base + s->rings_off + s->stride * ((size_t)from * (size_t)s->nlocal + (size_t)to);
}

/* Hold every rank until all have attached (the segment is then unlinked), so an early abort
 * by one rank cannot leave the name behind. Bounded: 60 s. */
static int wait_all_attached(struct tp_shm *s, struct seg_hdr *h, char *err, size_t errlen)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE) < (uint32_t)s->nlocal) {
		/* more ranks than CPUs: sleep, so that the ranks still mapping get the CPUs (a
		 * yield among 32 runnable ranks on 2 cores hands them little) */
		if (s->tp->yield)
			nanosleep(&(struct timespec){0, 50000}, NULL);
		else
			sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 60) {
			snprintf(err, errlen, "shm: local ranks did not attach to %s", s->name);
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Fault in the rings this rank writes and reads now, not during the first messages (a
 * failure on an older kernel only costs that later), and pull the lines this rank will write
 * into its caches: the first lap through a ring otherwise fetches every line from DRAM. */
static void prefault(struct tp_shm *s)
{
	for (int i = 0; i < s->nlocal; i++) {
		volatile uint32_t *w;

		if (i == s->me)
			continue;
		madvise(ring_at(s, s->me, i), s->stride, MADV_POPULATE_WRITE);
		madvise(ring_at(s, i, s->me), s->stride, MADV_POPULATE_WRITE);
		w = (volatile uint32_t *)(ring_at(s, s->me, i) + LINE);
		for (size_t off = 0; off < s->rbytes; off += LINE)
			w[off / sizeof(*w)] = 0;
	}
}

int tp_shm_attach(struct tp_shm *s, char *err, size_t errlen)
{
	struct seg_hdr *h;

	if (s->me != 0 && open_segment(s, err, errlen) < 0)
		return -1;
	s->tx = calloc((size_t)s->nlocal, sizeof(*s->tx));
	s->rx = calloc((size_t)s->nlocal, sizeof(*s->rx));
	s->peers = calloc((size_t)s->nlocal, sizeof(int));
	if (!s->tx || !s->rx || !s->peers) {
		snprintf(err, errlen, "shm: out of memory");
		return -1;
	}
	for (int i = 0; i < s->nlocal; i++) {
		if (i == s->me)
			continue;
		s->peers[s->npeers++] = i;
		tp_ring_init(&s->tx[i], NULL, ring_at(s, s->me, i), s->rbytes, -1);
		tp_ring_init(NULL, &s->rx[i], ring_at(s, i, s->me), s->rbytes,
		             s->tp->local_ranks[i]);
		if (s->tp->yield) /* ranks that share CPUs keep to the window (tp_ring.h) */
			s->tx[i].wrec = s->rbytes;
	}
	/* more ranks than CPUs: every rank faulting in all its rings serialises nlocal^2 rings of
	 * page faults and zeroing on the CPUs the job shares (32 ranks on 2 cores: 128 MB, 50-70 ms
	 * of MPI_Init); then the rings a pair really uses fault in at their first messages, and
	 * only their first pages while the consumer keeps up (the window, tp_ring.h) */
	if (!s->tp->yield)
		prefault(s);
	s->pids[s->me] = (int32_t)getpid();
	s->bells[s->me].uid = s->tp->uid; /* published by the add below */
	h = (struct seg_hdr *)s->base;
	if (__atomic_add_fetch(&h->attached, 1, __ATOMIC_ACQ_REL) == (uint32_t)s->nlocal) {
		shm_unlink(s->name);
		if (s->regfile)
			unlink(s->regfile);
	}
	return wait_all_attached(s, h, err, errlen);
}

void tp_shm_destroy(struct tp_shm *s)
{
	int e = errno;

	if (!s)
		return;
	for (int i = 0; s->tx && i < s->nlocal; i++) {
		struct tp_frag *f;
		while ((f = tp_fifo_pop(&s->tx[i].q)))
			free(f);
	}
	if (s->base && !s->rx && s->me == 0) {
		/* never attached: nobody else will unlink it */
		shm_unlink(s->name);
		if (s->regfile)
			unlink(s->regfile);
	}
	if (s->base)
		munmap(s->base, s->size);
	free(s->tx);
	free(s->rx);
	free(s->peers);
	free(s->regfile);
	free(s);
	errno = e;
}

int tp_shm_send(struct tp_shm *s, int li, const void *hdr, size_t hlen, const void *data,
                size_t len, void *cookie)
{
	struct tp_ring_tx *t = &s->tx[li];
	int rc;

	if (len > s->frag) {
		errno = EMSGSIZE;
		return -1;
	}
	if (!t->q.head && tp_ring_put(t, hdr, hlen, data, len) == 0) {
		/* only a job with more ranks than CPUs sleeps (tp_sleep) */
		if (s->tp->yield)
			tp_bell_check(s->tp, &s->bells[li].sleeping, s->bells[li].uid);
		return 0;
	}
	/* A full ring: the payload waits copied, except one over TP_COPY_MAX that the caller can
	 * wait for (a cookie): it waits by reference, a copy fewer (ops.sent once in the ring). */
	rc = tp_ring_queue(t, hdr, hlen, data, len, cookie ? TP_COPY_MAX : s->eager, cookie);
	if (rc >= 0)
		s->nqueued++;
	return rc;
}

int tp_shm_poll(struct tp_shm *s, int budget)
{
	int n = 0;

	/* One record per call (unless the caller waits for more), from the first peer (round
	 * robin) that has one: a message that completes a wait returns at once instead of first
	 * touching the next ring lines. */
	for (int k = 0; k < s->npeers && !n; k++) {
		int idx = s->next + k < s->npeers ? s->next + k : s->next + k - s->npeers;
		struct tp_ring_rx *x = &s->rx[s->peers[idx]];
		unsigned rel = x->releases;

		n = tp_ring_drain(s->tp, x, budget);
		if (n)
			s->next = idx + 1 < s->npeers ? idx + 1 : 0;
		/* room handed back: a producer that sleeps until its queued fragments fit is woken
		 * (only a job that blocks sleeps; section 9 of doc/PROTOCOL-mpi-wire.md) */
		if (x->releases != rel && s->tp->yield)
			tp_bell_check(s->tp, &s->bells[s->peers[idx]].sleeping,
			              s->bells[s->peers[idx]].uid);
	}
	if (s->nqueued)
		for (int k = 0; k < s->npeers; k++) {
			int li = s->peers[k], w = tp_ring_flush(s->tp, &s->tx[li]);
			s->nqueued -= w;
			n += w;
			if (w && s->tp->yield)
				tp_bell_check(s->tp, &s->bells[li].sleeping, s->bells[li].uid);
		}
	return n;
}

void tp_shm_sleeping(struct tp_shm *s, uint32_t v)
{
	if (s && s->bells)
		__atomic_store_n(&s->bells[s->me].sleeping, v, __ATOMIC_RELAXED);
}

int tp_shm_room(struct tp_shm *s)
{
	for (int k = 0; s && s->nqueued && k < s->npeers; k++)
		if (tp_ring_room(&s->tx[s->peers[k]]))
			return 1;
	return 0;
}

uint32_t *tp_shm_bell_word(struct tp_shm *s)
{
	return &s->bells[s->me].sleeping;
}

int tp_shm_ready(const struct tp_shm *s)
{
	for (int k = 0; s && s->rx && k < s->npeers; k++)
		if (tp_ring_ready(&s->rx[s->peers[k]]))
			return 1;
	return 0;
}

int tp_shm_busy(const struct tp_shm *s)
{
	return s->nqueued;
}

size_t tp_shm_eager_max(const struct tp_shm *s)
{
	return s->eager;
}

size_t tp_shm_frag_max(const struct tp_shm *s)
{
	return s->frag;
}

int tp_shm_can_get(const struct tp_shm *s)
{
	return s->cma;
}

int tp_cma_read(pid_t pid, void *dst, uint64_t raddr, size_t len, int refused)
{
	while (len) {
		struct iovec l = {dst, len};
		struct iovec r = {(void *)(uintptr_t)raddr, len};
		ssize_t n = refused ? (errno = EPERM, -1) : process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = EFAULT;
			return -1;
		}
		dst = (char *)dst + n;
		raddr += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int tp_shm_get(struct tp_shm *s, int li, void *dst, uint64_t raddr, size_t len)
{
	int rc;

	__atomic_store_n(&s->coop[s->me].busy, 1, __ATOMIC_RELAXED);
	rc = tp_cma_read((pid_t)s->pids[li], dst, raddr, len, s->refused);
	__atomic_store_n(&s->coop[s->me].busy, 0, __ATOMIC_RELAXED);
	if (rc < 0) {
		if (errno == EPERM || errno == ENOSYS)
			s->cma = 0; /* not allowed here: the pipelined copy from now on */
		return -1;
	}
	return 0;
}

/* ---- large messages copied by receiver and sender together ----
 *
 * A receiver that matched a large message opens its copy slot and asks the sender for help
 * (doc/PROTOCOL-mpi-wire.md, section 4); then both take chunks of the message in turn, the
 * receiver reading them from the sender, the sender writing them into the receiver, until none
 * is left. Each side counts a chunk done once it is copied; the receiver finishes when every
 * taken chunk is done, so nothing writes into its buffer after that. A sender that comes late
 * (or never: it computes) finds nothing left, and the receiver will have copied it all. */

static int cma_write(pid_t pid, const char *src, uint64_t raddr, size_t len)
{
	while (len) {
		struct iovec l = {(void *)src, len};
		struct iovec r = {(void *)(uintptr_t)raddr, len};
		ssize_t n = process_vm_writev(pid, &l, 1, &r, 1, 0);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		src += n;
		raddr += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Chunks of a message of len bytes: about 8, whole pages, 32 KiB to 1 MiB. */
static size_t coop_chunk(size_t len)
{
	size_t c = len / 8;

	c = c < 32768 ? 32768 : c > ((size_t)1 << 20) ? (size_t)1 << 20 : c;
	return (c + 4095) & ~(size_t)4095;
}

int tp_shm_coop_begin(struct tp_shm *s, int li, size_t len)
{
	/* with more ranks than CPUs the sender is seldom running when asked */
	if (!s->cma || s->refused || !s->coop_min || len < s->coop_min || s->tp->yield)
		return 0;
	/* I am busy first, then look at the sender: of two ranks reading from each other at
	 * once, at least one sees the other busy (and in a stream both ways, both do) */
	__atomic_store_n(&s->coop[s->me].busy, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->coop[li].busy, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->coop[s->me].busy, 0, __ATOMIC_RELAXED);
		return 0;
	}
	return 1;
}

uint32_t tp_shm_coop_open(struct tp_shm *s)
{
	struct coop_slot *c = &s->coop[s->me];

	if (++s->gen == 0)
		s->gen = 1;
	/* the last message's chunks are all done: no helper touches these words any more */
	__atomic_store_n(&c->done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->fail, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->claim, (uint64_t)s->gen << 32, __ATOMIC_RELEASE);
	return s->gen;
}

int tp_shm_coop_recv(struct tp_shm *s, int li, void *dst, uint64_t raddr, size_t len)
{
	struct coop_slot *c = &s->coop[s->me];
	pid_t pid = (pid_t)s->pids[li];
	size_t chunk = coop_chunk(len);
	uint32_t n = (uint32_t)((len + chunk - 1) / chunk), taken = n, mine = 0;
	int err = 0;

	for (;;) {
		uint32_t i = (uint32_t)__atomic_fetch_add(&c->claim, 1, __ATOMIC_ACQ_REL);
		size_t off = (size_t)i * chunk;

		if (i >= n)
			break;
		if (tp_cma_read(pid, (char *)dst + off, raddr + off,
		                len - off < chunk ? len - off : chunk, s->refused) < 0)
			err = errno;
		mine++;
		__atomic_add_fetch(&c->done, 1, __ATOMIC_RELEASE);
		if (err) { /* take what is left so the helper stops, and wait for its chunks */
			uint64_t v = __atomic_load_n(&c->claim, __ATOMIC_ACQUIRE), hi;
			do
				hi = (v & ~(uint64_t)0xffffffffu) | n;
			while ((uint32_t)v < n &&
			       !__atomic_compare_exchange_n(&c->claim, &v, hi, 0, __ATOMIC_ACQ_REL,
			                                    __ATOMIC_ACQUIRE));
			taken = (uint32_t)v < n ? (uint32_t)v : n;
			break;
		}
	}
	/* the helper's last chunks: each is one system call under way */
	for (unsigned spin = 1; __atomic_load_n(&c->done, __ATOMIC_ACQUIRE) < taken; spin++)
		if (spin % 4096 == 0) {
			if (kill(pid, 0) < 0 && errno == ESRCH) {
				__atomic_store_n(&c->busy, 0, __ATOMIC_RELAXED);
				errno = ESRCH;
				return -1;
			}
			sched_yield();
		}
	__atomic_store_n(&c->busy, 0, __ATOMIC_RELAXED);
	s->co_msgs++;
	s->co_mine += mine;
	s->co_theirs += taken - mine;
	if (!err && __atomic_load_n(&c->fail, __ATOMIC_RELAXED)) {
		s->co_reread++; /* a write of the sender failed: read it all here */
		if (tp_cma_read(pid, dst, raddr, len, s->refused) < 0)
			err = errno;
	}
	if (err) {
		if (err == EPERM || err == ENOSYS)
			s->cma = 0; /* not allowed here: the pipelined copy from now on */
		errno = err;
		return -1;
	}
	return 0;
}

int tp_shm_coop_help(struct tp_shm *s, int li, uint32_t gen, const void *src, uint64_t rdst,
                     size_t len)
{
	struct coop_slot *c = &s->coop[li];
	size_t chunk = coop_chunk(len);
	uint32_t n = (uint32_t)((len + chunk - 1) / chunk);
	uint64_t v = __atomic_load_n(&c->claim, __ATOMIC_ACQUIRE);
	int copied = 0;

	while ((uint32_t)(v >> 32) == gen && (uint32_t)v < n) {
		size_t off = (size_t)(uint32_t)v * chunk;
		int bad;

		if (!__atomic_compare_exchange_n(&c->claim, &v, v + 1, 0, __ATOMIC_ACQ_REL,
		                                 __ATOMIC_ACQUIRE))
			continue;
		bad = s->refused || s->help_refused ||
		      cma_write((pid_t)s->pids[li], (const char *)src + off, rdst + off,
		                len - off < chunk ? len - off : chunk) < 0;
		if (bad) /* the receiver reads the whole message itself */
			__atomic_store_n(&c->fail, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->done, 1, __ATOMIC_RELEASE);
		if (bad)
			break;
		copied++;
		v = __atomic_load_n(&c->claim, __ATOMIC_ACQUIRE);
	}
	s->co_helped += (unsigned long long)copied;
	return copied;
}

unsigned long long tp_shm_wrapped(const struct tp_shm *s)
{
	unsigned long long n = 0;

	for (int k = 0; s && s->tx && k < s->npeers; k++)
		n += s->tx[s->peers[k]].wraps;
	return n;
}

void tp_shm_stats(const struct tp_shm *s, int rank)
{
	if (s)
		fprintf(stderr,
		        "lamkit tp: rank %d shm eager %zu bytes\n"
		        "lamkit tp: rank %d shm rings went back to their start early %llu times\n",
		        rank, s->eager, rank, tp_shm_wrapped(s));
	if (s && (s->co_msgs || s->co_helped))
		fprintf(stderr,
		        "lamkit tp: rank %d shm large messages read with the sender's help %llu "
		        "(chunks: %llu mine, %llu the sender's; %llu read again after a failed "
		        "write), chunks written for receivers %llu\n",
		        rank, s->co_msgs, s->co_mine, s->co_theirs, s->co_reread, s->co_helped);
}
