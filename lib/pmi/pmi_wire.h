/* lib/pmi/pmi_wire.h: PMI-1 line tokens and value escaping shared by the engine and libpmi. */
#ifndef LAMKIT_PMI_WIRE_H
#define LAMKIT_PMI_WIRE_H

#include <stddef.h>

/* Internal symbols stay out of libpmi.so's exported ABI. */
#if defined(__GNUC__)
#define PMI_INTERNAL __attribute__((visibility("hidden")))
#else
#define PMI_INTERNAL
#endif

/* Find the first space-separated token `key=...` in line[0..len). Returns a pointer to its
 * value and stores the value's length in *vlen, or NULL when absent. Tokens without '=' and
 * unknown keys are skipped. */
PMI_INTERNAL const char *pmi_wire_find(const char *line, size_t len, const char *key, size_t *vlen);

/* Like pmi_wire_find, but the value runs to the end of the line (spaces included). *tokstart
 * receives the offset where the token begins, so callers can search the fields before it. */
PMI_INTERNAL const char *pmi_wire_find_rest(const char *line, size_t len, const char *key,
                                            size_t *vlen, size_t *tokstart);

/* Copy the value of `key` into buf (NUL-terminated). 0, or -1 with errno ENOENT (absent)
 * or ENOSPC (does not fit in buflen). */
PMI_INTERNAL int pmi_wire_get_str(const char *line, size_t len, const char *key, char *buf,
                                  size_t buflen);

/* Parse the value of `key` as a decimal int. 0, or -1 with errno ENOENT or EINVAL. */
PMI_INTERNAL int pmi_wire_get_int(const char *line, size_t len, const char *key, int *out);

/* Parse s[0..len) as a whole decimal int (optional '-'). 0, or -1 with errno EINVAL. */
PMI_INTERNAL int pmi_wire_parse_int(const char *s, size_t len, int *out);

/* Nonzero if value byte `ch` must be escaped for the wire: '%', ';' (PMI-2's separator, which
 * Hydra and Slurm do not unescape), space, controls, DEL. */
PMI_INTERNAL int pmi_wire_must_escape(unsigned char ch);

/* Escape `in` into out (NUL-terminated) as %XX for the bytes above. Returns the escaped
 * length, or -1 with errno ENOSPC when it does not fit in outlen. */
PMI_INTERNAL long pmi_wire_escape(const char *in, char *out, size_t outlen);

/* Undo pmi_wire_escape on in[0..inlen) into out (NUL-terminated). A '%' not followed by
 * two hex digits is kept as is. Returns the length, or -1 with errno ENOSPC. */
PMI_INTERNAL long pmi_wire_unescape(const char *in, size_t inlen, char *out, size_t outlen);

#endif
