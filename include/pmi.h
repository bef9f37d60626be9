/* include/pmi.h: PMI Part 1 client API (libpmi), wire-compatible with MPICH's simple PMI. */
#ifndef LAMKIT_PMI_H
#define LAMKIT_PMI_H

/* Not thread-safe: call from one thread at a time (MPI libraries do so). */

#ifdef __cplusplus
extern "C" {
#endif

#define PMI_SUCCESS                0
#define PMI_FAIL                   -1
#define PMI_ERR_INIT               1
#define PMI_ERR_NOMEM              2
#define PMI_ERR_INVALID_ARG        3
#define PMI_ERR_INVALID_KEY        4
#define PMI_ERR_INVALID_KEY_LENGTH 5
#define PMI_ERR_INVALID_VAL        6
#define PMI_ERR_INVALID_VAL_LENGTH 7
#define PMI_ERR_INVALID_LENGTH     8
#define PMI_ERR_INVALID_NUM_ARGS   9
#define PMI_ERR_INVALID_ARGS       10
#define PMI_ERR_INVALID_NUM_PARSED 11
#define PMI_ERR_INVALID_KEYVALP    12
#define PMI_ERR_INVALID_SIZE       13
#define PMI_ERR_UNSUPPORTED        14 /* the PMI paper: a service this launcher does not give */

typedef int PMI_BOOL;
#define PMI_TRUE  1
#define PMI_FALSE 0

typedef struct {
	const char *key;
	char *val;
} PMI_keyval_t;

/* Connect to the process manager: PMI_FD (wins), else PMI_PORT with PMI_ID (initack) or
 * PMI_RANK/PMI_SIZE, else run as a singleton (rank 0 of 1, local KVS). *spawned is 1 when
 * PMI_SPAWNED=1. Calling it again returns PMI_SUCCESS. */
int PMI_Init(int *spawned);
/* *initialized = PMI_TRUE between PMI_Init and PMI_Finalize. */
int PMI_Initialized(PMI_BOOL *initialized);
/* Tell the process manager we are done (finalize/finalize_ack) and close the connection. */
int PMI_Finalize(void);
/* Ask the process manager to end the whole job with exit_code. Does not return: after
 * sending, it waits up to 30 s for the launcher to stop us, then _exit(exit_code). */
int PMI_Abort(int exit_code, const char error_msg[]);

/* Job size, my rank, universe size and appnum. */
int PMI_Get_size(int *size);
int PMI_Get_rank(int *rank);
int PMI_Get_universe_size(int *size);
int PMI_Get_appnum(int *appnum);

/* Ranks on my node, ascending (from PMI_process_mapping, else MPI_LOCALNRANKS and
 * MPI_LOCALRANKID assuming consecutive ranks, else just me). length must hold them all. */
int PMI_Get_clique_size(int *size);
int PMI_Get_clique_ranks(int ranks[], int length);

/* The job's KVS name; length is the size of kvsname[] including the NUL. */
int PMI_KVS_Get_my_name(char kvsname[], int length);
/* Buffer sizes (including the NUL) for names, keys and values. The value size leaves room
 * on a 1024-byte request line for kvsname, key and some escaping. */
int PMI_KVS_Get_name_length_max(int *length);
int PMI_KVS_Get_key_length_max(int *length);
int PMI_KVS_Get_value_length_max(int *length);

/* Store key=value in the job KVS. Values may hold any bytes but NUL: spaces, '%' and control
 * bytes travel as %XX and come back unescaped; other values go on the wire unchanged. */
int PMI_KVS_Put(const char kvsname[], const char key[], const char value[]);
/* Read a value (PMI_FAIL when the key is missing); length is the size of value[]. */
int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length);
/* Puts are sent at once, so this only checks its argument. */
int PMI_KVS_Commit(const char kvsname[]);
/* Wait until every rank called it; also makes all earlier puts visible to every rank. */
int PMI_Barrier(void);

/* Name service: publish/unpublish/lookup service -> port. port[] of lookup must hold 256. */
int PMI_Publish_name(const char service_name[], const char port[]);
int PMI_Unpublish_name(const char service_name[]);
int PMI_Lookup_name(const char service_name[], char port[]);

/* Start count new programs (one mcmd=spawn block each); errors[] gets one code per
 * process requested. */
int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                       const int info_keyval_sizesp[], const PMI_keyval_t *info_keyval_vectors[],
                       int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[],
                       int errors[]);

/* The PMI paper's calls that MPICH did not keep and that clash with none of its names:
 * PMI_Spawn: maxprocs copies of cmd with argv (NULL-terminated, may be NULL), no info; the new
 * job's KVS name goes to spawned_kvsname (may be NULL; "" when the launcher does not say it:
 * lamkit's agents do, on both wires). PMI_Args_to_info: lamkit's launcher takes no arguments
 * of a program's, so argc/argv stay as they are and infop is not touched. PMI_KVS_iter_first /
 * _next: PMI_KVS_Iter_first / _next with buffers of PMI_KVS_Get_key_length_max and
 * PMI_KVS_Get_value_length_max bytes. */
int PMI_Spawn(const char *cmd, const char *argv[], const int maxprocs, char *spawned_kvsname,
              const int kvsnamelen);
int PMI_Args_to_info(int *argcp, char ***argvp, void *infop);
int PMI_KVS_iter_first(const char *kvsname, char *key, char *val);
int PMI_KVS_iter_next(const char *kvsname, char *key, char *val);

