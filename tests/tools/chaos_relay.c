/* tests/tools/chaos_relay.c: a one-way UDP relay that drops, corrupts, duplicates, reorders,
 * delays and blackholes datagrams on purpose, for tests of a transport that must survive it. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"

/*
 * Each pair is a listen socket (where senders send) and a forward socket (unbound, so the
 * receiver sees an address nobody listens on: the relay carries one direction only; anything
 * that arrives on it is counted as stray and thrown away). A datagram is received, judged
 * (chaos.h) and sent on at once, or queued until its delay is over; a reordered one is held
 * back until a datagram that arrived after it has gone out, or REORDER_HOLD_MS after it was due.
 * Every datagram ends in exactly one counter, so at any time
 *   received + duplicated = forwarded + dropped + blackholed + overflow + send_errors + unsent
 *                           + queued
 */

#define MAX_PAIRS       64
#define REORDER_HOLD_MS 10
#define BURST           256 /* datagrams read from one socket per wake-up */
#define SOCKBUF         (8 << 20)

enum { EXIT_USAGE = 100, EXIT_SYS = 111 };

struct pkt {
	struct pkt *next;
	uint64_t seq, due_us;
	int dup;
	size_t len;
	unsigned char data[];
};

struct counters {
	uint64_t received, bytes_in, forwarded, bytes_out, dropped, blackholed, corrupted;
	uint64_t duplicated, reordered, reorder_timeouts, overflow, send_errors, stray, unsent;
	int last_errno;
};

struct pair {
	struct chaos_knobs k;
	size_t max_queue;
	struct sockaddr_in listen, to;
	int lfd, sfd;
	struct chaos_rng rng;
	struct pkt *head, *tail, *held;
	size_t queued_bytes;
	uint64_t nqueued, nseq;
	struct counters c;
};

static struct pair pairs[MAX_PAIRS];
static int npairs;
static uint64_t start_us, seed = 1, reports;
static const char *stats_path, *ready_path;
static double lifetime_s = 600;

/* die: one line on stderr (one write, so it never interleaves), then exit CODE. */
static void die(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "chaos-relay: %s\n", msg);
	exit(code);
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static const char *addr_str(const struct sockaddr_in *a, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
	return buf;
}

/* {==== sending */

static void send_one(struct pair *p, const unsigned char *data, size_t len)
{
	if (chaos_in_window(&p->k, (now_us() - start_us) / 1000)) {
		p->c.blackholed++;
		return;
	}
	if (sendto(p->sfd, data, len, MSG_DONTWAIT, (const struct sockaddr *)&p->to,
	           sizeof(p->to)) < 0) {
		p->c.send_errors++;
		p->c.last_errno = errno;
		return;
	}
	p->c.forwarded++;
	p->c.bytes_out += len;
}

/* deliver: send a datagram (twice if DUP), then the held-back one if this one arrived later. */
static void deliver(struct pair *p, const unsigned char *data, size_t len, uint64_t seq, int dup)
{
	send_one(p, data, len);
	if (dup)
		send_one(p, data, len);
	if (p->held && p->held->seq < seq) {
		struct pkt *h = p->held;
		p->held = NULL;
		p->queued_bytes -= h->len;
		send_one(p, h->data, h->len);
		if (h->dup)
			send_one(p, h->data, h->len);
		p->c.reordered++;
		free(h);
	}
}

/* make_pkt: a queued copy of DATA, or NULL (counted as overflow) past the pair's byte bound. */
static struct pkt *make_pkt(struct pair *p, const unsigned char *data, size_t len, uint64_t seq,
                            int dup, uint64_t due)
{
	struct pkt *q = NULL;
	if (p->queued_bytes + len <= p->max_queue)
		q = malloc(sizeof(*q) + len);
	if (!q) {
		p->c.overflow += 1 + (dup != 0);
		return NULL;
	}
	q->next = NULL;
	q->seq = seq;
	q->due_us = due;
	q->dup = dup;
	q->len = len;
	memcpy(q->data, data, len);
	p->queued_bytes += len;
	return q;
}

