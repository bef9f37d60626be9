/* lib/boot/job_pmix.c: a job's PMIx ranks on this agent: the job is one namespace of the
 * agent's PMIx server (pmix_host.c), registered with what the job and this node are; each
 * PMIx rank is registered and gets its environment from the library; the library's calls map
 * onto the agent's PMI machinery: a fence's contribution rides the same tree fence as the PMI
 * ranks' puts (one KVS batch, so a job may mix PMI-1, PMI-2 and PMIx ranks), abort and
 * finalize become the same frames and states as for PMI. */
#include "core.h"
#include "job_internal.h"
#include "pmi_kvs.h"
#include "pmi_topo.h"
#include "job_pmix_int.h"
#include "pmix_host.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fence contribution travels in KVS records "lamkit.pmix.<first rank of the agent>.<i>",
 * base64 (a batch value may not hold NUL), at most CHUNK raw bytes a record. */
#define KEY_PREFIX "lamkit.pmix."
#define CHUNK      (600u << 10)

int boot_job_app_pmix(const boot_job_t *j, const struct boot_app *app)
{
	return app && j->app_ompi && (j->app_ompi[app - j->js.apps] & BOOT_APP_PMIX);
}

int boot_job_rank_pmix(const boot_job_t *j, int rank)
{
	return boot_job_app_pmix(j, boot_jobspec_app(&j->js, rank));
}

#define rank_pmix boot_job_rank_pmix

int boot_job_pmix_size(const boot_job_t *j)
{
	int n = 0;

	for (int a = 0; a < j->js.napps; a++)
		if (boot_job_app_pmix(j, &j->js.apps[a]))
			n += j->js.apps[a].nprocs;
	return n;
}

int boot_job_pmix_listeners(const boot_job_t *j)
{
	int n = 0;

	/* Open MPI 4.1 registers only a default event handler, which OpenPMIx 4.2's server never
	 * serves (a default registration reaches it only if one exists already): its ranks cannot
	 * hear a death event, so nobody waits for them to */
	for (int i = 0; j->px && i < j->nranks; i++) {
		const struct boot_app *app = boot_jobspec_app(&j->js, j->r[i].rank);
		n += boot_job_app_pmix(j, app) && !(j->app_ompi[app - j->js.apps] & BOOT_APP_OMPI);
	}
	return n;
}

int boot_job_pmi_nlocal(const boot_job_t *j)
{
	int n = 0;

	for (int i = 0; i < j->nranks; i++)
		n += !rank_pmix(j, j->r[i].rank);
	return n;
}

/* {==== registering the namespace: the job, this node, every rank */

static int add(void *l, const char *key, const void *val, pmix_data_type_t t)
{
	return PMIx_Info_list_add(l, key, val, t) == PMIX_SUCCESS ? 0 : -1;
}

static int add_u32(void *l, const char *key, uint32_t v)
{
	return add(l, key, &v, PMIX_UINT32);
}

static int add_str(void *l, const char *key, const char *s)
{
	return add(l, key, s, PMIX_STRING);
}

/* Nodes are numbered as in PMI_process_mapping; a node we cannot name (its agent's host is
 * not in the job spec) is "lamkit-node<N>". */
static void node_name(const boot_job_t *j, int n, int me, char *buf, size_t len)
{
	if (n == me)
		snprintf(buf, len, "%s", core_hostname());
	else
		snprintf(buf, len, "lamkit-node%d", n);
}

/* The node of every rank (from the mapping; without one, ours are node 0 and the others -1),
 * the number of nodes and ours. */
