/* lib/boot/jobctl.c: mpiexec's job controller: one job over one or more agents (a forked local
 * agent, several forked ones for tests, or a universe's agents over secure links): their
 * frames, stdin to rank 0, PMI fences across agents, signals, and one failure policy. Starting
 * the agents is in jobctl_run.c. */
#include "core.h"
#include "jobctl_internal.h"
#include "names.h"
#include "xcoll.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define STDIN_WINDOW (1u << 20) /* bytes in flight to rank 0 before we stop reading stdin */
#define STDIN_CHUNK  65536

void boot_ctl_msg(struct ctl *c, const char *fmt, ...)
{
	char line[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "lamkit mpiexec: %s\n", line);
}

static void send_u32(struct agent *a, unsigned type, int n, const uint32_t *v)
{
	struct core_wbuf w = {0};

	if (!a->link || !a->started)
		return;
	core_w_u32(&w, a->c->o->js->jobid);
	for (int i = 0; i < n; i++)
		core_w_u32(&w, v[i]);
	boot_link_send(a->link, type, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

struct ctl *boot_ctl_root(struct ctl *c)
{
	while (c->parent)
		c = c->parent;
	return c;
}

/* To every agent still running its part, in c's job and every job spawned from it. */
static void send_all(struct ctl *c, unsigned type, int n, const uint32_t *v)
{
	for (int i = 0; i < c->nag; i++)
		if (!c->ag[i].done)
			send_u32(&c->ag[i], type, n, v);
	for (int k = 0; k < c->nsubs; k++)
		send_all(c->subs[k], type, n, v);
}

/* The loop ends when mpiexec's job and every job spawned from it are over. */
static void check_over(struct ctl *c)
{
	struct ctl *r = boot_ctl_root(c);

	if (r->ndone < r->nag)
		return;
	for (int k = 0; k < r->nsubs; k++)
		if (r->subs[k]->ndone < r->subs[k]->nag)
			return;
	core_ev_stop(r->ev);
}

/* The family's rendezvous forgets link l (it is going away). */
static void rdv_forget(struct ctl *c, boot_link_t *l)
{
	struct ctl *r = boot_ctl_root(c);

	if (!l)
		return;
	boot_names_forget(r->names, l);
	boot_xcoll_forget(r->xcoll, l);
}

/* The agent's part is over (or it is gone): drop its link. Idempotent. */
static void agent_gone(struct agent *a)
{
	boot_ctl_pipes_drain(a->c, a);
	if (!a->done) {
		a->done = 1;
		a->c->ndone++;
	}
	rdv_forget(a->c, a->link);
	boot_ctl_dmodex_gone(a);
	boot_link_destroy(a->link);
	a->link = NULL;
}

/* A frame for the family's rendezvous (no universe): names, collectives over several jobs. */
static void rdv_frame(struct agent *a, unsigned type, const char *d, size_t len)
{
	struct ctl *r = boot_ctl_root(a->c);
	struct core_rbuf rb = {.p = d, .len = len};

	if (type == BOOT_MSG_NAMES) {
		if (!r->names)
			r->names = boot_names_create(r->ev);
		if (r->names)
			boot_names_serve(r->names, a->link, &rb);
	} else {
		if (!r->xcoll)
			r->xcoll = boot_xcoll_create();
		if (r->xcoll)
			boot_xcoll_up(r->xcoll, a->link, &rb);
	}
}

static void on_kill_timeout(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	c->kill_timer = 0;
	for (int i = 0; i < c->nag; i++) {
		if (c->ag[i].done)
			continue;
		boot_ctl_msg(
		    c, "the agent on %s did not end its ranks within %d s; not waiting for it",
		    c->ag[i].host, BOOT_AGENT_KILL_MS / 1000);
		agent_gone(&c->ag[i]);
	}
	check_over(c);
}

static void kill_one(struct ctl *c)
{
	if (c->killed)
		return;
	c->killed = 1;
	for (int i = 0; i < c->nag; i++) {
		struct agent *a = &c->ag[i];
		if (a->done)
			continue;
		if (a->started)
			send_u32(a, BOOT_MSG_KILL, 0, NULL);
		else
			agent_gone(a); /* still connecting: it never gets the job */
	}
	if (c->ndone < c->nag)
		c->kill_timer = core_ev_timer(c->ev, BOOT_AGENT_KILL_MS, on_kill_timeout, c);
}

/* A job ends with the jobs of its family: spawned ranks do not outlive their spawners'
 * failure, nor the spawners theirs. */
static void kill_job(struct ctl *c)
{
	struct ctl *r = boot_ctl_root(c);

	kill_one(r);
	for (int k = 0; k < r->nsubs; k++)
		kill_one(r->subs[k]);
	check_over(r);
}

/* After a rank's death, how long the job's PMIx ranks have to act on the event (their
 * handlers run, they may finalize and exit) before the job is killed: --kill-grace if less. */
#define EVENT_GRACE_MS 1000

static void on_event_grace(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	c->event_timer = 0;
	kill_job(c);
}

/* The first failure decides the exit status and ends the job; after a rank's death (`died`)
 * the job's PMIx ranks are told first and get EVENT_GRACE_MS to act on it (they may end by
 * themselves; the job is over as soon as they all did). */
static void vfail(struct ctl *c, int code, int died, int rank, int st, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));
static void vfail(struct ctl *c, int code, int died, int rank, int st, const char *fmt, va_list ap)
{
	char msg[900];
	struct ctl *r = boot_ctl_root(c);

	if (r->failed || r->killed)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	r->failed = 1;
	/* said after the ranks' last output, so it is the last line the user sees; a spawned
	 * job's failure is the whole job's, named with the spawned job */
	if (r->late) { /* a finalized rank failed first: its status stays the job's */
		size_t n = strlen(r->why);
		snprintf(r->why + n, sizeof r->why - n, "; then %s%s", c->label, msg);
	} else {
		r->exit_code = code;
		snprintf(r->why, sizeof r->why, "%s%s", c->label, msg);
	}
	if (died && c->o->kill_grace_ms > 0 && boot_ctl_notify_death(c, rank, st))
		r->event_timer = core_ev_timer(
		    r->ev,
		    c->o->kill_grace_ms < EVENT_GRACE_MS ? c->o->kill_grace_ms : EVENT_GRACE_MS,
		    on_event_grace, r);
	else
		kill_job(c);
}

void boot_ctl_fail(struct ctl *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(c, code, 0, 0, 0, fmt, ap);
	va_end(ap);
}

/* A rank's death ends the job: boot_ctl_fail, with the PMIx ranks told first. */
static void fail_death(struct ctl *c, int rank, int st, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void fail_death(struct ctl *c, int rank, int st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(c, code, 1, rank, st, fmt, ap);
	va_end(ap);
}

/* A rank failed after it finalized: the other ranks no longer depend on it, so they finish
 * and their output is kept (as under Hydra); the first such failure is the job's status and
 * its last line, unless one came first that ended the job. */
static void fail_late(struct ctl *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_late(struct ctl *c, int code, const char *fmt, ...)
{
	va_list ap;
	struct ctl *r = boot_ctl_root(c);
	int n;

	if (r->failed || r->killed || r->late)
		return;
	n = snprintf(r->why, sizeof r->why, "%s", c->label);
	va_start(ap, fmt);
	vsnprintf(r->why + n, sizeof r->why - (size_t)n, fmt, ap);
	va_end(ap);
	r->late = 1;
	r->exit_code = code;
}

/* {==== stdin -> rank 0, in a window acknowledged by its agent */

static void stdin_stop(struct ctl *c)
{
	if (c->stdin_on && !c->stdin_file)
		core_ev_fd_del(c->ev, 0);
	if (c->pump_timer)
		core_ev_timer_cancel(c->ev, c->pump_timer);
	c->pump_timer = 0;
	c->stdin_on = 0;
}

static void stdin_pump(core_ev_t *ev, void *arg);

/* One read of stdin into a STDIN frame. */
static void stdin_read(struct ctl *c)
{
	char buf[STDIN_CHUNK];
	ssize_t n = read(0, buf, sizeof buf);
	struct agent *root = &c->ag[0];

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		stdin_stop(c);
		send_u32(root, BOOT_MSG_STDIN, 0, NULL);
		return;
	}
	struct core_wbuf w = {0};
	core_w_u32(&w, c->o->js->jobid);
	if (root->link)
		boot_link_send(root->link, BOOT_MSG_STDIN, w.p, w.len, buf, (size_t)n);
	core_w_free(&w);
	c->inflight += (size_t)n;
	if (c->inflight >= STDIN_WINDOW && !c->stdin_file)
		core_ev_fd_mod(c->ev, 0, 0);
}

static void on_stdin(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	stdin_read(arg);
}

/* Regular files and /dev/null cannot be polled: read them from a timer while the window
 * is open. */
static void stdin_pump(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	c->pump_timer = 0;
	if (!c->stdin_on)
		return;
	stdin_read(c);
	if (c->stdin_on && c->inflight < STDIN_WINDOW)
		c->pump_timer = core_ev_timer(ev, 0, stdin_pump, c);
}

static void stdin_ack(struct ctl *c, uint32_t n)
{
	c->inflight = n > c->inflight ? 0 : c->inflight - n;
	if (!c->stdin_on || c->inflight >= STDIN_WINDOW / 2)
		return;
	if (!c->stdin_file)
		core_ev_fd_mod(c->ev, 0, CORE_EV_READ);
	else if (!c->pump_timer)
		c->pump_timer = core_ev_timer(c->ev, 0, stdin_pump, c);
}

static void stdin_start(struct ctl *c)
{
	/* a terminal we do not own (mpiexec in the background) would stop us with SIGTTIN */
	if (isatty(0) && tcgetpgrp(0) != getpgrp())
		return;
	c->stdin_on = 1;
	if (core_ev_fd(c->ev, 0, CORE_EV_READ, on_stdin, c) == 0)
		return;
	if (errno != EPERM) { /* stdin closed or unusable: rank 0 gets EOF */
		c->stdin_on = 0;
		send_u32(&c->ag[0], BOOT_MSG_STDIN, 0, NULL);
		return;
	}
	c->stdin_file = 1;
	c->pump_timer = core_ev_timer(c->ev, 0, stdin_pump, c);
}

/* ====} */

/* {==== the fence of a job over several agents */

static void fence_down(struct ctl *c)
{
	struct core_wbuf w = {0};

	c->epoch++;
	core_w_u32(&w, c->o->js->jobid);
	core_w_u32(&w, c->epoch);
	for (int i = 0; i < c->nag && !w.err; i++) {
		struct agent *a = &c->ag[i];
		a->fence_up = 0;
		if (a->done || !a->link)
			continue;
		if (boot_link_send(a->link, BOOT_MSG_FENCE_DOWN, w.p, w.len, c->kvs, c->kvslen) <
		    0) {
			boot_ctl_fail(
			    c, CORE_EXIT_SYSTEM,
			    "cannot send the PMI data of fence %u (%zu bytes) to the agent on %s: "
			    "%s",
			    c->epoch, c->kvslen, a->host, strerror(errno));
			break;
		}
	}
	core_w_free(&w);
	c->nup = 0;
	c->kvslen = 0;
}

static void fence_up(struct agent *a, struct core_rbuf *r)
{
	struct ctl *c = a->c;
	uint32_t epoch = core_r_u32(r);

	if (r->err || epoch != c->epoch + 1 || a->fence_up) {
		boot_ctl_fail(
		    c, CORE_EXIT_SYSTEM,
		    "the agent on %s entered PMI fence %u out of turn (expected %u); ending the "
		    "job",
		    a->host, epoch, c->epoch + 1);
		return;
	}
	size_t n = r->len - r->off;
	if (c->kvslen + n > c->kvscap) {
		size_t cap = c->kvscap ? c->kvscap : 65536;
		while (cap < c->kvslen + n)
			cap *= 2;
		char *k = realloc(c->kvs, cap);
		if (!k) {
			boot_ctl_fail(c, CORE_EXIT_SYSTEM,
			              "out of memory collecting PMI fence data");
			return;
		}
		c->kvs = k;
		c->kvscap = cap;
	}
	if (n)
		memcpy(c->kvs + c->kvslen, core_r_bytes(r, n), n);
	c->kvslen += n;
	a->fence_up = 1;
	if (++c->nup == c->nag - c->nlost) /* every agent's ranks are in: the KVS is complete */
		fence_down(c);
}

/* ====} */

static void rank_exit(struct agent *a, struct core_rbuf *r)
{
	struct ctl *c = a->c;
	int rank = (int)core_r_u32(r);
	int pid = (int)core_r_u32(r);
	int st = (int)core_r_u32(r);
	int pmi = (int)core_r_u32(r);

	if (r->err || rank < 0 || rank >= c->o->js->size)
		return;
	if (rank == 0 && !c->parent)
		stdin_stop(c);
	if (c->killed || boot_ctl_root(c)->failed || boot_ctl_root(c)->killed)
		return; /* consequences of ending the job, not causes */
	if (pmi == BOOT_PMI_FINALIZED && WIFSIGNALED(st)) {
		fail_late(c, 128 + WTERMSIG(st),
		          "rank %d (pid %d on %s) killed by signal %d (%s) after MPI_Finalize",
		          rank, pid, a->host, WTERMSIG(st), strsignal(WTERMSIG(st)));
	} else if (pmi == BOOT_PMI_FINALIZED && WIFEXITED(st) && WEXITSTATUS(st) != 0) {
		fail_late(c, WEXITSTATUS(st),
		          "rank %d (pid %d on %s) exited with status %d after MPI_Finalize", rank,
		          pid, a->host, WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		int ctrl = c->ctrl_sig && c->ctrl_sig == WTERMSIG(st);
		fail_death(c, rank, st, 128 + WTERMSIG(st),
		           "rank %d (pid %d on %s) killed by signal %d (%s)%s%s", rank, pid,
		           a->host, WTERMSIG(st), strsignal(WTERMSIG(st)),
		           ctrl ? ", sent by PMIx job control of " : "", ctrl ? c->ctrl_who : "");
	} else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
		fail_death(c, rank, st, WEXITSTATUS(st),
		           "rank %d (pid %d on %s) exited with status %d", rank, pid, a->host,
		           WEXITSTATUS(st));
	} else if (pmi == BOOT_PMI_INIT && c->o->js->size > 1) {
		fail_death(c, rank, st, 1,
		           "rank %d (pid %d on %s) exited without finalizing (MPI_Finalize) while "
		           "others may wait for it; ending the job",
		           rank, pid, a->host);
	}
}

static void hello(struct agent *a, const char *d, size_t len)
{
	struct ctl *c = a->c;
	struct core_rbuf r = {.p = d, .len = len};
	uint32_t version = core_r_u32(&r);
	const char *host = core_r_str(&r);
	uint32_t pid = core_r_u32(&r);

	if (r.err)
		return;
	core_r_u32(&r); /* cpus */
	if (c->u && version == BOOT_PROTO_VERSION) {
		a->hello = 1;
		boot_ctl_view(a, &r); /* the watch's view; starts the agents once it holds */
	}
	if (c->host_from_hello)
		snprintf(a->host, sizeof a->host, "%s", host);
	if (c->o->verbose)
		boot_ctl_msg(c, "agent: pid %u on %s", pid, a->host);
	if (version != BOOT_PROTO_VERSION)
		boot_ctl_fail(
		    c, CORE_EXIT_SYSTEM,
		    "the agent on %s speaks protocol version %u, this mpiexec %d: the universe "
		    "runs another lamkit",
		    a->host, version, BOOT_PROTO_VERSION);
}

static void on_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	struct agent *a = arg;
	struct ctl *c = a->c;
	struct core_rbuf r = {.p = d, .len = len};
	uint32_t jobid = core_r_u32(&r);

	a->heard = core_now_ms();
	if (type == BOOT_MSG_HELLO) {
		hello(a, d, len);
		return;
	}
	if (type == BOOT_MSG_VIEW_DOWN) {
		struct core_rbuf v = {.p = d, .len = len};
		if (c->u)
			boot_ctl_view(a, &v);
		return;
	}
	if (type == BOOT_MSG_IO_PIPE) { /* its fd is taken even if the frame is not ours */
		int fd = boot_link_take_fd(l);
		if (!r.err && jobid == c->o->js->jobid)
			boot_ctl_pipe_open(a, &r, fd);
		else if (fd >= 0)
			close(fd);
		return;
	}
	if (r.err || jobid != c->o->js->jobid)
		return;
	switch (type) {
	case BOOT_MSG_IO: {
		int rank = (int)core_r_u32(&r), stream = (int)core_r_u32(&r);
		size_t n = r.len - r.off;
		if (r.err)
			break;
		if (n == 0)
			boot_outbuf_eof(c->out, rank, stream);
		else
			boot_outbuf_data(c->out, rank, stream, core_r_bytes(&r, n), n);
		break;
	}
	case BOOT_MSG_STARTED: {
		uint32_t n = core_r_u32(&r);
		for (uint32_t i = 0; i < n && !r.err; i++) {
			uint32_t rank = core_r_u32(&r), pid = core_r_u32(&r);
			if (rank < (uint32_t)c->o->js->size)
				c->pids[rank] = (pid_t)pid;
			if (c->o->verbose)
				boot_ctl_msg(c, "%srank %u: pid %u on %s", c->label, rank, pid,
				             a->host);
		}
		uint32_t npmix = core_r_u32(&r); /* its ranks served PMIx (an older agent: none) */
		if (!r.err)
			c->npmix += (int)npmix;
		if (c->parent)
			boot_ctl_spawn_started(a);
		break;
	}
	case BOOT_MSG_SPAWN:
		boot_ctl_spawn(a, &r);
		break;
	case BOOT_MSG_NAMES:
	case BOOT_MSG_XCOLL_UP:
		rdv_frame(a, type, d, len);
		break;
	case BOOT_MSG_DMODEX:
		boot_ctl_dmodex(a, &r);
		break;
	case BOOT_MSG_DMODEX_REPLY:
		boot_ctl_dmodex_reply(a, &r);
		break;
	case BOOT_MSG_JOB_CTRL:
		boot_ctl_jobctrl(a, &r);
		break;
	case BOOT_MSG_SPAWN_FAIL: {
		int rank = (int)core_r_u32(&r), e = (int)core_r_u32(&r);
		const char *exe = core_r_str(&r);
		boot_ctl_fail(c, e == ENOENT ? BOOT_EXIT_NOTFOUND : BOOT_EXIT_NOEXEC,
		              "cannot start rank %d on %s: %s: %s", rank, a->host, exe,
		              strerror(e));
		break;
	}
	case BOOT_MSG_RANK_EXIT:
		rank_exit(a, &r);
		break;
	case BOOT_MSG_ABORT: {
		int rank = (int)core_r_u32(&r), code = (int)core_r_u32(&r);
		const char *msg = core_r_str(&r);
		/* exit statuses are 8 bits: 256 must not come out as success */
		int ec = (code & 0xff) || !code ? code & 0xff : 1;
		boot_ctl_fail(c, ec, "rank %d (pid %d on %s) called MPI_Abort with code %d%s%s",
		              rank, rank >= 0 && rank < c->o->js->size ? (int)c->pids[rank] : -1,
		              a->host, code, *msg ? ": " : "", msg);
		break;
	}
	case BOOT_MSG_PMI_ERROR: {
		int rank = (int)core_r_u32(&r);
		boot_ctl_fail(c, 1, "rank %d on %s broke the PMI protocol: %s", rank, a->host,
		              core_r_str(&r));
		break;
	}
	case BOOT_MSG_STDIN_ACK:
		stdin_ack(c, core_r_u32(&r));
		break;
	case BOOT_MSG_REPORT: { /* --report-bindings, or why the agent cannot start the job */
		int fatal = (int)core_r_u32(&r);
		const char *text = core_r_str(&r);
		if (r.err)
			break;
		if (fatal)
			boot_ctl_fail(c, CORE_EXIT_USAGE, "%s", text);
		else
			fputs(text, stderr);
		break;
	}
	case BOOT_MSG_FENCE_LOST:
		boot_ctl_fence_lost(a, core_r_str(&r));
		break;
	case BOOT_MSG_FENCE_UP:
		fence_up(a, &r);
		break;
	case BOOT_MSG_JOB_DONE:
		boot_ctl_pipes_drain(c, a);
		if (!a->done) {
			a->done = 1;
			c->ndone++;
			/* a spawned job's last agent: its spawners hear of its end */
			boot_ctl_notify_job_end(c);
		}
		check_over(c);
		break;
	}
}

/* why without the peer text it begins with (the message names the peer already). */
const char *boot_ctl_after_peer(const char *why, const char *peer)
{
	size_t n = strlen(peer);

	return !strncmp(why, peer, n) && why[n] == ':' && why[n + 1] == ' ' ? why + n + 2 : why;
}

void boot_ctl_unreachable(struct agent *a, const char *why)
{
	boot_ctl_fail(
	    a->c, CORE_EXIT_SYSTEM,
	    "cannot reach the agent on %s: %s; is the universe up? ('lamkit nodes' shows it, "
	    "'lamkit wipe' cleans up)",
	    a->where, why);
}

/* "2,3,6-7": the ranks of every agent lost so far, ascending, runs of 3 or more as ranges. */
static char *lost_ranks(struct ctl *c)
{
	char *lost = calloc((size_t)c->o->js->size + 1, 1), *out;
	size_t cap = 64, n = 0;

	out = malloc(cap);
	if (!lost || !out) {
		free(lost);
		free(out);
		return NULL;
	}
	out[0] = '\0';
	for (int i = 0; i < c->nag; i++)
		for (int k = 0; c->ag[i].lost && k < c->ag[i].nranks; k++)
			lost[c->ag[i].ranks[k]] = 1;
	for (int r = 0; r < c->o->js->size; r++) {
		if (!lost[r])
			continue;
		int e = r;
		while (e + 1 < c->o->js->size && lost[e + 1])
			e++;
		if (n + 32 > cap) {
			char *nb = realloc(out, cap *= 2);
			if (!nb)
				break;
			out = nb;
		}
		n += (size_t)snprintf(out + n, cap - n, e >= r + 2 ? "%s%d-%d" : "%s%d",
		                      n ? "," : "", r, e);
		if (e == r + 1)
			n += (size_t)snprintf(out + n, cap - n, ",%d", e);
		r = e;
	}
	free(lost);
	return out;
}

void boot_ctl_continue_without(struct agent *a, const char *why)
{
	struct ctl *c = a->c;
	char *list;

	a->lost = 1;
	c->nlost++;
	list = lost_ranks(c);
	boot_ctl_msg(c,
	             "%sthe agent on %s %s; its %d rank(s) are lost (ranks lost so far: %s), the "
	             "job goes on (--on-node-failure continue)",
	             c->label, a->host, why, a->nranks, list ? list : "?");
	agent_gone(a);
	for (int i = 0; list && i < c->nag; i++) {
		struct agent *o = &c->ag[i];
		struct core_wbuf w = {0};
		if (o->done || !o->link || !o->started)
			continue;
		core_w_u32(&w, c->o->js->jobid);
		core_w_str(&w, list);
		boot_link_send(o->link, BOOT_MSG_PROC_FAILED, w.p, w.len, NULL, 0);
		core_w_free(&w);
	}
	free(list);
	boot_ctl_notify_lost(c, a);
	if (c->nlost == c->nag) { /* nobody is left to go on */
		boot_ctl_fail(c, CORE_EXIT_SYSTEM, "every node of the job failed");
	} else if (c->nup && c->nup == c->nag - c->nlost) {
		fence_down(c); /* the others were waiting for it in a fence */
	}
	check_over(c);
}

void boot_ctl_lose(struct agent *a, const char *why)
{
	struct ctl *c = a->c, *rt = boot_ctl_root(c);

	if (!c->killed && !rt->failed && !rt->killed) /* not a consequence of ending the job */
		boot_ctl_msg(c, "%sthe agent on %s %s; job ended", c->label, a->host, why);
	if (!rt->failed && !rt->late)
		rt->exit_code = CORE_EXIT_SYSTEM;
	rt->failed = 1;
	agent_gone(a);
	kill_job(c); /* the others' ranks cannot go on without these */
	check_over(c);
}

static void on_close(boot_link_t *l, int err, const char *why, void *arg)
{
	struct agent *a = arg;
	struct ctl *c = a->c;
	char what[300];

	if (a->done) {
		agent_gone(a);
		return;
	}
	if (!a->started && c->u) { /* down already? the watch's view tells */
		boot_ctl_early_failure(a, boot_ctl_after_peer(why, a->where));
		return;
	}
	if (!a->started) { /* the connection or its handshake failed */
		boot_ctl_unreachable(a, boot_ctl_after_peer(why, a->where));
		agent_gone(a);
		kill_job(c);
		check_over(c);
		return;
	}
	snprintf(what, sizeof what, "went away%s%s", err ? ": " : "", err ? strerror(err) : "");
	boot_ctl_node_failed(a, what);
}

/* Send the agent its part of the job. */
void boot_ctl_start_agent(struct agent *a)
{
	struct ctl *c = a->c;
	struct boot_jobspec js = *c->o->js;
	struct core_wbuf w = {0};

	char head[300];
	if (c->u) { /* the name service: the first node up */
		for (int i = 0; i < c->u->nnodes; i++)
			if (!boot_wsummary_find(&boot_ctl_root(c)->view, c->u->nodes[i].index)) {
				snprintf(head, sizeof head, "%s:%d", c->u->nodes[i].addr,
				         c->u->nodes[i].port);
				js.names_at = head;
				break;
			}
	}
	if (c->placed) {
		js.ranks = a->ranks;
		js.nranks = a->nranks;
		js.nagents = c->nag;
		js.fence_parent = a->fence_parent;
		js.fence_children = a->fence_children;
		js.process_mapping = c->mapping;
		js.universe_size = c->universe_size;
		js.oversubscribed = a->nranks > (a->cpus < 1 ? 1 : a->cpus);
		js.slots = a->cpus < 1 ? 1 : a->cpus;
	}
	boot_jobspec_encode(&w, &js);
	if (w.err || boot_link_send(a->link, BOOT_MSG_JOB_START, w.p, w.len, NULL, 0) < 0) {
		boot_ctl_fail(c, CORE_EXIT_SYSTEM, "cannot send the job to the agent on %s: %s",
		              a->host, strerror(w.err ? ENOMEM : errno));
		core_w_free(&w);
		return;
	}
	core_w_free(&w);
	a->started = 1;
	if (c->u) {
		c->sent_any = 1;
		a->heard = core_now_ms();
		boot_ctl_keepalive(c);
	}
	if (a == &c->ag[0] && c->parent) /* spawned ranks read no stdin (Hydra's too) */
		send_u32(a, BOOT_MSG_STDIN, 0, NULL);
	else if (a == &c->ag[0] && c->o->singinit_fd < 0)
		stdin_start(c);
}

static void on_ready(boot_link_t *l, void *arg)
{
	struct agent *a = arg;

	if (a->c->killed)
		agent_gone(a);
	else if (!a->c->u) /* a universe's agent starts at its HELLO, once the view holds */
		boot_ctl_start_agent(a);
	check_over(a->c);
}

const struct boot_link_cbs boot_ctl_link_cbs = {
    .on_ready = on_ready, .on_frame = on_frame, .on_close = on_close};

static void on_grace(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	c->grace_timer = 0;
	boot_ctl_msg(c, "ranks still running %d ms after the signal; killing them",
	             c->o->kill_grace_ms);
	kill_job(c);
}

static void on_signal(core_ev_t *ev, int signo, void *arg)
{
	struct ctl *c = arg;
	uint32_t s = (uint32_t)signo;

	switch (signo) {
	case SIGINT:
	case SIGTERM:
	case SIGHUP:
		if (!c->failed) {
			c->failed = 1;
			if (!c->late)
				c->exit_code = 128 + signo;
		}
		if (c->grace_timer || c->killed) { /* a second signal: no more grace */
			kill_job(c);
			break;
		}
		send_all(c, BOOT_MSG_SIGNAL, 1, &s);
		c->grace_timer = core_ev_timer(ev, c->o->kill_grace_ms, on_grace, c);
		break;
	case SIGTSTP:
		send_all(c, BOOT_MSG_SIGNAL, 1, &s);
		for (int i = 0; i < c->nag; i++)
			boot_link_flush(c->ag[i].link, 1000);
		raise(SIGSTOP); /* and stop ourselves, as a shell expects */
		break;
	default: /* SIGCONT, SIGUSR1, SIGUSR2 */
		send_all(c, BOOT_MSG_SIGNAL, 1, &s);
	}
}

static void on_timeout(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	boot_ctl_fail(c, BOOT_EXIT_TIMEOUT, "job timed out after %d s; ranks killed",
	              c->o->timeout_s);
}

int boot_ctl_init(struct ctl *c, const struct boot_run_opts *o, int nag)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT, SIGUSR1, SIGUSR2};

	memset(c, 0, sizeof *c);
	c->o = o;
	c->ev = core_ev_create();
	c->out = boot_outbuf_create(o->js->size, o->js->tag_output);
	c->pids = calloc((size_t)o->js->size, sizeof *c->pids);
	c->ag = calloc((size_t)(nag > 0 ? nag : 1), sizeof *c->ag);
	if (!c->ev || !c->out || !c->pids || !c->ag) {
		boot_ctl_msg(c, "out of memory");
		c->exit_code = CORE_EXIT_SYSTEM;
		return -1;
	}
	c->nag = nag;
	for (int i = 0; i < nag; i++) {
		c->ag[i].c = c;
		c->ag[i].pid = -1;
		c->ag[i].fd = -1;
	}
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		core_ev_signal(c->ev, sigs[i], on_signal, c);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void boot_ctl_loop(struct ctl *c)
{
	if (c->o->timeout_s > 0)
		core_ev_timer(c->ev, (int64_t)c->o->timeout_s * 1000, on_timeout, c);
	if (c->ndone < c->nag || c->nsubs)
		core_ev_run(c->ev);
	for (int k = 0; k < c->nsubs; k++)
		boot_outbuf_flush_all(c->subs[k]->out);
	boot_outbuf_flush_all(c->out);
	if (c->why[0])
		boot_ctl_msg(c, "%s", c->why);
}

