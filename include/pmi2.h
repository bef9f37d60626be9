/* include/pmi2.h: PMI-2 client API (libpmi), wire-compatible with MPICH's and Slurm's PMI-2. */
#ifndef LAMKIT_PMI2_H
#define LAMKIT_PMI2_H

/* The same libpmi serves pmi.h and pmi2.h, and one process may mix them. PMI2_Init speaks
 * PMI-2 on PMI_FD when the launcher accepts it (lamkit's agents, Slurm's srun --mpi=pmi2,
 * Hydra), PMI-1 otherwise, and runs as a singleton without PMI_FD/PMI_PORT. Not
 * thread-safe: call from one thread at a time. */

#ifdef __cplusplus
extern "C" {
#endif

#define PMI2_MAX_KEYLEN    64
#define PMI2_MAX_VALLEN    1024
#define PMI2_MAX_ATTRVALUE 1024
#define PMI2_ID_NULL       -1

#define PMI2_SUCCESS                0
#define PMI2_FAIL                   -1
#define PMI2_ERR_INIT               1
#define PMI2_ERR_NOMEM              2
#define PMI2_ERR_INVALID_ARG        3
#define PMI2_ERR_INVALID_KEY        4
#define PMI2_ERR_INVALID_KEY_LENGTH 5
#define PMI2_ERR_INVALID_VAL        6
#define PMI2_ERR_INVALID_VAL_LENGTH 7
#define PMI2_ERR_INVALID_LENGTH     8
#define PMI2_ERR_INVALID_NUM_ARGS   9
#define PMI2_ERR_INVALID_ARGS       10
#define PMI2_ERR_INVALID_NUM_PARSED 11
#define PMI2_ERR_INVALID_KEYVALP    12
#define PMI2_ERR_INVALID_SIZE       13
#define PMI2_ERR_OTHER              14

/* A key/value pair for spawn's preput and info arguments and the name service's info. */
typedef struct PMI2_keyval {
	const char *key;
	char *val;
} PMI2_keyval_t;

/* Job connection channel (MPICH's layout); PMI2_Job_Connect is not served. */
typedef struct PMI2_Connect_comm {
	int (*read)(void *buf, int maxlen, void *ctx);
	int (*write)(const void *buf, int len, void *ctx);
	void *ctx;
	int isMaster;
} PMI2_Connect_comm_t;

/* Connect and learn the job's shape. *spawned is 1 in a job started by PMI2_Job_Spawn.
 * Calling it again returns the same answers. */
int PMI2_Init(int *spawned, int *size, int *rank, int *appnum);
/* Tell the launcher we are done; close the connection. */
int PMI2_Finalize(void);
/* 1 between PMI2_Init (or PMI_Init) and finalize, else 0. */
int PMI2_Initialized(void);
/* End the job (flag != 0: the whole job) with exit code 1 and msg; does not return
 * (waits up to 30 s for the launcher, then exits). */
int PMI2_Abort(int flag, const char msg[]);

/* The job id (the KVS name); jobid_size includes the NUL. */
int PMI2_Job_GetId(char jobid[], int jobid_size);
int PMI2_Job_GetRank(int *rank);
/* Number of ranks of the job on this node. */
int PMI2_Info_GetSize(int *size);
/* Start count commands: cmds[i] with argcs[i] arguments argvs[i], maxprocs[i] copies.
 * info_keyval_sizes/info_keyval_vectors may be NULL. jobId receives the new job's id when
 * the launcher tells it; errors[] (one per process) gets 0 or the failure code. */
int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[],
                   const int maxprocs[], const int info_keyval_sizes[],
                   const PMI2_keyval_t *info_keyval_vectors[], int preput_keyval_size,
                   const PMI2_keyval_t *preput_keyval_vector[], char jobId[], int jobIdSize,
                   int errors[]);
/* Not served by lamkit: return PMI2_FAIL. */
int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn);
int PMI2_Job_Disconnect(const char jobid[]);

/* Store key=value (any bytes but NUL; at most PMI2_MAX_VALLEN - 1). Visible to every rank
 * after the next PMI2_KVS_Fence. */
int PMI2_KVS_Put(const char key[], const char value[]);
/* Collective over the job: make all earlier puts visible everywhere. */
int PMI2_KVS_Fence(void);
/* Read key from job jobid (NULL: my job). src_pmi_id is a hint and may be PMI2_ID_NULL.
 * value[maxvalue] gets the NUL-terminated value; *vallen its length (negative when
 * truncated). PMI2_FAIL when the key is missing. */
int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                 int *vallen);

/* Node attributes: shared by the ranks of one node. With waitfor != 0, GetNodeAttr blocks
 * until some rank of the node puts name. *found is 1 or 0. lamkit's agents store
 * "lamkit_topo", the node's ranks and their sockets and cores (doc/PROTOCOL-pmi.md part 5;
 * PMI_Topo_cluster_info in pmi.h reads it for you); it is found on a PMI-1 wire to lamkit
 * and as a singleton too. */
int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found, int waitfor);
int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                  int *found);
int PMI2_Info_PutNodeAttr(const char name[], const char value[]);
/* Job attributes: "PMI_process_mapping", "universeSize" (and other PMI_* keys the launcher
 * stored). */
int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found);
int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                 int *found);

/* Name service (info_ptr is ignored and may be NULL). */
int PMI2_Nameserv_publish(const char service_name[], const PMI2_keyval_t *info_ptr,
                          const char port[]);
int PMI2_Nameserv_lookup(const char service_name[], const PMI2_keyval_t *info_ptr, char port[],
                         int portLen);
int PMI2_Nameserv_unpublish(const char service_name[], const PMI2_keyval_t *info_ptr);

#ifdef __cplusplus
}
#endif

#endif
