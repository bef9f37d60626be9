/* lib/boot/job.c: one job on one agent: spawn the local ranks, forward their stdio, track
 * their exits, kill them. PMI glue is in job_pmi.c. */
#include "agent.h"
#include "core.h"
#include "elfinfo.h"
#include "job_internal.h"
#include "session.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define IO_CHUNK  65536
#define DRAIN_MS  2000 /* after the last rank exits, how long leftover writers may hold pipes */
#define STDIN_MAX (1u << 20)

void boot_job_send(boot_job_t *j, unsigned type, const struct core_wbuf *w, const void *extra,
                   size_t elen)
{
	if (j->ctl)
		boot_link_send(j->ctl, type, w->p, w->len, extra, elen);
}

static void send_u32s(boot_job_t *j, unsigned type, int n, const uint32_t *v)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	for (int i = 0; i < n; i++)
		core_w_u32(&w, v[i]);
	boot_job_send(j, type, &w, NULL, 0);
	core_w_free(&w);
}

/* Every rank leads its own process group; what is left in one after its leader exited
 * (a background child) ends with the job, as under a batch system: nothing of a job outlives
 * it. Processes that made a session of their own are not ours to judge. */
static void sweep_groups(boot_job_t *j)
{
	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		if (r->pid > 0 && !r->adopted && kill(-r->pid, SIGKILL) == 0)
			core_log(
			    CORE_LOG_WARN,
			    "rank %d left processes behind when it exited; killed them with the "
			    "job",
			    r->rank);
	}
}

static void check_done(boot_job_t *j)
{
	if (j->nalive == 0 && j->nstreams == 0)
		boot_agent_poke(j->ag);
	if (j->done_sent || j->nalive > 0 || j->nstreams > 0)
		return;
	j->done_sent = 1;
	if (j->drain_timer > 0)
		core_ev_timer_cancel(j->ag->ev, j->drain_timer);
	j->drain_timer = 0;
	sweep_groups(j);
	send_u32s(j, BOOT_MSG_JOB_DONE, 0, NULL);
}

/* {==== output forwarding */

static void close_stream(boot_job_t *j, struct boot_rank *r, int stream)
{
	int *fd = stream == 1 ? &r->out_fd : &r->err_fd;

	if (r->handed & 1u << stream) { /* the controller drains it when it sees JOB_DONE */
		r->handed &= ~(1u << stream);
		j->nstreams--;
		return;
	}
	if (*fd < 0)
		return;
	core_ev_fd_del(j->ag->ev, *fd);
	close(*fd);
	*fd = -1;
	j->nstreams--;
	uint32_t v[2] = {(uint32_t)r->rank, (uint32_t)stream};
	send_u32s(j, BOOT_MSG_IO, 2, v); /* no bytes: EOF */
}

static void pause_output(boot_job_t *j, int paused)
{
	j->out_paused = paused;
	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		if (r->out_fd >= 0)
			core_ev_fd_mod(j->ag->ev, r->out_fd, paused ? 0 : CORE_EV_READ);
		if (r->err_fd >= 0)
			core_ev_fd_mod(j->ag->ev, r->err_fd, paused ? 0 : CORE_EV_READ);
	}
}

static void on_output(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	struct boot_rank *r = arg;
	boot_job_t *j = r->job;
	int stream = fd == r->out_fd ? 1 : 2;
	char buf[IO_CHUNK];
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		close_stream(j, r, stream);
		check_done(j);
		return;
	}
	struct core_wbuf w = {0};
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)r->rank);
	core_w_u32(&w, (uint32_t)stream);
	boot_job_send(j, BOOT_MSG_IO, &w, buf, (size_t)n);
	core_w_free(&w);
	if (j->ctl && boot_link_congested(j->ctl) && !j->out_paused)
		pause_output(j, 1); /* the controller is slow: let the ranks' pipes fill up */
}

