/* bench/failover.c: two ranks swap large messages for a while and log their progress to a file,
 * so that a route failing under a running job shows as a stall, an error, bad data or a hang. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * usage: failover SECONDS LOGFILE [BYTES (default 4 MiB)]
 * Rank 0 sends BYTES to rank 1, which checks every word and sends BYTES back; rank 0 checks
 * them too. Every 250 ms rank 0 appends "ms=<epoch ms> iters=N MBps=X maxgap_ms=G bad=B" to
 * LOGFILE (flushed, so it survives a kill; the file is written directly, not through the
 * launcher's stdout forwarding, which may itself die with a route). At the end rank 0 prints
 * "failover: OK ranks=2 iters=N maxgap_ms=G" (or "failover: BAD ..." if a word was wrong).
 */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill(uint64_t *w, size_t n, uint64_t iter)
{
	for (size_t i = 0; i < n; i++)
		w[i] = iter * 0x9e3779b97f4a7c15ULL + i;
}

static long check(const uint64_t *w, size_t n, uint64_t iter)
{
	long bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += w[i] != iter * 0x9e3779b97f4a7c15ULL + i;
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: failover SECONDS LOGFILE [BYTES] (2 ranks)\n");
		MPI_Abort(MPI_COMM_WORLD, 100);
	}
	double secs = atof(argv[1]);
	size_t bytes = argc > 3 ? strtoul(argv[3], NULL, 10) : 4u << 20;
	size_t n = bytes / 8 ? bytes / 8 : 1;
	uint64_t *w = malloc(n * 8);
	FILE *log = rank == 0 ? fopen(argv[2], "a") : NULL;
	if (!w || (rank == 0 && !log)) {
		fprintf(stderr, "failover: cannot allocate or open %s\n", argv[2]);
		MPI_Abort(MPI_COMM_WORLD, 111);
	}
	double t0 = now_s(), last = t0, last_log = t0, maxgap = 0;
	long bad = 0;
	uint64_t iter = 0;
	for (int done = 0; !done; iter++) {
		MPI_Status st;
		if (rank == 0) {
			done = now_s() - t0 >= secs;
			fill(w, n, iter);
			MPI_Send(w, (int)(n * 8), MPI_BYTE, 1, done, MPI_COMM_WORLD);
			MPI_Recv(w, (int)(n * 8), MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			bad += check(w, n, ~iter);
			double t = now_s();
			maxgap = t - last > maxgap ? t - last : maxgap;
			last = t;
			if (t - last_log >= 0.25 || done) {
				fprintf(log,
				        "ms=%.0f iters=%llu MBps=%.0f maxgap_ms=%.0f bad=%ld\n",
				        t * 1e3, (unsigned long long)iter + 1,
				        2.0 * (double)(iter + 1) * (double)(n * 8) / (t - t0) / 1e6,
				        maxgap * 1e3, bad);
				fflush(log);
				last_log = t;
			}
		} else {
			MPI_Recv(w, (int)(n * 8), MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			bad += check(w, n, iter);
			done = st.MPI_TAG == 1;
			fill(w, n, ~iter);
			MPI_Send(w, (int)(n * 8), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
	long total = 0;
	MPI_Reduce(&bad, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("failover: %s ranks=2 iters=%llu maxgap_ms=%.0f bad_words=%ld\n",
		       total ? "BAD" : "OK", (unsigned long long)iter, maxgap * 1e3, total);
		fclose(log);
	}
	free(w);
	MPI_Finalize();
	return total != 0;
}
