/* lib/boot/session.c: session directories and process records (for cleanup and wipe). */
#include "session.h"
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

const char *boot_session_base(void)
{
	const char *base = getenv("LAMKIT_TMPDIR");
	struct statfs fs;

	if (base && *base)
		return base;
	/* jobs keep shared-memory files here (Open MPI's vader segments): in RAM, not on a disk
	 * where every store to the mapping dirties a page for writeback */
	if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	base = getenv("TMPDIR");
	return base && *base ? base : "/tmp";
}

int boot_session_root(char *buf, size_t len, char *err, size_t errlen)
{
	const char *base = boot_session_base();
	struct stat st;

	if (snprintf(buf, len, "%s/lamkit-%u", base, (unsigned)getuid()) >= (int)len)
		return core_errprintf(err, errlen, "session directory path too long under %s",
		                      base);
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return core_errprintf(err, errlen, "cannot create %s: %s", buf, strerror(errno));
	if (lstat(buf, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return core_errprintf(err, errlen,
		                      "%s is not a directory owned by uid %u; remove it or set "
		                      "LAMKIT_TMPDIR",
		                      buf, (unsigned)getuid());
	return 0;
}

int boot_session_mkdir(const char *root, const char *name, char *dir, size_t len, char *err,
                       size_t errlen)
{
	if (snprintf(dir, len, "%s/%s", root, name) >= (int)len)
		return core_errprintf(err, errlen, "session path too long: %s/%s", root, name);
	if (core_mkdir_p(dir, 0700) < 0)
		return core_errprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
	return 0;
}

unsigned long long boot_proc_starttime(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long t = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may contain spaces and parentheses */
	if (!p)
		return 0;
	/* each space after ")" starts the next field: " S" is field 3; starttime is field 22 */
	int field = 2;
	for (p++; *p; p++) {
		if (*p == ' ' && ++field == 22) {
			t = strtoull(p + 1, NULL, 10);
			break;
		}
	}
	return t;
}

int boot_session_write_procs(const char *dir, const char *lines, size_t len)
{
	char path[4200];

	snprintf(path, sizeof path, "%s/procs", dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = core_write_all(fd, lines, len);
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

int boot_ship_cache(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && *xdg)
		n = snprintf(buf, len, "%s/lamkit/bin", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/lamkit/bin", home);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

int boot_ship_cache_purge(void)
{
	char dir[4096];
	struct stat st;

	if (boot_ship_cache(dir, sizeof dir) < 0 || lstat(dir, &st) < 0)
		return 0;
	return core_rm_rf(dir) < 0 ? -1 : 1;
}
