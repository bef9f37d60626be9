/* tests/unit/t_tp_tcp.c: tcp path: business cards, address fallback, errors, completion order. */
#include <errno.h>
#include <net/if.h>
#include <regex.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "tp.h"
#include "tp_internal.h"

/*
 * Two endpoints (rank 0 and rank 1 of a 2-rank job, on different "nodes", so tcp) live in this
 * one process and are polled in turn; the KVS is a small table. The unreachable-address case
 * runs in a child inside a private network namespace (only `lo`), so nothing leaves the host.
 */

static char kvs_key[4][32], kvs_val[4][1024];
static int kvs_n;

static int kput(void *arg, const char *key, const char *val)
{
	(void)arg;
	if (kvs_n == 4)
		return -1;
	snprintf(kvs_key[kvs_n], sizeof(kvs_key[0]), "%s", key);
	snprintf(kvs_val[kvs_n++], sizeof(kvs_val[0]), "%s", val);
	return 0;
}

static int kget(void *arg, const char *key, char *val, size_t len)
{
	(void)arg;
	for (int i = 0; i < kvs_n; i++)
		if (strcmp(kvs_key[i], key) == 0) {
			snprintf(val, len, "%s", kvs_val[i]);
			return 0;
		}
	return -1;
}

static unsigned char *placebuf; /* ops.place answers with this when set */
static int refuse;              /* ops.place says NULL this many more times */

struct state {
	int got, bad, sent, order_bad, placed, unplaced;
	size_t bytes;
	uint32_t next;
};

static void on_recv(void *arg, int peer, const void *h, size_t hlen, const void *data, size_t len)
{
	struct state *st = arg;
	uint32_t seq;

	(void)peer;
	memcpy(&seq, h, sizeof(seq));
	if (placebuf && len > 64 * 1024 && data != placebuf)
		st->unplaced++; /* a large payload must arrive where ops.place said */
	st->placed += data == placebuf;
	if (hlen != 8 || seq != st->next ||
	    (len && ((const unsigned char *)data)[len - 1] != (seq & 255)))
		st->bad++;
	st->next++;
	st->got++;
	st->bytes += len;
}

static void on_sent(void *arg, void *cookie)
{
	struct state *st = arg;

	if (cookie == (void *)2 && st->sent != 1)
		st->order_bad++; /* the small last fragment reported before the big one */
	st->sent = cookie == (void *)1 ? 1 : 2;
}

static void *on_place(void *arg, int peer, const void *h, size_t hlen, size_t len)
{
	(void)arg;
	(void)peer;
	(void)h;
	(void)hlen;
	if (refuse > 0) {
		refuse--;
		return NULL;
	}
	return len <= 300000 ? placebuf : NULL;
}

static tp_t *make(int rank, struct state *st, char *err)
{
	static const int l0[1] = {0}, l1[1] = {1};
	struct tp_cfg cfg = {.rank = rank, .size = 2, .local_ranks = rank ? l1 : l0, .nlocal = 1};

	cfg.kvs.put = kput;
	cfg.kvs.get = kget;
	cfg.ops.recv = on_recv;
	cfg.ops.sent = on_sent;
	cfg.ops.place = placebuf ? on_place : NULL;
	cfg.arg = st;
	return tp_create(&cfg, err, 256);
}

