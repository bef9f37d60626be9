/* tests/mpi/coll_bench.c: time MPI_Barrier, Bcast, Reduce, Allreduce, Allgather and Alltoall per
 * call, machine-readable. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * argv: [-m minbytes] [-M maxbytes] [-S size,size,...] [-P] [-s scale]
 *   sizes: doubling from minbytes (default 8) to maxbytes (default 1048576), or the list of -S:
 *   the buffer of a bcast, the vector of doubles (size/8 of them) a reduce (to rank 0) or an
 *   allreduce sums, the whole result of an allgather and what each rank sends in all of an
 *   alltoall (size/ranks bytes per rank; rows where that is under one byte are left out), or
 *   with -P what each rank contributes to an allgather and sends to each rank in an alltoall
 *   (the OSU benchmarks' sizes; 0 too); scale multiplies iteration counts (default 1.0).
 * Rank 0 prints '#' comment lines, then rows "op bytes us_per_op" where us_per_op is the mean
 * time per call of the slowest rank: one "barrier 0 T" row, then "bcast S T", "reduce S T",
 * "allreduce S T", "allgather S T" and "alltoall S T" rows for every size. Exits 0.
 */
static int g_rank, g_size, g_per_rank;

enum op { OP_BARRIER, OP_BCAST, OP_REDUCE, OP_ALLREDUCE, OP_ALLGATHER, OP_ALLTOALL };
static const char *const op_name[] = {"barrier",   "bcast",     "reduce",
                                      "allreduce", "allgather", "alltoall"};

static long iters_for(long bytes, double scale)
{
	long n = bytes > 0 ? (64L << 20) / bytes : 20000;
	if (n > 20000)
		n = 20000;
	n = (long)(n * scale);
	return n < 5 ? 5 : n;
}

/* Run op warm times untimed, then iters times; return this rank's seconds for the timed calls. */
static double run(enum op op, long bytes, long warm, long iters, double *sb, double *rb)
{
	double t0 = 0;
	int cnt = (int)(bytes / 8), blk = (int)(g_per_rank ? bytes : bytes / g_size);
	for (long i = -warm; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (op == OP_BARRIER)
			MPI_Barrier(MPI_COMM_WORLD);
		else if (op == OP_BCAST)
			MPI_Bcast(sb, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
		else if (op == OP_REDUCE)
			MPI_Reduce(sb, rb, cnt, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		else if (op == OP_ALLREDUCE)
			MPI_Allreduce(sb, rb, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		else if (op == OP_ALLGATHER)
			MPI_Allgather(sb, blk, MPI_BYTE, rb, blk, MPI_BYTE, MPI_COMM_WORLD);
		else
			MPI_Alltoall(sb, blk, MPI_BYTE, rb, blk, MPI_BYTE, MPI_COMM_WORLD);
	}
	return MPI_Wtime() - t0;
}

/*
 * Mean microseconds per call, maximum over ranks (valid on rank 0). The count is at most iters
 * but is cut so that one measurement takes about 0.2 s even on oversubscribed ranks; all ranks
 * agree on it through an allreduce of a 5-call probe.
 */
static double timed(enum op op, long bytes, long iters, double *sb, double *rb)
{
	double probe = run(op, bytes, 1, 5, sb, rb) / 5, slow = 0, mine, worst = 0;
	MPI_Allreduce(&probe, &slow, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (slow > 0 && iters > 0.2 / slow)
		iters = (long)(0.2 / slow);
	if (iters < 5)
		iters = 5;
	mine = run(op, bytes, iters / 10 + 1, iters, sb, rb) * 1e6 / (double)iters;
	MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	return worst;
}

int main(int argc, char **argv)
{
	int nranks;
	long minb = 8, maxb = 1L << 20, list[64];
	int nlist = 0;
	double scale = 1.0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	g_size = nranks;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(argv[i], "-P")) {
			g_per_rank = 1;
			continue;
		}
		if (!strcmp(argv[i], "-m"))
			minb = atol(v);
		else if (!strcmp(argv[i], "-M"))
			maxb = atol(v);
		else if (!strcmp(argv[i], "-s"))
			scale = atof(v);
		else if (!strcmp(argv[i], "-S"))
			for (char *t = strtok(argv[i + 1], ","); t && nlist < 64;
			     t = strtok(NULL, ","))
				list[nlist++] = atol(t);
		i++;
	}
	for (int k = 0; k < nlist; k++) /* the largest size listed sizes the buffers */
		if (k == 0 || list[k] > maxb)
			maxb = list[k] > 8 ? list[k] : 8;
	if (minb < 8)
		minb = 8;
	if (maxb < minb || maxb > (1L << 30))
		maxb = 1L << 20;
	long bufb = g_per_rank ? maxb * nranks : maxb;
	double *sb = malloc((size_t)bufb), *rb = malloc((size_t)bufb);
	if (!sb || !rb)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (long i = 0; i < bufb / 8; i++) {
		sb[i] = g_rank + i * 0.5;
		rb[i] = 0;
	}
	if (g_rank == 0) {
		printf("# coll_bench: ranks=%d scale=%g\n# op bytes us_per_op\n", nranks, scale);
		fflush(stdout);
	}
	double t = timed(OP_BARRIER, 0, iters_for(0, scale), sb, rb);
	if (g_rank == 0)
		printf("barrier 0 %.3f\n", t);
	for (int k = 0; nlist ? k < nlist : 1; k++) {
		long b = nlist ? list[k] : minb << k;
		if (!nlist && b > maxb)
			break;
		for (int op = OP_BCAST; op <= OP_ALLTOALL; op++) {
			if ((op == OP_ALLGATHER || op == OP_ALLTOALL) && b < nranks && !g_per_rank)
				continue;
			if (op < OP_ALLGATHER && b < 8)
				continue;
			t = timed((enum op)op, b, iters_for(b, scale), sb, rb);
			if (g_rank == 0) {
				printf("%s %ld %.3f\n", op_name[op], b, t);
				fflush(stdout);
			}
		}
	}
	free(sb);
	free(rb);
	MPI_Finalize();
	return 0;
}
