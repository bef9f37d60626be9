/* tests/unit/t_boot_auth.c: universe key text form and boot_sconn handshake, sealing, rejects. */
#include "auth.h"
#include "conn.h"
#include "core.h"
#include "ev.h"
#include "tap.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG (1u << 20)

static core_ev_t *ev;
static int (*done_fn)(void);
static int watchdog_fired;
static unsigned char key1[BOOT_KEY_LEN], key2[BOOT_KEY_LEN];

struct end {
	boot_sconn_t *s;
	int ready, closed, err, nframes, bad, keep_on_close, destroy_on_ready, destroy_on_frame;
	int pause_on_ready;
	int send_set; /* on ready: 0 none, 1 = 0 B/1 B/1 MiB/small, 2 = three small frames */
	unsigned types[16];
	size_t lens[16];
	char why[400];
};

static void poke(void)
{
	if (done_fn && done_fn())
		core_ev_stop(ev);
}

static void on_watchdog(core_ev_t *e, void *arg)
{
	watchdog_fired = 1;
	core_ev_stop(e);
}

/* Run the loop until done_fn says so; 1, or 0 when the 5 s watchdog ended it. */
static int run(int (*fn)(void))
{
	done_fn = fn;
	watchdog_fired = 0;
	int64_t id = core_ev_timer(ev, 5000, on_watchdog, NULL);
	if (!fn())
		core_ev_run(ev);
	core_ev_timer_cancel(ev, id);
	done_fn = NULL;
	return !watchdog_fired;
}

static unsigned char pat(size_t i, size_t len, unsigned type)
{
	return (unsigned char)(i * 31u + len + type);
}

static char *pattern(size_t len, unsigned type)
{
	char *p = malloc(len ? len : 1);
	for (size_t i = 0; i < len; i++)
		p[i] = (char)pat(i, len, type);
	return p;
}

static void send_pattern(boot_sconn_t *s, unsigned type, size_t len)
{
	char *p = pattern(len, type);
	size_t half = len / 2; /* exercise the two-piece form */
	if (boot_sconn_send(s, type, p, half, p + half, len - half) < 0)
		printf("# send of %zu bytes failed: %s\n", len, strerror(errno));
	free(p);
}

static void e_ready(boot_sconn_t *s, void *arg)
{
	struct end *e = arg;
	e->ready = 1;
	if (e->pause_on_ready)
		boot_sconn_pause(s, 1);
	if (e->destroy_on_ready) {
		boot_sconn_destroy(s);
		e->s = NULL;
	} else if (e->send_set == 1) {
		send_pattern(s, 1, 0);
		send_pattern(s, 2, 1);
		send_pattern(s, 3, BIG);
		send_pattern(s, 4, 100);
	} else if (e->send_set == 2) {
		for (unsigned t = 1; t <= 3; t++)
			send_pattern(s, t, 10 * t);
	}
	poke();
}

static void e_frame(boot_sconn_t *s, unsigned type, const char *d, size_t len, void *arg)
{
	struct end *e = arg;
	if (e->nframes < 16) {
		e->types[e->nframes] = type;
		e->lens[e->nframes] = len;
	}
	e->nframes++;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)d[i] != pat(i, len, type)) {
			e->bad++;
			break;
		}
	if (e->destroy_on_frame) {
		boot_sconn_destroy(s);
		e->s = NULL;
	}
	poke();
}

static void e_close(boot_sconn_t *s, int err, const char *why, void *arg)
{
	struct end *e = arg;
	e->closed++;
	e->err = err;
	snprintf(e->why, sizeof e->why, "%s", why);
	if (!e->keep_on_close) {
		boot_sconn_destroy(s);
		e->s = NULL;
	}
	poke();
}

static const struct boot_sconn_cbs cbs = {e_ready, e_frame, e_close};

static struct end A, B;

static void reset(void)
{
	boot_sconn_destroy(A.s);
	boot_sconn_destroy(B.s);
	memset(&A, 0, sizeof A);
	memset(&B, 0, sizeof B);
}

static void pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
}

static boot_sconn_t *mk(int fd, int initiator, const unsigned char *key, const char *peer,
                        struct end *e)
{
	e->s = boot_sconn_create(ev, fd, initiator, key, peer, 2000, &cbs, e);
	return e->s;
}

static int both_closed(void)
{
	return A.closed && B.closed;
}
static int b_closed(void)
{
	return B.closed > 0;
}
static int a_closed(void)
{
	return A.closed > 0;
}
static int both_got4(void)
{
	return A.nframes >= 4 && B.nframes >= 4;
}
static int b_got3(void)
{
	return B.nframes >= 3;
}

