/* include/mpi.h: lamkit's MPI C interface (MPI-1 core plus everyday MPI-2.x routines). */
#ifndef LAMKIT_MPI_H
#define LAMKIT_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION    2
#define MPI_SUBVERSION 2
#define LAMKIT_MPI     1

/* Handles: small integers indexing the library's tables, except requests (pointers). */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef long MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;
typedef struct lk_request *MPI_Request;
typedef int MPI_Win;
typedef int MPI_File; /* MPI-IO (the section "MPI-IO" below) */

typedef struct MPI_Status {
	int MPI_SOURCE;
	int MPI_TAG;
	int MPI_ERROR;
	int lk_cancelled;
	long long lk_count; /* bytes received */
} MPI_Status;

#define MPI_COMM_NULL        0
#define MPI_COMM_WORLD       1
#define MPI_COMM_SELF        2
#define MPI_GROUP_NULL       0
#define MPI_GROUP_EMPTY      1
#define MPI_ERRHANDLER_NULL  0
#define MPI_ERRORS_ARE_FATAL 1
#define MPI_ERRORS_RETURN    2
#define MPI_INFO_NULL        0
#define MPI_INFO_ENV         1
#define MPI_REQUEST_NULL     ((MPI_Request)0)
#define MPI_WIN_NULL         ((MPI_Win)0)

/* Predefined datatypes. */
#define MPI_DATATYPE_NULL          0
#define MPI_CHAR                   1
#define MPI_SIGNED_CHAR            2
#define MPI_UNSIGNED_CHAR          3
#define MPI_BYTE                   4
#define MPI_WCHAR                  5
#define MPI_SHORT                  6
#define MPI_UNSIGNED_SHORT         7
#define MPI_INT                    8
#define MPI_UNSIGNED               9
#define MPI_LONG                   10
#define MPI_UNSIGNED_LONG          11
#define MPI_LONG_LONG_INT          12
#define MPI_LONG_LONG              MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG     13
#define MPI_FLOAT                  14
#define MPI_DOUBLE                 15
#define MPI_LONG_DOUBLE            16
#define MPI_PACKED                 17
#define MPI_LB                     18
#define MPI_UB                     19
#define MPI_FLOAT_INT              20
#define MPI_DOUBLE_INT             21
#define MPI_LONG_INT               22
#define MPI_SHORT_INT              23
#define MPI_2INT                   24
#define MPI_LONG_DOUBLE_INT        25
#define MPI_INT8_T                 26
#define MPI_INT16_T                27
#define MPI_INT32_T                28
#define MPI_INT64_T                29
#define MPI_UINT8_T                30
#define MPI_UINT16_T               31
#define MPI_UINT32_T               32
#define MPI_UINT64_T               33
#define MPI_C_BOOL                 34
#define MPI_AINT                   35
#define MPI_OFFSET                 36
#define MPI_COUNT                  37
#define MPI_C_FLOAT_COMPLEX        38
#define MPI_C_COMPLEX              MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX       39
#define MPI_C_LONG_DOUBLE_COMPLEX  40
#define MPI_UNSIGNED_LONG_LONG_INT MPI_UNSIGNED_LONG_LONG
/* Fortran and C++ types, usable from C (same layouts as the C types they name). */
#define MPI_INTEGER                 41
#define MPI_REAL                    42
#define MPI_DOUBLE_PRECISION        43
#define MPI_COMPLEX                 44
#define MPI_DOUBLE_COMPLEX          45
#define MPI_LOGICAL                 46
#define MPI_CHARACTER               47
#define MPI_2INTEGER                48
#define MPI_2REAL                   49
#define MPI_2DOUBLE_PRECISION       50
#define MPI_INTEGER1                51
#define MPI_INTEGER2                52
#define MPI_INTEGER4                53
#define MPI_INTEGER8                54
#define MPI_REAL4                   55
#define MPI_REAL8                   56
#define MPI_COMPLEX8                57
#define MPI_COMPLEX16               58
#define MPI_CXX_BOOL                59
#define MPI_CXX_FLOAT_COMPLEX       60
#define MPI_CXX_DOUBLE_COMPLEX      61
#define MPI_CXX_LONG_DOUBLE_COMPLEX 62
/* Optional types without a C counterpart here. */
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define MPI_REAL2     MPI_DATATYPE_NULL
#define MPI_REAL16    MPI_DATATYPE_NULL
#define MPI_COMPLEX4  MPI_DATATYPE_NULL
#define MPI_COMPLEX32 MPI_DATATYPE_NULL

/* Reduction operations. */
#define MPI_OP_NULL 0
#define MPI_MAX     1
#define MPI_MIN     2
#define MPI_SUM     3
#define MPI_PROD    4
#define MPI_LAND    5
#define MPI_BAND    6
#define MPI_LOR     7
#define MPI_BOR     8
#define MPI_LXOR    9
#define MPI_BXOR    10
#define MPI_MINLOC  11
#define MPI_MAXLOC  12
#define MPI_REPLACE 13
#define MPI_NO_OP   14

