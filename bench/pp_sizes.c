/* bench/pp_sizes.c: 2-rank ping-pong at explicit sizes: median, mean and p90 of each round trip. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * argv: [-n iters] [-S size,size,...] (defaults 200; 262144,327680,393216,524288)
 * Rank 0 times every round trip on its own and prints one row per size:
 * "size med_us mean_us p90_us" (half a round trip, microseconds). The median is what load from
 * elsewhere disturbs least; mean and p90 show how often a round trip stalls. Ranks beyond 1 only
 * join MPI_Init/MPI_Finalize. Exits 0; 1 with a message on stderr on bad arguments.
 */
#define MAXSIZES 32

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int parse_sizes(char *s, long *v)
{
	int n = 0;

	for (char *t = strtok(s, ","); t && n < MAXSIZES; t = strtok(NULL, ","))
		if ((v[n] = atol(t)) > 0)
			n++;
	return n;
}

/* iters round trips of size bytes; rank 0 fills rt[] with half round trips in microseconds. */
static void run(int rank, char *buf, long size, int iters, double *rt)
{
	int peer = 1 - rank;

	for (int i = -iters / 10 - 2; i < iters; i++) {
		double t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			if (i >= 0)
				rt[i] = (MPI_Wtime() - t0) * 1e6 / 2;
		} else {
			MPI_Recv(buf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
		}
	}
}

int main(int argc, char **argv)
{
	int rank, np, iters = 200, ns;
	long sizes[MAXSIZES], maxs = 0;
	char defs[] = "262144,327680,393216,524288", *list = defs;
	double *rt;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-S"))
			list = argv[i + 1];
	}
	ns = parse_sizes(list, sizes);
	if (np < 2 || iters < 1 || ns < 1) {
		if (rank == 0)
			fprintf(stderr, "pp_sizes: needs 2 ranks, -n >= 1 and sizes\n");
		MPI_Finalize();
		return 1;
	}
	for (int i = 0; i < ns; i++)
		maxs = sizes[i] > maxs ? sizes[i] : maxs;
	buf = malloc((size_t)maxs);
	rt = malloc(sizeof(double) * (size_t)iters);
	if (!buf || !rt) {
		MPI_Abort(MPI_COMM_WORLD, 2);
		return 2;
	}
	memset(buf, 'a' + rank, (size_t)maxs);
	if (rank == 0) {
		printf("# pp_sizes: ranks=%d iters=%d\n# size med_us mean_us p90_us\n", np, iters);
		fflush(stdout);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int k = 0; k < ns && rank < 2; k++) {
		double sum = 0;
		run(rank, buf, sizes[k], iters, rt);
		if (rank)
			continue;
		for (int i = 0; i < iters; i++)
			sum += rt[i];
		qsort(rt, (size_t)iters, sizeof(double), cmp_d);
		printf("%ld %.1f %.1f %.1f\n", sizes[k], rt[iters / 2], sum / iters,
		       rt[iters * 9 / 10]);
		fflush(stdout);
	}
	free(buf);
	free(rt);
	MPI_Finalize();
	return 0;
}