/* arrive: judge one received datagram and send, queue or hold it. */
static void arrive(struct pair *p, unsigned char *data, size_t len, uint64_t now)
{
	uint64_t seq = ++p->nseq, due = now + (uint64_t)p->k.delay_ms * 1000;
	struct chaos_verdict v = chaos_decide(&p->k, &p->rng, len, (now - start_us) / 1000);

	p->c.received++;
	p->c.bytes_in += len;
	if (v.blackhole || v.drop) {
		if (v.blackhole)
			p->c.blackholed++;
		else
			p->c.dropped++;
		return;
	}
	if (v.corrupt_bit >= 0) {
		data[v.corrupt_bit / 8] ^= (unsigned char)(1u << (v.corrupt_bit % 8));
		p->c.corrupted++;
	}
	p->c.duplicated += v.dup != 0;
	if (v.reorder && !p->held) {
		p->held = make_pkt(p, data, len, seq, v.dup, due + REORDER_HOLD_MS * 1000);
		return;
	}
	if (p->k.delay_ms == 0 && !p->head) {
		deliver(p, data, len, seq, v.dup);
		return;
	}
	struct pkt *q = make_pkt(p, data, len, seq, v.dup, due);
	if (!q)
		return;
	if (p->tail)
		p->tail->next = q;
	else
		p->head = q;
	p->tail = q;
	p->nqueued++;
}

/* run_timers: send what is due; return the time of the next due datagram (UINT64_MAX if none). */
static uint64_t run_timers(struct pair *p, uint64_t now)
{
	while (p->head && p->head->due_us <= now) {
		struct pkt *q = p->head;
		if (!(p->head = q->next))
			p->tail = NULL;
		p->nqueued--;
		p->queued_bytes -= q->len;
		deliver(p, q->data, q->len, q->seq, q->dup);
		free(q);
	}
	if (p->held && p->held->due_us <= now) {
		struct pkt *h = p->held;
		p->held = NULL;
		p->queued_bytes -= h->len;
		send_one(p, h->data, h->len);
		if (h->dup)
			send_one(p, h->data, h->len);
		p->c.reorder_timeouts++;
		free(h);
	}
	uint64_t next = p->head ? p->head->due_us : UINT64_MAX;
	if (p->held && p->held->due_us < next)
		next = p->held->due_us;
	return next;
}

/* {==== reports */

static void write_report(FILE *f, const char *reason, uint64_t now)
{
	char a[64], b[64];
	fprintf(f, "# chaos-relay pid=%ld report=%llu reason=%s elapsed_ms=%llu seed=%llu\n",
	        (long)getpid(), (unsigned long long)reports, reason,
	        (unsigned long long)((now - start_us) / 1000), (unsigned long long)seed);
	for (int i = 0; i < npairs; i++) {
		const struct pair *p = &pairs[i];
		const struct counters *c = &p->c;
		fprintf(
		    f,
		    "pair=%d listen=%s to=%s received=%llu bytes_in=%llu forwarded=%llu "
		    "bytes_out=%llu dropped=%llu blackholed=%llu corrupted=%llu duplicated=%llu "
		    "reordered=%llu reorder_timeouts=%llu overflow=%llu send_errors=%llu "
		    "stray=%llu unsent=%llu queued=%llu last_send_errno=%d\n",
		    i, addr_str(&p->listen, a, sizeof(a)), addr_str(&p->to, b, sizeof(b)),
		    (unsigned long long)c->received, (unsigned long long)c->bytes_in,
		    (unsigned long long)c->forwarded, (unsigned long long)c->bytes_out,
		    (unsigned long long)c->dropped, (unsigned long long)c->blackholed,
		    (unsigned long long)c->corrupted, (unsigned long long)c->duplicated,
		    (unsigned long long)c->reordered, (unsigned long long)c->reorder_timeouts,
		    (unsigned long long)c->overflow, (unsigned long long)c->send_errors,
		    (unsigned long long)c->stray, (unsigned long long)c->unsent,
		    (unsigned long long)(p->nqueued + (p->held != NULL)), c->last_errno);
	}
}

