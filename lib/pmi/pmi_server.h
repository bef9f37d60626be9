/* lib/pmi/pmi_server.h: PMI-1/PMI-2 wire protocol engine; fed bytes, calls ops, does no I/O. */
#ifndef LAMKIT_PMI_SERVER_H
#define LAMKIT_PMI_SERVER_H

#include <stddef.h>

/* Limits we announce in cmd=maxes (Hydra's figures; MPICH clamps values to 674). */
#define PMI_KVSNAME_MAX 256
#define PMI_KEYLEN_MAX  64
#define PMI_VALLEN_MAX  1024
#define PMI_LINE_MAX    1024 /* a request line longer than this closes the connection */

typedef struct pmi_server pmi_server_t; /* one job's PMI state on one agent */
typedef struct pmi_conn pmi_conn_t;     /* one client connection (normally one rank) */

/* Callbacks run inside pmi_conn_feed / pmi_server_fence_done. They may pmi_conn_destroy()
 * the conn they were given (freeing is deferred until pmi_conn_feed returns), but must not
 * destroy other conns or the server. */
/* One command (app) of a spawn request. */
struct pmi_spawn_cmd {
	const char *exe;
	int nprocs;
	int argc;
	char *const *argv; /* argc arguments without the executable, NULL-terminated */
	int ninfo;
	char *const *info; /* 2 * ninfo strings: key0, value0, ... (host, wdir, path, ...) */
};

struct pmi_server_ops {
	/* Send one reply (a complete line ending in '\n') to conn's client. Required. */
	void (*send)(void *arg, pmi_conn_t *c, const char *line, size_t len);
	/* Every local rank has entered the barrier. `delta` holds this agent's puts since the
	 * last fence, encoded as by pmi_kvs_encode(). The owner must answer with
	 * pmi_server_fence_done() (at once on a one-agent job, or when the tree fence ends);
	 * calling it from inside this callback is allowed. `delta` is valid only during the
	 * call. Required. */
	void (*fence)(void *arg, const char *delta, size_t len);
	/* conn's client sent cmd=abort: reply nothing, end the job with `code`. Required. */
	void (*abort)(void *arg, pmi_conn_t *c, int code, const char *msg);
	/* conn's client finalized (finalize_ack already sent). Optional. */
	void (*finalize)(void *arg, pmi_conn_t *c);
	/* conn broke the protocol (oversize line, garbage, PMI-2 init, ...): the owner must close
	 * it and may end the job. `msg` is one line naming what was wrong. Required. */
	void (*error)(void *arg, pmi_conn_t *c, const char *msg);
	/* A whole spawn request: PMI-1's totspawns mcmd=spawn blocks or PMI-2's ncmds subcmds,
	 * one call (one new job, MPI_Comm_spawn_multiple's apps in order). preput_kv holds
	 * 2 * npreput strings: key0, value0, ... (PMI-1: the first block's). Everything is valid
	 * only during the call. Return 0 when accepted: the owner answers later (or from inside
	 * this call) with pmi_conn_spawn_done(); any other value answers rc=-1 at once.
	 * Optional; NULL answers rc=-1. */
	int (*spawn)(void *arg, pmi_conn_t *c, int ncmds, const struct pmi_spawn_cmd *cmds,
	             int npreput, char *const preput_kv[]);
	/* lamkit's resource registration (doc/PROTOCOL-pmi.md part 4): op is one of
	 * PMI_RES_REGISTER, PMI_RES_RELEASE_BEGIN, PMI_RES_RELEASE_END; kind "shm", "file" or
	 * "pid"; name the segment, path or pid as sent (checked by the owner). Return 0, or -1
	 * with a one-word reason in why[whylen]. Optional; NULL answers rc=-1 not_served. */
	int (*resource)(void *arg, pmi_conn_t *c, int op, const char *kind, const char *name,
	                char *why, size_t whylen);
	/* The name service, served elsewhere (a universe's head agent): op is PMI_NAME_PUBLISH,
	 * PMI_NAME_UNPUBLISH or PMI_NAME_LOOKUP of `name` (port: publish's, else NULL); copies
	 * valid during the call. Return 0 when accepted: the owner answers with
	 * pmi_conn_names_done(); nonzero: the engine serves it from the job's own table.
	 * Optional. */
	int (*names)(void *arg, pmi_conn_t *c, int op, const char *name, const char *port);
	/* A spawn request was refused before reaching ops->spawn (a bound passed, a malformed
	 * block): `msg` is one line for the user saying what and the bound. The client has its
	 * rc=-1 already. Optional. */
	void (*refused)(void *arg, pmi_conn_t *c, const char *msg);
};

enum { PMI_NAME_PUBLISH = 1, PMI_NAME_UNPUBLISH, PMI_NAME_LOOKUP };

enum { PMI_RES_REGISTER, PMI_RES_RELEASE_BEGIN, PMI_RES_RELEASE_END };
#define PMI_RES_NAME_MAX 512 /* longest resource name (a path) we accept */

struct pmi_server_cfg {
	const char *kvsname; /* e.g. "lamkit-<jobid>" */
	int size;            /* ranks in the job */
	int universe_size;   /* what get_universe_size answers */
	int nlocal;          /* ranks this agent serves: barrier completes when all entered */
	const int *appnum;   /* appnum per global rank (size entries), NULL = all 0 */
	const char *spawner; /* the spawning job's kvsname (PMI-2 spawner-jobid); NULL/"" none */
};

