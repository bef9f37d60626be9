/* lib/boot/pmix_host.c: one OpenPMIx server per agent. The library runs its own progress
 * thread and calls the host's module from it; each call is queued here and an eventfd wakes
 * the agent's loop, which hands it to the job it concerns (job_pmix.c). Nothing of the agent
 * is touched from the library's thread. */
#include "pmix_host.h"
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct boot_pmix {
	boot_agent_t *ag;
	int efd; /* eventfd: calls are queued */
	pthread_mutex_t lock;
	struct boot_pmix_call *head, **tail;
	char dir[4200];
};

/* the library's module calls have no host argument: one server per process */
static struct boot_pmix *the;

static void push(struct boot_pmix_call *c)
{
	uint64_t one = 1;

	pthread_mutex_lock(&the->lock);
	c->next = NULL;
	*the->tail = c;
	the->tail = &c->next;
	pthread_mutex_unlock(&the->lock);
	if (write(the->efd, &one, sizeof one) < 0 && errno != EAGAIN)
		core_log(CORE_LOG_ERROR, "pmix: cannot wake the agent: %s", strerror(errno));
}

static struct boot_pmix_call *call_new(int what, const pmix_proc_t *p)
{
	struct boot_pmix_call *c = calloc(1, sizeof *c);

	if (c) {
		c->what = what;
		if (p) {
			snprintf(c->nspace, sizeof c->nspace, "%s", p->nspace);
			c->rank = p->rank;
		}
	}
	return c;
}

static pmix_status_t m_connected(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_CONNECTED, proc);

	if (c)
		push(c);
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t m_finalized(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_FINALIZED, proc);

	if (c)
		push(c);
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t m_abort(const pmix_proc_t *proc, void *obj, int status, const char msg[],
                             pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cbfunc,
                             void *cbdata)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_ABORT, proc);

	if (!c)
		return PMIX_ERR_NOMEM;
	c->status = status;
	c->msg = strdup(msg ? msg : "");
	push(c);
	return PMIX_OPERATION_SUCCEEDED; /* the job ends; the caller waits for that */
}

/* Whether procs names exactly the whole of one namespace (what MPI_Init's fence does). */
static int whole_job(const pmix_proc_t procs[], size_t nprocs)
{
	return nprocs == 1 && procs[0].rank == PMIX_RANK_WILDCARD;
}

/* A copy of the participants. 0, or -1 (ENOMEM). */
static int copy_procs(struct boot_pmix_call *c, const pmix_proc_t procs[], size_t nprocs)
{
	if (!nprocs)
		return 0;
	if (!(c->procs = malloc(nprocs * sizeof *procs)))
		return -1;
	memcpy(c->procs, procs, nprocs * sizeof *procs);
	c->nprocs = nprocs;
	return 0;
}

static pmix_status_t m_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                             size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                             void *cbdata)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_FENCE, nprocs ? &procs[0] : NULL);

	if (!c)
		return PMIX_ERR_NOMEM;
	c->partial = !whole_job(procs, nprocs);
	for (size_t i = 0; i < ninfo; i++)
		if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA))
			c->collect = PMIX_INFO_TRUE(&info[i]);
	c->data = ndata ? malloc(ndata) : NULL;
	if ((ndata && !c->data) || (c->partial && copy_procs(c, procs, nprocs) < 0)) {
		boot_pmix_call_free(c);
		return PMIX_ERR_NOMEM;
	}
	if (ndata)
		memcpy(c->data, data, ndata);
	c->ndata = ndata;
	c->cbfunc = cbfunc;
	c->cbdata = cbdata;
	push(c);
	return PMIX_SUCCESS;
}

static pmix_status_t m_dmodex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_DMODEX, proc);

	if (!c)
		return PMIX_ERR_NOMEM;
	c->cbfunc = cbfunc;
	c->cbdata = cbdata;
	push(c);
	return PMIX_SUCCESS;
}

