/* tests/pmi/pmi_usage.c: the PMI paper's "Typical Usage", step by step: each process gets a
 * port, puts P<rank>-hostname and P<rank>-port, commits, meets the others at PMI_Barrier, and
 * only when it first "sends" to a peer looks the peer up with PMI_KVS_Get and connects. Here
 * every rank sends one line to the next rank of a ring and reads one from the previous.
 * Prints "usage rank=R got 'hello from P to R' OK", or "usage rank=R FAIL why" and exits 1. */
#include <pmi.h>

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int rank = -1;

static _Noreturn void fail(const char *why)
{
	printf("usage rank=%d FAIL %s\n", rank, why);
	fflush(stdout);
	exit(1);
}

/* step 3: a listening socket on any address, the port the OS picked */
static int listener(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		fail("socket/bind/listen");
	*port = ntohs(a.sin_port);
	return fd;
}

/* the "first MPI_SEND" to peer: find its host and port in the KVS, connect */
static int connect_to(const char *kvs, int peer)
{
	char key[64], host[256], port[32];
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res, *ai;
	int fd = -1;

	snprintf(key, sizeof(key), "P%d-hostname", peer);
	if (PMI_KVS_Get(kvs, key, host, sizeof(host)) != PMI_SUCCESS)
		fail("PMI_KVS_Get hostname");
	snprintf(key, sizeof(key), "P%d-port", peer);
	if (PMI_KVS_Get(kvs, key, port, sizeof(port)) != PMI_SUCCESS)
		fail("PMI_KVS_Get port");
	if (getaddrinfo(host, port, &hints, &res) != 0)
		fail("getaddrinfo of the peer's hostname");
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		fail("connect to the peer");
	return fd;
}

int main(void)
{
	int spawned, size, port, lfd, out, in;
	char kvs[256], key[64], val[256], host[256], msg[128], got[128] = "";

	/* steps 1 and 2: PMI_Init, then my rank */
	if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&rank) != PMI_SUCCESS ||
	    PMI_Get_size(&size) != PMI_SUCCESS ||
	    PMI_KVS_Get_my_name(kvs, sizeof(kvs)) != PMI_SUCCESS)
		fail("PMI_Init / PMI_Get_rank");
	/* step 3: gethostname and a port */
	if (gethostname(host, sizeof(host)) < 0)
		fail("gethostname");
	lfd = listener(&port);
	/* steps 4 and 5: two pairs keyed by rank, put and commit */
	snprintf(key, sizeof(key), "P%d-hostname", rank);
	if (PMI_KVS_Put(kvs, key, host) != PMI_SUCCESS)
		fail("PMI_KVS_Put hostname");
	snprintf(key, sizeof(key), "P%d-port", rank);
	snprintf(val, sizeof(val), "%d", port);
	if (PMI_KVS_Put(kvs, key, val) != PMI_SUCCESS || PMI_KVS_Commit(kvs) != PMI_SUCCESS)
		fail("PMI_KVS_Put port / PMI_KVS_Commit");
	/* step 6: the barrier; from here every rank's pairs can be read */
	if (PMI_Barrier() != PMI_SUCCESS)
		fail("PMI_Barrier");

	/* the first send: to the next rank (a single process sends to itself) */
	out = connect_to(kvs, (rank + 1) % size);
	snprintf(msg, sizeof(msg), "hello from %d to %d\n", rank, (rank + 1) % size);
	if (write(out, msg, strlen(msg)) != (ssize_t)strlen(msg))
		fail("write");
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	if (poll(&p, 1, 30000) != 1 || (in = accept(lfd, NULL, NULL)) < 0)
		fail("no connection from the previous rank within 30 s");
	for (size_t k = 0; k + 1 < sizeof(got); k++) {
		ssize_t r = read(in, got + k, 1);
		if (r <= 0 || got[k] == '\n') {
			got[k] = 0;
			break;
		}
	}
	snprintf(msg, sizeof(msg), "hello from %d to %d", (rank + size - 1) % size, rank);
	if (strcmp(got, msg) != 0)
		fail("the previous rank's line is wrong");
	printf("usage rank=%d got '%s' OK\n", rank, got);
	fflush(stdout);
	close(in);
	close(out);
	close(lfd);
	/* everyone has read before anyone leaves */
	if (PMI_Barrier() != PMI_SUCCESS || PMI_Finalize() != PMI_SUCCESS)
		fail("PMI_Barrier / PMI_Finalize");
	return 0;
}
