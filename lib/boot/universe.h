/* lib/boot/universe.h: the universe state file on the origin: which agents make up the running
 * universe and how to reach them. Written by boot/grow, read by mpiexec, nodes, halt, wipe.
 * Format: doc/FORMAT-universe.md. Mode 0600: it holds the universe key. */
#ifndef LAMKIT_BOOT_UNIVERSE_H
#define LAMKIT_BOOT_UNIVERSE_H

#include "auth.h"

#include <stddef.h>
#include <stdint.h>

struct boot_unode {
	int index;    /* node number in the universe, 1-based, stable */
	char *host;   /* as the schema names it */
	char *addr;   /* numeric address the agent is reached at */
	int port;     /* the agent's listening port */
	int cpus;     /* slots for ranks (the schema's cpu=) */
	int schedule; /* 0: ranks are never placed here */
	int pid;      /* the agent's pid on its node */
	int parent;   /* who started it: 0 = origin, else a node index */
	char **kv;    /* the schema's other node keys, "key=value", NULL-terminated */
};

struct boot_universe {
	char id[33];                     /* random hex id; names the agents' session dirs */
	unsigned char key[BOOT_KEY_LEN]; /* the universe key */
	char *origin;                    /* host name of the origin */
	char *module;                    /* boot module used */
	char *schema;                    /* schema path as found ("" when none) */
	char *transport; /* the schema's transport policy, "function" (call it), or NULL */
	int64_t booted;  /* unix time */
	/* the watch (schema `watch`): ms between heartbeats, ms of silence that declares a node
	 * down; 0 = the defaults; watch_off: no watch at all (`watch = false`) */
	int watch_interval_ms, watch_timeout_ms, watch_off;
	struct boot_unode *nodes;
	int nnodes;
};

/* Path of the state file: $LAMKIT_UNIVERSE, else <session root>/universe. 0 or -1 with err. */
int boot_universe_path(char *buf, size_t len, char *err, size_t errlen);
/* Read and check the file. 0; -1 with errno ENOENT (no universe) or another errno and err
 * ("path:line: what is wrong"). */
int boot_universe_load(struct boot_universe *u, const char *path, char *err, size_t errlen);
/* Write atomically with mode 0600. 0, or -1 with err. */
int boot_universe_save(const struct boot_universe *u, const char *path, char *err, size_t errlen);
/* Free everything and wipe the key; accepts a zeroed struct. */
void boot_universe_free(struct boot_universe *u);
/* Append a node (copies the strings); returns it, or NULL (ENOMEM). */
struct boot_unode *boot_universe_add(struct boot_universe *u, const struct boot_unode *n);
/* Remove the node with this index (frees its strings); 0, or -1 when there is none. */
int boot_universe_remove(struct boot_universe *u, int index);
/* The node with this index, or NULL. */
struct boot_unode *boot_universe_node(const struct boot_universe *u, int index);

#endif