static pmix_status_t cnct(int what, const pmix_proc_t procs[], size_t nprocs,
                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	struct boot_pmix_call *c = call_new(what, nprocs ? &procs[0] : NULL);

	if (!c || copy_procs(c, procs, nprocs) < 0) {
		if (c)
			boot_pmix_call_free(c);
		return PMIX_ERR_NOMEM;
	}
	c->opcb = cbfunc;
	c->cbdata = cbdata;
	push(c);
	return PMIX_SUCCESS;
}

static pmix_status_t m_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                               size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	return cnct(BOOT_PMIX_CONNECT, procs, nprocs, cbfunc, cbdata);
}

static pmix_status_t m_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                  const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                  void *cbdata)
{
	return cnct(BOOT_PMIX_DISCONNECT, procs, nprocs, cbfunc, cbdata);
}

/* A string directive of an app or of the job. */
static const char *info_str(const pmix_info_t *info, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (PMIX_CHECK_KEY(&info[i], key) && info[i].value.type == PMIX_STRING)
			return info[i].value.data.string;
	return NULL;
}

/* The strings of a NULL-terminated vector from v[skip] on (v[skip - 1] is not NULL). */
static void w_strv(struct core_wbuf *w, char *const *v, size_t skip)
{
	uint32_t n = 0;

	while (v && v[skip + n])
		n++;
	core_w_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		core_w_str(w, v[skip + i]);
}

/* One app as a SPAWN frame's command: the exe, its count, its arguments without argv[0] and
 * the info keys mpiexec serves (wdir, host, env: the app's variables, one per line). */
static void w_app(struct core_wbuf *w, const pmix_app_t *a, const pmix_info_t *job, size_t njob)
{
	const char *wdir = a->cwd && *a->cwd ? a->cwd : info_str(a->info, a->ninfo, PMIX_WDIR);
	const char *host = info_str(a->info, a->ninfo, PMIX_HOST);
	struct core_wbuf env = {0};
	uint32_t ninfo = 0;

	if (!host)
		host = info_str(job, njob, PMIX_HOST);
	for (char **e = a->env; e && *e; e++) {
		if (env.len)
			core_w_bytes(&env, "\n", 1);
		core_w_bytes(&env, *e, strlen(*e));
	}
	core_w_bytes(&env, "", 1);
	core_w_str(w, a->cmd);
	core_w_u32(w, (uint32_t)(a->maxprocs > 0 ? a->maxprocs : 1));
	w_strv(w, a->argv, a->argv && a->argv[0] ? 1 : 0);
	ninfo = 2 * ((wdir != NULL) + (host != NULL) + (env.len > 1));
	core_w_u32(w, ninfo);
	if (wdir) {
		core_w_str(w, "wdir");
		core_w_str(w, wdir);
	}
	if (host) {
		core_w_str(w, "host");
		core_w_str(w, host);
	}
	if (env.len > 1) {
		core_w_str(w, "env");
		core_w_str(w, env.p);
	}
	if (env.err)
		w->err = 1;
	core_w_free(&env);
}

static pmix_status_t m_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                             const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                             void *cbdata)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_SPAWN, proc);
	struct core_wbuf w = {0};

	if (!c)
		return PMIX_ERR_NOMEM;
	if (napps == 0 || napps > 4096) {
		free(c);
		return PMIX_ERR_BAD_PARAM;
	}
	core_w_u32(&w, (uint32_t)napps);
	for (size_t i = 0; i < napps; i++) {
		if (!apps[i].cmd || !*apps[i].cmd) {
			core_w_free(&w);
			free(c);
			return PMIX_ERR_BAD_PARAM;
		}
		w_app(&w, &apps[i], job_info, ninfo);
	}
	core_w_u32(&w, 0); /* no preput: PMIx clients pass what they pass in the environment */
	if (w.err) {
		core_w_free(&w);
		free(c);
		return PMIX_ERR_NOMEM;
	}
	c->data = w.p;
	c->ndata = w.len;
	c->spcb = cbfunc;
	c->cbdata = cbdata;
	push(c);
	return PMIX_SUCCESS;
}

