/* lib/boot/outbuf.h: reassemble each rank's output into whole lines before printing, so lines
 * of different ranks never mix; optional "[rank] " prefix. */
#ifndef LAMKIT_BOOT_OUTBUF_H
#define LAMKIT_BOOT_OUTBUF_H

#include <stddef.h>

typedef struct boot_outbuf boot_outbuf_t;

/* Buffers for `nranks` ranks x 2 streams; writes to fd 1 and 2. NULL on ENOMEM. */
boot_outbuf_t *boot_outbuf_create(int nranks, int tag);
void boot_outbuf_destroy(boot_outbuf_t *o);
/* Bytes from rank's stream (1 or 2). Complete lines are written out; a partial one waits
 * (up to 64 KiB, then it is written as it is). 0, or -1 with errno (output failed). */
int boot_outbuf_data(boot_outbuf_t *o, int rank, int stream, const char *p, size_t n);
/* End of that stream: write what is left. */
int boot_outbuf_eof(boot_outbuf_t *o, int rank, int stream);
/* Write every partial line (at job end). */
void boot_outbuf_flush_all(boot_outbuf_t *o);

#endif
