/* tests/unit/t_boot_spawn.c: boot_spawn: exec errors come back, the start time is /proc's. */
#include "session.h"
#include "spawn.h"
#include "tap.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
	return done_testing();
}
