/* lib/boot/job_pmi.c: the agent's side of PMI for one job: a socketpair (PMI_FD) or a TCP
 * listener (PMI_PORT) per rank, the engine's ops, and the fence (local or up the tree). */
#include "core.h"
#include "job_internal.h"
#include "pmi_topo.h"
#include "job_pmix_int.h"
#include "pmix_host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct boot_rank *conn_rank(pmi_conn_t *c)
{
	return c ? pmi_conn_data(c) : NULL;
}

static void op_send(void *arg, pmi_conn_t *c, const char *line, size_t len)
{
	struct boot_rank *r = conn_rank(c);
	int fd = r ? r->pmi_fd : -1;

	/* replies are small and clients wait for each one: a full socket means a client that
	 * does not read; it gets nothing more */
	if (fd >= 0 && send(fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		core_log(CORE_LOG_DEBUG, "PMI reply to rank %d lost: %s", r ? r->rank : -1,
		         strerror(errno));
}

/* The fence ended with the merged batch: the PMI ranks' KVS and the PMIx server's. */
static void fence_finish(boot_job_t *j, const char *p, size_t n)
{
	if (pmi_server_fence_done(j->pmi, p, n) < 0)
		core_log(CORE_LOG_ERROR, "agent: job %u: malformed fence data", j->js.jobid);
	boot_job_pmix_fence_done(j, p, n);
}

static void fence_local(core_ev_t *ev, void *arg)
{
	boot_job_t *j = arg;
	struct core_wbuf acc = j->fence_acc;

	j->fence_timer = 0;
	memset(&j->fence_acc, 0, sizeof j->fence_acc);
	fence_finish(j, acc.p, acc.len);
	core_w_free(&acc);
}

/* {==== the fence tree: children's deltas merge here, go up, and the root's answer comes
 * down the same links; no agent and no controller ever holds more than one level */

static int tree_mode(const boot_job_t *j)
{
	return j->js.nagents > 1 &&
	       ((j->js.fence_parent && *j->js.fence_parent) || j->js.fence_children > 0);
}

static void send_down(boot_job_t *j, const char *p, size_t n)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, j->fence_epoch);
	for (int i = 0; i < j->nkids; i++)
		if (j->fence_kids[i])
			boot_link_send(j->fence_kids[i], BOOT_MSG_FENCE_DOWN, w.p, w.len, p, n);
	core_w_free(&w);
	j->nkids = 0;
}

static void tree_lost(boot_job_t *j, const char *why)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_str(&w, why);
	boot_job_send(j, BOOT_MSG_FENCE_LOST, &w, NULL, 0);
	core_w_free(&w);
}

static void up_ready(boot_link_t *l, void *arg)
{
	boot_job_t *j = arg;

	if (j->up_wait.len)
		boot_link_send(l, BOOT_MSG_FENCE_UP, j->up_wait.p, j->up_wait.len, NULL, 0);
	core_w_free(&j->up_wait);
}

static void up_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	boot_job_t *j = arg;
	struct core_rbuf r = {.p = d, .len = len};

	if (type != BOOT_MSG_FENCE_DOWN || core_r_u32(&r) != j->js.jobid)
		return;
	boot_job_fence_down(j, &r);
}

static void up_close(boot_link_t *l, int err, const char *why, void *arg)
{
	boot_job_t *j = arg;
	char msg[600];

	boot_link_destroy(l);
	j->fence_up = NULL;
	if (j->killed || j->nalive == 0)
		return;
	snprintf(msg, sizeof msg, "lost the fence tree's parent agent: %s", why);
	core_log(CORE_LOG_ERROR, "agent: job %u: %s", j->js.jobid, msg);
	tree_lost(j, msg);
}

static const struct boot_link_cbs up_cbs = {
    .on_ready = up_ready, .on_frame = up_frame, .on_close = up_close};

