/* tests/pmi/pmi_spawn.c: PMI_Spawn_multiple as an MPI library drives it, without MPI. Every
 * parent rank calls PMI_Init; rank 0 listens on a TCP port, spawns the children with that
 * port preput as PARENT_ROOT_PORT_NAME (as MPICH does), and each child (PMI_Init says
 * spawned) reads the port from its own KVS, connects, and the two exchange a message each
 * way. Usage:
 *   pmi_spawn [N [HOST]]        N children (default 2) of this program, on HOST (info "host")
 *   pmi_spawn multi             two commands: 1 child "app0" and 2 children "app1"
 *   pmi_spawn exit K            2 children; child rank 1 exits K after its exchange
 *   pmi_spawn refuse N          expect the spawn of N to be refused (rc != 0), exit 0
 *   pmi_spawn barrier           no spawn: PMI_Init, PMI_Barrier, PMI_Finalize (bench/spawn)
 *   pmi_spawn publish NAME PORT | lookup NAME | unpublish NAME   the name service, rank 0
 * Children are started as "pmi_spawn child TAG [K]". Output: one line per message, and the
 * parent's "spawned N in X ms" (PMI_Spawn_multiple until every child said hello). */
#include "pmi.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEY "PARENT_ROOT_PORT_NAME"

static int die(const char *who, const char *what, int rc)
{
	printf("pmi_spawn: %s: FAIL %s (rc %d)\n", who, what, rc);
	fflush(stdout);
	return 1;
}

/* Wait up to 20 s for fd: every wait of a test has a bound. */
static int wait_fd(int fd, short ev)
{
	struct pollfd p = {.fd = fd, .events = ev};
	return poll(&p, 1, 20000) == 1 ? 0 : -1;
}

static int child(const char *tag, int code)
{
	int spawned = 0, rank = -1, size = 0, rc, port = 0, fd, v = -1;
	char kvs[256], val[256], host[256], *colon;

	if ((rc = PMI_Init(&spawned)) || !spawned)
		return die("child", "PMI_Init spawned", rc ? rc : spawned);
	PMI_Get_rank(&rank);
	PMI_Get_size(&size);
	if ((rc = PMI_KVS_Get_my_name(kvs, sizeof kvs)) ||
	    (rc = PMI_KVS_Get(kvs, KEY, val, sizeof val)))
		return die("child", "get " KEY, rc);
	gethostname(host, sizeof host);
	if (!(colon = strrchr(val, ':')) || (port = atoi(colon + 1)) <= 0)
		return die("child", "parse port", 0);
	*colon = '\0';
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, val, &sa.sin_addr) != 1 ||
	    (fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return die("child", "connect to the parent", 0);
	if (write(fd, &rank, sizeof rank) != sizeof rank || wait_fd(fd, POLLIN) ||
	    read(fd, &v, sizeof v) != sizeof v)
		return die("child", "exchange", 0);
	printf("child %d of %d (%s) on %s: parent said %d\n", rank, size, tag, host, v);
	fflush(stdout);
	close(fd);
	if ((rc = PMI_Barrier()))
		return die("child", "barrier", rc);
	if (code && rank == 1)
		return code; /* without PMI_Finalize, as a crashing MPI program */
	PMI_Finalize();
	return 0;
}

/* A listening socket on this node's address (what the children on other nodes reach). */
static int listen_on(char *addr, size_t alen)
{
	char host[256];
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || gethostname(host, sizeof host) < 0)
		return -1;
	if (getaddrinfo(host, NULL, &hints, &ai) == 0 && ai)
		sa.sin_addr = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	else
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ai)
		freeaddrinfo(ai);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		return -1;
	char ip[64];
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
	snprintf(addr, alen, "%s:%u", ip, ntohs(sa.sin_port));
	return fd;
}

