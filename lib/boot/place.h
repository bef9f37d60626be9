/* lib/boot/place.h: rank placement over a job's nodes (block by slots, -ppn, map by node, a host
 * filter) and the PMI_process_mapping text that describes it. Pure functions, no I/O. */
#ifndef LAMKIT_BOOT_PLACE_H
#define LAMKIT_BOOT_PLACE_H

#include <stddef.h>

/* The longest PMI_process_mapping boot_process_mapping produces (MPICH reads PMI values of a
 * few hundred bytes safely; PMI_VALLEN_MAX is 1024 with the reply line around it). */
#define BOOT_MAPPING_MAX 600

struct boot_place_node {
	const char *host; /* the node's name (what -hosts names) */
	int cpus;         /* slots; values below 1 count as 1 */
	int schedule;     /* 0: no ranks unless the host filter names the node */
};

struct boot_place_opts {
	int ppn;           /* > 0: that many consecutive ranks per node, nodes in order, wrapping */
	int by_node;       /* 1: one rank per node in turn (--map-by node) */
	const char *hosts; /* comma-separated host filter (-hosts), in the order to use; NULL/"" */
};

struct boot_placement {
	int *rank_node;     /* nprocs entries: index into the nodes given */
	int *count;         /* nnodes entries: ranks on each node */
	int nused;          /* nodes with at least one rank */
	int slots;          /* total slots of the nodes that could take ranks */
	int oversubscribed; /* some node got more ranks than its cpus */
};

/* Place nprocs ranks (ppn and by_node are exclusive; ppn wins). Default: block by slots, i.e.
 * fill the first node up to its cpus, then the next; past the total, wrap around and fill again
 * the same way. Without a filter only nodes with schedule != 0 take ranks; with one, exactly
 * the named nodes, in the filter's order. The nodes used are always the first ones of that
 * order, and rank 0 is on the first. 0, or -1 with one line in err (unknown host, no node). */
int boot_place(const struct boot_place_node *nodes, int nnodes, int nprocs,
               const struct boot_place_opts *o, struct boot_placement *pl, char *err,
               size_t errlen);
/* Free what boot_place allocated; accepts a zeroed struct. */
void boot_placement_free(struct boot_placement *pl);
/* Total slots of the nodes that would take ranks under this filter (the default -n). >= 1, or
 * -1 with err as boot_place. */
int boot_place_slots(const struct boot_place_node *nodes, int nnodes, const char *hosts, char *err,
                     size_t errlen);

/* MPICH's PMI_process_mapping "(vector,(start,count,ppn),...)" describing rank_node exactly.
 * Nodes are renumbered 0, 1, ... in the order of their first rank (the order of the job's
 * agents); consecutive runs of equal length on consecutive nodes make one block. If that text
 * is longer than BOOT_MAPPING_MAX, the shortest repeating prefix of blocks is given instead
 * (readers repeat the vector until every rank is placed); if that is still too long, "" (no
 * mapping: ranks fall back to MPI_LOCALNRANKS/MPI_LOCALRANKID). malloc'd; NULL on ENOMEM or
 * EINVAL (a negative node). */
char *boot_process_mapping(const int *rank_node, int n);

#endif
