/* lib/transport/tp_ring.h: the lock-free SPSC ring of the shm paths (node segment, pair segments).
 */
#ifndef LAMKIT_TP_RING_H
#define LAMKIT_TP_RING_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

/*
 * One ring (doc/PROTOCOL-mpi-wire.md section 2): a 64-byte control line holding the consumer's
 * position, then `rbytes` (a power of two) of records. Records start on a 128-byte boundary: an
 * 8-byte record word, the caller's header padded to 8, the payload. The word (stamp, length,
 * header length, flag) is stored last (release) by the producer; the consumer zeroes the first
 * word of every line it consumed before publishing its position, so a non-zero flag at the
 * consumer's position always means a complete new record. A zeroed ring is a valid empty ring.
 * Inline: both shm paths use these on their fast paths (tp_shm.c inside a job, tp_shmx.c between
 * jobs).
 */

/* TP_RING_REC_ALIGN: records start on a 128-byte boundary (a pair of lines), so that a one-line
 * record's buddy line (the other half of its 128-byte block, which the consumer's adjacent-line
 * prefetch pulls in with it) is padding the producer never writes. With 64-byte records the
 * consumer's prefetch took the producer's next line away from it every message: windows of 64
 * MPI_Isend of 8 and 16 B one way, interleaved runs on the AMD EPYC machine: 134-140 -> 154-156
 * MB/s and 269-279 -> 309-316, both ways 229 -> 250 and 456 -> 510, 64 B level; ping-pong
 * level. */
#define TP_RING_LINE        64
#define TP_RING_REC_HDR     8
#define TP_RING_REC_ALIGN   128
#define TP_RING_HLEN_MAX    63        /* 6 bits of the record word */
#define TP_RING_LEN_MAX     0xffffffu /* 24 bits: shm fragments are at most 8 MiB */
#define TP_RING_DATA        1u
#define TP_RING_SKIP        2u
#define TP_RING_ALIGN(x, a) (((x) + (a)-1) & ~((size_t)(a)-1))

/* The record word: stamp << 32 | len << 8 | hlen << 2 | flag. stamp = (position / 64) of the
 * record, truncated: a second check against stale lines. One word (16 bytes of four words
 * before), so that an MPI_Isend of up to 32 bytes, after its 24-byte header, fits one line. */
struct tp_ring_rec {
	uint64_t word;
};
#define TP_RING_WORD(stamp, len, hlen, flag)                                                       \
	((uint64_t)(stamp) << 32 | (uint64_t)(len) << 8 | (uint64_t)(hlen) << 2 | (uint64_t)(flag))
#define TP_RING_FLAG(w)  ((uint32_t)(w)&3u)
#define TP_RING_LEN(w)   ((uint32_t)((w) >> 8) & TP_RING_LEN_MAX)
#define TP_RING_HLEN(w)  ((uint32_t)((w) >> 2) & TP_RING_HLEN_MAX)
#define TP_RING_STAMP(w) ((uint32_t)((w) >> 32))

/* Producer side of one ring. */
struct tp_ring_tx {
	char *ring;
	uint64_t *head; /* consumer's published position */
	uint64_t tail, head_cache;
	uint32_t rbytes;
	uint32_t window;          /* tp_ring_put wraps early past this offset when it can, */
	uint32_t wrec;            /* for a record of at most this many bytes (0: never) */
	unsigned long long wraps; /* early wraps (LAMKIT_TP_STATS, tests) */
	struct tp_fifo q;         /* fragments that did not fit yet */
};

/* Consumer side of one ring. */
struct tp_ring_rx {
	char *ring;
	uint64_t *head;
	uint64_t pos;   /* next record to read */
	uint64_t clean; /* lines before this are zeroed and handed back */
	uint32_t rbytes;
	int peer;          /* handed to ops.recv */
	unsigned releases; /* positions published: a producer waiting for room may be woken */
};

/* The ring bytes a record of hlen header and len payload bytes takes (producer and consumer
 * must agree on it). */
static inline size_t tp_ring_need(size_t hlen, size_t len)
{
	return TP_RING_ALIGN(TP_RING_REC_HDR + TP_RING_ALIGN(hlen, 8) + len, TP_RING_REC_ALIGN);
}

