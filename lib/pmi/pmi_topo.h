/* lib/pmi/pmi_topo.h: lamkit's topology text (doc/PROTOCOL-pmi.md part 5), encoded by the
 * launcher for one node and parsed by libpmi, and the CPU -> socket/core lookup in /sys. */
#ifndef LAMKIT_PMI_TOPO_H
#define LAMKIT_PMI_TOPO_H

#include <stddef.h>

#include "pmi_wire.h"

#define PMI_TOPO_KEY      "lamkit_topo" /* PMI-2 node attribute holding the text */
#define PMI_TOPO_TEXT_MAX 1000          /* longest text: fits a PMI-2 node attribute */
#define PMI_TOPO_SYSFS    "/sys/devices/system/cpu"

/* One rank's binding: socket (physical_package_id) and core (core_id, -1: bound to a set of
 * cores of one socket). */
struct pmi_topo_bind {
	int rank, socket, core;
};

/* What the text says about rank `me`: its node and the ranks sharing each level, outermost
 * first (node, then socket and core when bound). ranks[] are ascending, malloc'd. */
struct pmi_topo_view {
	int node, nnodes; /* -1 when unknown */
	int nlevels;
	struct {
		int level; /* 0 node, 1 socket, 2 core (PMI_TOPO_LEVEL_* in pmi.h) */
		int index; /* node number, physical_package_id or core_id */
		int nranks;
		int *ranks;
	} lv[3];
};

/* Socket and core of CPU cpu from sysroot (PMI_TOPO_SYSFS, or a copy in tests):
 * cpuN/topology/physical_package_id and core_id. 0, or -1 with errno. */
PMI_INTERNAL int pmi_topo_cpu(const char *sysroot, int cpu, int *socket, int *core);

/* The calling process's own binding from sched_getaffinity: 0 with *socket (and *core, or -1
 * when the set spans cores) when every allowed CPU lies in one socket and not every online
 * CPU is allowed; -1 when it is not bound (or /sys cannot tell). */
PMI_INTERNAL int pmi_topo_self(const char *sysroot, int *socket, int *core);

/* The node of each of size ranks from a PMI_process_mapping "(vector,(start,nodes,ppn),...)"
 * (blocks in order, repeated until every rank is placed: MPICH's rule). The number of nodes
 * (highest node number + 1), or -1 with errno EINVAL. */
PMI_INTERNAL int pmi_topo_mapping(const char *map, int *node, int size);

/* Encode one node's text into out[cap]: node number and count (-1: unknown, left out), its n
 * ranks (any order, no duplicates) and the nb bindings of those bound. Bindings are left out
 * when the text would pass PMI_TOPO_TEXT_MAX or cap. Its length, or -1 with errno EINVAL (a
 * bad argument) or ENOSPC (even the rank list does not fit). */
PMI_INTERNAL int pmi_topo_encode(char *out, size_t cap, int node, int nnodes, const int *ranks,
                                 int n, const struct pmi_topo_bind *b, int nb);

/* Parse a text for rank me of a job of size ranks. Unknown fields are skipped. 0, or -1 with
 * errno EINVAL (malformed, out of range, me not among the node's ranks, or out of memory);
 * *v is then empty. */
PMI_INTERNAL int pmi_topo_parse(const char *text, int me, int size, struct pmi_topo_view *v);
/* Free the rank lists of a view (accepts an empty one). */
PMI_INTERNAL void pmi_topo_view_free(struct pmi_topo_view *v);

#endif