/* Connect to the parent agent at job start, so the link is ready by the first fence. */
static int tree_connect(boot_job_t *j, char *err, size_t errlen)
{
	char addr[80];
	const char *colon = strrchr(j->js.fence_parent, ':');

	if (!j->ag->uopts || !colon || colon == j->js.fence_parent)
		return core_errprintf(err, errlen, "fence parent '%s' unusable here",
		                      j->js.fence_parent);
	snprintf(addr, sizeof addr, "%.*s", (int)(colon - j->js.fence_parent), j->js.fence_parent);
	int fd = boot_tcp_connect(addr, atoi(colon + 1), err, errlen);
	if (fd < 0)
		return -1;
	j->fence_up = boot_link_secure(j->ag->ev, fd, 1, j->ag->uopts->key, j->js.fence_parent,
	                               10000, &up_cbs, j);
	if (!j->fence_up) {
		close(fd);
		return core_errprintf(err, errlen, "fence parent: %s", strerror(errno));
	}
	return 0;
}

/* Our ranks and every child are in: merge upward, or at the root answer everyone. */
static void tree_try(boot_job_t *j)
{
	if (!j->fence_in || j->nkids < j->js.fence_children)
		return;
	j->fence_in = 0;
	struct core_wbuf acc = j->fence_acc;
	memset(&j->fence_acc, 0, sizeof j->fence_acc);
	if (!j->js.fence_parent || !*j->js.fence_parent) {
		send_down(j, acc.p, acc.len);
		fence_finish(j, acc.p, acc.len);
	} else {
		struct core_wbuf w = {0};
		core_w_u32(&w, j->js.jobid);
		core_w_u32(&w, j->fence_epoch);
		core_w_bytes(&w, acc.p, acc.len);
		if (j->fence_up && boot_link_ready(j->fence_up))
			boot_link_send(j->fence_up, BOOT_MSG_FENCE_UP, w.p, w.len, NULL, 0);
		else if (j->fence_up)
			j->up_wait = w, w = (struct core_wbuf){0};
		else
			tree_lost(j, "no link to the fence tree's parent agent");
		core_w_free(&w);
	}
	core_w_free(&acc);
}

void boot_job_fence_child(boot_job_t *j, boot_link_t *from, struct core_rbuf *r)
{
	uint32_t epoch = core_r_u32(r);
	size_t n = r->len - r->off;
	const char *p = core_r_bytes(r, n);

	if (r->err || !tree_mode(j) || epoch != j->fence_epoch + (j->fence_in ? 0u : 1u) ||
	    j->nkids >= j->js.fence_children) {
		core_log(CORE_LOG_ERROR, "agent: job %u: unexpected fence contribution (epoch %u)",
		         j->js.jobid, epoch);
		return;
	}
	boot_link_t **nk = realloc(j->fence_kids, (size_t)(j->nkids + 1) * sizeof *nk);
	if (!nk)
		return;
	j->fence_kids = nk;
	j->fence_kids[j->nkids++] = from;
	core_w_bytes(&j->fence_acc, p, n);
	tree_try(j);
}

void boot_job_forget_link(boot_job_t *j, boot_link_t *l)
{
	for (int i = 0; i < j->nkids; i++)
		if (j->fence_kids[i] == l)
			j->fence_kids[i] = NULL;
}

/* ====} */

static void op_fence(void *arg, const char *delta, size_t len)
{
	if (!boot_job_fence_pmi(arg, delta, len)) /* no PMIx ranks here: on at once */
		boot_job_fence_enter(arg, delta, len);
}

void boot_job_fence_enter(boot_job_t *j, const char *delta, size_t len)
{
	j->fence_epoch++;
	if (tree_mode(j)) {
		core_w_bytes(&j->fence_acc, delta, len);
		j->fence_in = 1;
		tree_try(j);
		return;
	}
	if (j->js.nagents <= 1) {
		/* every rank is ours: the KVS is complete; answer from the loop, not re-entrantly
		 */
		core_w_bytes(&j->fence_acc, delta, len);
		j->fence_timer = core_ev_timer(j->ag->ev, 0, fence_local, j);
		return;
	}
	struct core_wbuf w = {0};
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, j->fence_epoch);
	boot_job_send(j, BOOT_MSG_FENCE_UP, &w, delta, len);
	core_w_free(&w);
}

