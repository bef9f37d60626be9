/* lib/core/ev.h: a small epoll event loop with fd watchers, one-shot timers and signals. */
#ifndef LAMKIT_CORE_EV_H
#define LAMKIT_CORE_EV_H

#include <stdint.h>

typedef struct core_ev core_ev_t;

#define CORE_EV_READ  1u
#define CORE_EV_WRITE 2u

/* Called with the events that fired (CORE_EV_READ/WRITE; errors and hangups count as READ). */
typedef void (*core_ev_fd_f)(core_ev_t *ev, int fd, unsigned events, void *arg);
typedef void (*core_ev_timer_f)(core_ev_t *ev, void *arg);
typedef void (*core_ev_signal_f)(core_ev_t *ev, int signo, void *arg);

/* Create a loop. NULL with errno on failure. */
core_ev_t *core_ev_create(void);
/* Destroy the loop (does not close watched fds; restores blocked signals). Accepts NULL. */
void core_ev_destroy(core_ev_t *ev);

/* Watch fd for `events` (0 = registered but idle). Re-adding an fd replaces its watcher.
 * 0, or -1 with errno. */
int core_ev_fd(core_ev_t *ev, int fd, unsigned events, core_ev_fd_f cb, void *arg);
/* Change the events watched on fd. 0, or -1 with errno. */
int core_ev_fd_mod(core_ev_t *ev, int fd, unsigned events);
/* Stop watching fd (before closing it). Accepts unknown fds. */
void core_ev_fd_del(core_ev_t *ev, int fd);

/* A one-shot timer after `ms` milliseconds. Returns an id > 0, or -1 with errno. */
int64_t core_ev_timer(core_ev_t *ev, int64_t ms, core_ev_timer_f cb, void *arg);
/* Cancel a timer (unknown or fired ids are ignored). */
void core_ev_timer_cancel(core_ev_t *ev, int64_t id);

/* Deliver `signo` through the loop (blocks it, uses signalfd). 0, or -1 with errno. */
int core_ev_signal(core_ev_t *ev, int signo, core_ev_signal_f cb, void *arg);

/* Run until core_ev_stop() or nothing is left to wait for. 0, or -1 with errno. */
int core_ev_run(core_ev_t *ev);
void core_ev_stop(core_ev_t *ev);

#endif