/* TP_RING_WINDOW: where ranks share CPUs (tp_shm.c sets wrec), a producer past this offset whose
 * consumer has caught up (what it has still to read and the new record fit in the window) goes
 * back to the ring's start with a SKIP record, so that the ring's traffic stays in the window's
 * pages and cache lines instead of cycling through all of them; when the consumer falls behind,
 * the rest of the ring takes the excess. Such ranks do not fault their 1 MiB rings in ahead, and
 * a ring used end to end faulted in and cycled through every page: at 4 ranks on 2 CPUs, 6000
 * bcasts of 8 B took 1.2-1.6 us each, 0.6 with the rings faulted in, 0.2 in the window (Open MPI
 * 0.5); alltoall of 8 KiB blocks 71 -> 21 us (34). A record longer than half the window has a
 * window of twice its size: bcast of 64 KiB, sent eagerly there (mpi_coll.c), ran 9-34 us a
 * call in 7 runs of 8 and 95 in the eighth with its records lapping the ring, 11-21 in all 8
 * runs in a window (Open MPI 32-40).
 * Where each rank has a CPU the rings lap whole: there a producer that wraps early writes lines
 * its consumer has just read and zeroed, still in the consumer's cache, and one-way streams paid
 * for it (2 ranks, records up to 2 KiB in the window: bcast of 256 B 0.05 -> 0.08 us, of 1 KiB
 * 0.15 -> 0.23; a stream of 8 KiB messages with them in the window 17 -> 6 GB/s), though a
 * 2-rank barrier gained (0.69 -> 0.37 us). LAMKIT_SHM_WINDOW=0: no window (benchmarks). */
#define TP_RING_WINDOW 65536
static inline uint32_t tp_ring_window(uint32_t rbytes)
{
	const char *e = getenv("LAMKIT_SHM_WINDOW");
	unsigned long w = e && *e ? strtoul(e, NULL, 0) : TP_RING_WINDOW;

	return w && w < rbytes ? (uint32_t)w : rbytes;
}

/* Point t and x at the ring whose control line is at `ctl` (x or t may be NULL). */
static inline void tp_ring_init(struct tp_ring_tx *t, struct tp_ring_rx *x, char *ctl,
                                uint32_t rbytes, int peer)
{
	if (t) {
		t->head = (uint64_t *)ctl;
		t->ring = ctl + TP_RING_LINE;
		t->rbytes = rbytes;
		t->window = tp_ring_window(rbytes);
	}
	if (x) {
		x->head = (uint64_t *)ctl;
		x->ring = ctl + TP_RING_LINE;
		x->rbytes = rbytes;
		x->peer = peer;
	}
}

/* Write one record if the ring has room; 0, or -1 when full. hlen <= TP_RING_HLEN_MAX, len <=
 * TP_RING_LEN_MAX (the callers' fragments are far smaller). */
static inline int tp_ring_put(struct tp_ring_tx *t, const void *hdr, size_t hlen, const void *data,
                              size_t len)
{
	size_t need = tp_ring_need(hlen, len);
	size_t off = (size_t)(t->tail & (t->rbytes - 1));
	size_t skip = off + need > t->rbytes ? t->rbytes - off : 0;
	struct tp_ring_rec *r;

	if (need <= t->wrec && !skip) {
		/* a long record's window: twice its size */
		size_t win = t->window > 2 * need ? t->window : 2 * need;

		/* back to the start if what the consumer has still to read and this record fit in
		 * the window (so below off: room at the start); a stale position only says no */
		if (off >= win) {
			t->head_cache = __atomic_load_n(t->head, __ATOMIC_ACQUIRE);
			if (t->tail - t->head_cache + need <= win) {
				skip = t->rbytes - off;
				t->wraps++;
			}
		}
	}
	if (t->tail + skip + need - t->head_cache > t->rbytes) {
		t->head_cache = __atomic_load_n(t->head, __ATOMIC_ACQUIRE);
		if (t->tail + skip + need - t->head_cache > t->rbytes)
			return -1;
	}
	if (skip) {
		r = (struct tp_ring_rec *)(t->ring + off);
		__atomic_store_n(
		    &r->word, TP_RING_WORD((uint32_t)(t->tail / TP_RING_LINE), 0, 0, TP_RING_SKIP),
		    __ATOMIC_RELEASE);
		t->tail += skip;
		off = 0;
	}
	r = (struct tp_ring_rec *)(t->ring + off);
	memcpy(r + 1, hdr, hlen);
	if (len)
		memcpy((char *)(r + 1) + TP_RING_ALIGN(hlen, 8), data, len);
	__atomic_store_n(&r->word,
	                 TP_RING_WORD((uint32_t)(t->tail / TP_RING_LINE), len, hlen, TP_RING_DATA),
	                 __ATOMIC_RELEASE);
	t->tail += need;
	return 0;
}

