/* tests/mpi/lk_ft.c: a job that survives a failed node (mpiexec --on-node-failure continue).
 * argv[1]: the ranks that will fail, a comma list ("6,7"). Every rank meets in a barrier and
 * rank 0 prints "lk_ft: ready"; the test then kills (or stops) the node of those ranks, which
 * meanwhile wait in a receive nobody answers. Each survivor: a receive from the first failed
 * rank and a send to it return an MPI_ERR_PROC_FAILED-class error instead of hanging,
 * MPIX_Comm_failure_get_acked names exactly the failed ranks, a token goes once round the ring
 * of the survivors, a barrier of MPI_COMM_WORLD (which needs the failed ranks) returns an
 * error instead of hanging; rank 0 then prints "lk_ft: OK survivors=N". Without a library that
 * knows MPIX_ERR_PROC_FAILED it only says so. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MPIX_ERR_PROC_FAILED
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	printf("lk_ft: this MPI has no MPIX_ERR_PROC_FAILED\n");
	MPI_Finalize();
	return 0;
}
#else
static int rank, size, *dead, errors;

static void check(int cond, const char *what, int rc)
{
	if (!cond) {
		fprintf(stderr, "lk_ft: rank %d: %s (rc %d)\n", rank, what, rc);
		errors++;
	}
}

static int failed_class(int rc)
{
	int cls = MPI_SUCCESS;

	MPI_Error_class(rc, &cls);
	return cls == MPIX_ERR_PROC_FAILED;
}

int main(int argc, char **argv)
{
	int x = 0, rc, first = -1, ndead = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	dead = calloc((size_t)size, sizeof *dead);
	for (char *s = argc > 1 ? argv[1] : ""; *s;) {
		int r = (int)strtol(s, &s, 10);
		if (r >= 0 && r < size && !dead[r]) {
			dead[r] = 1;
			ndead++;
			first = first < 0 ? r : first;
		}
		s += *s == ',';
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		printf("lk_ft: ready\n");
		fflush(stdout);
	}
	if (dead[rank]) { /* wait for the end of our node */
		MPI_Recv(&x, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		return 1;
	}
	rc = MPI_Recv(&x, 1, MPI_INT, first, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	check(failed_class(rc), "a receive from a failed rank", rc);
	rc = MPI_Send(&x, 1, MPI_INT, first, 8, MPI_COMM_WORLD);
	check(failed_class(rc), "a send to a failed rank", rc);

	MPI_Group g, wg;
	int n = -1;
	MPIX_Comm_failure_ack(MPI_COMM_WORLD);
	MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g);
	MPI_Group_size(g, &n);
	check(n == ndead, "the failed group's size", n);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	for (int i = 0; i < n && i < size; i++) {
		int w = -1;
		MPI_Group_translate_ranks(g, 1, &i, wg, &w);
		check(w >= 0 && w < size && dead[w], "a failed rank the test did not fail", w);
	}
	MPI_Group_free(&g);
	MPI_Group_free(&wg);

	/* the ring of the survivors: the lowest starts, each adds one */
	int next = rank, prev = rank, low = 0;
	do
		next = (next + 1) % size;
	while (dead[next]);
	do
		prev = (prev - 1 + size) % size;
	while (dead[prev]);
	while (dead[low])
		low++;
	int token = rank == low ? 1 : 0;
	if (rank == low) {
		rc = MPI_Send(&token, 1, MPI_INT, next, 1, MPI_COMM_WORLD);
		check(rc == MPI_SUCCESS, "the ring's first send", rc);
		rc = MPI_Recv(&token, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		check(rc == MPI_SUCCESS && token == size - ndead, "the token back round the ring",
		      token);
	} else {
		rc = MPI_Recv(&token, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		check(rc == MPI_SUCCESS, "a ring receive", rc);
		token++;
		rc = MPI_Send(&token, 1, MPI_INT, next, 1, MPI_COMM_WORLD);
		check(rc == MPI_SUCCESS, "a ring send", rc);
	}
	rc = MPI_Barrier(MPI_COMM_WORLD);
	check(failed_class(rc), "a barrier that needs the failed ranks", rc);
	if (rank == low)
		printf("lk_ft: %s survivors=%d\n", errors ? "FAILED" : "OK", size - ndead);
	MPI_Finalize();
	free(dead);
	return errors ? 1 : 0;
}
#endif
