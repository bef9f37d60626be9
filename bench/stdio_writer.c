/* bench/stdio_writer.c: write MB megabytes to stdout in 64 KiB writes, either as 100-byte
 * lines ("lines") or as bytes without a newline ("binary"); used by bench/stdio to time a
 * launcher's output forwarding. Usage: stdio_writer lines|binary MB */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65500]; /* 655 lines of 100 bytes */
	long long left;
	int lines;

	if (argc != 3) {
		fprintf(stderr, "usage: stdio_writer lines|binary MB\n");
		return 2;
	}
	lines = strcmp(argv[1], "lines") == 0;
	left = atoll(argv[2]) * 1000000LL;
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] =
		    lines ? (i % 100 == 99 ? '\n' : (char)('a' + i % 26)) : (char)('A' + i % 26);
	while (left > 0) {
		size_t n = left < (long long)sizeof buf ? (size_t)left : sizeof buf;
		size_t off = 0;
		while (off < n) {
			ssize_t w = write(1, buf + off, n - off);
			if (w <= 0) {
				perror("stdio_writer: write");
				return 1;
			}
			off += (size_t)w;
		}
		left -= (long long)n;
	}
	return 0;
}
