/* lib/boot/jobctl.c: mpiexec's job controller over one transient local agent. The frames and
 * the failure policy are the ones a multi-node controller uses. */
#include "agent.h"
#include "conn.h"
#include "core.h"
#include "jobctl.h"
#include "outbuf.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define STDIN_WINDOW (1u << 20) /* bytes in flight to rank 0 before we stop reading stdin */
#define STDIN_CHUNK  65536

struct ctl {
	const struct boot_run_opts *o;
	core_ev_t *ev;
	core_conn_t *agent;
	pid_t agent_pid;
	char host[256];
	boot_outbuf_t *out;
	pid_t *pids; /* by rank */
	int exit_code, failed, done, killed;
	char why[1024]; /* the first failure, printed when the job is over */
	int64_t grace_timer;
	/* stdin */
	int stdin_on, stdin_file;
	int64_t pump_timer;
	size_t inflight;
};

static void ctl_msg(struct ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ctl_msg(struct ctl *c, const char *fmt, ...)
{
	char line[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "lamkit mpiexec: %s\n", line);
}

static void send_u32(struct ctl *c, unsigned type, int n, const uint32_t *v)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, c->o->js->jobid);
	for (int i = 0; i < n; i++)
		core_w_u32(&w, v[i]);
	if (c->agent)
		core_conn_send(c->agent, type, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

static void kill_job(struct ctl *c)
{
	if (c->killed)
		return;
	c->killed = 1;
	send_u32(c, BOOT_MSG_KILL, 0, NULL);
}

/* The first failure decides the exit status and ends the job. */
static void fail(struct ctl *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct ctl *c, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (c->failed || c->killed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->failed = 1;
	c->exit_code = code;
	/* said after the ranks' last output, so it is the last line the user sees */
	snprintf(c->why, sizeof c->why, "%s", msg);
	kill_job(c);
}

/* {==== stdin -> rank 0, in a window acknowledged by the agent */

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

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		stdin_stop(c);
		send_u32(c, BOOT_MSG_STDIN, 0, NULL);
		return;
	}
	struct core_wbuf w = {0};
	core_w_u32(&w, c->o->js->jobid);
	core_conn_send(c->agent, BOOT_MSG_STDIN, w.p, w.len, buf, (size_t)n);
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
		send_u32(c, BOOT_MSG_STDIN, 0, NULL);
		return;
	}
	c->stdin_file = 1;
	c->pump_timer = core_ev_timer(c->ev, 0, stdin_pump, c);
}

/* ====} */

static void rank_exit(struct ctl *c, struct core_rbuf *r)
{
	int rank = (int)core_r_u32(r);
	int pid = (int)core_r_u32(r);
	int st = (int)core_r_u32(r);
	int pmi = (int)core_r_u32(r);

	if (r->err || rank < 0 || rank >= c->o->js->size)
		return;
	if (rank == 0)
		stdin_stop(c);
	if (c->failed || c->killed)
		return; /* consequences of ending the job, not causes */
	if (WIFSIGNALED(st)) {
		fail(c, 128 + WTERMSIG(st), "rank %d (pid %d on %s) killed by signal %d (%s)", rank,
		     pid, c->host, WTERMSIG(st), strsignal(WTERMSIG(st)));
	} else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
		fail(c, WEXITSTATUS(st), "rank %d (pid %d on %s) exited with status %d", rank, pid,
		     c->host, WEXITSTATUS(st));
	} else if (pmi == BOOT_PMI_INIT && c->o->js->size > 1) {
		fail(c, 1,
		     "rank %d (pid %d on %s) exited without finalizing (MPI_Finalize) while "
		     "others may wait for it; ending the job",
		     rank, pid, c->host);
	}
}

