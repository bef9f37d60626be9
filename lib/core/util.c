/* lib/core/util.c: error buffers, time, fd helpers, small files, directories, host facts. */
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *core_progname = "lamkit";

int core_errprintf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	errno = saved;
	return -1;
}

int64_t core_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t core_now_ms(void)
{
	return core_now_ns() / 1000000;
}

int core_fd_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl);
}

int core_fd_nonblock_new(int fd)
{
	return fcntl(fd, F_SETFL, O_NONBLOCK);
}

int core_fd_cloexec(int fd, int on)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0)
		return -1;
	fl = on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC);
	return fcntl(fd, F_SETFD, fl);
}

int core_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

char *core_read_file(const char *path, size_t max, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		ssize_t n;
		if (len == cap) {
			char *nb = cap >= max ? NULL : realloc(buf, (cap *= 2) + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				errno = cap >= max ? EFBIG : ENOMEM;
				break;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			buf = NULL;
			break;
		}
		if (n == 0) {
			buf[len] = '\0';
			if (lenp)
				*lenp = len;
			break;
		}
		len += (size_t)n;
	}
	int saved = errno;
	close(fd);
	errno = saved;
	return buf;
}

int core_write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode)
{
	char tmp[4096];
	int fd, saved;

	if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	if (core_write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

int core_mkdir_parent(const char *file, mode_t mode)
{
	char dir[4096];
	const char *slash = strrchr(file, '/');

	if (!slash || slash == file)
		return 0;
	if ((size_t)(slash - file) >= sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - file), file);
	return core_mkdir_p(dir, mode);
}

int core_mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof buf) {
		errno = n ? ENAMETOOLONG : EINVAL;
		return -1;
	}
	/* the common case first: only the last component is missing (or none is) */
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int rm_at(int dirfd, const char *name, int depth)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	if (depth > 32) {
		errno = ELOOP;
		return -1;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rm_at(fd, de->d_name, depth + 1) < 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int core_rm_rf(const char *path)
{
	return rm_at(AT_FDCWD, path, 0);
}

void core_strv_free(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

int core_cpu_count(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

const char *core_hostname(void)
{
	static char name[256];

	if (!name[0] && gethostname(name, sizeof name - 1) < 0)
		strcpy(name, "localhost");
	return name;
}

const struct core_blob *core_blob_find(const struct core_blob *tab, const char *name)
{
	for (; tab && tab->name; tab++)
		if (!strcmp(tab->name, name))
			return tab;
	return NULL;
}

static int log_debug = -1;

int core_log_debug_enabled(void)
{
	if (log_debug < 0) {
		const char *s = getenv("LAMKIT_DEBUG");
		log_debug = s && *s && strcmp(s, "0") != 0;
	}
	return log_debug;
}

void core_vlog(enum core_log_level lvl, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	if (lvl == CORE_LOG_DEBUG && !core_log_debug_enabled())
		return;
	n = snprintf(line, sizeof line, "%s: ", core_progname);
	if (n < 0 || n >= (int)sizeof line)
		return;
	vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	size_t len = strlen(line);
	line[len++] = '\n';
	(void)!write(2, line, len); /* one write: lines from several processes do not mix */
}

void core_log(enum core_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	core_vlog(lvl, fmt, ap);
	va_end(ap);
}
