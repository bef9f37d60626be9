/* lib/boot/topo.h: a node's CPU topology read from /sys (or LAMKIT_SYSFS=DIR): packages, NUMA
 * nodes, L3 caches, cores and hardware threads, numbered as hwloc (and so Open MPI) numbers them.
 */
#ifndef LAMKIT_BOOT_TOPO_H
#define LAMKIT_BOOT_TOPO_H

#include <stddef.h>

/* Object types, outermost first (the order of a CPU's ancestors is read from the machine: a NUMA
 * node may hold several packages, or a package several NUMA nodes). */
enum boot_topo_type {
	BOOT_TOPO_PACKAGE,
	BOOT_TOPO_NUMA,
	BOOT_TOPO_L3,
	BOOT_TOPO_CORE,
	BOOT_TOPO_PU,
	BOOT_TOPO_NTYPES
};

/*
 * The usable hardware threads (PUs: online and, on the real /sys, in our affinity mask) in
 * hwloc's logical order: depth first through package, NUMA node and L3 cache (whichever holds
 * the other), core, PU, each level sorted by its lowest CPU number. Every object is then a
 * contiguous range of logical PUs: object i of type t covers [first[t][i], first[t][i + 1]).
 * A level whose objects would not be contiguous (NUMA nodes interleaved across packages) is
 * left out (n = 0), as is one the node does not describe (no L3 in /sys). Without package or
 * NUMA information the whole node is one of each, without core information each PU a core.
 */
struct boot_topo {
	int npu;
	int *os;                      /* logical PU -> OS CPU number */
	int n[BOOT_TOPO_NTYPES];      /* objects of each type */
	int *first[BOOT_TOPO_NTYPES]; /* n + 1 entries each, the last = npu */
	int order[BOOT_TOPO_NTYPES];  /* types outermost first (as sorted above) */
	char source[256];             /* the directory read, for messages */
};

/* Read the topology from LAMKIT_SYSFS (a directory laid out like /sys/devices/system, with
 * cpu/ and node/; tests only) or /sys/devices/system. 0, or -1 with one line in err. */
int boot_topo_read(struct boot_topo *t, char *err, size_t errlen);
/* The same from a given directory; `affinity`: keep only the CPUs this process may use. */
int boot_topo_read_dir(struct boot_topo *t, const char *dir, int affinity, char *err,
                       size_t errlen);
/* A machine of that shape (a universe node's sockets, cores_per_socket, threads_per_core), with
 * one NUMA node and one L3 per socket, CPUs numbered in order. 0, or -1 (bad shape, ENOMEM). */
int boot_topo_shape(struct boot_topo *t, int sockets, int cores, int threads);
/* Free what boot_topo_read allocated; accepts a zeroed struct. */
void boot_topo_free(struct boot_topo *t);

/* The object of type t holding logical PU pu (0 .. n[t]-1), or -1 when the level is absent. */
int boot_topo_obj_of(const struct boot_topo *t, int type, int pu);
/* PUs of object i of type t, and cores in it. */
int boot_topo_npus(const struct boot_topo *t, int type, int i);
int boot_topo_ncores(const struct boot_topo *t, int type, int i);

/* "cpu", "package", ... for messages; NULL for an unknown type. */
const char *boot_topo_type_name(int type);

#endif
