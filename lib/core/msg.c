/* lib/core/msg.c: payload builders and bounds-checked readers. */
#include "msg.h"

#include <stdlib.h>
#include <string.h>

static int w_room(struct core_wbuf *w, size_t n)
{
	if (w->err)
		return -1;
	if (w->cap - w->len >= n)
		return 0;
	size_t cap = w->cap ? w->cap : 256;
	while (cap - w->len < n)
		cap *= 2;
	char *p = realloc(w->p, cap);
	if (!p) {
		w->err = 1;
		return -1;
	}
	w->p = p;
	w->cap = cap;
	return 0;
}

void core_w_bytes(struct core_wbuf *w, const void *p, size_t n)
{
	if (n == 0 || w_room(w, n) < 0)
		return;
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

void core_w_u32(struct core_wbuf *w, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
	                      (unsigned char)(v >> 24)};
	core_w_bytes(w, b, 4);
}

void core_w_i64(struct core_wbuf *w, int64_t v)
{
	core_w_u32(w, (uint32_t)((uint64_t)v & 0xffffffffu));
	core_w_u32(w, (uint32_t)((uint64_t)v >> 32));
}

void core_w_str(struct core_wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	core_w_u32(w, (uint32_t)n);
	core_w_bytes(w, s ? s : "", n);
	core_w_bytes(w, "", 1);
}

void core_w_free(struct core_wbuf *w)
{
	free(w->p);
	*w = (struct core_wbuf){0};
}

const char *core_r_bytes(struct core_rbuf *r, size_t n)
{
	if (r->err || r->len - r->off < n) {
		r->err = 1;
		return NULL;
	}
	const char *p = r->p + r->off;
	r->off += n;
	return p;
}

uint32_t core_r_u32(struct core_rbuf *r)
{
	const unsigned char *b = (const unsigned char *)core_r_bytes(r, 4);

	if (!b)
		return 0;
	return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int64_t core_r_i64(struct core_rbuf *r)
{
	uint64_t lo = core_r_u32(r), hi = core_r_u32(r);

	return (int64_t)(lo | hi << 32);
}

const char *core_r_str(struct core_rbuf *r)
{
	uint32_t n = core_r_u32(r);
	const char *s = core_r_bytes(r, (size_t)n + 1);

	if (!s || s[n] != '\0') {
		r->err = 1;
		return "";
	}
	return s;
}
