/* tests/mpi/lk_inbc.c: nonblocking collectives on an intercommunicator (world split into an
 * even and an odd group, so the groups interleave in rank order), each checked against the
 * blocking collective's result on the same intercommunicator, with roots MPI_ROOT /
 * MPI_PROC_NULL on the root's side. Several are in flight at once. */
#include <string.h>

#include "lk_util.h"

#define N 5
#ifdef LAMKIT_MPI
#define ROOT1 1 /* root at local rank 1 of its group where it has one */
#else
/* MPICH 4.0's MPI_Ibcast on an intercommunicator delivers nothing when the root is not rank 0
 * of its group (the blocking MPI_Bcast does): others root at 0 */
#define ROOT1 0
#endif

static MPI_Comm ic;
static int lrank, lsize, rsize, color;

/* Root argument for the group that roots (group 0, local rank r0) and the other group. */
static int root_arg(int rooting_color, int r0)
{
	if (color == rooting_color)
		return lrank == r0 ? MPI_ROOT : MPI_PROC_NULL;
	return r0;
}

static void test_bcast_reduce(void)
{
	int b1[N], b2[N], s[N], r1[N], r2[N], a1[N], a2[N];
	MPI_Request rq[3];

	for (int rc = 0; rc < 2; rc++) {
		int root = root_arg(rc, ROOT1 && (color == rc ? lsize : rsize) > 1 ? 1 : 0);
		for (int i = 0; i < N; i++) {
			b1[i] = b2[i] = color == rc ? 100 * rc + i : -1;
			s[i] = lk_rank * 10 + i;
			r1[i] = r2[i] = -7;
		}
		MPI_Ibcast(b1, N, MPI_INT, root, ic, &rq[0]);
		MPI_Ireduce(s, r1, N, MPI_INT, MPI_SUM, root, ic, &rq[1]);
		MPI_Iallreduce(s, a1, N, MPI_INT, MPI_MAX, ic, &rq[2]);
		for (int i = 0; i < 3; i++)
			MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
		MPI_Bcast(b2, N, MPI_INT, root, ic);
		MPI_Reduce(s, r2, N, MPI_INT, MPI_SUM, root, ic);
		MPI_Allreduce(s, a2, N, MPI_INT, MPI_MAX, ic);
		LK_CHECK(!memcmp(b1, b2, sizeof(b1)), "Ibcast (root side %d) differs", rc);
		LK_CHECK(!memcmp(r1, r2, sizeof(r1)), "Ireduce (root side %d) differs: %d vs %d",
		         rc, r1[0], r2[0]);
		LK_CHECK(!memcmp(a1, a2, sizeof(a1)), "Iallreduce differs: %d vs %d", a1[0], a2[0]);
		if (color != rc)
			LK_CHECK(b1[2] == 100 * rc + 2, "Ibcast value %d", b1[2]);
	}
}

static void test_gather_scatter(void)
{
	int s[N], *g1 = calloc((size_t)(N * rsize), sizeof(int)),
	          *g2 = calloc((size_t)(N * rsize), sizeof(int)), c1[N], c2[N];
	int *ag1 = calloc((size_t)(N * rsize), sizeof(int)),
	    *ag2 = calloc((size_t)(N * rsize), sizeof(int));
	int *t1 = calloc((size_t)(N * rsize), sizeof(int)),
	    *t2 = calloc((size_t)(N * rsize), sizeof(int));
	int *src = calloc((size_t)(N * rsize), sizeof(int));
	MPI_Request rq[4];

	for (int i = 0; i < N * rsize; i++)
		src[i] = lk_rank * 1000 + i;
	for (int i = 0; i < N; i++)
		s[i] = lk_rank * 100 + i;
	int root = root_arg(1, 0);
	memset(c1, 0, sizeof(c1));
	memset(c2, 0, sizeof(c2));
	MPI_Igather(s, N, MPI_INT, g1, N, MPI_INT, root, ic, &rq[0]);
	MPI_Iscatter(src, N, MPI_INT, c1, N, MPI_INT, root, ic, &rq[1]);
	MPI_Iallgather(s, N, MPI_INT, ag1, N, MPI_INT, ic, &rq[2]);
	MPI_Ialltoall(src, N, MPI_INT, t1, N, MPI_INT, ic, &rq[3]);
	for (int i = 0; i < 4; i++)
		MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
	MPI_Gather(s, N, MPI_INT, g2, N, MPI_INT, root, ic);
	MPI_Scatter(src, N, MPI_INT, c2, N, MPI_INT, root, ic);
	MPI_Allgather(s, N, MPI_INT, ag2, N, MPI_INT, ic);
	MPI_Alltoall(src, N, MPI_INT, t2, N, MPI_INT, ic);
	if (root == MPI_ROOT)
		LK_CHECK(!memcmp(g1, g2, sizeof(int) * (size_t)(N * rsize)), "Igather differs");
	if (root >= 0)
		LK_CHECK(!memcmp(c1, c2, sizeof(c1)), "Iscatter differs: %d vs %d", c1[0], c2[0]);
	LK_CHECK(!memcmp(ag1, ag2, sizeof(int) * (size_t)(N * rsize)), "Iallgather differs");
	LK_CHECK(!memcmp(t1, t2, sizeof(int) * (size_t)(N * rsize)), "Ialltoall differs");
	free(g1), free(g2), free(ag1), free(ag2), free(t1), free(t2), free(src);
}

