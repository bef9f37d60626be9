/* lib/transport/tp_shmx.c: shm between processes of different jobs on one node: pair segments. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp_internal.h"
#include "tp_ring.h"

/*
 * doc/PROTOCOL-mpi-wire.md section 8.1. Two processes of different jobs whose cards carry the
 * same node token share one pair segment "/lkmpi-x<lo uid>-<hi uid>-<lo pid>-<hi pid>": a header
 * line (u32 `attached`: bit 0 the lower uid mapped it, bit 1 the higher, bit 2 one of them left),
 * then ring 0 (lower -> higher) and ring 1 (higher -> lower), each a tp_ring of PAIR_RING bytes.
 * A side creates-or-opens it and sizes it to PAIR_SIZE when it first sends to or hears from a
 * peer whose card it has (only pairs that talk cost memory); a zeroed ring is an empty ring.
 * The side that sets the second bit unlinks the name. A sender switches its direction only once
 * both bits are set (so the receiver has the rings mapped and nothing it was sent depends on
 * the name) and its tcp queue to the peer is empty: it sends SWITCH as its last tcp frame, then
 * writes to the ring. The receiver polls that ring only from the SWITCH on, so each direction
 * stays in order.
 */

#define PAIR_RING    (512u << 10) /* bytes of each ring */
#define PAIR_HDR     4096         /* header page */
#define PAIR_SIZE    (PAIR_HDR + 2 * (TP_RING_LINE + PAIR_RING))
#define PAIR_EAGER   16384           /* as a node ring's */
#define PAIR_FRAG    65536           /* advertised fragment size */
#define PAIR_REC_MAX (PAIR_RING / 4) /* largest fragment accepted */
#define SWITCH_MAGIC 0x6c6b7377u     /* "lksw" */
#define BIT_LEFT     4u
#define BELL_OFF     64 /* the doorbell word of side bit b (1, 2) is at 64 * b in the header */

struct pair {
	int peer;
	pid_t pid;      /* from the card: single-copy reads */
	uint32_t mybit; /* 1: this process has the lower uid, 2: the higher */
	int out, in;    /* this direction switched; the peer's SWITCH arrived */
	int tried;      /* the segment was made or opened (or that failed) */
	char name[80];
	char *regfile; /* $LAMKIT_SESSION_DIR/shm-<name>, while the name may exist */
	char *base;    /* the mapped segment, NULL when it could not be made */
	uint32_t *attached;
	uint32_t *my_bell, *peer_bell; /* sleeping words in the header (tp_bell.c) */
	uint64_t peer_uid;
	struct tp_ring_tx tx;
	struct tp_ring_rx rx;
};

struct tp_shmx {
	tp_t *tp;
	struct pair *p;
	int np, cap;
	int *rx, nrx; /* pairs whose inbound ring is polled */
	int next;
	int nqueued;
	int cma, refused;
	int debug; /* LAMKIT_TP_DEBUG: a line for each segment mapped and each switch */
};

void tp_shmx_node(char *out, size_t len)
{
	static const char *const ns[] = {"/proc/self/ns/net", "/proc/self/ns/pid", "/dev/shm"};
	char boot[64] = "";
	uint64_t h = 14695981039346656037ULL;
	struct stat st;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	out[0] = '\0';
	if (f) {
		if (!fgets(boot, sizeof boot, f))
			boot[0] = '\0';
		fclose(f);
	}
	if (strlen(boot) < 32)
		return;
	for (const char *c = boot; *c && *c != '\n'; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	/* one node for shm = one kernel, one network namespace (what the job's own placement
	 * calls a node: namespace "nodes" on one host stay apart), one pid namespace (the pid in
	 * the card is what process_vm_readv needs), one /dev/shm and one user */
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		uint64_t v[2];
		if (stat(ns[i], &st) < 0)
			return;
		v[0] = (uint64_t)st.st_dev;
		v[1] = (uint64_t)st.st_ino;
		for (size_t k = 0; k < sizeof v; k++)
			h = (h ^ ((const uint8_t *)v)[k]) * 1099511628211ULL;
	}
	h = (h ^ (uint64_t)geteuid()) * 1099511628211ULL;
	snprintf(out, len, "%016" PRIx64, h);
}

static struct tp_shmx *shmx_get(tp_t *tp)
{
	const char *large = getenv("LAMKIT_SHM_LARGE"), *dbg = getenv("LAMKIT_TP_DEBUG");
	struct tp_shmx *x = tp->shmx;

	if (x)
		return x;
	x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	x->tp = tp;
	x->refused = large && strcmp(large, "cma-refused") == 0;
	x->cma = large && *large ? strcmp(large, "cma") == 0 || x->refused : 1;
	x->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
	tp->shmx = x;
	return x;
}

