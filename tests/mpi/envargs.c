/* tests/mpi/envargs.c: per rank, print argv, cwd and chosen environment variables, one per line. */
#include <mpi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * argv: [args...] [--env NAME...]. Every argument (including "--env" and the names) is printed;
 * each NAME after "--env" is looked up in the environment. Output, one line per item, every
 * line written with a single write():
 *   envargs: R size=N argc=C
 *   envargs: R argv[i]=[text]
 *   envargs: R cwd=[dir]
 *   envargs: R env NAME=[value]     or     envargs: R env NAME unset
 * Bytes outside printable ASCII and the characters '\' '[' ']' are written as \xNN, so
 * arguments with spaces, newlines or UTF-8 stay on one line. Exit 0.
 */
static void put_line(const char *prefix, const char *text, const char *suffix)
{
	size_t n = strlen(text);
	char *line = malloc(strlen(prefix) + 4 * n + strlen(suffix) + 2);
	char *p;

	if (!line)
		return;
	p = line + sprintf(line, "%s", prefix);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x20 || c > 0x7e || c == '\\' || c == '[' || c == ']')
			p += sprintf(p, "\\x%02x", c);
		else
			*p++ = (char)c;
	}
	p += sprintf(p, "%s\n", suffix);
	if (write(1, line, (size_t)(p - line)) < 0)
		perror("envargs: write");
	free(line);
}

int main(int argc, char **argv)
{
	int rank, size, envmode = 0;
	char pre[256], cwd[PATH_MAX + 1];
	char **args = malloc(sizeof(char *) * (size_t)(argc + 1));

	if (!args)
		return 1;
	for (int i = 0; i <= argc; i++) /* keep our own copy: MPI_Init may edit argv */
		args[i] = argv[i];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int n = 0;
	while (args[n])
		n++;
	snprintf(pre, sizeof(pre), "envargs: %d size=%d argc=%d", rank, size, n);
	put_line(pre, "", "");
	for (int i = 0; i < n; i++) {
		snprintf(pre, sizeof(pre), "envargs: %d argv[%d]=[", rank, i);
		put_line(pre, args[i], "]");
	}
	snprintf(pre, sizeof(pre), "envargs: %d cwd=[", rank);
	put_line(pre, getcwd(cwd, sizeof(cwd)) ? cwd : "?", "]");
	for (int i = 1; i < n; i++) {
		if (!envmode) {
			envmode = !strcmp(args[i], "--env");
			continue;
		}
		const char *v = getenv(args[i]);
		char name[200];
		snprintf(name, sizeof(name), "%.150s", args[i]);
		if (v) {
			snprintf(pre, sizeof(pre), "envargs: %d env %s=[", rank, name);
			put_line(pre, v, "]");
		} else {
			snprintf(pre, sizeof(pre), "envargs: %d env ", rank);
			put_line(pre, name, " unset");
		}
	}
	free(args);
	MPI_Finalize();
	return 0;
}