/* The signal a job_control directive asks for, 0 when none we serve. */
static int ctrl_signal(const pmix_info_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (PMIX_CHECK_KEY(&d[i], PMIX_JOB_CTRL_KILL) && PMIX_INFO_TRUE(&d[i]))
			return SIGKILL;
		if (PMIX_CHECK_KEY(&d[i], PMIX_JOB_CTRL_TERMINATE) && PMIX_INFO_TRUE(&d[i]))
			return SIGTERM;
		if (PMIX_CHECK_KEY(&d[i], PMIX_JOB_CTRL_PAUSE) && PMIX_INFO_TRUE(&d[i]))
			return SIGSTOP;
		if (PMIX_CHECK_KEY(&d[i], PMIX_JOB_CTRL_RESUME) && PMIX_INFO_TRUE(&d[i]))
			return SIGCONT;
		if (PMIX_CHECK_KEY(&d[i], PMIX_JOB_CTRL_SIGNAL)) {
			int sig = d[i].value.type == PMIX_INT ? d[i].value.data.integer
			                                      : d[i].value.data.int32;
			return sig > 0 && sig < 65 ? sig : 0;
		}
	}
	return 0;
}

static pmix_status_t m_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                   size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata)
{
	int sig = ctrl_signal(directives, ndirs);
	struct boot_pmix_call *c;
	struct core_wbuf w = {0};

	if (!sig) /* informational directives (preemptible, checkpoint methods ...): nothing to do
	           */
		return ndirs ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_BAD_PARAM;
	if (!(c = call_new(BOOT_PMIX_JOBCTRL, requestor)))
		return PMIX_ERR_NOMEM;
	if (copy_procs(c, targets, ntargets) < 0) { /* a tool's call: its targets name the job */
		boot_pmix_call_free(c);
		return PMIX_ERR_NOMEM;
	}
	core_w_u32(&w, (uint32_t)sig);
	if (ntargets == 0) { /* no target: the requestor's own job */
		core_w_u32(&w, 1);
		core_w_str(&w, requestor->nspace);
		core_w_u32(&w, PMIX_RANK_WILDCARD);
	} else {
		core_w_u32(&w, (uint32_t)ntargets);
		for (size_t i = 0; i < ntargets; i++) {
			core_w_str(&w, targets[i].nspace);
			core_w_u32(&w, targets[i].rank);
		}
	}
	if (w.err) {
		free(c);
		return PMIX_ERR_NOMEM;
	}
	c->data = w.p;
	c->ndata = w.len;
	c->infocb = cbfunc;
	c->cbdata = cbdata;
	push(c);
	return PMIX_SUCCESS;
}

static void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

void boot_pmix_call_free(struct boot_pmix_call *c)
{
	free(c->msg);
	free(c->data);
	free(c->procs);
	free(c->pd);
	strv_free(c->keys);
	strv_free(c->vals);
	free(c);
}

/* An integer directive's value, whatever integer type it came as. */
static int int_value(const pmix_value_t *v)
{
	switch (v->type) {
	case PMIX_PERSIST:
		return v->data.persist;
	case PMIX_UINT8:
		return v->data.uint8;
	case PMIX_UINT16:
		return v->data.uint16;
	case PMIX_UINT32:
		return (int)v->data.uint32;
	case PMIX_INT:
	case PMIX_INT32:
		return v->data.int32;
	case PMIX_BOOL:
		return v->data.flag;
	default:
		return 0;
	}
}

/* A published value as the name service keeps it: "\x1b<nspace>\x1f<rank>\x1f<type>\x1f<text>"
 * (PMI lookups see <text>: pmi_names_plain). Strings and integers; NULL for other types. */