void boot_job_fence_down(boot_job_t *j, struct core_rbuf *r)
{
	uint32_t epoch = core_r_u32(r);
	size_t n = r->len - r->off;
	const char *p = core_r_bytes(r, n);

	if (r->err || epoch != j->fence_epoch) {
		core_log(CORE_LOG_ERROR, "agent: job %u: fence epoch %u, expected %u", j->js.jobid,
		         epoch, j->fence_epoch);
		return;
	}
	send_down(j, p, n); /* our children in the fence tree, if any */
	fence_finish(j, p, n);
}

static void op_abort(void *arg, pmi_conn_t *c, int code, const char *msg)
{
	boot_job_t *j = arg;
	struct boot_rank *r = conn_rank(c);
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)(r ? r->rank : pmi_conn_rank(c)));
	core_w_u32(&w, (uint32_t)code);
	const struct boot_app *app = r ? boot_jobspec_app(&j->js, r->rank) : NULL;
	if (app && j->app_ompi && (j->app_ompi[app - j->js.apps] & BOOT_APP_OMPI_SPAWN)) {
		/* Open MPI says only "N/A": if it was MPI_Comm_spawn, say why it cannot work */
		char m[512];
		snprintf(m, sizeof m,
		         "%s (if MPI_Comm_spawn failed: Open MPI 4.1 spawns only through a PMIx "
		         "server; its PMI-1 (flux) component, --mpi openmpi-flux, has no spawn)",
		         msg ? msg : "");
		core_w_str(&w, m);
	} else {
		core_w_str(&w, msg ? msg : "");
	}
	boot_job_send(j, BOOT_MSG_ABORT, &w, NULL, 0);
	core_w_free(&w);
}

static void op_finalize(void *arg, pmi_conn_t *c)
{
	struct boot_rank *r = conn_rank(c);

	if (r)
		r->pmi_state = BOOT_PMI_FINALIZED;
}

static void op_error(void *arg, pmi_conn_t *c, const char *msg)
{
	boot_job_t *j = arg;
	struct boot_rank *r = conn_rank(c);
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)(r ? r->rank : pmi_conn_rank(c)));
	core_w_str(&w, msg);
	boot_job_send(j, BOOT_MSG_PMI_ERROR, &w, NULL, 0);
	core_w_free(&w);
}

static int op_resource(void *arg, pmi_conn_t *c, int op, const char *kind, const char *name,
                       char *why, size_t whylen)
{
	struct boot_rank *r = conn_rank(c);

	return boot_job_res_op(arg, r ? r->rank : pmi_conn_rank(c), op, kind, name, why, whylen);
}

/* A rank asks for a new job (MPI_Comm_spawn): the controller places and starts it and answers
 * with SPAWN_REPLY (boot_job_spawn_reply). */
static int op_spawn(void *arg, pmi_conn_t *c, int ncmds, const struct pmi_spawn_cmd *cmds,
                    int npreput, char *const preput[])
{
	boot_job_t *j = arg;
	struct boot_rank *r = conn_rank(c);
	int rank = r ? r->rank : pmi_conn_rank(c);
	struct core_wbuf w = {0};

	if (!j->ctl || rank < 0)
		return -1;
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)rank);
	core_w_u32(&w, (uint32_t)ncmds);
	for (int i = 0; i < ncmds; i++) {
		core_w_str(&w, cmds[i].exe);
		core_w_u32(&w, (uint32_t)cmds[i].nprocs);
		core_w_u32(&w, (uint32_t)cmds[i].argc);
		for (int k = 0; k < cmds[i].argc; k++)
			core_w_str(&w, cmds[i].argv[k]);
		core_w_u32(&w, (uint32_t)(2 * cmds[i].ninfo));
		for (int k = 0; k < 2 * cmds[i].ninfo; k++)
			core_w_str(&w, cmds[i].info[k]);
	}
	core_w_u32(&w, (uint32_t)(2 * npreput));
	for (int k = 0; k < 2 * npreput; k++)
		core_w_str(&w, preput[k]);
	int rc = w.err ? -1 : 0;
	if (!w.err)
		boot_job_send(j, BOOT_MSG_SPAWN, &w, NULL, 0);
	core_w_free(&w);
	return rc;
}

