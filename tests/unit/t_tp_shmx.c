/* tests/unit/t_tp_shmx.c: shm between processes of different jobs: SWITCH keeps each direction in
 * order, pair segments are unlinked once mapped, LAMKIT_TP=tcp and bad cards; tp_release ends
 * the connection in order (BYE) and unmaps the segment, the two meet again, and a released peer
 * that is killed disturbs nothing. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "tp_pair.h"

/*
 * Two endpoints of two one-rank jobs live in this process (one node, so their cards carry the
 * same node token) and are polled in turn. Each fragment carries a sequence number in its
 * header; the receiver records them, so any reordering across the tcp -> shm switch shows.
 */

#define BIG  (6u << 20) /* over the 4 MiB socket buffers: stays queued on tcp for a while */
#define MAXN 4096

struct side {
	uint32_t got[MAXN];
	int n, bad, peer;
	size_t bigok;
	int sent_calls;
};

static unsigned char *bigbuf;

static void on_recv(void *arg, int peer, const void *h, size_t hlen, const void *data, size_t len)
{
	struct side *s = arg;
	uint32_t seq;

	if (hlen != 8 || s->n == MAXN) {
		s->bad++;
		return;
	}
	memcpy(&seq, h, 4);
	s->peer = peer;
	s->got[s->n++] = seq;
	if (len == BIG && memcmp(data, bigbuf, BIG) == 0)
		s->bigok++;
	else if (len && len != BIG && ((const unsigned char *)data)[len - 1] != (unsigned char)seq)
		s->bad++;
}

static void on_sent(void *arg, void *cookie)
{
	(void)cookie;
	((struct side *)arg)->sent_calls++;
}

static tp_t *make(struct side *s, const char *job, int *me)
{
	static char err[256];
	struct tp_cfg cfg = {.rank = 0,
	                     .size = 1,
	                     .local_ranks = me,
	                     .nlocal = 1,
	                     .job = job,
	                     .kvs = {kput, kget, NULL},
	                     .ops = {on_recv, on_sent, NULL},
	                     .arg = s};
	tp_t *tp = tp_create(&cfg, err, sizeof err);

	if (!tp)
		printf("# tp_create: %s\n", err);
	return tp;
}

/* Send seq with a payload of len bytes (its last byte = seq), or the big buffer. */
static int send_seq(tp_t *tp, int peer, uint32_t seq, size_t len)
{
	static unsigned char small[16384];
	uint32_t h[2] = {seq, 0};

	if (len == BIG)
		return tp_send(tp, peer, h, sizeof h, bigbuf, BIG, bigbuf);
	if (len)
		small[len - 1] = (unsigned char)seq;
	return tp_send(tp, peer, h, sizeof h, small, len, NULL);
}

/* 100 messages of 100 bytes each way, x's first each time, both polled in between. */
static void exchange(tp_t *x, int px, tp_t *y, int py)
{
	for (uint32_t i = 0; i < 100; i++) {
		send_seq(x, px, i, 100);
		send_seq(y, py, i, 100);
		tp_poll(x);
		tp_poll(y);
	}
}

static int in_order(const struct side *s, int want)
{
	for (int i = 0; i < s->n; i++)
		if (s->got[i] != (uint32_t)i)
			return 0;
	return s->n == want;
}

