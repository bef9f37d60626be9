/* lib/transport/tp_bell.c: doorbells, so that an idle process can sleep until a peer writes. */
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tp_internal.h"

/*
 * doc/PROTOCOL-mpi-wire.md section 9. A process that reads only its node's rings sleeps on a
 * futex: its `sleeping` word in the node segment (TP_BELL_FUTEX), which a producer wakes. One
 * that also has sockets to watch (tcp connections, a listener) or pair segments (several
 * words) sleeps in poll() on its sockets and on its bell (TP_BELL_SOCKET): a datagram socket
 * bound to a name in the abstract namespace, "lamkit-bell-<uid>" (the uid of its card, 16 hex
 * digits), private to the network namespace as the shm rings are to a node, and gone with the
 * process. Any byte on it means "look at your rings".
 */

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	/* shared, not FUTEX_PRIVATE_FLAG: the word lies in a segment other processes map */
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

void tp_bell_wake(tp_t *tp, uint32_t *word, uint32_t how, uint64_t uid)
{
	if (how == TP_BELL_FUTEX) {
		tp->nbell++;
		futex(word, FUTEX_WAKE, 1, NULL);
	} else {
		tp_bell_ring(tp, uid);
	}
}

static socklen_t bell_addr(struct sockaddr_un *sa, uint64_t uid)
{
	int n;

	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	/* sun_path[0] stays 0: an abstract name, not a file */
	n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "lamkit-bell-%016" PRIx64, uid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Bind this process's bell (on first use). 0, or -1 (then it never sleeps). */
static int bell_open(tp_t *tp)
{
	struct sockaddr_un sa;
	socklen_t sl;
	int fd;

	if (tp->bell_fd >= 0)
		return 0;
	if (tp->bell_fd == -2)
		return -1; /* tried and failed */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	sl = bell_addr(&sa, tp->uid);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sl) < 0) {
		if (fd >= 0)
			close(fd);
		tp->bell_fd = -2;
		return -1;
	}
	tp->bell_fd = fd;
	return 0;
}

void tp_bell_ring(tp_t *tp, uint64_t uid)
{
	struct sockaddr_un sa;
	socklen_t sl = bell_addr(&sa, uid);
	char b = 1;

	if (tp->bell_fd < 0 && bell_open(tp) < 0)
		return; /* the sleeper wakes at its timeout */
	tp->nbell++;
	/* a full queue (EAGAIN) already holds a wake-up; a sleeper that is gone (ECONNREFUSED)
	 * needs none */
	while (sendto(tp->bell_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, sl) <
	           0 &&
	       errno == EINTR)
		;
}

void tp_bell_close(tp_t *tp)
{
	if (tp->bell_fd >= 0)
		close(tp->bell_fd);
	tp->bell_fd = -1;
	free(tp->sleep_pfd);
	tp->sleep_pfd = NULL;
	tp->sleep_cap = 0;
}

static void sleeping(tp_t *tp, uint32_t v)
{
	tp_shm_sleeping(tp->shm, v);
	tp_shmx_sleeping(tp->shmx, v);
}

/* Whether a ring this process reads holds a record. */
static int rings_ready(const tp_t *tp)
{
	return tp_shm_ready(tp->shm) || tp_shmx_ready(tp->shmx);
}

/* The futex word a sleeper in TP_BELL_FUTEX mode waits on: its slot in the node segment, where
 * producers find it, or (no node segment) one of its own, which only tp_wake_self wakes. */
static uint32_t *futex_word(tp_t *tp)
{
	return tp->shm ? tp_shm_bell_word(tp->shm) : &tp->own_bell;
}

/* Make room for n entries in the poll set. 0, or -1 (ENOMEM). */
static int room(tp_t *tp, int n)
{
	struct pollfd *p;

	if (n <= tp->sleep_cap)
		return 0;
	if (!(p = realloc(tp->sleep_pfd, sizeof *p * (size_t)n)))
		return -1;
	tp->sleep_pfd = p;
	tp->sleep_cap = n;
	return 0;
}

/* The socket mode's poll set: the bell, tcp (both connections of multipath peers) and the udp
 * routes, and the udp timers' bound in tp->sleep_us. 0, or -1 (poll now instead). */