/* Record the name in $LAMKIT_SESSION_DIR before it exists, so that the agent (at the job's
 * end) or `lamkit wipe` removes it if this process dies while it has a name. */
static void register_name(struct pair *p)
{
	const char *dir = getenv("LAMKIT_SESSION_DIR");
	size_t n;
	int fd;

	if (!dir || !*dir)
		return;
	n = strlen(dir) + sizeof p->name + 8;
	if (!(p->regfile = malloc(n)))
		return;
	snprintf(p->regfile, n, "%s/shm-%s", dir, p->name + 1);
	fd = open(p->regfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || dprintf(fd, "%s\n", p->name) < 0) {
		free(p->regfile);
		p->regfile = NULL;
	}
	if (fd >= 0)
		close(fd);
}

static void unregister_name(struct pair *p)
{
	if (p->regfile)
		unlink(p->regfile);
	free(p->regfile);
	p->regfile = NULL;
}

/* Create or open the pair segment and map it. 0, or -1 (the pair stays on tcp). */
static int map_pair(struct pair *p)
{
	struct stat st;
	void *m;
	int fd, e;

	register_name(p);
	fd = shm_open(p->name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid())) {
		close(fd); /* not ours: left alone */
		fd = -1;
		errno = EACCES;
	}
	if (fd < 0) {
		e = errno;
		unregister_name(p);
		errno = e;
		return -1;
	}
	/* fallocate: a full /dev/shm says ENOSPC now (the pair stays on tcp), not SIGBUS later */
	m = st.st_size > PAIR_SIZE || (st.st_size != PAIR_SIZE && ftruncate(fd, PAIR_SIZE) < 0) ||
	            (fallocate(fd, 0, 0, PAIR_SIZE) < 0 && errno != EOPNOTSUPP)
	        ? MAP_FAILED
	        : mmap(NULL, PAIR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		/* nothing was sent through it: the name would only be left behind */
		e = errno;
		shm_unlink(p->name);
		unregister_name(p);
		errno = e;
		return -1;
	}
	p->base = m;
	p->attached = (uint32_t *)m;
	p->my_bell = (uint32_t *)((char *)m + BELL_OFF * p->mybit);
	p->peer_bell = (uint32_t *)((char *)m + BELL_OFF * (3u - p->mybit));
	return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Point the rings at the segment, fault them in, and say this side has mapped it. */
static void attach_pair(struct pair *p)
{
	char *r0 = p->base + PAIR_HDR, *r1 = r0 + TP_RING_LINE + PAIR_RING;
	uint32_t v;

	tp_ring_init(&p->tx, NULL, p->mybit == 1 ? r0 : r1, PAIR_RING, -1);
	tp_ring_init(NULL, &p->rx, p->mybit == 1 ? r1 : r0, PAIR_RING, p->peer);
	madvise(p->base + PAIR_HDR, PAIR_SIZE - PAIR_HDR, MADV_POPULATE_WRITE);
	v = __atomic_or_fetch(p->attached, p->mybit, __ATOMIC_ACQ_REL);
	if ((v & 3u) == 3u) { /* both have it mapped: the name is no longer needed */
		shm_unlink(p->name);
		unregister_name(p);
	}
}

int tp_shmx_add(tp_t *tp, int peer, uint64_t uid, long pid)
{
	struct tp_shmx *x = shmx_get(tp);
	struct pair *p;
	uint64_t lo = tp->uid < uid ? tp->uid : uid, hi = tp->uid < uid ? uid : tp->uid;
	long me = (long)getpid(), lopid = tp->uid < uid ? me : pid,
	     hipid = tp->uid < uid ? pid : me;

	if (!x)
		return -1;
	if (tp->slot[peer] >= 0)
		return 0; /* known already */
	if (x->np == x->cap) {
		int cap = x->cap + 8;
		struct pair *np = realloc(x->p, sizeof *np * (size_t)cap);
		int *nrx = np ? realloc(x->rx, sizeof(int) * (size_t)cap) : NULL;
		if (np)
			x->p = np;
		if (!nrx)
			return -1;
		x->rx = nrx;
		x->cap = cap;
	}
	p = &x->p[x->np];
	memset(p, 0, sizeof *p);
	p->peer = peer;
	p->pid = (pid_t)pid;
	p->mybit = tp->uid < uid ? 1u : 2u;
	p->peer_uid = uid;
	/* both makers' pids end the name, as in every lkmpi- name: a leftover names its makers */
	snprintf(p->name, sizeof p->name, "/lkmpi-x%016" PRIx64 "-%016" PRIx64 "-%ld-%ld", lo, hi,
	         lopid, hipid);
	tp->slot[peer] = x->np++;
	return 0;
}

