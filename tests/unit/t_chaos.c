/* tests/unit/t_chaos.c: the chaos relay: its seeded decisions, then real datagrams through it. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"
#include "tap.h"

/*
 * Part 1 drives chaos.c directly (counts over 200 000 verdicts, seeds, windows, parsing).
 * Part 2 starts the real chaos-relay (out[/asan]/testprogs, next to this test's directory) on
 * 127.0.0.1 and sends numbered datagrams through it in paced bursts, so no datagram is lost in
 * a kernel buffer: the relay's own "received" must equal what was sent. Every datagram is a
 * function of its number, so the receiver tells a clean copy from one with a flipped bit.
 * Statistical bounds are 5 standard deviations: a false failure is a one-in-a-million event,
 * and the seeds are fixed anyway.
 */

#define DGRAM 64

static char relay[PATH_MAX + 64], tmpdir[] = "/tmp/t_chaos.XXXXXX";

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static double root(double v)
{
	double x = v > 1 ? v : 1;
	for (int i = 0; i < 60; i++)
		x = (x + v / x) / 2;
	return x;
}

/* within: COUNT is within 5 sigma of N trials at probability P. */
static int within(long count, long n, double p)
{
	double mean = (double)n * p, sd = root((double)n * p * (1 - p)), dev = (double)count - mean;
	return (dev < 0 ? -dev : dev) <= 5 * sd + 1;
}

/* {==== part 1: decisions */

static void test_engine(void)
{
	struct chaos_rng a, b, c;
	int same = 1, differ = 0, differ_pair = 0;
	chaos_seed(&a, 7, 0);
	chaos_seed(&b, 7, 0);
	chaos_seed(&c, 8, 0);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = chaos_next(&a), y = chaos_next(&b), z = chaos_next(&c);
		same &= x == y;
		differ += x != z;
	}
	chaos_seed(&a, 7, 0);
	chaos_seed(&b, 7, 1);
	for (int i = 0; i < 1000; i++)
		differ_pair += chaos_next(&a) != chaos_next(&b);
	ok(same, "same seed, same pair: the same 1000 numbers");
	ok(differ == 1000 && differ_pair == 1000, "another seed or pair: another stream");

	const long n = 200000;
	struct chaos_knobs k = {.drop = 0.05, .corrupt = 0.1, .dup = 0.02, .reorder = 0.2};
	long drops = 0, corrupt = 0, dups = 0, reorders = 0, bits[32] = {0};
	int bit_ok = 1;
	chaos_seed(&a, 1, 0);
	for (long i = 0; i < n; i++) {
		struct chaos_verdict v = chaos_decide(&k, &a, 4, 0);
		drops += v.drop;
		if (v.drop)
			continue;
		if (v.corrupt_bit >= 0) {
			corrupt++;
			bit_ok &= v.corrupt_bit < 32;
			if (v.corrupt_bit < 32)
				bits[v.corrupt_bit]++;
		}
		dups += v.dup;
		reorders += v.reorder;
	}
	long kept = n - drops, bits_in = 0;
	ok(within(drops, n, 0.05), "drop 0.05: %ld of %ld", drops, n);
	ok(within(corrupt, kept, 0.1), "corrupt 0.1: %ld of %ld kept", corrupt, kept);
	ok(within(dups, kept, 0.02), "dup 0.02: %ld of %ld kept", dups, kept);
	ok(within(reorders, kept, 0.2), "reorder 0.2: %ld of %ld kept", reorders, kept);
	for (int i = 0; i < 32; i++)
		bits_in += within(bits[i], corrupt, 1.0 / 32);
	ok(bit_ok && bits_in == 32,
	   "flipped bits spread evenly over the 32 bits of a 4-byte datagram");

	struct chaos_knobs none = {0}, all = {.corrupt = 1, .dup = 1, .reorder = 1};
	struct chaos_knobs drop_all = {.drop = 1};
	int never = 0, always = 1, dropped = 1;
	for (int i = 0; i < 10000; i++) {
		struct chaos_verdict v = chaos_decide(&none, &a, 100, 0);
		never += v.drop || v.blackhole || v.corrupt_bit >= 0 || v.dup || v.reorder;
		v = chaos_decide(&all, &a, 100, 0);
		always &=
		    !v.drop && v.corrupt_bit >= 0 && v.corrupt_bit < 800 && v.dup && v.reorder;
		dropped &= chaos_decide(&drop_all, &a, 100, 0).drop;
	}
	ok(!never && always && dropped, "probability 0 never fires, 1 always does");
	ok(chaos_decide(&all, &a, 0, 0).corrupt_bit == -1, "an empty datagram is never corrupted");

	struct chaos_knobs w = {0};
	ok(chaos_parse_window(&w, "1.5:2.25") == 0 && w.from_ms[0] == 1500 && w.to_ms[0] == 2250,
	   "--blackhole 1.5:2.25 is [1500, 2250) ms");
	ok(!chaos_in_window(&w, 1499) && chaos_in_window(&w, 1500) && chaos_in_window(&w, 2249) &&
	       !chaos_in_window(&w, 2250),
	   "window edges: from included, to excluded");
	ok(chaos_decide(&w, &a, 10, 2000).blackhole && !chaos_decide(&w, &a, 10, 3000).blackhole,
	   "a datagram inside the window is blackholed, after it not");
	ok(chaos_parse_window(&w, "2:1") < 0 && chaos_parse_window(&w, "1") < 0 &&
	       chaos_parse_window(&w, "a:2") < 0 && chaos_parse_window(&w, "1:2x") < 0 &&
	       chaos_parse_window(&w, "-1:2") < 0,
	   "bad windows refused");
	double p = -1;
	ok(chaos_parse_prob("0.05", &p) == 0 && p == 0.05 && chaos_parse_prob("1.01", &p) < 0 &&
	       chaos_parse_prob("-0.1", &p) < 0 && chaos_parse_prob("nan", &p) < 0 &&
	       chaos_parse_prob("", &p) < 0 && chaos_parse_prob("0.1x", &p) < 0,
	   "probabilities outside [0, 1] or malformed refused");
}