static int shm_names(void)
{
	FILE *p = popen("ls /dev/shm | grep -c '^lkmpi-x'", "r");
	int n = -1;

	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void switch_order(void)
{
	static struct side sa, sb;
	int me = 0, pa, pb, before = shm_names();
	uint32_t seq = 0;
	char ca[TP_DYN_CARD_MAX], cb[TP_DYN_CARD_MAX];
	tp_t *a = make(&sa, "job-a", &me), *b = make(&sb, "job-b", &me);

	ok(a && b, "two one-rank jobs");
	if (!a || !b)
		return;
	ok(tp_card(a, ca, sizeof ca) == 0 && tp_card(b, cb, sizeof cb) == 0, "cards: %s", ca);
	ok(strchr(ca, ':') && strchr(ca, ':') < strchr(ca, '@'), "the card has a node part");
	pa = tp_add_peer(a, cb);
	is_int(pa, 1, "a knows b as peer 1");
	/* b does not know a yet: a's fragments go over tcp, the big one stays queued there */
	for (int i = 0; i < 5; i++)
		send_seq(a, pa, seq++, (size_t)i * 1000);
	is_str(tp_path_name(a, pa), "tcp", "tcp while only one side mapped the pair segment");
	send_seq(a, pa, seq++, BIG);
	pb = tp_add_peer(b, ca);
	is_int(pb, 1, "b knows a as peer 1");
	is_int(shm_names(), before + 1, "a mapped the pair segment when it first sent");
	/* queued tcp fragments hold the switch back; later ones follow on the ring */
	for (int i = 0; i < 300; i++) {
		send_seq(a, pa, seq++, (size_t)(i * 37) % 16000);
		if (i % 7 == 0)
			tp_poll(a);
		if (i % 11 == 0)
			tp_poll(b);
	}
	POLL_UNTIL(a, b, 20.0, sb.n == (int)seq);
	is_str(tp_path_name(a, pa), "shm", "a switched to the ring once its tcp queue drained");
	is_int(shm_names(), before, "its name is gone since b mapped it too (on hearing from a)");
	ok(in_order(&sb, (int)seq), "b got all %u fragments in order across the switch (got %d)",
	   seq, sb.n);
	is_int(sb.bad, 0, "with their payloads intact");
	is_int((long long)sb.bigok, 1, "the 6 MiB fragment whole");
	is_int(sa.sent_calls, 1, "its buffer reported sent once");
	/* the other direction switches on its own: b's tcp queue is empty at once */
	for (uint32_t i = 0; i < 2000; i++) {
		send_seq(b, pb, i, i % 3 ? 8 : 16000); /* copied: the buffer is reused */
		if (i % 5 == 0)
			tp_poll(a);
	}
	POLL_UNTIL(a, b, 20.0, sa.n == 2000);
	is_str(tp_path_name(b, pb), "shm", "b sends on the ring");
	ok(in_order(&sa, 2000), "a got b's 2000 fragments in order, ring laps included (%d)", sa.n);
	is_int(sa.bad, 0, "intact");
	ok(tp_can_get(a, pa) && tp_can_get(b, pb), "single-copy reads between the two");
	{
		char dst[32] = "", src[32] = "read across jobs";
		ok(tp_get(a, pa, dst, (uint64_t)(uintptr_t)src, sizeof src) == 0 &&
		       !strcmp(dst, src),
		   "tp_get reads the peer's memory");
	}
	/* b ends: once a's ring to it is full, a's sends fail as on a closed connection */
	tp_destroy(b, 1000);
	{
		int rc = 0, i;
		for (i = 0; i < 200 && rc == 0; i++)
			rc = send_seq(a, pa, (uint32_t)i, 16000);
		ok(rc == -1 && errno == EPIPE,
		   "sends to an ended peer fail with EPIPE once its ring "
		   "is full (after %d)",
		   i);
		ok(strstr(tp_error(a), "has ended") != NULL, "tp_error: %s", tp_error(a));
	}
	tp_destroy(a, 1000);
	is_int(shm_names(), before, "nothing left in /dev/shm");
}

static void tcp_only_and_bad_cards(void)
{
	static struct side sa, sb;
	int me = 0;
	char ca[TP_DYN_CARD_MAX], cb[TP_DYN_CARD_MAX];
	tp_t *a, *b;
	int before = shm_names(), pa;

	setenv("LAMKIT_TP", "tcp", 1);
	a = make(&sa, "job-c", &me);
	unsetenv("LAMKIT_TP");
	b = make(&sb, "job-d", &me);
	ok(a && b, "a tcp-only job and an auto one");
	if (!a || !b)
		return;
	tp_card(a, ca, sizeof ca);
	tp_card(b, cb, sizeof cb);
	ok(!strchr(ca, ':'), "LAMKIT_TP=tcp: no node part in the card (%.40s...)", ca);
	pa = tp_add_peer(a, cb);
	tp_add_peer(b, ca);
	for (uint32_t i = 0; i < 50; i++)
		send_seq(a, pa, i, 100);
	POLL_UNTIL(a, b, 10.0, sb.n == 50);
	ok(in_order(&sb, 50), "they talk");
	is_str(tp_path_name(a, pa), "tcp", "over tcp");
	is_int(shm_names(), before, "and make no pair segment");
	errno = 0;
	is_int(tp_add_peer(b, "0123456789abcdef:0123:5@1;-;127.0.0.1/8"), -1, "short node token");
	is_int(errno, EINVAL, "EINVAL");
	is_int(tp_add_peer(b, "0123456789abcdef:0123456789abcdef:x@1;-;127.0.0.1/8"), -1,
	       "bad pid refused");
	is_int(tp_add_peer(b, "0123456789abcdef:0123456789abcdef:77@1;-;127.0.0.1/8"), 2,
	       "another node's card is a tcp peer");
	is_str(tp_path_name(b, 2), "tcp", "tcp");
	tp_destroy(a, 1000);
	tp_destroy(b, 1000);
}

/* A process that dies after mapping a pair segment the peer never mapped leaves the name, and a
 * record of it in $LAMKIT_SESSION_DIR that the agent (at the job's end) and `lamkit wipe` go by. */
static void crash_leaves_a_record(void)
{
	char dir[] = "/tmp/t_tp_shmx.XXXXXX", cmd[256], rec[512] = "", name[128] = "";
	int st = -1;
	pid_t pid;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	pid = fork();
	if (pid == 0) {
		static struct side sa, sb;
		int me = 0;
		char cb[TP_DYN_CARD_MAX];
		setenv("LAMKIT_SESSION_DIR", dir, 1);
		tp_t *a = make(&sa, "job-e", &me), *b = make(&sb, "job-f", &me);
		if (!a || !b || tp_card(b, cb, sizeof cb) < 0)
			_exit(1);
		send_seq(a, tp_add_peer(a, cb), 0, 8); /* a maps; b never hears of it */
		_exit(0);                              /* no tp_destroy: a crash */
	}
	waitpid(pid, &st, 0);
	is_int(st, 0, "a process maps a pair segment and dies");
	snprintf(cmd, sizeof cmd, "cat %s/shm-lkmpi-x* 2>/dev/null", dir);
	if ((f = popen(cmd, "r"))) {
		if (!fgets(rec, sizeof rec, f))
			rec[0] = '\0';
		pclose(f);
	}
	rec[strcspn(rec, "\n")] = '\0';
	snprintf(name, sizeof name, "/dev/shm%s", rec);
	ok(!strncmp(rec, "/lkmpi-x", 8) && access(name, F_OK) == 0,
	   "its session directory records the segment it left: %s", rec);
	if (rec[0] == '/')
		shm_unlink(rec); /* what the agent does with each record at the job's end */
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleaned up");
}

/* Open fds of this process. */
static int nfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n - 3; /* ".", ".." and the directory's own fd */
}

