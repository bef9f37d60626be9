/* lib/pmi/pmi_spawn.h: collects and parses one PMI-1 "mcmd=spawn ... endcmd" block, bounded. */
#ifndef LAMKIT_PMI_SPAWN_H
#define LAMKIT_PMI_SPAWN_H

#include <stddef.h>

#include "pmi_wire.h"

#define PMI_SPAWN_BYTES_MAX  16384     /* text of one block */
#define PMI_SPAWN_FIELDS_MAX 512       /* key=value fields in one block */
#define PMI_SPAWN_LIST_MAX   128       /* argcnt, preput_num, info_num upper bound */
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

/* Add one line (without '\n'). `first` marks the "mcmd=spawn ..." line, whose other
 * space-separated tokens are fields too; any other line is one field `key=rest of line`.
 * 0, or -1 with errno E2BIG when the block outgrows its bounds. */
PMI_INTERNAL int pmi_spawn_add(struct pmi_spawn *sp, const char *line, size_t len, int first);

/* Parse the collected fields into req. 0, or -1 with a reason (one word) in err. */
PMI_INTERNAL int pmi_spawn_parse(struct pmi_spawn *sp, struct pmi_spawn_req *req, char *err,
                                 size_t errlen);

#endif
