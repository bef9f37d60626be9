/* tests/unit/t_mpi_scratch.c: the kept scratch buffers of lamkit's MPI (lib/mpi/mpi_scratch.c):
 * a released buffer is handed out again, small and huge ones are not kept, and what is kept
 * stays within its count and bytes, the smallest going first; from 1 MiB whole 2 MiB pages. The
 * buffers are never touched, so the 16 MiB ones cost address space only. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

void *mpii_scratch(size_t n);
void mpii_scratch_free(void *data);
int mpii_scratch_kept(size_t *bytes);
void mpii_tmpbuf_fini(void);

#define MiB  ((size_t)1 << 20)
#define HALF (MiB / 2)

int main(void)
{
	size_t bytes = 1;
	char *a, *b, *big, *v[10];
	int n;

	is_int(mpii_scratch_kept(&bytes), 0, "nothing kept at first");
	a = mpii_scratch(HALF);
	ok(a && ((size_t)a & 15) == 0, "512 KiB, 16-byte aligned");
	memset(a, 7, HALF);
	mpii_scratch_free(a);
	n = mpii_scratch_kept(&bytes);
	ok(n == 1 && bytes >= HALF && bytes < HALF + 64, "released: kept (%d, %zu bytes)", n,
	   bytes);
	b = mpii_scratch(256 << 10);
	ok(b == a && b[0] == 7 && b[HALF - 1] == 7, "a smaller request gets the kept buffer");
	is_int(mpii_scratch_kept(&bytes), 0, "handed out: no longer kept");
	mpii_scratch_free(b);

	a = mpii_scratch(1000);
	mpii_scratch_free(a);
	is_int(mpii_scratch_kept(&bytes), 1, "a small buffer goes back to malloc");

	for (int i = 0; i < 10; i++)
		v[i] = mpii_scratch(16 * MiB);
	for (int i = 0; i < 10; i++)
		mpii_scratch_free(v[i]);
	n = mpii_scratch_kept(&bytes);
	/* 512 KiB + 7 x 16 MiB fit in 128 MiB; an eighth 16 MiB buffer evicts the small one and
	 * then finds no room (8 x 16 MiB and the headers are more) */
	ok(n == 7 && bytes <= 128 * MiB, "ten 16 MiB released: 7 kept, %zu bytes <= 128 MiB",
	   bytes);

	big = mpii_scratch(100 * MiB);
	mpii_scratch_free(big);
	ok(mpii_scratch_kept(&bytes) == 7 && bytes <= 128 * MiB, "a 100 MiB buffer is not kept");

	big = mpii_scratch(32 * MiB);
	mpii_scratch_free(big);
	n = mpii_scratch_kept(&bytes);
	ok(n == 6 && bytes <= 128 * MiB, "a 32 MiB one evicts two of 16 MiB (%d kept)", n);
	a = mpii_scratch(20 * MiB);
	ok(a == big, "a 20 MiB request gets the 32 MiB one");
	b = mpii_scratch(MiB);
	ok(b != big && b != NULL, "a 1 MiB request gets a 16 MiB one (the smallest that fits)");
	is_int(mpii_scratch_kept(&bytes), 4, "two handed out: 4 kept");
	mpii_scratch_free(a);
	mpii_scratch_free(b);

	mpii_tmpbuf_fini();
	n = mpii_scratch_kept(&bytes);
	ok(n == 0 && bytes == 0, "fini frees them all");

	/* 1 MiB and up: whole huge pages, aligned, the header in an ordinary page before them */
	a = mpii_scratch(MiB);
	ok(a && ((size_t)a & (2 * MiB - 1)) == 0, "1 MiB: aligned to a 2 MiB page");
	mpii_scratch_free(a);
	n = mpii_scratch_kept(&bytes);
	ok(n == 1 && bytes == 2 * MiB + 16, "1 MiB: kept as a 2 MiB page (%zu bytes)", bytes);
	mpii_tmpbuf_fini();
	a = mpii_scratch(2 * MiB);
	ok(a && ((size_t)a & (2 * MiB - 1)) == 0, "2 MiB: aligned to a 2 MiB page");
	memset(a, 3, 2 * MiB);
	mpii_scratch_free(a);
	n = mpii_scratch_kept(&bytes);
	ok(n == 1 && bytes == 2 * MiB + 16, "kept as 2 MiB and its header, not 4 MiB (%zu bytes)",
	   bytes);
	b = mpii_scratch(3 * MiB);
	ok(b && b != a && ((size_t)b & (2 * MiB - 1)) == 0, "3 MiB: a new one, aligned");
	memset(b, 4, 3 * MiB);
	mpii_scratch_free(b);
	n = mpii_scratch_kept(&bytes);
	ok(n == 2 && bytes == 6 * MiB + 32, "rounded up to 4 MiB (%d kept, %zu bytes)", n, bytes);
	a = mpii_scratch(2 * MiB + 100);
	ok(a == b && a[3 * MiB] == 0 && a[0] == 4, "the 4 MiB one serves 2 MiB and more");
	mpii_scratch_free(a);
	mpii_tmpbuf_fini();
	return done_testing();
}