/* Error classes. */
#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_REQUEST               7
#define MPI_ERR_ROOT                  8
#define MPI_ERR_GROUP                 9
#define MPI_ERR_OP                    10
#define MPI_ERR_TOPOLOGY              11
#define MPI_ERR_DIMS                  12
#define MPI_ERR_ARG                   13
#define MPI_ERR_UNKNOWN               14
#define MPI_ERR_TRUNCATE              15
#define MPI_ERR_OTHER                 16
#define MPI_ERR_INTERN                17
#define MPI_ERR_IN_STATUS             18
#define MPI_ERR_PENDING               19
#define MPI_ERR_KEYVAL                20
#define MPI_ERR_NO_MEM                21
#define MPI_ERR_BASE                  22
#define MPI_ERR_INFO_KEY              23
#define MPI_ERR_INFO_VALUE            24
#define MPI_ERR_INFO_NOKEY            25
#define MPI_ERR_SPAWN                 26
#define MPI_ERR_PORT                  27
#define MPI_ERR_SERVICE               28
#define MPI_ERR_NAME                  29
#define MPI_ERR_WIN                   30
#define MPI_ERR_SIZE                  31
#define MPI_ERR_DISP                  32
#define MPI_ERR_INFO                  33
#define MPI_ERR_LOCKTYPE              34
#define MPI_ERR_ASSERT                35
#define MPI_ERR_RMA_CONFLICT          36
#define MPI_ERR_RMA_SYNC              37
#define MPI_ERR_FILE                  38
#define MPI_ERR_NOT_SAME              39
#define MPI_ERR_UNSUPPORTED_OPERATION 40
#define MPI_ERR_RMA_RANGE             41
#define MPI_ERR_RMA_ATTACH            42
#define MPI_ERR_RMA_SHARED            43
#define MPI_ERR_RMA_FLAVOR            44
/* A process an operation involves has failed (the ULFM proposal; lamkit: mpiexec
 * --on-node-failure continue, doc/PROTOCOL-agent.md). MPIX_ is the proposal's own name. */
#define MPI_ERR_PROC_FAILED  54
#define MPIX_ERR_PROC_FAILED MPI_ERR_PROC_FAILED
#define MPI_ERR_LASTCODE     63

/* MPI-IO error classes. */
#define MPI_ERR_ACCESS              45
#define MPI_ERR_AMODE               46
#define MPI_ERR_BAD_FILE            47
#define MPI_ERR_CONVERSION          48
#define MPI_ERR_DUP_DATAREP         49
#define MPI_ERR_FILE_EXISTS         50
#define MPI_ERR_FILE_IN_USE         51
#define MPI_ERR_IO                  52
#define MPI_ERR_NO_SPACE            53
#define MPI_ERR_NO_SUCH_FILE        54
#define MPI_ERR_QUOTA               55
#define MPI_ERR_READ_ONLY           56
#define MPI_ERR_UNSUPPORTED_DATAREP 57

/* Miscellaneous constants. */
#define MPI_ANY_SOURCE                 (-1)
#define MPI_ANY_TAG                    (-1)
#define MPI_PROC_NULL                  (-2)
#define MPI_ROOT                       (-3)
#define MPI_UNDEFINED                  (-32766)
#define MPI_KEYVAL_INVALID             0
#define MPI_TAG_UB                     1
#define MPI_HOST                       2
#define MPI_IO                         3
#define MPI_WTIME_IS_GLOBAL            4
#define MPI_UNIVERSE_SIZE              5
#define MPI_APPNUM                     6
#define MPI_LASTUSEDCODE               7
#define MPI_WIN_BASE                   8
#define MPI_WIN_SIZE                   9
#define MPI_WIN_DISP_UNIT              10
#define MPI_WIN_CREATE_FLAVOR          11
#define MPI_WIN_MODEL                  12
#define MPI_IDENT                      0
#define MPI_CONGRUENT                  1
#define MPI_SIMILAR                    2
#define MPI_UNEQUAL                    3
#define MPI_MAX_PROCESSOR_NAME         256
#define MPI_MAX_ERROR_STRING           256
#define MPI_MAX_OBJECT_NAME            128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY               255
#define MPI_MAX_INFO_VAL               1024
#define MPI_MAX_PORT_NAME              256
#define MPI_CART                       1
#define MPI_GRAPH                      2
#define MPI_DIST_GRAPH                 3
#define MPI_COMM_TYPE_SHARED           1
/* Open MPI's names for narrower split types: the ranks the launcher bound to my socket or my
 * core (lamkit mpiexec --bind-to core); a rank not bound to one gets MPI_COMM_NULL. */
#define OMPI_COMM_TYPE_NODE   MPI_COMM_TYPE_SHARED
#define OMPI_COMM_TYPE_SOCKET 8
#define OMPI_COMM_TYPE_CORE   9
#define MPI_BSEND_OVERHEAD    64
#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3
#define MPI_BOTTOM            ((void *)0)
#define MPI_IN_PLACE          ((void *)-1)
#define MPI_STATUS_IGNORE     ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE   ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE   ((int *)0)
#define MPI_UNWEIGHTED        ((int *)1)
#define MPI_WEIGHTS_EMPTY     ((int *)2)
#define MPI_ARGV_NULL         ((char **)0)
#define MPI_ARGVS_NULL        ((char ***)0)

/* One-sided communication. */
#define MPI_LOCK_EXCLUSIVE      234
#define MPI_LOCK_SHARED         235
#define MPI_MODE_NOCHECK        1024
#define MPI_MODE_NOSTORE        2048
#define MPI_MODE_NOPUT          4096
#define MPI_MODE_NOPRECEDE      8192
#define MPI_MODE_NOSUCCEED      16384
#define MPI_WIN_FLAVOR_CREATE   1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC  3
#define MPI_WIN_FLAVOR_SHARED   4
#define MPI_WIN_SEPARATE        1
#define MPI_WIN_UNIFIED         2

