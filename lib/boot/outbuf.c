/* lib/boot/outbuf.c: per-rank line assembly for mpiexec's output. */
#include "outbuf.h"
#include "core.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define PARTIAL_MAX 65536

struct part {
	char *p;
	size_t len, cap;
	int broken; /* untagged: a line longer than PARTIAL_MAX went out in pieces; its rest
	             * up to the newline goes out as it comes, without a copy */
};

struct boot_outbuf {
	int nranks, tag, failed;
	struct part *parts; /* [rank * 2 + stream - 1] */
	char *scratch;
	size_t scap;
};

boot_outbuf_t *boot_outbuf_create(int nranks, int tag)
{
	boot_outbuf_t *o = calloc(1, sizeof *o);

	if (!o)
		return NULL;
	o->nranks = nranks;
	o->tag = tag;
	o->parts = calloc((size_t)nranks * 2, sizeof *o->parts);
	if (!o->parts) {
		free(o);
		return NULL;
	}
	return o;
}

void boot_outbuf_destroy(boot_outbuf_t *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->nranks * 2; i++)
		free(o->parts[i].p);
	free(o->parts);
	free(o->scratch);
	free(o);
}

/* The first and the last '\n' in p[0..n), or NULL. musl's memrchr tests one byte at a time
 * and its memchr one word, which made scanning binary output the largest cost of forwarding
 * it; these test 16 bytes at a time (SSE2, which every x86-64 has), else 8. */
#ifdef __SSE2__
#define SCAN 16
static unsigned nl_mask(const char *p) /* bit i: p[i] is '\n' */
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
}
#else
#define SCAN 8
static unsigned nl_mask(const char *p)
{
	unsigned m = 0;
	uint64_t w;
	memcpy(&w, p, 8);
	w ^= 0x0a0a0a0a0a0a0a0au;
	if (((w - 0x0101010101010101u) & ~w & 0x8080808080808080u) == 0)
		return 0; /* the usual case: no '\n' in these 8 bytes */
	for (int i = 0; i < 8; i++)
		m |= (unsigned)(p[i] == '\n') << i;
	return m;
}
#endif

static const char *first_nl(const char *p, size_t n)
{
	size_t i = 0;

	for (; i + SCAN <= n; i += SCAN) {
		unsigned m = nl_mask(p + i);
		if (m)
			return p + i + (size_t)__builtin_ctz(m);
	}
	for (; i < n; i++)
		if (p[i] == '\n')
			return p + i;
	return NULL;
}

static const char *last_nl(const char *p, size_t n)
{
	size_t i = n;

	for (; i >= SCAN; i -= SCAN) {
		unsigned m = nl_mask(p + i - SCAN);
		if (m)
			return p + i - SCAN + (size_t)(31 - __builtin_clz(m));
	}
	while (i > 0)
		if (p[--i] == '\n')
			return p + i;
	return NULL;
}

/* Write iov[0..cnt) to fd `stream` completely: one writev per chunk, no copy. */
static int out(boot_outbuf_t *o, int stream, struct iovec *iov, int cnt)
{
	while (cnt > 0 && !o->failed) {
		ssize_t w = writev(stream, iov, cnt);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			/* EPIPE on our stdout (e.g. `| head`): stop printing, keep running the job
			 */
			o->failed = 1;
			return -1;
		}
		size_t k = (size_t)w;
		for (; cnt > 0 && k >= iov->iov_len; iov++, cnt--)
			k -= iov->iov_len;
		if (cnt > 0) { /* a short write stopped inside iov[0] */
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= k;
		}
	}
	return 0;
}

static int room(boot_outbuf_t *o, size_t n)
{
	if (o->scap >= n)
		return 0;
	char *s = realloc(o->scratch, n);
	if (!s)
		return -1;
	o->scratch = s;
	o->scap = n;
	return 0;
}

/* Write lines (pending partial + p[0..n)), each prefixed. Untagged output goes out as it is,
 * the partial line and the new bytes in one writev; tagged output is assembled line by line
 * (first_nl, block copies) into the scratch buffer and written once. */