static void on_frame(core_conn_t *conn, unsigned type, const char *d, size_t len, void *arg)
{
	struct ctl *c = arg;
	struct core_rbuf r = {.p = d, .len = len};
	uint32_t jobid = core_r_u32(&r);

	if (type == BOOT_MSG_HELLO) {
		r = (struct core_rbuf){.p = d, .len = len};
		core_r_u32(&r);
		snprintf(c->host, sizeof c->host, "%s", core_r_str(&r));
		if (c->o->verbose)
			ctl_msg(c, "agent: pid %u on %s", core_r_u32(&r), c->host);
		return;
	}
	if (r.err || jobid != c->o->js->jobid)
		return;
	switch (type) {
	case BOOT_MSG_IO: {
		int rank = (int)core_r_u32(&r), stream = (int)core_r_u32(&r);
		size_t n = r.len - r.off;
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
				ctl_msg(c, "rank %u: pid %u on %s", rank, pid, c->host);
		}
		break;
	}
	case BOOT_MSG_SPAWN_FAIL: {
		int rank = (int)core_r_u32(&r), e = (int)core_r_u32(&r);
		const char *exe = core_r_str(&r);
		fail(c, e == ENOENT ? BOOT_EXIT_NOTFOUND : BOOT_EXIT_NOEXEC,
		     "cannot start rank %d on %s: %s: %s", rank, c->host, exe, strerror(e));
		break;
	}
	case BOOT_MSG_RANK_EXIT:
		rank_exit(c, &r);
		break;
	case BOOT_MSG_ABORT: {
		int rank = (int)core_r_u32(&r), code = (int)core_r_u32(&r);
		const char *msg = core_r_str(&r);
		/* exit statuses are 8 bits: 256 must not come out as success */
		int ec = (code & 0xff) || !code ? code & 0xff : 1;
		fail(c, ec, "rank %d (pid %d on %s) called MPI_Abort with code %d%s%s", rank,
		     rank >= 0 && rank < c->o->js->size ? (int)c->pids[rank] : -1, c->host, code,
		     *msg ? ": " : "", msg);
		break;
	}
	case BOOT_MSG_PMI_ERROR: {
		int rank = (int)core_r_u32(&r);
		fail(c, 1, "rank %d on %s broke the PMI protocol: %s", rank, c->host,
		     core_r_str(&r));
		break;
	}
	case BOOT_MSG_STDIN_ACK:
		stdin_ack(c, core_r_u32(&r));
		break;
	case BOOT_MSG_JOB_DONE:
		c->done = 1;
		core_ev_stop(c->ev);
		break;
	}
}

static void on_close(core_conn_t *conn, int err, void *arg)
{
	struct ctl *c = arg;

	if (!c->done) {
		ctl_msg(c, "the agent on %s went away%s%s; job ended",
		        c->host[0] ? c->host : "this host", err ? ": " : "",
		        err ? strerror(err) : "");
		if (!c->failed)
			c->exit_code = CORE_EXIT_SYSTEM;
		c->failed = 1;
	}
	core_conn_destroy(c->agent);
	c->agent = NULL;
	core_ev_stop(c->ev);
}

static void on_grace(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	c->grace_timer = 0;
	ctl_msg(c, "ranks still running %d ms after the signal; killing them", c->o->kill_grace_ms);
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
			c->exit_code = 128 + signo;
		}
		if (c->grace_timer || c->killed) { /* a second signal: no more grace */
			kill_job(c);
			break;
		}
		send_u32(c, BOOT_MSG_SIGNAL, 1, &s);
		c->grace_timer = core_ev_timer(ev, c->o->kill_grace_ms, on_grace, c);
		break;
	case SIGTSTP:
		send_u32(c, BOOT_MSG_SIGNAL, 1, &s);
		if (c->agent)
			core_conn_flush(c->agent, 1000);
		raise(SIGSTOP); /* and stop ourselves, as a shell expects */
		break;
	default: /* SIGCONT, SIGUSR1, SIGUSR2 */
		send_u32(c, BOOT_MSG_SIGNAL, 1, &s);
	}
}