static int socket_set(tp_t *tp)
{
	int n, k;

	if (bell_open(tp) < 0 || room(tp, 1 + tp_tcp_nfds(tp->tcp) + tp_tcp_nfds(tp->tcp2)) < 0)
		return -1;
	tp->sleep_pfd[0] = (struct pollfd){.fd = tp->bell_fd, .events = POLLIN};
	n = 1 + tp_tcp_pollfds(tp->tcp, tp->sleep_pfd + 1, tp->sleep_cap - 1);
	n += tp_tcp_pollfds(tp->tcp2, tp->sleep_pfd + n, tp->sleep_cap - n);
	tp->sleep_us = UINT64_MAX;
	if (tp->udp) {
		k = tp_udp_sleep_fds(tp->udp, tp->sleep_pfd + n, tp->sleep_cap - n, &tp->sleep_us);
		if (k > tp->sleep_cap - n && room(tp, n + k) == 0)
			k = tp_udp_sleep_fds(tp->udp, tp->sleep_pfd + n, tp->sleep_cap - n,
			                     &tp->sleep_us);
		if (k < 0 || k > tp->sleep_cap - n)
			return -1;
		n += k;
	}
	tp->sleep_nfd = n;
	return 0;
}

int tp_sleep_prepare(tp_t *tp, int watched)
{
	/* a job that fits its CPUs writes its node rings without looking at doorbells;
	 * fragments waiting for room need polling, except those waiting in a node ring: its
	 * consumer wakes us when it hands room back (tp_shm_poll) */
	if ((tp->shm && !tp->yield) || tp->selfq.head ||
	    tp_queued(tp) > (tp->shm ? tp_shm_busy(tp->shm) : 0))
		return -1;
	tp->sleep_us = UINT64_MAX;
	/* the multipath failover's timers (ACKs owed, kept fragments) bound the sleep */
	if (tp->mp && tp_mp_sleep_us(tp, &tp->sleep_us) < 0)
		return -1;
	/* the futex when nothing else needs watching: only node rings, or sockets (and udp's
	 * timers) that another thread watches for us (it wakes us with tp_wake_self); pair
	 * segments ring the socket; udp's timers bound a sleep in poll() */
	if (!tp_shmx_mapped(tp->shmx) && (watched || (tp->shm && !tp->udp && !tp->tcp2 &&
	                                              (!tp->tcp || !tp_tcp_nfds(tp->tcp))))) {
		tp->sleep_how = TP_BELL_FUTEX;
		tp->sleep_nfd = 0;
		__atomic_store_n(futex_word(tp), TP_BELL_FUTEX, __ATOMIC_RELAXED);
	} else {
		if (socket_set(tp) < 0)
			return -1;
		tp->sleep_how = TP_BELL_SOCKET;
		sleeping(tp, TP_BELL_SOCKET);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the words, then the rings (tp_bell_check) */
	return rings_ready(tp) || tp_shm_room(tp->shm);
}

int tp_sleep_wait(tp_t *tp, int timeout_ms)
{
	struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
	int r;

	tp->nsleep++;
	if (tp->shm && tp_shm_busy(tp->shm))
		tp->nsleep_room++;
	if (tp->sleep_how == TP_BELL_FUTEX) {
		if (tp->sleep_us < (uint64_t)timeout_ms * 1000u) /* a multipath timer */
			ts = (struct timespec){(time_t)(tp->sleep_us / 1000000u),
			                       (long)(tp->sleep_us % 1000000u) * 1000L};
		/* returns at once (EAGAIN) when a producer cleared the word already */
		r = futex(futex_word(tp), FUTEX_WAIT, TP_BELL_FUTEX, &ts) < 0 && errno == ETIMEDOUT
		        ? 0
		        : 1;
	} else {
		/* a udp timer due sooner bounds the sleep, to the microsecond */
		uint64_t us = (uint64_t)timeout_ms * 1000u < tp->sleep_us
		                  ? (uint64_t)timeout_ms * 1000u
		                  : tp->sleep_us;
		ts = (struct timespec){(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
		r = ppoll(tp->sleep_pfd, (nfds_t)tp->sleep_nfd, &ts, NULL) != 0;
		if (r == 0 && us < (uint64_t)timeout_ms * 1000u)
			r = 1; /* a timer is due: not a sleep that ran to its bound */
	}
	/* a record, or room for a queued fragment, without a wake-up: counted */
	if (r == 0 && (rings_ready(tp) || tp_shm_room(tp->shm))) {
		tp->nsleep_late++;
		r = 1;
	} else if (r == 0) {
		tp->nsleep_timeout++;
	}
	return r;
}

/* futex_waitv (Linux 5.16): wait on the bell word and the caller's word at once. */
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
struct waitv {
	uint64_t val, uaddr;
	uint32_t flags, reserved;
};
#define WAITV_U32 2 /* FUTEX_32; shared: no FUTEX_PRIVATE_FLAG */
static int no_waitv;

int tp_sleep_wait_word(tp_t *tp, const uint32_t *word, uint32_t val, int timeout_ms)
{
	struct timespec ts;
	long r;

	if (tp->sleep_how == TP_BELL_FUTEX && !no_waitv) {
		struct waitv w[2] = {
		    {TP_BELL_FUTEX, (uint64_t)(uintptr_t)futex_word(tp), WAITV_U32, 0},
		    {val, (uint64_t)(uintptr_t)word, WAITV_U32, 0}};
		uint64_t end = tp_now_ns() + (uint64_t)timeout_ms * 1000000u;
		ts.tv_sec = (time_t)(end / 1000000000u);
		ts.tv_nsec = (long)(end % 1000000000u);
		tp->nsleep++;
		r = syscall(SYS_futex_waitv, w, 2, 0, &ts, CLOCK_MONOTONIC);
		if (r >= 0 || errno != ENOSYS)
			return !(r < 0 && errno == ETIMEDOUT);
		no_waitv = 1;
	}
	/* one thing at a time: the word, looking at the rest every millisecond */
	ts = (struct timespec){0, 1000000L};
	tp->nsleep++;
	if (tp->sleep_how == TP_BELL_FUTEX)
		return !(futex((uint32_t *)word, FUTEX_WAIT, val, &ts) < 0 && errno == ETIMEDOUT);
	return poll(tp->sleep_pfd, (nfds_t)tp->sleep_nfd, 1) != 0;
}

void tp_futex_wake(uint32_t *word)
{
	futex(word, FUTEX_WAKE, INT32_MAX, NULL);
}

void tp_sleep_done(tp_t *tp)
{
	char buf[64];

	if (tp->sleep_how == TP_BELL_FUTEX)
		__atomic_store_n(futex_word(tp), 0, __ATOMIC_RELAXED);
	else if (tp->sleep_how == TP_BELL_SOCKET)
		sleeping(tp, 0);
	if (tp->sleep_how == TP_BELL_SOCKET)
		while (recv(tp->bell_fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
			;
	tp->sleep_how = 0;
}

void tp_wake_self(tp_t *tp)
{
	uint32_t *w;

	if (tp->sleep_how == TP_BELL_FUTEX) {
		w = futex_word(tp);
		if (__atomic_exchange_n(w, 0, __ATOMIC_ACQ_REL))
			futex(w, FUTEX_WAKE, 1, NULL);
	} else if (tp->sleep_how == TP_BELL_SOCKET) {
		tp_bell_ring(tp, tp->uid);
	}
}

int tp_sleep(tp_t *tp, int timeout_ms)
{
	int r = tp_sleep_prepare(tp, 0);

	if (r < 0)
		return -1;
	if (r == 0)
		r = tp_sleep_wait(tp, timeout_ms);
	tp_sleep_done(tp);
	return r;
}

int tp_wait_fds(tp_t *tp, struct pollfd *pfd, int max, int *timeout_ms)
{
	uint64_t us = UINT64_MAX;
	int n, k;

	if (tp->mp && tp_mp_sleep_us(tp, &us) < 0)
		return 0;
	n = tp_tcp_nfds(tp->tcp) + tp_tcp_nfds(tp->tcp2);
	if (n > max)
		return n + (tp->udp ? 64 : 0);
	n = tp_tcp_pollfds(tp->tcp, pfd, max);
	n += tp_tcp_pollfds(tp->tcp2, pfd + n, max - n);
	if (tp->udp) {
		if ((k = tp_udp_sleep_fds(tp->udp, pfd + n, max - n, &us)) < 0)
			return 0; /* poll it now */
		if (k > max - n)
			return n + k;
		n += k;
	}
	if (us < (uint64_t)*timeout_ms * 1000u)
		*timeout_ms = (int)((us + 999) / 1000);
	return n;
}
