/* tests/unit/t_tp_udp.c: the reliable udp path: CRC32C, business cards, 10 000 fragments through
 * 20 % drop, corruption, duplication and reordering with sequence numbers far past 2^32, the
 * send window under a receiver that does not read, completion order, the peer timeout. */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "tp.h"
#include "tp_pair.h"
#include "tp_internal.h"

/* Two endpoints (ranks 0 and 1 of a 2-rank job on different "nodes") in this one process, polled
 * in turn; two routes over loopback (127.0.0.1 and 127.0.0.2); the KVS is a small table. */

struct hdr {
	uint32_t n, len, crc, pad;
};

struct state {
	int got, bad, order_bad, sent;
	uint32_t next;
	size_t bytes;
};

static void fill(unsigned char *b, size_t len, uint32_t n)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(n * 131 + i * 7 + (i >> 8));
}

static void on_recv(void *arg, int peer, const void *h, size_t hlen, const void *data, size_t len)
{
	struct state *st = arg;
	struct hdr x;

	(void)peer;
	memcpy(&x, h, sizeof(x));
	if (hlen != sizeof(x) || x.len != len || tp_crc32c(0, data, len) != x.crc)
		st->bad++;
	if (x.n != st->next)
		st->order_bad++;
	st->next = x.n + 1;
	st->got++;
	st->bytes += len;
}

static void on_sent(void *arg, void *cookie)
{
	struct state *st = arg;

	if (cookie == (void *)2 && st->sent != 1)
		st->order_bad++;
	st->sent = cookie == (void *)1 ? 1 : 2;
}

