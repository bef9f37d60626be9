/* lib/core/core.h: small shared pieces: errors into caller buffers, time, fds, blobs, logging. */
#ifndef LAMKIT_CORE_H
#define LAMKIT_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAMKIT_VERSION "0.1.0"

/* Exit codes of commands (s6 habit): usage error, system-call failure. */
#define CORE_EXIT_USAGE  100
#define CORE_EXIT_SYSTEM 111

/* Format a message into a caller-owned buffer; always returns -1 (for `return errprintf(...)`). */
int core_errprintf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Monotonic time in milliseconds / nanoseconds. */
int64_t core_now_ms(void);
int64_t core_now_ns(void);

/* Set O_NONBLOCK / FD_CLOEXEC on fd. 0, or -1 with errno. */
int core_fd_nonblock(int fd, int on);
/* O_NONBLOCK on an fd this process just made (pipe, socketpair): one fcntl, no F_GETFL, as
 * such an fd has no other status flag to keep. 0, or -1 with errno. */
int core_fd_nonblock_new(int fd);
int core_fd_cloexec(int fd, int on);
/* write() all of buf (retrying EINTR; blocking fds). 0, or -1 with errno. */
int core_write_all(int fd, const void *buf, size_t len);
/* Read a whole small file (≤ max bytes) into a malloc'd NUL-terminated buffer. NULL+errno. */
char *core_read_file(const char *path, size_t max, size_t *lenp);
/* Write a file atomically (temp + rename) with mode. 0, or -1 with errno. */
int core_write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode);
/* mkdir -p with mode. 0, or -1 with errno. */
int core_mkdir_p(const char *path, mode_t mode);
/* mkdir -p of the directory part of a file path (nothing for a bare name). 0, or -1. */
int core_mkdir_parent(const char *file, mode_t mode);
/* rm -r of a directory tree we own (does not follow symlinks). 0, or -1 with errno. */
int core_rm_rf(const char *path);

/* Free n strings and the array holding them. Accepts NULL. */
void core_strv_free(char **v, int n);

/* Number of CPUs this process may run on (sched_getaffinity), at least 1. */
int core_cpu_count(void);
/* This host's name (short, as gethostname gives it) into a static buffer. */
const char *core_hostname(void);
/* Program name used in messages ("lamkit", "mpiexec", ...). */
extern const char *core_progname;

/* Embedded files (Lua scripts, libpmi.so) compiled in by //build:bin2c. */
struct core_blob {
	const char *name; /* e.g. "lua/boot/local.lua" */
	const unsigned char *data;
	size_t len;
};
extern const struct core_blob core_lua_blobs[]; /* NULL-name terminated */
/* Find a blob by name in a NULL-terminated table, or NULL. */
const struct core_blob *core_blob_find(const struct core_blob *tab, const char *name);

/* Logging for daemons and commands: "<progname>: message" on stderr, one line.
 * Level filtering via LAMKIT_DEBUG (set → debug lines too). */
enum core_log_level { CORE_LOG_DEBUG, CORE_LOG_INFO, CORE_LOG_WARN, CORE_LOG_ERROR };
void core_log(enum core_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void core_vlog(enum core_log_level lvl, const char *fmt, va_list ap);
int core_log_debug_enabled(void);

#endif
