/* cmd/atollrun_opts.c: atollrun's options, its machinefile and groupfile, and the remote
 * helper that runs each process on another host. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "atollrun_cmd.h"
#include "cmd.h"
#include "core.h"
#include "spawn.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int num_arg(const char *opt, const char *v, int min, int max, int *out)
{
	char *end;
	long x;

	errno = 0;
	x = v ? strtol(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || x < min || x > max)
		return cmd_usage_error("atollrun",
		                       "%s wants a whole number from %d to %d, not '%s'", opt, min,
		                       max, v ? v : "");
	*out = (int)x;
	return 0;
}

/* "-p N", "-pN", "--processes N", "--processes=N": the value, or NULL (usage error printed). */
static const char *opt_value(int argc, char **argv, int *i, const char *s, const char *l, int *hit)
{
	const char *a = argv[*i];
	size_t ll = strlen(l);

	*hit = 0;
	if (!strcmp(a, s) || !strcmp(a, l)) {
		*hit = 1;
		if (*i + 1 >= argc) {
			cmd_usage_error("atollrun", "%s needs a value", a);
			return NULL;
		}
		return argv[++*i];
	}
	if (!strncmp(a, l, ll) && a[ll] == '=')
		return *hit = 1, a + ll + 1;
	if (s[2] == 0 && !strncmp(a, s, 2) && a[2])
		return *hit = 1, a + 2;
	return NULL;
}

static void home_path(char *buf, size_t len, const char *name)
{
	const char *h = getenv("HOME");
	snprintf(buf, len, "%s/%s", h && *h ? h : ".", name);
}

int atl_parse_opts(int argc, char **argv, struct atl_opts *o)
{
	static char mf[4096], gf[4096];
	const char *env = getenv("LAMKIT_ATOLLRUN_TIMEOUT");
	int i, hit;

	memset(o, 0, sizeof *o);
	o->timeout = 60;
	if (env && *env && num_arg("LAMKIT_ATOLLRUN_TIMEOUT", env, 1, 86400, &o->timeout))
		return CORE_EXIT_USAGE;
	home_path(mf, sizeof mf, ".atollrun_machinefile");
	home_path(gf, sizeof gf, ".atollrun_groupfile");
	o->machinefile = mf;
	o->groupfile = gf;
	o->rsh = "ssh";
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			atl_print_help();
			return 1;
		} else if (!strcmp(a, "-l") || !strcmp(a, "--log")) {
			o->log = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			o->verbose = 1;
		} else if ((v = opt_value(argc, argv, &i, "-p", "--processes", &hit)) || hit) {
			if (!v || num_arg("-p", v, 1, ATL_MAX_PROCS, &o->nprocs))
				return CORE_EXIT_USAGE;
		} else if ((v = opt_value(argc, argv, &i, "-m", "--machinefile", &hit)) || hit) {
			if (!v)
				return CORE_EXIT_USAGE;
			o->machinefile = v;
			o->machinefile_given = 1;
		} else if ((v = opt_value(argc, argv, &i, "-g", "--groupfile", &hit)) || hit) {
			if (!v)
				return CORE_EXIT_USAGE;
			o->groupfile = v;
			o->groupfile_given = 1;
		} else if (!strcmp(a, "-r") || !strcmp(a, "--rsh")) {
			o->rsh = "rsh"; /* the paper's flag: rsh instead of ssh */
		} else if (!strncmp(a, "--rsh=", 6)) {
			if (!a[6])
				return cmd_usage_error("atollrun", "--rsh= needs a command");
			o->rsh = a + 6;
		} else if ((v = opt_value(argc, argv, &i, "-t", "--timeout", &hit)) || hit) {
			if (!v || num_arg("--timeout", v, 1, 86400, &o->timeout))
				return CORE_EXIT_USAGE;
		} else {
			return cmd_usage_error("atollrun", "unknown option '%s'", a);
		}
	}
	if (i >= argc)
		return cmd_usage_error("atollrun", "missing the program to start");
	if (!o->nprocs)
		o->nprocs = 1; /* the paper's default */
	o->argv = argv + i;
	o->argc = argc - i;
	return 0;
}

/* Next line of text (NUL-terminated in place); NULL at the end. */
static char *next_line(char **p)
{
	char *s = *p, *nl;

	if (!s || !*s)
		return NULL;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = 0;
		*p = nl + 1;
	} else {
		*p = s + strlen(s);
	}
	char *h = strchr(s, '#');
	if (h)
		*h = 0;
	while (isspace((unsigned char)*s))
		s++;
	size_t k = strlen(s);
	while (k && isspace((unsigned char)s[k - 1]))
		s[--k] = 0;
	return s;
}

static int host_ok(const char *h)
{
	if (!*h || *h == '-' || strlen(h) > 255)
		return 0;
	for (; *h; h++)
		if (!isalnum((unsigned char)*h) && !strchr("._-:@[]", *h))
			return 0;
	return 1;
}

