/* lib/boot/launch.h: start an agent's launch process (ssh, srun, or the agent itself) with the
 * universe key on its stdin and its output in a log file; learn how it ended. Used by boot on the
 * origin and by agents that start their children in a launch tree. */
#ifndef LAMKIT_BOOT_LAUNCH_H
#define LAMKIT_BOOT_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

typedef struct boot_launch boot_launch_t;

/* Start argv (argv[0] looked up in PATH) in a session of its own, stdin = a pipe that gets
 * stdin_text and is then closed, stdout and stderr appended to logpath (created 0600). The
 * process is not killed when we exit (an srun launch lives as long as its agent).
 * NULL with err ("cannot run ssh: No such file or directory"). */
boot_launch_t *boot_launch_start(char *const argv[], const char *stdin_text, const char *logpath,
                                 char *err, size_t errlen);
/* The same, and after stdin_text the contents of the file payload (the agent binary boot ships
 * to a node): written by a short-lived child of ours, which the caller's SIGCHLD loop reaps
 * (boot_launch_reaped ignores it). NULL with err when payload cannot be opened. */
boot_launch_t *boot_launch_start_ship(char *const argv[], const char *stdin_text,
                                      const char *payload, const char *logpath, char *err,
                                      size_t errlen);
/* Our SIGCHLD loop reaped pid: 1 if it was this launch (its status is then kept), else 0. */
int boot_launch_reaped(boot_launch_t *l, pid_t pid, int status);
/* 1 once reaped; *status gets the wait status. */
int boot_launch_done(const boot_launch_t *l, int *status);
/* The last non-empty line of its log (stdout+stderr) into buf, "" if none. */
void boot_launch_last_line(const boot_launch_t *l, char *buf, size_t len);
pid_t boot_launch_pid(const boot_launch_t *l);
/* SIGKILL its process group (if not reaped yet). */
void boot_launch_kill(boot_launch_t *l);
/* Free; removes the log file when remove_log. Does not kill or wait. */
void boot_launch_free(boot_launch_t *l, int remove_log);

#endif