/* A forked agent's controller (a plain link) reads the ranks' pipes itself: one copy of the
 * output fewer, and no hop through this process. The stream still counts as open here until
 * the controller says it reached EOF (IO_EOF), so JOB_DONE still means "output drained".
 * LAMKIT_STDIO_DIRECT=0 keeps forwarding (to compare). 0, or -1: forward it ourselves. */
static int hand_over(boot_job_t *j, struct boot_rank *r, int stream, int fd)
{
	static int off = -1;

	if (off < 0) {
		const char *e = getenv("LAMKIT_STDIO_DIRECT");
		off = e && strcmp(e, "0") == 0;
	}
	if (off || !j->ctl)
		return -1;
	struct core_wbuf w = {0};
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)r->rank);
	core_w_u32(&w, (uint32_t)stream);
	int rc = w.err ? -1 : boot_link_send_fd(j->ctl, BOOT_MSG_IO_PIPE, w.p, w.len, fd);
	core_w_free(&w);
	if (rc == 0)
		r->handed |= 1u << stream;
	return rc;
}

/* The controller read a handed pipe to its end. */
static void handed_eof(boot_job_t *j, struct core_rbuf *rb)
{
	uint32_t rank = core_r_u32(rb), stream = core_r_u32(rb);

	for (int i = 0; i < j->nranks && !rb->err && stream >= 1 && stream <= 2; i++) {
		struct boot_rank *r = &j->r[i];
		if ((uint32_t)r->rank != rank || !(r->handed & 1u << stream))
			continue;
		r->handed &= ~(1u << stream);
		j->nstreams--;
		check_done(j);
		return;
	}
}

void boot_job_resume_output(boot_job_t *j)
{
	if (j->out_paused)
		pause_output(j, 0);
}

/* ====} */

/* {==== stdin for rank 0: bounded queue, acknowledged to the controller as it drains */

static void stdin_close(boot_job_t *j)
{
	if (j->stdin_fd < 0)
		return;
	core_ev_fd_del(j->ag->ev, j->stdin_fd);
	close(j->stdin_fd);
	j->stdin_fd = -1;
	j->inlen = j->inoff = 0;
}

static void stdin_flush(boot_job_t *j)
{
	size_t wrote = 0;

	while (j->stdin_fd >= 0 && j->inoff < j->inlen) {
		ssize_t n = write(j->stdin_fd, j->inq + j->inoff, j->inlen - j->inoff);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) { /* EPIPE: rank 0 closed its stdin; the rest is dropped */
			wrote += j->inlen - j->inoff;
			stdin_close(j);
			break;
		}
		j->inoff += (size_t)n;
		wrote += (size_t)n;
	}
	if (j->inoff == j->inlen) {
		j->inoff = j->inlen = 0;
		if (j->stdin_eof)
			stdin_close(j);
	}
	if (j->stdin_fd >= 0)
		core_ev_fd_mod(j->ag->ev, j->stdin_fd, j->inlen ? CORE_EV_WRITE : 0);
	if (wrote) {
		uint32_t v = (uint32_t)wrote;
		send_u32s(j, BOOT_MSG_STDIN_ACK, 1, &v);
	}
}

static void on_stdin_writable(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	stdin_flush(arg);
}

static void stdin_data(boot_job_t *j, struct core_rbuf *r)
{
	size_t n = r->len - r->off;
	const char *p = core_r_bytes(r, n);

	if (n == 0) {
		j->stdin_eof = 1;
	} else if (j->stdin_fd < 0) {
		uint32_t v = (uint32_t)n; /* nobody reads: acknowledge so the controller moves on */
		send_u32s(j, BOOT_MSG_STDIN_ACK, 1, &v);
		return;
	} else {
		if (j->inoff > 0) { /* drop what was written already */
			memmove(j->inq, j->inq + j->inoff, j->inlen - j->inoff);
			j->inlen -= j->inoff;
			j->inoff = 0;
		}
		if (j->inlen + n > j->incap) {
			size_t cap = j->incap ? j->incap : 65536;
			while (cap < j->inlen + n)
				cap *= 2;
			char *q = cap > 4 * STDIN_MAX ? NULL : realloc(j->inq, cap);
			if (!q) {
				core_log(CORE_LOG_ERROR,
				         "agent: job %u: stdin queue overflow; the "
				         "controller ignored flow control",
				         j->js.jobid);
				stdin_close(j);
				return;
			}
			j->inq = q;
			j->incap = cap;
		}
		memcpy(j->inq + j->inlen, p, n);
		j->inlen += n;
	}
	stdin_flush(j);
}