int atl_read_machinefile(const char *path, char ***hosts, char *err, size_t errlen)
{
	char *text = core_read_file(path, 1 << 20, NULL), *p = text, *s;
	int n = 0, line = 0;

	*hosts = NULL;
	if (!text)
		return core_errprintf(err, errlen, "%s: %s", path, strerror(errno));
	while ((s = next_line(&p)) != NULL) {
		line++;
		if (!*s)
			continue;
		if (!host_ok(s)) {
			core_errprintf(
			    err, errlen,
			    "%s:%d: '%.60s' is not a host name (one host per line, '#' comments)",
			    path, line, s);
			goto bad;
		}
		char **nh = realloc(*hosts, (size_t)(n + 1) * sizeof *nh);
		if (!nh || !(nh[n] = strdup(s))) {
			if (nh)
				*hosts = nh;
			core_errprintf(err, errlen, "%s: out of memory", path);
			goto bad;
		}
		*hosts = nh;
		n++;
	}
	free(text);
	return n;
bad:
	core_strv_free(*hosts, n);
	*hosts = NULL;
	free(text);
	return -1;
}

int atl_read_groupfile(const char *path, char *err, size_t errlen)
{
	char *text = core_read_file(path, 1 << 20, NULL), *p = text, *s;
	int groups = 0, line = 0;

	if (!text)
		return core_errprintf(err, errlen, "%s: %s", path, strerror(errno));
	while ((s = next_line(&p)) != NULL) {
		line++;
		if (!*s)
			continue;
		char *colon = strchr(s, ':'), *tok, *save = NULL;
		int nh = 0;
		if (!colon || colon == s) {
			core_errprintf(err, errlen,
			               "%s:%d: want 'NAME: host, host ...', not '%.60s'", path,
			               line, s);
			break;
		}
		*colon = 0;
		for (tok = strtok_r(colon + 1, ", \t", &save); tok;
		     tok = strtok_r(NULL, ", \t", &save)) {
			if (!host_ok(tok))
				break;
			nh++;
		}
		if (tok || nh == 0) {
			core_errprintf(err, errlen, "%s:%d: group '%.40s': %s%.60s%s", path, line,
			               s, tok ? "'" : "no hosts", tok ? tok : "",
			               tok ? "' is not a host name" : "");
			break;
		}
		groups++;
	}
	free(text);
	return s ? -1 : groups;
}

/* {==== the remote helper */

static volatile sig_atomic_t helper_sig;
static void on_helper_sig(int sig)
{
	helper_sig = sig;
}

static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Relay stdin to the child until it exits or stdin closes (then end it). Its exit code. */
static int relay(pid_t pid, int to_child)
{
	int st, in_open = 1;
	int64_t kill_at = -1;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return exit_code(st);
		if (helper_sig && kill_at < 0) {
			kill(-pid, SIGTERM);
			kill_at = core_now_ms() + 2000;
		}
		if (kill_at >= 0 && core_now_ms() >= kill_at)
			kill(-pid, SIGKILL);
		struct pollfd p = {.fd = in_open ? 0 : -1, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		char buf[4096];
		ssize_t r = read(0, buf, sizeof buf);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) { /* the starter is gone: end the program */
			in_open = 0;
			close(to_child);
			kill(-pid, SIGTERM);
			kill_at = core_now_ms() + 2000;
			continue;
		}
		core_write_all(to_child, buf, (size_t)r); /* EPIPE: the child closed stdin; fine */
	}
}

int atl_exec_main(int argc, char **argv)
{
	char path[4096];
	int p[2];

	if (argc < 4) {
		fprintf(stderr, "atollrun --exec: usage: DIR TIMEOUT PROG [ARGS] (internal)\n");
		return CORE_EXIT_USAGE;
	}
	if (chdir(argv[1]) < 0) {
		fprintf(stderr, "atollrun: on %s: cannot enter %s: %s\n", core_hostname(), argv[1],
		        strerror(errno));
		return 127;
	}
	setenv("LAMKIT_ATOLLRUN", "1", 1);
	setenv("LAMKIT_ATOLLRUN_TIMEOUT", argv[2], 1);
	if (boot_spawn_resolve(argv[3], getenv("PATH"), NULL, path, sizeof path) < 0 ||
	    pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "atollrun: on %s: cannot run %s: %s\n", core_hostname(), argv[3],
		        strerror(errno));
		return 127;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_helper_sig);
	signal(SIGHUP, on_helper_sig);
	signal(SIGINT, on_helper_sig);
	struct boot_spawn sp = {.path = path,
	                        .argv = argv + 3,
	                        .envp = environ,
	                        .fd_in = p[0],
	                        .fd_out = -1,
	                        .fd_err = -1,
	                        .extra_fd = -1,
	                        .new_session = 1,
	                        .cpu = -1,
	                        .pdeathsig = SIGKILL};
	pid_t pid = boot_spawn(&sp);
	close(p[0]);
	if (pid < 0) {
		fprintf(stderr, "atollrun: on %s: cannot run %s: %s\n", core_hostname(), argv[3],
		        strerror(errno));
		return 127;
	}
	return relay(pid, p[1]);
}

/* ====} */
