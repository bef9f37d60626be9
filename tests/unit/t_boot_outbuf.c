/* tests/unit/t_boot_outbuf.c: line reassembly and rank tags for mpiexec output. */
#include "outbuf.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char got[1 << 20];
static char big[40000];

/* Capture what the outbuf writes to fd 1 through a pipe. */
static const char *capture(void (*fn)(boot_outbuf_t *), int tag)
{
	int p[2], saved = dup(1);
	(void)!pipe(p);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	dup2(p[1], 1);
	boot_outbuf_t *o = boot_outbuf_create(3, tag);
	fn(o);
	boot_outbuf_destroy(o);
	dup2(saved, 1);
	close(saved);
	close(p[1]);
	ssize_t n = read(p[0], got, sizeof got - 1);
	got[n > 0 ? n : 0] = '\0';
	close(p[0]);
	return got;
}

static void interleave(boot_outbuf_t *o)
{
	boot_outbuf_data(o, 0, 1, "hel", 3);
	boot_outbuf_data(o, 1, 1, "wor", 3);
	boot_outbuf_data(o, 0, 1, "lo\nsecond", 9);
	boot_outbuf_data(o, 1, 1, "ld\n", 3);
	boot_outbuf_eof(o, 0, 1);
}

static void binary(boot_outbuf_t *o)
{
	boot_outbuf_data(o, 2, 1, "a\0b\n\0", 5);
	boot_outbuf_flush_all(o);
}

static void multi(boot_outbuf_t *o)
{
	boot_outbuf_data(o, 2, 1, "x\ny\nz", 5);
	boot_outbuf_data(o, 2, 1, "z\n", 2);
}

/* A line longer than 64 KiB goes out in pieces as they come (no copy); the next line is whole
 * again and waits for its end. */
static void longline(boot_outbuf_t *o)
{
	memset(big, 'A', sizeof big);
	boot_outbuf_data(o, 0, 1, big, sizeof big);
	boot_outbuf_data(o, 0, 1, big, sizeof big);
	boot_outbuf_data(o, 1, 1, "r1\n", 3);
	boot_outbuf_data(o, 0, 1, "AA\nnext", 7);
	boot_outbuf_data(o, 1, 1, "r1b\n", 4);
	boot_outbuf_data(o, 0, 1, "\n", 1);
}

static int nlpos, nllen, pre;

/* rank 0: (pre x 40000 bytes without newline, then) nllen bytes with the line's end at nlpos;
 * then rank 1 writes a whole line */
static void split(boot_outbuf_t *o)
{
	char b[64];
	memset(b, 'x', sizeof b);
	b[nlpos] = '\n';
	memset(big, 'A', sizeof big);
	for (int i = 0; i < pre; i++)
		boot_outbuf_data(o, 0, 1, big, sizeof big);
	boot_outbuf_data(o, 0, 1, b, (size_t)nllen);
	boot_outbuf_data(o, 1, 1, "Z\n", 2);
	boot_outbuf_flush_all(o);
}

int main(void)
{
	is_str(capture(interleave, 0), "hello\nworld\nsecond", "partial lines wait for their end");
	is_str(capture(interleave, 1), "[0] hello\n[1] world\n[0] second\n",
	       "tags prefix every line, also the last partial one, which is ended");
	const char *b = capture(binary, 0);
	ok(b[0] == 'a' && b[1] == '\0' && b[2] == 'b' && b[3] == '\n', "NUL bytes pass through");
	is_str(capture(multi, 1), "[2] x\n[2] y\n[2] zz\n",
	       "several lines in one chunk are tagged");
	const char *l = capture(longline, 0);
	ok(strspn(l, "A") == 80000 && strcmp(l + 80000, "r1\nAA\nr1b\nnext\n") == 0,
	   "a line over 64 KiB goes out as it comes; the lines after it are whole again");
	for (pre = 0; pre <= 2; pre += 2) {
		int bad = 0;
		for (nllen = 1; nllen <= 40; nllen++)
			for (nlpos = 0; nlpos < nllen; nlpos++) {
				const char *g = capture(split, 0) + pre * 40000;
				bad += strcspn(g, "Z") != (size_t)nlpos + 1 ||
				       strlen(g) != (size_t)nllen + 2;
			}
		ok(bad == 0, "the %s newline is found at every position and alignment (%d wrong)",
		   pre ? "first (in an over-long line)" : "last", bad);
	}
	boot_outbuf_t *o = boot_outbuf_create(2, 0);
	ok(boot_outbuf_data(o, 5, 1, "x", 1) < 0, "a rank out of range is refused");
	ok(boot_outbuf_data(o, 0, 3, "x", 1) < 0, "a bad stream is refused");
	boot_outbuf_destroy(o);
	return done_testing();
}
