/* tests/mpi/lk_wait.c: blocking waits: what a rank blocked in MPI costs in CPU, and a stress of
 * the doorbells (many messages of random sizes in random patterns, every one checked). */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lk_util.h"

/*
 * argv (none: idle 100 recv, idle 100 barrier and stress 100 1 65536):
 *   idle MS OP[,OP...]   for each OP: rank 0 computes (sleeps, no MPI call) for MS ms, then
 *                joins OP; every other
 *                rank blocks in OP meanwhile and prints the CPU time it used in it:
 *                "lk_wait: rank R op=OP wall_ms=W cpu_ms=C". OP: recv (MPI_Recv from 0), wait
 *                (MPI_Irecv + MPI_Wait), barrier, bcast, allreduce, fence (MPI_Win_fence on a
 *                window of MPI_Win_create), lock (MPI_Win_lock on rank 0's window, which rank
 *                0 holds exclusively meanwhile), send (MPI_Send of 2000 ints to rank 0: with
 *                small node rings the sender waits for room).
 *   stress N SEED [MAXBYTES]   N rounds of random patterns (shifts, gathers, collectives, a
 *                late rank, a flood of small messages to a late rank, storms), sizes 0 .. MAXBYTES
 *                (default 262144, log-spread) drawn from SEED alike on every rank; every
 *                payload is checked. Prints "lk_wait: stress rounds=N messages=M" on rank 0.
 * A watchdog: a rank that spends more than LK_WAIT_WATCHDOG seconds (default 60) in one round
 * prints where it waits and exits 3.
 */

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int pick(int n)
{
	return (int)(next() % (uint64_t)n);
}

static double cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define SEND_FLOOD 2000 /* messages each rank sends in op "send" */

