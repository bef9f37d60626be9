/* lib/mpi/mpi_scratch.c: temporary buffers of the collectives, of point-to-point messages of
 * noncontiguous datatypes (packed on send, unpacked on receive) and of MPI-IO's two-phase rounds,
 * kept after use so that the next large call reuses their pages.
 *
 * A new buffer of some megabytes is a new mapping (musl always, glibc until its threshold has
 * grown): every page of it faults on first touch, about 0.25 us on hardware paging and ~10 us
 * in user mode on a guest whose memory is shadow-paged (PVM), plus as much again the first time
 * the kernel copies into or out of it (doc/MPI-IO.md, "Bounce"). A two-phase collective write
 * of 1 KiB blocks on 2 ranks ran at 200 MB/s with new round buffers and message temporaries on
 * every call, ~3 GB/s with kept ones.
 *
 * At most NKEEP buffers are kept, from KEEP_MIN to KEEP_MAX bytes and KEEP_TOTAL in all; the
 * smallest go first. A lock, as the RMA progress thread may complete a send.
 *
 * Buffers of 1 MiB (HUGE_MIN) and more are mappings of whole 2 MiB pages, aligned, marked for
 * transparent huge pages (map_huge): one fault then brings in 2 MiB. On this PVM guest
 * (THP "madvise") a first memset of 32 MiB so went 282-287 -> 536-11752 MB/s, a first pwrite
 * from it 465-473 -> 3268-4378, a first pread into it 271-302 -> 557-6715 (the low figures in
 * the first of two runs). Where THP is off the mapping is plain pages, as malloc's would be. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "mpii.h"

#define KEEP_MIN   ((size_t)64 << 10) /* smaller ones come from malloc's heap anyway */
#define NKEEP      8
#define KEEP_MAX   ((size_t)64 << 20)
#define KEEP_TOTAL ((size_t)128 << 20)
#define HDR        16 /* the size and how it was made, a header that keeps the data 16-byte aligned */
#define HUGE       ((size_t)2 << 20)
#define HUGE_MIN   (HUGE / 2) /* from here huge pages: at most twice the memory asked for */
#define PAGE       ((size_t)4096)

/* n bytes or more (*len: how many) in whole 2 MiB pages, aligned to them and marked for
 * transparent huge pages, with an ordinary page before them (the header's); NULL when mmap
 * fails. */
static void *map_huge(size_t n, size_t *len)
{
	size_t want = (n + HUGE - 1) & ~(HUGE - 1), span = want + HUGE + PAGE;
	char *m, *a;

	if (!n || want < n)
		return NULL;
	m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* the data aligned to 2 MiB with one ordinary page before it (mpii_scratch's header);
	 * what is left over on either side goes back */
	a = (char *)(((uintptr_t)m + PAGE + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (a - PAGE > m)
		munmap(m, (size_t)(a - PAGE - m));
	if (m + span > a + want)
		munmap(a + want, (size_t)(m + span - (a + want)));
#ifdef MADV_HUGEPAGE
	madvise(a, want, MADV_HUGEPAGE); /* a hint: without THP the pages are ordinary ones */
#endif
	*len = want;
	return a;
}

static void unmap_huge(void *data, size_t len)
{
	if (data)
		munmap((char *)data - PAGE, len + PAGE);
}

static struct {
	size_t *p;
	size_t cap;
} kept[NKEEP];
static size_t kept_total;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* A kept buffer of at least n bytes (header included), the smallest that fits, or a new one. */
static size_t *take(size_t n)
{
	size_t *p = NULL;

	if (n >= KEEP_MIN) {
		int best = -1;
		pthread_mutex_lock(&mu);
		for (int i = 0; i < NKEEP; i++)
			if (kept[i].p && kept[i].cap >= n &&
			    (best < 0 || kept[i].cap < kept[best].cap))
				best = i;
		if (best >= 0) {
			p = kept[best].p;
			kept_total -= kept[best].cap;
			kept[best].p = NULL;
			kept[best].cap = 0;
		}
		pthread_mutex_unlock(&mu);
	}
	if (p)
		return p;
	size_t len = 0;
	char *a = n - HDR >= HUGE_MIN ? map_huge(n - HDR, &len) : NULL;
	if (a) {
		p = (size_t *)(void *)(a - HDR);
		p[0] = HDR + len;
		p[1] = 1; /* a mapping */
	} else if ((p = malloc(n))) {
		p[0] = n;
		p[1] = 0;
	}
	return p;
}

static void drop(size_t *p)
{
	if (p && p[1])
		unmap_huge((char *)p + HDR, p[0] - HDR);
	else
		free(p);
}

/* Keep p, freeing smaller kept buffers to make room within NKEEP and KEEP_TOTAL; or free p
 * when only larger ones are kept. */
static void give(size_t *p)
{
	size_t n = *p;
	size_t *dropped[NKEEP];
	int ndrop = 0;

	if (n < KEEP_MIN || n > KEEP_MAX) { /* never kept: no lock on small messages' path */
		drop(p);
		return;
	}
	pthread_mutex_lock(&mu);
	while (p) {
		int empty = -1, small = -1;
		for (int i = 0; i < NKEEP; i++) {
			if (!kept[i].p)
				empty = i;
			else if (kept[i].cap < n && (small < 0 || kept[i].cap < kept[small].cap))
				small = i;
		}
		if (empty >= 0 && kept_total + n <= KEEP_TOTAL) {
			kept[empty].p = p;
			kept[empty].cap = n;
			kept_total += n;
			p = NULL;
		} else if (small >= 0) {
			dropped[ndrop++] = kept[small].p;
			kept_total -= kept[small].cap;
			kept[small].p = NULL;
			kept[small].cap = 0;
		} else {
			break;
		}
	}
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < ndrop; i++)
		drop(dropped[i]);
	drop(p);
}

void *mpii_scratch(size_t n)
{
	size_t *p = take(n + HDR);

	return p ? (char *)p + HDR : NULL;
}

void mpii_scratch_free(void *data)
{
	if (data)
		give((size_t *)(void *)((char *)data - HDR));
}

/* The collectives' form: room for count elements of d; the buffer is an mpii_scratch one. */
void *mpii_tmpbuf(struct mpii_dtype *d, int count, char **base)
{
	size_t n = count > 0
	               ? (size_t)(count - 1) * (size_t)d->extent + (size_t)(d->true_ub - d->true_lb)
	               : 0;
	char *p = mpii_scratch(n);

	*base = p ? mpii_at(p, -d->true_lb) : NULL;
	return p;
}

void mpii_tmpbuf_free(void *mem)
{
	mpii_scratch_free(mem);
}

int mpii_scratch_kept(size_t *bytes)
{
	int n = 0;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < NKEEP; i++)
		n += kept[i].p != NULL;
	*bytes = kept_total;
	pthread_mutex_unlock(&mu);
	return n;
}

void mpii_tmpbuf_fini(void)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < NKEEP; i++) {
		drop(kept[i].p);
		kept[i].p = NULL;
		kept[i].cap = 0;
	}
	kept_total = 0;
	pthread_mutex_unlock(&mu);
}