/* Create the engine for one job. Returns NULL with errno set on failure. */
pmi_server_t *pmi_server_create(const struct pmi_server_cfg *cfg, const struct pmi_server_ops *ops,
                                void *arg);
/* Free the engine and every conn still open. Accepts NULL. */
void pmi_server_destroy(pmi_server_t *s);

/* Store a key before any rank starts (e.g. PMI_process_mapping). 0, or -1 with errno
 * (EINVAL: empty key, key over PMI_KEYLEN_MAX or with a space, value over PMI_VALLEN_MAX). */
int pmi_server_preput(pmi_server_t *s, const char *key, const char *val);

/* Store a PMI-2 node attribute before any rank starts (e.g. "lamkit_topo", the node's
 * topology text, which PMI-1's cmd=lamkit_topo also answers from). 0, or -1 with errno
 * (EINVAL: empty key, key over PMI_KEYLEN_MAX or with a space, value over PMI_VALLEN_MAX). */
int pmi_server_nodeattr(pmi_server_t *s, const char *key, const char *val);

/* The tree fence ended: merge `entries` (pmi_kvs_encode format; may be NULL/0) into the
 * KVS and send barrier_out to every conn waiting. 0, or -1 (EINVAL on a malformed buffer). */
int pmi_server_fence_done(pmi_server_t *s, const char *entries, size_t len);

/* A new connection for `rank` (known from PMI_FD), or rank -1 for a PMI_PORT connection
 * that must identify itself with cmd=initack pmiid=R. (A PMI_PORT+PMI_RANK client sends
 * init without initack; its conn stays rank -1 and get_appnum answers 0.) NULL with errno
 * EINVAL (rank out of range) or ENOMEM. */
pmi_conn_t *pmi_conn_create(pmi_server_t *s, int rank);
/* Forget a connection (after EOF or error). Accepts NULL. */
void pmi_conn_destroy(pmi_conn_t *c);
/* For a singleton upgrade (mpiexec -pmi_args): queue cmd=singinit as the first message. */
void pmi_conn_start_singinit(pmi_conn_t *c);

/* Feed bytes read from conn's socket; complete lines are handled, partial ones buffered.
 * Returns 0, or -1 after ops->error was called (the caller closes the conn). After
 * cmd=abort it returns 0 and ignores further input; on a conn that already failed, -1 with
 * errno EPROTO. */
int pmi_conn_feed(pmi_conn_t *c, const char *buf, size_t len);

/* conn's rank (-1 before initack), and whether it sent init / finalize. */
/* Answer conn's pending spawn request (ops->spawn returned 0): rc 0 with the new job's
 * kvsname (PMI-2's jobid), or rc != 0 with a one-word reason (may be NULL). 0, or -1 with
 * errno EINVAL when no spawn is pending on c. */
int pmi_conn_spawn_done(pmi_conn_t *c, int rc, const char *kvsname, const char *why);
/* Answer conn's pending name-service request (ops->names returned 0): rc 0 with the port
 * (lookup; NULL otherwise), or rc != 0 with a one-word reason (e.g. not_found). 0, or -1
 * with errno EINVAL when none is pending. */
int pmi_conn_names_done(pmi_conn_t *c, int rc, const char *val);
/* The job's own name table (no universe name service), for a request from elsewhere (a PMIx
 * rank): op PMI_NAME_*; lookup sets *val (valid until the table changes). 0, or -1 with a
 * one-word reason in *why (already_published, not_found, table_full). */
int pmi_server_names(pmi_server_t *s, int op, const char *name, const char *port, const char **val,
                     const char **why);
/* A published value as a PMI client gets it: one published over PMIx carries its publisher and
 * type ("\x1b<nspace>\x1f<rank>\x1f<type>\x1f<value>"); PMI sees only <value>. */
const char *pmi_names_plain(const char *val);
int pmi_conn_rank(const pmi_conn_t *c);
int pmi_conn_initialized(const pmi_conn_t *c);
int pmi_conn_finalized(const pmi_conn_t *c);
/* Caller data hung on the conn. */
void pmi_conn_set_data(pmi_conn_t *c, void *data);
void *pmi_conn_data(const pmi_conn_t *c);

/* KVS batches for the tree fence: "<keylen> <vallen> key value\n"... binary-safe records
 * (decimal lengths; key non-empty; key and value may hold any byte but NUL; see
 * doc/PROTOCOL-pmi.md).
 * pmi_kvs_encode appends one record to a growing buffer (*buf, *len, *cap; realloc'd).
 * 0, or -1 with errno. */
int pmi_kvs_encode(char **buf, size_t *len, size_t *cap, const char *key, const char *val);
/* Merge several encoded batches into one (duplicates: the later wins). Merges batch `in`
 * into *buf, rewriting it with one record per key in first-seen order. 0, or -1 with errno
 * EINVAL (malformed input; *buf unchanged) or ENOMEM. */
int pmi_kvs_merge(char **buf, size_t *len, size_t *cap, const char *in, size_t inlen);

#endif
