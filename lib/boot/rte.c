/* lib/boot/rte.c: apply the RTE settings lua/rte.lua gave an agent; run its prolog/epilog. */
#include "rte.h"
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct {
	const char *name;
	int res;
} limits[] = {{"core", RLIMIT_CORE},       {"nofile", RLIMIT_NOFILE}, {"stack", RLIMIT_STACK},
              {"memlock", RLIMIT_MEMLOCK}, {"nproc", RLIMIT_NPROC},   {"as", RLIMIT_AS},
              {"fsize", RLIMIT_FSIZE},     {"cpu", RLIMIT_CPU},       {"data", RLIMIT_DATA}};

static int add_limit(struct boot_rte *r, const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '=');
	char *end;

	for (size_t i = 0; eq && i < sizeof limits / sizeof limits[0]; i++) {
		if (strlen(limits[i].name) != (size_t)(eq - spec) ||
		    strncmp(spec, limits[i].name, (size_t)(eq - spec)))
			continue;
		rlim_t v = RLIM_INFINITY;
		if (strcmp(eq + 1, "unlimited")) {
			errno = 0;
			unsigned long long n = strtoull(eq + 1, &end, 10);
			if (errno || *end || !eq[1] || eq[1] == '-')
				return core_errprintf(err, errlen,
				                      "--rte-limit %s: wants a number or unlimited",
				                      spec);
			v = (rlim_t)n;
		}
		if (r->nlim == BOOT_RTE_MAX_LIMITS)
			return core_errprintf(err, errlen, "--rte-limit: too many limits");
		r->lim[r->nlim].res = limits[i].res;
		r->lim[r->nlim++].v = v;
		return 1;
	}
	return core_errprintf(err, errlen,
	                      "--rte-limit %s: unknown limit (known: core, nofile, stack, memlock, "
	                      "nproc, as, fsize, cpu, data)",
	                      spec);
}

int boot_rte_arg(struct boot_rte *r, const char *opt, const char *val, char *err, size_t errlen)
{
	if (strncmp(opt, "--rte-", 6))
		return 0;
	if (!val)
		return core_errprintf(err, errlen, "%s needs a value", opt);
	if (!strcmp(opt, "--rte-env")) {
		if (!strchr(val, '=') || val[0] == '=')
			return core_errprintf(err, errlen, "--rte-env wants NAME=VALUE, not '%s'",
			                      val);
		const char **ne = realloc(r->env, (size_t)(r->nenv + 1) * sizeof *ne);
		if (!ne)
			return core_errprintf(err, errlen, "out of memory");
		r->env = ne;
		r->env[r->nenv++] = val;
		return 1;
	}
	if (!strcmp(opt, "--rte-wrap")) {
		if (!*val)
			return core_errprintf(err, errlen, "--rte-wrap wants a non-empty word");
		const char **nw = realloc(r->wrap, (size_t)(r->nwrap + 1) * sizeof *nw);
		if (!nw)
			return core_errprintf(err, errlen, "out of memory");
		r->wrap = nw;
		r->wrap[r->nwrap++] = val;
		return 1;
	}
	if (!strcmp(opt, "--rte-limit"))
		return add_limit(r, val, err, errlen);
	if (!strcmp(opt, "--rte-wdir"))
		r->wdir = val;
	else if (!strcmp(opt, "--rte-prolog"))
		r->prolog = val;
	else if (!strcmp(opt, "--rte-epilog"))
		r->epilog = val;
	else
		return core_errprintf(err, errlen, "unknown option '%s'", opt);
	return 1;
}

int boot_rte_apply(const struct boot_rte *r, char *err, size_t errlen)
{
	for (int i = 0; i < r->nenv; i++) {
		char name[256];
		size_t n = strcspn(r->env[i], "=");
		snprintf(name, sizeof name, "%.*s", (int)n, r->env[i]);
		if (setenv(name, r->env[i] + n + 1, 1) < 0)
			return core_errprintf(err, errlen, "setenv %s: %s", name, strerror(errno));
	}
	for (int i = 0; i < r->nlim; i++) {
		struct rlimit rl;
		getrlimit(r->lim[i].res, &rl);
		rl.rlim_cur = r->lim[i].v;
		if (rl.rlim_max != RLIM_INFINITY &&
		    (r->lim[i].v == RLIM_INFINITY || r->lim[i].v > rl.rlim_max))
			rl.rlim_max = r->lim[i].v; /* only root may raise it: setrlimit says so */
		if (setrlimit(r->lim[i].res, &rl) < 0)
			return core_errprintf(err, errlen, "limit %d to %llu: %s", r->lim[i].res,
			                      (unsigned long long)r->lim[i].v, strerror(errno));
	}
	if (r->wdir && chdir(r->wdir) < 0)
		return core_errprintf(err, errlen, "working directory %s: %s", r->wdir,
		                      strerror(errno));
	return 0;
}

int boot_rte_hook(const char *cmd, const char *event, int node, const char *universe, char *err,
                  size_t errlen)
{
	char nodes[16];
	int st = 0;
	pid_t pid;

	snprintf(nodes, sizeof nodes, "%d", node);
	fflush(NULL);
	if ((pid = fork()) < 0)
		return core_errprintf(err, errlen, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if (in >= 0)
			dup2(in, 0);
		dup2(2, 1);
		setenv("LAMKIT_RTE_EVENT", event, 1);
		setenv("LAMKIT_NODE", nodes, 1);
		setenv("LAMKIT_UNIVERSE_ID", universe ? universe : "", 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int64_t end = core_now_ms() + BOOT_RTE_HOOK_MS;
	pid_t got;
	while ((got = waitpid(pid, &st, WNOHANG)) == 0 && core_now_ms() < end)
		usleep(10000);
	if (got == 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
		return core_errprintf(err, errlen, "killed after %d s", BOOT_RTE_HOOK_MS / 1000);
	}
	if (got < 0)
		return core_errprintf(err, errlen, "waitpid: %s", strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		return core_errprintf(err, errlen, "killed by signal %d", WTERMSIG(st));
	return core_errprintf(err, errlen, "exit %d", WEXITSTATUS(st));
}

int boot_rte_exec_wrapped(const struct boot_rte *r, int argc, char **argv, char *err, size_t errlen)
{
	char self[4096];
	const char **nv;
	int k = 0;

	if (!r->nwrap)
		return 0;
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return core_errprintf(err, errlen, "wrap: cannot find this program: %s",
		                      n < 0 ? strerror(errno) : "empty /proc/self/exe");
	self[n] = '\0';
	nv = calloc((size_t)(r->nwrap + argc + 2), sizeof *nv);
	if (!nv)
		return core_errprintf(err, errlen, "out of memory");
	for (int i = 0; i < r->nwrap; i++)
		nv[k++] = r->wrap[i];
	nv[k++] = self;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--rte-wrap") && i + 1 < argc) {
			i++; /* the second run is not wrapped again */
			continue;
		}
		nv[k++] = argv[i];
	}
	nv[k] = NULL;
	execvp(nv[0], (char *const *)nv);
	int e = errno;
	free(nv);
	return core_errprintf(err, errlen, "wrap: cannot run '%s': %s", r->wrap[0], strerror(e));
}

void boot_rte_free(struct boot_rte *r)
{
	free(r->env);
	r->env = NULL;
	r->nenv = 0;
	free(r->wrap);
	r->wrap = NULL;
	r->nwrap = 0;
}