static int parent(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "2";
	int spawned = 1, rank = -1, rc, lfd = -1, n = 0, errors[64];
	char addr[128] = "";
	const char *exe = argv[0], *host = NULL;
	const char *a0[] = {"child", "app0", NULL}, *a1[] = {"child", "app1", NULL};
	const char *ax[] = {"child", "exit", argc > 2 ? argv[2] : "3", NULL};
	const char **argvs[2] = {a0, a1}, *cmds[2] = {exe, exe};
	int maxprocs[2] = {2, 0}, count = 1, ninfo[2] = {0, 0};
	PMI_keyval_t hostkv = {"host", NULL};
	const PMI_keyval_t *infos[2] = {&hostkv, NULL};

	if ((rc = PMI_Init(&spawned)) || spawned)
		return die("parent", "PMI_Init", rc ? rc : spawned);
	PMI_Get_rank(&rank);
	if (argc > 2 &&
	    (!strcmp(mode, "publish") || !strcmp(mode, "lookup") || !strcmp(mode, "unpublish"))) {
		char port[256] = "";
		if (rank == 0 && mode[0] == 'p')
			rc = PMI_Publish_name(argv[2], argc > 3 ? argv[3] : "none");
		else if (rank == 0 && mode[0] == 'l')
			rc = PMI_Lookup_name(argv[2], port);
		else if (rank == 0)
			rc = PMI_Unpublish_name(argv[2]);
		if (rank == 0)
			printf("%s %s: rc %d%s%s\n", mode, argv[2], rc, *port ? " port " : "",
			       port);
		PMI_Finalize();
		return 0;
	}
	if (!strcmp(mode, "barrier")) {
		if ((rc = PMI_Barrier()))
			return die("parent", "barrier", rc);
		PMI_Finalize();
		return 0;
	}
	if (!strcmp(mode, "multi")) {
		count = 2;
		maxprocs[0] = 1;
		maxprocs[1] = 2;
	} else if (!strcmp(mode, "exit")) {
		argvs[0] = ax;
	} else {
		int refuse = !strcmp(mode, "refuse");
		maxprocs[0] = atoi(refuse ? (argc > 2 ? argv[2] : "1") : mode);
		if (!refuse && argc > 2) {
			host = argv[2];
			hostkv.val = (char *)host;
			ninfo[0] = 1;
		}
		if (refuse) {
			if (rank == 0) {
				rc = PMI_Spawn_multiple(1, cmds, argvs, maxprocs, ninfo, infos, 0,
				                        NULL, errors);
				printf("parent: spawn of %d: rc %d\n", maxprocs[0], rc);
				if (rc == PMI_SUCCESS)
					return die("parent", "spawn should be refused", rc);
			}
			PMI_Barrier();
			PMI_Finalize();
			return 0;
		}
	}
	for (int i = 0; i < count; i++)
		n += maxprocs[i];
	if (n < 1 || n > 64)
		return die("parent", "child count", n);
	/* as MPI_Comm_spawn: collective over the parents, rank 0 asks */
	if (rank == 0) {
		if ((lfd = listen_on(addr, sizeof addr)) < 0)
			return die("parent", "listen", 0);
		PMI_keyval_t pre = {KEY, addr};
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc =
		    PMI_Spawn_multiple(count, cmds, argvs, maxprocs, ninfo, infos, 1, &pre, errors);
		if (rc != PMI_SUCCESS)
			return die("parent", "PMI_Spawn_multiple", rc);
		for (int i = 0; i < n; i++) {
			int cfd, r = -1;
			if (wait_fd(lfd, POLLIN) || (cfd = accept(lfd, NULL, NULL)) < 0)
				return die("parent", "accept", i);
			if (wait_fd(cfd, POLLIN) || read(cfd, &r, sizeof r) != sizeof r)
				return die("parent", "read", i);
			int v = 100 + r;
			if (write(cfd, &v, sizeof v) != sizeof v)
				return die("parent", "write", i);
			printf("parent: child %d said hello\n", r);
			close(cfd);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("parent: spawned %d in %.3f ms\n", n,
		       (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		           (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		fflush(stdout);
		close(lfd);
	}
	if ((rc = PMI_Barrier()))
		return die("parent", "barrier", rc);
	if (rank == 0)
		printf("parent: %d children answered\n", n);
	PMI_Finalize();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "child"))
		return child(argv[2], argc > 3 && !strcmp(argv[2], "exit") ? atoi(argv[3]) : 0);
	return parent(argc, argv);
}
