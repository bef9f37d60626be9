/* tests/unit/t_tp_bell.c: an idle endpoint sleeps in tp_sleep and a peer's send wakes it. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kvs_dir.h"
#include "tap.h"
#include "tp.h"

static int got;

static void on_recv(void *arg, int peer, const void *h, size_t hlen, const void *data, size_t len)
{
	(void)arg, (void)peer, (void)h, (void)hlen, (void)data, (void)len;
	got++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static tp_t *make(int rank, char *err)
{
	static const int local[2] = {0, 1};
	struct tp_cfg cfg = {
	    .rank = rank, .size = 2, .local_ranks = local, .nlocal = 2, .job = "t_tp_bell"};

	cfg.kvs.put = kput;
	cfg.kvs.get = kget;
	cfg.ops.recv = on_recv;
	return tp_create(&cfg, err, 256);
}

#define TIMEOUT_MS 2000 /* a missed wake-up would cost this much: the counts below show it */

/* Wait for the next fragment the way an idle MPI rank does: poll, and sleep while nothing
 * comes (or poll on, while the endpoint cannot sleep). Counts the sleeps that ran to the
 * timeout (a wake-up that never came). */
static int wait_one(tp_t *tp, int *timeouts, int *sleeps)
{
	int want = got + 1;
	double end = now() + 30;

	while (got < want && now() < end) {
		int n = tp_poll(tp);
		if (n < 0)
			return -1;
		if (n == 0 && got < want) {
			int r = tp_sleep(tp, TIMEOUT_MS);
			if (r < 0)
				continue; /* cannot sleep now (a fragment still queued): poll */
			(*sleeps)++;
			if (r == 0)
				(*timeouts)++;
		}
	}
	return got >= want ? 0 : -1;
}

/* Ping-pong of `rounds`, both sides sleeping whenever idle; the child (rank 1) also pauses
 * 0-2 ms now and then before answering, so that rank 0 is asleep when the answer comes. */
static int side(tp_t *tp, int me, int rounds, int *timeouts, int *sleeps)
{
	char b[8] = "bell";

	for (int i = 0; i < rounds; i++) {
		if (me == 0 && tp_send(tp, 1, b, sizeof b, NULL, 0, NULL) < 0)
			return -1;
		if (wait_one(tp, timeouts, sleeps) < 0)
			return -2;
		if (me == 1) {
			if (i % 3 == 0)
				nanosleep(&(struct timespec){0, (long)(i % 7) * 300000L}, NULL);
			if (tp_send(tp, 0, b, sizeof b, NULL, 0, NULL) < 0)
				return -3;
		}
	}
	return 0;
}

static void run(const char *what, int rounds)
{
	int ready[2], go[2], status = -1, timeouts = 0, sleeps = 0, rc = -9;
	char err[256] = "", c;
	double t0;
	pid_t pid;
	tp_t *tp;

	got = 0;
	snprintf(kvsdir, sizeof kvsdir, "/tmp/t_tp_bell.XXXXXX");
	ok(mkdtemp(kvsdir) != NULL, "%s: kvs dir", what);
	if (pipe(ready) < 0 || pipe(go) < 0)
		return;
	tp = make(0, err);
	ok(tp != NULL, "%s: create rank 0 %s", what, err);
	pid = fork();
	if (pid == 0) {
		tp_t *t1 = make(1, err);
		int to = 0, sl = 0, r;
		if (!t1 || write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1 ||
		    tp_connect(t1, err, sizeof err) < 0)
			_exit(10);
		r = side(t1, 1, rounds, &to, &sl);
		tp_destroy(t1, 5000);
		/* every sleep of the child ended by a wake-up: rank 0 sends only after the child
		 * answered, so none of them may run to the timeout */
		_exit(r < 0 ? 11 : to ? 12 : sl == 0 ? 13 : 0);
	}
	ok(read(ready[0], &c, 1) == 1, "%s: child published", what);
	ok(write(go[1], "g", 1) == 1, "%s: fence", what);
	ok(tp && tp_connect(tp, err, sizeof err) == 0, "%s: connect %s", what, err);
	t0 = now();
	if (tp)
		rc = side(tp, 0, rounds, &timeouts, &sleeps);
	is_int(rc, 0, "%s: %d round trips", what, rounds);
	/* rank 0 surely sleeps in the rounds where the child pauses 0.3-1.8 ms (2 in 7 rounds);
	 * in the others the answer often comes before it sleeps, the more so on a busy machine
	 * (tcp: 245 sleeps in 500 rounds at load 6, where half was asked) */
	ok(sleeps > rounds / 5, "%s: rank 0 slept while waiting (%d sleeps)", what, sleeps);
	is_int(timeouts, 0, "%s: every sleep of rank 0 ended by a wake-up, none by the timeout",
	       what);
	/* a missed wake-up costs TIMEOUT_MS; the child's pauses add up to ~0.2 s */
	ok(now() - t0 < 10.0, "%s: in %.2f s", what, now() - t0);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "%s: the child's sleeps all ended by a wake-up too (status %d)", what, status);
	tp_destroy(tp, 5000);
	close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf %s", kvsdir);
		ok(system(cmd) == 0, "%s: cleanup", what);
	}
}

int main(void)
{
	char err[256];
	tp_t *tp;

	/* a job that fits its CPUs keeps spinning on its node rings: it cannot sleep */
	setenv("LAMKIT_YIELD", "0", 1);
	snprintf(kvsdir, sizeof kvsdir, "/tmp/t_tp_bell.XXXXXX");
	if (!mkdtemp(kvsdir))
		return 1;
	tp = make(0, err);
	is_int(tp ? tp_sleep(tp, 10) : -2, -1, "fits its CPUs: no sleep on node rings");
	tp_destroy(tp, 0);
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf %s", kvsdir);
		if (system(cmd) != 0)
			return 1;
	}
	/* oversubscribed (forced): ranks sleep, and a write to a ring rings the bell */
	setenv("LAMKIT_YIELD", "1", 1);
	run("shm", 2000);
	/* over tcp the socket itself wakes the sleeper */
	setenv("LAMKIT_TP", "tcp", 1);
	run("tcp", 500);
	return done_testing();
}
