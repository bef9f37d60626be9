/* tests/unit/t_boot_spawn.c: boot_spawn: exec errors come back, the start time is /proc's, a
 * new_session child leads its own process group, and its own session only when the caller
 * has a controlling terminal to leave. */
#include "session.h"
#include "spawn.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* pgrp and session of pid from /proc/PID/stat (the fields after the state and the ppid) */
static int pgrp_sid(pid_t pid, long *pgrp, long *sid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %*d %ld %ld", pgrp, sid) == 2 ? 0 : -1;
}

/* In a child of ours that is a session leader (with a controlling terminal when tty): spawn
 * sleep with new_session and look at its group and session. Exit status: 0 when the group
 * is its own and the session is its own exactly when tty, 1 otherwise, 2 setup failed. */
static int session_case(int tty)
{
	pid_t pid = fork();
	if (pid != 0) {
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
			return 2;
		return WEXITSTATUS(st);
	}
	char *argv[] = {"sleep", "5", NULL}, *envp[] = {NULL};
	if (setsid() < 0)
		_exit(2);
	if (tty) { /* a session leader without a terminal opening one gets it as its own */
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		const char *name =
		    m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0 ? ptsname(m) : NULL;
		if (!name || open(name, O_RDWR) < 0 || open("/dev/tty", O_RDONLY) < 0)
			_exit(2);
	}
	struct boot_spawn sp = {.path = "/bin/sleep",
	                        .argv = argv,
	                        .envp = envp,
	                        .fd_in = -1,
	                        .fd_out = -1,
	                        .fd_err = -1,
	                        .extra_fd = -1,
	                        .cpu = -1,
	                        .new_session = 1};
	pid_t c = boot_spawn(&sp);
	long pgrp = 0, sid = 0;
	int got = c > 0 ? pgrp_sid(c, &pgrp, &sid) : -1;
	if (c > 0) {
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
	}
	if (got < 0)
		_exit(2);
	_exit(pgrp == c && (sid == c) == tty ? 0 : 1);
}

int main(void)
{
	char *argv[] = {"sleep", "5", NULL}, *envp[] = {NULL};
	int same = 0, n = 40;

	/* boot_spawn derives the start time from the clock when the spawn stays within one
	 * clock tick; it must equal what /proc reports (what wipe and ps compare against) */
	for (int i = 0; i < n; i++) {
		unsigned long long start = 1;
		struct boot_spawn sp = {.path = "/bin/sleep",
		                        .argv = argv,
		                        .envp = envp,
		                        .fd_in = -1,
		                        .fd_out = -1,
		                        .fd_err = -1,
		                        .extra_fd = -1,
		                        .cpu = -1,
		                        .start = &start};
		pid_t pid = boot_spawn(&sp);
		if (pid < 0)
			break;
		same += start != 0 && start == boot_proc_starttime(pid);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	is_int(same, n, "the start time boot_spawn reports is the one in /proc/PID/stat");

	struct boot_spawn bad = {.path = "/nonexistent/prog",
	                         .argv = argv,
	                         .envp = envp,
	                         .fd_in = -1,
	                         .fd_out = -1,
	                         .fd_err = -1,
	                         .extra_fd = -1,
	                         .cpu = -1};
	errno = 0;
	ok(boot_spawn(&bad) < 0 && errno == ENOENT, "exec's errno comes back (ENOENT)");
	ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "the failed child is reaped already");
	is_int(session_case(0), 0,
	       "without a terminal: its own process group, the caller's session (no setsid)");
	is_int(session_case(1), 0, "with a terminal: its own session, leaving the terminal");
	return done_testing();
}
