/* lib/boot/agent.c: the agent's main loop: controller links, the universe port, the launch
 * tree, signals, reaping. */
#include "agent.h"
#include "core.h"
#include "job_ps.h"
#include "launch.h"
#include "names.h"
#include "xcoll.h"
#include "pmi_server.h"
#include "pmix_host.h"
#include "session.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct ctlr {
	boot_link_t *l;
	boot_agent_t *ag;
	int is_origin;
};

/* A child agent this agent starts for the launch tree, on behalf of the link that asked. */
struct ulaunch {
	boot_launch_t *l;
	boot_link_t *asker;
	uint32_t node;
};

/* A child agent's FENCE_UP can overtake our own JOB_START (different connections). */
struct early {
	uint32_t jobid;
	boot_link_t *from;
	char *data; /* the frame after the jobid */
	size_t len;
};

static void early_keep(boot_agent_t *ag, uint32_t jobid, boot_link_t *from, struct core_rbuf *r)
{
	size_t n = r->len - r->off;
	struct early *ne = realloc(ag->early, (size_t)(ag->nearly + 1) * sizeof *ne);
	char *d = malloc(n + 1);

	if (!ne || !d || ag->nearly >= 4096) {
		free(d);
		if (ne)
			ag->early = ne;
		return;
	}
	memcpy(d, r->p + r->off, n);
	ag->early = ne;
	ag->early[ag->nearly++] = (struct early){.jobid = jobid, .from = from, .data = d, .len = n};
}

/* Replay what came early for job j (just started); drop what came from link `gone`. */
static void early_replay(boot_agent_t *ag, boot_job_t *j, boot_link_t *gone)
{
	for (int i = 0; i < ag->nearly;) {
		struct early *e = &ag->early[i];
		if (j && e->jobid == boot_job_id(j)) {
			struct core_rbuf r = {.p = e->data, .len = e->len};
			boot_job_fence_child(j, e->from, &r);
		} else if (!gone || e->from != gone) {
			i++;
			continue;
		}
		free(e->data);
		ag->early[i] = ag->early[--ag->nearly];
	}
}

static boot_job_t *find_job(boot_agent_t *ag, uint32_t id)
{
	for (int i = 0; i < ag->njobs; i++)
		if (boot_job_id(ag->jobs[i]) == id)
			return ag->jobs[i];
	return NULL;
}

static void maybe_stop(boot_agent_t *ag)
{
	for (int i = 0; i < ag->njobs;) {
		if (boot_job_finished(ag->jobs[i])) {
			boot_job_destroy(ag->jobs[i]);
			ag->jobs[i] = ag->jobs[--ag->njobs];
		} else {
			i++;
		}
	}
	if (ag->stopping && ag->njobs == 0)
		core_ev_stop(ag->ev);
}

static void on_poke(core_ev_t *ev, void *arg)
{
	boot_agent_t *ag = arg;

	ag->poke_timer = 0;
	maybe_stop(ag);
}

void boot_agent_poke(boot_agent_t *ag)
{
	if (!ag->poke_timer)
		ag->poke_timer = core_ev_timer(ag->ev, 0, on_poke, ag);
}

static void stop_all(boot_agent_t *ag)
{
	if (!ag->stopping)
		boot_watch_bye(ag->watch); /* the head hears it is on purpose */
	ag->stopping = 1;
	for (int i = 0; i < ag->njobs; i++)
		boot_job_kill(ag->jobs[i]);
	maybe_stop(ag);
}

