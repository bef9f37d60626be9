/* lib/boot/agent.c: the agent's main loop: controller connection, signals, reaping. */
#include "agent.h"
#include "core.h"
#include "session.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
	if (ag->ctl_gone && ag->njobs == 0)
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

/* Tell the controller a job cannot start (it would otherwise wait for it forever). */
static void reject_job(boot_agent_t *ag, uint32_t jobid, const char *why)
{
	struct core_wbuf w = {0};

	core_log(CORE_LOG_ERROR, "agent: job %u: %s", jobid, why);
	core_w_u32(&w, jobid);
	core_w_u32(&w, 0);
	core_w_u32(&w, EPROTO);
	core_w_str(&w, why);
	core_conn_send(ag->ctl, BOOT_MSG_SPAWN_FAIL, w.p, w.len, NULL, 0);
	core_w_free(&w);
	core_w_u32(&w, jobid);
	core_conn_send(ag->ctl, BOOT_MSG_JOB_DONE, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

static void on_ctl_frame(core_conn_t *c, unsigned type, const char *d, size_t len, void *arg)
{
	boot_agent_t *ag = arg;
	struct core_rbuf r = {.p = d, .len = len};

	if (type == BOOT_MSG_JOB_START) {
		struct boot_jobspec js;
		if (boot_jobspec_decode(&js, d, len) < 0) {
			reject_job(ag, core_r_u32(&r), "malformed job spec");
			return;
		}
		if (find_job(ag, js.jobid)) {
			reject_job(ag, js.jobid, "a job with this id is running already");
			boot_jobspec_free(&js);
			return;
		}
		boot_job_t *j = boot_job_start(ag, &js);
		if (j) {
			boot_job_t **nj = realloc(ag->jobs, (size_t)(ag->njobs + 1) * sizeof *nj);
			if (!nj) {
				boot_job_kill(j);
				boot_job_destroy(j);
				return;
			}
			ag->jobs = nj;
			ag->jobs[ag->njobs++] = j;
		}
		maybe_stop(ag);
		return;
	}
	uint32_t id = core_r_u32(&r);
	boot_job_t *j = find_job(ag, id);
	if (!j) {
		core_log(CORE_LOG_DEBUG, "agent: frame %u for unknown job %u", type, id);
		return;
	}
	boot_job_frame(j, type, &r);
	maybe_stop(ag);
}

static void on_ctl_close(core_conn_t *c, int err, void *arg)
{
	boot_agent_t *ag = arg;

	/* the controller is gone: nobody will collect output or decide; end everything */
	ag->ctl_gone = 1;
	for (int i = 0; i < ag->njobs; i++)
		boot_job_kill(ag->jobs[i]);
	core_conn_destroy(ag->ctl);
	ag->ctl = NULL;
	maybe_stop(ag);
}

static void on_ctl_drain(core_conn_t *c, void *arg)
{
	boot_agent_t *ag = arg;

	for (int i = 0; i < ag->njobs; i++)
		boot_job_resume_output(ag->jobs[i]);
}

static void on_sigchld(core_ev_t *ev, int signo, void *arg)
{
	boot_agent_t *ag = arg;
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int mine = 0;
		for (int i = 0; i < ag->njobs && !mine; i++)
			mine = boot_job_reaped(ag->jobs[i], pid, status);
	}
	maybe_stop(ag);
}

static void on_term(core_ev_t *ev, int signo, void *arg)
{
	boot_agent_t *ag = arg;

	core_log(CORE_LOG_DEBUG, "agent: signal %d, ending all jobs", signo);
	ag->ctl_gone = 1;
	for (int i = 0; i < ag->njobs; i++)
		boot_job_kill(ag->jobs[i]);
	maybe_stop(ag);
}

static void send_hello(boot_agent_t *ag)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, BOOT_PROTO_VERSION);
	core_w_str(&w, core_hostname());
	core_w_u32(&w, (uint32_t)getpid());
	core_w_u32(&w, (uint32_t)core_cpu_count());
	if (ag->ctl)
		core_conn_send(ag->ctl, BOOT_MSG_HELLO, w.p, w.len, NULL, 0);
	core_w_free(&w);
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

static void remove_agent_record(boot_agent_t *ag)
{
	char path[sizeof ag->root + 8];

	snprintf(path, sizeof path, "%s/agent", ag->root);
	unlink(path);
}

int boot_agent_run(int ctl_fd, const struct boot_agent_opts *o)
{
	boot_agent_t ag = {.opts = o};
	char err[512];
	int rc = 0;

	ag.ev = core_ev_create();
	if (!ag.ev) {
		core_log(CORE_LOG_ERROR, "agent: cannot create event loop: %s", strerror(errno));
		return CORE_EXIT_SYSTEM;
	}
	if (boot_session_root(ag.root, sizeof ag.root, err, sizeof err) < 0) {
		core_log(CORE_LOG_ERROR, "agent: %s", err);
		core_ev_destroy(ag.ev);
		return CORE_EXIT_SYSTEM;
	}
	size_t n = strlen(ag.root);
	snprintf(ag.root + n, sizeof ag.root - n, "/%s", o->name);
	if (core_mkdir_p(ag.root, 0700) < 0) {
		core_log(CORE_LOG_ERROR, "agent: cannot create %s: %s", ag.root, strerror(errno));
		core_ev_destroy(ag.ev);
		return CORE_EXIT_SYSTEM;
	}
	write_agent_record(&ag);
	core_ev_signal(ag.ev, SIGCHLD, on_sigchld, &ag);
	core_ev_signal(ag.ev, SIGTERM, on_term, &ag);
	core_ev_signal(ag.ev, SIGHUP, on_term, &ag);
	core_ev_signal(ag.ev, SIGINT, on_term, &ag);
	signal(SIGPIPE, SIG_IGN);
	boot_spawn_raise_nofile();
	core_conn_t *ctl = core_conn_create(ag.ev, ctl_fd, on_ctl_frame, on_ctl_close, &ag);
	if (!ctl) {
		rc = CORE_EXIT_SYSTEM;
		goto out;
	}
	core_conn_on_drain(ctl, on_ctl_drain);
	ag.ctl = ctl;
	send_hello(&ag);
	if (core_ev_run(ag.ev) < 0)
		rc = CORE_EXIT_SYSTEM;
	if (ag.ctl)
		core_conn_flush(ag.ctl, 2000);
out:
	for (int i = 0; i < ag.njobs; i++) {
		boot_job_kill(ag.jobs[i]);
		boot_job_destroy(ag.jobs[i]);
	}
	free(ag.jobs);
	core_conn_destroy(ag.ctl);
	remove_agent_record(&ag);
	rmdir(ag.root);
	core_ev_destroy(ag.ev);
	return rc;
}
