/* lib/core/ev.c: epoll event loop: fd watchers in a table by fd, timers in a small binary heap,
 * signals through one signalfd. Single-threaded by design. */
#include "ev.h"
#include "core.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct watcher {
	core_ev_fd_f cb;
	void *arg;
	unsigned events;
	int active;   /* a watcher exists */
	int in_epoll; /* registered with epoll (idle watchers are not, so hangups cannot spin) */
};

struct timer {
	int64_t due, id;
	core_ev_timer_f cb;
	void *arg;
};

struct core_ev {
	int epfd, sigfd, stop;
	struct watcher *w;
	int nw;
	struct timer *t;
	int nt, tcap;
	int64_t next_id;
	sigset_t sigs, oldmask;
	core_ev_signal_f sigcb[65];
	void *sigarg[65];
};

core_ev_t *core_ev_create(void)
{
	core_ev_t *ev = calloc(1, sizeof *ev);

	if (!ev)
		return NULL;
	ev->epfd = epoll_create1(EPOLL_CLOEXEC);
	ev->sigfd = -1;
	if (ev->epfd < 0) {
		free(ev);
		return NULL;
	}
	sigemptyset(&ev->sigs);
	sigprocmask(SIG_BLOCK, NULL, &ev->oldmask);
	return ev;
}

void core_ev_destroy(core_ev_t *ev)
{
	int saved = errno;

	if (!ev)
		return;
	if (ev->sigfd >= 0) {
		close(ev->sigfd);
		sigprocmask(SIG_SETMASK, &ev->oldmask, NULL);
	}
	close(ev->epfd);
	free(ev->w);
	free(ev->t);
	free(ev);
	errno = saved;
}

static uint32_t to_epoll(unsigned events)
{
	return (events & CORE_EV_READ ? EPOLLIN : 0) | (events & CORE_EV_WRITE ? EPOLLOUT : 0);
}

int core_ev_fd(core_ev_t *ev, int fd, unsigned events, core_ev_fd_f cb, void *arg)
{
	struct epoll_event ee = {.events = to_epoll(events), .data.fd = fd};

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (fd >= ev->nw) {
		int n = fd + 64;
		struct watcher *w = realloc(ev->w, (size_t)n * sizeof *w);
		if (!w)
			return -1;
		memset(w + ev->nw, 0, (size_t)(n - ev->nw) * sizeof *w);
		ev->w = w;
		ev->nw = n;
	}
	int in = ev->w[fd].active && ev->w[fd].in_epoll;
	if (events && epoll_ctl(ev->epfd, in ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ee) < 0)
		return -1;
	if (!events && in)
		epoll_ctl(ev->epfd, EPOLL_CTL_DEL, fd, NULL);
	ev->w[fd] = (struct watcher){
	    .cb = cb, .arg = arg, .events = events, .active = 1, .in_epoll = events != 0};
	return 0;
}

int core_ev_fd_mod(core_ev_t *ev, int fd, unsigned events)
{
	struct epoll_event ee = {.events = to_epoll(events), .data.fd = fd};

	if (fd < 0 || fd >= ev->nw || !ev->w[fd].active) {
		errno = ENOENT;
		return -1;
	}
	struct watcher *w = &ev->w[fd];
	if (w->events == events)
		return 0;
	if (!events) {
		epoll_ctl(ev->epfd, EPOLL_CTL_DEL, fd, NULL);
	} else if (epoll_ctl(ev->epfd, w->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ee) < 0) {
		return -1;
	}
	w->in_epoll = events != 0;
	w->events = events;
	return 0;
}

void core_ev_fd_del(core_ev_t *ev, int fd)
{
	if (fd < 0 || fd >= ev->nw || !ev->w[fd].active)
		return;
	if (ev->w[fd].in_epoll)
		epoll_ctl(ev->epfd, EPOLL_CTL_DEL, fd, NULL);
	ev->w[fd].active = ev->w[fd].in_epoll = 0;
}

/* {==== timers: a binary min-heap on (due, id) */

static int t_less(const struct timer *a, const struct timer *b)
{
	return a->due < b->due || (a->due == b->due && a->id < b->id);
}

static void t_swap(struct timer *a, struct timer *b)
{
	struct timer x = *a;
	*a = *b;
	*b = x;
}

