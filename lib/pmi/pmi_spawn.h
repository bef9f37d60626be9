/* lib/pmi/pmi_spawn.h: collects and parses one PMI-1 "mcmd=spawn ... endcmd" block, bounded. */
#ifndef LAMKIT_PMI_SPAWN_H
#define LAMKIT_PMI_SPAWN_H

#include <stddef.h>

#include "pmi_wire.h"

/* Bounds of one block. A block past one is still read to its endcmd (the stream stays in
 * step), then refused with a reason (doc/PROTOCOL-pmi.md, "Spawn"). */
#define PMI_SPAWN_LINE_MAX   16384     /* one line: an argument, info or preput value */
#define PMI_SPAWN_BYTES_MAX  (1 << 20) /* text of one block */
#define PMI_SPAWN_ARGS_MAX   4096      /* argcnt upper bound */
#define PMI_SPAWN_LIST_MAX   128       /* totspawns, preput_num, info_num upper bound */
#define PMI_SPAWN_FIELDS_MAX (PMI_SPAWN_ARGS_MAX + 4 * PMI_SPAWN_LIST_MAX + 64)
#define PMI_SPAWN_NPROCS_MAX (1 << 20) /* nprocs upper bound */
#define PMI_SPAWN_BLOCKS_MAX 16        /* PMI-1 blocks (apps) in one spawn request */

struct pmi_spawn;

/* One parsed block; the strings live in the pmi_spawn it came from. */
struct pmi_spawn_req {
	int nprocs;
	const char *exe;
	int argc;
	char **argv; /* argc arguments (without the executable), NULL-terminated */
	int npreput;
	char **preput; /* 2 * npreput entries: key0, val0, key1, val1, ... */
	int ninfo;
	char **info; /* 2 * ninfo entries: key0, val0, ... */
	int totspawns, spawnssofar;
};

/* A new empty block, or NULL with errno ENOMEM. */
PMI_INTERNAL struct pmi_spawn *pmi_spawn_new(void);
/* Free a block. Accepts NULL. */
PMI_INTERNAL void pmi_spawn_free(struct pmi_spawn *sp);

/* Add the "mcmd=spawn ..." line (without '\n'), whose other space-separated tokens are
 * fields too. 0 (a block past its bounds is marked, see pmi_spawn_parse). */
PMI_INTERNAL int pmi_spawn_first(struct pmi_spawn *sp, const char *line, size_t len);

/* Append bytes of the block's current line (no '\n'); a line may come in several pieces.
 * Bytes past PMI_SPAWN_LINE_MAX or PMI_SPAWN_BYTES_MAX are dropped and the block marked. */
PMI_INTERNAL void pmi_spawn_more(struct pmi_spawn *sp, const char *buf, size_t len);

/* The current line is complete: 1 if it was "endcmd" (the block is complete), else 0 (a
 * line `key=rest of line` became a field; one without '=' is skipped). */
PMI_INTERNAL int pmi_spawn_eol(struct pmi_spawn *sp);

/* Parse the collected fields into req (may be called again on the same block). 0, or -1
 * with a reason (one word, e.g. bad_args, too_many_args, arg_too_long) in err. */
PMI_INTERNAL int pmi_spawn_parse(struct pmi_spawn *sp, struct pmi_spawn_req *req, char *err,
                                 size_t errlen);

/* After pmi_spawn_parse failed: one line for the user saying what was wrong and the bound. */
PMI_INTERNAL const char *pmi_spawn_detail(const struct pmi_spawn *sp);

#endif
