/* lib/core/msg.h: building and reading binary message payloads (little-endian integers,
 * length-prefixed NUL-terminated strings). Readers never run past the buffer: a short or
 * malformed payload sets `err` and further reads return 0/"". */
#ifndef LAMKIT_CORE_MSG_H
#define LAMKIT_CORE_MSG_H

#include <stddef.h>
#include <stdint.h>

struct core_wbuf {
	char *p;
	size_t len, cap;
	int err; /* set on allocation failure; the buffer is then unusable */
};

void core_w_u32(struct core_wbuf *w, uint32_t v);
void core_w_i64(struct core_wbuf *w, int64_t v);
void core_w_str(struct core_wbuf *w, const char *s); /* NULL is written as "" */
void core_w_bytes(struct core_wbuf *w, const void *p, size_t n);
/* Free the buffer and reset it. */
void core_w_free(struct core_wbuf *w);

struct core_rbuf {
	const char *p;
	size_t len, off;
	int err; /* set when the payload was shorter than what was read or malformed */
};

uint32_t core_r_u32(struct core_rbuf *r);
int64_t core_r_i64(struct core_rbuf *r);
/* A string written by core_w_str: points into the payload (NUL-terminated there). */
const char *core_r_str(struct core_rbuf *r);
/* n raw bytes, or NULL (and err) if fewer are left. */
const char *core_r_bytes(struct core_rbuf *r, size_t n);

#endif