/* Zero the first word of every consumed line before `to`. */
static inline void tp_ring_zero(struct tp_ring_rx *x, uint64_t to)
{
	for (uint64_t p = x->clean; p < to; p += TP_RING_LINE)
		*(uint64_t *)(x->ring + (size_t)(p & (x->rbytes - 1))) = 0;
}

/* Zero the first word of every consumed line, then publish the consumer position. */
static inline void tp_ring_release(struct tp_ring_rx *x)
{
	tp_ring_zero(x, x->pos);
	x->clean = x->pos;
	__atomic_store_n(x->head, x->pos, __ATOMIC_RELEASE);
	x->releases++;
}

/* Whether the first fragment waiting in t's queue would fit now (the consumer's position read
 * afresh): a producer about to sleep for room looks once more after showing it sleeps. */
static inline int tp_ring_room(struct tp_ring_tx *t)
{
	const struct tp_frag *f = t->q.head;
	size_t need, off, skip;

	if (!f)
		return 0;
	need = tp_ring_need(f->hlen, f->len);
	off = (size_t)(t->tail & (t->rbytes - 1));
	skip = off + need > t->rbytes ? t->rbytes - off : 0;
	t->head_cache = __atomic_load_n(t->head, __ATOMIC_ACQUIRE);
	return t->tail + skip + need - t->head_cache <= t->rbytes;
}

/* Whether a record waits at the consumer's position (a look, nothing consumed). */
static inline int tp_ring_ready(const struct tp_ring_rx *x)
{
	const struct tp_ring_rec *r =
	    (const struct tp_ring_rec *)(x->ring + (size_t)(x->pos & (x->rbytes - 1)));
	uint64_t w = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);

	return TP_RING_FLAG(w) && TP_RING_STAMP(w) == (uint32_t)(x->pos / TP_RING_LINE);
}

/* Hand up to `budget` records to ops.recv (from x->peer); the number handed up. */
static inline int tp_ring_drain(tp_t *tp, struct tp_ring_rx *x, int budget)
{
	const struct tp_ops *ops = &tp->cfg.ops;
	int n;

	tp->batch_stop = 0;
	for (n = 0; n < budget && !tp->batch_stop; n++) {
		size_t off = (size_t)(x->pos & (x->rbytes - 1)), need;
		struct tp_ring_rec *r = (struct tp_ring_rec *)(x->ring + off);
		uint64_t w = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);
		uint32_t flag = TP_RING_FLAG(w), hlen = TP_RING_HLEN(w), len = TP_RING_LEN(w);

		if (!flag || TP_RING_STAMP(w) != (uint32_t)(x->pos / TP_RING_LINE))
			break;
		if (flag == TP_RING_SKIP) {
			/* the lines it skips hold nothing: never written, or zeroed when consumed
			 * (their first words); hand back up to this record's line, not the rest */
			need = x->rbytes - off;
			tp_ring_zero(x, x->pos + TP_RING_LINE);
			x->clean = x->pos + need;
		} else {
			const char *h = (const char *)(r + 1);
			need = tp_ring_need(hlen, len);
			ops->recv(tp->cfg.arg, x->peer, h, hlen, h + TP_RING_ALIGN(hlen, 8), len);
		}
		x->pos += need;
		/* consumed lines must be handed back well before the position laps them */
		if (x->pos - x->clean >= x->rbytes / 8)
			tp_ring_release(x);
	}
	/* Handing lines back costs a cache-line upgrade each; do it when idle or in batches so
	 * it stays off the path of a reply sent right after this message. */
	if (n == 0 && x->pos != x->clean)
		tp_ring_release(x);
	return n;
}

/* Queue a fragment that did not fit (or must wait behind queued ones): the payload copied up to
 * `eager` bytes, above it kept by reference until written. tp_send's convention: 0 done (copied),
 * 1 pending (ops.sent(cookie) once written), -1 ENOMEM. */
static inline int tp_ring_queue(struct tp_ring_tx *t, const void *hdr, size_t hlen,
                                const void *data, size_t len, size_t eager, void *cookie)
{
	int ref = len > eager;
	struct tp_frag *f = tp_frag_new(hdr, hlen, data, len, ref, cookie);

	if (!f)
		return -1;
	tp_fifo_push(&t->q, f);
	return ref;
}

/* Push queued fragments into the ring while they fit; the number written (each one done). */
static inline int tp_ring_flush(tp_t *tp, struct tp_ring_tx *t)
{
	struct tp_frag *f;
	int n = 0;

	while ((f = t->q.head) && tp_ring_put(t, f->hdr, f->hlen, f->data, f->len) == 0) {
		tp_fifo_pop(&t->q);
		tp_frag_done(tp, f);
		n++;
	}
	return n;
}

#endif