/* ====} */

void boot_job_frame(boot_job_t *j, unsigned type, struct core_rbuf *r)
{
	switch (type) {
	case BOOT_MSG_STDIN:
		stdin_data(j, r);
		break;
	case BOOT_MSG_SIGNAL: {
		int sig = (int)core_r_u32(r);
		if (r->err || sig <= 0 || sig >= 65)
			return;
		/* each rank leads its own session, so its group is orphaned and the kernel drops
		 * terminal stop signals sent to it: stop it for real */
		if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			sig = SIGSTOP;
		/* after the signal, optionally: u32 n, n x u32 rank (PMIx job control): only those
		 */
		uint32_t n = core_r_u32(r);
		const char *only = r->err ? NULL : core_r_bytes(r, (size_t)n * 4);
		for (int i = 0; i < j->nranks; i++) {
			int hit = !only;
			for (uint32_t k = 0; only && k < n && !hit; k++) {
				struct core_rbuf one = {.p = only + 4 * k, .len = 4};
				hit = core_r_u32(&one) == (uint32_t)j->r[i].rank;
			}
			if (hit && j->r[i].pid > 0 && !j->r[i].exited)
				kill(-j->r[i].pid, sig);
		}
		break;
	}
	case BOOT_MSG_KILL:
		boot_job_kill(j);
		break;
	case BOOT_MSG_IO_EOF:
		handed_eof(j, r);
		break;
	case BOOT_MSG_FENCE_DOWN:
		boot_job_fence_down(j, r);
		break;
	case BOOT_MSG_SPAWN_REPLY:
		boot_job_spawn_reply(j, r);
		break;
	case BOOT_MSG_PROC_FAILED: { /* the ranks tell with a get of PMI_dead_processes */
		const char *ranks = core_r_str(r);
		if (!r->err && pmi_server_preput(j->pmi, "PMI_dead_processes", ranks) < 0)
			core_log(CORE_LOG_ERROR, "agent: job %u: cannot store PMI_dead_processes",
			         j->js.jobid);
		break;
	}
	case BOOT_MSG_NAMES_REPLY: /* no universe: mpiexec serves the family's names */
		boot_job_names_reply(j, r);
		break;
	case BOOT_MSG_XCOLL_DOWN:
	case BOOT_MSG_DMODEX:
	case BOOT_MSG_DMODEX_REPLY:
	case BOOT_MSG_PROC_EVENT:
	case BOOT_MSG_JOB_CTRL_REPLY:
	case BOOT_MSG_JOB_END_EVENT:
		boot_job_pmix_ctl_frame(j, type, r);
		break;
	default:
		core_log(CORE_LOG_DEBUG, "agent: job %u: unexpected frame type %u", j->js.jobid,
		         type);
	}
}

void boot_job_kill(boot_job_t *j)
{
	j->killed = 1;
	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		if (r->pid > 0 && !r->exited) {
			kill(-r->pid, SIGKILL); /* the rank's whole process group */
			kill(r->pid, SIGKILL);
		}
		if (r->adopted && !r->exited) {
			r->exited = 1; /* a singleton is not ours to kill or reap */
			j->nalive--;
		}
	}
	stdin_close(j);
	check_done(j);
}

static void drain_timeout(core_ev_t *ev, void *arg)
{
	boot_job_t *j = arg;

	j->drain_timer = 0;
	for (int i = 0; i < j->nranks; i++) {
		if (j->r[i].out_fd >= 0 || j->r[i].err_fd >= 0 || j->r[i].handed)
			core_log(CORE_LOG_WARN,
			         "rank %d exited but a process it started still holds its output "
			         "open; not waiting for it",
			         j->r[i].rank);
		close_stream(j, &j->r[i], 1);
		close_stream(j, &j->r[i], 2);
	}
	check_done(j);
}

