/* lib/boot/spawn.c: vfork + exec with an errno pipe (the musl posix_spawn pattern), plus the
 * few child-side steps posix_spawn cannot do (parent-death signal). */
#include "spawn.h"
#include "core.h"
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct rlimit nofile_orig;
static int nofile_raised;

void boot_spawn_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	nofile_orig = rl;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		nofile_raised = 1;
}

/* CLOCK_BOOTTIME in clock ticks, the unit and clock of a process's start time in /proc
 * (the kernel takes the time at fork and divides it down to ticks), or -1. */
static long long boot_ticks(void)
{
	static long long ns_per_tick;
	struct timespec ts;

	if (!ns_per_tick) {
		long hz = sysconf(_SC_CLK_TCK);
		ns_per_tick = hz > 0 && 1000000000L % hz == 0 ? 1000000000L / hz : -1;
	}
	if (ns_per_tick < 0 || clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return -1;
	return ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec) / ns_per_tick;
}

/* Child side: only system calls, no allocation, no stdio (we share memory with the parent).
 * With vfork, the clock tick we started in goes to *tick_out and a failure's errno to
 * *err_out (the parent's memory, which it reads once we exec'd or are gone); with fork (ASan
 * builds) both are NULL and the errno goes through the pipe errfd. */
static void child(const struct boot_spawn *sp, int errfd, volatile int *err_out,
                  volatile long long *tick_out, pid_t parent)
{
	sigset_t none;
	int e;

	if (tick_out)
		*tick_out = boot_ticks(); /* the vDSO's clock: no system call */

	/* a session of its own (as Hydra does): also its own process group for kill(-pid), no
	 * controlling terminal, and, where the kernel groups CPU time by session (autogroup),
	 * each rank competes as a session rather than all ranks sharing the caller's share.
	 * That last one matters more than the 17 us of CPU the autogroup costs a rank: with the
	 * ranks in their agent's session instead (setpgid), lk_rma -n 8 -ppn 2 on 4 namespace
	 * nodes of this 2-core machine took 5.7 s to over 90 s a run instead of 3.4-5.0 s
	 * (busy-polling ranks and their progress threads sharing one group per node). */
	if (sp->new_session == BOOT_SPAWN_SESSION)
		setsid();
	else if (sp->new_session == BOOT_SPAWN_PGRP)
		setpgid(0, 0); /* the caller's session: job_wait.c says when and why */
	if (sp->cpus) {
		sched_setaffinity(0, sizeof *sp->cpus, sp->cpus); /* best effort, as binding is */
	} else if (sp->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(sp->cpu, &set);
		sched_setaffinity(0, sizeof set, &set);
	}
	if (sp->pdeathsig) {
		prctl(PR_SET_PDEATHSIG, sp->pdeathsig);
		if (getppid() != parent) /* the parent died before prctl took effect */
			_exit(127);
	}
	/* ignored and blocked signals survive exec: undo what lamkit itself changed (SIGPIPE
	 * ignored, signals blocked for signalfd), keep what the user set (nohup's SIGHUP) */
	signal(SIGPIPE, SIG_DFL);
	if (nofile_raised) /* the program gets the limit we were given, not our raised one */
		setrlimit(RLIMIT_NOFILE, &nofile_orig);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (sp->extra_fd >= 0 && sp->extra_fd != sp->extra_fd_target &&
	    dup2(sp->extra_fd, sp->extra_fd_target) < 0)
		goto fail;
	if (sp->extra_fd >= 0 && sp->extra_fd == sp->extra_fd_target)
		fcntl(sp->extra_fd, F_SETFD, 0);
	if (sp->fd_in >= 0 && dup2(sp->fd_in, 0) < 0)
		goto fail;
	if (sp->fd_in < 0) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || (fd != 0 && dup2(fd, 0) < 0))
			goto fail;
	}
	if (sp->fd_out >= 0 && dup2(sp->fd_out, 1) < 0)
		goto fail;
	if (sp->fd_err >= 0 && dup2(sp->fd_err, 2) < 0)
		goto fail;
	if (sp->wdir && chdir(sp->wdir) < 0)
		goto fail;
	execve(sp->path, sp->argv, sp->envp);
