/* lib/boot/xcoll.h: collectives over the processes of several jobs (PMIx_Connect, _Disconnect,
 * a fence over several namespaces or over part of one), gathered at a rendezvous: the head
 * agent of a universe, or a job family's mpiexec. Each agent with participants sends one
 * XCOLL_UP per operation; when every namespace's participants are in, every contributor gets
 * XCOLL_DOWN with all the contributions' data (doc/PROTOCOL-agent.md, "PMIx across jobs"). */
#ifndef LAMKIT_BOOT_XCOLL_H
#define LAMKIT_BOOT_XCOLL_H

#include "link.h"
#include "msg.h"

#include <stdint.h>

#define BOOT_XCOLL_UNKNOWN 0xffffffffu /* XCOLL_UP: the contributor does not know the need */

/* XCOLL_DOWN status */
enum {
	BOOT_XCOLL_OK = 0,
	BOOT_XCOLL_GONE = 1,     /* a contributor's job ended before the operation completed */
	BOOT_XCOLL_MISMATCH = 2, /* more participants came than the operation has */
};

typedef struct boot_xcoll boot_xcoll_t;

boot_xcoll_t *boot_xcoll_create(void);
/* Free the pending operations (their contributors get nothing more). Accepts NULL. */
void boot_xcoll_destroy(boot_xcoll_t *x);
/* An XCOLL_UP (r at its jobid) came on link l: add it; answer every contributor on its own
 * link when the operation is complete. A malformed frame is dropped. */
void boot_xcoll_up(boot_xcoll_t *x, boot_link_t *l, struct core_rbuf *r);
/* Link l is going away: every operation it contributed to fails (BOOT_XCOLL_GONE to the
 * others). Accepts NULL. */
void boot_xcoll_forget(boot_xcoll_t *x, const boot_link_t *l);

#endif
