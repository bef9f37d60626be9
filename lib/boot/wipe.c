/* lib/boot/wipe.c: kill what the session records name (start times checked), remove the rest. */
#include "wipe.h"
#include "core.h"
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_RECORD  (1 << 20) /* a procs or files record larger than this is not ours */
#define MAX_ENVIRON (256 << 10)
#define ENV_KEY     "LAMKIT_SESSION_DIR="

enum unit_kind { U_AGENT, U_JOB, U_STRAY };
enum why { W_RANK, W_AGENT, W_ENV, W_CHILD };

struct unit {
	char rel[2 * NAME_MAX + 2]; /* relative to the root: "agent" or "agent/job-1" */
	enum unit_kind kind;
	int parent; /* the agent unit of a job, else -1 */
	int keep;   /* something of it survived: leave its records */
	int link;   /* a stray symlink */
	dev_t dev;
	ino_t ino;
};

struct rec {
	pid_t pid;
	unsigned long long start;
	int rank; /* -1: the agent itself */
	int unit;
};

struct proc {
	pid_t pid, ppid, pgid, sid;
	uid_t uid;
	unsigned long long start;
	char state;
	int mark;   /* 0, or 1 + the unit it belongs to */
	int why;    /* enum why, when marked */
	int rank;   /* when why == W_RANK */
	int shield; /* this process or one of its ancestors: never killed */
};

struct victim {
	pid_t pid;
	unsigned long long start;
	int leader;  /* pgid == pid */
	int sleader; /* sid == pid */
	int unit;
};

struct wipe {
	const struct boot_wipe_opts *o;
	struct boot_wipe_report *rep;
	char root[4096], rootreal[PATH_MAX];
	int rootfd;
	uid_t uid;
	struct unit *u;
	int nu;
	struct rec *r;
	int nr;
	struct proc *p;
	int np;
	struct victim *v;
	int nv;
	char *env; /* a buffer for reading /proc/PID/environ */
};

static void note(struct wipe *w, enum boot_wipe_note kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(struct wipe *w, enum boot_wipe_note kind, const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	if (kind == BOOT_WIPE_FAIL)
		w->rep->failed++;
	if (!w->o->note)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	w->o->note(w->o->arg, kind, line);
}

/* Room for one more element of an array of n (capacity 8, then doubling), or NULL (the old
 * array stays valid). */
static void *grow(void *p, int n, size_t each)
{
	if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
		return p;
	return realloc(p, (size_t)(n ? 2 * n : 8) * each);
}

/* A DIR for a directory fd (which stays open), or NULL. */
static DIR *opendir_fd(int fd)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);

	if (!d && dfd >= 0)
		close(dfd);
	return d;
}

int boot_wipe_root(char *buf, size_t len, char *err, size_t errlen)
{
	const char *base = boot_session_base(); /* the rule agents use (not creating it) */

	if (snprintf(buf, len, "%s/lamkit-%u", base, (unsigned)getuid()) >= (int)len)
		return core_errprintf(err, errlen, "session directory path too long under %s",
		                      base);
	return 0;
}

/* {==== reading the records */

/* A whole small regular file at dirfd/name (never through a symlink), or NULL. */
static char *read_at(int dirfd, const char *name, size_t max)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)max) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	while (buf && n < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (buf)
		buf[n] = '\0';
	return buf;
}

static int add_unit(struct wipe *w, const char *rel, enum unit_kind kind, int parent)
{
	struct unit *u = grow(w->u, w->nu, sizeof *u);

	if (!u)
		return -1;
	w->u = u;
	u = &w->u[w->nu];
	memset(u, 0, sizeof *u);
	snprintf(u->rel, sizeof u->rel, "%s", rel);
	u->kind = kind;
	u->parent = parent;
	return w->nu++;
}

static int add_rec(struct wipe *w, long pid, unsigned long long start, int rank, int unit)
{
	struct rec *r = grow(w->r, w->nr, sizeof *r);

	if (!r)
		return -1;
	w->r = r;
	w->r[w->nr++] = (struct rec){(pid_t)pid, start, rank, unit};
	return 0;
}