fail:
	e = errno;
	if (err_out)
		*err_out = e;
	else
		(void)!write(errfd, &e, sizeof e);
	_exit(127);
}

/* The child was forked between ticks t0 and t1: when they are one tick, that is its start
 * time and /proc need not be read (open, read, close and a dentry to drop at its exit, for
 * every rank); the rare spawn across a tick boundary reads it. */
static void start_time(const struct boot_spawn *sp, pid_t pid, long long t0, long long t1)
{
	if (sp->start)
		*sp->start =
		    t0 >= 0 && t1 == t0 ? (unsigned long long)t0 : boot_proc_starttime(pid);
}

#ifdef LAMKIT_SANITIZE
/* ASan's vfork support is partial: fork, and exec's errno comes back through a pipe */
pid_t boot_spawn(const struct boot_spawn *sp)
{
	int p[2], e = 0;
	pid_t parent = getpid(), pid;

	if (sp->extra_fd >= 0 && sp->extra_fd_target <= 2) {
		errno = EINVAL;
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	long long t0 = boot_ticks();
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(sp, p[1], NULL, NULL, parent);
	}
	close(p[1]);
	if (pid < 0) {
		e = errno;
		close(p[0]);
		errno = e;
		return -1;
	}
	ssize_t n;
	while ((n = read(p[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n == (ssize_t)sizeof e) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = e;
		return -1;
	}
	start_time(sp, pid, t0, boot_ticks());
	return pid;
}
#else
/* vfork: we sleep until the child has exec'd or exited, sharing our memory with it, so a
 * failure's errno is simply stored for us (as glibc's posix_spawn does); no errno pipe, which
 * was 4 system calls and a pipe per rank. */
pid_t boot_spawn(const struct boot_spawn *sp)
{
	volatile int e = 0;
	volatile long long t1 = -1;
	pid_t parent = getpid(), pid;

	if (sp->extra_fd >= 0 && sp->extra_fd_target <= 2) {
		errno = EINVAL;
		return -1;
	}
	long long t0 = boot_ticks();
	pid = vfork();
	if (pid == 0)
		child(sp, -1, &e, &t1, parent);
	if (pid < 0)
		return -1;
	if (e != 0) {
		int err = e;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = err;
		return -1;
	}
	start_time(sp, pid, t0, t1);
	return pid;
}
#endif

static int try_path(const char *file, char *buf, size_t len)
{
	struct stat st;

	if (strlen(file) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (stat(file, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (access(file, X_OK) < 0)
		return -1;
	strcpy(buf, file);
	return 0;
}

int boot_spawn_resolve(const char *name, const char *path, const char *wdir, char *buf, size_t len)
{
	char tmp[4096];
	int saw_eacces = 0;

	if (!name || !*name) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(name, '/')) {
		if (name[0] != '/' && wdir) {
			if (snprintf(tmp, sizeof tmp, "%s/%s", wdir, name) >= (int)sizeof tmp) {
				errno = ENAMETOOLONG;
				return -1;
			}
			return try_path(tmp, buf, len);
		}
		return try_path(name, buf, len);
	}
	if (!path)
		path = BOOT_SPAWN_DEFAULT_PATH;
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *dir = n ? p : ".";
		int dn = n ? (int)n : 1;
		if (dir[0] != '/' && wdir)
			snprintf(tmp, sizeof tmp, "%s/%.*s/%s", wdir, dn, dir, name);
		else
			snprintf(tmp, sizeof tmp, "%.*s/%s", dn, dir, name);
		if (try_path(tmp, buf, len) == 0)
			return 0;
		if (errno == EACCES)
			saw_eacces = 1;
		if (!end)
			break;
		p = end;
	}
	errno = saw_eacces ? EACCES : ENOENT;
	return -1;
}
