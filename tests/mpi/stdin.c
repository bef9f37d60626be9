/* tests/mpi/stdin.c: rank 0 reads all of stdin and prints its length and FNV-1a 64 checksum. */
#include <mpi.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * argv: [-a] [-d delay_ms] [-c chunk_bytes] [-b]
 *   -a  every rank reads its stdin (default: only rank 0; the others just init/finalize)
 *   -d  sleep delay_ms after each read() (a slow reader, for back-pressure tests), default 0
 *   -c  read() size, default 1048576
 *   -b  read stdin before MPI_Init instead of after it
 * Each reading rank prints "stdin: rank R bytes=N fnv1a64=%016llx" and exits 0; a read() error
 * prints "stdin: rank R read error: ..." and exits 1. The checksum of empty input is
 * cbf29ce484222325. Compare with e.g. `tests/mpi/stdin -a < /dev/null` run without a launcher.
 */
static int read_all(int rank, long delay_ms, size_t chunk)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a 64 offset basis */
	unsigned long long total = 0;
	unsigned char *buf = malloc(chunk);

	if (!buf) {
		fprintf(stderr, "stdin: rank %d: out of memory\n", rank);
		return 1;
	}
	for (;;) {
		ssize_t n = read(0, buf, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			printf("stdin: rank %d read error: %s\n", rank, strerror(errno));
			free(buf);
			return 1;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 1099511628211ULL; /* FNV 64 prime */
		}
		total += (unsigned long long)n;
		if (delay_ms > 0)
			usleep((useconds_t)(delay_ms * 1000));
	}
	free(buf);
	printf("stdin: rank %d bytes=%llu fnv1a64=%016llx\n", rank, total, (unsigned long long)h);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int rank = 0, all = 0, before = 0, rc = 0;
	long delay = 0;
	size_t chunk = 1 << 20;

	for (int i = 1; i < argc; i++) { /* parse by hand: MPI_Init may not leave argv alone */
		if (!strcmp(argv[i], "-a"))
			all = 1;
		else if (!strcmp(argv[i], "-b"))
			before = 1;
		else if (!strcmp(argv[i], "-d") && i + 1 < argc)
			delay = atol(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			chunk = (size_t)atol(argv[++i]);
	}
	if (chunk < 1)
		chunk = 1;
	if (before) { /* rank from the launcher environment: MPI is not up yet */
		const char *r = getenv("PMI_RANK");
		if (!r)
			r = getenv("OMPI_COMM_WORLD_RANK");
		if (r)
			rank = atoi(r);
		if (all || rank == 0)
			rc = read_all(rank, delay, chunk);
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!before && (all || rank == 0))
		rc = read_all(rank, delay, chunk);
	MPI_Finalize();
	return rc;
}
