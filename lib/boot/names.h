/* lib/boot/names.h: a name service's table (PMI publish_name/lookup_name/unpublish_name and
 * PMIx_Publish/_Lookup/_Unpublish): a universe's, on its head agent, or a job family's, in its
 * mpiexec when no universe is booted. Requests come as NAMES frames and are answered with
 * NAMES_REPLY on the link they came on (doc/PROTOCOL-agent.md, "Names"). A lookup may wait for
 * its name to be published (PMIx's PMIX_WAIT) and a name may be published for one reading
 * (PMIx's PMIX_PERSIST_FIRST_READ). */
#ifndef LAMKIT_BOOT_NAMES_H
#define LAMKIT_BOOT_NAMES_H

#include "ev.h"
#include "link.h"
#include "msg.h"

/* NAMES ops beyond PMI's (PMI_NAME_PUBLISH 1, _UNPUBLISH 2, _LOOKUP 3): */
enum {
	BOOT_NAME_LOOKUP_WAIT = 4,  /* lookup; not there: wait for it (port: the timeout, ms) */
	BOOT_NAME_PUBLISH_ONCE = 5, /* publish; the first lookup that finds it removes it */
};

#define BOOT_NAMES_MAX 4096 /* names in one table */

typedef struct boot_names boot_names_t;

/* An empty table whose waiting lookups time out on ev. NULL on ENOMEM. */
boot_names_t *boot_names_create(core_ev_t *ev);
/* Free the table (waiting lookups are dropped unanswered). Accepts NULL. */
void boot_names_destroy(boot_names_t *n);
/* Serve one NAMES frame (r at its jobid) that came on link l: answered on l now, or for a
 * waiting lookup when its name is published or its time is up. */
void boot_names_serve(boot_names_t *n, boot_link_t *l, struct core_rbuf *r);
/* Link l is going away: drop its waiting lookups. */
void boot_names_forget(boot_names_t *n, const boot_link_t *l);

#endif