/* Map the pair segment the first time it is needed. */
static void need_pair(const struct tp_shmx *x, struct pair *p)
{
	int rc;

	if (p->tried)
		return;
	p->tried = 1;
	rc = map_pair(p);
	if (x->debug)
		fprintf(stderr, "lamkit tp: rank %d: pair segment with peer %d (pid %ld): %s: %s\n",
		        x->tp->cfg.rank, p->peer, (long)p->pid, p->name,
		        rc == 0 ? "mapped" : strerror(errno));
	if (rc == 0)
		attach_pair(p);
}

void tp_shmx_destroy(struct tp_shmx *x)
{
	int e = errno;

	if (!x)
		return;
	for (int i = 0; i < x->np; i++) {
		struct pair *p = &x->p[i];
		struct tp_frag *f;

		while ((f = tp_fifo_pop(&p->tx.q)))
			free(f);
		if (p->base) {
			uint32_t v = __atomic_fetch_or(p->attached, BIT_LEFT, __ATOMIC_ACQ_REL);
			/* the peer never mapped it: nothing was sent through it, remove the name */
			if ((v & 3u) != 3u)
				shm_unlink(p->name);
			munmap(p->base, PAIR_SIZE);
		}
		unregister_name(p);
	}
	free(x->p);
	free(x->rx);
	free(x);
	errno = e;
}

/* The pair of a peer of another job on this node, or NULL. */
static struct pair *pair_of(const tp_t *tp, int peer)
{
	int s = peer >= tp->cfg.size && tp->shmx ? tp->slot[peer] : -1;

	return s >= 0 ? &tp->shmx->p[s] : NULL;
}

void tp_shmx_try_switch(tp_t *tp, int peer, size_t len)
{
	struct pair *p = pair_of(tp, peer);
	unsigned char hdr[TP_HDR_WIRE] = {0};
	uint32_t magic = SWITCH_MAGIC;

	if (!p || p->out || !tp->tcp || len > PAIR_REC_MAX) /* a fragment sized for tcp alone */
		return;
	need_pair(tp->shmx, p);
	if (!p->base || (__atomic_load_n(p->attached, __ATOMIC_ACQUIRE) & 7u) != 3u)
		return;
	/* earlier fragments still queued on tcp (maybe by reference): a ring write now could
	 * report its message sent before them */
	if (tp_tcp_queued_to(tp->tcp, peer))
		return;
	memcpy(hdr, &magic, sizeof magic);
	if (tp_tcp_send(tp->tcp, peer, hdr, sizeof hdr, NULL, 0, NULL) < 0)
		return; /* the peer is unreachable: the send after this one says so */
	p->out = 1;
	tp->kind[peer] = TP_SHM;
	if (tp->shmx->debug)
		fprintf(stderr, "lamkit tp: rank %d -> peer %d: SWITCH, on the ring from now on\n",
		        tp->cfg.rank, peer);
}

void tp_shmx_heard(tp_t *tp, int peer)
{
	struct pair *p = pair_of(tp, peer);

	if (p)
		need_pair(tp->shmx, p);
}

int tp_shmx_switch_in(tp_t *tp, int peer, const void *hdr)
{
	struct pair *p = pair_of(tp, peer);
	uint32_t magic;

	memcpy(&magic, hdr, sizeof magic);
	if (magic != SWITCH_MAGIC || !p || !p->base || p->in) {
		snprintf(tp->err, sizeof tp->err,
		         "tp: rank %d: unexpected SWITCH from peer %d (no pair segment mapped)",
		         tp->cfg.rank, peer);
		errno = EPROTO;
		return -1;
	}
	p->in = 1;
	tp->shmx->rx[tp->shmx->nrx++] = tp->slot[peer];
	return 0;
}

void tp_shmx_bye(tp_t *tp, int peer)
{
	struct pair *p = pair_of(tp, peer);
	struct tp_shmx *x = tp->shmx;
	struct tp_frag *f;

	if (!p)
		return;
	if (p->in) { /* what the peer wrote on its ring before its BYE */
		while (tp_ring_drain(tp, &p->rx, 64) > 0)
			;
		for (int k = 0; k < x->nrx; k++)
			if (x->rx[k] == tp->slot[peer])
				x->rx[k] = x->rx[--x->nrx];
		x->next = 0;
	}
	while ((f = tp_fifo_pop(&p->tx.q))) { /* for a peer that reads no more */
		x->nqueued--;
		tp_frag_done(tp, f);
	}
	if (p->base) {
		uint32_t v = __atomic_fetch_or(p->attached, BIT_LEFT, __ATOMIC_ACQ_REL);
		if ((v & 3u) != 3u) /* the name is still there: nobody uses it again */
			shm_unlink(p->name);
		munmap(p->base, PAIR_SIZE);
	}
	unregister_name(p);
	if (x->debug && p->tried)
		fprintf(stderr, "lamkit tp: rank %d: pair segment with peer %d released\n",
		        tp->cfg.rank, peer);
	p->base = NULL;
	p->attached = p->my_bell = p->peer_bell = NULL;
	p->tried = p->out = p->in = 0;
	if (tp->kind[peer] == TP_SHM)
		tp->kind[peer] = TP_TCP;
}

