/* lib/boot/ucall.h: ask every agent of the universe one thing at once (halt, nodes): connect to
 * all in parallel over authenticated links, send one frame, collect one reply (or the close). */
#ifndef LAMKIT_BOOT_UCALL_H
#define LAMKIT_BOOT_UCALL_H

#include "universe.h"

#include <stddef.h>

struct boot_ucall_res {
	int ok;        /* got the reply (or, with reply_type 0, the agent closed after the frame) */
	char why[512]; /* when not ok: one line naming the node and what went wrong */
	char *reply;   /* the reply payload (malloc'd), or NULL */
	size_t rlen;
	int64_t ms; /* round trip */
};

/* For every node of u: send frame `type` (empty payload) and wait for a frame of reply_type
 * (0: wait until the agent closes the connection, as after HALT). Everything ends within
 * timeout_ms. res has u->nnodes entries (free replies with boot_ucall_free). Returns the
 * number of nodes that answered. */
int boot_ucall(const struct boot_universe *u, unsigned type, unsigned reply_type, int timeout_ms,
               struct boot_ucall_res *res);
void boot_ucall_free(struct boot_ucall_res *res, int n);

#endif
