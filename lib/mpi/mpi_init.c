/* lib/mpi/mpi_init.c: MPI environment: init/finalize and wire-up through PMI, abort, clocks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpii.h"
#include "pmi.h"

struct mpii_state mpii;

static char kvsname[1024];

static int kvs_put(void *arg, const char *key, const char *val)
{
	(void)arg;
	return PMI_KVS_Put(kvsname, key, val) == PMI_SUCCESS ? 0 : -1;
}

static int kvs_get(void *arg, const char *key, char *val, size_t len)
{
	(void)arg;
	return PMI_KVS_Get(kvsname, key, val, (int)len) == PMI_SUCCESS ? 0 : -1;
}

int mpii_pmi_get(const char *key, char *val, size_t len);
int mpii_pmi_get(const char *key, char *val, size_t len)
{
	return kvs_get(NULL, key, val, len);
}

static int init_fail(const char *what)
{
	fprintf(stderr, "lamkit MPI_Init: %s\n", what);
	if (mpii.size > 1)
		PMI_Abort(1, what);
	return MPI_ERR_OTHER;
}

/* Ranks sharing this node: the launcher's topology (PMI_Lamkit_topo_cluster_info's node level,
 * which falls back to the PMI clique under launchers that do not serve it), else just us. */
static int *get_node(int *n)
{
	PMI_Topo_level_t lv[PMI_TOPO_LEVELS_MAX];
	int nl = 0, *v = NULL;

	if (PMI_Lamkit_topo_cluster_info(lv, PMI_TOPO_LEVELS_MAX, &nl) == PMI_SUCCESS && nl > 0 &&
	    lv[0].nranks > 0 && (v = malloc(sizeof(int) * (size_t)lv[0].nranks))) {
		memcpy(v, lv[0].ranks, sizeof(int) * (size_t)lv[0].nranks);
		*n = lv[0].nranks;
		mpii.node = v[0];
		if (nl > 1) /* bound: the lowest rank sharing my socket, and my core */
			mpii.socket = lv[1].ranks[0];
		if (nl > 2)
			mpii.core = lv[2].ranks[0];
		return v;
	}
	v = malloc(sizeof(int));
	if (v) {
		v[0] = mpii.rank;
		mpii.node = mpii.rank;
		*n = 1;
	}
	return v;
}

static int wire_up(void)
{
	struct tp_cfg cfg = {0};
	char err[256];
	int rc = 0;

	cfg.rank = mpii.rank;
	cfg.size = mpii.size;
	mpii.socket = mpii.core = -1;
	cfg.local_ranks = get_node(&cfg.nlocal);
	if (!cfg.local_ranks)
		return init_fail("out of memory");
	cfg.job = kvsname;
	cfg.kvs.put = kvs_put;
	cfg.kvs.get = kvs_get;
	cfg.ops.recv = mpii_on_frag;
	cfg.ops.sent = mpii_on_sent;
	cfg.ops.place = mpii_place;
	mpii.tp = tp_create(&cfg, err, sizeof(err));
	free((void *)cfg.local_ranks);
	if (!mpii.tp)
		return init_fail(err);
	if (mpii.size > 1 &&
	    (PMI_KVS_Commit(kvsname) != PMI_SUCCESS || PMI_Barrier() != PMI_SUCCESS))
		return init_fail("PMI fence failed");
	if (tp_connect(mpii.tp, err, sizeof(err)) < 0)
		rc = init_fail(err);
	mpii.yield = tp_should_yield(mpii.tp);
	mpii.eager_min = (size_t)-1;
	for (int p = 0; p < mpii.size; p++) {
		size_t e = tp_eager_max(mpii.tp, p);
		if (e < mpii.eager_min)
			mpii.eager_min = e;
	}
	return rc;
}

static int do_init(int required, int *provided)
{
	int spawned = 0, rc;

	if (mpii.initialized)
		return mpii_err(NULL, MPI_ERR_OTHER, "MPI_Init");
	if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&mpii.rank) != PMI_SUCCESS ||
	    PMI_Get_size(&mpii.size) != PMI_SUCCESS ||
	    PMI_KVS_Get_my_name(kvsname, sizeof(kvsname)) != PMI_SUCCESS)
		return init_fail("cannot reach the process manager (PMI)");
	if (PMI_Get_universe_size(&mpii.universe) != PMI_SUCCESS)
		mpii.universe = mpii.size;
	if (PMI_Get_appnum(&mpii.appnum) != PMI_SUCCESS)
		mpii.appnum = 0;
	if (gethostname(mpii.pname, sizeof(mpii.pname) - 1) < 0)
		snprintf(mpii.pname, sizeof(mpii.pname), "localhost");
	if (mpii_dt_init() < 0 || mpii_comm_init() < 0)
		return init_fail("out of memory");
	rc = wire_up();
	if (rc != MPI_SUCCESS)
		return rc;
	mpii_ft_init();
	mpii.thread_level = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
	if (mpii.thread_level < MPI_THREAD_SINGLE)
		mpii.thread_level = MPI_THREAD_SINGLE;
	if (provided)
		*provided = mpii.thread_level;
	mpii.initialized = 1;
	if (spawned && mpii_spawn_init(kvsname) != MPI_SUCCESS) {
		char why[MPI_MAX_ERROR_STRING], line[MPI_MAX_ERROR_STRING + 64];
		mpii_err_take_detail(why, sizeof why);
		snprintf(line, sizeof line,
		         "cannot connect to the parents' port (MPI_Comm_spawn)%s%s",
		         *why ? ": " : "", why);
		return init_fail(line);
	}
	return MPI_SUCCESS;
}

