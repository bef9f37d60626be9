/* tests/mpi/lk_util.h: tiny result-checking helpers shared by the lk_*.c MPI test programs. */
#ifndef LK_UTIL_H
#define LK_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int lk_rank, lk_size, lk_errors, lk_checks;
static const char *lk_name = "lk";

/* LK_CHECK(cond, fmt, ...): count a check; report the first failures of this rank. */
#define LK_CHECK(cond, ...)                                                                        \
	do {                                                                                       \
		lk_checks++;                                                                       \
		if (!(cond)) {                                                                     \
			if (lk_errors++ < 10) {                                                    \
				fprintf(stderr, "%s: rank %d: line %d: ", lk_name, lk_rank,        \
				        __LINE__);                                                 \
				fprintf(stderr, __VA_ARGS__);                                      \
				fprintf(stderr, "\n");                                             \
			}                                                                          \
		}                                                                                  \
	} while (0)

static void lk_init(int *argc, char ***argv, const char *name)
{
	lk_name = name;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &lk_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &lk_size);
}

/* Sum the errors over all ranks, print one verdict line on rank 0, finalize; exit status. */
static int lk_finish(void)
{
	int total = 0, checks = 0;

	MPI_Allreduce(&lk_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&lk_checks, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (lk_rank == 0) {
		if (total)
			printf("%s: FAIL size=%d errors=%d\n", lk_name, lk_size, total);
		else
			printf("%s: OK size=%d checks=%d\n", lk_name, lk_size, checks);
	}
	MPI_Finalize();
	return total ? 1 : 0;
}

#endif