static int *rank_nodes(const boot_job_t *j, int *nnodes, int *me)
{
	int *node = malloc((size_t)j->js.size * sizeof *node);
	const char *map = j->js.process_mapping;

	if (!node)
		return NULL;
	*nnodes = map && *map ? pmi_topo_mapping(map, node, j->js.size) : -1;
	*me = *nnodes > 0 ? node[j->r[0].rank] : 0;
	for (int i = 1; *nnodes > 0 && i < j->nranks; i++)
		if (node[j->r[i].rank] != *me)
			*nnodes = -1; /* the mapping does not describe this agent */
	if (*nnodes <= 0) {
		for (int r = 0; r < j->js.size; r++)
			node[r] = -1;
		for (int i = 0; i < j->nranks; i++)
			node[j->r[i].rank] = 0;
		*nnodes = j->js.nagents > 0 ? j->js.nagents : 1;
		*me = 0;
	}
	return node;
}

/* "0,1,2;3,4,5": the ranks of each node (PMIx_generate_ppn's input), and the node list. */
static int maps(const boot_job_t *j, const int *node, int nnodes, int me, char **nodemap,
                char **procmap)
{
	struct core_wbuf nl = {0}, pl = {0};
	char name[300], num[16];
	int rc = -1;

	for (int n = 0; n < nnodes; n++) {
		node_name(j, n, me, name, sizeof name);
		if (n)
			core_w_bytes(&nl, ",", 1);
		core_w_bytes(&nl, name, strlen(name));
		if (n)
			core_w_bytes(&pl, ";", 1);
		int first = 1;
		for (int r = 0; r < j->js.size; r++) {
			if (node[r] != n)
				continue;
			snprintf(num, sizeof num, first ? "%d" : ",%d", r);
			core_w_bytes(&pl, num, strlen(num));
			first = 0;
		}
	}
	core_w_bytes(&nl, "", 1);
	core_w_bytes(&pl, "", 1);
	if (!nl.err && !pl.err && PMIx_generate_regex(nl.p, nodemap) == PMIX_SUCCESS &&
	    PMIx_generate_ppn(pl.p, procmap) == PMIX_SUCCESS)
		rc = 0;
	core_w_free(&nl);
	core_w_free(&pl);
	return rc;
}

