/* lib/pmi/pmi_client_int.h: libpmi's internal state and wire helpers shared by its files. */
#ifndef LAMKIT_PMI_CLIENT_INT_H
#define LAMKIT_PMI_CLIENT_INT_H

#include <stddef.h>

#include "pmi_wire.h"

#define PMIC_LINE  4096 /* longest reply line we accept */
#define PMIC_NAME  1024 /* kvsname buffer */
#define PMIC_SLACK 64   /* bytes of a put line kept free for %XX escapes */
#define PMIC_PORT  256  /* port[] size PMI_Lookup_name may fill (MPI_MAX_PORT_NAME) */
#define PMIC_KVS   0    /* local store namespaces (singleton mode) */
#define PMIC_NAMES 1

enum pmic_mode { PMIC_NONE, PMIC_SINGLETON, PMIC_WIRE };

struct pmic_kv {
	int ns;
	char *key, *val;
};

struct pmic {
	enum pmic_mode mode;
	int fd;
	int rank, size, spawned, appnum, usize;
	int kvsname_max, keylen_max, vallen_max;
	int iter;    /* next index for PMI_KVS_Iter_next */
	int *clique; /* ranks on my node, ascending; NULL until asked */
	int nclique;
	struct pmic_kv *local; /* singleton KVS and name table */
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

/* Singleton store: set (copy), get, delete, and entry idx of namespace ns. */
PMI_INTERNAL int pmic_local_set(int ns, const char *key, const char *val);
PMI_INTERNAL const char *pmic_local_get(int ns, const char *key);
PMI_INTERNAL int pmic_local_del(int ns, const char *key);
PMI_INTERNAL const struct pmic_kv *pmic_local_at(int ns, int idx);
/* Free everything libpmi holds (after finalize or a failed init). */
PMI_INTERNAL void pmic_reset(void);

/* Copy s into out[len] (PMI_ERR_INVALID_LENGTH if it does not fit). */
PMI_INTERNAL int pmic_copy(char *out, int len, const char *s);

#endif