/* Tell the controller a job cannot start (it would otherwise wait for it forever). */
static void reject_job(boot_link_t *l, uint32_t jobid, const char *why)
{
	struct core_wbuf w = {0};

	core_log(CORE_LOG_ERROR, "agent: job %u: %s", jobid, why);
	core_w_u32(&w, jobid);
	core_w_u32(&w, 0);
	core_w_u32(&w, EPROTO);
	core_w_str(&w, why);
	boot_link_send(l, BOOT_MSG_SPAWN_FAIL, w.p, w.len, NULL, 0);
	core_w_free(&w);
	core_w_u32(&w, jobid);
	boot_link_send(l, BOOT_MSG_JOB_DONE, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

static void send_hello(boot_agent_t *ag, boot_link_t *l)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, BOOT_PROTO_VERSION);
	core_w_str(&w, core_hostname());
	core_w_u32(&w, (uint32_t)getpid());
	core_w_u32(&w, (uint32_t)core_cpu_count());
	boot_watch_summary(ag->watch, &w); /* which nodes are down: controllers place around them */
	boot_link_send(l, BOOT_MSG_HELLO, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

static void send_status(boot_agent_t *ag, boot_link_t *l)
{
	struct core_wbuf w = {0};
	int nranks = 0;

	for (int i = 0; i < ag->njobs; i++)
		nranks += boot_job_nranks(ag->jobs[i]);
	core_w_u32(&w, ag->uopts ? (uint32_t)ag->uopts->node : 0);
	core_w_str(&w, core_hostname());
	core_w_u32(&w, (uint32_t)getpid());
	core_w_u32(&w, (uint32_t)core_cpu_count());
	core_w_u32(&w, (uint32_t)ag->njobs);
	core_w_u32(&w, (uint32_t)nranks);
	core_w_i64(&w, core_now_ms() - ag->started_ms);
	core_w_str(&w, LAMKIT_VERSION);
	boot_link_send(l, BOOT_MSG_STATUS_REPLY, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

/* ps: every rank's record; clean: kill every job's ranks (the agent stays); job signal. */
static void universe_cmd(boot_agent_t *ag, boot_link_t *l, unsigned type, struct core_rbuf *r)
{
	struct core_wbuf w = {0}, recs = {0};
	uint32_t n = 0, jobs = 0, id = 0, sig = 0;

	if (type == BOOT_MSG_JOB_SIGNAL) {
		id = core_r_u32(r);
		sig = core_r_u32(r);
		if (r->err || sig == 0 || sig >= 65)
			return;
	}
	for (int i = 0; i < ag->njobs; i++) {
		boot_job_t *j = ag->jobs[i];
		if (type == BOOT_MSG_PS) {
			n += (uint32_t)boot_job_ps(j, &recs);
		} else if (type == BOOT_MSG_CLEAN && !boot_job_finished(j)) {
			core_log(CORE_LOG_INFO, "agent: job %u ended by clean from %s",
			         boot_job_id(j), boot_link_peer(l));
			n += (uint32_t)boot_job_nranks(j);
			jobs++;
			boot_job_kill(j);
		} else if (type == BOOT_MSG_JOB_SIGNAL && boot_job_id(j) == id) {
			n += (uint32_t)boot_job_signal(j, (int)sig);
		}
	}
	if (type == BOOT_MSG_PS) {
		core_w_u32(&w, ag->uopts ? (uint32_t)ag->uopts->node : 0);
		core_w_str(&w, core_hostname());
		core_w_u32(&w, n);
		boot_link_send(l, BOOT_MSG_PS_REPLY, w.p, w.len, recs.p, recs.len);
	} else if (type == BOOT_MSG_CLEAN) {
		core_w_u32(&w, jobs);
		core_w_u32(&w, n);
		boot_link_send(l, BOOT_MSG_CLEAN_REPLY, w.p, w.len, NULL, 0);
	} else {
		core_w_u32(&w, id);
		core_w_u32(&w, n);
		boot_link_send(l, BOOT_MSG_JOB_SIGNAL_REPLY, w.p, w.len, NULL, 0);
	}
	core_w_free(&w);
	core_w_free(&recs);
	maybe_stop(ag);
}

/* {==== the launch tree: start a child agent with the key on its stdin */

static void launch_report(boot_agent_t *ag, struct ulaunch *u, int status, const char *line)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, u->node);
	core_w_u32(&w, (uint32_t)status);
	core_w_str(&w, line);
	if (u->asker)
		boot_link_send(u->asker, BOOT_MSG_LAUNCH_EXIT, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

static void do_launch(boot_agent_t *ag, boot_link_t *asker, struct core_rbuf *r)
{
	uint32_t node = core_r_u32(r), argc = core_r_u32(r);
	char **argv = NULL, err[512], log[sizeof ag->root + 64], hex[BOOT_KEY_HEX_LEN + 2];

	if (r->err || argc == 0 || argc > 4096 || !ag->uopts)
		return;
	argv = calloc(argc + 1, sizeof *argv);
	for (uint32_t i = 0; argv && i < argc; i++)
		argv[i] = (char *)core_r_str(r);
	struct ulaunch u = {.asker = asker, .node = node};
	if (!argv || r->err) {
		free(argv);
		launch_report(ag, &u, 127 << 8, "malformed launch request");
		return;
	}
	snprintf(log, sizeof log, "%s/launch-%u.log", ag->root, node);
	boot_key_to_hex(ag->uopts->key, hex);
	strcat(hex, "\n");
	u.l = boot_launch_start(argv, hex, log, err, sizeof err);
	boot_key_wipe(hex, sizeof hex);
	free(argv);
	if (!u.l) {
		launch_report(ag, &u, 127 << 8, err);
		return;
	}
	struct ulaunch *nl = realloc(ag->launches, (size_t)(ag->nlaunches + 1) * sizeof *nl);
	if (!nl) {
		boot_launch_free(u.l, 1);
		return;
	}
	ag->launches = nl;
	ag->launches[ag->nlaunches++] = u;
}

static int launch_reaped(boot_agent_t *ag, pid_t pid, int status)
{
	for (int i = 0; i < ag->nlaunches; i++) {
		struct ulaunch *u = &ag->launches[i];
		if (!boot_launch_reaped(u->l, pid, status))
			continue;
		char line[512];
		boot_launch_last_line(u->l, line, sizeof line);
		launch_report(ag, u, status, line);
		boot_launch_free(u->l, 1);
		ag->launches[i] = ag->launches[--ag->nlaunches];
		return 1;
	}
	return 0;
}

/* ====} */

/* {==== controller links */

static void ctl_remove(boot_agent_t *ag, boot_link_t *l)
{
	for (int i = 0; i < ag->nctls; i++) {
		if (ag->ctls[i].l != l)
			continue;
		free(boot_link_arg(l));
		ag->ctls[i] = ag->ctls[--ag->nctls];
		boot_names_forget(ag->names, l);
		boot_xcoll_forget(ag->xcoll, l);
		break;
	}
	for (int i = 0; i < ag->nlaunches; i++)
		if (ag->launches[i].asker == l)
			ag->launches[i].asker = NULL;
	boot_link_destroy(l);
}

/* The link is no longer a controller's (the watch took it over, with its own callback
 * argument): forget it and free c, its old one; the link stays open. */
static void ctl_detach(boot_agent_t *ag, boot_link_t *l, struct ctlr *c)
{
	for (int i = 0; i < ag->nctls; i++) {
		if (ag->ctls[i].l != l)
			continue;
		ag->ctls[i] = ag->ctls[--ag->nctls];
		break;
	}
	free(c);
}

/* {==== the watch */

/* UNIVERSE: str id, u32 n, n x (u32 node, str host, str addr, u32 port, u32 cpus), then
 * u32 watch interval ms, u32 timeout ms, u32 flags (1: a grown node). Start watching. */
static void watch_start(boot_agent_t *ag, struct core_rbuf *r);

static void on_watch_change(void *arg)
{
	boot_agent_t *ag = arg;
	struct core_wbuf w = {0};

	boot_watch_summary(ag->watch, &w);
	for (int i = 0; i < ag->nctls; i++)
		if (!ag->ctls[i].is_origin && boot_link_ready(ag->ctls[i].l))
			boot_link_send(ag->ctls[i].l, BOOT_MSG_VIEW_DOWN, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

static void on_watch_down(void *arg, const char *why)
{
	boot_agent_t *ag = arg;

	core_log(
	    CORE_LOG_ERROR,
	    "agent: node %d was declared down (%s); ending its jobs and exiting ('lamkit grow' "
	    "brings it back)",
	    ag->uopts ? ag->uopts->node : 0, why);
	ag->declared_down = 1;
	stop_all(ag);
}

static void watch_start(boot_agent_t *ag, struct core_rbuf *r)
{
	const struct boot_agent_uopts *o = ag->uopts;
	uint32_t n;
	struct boot_wnode *nodes;
	int cpus = core_cpu_count();

	core_r_str(r);
	n = core_r_u32(r);
	if (r->err || n > 65536 || ag->watch || !o)
		return;
	nodes = calloc(n + 1, sizeof *nodes);
	for (uint32_t i = 0; nodes && i < n && !r->err; i++) {
		nodes[i].index = (int)core_r_u32(r);
		snprintf(nodes[i].host, sizeof nodes[i].host, "%s", core_r_str(r));
		snprintf(nodes[i].addr, sizeof nodes[i].addr, "%s", core_r_str(r));
		nodes[i].port = (int)core_r_u32(r);
		nodes[i].cpus = (int)core_r_u32(r);
	}
	uint32_t interval = core_r_u32(r), timeout = core_r_u32(r), flags = core_r_u32(r);
	uint32_t me = core_r_u32(r); /* our node (a group launch's agent learns it here) */
	if (r->err)                  /* an origin that sends no settings: the defaults */
		interval = timeout = flags = 0, me = (uint32_t)o->node;
	for (uint32_t i = 0; nodes && i < n; i++)
		if (nodes[i].index == (int)me)
			cpus = nodes[i].cpus;
	struct boot_watch_opts wo = {.ev = ag->ev,
	                             .key = o->key,
	                             .me = (int)me,
	                             .inc = ag->inc,
	                             .port = o->port,
	                             .cpus = cpus,
	                             .interval_ms = (int)interval,
	                             .timeout_ms = (int)timeout,
	                             .on_down = on_watch_down,
	                             .on_change = on_watch_change,
	                             .arg = ag};
	if (nodes && interval != UINT32_MAX)
		ag->watch = boot_watch_create(&wo);
	if (ag->watch && boot_watch_start(ag->watch, nodes, (int)n, !(flags & 1)) < 0) {
		boot_watch_destroy(ag->watch);
		ag->watch = NULL;
	}
	if (!ag->watch && interval != UINT32_MAX)
		core_log(CORE_LOG_ERROR, "agent: cannot start the watch: out of memory");
	free(nodes);
}

/* A watch frame on a controller link: the watch answers it, or takes the link over. */
static void watch_frame(boot_agent_t *ag, boot_link_t *l, unsigned type, struct core_rbuf *r)
{
	if (!ag->watch) { /* not started yet: no head known here */
		struct core_wbuf w = {0};
		core_w_u32(&w, 0);
		core_w_u32(&w, 0);
		if (type == BOOT_MSG_WATCH_JOIN || type == BOOT_MSG_WATCH_PROBE)
			boot_link_send(l, BOOT_MSG_WATCH_NOTHEAD, w.p, w.len, NULL, 0);
		core_w_free(&w);
		return;
	}
	struct ctlr *c = boot_link_arg(l);
	if (boot_watch_frame(ag->watch, l, type, r))
		ctl_detach(ag, l, c);
}

/* ====} */

static void on_ctl_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	struct ctlr *c = arg;
	boot_agent_t *ag = c->ag;
	struct core_rbuf r = {.p = d, .len = len};

	switch (type) {
	case BOOT_MSG_JOB_START: {
		struct boot_jobspec js;
		if (ag->stopping) {
			reject_job(l, core_r_u32(&r), "the agent is shutting down");
			return;
		}
		if (boot_jobspec_decode(&js, d, len) < 0) {
			reject_job(l, core_r_u32(&r), "malformed job spec");
			return;
		}
		if (find_job(ag, js.jobid)) {
			reject_job(l, js.jobid, "a job with this id is running already");
			boot_jobspec_free(&js);
			return;
		}
		boot_job_t **nj = realloc(ag->jobs, (size_t)(ag->njobs + 1) * sizeof *nj);
		if (!nj) {
			reject_job(l, js.jobid, "out of memory");
			boot_jobspec_free(&js);
			return;
		}
		ag->jobs = nj;
		boot_job_t *j = boot_job_start(ag, &js, l);
		if (j) {
			ag->jobs[ag->njobs++] = j;
			early_replay(ag, j, NULL);
		}
		maybe_stop(ag);
		return;
	}
	case BOOT_MSG_HALT:
		core_log(CORE_LOG_INFO, "agent: halt requested by %s", boot_link_peer(l));
		stop_all(ag);
		return;
	case BOOT_MSG_STATUS:
		send_status(ag, l);
		return;
	case BOOT_MSG_PS:
	case BOOT_MSG_CLEAN:
	case BOOT_MSG_JOB_SIGNAL:
		universe_cmd(ag, l, type, &r);
		return;
	case BOOT_MSG_LAUNCH:
		do_launch(ag, l, &r);
		return;
	case BOOT_MSG_UNIVERSE:
		if (c->is_origin) {
			ag->booted = 1;
			watch_start(ag, &r);
		}
		return;
	case BOOT_MSG_WATCH_JOIN:
	case BOOT_MSG_WATCH_PROBE:
		watch_frame(ag, l, type, &r);
		return;
	case BOOT_MSG_NAMES: /* the universe's name service: this is its head */
		if (!ag->names)
			ag->names = boot_names_create(ag->ev);
		if (ag->names)
			boot_names_serve(ag->names, l, &r);
		return;
	case BOOT_MSG_XCOLL_UP: /* a collective over several jobs: this is the rendezvous */
		if (!ag->xcoll)
			ag->xcoll = boot_xcoll_create();
		if (ag->xcoll)
			boot_xcoll_up(ag->xcoll, l, &r);
		return;
	}
	uint32_t id = core_r_u32(&r);
	boot_job_t *j = find_job(ag, id);
	if (type == BOOT_MSG_FENCE_UP && (!j || boot_job_ctl(j) != l)) { /* a child agent's */
		if (j)
			boot_job_fence_child(j, l, &r);
		else if (!r.err && ag->uopts)
			early_keep(ag, id, l, &r);
		return;
	}
	if (!j || boot_job_ctl(j) != l) {
		core_log(CORE_LOG_DEBUG, "agent: frame %u for unknown job %u", type, id);
		return;
	}
	boot_job_frame(j, type, &r);
	maybe_stop(ag);
}

static void on_ctl_close(boot_link_t *l, int err, const char *why, void *arg)
{
	struct ctlr *c = arg;
	boot_agent_t *ag = c->ag;
	int origin = c->is_origin;

	core_log(err ? CORE_LOG_ERROR : CORE_LOG_DEBUG, "agent: %s", why);
	/* the controller is gone: nobody will collect its jobs' output or decide; end them */
	for (int i = 0; i < ag->njobs; i++) {
		boot_job_forget_link(ag->jobs[i], l);
		if (boot_job_ctl(ag->jobs[i]) == l)
			boot_job_orphan(ag->jobs[i]);
	}
	early_replay(ag, NULL, l);
	ctl_remove(ag, l);
	if (!ag->uopts)
		ag->stopping = 1; /* transient: the one controller is all we serve */
	else if (origin && !ag->booted) {
		core_log(CORE_LOG_ERROR,
		         "agent: boot ended before the universe was complete; exiting");
		ag->stopping = 1;
	}
	maybe_stop(ag);
}

static void on_ctl_drain(boot_link_t *l, void *arg)
{
	struct ctlr *c = arg;
	boot_agent_t *ag = c->ag;

	for (int i = 0; i < ag->njobs; i++)
		if (boot_job_ctl(ag->jobs[i]) == l)
			boot_job_resume_output(ag->jobs[i]);
}

static void on_ctl_ready(boot_link_t *l, void *arg)
{
	struct ctlr *c = arg;

	send_hello(c->ag, l);
}

static const struct boot_link_cbs ctl_cbs = {.on_ready = on_ctl_ready,
                                             .on_frame = on_ctl_frame,
                                             .on_close = on_ctl_close,
                                             .on_drain = on_ctl_drain};

/* Track link l (already created with arg = NULL) as a controller. */
static int ctl_add(boot_agent_t *ag, boot_link_t *l, int is_origin)
{
	struct ctlr *nc = realloc(ag->ctls, (size_t)(ag->nctls + 1) * sizeof *nc);
	struct ctlr *c = malloc(sizeof *c);

	if (!nc || !c) {
		free(c);
		if (nc)
			ag->ctls = nc;
		return -1;
	}
	ag->ctls = nc;
	c->l = l;
	c->ag = ag;
	c->is_origin = is_origin;
	ag->ctls[ag->nctls++] = *c;
	boot_link_set_cbs(l, &ctl_cbs, c);
	return 0;
}

static void on_accept(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	boot_agent_t *ag = arg;

	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (cfd < 0)
			return;
		char peer[128];
		boot_tcp_peer(cfd, peer, sizeof peer);
		boot_link_t *l =
		    boot_link_secure(ev, cfd, 0, ag->uopts->key, peer, 10000, &ctl_cbs, NULL);
		if (!l || ctl_add(ag, l, 0) < 0) {
			core_log(CORE_LOG_ERROR, "agent: cannot serve %s: out of memory", peer);
			if (l)
				boot_link_destroy(l);
			else
				close(cfd);
		}
	}
}

/* ====} */

static void on_sigchld(core_ev_t *ev, int signo, void *arg)
{
	boot_agent_t *ag = arg;
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int mine = launch_reaped(ag, pid, status);
		for (int i = 0; i < ag->njobs && !mine; i++)
			mine = boot_job_reaped(ag->jobs[i], pid, status);
	}
	maybe_stop(ag);
}

static void on_term(core_ev_t *ev, int signo, void *arg)
{
	boot_agent_t *ag = arg;

	core_log(CORE_LOG_DEBUG, "agent: signal %d, ending all jobs", signo);
	stop_all(ag);
}

/* "<agentdir>/agent" = "pid starttime": lets wipe kill this agent if it is left behind. */
static void write_agent_record(boot_agent_t *ag)
{
	char path[sizeof ag->root + 8], line[64];
	int n =
	    snprintf(line, sizeof line, "%d %llu\n", (int)getpid(), boot_proc_starttime(getpid()));

	snprintf(path, sizeof path, "%s/agent", ag->root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || core_write_all(fd, line, (size_t)n) < 0)
		core_log(CORE_LOG_WARN, "agent: cannot write %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* Our record and our log go with us; but an agent that exits late (declared down, it heard
 * so when its network came back) may find them replaced by those of the agent `grow` started
 * in its place, in the same directory: those stay. */
static void remove_agent_record(boot_agent_t *ag)
{
	char path[sizeof ag->root + 8], line[64], mine[64];
	int fd;
	ssize_t n = -1;

	snprintf(path, sizeof path, "%s/agent", ag->root);
	snprintf(mine, sizeof mine, "%d %llu\n", (int)getpid(), boot_proc_starttime(getpid()));
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		n = read(fd, line, sizeof line - 1);
		close(fd);
	}
	if (n >= 0) {
		line[n] = '\0';
		if (!strcmp(line, mine))
			unlink(path);
	}
	struct stat lst, est;
	snprintf(path, sizeof path, "%s/log", ag->root);
	if (lstat(path, &lst) == 0 && fstat(STDERR_FILENO, &est) == 0 && lst.st_dev == est.st_dev &&
	    lst.st_ino == est.st_ino)
		unlink(path);
}

/* Session dir, signals, record: what both kinds of agent need. 0 or an exit status. */
static int agent_setup(boot_agent_t *ag, const char *name)
{
	char err[512];

	ag->started_ms = core_now_ms();
	if (boot_session_root(ag->root, sizeof ag->root, err, sizeof err) < 0) {
		core_log(CORE_LOG_ERROR, "agent: %s", err);
		return CORE_EXIT_SYSTEM;
	}
	size_t n = strlen(ag->root);
	snprintf(ag->root + n, sizeof ag->root - n, "/%s", name);
	if (core_mkdir_p(ag->root, 0700) < 0) {
		core_log(CORE_LOG_ERROR, "agent: cannot create %s: %s", ag->root, strerror(errno));
		return CORE_EXIT_SYSTEM;
	}
	write_agent_record(ag);
	core_ev_signal(ag->ev, SIGCHLD, on_sigchld, ag);
	core_ev_signal(ag->ev, SIGTERM, on_term, ag);
	core_ev_signal(ag->ev, SIGHUP, on_term, ag);
	core_ev_signal(ag->ev, SIGINT, on_term, ag);
	signal(SIGPIPE, SIG_IGN);
	boot_spawn_raise_nofile();
	return 0;
}

static void agent_teardown(boot_agent_t *ag)
{
	for (int i = 0; i < ag->nctls; i++)
		boot_link_flush(ag->ctls[i].l, 2000);
	for (int i = 0; i < ag->njobs; i++) {
		boot_job_kill(ag->jobs[i]);
		boot_job_destroy(ag->jobs[i]);
	}
	free(ag->jobs);
	while (ag->nctls)
		ctl_remove(ag, ag->ctls[0].l);
	free(ag->ctls);
	for (int i = 0; i < ag->nlaunches; i++)
		boot_launch_free(ag->launches[i].l, 1);
	free(ag->launches);
	for (int i = 0; i < ag->nearly; i++)
		free(ag->early[i].data);
	free(ag->early);
	boot_names_destroy(ag->names);
	boot_xcoll_destroy(ag->xcoll);
	boot_pmix_stop(ag);
	boot_watch_destroy(ag->watch);
	ag->watch = NULL;
	remove_agent_record(ag);
	rmdir(ag->root); /* only when empty: a new agent's is not */
}

int boot_agent_run(int ctl_fd, const struct boot_agent_opts *o)
{
	boot_agent_t ag = {.opts = o};
	int rc;

	ag.ev = core_ev_create();
	if (!ag.ev) {
		core_log(CORE_LOG_ERROR, "agent: cannot create event loop: %s", strerror(errno));
		return CORE_EXIT_SYSTEM;
	}
	rc = agent_setup(&ag, o->name);
	if (rc) {
		core_ev_destroy(ag.ev);
		return rc;
	}
	boot_link_t *l = boot_link_plain(ag.ev, ctl_fd, "mpiexec", &ctl_cbs, NULL);
	if (!l || ctl_add(&ag, l, 0) < 0) {
		boot_link_destroy(l);
		rc = CORE_EXIT_SYSTEM;
	} else {
		send_hello(&ag, l);
		if (core_ev_run(ag.ev) < 0)
			rc = CORE_EXIT_SYSTEM;
	}
	agent_teardown(&ag);
	core_ev_destroy(ag.ev);
	return rc;
}

int boot_agent_serve(const struct boot_agent_uopts *o)
{
	boot_agent_t ag = {.uopts = o, .ev = o->ev, .booted = o->booted, .inc = boot_wall_ms()};
	int rc = agent_setup(&ag, o->name);

	if (rc)
		return rc;
	if (ctl_add(&ag, o->origin, 1) < 0)
		return CORE_EXIT_SYSTEM;
	if (core_ev_fd(ag.ev, o->listen_fd, CORE_EV_READ, on_accept, &ag) < 0) {
		core_log(CORE_LOG_ERROR, "agent: cannot watch port %d: %s", o->port,
		         strerror(errno));
		rc = CORE_EXIT_SYSTEM;
	} else if (core_ev_run(ag.ev) < 0) {
		rc = CORE_EXIT_SYSTEM;
	}
	core_ev_fd_del(ag.ev, o->listen_fd);
	close(o->listen_fd);
	if (o->before_exit)
		o->before_exit(o->arg);
	agent_teardown(&ag);
	return rc;
}