/* Per rank: its ranks on its node, its app, its host. */
static int add_procs(const boot_job_t *j, void *l, const int *node, int me)
{
	int *seen = calloc((size_t)j->js.size + 1, sizeof *seen), rc = 0;
	char name[300];

	if (!seen)
		return -1;
	for (int r = 0; r < j->js.size && rc == 0; r++) {
		const struct boot_app *app = boot_jobspec_app(&j->js, r);
		void *p = PMIx_Info_list_start();
		pmix_rank_t rank = (pmix_rank_t)r;
		int n = node[r] >= 0 ? node[r] : j->js.size; /* unknown node: no local rank */
		uint16_t lr = (uint16_t)seen[n]++;
		pmix_data_array_t da;
		rc |= add(p, PMIX_RANK, &rank, PMIX_PROC_RANK);
		rc |= add_u32(p, PMIX_APPNUM, app ? (uint32_t)(app - j->js.apps) : 0);
		rc |=
		    add_u32(p, PMIX_APP_RANK, app ? (uint32_t)(r - app->first_rank) : (uint32_t)r);
		rc |= add(p, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
		if (app) { /* the rank's app (Slurm answers APPLDR per rank too) */
			pmix_rank_t ldr = (pmix_rank_t)app->first_rank;
			rc |= add(p, PMIX_APPLDR, &ldr, PMIX_PROC_RANK);
			rc |= add_u32(p, PMIX_APP_SIZE, (uint32_t)app->nprocs);
		}
		if (node[r] >= 0) {
			rc |= add(p, PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
			rc |= add(p, PMIX_NODE_RANK, &lr, PMIX_UINT16);
			rc |= add_u32(p, PMIX_NODEID, (uint32_t)node[r]);
			node_name(j, node[r], me, name, sizeof name);
			rc |= add_str(p, PMIX_HOSTNAME, name);
		}
		if (rc == 0 && PMIx_Info_list_convert(p, &da) == PMIX_SUCCESS) {
			rc |= add(l, PMIX_PROC_DATA, &da, PMIX_DATA_ARRAY);
			PMIX_DATA_ARRAY_DESTRUCT(&da);
		} else {
			rc = -1;
		}
		PMIx_Info_list_release(p);
	}
	free(seen);
	return rc;
}

/* The PMIx clients' directory: <job dir>/pmix, not the job's directory itself, which holds
 * what `wipe` needs (procs, shm-node, res-*): Open MPI removes its PMIX_NSDIR at finalize. */
static void pmix_dir(const boot_job_t *j, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", j->dir, j->dir[0] ? "/pmix" : "");
}

/* What this node is: our ranks, the leader, the clients' directory. */
static int add_node(const boot_job_t *j, void *l)
{
	struct core_wbuf peers = {0};
	char num[16], dir[sizeof j->dir + 8];

	for (int i = 0; i < j->nranks; i++) {
		snprintf(num, sizeof num, i ? ",%d" : "%d", j->r[i].rank);
		core_w_bytes(&peers, num, strlen(num));
	}
	core_w_bytes(&peers, "", 1);
	pmix_rank_t ldr = (pmix_rank_t)j->r[0].rank;
	int rc = peers.err;
	rc |= add_str(l, PMIX_LOCAL_PEERS, peers.p);
	rc |= add_u32(l, PMIX_LOCAL_SIZE, (uint32_t)j->nranks);
	rc |= add_u32(l, PMIX_NODE_SIZE, (uint32_t)j->nranks);
	rc |= add(l, PMIX_LOCALLDR, &ldr, PMIX_PROC_RANK);
	pmix_dir(j, dir, sizeof dir);
	rc |= add_str(l, PMIX_TMPDIR, dir);
	rc |= add_str(l, PMIX_NSDIR, dir);
	core_w_free(&peers);
	return rc ? -1 : 0;
}

static int add_job(const boot_job_t *j, void *l, int nnodes)
{
	bool spawned = j->js.spawner && *j->js.spawner;
	int rc = 0;

	rc |= add_str(l, PMIX_JOBID, j->js.kvsname);
	rc |= add_u32(l, PMIX_UNIV_SIZE, (uint32_t)j->js.universe_size);
	rc |= add_u32(l, PMIX_JOB_SIZE, (uint32_t)j->js.size);
	rc |= add_u32(l, PMIX_MAX_PROCS, (uint32_t)j->js.universe_size);
	rc |= add_u32(l, PMIX_NUM_NODES, (uint32_t)nnodes);
	rc |= add_u32(l, PMIX_JOB_NUM_APPS, (uint32_t)j->js.napps);
	rc |= add(l, PMIX_SPAWNED, &spawned, PMIX_BOOL);
	for (int a = 0; a < j->js.napps && rc == 0; a++) {
		const struct boot_app *app = &j->js.apps[a];
		void *p = PMIx_Info_list_start();
		pmix_rank_t ldr = (pmix_rank_t)app->first_rank;
		pmix_data_array_t da;
		rc |= add_u32(p, PMIX_APPNUM, (uint32_t)a);
		rc |= add_u32(p, PMIX_APP_SIZE, (uint32_t)app->nprocs);
		rc |= add(p, PMIX_APPLDR, &ldr, PMIX_PROC_RANK);
		rc |= add_str(p, PMIX_WDIR, app->wdir ? app->wdir : j->js.wdir);
		if (rc == 0 && PMIx_Info_list_convert(p, &da) == PMIX_SUCCESS) {
			rc |= add(l, PMIX_APP_INFO, &da, PMIX_DATA_ARRAY);
			PMIX_DATA_ARRAY_DESTRUCT(&da);
		} else {
			rc = -1;
		}
		PMIx_Info_list_release(p);
	}
	return rc;
}

/* The job as PMIx info (this node's part too, or not: for another agent's server, where the
 * job has no local process). 0, or -1. */
static int describe(const boot_job_t *j, int with_node, pmix_data_array_t *da)
{
	int nnodes, me;
	int *node = rank_nodes(j, &nnodes, &me);
	char *nodemap = NULL, *procmap = NULL;
	void *l = PMIx_Info_list_start();
	int rc = -1;

	if (node && l && maps(j, node, nnodes, me, &nodemap, &procmap) == 0 &&
	    add_job(j, l, nnodes) == 0 && add_str(l, PMIX_NODE_MAP, nodemap) == 0 &&
	    add_str(l, PMIX_PROC_MAP, procmap) == 0 && (!with_node || add_node(j, l) == 0) &&
	    add_procs(j, l, node, me) == 0 && PMIx_Info_list_convert(l, da) == PMIX_SUCCESS)
		rc = 0;
	if (l)
		PMIx_Info_list_release(l);
	free(nodemap);
	free(procmap);
	free(node);
	return rc;
}

int boot_job_pmix_describe(const boot_job_t *j, char **data, size_t *len)
{
	pmix_data_array_t da = {0};
	pmix_data_buffer_t b;
	pmix_byte_object_t bo = {0};
	int rc = -1;

	*data = NULL;
	*len = 0;
	PMIX_DATA_BUFFER_CONSTRUCT(&b);
	if (describe(j, 0, &da) == 0) {
		int32_t n = (int32_t)da.size;
		if (PMIx_Data_pack(NULL, &b, &n, 1, PMIX_INT32) == PMIX_SUCCESS &&
		    PMIx_Data_pack(NULL, &b, da.array, n, PMIX_INFO) == PMIX_SUCCESS &&
		    PMIx_Data_unload(&b, &bo) == PMIX_SUCCESS && (*data = malloc(bo.size + 1))) {
			memcpy(*data, bo.bytes, bo.size);
			*len = bo.size;
			rc = 0;
		}
	}
	PMIX_BYTE_OBJECT_DESTRUCT(&bo);
	PMIX_DATA_BUFFER_DESTRUCT(&b);
	PMIX_DATA_ARRAY_DESTRUCT(&da);
	return rc;
}

static int register_nspace(boot_job_t *j, char *err, size_t errlen)
{
	pmix_data_array_t da = {0};
	int rc = -1;

	if (describe(j, 1, &da) < 0) {
		core_errprintf(err, errlen, "PMIx: cannot describe the job");
		goto out;
	}
	struct boot_pmix_wait *w = boot_pmix_wait_new();
	pmix_status_t st = w ? PMIx_server_register_nspace(j->js.kvsname, j->px->nlocal, da.array,
	                                                   da.size, boot_pmix_op_cb, w)
	                     : PMIX_ERR_NOMEM;
	if (st == PMIX_SUCCESS) {
		st = boot_pmix_wait(w);
	} else if (w) {
		boot_pmix_op_cb(st, w); /* never called: drop its reference */
		boot_pmix_wait(w);
	}
	if (st != PMIX_SUCCESS && st != PMIX_OPERATION_SUCCEEDED) {
		core_errprintf(err, errlen, "PMIx: registering the job: %s", PMIx_Error_string(st));
		goto out;
	}
	j->px->registered = 1;
	rc = 0;
out:
	PMIX_DATA_ARRAY_DESTRUCT(&da);
	return rc;
}

/* ====} */

int boot_job_pmix_init(boot_job_t *j, char *err, size_t errlen)
{
	int n = 0;

	for (int i = 0; i < j->nranks; i++)
		n += rank_pmix(j, j->r[i].rank);
	if (n == 0)
		return 0;
	if (!(j->px = calloc(1, sizeof *j->px)))
		return core_errprintf(err, errlen, "out of memory");
	j->px->nlocal = n;
	j->px->npmi = j->nranks - n;
	if (boot_pmix_start(j->ag, err, errlen) < 0)
		return -1;
	char dir[sizeof j->dir + 8];
	pmix_dir(j, dir, sizeof dir);
	if (j->dir[0] && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return core_errprintf(err, errlen, "PMIx: cannot make %s: %s", dir,
		                      strerror(errno));
	return register_nspace(j, err, errlen);
}

/* The rank's environment from the library (PMIX_NAMESPACE, PMIX_RANK, the server's URI, ...)
 * after the one boot_job_env made; *envp is replaced by one block (boot_env_free). */
int boot_job_pmix_env(boot_job_t *j, struct boot_rank *r, char ***envp)
{
	pmix_proc_t proc;
	char **add = NULL;

	if (!j->px || !rank_pmix(j, r->rank))
		return 0;
	PMIX_LOAD_PROCID(&proc, j->js.kvsname, (pmix_rank_t)r->rank);
	struct boot_pmix_wait *w = boot_pmix_wait_new();
	pmix_status_t st =
	    w ? PMIx_server_register_client(&proc, geteuid(), getegid(), r, boot_pmix_op_cb, w)
	      : PMIX_ERR_NOMEM;
	if (st == PMIX_SUCCESS) {
		st = boot_pmix_wait(w);
	} else if (w) {
		boot_pmix_op_cb(st, w);
		boot_pmix_wait(w);
	}
	if ((st != PMIX_SUCCESS && st != PMIX_OPERATION_SUCCEEDED) ||
	    (st = PMIx_server_setup_fork(&proc, &add)) != PMIX_SUCCESS) {
		core_log(CORE_LOG_ERROR, "agent: job %u: PMIx rank %d: %s", j->js.jobid, r->rank,
		         PMIx_Error_string(st));
		errno = EPROTO;
		return -1;
	}
	j->px->nregistered++;
	size_t n = 0, na = 0, bytes = 0;
	for (char **p = *envp; *p; p++)
		n++, bytes += strlen(*p) + 1;
	for (char **p = add; p && *p; p++)
		na++, bytes += strlen(*p) + 1;
	char **out = malloc((n + na + 1) * sizeof *out + bytes);
	if (!out) {
		for (char **p = add; p && *p; p++)
			free(*p);
		free(add);
		return -1;
	}
	char *s = (char *)(out + n + na + 1);
	size_t k = 0;
	for (char **p = *envp; *p; p++) {
		size_t len = strlen(*p) + 1;
		out[k++] = memcpy(s, *p, len);
		s += len;
	}
	for (char **p = add; p && *p; p++) {
		size_t len = strlen(*p) + 1;
		out[k++] = memcpy(s, *p, len);
		s += len;
		free(*p);
	}
	out[k] = NULL;
	free(add);
	boot_env_free(*envp);
	*envp = out;
	return 0;
}

/* {==== the fence: PMI's delta and PMIx's contribution go up the tree as one batch */

static void fence_try(boot_job_t *j)
{
	struct boot_job_pmix *px = j->px;

	if (px->entered || (px->npmi && !px->pmi_in) || (px->nlocal && !px->px_in))
		return;
	px->entered = 1;
	struct core_wbuf w = px->pmi_delta;
	memset(&px->pmi_delta, 0, sizeof px->pmi_delta);
	char key[64];
	size_t b64max = sodium_base64_ENCODED_LEN(CHUNK, sodium_base64_VARIANT_ORIGINAL);
	char *b64 = malloc(b64max);
	for (size_t off = 0, i = 0; b64 && off < px->px_len; off += CHUNK, i++) {
		size_t n = px->px_len - off < CHUNK ? px->px_len - off : CHUNK;
		snprintf(key, sizeof key, KEY_PREFIX "%d.%zu", j->r[0].rank, i);
		sodium_bin2base64(b64, b64max, (const unsigned char *)px->px_data + off, n,
		                  sodium_base64_VARIANT_ORIGINAL);
		if (pmi_kvs_encode(&w.p, &w.len, &w.cap, key, b64) < 0)
			w.err = 1;
	}
	if (!b64)
		w.err = 1;
	free(b64);
	free(px->px_data);
	px->px_data = NULL;
	px->px_len = 0;
	if (w.err)
		core_log(CORE_LOG_ERROR, "agent: job %u: fence: out of memory", j->js.jobid);
	boot_job_fence_enter(j, w.p, w.err ? 0 : w.len);
	core_w_free(&w);
}

int boot_job_fence_pmi(boot_job_t *j, const char *delta, size_t len)
{
	if (!j->px)
		return 0;
	j->px->pmi_in = 1;
	core_w_bytes(&j->px->pmi_delta, delta, len);
	fence_try(j);
	return 1;
}

static void release(void *cbdata)
{
	free(cbdata);
}

/* The merged batch came back: hand the library every agent's contribution, in order. */
void boot_job_pmix_fence_done(boot_job_t *j, const char *batch, size_t len)
{
	struct boot_job_pmix *px = j->px;

	if (!px || !px->entered)
		return;
	px->entered = px->pmi_in = px->px_in = 0;
	pmix_modex_cbfunc_t cb = px->px_cb;
	void *cbdata = px->px_cbdata;
	px->px_cb = NULL;
	if (!cb)
		return;
	pmi_kvs_t *k = pmi_kvs_create();
	struct core_wbuf all = {0};
	pmix_status_t st = PMIX_SUCCESS;
	if (!k || pmi_kvs_load(k, batch, len) < 0)
		st = PMIX_ERROR;
	for (size_t i = 0; st == PMIX_SUCCESS && i < pmi_kvs_count(k); i++) {
		const char *key, *val;
		if (pmi_kvs_at(k, i, &key, &val) < 0 ||
		    strncmp(key, KEY_PREFIX, strlen(KEY_PREFIX)))
			continue;
		size_t vl = strlen(val), bin = 0, cap = vl / 4 * 3 + 3;
		unsigned char *raw = malloc(cap);
		if (!raw || sodium_base642bin(raw, cap, val, vl, NULL, &bin, NULL,
		                              sodium_base64_VARIANT_ORIGINAL) < 0)
			st = PMIX_ERROR;
		else
			core_w_bytes(&all, raw, bin);
		free(raw);
		if (all.err)
			st = PMIX_ERR_NOMEM;
	}
	pmi_kvs_destroy(k);
	if (st != PMIX_SUCCESS)
		core_log(CORE_LOG_ERROR, "agent: job %u: PMIx fence: malformed fence data",
		         j->js.jobid);
	cb(st, all.p, all.len, cbdata, release, all.p); /* the library frees it with release */
}

static void fence_call(boot_job_t *j, struct boot_pmix_call *c)
{
	struct boot_job_pmix *px = j->px;

	if (px->px_in || px->entered) { /* the library never does this */
		core_log(CORE_LOG_ERROR,
		         "agent: job %u: a second PMIx fence before the first ended", j->js.jobid);
		c->cbfunc(PMIX_ERR_NOT_SUPPORTED, NULL, 0, c->cbdata, NULL, NULL);
		return;
	}
	px->px_in = 1;
	px->px_data = c->data;
	px->px_len = c->ndata;
	px->px_cb = c->cbfunc;
	px->px_cbdata = c->cbdata;
	c->data = NULL;
	fence_try(j);
}

/* ====} */

static struct boot_rank *find_rank(boot_job_t *j, pmix_rank_t rank)
{
	for (int i = 0; i < j->nranks; i++)
		if ((pmix_rank_t)j->r[i].rank == rank)
			return &j->r[i];
	return NULL;
}

static void abort_call(boot_job_t *j, struct boot_pmix_call *c)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)c->rank);
	core_w_u32(&w, (uint32_t)c->status);
	core_w_str(&w, c->msg ? c->msg : "");
	boot_job_send(j, BOOT_MSG_ABORT, &w, NULL, 0);
	core_w_free(&w);
}

