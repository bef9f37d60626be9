/* cmd/bootlua.h: what boot, grow, recon and wipe share: run one entry of lua/boot.lua with the
 * startup server as its ctx, and small helpers around the universe. */
#ifndef LAMKIT_CMD_BOOTLUA_H
#define LAMKIT_CMD_BOOTLUA_H

#include "bootsrv.h"
#include "lauxlib.h"
#include "lua.h"
#include "universe.h"

struct bootlua_req {
	const char *cmd;                   /* for messages */
	const char *fn;                    /* "run", "recon", "wipe" */
	int mode;                          /* BOOT_SRV_* */
	const char *schema;                /* a schema name/path, or NULL: */
	const struct boot_universe *state; /* the universe's nodes (grow, wipe) */
	const char *grow_host;             /* grow: the one node instead of the state's */
	int grow_cpu;
	/* grow of a node that is down: that node (same slots and keys); its new agent first
	 * wipes what the old one left (agent --replace) */
	const struct boot_unode *repair;
	const char *boot, *algorithm; /* forced module / algorithm, or NULL */
	double timeout;               /* 0 = schema/default */
	int fanout, window, verbose, dry_run, first_node;
	int purge;        /* wipe: also remove the nodes' caches of shipped binaries */
	const char *ship; /* --ship: "auto", "always", "never", or NULL = the schema's */
	const unsigned char *key;
	const char *uid;
};

struct bootlua {
	lua_State *L; /* the result table is on top of its stack after a successful run */
	boot_srv_t *srv;
	char logdir[4200];
};

/* 0 with the result on L's stack; -1 with one line in err (nothing was started, or the
 * startup server could not be set up). Always call bootlua_close afterwards. */
int bootlua_run(const struct bootlua_req *q, struct bootlua *b, char *err, size_t errlen);
void bootlua_close(struct bootlua *b);

/* Add lamkit.tp_check(policy) -> true | nil, why (the schema's transport setting) to L. */
void bootlua_register(lua_State *L);

/* Fresh universe id (16 hex digits) and key. 0 or -1 with errno. */
int bootlua_new_identity(char id[33], unsigned char key[BOOT_KEY_LEN]);
/* Helpers to read the result table at stack index idx. */
int bootlua_int(lua_State *L, int idx, const char *field, int dflt);
/* t[field][i] as an integer (0 when absent). */
int bootlua_geti(lua_State *L, int idx, const char *field, int i);

/* Load the running universe. 0; 1 when there is none (message in err); -1 on a bad file. */
int bootlua_load_universe(struct boot_universe *u, char *path, size_t plen, char *err,
                          size_t errlen);
/* The same for a command that needs the universe: on failure prints "lamkit CMD: why" (with
 * the wipe hint for a broken file) and returns 1; 0 when loaded. */
int bootlua_need_universe(const char *cmd, struct boot_universe *u, char *path, size_t plen);
/* Remove what the origin keeps for universe id: the state file and origin-<id>/ (logs). */
void bootlua_forget_universe(const char *path, const char *id);

/* only[i] = 1 for the universe nodes named by names (a host name or a node number); all
 * nodes when n == 0. 0 with *only malloc'd, or prints "lamkit CMD: no node 'x' in the
 * universe (its nodes: ...)" and returns 1. */
int bootlua_select_nodes(const char *cmd, const struct boot_universe *u, int n, char **names,
                         char **only);

#endif
