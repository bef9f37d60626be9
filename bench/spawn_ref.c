/* bench/spawn_ref.c: bare launch reference: posix_spawn N copies of a program and wait for all. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * usage: spawn_ref [-c] N prog [args...]
 * Starts N copies of prog (searched in PATH) with posix_spawnp, all inheriting stdio and the
 * environment, then reaps all of them. Exit status: 0 if every copy exited 0, else that of the
 * first failing copy in reaping order (128+signal for a signal); 100 usage error; 111 spawn
 * failure (after reaping the copies already started).
 *
 * -c (channels): what any launcher that forwards output rank by rank and serves PMI must
 * make besides the processes: each copy gets a pipe of its own as stdout and another as
 * stderr, and one end of a socketpair as fd 3 (PMI_FD's socket); the reference reads the
 * pipes to their end (echoing nothing) and closes its socket ends once the copy is reaped.
 * Nothing else a launcher does (no framing, no event loop beyond one poll, no PMI server).
 */
extern char **environ;

struct chan {
	int out, err, sock; /* our ends; -1 when closed */
};

static int spawn_one(const char *prog, char **argv, struct chan *c, pid_t *pid)
{
	posix_spawn_file_actions_t fa, *fap = NULL;
	int o[2] = {-1, -1}, e[2] = {-1, -1}, s[2] = {-1, -1}, rc;

	if (c) {
		if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0 ||
		    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0) {
			rc = errno;
			goto out;
		}
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, o[1], 1);
		posix_spawn_file_actions_adddup2(&fa, e[1], 2);
		posix_spawn_file_actions_adddup2(&fa, s[1], 3);
		fap = &fa;
	}
	rc = posix_spawnp(pid, prog, fap, NULL, argv, environ);
	if (fap)
		posix_spawn_file_actions_destroy(fap);
out:
	if (!c)
		return rc;
	/* the copy holds its ends now (or nobody does): ours of them go */
	int mine[3] = {o[0], e[0], s[0]}, its[3] = {o[1], e[1], s[1]};
	for (int i = 0; i < 3; i++) {
		if (its[i] >= 0)
			close(its[i]);
		if (rc != 0 && mine[i] >= 0)
			close(mine[i]);
	}
	*c = rc == 0 ? (struct chan){o[0], e[0], s[0]} : (struct chan){-1, -1, -1};
	return rc;
}

/* read every copy's pipes to their end; 0, or -1 when poll fails */
static int drain(struct chan *ch, long n)
{
	struct pollfd *p = calloc((size_t)n * 2, sizeof *p);
	char buf[4096];
	long open = 0;

	if (!p)
		return -1;
	for (long i = 0; i < n; i++) {
		p[2 * i] = (struct pollfd){.fd = ch[i].out, .events = POLLIN};
		p[2 * i + 1] = (struct pollfd){.fd = ch[i].err, .events = POLLIN};
		open += (ch[i].out >= 0) + (ch[i].err >= 0);
	}
	while (open > 0) {
		/* a copy that never exits holds us here: the caller's timeout ends us */
		if (poll(p, (nfds_t)(n * 2), -1) < 0) {
			if (errno == EINTR)
				continue;
			free(p);
			return -1;
		}
		for (long i = 0; i < n * 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (read(p[i].fd, buf, sizeof buf) > 0)
				continue;
			close(p[i].fd);
			p[i].fd = -1;
			open--;
		}
	}
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	int chan = argc > 1 && strcmp(argv[1], "-c") == 0;
	char *end = NULL;
	long n = argc >= 3 + chan ? strtol(argv[1 + chan], &end, 10) : -1;
	int status = 0, rc = 0;
	struct chan *ch = NULL;

	if (n < 1 || n > 100000 || !end || *end) {
		fprintf(stderr, "usage: spawn_ref [-c] N prog [args...]\n");
		return 100;
	}
	argv += chan;
	if (chan && !(ch = calloc((size_t)n, sizeof *ch))) {
		perror("spawn_ref");
		return 111;
	}
	long started = 0;
	for (; started < n; started++) {
		pid_t pid;
		int e = spawn_one(argv[2], argv + 2, ch ? &ch[started] : NULL, &pid);
		if (e != 0) {
			fprintf(stderr, "spawn_ref: %s: %s\n", argv[2], strerror(e));
			rc = 111;
			break;
		}
	}
	if (ch && drain(ch, started) < 0) {
		perror("spawn_ref: poll");
		rc = 111;
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
	for (long i = 0; ch && i < started; i++)
		if (ch[i].sock >= 0)
			close(ch[i].sock);
	free(ch);
	return rc;
}
