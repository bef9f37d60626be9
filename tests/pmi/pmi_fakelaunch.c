/* tests/pmi/pmi_fakelaunch.c: test launcher serving our PMI engine to N local children. */
#include "../../lib/pmi/pmi_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXN 64

enum mode { M_FD, M_TCP_ID, M_TCP_RANK };

static struct {
	pmi_server_t *s;
	int n, nlive, status, lfd;
	pid_t pid[MAXN];
	int fd[2 * MAXN]; /* server-side sockets, -1 when closed */
	pmi_conn_t *conn[2 * MAXN];
	int nconn;
} L = {.lfd = -1};

static void kill_all(void)
{
	for (int i = 0; i < L.n; i++) {
		if (L.pid[i] > 0)
			kill(L.pid[i], SIGKILL);
	}
}

static void die(int code, const char *msg)
{
	fprintf(stderr, "pmi_fakelaunch: %s\n", msg);
	kill_all();
	while (wait(NULL) > 0)
		;
	exit(code);
}

static void o_send(void *arg, pmi_conn_t *c, const char *line, size_t len)
{
	int fd = *(int *)pmi_conn_data(c);

	(void)arg;
	while (len > 0) {
		ssize_t w = write(fd, line, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		line += w;
		len -= (size_t)w;
	}
}

static void o_fence(void *arg, const char *delta, size_t len)
{
	(void)arg;
	(void)delta;
	(void)len;
	pmi_server_fence_done(L.s, NULL, 0); /* one agent: every put is already here */
}

static void o_abort(void *arg, pmi_conn_t *c, int code, const char *msg)
{
	char m[1200];

	(void)arg;
	snprintf(m, sizeof(m), "rank %d aborted with %d: %s", pmi_conn_rank(c), code,
	         msg ? msg : "");
	die(code, m);
}

static void o_error(void *arg, pmi_conn_t *c, const char *msg)
{
	(void)arg;
	(void)c;
	die(1, msg);
}

static const struct pmi_server_ops ops = {o_send, o_fence, o_abort, NULL, o_error, NULL};

static void add_conn(int fd, int rank)
{
	if (L.nconn >= 2 * MAXN)
		die(1, "too many connections");
	L.fd[L.nconn] = fd;
	L.conn[L.nconn] = pmi_conn_create(L.s, rank);
	if (!L.conn[L.nconn])
		die(1, "pmi_conn_create failed");
	pmi_conn_set_data(L.conn[L.nconn], &L.fd[L.nconn]);
	L.nconn++;
}

static int listen_tcp(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, MAXN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
		die(111, "cannot listen on 127.0.0.1");
	*port = ntohs(a.sin_port);
	return fd;
}

static void start_rank(int r, enum mode m, int port, char **argv)
{
	char buf[32];
	int sv[2] = {-1, -1};

	if (m == M_FD && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die(111, "socketpair failed");
	pid_t pid = fork();
	if (pid < 0)
		die(111, "fork failed");
	if (pid == 0) {
		if (m == M_FD) {
			fcntl(sv[1], F_SETFD, 0);
			snprintf(buf, sizeof(buf), "%d", sv[1]);
			setenv("PMI_FD", buf, 1);
		} else {
			snprintf(buf, sizeof(buf), "127.0.0.1:%d", port);
			setenv("PMI_PORT", buf, 1);
		}
		snprintf(buf, sizeof(buf), "%d", r);
		setenv(m == M_TCP_ID ? "PMI_ID" : "PMI_RANK", buf, 1);
		snprintf(buf, sizeof(buf), "%d", L.n);
		if (m != M_TCP_ID)
			setenv("PMI_SIZE", buf, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	L.pid[r] = pid;
	if (m == M_FD) {
		close(sv[1]);
		add_conn(sv[0], r);
	}
}

/* Read from every ready conn; accept new TCP ones. */
static void serve_once(void)
{
	struct pollfd p[2 * MAXN + 1];
	int np = 0;

	for (int i = 0; i < L.nconn; i++)
		p[np++] = (struct pollfd){.fd = L.fd[i], .events = POLLIN};
	p[np++] = (struct pollfd){.fd = L.lfd, .events = POLLIN};
	if (poll(p, (nfds_t)np, 100) <= 0)
		return;
	for (int i = 0; i < L.nconn; i++) {
		char buf[4096];
		if (L.fd[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t r = read(L.fd[i], buf, sizeof(buf));
		if (r > 0 && pmi_conn_feed(L.conn[i], buf, (size_t)r) == 0)
			continue;
		if (r < 0 && errno == EINTR)
			continue;
		pmi_conn_destroy(L.conn[i]);
		close(L.fd[i]);
		L.fd[i] = -1;
	}
	if (L.lfd >= 0 && (p[np - 1].revents & POLLIN)) {
		int fd = accept4(L.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			add_conn(fd, -1);
	}
}

static void reap(void)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		for (int i = 0; i < L.n; i++) {
			if (L.pid[i] == pid)
				L.pid[i] = 0;
		}
		L.nlive--;
		if (code && !L.status)
			L.status = code;
	}
}

int main(int argc, char **argv)
{
	enum mode m = M_FD;
	const char *mapping = NULL;
	char kvsname[64], defmap[64];
	int opt, port = 0;

	while ((opt = getopt(argc, argv, "+n:m:t:")) != -1) {
		if (opt == 'n')
			L.n = atoi(optarg);
		else if (opt == 'm')
			mapping = optarg;
		else if (opt == 't')
			m = strcmp(optarg, "id") == 0     ? M_TCP_ID
			    : strcmp(optarg, "rank") == 0 ? M_TCP_RANK
			                                  : M_FD;
		else
			return 100;
	}
	if (L.n < 1 || L.n > MAXN || optind >= argc) {
		fprintf(stderr,
		        "usage: pmi_fakelaunch -n N [-m mapping|-] [-t fd|id|rank] prog args\n");
		return 100;
	}
	snprintf(kvsname, sizeof(kvsname), "fake-%ld", (long)getpid());
	snprintf(defmap, sizeof(defmap), "(vector,(0,1,%d))", L.n);
	struct pmi_server_cfg cfg = {kvsname, L.n, L.n, L.n, NULL};
	L.s = pmi_server_create(&cfg, &ops, NULL);
	if (!L.s)
		die(111, "pmi_server_create failed");
	if (!mapping || strcmp(mapping, "-") != 0)
		pmi_server_preput(L.s, "PMI_process_mapping", mapping ? mapping : defmap);
	if (m != M_FD)
		L.lfd = listen_tcp(&port);
	for (int r = 0; r < L.n; r++)
		start_rank(r, m, port, argv + optind);
	L.nlive = L.n;
	time_t end = time(NULL) + 60;
	while (L.nlive > 0) {
		if (time(NULL) > end)
			die(124, "timeout");
		serve_once();
		reap();
	}
	pmi_server_destroy(L.s);
	return L.status;
}
