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
 * smallest go first. A lock, as the RMA progress thread may complete a send. */
#include <pthread.h>
#include <stdlib.h>

#include "mpii.h"

#define KEEP_MIN   ((size_t)64 << 10) /* smaller ones come from malloc's heap anyway */
#define NKEEP      8
#define KEEP_MAX   ((size_t)64 << 20)
#define KEEP_TOTAL ((size_t)128 << 20)
#define HDR        16 /* the size, in a header that keeps the data 16-byte aligned */

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
	if (!p && (p = malloc(n)))
		*p = n;
	return p;
}

/* Keep p, freeing smaller kept buffers to make room within NKEEP and KEEP_TOTAL; or free p
 * when only larger ones are kept. */
static void give(size_t *p)
{
	size_t n = *p;
	void *drop[NKEEP];
	int ndrop = 0;

	if (n < KEEP_MIN || n > KEEP_MAX) { /* never kept: no lock on small messages' path */
		free(p);
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
			drop[ndrop++] = kept[small].p;
			kept_total -= kept[small].cap;
			kept[small].p = NULL;
			kept[small].cap = 0;
		} else {
			break;
		}
	}
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < ndrop; i++)
		free(drop[i]);
	free(p);
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
		free(kept[i].p);
		kept[i].p = NULL;
		kept[i].cap = 0;
	}
	kept_total = 0;
	pthread_mutex_unlock(&mu);
}