static char *encode(const pmix_proc_t *p, const pmix_value_t *v)
{
	char num[32], *out = NULL;
	const char *text = num;

	switch (v->type) {
	case PMIX_STRING:
		text = v->data.string ? v->data.string : "";
		break;
	case PMIX_BOOL:
		snprintf(num, sizeof num, "%d", v->data.flag ? 1 : 0);
		break;
	case PMIX_UINT8:
		snprintf(num, sizeof num, "%u", v->data.uint8);
		break;
	case PMIX_UINT16:
		snprintf(num, sizeof num, "%u", v->data.uint16);
		break;
	case PMIX_UINT32:
		snprintf(num, sizeof num, "%u", v->data.uint32);
		break;
	case PMIX_UINT64:
	case PMIX_SIZE:
		snprintf(num, sizeof num, "%llu", (unsigned long long)v->data.uint64);
		break;
	case PMIX_INT:
	case PMIX_INT32:
		snprintf(num, sizeof num, "%d", v->data.int32);
		break;
	case PMIX_INT64:
		snprintf(num, sizeof num, "%lld", (long long)v->data.int64);
		break;
	case PMIX_BYTE_OBJECT: { /* base64 (Open MPI's communicator ids pass this way) */
		size_t n = v->data.bo.size;
		size_t b64 = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
		char *t = n > (1u << 20) ? NULL : malloc(b64);
		if (!t)
			return NULL;
		sodium_bin2base64(t, b64, (const unsigned char *)v->data.bo.bytes, n,
		                  sodium_base64_VARIANT_ORIGINAL);
		int rc =
		    asprintf(&out, "\x1b%s\x1f%u\x1f%d\x1f%s", p->nspace, p->rank, (int)v->type, t);
		free(t);
		return rc < 0 ? NULL : out;
	}
	default:
		return NULL;
	}
	if (asprintf(&out, "\x1b%s\x1f%u\x1f%d\x1f%s", p->nspace, p->rank, (int)v->type, text) < 0)
		return NULL;
	return out;
}

static pmix_status_t m_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_PUBLISH, proc);
	size_t n = 0;

	if (!c || !(c->keys = calloc(ninfo + 1, sizeof(char *))) ||
	    !(c->vals = calloc(ninfo + 1, sizeof(char *)))) {
		if (c)
			boot_pmix_call_free(c);
		return PMIX_ERR_NOMEM;
	}
	for (size_t i = 0; i < ninfo; i++) {
		if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE))
			c->once = int_value(&info[i].value) == PMIX_PERSIST_FIRST_READ;
		if (!strncmp(info[i].key, "pmix.", 5))
			continue; /* other directives (range, ...): one name service */
		c->keys[n] = strdup(info[i].key);
		c->vals[n] = encode(proc, &info[i].value);
		if (!c->keys[n] || !c->vals[n]) {
			free(c->keys[n]);
			c->keys[n] = NULL;
			boot_pmix_call_free(c);
			return PMIX_ERR_NOT_SUPPORTED; /* a value type we cannot keep as text */
		}
		n++;
	}
	c->opcb = cbfunc;
	c->cbdata = cbdata;
	push(c);
	return PMIX_SUCCESS;
}

static pmix_status_t keys_call(int what, const pmix_proc_t *proc, char **keys,
                               pmix_op_cbfunc_t opcb, pmix_lookup_cbfunc_t lkcb, void *cbdata,
                               int wait_ms)
{
	struct boot_pmix_call *c = call_new(what, proc);
	size_t n = 0;

	while (keys && keys[n])
		n++;
	if (!c || !(c->keys = calloc(n + 1, sizeof(char *)))) {
		free(c);
		return PMIX_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (!(c->keys[i] = strdup(keys[i]))) {
			boot_pmix_call_free(c);
			return PMIX_ERR_NOMEM;
		}
	c->opcb = opcb;
	c->lkcb = lkcb;
	c->cbdata = cbdata;
	c->wait_ms = wait_ms;
	push(c);
	return PMIX_SUCCESS;
}

static pmix_status_t m_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                              size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
	int wait = 0, timeout = 0;

	for (size_t i = 0; i < ninfo; i++) {
		if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT))
			wait = info[i].value.type == PMIX_BOOL ? info[i].value.data.flag
			                                       : int_value(&info[i].value) != 0;
		else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT))
			timeout = int_value(&info[i].value);
	}
	/* PMIX_WAIT without a timeout: the name service's bound */
	return keys_call(BOOT_PMIX_LOOKUP, proc, keys, NULL, cbfunc, cbdata,
	                 wait ? (timeout > 0 && timeout < 3600 ? timeout * 1000 : -1) : 0);
}