static int held(tp_t *tp, int *segs)
{
	struct tp_dyn_counts d;

	tp_dyn_counts(tp, &d);
	*segs = d.segments;
	return d.conns;
}

/* Poll both until neither holds a connection or segment of the other; 1 when they got there
 * with no poll failing. */
static int let_go(tp_t *a, tp_t *b)
{
	double end = now() + 10.0;
	int sa = 1, sb = 1, fail = 0;

	while ((held(a, &sa) || sa || held(b, &sb) || sb) && now() < end)
		fail |= tp_poll(a) < 0 || tp_poll(b) < 0;
	return !fail && !held(a, &sa) && !sa && !held(b, &sb) && !sb;
}

static void release_and_meet_again(void)
{
	static struct side sa, sb;
	int me = 0, pa, pb, fds, before = shm_names(), segs = 0;
	char ca[TP_DYN_CARD_MAX], cb[TP_DYN_CARD_MAX];
	tp_t *a = make(&sa, "job-g", &me), *b = make(&sb, "job-h", &me);

	if (!a || !b || tp_card(a, ca, sizeof ca) < 0 || tp_card(b, cb, sizeof cb) < 0) {
		ok(0, "two one-rank jobs with cards");
		return;
	}
	fds = nfds(); /* each has its listener */
	pa = tp_add_peer(a, cb);
	pb = tp_add_peer(b, ca);
	exchange(a, pa, b, pb);
	POLL_UNTIL(a, b, 10.0, sa.n == 100 && sb.n == 100);
	ok(!strcmp(tp_path_name(a, pa), "shm") && !strcmp(tp_path_name(b, pb), "shm"),
	   "both directions on the pair's rings");
	ok(held(a, &segs) == 1 && segs == 1, "a holds one connection and one segment of b");
	is_int(tp_release(a, 0), -1, "tp_release of a job rank: -1");
	/* a lets b go; b hears BYE and does the same on its side */
	is_int(tp_release(a, pa), 0, "a lets b go");
	is_str(tp_path_name(a, pa), "tcp", "a is back on tcp to b");
	ok(let_go(a, b), "then neither holds a connection or segment of the other, no poll failed");
	is_int(nfds(), fds, "the sockets are closed (fds as before they met)");
	is_int(shm_names(), before, "no pair segment name left");
	is_str(tp_error(a), "", "no error on a");
	is_str(tp_error(b), "", "nor on b");
	/* they meet again under the same peer indexes: b sends first (a new connection) */
	sa.n = sb.n = 0;
	exchange(b, pb, a, pa);
	POLL_UNTIL(a, b, 10.0, sa.n == 100 && sb.n == 100);
	ok(in_order(&sa, 100) && in_order(&sb, 100), "they meet again: both ways in order");
	ok(!strcmp(tp_path_name(a, pa), "shm") && !strcmp(tp_path_name(b, pb), "shm"),
	   "over a new pair segment");
	/* a lets b go and talks to it at once, before b has read its BYE: b takes a's new
	 * connection (it ended more connections than b knows of) and the old one ends */
	sb.n = 0;
	tp_release(a, pa);
	for (uint32_t i = 0; i < 50; i++)
		send_seq(a, pa, i, 100);
	for (int k = 0; k < 40; k++) /* a has not even written its BYE yet */
		tp_poll(b);
	POLL_UNTIL(a, b, 10.0, sb.n == 50);
	ok(in_order(&sb, 50), "a new connection while the old one is ending: in order (%d)", sb.n);
	/* both let go at once */
	tp_release(a, pa);
	tp_release(b, pb);
	ok(let_go(a, b), "both let go at once: nothing held after");
	is_int(nfds(), fds, "fds as before they met");
	is_int(sa.bad + sb.bad, 0, "every payload intact");
	tp_destroy(a, 1000);
	tp_destroy(b, 1000);
	is_int(shm_names(), before, "nothing left in /dev/shm");
}