void boot_job_pmix_call(boot_agent_t *ag, struct boot_pmix_call *c)
{
	boot_job_t *j = NULL;

	for (int i = 0; i < ag->njobs && !j; i++)
		if (ag->jobs[i]->px && !strcmp(ag->jobs[i]->js.kvsname, c->nspace))
			j = ag->jobs[i];
	if (!j && c->what == BOOT_PMIX_JOBCTRL && c->nprocs) { /* a tool's: a target's job here */
		for (int i = 0; i < ag->njobs && !j; i++)
			if (ag->jobs[i]->px && !strcmp(ag->jobs[i]->js.kvsname, c->procs[0].nspace))
				j = ag->jobs[i];
		c->rank = BOOT_RANK_TOOL;
	}
	struct boot_rank *r = j ? find_rank(j, c->rank) : NULL;
	switch (c->what) {
	case BOOT_PMIX_CONNECTED:
		if (r && r->pmi_state < BOOT_PMI_INIT)
			r->pmi_state = BOOT_PMI_INIT;
		break;
	case BOOT_PMIX_FINALIZED:
		if (r)
			r->pmi_state = BOOT_PMI_FINALIZED;
		break;
	case BOOT_PMIX_ABORT:
		if (j)
			abort_call(j, c);
		break;
	case BOOT_PMIX_FENCE:
		if (c->partial) { /* over part of the job or over several: the rendezvous */
			boot_pmix_xjob_call(ag, c); /* it owns c now */
			return;
		}
		if (j && !j->killed)
			fence_call(j, c);
		else
			c->cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, c->cbdata, NULL, NULL);
		break;
	case BOOT_PMIX_DMODEX:
	case BOOT_PMIX_DMODEX_DATA:
	case BOOT_PMIX_CONNECT:
	case BOOT_PMIX_DISCONNECT:
		boot_pmix_xjob_call(ag, c); /* it owns c now */
		return;
	case BOOT_PMIX_SPAWN:
	case BOOT_PMIX_JOBCTRL:
		boot_job_pmix_ctl_call(j, c); /* it owns c now */
		return;
	case BOOT_PMIX_PUBLISH:
	case BOOT_PMIX_LOOKUP:
	case BOOT_PMIX_UNPUBLISH:
		if (j && !j->killed) {
			boot_job_pmix_names_call(j, c); /* it owns c now */
			return;
		}
		if (c->lkcb)
			c->lkcb(PMIX_ERR_NOT_FOUND, NULL, 0, c->cbdata);
		else
			c->opcb(PMIX_ERR_NOT_FOUND, c->cbdata);
		break;
	}
	boot_pmix_call_free(c);
}

