/* tests/unit/t_mpio_bounce.c: MPI-IO's large transfers through the bounce buffer and straight
 * (lib/mpi/mpi_io_bounce.c): each of LAMKIT_IO_BOUNCE=always, never and auto runs the same
 * accesses in a child singleton (the choice is made once a process) from and into new buffers
 * — contiguous and through a view of 16 KiB blocks, reads past the end of the file, a write cut
 * short by RLIMIT_FSIZE — and checks the file with plain POSIX reads; LAMKIT_IO_STATS tells
 * which way the transfers went. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpi.h"
#include "tap.h"

#define BIG   ((3 << 20) + 12345) /* not a whole number of bounce chunks */
#define BLK   16384
#define NBLK  128 /* 2 MiB through the view */
#define LIMIT 60  /* seconds a child may take */

static int fails;

static void check(int cond, const char *what)
{
	if (!cond) {
		printf("# %s: %s\n", getenv("LAMKIT_IO_BOUNCE"), what);
		fails++;
	}
}

static unsigned char pat(long i, int k)
{
	return (unsigned char)(i * 131 + k * 7 + (i >> 12));
}

static unsigned char *fresh_filled(long n, int k)
{
	unsigned char *b = malloc((size_t)n);

	for (long i = 0; b && i < n; i++)
		b[i] = pat(i, k);
	return b;
}

/* Whether the file at fd holds pat(i, k) for i in [0, n) at off. */
static int file_has(int fd, long off, long n, int k)
{
	unsigned char *b = malloc((size_t)n);
	int same = b && pread(fd, b, (size_t)n, off) == n;

	for (long i = 0; same && i < n; i++)
		same = b[i] == pat(i, k);
	free(b);
	return same;
}

static void contiguous(MPI_File fh, int fd)
{
	unsigned char *b = fresh_filled(BIG, 1), *c = malloc(BIG);
	MPI_Status st;
	int cnt = -1, same = 1;

	check(MPI_File_write_at(fh, 777, b, BIG, MPI_BYTE, &st) == MPI_SUCCESS,
	      "a contiguous write from a new buffer succeeds");
	check(file_has(fd, 777, BIG, 1), "the file holds what the contiguous write wrote");
	memset(b, 0, BIG); /* read back into the buffer written from */
	check(MPI_File_read_at(fh, 777, b, BIG, MPI_BYTE, &st) == MPI_SUCCESS &&
	          MPI_Get_count(&st, MPI_BYTE, &cnt) == MPI_SUCCESS && cnt == BIG,
	      "a contiguous read back reads it all");
	for (long i = 0; i < BIG && same; i++)
		same = b[i] == pat(i, 1);
	check(same, "a contiguous read into the written buffer gives back the bytes");
	check(MPI_File_read_at_all(fh, 777, c, BIG, MPI_BYTE, &st) == MPI_SUCCESS,
	      "a collective read into a new buffer succeeds");
	check(!memcmp(b, c, BIG), "a collective read into a new buffer gives back the bytes");
	/* past the end: a 1 MiB read that starts 100000 bytes before it */
	check(MPI_File_read_at(fh, 777 + BIG - 100000, c, 1 << 20, MPI_BYTE, &st) == MPI_SUCCESS &&
	          MPI_Get_count(&st, MPI_BYTE, &cnt) == MPI_SUCCESS && cnt == 100000 &&
	          !memcmp(c, b + BIG - 100000, 100000),
	      "a read past the end reads the 100000 bytes below it");
	free(b);
	free(c);
}

/* Blocks of 16 KiB with 16 KiB gaps from 1 MiB on: pieces of a call, done one by one. */
static void blocks(MPI_File fh, int fd)
{
	MPI_Datatype blk, vec, ft;
	unsigned char *b = fresh_filled((long)NBLK * BLK, 2), *c = malloc((size_t)NBLK * BLK);
	MPI_Status st;
	int cnt = -1, same = 1;
	const MPI_Offset disp = 1 << 20;

	MPI_Type_contiguous(BLK, MPI_BYTE, &blk);
	MPI_Type_vector(NBLK, 1, 2, blk, &vec);
	MPI_Type_create_resized(vec, 0, (MPI_Aint)2 * NBLK * BLK, &ft);
	MPI_Type_commit(&ft);
	MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
	check(MPI_File_write_at_all(fh, 0, b, NBLK * BLK, MPI_BYTE, &st) == MPI_SUCCESS,
	      "a collective write of 16 KiB blocks succeeds");
	for (int k = 0; k < NBLK && same; k++) {
		unsigned char x[BLK];
		same = pread(fd, x, BLK, disp + (long)k * 2 * BLK) == BLK;
		for (int i = 0; i < BLK && same; i++)
			same = x[i] == pat((long)k * BLK + i, 2);
		if (same &&
		    k + 1 < NBLK) { /* the gap after it: the contiguous write's bytes, or a hole */
			long g = disp + (long)(2 * k + 1) * BLK, i = g - 777;
			same = pread(fd, x, BLK, g) == BLK;
			if (same && i + BLK <= BIG)
				same = x[0] == pat(i, 1) && x[BLK - 1] == pat(i + BLK - 1, 1);
			else if (same && i >= BIG)
				same = !x[0] && !x[BLK - 1];
		}
	}
	check(same, "the blocks are where the view puts them, the gaps untouched");
	check(MPI_File_read_at_all(fh, 0, c, NBLK * BLK, MPI_BYTE, &st) == MPI_SUCCESS &&
	          MPI_Get_count(&st, MPI_BYTE, &cnt) == MPI_SUCCESS && cnt == NBLK * BLK &&
	          !memcmp(b, c, (size_t)NBLK * BLK),
	      "a collective read of the blocks into a new buffer gives them back");
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	MPI_Type_free(&ft);
	MPI_Type_free(&vec);
	MPI_Type_free(&blk);
	free(b);
	free(c);
}

