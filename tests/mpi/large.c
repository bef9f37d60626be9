/* tests/mpi/large.c: point-to-point of 0 B .. 8 MiB with verified contents, ANY_SOURCE and tag
 * order. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * argv: [maxbytes [busy]] (default 8388608). Message sizes: 0, 1, every power of two up to
 * maxbytes and odd sizes 3, 7, 1000, 4095, 65537, 1000003, maxbytes-1. Phases: ring shift
 * (Irecv+Send, Sendrecv), blocking echo between rank pairs (0,1),(2,3)..., MPI_ANY_SOURCE/ANY_TAG
 * with Probe to rank 0, receive-by-tag in reverse order, same-tag ordering. With "busy" (ranks 0
 * and 1 on one node, over shared memory with its single-copy read) also: rank 0 starts a 4 MiB
 * send and computes for 600 ms without calling MPI; rank 1's receive must complete meanwhile,
 * whether or not the sender helps copy. Rank 0 prints "large: OK size=N sizes=K bytes=B" and all
 * exit 0; otherwise errors go to stderr, rank 0 prints "large: FAIL size=N errors=E" and all
 * exit 1.
 */

static int g_rank, g_size;
static long g_errors;

static void fail(const char *fmt, const char *what, long a, long b, long c)
{
	char msg[256];

	if (g_errors++ < 10) { /* one fprintf per line so that ranks do not mix within a line */
		snprintf(msg, sizeof(msg), fmt, what, a, b, c);
		fprintf(stderr, "large: rank %d: %s\n", g_rank, msg);
	}
}

/* Byte k of a message of n bytes written by rank src for phase salt. */
static unsigned char pat(long n, int src, int salt, long k)
{
	unsigned long x = (unsigned long)k * 131u + (unsigned long)n * 7u +
	                  (unsigned long)src * 31u + (unsigned long)salt * 101u +
	                  ((unsigned long)k >> 8) * 17u + ((unsigned long)k >> 16) * 3u;
	return (unsigned char)(x ^ (x >> 8));
}

static void fill(unsigned char *b, long n, int src, int salt)
{
	for (long k = 0; k < n; k++)
		b[k] = pat(n, src, salt, k);
}

/* Check n bytes and the status count; report the first differing byte. */
static void verify(const char *what, const unsigned char *b, long n, int src, int salt,
                   MPI_Status *st)
{
	int cnt = -1;
	MPI_Get_count(st, MPI_BYTE, &cnt);
	if (cnt != n)
		fail("%s: size %ld: count %ld (from %ld)", what, n, cnt, src);
	for (long k = 0; k < n; k++)
		if (b[k] != pat(n, src, salt, k)) {
			fail("%s: size %ld: byte %ld wrong (from %ld)", what, n, k, src);
			return;
		}
}