static void check_set1(struct end *e, const char *who)
{
	static const size_t lens[4] = {0, 1, BIG, 100};
	int good = e->nframes == 4 && !e->bad;
	for (int i = 0; good && i < 4; i++)
		good = e->types[i] == (unsigned)i + 1 && e->lens[i] == lens[i];
	ok(good, "%s got 0 B, 1 B, 1 MiB, 100 B in order and intact", who);
}

static void test_ok(void)
{
	int sv[2];
	pair(sv);
	A.send_set = B.send_set = 1;
	mk(sv[0], 1, key1, "10.88.1.12:4711", &A);
	mk(sv[1], 0, key1, "10.88.1.1:5000", &B);
	ok(A.s && B.s, "both ends created");
	is_int(boot_sconn_send(A.s, 1, "x", 1, NULL, 0), -1, "send before the handshake fails");
	is_int(errno, ENOTCONN, "... with ENOTCONN");
	ok(!A.ready && !B.ready, "no callback ran inside create");
	ok(run(both_got4), "handshake and frames done");
	ok(A.ready && B.ready && !A.closed && !B.closed, "both ready, none closed");
	check_set1(&A, "initiator");
	check_set1(&B, "responder");
	is_str(boot_sconn_peer(A.s), "10.88.1.12:4711", "peer text kept");
	ok(boot_sconn_ready(A.s), "ready reported");
	is_int(boot_sconn_send(A.s, 0xFF01, "x", 1, NULL, 0), -1, "reserved type refused");
	is_int(errno, EINVAL, "... with EINVAL");
	is_int(boot_sconn_send(A.s, 1, "x", BOOT_SCONN_FRAME_MAX, "y", 1), -1, "oversize refused");
	is_int(errno, EMSGSIZE, "... with EMSGSIZE");
	ok(boot_sconn_flush(A.s, 1000) == 0 && boot_sconn_queued(A.s) == 0, "flush empties");
	boot_sconn_destroy(A.s);
	A.s = NULL;
	ok(run(b_closed), "responder sees the close");
	is_int(B.err, 0, "a close after the handshake is clean (err 0)");
	ok(strstr(B.why, "10.88.1.1:5000: ") == B.why, "reason names the peer: %s", B.why);
	reset();
}

static void test_wrong_key(void)
{
	int sv[2];
	pair(sv);
	A.send_set = B.send_set = 1;
	A.keep_on_close = 1;
	mk(sv[0], 1, key1, "10.88.1.1:5000", &A);
	mk(sv[1], 0, key2, "10.88.1.12:4711", &B);
	ok(run(both_closed), "wrong key: both sides close");
	ok(A.err == EACCES && B.err == EACCES, "both with EACCES (%d, %d)", A.err, B.err);
	is_str(B.why, "10.88.1.12:4711: authentication failed (wrong universe key?)",
	       "responder reason");
	is_str(A.why, "10.88.1.1:5000: authentication failed (wrong universe key?)",
	       "initiator reason");
	ok(!A.ready && !B.ready && A.nframes == 0 && B.nframes == 0, "no ready, no frame");
	is_int(boot_sconn_send(A.s, 1, "x", 1, NULL, 0), -1, "send after close fails");
	is_int(errno, EPIPE, "... with EPIPE");
	ok(boot_sconn_queued(A.s) == 0 && !boot_sconn_congested(A.s), "pass-throughs after close");
	is_int(A.closed, 1, "close reported once");
	reset();
}

/* {==== a frame-level man in the middle: A <-> proxy <-> B */

enum { P_PASS, P_TAMPER, P_REPLAY, P_REORDER, P_RETYPE, P_INJECT, P_SHORT, P_HS, P_BIG };

static struct proxy {
	core_conn_t *a, *b;
	int mode, k;
	char held[64];
	size_t heldlen;
} px;

static void put_hdr(char *h, uint32_t len, unsigned type)
{
	for (int i = 0; i < 4; i++)
		h[i] = (char)(len >> (8 * i));
	h[4] = (char)(type & 0xff);
	h[5] = (char)(type >> 8);
	h[6] = h[7] = 0;
}