/* A peer in another process is let go, then killed: nothing here notices. */
static void released_peer_killed(void)
{
	static struct side sa;
	int me = 0, p1[2], p2[2], pc, fds, segs = 0, fail = 0;
	char ca[TP_DYN_CARD_MAX], cc[TP_DYN_CARD_MAX] = "", c = 0;
	pid_t pid;
	tp_t *a;

	if (pipe(p1) < 0 || pipe(p2) < 0) {
		ok(0, "pipes");
		return;
	}
	pid = fork();
	if (pid == 0) { /* the other job: echo 20 fragments, let a go, wait to be killed */
		static struct side sc;
		tp_t *t = make(&sc, "job-j", &me);
		char peer[TP_DYN_CARD_MAX] = "";
		int pp, k = 0;
		if (!t || tp_card(t, cc, sizeof cc) < 0 || write(p2[1], cc, sizeof cc) < 0 ||
		    read(p1[0], peer, sizeof peer) != (ssize_t)sizeof peer ||
		    (pp = tp_add_peer(t, peer)) < 0)
			_exit(1);
		while (sc.n < 20)
			if (tp_poll(t) < 0)
				_exit(2);
		for (uint32_t i = 0; i < 20; i++)
			send_seq(t, pp, i, 1000);
		while (tp_queued(t))
			tp_poll(t);
		tp_release(t, pp);
		while (held(t, &k) || k)
			if (tp_poll(t) < 0)
				_exit(3);
		if (write(p2[1], "r", 1) != 1)
			_exit(4);
		pause();
		_exit(0);
	}
	a = make(&sa, "job-i", &me);
	if (!a || tp_card(a, ca, sizeof ca) < 0 || write(p1[1], ca, sizeof ca) < 0 ||
	    read(p2[0], cc, sizeof cc) != (ssize_t)sizeof cc) {
		ok(0, "a peer in another process");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	fds = nfds();
	pc = tp_add_peer(a, cc);
	for (uint32_t i = 0; i < 20; i++)
		send_seq(a, pc, i, 1000);
	for (double end = now() + 10.0; sa.n < 20 && now() < end;)
		fail |= tp_poll(a) < 0;
	is_int(sa.n, 20, "a and a process of another job talk");
	tp_release(a, pc);
	for (double end = now() + 10.0; (held(a, &segs) || segs) && now() < end;)
		fail |= tp_poll(a) < 0;
	ok(read(p2[0], &c, 1) == 1 && c == 'r', "both let go");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (double end = now() + 0.5; now() < end;)
		fail |= tp_poll(a) < 0;
	is_int(fail, 0, "no poll failed, before or after the peer was killed");
	is_str(tp_error(a), "", "no error");
	ok(!held(a, &segs) && !segs, "nothing of it held");
	is_int(nfds(), fds, "fds as before they met");
	tp_destroy(a, 1000);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
}

int main(void)
{
	bigbuf = malloc(BIG);
	for (size_t i = 0; bigbuf && i < BIG; i++)
		bigbuf[i] = (unsigned char)(i * 7 + (i >> 16));
	unsetenv("LAMKIT_TP");
	unsetenv("LAMKIT_SESSION_DIR");
	switch_order();
	tcp_only_and_bad_cards();
	crash_leaves_a_record();
	release_and_meet_again();
	released_peer_killed();
	free(bigbuf);
	return done_testing();
}
