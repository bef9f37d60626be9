/* lib/pmi/pmi_client_int.h: libpmi's internal state and wire helpers shared by its files. */
#ifndef LAMKIT_PMI_CLIENT_INT_H
#define LAMKIT_PMI_CLIENT_INT_H

#include <stddef.h>

#include "pmi.h"
#include "pmi2_wire.h"
#include "pmi_topo.h"
#include "pmi_wire.h"

#define PMIC_LINE  4096 /* longest reply line we accept */
#define PMIC_NAME  1024 /* kvsname buffer */
#define PMIC_SLACK 64   /* bytes of a put line kept free for %XX escapes */
#define PMIC_PORT  256  /* port[] size PMI_Lookup_name may fill (MPI_MAX_PORT_NAME) */
#define PMIC_KVS   0    /* local store namespaces (singleton mode) */
#define PMIC_NAMES 1
#define PMIC_NODE  2 /* singleton node attributes */

enum pmic_mode { PMIC_NONE, PMIC_SINGLETON, PMIC_WIRE };

struct pmic_kv {
	int ns;
	char *key, *val;
};

struct pmic {
	enum pmic_mode mode;
	int ver; /* wire protocol in PMIC_WIRE mode: 1 or 2 */
	int fd;
	int rank, size, spawned, appnum, usize;
	int kvsname_max, keylen_max, vallen_max;
	int iter;    /* next index for PMI_KVS_Iter_next */
	int *clique; /* ranks on my node, ascending; NULL until asked */
	int nclique;
	int node, nnodes;          /* my node from PMI_process_mapping (with the clique); -1 */
	int topo_ok;               /* topo holds the answer of PMI_Topo_cluster_info */
	struct pmi_topo_view topo; /* my levels: node, and socket and core when bound */
	struct pmic_kv *local;     /* singleton KVS and name table */
	size_t nlocal, caplocal;
	size_t rlen;
	char rbuf[PMIC_LINE];
	char kvsname[PMIC_NAME];
};

PMI_INTERNAL extern struct pmic pmic;

/* Send a whole request. 0, or -1 with errno. */
PMI_INTERNAL int pmic_send(const char *buf, size_t len);
/* Send req, read one reply line into line[cap] (NUL-terminated, no '\n') and check that its
 * cmd is `want`. The line's length, or -1. */
PMI_INTERNAL long pmic_xact(const char *req, const char *want, char *line, size_t cap);
/* rc= of a reply line (0 when absent, -1 when unparsable). */
PMI_INTERNAL int pmic_rc(const char *line, size_t len);
/* Nonzero if s is a usable wire token: non-empty, no space, control byte or DEL. */
PMI_INTERNAL int pmic_token_ok(const char *s);
/* Look `key` up in KVS `kvsname`, unescaped into out[outlen]. A PMI_* code. */
PMI_INTERNAL int pmic_get(const char *kvsname, const char *key, char *out, size_t outlen);

/* Read exactly n bytes (buffered data first). 0, or -1 with errno. */
PMI_INTERNAL int pmic_read_exact(char *buf, size_t n);

/* ---- PMI-2 wire (pmi2_client.c) ---- */
/* After response_to_init accepted version 2: fullinit and job-getid. 0, or -1. */
PMI_INTERNAL int pmic2_init(void);
/* Finish and send o (then freed), read one reply into resp (pmi2_msg_free it) and check
 * that its cmd is want. 0, or -1. */
PMI_INTERNAL int pmic2_xact(struct pmi2_out *o, const char *want, struct pmi2_msg *resp);
/* Send o and return PMI_SUCCESS when the reply `want` has rc=0, else PMI_FAIL. */
PMI_INTERNAL int pmic2_simple(struct pmi2_out *o, const char *want);
/* A found/value query (kvs-get, info-getjobattr, info-getnodeattr) for key, with one extra
 * pair xk=xv when xk is non-NULL. *found = 1/0; value into out[outlen]. A PMI_* code. */
PMI_INTERNAL int pmic2_query(const char *cmd, const char *key, const char *xk, const char *xv,
                             char *out, size_t outlen, int *found);
/* PMI-2 spawn request; jobid[jobid_size] gets the new job's id when told. A PMI_* code. */
PMI_INTERNAL int pmic2_spawn(int count, const char *cmds[], const char **argvs[],
                             const int maxprocs[], const int ninfo[], const PMI_keyval_t *info[],
                             int npre, const PMI_keyval_t pre[], char *jobid, int jobid_size);
/* Job attribute over either wire (PMI-1: a get of the same key). A PMI_* code. */
PMI_INTERNAL int pmic_jobattr(const char *key, char *out, size_t outlen);

/* Singleton store: set (copy), get, delete, and entry idx of namespace ns. */
PMI_INTERNAL int pmic_local_set(int ns, const char *key, const char *val);
PMI_INTERNAL const char *pmic_local_get(int ns, const char *key);
PMI_INTERNAL int pmic_local_del(int ns, const char *key);
PMI_INTERNAL const struct pmic_kv *pmic_local_at(int ns, int idx);
/* The node's topology text (pmi_topo.h) into out[cap]: the PMI-2 node attribute, PMI-1's
 * cmd=lamkit_topo (asked of lamkit's agents only), or a singleton's own. A PMI_* code. */
PMI_INTERNAL int pmic_topo_text(char *out, size_t cap);

/* Free everything libpmi holds (after finalize or a failed init). */
PMI_INTERNAL void pmic_reset(void);
/* Under a PMIx launcher (PMIx variables, no PMI ones): start `lamkit pmix-proxy` and point
 * PMI_FD/PMI_JOBID at it (pmi_client_pmix.c). 1 when it did, 0 when not needed, -1 (errno). */
PMI_INTERNAL int pmic_pmix_bridge(void);
/* After the PMI socket closed: reap the proxy (at most 2 s). */
PMI_INTERNAL void pmic_pmix_reap(void);

/* Copy s into out[len] (PMI_ERR_INVALID_LENGTH if it does not fit). */
PMI_INTERNAL int pmic_copy(char *out, int len, const char *s);

#endif
