/* lib/pmi/pmi_kvs.h: ordered hash table of PMI key/value pairs and its batch codec. */
#ifndef LAMKIT_PMI_KVS_H
#define LAMKIT_PMI_KVS_H

#include <stddef.h>

#include "pmi_wire.h"

#define PMI_KVS_REC_KEY_MAX 4096         /* longest key a batch record may carry */
#define PMI_KVS_REC_VAL_MAX (1u << 20)   /* longest value a batch record may carry */
#define PMI_KVS_BYTES_MAX   (256u << 20) /* total key+value bytes one table accepts */

typedef struct pmi_kvs pmi_kvs_t;

/* An empty table, or NULL with errno ENOMEM. */
PMI_INTERNAL pmi_kvs_t *pmi_kvs_create(void);
/* Free the table and its entries. Accepts NULL; keeps errno. */
PMI_INTERNAL void pmi_kvs_destroy(pmi_kvs_t *k);
/* Drop every entry (the table stays usable). */
PMI_INTERNAL void pmi_kvs_clear(pmi_kvs_t *k);

/* Store a copy of key[0..klen) -> val[0..vlen); an existing key keeps its position and gets
 * the new value. Neither may contain NUL; klen > 0. 0, or -1 with errno EINVAL, ENOSPC (table
 * over PMI_KVS_BYTES_MAX) or ENOMEM. */
PMI_INTERNAL int pmi_kvs_set(pmi_kvs_t *k, const char *key, size_t klen, const char *val,
                             size_t vlen);
/* The NUL-terminated value stored for key[0..klen), or NULL. *vlen gets its length if non-NULL. */
PMI_INTERNAL const char *pmi_kvs_get(const pmi_kvs_t *k, const char *key, size_t klen,
                                     size_t *vlen);
/* Remove key[0..klen). 0, or -1 with errno ENOENT. Later entries move down one position. */
PMI_INTERNAL int pmi_kvs_del(pmi_kvs_t *k, const char *key, size_t klen);

/* Number of entries, and entry idx in insertion order (0 or -1 with errno ERANGE). */
PMI_INTERNAL size_t pmi_kvs_count(const pmi_kvs_t *k);
PMI_INTERNAL int pmi_kvs_at(const pmi_kvs_t *k, size_t idx, const char **key, const char **val);
/* Sum of key and value bytes stored. */
PMI_INTERNAL size_t pmi_kvs_bytes(const pmi_kvs_t *k);

/* Append every entry, in order, as pmi_kvs_encode records. 0, or -1 with errno. */
PMI_INTERNAL int pmi_kvs_dump(const pmi_kvs_t *k, char **buf, size_t *len, size_t *cap);
/* Check a whole batch, then store its records (later ones win). A malformed batch changes
 * nothing: -1 with errno EINVAL. Also -1 with ENOSPC/ENOMEM from pmi_kvs_set. */
PMI_INTERNAL int pmi_kvs_load(pmi_kvs_t *k, const char *in, size_t inlen);

#endif
