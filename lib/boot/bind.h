/* lib/boot/bind.h: where a node's ranks go and what they are bound to, as Open MPI's mpirun
 * (--map-by, --rank-by, --bind-to, --report-bindings) and Hydra (-map-by, -bind-to) spell it. */
#ifndef LAMKIT_BOOT_BIND_H
#define LAMKIT_BOOT_BIND_H

#include <stddef.h>

#include "topo.h"

/* Mapping and ranking policies besides the object types of topo.h. */
enum { BOOT_MAP_SLOT = BOOT_TOPO_NTYPES, BOOT_MAP_NODE, BOOT_MAP_PPR, BOOT_MAP_DEFAULT };
/* Binding besides the object types: none; not given (the defaults below); auto (lamkit's own
 * default: cores for Open MPI programs of at most 2 ranks on a node, as their mpirun does,
 * nothing otherwise, as Hydra). */
enum { BOOT_BINDTO_NONE = BOOT_MAP_DEFAULT + 1, BOOT_BINDTO_DEFAULT, BOOT_BINDTO_AUTO };

/*
 * A placement request, parsed from the options (boot_bind_option) or from its canonical text
 * (boot_bind_text), which the job spec carries to the agents. Defaults are Open MPI 4.1's:
 * without --map-by, 2 ranks or fewer map by core, more by NUMA node (by NUMA node with :pe=M);
 * without --rank-by ranks follow the mapping's object (by slot when the mapping names none);
 * without --bind-to ranks bind to the mapping's object when one was named (cores with :pe=M),
 * not at all on an oversubscribed node. Where Open MPI would bind by default without an object
 * named (--map-by slot or node, or no --map-by), lamkit binds as it always did: auto, above.
 * Hydra's spellings (single dash): -bind-to OBJ[:N] without -map-by maps by that object too.
 */
struct boot_bind_spec {
	int map;       /* BOOT_MAP_* or a topology type */
	int map_given; /* --map-by was given */
	int ppr_n;     /* map == BOOT_MAP_PPR: ppr_n ranks per ppr_obj (a type or BOOT_MAP_NODE) */
	int ppr_obj;
	int pe;        /* :pe=M / --cpus-per-rank: CPUs per rank (0: one) */
	int span;      /* :span */
	int oversub;   /* -1 not said, 0 :nooversubscribe, 1 :oversubscribe */
	int rank;      /* BOOT_MAP_DEFAULT, BOOT_MAP_SLOT, BOOT_MAP_NODE or a type */
	int rank_fill; /* --rank-by OBJ:fill */
	int bind;      /* BOOT_BINDTO_* or a type */
	int bind_n;    /* Hydra's -bind-to OBJ:N: that many objects (0: one) */
	int overload;  /* --bind-to OBJ:overload-allowed */
	int hwthreads; /* --use-hwthread-cpus (and --map-by hwthread): a CPU is a hwthread */
	int report;    /* --report-bindings */
	int hydra;     /* -bind-to was Hydra's: it maps by its object when -map-by is not given */
};

/* An empty request: everything by default. */
void boot_bind_init(struct boot_bind_spec *s);
/* Whether name (without dashes) is one of the options below: 1, with *valued set when it takes
 * a value; 0. */
int boot_bind_is_option(const char *name, int *valued);
/* Apply one option: name (without dashes: "map-by", "rank-by", "bind-to", "cpus-per-rank",
 * "cpus-per-proc", "use-hwthread-cpus", "report-bindings"; hydra: 1 for Hydra's single-dash
 * spellings, whose -bind-to takes OBJ[:N]) and its value (NULL for flags). 1 if the option
 * is one of these and was applied, 0 if it is not a placement option, -1 with one line in
 * err when the value is bad. */
int boot_bind_option(struct boot_bind_spec *s, const char *name, const char *value, int hydra,
                     char *err, size_t errlen);
/* The name of a mapping, ranking or binding value ("socket", "slot", ...). */
const char *boot_bind_obj_name(int v);
/* Check the combination (e.g. :pe=2 with --map-by core). 0, or -1 with one line in err. */
int boot_bind_check(const struct boot_bind_spec *s, char *err, size_t errlen);
/* The canonical text of a request ("" for all defaults), and back. */
void boot_bind_text(const struct boot_bind_spec *s, char *out, size_t len);
int boot_bind_from_text(struct boot_bind_spec *s, const char *text);

/* How many ranks ppr:N:OBJ puts on a node of that topology (N times the objects). */
int boot_bind_ppr_count(const struct boot_bind_spec *s, const struct boot_topo *t);

/* Where one rank of a node goes: a range of logical PUs (topo.h), or none (lo < 0). */
struct boot_binding {
	int lo, hi;
};

/*
 * Place a node's n ranks (their order is the job's rank order on this node) on topology t:
 * map them onto objects, order them (--rank-by), bind them. njob: ranks in the whole job (the
 * defaults depend on it); slots: this node's slots (more ranks than slots: oversubscribed, no
 * binding unless asked for). out[i] is the binding of the node's i-th rank. 0, or -1 with one
 * line in err (an object the node does not have, more ranks on an object than it has CPUs
 * when that was asked for and not allowed). auto_core: what the auto binding does here (1:
 * cores, 0: nothing).
 */
int boot_bind_node(const struct boot_topo *t, const struct boot_bind_spec *s, int n, int njob,
                   int slots, int auto_core, struct boot_binding *out, char *err, size_t errlen);

/* Open MPI's --report-bindings text for a binding: "socket 0[core 1[hwt 0-1]], ...: [../BB]"
 * (the CPUs by socket, core and hwthread, then the socket map: one [] per socket, / between
 * cores, B a bound hwthread), or "" when not bound (or bound to every CPU). */
void boot_bind_describe(const struct boot_topo *t, const struct boot_binding *b, char *out,
                        size_t len);
/* The binding's CPUs as a kernel CPU list ("0-3,16-19"). */
void boot_bind_cpulist(const struct boot_topo *t, const struct boot_binding *b, char *out,
                       size_t len);
/* OMP_PLACES for a bound rank: one place per core ("{0,16},{1,17}"), or per hwthread when CPUs
 * are hwthreads. */
void boot_bind_omp_places(const struct boot_topo *t, const struct boot_bind_spec *s,
                          const struct boot_binding *b, char *out, size_t len);
/* CPUs of a binding: cores, or hwthreads when they are the CPUs. */
int boot_bind_ncpus(const struct boot_topo *t, const struct boot_bind_spec *s,
                    const struct boot_binding *b);

#endif