static void t_up(core_ev_t *ev, int i)
{
	while (i > 0 && t_less(&ev->t[i], &ev->t[(i - 1) / 2])) {
		t_swap(&ev->t[i], &ev->t[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static void t_down(core_ev_t *ev, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < ev->nt && t_less(&ev->t[l], &ev->t[m]))
			m = l;
		if (r < ev->nt && t_less(&ev->t[r], &ev->t[m]))
			m = r;
		if (m == i)
			return;
		t_swap(&ev->t[i], &ev->t[m]);
		i = m;
	}
}

static void t_remove_at(core_ev_t *ev, int i)
{
	ev->t[i] = ev->t[--ev->nt];
	if (i < ev->nt) {
		t_up(ev, i);
		t_down(ev, i);
	}
}

int64_t core_ev_timer(core_ev_t *ev, int64_t ms, core_ev_timer_f cb, void *arg)
{
	if (ev->nt == ev->tcap) {
		int n = ev->tcap ? ev->tcap * 2 : 16;
		struct timer *t = realloc(ev->t, (size_t)n * sizeof *t);
		if (!t)
			return -1;
		ev->t = t;
		ev->tcap = n;
	}
	ev->t[ev->nt] =
	    (struct timer){.due = core_now_ms() + ms, .id = ++ev->next_id, .cb = cb, .arg = arg};
	t_up(ev, ev->nt++);
	return ev->next_id;
}

void core_ev_timer_cancel(core_ev_t *ev, int64_t id)
{
	for (int i = 0; i < ev->nt; i++) {
		if (ev->t[i].id == id) {
			t_remove_at(ev, i);
			return;
		}
	}
}

/* ====} */

static void on_signalfd(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof si) == (ssize_t)sizeof si) {
		int s = (int)si.ssi_signo;
		if (s > 0 && s < 65 && ev->sigcb[s])
			ev->sigcb[s](ev, s, ev->sigarg[s]);
	}
}

int core_ev_signal(core_ev_t *ev, int signo, core_ev_signal_f cb, void *arg)
{
	if (signo <= 0 || signo >= 65) {
		errno = EINVAL;
		return -1;
	}
	sigaddset(&ev->sigs, signo);
	if (sigprocmask(SIG_BLOCK, &ev->sigs, NULL) < 0)
		return -1;
	int fd = signalfd(ev->sigfd, &ev->sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ev->sigfd < 0 && core_ev_fd(ev, fd, CORE_EV_READ, on_signalfd, NULL) < 0) {
		close(fd);
		return -1;
	}
	ev->sigfd = fd;
	ev->sigcb[signo] = cb;
	ev->sigarg[signo] = arg;
	return 0;
}

void core_ev_stop(core_ev_t *ev)
{
	ev->stop = 1;
}

static void run_timers(core_ev_t *ev)
{
	int64_t now = core_now_ms();

	while (ev->nt > 0 && ev->t[0].due <= now && !ev->stop) {
		struct timer t = ev->t[0];
		t_remove_at(ev, 0);
		t.cb(ev, t.arg);
	}
}

int core_ev_run(core_ev_t *ev)
{
	struct epoll_event evs[64];

	ev->stop = 0;
	while (!ev->stop) {
		int timeout = -1;
		if (ev->nt > 0) {
			int64_t d = ev->t[0].due - core_now_ms();
			timeout = d < 0 ? 0 : (d > 60000 ? 60000 : (int)d);
		}
		int n = epoll_wait(ev->epfd, evs, 64, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < n && !ev->stop; i++) {
			int fd = evs[i].data.fd;
			if (fd >= ev->nw || !ev->w[fd].active)
				continue;
			unsigned e = 0;
			if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
				e |= CORE_EV_READ;
			if (evs[i].events & (EPOLLOUT | EPOLLERR))
				e |= CORE_EV_WRITE;
			if (evs[i].events & (EPOLLERR | EPOLLHUP))
				e = ev->w[fd].events; /* let the callback find the error by I/O */
			e &= ev->w[fd].events;
			if (e)
				ev->w[fd].cb(ev, fd, e, ev->w[fd].arg);
		}
		run_timers(ev);
	}
	return 0;
}