/* The engine refused a spawn request itself (a bound passed): the controller prints the line;
 * a SPAWN frame of no commands carries it (the rank has its rc=-1 already). */
static void op_spawn_refused(void *arg, pmi_conn_t *c, const char *msg)
{
	boot_job_t *j = arg;
	struct boot_rank *r = conn_rank(c);
	int rank = r ? r->rank : pmi_conn_rank(c);
	struct core_wbuf w = {0};

	if (!j->ctl || rank < 0)
		return;
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)rank);
	core_w_u32(&w, 0);
	core_w_str(&w, msg);
	if (!w.err)
		boot_job_send(j, BOOT_MSG_SPAWN, &w, NULL, 0);
	core_w_free(&w);
}

void boot_job_spawn_reply(boot_job_t *j, struct core_rbuf *r)
{
	int rank = (int)core_r_u32(r), rc = (int)core_r_u32(r);
	const char *s = core_r_str(r);

	if (r->err || boot_job_pmix_spawn_done(j, rank, rc, s))
		return;
	for (int i = 0; i < j->nranks; i++)
		if (j->r[i].rank == rank && j->r[i].pmi) {
			pmi_conn_spawn_done(j->r[i].pmi, rc, rc ? NULL : s, rc ? s : NULL);
			return;
		}
	/* the rank is gone (or a PMI_PORT conn not yet known): nobody waits for the answer */
}

/* {==== the universe's name service: requests go to the head agent (js.names_at) over one
 * link per job, opened at the first request; answers come back by rank */

static void names_answer_all(boot_job_t *j, int rc, const char *why)
{
	for (int i = 0; i < j->nranks; i++)
		if (!j->r[i].pmi || pmi_conn_names_done(j->r[i].pmi, rc, why) < 0)
			boot_job_pmix_names_done(j, j->r[i].rank, rc,
			                         why); /* none waits: nothing */
}

static void names_ready(boot_link_t *l, void *arg)
{
	boot_job_t *j = arg;
	struct core_rbuf r = {.p = j->names_wait.p, .len = j->names_wait.len};

	while (r.off < r.len && !r.err) {
		uint32_t type = core_r_u32(&r), n = core_r_u32(&r);
		const char *p = core_r_bytes(&r, n);
		if (p)
			boot_link_send(l, type, p, n, NULL, 0);
	}
	core_w_free(&j->names_wait);
}

void boot_job_names_reply(boot_job_t *j, struct core_rbuf *r)
{
	int rank = (int)core_r_u32(r), rc = (int)core_r_u32(r);
	const char *val = core_r_str(r);

	if (r->err)
		return;
	for (int i = 0; i < j->nranks; i++)
		if (j->r[i].rank == rank &&
		    (!j->r[i].pmi || pmi_conn_names_done(j->r[i].pmi, rc, val) < 0))
			boot_job_pmix_names_done(j, rank, rc, val); /* a PMIx rank's request */
}

static void names_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	boot_job_t *j = arg;
	struct core_rbuf r = {.p = d, .len = len};
	uint32_t id = core_r_u32(&r);

	if (r.err || id != j->js.jobid)
		return;
	if (type == BOOT_MSG_NAMES_REPLY)
		boot_job_names_reply(j, &r);
	else
		boot_job_pmix_rdv_frame(j, type, &r); /* the rendezvous' PMIx answers */
}