void boot_job_rank_gone(boot_job_t *j, struct boot_rank *r, int status)
{
	r->exited = 1;
	r->status = status;
	j->nalive--;
	boot_job_pmi_rank_exit(j, r); /* read what it said last, then judge its PMI state */
	boot_job_res_clean(j, r->rank);
	uint32_t v[4] = {(uint32_t)r->rank, (uint32_t)r->pid, (uint32_t)status,
	                 (uint32_t)r->pmi_state};
	send_u32s(j, BOOT_MSG_RANK_EXIT, 4, v);
	if (r->rank == 0 && !r->adopted)
		stdin_close(j);
	if (j->nalive == 0 && j->nstreams > 0 && !j->drain_timer)
		j->drain_timer = core_ev_timer(j->ag->ev, DRAIN_MS, drain_timeout, j);
	check_done(j);
}

int boot_job_reaped(boot_job_t *j, pid_t pid, int status)
{
	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		if (r->pid == pid && !r->exited && !r->adopted) {
			boot_job_rank_gone(j, r, status);
			return 1;
		}
	}
	return 0;
}

int boot_job_finished(const boot_job_t *j)
{
	return j->nalive == 0 && j->nstreams == 0 && (j->done_sent || !j->ctl);
}

uint32_t boot_job_id(const boot_job_t *j)
{
	return j->js.jobid;
}

boot_link_t *boot_job_ctl(const boot_job_t *j)
{
	return j->ctl;
}

int boot_job_nranks(const boot_job_t *j)
{
	return j->nranks;
}

void boot_job_orphan(boot_job_t *j)
{
	for (int i = 0; i < j->nranks; i++) /* the pipes it read went with it */
		for (int s = 1; s <= 2; s++)
			if (j->r[i].handed & 1u << s)
				close_stream(j, &j->r[i], s);
	j->ctl = NULL;
	boot_job_kill(j);
}

void boot_job_destroy(boot_job_t *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		if (r->out_fd >= 0) {
			core_ev_fd_del(j->ag->ev, r->out_fd);
			close(r->out_fd);
		}
		if (r->err_fd >= 0) {
			core_ev_fd_del(j->ag->ev, r->err_fd);
			close(r->err_fd);
		}
	}
	stdin_close(j);
	if (j->drain_timer > 0)
		core_ev_timer_cancel(j->ag->ev, j->drain_timer);
	boot_job_pmix_fini(j);
	boot_job_pmi_destroy(j);
	boot_job_res_fini(j);
	if (j->dir[0] && core_rm_rf(j->dir) < 0)
		core_log(CORE_LOG_WARN, "cannot remove %s: %s", j->dir, strerror(errno));
	if (j->devnull >= 0)
		close(j->devnull);
	free(j->app_ompi);
	boot_job_env_free_cache(j);
	for (int a = 0; j->exe_paths && a < j->js.napps; a++)
		free(j->exe_paths[a]);
	free(j->exe_paths);
	core_w_free(&j->procs);
	free(j->inq);
	boot_job_bind_free(j);
	free(j->r);
	boot_jobspec_free(&j->js);
	free(j);
}

/* {==== starting */

static void spawn_failed(boot_job_t *j, struct boot_rank *r, int err, const char *exe)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)r->rank);
	core_w_u32(&w, (uint32_t)err);
	core_w_str(&w, exe);
	boot_job_send(j, BOOT_MSG_SPAWN_FAIL, &w, NULL, 0);
	core_w_free(&w);
}

static int make_pipe(int p[2], int parent_end)
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	core_fd_nonblock_new(p[parent_end]);
	return 0;
}

extern const struct core_blob boot_pmi_so_blobs[];
static const char *app_path(boot_job_t *j, const struct boot_app *app, char *const *envp,
                            const char *wdir);

