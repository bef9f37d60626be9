/* tests/mpi/bulk.c: rank 0 streams pseudo-random chunks to rank 1, which checks them against the
 * sender's checksum and reports the longest stall between two chunks (failover tests).
 * usage: bulk [-m MIB | -s SECONDS] [-c CHUNK_KIB] [-p]   (-p: a progress line every second)
 * prints (rank 1): "bulk: OK bytes=N chunks=K hash=H max_stall_ms=M secs=S" or "bulk: MISMATCH" */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void gen(uint64_t *w, size_t n, uint64_t *state)
{
	uint64_t x = *state;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	*state = x;
}

static uint64_t hash(uint64_t h, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 1099511628211ull;
	return h;
}

int main(int argc, char **argv)
{
	int rank, size, progress = 0;
	long mib = 64;
	double secs = 0;
	size_t chunk = 4u << 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-m") && i + 1 < argc)
			mib = atol(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			chunk = (size_t)atol(argv[++i]) << 10;
		else if (!strcmp(argv[i], "-p"))
			progress = 1;
	}
	chunk &= ~(size_t)7;
	if (size < 2 || chunk == 0) {
		if (rank == 0)
			fprintf(stderr, "bulk: needs 2 ranks and a chunk > 0\n");
		MPI_Finalize();
		return 1;
	}
	uint64_t *buf = malloc(chunk), h = 1469598103934665603ull, st = 88172645463325252ull;
	size_t nw = chunk / 8;
	long chunks = 0;
	double t0 = wall(), last = t0, next_report = t0 + 1, stall = 0;

	if (rank == 0) {
		uint64_t fin[2];
		while (secs > 0 ? wall() - t0 < secs : chunks * (long)(chunk >> 10) < mib * 1024) {
			gen(buf, nw, &st);
			h = hash(h, buf, nw);
			MPI_Send(buf, (int)chunk, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			chunks++;
		}
		fin[0] = h;
		fin[1] = (uint64_t)chunks;
		MPI_Send(fin, 2, MPI_UINT64_T, 1, 2, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Status s;
		for (;;) {
			double now;
			MPI_Recv(buf, (int)chunk, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
			now = wall();
			if (now - last > stall)
				stall = now - last;
			last = now;
			if (s.MPI_TAG == 2)
				break;
			h = hash(h, buf, nw);
			chunks++;
			if (progress && now >= next_report) {
				printf("bulk: progress wall=%.3f bytes=%llu\n", now,
				       (unsigned long long)chunks * chunk);
				fflush(stdout);
				next_report = now + 1;
			}
		}
		if (buf[0] == h && buf[1] == (uint64_t)chunks)
			printf("bulk: OK bytes=%llu chunks=%ld hash=%016llx max_stall_ms=%.0f "
			       "secs=%.2f\n",
			       (unsigned long long)chunks * chunk, chunks, (unsigned long long)h,
			       stall * 1000, wall() - t0);
		else
			printf("bulk: MISMATCH chunks=%ld/%llu hash=%016llx sender=%016llx\n",
			       chunks, (unsigned long long)buf[1], (unsigned long long)h,
			       (unsigned long long)buf[0]);
		fflush(stdout);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