static void names_close(boot_link_t *l, int err, const char *why, void *arg)
{
	boot_job_t *j = arg;

	boot_link_destroy(l);
	j->names_up = NULL;
	core_w_free(&j->names_wait);
	core_log(CORE_LOG_ERROR, "agent: job %u: lost the name service at %s: %s", j->js.jobid,
	         j->js.names_at, why);
	names_answer_all(j, -1, "name_service_unreachable");
	boot_job_pmix_rdv_lost(j);
}

static const struct boot_link_cbs names_cbs = {
    .on_ready = names_ready, .on_frame = names_frame, .on_close = names_close};

static int names_connect(boot_job_t *j)
{
	char addr[80], err[256];
	const char *colon = strrchr(j->js.names_at, ':');

	if (!j->ag->uopts || !colon || colon == j->js.names_at)
		return -1;
	snprintf(addr, sizeof addr, "%.*s", (int)(colon - j->js.names_at), j->js.names_at);
	int fd = boot_tcp_connect(addr, atoi(colon + 1), err, sizeof err);
	if (fd < 0) {
		core_log(CORE_LOG_ERROR, "agent: job %u: name service: %s", j->js.jobid, err);
		return -1;
	}
	j->names_up = boot_link_secure(j->ag->ev, fd, 1, j->ag->uopts->key, j->js.names_at, 10000,
	                               &names_cbs, j);
	if (!j->names_up) {
		close(fd);
		return -1;
	}
	return 0;
}

/* Publish/unpublish/lookup of a universe job go to the head agent; without one (no
 * universe) the engine serves the job's own table. */
static int op_names(void *arg, pmi_conn_t *c, int op, const char *name, const char *port)
{
	struct boot_rank *r = conn_rank(c);

	return boot_job_names(arg, r ? r->rank : pmi_conn_rank(c), op, name, port);
}

int boot_job_rdv_send(boot_job_t *j, unsigned type, const struct core_wbuf *w)
{
	if (!j->js.names_at || !*j->js.names_at) { /* no universe: the family's mpiexec */
		if (!j->ctl || w->err)
			return -1;
		return boot_link_send(j->ctl, type, w->p, w->len, NULL, 0);
	}
	if (w->err || (!j->names_up && names_connect(j) < 0))
		return -1; /* said in the log */
	if (boot_link_send(j->names_up, type, w->p, w->len, NULL, 0) == 0)
		return 0;
	if (errno != ENOTCONN)
		return -1;
	/* handshake still going: names_ready sends it */
	core_w_u32(&j->names_wait, type);
	core_w_u32(&j->names_wait, (uint32_t)w->len);
	core_w_bytes(&j->names_wait, w->p, w->len);
	return j->names_wait.err ? -1 : 0;
}

int boot_job_names(boot_job_t *j, int rank, int op, const char *name, const char *port)
{
	struct core_wbuf w = {0};

	if (rank < 0)
		return 1;
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)rank);
	core_w_u32(&w, (uint32_t)op);
	core_w_str(&w, name);
	core_w_str(&w, port ? port : "");
	int rc = boot_job_rdv_send(j, BOOT_MSG_NAMES, &w);
	core_w_free(&w);
	return rc < 0 ? 1 : 0; /* not sent: the job's own table answers */
}

/* ====} */

static const struct pmi_server_ops ops = {
    .names = op_names,
    .spawn = op_spawn,
    .refused = op_spawn_refused,
    .send = op_send,
    .fence = op_fence,
    .abort = op_abort,
    .finalize = op_finalize,
    .error = op_error,
    .resource = op_resource,
};

static void close_pmi(boot_job_t *j, struct boot_rank *r)
{
	if (r->pmi) {
		if (pmi_conn_finalized(r->pmi))
			r->pmi_state = BOOT_PMI_FINALIZED;
		else if (pmi_conn_initialized(r->pmi))
			r->pmi_state = BOOT_PMI_INIT;
		pmi_conn_destroy(r->pmi);
		r->pmi = NULL;
	}
	if (r->pmi_fd >= 0) {
		core_ev_fd_del(j->ag->ev, r->pmi_fd);
		close(r->pmi_fd);
		r->pmi_fd = -1;
	}
}