/* Open MPI 4.1 spawns only through a PMIx server's spawn and connect; its PMI-1 (flux)
 * component has none. A program importing these gets a hint when it aborts on the flux path
 * (job_pmi.c). */
static const char *const ompi_spawn_names[] = {"MPI_Comm_spawn",
                                               "MPI_Comm_spawn_multiple",
                                               "mpi_comm_spawn_",
                                               "mpi_comm_spawn__",
                                               "mpi_comm_spawn_multiple_",
                                               "mpi_comm_spawn_multiple__",
                                               NULL};

/* Which apps are Open MPI programs (DT_NEEDED libmpi.so.40, or --mpi openmpi) and which are
 * served PMIx (Open MPI's PMIx component, a program linked with libpmix, --mpi pmix); for Open
 * MPI on its flux component (--mpi openmpi-flux) the embedded libpmi.so goes into the job
 * directory. 0, or -1 with errno. */
static int detect_mpi(boot_job_t *j, char *const *envp)
{
	j->app_ompi = calloc((size_t)j->js.napps, sizeof *j->app_ompi);
	if (!j->app_ompi)
		return -1;
	for (int a = 0; a < j->js.napps; a++) {
		const struct boot_app *app = &j->js.apps[a];
		const char *path = app_path(j, app, envp, app->wdir ? app->wdir : j->js.wdir);
		int k = j->js.mpi_kind;
		if (k == BOOT_MPI_OPENMPI)
			j->app_ompi[a] = BOOT_APP_OMPI | BOOT_APP_PMIX;
		else if (k == BOOT_MPI_OPENMPI_FLUX)
			j->app_ompi[a] = BOOT_APP_OMPI;
		else if (k == BOOT_MPI_PMIX)
			j->app_ompi[a] = BOOT_APP_PMIX;
		else if (k == BOOT_MPI_AUTO && path && boot_elf_needs(path, "libmpi.so.40") == 1)
			j->app_ompi[a] = BOOT_APP_OMPI | BOOT_APP_PMIX;
		else if (k == BOOT_MPI_AUTO && path && boot_elf_needs(path, "libpmix.so") == 1)
			j->app_ompi[a] = BOOT_APP_PMIX;
		if ((j->app_ompi[a] & BOOT_APP_OMPI) && path &&
		    boot_elf_imports(path, ompi_spawn_names) == 1)
			j->app_ompi[a] |= BOOT_APP_OMPI_SPAWN;
		j->ompi |= (j->app_ompi[a] & BOOT_APP_OMPI) && !(j->app_ompi[a] & BOOT_APP_PMIX);
	}
	if (!j->ompi)
		return 0;
	const struct core_blob *b = core_blob_find(boot_pmi_so_blobs, "libpmi.so");
	snprintf(j->pmi_lib, sizeof j->pmi_lib, "%s/libpmi.so", j->dir);
	if (!b || core_write_file_atomic(j->pmi_lib, b->data, b->len, 0755) < 0) {
		j->pmi_lib[0] = '\0';
		return -1;
	}
	return 0;
}

/* The app's executable, resolved once per job (PATH of the rank's environment). */
static const char *app_path(boot_job_t *j, const struct boot_app *app, char *const *envp,
                            const char *wdir)
{
	int a = (int)(app - j->js.apps);
	char path[4096];

	if (!j->exe_paths && !(j->exe_paths = calloc((size_t)j->js.napps, sizeof(char *))))
		return NULL;
	if (!j->exe_paths[a]) {
		if (boot_spawn_resolve(app->exe, boot_env_get(envp, "PATH"), wdir, path,
		                       sizeof path) < 0)
			return NULL;
		j->exe_paths[a] = strdup(path);
		if (!j->exe_paths[a])
			errno = ENOMEM;
	}
	return j->exe_paths[a];
}

/* What SPAWN_FAIL names when the program was not found: the name and where it was looked
 * for (the PATH directories, or the working directory a relative name is taken from), so that
 * the one line says what to fix. */
