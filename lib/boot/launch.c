/* lib/boot/launch.c: launch processes with the key on stdin and output in a log file. */
#include "launch.h"
#include "core.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FEED_MAX_S 300 /* a payload of a few MB over the slowest link we expect */

extern char **environ;

struct boot_launch {
	pid_t pid, writer; /* writer: the child feeding a shipped payload, or 0 */
	int reaped, status;
	char *log;
};

boot_launch_t *boot_launch_start(char *const argv[], const char *stdin_text, const char *logpath,
                                 char *err, size_t errlen)
{
	return boot_launch_start_ship(argv, stdin_text, NULL, logpath, err, errlen);
}

/* A child that writes text and then the payload file into fd, then exits: a payload is far
 * larger than a pipe buffer, and boot must keep serving other nodes meanwhile. Bounded by an
 * alarm; a reader that goes away ends it with SIGPIPE. */
static pid_t feed(int fd, const char *text, int payload)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	char buf[65536];
	ssize_t n;
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	alarm(FEED_MAX_S);
	if (core_write_all(fd, text, strlen(text)) < 0)
		_exit(1);
	while ((n = read(payload, buf, sizeof buf)) > 0)
		if (core_write_all(fd, buf, (size_t)n) < 0)
			_exit(1);
	_exit(n < 0);
}

boot_launch_t *boot_launch_start_ship(char *const argv[], const char *stdin_text,
                                      const char *payload, const char *logpath, char *err,
                                      size_t errlen)
{
	int pfd = -1;
	char path[4096];
	int in[2] = {-1, -1}, logfd = -1;
	boot_launch_t *l = calloc(1, sizeof *l);

	if (!l || !(l->log = strdup(logpath))) {
		free(l);
		core_errprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (payload && (pfd = open(payload, O_RDONLY | O_CLOEXEC)) < 0) {
		core_errprintf(err, errlen, "cannot read %s: %s", payload, strerror(errno));
		goto fail;
	}
	if (boot_spawn_resolve(argv[0], getenv("PATH"), NULL, path, sizeof path) < 0) {
		core_errprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(errno));
		goto fail;
	}
	/* the directory may be gone: a wipe agent on this very host removes every session dir */
	core_mkdir_parent(logpath, 0700);
	logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0) {
		core_errprintf(err, errlen, "cannot create %s: %s", logpath, strerror(errno));
		goto fail;
	}
	if (pipe2(in, O_CLOEXEC) < 0) {
		core_errprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	struct boot_spawn sp = {.path = path,
	                        .argv = argv,
	                        .envp = environ,
	                        .fd_in = in[0],
	                        .fd_out = logfd,
	                        .fd_err = logfd,
	                        .extra_fd = -1,
	                        .new_session = 1,
	                        .cpu = -1};
	l->pid = boot_spawn(&sp);
	if (l->pid < 0) {
		core_errprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(errno));
		goto fail;
	}
	close(in[0]);
	close(logfd);
	if (pfd >= 0) {
		l->writer = feed(in[1], stdin_text ? stdin_text : "", pfd);
		if (l->writer < 0)
			core_log(CORE_LOG_WARN, "launch: cannot fork the payload writer: %s",
			         strerror(errno));
		close(pfd);
		close(in[1]);
		return l;
	}
	/* a key line is far below the pipe buffer: this never blocks */
	if (stdin_text && core_write_all(in[1], stdin_text, strlen(stdin_text)) < 0 &&
	    errno != EPIPE)
		core_log(CORE_LOG_DEBUG, "launch: writing stdin of %s: %s", argv[0],
		         strerror(errno));
	close(in[1]);
	return l;
fail:
	if (pfd >= 0)
		close(pfd);
	if (in[0] >= 0) {
		close(in[0]);
		close(in[1]);
	}
	if (logfd >= 0) {
		close(logfd);
		unlink(logpath);
	}
	free(l->log);
	free(l);
	return NULL;
}

int boot_launch_reaped(boot_launch_t *l, pid_t pid, int status)
{
	if (l && l->writer > 0 && l->writer == pid) {
		l->writer = 0; /* the payload writer: nothing to keep */
		return 0;
	}
	if (!l || l->reaped || l->pid != pid)
		return 0;
	l->reaped = 1;
	l->status = status;
	return 1;
}

int boot_launch_done(const boot_launch_t *l, int *status)
{
	if (l->reaped && status)
		*status = l->status;
	return l->reaped;
}

void boot_launch_last_line(const boot_launch_t *l, char *buf, size_t len)
{
	size_t n;
	char *text = core_read_file(l->log, 1u << 20, &n);

	buf[0] = '\0';
	if (!text)
		return;
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		text[--n] = '\0';
	char *start = strrchr(text, '\n');
	start = start ? start + 1 : text;
	snprintf(buf, len, "%s", start);
	free(text);
}

pid_t boot_launch_pid(const boot_launch_t *l)
{
	return l->pid;
}

void boot_launch_kill(boot_launch_t *l)
{
	if (l && !l->reaped && l->pid > 0) {
		kill(-l->pid, SIGKILL);
		kill(l->pid, SIGKILL);
	}
	if (l && l->writer > 0)
		kill(l->writer, SIGKILL); /* reaped by the caller's SIGCHLD loop */
}

void boot_launch_free(boot_launch_t *l, int remove_log)
{
	if (!l)
		return;
	if (remove_log)
		unlink(l->log);
	free(l->log);
	free(l);
}