/* Read and feed what is there: 0 = EOF or error (close), 1 = fed, 2 = nothing right now. */
static int pmi_read(boot_job_t *j, struct boot_rank *r)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(r->pmi_fd, buf, sizeof buf)) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return 2;
	if (n <= 0)
		return 0;
	if (pmi_conn_feed(r->pmi, buf, (size_t)n) < 0)
		return 0;
	return 1;
}

static void on_pmi(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	struct boot_rank *r = arg;
	boot_job_t *j = r->job;

	if (pmi_read(j, r))
		return;
	close_pmi(j, r);
	if (r->adopted && !r->exited) /* the singleton hung up: it is done */
		boot_job_rank_gone(j, r, r->pmi_state == BOOT_PMI_FINALIZED ? 0 : 1 << 8);
}

void boot_job_pmi_rank_exit(boot_job_t *j, struct boot_rank *r)
{
	if (j->px) { /* a PMIx rank's finalize is queued before the rank could exit */
		boot_pmix_drain(j->ag);
		boot_pmix_xjob_rank_gone(j, r->rank); /* what it did not commit, it never will */
	}
	/* the rank is dead: everything it wrote is in the socket; read it before judging */
	while (r->pmi_fd >= 0 && r->pmi && pmi_read(j, r) == 1)
		;
	close_pmi(j, r);
}

int boot_job_pmi_adopts(const boot_job_t *j, int rank)
{
	return j->ag->opts && j->ag->opts->singinit_fd >= 0 && rank == 0 && !j->ag->njobs;
}

int boot_job_pmi_rank(boot_job_t *j, struct boot_rank *r, char *err, size_t errlen)
{
	int sv[2];

	if (boot_job_pmi_adopts(j, r->rank)) {
		r->adopted = 1;
		r->pid = j->ag->opts->singinit_pid;
		r->pmi_fd = j->ag->opts->singinit_fd;
		r->pmi = pmi_conn_create(j->pmi, 0);
		if (!r->pmi)
			return core_errprintf(err, errlen, "out of memory");
		pmi_conn_set_data(r->pmi, r);
		core_fd_nonblock(r->pmi_fd, 1);
		core_ev_fd(j->ag->ev, r->pmi_fd, CORE_EV_READ, on_pmi, r);
		pmi_conn_start_singinit(r->pmi);
		j->nalive++;
		return 0;
	}
	if (j->js.pmi_port)
		return 0; /* the rank connects to our listener and says who it is */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return core_errprintf(err, errlen, "socketpair: %s", strerror(errno));
	r->pmi = pmi_conn_create(j->pmi, r->rank);
	if (!r->pmi) {
		close(sv[0]);
		close(sv[1]);
		return core_errprintf(err, errlen, "out of memory");
	}
	pmi_conn_set_data(r->pmi, r);
	r->pmi_fd = sv[0];
	r->pmi_child_fd = sv[1];
	core_fd_nonblock_new(r->pmi_fd);
	core_ev_fd(j->ag->ev, r->pmi_fd, CORE_EV_READ, on_pmi, r);
	return 0;
}

/* {==== PMI_PORT: connections arrive anonymous and name their rank with initack */

struct anon {
	struct boot_rank tmp; /* stands in for the rank until initack names it */
	pmi_conn_t *c;
	struct anon *next, **prev; /* in j->anons, so a job that ends frees them */
};

static void anon_unlink(struct anon *a)
{
	*a->prev = a->next;
	if (a->next)
		a->next->prev = a->prev;
}

