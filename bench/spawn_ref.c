/* bench/spawn_ref.c: bare launch reference: posix_spawn N copies of a program and wait for all. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>

/*
 * usage: spawn_ref N prog [args...]
 * Starts N copies of prog (searched in PATH) with posix_spawnp, all inheriting stdio and the
 * environment, then reaps all of them. Exit status: 0 if every copy exited 0, else that of the
 * first failing copy in reaping order (128+signal for a signal); 100 usage error; 111 spawn
 * failure (after reaping the copies already started).
 */
extern char **environ;

int main(int argc, char **argv)
{
	char *end = NULL;
	long n = argc >= 3 ? strtol(argv[1], &end, 10) : -1;
	int status = 0, rc = 0;

	if (n < 1 || n > 100000 || !end || *end) {
		fprintf(stderr, "usage: spawn_ref N prog [args...]\n");
		return 100;
	}
	long started = 0;
	for (; started < n; started++) {
		pid_t pid;
		int e = posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ);
		if (e != 0) {
			fprintf(stderr, "spawn_ref: %s: %s\n", argv[2], strerror(e));
			rc = 111;
			break;
		}
	}
	for (long left = started; left > 0;) {
		pid_t p = wait(&status);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			perror("spawn_ref: wait");
			return 111;
		}
		left--;
		if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
			rc = WEXITSTATUS(status);
		else if (rc == 0 && WIFSIGNALED(status))
			rc = 128 + WTERMSIG(status);
	}
	return rc;
}