void boot_job_pmix_rdv_frame(boot_job_t *j, unsigned type, struct core_rbuf *r)
{
	if (type == BOOT_MSG_XCOLL_DOWN)
		boot_pmix_xjob_down(j, r);
}

void boot_job_pmix_rdv_lost(boot_job_t *j)
{
	if (j->px)
		boot_pmix_xjob_rdv_lost(j);
}

void boot_job_pmix_dmodex_reply(boot_job_t *j, uint32_t req, int status, uint32_t kind,
                                const char *data, size_t len)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, req);
	core_w_u32(&w, (uint32_t)status);
	core_w_u32(&w, kind);
	boot_job_send(j, BOOT_MSG_DMODEX_REPLY, &w, data, len);
	core_w_free(&w);
}

void boot_job_pmix_fini(boot_job_t *j)
{
	struct boot_job_pmix *px = j->px;

	if (!px)
		return;
	boot_pmix_xjob_job_end(j);
	boot_job_pmix_ctl_fini(j);
	if (px->px_cb) /* a fence that will not end: the library must not wait for it */
		px->px_cb(PMIX_ERR_TIMEOUT, NULL, 0, px->px_cbdata, NULL, NULL);
	px->dying = 1;
	while (px->nq) /* name-service calls still waiting */
		boot_job_pmix_names_finish(j, PMIX_ERR_TIMEOUT);
	if (px->registered && boot_pmix_running(j->ag)) {
		struct boot_pmix_wait *w = boot_pmix_wait_new();
		if (w) {
			PMIx_server_deregister_nspace(j->js.kvsname, boot_pmix_op_cb, w);
			boot_pmix_wait(w);
		}
	}
	free(px->px_data);
	core_w_free(&px->pmi_delta);
	free(px);
	j->px = NULL;
}
