/* bench/sockfloor.c: the floor of any MPI's small-message latency over tcp: a bare ping-pong
 * between two processes over one TCP connection (TCP_NODELAY, both sides spinning on
 * non-blocking recv, as the MPIs' progress loops do), no MPI, no framing.
 *
 * usage: sockfloor pair [-s scale]           both processes here, over loopback
 *        sockfloor serve PORT                 echo side: accept one connection, echo until done
 *        sockfloor ping HOST PORT [-s scale]  timing side: connect, time, print
 * The timing side prints '#' comment lines and one row per size (0, 1, 2, 4 ... 128 bytes):
 *   "size lat_us"  lat = half round trip in microseconds, the median over batches of 64 round
 * trips (as tests/mpi/pingpong.c measures MPI latency); "0" carries 1 byte, the least a TCP
 * ping-pong can move (an MPI's 0-byte message still carries its header). Each phase starts
 * with an 8-byte {size, batches} from the timing side; size 0xffffffff ends. Every wait is
 * bounded: 10 s without progress, or 120 s in all, ends the program with status 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXSIZE 128
#define STALL_S 10.0

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "sockfloor: %s: %s\n", what, errno ? strerror(errno) : "stalled");
	exit(1);
}

/* exactly n bytes, spinning on a non-blocking socket; dies after STALL_S without progress */
static void get(int fd, void *buf, size_t n)
{
	size_t got = 0;
	unsigned spins = 0;
	double since = 0;

	while (got < n) {
		ssize_t r = recv(fd, (char *)buf + got, n - got, MSG_DONTWAIT);
		if (r > 0) {
			got += (size_t)r;
			spins = 0;
			since = 0; /* the stall clock restarts */
			continue;
		}
		if (r == 0) {
			errno = ECONNRESET;
			die("recv");
		}
		if (errno != EAGAIN && errno != EINTR)
			die("recv");
		if ((++spins & 0xfff) == 0) {
			if (!since)
				since = now();
			else if (now() - since > STALL_S) {
				errno = 0;
				die("recv");
			}
		}
	}
}

static void put(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = send(fd, (const char *)buf + done, n - done, MSG_NOSIGNAL);
		if (w > 0)
			done += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EINTR)
			die("send");
	}
}

static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void echo(int fd)
{
	char buf[MAXSIZE];
	uint32_t ph[2];

	for (;;) {
		get(fd, ph, sizeof ph);
		if (ph[0] == 0xffffffffu)
			return;
		if (ph[0] > MAXSIZE)
			die("bad phase");
		/* the warm-up batches and the timed ones, 64 round trips each */
		for (uint64_t i = 0; i < (uint64_t)(ph[1] + ph[1] / 10 + 1) * 64; i++) {
			get(fd, buf, ph[0]);
			put(fd, buf, ph[0]);
		}
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void timing(int fd, double scale)
{
	char buf[MAXSIZE] = {0};
	uint32_t batches = (uint32_t)(2000 * scale) < 20 ? 20 : (uint32_t)(2000 * scale);
	double *t = calloc(batches, sizeof *t);

	if (!t)
		die("calloc");
	printf(
	    "# sockfloor: bare tcp ping-pong, busy-polling recv, TCP_NODELAY; %u batches of 64\n",
	    batches);
	printf("# size lat_us\n");
	for (uint32_t size = 0; size <= MAXSIZE; size = size ? size * 2 : 1) {
		uint32_t ph[2] = {size ? size : 1, batches};
		put(fd, ph, sizeof ph);
		for (long b = -(long)(batches / 10) - 1; b < (long)batches; b++) {
			double t0 = now();
			for (int i = 0; i < 64; i++) {
				put(fd, buf, ph[0]);
				get(fd, buf, ph[0]);
			}
			if (b >= 0)
				t[b] = now() - t0;
		}
		qsort(t, batches, sizeof *t, cmp);
		double m = batches % 2 ? t[batches / 2] : (t[batches / 2 - 1] + t[batches / 2]) / 2;
		printf("%u %.3f\n", size, m * 1e6 / 128.0);
		fflush(stdout);
	}
	uint32_t end[2] = {0xffffffffu, 0};
	put(fd, end, sizeof end);
	free(t);
}

static double scale_arg(int argc, char **argv, int i)
{
	if (i + 1 < argc && !strcmp(argv[i], "-s"))
		return atof(argv[i + 1]) > 0 ? atof(argv[i + 1]) : 1.0;
	return 1.0;
}

int main(int argc, char **argv)
{
	alarm(120);
	if (argc >= 2 && !strcmp(argv[1], "pair")) {
		int sv[2];
		struct sockaddr_in a = {.sin_family = AF_INET,
		                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t al = sizeof a;
		int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0 ||
		    getsockname(ls, (struct sockaddr *)&a, &al) < 0)
			die("listen");
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			sv[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (sv[1] < 0 || connect(sv[1], (struct sockaddr *)&a, sizeof a) < 0)
				die("connect");
			nodelay(sv[1]);
			echo(sv[1]);
			_exit(0);
		}
		sv[0] = accept(ls, NULL, NULL);
		if (sv[0] < 0)
			die("accept");
		nodelay(sv[0]);
		timing(sv[0], scale_arg(argc, argv, 2));
		int st = 1;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
	}
	if (argc == 3 && !strcmp(argv[1], "serve")) {
		struct sockaddr_in a = {.sin_family = AF_INET,
		                        .sin_addr.s_addr = htonl(INADDR_ANY)};
		int one = 1, ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		a.sin_port = htons((uint16_t)atoi(argv[2]));
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0)
			die("listen");
		int fd = accept(ls, NULL, NULL);
		if (fd < 0)
			die("accept");
		nodelay(fd);
		echo(fd);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "ping")) {
		struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
		if (getaddrinfo(argv[2], argv[3], &hints, &ai) != 0) {
			fprintf(stderr, "sockfloor: cannot resolve host %s\n", argv[2]);
			return 1;
		}
		int fd = -1;
		/* the serving side may still be starting: retry for up to 10 s */
		for (int i = 0; i < 200; i++) {
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
				break;
			if (fd >= 0)
				close(fd);
			fd = -1;
			usleep(50000);
		}
		freeaddrinfo(ai);
		if (fd < 0) {
			fprintf(
			    stderr,
			    "sockfloor: cannot connect to %s port %s for 10 s: %s (is `sockfloor "
			    "serve %s` running there?)\n",
			    argv[2], argv[3], strerror(errno), argv[3]);
			return 1;
		}
		nodelay(fd);
		timing(fd, scale_arg(argc, argv, 4));
		return 0;
	}
	fprintf(stderr,
	        "usage: sockfloor pair [-s scale] | serve PORT | ping HOST PORT [-s scale]\n");
	return 100;
}
