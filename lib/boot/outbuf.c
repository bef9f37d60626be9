/* lib/boot/outbuf.c: per-rank line assembly for mpiexec's output. */
#include "outbuf.h"
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARTIAL_MAX 65536

struct part {
	char *p;
	size_t len, cap;
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

static int out(boot_outbuf_t *o, int stream, const char *p, size_t n)
{
	if (n == 0 || o->failed)
		return 0;
	if (core_write_all(stream, p, n) < 0) {
		/* EPIPE on our stdout (e.g. `| head`): stop printing, keep running the job */
		o->failed = 1;
		return -1;
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

/* Write lines (pending partial + p[0..n)), each prefixed, in one write. */
static int emit(boot_outbuf_t *o, int rank, int stream, struct part *pt, const char *p, size_t n)
{
	char pre[24];
	int pl = o->tag ? snprintf(pre, sizeof pre, "[%d] ", rank) : 0;

	if (!o->tag && pt->len == 0)
		return out(o, stream, p, n);
	size_t lines = 1;
	for (size_t i = 0; i + 1 < n; i++)
		lines += p[i] == '\n';
	if (room(o, pt->len + n + lines * (size_t)pl + (size_t)pl) < 0)
		return -1;
	char *s = o->scratch;
	size_t k = 0;
	memcpy(s + k, pre, (size_t)pl); /* the pending partial line began a line */
	k += (size_t)pl;
	if (pt->len) /* pt->p may still be NULL */
		memcpy(s + k, pt->p, pt->len);
	k += pt->len;
	for (size_t i = 0; i < n; i++) {
		s[k++] = p[i];
		if (p[i] == '\n' && i + 1 < n && pl) {
			memcpy(s + k, pre, (size_t)pl);
			k += (size_t)pl;
		}
	}
	pt->len = 0;
	return out(o, stream, s, k);
}

int boot_outbuf_data(boot_outbuf_t *o, int rank, int stream, const char *p, size_t n)
{
	if (rank < 0 || rank >= o->nranks || (stream != 1 && stream != 2)) {
		errno = EINVAL;
		return -1;
	}
	struct part *pt = &o->parts[rank * 2 + stream - 1];
	const char *nl = n ? memrchr(p, '\n', n) : NULL;
	size_t whole = nl ? (size_t)(nl - p) + 1 : 0;
	int rc = 0;

	if (whole && emit(o, rank, stream, pt, p, whole) < 0)
		rc = -1;
	p += whole;
	n -= whole;
	if (n == 0)
		return rc;
	if (pt->len + n > PARTIAL_MAX) /* a huge line without newline: print it as it comes */
		return emit(o, rank, stream, pt, p, n);
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