/* Each group gets the sum of the other group's 12-element vectors, scattered over its ranks in
 * uneven blocks (reduce_scatter) and in even ones (reduce_scatter_block); both as computed here
 * and as the blocking calls give it. 12 splits evenly over groups of 1, 2, 3, 4 or 6. */
#define T 12
static void test_reduce_scatter(void)
{
	int s[T], want[T], counts[T] = {0}, r1[T], r2[T], b1[T], b2[T], off = 0, blk = T / lsize;
	MPI_Request rq[2];

	for (int i = 0; i < T; i++) {
		s[i] = lk_rank * 100 + i;
		want[i] = 0;
		for (int r = 1 - color; r < lk_size; r += 2)
			want[i] += r * 100 + i;
	}
	for (int l = 0; l < lsize; l++)
		counts[l] = blk;
	if (lsize > 1) /* uneven: one more for the first, one less for the last */
		counts[0]++, counts[lsize - 1]--;
	for (int l = 0; l < lrank; l++)
		off += counts[l];
	memset(r1, -1, sizeof(r1)), memset(r2, -1, sizeof(r2));
	memset(b1, -1, sizeof(b1)), memset(b2, -1, sizeof(b2));
	MPI_Ireduce_scatter(s, r1, counts, MPI_INT, MPI_SUM, ic, &rq[0]);
	MPI_Ireduce_scatter_block(s, b1, blk, MPI_INT, MPI_SUM, ic, &rq[1]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	MPI_Reduce_scatter(s, r2, counts, MPI_INT, MPI_SUM, ic);
	MPI_Reduce_scatter_block(s, b2, blk, MPI_INT, MPI_SUM, ic);
	for (int i = 0; i < T; i++) {
		int in = i < counts[lrank], bin = i < blk;
		LK_CHECK(r1[i] == (in ? want[off + i] : -1), "Ireduce_scatter [%d]=%d want %d", i,
		         r1[i], in ? want[off + i] : -1);
		LK_CHECK(r1[i] == r2[i], "Ireduce_scatter [%d]=%d, blocking %d", i, r1[i], r2[i]);
		LK_CHECK(b1[i] == (bin ? want[lrank * blk + i] : -1),
		         "Ireduce_scatter_block [%d]=%d want %d", i, b1[i],
		         bin ? want[lrank * blk + i] : -1);
		LK_CHECK(b1[i] == b2[i], "Ireduce_scatter_block [%d]=%d, blocking %d", i, b1[i],
		         b2[i]);
	}
}

static void test_barrier_refused(void)
{
	MPI_Request rq;
	int v = 0, rc, cls;

	MPI_Ibarrier(ic, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	LK_CHECK(rq == MPI_REQUEST_NULL, "Ibarrier request not freed");
#ifdef LAMKIT_MPI /* scan is not defined on intercommunicators: a clear error */
	MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
	rc = MPI_Iscan(&v, &v, 1, MPI_INT, MPI_SUM, ic, &rq);
	MPI_Error_class(rc, &cls);
	LK_CHECK(cls == MPI_ERR_COMM, "Iscan on an intercommunicator gave class %d", cls);
#else
	(void)rc, (void)cls, (void)v;
#endif
}

int main(int argc, char **argv)
{
	MPI_Comm local;

	lk_init(&argc, &argv, "lk_inbc");
	if (lk_size < 2) {
		LK_CHECK(1, "needs 2 ranks");
		return lk_finish();
	}
	color = lk_rank % 2;
	MPI_Comm_split(MPI_COMM_WORLD, color, lk_rank, &local);
	MPI_Comm_rank(local, &lrank);
	MPI_Comm_size(local, &lsize);
	MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &ic);
	MPI_Comm_remote_size(ic, &rsize);
	test_bcast_reduce();
	test_gather_scatter();
	if (T % lsize == 0)
		test_reduce_scatter();
	test_barrier_refused();
	MPI_Comm_free(&ic);
	MPI_Comm_free(&local);
	return lk_finish();
}
