/* lib/pmi/pmi2_wire.h: PMI-2 message codec (length header, key=value; pairs, ";;" escape),
 * shared by the server engine and libpmi. */
#ifndef LAMKIT_PMI2_WIRE_H
#define LAMKIT_PMI2_WIRE_H

#include <stddef.h>

#include "pmi_wire.h"

/* A PMI-2 message is a 6-byte decimal length (space padded on either side), then that many
 * bytes of "key=value;" pairs, the first key being "cmd". A ';' inside a value is doubled. */
#define PMI2_HDR_LEN     6
#define PMI2_MSG_MAX     524288 /* body bytes we accept or send (4096 arguments of 100 B fit) */
#define PMI2_PAIRS_MAX   8192   /* pairs in one message (a spawn of 4096 arguments) */
#define PMI2_KEY_MAX     64     /* key bytes (PMI2_MAX_KEYLEN) */
#define PMI2_VAL_MAX     1024   /* value bytes in kvs-put / node attributes (PMI2_MAX_VALLEN) */
#define PMI2_CMD_VAL_MAX 16384  /* value bytes of any other field (spawn arguments) */

struct pmi2_kv {
	const char *key, *val; /* NUL-terminated, unescaped, inside pmi2_msg.text */
	size_t vlen;
};

struct pmi2_msg {
	char *text; /* owned copy of the body with NULs and escapes resolved */
	size_t n;   /* pairs, the first being cmd */
	struct pmi2_kv *kv;
};

/* Parse a header: 6 bytes, optional spaces around decimal digits. The body length, or -1
 * (not a length, or over PMI2_MSG_MAX). */
PMI_INTERNAL long pmi2_hdr_parse(const char hdr[PMI2_HDR_LEN]);

/* Parse body[0..len) into m (which the caller later frees with pmi2_msg_free). A missing
 * final ';' is accepted. 0, or -1 with a one-word reason in why (empty, no_cmd, bad_key,
 * key_too_long, value_too_long, nul_byte, too_many_pairs, no_memory). */
PMI_INTERNAL int pmi2_msg_parse(const char *body, size_t len, struct pmi2_msg *m, const char **why);
PMI_INTERNAL void pmi2_msg_free(struct pmi2_msg *m);

/* The command name, and the value of key (first occurrence) or NULL. */
PMI_INTERNAL const char *pmi2_msg_cmd(const struct pmi2_msg *m);
PMI_INTERNAL const char *pmi2_msg_get(const struct pmi2_msg *m, const char *key, size_t *vlen);
/* Integer value: 0, or -1 (absent or not a decimal int). */
PMI_INTERNAL int pmi2_msg_int(const struct pmi2_msg *m, const char *key, int *out);
/* Boolean value TRUE/FALSE (case-insensitive; also 1/0, yes/no). `dflt` when absent. */
PMI_INTERNAL int pmi2_msg_bool(const struct pmi2_msg *m, const char *key, int dflt);

/* Outgoing message: header placeholder, then pairs. Errors stick (o->err) and make
 * pmi2_out_finish fail, so callers add without checking each step. */
struct pmi2_out {
	char *buf;
	size_t len, cap;
	int err;
};
PMI_INTERNAL void pmi2_out_begin(struct pmi2_out *o, const char *cmd);
PMI_INTERNAL void pmi2_out_addn(struct pmi2_out *o, const char *key, const char *val, size_t vlen);
PMI_INTERNAL void pmi2_out_add(struct pmi2_out *o, const char *key, const char *val);
PMI_INTERNAL void pmi2_out_addi(struct pmi2_out *o, const char *key, long val);
/* Write the header. The whole message's length, or -1 (out of memory, or body over
 * PMI2_MSG_MAX). The buffer stays o->buf until pmi2_out_free. */
PMI_INTERNAL long pmi2_out_finish(struct pmi2_out *o);
PMI_INTERNAL void pmi2_out_free(struct pmi2_out *o);

#endif