static int idle(int ms, const char *op)
{
	double w0, c0, w, c;
	int v = 0, sum = 0, *mem = calloc(1024, sizeof(int));
	MPI_Win win;
	MPI_Request r;

	if (!strcmp(op, "fence") || !strcmp(op, "lock")) {
		MPI_Win_create(mem, 1024 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
		               &win);
		MPI_Win_fence(0, win);
	}
	if (!strcmp(op, "lock") && lk_rank == 0)
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	w0 = wall_ms();
	c0 = cpu_ms();
	if (lk_rank == 0) {
		nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL);
		v = 42;
	}
	if (!strcmp(op, "recv")) {
		if (lk_rank == 0)
			for (int i = 1; i < lk_size; i++)
				MPI_Send(&v, 1, MPI_INT, i, 7, MPI_COMM_WORLD);
		else
			MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (!strcmp(op, "wait")) {
		if (lk_rank == 0) {
			for (int i = 1; i < lk_size; i++)
				MPI_Send(&v, 1, MPI_INT, i, 7, MPI_COMM_WORLD);
		} else {
			MPI_Irecv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
	} else if (!strcmp(op, "send")) {
		/* every other rank floods rank 0 until its node ring is full (LAMKIT_SHM_RING=16384
		 * holds 128 small messages) and waits in MPI_Send for room */
		if (lk_rank == 0) {
			for (int i = 0; i < (lk_size - 1) * SEND_FLOOD; i++)
				MPI_Recv(&sum, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
				         MPI_STATUS_IGNORE);
			v = sum;
		} else {
			v = 42;
			for (int i = 0; i < SEND_FLOOD; i++)
				MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
		}
	} else if (!strcmp(op, "barrier")) {
		MPI_Barrier(MPI_COMM_WORLD);
		v = 42;
	} else if (!strcmp(op, "bcast")) {
		MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
	} else if (!strcmp(op, "allreduce")) {
		MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		v = sum;
	} else if (!strcmp(op, "fence")) {
		MPI_Win_fence(0, win);
		v = 42;
	} else if (!strcmp(op, "lock")) {
		if (lk_rank == 0) {
			mem[0] = 42;
			MPI_Win_unlock(0, win);
		} else {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
			MPI_Win_unlock(0, win);
		}
	} else {
		LK_CHECK(0, "unknown op %s", op);
	}
	w = wall_ms() - w0;
	c = cpu_ms() - c0;
	LK_CHECK(v == 42, "%s: got %d, want 42", op, v);
	if (lk_rank != 0)
		printf("lk_wait: rank %d op=%s wall_ms=%.0f cpu_ms=%.1f\n", lk_rank, op, w, c);
	fflush(stdout);
	if (!strcmp(op, "fence") || !strcmp(op, "lock"))
		MPI_Win_free(&win);
	free(mem);
	return 0;
}

/* ---- stress ---- */

static volatile sig_atomic_t round_now;
static char where[160];
static int watchdog_s = 60;

static void on_alarm(int sig)
{
	char line[256];
	int n = snprintf(line, sizeof line, "lk_wait: watchdog: rank %d stuck in round %d: %s\n",
	                 lk_rank, (int)round_now, where);

	(void)sig;
	if (n > 0 && write(2, line, (size_t)n) < 0)
		(void)0;
	_exit(3);
}

static void at(int round, const char *what, int peer)
{
	round_now = round;
	snprintf(where, sizeof where, "%s (peer %d)", what, peer);
}

/* A size from 0 to max, spread over the powers of two, sometimes a round one. */
static int draw_size(int max)
{
	int bits = 0, r;

	while ((1 << (bits + 1)) <= max)
		bits++;
	r = pick(bits + 2);
	if (r == 0)
		return 0;
	if (r > bits)
		return max;
	int lo = 1 << (r - 1), hi = 1 << r;
	return pick(4) ? lo + pick(hi - lo) : lo;
}

static unsigned char byte_of(int round, int src, int seq, int i)
{
	return (unsigned char)(round * 131 + src * 31 + seq * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *p, int n, int round, int src, int seq)
{
	for (int i = 0; i < n; i++)
		p[i] = byte_of(round, src, seq, i);
}

static int check(const unsigned char *p, int n, int round, int src, int seq)
{
	for (int i = 0; i < n; i++)
		if (p[i] != byte_of(round, src, seq, i))
			return i;
	return -1;
}

static long nmsg;

/* Tags: a storm's are 0..15 (received with MPI_ANY_TAG, and a barrier ends it); a shift's and a
 * gather's name their round, so that a rank a round ahead never meets a receive of the round
 * its peer is still in (any tag below 32768 is valid in every MPI). */
#define SHIFT_TAG(round)  (16 + (round) % 8000)
#define GATHER_TAG(round) (8016 + (round) % 8000)
#define FLOOD_TAG(round)  (16016 + (round) % 8000)

/* Every rank sends one message to perm[rank] and receives one from its inverse. */
static void shift_round(int round, unsigned char *sb, unsigned char *rb, int max)
{
	int *perm = malloc(sizeof(int) * (size_t)lk_size),
	    *size = malloc(sizeof(int) * (size_t)lk_size);
	int from = -1, bad;
	MPI_Request r[2];
	MPI_Status sts[2]; /* not MPI_STATUSES_IGNORE: gcc 12 warns with MPICH's mpi.h */

	for (int i = 0; i < lk_size; i++)
		perm[i] = i;
	for (int i = lk_size - 1; i > 0; i--) {
		int j = pick(i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int i = 0; i < lk_size; i++) {
		size[i] = draw_size(max);
		if (perm[i] == lk_rank)
			from = i;
	}
	fill(sb, size[lk_rank], round, lk_rank, 0);
	at(round, "shift: Irecv/Isend/Waitall", from);
	MPI_Irecv(rb, size[from], MPI_BYTE, from, SHIFT_TAG(round), MPI_COMM_WORLD, &r[0]);
	MPI_Isend(sb, size[lk_rank], MPI_BYTE, perm[lk_rank], SHIFT_TAG(round), MPI_COMM_WORLD,
	          &r[1]);
	MPI_Waitall(2, r, sts);
	bad = check(rb, size[from], round, from, 0);
	LK_CHECK(bad < 0, "round %d: shift from %d: %d bytes, byte %d wrong", round, from,
	         size[from], bad);
	nmsg += lk_size;
	free(perm);
	free(size);
}

/* Every rank sends k (0..7) messages to one random root, which takes them with ANY_SOURCE. */
static void gather_round(int round, unsigned char *sb, unsigned char *rb, int max)
{
	int root = pick(lk_size), total = 0, *k = malloc(sizeof(int) * (size_t)lk_size);
	int *seen = calloc((size_t)lk_size, sizeof(int));
	int nsz = 0, *szs;

	for (int i = 0; i < lk_size; i++) {
		k[i] = i == root ? 0 : pick(8);
		total += k[i];
	}
	szs = malloc(sizeof(int) * (size_t)(total + 1));
	for (int i = 0; i < lk_size; i++)
		for (int j = 0; j < k[i]; j++)
			szs[nsz++] = draw_size(max / 4);
	if (lk_rank == root) {
		for (int m = 0; m < total; m++) {
			MPI_Status st;
			int cnt, src, seq, off = 0, bad;
			at(round, "gather: MPI_Recv ANY_SOURCE", -1);
			MPI_Recv(rb, max, MPI_BYTE, MPI_ANY_SOURCE, GATHER_TAG(round),
			         MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			src = st.MPI_SOURCE;
			seq = seen[src]++;
			for (int i = 0; i < src; i++)
				off += k[i];
			LK_CHECK(seq < k[src] && cnt == szs[off + seq],
			         "round %d: gather from %d: message %d of %d, %d bytes", round, src,
			         seq, k[src], cnt);
			bad = seq < k[src] ? check(rb, cnt, round, src, seq) : -1;
			LK_CHECK(bad < 0, "round %d: gather from %d: byte %d wrong", round, src,
			         bad);
		}
	} else {
		int off = 0;
		for (int i = 0; i < lk_rank; i++)
			off += k[i];
		for (int j = 0; j < k[lk_rank]; j++) {
			fill(sb, szs[off + j], round, lk_rank, j);
			at(round, "gather: MPI_Send", root);
			MPI_Send(sb, szs[off + j], MPI_BYTE, root, GATHER_TAG(round),
			         MPI_COMM_WORLD);
		}
	}
	nmsg += total;
	free(k);
	free(seen);
	free(szs);
}

/* A collective of a random kind and size. */
static void coll_round(int round, unsigned char *sb, unsigned char *rb, int max)
{
	int kind = pick(5), n = draw_size(max / lk_size / 8) / 8, root = pick(lk_size);
	long *a = (long *)sb, *b = (long *)rb;

	for (int i = 0; i < n; i++)
		a[i] = round + lk_rank + i;
	at(round,
	   kind == 0   ? "barrier"
	   : kind == 1 ? "bcast"
	   : kind == 2 ? "allreduce"
	   : kind == 3 ? "alltoall"
	               : "reduce",
	   root);
	if (kind == 0) {
		MPI_Barrier(MPI_COMM_WORLD);
	} else if (kind == 1) {
		if (lk_rank != root)
			for (int i = 0; i < n; i++)
				a[i] = 0;
		else
			for (int i = 0; i < n; i++)
				a[i] = round + i;
		MPI_Bcast(a, n, MPI_LONG, root, MPI_COMM_WORLD);
		for (int i = 0; i < n; i++)
			LK_CHECK(a[i] == round + i, "round %d: bcast [%d] = %ld", round, i, a[i]);
	} else if (kind == 2 || kind == 4) {
		long base = (long)lk_size * (lk_size - 1) / 2;
		if (kind == 2)
			MPI_Allreduce(a, b, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		else
			MPI_Reduce(a, b, n, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD);
		if (kind == 2 || lk_rank == root)
			for (int i = 0; i < n; i++)
				LK_CHECK(b[i] == (long)lk_size * (round + i) + base,
				         "round %d: reduce [%d] = %ld", round, i, b[i]);
	} else {
		int per = n / lk_size;
		for (int d = 0; d < lk_size; d++)
			for (int i = 0; i < per; i++)
				a[d * per + i] = lk_rank * 1000003L + d * 1009L + i + round;
		MPI_Alltoall(a, per, MPI_LONG, b, per, MPI_LONG, MPI_COMM_WORLD);
		for (int s = 0; s < lk_size; s++)
			for (int i = 0; i < per; i++)
				LK_CHECK(b[s * per + i] ==
				             s * 1000003L + lk_rank * 1009L + i + round,
				         "round %d: alltoall from %d [%d]", round, s, i);
	}
	nmsg += lk_size;
}

/* One random rank computes a while (no MPI) while the others wait for it: they sleep. */
static void late_round(int round)
{
	int late = pick(lk_size), us = 200 + pick(3000), v = round;

	if (lk_rank == late)
		nanosleep(&(struct timespec){0, us * 1000L}, NULL);
	at(round, "late: bcast", late);
	MPI_Bcast(&v, 1, MPI_INT, late, MPI_COMM_WORLD);
	LK_CHECK(v == round, "round %d: late bcast %d", round, v);
	nmsg += lk_size - 1;
}

/* Windows of Isends to random peers, received with ANY_SOURCE and ANY_TAG. */
static void storm_round(int round, unsigned char *sb, unsigned char *rb, int max)
{
	int n = 1 + pick(16), *to = malloc(sizeof(int) * (size_t)(n * lk_size));
	int *sz = malloc(sizeof(int) * (size_t)(n * lk_size)), mine = 0, slot = max / 16 / n;
	MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)n);
	MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)n);

	for (int i = 0; i < n * lk_size; i++) {
		to[i] = pick(lk_size);
		sz[i] = draw_size(slot);
		if (to[i] == lk_rank)
			mine++;
	}
	for (int j = 0; j < n; j++) {
		int m = lk_rank * n + j;
		fill(sb + (size_t)j * (size_t)slot, sz[m], round, lk_rank, j);
		MPI_Isend(sb + (size_t)j * (size_t)slot, sz[m], MPI_BYTE, to[m], j, MPI_COMM_WORLD,
		          &r[j]);
	}
	for (int k = 0; k < mine; k++) {
		MPI_Status st;
		int cnt, bad;
		at(round, "storm: MPI_Recv ANY", -1);
		MPI_Recv(rb, slot, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		int m = st.MPI_SOURCE * n + st.MPI_TAG;
		LK_CHECK(to[m] == lk_rank && cnt == sz[m],
		         "round %d: storm from %d tag %d: %d bytes", round, st.MPI_SOURCE,
		         st.MPI_TAG, cnt);
		bad = check(rb, cnt, round, st.MPI_SOURCE, st.MPI_TAG);
		LK_CHECK(bad < 0, "round %d: storm from %d: byte %d wrong", round, st.MPI_SOURCE,
		         bad);
	}
	at(round, "storm: Waitall", -1);
	MPI_Waitall(n, r, sts);
	/* the next round's messages must not meet this round's receives (ANY_TAG) */
	MPI_Barrier(MPI_COMM_WORLD);
	nmsg += (long)n * lk_size;
	free(to);
	free(sz);
	free(r);
	free(sts);
}

/* One rank sends a flood of small messages to another, which is late (computes first): the
 * sender's node ring fills, and it waits for room (with small rings: LAMKIT_SHM_RING). */
static void flood_round(int round, unsigned char *sb, unsigned char *rb)
{
	int from = pick(lk_size), to = (from + 1 + pick(lk_size > 1 ? lk_size - 1 : 1)) % lk_size;
	int n = 64 + pick(577), us = 200 + pick(2000), *sz = malloc(sizeof(int) * (size_t)n);

	for (int j = 0; j < n; j++)
		sz[j] = draw_size(256);
	if (lk_size < 2) { /* no one to flood */
		free(sz);
		return;
	}
	if (lk_rank == from) {
		for (int j = 0; j < n; j++) {
			fill(sb, sz[j], round, from, j);
			at(round, "flood: MPI_Send", to);
			MPI_Send(sb, sz[j], MPI_BYTE, to, FLOOD_TAG(round), MPI_COMM_WORLD);
		}
	} else if (lk_rank == to) {
		nanosleep(&(struct timespec){0, us * 1000L}, NULL);
		for (int j = 0; j < n; j++) {
			MPI_Status st;
			int cnt, bad;
			at(round, "flood: MPI_Recv", from);
			MPI_Recv(rb, 256, MPI_BYTE, from, FLOOD_TAG(round), MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			LK_CHECK(cnt == sz[j], "round %d: flood message %d: %d bytes, not %d",
			         round, j, cnt, sz[j]);
			bad = check(rb, cnt, round, from, j);
			LK_CHECK(bad < 0, "round %d: flood message %d: byte %d wrong", round, j,
			         bad);
		}
	}
	nmsg += n;
	free(sz);
}

static int stress(int rounds, uint64_t seed, int max)
{
	unsigned char *sb = malloc((size_t)max), *rb = malloc((size_t)max);
	const char *w = getenv("LK_WAIT_WATCHDOG");
	double t0 = wall_ms();

	if (w && atoi(w) > 0)
		watchdog_s = atoi(w);
	signal(SIGALRM, on_alarm);
	rng = seed ? seed : 88172645463325252ull;
	for (int round = 0; round < rounds; round++) {
		alarm((unsigned)watchdog_s);
		switch (pick(6)) {
		case 0:
			shift_round(round, sb, rb, max);
			break;
		case 1:
			gather_round(round, sb, rb, max);
			break;
		case 2:
			coll_round(round, sb, rb, max);
			break;
		case 3:
			late_round(round);
			break;
		case 4:
			flood_round(round, sb, rb);
			break;
		default:
			storm_round(round, sb, rb, max);
		}
	}
	alarm(0);
	long total = 0;
	MPI_Reduce(&nmsg, &total, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
	if (lk_rank == 0)
		printf("lk_wait: stress rounds=%d messages=%ld seconds=%.1f\n", rounds, total,
		       (wall_ms() - t0) / 1e3);
	free(sb);
	free(rb);
	return 0;
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_wait");
	if (argc >= 4 && !strcmp(argv[1], "idle")) {
		char *ops = strdup(argv[3]), *save = NULL;
		for (char *op = strtok_r(ops, ",", &save); op; op = strtok_r(NULL, ",", &save))
			idle(atoi(argv[2]), op);
		free(ops);
	} else if (argc >= 4 && !strcmp(argv[1], "stress"))
		stress(atoi(argv[2]), strtoull(argv[3], NULL, 0),
		       argc > 4 && atoi(argv[4]) >= 1024 ? atoi(argv[4]) : 262144);
	else if (argc == 1) { /* a short run of both, as the suite runs every lk_* program */
		idle(100, "recv");
		idle(100, "barrier");
		stress(100, 1, 65536);
	} else
		LK_CHECK(0, "usage: lk_wait [idle MS OP[,OP...] | stress N SEED [MAXBYTES]]");
	return lk_finish();
}