static pmix_status_t m_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                 size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	return keys_call(BOOT_PMIX_UNPUBLISH, proc, keys, cbfunc, NULL, cbdata, 0);
}

/* A tool (PMIx_tool_init) connects: it keeps the identity it brings, or gets
 * lamkit-tool.<agent pid>.<n>, rank 0. Only the agent's user gets here (native security). */
static void m_tool_connected(pmix_info_t info[], size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                             void *cbdata)
{
	static unsigned n;
	pmix_proc_t p;
	const char *ns = NULL;
	pmix_rank_t rank = 0;

	for (size_t i = 0; i < ninfo; i++) {
		if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && info[i].value.type == PMIX_STRING)
			ns = info[i].value.data.string;
		else if (PMIX_CHECK_KEY(&info[i], PMIX_RANK) &&
		         info[i].value.type == PMIX_PROC_RANK)
			rank = info[i].value.data.rank;
	}
	if (ns && *ns) {
		PMIX_LOAD_PROCID(&p, ns, rank);
	} else {
		char name[PMIX_MAX_NSLEN + 1];
		snprintf(name, sizeof name, "lamkit-tool.%ld.%u", (long)getpid(), ++n);
		PMIX_LOAD_PROCID(&p, name, 0);
	}
	core_log(CORE_LOG_INFO, "agent: PMIx tool %s:%u connected", p.nspace, p.rank);
	cbfunc(PMIX_SUCCESS, &p, cbdata);
}

static pmix_server_module_t module = {
    .publish = m_publish,
    .lookup = m_lookup,
    .unpublish = m_unpublish,
    .client_connected = m_connected,
    .client_finalized = m_finalized,
    .abort = m_abort,
    .fence_nb = m_fence,
    .direct_modex = m_dmodex,
    .connect = m_connect,
    .disconnect = m_disconnect,
    .spawn = m_spawn,
    .job_control = m_job_control,
    .tool_connected = m_tool_connected,
};

/* {==== asking the library for a local rank's data (for another agent) */

static void dmodex_answer(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
	struct boot_pmix_call *c = cbdata;

	c->status = status;
	if (status == PMIX_SUCCESS && sz && (c->data = malloc(sz))) {
		memcpy(c->data, data, sz);
		c->ndata = sz;
	} else if (status == PMIX_SUCCESS && sz) {
		c->status = PMIX_ERR_NOMEM;
	}
	push(c);
}

int boot_pmix_dmodex_local(const char *nspace, pmix_rank_t rank, void *ctx)
{
	struct boot_pmix_call *c = call_new(BOOT_PMIX_DMODEX_DATA, NULL);
	pmix_proc_t p;

	if (!c || !the)
		goto fail;
	snprintf(c->nspace, sizeof c->nspace, "%s", nspace);
	c->rank = rank;
	c->ctx = ctx;
	PMIX_LOAD_PROCID(&p, nspace, rank);
	if (PMIx_server_dmodex_request(&p, dmodex_answer, c) == PMIX_SUCCESS)
		return 0;
fail:
	free(c);
	return -1;
}

/* ====} */

static void on_calls(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	struct boot_pmix *px = arg;
	uint64_t n;

	if (read(fd, &n, sizeof n) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&px->lock);
	struct boot_pmix_call *c = px->head;
	px->head = NULL;
	px->tail = &px->head;
	pthread_mutex_unlock(&px->lock);
	while (c) {
		struct boot_pmix_call *next = c->next;
		boot_job_pmix_call(px->ag, c); /* answers and frees it */
		c = next;
	}
}

void boot_pmix_drain(boot_agent_t *ag)
{
	if (ag->pmix)
		on_calls(ag->ev, ag->pmix->efd, 0, ag->pmix);
}

int boot_pmix_running(const boot_agent_t *ag)
{
	return ag->pmix != NULL;
}

