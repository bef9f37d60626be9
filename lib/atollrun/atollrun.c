/* lib/atollrun/atollrun.c: libatollrun's C API: the process side of the Atollrun init
 * protocol on stdin/stdout (doc/PROTOCOL-atollrun.md), ports and handles. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "atollrun.h"

#include "atl_net.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_LEN 256

static struct {
	int inited, finalized;
	int establish, test, single_port;
	int n, me, lfd;
	atollport_t *ports;
	int *fds;
	int64_t timeout_ms;
	char err[512];
} S = {.establish = 1, .lfd = -1, .n = 0, .me = -1};

static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(S.err, sizeof S.err, fmt, ap);
	va_end(ap);
	return ATOLLRUN_INIT_ERROR;
}

void Atollrun_setEstablishConnectionsOnInit(int on)
{
	S.establish = !!on;
}
void Atollrun_setPerformConnectionTestOnInit(int on)
{
	S.test = !!on;
}
void Atollrun_setAcquirePortOnSingle(int on)
{
	S.single_port = !!on;
}

const char *Atollrun_getErrorString(void)
{
	return S.err;
}

atollport_t Atollrun_encodePort(uint32_t ipv4, uint16_t tcp_port)
{
	return ((atollport_t)ipv4 << 16) | tcp_port;
}

int Atollrun_decodePort(atollport_t port, char *buf, size_t len)
{
	uint32_t a = (uint32_t)(port >> 16);

	if (port == 0 || port >> 48 || (port & 0xffff) == 0 || !buf)
		return -1;
	int w = snprintf(buf, len, "%u.%u.%u.%u:%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
	                 a & 255, (unsigned)(port & 0xffff));
	return w < 0 || (size_t)w >= len ? -1 : 0;
}

/* {==== the stdio channel */

static int put_line(const char *fmt, ...)
{
	char buf[LINE_MAX_LEN];
	va_list ap;

	va_start(ap, fmt);
	int w = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof buf - 1)
		return -1;
	buf[w++] = '\n';
	for (int off = 0; off < w;) {
		ssize_t r = write(STDOUT_FILENO, buf + off, (size_t)(w - off));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		off += (int)r;
	}
	return 0;
}

/* One line from the starter, byte by byte (nothing past the newline is consumed), within
 * the timeout. 0, or -1 with S.err. */
static int get_line(char *buf, size_t len)
{
	size_t k = 0;
	int64_t deadline = atl_net_now_ms() + S.timeout_ms;

	for (;;) {
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		int64_t left = deadline - atl_net_now_ms();
		if (left <= 0)
			return fail("no line from the starter within %" PRId64 " s",
			            S.timeout_ms / 1000);
		int r = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
		if (r < 0 && errno != EINTR)
			return fail("waiting for the starter: %s", strerror(errno));
		if (r <= 0)
			continue;
		char c;
		ssize_t got = read(STDIN_FILENO, &c, 1);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return fail("reading from the starter: %s", strerror(errno));
		if (got == 0)
			return fail("the starter closed stdin (is this run by atollrun?)");
		if (c == '\n') {
			buf[k] = 0;
			return 0;
		}
		if (k + 1 >= len)
			return fail("a line from the starter is too long");
		buf[k++] = c;
	}
}

/* Expect a line "<prefix><rest>"; *rest points into buf. */
static int expect(char *buf, size_t len, const char *prefix, char **rest)
{
	if (get_line(buf, len) < 0)
		return -1;
	size_t pl = strlen(prefix);
	if (strncmp(buf, prefix, pl) != 0)
		return fail("expected %s from the starter, got '%.60s'", prefix, buf);
	*rest = buf + pl;
	return 0;
}

static int parse_num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

/* ====} */

