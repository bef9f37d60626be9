/* bench/cputime.c: run a command, print the user+sys CPU microseconds it and every descendant
 * it waited for used (wait4's rusage), to microsecond resolution. usage: cputime CMD [ARGS] */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: cputime CMD [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return 1;
	long us = (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
	          ru.ru_stime.tv_usec;
	printf("%ld\n", us);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