/* Datatype combiners (MPI_Type_get_envelope). */
#define MPI_COMBINER_NAMED            1
#define MPI_COMBINER_DUP              2
#define MPI_COMBINER_CONTIGUOUS       3
#define MPI_COMBINER_VECTOR           4
#define MPI_COMBINER_HVECTOR_INTEGER  5
#define MPI_COMBINER_HVECTOR          6
#define MPI_COMBINER_INDEXED          7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED         9
#define MPI_COMBINER_INDEXED_BLOCK    10
#define MPI_COMBINER_STRUCT_INTEGER   11
#define MPI_COMBINER_STRUCT           12
#define MPI_COMBINER_SUBARRAY         13
#define MPI_COMBINER_DARRAY           14
#define MPI_COMBINER_RESIZED          18
#define MPI_COMBINER_HINDEXED_BLOCK   19
#define MPI_COMBINER_F90_REAL         15
#define MPI_COMBINER_F90_COMPLEX      16
#define MPI_COMBINER_F90_INTEGER      17
#define MPI_ORDER_C                   56
#define MPI_ORDER_FORTRAN             57
#define MPI_DISTRIBUTE_BLOCK          121
#define MPI_DISTRIBUTE_CYCLIC         122
#define MPI_DISTRIBUTE_NONE           123
#define MPI_DISTRIBUTE_DFLT_DARG      (-49767)
#define MPI_TYPECLASS_REAL            1
#define MPI_TYPECLASS_INTEGER         2
#define MPI_TYPECLASS_COMPLEX         3

/* Callback types. */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *type);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *code, ...);
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef int MPI_Comm_copy_attr_function(MPI_Comm comm, int keyval, void *extra, void *in, void *out,
                                        int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int keyval, void *val, void *extra);
typedef int MPI_Type_copy_attr_function(MPI_Datatype type, int keyval, void *extra, void *in,
                                        void *out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype type, int keyval, void *val, void *extra);
typedef int MPI_Grequest_query_function(void *extra, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra);
typedef int MPI_Grequest_cancel_function(void *extra, int complete);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *code, ...);
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef int MPI_Win_copy_attr_function(MPI_Win win, int keyval, void *extra, void *in, void *out,
                                       int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int keyval, void *val, void *extra);

int lk_mpi_null_copy_fn(MPI_Comm, int, void *, void *, void *, int *);
int lk_mpi_dup_fn(MPI_Comm, int, void *, void *, void *, int *);
int lk_mpi_null_delete_fn(MPI_Comm, int, void *, void *);
int lk_mpi_type_null_copy_fn(MPI_Datatype, int, void *, void *, void *, int *);
int lk_mpi_type_dup_fn(MPI_Datatype, int, void *, void *, void *, int *);
int lk_mpi_type_null_delete_fn(MPI_Datatype, int, void *, void *);
#define MPI_NULL_COPY_FN        lk_mpi_null_copy_fn
#define MPI_DUP_FN              lk_mpi_dup_fn
#define MPI_NULL_DELETE_FN      lk_mpi_null_delete_fn
#define MPI_COMM_NULL_COPY_FN   lk_mpi_null_copy_fn
#define MPI_COMM_DUP_FN         lk_mpi_dup_fn
#define MPI_COMM_NULL_DELETE_FN lk_mpi_null_delete_fn
#define MPI_TYPE_NULL_COPY_FN   lk_mpi_type_null_copy_fn
#define MPI_TYPE_DUP_FN         lk_mpi_type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN lk_mpi_type_null_delete_fn
/* Handles of every kind are ints, so the communicator callbacks serve windows too. */
#define MPI_WIN_NULL_COPY_FN   lk_mpi_null_copy_fn
#define MPI_WIN_DUP_FN         lk_mpi_dup_fn
#define MPI_WIN_NULL_DELETE_FN lk_mpi_null_delete_fn

/* Every routine exists as MPI_x and as its profiling name PMPI_x. */
#define LK_MPI_FN(name, args)                                                                      \
	int MPI_##name args;                                                                       \
	int PMPI_##name args;

/* Environment and errors. */
LK_MPI_FN(Init, (int *argc, char ***argv))
LK_MPI_FN(Init_thread, (int *argc, char ***argv, int required, int *provided))
LK_MPI_FN(Initialized, (int *flag))
LK_MPI_FN(Finalize, (void))
LK_MPI_FN(Finalized, (int *flag))
LK_MPI_FN(Query_thread, (int *provided))
LK_MPI_FN(Is_thread_main, (int *flag))
LK_MPI_FN(Abort, (MPI_Comm comm, int code))
LK_MPI_FN(Get_version, (int *version, int *subversion))
LK_MPI_FN(Get_library_version, (char *version, int *len))
LK_MPI_FN(Get_processor_name, (char *name, int *len))
LK_MPI_FN(Pcontrol, (const int level, ...))
LK_MPI_FN(Error_class, (int code, int *cls))
LK_MPI_FN(Error_string, (int code, char *str, int *len))
LK_MPI_FN(Add_error_class, (int *cls))
LK_MPI_FN(Add_error_code, (int cls, int *code))
LK_MPI_FN(Add_error_string, (int code, const char *str))
/* Failed processes, as the ULFM proposal names the calls (mpiexec --on-node-failure continue):
 * acknowledge the failures known now; the group of those acknowledged; of all known. */