static void on_anon(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	struct anon *a = arg;
	boot_job_t *j = a->tmp.job;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && pmi_conn_feed(a->c, buf, (size_t)n) == 0) {
		int rank = pmi_conn_rank(a->c);
		if (rank < 0)
			return;
		for (int i = 0; i < j->nranks; i++) {
			struct boot_rank *r = &j->r[i];
			if (r->rank == rank && !r->pmi && r->pmi_fd < 0) {
				r->pmi = a->c;
				r->pmi_fd = fd;
				pmi_conn_set_data(a->c, r);
				core_ev_fd(ev, fd, CORE_EV_READ, on_pmi, r);
				anon_unlink(a);
				free(a);
				return;
			}
		}
		core_log(CORE_LOG_WARN,
		         "agent: job %u: PMI connection claims rank %d, which is not ours or "
		         "already connected",
		         j->js.jobid, rank);
	}
	core_ev_fd_del(ev, fd);
	close(fd);
	pmi_conn_destroy(a->c);
	anon_unlink(a);
	free(a);
}

static void on_accept(core_ev_t *ev, int lfd, unsigned events, void *arg)
{
	boot_job_t *j = arg;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	struct anon *a = calloc(1, sizeof *a);
	if (a)
		a->c = pmi_conn_create(j->pmi, -1);
	if (!a || !a->c) {
		free(a);
		close(fd);
		return;
	}
	a->tmp = (struct boot_rank){
	    .job = j, .rank = -1, .pmi_fd = fd, .out_fd = -1, .err_fd = -1, .pmi_child_fd = -1};
	pmi_conn_set_data(a->c, &a->tmp);
	a->next = j->anons;
	a->prev = &j->anons;
	if (j->anons)
		j->anons->prev = &a->next;
	j->anons = a;
	core_ev_fd(ev, fd, CORE_EV_READ, on_anon, a);
}

