/* lib/transport/tp_bell.c: doorbells, so that an idle process can sleep until a peer writes. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tp_internal.h"

/*
 * doc/PROTOCOL-mpi-wire.md section 9. A process sleeps in poll() on its tcp sockets and on its
 * bell: a datagram socket bound to a name in the abstract namespace, "lamkit-bell-<uid>" (the
 * uid of its card, 16 hex digits), private to the network namespace as the shm rings are to a
 * node, and gone with the process. Any byte on it means "look at your rings".
 */

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

int tp_sleep(tp_t *tp, int timeout_ms)
{
	int need, n, r;
	char buf[64];

	/* udp and multipath keep timers of their own; a job that fits its CPUs writes its node
	 * rings without looking at doorbells; fragments waiting for room need polling */
	if (tp->udp || tp->mp || tp->tcp2 || (tp->shm && !tp->yield) || tp->selfq.head ||
	    tp_queued(tp) || bell_open(tp) < 0)
		return -1;
	need = 1 + tp_tcp_nfds(tp->tcp);
	if (need > tp->sleep_cap) {
		struct pollfd *p = realloc(tp->sleep_pfd, sizeof *p * (size_t)need);
		if (!p)
			return -1;
		tp->sleep_pfd = p;
		tp->sleep_cap = need;
	}
	sleeping(tp, 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the words, then the rings (tp_bell_check) */
	if (tp_shm_ready(tp->shm) || tp_shmx_ready(tp->shmx)) {
		r = 1;
	} else {
		tp->sleep_pfd[0] = (struct pollfd){.fd = tp->bell_fd, .events = POLLIN};
		n = 1 + tp_tcp_pollfds(tp->tcp, tp->sleep_pfd + 1, tp->sleep_cap - 1);
		r = poll(tp->sleep_pfd, (nfds_t)n, timeout_ms);
		tp->nsleep++;
		if (r == 0)
			tp->nsleep_timeout++;
	}
	sleeping(tp, 0);
	while (recv(tp->bell_fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
		;
	return r != 0;
}
