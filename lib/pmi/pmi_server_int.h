/* lib/pmi/pmi_server_int.h: the engine's state, shared by its PMI-1 and PMI-2 halves. */
#ifndef LAMKIT_PMI_SERVER_INT_H
#define LAMKIT_PMI_SERVER_INT_H

#include "pmi2_wire.h"
#include "pmi_kvs.h"
#include "pmi_server.h"
#include "pmi_spawn.h"

struct pmi_server {
	struct pmi_server_cfg cfg;
	int *appnum;
	char *kvsname;
	char *spawner; /* NULL: not a spawned job */
	struct pmi_server_ops ops;
	void *arg;
	pmi_kvs_t *kvs;      /* everything visible to get */
	pmi_kvs_t *delta;    /* local puts since the last fence */
	pmi_kvs_t *names;    /* publish_name table */
	pmi_kvs_t *nodeattr; /* PMI-2 node attributes (this agent's ranks only) */
	char *fbuf;          /* encoded delta handed to ops->fence */
	size_t flen, fcap;
	int nwaiting; /* local conns inside barrier_in / kvs-fence */
	pmi_conn_t *conns;
};

struct pmi_conn {
	pmi_server_t *s; /* NULL once destroyed while busy */
	pmi_conn_t *prev, *next;
	int rank;
	unsigned initialized : 1, finalized : 1, waiting : 1, dead : 1, quiet : 1, doomed : 1;
	unsigned v2 : 1;     /* switched to PMI-2 framing by cmd=init pmi_version=2 */
	unsigned v2full : 1; /* PMI-2 fullinit done */
	int busy;
	void *data;
	struct pmi_spawn *spawn;                      /* collecting an mcmd=spawn block */
	struct pmi_spawn *sblk[PMI_SPAWN_BLOCKS_MAX]; /* the request's finished blocks */
	int nsblk;
	unsigned spawn_wait : 1; /* ops->spawn accepted: pmi_conn_spawn_done() answers */
	int names_op;            /* ops->names accepted this PMI_NAME_* op: names_done answers */
	char *nawait;            /* PMI-2: key this conn waits for in info-getnodeattr */
	char hdr[PMI2_HDR_LEN];  /* PMI-2: header bytes so far */
	size_t hlen;
	char *mbuf; /* PMI-2: body being collected */
	size_t mlen, mneed;
	size_t ilen;
	char ibuf[PMI_LINE_MAX + 1];
};

/* The client broke the protocol: ops->error once, then the conn is dead. Returns -1. */
PMI_INTERNAL int pmi_srv_fail(pmi_conn_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Send one reply line (printf format, '\n' added): 0, or -1 when it does not fit. */
PMI_INTERNAL int pmi_srv_reply(pmi_conn_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Send raw bytes to the conn's client (nothing once it is doomed). */
PMI_INTERNAL void pmi_srv_send(pmi_conn_t *c, const char *buf, size_t len);
/* All local ranks are in the fence: hand the delta to ops->fence. */
PMI_INTERNAL void pmi_srv_start_fence(pmi_server_t *s);
/* Nonzero if another conn of s already holds rank. */
PMI_INTERNAL int pmi_srv_rank_taken(const pmi_server_t *s, const pmi_conn_t *self, int rank);

/* Run a resource request through ops->resource: 0, or -1 with a reason in why. */
PMI_INTERNAL int pmi_srv_resource(pmi_conn_t *c, int op, const char *kind, size_t klen,
                                  const char *name, size_t nlen, char *why, size_t whylen);

/* PMI-1 requests beyond the KVS and the fence (pmi_server_part2.c): each handles one line
 * of its command. */
PMI_INTERNAL int pmi1_h_publish(pmi_conn_t *c, const char *line, size_t len);
PMI_INTERNAL int pmi1_h_lookup(pmi_conn_t *c, const char *line, size_t len);
PMI_INTERNAL int pmi1_h_unpublish(pmi_conn_t *c, const char *line, size_t len);
PMI_INTERNAL int pmi1_h_res_reg(pmi_conn_t *c, const char *line, size_t len);
PMI_INTERNAL int pmi1_h_res_begin(pmi_conn_t *c, const char *line, size_t len);
PMI_INTERNAL int pmi1_h_res_end(pmi_conn_t *c, const char *line, size_t len);
PMI_INTERNAL int pmi1_h_topo(pmi_conn_t *c, const char *line, size_t len);
/* The mcmd=spawn line that opens a block. 0, or -1 after fail. */
PMI_INTERNAL int pmi1_spawn_start(pmi_conn_t *c, const char *line, size_t len);
/* Bytes of a line inside the block being collected (no '\n'; a line may come in pieces,
 * up to PMI_SPAWN_LINE_MAX bytes); eol: the line ends after them. 0, or -1 after fail. */
PMI_INTERNAL int pmi1_spawn_bytes(pmi_conn_t *c, const char *buf, size_t len, int eol);
/* Free the blocks of a spawn request still being collected or waiting for its answer. */
PMI_INTERNAL void pmi1_spawn_drop(pmi_conn_t *c);

/* PMI-2 half (pmi2_server.c). Feed bytes of a conn in PMI-2 mode: 0, or -1 after fail. */
PMI_INTERNAL int pmi2_srv_feed(pmi_conn_t *c, const char *buf, size_t len);
/* The fence ended: answer a PMI-2 conn waiting in kvs-fence. */
PMI_INTERNAL void pmi2_srv_fence_out(pmi_conn_t *c);
/* Offer a name-service request to ops->names. 1: accepted (answered later), 0: serve it
 * here, -1: the conn failed (a request while one is pending, or out of memory). */
PMI_INTERNAL int pmi_srv_names_ask(pmi_conn_t *c, int op, const char *name, size_t nlen,
                                   const char *port, size_t plen);
/* Answer a PMI-2 conn's pending name-service request. */
PMI_INTERNAL void pmi2_srv_names_done(pmi_conn_t *c, int op, int rc, const char *val);
/* Answer a PMI-2 conn's pending spawn. */
PMI_INTERNAL void pmi2_srv_spawn_done(pmi_conn_t *c, int rc, const char *jobid, const char *why);
/* Free a conn's PMI-2 buffers. */
PMI_INTERNAL void pmi2_srv_conn_free(pmi_conn_t *c);

#endif