static const char *not_found_what(char *buf, size_t len, const char *exe, char *const *envp,
                                  const char *wdir, int err)
{
	const char *path = boot_env_get(envp, "PATH");
	int rel = 0;

	if (err != ENOENT && err != EACCES)
		return exe;
	if (!path)
		path = BOOT_SPAWN_DEFAULT_PATH;
	for (const char *p = path; *p; p += strcspn(p, ":"), p += *p == ':')
		rel |= *p != '/';
	if (!strchr(exe, '/'))
		snprintf(buf, len, "%s (looked along PATH=%.700s%s%s)", exe, path,
		         rel && wdir ? ", relative entries in " : "", rel && wdir ? wdir : "");
	else if (exe[0] != '/' && wdir)
		snprintf(buf, len, "%s (relative to %s)", exe, wdir);
	else
		return exe;
	return buf;
}

static int start_rank(boot_job_t *j, struct boot_rank *r, int localid)
{
	const struct boot_app *app = boot_jobspec_app(&j->js, r->rank);
	int out[2] = {-1, -1}, errp[2] = {-1, -1}, in[2] = {-1, -1};
	unsigned long long start = 0;
	const char *wdir = app->wdir ? app->wdir : j->js.wdir;
	char **envp = boot_job_env(j, app, r, localid);
	const char *path;
	int rc = -1;

	if (!envp)
		return -1;
	if (boot_job_pmix_env(j, r, &envp) < 0) {
		spawn_failed(j, r, errno, "PMIx registration of the rank");
		goto out;
	}
	if (!(path = app_path(j, app, envp, wdir))) {
		int e = errno;
		char what[1024];
		spawn_failed(j, r, e, not_found_what(what, sizeof what, app->exe, envp, wdir, e));
		goto out;
	}
	if (make_pipe(out, 0) < 0 || make_pipe(errp, 0) < 0 ||
	    (r->rank == 0 && make_pipe(in, 1) < 0))
		goto out;
	struct boot_spawn sp = {.path = path,
	                        .argv = app->argv,
	                        .envp = envp,
	                        .wdir = app->wdir || !j->wdir_here ? wdir : NULL,
	                        .fd_in = in[0] >= 0 ? in[0] : j->devnull,
	                        .fd_out = out[1],
	                        .fd_err = errp[1],
	                        .extra_fd = r->pmi_child_fd,
	                        .extra_fd_target = BOOT_PMI_FD_NUM,
	                        .new_session = j->blocking ? BOOT_SPAWN_PGRP : BOOT_SPAWN_SESSION,
	                        .cpu = -1,
	                        .cpus = r->cpus,
	                        .pdeathsig = SIGKILL,
	                        .start = &start};
	r->pid = boot_spawn(&sp);
	if (r->pid < 0) {
		spawn_failed(j, r, errno, app->exe);
		goto out;
	}
	char line[96];
	snprintf(line, sizeof line, "%d %llu %d\n", (int)r->pid, start, r->rank);
	core_w_bytes(&j->procs, line, strlen(line));
	if (hand_over(j, r, 1, out[0]) == 0)
		out[0] = -1;
	if (hand_over(j, r, 2, errp[0]) == 0)
		errp[0] = -1;
	r->out_fd = out[0];
	r->err_fd = errp[0];
	out[0] = errp[0] = -1;
	if (r->out_fd >= 0)
		core_ev_fd(j->ag->ev, r->out_fd, CORE_EV_READ, on_output, r);
	if (r->err_fd >= 0)
		core_ev_fd(j->ag->ev, r->err_fd, CORE_EV_READ, on_output, r);
	j->nstreams += 2;
	j->nalive++;
	if (in[1] >= 0) {
		j->stdin_fd = in[1];
		in[1] = -1;
		core_ev_fd(j->ag->ev, j->stdin_fd, 0, on_stdin_writable, j);
	}
	rc = 0;
out:
	for (int k = 0; k < 2; k++) {
		if (out[k] >= 0)
			close(out[k]);
		if (errp[k] >= 0)
			close(errp[k]);
		if (in[k] >= 0)
			close(in[k]);
	}
	if (r->pmi_child_fd >= 0) {
		close(r->pmi_child_fd);
		r->pmi_child_fd = -1;
	}
	boot_env_free(envp);
	return rc;
}