/* Old API kept for ABI: the id is the KVS name. */
int PMI_Get_id_length_max(int *length);
int PMI_Get_id(char id_str[], int length);
int PMI_Get_kvs_domain_id(char id_str[], int length);

/* lamkit extension: resources the launcher removes for the rank if it dies, the job ends or
 * aborts, and that `lamkit wipe` removes if the launcher itself was killed. kind is "shm" (a
 * POSIX shared-memory name, "/x"), "file" (an absolute path under /dev/shm or the session
 * directory's parent, the one $LAMKIT_SESSION_DIR is in) or "pid" (a helper process, in
 * decimal; it is killed, its start time checked against pid reuse). Register after creating
 * the resource; to destroy it, call release_begin, destroy it, then release_end (a crash
 * between the two still gets it removed, and nothing of a later owner's is touched after
 * release_end). Served only by lamkit's agents ($LAMKIT_SESSION_DIR set): PMI_FAIL
 * elsewhere, and as a singleton. */
int PMI_Resource_register(const char kind[], const char name[]);
int PMI_Resource_release_begin(const char kind[], const char name[]);
int PMI_Resource_release_end(const char kind[], const char name[]);

/* Topology (the PMI paper's section "Topology Information"; doc/PROTOCOL-pmi.md part 5).
 * A PMI_Group names a group of processes; PMI_GROUP_WORLD is the whole job, the only group
 * served (any other value is PMI_ERR_INVALID_ARG). lamkit's processes form a cluster: nodes
 * holding sockets holding cores.
 * PMI_Topo_type: *kind = PMI_TOPO_CLUSTER.
 * PMI_Topo_cluster_info: *levels = the number of levels known (1 to PMI_TOPO_MAX_LEVELS;
 * my_cluster[] and my_rank[] must hold PMI_TOPO_MAX_LEVELS entries), outermost first: level 0
 * the node, then, when the launcher bound the process inside one socket, that socket, and
 * inside one core, that core. my_cluster[i]: which node (0..nodes-1, in the order of each
 * node's lowest rank; -1 when unknown), socket (physical_package_id) or core (core_id within
 * the socket); my_rank[i]: this process's rank among the job's processes sharing it (0 for
 * the lowest of them).
 * PMI_Topo_mesh_info: a cluster is no mesh: PMI_ERR_UNSUPPORTED. */
typedef int PMI_Group;
#define PMI_GROUP_WORLD 0

#define PMI_TOPO_NONE       0
#define PMI_TOPO_CLUSTER    1
#define PMI_TOPO_MESH       2
#define PMI_TOPO_MAX_LEVELS 3

int PMI_Topo_type(PMI_Group group, int *kind);
int PMI_Topo_cluster_info(PMI_Group group, int *levels, int my_cluster[], int my_rank[]);
int PMI_Topo_mesh_info(PMI_Group group, int ndims, int dims[]);

/* lamkit extension: the same levels with every rank that shares each. levels[0..*nlevels)
 * outermost first, at most maxlevels (PMI_TOPO_LEVELS_MAX is enough): level, index (as
 * my_cluster[] above) and the ranks of the job that share it, ascending, me included (the
 * array is libpmi's, valid until PMI_Finalize). lamkit's agents serve it on both wires; under
 * other launchers the node level comes from the clique (PMI_process_mapping), and a singleton
 * reports its own binding. */
#define PMI_TOPO_LEVEL_NODE   0
#define PMI_TOPO_LEVEL_SOCKET 1
#define PMI_TOPO_LEVEL_CORE   2
#define PMI_TOPO_LEVELS_MAX   PMI_TOPO_MAX_LEVELS

typedef struct {
	int level;        /* PMI_TOPO_LEVEL_* */
	int index;        /* which node, socket or core (see above) */
	int nranks;       /* ranks sharing it */
	const int *ranks; /* nranks ranks, ascending */
} PMI_Topo_level_t;

int PMI_Lamkit_topo_cluster_info(PMI_Topo_level_t levels[], int maxlevels, int *nlevels);
/* lamkit extension: the node of every rank of the job, node[0..size) (size = the job's size),
 * numbered as the launcher's PMI_process_mapping numbers them. PMI_FAIL when the launcher gives
 * no mapping (a singleton, or a launcher without it): the caller then knows only its clique. */
int PMI_Topo_node_map(int node[], int size);

/* Extra KVS spaces are not served (one KVS per job): both return PMI_FAIL. */
int PMI_KVS_Create(char kvsname[], int length);
int PMI_KVS_Destroy(const char kvsname[]);
/* Walk the job KVS in insertion order; an empty key[] means the end was reached. */
int PMI_KVS_Iter_first(const char kvsname[], char key[], int key_len, char val[], int val_len);
int PMI_KVS_Iter_next(const char kvsname[], char key[], int key_len, char val[], int val_len);

/* Command-line option parsing is not provided: these report no options (PMI_FAIL). */
int PMI_Parse_option(int num_args, char *args[], int *num_parsed, PMI_keyval_t **keyvalp,
                     int *size);
int PMI_Args_to_keyval(int *argcp, char *((*argvp)[]), PMI_keyval_t **keyvalp, int *size);
/* Free size keyvals whose key and val were malloc'd (and the array itself). */
int PMI_Free_keyvals(PMI_keyval_t keyvalp[], int size);

#ifdef __cplusplus
}
#endif

#endif