int MPIX_Comm_failure_ack(MPI_Comm comm);
int PMPIX_Comm_failure_ack(MPI_Comm comm);
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failed);
int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failed);
int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failed);
int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failed);
LK_MPI_FN(Comm_create_errhandler, (MPI_Comm_errhandler_function * fn, MPI_Errhandler *eh))
LK_MPI_FN(Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler eh))
LK_MPI_FN(Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *eh))
LK_MPI_FN(Comm_call_errhandler, (MPI_Comm comm, int code))
LK_MPI_FN(Errhandler_create, (MPI_Handler_function * fn, MPI_Errhandler *eh))
LK_MPI_FN(Errhandler_set, (MPI_Comm comm, MPI_Errhandler eh))
LK_MPI_FN(Errhandler_get, (MPI_Comm comm, MPI_Errhandler *eh))
LK_MPI_FN(Errhandler_free, (MPI_Errhandler * eh))
LK_MPI_FN(Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
LK_MPI_FN(Free_mem, (void *base))
double MPI_Wtime(void);
double PMPI_Wtime(void);
double MPI_Wtick(void);
double PMPI_Wtick(void);

/* Point-to-point. */
LK_MPI_FN(Send, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm))
LK_MPI_FN(Recv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                 MPI_Status *status))
LK_MPI_FN(Bsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm))
LK_MPI_FN(Ssend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm))
LK_MPI_FN(Rsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm))
LK_MPI_FN(Isend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req))
LK_MPI_FN(Ibsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req))
LK_MPI_FN(Issend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req))
LK_MPI_FN(Irsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req))
LK_MPI_FN(Irecv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *req))
LK_MPI_FN(Send_init, (const void *buf, int count, MPI_Datatype type, int dest, int tag,
                      MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Bsend_init, (const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ssend_init, (const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Rsend_init, (const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Recv_init, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                      MPI_Request *req))
LK_MPI_FN(Start, (MPI_Request * req))
LK_MPI_FN(Startall, (int n, MPI_Request reqs[]))
LK_MPI_FN(Sendrecv,
          (const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
           int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status))
LK_MPI_FN(Sendrecv_replace, (void *buf, int count, MPI_Datatype type, int dest, int stag,
                             int source, int rtag, MPI_Comm comm, MPI_Status *status))
LK_MPI_FN(Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
LK_MPI_FN(Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
LK_MPI_FN(Wait, (MPI_Request * req, MPI_Status *status))
LK_MPI_FN(Waitall, (int n, MPI_Request reqs[], MPI_Status *statuses))
LK_MPI_FN(Waitany, (int n, MPI_Request reqs[], int *index, MPI_Status *status))
LK_MPI_FN(Waitsome, (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *statuses))
LK_MPI_FN(Test, (MPI_Request * req, int *flag, MPI_Status *status))
LK_MPI_FN(Testall, (int n, MPI_Request reqs[], int *flag, MPI_Status *statuses))
LK_MPI_FN(Testany, (int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status))
LK_MPI_FN(Testsome, (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *statuses))
LK_MPI_FN(Request_get_status, (MPI_Request req, int *flag, MPI_Status *status))
LK_MPI_FN(Cancel, (MPI_Request * req))
LK_MPI_FN(Test_cancelled, (const MPI_Status *status, int *flag))
LK_MPI_FN(Request_free, (MPI_Request * req))
LK_MPI_FN(Get_count, (const MPI_Status *status, MPI_Datatype type, int *count))
LK_MPI_FN(Get_elements, (const MPI_Status *status, MPI_Datatype type, int *count))
LK_MPI_FN(Status_set_elements, (MPI_Status * status, MPI_Datatype type, int count))
LK_MPI_FN(Status_set_cancelled, (MPI_Status * status, int flag))
LK_MPI_FN(Grequest_start, (MPI_Grequest_query_function * query, MPI_Grequest_free_function *free_fn,
                           MPI_Grequest_cancel_function *cancel, void *extra, MPI_Request *req))
LK_MPI_FN(Grequest_complete, (MPI_Request req))
LK_MPI_FN(Buffer_attach, (void *buf, int size))
LK_MPI_FN(Buffer_detach, (void *bufp, int *size))

/* Collectives. */
LK_MPI_FN(Barrier, (MPI_Comm comm))
LK_MPI_FN(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm))
LK_MPI_FN(Gather, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, int root, MPI_Comm comm))
LK_MPI_FN(Gatherv,
          (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
           const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm))
LK_MPI_FN(Scatter, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm))
LK_MPI_FN(Scatterv, (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                     void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm))
LK_MPI_FN(Allgather, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm))
LK_MPI_FN(Allgatherv, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm))
LK_MPI_FN(Alltoall, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, MPI_Comm comm))
LK_MPI_FN(Alltoallv,
          (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
           void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm))
LK_MPI_FN(Alltoallw, (const void *sbuf, const int scounts[], const int sdispls[],
                      const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                      const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm))
LK_MPI_FN(Reduce, (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                   MPI_Comm comm))
LK_MPI_FN(Allreduce,
          (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm))
LK_MPI_FN(Reduce_local, (const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op))
LK_MPI_FN(Reduce_scatter, (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                           MPI_Op op, MPI_Comm comm))
LK_MPI_FN(Reduce_scatter_block,
          (const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm))
LK_MPI_FN(Scan,
          (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm))
LK_MPI_FN(Exscan,
          (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm))