MPII_ALIAS(Init)
int PMPI_Init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return do_init(MPI_THREAD_SINGLE, NULL);
}

MPII_ALIAS(Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	(void)argc;
	(void)argv;
	return do_init(required, provided);
}

MPII_ALIAS(Initialized)
int PMPI_Initialized(int *flag)
{
	*flag = mpii.initialized;
	return MPI_SUCCESS;
}

MPII_ALIAS(Finalized)
int PMPI_Finalized(int *flag)
{
	*flag = mpii.finalized;
	return MPI_SUCCESS;
}

MPII_ALIAS(Finalize)
int PMPI_Finalize(void)
{
	MPII_CHECK_INIT("MPI_Finalize");
	/* as if MPI_COMM_SELF were freed first: its attribute delete callbacks run while MPI is
	 * still fully usable */
	mpii_attr_clear_comm(mpii_comm(MPI_COMM_SELF));
	mpii_rma_fini(); /* the RMA progress thread, if a window was left open */
	mpii_io_fini();  /* files left open, the I/O thread */
	/* Everything we sent must have left before the others may tear down; sockets are
	 * closed only after the barrier so no peer still has data in flight towards us. */
	while (mpii.bsend_pending)
		mpii_progress_wait();
	for (double t0 = PMPI_Wtime(); tp_queued(mpii.tp) && PMPI_Wtime() - t0 < 10.0;)
		mpii_progress_wait();
	tp_flush(mpii.tp, 10000); /* udp: every packet acknowledged, a FIN from each peer */
	if (mpii.size > 1)
		PMI_Barrier();
	tp_destroy(mpii.tp, 0);
	mpii.tp = NULL;
	mpii_ft_fini();
	mpii_attr_fini();
	mpii_comm_fini();
	mpii_hier_fini();
	mpii_dt_fini();
	mpii_op_fini();
	mpii_freq_fini();
	mpii_err_fini();
	mpii_tmpbuf_fini();
	mpii.finalized = 1;
	PMI_Finalize();
	return MPI_SUCCESS;
}

MPII_ALIAS(Abort)
int PMPI_Abort(MPI_Comm comm, int code)
{
	char msg[64];

	(void)comm;
	snprintf(msg, sizeof(msg), "MPI_Abort(%d) from rank %d", code, mpii.rank);
	if (mpii.initialized && !mpii.finalized && mpii.size > 1)
		PMI_Abort(code, msg);
	_exit(code);
}

MPII_ALIAS(Query_thread)
int PMPI_Query_thread(int *provided)
{
	*provided = mpii.thread_level;
	return MPI_SUCCESS;
}

MPII_ALIAS(Is_thread_main)
int PMPI_Is_thread_main(int *flag)
{
	*flag = 1;
	return MPI_SUCCESS;
}

MPII_ALIAS(Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

MPII_ALIAS(Get_library_version)
int PMPI_Get_library_version(char *version, int *len)
{
	*len = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "lamkit MPI %d.%d", MPI_VERSION,
	                MPI_SUBVERSION);
	return MPI_SUCCESS;
}

MPII_ALIAS(Get_processor_name)
int PMPI_Get_processor_name(char *name, int *len)
{
	if (!mpii.pname[0] && gethostname(mpii.pname, sizeof(mpii.pname) - 1) < 0)
		snprintf(mpii.pname, sizeof(mpii.pname), "localhost");
	*len = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", mpii.pname);
	return MPI_SUCCESS;
}

MPII_ALIAS(Pcontrol)
int PMPI_Pcontrol(const int level, ...)
{
	(void)level;
	return MPI_SUCCESS;
}

MPII_ALIAS(Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	void *p = malloc(size > 0 ? (size_t)size : 1);

	(void)info;
	if (!p)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

MPII_ALIAS(Free_mem)
int PMPI_Free_mem(void *base)
{
	free(base);
	return MPI_SUCCESS;
}

#pragma weak MPI_Wtime = PMPI_Wtime
double PMPI_Wtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#pragma weak MPI_Wtick = PMPI_Wtick
double PMPI_Wtick(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC, &ts) < 0)
		return 1e-9;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
