/* tests/unit/t_tp_shm.c: transport paths between two forked ranks (shm rings, CMA, tcp). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvs_dir.h"
#include "tap.h"
#include "tp.h"

static int full_frags;    /* send every fragment at the largest size (exact ring laps) */
static int mostly_small;  /* short records with a full-size one now and then (the ring's window) */
static size_t small_from; /* the short records' least size */
/* the sender's rings went back to their start early: 1 some, 0 never, -1 unchecked */
static int expect_wraps = -1;

struct hdr {
	uint32_t seq, len;
	uint64_t sum;
};

struct state {
	uint32_t next; /* next expected seq */
	int bad, got, sent_calls;
};

static uint64_t sum(const unsigned char *p, size_t n)
{
	uint64_t s = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		s = (s ^ p[i]) * 1099511628211ULL;
	return s;
}

static void on_recv(void *arg, int peer, const void *h, size_t hlen, const void *data, size_t len)
{
	struct state *st = arg;
	const struct hdr *x = h;

	(void)peer;
	if (hlen != sizeof(*x) || x->seq != st->next || x->len != len || x->sum != sum(data, len))
		st->bad++;
	st->next++;
	st->got++;
}

static void on_sent(void *arg, void *cookie)
{
	(void)cookie;
	((struct state *)arg)->sent_calls++;
}

static tp_t *make(int rank, struct state *st, char *err)
{
	static const int local[2] = {0, 1};
	struct tp_cfg cfg = {
	    .rank = rank, .size = 2, .local_ranks = local, .nlocal = 2, .job = "t_tp_shm"};

	cfg.kvs.put = kput;
	cfg.kvs.get = kget;
	cfg.ops.recv = on_recv;
	cfg.ops.sent = on_sent;
	cfg.arg = st;
	return tp_create(&cfg, err, 256);
}

/* Rank 1: send `count` fragments of growing sizes (some queued), then wait for an echo count. */
static int child(int ready_fd, int go_fd, int count)
{
	struct state st = {0};
	char err[256], c;
	unsigned char *buf;
	tp_t *tp = make(1, &st, err);
	size_t fmax;

	if (!tp || write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1 ||
	    tp_connect(tp, err, sizeof(err)) < 0)
		return 10;
	fmax = tp_frag_max(tp, 0);
	buf = malloc(fmax);
	for (int i = 0; i < count; i++) {
		size_t n = full_frags ? fmax : (size_t)(i * 7919) % (fmax + 1);

		if (mostly_small)
			n = i % 64 == 63 ? fmax : small_from + (size_t)(i * 7919) % 1500;
		struct hdr h;
		int rc;

		for (size_t k = 0; k < n; k++)
			buf[k] = (unsigned char)(i + k);
		h.seq = (uint32_t)i;
		h.len = (uint32_t)n;
		h.sum = sum(buf, n);
		rc = tp_send(tp, 0, &h, sizeof(h), buf, n, NULL);
		if (rc < 0)
			return 11;
		while (rc == 1 && st.sent_calls == 0) /* referenced payload: keep it until sent */
			tp_poll(tp);
		st.sent_calls = 0;
	}
	while (st.got < 1)
		tp_poll(tp);
	if (expect_wraps >= 0 && (tp_shm_wraps(tp) > 0) != expect_wraps)
		return 13;
	tp_destroy(tp, 5000);
	free(buf);
	return st.bad ? 12 : 0;
}

static int expect_get = -1; /* what tp_can_get(peer) must say, -1: not checked */

static void run(const char *what, int count)
{
	int ready[2], go[2], status = -1;
	struct state st = {0};
	char err[256] = "", c;
	pid_t pid;
	tp_t *tp;

	snprintf(kvsdir, sizeof(kvsdir), "/tmp/t_tp_shm.XXXXXX");
	ok(mkdtemp(kvsdir) != NULL, "%s: kvs dir", what);
	if (pipe(ready) < 0 || pipe(go) < 0)
		return;
	tp = make(0, &st, err);
	ok(tp != NULL, "%s: create rank 0 %s", what, err);
	pid = fork();
	if (pid == 0)
		_exit(child(ready[1], go[0], count));
	ok(read(ready[0], &c, 1) == 1, "%s: child published", what);
	ok(write(go[1], "g", 1) == 1, "%s: fence", what);
	ok(tp && tp_connect(tp, err, sizeof(err)) == 0, "%s: connect %s", what, err);
	if (tp && expect_get >= 0)
		is_int(tp_can_get(tp, 1), expect_get, "%s: single-copy get offered", what);
	while (tp && st.got < count)
		if (tp_poll(tp) < 0)
			break;
	is_int(st.got, count, "%s: all fragments arrived", what);
	is_int(st.bad, 0, "%s: in order and intact", what);
	if (tp) {
		struct hdr h = {0, 0, sum(NULL, 0)};
		ok(tp_send(tp, 1, &h, sizeof(h), NULL, 0, NULL) == 0, "%s: echo", what);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status %d", what, status);
	tp_destroy(tp, 5000);
	close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", kvsdir);
		ok(system(cmd) == 0, "%s: cleanup", what);
	}
}