static void on_timeout(core_ev_t *ev, void *arg)
{
	struct ctl *c = arg;

	fail(c, BOOT_EXIT_TIMEOUT, "job timed out after %d s; ranks killed", c->o->timeout_s);
}

static pid_t fork_agent(const struct boot_run_opts *o, int *fd)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		char name[64];
		close(sv[0]);
		setsid(); /* terminal signals reach mpiexec only; it forwards them */
		snprintf(name, sizeof name, "local-%d", (int)getpid());
		struct boot_agent_opts ao = {
		    .name = name, .singinit_fd = o->singinit_fd, .singinit_pid = o->singinit_pid};
		core_progname = "lamkit agent";
		int rc = boot_agent_run(sv[1], &ao);
#ifdef LAMKIT_SANITIZE
		exit(
		    rc); /* let LeakSanitizer check the agent too (stdio was flushed before fork) */
#else
		_exit(rc);
#endif
	}
	close(sv[1]);
	if (o->singinit_fd >= 0)
		close(o->singinit_fd);
	*fd = sv[0];
	return pid;
}

/* The agent exits once we hang up. Wait for it without polling (pidfd), at most 5 s, then
 * SIGKILL it: nothing of ours outlives mpiexec. */
static void reap_agent(struct ctl *c)
{
	int st;

	if (c->agent_pid <= 0)
		return;
	int pfd = (int)syscall(SYS_pidfd_open, c->agent_pid, 0);
	int64_t end = core_now_ms() + 5000;
	while (waitpid(c->agent_pid, &st, WNOHANG) == 0) {
		int64_t left = end - core_now_ms();
		if (left <= 0) {
			kill(c->agent_pid, SIGKILL);
			waitpid(c->agent_pid, &st, 0);
			break;
		}
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			poll(&p, 1, (int)left);
		} else {
			usleep(1000); /* kernels before 5.3 have no pidfd */
		}
	}
	if (pfd >= 0)
		close(pfd);
}

int boot_run_local(const struct boot_run_opts *o)
{
	struct ctl c = {.o = o, .agent_pid = -1};
	struct core_wbuf w = {0};
	int fd;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT, SIGUSR1, SIGUSR2};

	snprintf(c.host, sizeof c.host, "%s", core_hostname());
	c.ev = core_ev_create();
	c.out = boot_outbuf_create(o->js->size, o->js->tag_output);
	c.pids = calloc((size_t)o->js->size, sizeof *c.pids);
	if (!c.ev || !c.out || !c.pids) {
		ctl_msg(&c, "out of memory");
		c.exit_code = CORE_EXIT_SYSTEM;
		goto out;
	}
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		core_ev_signal(c.ev, sigs[i], on_signal, &c);
	signal(SIGPIPE, SIG_IGN);
	c.agent_pid = fork_agent(o, &fd);
	if (c.agent_pid < 0) {
		ctl_msg(&c, "cannot start the local agent: %s", strerror(errno));
		c.exit_code = CORE_EXIT_SYSTEM;
		goto out;
	}
	c.agent = core_conn_create(c.ev, fd, on_frame, on_close, &c);
	if (!c.agent) {
		close(fd);
		c.exit_code = CORE_EXIT_SYSTEM;
		goto out;
	}
	boot_jobspec_encode(&w, o->js);
	core_conn_send(c.agent, BOOT_MSG_JOB_START, w.p, w.len, NULL, 0);
	core_w_free(&w);
	if (o->singinit_fd < 0)
		stdin_start(&c);
	if (o->timeout_s > 0)
		core_ev_timer(c.ev, (int64_t)o->timeout_s * 1000, on_timeout, &c);
	core_ev_run(c.ev);
	boot_outbuf_flush_all(c.out);
	if (c.why[0])
		ctl_msg(&c, "%s", c.why);
out:
	stdin_stop(&c);
	core_conn_destroy(c.agent);
	reap_agent(&c);
	boot_outbuf_destroy(c.out);
	free(c.pids);
	core_ev_destroy(c.ev);
	return c.exit_code;
}
