/* lib/boot/session.h: node-local session directories and the records `wipe` relies on.
 * Layout: boot_session_base(), then lamkit-<uid>/<agent>/job-<id>/, with a
 * "procs" file per job ("pid starttime rank" lines) and a "files" file of registered paths. */
#ifndef LAMKIT_BOOT_SESSION_H
#define LAMKIT_BOOT_SESSION_H

#include <stddef.h>
#include <sys/types.h>

/* Where session roots live: $LAMKIT_TMPDIR, else /dev/shm when it is a writable tmpfs, else
 * $TMPDIR, else /tmp. */
const char *boot_session_base(void);
/* The per-user root <base>/lamkit-<uid> (created 0700, ownership checked). 0, or -1 with err. */
int boot_session_root(char *buf, size_t len, char *err, size_t errlen);
/* Create dir = root/<name> (0700). 0, or -1 with err. */
int boot_session_mkdir(const char *root, const char *name, char *dir, size_t len, char *err,
                       size_t errlen);
/* Append already formatted "pid starttime rank" lines to dir/procs in one write. */
int boot_session_write_procs(const char *dir, const char *lines, size_t len);
/* A process's start time in clock ticks since boot (from /proc/PID/stat), or 0. */
unsigned long long boot_proc_starttime(pid_t pid);

/* The per-user cache of agent binaries boot shipped to this node (lua/boot/fetch.lua writes
 * $XDG_CACHE_HOME, else $HOME/.cache, + /lamkit/bin/<sha256>/lamkit): 0, or -1 when neither
 * variable is set. */
int boot_ship_cache(char *buf, size_t len);
/* Remove that cache (`wipe --purge`): 1 removed, 0 there was none, -1 with errno. */
int boot_ship_cache_purge(void);

/* job_res.c: */
/* SysV IPC kinds ("sysv-shm", "sysv-sem", "sysv-msg") as one-letter codes ('M', 'S', 'Q', or
 * 0) and back; an id uid owns (or created); its removal (0, or -1 when not uid's). */
char boot_sysv_code(const char *kind);
const char *boot_sysv_kind(char code);
int boot_sysv_owned(char code, int id, uid_t uid);
int boot_sysv_remove(char code, int id, uid_t uid);

#endif
