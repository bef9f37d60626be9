/* lib/boot/spawn.h: start a process the way every lamkit spawn does: vfork + exec, exec's
 * errno brought back (through shared memory; a pipe in ASan builds), fds placed, its own
 * session, signals reset, and SIGKILL when the spawning agent dies. */
#ifndef LAMKIT_BOOT_SPAWN_H
#define LAMKIT_BOOT_SPAWN_H

#include <sched.h>
#include <sys/types.h>

enum { BOOT_SPAWN_SESSION = 1, BOOT_SPAWN_PGRP = 2 }; /* boot_spawn.new_session */

struct boot_spawn {
	const char *path; /* resolved executable (see boot_spawn_resolve) */
	char *const *argv;
	char *const *envp;
	const char *wdir;          /* NULL = inherit */
	int fd_in, fd_out, fd_err; /* become 0, 1, 2 (-1 = /dev/null for stdin, inherit others) */
	int extra_fd;              /* if >= 0, becomes extra_fd_target in the child */
	int extra_fd_target;
	int new_session;           /* BOOT_SPAWN_SESSION: setsid(), own session and process group;
	                              BOOT_SPAWN_PGRP: own process group in our session; 0: ours */
	int cpu;                   /* >= 0: bind to this CPU (sched_setaffinity); -1 = inherit */
	const cpu_set_t *cpus;     /* not NULL: bind to these CPUs instead */
	int pdeathsig;             /* signal the child gets when we die (0 = none) */
	unsigned long long *start; /* if set, receives the child's start time as /proc/PID/stat
	                            * gives it (boot_proc_starttime), 0 if unknown */
};

/* Start it. Returns the pid, or -1 with errno = the reason exec (or chdir, dup2) failed;
 * in that case the child has been reaped already. */
pid_t boot_spawn(const struct boot_spawn *sp);

/* An agent holds ~3 fds per rank: raise our soft RLIMIT_NOFILE to the hard limit; spawned
 * programs get the original soft limit back. */
void boot_spawn_raise_nofile(void);

/* The search path when a rank's environment has no PATH. */
#define BOOT_SPAWN_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* Find `name` like execvp would, in `path` (a PATH value; NULL = the default path),
 * relative names against wdir. Writes the result into buf. 0, or -1 with errno
 * (ENOENT, EACCES, ENOTDIR, ENAMETOOLONG). */
int boot_spawn_resolve(const char *name, const char *path, const char *wdir, char *buf, size_t len);

#endif