static tp_t *make(int rank, struct state *st, char *err)
{
	static const int l0[1] = {0}, l1[1] = {1};
	struct tp_cfg cfg = {.rank = rank, .size = 2, .local_ranks = rank ? l1 : l0, .nlocal = 1};

	cfg.kvs.put = kput;
	cfg.kvs.get = kget;
	cfg.ops.recv = on_recv;
	cfg.ops.sent = on_sent;
	cfg.arg = st;
	cfg.job = "t_tp_udp";
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

static void crc(void)
{
	unsigned char b[4099];
	int same = 1;

	is_int(tp_crc32c(0, "123456789", 9), 0xe3069283, "CRC32C check value (hw=%d)",
	       tp_crc32c_hw());
	is_int(tp_crc32c_sw(0, "123456789", 9), 0xe3069283, "CRC32C check value, table");
	for (size_t len = 0; len < sizeof(b); len += 1 + len / 3) {
		fill(b, len, (uint32_t)len);
		for (size_t off = 0; off < 9 && off <= len; off++)
			same &=
			    tp_crc32c(0, b + off, len - off) == tp_crc32c_sw(0, b + off, len - off);
	}
	ok(same, "instruction and table agree at every length and alignment");
	is_int(tp_crc32c(tp_crc32c(0, "12345", 5), "6789", 4), 0xe3069283, "chained");
}

static void setup_env(const char *faults, const char *seq0)
{
	setenv("LAMKIT_TP", "udp", 1);
	setenv("LAMKIT_UDP_ROUTES", "127.0.0.1:0,127.0.0.2:0", 1);
	setenv("LAMKIT_UDP_PKT", "1024", 1); /* fragments above 1 KiB span several datagrams */
	if (faults)
		setenv("LAMKIT_UDP_FAULTS", faults, 1);
	else
		unsetenv("LAMKIT_UDP_FAULTS");
	if (seq0)
		setenv("LAMKIT_UDP_SEQ0", seq0, 1);
	else
		unsetenv("LAMKIT_UDP_SEQ0");
}

/* 10 000 fragments of 0..5 KiB through 20 % of each fault, both directions' acks suffering too. */
static void lossy(void)
{
	struct state s0 = {0}, s1 = {0};
	char err[256] = "";
	unsigned char *buf = malloc(6000);
	tp_t *a, *b;
	int fails = 0, n = 10000;
	size_t want = 0;
	double t0;

	kvs_n = 0;
	setup_env("drop=0.2,corrupt=0.2,dup=0.2,reorder=0.2,seed=11",
	          "8589931592"); /* 2^33 - 3000 */
	a = make(0, &s0, err);
	b = make(1, &s1, err);
	ok(a && b, "two endpoints %s", err);
	if (!a || !b || !buf)
		return;
	ok(matches(kvs_val[0], "^[^;]+;[^;]+;[0-9]+;127\\.0\\.0\\.1:[0-9]+:[0-9]+/[0-9]+/[0-9]+,"
	                       "127\\.0\\.0\\.2:[0-9]+:[0-9]+/[0-9]+/[0-9]+$"),
	   "card lists both routes: %s", kvs_val[0]);
	is_int(strcmp(tp_path_name(b, 0), "udp"), 0, "path is udp");
	t0 = now();
	for (int i = 0; i < n; i++) {
		size_t len = (size_t)((i * 2654435761u) % 5000u);
		struct hdr h = {(uint32_t)i, (uint32_t)len, 0, 0};
		fill(buf, len, (uint32_t)i);
		h.crc = tp_crc32c(0, buf, len);
		if (tp_send(b, 0, &h, sizeof(h), buf, len, NULL) != 0)
			fails++;
		want += len;
		if (tp_queued(b) > 256) /* as lib/mpi's backpressure does */
			POLL_UNTIL(a, b, 30, tp_queued(b) <= 64);
	}
	POLL_UNTIL(a, b, 60, s0.got >= n);
	is_int(fails, 0, "every send accepted and copied");
	is_int(s0.got, n, "%d fragments delivered exactly once (%.1f s)", n, now() - t0);
	is_int(s0.order_bad, 0, "in order");
	is_int(s0.bad, 0, "every byte verified against the sender's checksum");
	ok(s0.bytes == want, "all %zu bytes", want);
	POLL_UNTIL(a, b, 20, tp_queued(b) == 0);
	tp_destroy(a, 0);
	tp_destroy(b, 0);
	free(buf);
}

/* A receiver that does not read: the sender keeps at most a window in flight and holds the rest
 * as queued fragments; then everything arrives. Plus the completion order of cookies. */
static void window_and_order(void)
{
	struct state s0 = {0}, s1 = {0};
	char err[256] = "";
	size_t big = 4u << 20;
	unsigned char *buf = malloc(big), small[16];
	struct hdr h = {0, 0, 0, 0};
	tp_t *a, *b;
	int rc1, rc2, q;

	kvs_n = 0;
	setup_env(NULL, NULL);
	unsetenv("LAMKIT_UDP_PKT");
	a = make(0, &s0, err);
	b = make(1, &s1, err);
	if (!a || !b || !buf) {
		ok(0, "endpoints %s", err);
		return;
	}
	memset(small, 1, sizeof(small));
	for (int i = 0; i < 3000; i++) {
		h.n = (uint32_t)i;
		h.len = sizeof(small);
		h.crc = tp_crc32c(0, small, sizeof(small));
		tp_send(b, 0, &h, sizeof(h), small, sizeof(small), NULL);
	}
	for (double end = now() + 0.3; now() < end;)
		tp_poll(b);
	q = tp_queued(b);
	/* in flight: at most the window (1024 packets, LAMKIT_UDP_WINDOW), one packet each here */
	ok(q >= 3000 - 1024, "receiver not reading: %d of 3000 fragments wait at the sender", q);
	POLL_UNTIL(a, b, 20, s0.got == 3000);
	is_int(s0.got, 3000, "then all arrive");
	memset(buf, 0, big);
	h.n = 3000;
	h.len = (uint32_t)big;
	h.crc = tp_crc32c(0, buf, big);
	rc1 = tp_send(b, 0, &h, sizeof(h), buf, big, (void *)1);
	h.n = 3001;
	h.len = sizeof(small);
	h.crc = tp_crc32c(0, small, sizeof(small));
	rc2 = tp_send(b, 0, &h, sizeof(h), small, sizeof(small), (void *)2);
	is_int(rc1, 1, "big fragment kept by reference until acknowledged");
	is_int(rc2, 1, "small fragment with a cookie behind it kept too");
	POLL_UNTIL(a, b, 20, s0.got == 3002 && s1.sent == 2);
	is_int(s0.got, 3002, "both delivered");
	is_int(s0.bad + s0.order_bad, 0, "intact and in order");
	is_int(s1.order_bad, 0, "sent(cookie) of the small one after the big one");
	tp_destroy(a, 0);
	tp_destroy(b, 0);
	free(buf);
}

/* The peer goes away: the sender fails within the configured time, naming ranks and routes. */
static void peer_timeout(void)
{
	struct state s0 = {0}, s1 = {0};
	char err[256] = "";
	struct hdr h = {0, 0, 0, 0};
	tp_t *a, *b;
	int rc = 0;
	double t0, dt;

	kvs_n = 0;
	setup_env(NULL, NULL);
	setenv("LAMKIT_UDP_PEER_TIMEOUT_MS", "1000", 1);
	a = make(0, &s0, err);
	b = make(1, &s1, err);
	if (!a || !b) {
		ok(0, "endpoints %s", err);
		return;
	}
	tp_send(b, 0, &h, sizeof(h), NULL, 0, NULL);
	POLL_UNTIL(a, b, 5, s0.got == 1);
	tp_destroy(a, 0); /* gone without a word */
	t0 = now();
	h.n = 1;
	tp_send(b, 0, &h, sizeof(h), NULL, 0, NULL);
	while (now() < t0 + 10 && (rc = tp_poll(b)) >= 0)
		;
	dt = now() - t0;
	is_int(rc, -1, "tp_poll fails");
	ok(dt > 0.9 && dt < 3, "after the 1 s peer timeout (%.2f s)", dt);
	ok(matches(tp_error(b),
	           "^udp: rank 1 \\([^)]+\\) got no answer from rank 0 \\([^)]+\\) for "
	           "[0-9.]+ s; routes tried: 127\\.0\\.0\\.1->127\\.0\\.0\\.1:[0-9]+ "
	           "\\(down\\), 127\\.0\\.0\\.2->127\\.0\\.0\\.2:[0-9]+ \\(down\\)$"),
	   "one line names both ranks, hosts and routes: %s", tp_error(b));
	tp_destroy(b, 0);
	unsetenv("LAMKIT_UDP_PEER_TIMEOUT_MS");
}

static void bad_env(void)
{
	struct state s0 = {0};
	char err[256] = "";
	tp_t *a;

	kvs_n = 0;
	setup_env("drop=2", NULL);
	a = make(0, &s0, err);
	ok(!a && strstr(err, "LAMKIT_UDP_FAULTS='drop=2'"), "bad LAMKIT_UDP_FAULTS refused: %s",
	   err);
	setup_env(NULL, NULL);
	setenv("LAMKIT_UDP_ROUTES", "nonsense", 1);
	a = make(0, &s0, err);
	ok(!a && strstr(err, "LAMKIT_UDP_ROUTES item 'nonsense'"),
	   "bad LAMKIT_UDP_ROUTES refused: %s", err);
	setup_env(NULL, NULL);
	setenv("LAMKIT_TP", "carrier-pigeon", 1);
	a = make(0, &s0, err);
	ok(!a && strstr(err, "LAMKIT_TP='carrier-pigeon'"), "unknown LAMKIT_TP refused: %s", err);
}

int main(void)
{
	crc();
	lossy();
	window_and_order();
	peer_timeout();
	bad_env();
	return done_testing();
}