static int emit(boot_outbuf_t *o, int rank, int stream, struct part *pt, const char *p, size_t n)
{
	char pre[24];
	int pl = o->tag ? snprintf(pre, sizeof pre, "[%d] ", rank) : 0;

	if (!o->tag) {
		struct iovec iov[2] = {{pt->p, pt->len}, {(void *)p, n}};
		int first = pt->len == 0; /* pt->p may still be NULL */
		pt->len = 0;
		return out(o, stream, iov + first, 2 - first);
	}
	size_t lines = 1;
	for (const char *q = p, *e = p + n; (q = first_nl(q, (size_t)(e - q))) != NULL; q++)
		lines++;
	if (room(o, pt->len + n + lines * (size_t)pl + (size_t)pl) < 0)
		return -1;
	char *s = o->scratch;
	size_t k = 0;
	memcpy(s + k, pre, (size_t)pl); /* the pending partial line began a line */
	k += (size_t)pl;
	if (pt->len)
		memcpy(s + k, pt->p, pt->len);
	k += pt->len;
	for (size_t i = 0; i < n;) {
		const char *nl = first_nl(p + i, n - i);
		size_t len = nl ? (size_t)(nl - (p + i)) + 1 : n - i;
		memcpy(s + k, p + i, len);
		k += len;
		i += len;
		if (nl && i < n) {
			memcpy(s + k, pre, (size_t)pl);
			k += (size_t)pl;
		}
	}
	pt->len = 0;
	struct iovec iov = {s, k};
	return k ? out(o, stream, &iov, 1) : 0;
}

int boot_outbuf_data(boot_outbuf_t *o, int rank, int stream, const char *p, size_t n)
{
	if (rank < 0 || rank >= o->nranks || (stream != 1 && stream != 2)) {
		errno = EINVAL;
		return -1;
	}
	struct part *pt = &o->parts[rank * 2 + stream - 1];
	int rc = 0;

	if (pt->broken) { /* binary or a very long line: nothing left to keep whole */
		const char *end = first_nl(p, n);
		size_t k = end ? (size_t)(end - p) + 1 : n;
		if (k && emit(o, rank, stream, pt, p, k) < 0)
			rc = -1;
		if (!end)
			return rc;
		pt->broken = 0;
		p += k;
		n -= k;
	}
	const char *nl = last_nl(p, n);
	size_t whole = nl ? (size_t)(nl - p) + 1 : 0;

	if (whole && emit(o, rank, stream, pt, p, whole) < 0)
		rc = -1;
	p += whole;
	n -= whole;
	if (n == 0)
		return rc;
	if (pt->len + n > PARTIAL_MAX) { /* a huge line without newline: print it as it comes */
		pt->broken = !o->tag;
		return emit(o, rank, stream, pt, p, n) < 0 ? -1 : rc;
	}
	if (pt->len + n > pt->cap) {
		size_t cap = pt->cap ? pt->cap : 256;
		while (cap < pt->len + n)
			cap *= 2;
		char *q = realloc(pt->p, cap);
		if (!q)
			return -1;
		pt->p = q;
		pt->cap = cap;
	}
	memcpy(pt->p + pt->len, p, n);
	pt->len += n;
	return rc;
}

int boot_outbuf_eof(boot_outbuf_t *o, int rank, int stream)
{
	if (rank < 0 || rank >= o->nranks || (stream != 1 && stream != 2))
		return -1;
	struct part *pt = &o->parts[rank * 2 + stream - 1];
	pt->broken = 0;
	if (pt->len == 0)
		return 0;
	/* tagged output is line output: end the last line, or the next rank's tag would land in
	 * the middle of it. Untagged output stays byte-exact (binary-safe). */
	return emit(o, rank, stream, pt, o->tag ? "\n" : "", o->tag ? 1 : 0);
}

void boot_outbuf_flush_all(boot_outbuf_t *o)
{
	for (int r = 0; r < o->nranks; r++) {
		boot_outbuf_eof(o, r, 1);
		boot_outbuf_eof(o, r, 2);
	}
}