static unsigned char *xalloc(long n)
{
	unsigned char *p = malloc((size_t)(n > 0 ? n : 1));
	if (!p) {
		fprintf(stderr, "large: rank %d: out of memory for %ld bytes\n", g_rank, n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

static void phase_ring(long n, unsigned char *s, unsigned char *r)
{
	int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
	MPI_Request rq;
	MPI_Status st;

	fill(s, n, g_rank, 1);
	memset(r, 0xee, (size_t)(n > 0 ? n : 1));
	MPI_Irecv(r, (int)n, MPI_BYTE, prev, 11, MPI_COMM_WORLD, &rq);
	MPI_Send(s, (int)n, MPI_BYTE, next, 11, MPI_COMM_WORLD);
	MPI_Wait(&rq, &st);
	verify("ring-irecv", r, n, prev, 1, &st);

	fill(s, n, g_rank, 2);
	memset(r, 0xee, (size_t)(n > 0 ? n : 1));
	MPI_Sendrecv(s, (int)n, MPI_BYTE, next, 12, r, (int)n, MPI_BYTE, prev, 12, MPI_COMM_WORLD,
	             &st);
	verify("ring-sendrecv", r, n, prev, 2, &st);
}

static void phase_pair(long n, unsigned char *s, unsigned char *r)
{
	int peer = g_rank ^ 1;
	MPI_Status st;

	if (peer >= g_size)
		return;
	fill(s, n, g_rank, 3);
	memset(r, 0xee, (size_t)(n > 0 ? n : 1));
	if (g_rank % 2 == 0) {
		MPI_Send(s, (int)n, MPI_BYTE, peer, 13, MPI_COMM_WORLD);
		MPI_Recv(r, (int)n, MPI_BYTE, peer, 13, MPI_COMM_WORLD, &st);
	} else {
		MPI_Recv(r, (int)n, MPI_BYTE, peer, 13, MPI_COMM_WORLD, &st);
		MPI_Send(s, (int)n, MPI_BYTE, peer, 13, MPI_COMM_WORLD);
	}
	verify("pair", r, n, peer, 3, &st);
}

#define NANY    8
#define ANY_MAX 300001
/* Size of message number t that rank src sends to rank 0 in the ANY_SOURCE phase. */
static long any_size(int src, int t)
{
	static const long sz[NANY] = {0, 1, 17, 4096, 65536, 65537, 300001, 2};
	return sz[(t + src) % NANY];
}

static void phase_any_source(void)
{
	if (g_size < 2)
		return;
	if (g_rank != 0) {
		for (int t = 0; t < NANY; t++) {
			long n = any_size(g_rank, t);
			unsigned char *s = xalloc(n);
			fill(s, n, g_rank, 4 + t);
			MPI_Send(s, (int)n, MPI_BYTE, 0, 100 + t, MPI_COMM_WORLD);
			free(s);
		}
		return;
	}
	int *next_tag = calloc((size_t)g_size, sizeof(int));
	unsigned char *r = xalloc(ANY_MAX);
	if (!next_tag)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (long m = 0; m < (long)(g_size - 1) * NANY; m++) {
		MPI_Status st;
		int cnt = -1;
		if (m % 2 == 0) { /* probe anything, then receive exactly the probed message */
			MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			if (st.MPI_SOURCE < 1 || st.MPI_SOURCE >= g_size || cnt < 0 ||
			    cnt > ANY_MAX) {
				fprintf(stderr, "large: probe: bad source %d count %d\n",
				        st.MPI_SOURCE, cnt);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			MPI_Recv(r, cnt, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
		} else {
			MPI_Recv(r, ANY_MAX, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
			         &st);
		}
		int src = st.MPI_SOURCE, t = st.MPI_TAG - 100;
		if (src < 1 || src >= g_size || t < 0 || t >= NANY) {
			fprintf(stderr, "large: any: bad source %d tag %d\n", src, st.MPI_TAG);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		if (t != next_tag[src]) /* messages from one source must not overtake each other */
			fail("%s: from %ld got tag %ld want %ld", "any-order", src, 100 + t,
			     100 + next_tag[src]);
		verify("any", r, any_size(src, t), src, 4 + t, &st);
		next_tag[src] = t + 1;
	}
	free(r);
	free(next_tag);
}

#define NTAGS 16
/* Rank 1 sends tags 0..NTAGS-1 then NTAGS same-tag messages; rank 0 receives tags in reverse order.
 */
static void phase_tags(void)
{
	int buf[2 * NTAGS], v[2 * NTAGS];
	MPI_Status st;

	if (g_size < 2 || g_rank > 1)
		return;
	if (g_rank == 1) {
		MPI_Request rq[2 * NTAGS];
		MPI_Status
		    sts[2 * NTAGS]; /* not MPI_STATUSES_IGNORE: gcc 12 warns with MPICH headers */
		for (int t = 0; t < 2 * NTAGS; t++) {
			v[t] = 1000 + t;
			MPI_Isend(&v[t], 1, MPI_INT, 0, t < NTAGS ? t : 999, MPI_COMM_WORLD,
			          &rq[t]);
		}
		MPI_Waitall(2 * NTAGS, rq, sts);
		return;
	}
	for (int t = NTAGS - 1; t >= 0; t--) {
		MPI_Recv(&buf[t], 1, MPI_INT, 1, t, MPI_COMM_WORLD, &st);
		if (buf[t] != 1000 + t || st.MPI_TAG != t)
			fail("%s: tag %ld got %ld (%ld)", "tags", t, buf[t], st.MPI_TAG);
	}
	for (int i = NTAGS; i < 2 * NTAGS; i++) {
		MPI_Recv(&buf[i], 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &st);
		if (buf[i] != 1000 + i)
			fail("%s: same-tag message %ld got %ld (%ld)", "tags", i, buf[i], 0);
	}
}

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The receiver does not need the sender to call MPI once its send has started. */
static void phase_busy(void)
{
	const long n = (4L << 20) + 1000;
	unsigned char *b = xalloc(n);
	double t[2] = {0, 0}; /* rank 1: receive done; rank 0: computing ended */
	MPI_Request rq;

	if (g_rank == 1)
		MPI_Irecv(b, (int)n, MPI_BYTE, 0, 77, MPI_COMM_WORLD, &rq);
	if (g_rank == 0)
		fill(b, n, 0, 77);
	MPI_Barrier(MPI_COMM_WORLD);
	if (g_rank == 0) {
		MPI_Isend(b, (int)n, MPI_BYTE, 1, 77, MPI_COMM_WORLD, &rq);
		for (double end = mono() + 0.6; mono() < end;)
			;
		t[1] = mono();
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		MPI_Recv(t, 1, MPI_DOUBLE, 1, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (t[0] > t[1])
			fail("%s: the receive of %ld bytes completed %ld ms after the sender's %ld "
			     "ms "
			     "of computing",
			     "busy", n, (long)((t[0] - t[1]) * 1000), 600);
	} else if (g_rank == 1) {
		MPI_Status st;
		MPI_Wait(&rq, &st);
		t[0] = mono();
		verify("busy", b, n, 0, 77, &st);
		MPI_Send(t, 1, MPI_DOUBLE, 0, 78, MPI_COMM_WORLD);
	}
	free(b);
}

int main(int argc, char **argv)
{
	long maxb = 8L << 20, sizes[64], bytes = 0, errs = 0;
	int ns = 0;
	static const long odd[] = {3, 7, 1000, 4095, 65537, 1000003};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_size);
	if (argc > 1)
		maxb = atol(argv[1]);
	if (maxb < 1 || maxb > (1L << 30))
		maxb = 8L << 20;
	sizes[ns++] = 0;
	for (long n = 1; n <= maxb; n *= 2)
		sizes[ns++] = n;
	for (unsigned i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		if (odd[i] <= maxb)
			sizes[ns++] = odd[i];
	if (maxb > 2)
		sizes[ns++] = maxb - 1;

	unsigned char *s = xalloc(maxb), *r = xalloc(maxb);
	for (int i = 0; i < ns; i++) {
		phase_ring(sizes[i], s, r);
		phase_pair(sizes[i], s, r);
		bytes += 3 * sizes[i];
	}
	free(s);
	free(r);
	phase_any_source();
	MPI_Barrier(MPI_COMM_WORLD); /* keep the tag phase from matching ANY_TAG receives */
	phase_tags();
	if (argc > 2 && strcmp(argv[2], "busy") == 0 && g_size >= 2)
		phase_busy();

	MPI_Allreduce(&g_errors, &errs, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (g_rank == 0) {
		if (errs)
			printf("large: FAIL size=%d errors=%ld\n", g_size, errs);
		else
			printf("large: OK size=%d sizes=%d bytes=%ld\n", g_size, ns, bytes);
		fflush(stdout);
	}
	MPI_Finalize();
	return errs ? 1 : 0;
}