/* Self path and CMA get within one endpoint. */
static void self_and_get(void)
{
	static const int local[1] = {0};
	struct state st = {0};
	struct tp_cfg cfg = {.rank = 0, .size = 1, .local_ranks = local, .nlocal = 1};
	char err[256], src[100] = "single copy", dst[100] = "";
	struct hdr h = {0, 5, sum((const unsigned char *)"hello", 5)};
	tp_t *tp;

	cfg.kvs.put = kput;
	cfg.kvs.get = kget;
	cfg.ops.recv = on_recv;
	cfg.arg = &st;
	tp = tp_create(&cfg, err, sizeof(err));
	ok(tp && tp_connect(tp, err, sizeof(err)) == 0, "self: create");
	if (!tp)
		return;
	is_str(tp_path_name(tp, 0), "self", "self: path name");
	ok(tp_send(tp, 0, &h, sizeof(h), "hello", 5, NULL) == 0, "self: send");
	is_int(st.got, 0, "self: not delivered before poll");
	tp_poll(tp);
	ok(st.got == 1 && st.bad == 0, "self: delivered on poll");
	ok(tp_can_get(tp, 0) && tp_get(tp, 0, dst, (uint64_t)(uintptr_t)src, 12) == 0 &&
	       strcmp(dst, "single copy") == 0,
	   "self: get");
	tp_destroy(tp, 0);
}

int main(void)
{
	char before[64], cmd[512];

	/* other runs on this machine make and remove segments meanwhile: only ours count */
	snprintf(before, sizeof before, "/tmp/t_tp_shm.%ld", (long)getpid());
	snprintf(cmd, sizeof cmd, "ls /dev/shm | grep lkmpi- | sort >%s", before);
	if (system(cmd) < 0)
		return 1;
	self_and_get();
	setenv("LAMKIT_SHM_RING", "65536", 1); /* small rings: wrap-around and queueing */
	setenv("LAMKIT_SHM_LARGE", "copy", 1); /* the pipelined way for large messages */
	expect_get = 0;
	run("shm", 2000);
	/* a window of 8 KiB in the 64 KiB rings (tp_ring.h, TP_RING_WINDOW): ranks that block
	 * (share CPUs) go back to the start while the receiver keeps up, with a window of twice
	 * the record for the full-size ones (16 KiB); ranks that spin, and no window, never do */
	setenv("LAMKIT_SHM_WINDOW", "8192", 1);
	mostly_small = 1;
	setenv("LAMKIT_WAIT", "block", 1);
	expect_wraps = 1;
	run("shm-window", 3000);
	small_from = 2500; /* 2.5-4 KiB */
	run("shm-window-larger", 2000);
	setenv("LAMKIT_WAIT", "spin", 1); /* whatever this machine's CPUs */
	expect_wraps = 0;
	run("shm-window-spin", 1000);
	setenv("LAMKIT_WAIT", "block", 1);
	setenv("LAMKIT_SHM_WINDOW", "0", 1);
	run("shm-no-window", 1000);
	unsetenv("LAMKIT_WAIT");
	small_from = 0;
	mostly_small = 0;
	expect_wraps = -1;
	unsetenv("LAMKIT_SHM_WINDOW");
	full_frags = 1;
	unsetenv("LAMKIT_SHM_LARGE"); /* the default: the receiver reads large messages */
	expect_get = 1;
	run("shm-laps", 400);
	full_frags = 0;
	setenv("LAMKIT_SHM_LARGE", "cma", 1);
	run("shm-cma", 300);
	setenv("LAMKIT_TP", "tcp", 1);
	expect_get = 0;
	run("tcp", 500);
	{
		/* a new segment is ours when its maker (the pid its name ends with) is us or gone:
		 * one whose maker still runs is another run's, in use */
		snprintf(
		    cmd, sizeof cmd,
		    "ls /dev/shm | grep '^lkmpi-' | sort | comm -13 %s - | while read -r n; do "
		    "p=${n##*-}; [ \"$p\" = %ld ] || ! kill -0 \"$p\" 2>/dev/null && echo \"$n\"; "
		    "done | grep -q .",
		    before, (long)getpid());
		int leaks = system(cmd);
		ok(leaks != 0, "no shm segment left behind");
		unlink(before);
	}
	return done_testing();
}