int tp_shmx_mapped(const struct tp_shmx *x)
{
	int n = 0;

	for (int i = 0; x && i < x->np; i++)
		n += x->p[i].base != NULL;
	return n;
}

/* The peer has left (tp_destroy) while fragments for it wait for room that will never come: as
 * a write to a closed tcp connection, EPIPE with one line in tp_error. -1, or 0 when it has not. */
static int check_left(struct tp_shmx *x, const struct pair *p)
{
	if (!(__atomic_load_n(p->attached, __ATOMIC_ACQUIRE) & BIT_LEFT))
		return 0;
	snprintf(x->tp->err, sizeof x->tp->err,
	         "tp: rank %d: peer %d of another job has ended while messages to it wait",
	         x->tp->cfg.rank, p->peer);
	errno = EPIPE;
	return -1;
}

int tp_shmx_send(struct tp_shmx *x, int slot, const void *hdr, size_t hlen, const void *data,
                 size_t len, void *cookie)
{
	struct tp_ring_tx *t = &x->p[slot].tx;
	int rc;

	if (len > PAIR_REC_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (!t->q.head && tp_ring_put(t, hdr, hlen, data, len) == 0) {
		/* the peer's job decides alone whether it sleeps: always look */
		tp_bell_check(x->tp, x->p[slot].peer_bell, x->p[slot].peer_uid);
		return 0;
	}
	if (check_left(x, &x->p[slot]) < 0)
		return -1;
	rc = tp_ring_queue(t, hdr, hlen, data, len, PAIR_EAGER, cookie);
	if (rc >= 0)
		x->nqueued++;
	return rc;
}

int tp_shmx_poll(struct tp_shmx *x)
{
	int n = 0;

	for (int k = 0; k < x->nrx && !n; k++) {
		int idx = x->next + k < x->nrx ? x->next + k : x->next + k - x->nrx;

		n = tp_ring_drain(x->tp, &x->p[x->rx[idx]].rx, 1);
		if (n)
			x->next = idx + 1 < x->nrx ? idx + 1 : 0;
	}
	for (int i = 0; x->nqueued && i < x->np; i++) {
		int w = tp_ring_flush(x->tp, &x->p[i].tx);
		x->nqueued -= w;
		n += w;
		if (w)
			tp_bell_check(x->tp, x->p[i].peer_bell, x->p[i].peer_uid);
		if (x->p[i].tx.q.head && check_left(x, &x->p[i]) < 0)
			return -1;
	}
	return n;
}

void tp_shmx_sleeping(struct tp_shmx *x, uint32_t v)
{
	for (int i = 0; x && i < x->np; i++)
		if (x->p[i].base)
			__atomic_store_n(x->p[i].my_bell, v, __ATOMIC_RELAXED);
}

int tp_shmx_ready(const struct tp_shmx *x)
{
	for (int k = 0; x && k < x->nrx; k++)
		if (tp_ring_ready(&x->p[x->rx[k]].rx))
			return 1;
	return 0;
}

int tp_shmx_busy(const struct tp_shmx *x)
{
	return x ? x->nqueued : 0;
}

int tp_shmx_limits(const tp_t *tp, int peer, size_t *eager, size_t *frag)
{
	if (!pair_of(tp, peer))
		return -1;
	*eager = PAIR_EAGER;
	*frag = PAIR_FRAG;
	return 0;
}

int tp_shmx_can_get(const tp_t *tp, int peer)
{
	const struct pair *p = pair_of(tp, peer);

	return p && p->pid > 0 && tp->shmx->cma;
}

int tp_shmx_get(tp_t *tp, int peer, void *dst, uint64_t raddr, size_t len)
{
	const struct pair *p = pair_of(tp, peer);

	if (!p || p->pid <= 0) {
		errno = ENOTSUP;
		return -1;
	}
	if (tp_cma_read(p->pid, dst, raddr, len, tp->shmx->refused) < 0) {
		/* not allowed here: CTS and data fragments from now on */
		if (errno == EPERM || errno == ENOSYS)
			tp->shmx->cma = 0;
		return -1;
	}
	return 0;
}