/* A write that the file size limit cuts short is an error, not a short success. */
static void cut_short(MPI_File fh, int fd)
{
	struct rlimit old, lim;
	unsigned char *b = fresh_filled(1 << 20, 3);
	off_t end = lseek(fd, 0, SEEK_END);
	MPI_Status st;

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = (rlim_t)end + 300000;
	setrlimit(RLIMIT_FSIZE, &lim);
	check(MPI_File_write_at(fh, end, b, 1 << 20, MPI_BYTE, &st) != MPI_SUCCESS,
	      "a write past the file size limit is an error");
	setrlimit(RLIMIT_FSIZE, &old);
	free(b);
}

static int child(void)
{
	char path[256];
	MPI_File fh;
	int fd;

	MPI_Init(NULL, NULL);
	snprintf(path, sizeof(path), "%s/t_mpio_bounce.%d",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	if (MPI_File_open(MPI_COMM_SELF, path,
	                  MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
	                  &fh) != MPI_SUCCESS ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		printf("# cannot open %s\n", path);
		return 1;
	}
	contiguous(fh, fd);
	blocks(fh, fd);
	cut_short(fh, fd);
	close(fd);
	MPI_File_close(&fh);
	MPI_Finalize();
	return fails ? 1 : 0;
}

/* The child with LAMKIT_IO_BOUNCE=policy, its stderr into err; its exit status, -1 if it had
 * to be killed after LIMIT seconds. */
static int run(const char *self, const char *policy, const char *err)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		setenv("LAMKIT_IO_BOUNCE", policy, 1);
		setenv("LAMKIT_IO_STATS", "1", 1);
		setenv("T_MPIO_BOUNCE_CHILD", "1", 1);
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < LIMIT * 20; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		nanosleep(&(struct timespec){0, 50000000}, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

int main(void)
{
	static const char *policies[] = {"always", "never", "auto"};
	char self[4096], err[256], line[512];
	ssize_t k;

	if (getenv("T_MPIO_BOUNCE_CHILD"))
		return child();
	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[k > 0 ? k : 0] = 0;
	snprintf(err, sizeof(err), "%s/t_mpio_bounce.%d.err",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	for (int p = 0; p < 3; p++) {
		int rc = run(self, policies[p], err);
		long long nb = -1, nl = -1, bytes = -1;
		char how[64] = "";
		FILE *f = fopen(err, "r");
		while (f && fgets(line, sizeof(line), f)) {
			const char *s = strstr(line, "first touch ");
			if (s &&
			    sscanf(
			        s,
			        "first touch %63[^;]; %lld of %lld large transfers bounced (%lld",
			        how, &nb, &nl, &bytes) == 4)
				break;
			printf("# %s: %s", policies[p], line);
		}
		if (f)
			fclose(f);
		ok(rc == 0,
		   "LAMKIT_IO_BOUNCE=%s: every access gives the file and the buffers the right "
		   "bytes (exit %d)",
		   policies[p], rc);
		ok(nl == 7,
		   "LAMKIT_IO_BOUNCE=%s: the stats line counts the 7 large transfers (%lld)",
		   policies[p], nl);
		if (p == 0)
			ok(nb == nl && bytes >= 8LL * (1 << 20),
			   "always: every large transfer bounced (%lld of %lld, %lld bytes)", nb,
			   nl, bytes);
		else if (p == 1)
			ok(nb == 0 && bytes == 0, "never: no transfer bounced (%lld)", nb);
		else
			ok((!strcmp(how, "dear (probed)") && nb > 0) ||
			       (!strcmp(how, "cheap (probed)") && nb == 0),
			   "auto: the probe's finding (%s) and the transfers agree (%lld bounced)",
			   how, nb);
		unlink(err);
	}
	return done_testing();
}