/* MPI-3 nonblocking collectives (intracommunicators). */
LK_MPI_FN(Ibarrier, (MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ibcast,
          (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Igather, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Igatherv,
          (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
           const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Iscatter, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Iscatterv,
          (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
           void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Iallgather, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Iallgatherv,
          (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
           const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ialltoall, (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ialltoallv, (const void *sbuf, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ialltoallw,
          (const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
           void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
           MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ireduce, (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Iallreduce, (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ireduce_scatter, (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Ireduce_scatter_block, (const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Iscan, (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Request *req))
LK_MPI_FN(Iexscan, (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Request *req))
/* One-sided communication (windows whose ranks share one node). */
LK_MPI_FN(Win_create,
          (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
LK_MPI_FN(Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
LK_MPI_FN(Win_attach, (MPI_Win win, void *base, MPI_Aint size))
LK_MPI_FN(Win_detach, (MPI_Win win, const void *base))
LK_MPI_FN(Win_allocate,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
LK_MPI_FN(Win_allocate_shared,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
LK_MPI_FN(Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
LK_MPI_FN(Win_free, (MPI_Win * win))
LK_MPI_FN(Win_get_group, (MPI_Win win, MPI_Group *group))
LK_MPI_FN(Win_create_keyval, (MPI_Win_copy_attr_function * copy, MPI_Win_delete_attr_function *del,
                              int *keyval, void *extra))
LK_MPI_FN(Win_free_keyval, (int *keyval))
LK_MPI_FN(Win_set_attr, (MPI_Win win, int keyval, void *val))
LK_MPI_FN(Win_get_attr, (MPI_Win win, int key, void *val, int *flag))
LK_MPI_FN(Win_delete_attr, (MPI_Win win, int keyval))
LK_MPI_FN(Win_set_name, (MPI_Win win, const char *name))
LK_MPI_FN(Win_get_name, (MPI_Win win, char *name, int *len))
LK_MPI_FN(Win_create_errhandler, (MPI_Win_errhandler_function * fn, MPI_Errhandler *eh))
LK_MPI_FN(Win_set_errhandler, (MPI_Win win, MPI_Errhandler eh))
LK_MPI_FN(Win_get_errhandler, (MPI_Win win, MPI_Errhandler *eh))
LK_MPI_FN(Win_call_errhandler, (MPI_Win win, int code))
LK_MPI_FN(Win_set_info, (MPI_Win win, MPI_Info info))
LK_MPI_FN(Win_get_info, (MPI_Win win, MPI_Info *info))
LK_MPI_FN(Win_fence, (int assert, MPI_Win win))
LK_MPI_FN(Win_post, (MPI_Group group, int assert, MPI_Win win))
LK_MPI_FN(Win_start, (MPI_Group group, int assert, MPI_Win win))
LK_MPI_FN(Win_complete, (MPI_Win win))
LK_MPI_FN(Win_wait, (MPI_Win win))
LK_MPI_FN(Win_test, (MPI_Win win, int *flag))
LK_MPI_FN(Win_lock, (int type, int rank, int assert, MPI_Win win))
LK_MPI_FN(Win_unlock, (int rank, MPI_Win win))
LK_MPI_FN(Win_lock_all, (int assert, MPI_Win win))
LK_MPI_FN(Win_unlock_all, (MPI_Win win))
LK_MPI_FN(Win_flush, (int rank, MPI_Win win))
LK_MPI_FN(Win_flush_all, (MPI_Win win))
LK_MPI_FN(Win_flush_local, (int rank, MPI_Win win))
LK_MPI_FN(Win_flush_local_all, (MPI_Win win))
LK_MPI_FN(Win_sync, (MPI_Win win))
LK_MPI_FN(Put, (const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                int tcount, MPI_Datatype ttype, MPI_Win win))
LK_MPI_FN(Get, (void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                MPI_Datatype ttype, MPI_Win win))
LK_MPI_FN(Accumulate, (const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                       int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win))
LK_MPI_FN(Get_accumulate, (const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount,
                           MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                           MPI_Datatype ttype, MPI_Op op, MPI_Win win))
LK_MPI_FN(Fetch_and_op, (const void *obuf, void *rbuf, MPI_Datatype type, int target,
                         MPI_Aint tdisp, MPI_Op op, MPI_Win win))
LK_MPI_FN(Compare_and_swap, (const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype type,
                             int target, MPI_Aint tdisp, MPI_Win win))
LK_MPI_FN(Rput, (const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                 int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req))
LK_MPI_FN(Rget, (void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                 MPI_Datatype ttype, MPI_Win win, MPI_Request *req))
LK_MPI_FN(Raccumulate,
          (const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
           MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req))
LK_MPI_FN(Rget_accumulate, (const void *obuf, int ocount, MPI_Datatype otype, void *rbuf,
                            int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                            MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req))

LK_MPI_FN(Op_create, (MPI_User_function * fn, int commute, MPI_Op *op))
LK_MPI_FN(Op_free, (MPI_Op * op))
LK_MPI_FN(Op_commutative, (MPI_Op op, int *commute))

/* Groups and communicators. */
LK_MPI_FN(Comm_group, (MPI_Comm comm, MPI_Group *group))
LK_MPI_FN(Group_size, (MPI_Group group, int *size))
LK_MPI_FN(Group_rank, (MPI_Group group, int *rank))
LK_MPI_FN(Group_translate_ranks, (MPI_Group g1, int n, const int r1[], MPI_Group g2, int r2[]))
LK_MPI_FN(Group_compare, (MPI_Group g1, MPI_Group g2, int *result))
LK_MPI_FN(Group_union, (MPI_Group g1, MPI_Group g2, MPI_Group *out))
LK_MPI_FN(Group_intersection, (MPI_Group g1, MPI_Group g2, MPI_Group *out))
LK_MPI_FN(Group_difference, (MPI_Group g1, MPI_Group g2, MPI_Group *out))
LK_MPI_FN(Group_incl, (MPI_Group g, int n, const int ranks[], MPI_Group *out))
LK_MPI_FN(Group_excl, (MPI_Group g, int n, const int ranks[], MPI_Group *out))
LK_MPI_FN(Group_range_incl, (MPI_Group g, int n, int ranges[][3], MPI_Group *out))
LK_MPI_FN(Group_range_excl, (MPI_Group g, int n, int ranges[][3], MPI_Group *out))
LK_MPI_FN(Group_free, (MPI_Group * group))
LK_MPI_FN(Comm_size, (MPI_Comm comm, int *size))
LK_MPI_FN(Comm_rank, (MPI_Comm comm, int *rank))
LK_MPI_FN(Comm_dup, (MPI_Comm comm, MPI_Comm *out))
LK_MPI_FN(Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *out))
LK_MPI_FN(Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *out))
LK_MPI_FN(Comm_compare, (MPI_Comm c1, MPI_Comm c2, int *result))
LK_MPI_FN(Comm_free, (MPI_Comm * comm))
LK_MPI_FN(Comm_set_name, (MPI_Comm comm, const char *name))
LK_MPI_FN(Comm_get_name, (MPI_Comm comm, char *name, int *len))
LK_MPI_FN(Comm_test_inter, (MPI_Comm comm, int *flag))
LK_MPI_FN(Comm_remote_size, (MPI_Comm comm, int *size))
LK_MPI_FN(Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
LK_MPI_FN(Intercomm_create,
          (MPI_Comm local, int lleader, MPI_Comm peer, int rleader, int tag, MPI_Comm *out))
LK_MPI_FN(Intercomm_merge, (MPI_Comm inter, int high, MPI_Comm *out))

/* Topologies, node-local split, info objects. */
LK_MPI_FN(Dims_create, (int nnodes, int ndims, int dims[]))
LK_MPI_FN(Cart_create, (MPI_Comm old, int ndims, const int dims[], const int periods[], int reorder,
                        MPI_Comm *out))
LK_MPI_FN(Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
LK_MPI_FN(Cartdim_get, (MPI_Comm comm, int *ndims))
LK_MPI_FN(Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
LK_MPI_FN(Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
LK_MPI_FN(Cart_shift, (MPI_Comm comm, int direction, int disp, int *source, int *dest))
LK_MPI_FN(Cart_sub, (MPI_Comm comm, const int remain[], MPI_Comm *out))
LK_MPI_FN(Topo_test, (MPI_Comm comm, int *status))
LK_MPI_FN(Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank))
LK_MPI_FN(Graph_create, (MPI_Comm old, int nnodes, const int index[], const int edges[],
                         int reorder, MPI_Comm *out))
LK_MPI_FN(Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
LK_MPI_FN(Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
LK_MPI_FN(Graph_neighbors_count, (MPI_Comm comm, int rank, int *n))
LK_MPI_FN(Graph_neighbors, (MPI_Comm comm, int rank, int maxn, int neighbors[]))
LK_MPI_FN(Graph_map,
          (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank))
LK_MPI_FN(Dist_graph_create_adjacent,
          (MPI_Comm old, int indegree, const int sources[], const int sourceweights[],
           int outdegree, const int destinations[], const int destweights[], MPI_Info info,
           int reorder, MPI_Comm *out))
LK_MPI_FN(Dist_graph_create,
          (MPI_Comm old, int n, const int sources[], const int degrees[], const int destinations[],
           const int weights[], MPI_Info info, int reorder, MPI_Comm *out))
LK_MPI_FN(Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))
LK_MPI_FN(Dist_graph_neighbors, (MPI_Comm comm, int maxin, int sources[], int sourceweights[],
                                 int maxout, int destinations[], int destweights[]))
LK_MPI_FN(Comm_get_parent, (MPI_Comm * parent))
LK_MPI_FN(Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                       MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))
LK_MPI_FN(Comm_spawn_multiple,
          (int count, char *array_of_commands[], char **array_of_argv[],
           const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
           MPI_Comm *intercomm, int array_of_errcodes[]))
LK_MPI_FN(Open_port, (MPI_Info info, char *port_name))
LK_MPI_FN(Close_port, (const char *port_name))
LK_MPI_FN(Comm_accept,
          (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
LK_MPI_FN(Comm_connect,
          (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
LK_MPI_FN(Comm_disconnect, (MPI_Comm * comm))
LK_MPI_FN(Comm_join, (int fd, MPI_Comm *intercomm))
LK_MPI_FN(Publish_name, (const char *service_name, MPI_Info info, const char *port_name))
LK_MPI_FN(Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name))
LK_MPI_FN(Lookup_name, (const char *service_name, MPI_Info info, char *port_name))
LK_MPI_FN(Comm_split_type, (MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out))
LK_MPI_FN(Info_create, (MPI_Info * info))
LK_MPI_FN(Info_set, (MPI_Info info, const char *key, const char *value))
LK_MPI_FN(Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
LK_MPI_FN(Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
LK_MPI_FN(Info_delete, (MPI_Info info, const char *key))
LK_MPI_FN(Info_get_nkeys, (MPI_Info info, int *nkeys))
LK_MPI_FN(Info_get_nthkey, (MPI_Info info, int n, char *key))
LK_MPI_FN(Info_dup, (MPI_Info info, MPI_Info *out))
LK_MPI_FN(Info_free, (MPI_Info * info))

/* Datatypes. */
LK_MPI_FN(Type_contiguous, (int count, MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_vector, (int count, int blen, int stride, MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_hvector, (int count, int blen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_create_hvector,
          (int count, int blen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_indexed,
          (int count, const int blens[], const int displs[], MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_hindexed, (int count, const int blens[], const MPI_Aint displs[], MPI_Datatype old,
                          MPI_Datatype *out))
LK_MPI_FN(Type_create_hindexed, (int count, const int blens[], const MPI_Aint displs[],
                                 MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_create_indexed_block,
          (int count, int blen, const int displs[], MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_struct, (int count, const int blens[], const MPI_Aint displs[],
                        const MPI_Datatype types[], MPI_Datatype *out))
LK_MPI_FN(Type_create_struct, (int count, const int blens[], const MPI_Aint displs[],
                               const MPI_Datatype types[], MPI_Datatype *out))
LK_MPI_FN(Type_create_resized, (MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out))
LK_MPI_FN(Type_dup, (MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_create_subarray,
          (int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
           MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_create_darray,
          (int size, int rank, int ndims, const int gsizes[], const int distribs[],
           const int dargs[], const int psizes[], int order, MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_match_size, (int typeclass, int size, MPI_Datatype *type))
/* The type matching Fortran's SELECTED_REAL_KIND(p, r) / SELECTED_INT_KIND(r): a type of its own
 * per argument set, whose envelope is MPI_COMBINER_F90_REAL, _COMPLEX or _INTEGER. */
LK_MPI_FN(Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
LK_MPI_FN(Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
LK_MPI_FN(Type_create_f90_integer, (int r, MPI_Datatype *newtype))
LK_MPI_FN(Type_commit, (MPI_Datatype * type))
LK_MPI_FN(Type_free, (MPI_Datatype * type))
LK_MPI_FN(Type_size, (MPI_Datatype type, int *size))
LK_MPI_FN(Type_extent, (MPI_Datatype type, MPI_Aint *extent))
LK_MPI_FN(Type_lb, (MPI_Datatype type, MPI_Aint *lb))
LK_MPI_FN(Type_ub, (MPI_Datatype type, MPI_Aint *ub))
LK_MPI_FN(Type_get_extent, (MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent))
LK_MPI_FN(Type_get_true_extent, (MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent))
LK_MPI_FN(Type_get_envelope,
          (MPI_Datatype type, int *nints, int *naddrs, int *ntypes, int *combiner))
LK_MPI_FN(Type_get_contents, (MPI_Datatype type, int maxints, int maxaddrs, int maxtypes,
                              int ints[], MPI_Aint addrs[], MPI_Datatype types[]))
LK_MPI_FN(Type_set_name, (MPI_Datatype type, const char *name))
LK_MPI_FN(Type_get_name, (MPI_Datatype type, char *name, int *len))
LK_MPI_FN(Get_address, (const void *loc, MPI_Aint *addr))
LK_MPI_FN(Address, (void *loc, MPI_Aint *addr))
/* MPI-3.1 address arithmetic: base + disp, and the distance addr1 - addr2, for addresses from
 * MPI_Get_address (wrapping as unsigned machine addresses do). */
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
LK_MPI_FN(Pack, (const void *in, int count, MPI_Datatype type, void *out, int outsize, int *pos,
                 MPI_Comm comm))
LK_MPI_FN(Unpack, (const void *in, int insize, int *pos, void *out, int count, MPI_Datatype type,
                   MPI_Comm comm))
LK_MPI_FN(Pack_size, (int count, MPI_Datatype type, MPI_Comm comm, int *size))
LK_MPI_FN(Pack_external, (const char datarep[], const void *in, int count, MPI_Datatype type,
                          void *out, MPI_Aint outsize, MPI_Aint *pos))
LK_MPI_FN(Unpack_external, (const char datarep[], const void *in, MPI_Aint insize, MPI_Aint *pos,
                            void *out, int count, MPI_Datatype type))
LK_MPI_FN(Pack_external_size, (const char datarep[], int count, MPI_Datatype type, MPI_Aint *size))
/* MPI-3 datatype routines (lib/mpi/mpi_dtype_x.c). */
LK_MPI_FN(Type_create_hindexed_block,
          (int count, int blen, const MPI_Aint displs[], MPI_Datatype old, MPI_Datatype *out))
LK_MPI_FN(Type_size_x, (MPI_Datatype type, MPI_Count *size))
LK_MPI_FN(Type_get_extent_x, (MPI_Datatype type, MPI_Count *lb, MPI_Count *extent))
LK_MPI_FN(Type_get_true_extent_x, (MPI_Datatype type, MPI_Count *lb, MPI_Count *extent))
LK_MPI_FN(Get_elements_x, (const MPI_Status *status, MPI_Datatype type, MPI_Count *count))
LK_MPI_FN(Status_set_elements_x, (MPI_Status * status, MPI_Datatype type, MPI_Count count))

/* Attributes. */
LK_MPI_FN(Comm_create_keyval, (MPI_Comm_copy_attr_function * copy,
                               MPI_Comm_delete_attr_function *del, int *keyval, void *extra))
LK_MPI_FN(Comm_free_keyval, (int *keyval))
LK_MPI_FN(Comm_set_attr, (MPI_Comm comm, int keyval, void *val))
LK_MPI_FN(Comm_get_attr, (MPI_Comm comm, int keyval, void *val, int *flag))
LK_MPI_FN(Comm_delete_attr, (MPI_Comm comm, int keyval))
LK_MPI_FN(Type_create_keyval, (MPI_Type_copy_attr_function * copy,
                               MPI_Type_delete_attr_function *del, int *keyval, void *extra))
LK_MPI_FN(Type_free_keyval, (int *keyval))
LK_MPI_FN(Type_set_attr, (MPI_Datatype type, int keyval, void *val))
LK_MPI_FN(Type_get_attr, (MPI_Datatype type, int keyval, void *val, int *flag))
LK_MPI_FN(Type_delete_attr, (MPI_Datatype type, int keyval))
LK_MPI_FN(Keyval_create,
          (MPI_Copy_function * copy, MPI_Delete_function *del, int *keyval, void *extra))
LK_MPI_FN(Keyval_free, (int *keyval))
LK_MPI_FN(Attr_put, (MPI_Comm comm, int keyval, void *val))
LK_MPI_FN(Attr_get, (MPI_Comm comm, int keyval, void *val, int *flag))
LK_MPI_FN(Attr_delete, (MPI_Comm comm, int keyval))

/* Fortran handle conversions (handles are the same integers in both languages, except
 * requests: a C request gets a Fortran number on its first conversion). */
#define MPI_F_STATUS_SIZE 6
#define LK_MPI_F2C(Kind, Type)                                                                     \
	MPI_Fint MPI_##Kind##_c2f(Type h);                                                         \
	MPI_Fint PMPI_##Kind##_c2f(Type h);                                                        \
	Type MPI_##Kind##_f2c(MPI_Fint h);                                                         \
	Type PMPI_##Kind##_f2c(MPI_Fint h);
LK_MPI_F2C(Comm, MPI_Comm)
LK_MPI_F2C(Group, MPI_Group)
LK_MPI_F2C(Type, MPI_Datatype)
LK_MPI_F2C(Op, MPI_Op)
LK_MPI_F2C(Info, MPI_Info)
LK_MPI_F2C(Errhandler, MPI_Errhandler)
LK_MPI_F2C(Win, MPI_Win)
LK_MPI_F2C(Request, MPI_Request)
LK_MPI_FN(Status_c2f, (const MPI_Status *c, MPI_Fint *f))
LK_MPI_FN(Status_f2c, (const MPI_Fint *f, MPI_Status *c))
#undef LK_MPI_F2C

/* ==== MPI-IO (MPI-3.1 chapter 13; lib/mpi/mpi_io*.c, doc/MPI-IO.md) ====
 * Values as in MPICH's mpi.h (ROMIO's mpio.h). Every routine below has an MPI_File_x and a
 * PMPI_File_x name; file handles are small integers like the other handles. */
#define MPI_FILE_NULL            ((MPI_File)0)
#define MPI_MODE_CREATE          1
#define MPI_MODE_RDONLY          2
#define MPI_MODE_WRONLY          4
#define MPI_MODE_RDWR            8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN     32
#define MPI_MODE_EXCL            64
#define MPI_MODE_APPEND          128
#define MPI_MODE_SEQUENTIAL      256
#define MPI_SEEK_SET             600
#define MPI_SEEK_CUR             602
#define MPI_SEEK_END             604
#define MPI_DISPLACEMENT_CURRENT (-54278278)
#define MPI_MAX_DATAREP_STRING   128
typedef void MPI_File_errhandler_function(MPI_File *file, int *code, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype type, int count,
                                            void *filebuf, MPI_Offset position, void *extra);
typedef int MPI_Datarep_extent_function(MPI_Datatype type, MPI_Aint *extent, void *extra);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
/* ROMIO's names for I/O requests (ordinary requests here). */
#define MPIO_Request      MPI_Request
#define MPIO_REQUEST_NULL MPI_REQUEST_NULL
#define MPIO_Wait         MPI_Wait
#define MPIO_Test         MPI_Test

/* File manipulation. */
LK_MPI_FN(File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
LK_MPI_FN(File_close, (MPI_File * fh))
LK_MPI_FN(File_delete, (const char *filename, MPI_Info info))
LK_MPI_FN(File_set_size, (MPI_File fh, MPI_Offset size))
LK_MPI_FN(File_preallocate, (MPI_File fh, MPI_Offset size))
LK_MPI_FN(File_get_size, (MPI_File fh, MPI_Offset *size))
LK_MPI_FN(File_get_group, (MPI_File fh, MPI_Group *group))
LK_MPI_FN(File_get_amode, (MPI_File fh, int *amode))
LK_MPI_FN(File_set_info, (MPI_File fh, MPI_Info info))
LK_MPI_FN(File_get_info, (MPI_File fh, MPI_Info *info_used))
/* File views. */
LK_MPI_FN(File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                          const char *datarep, MPI_Info info))
LK_MPI_FN(File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                          MPI_Datatype *filetype, char *datarep))
/* Data access with explicit offsets. */
LK_MPI_FN(File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                         MPI_Status *status))
LK_MPI_FN(File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                             MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                              MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                          MPI_Request *request))
LK_MPI_FN(File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                              MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                               MPI_Datatype type, MPI_Request *request))
/* Data access with individual file pointers. */
LK_MPI_FN(File_read, (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_write,
          (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_write_all,
          (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_iwrite,
          (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_iread_all,
          (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_iwrite_all,
          (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_seek, (MPI_File fh, MPI_Offset offset, int whence))
LK_MPI_FN(File_get_position, (MPI_File fh, MPI_Offset *offset))
LK_MPI_FN(File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
/* Data access with the shared file pointer. */
LK_MPI_FN(File_read_shared,
          (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_write_shared,
          (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_iread_shared,
          (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_iwrite_shared,
          (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *request))
LK_MPI_FN(File_read_ordered,
          (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_write_ordered,
          (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status))
LK_MPI_FN(File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
LK_MPI_FN(File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
/* Split collective data access. */
LK_MPI_FN(File_read_at_all_begin,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type))
LK_MPI_FN(File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
LK_MPI_FN(File_write_at_all_begin,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type))
LK_MPI_FN(File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
LK_MPI_FN(File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype type))
LK_MPI_FN(File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
LK_MPI_FN(File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype type))
LK_MPI_FN(File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
LK_MPI_FN(File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype type))
LK_MPI_FN(File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
LK_MPI_FN(File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype type))
LK_MPI_FN(File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
/* File interoperability, consistency, errors. */
LK_MPI_FN(File_get_type_extent, (MPI_File fh, MPI_Datatype type, MPI_Aint *extent))
LK_MPI_FN(Register_datarep, (const char *datarep, MPI_Datarep_conversion_function *read_fn,
                             MPI_Datarep_conversion_function *write_fn,
                             MPI_Datarep_extent_function *extent_fn, void *extra))
LK_MPI_FN(File_set_atomicity, (MPI_File fh, int flag))
LK_MPI_FN(File_get_atomicity, (MPI_File fh, int *flag))
LK_MPI_FN(File_sync, (MPI_File fh))
LK_MPI_FN(File_create_errhandler, (MPI_File_errhandler_function * fn, MPI_Errhandler *eh))
LK_MPI_FN(File_set_errhandler, (MPI_File fh, MPI_Errhandler eh))
LK_MPI_FN(File_get_errhandler, (MPI_File fh, MPI_Errhandler *eh))
LK_MPI_FN(File_call_errhandler, (MPI_File fh, int code))
MPI_Fint MPI_File_c2f(MPI_File fh);
MPI_Fint PMPI_File_c2f(MPI_File fh);
MPI_File MPI_File_f2c(MPI_Fint fh);
MPI_File PMPI_File_f2c(MPI_Fint fh);
/* ==== end of MPI-IO ==== */

#undef LK_MPI_FN

#ifdef __cplusplus
}
#endif

#endif