static void px_app_frame(unsigned type, const char *d, size_t len)
{
	char buf[64], hdr[8];
	memcpy(buf, d, len < sizeof buf ? len : sizeof buf);
	int k = px.k++;
	if (px.mode == P_TAMPER && k == 1)
		buf[len / 2] ^= 0x01;
	if (px.mode == P_RETYPE && k == 0)
		type = 2;
	if (px.mode == P_INJECT && k == 0)
		core_conn_send(px.b, 7, "0123456789abcdef0123456789abcdef", 32, NULL, 0);
	if (px.mode == P_SHORT && k == 0)
		core_conn_send(px.b, 7, "abc", 3, NULL, 0);
	if (px.mode == P_HS && k == 0)
		core_conn_send(px.b, 0xFF02, buf, 32 < len ? 32 : len, NULL, 0);
	if (px.mode == P_BIG && k == 1) {
		core_conn_flush(px.b, 1000);
		put_hdr(hdr, CORE_FRAME_MAX + 1, 1);
		if (write(core_conn_fd(px.b), hdr, 8) != 8)
			printf("# raw write failed\n");
	}
	if (px.mode == P_REORDER && k == 0) {
		memcpy(px.held, buf, len);
		px.heldlen = len;
		return;
	}
	core_conn_send(px.b, type, buf, len, NULL, 0);
	if (px.mode == P_REPLAY && k == 0)
		core_conn_send(px.b, type, buf, len, NULL, 0);
	if (px.mode == P_REORDER && k == 1)
		core_conn_send(px.b, 1, px.held, px.heldlen, NULL, 0);
}

static void px_frame(core_conn_t *c, unsigned type, const char *d, size_t len, void *arg)
{
	if (c == px.b)
		core_conn_send(px.a, type, d, len, NULL, 0);
	else if (type >= 0xFF00)
		core_conn_send(px.b, type, d, len, NULL, 0);
	else
		px_app_frame(type, d, len);
}

static void px_close(core_conn_t *c, int err, void *arg)
{
	core_conn_destroy(px.a);
	core_conn_destroy(px.b);
	px.a = px.b = NULL;
}

static void proxied(int mode)
{
	int s1[2], s2[2];
	pair(s1);
	pair(s2);
	memset(&px, 0, sizeof px);
	px.mode = mode;
	px.a = core_conn_create(ev, s1[1], px_frame, px_close, NULL);
	px.b = core_conn_create(ev, s2[0], px_frame, px_close, NULL);
	A.send_set = 2;
	mk(s1[0], 1, key1, "boot", &A);
	mk(s2[1], 0, key1, "agent", &B);
}

static void proxy_done(void)
{
	core_conn_destroy(px.a);
	core_conn_destroy(px.b);
	px.a = px.b = NULL;
	reset();
}

static void test_proxy_pass(void)
{
	proxied(P_PASS);
	ok(run(b_got3), "through a passive relay: handshake and frames work");
	ok(B.nframes == 3 && !B.bad && !B.closed, "relay delivers 3 intact frames");
	proxy_done();
}

static void expect_reject(int mode, const char *what, int nframes, int err, const char *needle)
{
	proxied(mode);
	ok(run(b_closed), "%s: receiver closes", what);
	is_int(B.err, err, "%s: error code", what);
	is_int(B.nframes, nframes, "%s: %d frame(s) delivered before it", what, nframes);
	ok(strstr(B.why, needle) != NULL && strncmp(B.why, "agent: ", 7) == 0, "%s: reason: %s",
	   what, B.why);
	proxy_done();
}

/* }==== */

/* {==== raw peers: garbage, silence, reflection */

static void raw_frame(int fd, unsigned type, const void *p, size_t len)
{
	char h[8];
	put_hdr(h, (uint32_t)len, type);
	if (write(fd, h, 8) != 8 || (len && write(fd, p, len) != (ssize_t)len))
		printf("# raw write failed\n");
}

static void hello(unsigned char *h, unsigned char version, unsigned char role)
{
	memcpy(h, "LKSC", 4);
	h[4] = version;
	h[5] = role;
	h[6] = h[7] = 0;
	memset(h + 8, 0x5a, 32);
}

static void garbage_case(const char *what, const void *bytes, size_t n, int as_frame, unsigned type,
                         const char *needle)
{
	int sv[2];
	pair(sv);
	mk(sv[1], 0, key1, "10.0.0.9:1", &B);
	if (as_frame)
		raw_frame(sv[0], type, bytes, n);
	else if (write(sv[0], bytes, n) != (ssize_t)n)
		printf("# raw write failed\n");
	ok(run(b_closed), "%s: closed", what);
	ok(!B.ready && B.nframes == 0 && B.err == EPROTO, "%s: EPROTO, nothing delivered (%d)",
	   what, B.err);
	ok(strstr(B.why, needle) != NULL, "%s: reason: %s", what, B.why);
	close(sv[0]);
	reset();
}

