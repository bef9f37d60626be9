/* tests/mpi/nompi_output.c: non-MPI; floods stdout with rank-tagged lines written in small pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Not an MPI program: the rank comes from PMI_RANK, OMPI_COMM_WORLD_RANK or PMIX_RANK (else -1).
 * argv: [-k lines] [-l patlen] [-c chunk] [-e] [-p]
 *   -k  number of lines, default 1000
 *   -l  pattern length, default 64
 *   -c  bytes per write() (each line goes out in pieces of this size), default 7; 0 = whole line
 *   -e  write every line to stderr as well (stderr lines start with "E" before the rank)
 *   -p  leave the last line without its trailing newline
 * Line i (0-based) is "R:i:P\n" where P is patlen characters, P[j] = 'a' + (R*7 + i*3 + j) % 26,
 * (R < 0 counts as 0) so a checker can recompute every line from R and i. Exits 0 right after
 * the last write.
 */
static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write one line to fd in pieces of chunk bytes (0 = one write). */
static int emit(int fd, const char *line, size_t len, size_t chunk)
{
	if (chunk == 0)
		chunk = len;
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		if (write_all(fd, line + off, n) < 0)
			return -1;
	}
	return 0;
}

static int env_rank(void)
{
	static const char *names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return atoi(v);
	}
	return -1;
}

int main(int argc, char **argv)
{
	long lines = 1000, patlen = 64, chunk = 7;
	int err_too = 0, partial = 0, rank = env_rank(), opt;

	while ((opt = getopt(argc, argv, "k:l:c:ep")) != -1) {
		switch (opt) {
		case 'k':
			lines = atol(optarg);
			break;
		case 'l':
			patlen = atol(optarg);
			break;
		case 'c':
			chunk = atol(optarg);
			break;
		case 'e':
			err_too = 1;
			break;
		case 'p':
			partial = 1;
			break;
		default:
			fprintf(
			    stderr,
			    "usage: nompi_output [-k lines] [-l patlen] [-c chunk] [-e] [-p]\n");
			return 100;
		}
	}
	if (patlen < 0 || patlen > 1000000 || chunk < 0 || lines < 0) {
		fprintf(stderr, "nompi_output: bad arguments\n");
		return 100;
	}
	char *line = malloc((size_t)patlen + 64);
	if (!line)
		return 111;
	for (long i = 0; i < lines; i++) {
		int h = snprintf(line, 64, "%d:%ld:", rank, i);
		long base = (long)(rank < 0 ? 0 : rank) * 7 + i * 3;
		for (long j = 0; j < patlen; j++)
			line[h + j] = (char)('a' + (base + j) % 26);
		size_t len = (size_t)(h + patlen);
		if (!(partial && i == lines - 1))
			line[len++] = '\n';
		if (emit(1, line, len, (size_t)chunk) < 0)
			return 1;
		if (err_too && (write_all(2, "E", 1) < 0 || emit(2, line, len, (size_t)chunk) < 0))
			return 1;
	}
	free(line);
	return 0;
}