/* Parse "pid starttime [rank]" lines of dirfd/name into records of unit. */
static void read_procs(struct wipe *w, int dirfd, const char *name, int unit, int agent)
{
	char *buf = read_at(dirfd, name, MAX_RECORD);

	if (!buf) {
		if (errno != ENOENT)
			note(w, BOOT_WIPE_FAIL, "%s/%s/%s: cannot read: %s", w->root,
			     w->u[unit].rel, name, strerror(errno));
		return;
	}
	char *save = NULL;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		long pid = 0;
		unsigned long long start = 0;
		int rank = -1;
		int n = sscanf(l, "%ld %llu %d", &pid, &start, &rank);
		if (n < 2 || (!agent && n < 3) || pid <= 1 || pid > INT_MAX) {
			note(w, BOOT_WIPE_SKIP, "%s/%s/%s: malformed record '%.60s' ignored",
			     w->root, w->u[unit].rel, name, l);
			continue;
		}
		if (add_rec(w, pid, start, agent ? -1 : rank, unit) < 0)
			note(w, BOOT_WIPE_FAIL, "out of memory reading %s", name);
	}
	free(buf);
}

/* Open root/rel one component at a time, never through a symlink. */
static int open_unit(struct wipe *w, const char *rel)
{
	char tmp[sizeof w->u->rel];
	char *save = NULL;
	int fd = fcntl(w->rootfd, F_DUPFD_CLOEXEC, 0);

	snprintf(tmp, sizeof tmp, "%s", rel);
	for (char *c = strtok_r(tmp, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		int nfd = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
	}
	return fd;
}

/* Find an agent dir's job dirs and records. */
static void scan_agent(struct wipe *w, int a, int afd)
{
	read_procs(w, afd, "agent", a, 1);
	DIR *d = opendir_fd(afd);
	if (!d) {
		note(w, BOOT_WIPE_FAIL, "%s/%s: cannot list: %s", w->root, w->u[a].rel,
		     strerror(errno));
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		char rel[sizeof w->u->rel];
		if (de->d_name[0] == '.' ||
		    fstatat(afd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue; /* files (and symlinks, never followed) go with the agent dir */
		snprintf(rel, sizeof rel, "%.255s/%.255s", w->u[a].rel, de->d_name);
		int j = add_unit(w, rel, U_JOB, a);
		int jfd = j < 0 ? -1
		                : openat(afd, de->d_name,
		                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (jfd < 0) {
			note(w, BOOT_WIPE_FAIL, "%s/%s: cannot open: %s", w->root, rel,
			     strerror(errno));
			continue;
		}
		w->u[j].dev = st.st_dev;
		w->u[j].ino = st.st_ino;
		read_procs(w, jfd, "procs", j, 0);
		read_procs(w, jfd, "res-procs", j, 0); /* helpers the ranks registered */
		close(jfd);
	}
	closedir(d);
}

static int scan_tree(struct wipe *w)
{
	DIR *d = opendir_fd(w->rootfd);
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (w->o->only && strcmp(de->d_name, w->o->only)) ||
		    fstatat(w->rootfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (st.st_uid != w->uid) {
			note(w, BOOT_WIPE_SKIP, "%s/%s: owned by uid %u, left alone", w->root,
			     de->d_name, (unsigned)st.st_uid);
			continue;
		}
		int a = add_unit(w, de->d_name, S_ISDIR(st.st_mode) ? U_AGENT : U_STRAY, -1);
		if (a >= 0)
			w->u[a].link = S_ISLNK(st.st_mode);
		if (a < 0 || !S_ISDIR(st.st_mode))
			continue;
		int afd =
		    openat(w->rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (afd < 0) {
			note(w, BOOT_WIPE_FAIL, "%s/%s: cannot open: %s", w->root, de->d_name,
			     strerror(errno));
			continue;
		}
		scan_agent(w, a, afd);
		close(afd);
	}
	closedir(d);
	return 0;
}

/* ====} */

/* {==== the process table */

static int cmp_proc(const void *a, const void *b)
{
	pid_t x = ((const struct proc *)a)->pid, y = ((const struct proc *)b)->pid;
	return (x > y) - (x < y);
}

static struct proc *find_proc(struct wipe *w, pid_t pid)
{
	struct proc key = {.pid = pid};
	return bsearch(&key, w->p, (size_t)w->np, sizeof *w->p, cmp_proc);
}

/* /proc/PID/stat: state, ppid, pgrp, session and start time; 0, or -1 if it is gone. */
static int read_stat(pid_t pid, struct proc *p)
{
	char path[64], buf[1024];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &st) < 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *s = strrchr(buf, ')'); /* the command name may contain anything */
	if (!s || !s[1] || !s[2])
		return -1;
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->uid = st.st_uid;
	p->state = s[2];
	s += 3;
	for (int field = 4; field <= 22; field++) {
		char *e;
		unsigned long long v = strtoull(s, &e, 10);
		if (e == s)
			return -1;
		if (field == 4)
			p->ppid = (pid_t)v;
		else if (field == 5)
			p->pgid = (pid_t)v;
		else if (field == 6)
			p->sid = (pid_t)v;
		else if (field == 22)
			p->start = v;
		s = e;
	}
	return 0;
}

static int load_procs(struct wipe *w)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	free(w->p);
	w->p = NULL;
	w->np = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *e;
		long pid = strtol(de->d_name, &e, 10);
		struct proc *p;
		if (*e || pid <= 0 || !(p = grow(w->p, w->np, sizeof *p)))
			continue;
		w->p = p;
		if (read_stat((pid_t)pid, &w->p[w->np]) == 0)
			w->np++;
	}
	closedir(d);
	qsort(w->p, (size_t)w->np, sizeof *w->p, cmp_proc);
	/* this process and its ancestors are never killed (e.g. wipe run from inside a rank) */
	for (struct proc *p = find_proc(w, getpid()); p && !p->shield; p = find_proc(w, p->ppid))
		p->shield = 1;
	return 0;
}

static int alive(const struct proc *p)
{
	return p->state != 'Z' && p->state != 'X';
}

/* ====} */

/* {==== choosing what to kill */

static const char *unit_path(struct wipe *w, int unit, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", w->root, w->u[unit].rel);
	return buf;
}

static void mark(struct proc *p, int unit, int why, int rank)
{
	p->mark = unit + 1;
	p->why = why;
	p->rank = rank;
}

/* Check each record against the process table (first round only). */
static void judge_records(struct wipe *w)
{
	char path[8192];

	for (int i = 0; i < w->nr; i++) {
		struct rec *r = &w->r[i];
		struct proc *p = find_proc(w, r->pid);
		const char *file = r->rank < 0 ? "agent" : "procs";
		unit_path(w, r->unit, path, sizeof path);
		if (!r->start) {
			w->rep->untrusted++;
			note(w, BOOT_WIPE_SKIP,
			     "%s/%s: pid %d has no recorded start time; left alone", path, file,
			     (int)r->pid);
		} else if (!p || !alive(p)) {
			w->rep->gone++;
		} else if (p->start != r->start) {
			w->rep->reused++;
			note(w, BOOT_WIPE_SKIP,
			     "%s/%s: pid %d is now another process (started at %llu, recorded "
			     "%llu); "
			     "left alone",
			     path, file, (int)r->pid, p->start, r->start);
		} else if (p->uid != w->uid || p->shield) {
			w->u[r->unit].keep = 1;
			note(w, BOOT_WIPE_FAIL, "%s/%s: pid %d %s; not killed", path, file,
			     (int)r->pid,
			     p->shield ? "is this wipe or runs it" : "belongs to another user");
		} else {
			mark(p, r->unit, r->rank < 0 ? W_AGENT : W_RANK, r->rank);
		}
	}
}

/* The job unit whose directory $LAMKIT_SESSION_DIR in p's environment names, or -1. */
static int env_unit(struct wipe *w, const struct proc *p)
{
	char path[64], *buf;
	int fd, unit = -1;
	size_t n = 0;
	ssize_t k;

	if (!w->env && !(w->env = malloc(MAX_ENVIRON + 1)))
		return -1;
	buf = w->env;
	snprintf(path, sizeof path, "/proc/%d/environ", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (n < MAX_ENVIRON && (k = read(fd, buf + n, MAX_ENVIRON - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	for (size_t i = 0; i < n && unit < 0; i += strlen(buf + i) + 1) {
		struct stat st;
		if (strncmp(buf + i, ENV_KEY, strlen(ENV_KEY)) != 0 ||
		    stat(buf + i + strlen(ENV_KEY), &st) < 0)
			continue;
		for (int u = 0; u < w->nu && unit < 0; u++)
			if (w->u[u].kind == U_JOB && w->u[u].dev == st.st_dev &&
			    w->u[u].ino == st.st_ino)
				unit = u;
	}
	return unit;
}

/* Whether p's group or session was led by a process we killed (or are killing). */
static int led_by_victim(struct wipe *w, const struct proc *p, int *unit)
{
	for (int i = 0; i < w->nv; i++) {
		if ((w->v[i].leader && p->pgid == w->v[i].pid) ||
		    (w->v[i].sleader && p->sid == w->v[i].pid)) {
			*unit = w->v[i].unit;
			return 1;
		}
	}
	return 0;
}

/* Mark what the marked processes left: jobs' processes found by their environment, members
 * of killed leaders' groups and sessions, and children of marked processes. */
static void sweep(struct wipe *w)
{
	for (int i = 0; i < w->np; i++) {
		struct proc *p = &w->p[i];
		int u;
		if (p->mark || p->shield || p->uid != w->uid || !alive(p) || p->pid == 1)
			continue;
		if ((u = env_unit(w, p)) >= 0 || led_by_victim(w, p, &u))
			mark(p, u, W_ENV, -1);
	}
	for (int changed = 1, pass = 0; changed && pass < 64; pass++) {
		changed = 0;
		for (int i = 0; i < w->np; i++) {
			struct proc *p = &w->p[i], *pp = find_proc(w, p->ppid);
			if (p->mark || p->shield || p->uid != w->uid || !alive(p) || !pp ||
			    !pp->mark)
				continue;
			mark(p, pp->mark - 1, W_CHILD, -1);
			changed = 1;
		}
	}
}

static struct victim *find_victim(struct wipe *w, const struct proc *p)
{
	for (int i = 0; i < w->nv; i++)
		if (w->v[i].pid == p->pid && w->v[i].start == p->start)
			return &w->v[i];
	return NULL;
}

static void describe(struct wipe *w, const struct proc *p, char *buf, size_t len)
{
	char path[8192];

	unit_path(w, p->mark - 1, path, sizeof path);
	if (p->why == W_AGENT)
		snprintf(buf, len, "the agent of %s", path);
	else if (p->why == W_RANK)
		snprintf(buf, len, "rank %d of %s", p->rank, path);
	else
		snprintf(buf, len, "left running by %s", path);
}

/* SIGKILL every marked process not killed before (agents first). Returns how many. */
static int kill_marked(struct wipe *w)
{
	int n = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < w->np; i++) {
			struct proc *p = &w->p[i];
			char what[8400];
			if (!p->mark || (pass == 0) != (p->why == W_AGENT) || find_victim(w, p))
				continue;
			struct victim *v = grow(w->v, w->nv, sizeof *v);
			if (!v)
				continue;
			w->v = v;
			w->v[w->nv++] = (struct victim){p->pid, p->start, p->pgid == p->pid,
			                                p->sid == p->pid, p->mark - 1};
			describe(w, p, what, sizeof what);
			if (w->o->dry_run) {
				note(w, BOOT_WIPE_ACTION, "would kill pid %d (%s)", (int)p->pid,
				     what);
			} else if (kill(p->pid, SIGKILL) < 0 && errno != ESRCH) {
				w->nv--;
				w->u[p->mark - 1].keep = 1;
				note(w, BOOT_WIPE_FAIL, "cannot kill pid %d (%s): %s", (int)p->pid,
				     what, strerror(errno));
				continue;
			} else {
				note(w, BOOT_WIPE_ACTION, "killed pid %d (%s)", (int)p->pid, what);
			}
			w->rep->killed++;
			n++;
		}
	}
	return n;
}

/* Wait (bounded) until every victim is gone; survivors keep their unit's records. */
static void wait_victims(struct wipe *w)
{
	int wait_ms = w->o->wait_ms > 0 ? w->o->wait_ms : 2000;
	int64_t end = core_now_ms() + wait_ms;
	int left;

	do {
		left = 0;
		for (int i = 0; i < w->nv; i++) {
			struct proc p;
			if (w->v[i].pid <= 0)
				continue; /* seen gone */
			if (read_stat(w->v[i].pid, &p) == 0 && alive(&p) &&
			    p.start == w->v[i].start)
				left++;
			else
				w->v[i].pid = -w->v[i].pid;
		}
		if (left) {
			struct timespec ts = {0, 20 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	} while (left && core_now_ms() < end);
	for (int i = 0; i < w->nv; i++) {
		if (w->v[i].pid <= 0)
			continue;
		w->u[w->v[i].unit].keep = 1;
		note(w, BOOT_WIPE_FAIL, "pid %d was killed but is still there after %d ms",
		     (int)w->v[i].pid, wait_ms);
	}
}

static void kill_all(struct wipe *w)
{
	for (int round = 0; round < 3; round++) {
		if (load_procs(w) < 0) {
			note(w, BOOT_WIPE_FAIL, "cannot read /proc: %s", strerror(errno));
			return;
		}
		if (round == 0)
			judge_records(w);
		for (int i = 0; i < w->np; i++) { /* earlier victims still dying: find their kids */
			const struct victim *v = find_victim(w, &w->p[i]);
			if (v)
				mark(&w->p[i], v->unit, W_CHILD, -1);
		}
		sweep(w);
		if (kill_marked(w) == 0 || w->o->dry_run)
			break;
	}
	if (!w->o->dry_run)
		wait_victims(w);
}

/* ====} */

/* {==== removing */

/* The part of path after dir + "/", or NULL. */
static const char *under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (!n || strncmp(path, dir, n) != 0 || path[n] != '/' || !path[n + 1])
		return NULL;
	return path + n + 1;
}

static int plain_path(const char *path)
{
	if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../"))
		return 0;
	size_t n = strlen(path);
	return !(n >= 2 && !strcmp(path + n - 2, "/.")) &&
	       !(n >= 3 && !strcmp(path + n - 3, "/.."));
}

/* Unlink a registered path under /dev/shm or the root, through no symlink, if it is ours. */
static void remove_registered(struct wipe *w, const char *path, const char *from)
{
	const char *rest = NULL;
	int fd = -1;

	if (plain_path(path) && (rest = under(path, "/dev/shm")))
		fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else if (plain_path(path) &&
	         ((rest = under(path, w->root)) || (rest = under(path, w->rootreal))))
		fd = fcntl(w->rootfd, F_DUPFD_CLOEXEC, 0);
	if (!rest) {
		w->rep->files_skipped++;
		note(w, BOOT_WIPE_SKIP, "%s: '%s' is not under /dev/shm or %s; left alone", from,
		     path, w->root);
		return;
	}
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s", rest);
	char *c = tmp, *slash;
	while (fd >= 0 && (slash = strchr(c, '/'))) {
		*slash = '\0';
		int nfd = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
		c = slash + 1;
	}
	struct stat st;
	if (fd < 0 || fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT && fd >= 0) {
			close(fd);
			return; /* went away by itself */
		}
		w->rep->files_skipped++;
		note(w, BOOT_WIPE_SKIP, "%s: '%s': %s; left alone", from, path,
		     errno == ENOTDIR || errno == ELOOP ? "through a symlink (not followed)"
		                                        : strerror(errno));
	} else if (S_ISDIR(st.st_mode) || st.st_uid != w->uid) {
		w->rep->files_skipped++;
		note(w, BOOT_WIPE_SKIP, "%s: '%s' is %s; left alone", from, path,
		     S_ISDIR(st.st_mode) ? "a directory" : "not ours");
	} else if (w->o->dry_run) {
		w->rep->files_removed++;
		note(w, BOOT_WIPE_ACTION, "would remove %s", path);
	} else if (unlinkat(fd, c, 0) < 0 && errno != ENOENT) {
		note(w, BOOT_WIPE_FAIL, "cannot remove %s: %s", path, strerror(errno));
	} else {
		w->rep->files_removed++;
		note(w, BOOT_WIPE_ACTION, "removed %s", path);
	}
	if (fd >= 0)
		close(fd);
}

/* A SysV IPC id from res-files ("sysv-shm:ID", "sysv-sem:ID", "sysv-msg:ID"): removed only
 * while this user owns or created it. Counted with the files. */
static void remove_sysv(struct wipe *w, const char *line, const char *from)
{
	char kind[16], *end;
	const char *colon = strchr(line, ':');
	long id = -1;

	if (colon && (size_t)(colon - line) < sizeof kind) {
		memcpy(kind, line, (size_t)(colon - line));
		kind[colon - line] = '\0';
		errno = 0;
		id = strtol(colon + 1, &end, 10);
		if (errno || *end || end == colon + 1 || id > INT_MAX)
			id = -1;
	}
	char code = id >= 0 ? boot_sysv_code(kind) : 0;
	if (!code) {
		w->rep->files_skipped++;
		note(w, BOOT_WIPE_SKIP, "%s: '%.80s' is not a SysV IPC id; ignored", from, line);
	} else if (!boot_sysv_owned(code, (int)id, w->uid)) {
		note(w, BOOT_WIPE_SKIP, "%s: %s id %ld is gone or not ours; left alone", from, kind,
		     id);
	} else if (w->o->dry_run) {
		w->rep->files_removed++;
		note(w, BOOT_WIPE_ACTION, "would remove %s id %ld", kind, id);
	} else if (boot_sysv_remove(code, (int)id, w->uid) < 0) {
		note(w, BOOT_WIPE_FAIL, "cannot remove %s id %ld: %s", kind, id, strerror(errno));
	} else {
		w->rep->files_removed++;
		note(w, BOOT_WIPE_ACTION, "removed %s id %ld", kind, id);
	}
}

/* The "files" record (one absolute path a line) and shm-* registrations (a segment name). */
static void remove_files(struct wipe *w, int unit)
{
	char dir[8192], from[sizeof dir + NAME_MAX + 2];
	int fd = open_unit(w, w->u[unit].rel);

	unit_path(w, unit, dir, sizeof dir);
	if (fd < 0)
		return;
	static const char *const recs[] = {"files", "res-files"}; /* res-: registered via PMI */
	for (int k = 0; k < 2; k++) {
		char *buf = read_at(fd, recs[k], MAX_RECORD), *save = NULL;
		snprintf(from, sizeof from, "%s/%s", dir, recs[k]);
		for (char *l = buf ? strtok_r(buf, "\n", &save) : NULL; l;
		     l = strtok_r(NULL, "\n", &save))
			if (k == 1 && !strncmp(l, "sysv-", 5))
				remove_sysv(w, l, from);
			else
				remove_registered(w, l, from);
		free(buf);
	}
	char *buf;
	DIR *d = opendir_fd(fd);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "shm-", 4) != 0 || !(buf = read_at(fd, de->d_name, 4096)))
			continue;
		char path[300];
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(from, sizeof from, "%s/%s", dir, de->d_name);
		if (buf[0] == '/' && !strchr(buf + 1, '/') && strlen(buf) < 256) {
			snprintf(path, sizeof path, "/dev/shm%s", buf);
			remove_registered(w, path, from);
		} else {
			w->rep->files_skipped++;
			note(w, BOOT_WIPE_SKIP, "%s: '%.80s' is not a segment name; ignored", from,
			     buf);
		}
		free(buf);
	}
	if (d)
		closedir(d);
	close(fd);
}

static void remove_unit(struct wipe *w, int unit)
{
	char path[8192];
	struct unit *u = &w->u[unit];

	unit_path(w, unit, path, sizeof path);
	if (u->kind == U_STRAY) { /* unlinking a symlink never touches what it points to */
		const char *what = u->link ? "a symlink, not followed" : "not a session directory";
		if (w->o->dry_run)
			note(w, BOOT_WIPE_ACTION, "would remove %s (%s)", path, what);
		else if (unlinkat(w->rootfd, u->rel, 0) < 0 && errno != ENOENT)
			note(w, BOOT_WIPE_FAIL, "cannot remove %s: %s", path, strerror(errno));
		else
			note(w, BOOT_WIPE_ACTION, "removed %s (%s)", path, what);
		return;
	}
	remove_files(w, unit);
	if (w->o->dry_run) {
		note(w, BOOT_WIPE_ACTION, "would remove %s", path);
	} else if (core_rm_rf(path) < 0) {
		note(w, BOOT_WIPE_FAIL, "cannot remove %s: %s", path, strerror(errno));
		return;
	} else {
		note(w, BOOT_WIPE_ACTION, "removed %s", path);
	}
	w->rep->dirs_removed++;
}

static void remove_all(struct wipe *w)
{
	char path[8192];

	for (int i = 0; i < w->nu; i++) /* a kept job keeps its agent dir */
		if (w->u[i].kind == U_JOB && w->u[i].keep)
			w->u[w->u[i].parent].keep = 1;
	for (int pass = 0; pass < 2; pass++) { /* job dirs first: their records name files */
		for (int i = 0; i < w->nu; i++) {
			if ((w->u[i].kind == U_JOB) != (pass == 0))
				continue;
			if (w->u[i].keep)
				note(w, BOOT_WIPE_SKIP,
				     "%s: kept: something it names is still running",
				     unit_path(w, i, path, sizeof path));
			else
				remove_unit(w, i);
		}
	}
}

/* ====} */

static int open_root(struct wipe *w, char *err, size_t errlen)
{
	struct stat st;

	if (boot_wipe_root(w->root, sizeof w->root, err, errlen) < 0)
		return -1;
	w->rootfd = open(w->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->rootfd < 0 && errno == ENOENT)
		return 0; /* nothing was ever started here */
	if (w->rootfd < 0)
		return core_errprintf(err, errlen, "cannot open %s: %s", w->root, strerror(errno));
	if (fstat(w->rootfd, &st) < 0 || st.st_uid != w->uid)
		return core_errprintf(err, errlen,
		                      "%s is not a directory owned by uid %u; left alone", w->root,
		                      (unsigned)w->uid);
	if (!realpath(w->root, w->rootreal))
		w->rootreal[0] = '\0';
	return 0;
}

int boot_wipe_node(const struct boot_wipe_opts *o, struct boot_wipe_report *rep, char *err,
                   size_t errlen)
{
	struct wipe w = {.o = o, .rep = rep, .rootfd = -1, .uid = getuid()};
	int rc = 0;

	memset(rep, 0, sizeof *rep);
	if (open_root(&w, err, errlen) < 0)
		rc = -1;
	else if (w.rootfd >= 0 && scan_tree(&w) < 0)
		rc = core_errprintf(err, errlen, "cannot list %s: %s", w.root, strerror(errno));
	if (rc == 0 && w.rootfd >= 0) {
		kill_all(&w);
		remove_all(&w);
	}
	if (w.rootfd >= 0)
		close(w.rootfd);
	free(w.u);
	free(w.r);
	free(w.p);
	free(w.v);
	free(w.env);
	return rc;
}