static int matches(const char *s, const char *re)
{
	regex_t r;
	int m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	m = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return m;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Poll both until cond or 10 s. */
#define POLL_UNTIL(a, b, cond)                                                                     \
	do {                                                                                       \
		double end_ = now() + 10;                                                          \
		while (!(cond) && now() < end_) {                                                  \
			tp_poll(a);                                                                \
			tp_poll(b);                                                                \
		}                                                                                  \
	} while (0)

/* Frames of many sizes (buffer edges, frames above the 64 KiB small-read limit), received
 * through the buffer or, with `place`, large payloads straight into placebuf. */
static void exchange(int place)
{
	struct state s0 = {0}, s1 = {0};
	char err[256] = "";
	unsigned char *buf = malloc(300000);
	tp_t *a, *b;
	int n = 0, fails = 0;
	size_t want = 0;

	kvs_n = 0;
	setenv("LAMKIT_TCP_ADDR", "127.0.0.1", 1);
	placebuf = place ? malloc(300000) : NULL;
	a = make(0, &s0, err);
	b = make(1, &s1, err);
	ok(a && b, "two endpoints %s", err);
	ok(matches(kvs_val[0], "^[0-9]+;[^;]+;127\\.0\\.0\\.1/32$"),
	   "card from LAMKIT_TCP_ADDR: %s", kvs_val[0]);
	if (!a || !b)
		return;
	for (size_t len = 0; len < 300000; len = len + len / 2 + 1 + (len & 7), n++) {
		uint32_t h[2] = {(uint32_t)n, 0};
		memset(buf, n & 255, len);
		int rc = tp_send(b, 0, h, 8, buf, len, NULL);
		fails += rc < 0;
		want += len;
		POLL_UNTIL(a, b, !tp_queued(b)); /* referenced payloads: keep buf until written */
	}
	POLL_UNTIL(a, b, s0.got == n);
	is_int(fails, 0, "every send accepted");
	is_int(s0.got, n, "%d frames delivered in order", n);
	is_int(s0.bad + s0.unplaced, 0, "headers and payloads intact, large ones where placed");
	ok(s0.bytes == want, "all %zu bytes", want);
	if (place)
		ok(s0.placed > 0, "%d large payloads received in place", s0.placed);
	tp_destroy(a, 0);
	tp_destroy(b, 0);
	free(buf);
	free(placebuf);
	placebuf = NULL;
}

/* Large frames that may be placed: after one the layer above did not place (its payload read
 * into the connection's buffer, which grew to hold it), a small frame and then large ones are
 * waiting together in the socket. Every later large payload must go in place from its first
 * byte: nothing delivered from the buffer (the buffer's whole capacity was read at the start of
 * a small frame and swallowed the large ones), nothing moved there from it (the read at the start
 * of a frame took part of the payload with the header). */
static void placed_after_unplaced(void)
{
	struct state s0 = {0}, s1 = {0};
	struct tp_tcp_counts n;
	char err[256] = "";
	size_t big = 200000;
	unsigned char *buf = malloc(big);
	uint32_t h[2] = {0, 0};
	tp_t *a, *b;
	int seq = 0;

	kvs_n = 0;
	placebuf = malloc(300000);
	a = make(0, &s0, err);
	b = make(1, &s1, err);
	if (!a || !b || !buf || !placebuf) {
		ok(0, "endpoints %s", err);
		return;
	}
	tp_send(b, 0, h, 8, NULL, 0, NULL); /* connect */
	POLL_UNTIL(a, b, s0.got == 1);
	refuse = 1;
	h[0] = (uint32_t)++seq;
	memset(buf, seq, big);
	tp_send(b, 0, h, 8, buf, big, NULL);
	POLL_UNTIL(a, b, s0.got == 2 || tp_queued(b));
	POLL_UNTIL(a, b, s0.got == 2);
	is_int(s0.unplaced, 1, "a large frame not placed is delivered from the buffer");
	for (int i = 0; i < 3; i++) {
		h[0] = (uint32_t)++seq; /* a small frame, with a payload or without */
		memset(buf, seq, 100);
		tp_send(b, 0, h, 8, buf, i == 1 ? 100 : 0, NULL);
		h[0] = (uint32_t)++seq;
		memset(buf, seq, big);
		tp_send(b, 0, h, 8, buf, big, NULL);
		while (tp_queued(b))
			tp_poll(b); /* only the sender: both frames wait in a's socket */
		usleep(20000);
		POLL_UNTIL(a, b, s0.got == seq + 1);
	}
	is_int(s0.got, seq + 1, "%d frames delivered", seq + 1);
	is_int(s0.bad, 0, "headers and payloads intact");
	tp_tcp_counts(a->tcp, 1, &n);
	is_int((int)n.large, 4, "4 large frames");
	is_int((int)n.buffered_frames, 1, "only the one not placed came from the buffer");
	is_int(s0.unplaced, 1, "the other large payloads were handed up from their place");
	ok(n.moved_bytes == 0, "no payload byte moved from the buffer to its place (%llu)",
	   n.moved_bytes);
	ok(n.placed_bytes == 3 * big, "%llu of %zu bytes received in place", n.placed_bytes,
	   3 * big);
	tp_destroy(a, 0);
	tp_destroy(b, 0);
	free(buf);
	free(placebuf);
	placebuf = NULL;
}

/* A small fragment with a cookie behind a queued big one must not complete first. */
static void completion_order(void)
{
	struct state s0 = {0}, s1 = {0};
	char err[256] = "";
	size_t big = 32u << 20;
	unsigned char *buf = malloc(big), small[16];
	uint32_t h[2] = {0, 0};
	tp_t *a, *b;
	int rc1, rc2;

	kvs_n = 0;
	a = make(0, &s0, err);
	b = make(1, &s1, err);
	if (!a || !b || !buf) {
		ok(0, "endpoints %s", err);
		return;
	}
	memset(buf, 0, big);
	memset(small, 1, sizeof(small));
	tp_send(b, 0, h, 8, NULL, 0, NULL); /* connect */
	POLL_UNTIL(a, b, s0.got == 1);
	h[0] = 1;
	rc1 = tp_send(b, 0, h, 8, buf, big, (void *)1); /* more than the socket buffers take */
	h[0] = 2;
	rc2 = tp_send(b, 0, h, 8, small, sizeof(small), (void *)2);
	is_int(rc1, 1, "big fragment kept by reference");
	is_int(rc2, 1, "small fragment behind it is kept too (sent comes later)");
	POLL_UNTIL(a, b, s0.got == 3 && s1.sent == 2);
	is_int(s0.got, 3, "both delivered");
	is_int(s1.order_bad, 0, "sent(cookie) of the small one after the big one");
	tp_destroy(a, 0);
	tp_destroy(b, 0);
	free(buf);
}

/* Bring lo up in this (private) network namespace: 0, or -1. */
static int lo_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	rc = fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ? -1 : 0;
	ifr.ifr_flags |= IFF_UP;
	if (rc == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		rc = -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Connect rank 1 to rank 0 with LAMKIT_TCP_CC=cc (NULL: unset); rank 1's fragment size for
 * rank 0 afterwards (1 MiB when the congestion control named is in use and is not bbr, 512 KiB on
 * loopback otherwise), 0 on failure. */
static size_t frag_with_cc(const char *cc)
{
	struct state s0 = {0}, s1 = {0};
	char err[256] = "";
	uint32_t h[2] = {0, 0};
	size_t frag = 0;
	tp_t *a, *b;

	kvs_n = 0;
	if (cc)
		setenv("LAMKIT_TCP_CC", cc, 1);
	else
		unsetenv("LAMKIT_TCP_CC");
	a = make(0, &s0, err);
	b = make(1, &s1, err);
	if (a && b && tp_send(b, 0, h, 8, NULL, 0, NULL) >= 0) {
		POLL_UNTIL(a, b, s0.got == 1);
		frag = s0.got == 1 ? tp_frag_max(b, 0) : 0;
	}
	tp_destroy(a, 0);
	tp_destroy(b, 0);
	unsetenv("LAMKIT_TCP_CC");
	return frag;
}

/* In a private network namespace whose default congestion control is bbr: lamkit's connections
 * keep it by default and with LAMKIT_TCP_CC=system (512 KiB fragments on loopback), take reno when
 * told (1 MiB fragments), also unprivileged; an unknown name keeps the system's. */
static int cc_child(void)
{
	static const struct {
		const char *cc;
		size_t frag;
	} want[] = {
	    {NULL, 512 << 10}, {"system", 512 << 10}, {"reno", 1 << 20}, {"nosuch", 512 << 10}};
	FILE *f;

	if (unshare(CLONE_NEWNET) < 0)
		return 77;
	if (lo_up() < 0)
		return 20;
	f = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "w");
	if (!f || fputs("bbr\n", f) < 0 || fclose(f) != 0)
		return 78; /* no bbr in this kernel */
	setenv("LAMKIT_TCP_ADDR", "127.0.0.1", 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t got = frag_with_cc(want[i].cc);
		printf("# LAMKIT_TCP_CC=%s: fragments of %zu bytes\n",
		       want[i].cc ? want[i].cc : "(unset)", got);
		fflush(stdout); /* the child leaves by _exit */
		if (got != want[i].frag)
			return 30 + (int)i;
	}
	/* unprivileged, reno is always allowed (cubic may not be, see
	 * net.ipv4.tcp_allowed_congestion_control) */
	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
		return 40;
	if (frag_with_cc("reno") != 1 << 20)
		return 41;
	printf("# unprivileged, LAMKIT_TCP_CC=reno: 1 MiB fragments\n");
	fflush(stdout);
	return 0;
}

/* In a private network namespace: bring lo up, try an address with no route. */
static int unreachable_child(void)
{
	struct state s0 = {0}, s1 = {0};
	char err[256] = "";
	uint32_t h[2] = {0, 0};
	int rc, e;
	double t0;
	tp_t *a, *b;

	if (unshare(CLONE_NEWNET) < 0)
		return 77;
	if (lo_up() < 0)
		return 20;
	kvs_n = 0;
	setenv("LAMKIT_TCP_ADDR", "10.255.255.1/24", 1);
	setenv("LAMKIT_TCP_CONNECT_MS", "500", 1);
	a = make(0, &s0, err);
	unsetenv("LAMKIT_TCP_ADDR");
	b = make(1, &s1, err);
	if (!a || !b)
		return 22;
	t0 = now();
	rc = tp_send(b, 0, h, 8, NULL, 0, NULL);
	e = errno;
	printf("# %s\n", tp_error(b));
	fflush(stdout);
	if (rc != -1 || e != EPIPE)
		return 23;
	if (!matches(tp_error(b),
	             "^tcp: rank 1 cannot reach rank 0: 10\\.255\\.255\\.1:[0-9]+ \\(.+\\)$"))
		return 24;
	if (now() - t0 > 2)
		return 25;
	/* b's own card (interfaces of this namespace): only loopback is up */
	if (!matches(kvs_val[1], "^[0-9]+;[^;]+;127\\.0\\.0\\.1/8$"))
		return 26;
	tp_destroy(a, 0);
	tp_destroy(b, 0);
	return 0;
}

int main(void)
{
	int status = -1;
	pid_t pid;

	exchange(0);
	exchange(1);
	placed_after_unplaced();
	completion_order();
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(unreachable_child());
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		printf("ok %d - # SKIP no private network namespace (needs root)\n", ++tap_n);
	else
		is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
		       "unreachable address: EPIPE within the bound, one line naming rank and "
		       "address; "
		       "card lists only the up interfaces");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(cc_child());
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) >= 77)
		printf("ok %d - # SKIP %s\n", ++tap_n,
		       WEXITSTATUS(status) == 77 ? "no private network namespace (needs root)"
		                                 : "no bbr congestion control in this kernel");
	else
		is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
		       "congestion control: the system's bbr kept by default, with "
		       "LAMKIT_TCP_CC=system or an unknown name (512 KiB fragments on loopback); "
		       "reno when "
		       "named, also unprivileged (1 MiB)");
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