/* __YOUR_PORT__ / __YOUR_PORT_SINGLE__ -> __MY_PORT__<port>|FAILURE. */
static int port_step(char *line, size_t len, atollport_t *mine)
{
	char *rest;
	uint32_t addr;
	uint16_t tcp;

	if (expect(line, len, "__YOUR_PORT", &rest) < 0)
		return -1;
	int single = !strcmp(rest, "_SINGLE__");
	if (!single && strcmp(rest, "__"))
		return fail("expected __YOUR_PORT__ from the starter, got '%.60s'", line);
	*mine = ATOLLRUN_NO_PORT;
	if (single && !S.single_port)
		return put_line("__MY_PORT__0");
	if (atl_net_my_addr(&addr, S.err, sizeof S.err) < 0 ||
	    (S.lfd = atl_net_listen(0, &tcp, S.err, sizeof S.err)) < 0) {
		put_line("__MY_PORT__FAILURE");
		return -1;
	}
	*mine = Atollrun_encodePort(addr, tcp);
	return put_line("__MY_PORT__%" PRIu64, *mine);
}

/* __NUMBER_OF_PROCESSES__n, __YOUR_ID__i, n x __REMOTE_PORT__p -> __PORT_VECTOR_ACCEPTED__ */
static int vector_step(char *line, size_t len, atollport_t mine)
{
	char *rest;
	uint64_t n, id, p;

	if (expect(line, len, "__NUMBER_OF_PROCESSES__", &rest) < 0)
		return -1;
	if (parse_num(rest, 1 << 20, &n) < 0 || n < 1)
		return fail("a bad process count from the starter: '%.60s'", line);
	if (expect(line, len, "__YOUR_ID__", &rest) < 0)
		return -1;
	if (parse_num(rest, n - 1, &id) < 0)
		return fail("a bad ID from the starter: '%.60s'", line);
	S.ports = calloc(n, sizeof *S.ports);
	S.fds = malloc(n * sizeof *S.fds);
	if (!S.ports || !S.fds)
		return fail("out of memory for %" PRIu64 " processes", n);
	for (uint64_t j = 0; j < n; j++) {
		S.fds[j] = -1;
		if (expect(line, len, "__REMOTE_PORT__", &rest) < 0)
			return -1;
		if (parse_num(rest, (UINT64_C(1) << 48) - 1, &p) < 0)
			return fail("a bad port from the starter: '%.60s'", line);
		S.ports[j] = p;
	}
	if (S.ports[id] != mine)
		return fail("the starter gave ID %" PRIu64 " port %" PRIu64 ", not ours (%" PRIu64
		            ")",
		            id, S.ports[id], mine);
	S.n = (int)n;
	S.me = (int)id;
	return put_line("__PORT_VECTOR_ACCEPTED__");
}

/* __INIT_CONNECTIONS__ -> __INIT_STATUS__SUCCESS|FAILURE|IGNORED */
static int connect_step(char *line, size_t len)
{
	char *rest;

	if (expect(line, len, "__INIT_CONNECTIONS__", &rest) < 0)
		return -1;
	if (*rest)
		return fail("expected __INIT_CONNECTIONS__ from the starter, got '%.60s'", line);
	if (!S.establish)
		return put_line("__INIT_STATUS__IGNORED");
	for (int j = 0; j < S.n; j++)
		if (j != S.me && !S.ports[j]) {
			put_line("__INIT_STATUS__FAILURE");
			return fail("ID %d has no port to connect to", j);
		}
	int64_t deadline = atl_net_now_ms() + S.timeout_ms;
	if (S.n > 1 &&
	    (atl_net_connect_all(S.me, S.n, S.ports, S.lfd, S.fds, deadline, S.err, sizeof S.err) <
	         0 ||
	     (S.test && atl_net_test_all(S.me, S.n, S.fds, deadline, S.err, sizeof S.err) < 0))) {
		put_line("__INIT_STATUS__FAILURE");
		return -1;
	}
	return put_line("__INIT_STATUS__SUCCESS");
}