static void test_garbage(void)
{
	unsigned char h[40];
	const char *http = "GET / HTTP/1.0\r\n\r\n";
	garbage_case("HTTP request", http, strlen(http), 0, 0, "not a lamkit peer");
	garbage_case("app frame first", "hello", 5, 1, 7, "before the handshake finished");
	hello(h, 1, 'I');
	h[0] = 'X';
	garbage_case("bad magic", h, sizeof h, 1, 0xFF01, "malformed hello");
	hello(h, 1, 'I');
	garbage_case("short hello", h, 39, 1, 0xFF01, "malformed hello");
	hello(h, 2, 'I');
	garbage_case("version 2", h, sizeof h, 1, 0xFF01, "version 2");
	hello(h, 1, 'X');
	garbage_case("bad role", h, sizeof h, 1, 0xFF01, "malformed hello");
}

static void test_timeout(void)
{
	int sv[2];
	unsigned char h[40];
	pair(sv);
	int64_t t0 = core_now_ms(); /* before the timer starts: a busy machine may pause us here */
	B.s = boot_sconn_create(ev, sv[1], 0, key1, "10.0.0.9:2", 150, &cbs, &B);
	ok(run(b_closed), "silent peer: closed");
	ok(B.err == ETIMEDOUT && core_now_ms() - t0 >= 140, "after the timeout, ETIMEDOUT");
	ok(strstr(B.why, "10.0.0.9:2: handshake not finished after 150 ms") != NULL, "reason: %s",
	   B.why);
	close(sv[0]);
	reset();

	pair(sv);
	hello(h, 1, 'R');
	raw_frame(sv[0], 0xFF01, h, sizeof h); /* a hello, then never a proof */
	A.s = boot_sconn_create(ev, sv[1], 1, key1, "10.0.0.9:3", 150, &cbs, &A);
	ok(run(a_closed) && A.err == ETIMEDOUT && !A.ready, "hello without proof: timeout (%s)",
	   A.why);
	close(sv[0]);
	reset();
}

static void test_dead_at_create(void)
{
	int sv[2];
	pair(sv);
	close(sv[0]);
	mk(sv[1], 0, key1, "gone:1", &B);
	ok(B.s != NULL && !B.closed, "peer already gone: created, no callback inside create");
	ok(run(b_closed) && B.err == EPIPE && !B.ready, "failure reported from the loop: %s",
	   B.why);
	reset();
}

static void test_same_role(int initiator)
{
	int sv[2];
	pair(sv);
	mk(sv[0], initiator, key1, "x:1", &A);
	mk(sv[1], initiator, key1, "x:2", &B);
	ok(run(both_closed), "two %ss: both close", initiator ? "initiator" : "responder");
	ok(A.err == EACCES && B.err == EACCES && strstr(B.why, "reflected") && !A.ready && !B.ready,
	   "... as reflected: %s", B.why);
	reset();
}

/* Echo the responder's own messages back to it, the role byte flipped to pass the check. */
static core_conn_t *mirror;

static void mirror_frame(core_conn_t *c, unsigned type, const char *d, size_t len, void *arg)
{
	char buf[64];
	memcpy(buf, d, len < sizeof buf ? len : sizeof buf);
	if (type == 0xFF01 && len == 40)
		buf[5] = 'I';
	core_conn_send(c, type, buf, len, NULL, 0);
}

static void mirror_close(core_conn_t *c, int err, void *arg)
{
	core_conn_destroy(mirror);
	mirror = NULL;
}

static void test_reflection(void)
{
	int sv[2];
	test_same_role(0);
	test_same_role(1);
	pair(sv);
	mirror = core_conn_create(ev, sv[0], mirror_frame, mirror_close, NULL);
	mk(sv[1], 0, key1, "mirror:1", &B);
	ok(run(b_closed), "mirrored responder: closed");
	ok(B.err == EACCES && !B.ready && strstr(B.why, "authentication failed"),
	   "own proof reflected back is rejected: %s", B.why);
	core_conn_destroy(mirror);
	mirror = NULL;
	reset();
}

/* }==== */

static int b_gone_a_closed(void)
{
	return B.s == NULL && A.closed;
}

static void test_destroy_in_callbacks(void)
{
	int sv[2];
	pair(sv);
	A.send_set = 2;
	B.destroy_on_frame = 1;
	mk(sv[0], 1, key1, "a", &A);
	mk(sv[1], 0, key1, "b", &B);
	ok(run(b_gone_a_closed), "destroy inside on_frame");
	ok(B.nframes == 1 && !B.closed, "... no frame and no close after it");
	reset();

	pair(sv);
	A.destroy_on_ready = 1;
	mk(sv[0], 1, key1, "a", &A);
	mk(sv[1], 0, key1, "b", &B);
	ok(run(b_closed) && A.s == NULL && !A.closed, "destroy inside on_ready (%s)", B.why);
	reset();
}

