/* lib/boot/bootsrv.h: the origin side of booting: the startup server agents call back to, and
 * the ctx object lua/boot.lua drives (doc/BOOT-LUA.md §2). Used by boot, grow, recon, wipe. */
#ifndef LAMKIT_BOOT_BOOTSRV_H
#define LAMKIT_BOOT_BOOTSRV_H

#include "auth.h"
#include "lua.h"
#include "universe.h"

#include <stddef.h>

enum boot_srv_mode { BOOT_SRV_BOOT, BOOT_SRV_RECON, BOOT_SRV_WIPE };

struct boot_srv_opts {
	const char *cmd; /* command name for messages: "boot", "grow", "recon", "wipe" */
	int mode;        /* enum boot_srv_mode: what the agents do */
	const unsigned char *key;
	const char *uid;    /* universe id (hex) */
	int first_node;     /* the universe node number of ctx index 1 (grow: after the others) */
	int verbose;        /* print a line per node */
	int dry_run;        /* wipe: only report */
	int purge;          /* wipe: also remove the node's cache of shipped binaries */
	int replace;        /* grow of a node down: its agent wipes the old one's leftovers */
	const char *logdir; /* where launch logs go (created) */
};

typedef struct boot_srv boot_srv_t;

boot_srv_t *boot_srv_create(const struct boot_srv_opts *o, char *err, size_t errlen);
/* Push the ctx table (methods of doc/BOOT-LUA.md plus ctx:setup(nodes, module)). */
void boot_srv_push_ctx(boot_srv_t *s, lua_State *L);

/* What the startup learned about ctx node i (1-based); NULL when it never came up. */
struct boot_srv_info {
	char addr[64];
	char hostname[256];
	char version[32];
	char wipe[1024];
	int port, pid, cpus;
};
const struct boot_srv_info *boot_srv_info(const boot_srv_t *s, int i);

/* Boot succeeded: tell every agent that is up the universe (UNIVERSE frame) and hang up. */
void boot_srv_commit(boot_srv_t *s, const struct boot_universe *u);
/* Boot failed: HALT every agent that came up and wait (bounded) until they are gone. */
void boot_srv_abort(boot_srv_t *s);
/* recon/wipe: hang up on every agent and wait (bounded) for the launch processes to end. */
void boot_srv_release(boot_srv_t *s);
/* Clear the live counter line if one was drawn. */
void boot_srv_end_progress(boot_srv_t *s);
void boot_srv_destroy(boot_srv_t *s);

#endif
