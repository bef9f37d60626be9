/* tests/atollrun/raw.c: an Atollrun program that does not use libatollrun: it speaks the init
 * protocol by hand with stdio (as old programs did), publishes a real listening TCP port as
 * (127.0.0.1 << 16) | port, answers __INIT_STATUS__IGNORED, and ID 0 prints the port vector. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char line[256];

static const char *get(const char *prefix)
{
	if (!fgets(line, sizeof line, stdin)) {
		fprintf(stderr, "raw: the starter closed stdin\n");
		exit(2);
	}
	line[strcspn(line, "\n")] = 0;
	if (strncmp(line, prefix, strlen(prefix))) {
		fprintf(stderr, "raw: wanted %s, got '%s'\n", prefix, line);
		exit(3);
	}
	return line + strlen(prefix);
}

int main(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned long long port, ports[64];

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		return 4;
	port = ((unsigned long long)INADDR_LOOPBACK << 16) | ntohs(sa.sin_port);
	printf("__ATOLLRUN_INIT__\n");
	fflush(stdout);
	get("__YOUR_PORT");
	printf("__MY_PORT__%llu\n", port);
	fflush(stdout);
	int n = atoi(get("__NUMBER_OF_PROCESSES__"));
	int id = atoi(get("__YOUR_ID__"));
	for (int j = 0; j < n; j++) {
		unsigned long long p = strtoull(get("__REMOTE_PORT__"), NULL, 10);
		if (j < 64)
			ports[j] = p;
	}
	printf("__PORT_VECTOR_ACCEPTED__\n");
	fflush(stdout);
	get("__INIT_CONNECTIONS__");
	printf("__INIT_STATUS__IGNORED\n");
	fflush(stdout);
	get("__FINISH_INIT__");
	printf("__FINISHED_INIT__\n");
	if (id == 0)
		for (int j = 0; j < n && j < 64; j++)
			printf("raw: ID %d port %llu tcp %llu%s\n", j, ports[j], ports[j] & 0xffff,
			       ports[j] >> 16 == INADDR_LOOPBACK ? " on 127.0.0.1" : "");
	printf("raw: ID %d of %d done\n", id, n);
	close(fd);
	return 0;
}