int boot_pmix_start(boot_agent_t *ag, char *err, size_t errlen)
{
	if (ag->pmix)
		return 0;
	if (the)
		return core_errprintf(err, errlen, "PMIx server: one per process");
	struct boot_pmix *px = calloc(1, sizeof *px);
	if (!px)
		return core_errprintf(err, errlen, "out of memory");
	px->ag = ag;
	px->tail = &px->head;
	pthread_mutex_init(&px->lock, NULL);
	snprintf(px->dir, sizeof px->dir, "%s/pmix", ag->root);
	px->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (px->efd < 0 || core_mkdir_p(px->dir, 0700) < 0) {
		core_errprintf(err, errlen, "PMIx server: %s", strerror(errno));
		goto fail;
	}
	the = px;
	pmix_info_t info[4];
	bool no = false, yes = true;
	PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, px->dir, PMIX_STRING);
	PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, px->dir, PMIX_STRING);
	PMIX_INFO_LOAD(&info[2], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
	PMIX_INFO_LOAD(&info[3], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
	pmix_status_t rc = PMIx_server_init(&module, info, 4);
	for (int i = 0; i < 4; i++)
		PMIX_INFO_DESTRUCT(&info[i]);
	if (rc != PMIX_SUCCESS) {
		core_errprintf(err, errlen, "PMIx server: %s", PMIx_Error_string(rc));
		the = NULL;
		goto fail;
	}
	ag->pmix = px;
	core_ev_fd(ag->ev, px->efd, CORE_EV_READ, on_calls, px);
	core_log(CORE_LOG_DEBUG, "agent: PMIx server %s up in %s", PMIx_Get_version(), px->dir);
	return 0;
fail:
	if (px->efd >= 0)
		close(px->efd);
	core_rm_rf(px->dir);
	pthread_mutex_destroy(&px->lock);
	free(px);
	return -1;
}

void boot_pmix_stop(boot_agent_t *ag)
{
	struct boot_pmix *px = ag->pmix;

	if (!px)
		return;
	on_calls(ag->ev, px->efd, 0, px); /* what is queued: answered while the library runs */
	boot_pmix_xjob_fini(ag);
	PMIx_server_finalize();
	for (struct boot_pmix_call *c = px->head, *n; c; c = n) { /* came in meanwhile */
		n = c->next;
		boot_pmix_call_free(c);
	}
	core_ev_fd_del(ag->ev, px->efd);
	close(px->efd);
	core_rm_rf(px->dir);
	pthread_mutex_destroy(&px->lock);
	free(px);
	ag->pmix = NULL;
	the = NULL;
}

/* {==== waiting for the library's answer to a call of ours */

struct boot_pmix_wait {
	pthread_mutex_t m;
	pthread_cond_t cv;
	int refs, done;
	pmix_status_t status;
};

struct boot_pmix_wait *boot_pmix_wait_new(void)
{
	struct boot_pmix_wait *w = calloc(1, sizeof *w);

	if (w) {
		pthread_mutex_init(&w->m, NULL);
		pthread_cond_init(&w->cv, NULL);
		w->refs = 2; /* the waiter and the callback: the last one frees it */
	}
	return w;
}

static void wait_unref(struct boot_pmix_wait *w)
{
	pthread_mutex_lock(&w->m);
	int last = --w->refs == 0;
	pthread_mutex_unlock(&w->m);
	if (last) {
		pthread_mutex_destroy(&w->m);
		pthread_cond_destroy(&w->cv);
		free(w);
	}
}

void boot_pmix_op_cb(pmix_status_t status, void *cbdata)
{
	struct boot_pmix_wait *w = cbdata;

	pthread_mutex_lock(&w->m);
	w->status = status;
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->m);
	wait_unref(w);
}

pmix_status_t boot_pmix_wait(struct boot_pmix_wait *w)
{
	struct timespec until;
	pmix_status_t rc = PMIX_ERR_TIMEOUT;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&w->m);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->m, &until) == 0)
		;
	if (w->done)
		rc = w->status;
	pthread_mutex_unlock(&w->m);
	wait_unref(w);
	return rc;
}

/* ====} */

#ifdef LAMKIT_SANITIZE
/* The sanitizer variant links Debian's libpmix, whose server keeps some allocations to the end
 * of the process (its own business, not a leak of ours): LeakSanitizer is told to pass them. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpmix.so\nleak:libevent\nleak:libhwloc.so\n";
}
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
#endif