/* report: the counters to --stats (written to a temporary file, then renamed) or to stderr. */
static void report(const char *reason)
{
	char tmp[4096];
	FILE *f;
	reports++;
	if (!stats_path) {
		write_report(stderr, reason, now_us());
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", stats_path, (long)getpid());
	if (!(f = fopen(tmp, "we"))) {
		fprintf(stderr, "chaos-relay: cannot write %s: %s\n", tmp, strerror(errno));
		return;
	}
	write_report(f, reason, now_us());
	if (fclose(f) != 0 || rename(tmp, stats_path) != 0) {
		fprintf(stderr, "chaos-relay: cannot write %s: %s\n", stats_path, strerror(errno));
		unlink(tmp);
	}
}

static void write_ready(void)
{
	char tmp[4096], a[64], b[64];
	FILE *f;
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", ready_path, (long)getpid());
	if (!(f = fopen(tmp, "we")))
		die(EXIT_SYS, "cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "# chaos-relay pid=%ld start_ms=%llu seed=%llu\n", (long)getpid(),
	        (unsigned long long)(start_us / 1000), (unsigned long long)seed);
	for (int i = 0; i < npairs; i++)
		fprintf(f, "pair=%d listen=%s to=%s\n", i, addr_str(&pairs[i].listen, a, sizeof(a)),
		        addr_str(&pairs[i].to, b, sizeof(b)));
	if (fclose(f) != 0 || rename(tmp, ready_path) != 0)
		die(EXIT_SYS, "cannot write %s: %s", ready_path, strerror(errno));
}

/* {==== options and sockets */

static void usage(FILE *f)
{
	fputs("usage: chaos-relay --listen IP:PORT --to IP:PORT [KNOBS] [--listen ... --to ...]\n"
	      "         [--seed N] [--stats FILE] [--ready FILE] [--lifetime S]\n"
	      "knobs (before the first --listen: defaults of every pair; after one: that pair):\n"
	      "  --drop P --corrupt P --dup P --reorder P   probabilities in [0, 1]\n"
	      "  --delay MS   --blackhole T1:T2 (seconds after start, up to 8)\n"
	      "  --max-queue BYTES   bound on delayed/held bytes per pair (default 16777216)\n"
	      "Counters go to --stats FILE (or stderr) on SIGUSR1 and at exit; --ready FILE gets\n"
	      "the bound addresses (PORT 0 picks one); exits on SIGTERM/SIGINT or after\n"
	      "--lifetime S (default 600).\n",
	      f);
}

static void parse_addr(const char *opt, const char *s, struct sockaddr_in *a, int port_zero_ok)
{
	char ip[64], *end;
	const char *colon = strrchr(s, ':');
	unsigned long port;
	if (!colon || (size_t)(colon - s) >= sizeof(ip))
		die(EXIT_USAGE, "%s: '%s' is not IPV4:PORT", opt, s);
	memcpy(ip, s, (size_t)(colon - s));
	ip[colon - s] = 0;
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (inet_pton(AF_INET, ip, &a->sin_addr) != 1 || errno || end == colon + 1 || *end ||
	    port > 65535 || (port == 0 && !port_zero_ok))
		die(EXIT_USAGE, "%s: '%s' is not IPV4:PORT%s", opt, s,
		    port_zero_ok ? "" : " (PORT > 0)");
	a->sin_port = htons((uint16_t)port);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long max)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max)
		die(EXIT_USAGE, "%s: '%s' is not a whole number in [0, %lu]", opt, s, max);
	return (unsigned long)v;
}

static void big_buffers(int fd)
{
	int v = SOCKBUF;
	/* root may go past net.core.[rw]mem_max; others get what the limit allows */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

static void open_pair(struct pair *p)
{
	char a[64];
	socklen_t len = sizeof(p->listen);
	if ((p->lfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
	    (p->sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		die(EXIT_SYS, "socket: %s", strerror(errno));
	big_buffers(p->lfd);
	big_buffers(p->sfd);
	if (bind(p->lfd, (struct sockaddr *)&p->listen, sizeof(p->listen)) != 0)
		die(EXIT_SYS, "bind %s: %s", addr_str(&p->listen, a, sizeof(a)), strerror(errno));
	getsockname(p->lfd, (struct sockaddr *)&p->listen, &len);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"listen", 1, 0, 'l'},    {"to", 1, 0, 't'},        {"drop", 1, 0, 'd'},
	    {"corrupt", 1, 0, 'c'},   {"dup", 1, 0, 'u'},       {"reorder", 1, 0, 'r'},
	    {"delay", 1, 0, 'D'},     {"blackhole", 1, 0, 'b'}, {"seed", 1, 0, 's'},
	    {"stats", 1, 0, 'S'},     {"ready", 1, 0, 'R'},     {"lifetime", 1, 0, 'L'},
	    {"max-queue", 1, 0, 'q'}, {"help", 0, 0, 'h'},      {0, 0, 0, 0}};
	struct pair defaults = {.max_queue = 16 << 20};
	int c, have_to = 1;
	double *prob = NULL;
	char *end;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		struct pair *cur = npairs ? &pairs[npairs - 1] : &defaults;
		const char *name = opts[0].name;
		for (const struct option *o = opts; o->name; o++)
			if (o->val == c)
				name = o->name;
		switch (c) {
		case 'l':
			if (!have_to)
				die(EXIT_USAGE, "--listen %s: the previous --listen has no --to",
				    optarg);
			if (npairs == MAX_PAIRS)
				die(EXIT_USAGE, "at most %d --listen pairs", MAX_PAIRS);
			pairs[npairs] = defaults;
			parse_addr("--listen", optarg, &pairs[npairs++].listen, 1);
			have_to = 0;
			continue;
		case 't':
			if (!npairs || have_to)
				die(EXIT_USAGE, "--to %s: comes after its --listen", optarg);
			parse_addr("--to", optarg, &cur->to, 0);
			have_to = 1;
			continue;
		case 'd':
			prob = &cur->k.drop;
			break;
		case 'c':
			prob = &cur->k.corrupt;
			break;
		case 'u':
			prob = &cur->k.dup;
			break;
		case 'r':
			prob = &cur->k.reorder;
			break;
		case 'D':
			cur->k.delay_ms = (unsigned)parse_num("--delay", optarg, 60000);
			continue;
		case 'q':
			cur->max_queue = parse_num("--max-queue", optarg, 1ul << 30);
			continue;
		case 'b':
			if (chaos_parse_window(&cur->k, optarg) != 0)
				die(EXIT_USAGE,
				    "--blackhole: '%s' is not T1:T2 (seconds, T1 < T2, at most %d)",
				    optarg, CHAOS_MAX_WINDOWS);
			continue;
		case 's':
			seed = parse_num("--seed", optarg, (unsigned long)-1);
			continue;
		case 'S':
			stats_path = optarg;
			continue;
		case 'R':
			ready_path = optarg;
			continue;
		case 'L':
			errno = 0;
			lifetime_s = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(lifetime_s > 0 && lifetime_s <= 86400))
				die(EXIT_USAGE, "--lifetime: '%s' is not seconds in (0, 86400]",
				    optarg);
			continue;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			die(EXIT_USAGE, "bad option or missing value: '%s' (see --help)",
			    argv[optind - 1]);
		}
		if (chaos_parse_prob(optarg, prob) != 0)
			die(EXIT_USAGE, "--%s: '%s' is not a probability in [0, 1]", name, optarg);
	}
	if (optind < argc)
		die(EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[optind]);
	if (!npairs)
		die(EXIT_USAGE, "no --listen IP:PORT --to IP:PORT pair (see --help)");
	if (!have_to)
		die(EXIT_USAGE, "the last --listen has no --to");
}