int boot_ctl_end(struct ctl *c)
{
	if (!c->parent)
		stdin_stop(c);
	for (int k = 0; k < c->nsubs; k++)
		boot_ctl_end(c->subs[k]);
	free(c->subs);
	c->subs = NULL;
	c->nsubs = 0;
	for (int i = 0; c->ag && i < c->nag; i++) {
		if (c->ag[i].lost_timer)
			core_ev_timer_cancel(c->ev, c->ag[i].lost_timer);
		rdv_forget(c, c->ag[i].link);
		boot_link_destroy(c->ag[i].link);
		c->ag[i].link = NULL;
		if (c->ag[i].fd >= 0)
			close(c->ag[i].fd);
	}
	boot_ctl_reap_agents(c);
	boot_ctl_pipes_free(c);
	for (int i = 0; c->ag && i < c->nag; i++)
		free(c->ag[i].ranks);
	free(c->ag);
	free(c->mapping);
	free(c->kvs);
	if (c->view_timer)
		core_ev_timer_cancel(c->ev, c->view_timer);
	if (c->early_timer)
		core_ev_timer_cancel(c->ev, c->early_timer);
	if (c->ka_timer)
		core_ev_timer_cancel(c->ev, c->ka_timer);
	boot_link_destroy(c->vlink);
	free(c->hosts_copy);
	boot_wsummary_free(&c->view);
	boot_outbuf_destroy(c->out);
	free(c->pids);
	if (c->parent) { /* the loop is the family's */
		boot_ctl_spawn_free(c);
		return 0;
	}
	boot_names_destroy(c->names);
	boot_xcoll_destroy(c->xcoll);
	boot_ctl_pmix_free(c);
	core_ev_destroy(c->ev);
	return c->exit_code;
}