/* __FINISH_INIT__ -> __FINISHED_INIT__ */
static int finish_step(char *line, size_t len)
{
	char *rest;

	if (expect(line, len, "__FINISH_INIT__", &rest) < 0)
		return -1;
	if (*rest)
		return fail("expected __FINISH_INIT__ from the starter, got '%.60s'", line);
	return put_line("__FINISHED_INIT__");
}

static void reset(void)
{
	for (int j = 0; S.fds && j < S.n; j++)
		if (S.fds[j] >= 0)
			close(S.fds[j]);
	if (S.lfd >= 0)
		close(S.lfd);
	free(S.ports);
	free(S.fds);
	S.ports = NULL;
	S.fds = NULL;
	S.lfd = -1;
	S.n = 0;
	S.me = -1;
}

/* No starter: one process, ID 0. */
static int init_single(void)
{
	uint32_t addr;
	uint16_t tcp;

	S.n = 1;
	S.me = 0;
	S.ports = calloc(1, sizeof *S.ports);
	S.fds = malloc(sizeof *S.fds);
	if (!S.ports || !S.fds)
		return fail("out of memory");
	S.fds[0] = -1;
	if (S.single_port) {
		if (atl_net_my_addr(&addr, S.err, sizeof S.err) < 0 ||
		    (S.lfd = atl_net_listen(0, &tcp, S.err, sizeof S.err)) < 0)
			return ATOLLRUN_INIT_ERROR;
		S.ports[0] = Atollrun_encodePort(addr, tcp);
	}
	return 0;
}

int Atollrun_Init(int *argc, char ***argv)
{
	char line[LINE_MAX_LEN];
	atollport_t mine = 0;
	const char *t = getenv("LAMKIT_ATOLLRUN_TIMEOUT");
	int rc;

	(void)argc;
	(void)argv;
	if (S.inited)
		return 0;
	if (S.finalized)
		return fail("Atollrun_Init after Atollrun_Finalize");
	S.err[0] = 0;
	S.timeout_ms = 60000;
	if (t && atoi(t) > 0)
		S.timeout_ms = (int64_t)atoi(t) * 1000;
	if (!getenv("LAMKIT_ATOLLRUN")) {
		rc = init_single();
	} else {
		fflush(stdout); /* what the program printed before stays before the protocol */
		rc = put_line("__ATOLLRUN_INIT__") < 0
		         ? fail("cannot write to stdout: %s", strerror(errno))
		         : 0;
		if (rc == 0)
			rc = port_step(line, sizeof line, &mine);
		if (rc == 0)
			rc = vector_step(line, sizeof line, mine);
		if (rc == 0)
			rc = connect_step(line, sizeof line);
		if (rc == 0)
			rc = finish_step(line, sizeof line);
	}
	if (rc < 0) {
		if (!S.err[0])
			fail("cannot write to stdout: %s", strerror(errno));
		reset();
		return ATOLLRUN_INIT_ERROR;
	}
	S.inited = 1;
	return 0;
}

int Atollrun_getCommSize(void)
{
	return S.inited ? S.n : 0;
}
int Atollrun_getCommRank(void)
{
	return S.inited ? S.me : -1;
}

/* lamkit's earlier names for the two, kept for programs written against them */
int Atollrun_getNumberOfProcesses(void)
{
	return Atollrun_getCommSize();
}
int Atollrun_getMyId(void)
{
	return Atollrun_getCommRank();
}

int Atollrun_isInitialized(void)
{
	return S.inited;
}

atollport_t Atollrun_getPort(int id)
{
	return S.inited && id >= 0 && id < S.n ? S.ports[id] : ATOLLRUN_NO_PORT;
}

atollhandle_t Atollrun_getHandle(int id)
{
	return S.inited && id >= 0 && id < S.n ? S.fds[id] : -1;
}

int Atollrun_Finalize(void)
{
	reset();
	S.inited = 0;
	S.finalized = 1;
	return 0;
}