/* {==== main loop */

static void drain(struct pair *p, int stray_fd)
{
	static unsigned char buf[65536];
	for (int n = 0; n < BURST; n++) {
		ssize_t r = recv(stray_fd ? p->sfd : p->lfd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0)
			return; /* EAGAIN, or an ICMP error queued on the socket: nothing to read */
		if (stray_fd)
			p->c.stray++;
		else
			arrive(p, buf, (size_t)r, now_us());
	}
}

int main(int argc, char **argv)
{
	struct pollfd pfd[2 * MAX_PAIRS + 1];
	sigset_t mask;
	int sfd, n = 0;

	parse_args(argc, argv);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		die(EXIT_SYS, "signalfd: %s", strerror(errno));
	start_us = now_us();
	for (int i = 0; i < npairs; i++) {
		open_pair(&pairs[i]);
		chaos_seed(&pairs[i].rng, seed, (unsigned)i);
		pfd[n++] = (struct pollfd){.fd = pairs[i].lfd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = pairs[i].sfd, .events = POLLIN};
	}
	pfd[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
	if (ready_path)
		write_ready();

	uint64_t end_us = start_us + (uint64_t)(lifetime_s * 1e6);
	const char *why = "lifetime";
	for (;;) {
		uint64_t now = now_us(), next = end_us;
		for (int i = 0; i < npairs; i++) {
			uint64_t t = run_timers(&pairs[i], now);
			next = t < next ? t : next;
		}
		if (now >= end_us)
			break;
		int ms = next > now ? (int)((next - now + 999) / 1000) : 0;
		if (poll(pfd, (nfds_t)n, ms) < 0 && errno != EINTR)
			die(EXIT_SYS, "poll: %s", strerror(errno));
		for (int i = 0; i < npairs; i++) {
			if (pfd[2 * i].revents)
				drain(&pairs[i], 0);
			if (pfd[2 * i + 1].revents)
				drain(&pairs[i], 1);
		}
		if (pfd[n - 1].revents) {
			struct signalfd_siginfo si;
			int stop = 0;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGUSR1)
					report("sigusr1");
				else
					stop = 1,
					why = si.ssi_signo == SIGTERM ? "sigterm" : "signal";
			}
			if (stop)
				break;
		}
	}
	for (int i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];
		while (p->head) {
			struct pkt *q = p->head;
			p->head = q->next;
			p->c.unsent += 1 + (q->dup != 0);
			free(q);
		}
		if (p->held)
			p->c.unsent += 1 + (p->held->dup != 0);
		free(p->held);
		p->held = p->tail = NULL;
		p->nqueued = 0;
		close(p->lfd);
		close(p->sfd);
	}
	report(why);
	return 0;
}
