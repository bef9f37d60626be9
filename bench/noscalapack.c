/* bench/noscalapack.c: the ScaLAPACK/BLACS entry points MUMPS links to, for bench/mumps's
 * build without ScaLAPACK: its driver sets ICNTL(13) = 1 (no ScaLAPACK on the root front), so
 * only NUMROC and DESCINIT (bookkeeping, done here as ScaLAPACK defines them) may be called; the
 * others abort with a line saying so. */
#include <stdio.h>
#include <stdlib.h>
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *np)
{
	int mydist = (*np + *iproc - *isrc) % *np, nblocks = *n / *nb;
	int r = nblocks / *np * *nb, extra = nblocks % *np;
	if (mydist < extra)
		r += *nb;
	else if (mydist == extra)
		r += *n % *nb;
	return r;
}
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info)
{
	int v[9] = {1, *ictxt, *m, *n, *mb, *nb, *irsrc, *icsrc, *lld};
	for (int i = 0; i < 9; i++)
		desc[i] = v[i];
	*info = 0;
}
#define NOT_HERE(name)                                                                             \
	void name(void);                                                                           \
	void name(void)                                                                            \
	{                                                                                          \
		fprintf(stderr, "noscalapack: %s called (this build has no ScaLAPACK)\n", #name);  \
		abort();                                                                           \
	}
NOT_HERE(pdgetrs_)
NOT_HERE(pdgetrf_)
NOT_HERE(pdpotrs_)
NOT_HERE(pdpotrf_)
NOT_HERE(blacs_gridinit_)
NOT_HERE(blacs_gridinfo_)
NOT_HERE(blacs_gridexit_)