static int frames_at_unpause = -1;

static void unpause(core_ev_t *e, void *arg)
{
	frames_at_unpause = B.nframes;
	boot_sconn_pause(B.s, 0);
}

static void test_pause(void)
{
	int sv[2];
	pair(sv);
	A.send_set = 2;
	B.pause_on_ready = 1;
	mk(sv[0], 1, key1, "a", &A);
	mk(sv[1], 0, key1, "b", &B);
	core_ev_timer(ev, 100, unpause, NULL);
	ok(run(b_got3), "paused receiver gets its frames after resuming");
	ok(frames_at_unpause == 0 && B.nframes == 3 && !B.bad, "none while paused, 3 after");
	reset();
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void test_hex(void)
{
	unsigned char k[BOOT_KEY_LEN], back[BOOT_KEY_LEN];
	char hex[BOOT_KEY_HEX_LEN + 1], buf[80];

	ok(boot_key_generate(k) == 0, "key generated");
	boot_key_to_hex(k, hex);
	ok(strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64, "hex is 64 lowercase");
	ok(boot_key_from_hex(back, hex, 64) == 0 && memcmp(k, back, 32) == 0, "round trip");
	snprintf(buf, sizeof buf, "%s\n", hex);
	ok(boot_key_from_hex(back, buf, 65) == 0 && memcmp(k, back, 32) == 0, "trailing newline");
	for (int i = 0; i < 64; i++)
		buf[i] = (char)(hex[i] >= 'a' ? hex[i] - 32 : hex[i]);
	ok(boot_key_from_hex(back, buf, 64) == 0 && memcmp(k, back, 32) == 0, "uppercase ok");
	ok(boot_key_from_hex(back, hex, 63) < 0 && errno == EINVAL, "63 digits: EINVAL");
	ok(all_zero(back, sizeof back), "key zeroed on failure");
	snprintf(buf, sizeof buf, "%s0", hex);
	ok(boot_key_from_hex(back, buf, 65) < 0, "65 digits rejected");
	snprintf(buf, sizeof buf, "%s\n\n", hex);
	ok(boot_key_from_hex(back, buf, 66) < 0, "two newlines rejected");
	snprintf(buf, sizeof buf, "%s\r\n", hex);
	ok(boot_key_from_hex(back, buf, 66) < 0, "CRLF rejected");
	snprintf(buf, sizeof buf, " %s", hex);
	ok(boot_key_from_hex(back, buf, 65) < 0, "leading space rejected");
	memcpy(buf, hex, 65);
	buf[10] = 'g';
	ok(boot_key_from_hex(back, buf, 64) < 0, "non-hex digit rejected");
	buf[10] = '\0';
	ok(boot_key_from_hex(back, buf, 64) < 0, "embedded NUL rejected");
	ok(boot_key_from_hex(back, "", 0) < 0 && boot_key_from_hex(back, NULL, 64) < 0,
	   "empty and NULL rejected");
	boot_key_wipe(k, sizeof k);
	boot_key_wipe(hex, sizeof hex);
	ok(k[0] == 0 && k[31] == 0 && hex[0] == 0, "wipe zeroes");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	ev = core_ev_create();
	boot_key_generate(key1);
	boot_key_generate(key2);
	ok(boot_sconn_create(ev, 0, 1, key1, "x", 0, NULL, NULL) == NULL && errno == EINVAL,
	   "create without callbacks: EINVAL");
	test_hex();
	test_ok();
	test_wrong_key();
	test_proxy_pass();
	expect_reject(P_TAMPER, "tampered byte", 1, EACCES, "frame 1 rejected");
	expect_reject(P_REPLAY, "replayed frame", 1, EACCES, "frame 1 rejected");
	expect_reject(P_REORDER, "reordered frames", 0, EACCES, "frame 0 rejected");
	expect_reject(P_RETYPE, "changed frame type", 0, EACCES, "authentication failed");
	expect_reject(P_INJECT, "garbage after handshake", 0, EACCES, "authentication failed");
	expect_reject(P_SHORT, "3-byte frame", 0, EPROTO, "malformed sealed frame");
	expect_reject(P_HS, "handshake message later", 0, EPROTO, "after the handshake");
	expect_reject(P_BIG, "oversized frame", 1, EMSGSIZE, "frame too large");
	test_garbage();
	test_timeout();
	test_dead_at_create();
	test_reflection();
	test_destroy_in_callbacks();
	test_pause();
	core_ev_destroy(ev);
	return done_testing();
}