static int listen_port(boot_job_t *j, char *err, size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;

	j->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (j->listen_fd < 0 || bind(j->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(j->listen_fd, 1024) < 0 ||
	    getsockname(j->listen_fd, (struct sockaddr *)&sa, &sl) < 0)
		return core_errprintf(err, errlen, "PMI port: %s", strerror(errno));
	snprintf(j->port_str, sizeof j->port_str, "127.0.0.1:%u", ntohs(sa.sin_port));
	return core_ev_fd(j->ag->ev, j->listen_fd, CORE_EV_READ, on_accept, j);
}

/* ====} */

int boot_job_pmi_init(boot_job_t *j, char *err, size_t errlen)
{
	int *appnum = calloc((size_t)j->js.size, sizeof *appnum);

	j->listen_fd = -1;
	if (!appnum)
		return core_errprintf(err, errlen, "out of memory");
	for (int a = 0; a < j->js.napps; a++)
		for (int k = 0; k < j->js.apps[a].nprocs; k++)
			appnum[j->js.apps[a].first_rank + k] = a;
	struct pmi_server_cfg cfg = {.kvsname = j->js.kvsname,
	                             .size = j->js.size,
	                             .universe_size = j->js.universe_size,
	                             .nlocal = boot_job_pmi_nlocal(j) ? boot_job_pmi_nlocal(j)
	                                                              : j->nranks,
	                             .appnum = appnum,
	                             .spawner = j->js.spawner};
	j->pmi = pmi_server_create(&cfg, &ops, j);
	free(appnum);
	if (!j->pmi)
		return core_errprintf(err, errlen, "PMI server: %s", strerror(errno));
	if (j->js.process_mapping && *j->js.process_mapping &&
	    pmi_server_preput(j->pmi, "PMI_process_mapping", j->js.process_mapping) < 0)
		return core_errprintf(err, errlen, "PMI server: %s", strerror(errno));
	for (int i = 0; i + 1 < j->js.npreput; i += 2) /* the spawning job's keys: its port */
		if (pmi_server_preput(j->pmi, j->js.preput[i], j->js.preput[i + 1]) < 0)
			return core_errprintf(err, errlen, "PMI server: preput key %s: %s",
			                      j->js.preput[i], strerror(errno));
	if (j->js.pmi_port && listen_port(j, err, errlen) < 0)
		return -1;
	if (tree_mode(j) && j->js.fence_parent && *j->js.fence_parent &&
	    tree_connect(j, err, errlen) < 0)
		return -1;
	return 0;
}

/* Our node's number comes from PMI_process_mapping (the controller numbers nodes by their
 * lowest rank, as the mapping does); without a usable mapping it stays unknown. The sockets
 * and cores come from this node's topology (job_bind.c read it from /sys, or LAMKIT_SYSFS):
 * the agent runs where its ranks run. */
void boot_job_pmi_topo(boot_job_t *j)
{
	char text[PMI_TOPO_TEXT_MAX + 1];
	const char *map = j->js.process_mapping;
	int *node = map && *map ? malloc((size_t)j->js.size * sizeof *node) : NULL;
	int *ranks = malloc((size_t)j->nranks * sizeof *ranks), nn = -1, me = -1, nb = 0;
	struct pmi_topo_bind *b = malloc((size_t)j->nranks * sizeof *b);
	const char *sysfs = getenv("LAMKIT_SYSFS");
	char sysroot[4200];

	if (!j->pmi || !ranks || !b || j->nranks < 1)
		goto out;
	if (sysfs && *sysfs)
		snprintf(sysroot, sizeof sysroot, "%s/cpu", sysfs);
	else
		snprintf(sysroot, sizeof sysroot, "%s", PMI_TOPO_SYSFS);
	if (node && (nn = pmi_topo_mapping(map, node, j->js.size)) > 0) {
		me = node[j->r[0].rank];
		for (int i = 0; i < j->nranks; i++)
			if (node[j->r[i].rank] != me)
				me = -1; /* the mapping does not describe this agent: say nothing */
	}
	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		const struct boot_topo *t = j->topo;
		ranks[i] = r->rank;
		int s0 = -1, c0 = -2, s, c, ok = t && r->bind_lo >= 0;
		/* bound inside one socket: its physical_package_id, and the core_id if inside
		 * one core (doc/PROTOCOL-pmi.md part 5) */
		for (int pu = ok ? r->bind_lo : 0; ok && pu < r->bind_hi; pu++) {
			ok = pmi_topo_cpu(sysroot, t->os[pu], &s, &c) == 0 && (s0 < 0 || s == s0);
			c0 = c0 == -2 || c0 == c ? c : -1;
			s0 = s;
		}
		if (!ok)
			continue;
		b[nb].socket = s0;
		b[nb].core = c0;
		b[nb++].rank = r->rank;
	}
	if (pmi_topo_encode(text, sizeof text, me, me >= 0 ? nn : -1, ranks, j->nranks, b, nb) <
	        0 ||
	    pmi_server_nodeattr(j->pmi, PMI_TOPO_KEY, text) < 0)
		core_log(CORE_LOG_DEBUG, "agent: job %u: no topology for PMI: %s", j->js.jobid,
		         strerror(errno));
out:
	free(node);
	free(ranks);
	free(b);
}

void boot_job_pmi_destroy(boot_job_t *j)
{
	while (j->anons) { /* connections that never said which rank they are */
		struct anon *a = j->anons;
		core_ev_fd_del(j->ag->ev, a->tmp.pmi_fd);
		close(a->tmp.pmi_fd);
		pmi_conn_destroy(a->c);
		anon_unlink(a);
		free(a);
	}
	for (int i = 0; i < j->nranks; i++)
		close_pmi(j, &j->r[i]);
	if (j->listen_fd >= 0) {
		core_ev_fd_del(j->ag->ev, j->listen_fd);
		close(j->listen_fd);
	}
	if (j->fence_timer > 0)
		core_ev_timer_cancel(j->ag->ev, j->fence_timer);
	pmi_server_destroy(j->pmi);
	j->pmi = NULL;
	boot_link_destroy(j->fence_up);
	j->fence_up = NULL;
	boot_link_destroy(j->names_up);
	j->names_up = NULL;
	core_w_free(&j->names_wait);
	core_w_free(&j->fence_acc);
	core_w_free(&j->up_wait);
	free(j->fence_kids);
	j->fence_kids = NULL;
}