/* {==== part 2: helpers around the real relay */

struct relay {
	pid_t pid;
	unsigned port; /* of pair 0 */
	uint64_t start_ms;
	char stats[PATH_MAX], ready[PATH_MAX], err[PATH_MAX];
};

static int udp_socket(struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), v = 8 << 20;
	socklen_t len = sizeof(*a);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)a, &len) != 0) {
		perror("t_chaos: bind");
		exit(1);
	}
	return fd;
}

/* relay_start: start the relay with ARGS (NULL-terminated) plus --stats/--ready/--lifetime, and
 * wait (5 s) for its ready file. Returns 0, or -1 if it exited or never got ready. */
static int relay_start(struct relay *r, const char *const *args)
{
	static int nth;
	const char *argv[64];
	int n = 0;
	nth++;
	snprintf(r->stats, sizeof(r->stats), "%s/stats%d", tmpdir, nth);
	snprintf(r->ready, sizeof(r->ready), "%s/ready%d", tmpdir, nth);
	snprintf(r->err, sizeof(r->err), "%s/err%d", tmpdir, nth);
	argv[n++] = relay;
	argv[n++] = "--lifetime";
	argv[n++] = "60"; /* should this test die, the relay still goes away (ARGS may override) */
	while (*args && n < 56)
		argv[n++] = *args++;
	argv[n++] = "--stats";
	argv[n++] = r->stats;
	argv[n++] = "--ready";
	argv[n++] = r->ready;
	argv[n] = NULL;
	fflush(stdout);
	if ((r->pid = fork()) == 0) {
		int fd = open(r->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0)
			dup2(fd, 2);
		execv(relay, (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(r->ready, "re");
		unsigned long long start;
		unsigned port;
		if (f) {
			int got = fscanf(f,
			                 "# chaos-relay pid=%*d start_ms=%llu seed=%*u "
			                 "pair=0 listen=%*[0-9.]:%u",
			                 &start, &port);
			fclose(f);
			if (got == 2) {
				r->start_ms = start;
				r->port = port;
				return 0;
			}
		}
		if (waitpid(r->pid, NULL, WNOHANG) == r->pid)
			break;
		usleep(10000);
	}
	kill(r->pid, SIGKILL);
	waitpid(r->pid, NULL, 0);
	return -1;
}

/* relay_wait: wait up to MS for the relay to exit; its exit status, or -1 (then it is killed). */
static int relay_wait(struct relay *r, int ms)
{
	int st;
	for (int i = 0; i < ms / 10; i++) {
		if (waitpid(r->pid, &st, WNOHANG) == r->pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(r->pid, SIGKILL);
	waitpid(r->pid, NULL, 0);
	return -1;
}

static int relay_stop(struct relay *r)
{
	kill(r->pid, SIGTERM);
	return relay_wait(r, 5000);
}

/* stat_of: counter KEY of pair PAIR in FILE, or -1. */
static long stat_of(const char *file, int pair, const char *key)
{
	char line[2048], want[32], k[64];
	long v = -1;
	FILE *f = fopen(file, "re");
	if (!f)
		return -1;
	snprintf(want, sizeof(want), "pair=%d ", pair);
	snprintf(k, sizeof(k), " %s=", key);
	while (fgets(line, sizeof(line), f)) {
		char *p;
		if (strncmp(line, want, strlen(want)) == 0 && (p = strstr(line, k)))
			v = strtol(p + strlen(k), NULL, 10);
	}
	fclose(f);
	return v;
}

/* balanced: the relay's accounting adds up for pair PAIR. */
static int balanced(const char *file, int pair)
{
	const char *out[] = {"forwarded",   "dropped", "blackholed", "overflow",
	                     "send_errors", "unsent",  "queued"};
	long in = stat_of(file, pair, "received") + stat_of(file, pair, "duplicated"), sum = 0;
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++)
		sum += stat_of(file, pair, out[i]);
	return in >= 0 && in == sum;
}

static void fill(unsigned char *d, uint64_t seq)
{
	uint64_t inv = ~seq, x = seq * 0x9e3779b97f4a7c15ULL + 1;
	memcpy(d, &seq, 8);
	memcpy(d + 8, &inv, 8);
	for (int i = 16; i < DGRAM; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		d[i] = (unsigned char)x;
	}
}

static int hamming(const unsigned char *a, const unsigned char *b)
{
	int n = 0;
	for (int i = 0; i < DGRAM; i++)
		n += __builtin_popcount((unsigned)(a[i] ^ b[i]));
	return n;
}

/* identify: the number of datagram D (of N sent) and its flipped bits; -1 if none fits with at
 * most one flipped bit (the flip may have hit either copy of the number). */
static long identify(const unsigned char *d, long n, int *flips)
{
	uint64_t cand[2], inv;
	unsigned char want[DGRAM];
	memcpy(&cand[0], d, 8);
	memcpy(&inv, d + 8, 8);
	cand[1] = ~inv;
	for (int i = 0; i < 2; i++) {
		if (cand[i] >= (uint64_t)n)
			continue;
		fill(want, cand[i]);
		if ((*flips = hamming(d, want)) <= 1)
			return (long)cand[i];
	}
	return -1;
}

struct rx {
	long got, corrupt, bad, dup_seen, inversions, max_seq;
	unsigned char *count; /* copies received, per number */
};

static void rx_one(struct rx *x, const unsigned char *d, ssize_t len, long n)
{
	int flips = 0;
	long s = len == DGRAM ? identify(d, n, &flips) : -1;
	x->got++;
	if (s < 0) {
		x->bad++;
		return;
	}
	x->corrupt += flips;
	if (x->count[s]++)
		x->dup_seen++;
	if (s < x->max_seq && x->count[s] == 1)
		x->inversions++;
	if (s > x->max_seq)
		x->max_seq = s;
}

/* rx_drain: read FD until it has been quiet for QUIET_MS. */
static void rx_drain(struct rx *x, int fd, long n, int quiet_ms)
{
	unsigned char d[2048];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (poll(&p, 1, quiet_ms) > 0)
		rx_one(x, d, recv(fd, d, sizeof(d), 0), n);
}

/* flood: send datagrams 0..N-1 to PORT in bursts of 32, receiving on RFD in between. */
static void flood(struct rx *x, int sfd, int rfd, unsigned port, long n)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	unsigned char d[DGRAM];
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(x, 0, sizeof(*x));
	x->count = calloc((size_t)n, 1);
	x->max_seq = -1;
	for (long i = 0; i < n; i++) {
		fill(d, (uint64_t)i);
		sendto(sfd, d, DGRAM, 0, (struct sockaddr *)&to, sizeof(to));
		if (i % 32 == 31)
			rx_drain(x, rfd, n, 1);
	}
	rx_drain(x, rfd, n, 300);
}

static void rx_free(struct rx *x)
{
	free(x->count);
}

/* knob_run: N datagrams through a relay started with ARGS; fills X and the relay's stats file. */
static int knob_run(struct relay *r, struct rx *x, const char *const *args, long n)
{
	struct sockaddr_in ra, sa;
	int rfd = udp_socket(&ra), sfd = udp_socket(&sa), rc;
	char to[64], seed[] = "7";
	const char *argv[32] = {"--seed", seed, "--listen", "127.0.0.1:0", "--to", to};
	int k = 6;
	snprintf(to, sizeof(to), "127.0.0.1:%u", (unsigned)ntohs(ra.sin_port));
	while (*args && k < 30)
		argv[k++] = *args++;
	argv[k] = NULL;
	if (relay_start(r, argv) != 0) {
		close(rfd), close(sfd);
		return -1;
	}
	flood(x, sfd, rfd, r->port, n);
	rc = relay_stop(r);
	close(rfd), close(sfd);
	return rc;
}

/* {==== part 2: the knobs, end to end */

static void test_knobs(void)
{
	const long n = 4000;
	struct relay r = {0};
	struct rx x = {0};
	int rc;

	rc = knob_run(&r, &x, (const char *[]){NULL}, n);
	is_int(rc, 0, "no knobs: relay exits 0 on SIGTERM");
	ok(stat_of(r.stats, 0, "received") == n && x.got == n && x.bad == 0 && x.corrupt == 0 &&
	       x.dup_seen == 0 && x.inversions == 0 && stat_of(r.stats, 0, "forwarded") == n,
	   "no knobs: %ld datagrams through, each once, in order, intact (got %ld)", n, x.got);
	ok(balanced(r.stats, 0), "no knobs: counters add up");
	rx_free(&x);

	rc = knob_run(&r, &x, (const char *[]){"--drop", "0.2", NULL}, n);
	long dropped = stat_of(r.stats, 0, "dropped");
	ok(rc == 0 && stat_of(r.stats, 0, "received") == n,
	   "drop 0.2: the relay saw all %ld (none lost before it)", n);
	ok(within(dropped, n, 0.2), "drop 0.2: %ld dropped", dropped);
	ok(x.got == n - dropped && x.bad == 0 && x.dup_seen == 0 && x.inversions == 0,
	   "drop 0.2: the other %ld arrive once, in order, intact", x.got);
	ok(balanced(r.stats, 0), "drop 0.2: counters add up");
	/* the same seed drops the same datagrams; another seed others */
	unsigned char *first = x.count;
	x.count = NULL;
	rx_free(&x);
	knob_run(&r, &x, (const char *[]){"--drop", "0.2", NULL}, n);
	ok(memcmp(first, x.count, (size_t)n) == 0,
	   "drop 0.2, seed 7 again: the same datagrams lost");
	rx_free(&x);
	knob_run(&r, &x, (const char *[]){"--drop", "0.2", "--seed", "8", NULL}, n);
	ok(memcmp(first, x.count, (size_t)n) != 0, "seed 8: other datagrams lost");
	free(first);
	rx_free(&x);

	rc = knob_run(&r, &x, (const char *[]){"--corrupt", "0.1", NULL}, n);
	long corrupted = stat_of(r.stats, 0, "corrupted");
	ok(rc == 0 && x.got == n && x.bad == 0 && x.dup_seen == 0,
	   "corrupt 0.1: all %ld arrive, each with at most one flipped bit", n);
	ok(x.corrupt == corrupted && within(corrupted, n, 0.1),
	   "corrupt 0.1: %ld with a flipped bit, relay says %ld", x.corrupt, corrupted);
	rx_free(&x);

	rc = knob_run(&r, &x, (const char *[]){"--dup", "0.1", NULL}, n);
	long dups = stat_of(r.stats, 0, "duplicated");
	ok(rc == 0 && x.got == n + dups && x.dup_seen == dups && x.bad == 0 && within(dups, n, 0.1),
	   "dup 0.1: %ld extra copies arrive, relay says %ld", x.dup_seen, dups);
	ok(balanced(r.stats, 0), "dup 0.1: counters add up");
	rx_free(&x);

	rc = knob_run(&r, &x, (const char *[]){"--reorder", "0.1", NULL}, n);
	long reord = stat_of(r.stats, 0, "reordered"),
	     late = stat_of(r.stats, 0, "reorder_timeouts");
	double sd = root(n * 0.1 * 0.9);
	ok(rc == 0 && x.got == n && x.dup_seen == 0 && x.bad == 0,
	   "reorder 0.1: all %ld arrive exactly once", n);
	ok(x.inversions == reord && reord + late >= n * 0.1 * 0.9 - 5 * sd &&
	       reord + late <= n * 0.1 + 5 * sd,
	   "reorder 0.1: %ld arrive after a later one, relay says %ld (+%ld held to the timeout)",
	   x.inversions, reord, late);
	ok(balanced(r.stats, 0), "reorder 0.1: counters add up");
	rx_free(&x);

	rc = knob_run(&r, &x, (const char *[]){"--delay", "20", "--reorder", "0.1", NULL}, 1000);
	ok(rc == 0 && x.got == 1000 && x.dup_seen == 0 && x.bad == 0 &&
	       x.inversions == stat_of(r.stats, 0, "reordered") && balanced(r.stats, 0),
	   "delay 20 + reorder 0.1: all 1000 arrive once, %ld after a later one", x.inversions);
	rx_free(&x);
}

/* delay: datagrams timed one by one */
static void test_delay_exact(void)
{
	struct sockaddr_in ra, sa, to = {.sin_family = AF_INET};
	int rfd = udp_socket(&ra), sfd = udp_socket(&sa);
	char dst[64];
	unsigned char d[DGRAM];
	struct relay r = {0};
	struct pollfd p = {.fd = rfd, .events = POLLIN};
	snprintf(dst, sizeof(dst), "127.0.0.1:%u", (unsigned)ntohs(ra.sin_port));
	if (relay_start(&r, (const char *[]){"--listen", "127.0.0.1:0", "--to", dst, "--delay",
	                                     "150", NULL}) != 0) {
		ok(0, "delay: relay starts");
		return;
	}
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons((uint16_t)r.port);
	long worst = LONG_MAX;
	for (int i = 0; i < 3; i++) {
		fill(d, (uint64_t)i);
		uint64_t t0 = now_ms();
		sendto(sfd, d, DGRAM, 0, (struct sockaddr *)&to, sizeof(to));
		long el = poll(&p, 1, 5000) > 0 && recv(rfd, d, sizeof(d), 0) == DGRAM
		              ? (long)(now_ms() - t0)
		              : -1;
		worst = el < worst ? el : worst;
	}
	ok(worst >= 149,
	   "delay 150: each datagram arrives >= 150 ms after it was sent (least %ld ms)", worst);
	is_int(relay_stop(&r), 0, "delay: exits 0");
	close(rfd), close(sfd);
}

/* blackhole 1:2, SIGUSR1 in the middle: datagrams every 10 ms for 3 s */
static void test_blackhole(void)
{
	struct sockaddr_in ra, sa, to = {.sin_family = AF_INET};
	int rfd = udp_socket(&ra), sfd = udp_socket(&sa);
	char dst[64];
	struct relay r = {0};
	struct rx x = {0};
	const long n = 300;
	uint64_t sent_at[300];
	unsigned char d[DGRAM];
	snprintf(dst, sizeof(dst), "127.0.0.1:%u", (unsigned)ntohs(ra.sin_port));
	if (relay_start(&r, (const char *[]){"--listen", "127.0.0.1:0", "--to", dst, "--blackhole",
	                                     "1:2", NULL}) != 0) {
		ok(0, "blackhole: relay starts");
		return;
	}
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons((uint16_t)r.port);
	x.count = calloc((size_t)n, 1);
	x.max_seq = -1;
	int usr1_ok = 0;
	for (long i = 0; i < n; i++) {
		fill(d, (uint64_t)i);
		sent_at[i] = now_ms();
		sendto(sfd, d, DGRAM, 0, (struct sockaddr *)&to, sizeof(to));
		if (i == 150) { /* mid-window: SIGUSR1 writes the counters so far */
			kill(r.pid, SIGUSR1);
			for (int j = 0; j < 200 && !usr1_ok; j++) {
				FILE *f = fopen(r.stats, "re");
				char line[256] = "";
				if (f) {
					usr1_ok = fgets(line, sizeof(line), f) &&
					          strstr(line, "report=1 reason=sigusr1");
					fclose(f);
				}
				if (!usr1_ok)
					usleep(10000);
			}
			ok(usr1_ok && stat_of(r.stats, 0, "blackholed") > 0 && balanced(r.stats, 0),
			   "SIGUSR1 mid-run: report 1 written, the window already blackholes, "
			   "counters add up");
		}
		rx_drain(&x, rfd, n, 0);
		uint64_t next = sent_at[0] + (uint64_t)(i + 1) * 10, now = now_ms();
		if (next > now)
			usleep((useconds_t)(next - now) * 1000);
	}
	rx_drain(&x, rfd, n, 300);
	is_int(relay_stop(&r), 0, "blackhole: exits 0 on SIGTERM");
	long lost = 0, first = -1, last = -1, early_ok = 1, mid_lost = 1, late_ok = 1;
	for (long i = 0; i < n; i++) {
		uint64_t t = sent_at[i] - r.start_ms;
		if (!x.count[i]) {
			lost++;
			first = first < 0 ? i : first;
			last = i;
		}
		if (t + 250 < 1000)
			early_ok &= x.count[i] == 1;
		else if (t >= 1250 && t + 250 < 2000)
			mid_lost &= x.count[i] == 0;
		else if (t >= 2250)
			late_ok &= x.count[i] == 1;
	}
	ok(early_ok && mid_lost && late_ok,
	   "blackhole 1:2: sent before 0.75 s arrive, 1.25..1.75 s lost, after 2.25 s arrive");
	ok(lost > 0 && last - first + 1 == lost && stat_of(r.stats, 0, "blackholed") == lost,
	   "blackhole: the %ld lost are one run (#%ld..#%ld), relay says %ld", lost, first, last,
	   stat_of(r.stats, 0, "blackholed"));
	rx_free(&x);
	close(rfd), close(sfd);
}

/* two pairs with different knobs in one relay; a datagram sent back to a forward socket */
static void test_pairs(void)
{
	struct sockaddr_in r0, r1, sa, to = {.sin_family = AF_INET}, from;
	int rfd0 = udp_socket(&r0), rfd1 = udp_socket(&r1), sfd = udp_socket(&sa);
	char d0[64], d1[64];
	unsigned char d[DGRAM];
	struct relay r = {0};
	socklen_t flen = sizeof(from);
	snprintf(d0, sizeof(d0), "127.0.0.1:%u", (unsigned)ntohs(r0.sin_port));
	snprintf(d1, sizeof(d1), "127.0.0.1:%u", (unsigned)ntohs(r1.sin_port));
	if (relay_start(&r, (const char *[]){"--dup", "1", "--listen", "127.0.0.1:0", "--to", d0,
	                                     "--listen", "127.0.0.1:0", "--to", d1, "--drop", "1",
	                                     NULL}) != 0) {
		ok(0, "pairs: relay starts");
		return;
	}
	unsigned port1 = 0;
	FILE *f = fopen(r.ready, "re");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "pair=1 listen=%*[0-9.]:%u", &port1);
	if (f)
		fclose(f);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fill(d, 1);
	for (int i = 0; i < 50; i++) {
		to.sin_port = htons((uint16_t)r.port);
		sendto(sfd, d, DGRAM, 0, (struct sockaddr *)&to, sizeof(to));
		to.sin_port = htons((uint16_t)port1);
		sendto(sfd, d, DGRAM, 0, (struct sockaddr *)&to, sizeof(to));
	}
	long got0 = 0, got1 = 0;
	struct pollfd p[2] = {{.fd = rfd0, .events = POLLIN}, {.fd = rfd1, .events = POLLIN}};
	while (poll(p, 2, 300) > 0) {
		if (p[0].revents &&
		    recvfrom(rfd0, d, sizeof(d), 0, (struct sockaddr *)&from, &flen) > 0)
			got0++;
		if (p[1].revents && recv(rfd1, d, sizeof(d), 0) > 0)
			got1++;
	}
	/* answer the forward socket of pair 0 (where its datagrams came from): it must not loop */
	for (int i = 0; i < 5; i++)
		sendto(rfd0, d, DGRAM, 0, (struct sockaddr *)&from, flen);
	usleep(100000);
	long back = 0;
	while (poll(p, 1, 100) > 0 && recv(rfd0, d, sizeof(d), 0) > 0)
		back++;
	is_int(relay_stop(&r), 0, "pairs: exits 0");
	ok(got0 == 100 && got1 == 0,
	   "pair 0 (defaults: dup 1) delivers 2x50, pair 1 (drop 1) none (got %ld, %ld)", got0,
	   got1);
	ok(back == 0 && stat_of(r.stats, 0, "stray") == 5 && stat_of(r.stats, 1, "dropped") == 50,
	   "5 datagrams sent back to pair 0's forward socket are counted stray and go nowhere");
	close(rfd0), close(rfd1), close(sfd);
}

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* a long delay and a small --max-queue: overflow counted, memory flat */
static void test_bounded(void)
{
	struct sockaddr_in ra, sa, to = {.sin_family = AF_INET};
	int rfd = udp_socket(&ra), sfd = udp_socket(&sa);
	char dst[64];
	static unsigned char d[1024];
	struct relay r = {0};
	snprintf(dst, sizeof(dst), "127.0.0.1:%u", (unsigned)ntohs(ra.sin_port));
	if (relay_start(&r, (const char *[]){"--listen", "127.0.0.1:0", "--to", dst, "--delay",
	                                     "5000", "--max-queue", "65536", NULL}) != 0) {
		ok(0, "bounded: relay starts");
		return;
	}
	long base = rss_kb(r.pid);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons((uint16_t)r.port);
	for (int i = 0; i < 4000; i++) {
		sendto(sfd, d, sizeof(d), 0, (struct sockaddr *)&to, sizeof(to));
		if (i % 32 == 31)
			usleep(500);
	}
	usleep(200000);
	long after = rss_kb(r.pid);
	is_int(relay_stop(&r), 0, "bounded: exits 0");
	long got = stat_of(r.stats, 0, "received");
	ok(got > 1000 && stat_of(r.stats, 0, "overflow") == got - 64 &&
	       stat_of(r.stats, 0, "unsent") == 64 && balanced(r.stats, 0),
	   "--max-queue 65536: 64 KiB-datagrams queued, %ld counted overflow, the 64 unsent at "
	   "exit",
	   stat_of(r.stats, 0, "overflow"));
	ok(base > 0 && after > 0 && after - base < 4096,
	   "4 MB sent into a 64 KiB queue: relay RSS %ld -> %ld kB", base, after);
	close(rfd), close(sfd);
}

/* lifetime, bad arguments, a port in use */
static void test_lifecycle(void)
{
	struct sockaddr_in ra;
	int rfd = udp_socket(&ra);
	char dst[64], line[512] = "";
	struct relay r = {0};
	snprintf(dst, sizeof(dst), "127.0.0.1:%u", (unsigned)ntohs(ra.sin_port));
	uint64_t t0 = now_ms();
	int started = relay_start(&r, (const char *[]){"--listen", "127.0.0.1:0", "--to", dst,
	                                               "--lifetime", "0.5", NULL}) == 0;
	int rc = started ? relay_wait(&r, 10000) : -1;
	uint64_t el = now_ms() - t0;
	FILE *f = fopen(r.stats, "re");
	if (f && !fgets(line, sizeof(line), f))
		line[0] = 0;
	if (f)
		fclose(f);
	ok(started && rc == 0 && el >= 500 && strstr(line, "reason=lifetime"),
	   "--lifetime 0.5: exits 0 by itself after %llu ms, final report written",
	   (unsigned long long)el);

	struct {
		const char *args[8], *want;
		int code;
	} bad[] = {
	    {{"--listen", "127.0.0.1:0", "--to", dst, "--drop", "1.5"},
	     "chaos-relay: --drop: '1.5' is not a probability in [0, 1]",
	     100},
	    {{"--listen", "127.0.0.1:0"}, "chaos-relay: the last --listen has no --to", 100},
	    {{"--listen", "localhost:1", "--to", dst},
	     "chaos-relay: --listen: 'localhost:1' is not IPV4:PORT",
	     100},
	    {{"--listen", "127.0.0.1:0", "--to", "127.0.0.1:0"},
	     "chaos-relay: --to: '127.0.0.1:0' is not IPV4:PORT (PORT > 0)",
	     100},
	    {{"--listen", "127.0.0.1:0", "--to", dst, "--blackhole", "3:2"},
	     "chaos-relay: --blackhole: '3:2' is not T1:T2",
	     100},
	    {{"--listen", dst, "--to", dst}, "chaos-relay: bind ", 111},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[12] = {relay};
		int n = 1, st;
		char out[512] = "";
		for (int j = 0; j < 8 && bad[i].args[j]; j++)
			argv[n++] = bad[i].args[j];
		int pfd[2];
		if (pipe(pfd) != 0)
			break;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(pfd[1], 2);
			execv(relay, (char *const *)argv);
			_exit(127);
		}
		close(pfd[1]);
		size_t len = 0;
		ssize_t got;
		while (len < sizeof(out) - 1 &&
		       (got = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
			len += (size_t)got;
		out[len] = 0;
		close(pfd[0]);
		waitpid(pid, &st, 0);
		int lines = 0;
		for (char *c = out; *c; c++)
			lines += *c == '\n';
		ok(WIFEXITED(st) && WEXITSTATUS(st) == bad[i].code &&
		       strncmp(out, bad[i].want, strlen(bad[i].want)) == 0 && lines == 1,
		   "bad input #%zu: exit %d, one line: %.*s", i, bad[i].code,
		   (int)strcspn(out, "\n"), out);
	}
	close(rfd);
}

int main(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_engine();
	if (n <= 0) {
		ok(0, "readlink /proc/self/exe");
		return done_testing();
	}
	self[n] = 0;
	*strrchr(self, '/') = 0;
	snprintf(relay, sizeof(relay), "%s/../testprogs/chaos-relay", self);
	if (access(relay, X_OK) != 0 || !mkdtemp(tmpdir)) {
		ok(0, "%s is built and a temp dir made", relay);
		return done_testing();
	}
	test_knobs();
	test_delay_exact();
	test_blackhole();
	test_pairs();
	test_bounded();
	test_lifecycle();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