/* a and b name one directory (a chdir from b to a would change nothing) */
static int same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

boot_job_t *boot_job_start(boot_agent_t *ag, struct boot_jobspec *js, boot_link_t *ctl)
{
	boot_job_t *j = calloc(1, sizeof *j);
	char err[512], name[64];

	if (!j) {
		boot_jobspec_free(js);
		return NULL;
	}
	j->ag = ag;
	j->ctl = ctl;
	j->js = *js;
	memset(js, 0, sizeof *js);
	j->stdin_fd = -1;
	j->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	j->wdir_here = same_dir(j->js.wdir, ".");
	j->nranks = j->js.nranks;
	j->r = calloc((size_t)j->nranks, sizeof *j->r);
	snprintf(name, sizeof name, "job-%u", j->js.jobid);
	for (int i = 0; j->r && i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		r->job = j;
		r->rank = j->js.ranks[i];
		r->out_fd = r->err_fd = r->pmi_fd = r->pmi_child_fd = -1;
	}
	err[0] = '\0';
	if (!j->r ||
	    boot_session_mkdir(ag->root, name, j->dir, sizeof j->dir, err, sizeof err) < 0 ||
	    detect_mpi(j, j->js.env) < 0 || boot_job_pmi_init(j, err, sizeof err) < 0 ||
	    boot_job_pmix_init(j, err, sizeof err) < 0) {
		if (!err[0])
			snprintf(err, sizeof err, "cannot write %.300s for Open MPI: %s",
			         j->pmi_lib, strerror(errno));
		core_log(CORE_LOG_ERROR, "agent: job %u: %s", j->js.jobid,
		         j->r ? err : "out of memory");
		struct boot_rank dummy = {.rank = j->js.nranks ? j->js.ranks[0] : 0};
		spawn_failed(j, &dummy, errno ? errno : ENOMEM, err);
		j->done_sent = 1;
		send_u32s(j, BOOT_MSG_JOB_DONE, 0, NULL);
		return j;
	}
	if (j->nranks > 1) /* one local rank uses no shared memory */
		boot_job_res_node_segment(j);
	if (boot_job_bind(j) < 0) { /* the controller says why and ends the job */
		j->done_sent = 1;
		send_u32s(j, BOOT_MSG_JOB_DONE, 0, NULL);
		return j;
	}
	boot_job_pmi_topo(j);
	boot_job_wait_mode(j);
	int started = 0;
	for (int i = 0; i < j->nranks && !j->killed; i++) {
		struct boot_rank *r = &j->r[i];
		if (boot_job_pmi_rank(j, r, err, sizeof err) < 0) {
			spawn_failed(j, r, errno, err);
			break;
		}
		if (!r->adopted && start_rank(j, r, i) < 0)
			break; /* the controller ends the job when it sees SPAWN_FAIL */
		started++;
	}
	if (j->procs.len && boot_session_write_procs(j->dir, j->procs.p, j->procs.len) < 0)
		core_log(CORE_LOG_WARN, "agent: job %u: cannot record pids in %s: %s", j->js.jobid,
		         j->dir, strerror(errno));
	core_w_free(&j->procs);
	struct core_wbuf w = {0};
	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)started);
	for (int i = 0; i < started; i++) {
		core_w_u32(&w, (uint32_t)j->r[i].rank);
		core_w_u32(&w, (uint32_t)j->r[i].pid);
	}
	core_w_u32(&w, (uint32_t)boot_job_pmix_listeners(j)); /* a rank's death: their event */
	boot_job_send(j, BOOT_MSG_STARTED, &w, NULL, 0);
	core_w_free(&w);
	check_done(j);
	return j;
}

/* ====} */
