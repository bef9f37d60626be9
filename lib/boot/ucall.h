/* lib/boot/ucall.h: ask every agent of the universe one thing at once (halt, nodes): connect to
 * all in parallel over authenticated links, send one frame, collect one reply (or the close). */
#ifndef LAMKIT_BOOT_UCALL_H
#define LAMKIT_BOOT_UCALL_H

#include "universe.h"
#include "watch.h"

#include <stddef.h>

struct boot_ucall_res {
	int ok;        /* got the reply (or, with reply_type 0, the agent closed after the frame) */
	char why[512]; /* when not ok: one line naming the node and what went wrong */
	char *reply;   /* the reply payload (malloc'd), or NULL */
	size_t rlen;
	int64_t ms;      /* from the start (connect, handshake, request, reply) */
	int64_t rtt;     /* request to reply, over the authenticated link (microseconds) */
	int64_t conn_us; /* connecting and authenticating before the request (microseconds) */
	int skipped;     /* not asked (boot_ucall_ex's `only`) */
	int down;        /* not asked: the universe's watch has declared the node down (why
	                    names since when and why, e.g. "n2: down: no answer since 12:03:04") */
	struct boot_wdown fall; /* when down: the watch's record of it (since when, why) */
};

struct boot_ucall_req {
	unsigned type, reply_type; /* as for boot_ucall; type 0: send nothing, end at the view */
	const void *payload;       /* the request's payload, or NULL */
	size_t plen;
	const char *only; /* u->nnodes flags: ask node i only when only[i]; NULL = every node */
	int timeout_ms;
	/* Send to no node before every node's link is up, then to all at once: a signal or clean
	 * reaches every node before one node's effect (a job aborting) can reach the others. */
	int together;
	/* Where to put the watch's view (from the first agent's HELLO), or NULL. Nodes the view
	 * names as down are not waited for either way. */
	struct boot_wsummary *view;
};

/* For every node of u: send frame `type` (empty payload) and wait for a frame of reply_type
 * (0: wait until the agent closes the connection, as after HALT). Everything ends within
 * timeout_ms. res has u->nnodes entries (free replies with boot_ucall_free). Returns the
 * number of nodes that answered. */
int boot_ucall(const struct boot_universe *u, unsigned type, unsigned reply_type, int timeout_ms,
               struct boot_ucall_res *res);
/* The same with a payload and a subset of the nodes; skipped nodes have ok = 0, skipped = 1.
 * Returns the number of asked nodes that answered. */
int boot_ucall_ex(const struct boot_universe *u, const struct boot_ucall_req *q,
                  struct boot_ucall_res *res);
void boot_ucall_free(struct boot_ucall_res *res, int n);
/* How many of the n results are nodes the watch declared down. */
int boot_ucall_down(const struct boot_ucall_res *res, int n);

#endif
