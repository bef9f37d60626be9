/* examples/atollrun/porttest.c: an Atollrun program: init, print every ID's port and host,
 * and (with connections) prove every connection carries data both ways.
 * usage (under atollrun): porttest [--no-connect] [--test] [--single-port] [--fail-at-id I]
 * Build: cc porttest.c -I<lamkit>/include -L<lamkit>/lib -latollrun
 * Only ID 0's stdout reaches the terminal: the others send it what they found. */
#include "atollrun.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct report {
	uint32_t id, peers_ok;
	char host[64];
};

static int io(int fd, void *buf, size_t len, int writing)
{
	char *p = buf;
	while (len > 0) {
		ssize_t r = writing ? write(fd, p, len) : read(fd, p, len);
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Send our ID to every peer, read each peer's: the number that came back right. */
static uint32_t exchange(int n, int me)
{
	uint32_t ok = 0, got;

	for (int j = 0; j < n; j++)
		if (j != me && io(ATOLLHANDLE(j), &me, sizeof me, 1) < 0)
			fprintf(stderr, "porttest: ID %d: cannot send to ID %d\n", me, j);
	for (int j = 0; j < n; j++)
		if (j != me) {
			if (io(ATOLLHANDLE(j), &got, sizeof got, 0) == 0 && got == (uint32_t)j)
				ok++;
			else
				fprintf(stderr, "porttest: ID %d: nothing right from ID %d\n", me,
				        j);
		}
	return ok;
}

int main(int argc, char **argv)
{
	int connect = 1, fail_id = -1;
	char ep[32];

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--no-connect"))
			connect = 0;
		else if (!strcmp(argv[k], "--test"))
			Atollrun_setPerformConnectionTestOnInit(1);
		else if (!strcmp(argv[k], "--single-port"))
			Atollrun_setAcquirePortOnSingle(1);
		else if (!strcmp(argv[k], "--fail-at-id") && k + 1 < argc)
			fail_id = atoi(argv[++k]);
	}
	Atollrun_setEstablishConnectionsOnInit(connect);
	if (Atollrun_Init(&argc, &argv) == ATOLLRUN_INIT_ERROR) {
		fprintf(stderr, "porttest: %s\n", Atollrun_getErrorString());
		return 1;
	}
	int n = Atollrun_getCommSize(), me = Atollrun_getCommRank();
	struct report rep = {.id = (uint32_t)me};
	gethostname(rep.host, sizeof rep.host - 1);
	if (me == fail_id) {
		fprintf(stderr, "porttest: ID %d fails on purpose\n", me);
		return 3;
	}
	if (connect && n > 1)
		rep.peers_ok = exchange(n, me);
	if (me != 0) {
		if (connect && io(ATOLLHANDLE(0), &rep, sizeof rep, 1) < 0)
			return 2;
		Atollrun_Finalize();
		return 0;
	}
	printf("porttest: %d process(es), connections %s\n", n, connect ? "on" : "off");
	int bad = 0;
	for (int j = 0; j < n; j++) {
		struct report r = rep;
		if (j != 0 && connect && io(ATOLLHANDLE(j), &r, sizeof r, 0) < 0) {
			fprintf(stderr, "porttest: no report from ID %d\n", j);
			bad++;
			continue;
		}
		if (Atollrun_decodePort(ATOLLPORT(j), ep, sizeof ep) < 0)
			strcpy(ep, "none");
		if (connect)
			printf("ID %d on %s port %s peers %u/%d\n", j, r.host, ep, r.peers_ok,
			       n - 1);
		else
			printf("ID %d port %s\n", j, ep);
		bad += connect && r.peers_ok != (uint32_t)(n - 1);
	}
	printf("porttest: %s\n", bad ? "FAILED" : "OK");
	Atollrun_Finalize();
	return bad ? 1 : 0;
}
