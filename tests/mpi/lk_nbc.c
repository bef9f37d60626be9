/* tests/mpi/lk_nbc.c: MPI-3 nonblocking collectives against their blocking twins, many in flight,
 * progress under MPI_Test only, mixed with blocking collectives and point-to-point. */
#include <string.h>
#include <unistd.h>

#include "lk_util.h"

static const int counts[] = {0, 1, 7, 1000, 70000};
#define NC ((int)(sizeof(counts) / sizeof(counts[0])))

static int v(int r, int i)
{
	return (r + 1) * 5 + i % 97;
}

static int *ialloc(size_t n)
{
	int *p = malloc(sizeof(int) * (n ? n : 1));

	if (!p)
		MPI_Abort(MPI_COMM_WORLD, 2);
	return p;
}

/* Index of the first difference of a and b over n ints, or -1. */
static int diff(const int *a, const int *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

static void wait1(MPI_Request *r)
{
	MPI_Status st;

	MPI_Wait(r, &st);
	LK_CHECK(*r == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
}

/* Non-commutative: 2x2 integer matrix product on quadruples, kept small mod 1000. */
/* cppcheck-suppress constParameter ; the MPI_User_function signature */
static void matmul(void *in, void *io, int *len, MPI_Datatype *t)
{
	int *a = in, *b = io;

	(void)t;
	for (int k = 0; k < *len; k++, a += 4, b += 4) {
		int r0 = (a[0] * b[0] + a[1] * b[2]) % 1000,
		    r1 = (a[0] * b[1] + a[1] * b[3]) % 1000;
		int r2 = (a[2] * b[0] + a[3] * b[2]) % 1000,
		    r3 = (a[2] * b[1] + a[3] * b[3]) % 1000;
		b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
	}
}

/* Rooted collectives: Ibcast, Ireduce, Igather(v), Iscatter(v) against the blocking ones. */
static void test_rooted(int n)
{
	int *s = ialloc((size_t)n), *r = ialloc((size_t)n), *w = ialloc((size_t)n);
	int *all = ialloc((size_t)n * lk_size), *allw = ialloc((size_t)n * lk_size);
	int *cnt = ialloc((size_t)lk_size), *dsp = ialloc((size_t)lk_size);
	MPI_Request q;

	for (int root = 0; root<lk_size; root += lk_size> 2 ? lk_size - 1 : 1) {
		for (int i = 0; i < n; i++) {
			s[i] = v(lk_rank, i);
			r[i] = lk_rank == root ? v(root + 3, i) : -1;
			w[i] = v(root + 3, i);
		}
		MPI_Ibcast(r, n, MPI_INT, root, MPI_COMM_WORLD, &q);
		wait1(&q);
		LK_CHECK(diff(r, w, n) < 0, "ibcast n=%d root=%d at %d", n, root, diff(r, w, n));
		MPI_Reduce(s, w, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
		MPI_Ireduce(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &q);
		wait1(&q);
		LK_CHECK(lk_rank != root || diff(r, w, n) < 0, "ireduce sum n=%d root=%d", n, root);
		if (n <= 1000) { /* MPICH 4.0.2 fails a large IN_PLACE reduce: kept small */
			MPI_Reduce(s, w, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
			memcpy(r, s, sizeof(int) * (size_t)n);
			MPI_Ireduce(lk_rank == root ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_MAX,
			            root, MPI_COMM_WORLD, &q);
			wait1(&q);
			LK_CHECK(lk_rank != root || diff(r, w, n) < 0,
			         "ireduce in_place max n=%d root=%d", n, root);
		}
		MPI_Gather(s, n, MPI_INT, allw, n, MPI_INT, root, MPI_COMM_WORLD);
		MPI_Igather(s, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD, &q);
		wait1(&q);
		LK_CHECK(lk_rank != root || diff(all, allw, n * lk_size) < 0, "igather n=%d", n);
		for (int p = 0, off = 0; p < lk_size; p++) {
			int k = lk_size - 1 - p; /* blocks in reverse order, sizes vary */
			cnt[k] = k % 3 * n / 2;
			dsp[k] = off;
			off += cnt[k];
		}
		memset(all, 0, sizeof(int) * (size_t)n * lk_size);
		memcpy(allw, all, sizeof(int) * (size_t)n * lk_size);
		MPI_Gatherv(s, cnt[lk_rank], MPI_INT, allw, cnt, dsp, MPI_INT, root,
		            MPI_COMM_WORLD);
		MPI_Igatherv(s, cnt[lk_rank], MPI_INT, all, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD,
		             &q);
		wait1(&q);
		LK_CHECK(lk_rank != root || diff(all, allw, n * lk_size) < 0, "igatherv n=%d", n);
		for (int i = 0; i < n * lk_size; i++)
			all[i] = v(i / (n ? n : 1) + 9, i);
		MPI_Iscatter(all, n, MPI_INT, lk_rank == root ? MPI_IN_PLACE : r, n, MPI_INT, root,
		             MPI_COMM_WORLD, &q);
		wait1(&q);
		LK_CHECK(lk_rank == root || diff(r, all + (size_t)lk_rank * n, n) < 0,
		         "iscatter n=%d root=%d", n, root);
		MPI_Iscatterv(all, cnt, dsp, MPI_INT, r, cnt[lk_rank], MPI_INT, root,
		              MPI_COMM_WORLD, &q);
		wait1(&q);
		LK_CHECK(diff(r, all + dsp[lk_rank], cnt[lk_rank]) < 0, "iscatterv n=%d root=%d", n,
		         root);
	}
	free(s), free(r), free(w), free(all), free(allw), free(cnt), free(dsp);
}

/* Collectives without a root against the blocking ones. */
static void test_all(int n)
{
	size_t big = (size_t)n * lk_size;
	int *s = ialloc(big), *r = ialloc(big), *w = ialloc(big);
	int *cnt = ialloc((size_t)lk_size), *dsp = ialloc((size_t)lk_size);
	MPI_Request q;

	for (size_t i = 0; i < big; i++)
		s[i] = v(lk_rank, (int)i);
	MPI_Allreduce(s, w, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, n) < 0, "iallreduce n=%d at %d", n, diff(r, w, n));
	memcpy(r, s, sizeof(int) * (size_t)n);
	MPI_Allreduce(s, w, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Iallreduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, n) < 0, "iallreduce in_place n=%d", n);
	MPI_Allgather(s, n, MPI_INT, w, n, MPI_INT, MPI_COMM_WORLD);
	MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, n * lk_size) < 0, "iallgather n=%d", n);
	memcpy(r + (size_t)lk_rank * n, s, sizeof(int) * (size_t)n);
	MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, n * lk_size) < 0, "iallgather in_place n=%d", n);
	for (int p = 0, off = 0; p < lk_size; p++) {
		cnt[p] = (p + 1) % 3 * n / 2;
		dsp[p] = off;
		off += cnt[p];
	}
	MPI_Allgatherv(s, cnt[lk_rank], MPI_INT, w, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
	MPI_Iallgatherv(s, cnt[lk_rank], MPI_INT, r, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, dsp[lk_size - 1] + cnt[lk_size - 1]) < 0, "iallgatherv n=%d", n);
	for (size_t i = 0; i < big; i++)
		s[i] = lk_rank * 100000 + (int)i;
	MPI_Alltoall(s, n, MPI_INT, w, n, MPI_INT, MPI_COMM_WORLD);
	MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, n * lk_size) < 0, "ialltoall n=%d", n);
	memcpy(r, s, sizeof(int) * big);
	MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, n * lk_size) < 0, "ialltoall in_place n=%d", n);
	{ /* alltoallv: rank p gets cnt[p] elements from everyone, at p's offsets */
		int *sc = ialloc((size_t)lk_size), *sd = ialloc((size_t)lk_size);
		int *rc = ialloc((size_t)lk_size), *rd = ialloc((size_t)lk_size);
		for (int p = 0; p < lk_size; p++) {
			sc[p] = (p + lk_rank) % 3 * n / 3;
			sd[p] = p * n;
			rc[p] = (p + lk_rank) % 3 * n / 3;
			rd[p] = (lk_size - 1 - p) * n;
		}
		memset(w, 0, sizeof(int) * big);
		memset(r, 0, sizeof(int) * big);
		MPI_Alltoallv(s, sc, sd, MPI_INT, w, rc, rd, MPI_INT, MPI_COMM_WORLD);
		MPI_Ialltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD, &q);
		wait1(&q);
		LK_CHECK(diff(r, w, n * lk_size) < 0, "ialltoallv n=%d", n);
		free(sc), free(sd), free(rc), free(rd);
	}
	for (size_t i = 0; i < big; i++)
		s[i] = v(lk_rank, (int)i);
	for (int p = 0; p < lk_size; p++)
		cnt[p] = p % 2 ? n : n / 2;
	MPI_Reduce_scatter(s, w, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Ireduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, cnt[lk_rank]) < 0, "ireduce_scatter n=%d", n);
	if (n <= 1000) {
		MPI_Reduce_scatter_block(s, w, n / 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		memcpy(r, s, sizeof(int) * big);
		MPI_Ireduce_scatter_block(MPI_IN_PLACE, r, n / 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD,
		                          &q);
		wait1(&q);
		LK_CHECK(diff(r, w, n / 4) < 0, "ireduce_scatter_block in_place n=%d", n);
	}
	MPI_Scan(s, w, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Iscan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(diff(r, w, n) < 0, "iscan n=%d", n);
	MPI_Exscan(s, w, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Iexscan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	wait1(&q);
	LK_CHECK(lk_rank == 0 || diff(r, w, n) < 0, "iexscan n=%d", n);
	free(s), free(r), free(w), free(cnt), free(dsp);
}

/* A user op that is not commutative, on a derived type freed while the operations run. */
static void test_noncommutative(void)
{
	int x[4] = {lk_rank + 1, 1, 0, 1}, y[4], z[4], want[4] = {1, 0, 0, 1};
	MPI_Datatype quad;
	MPI_Op mm;
	MPI_Request q[4];
	MPI_Status sts[2];

	for (int p = 0; p < lk_size; p++) {
		int a[4] = {p + 1, 1, 0, 1}, len = 1;
		matmul(want, a, &len, NULL);
		memcpy(want, a, sizeof(a));
	}
	MPI_Op_create(matmul, 0, &mm);
	MPI_Type_contiguous(4, MPI_INT, &quad);
	MPI_Type_commit(&quad);
	memset(y, 0, sizeof(y));
	MPI_Iallreduce(x, y, 1, quad, mm, MPI_COMM_WORLD, &q[0]);
	MPI_Ireduce(x, z, 1, quad, mm, lk_size - 1, MPI_COMM_WORLD, &q[1]);
	MPI_Type_free(&quad); /* the operations keep the type and the op alive */
	MPI_Op_free(&mm);
	MPI_Op_create(matmul, 0, &mm);
	MPI_Waitall(2, q, sts);
	LK_CHECK(!memcmp(y, want, sizeof(y)), "noncommutative iallreduce");
	LK_CHECK(lk_rank != lk_size - 1 || !memcmp(z, want, sizeof(z)),
	         "noncommutative ireduce to the last rank");
	{
		int sc[4], ws[4];
		MPI_Type_contiguous(4, MPI_INT, &quad);
		MPI_Type_commit(&quad);
		MPI_Scan(x, ws, 1, quad, mm, MPI_COMM_WORLD);
		MPI_Iscan(x, sc, 1, quad, mm, MPI_COMM_WORLD, &q[2]);
		wait1(&q[2]);
		LK_CHECK(!memcmp(sc, ws, sizeof(sc)), "noncommutative iscan");
		MPI_Exscan(x, ws, 1, quad, mm, MPI_COMM_WORLD);
		MPI_Iexscan(x, sc, 1, quad, mm, MPI_COMM_WORLD, &q[3]);
		wait1(&q[3]);
		LK_CHECK(lk_rank == 0 || !memcmp(sc, ws, sizeof(sc)), "noncommutative iexscan");
		MPI_Type_free(&quad);
	}
	MPI_Op_free(&mm);
}

/* Many collectives in flight at once, completed in reverse and in any order, interleaved with
 * a blocking collective and point-to-point traffic on the same communicator. */
#define NFLY 24
static void test_in_flight(void)
{
	MPI_Request q[NFLY + 1];
	int *buf[NFLY], n = 300, idx, done = 0, x = lk_rank + 1, sum = 0;

	for (int k = 0; k < NFLY; k++) {
		buf[k] = ialloc((size_t)n * lk_size);
		for (int i = 0; i < n; i++)
			buf[k][i] = v(lk_rank + k, i);
		if (k % 3 == 0)
			MPI_Iallreduce(MPI_IN_PLACE, buf[k], n, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
			               &q[k]);
		else if (k % 3 == 1)
			MPI_Ibcast(buf[k], n, MPI_INT, k % lk_size, MPI_COMM_WORLD, &q[k]);
		else
			MPI_Ibarrier(MPI_COMM_WORLD, &q[k]);
	}
	MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(x == lk_size * (lk_size + 1) / 2, "blocking allreduce among pending ones");
	if (lk_size > 1) { /* a ring of point-to-point messages meanwhile */
		int got = -1;
		MPI_Sendrecv(&lk_rank, 1, MPI_INT, (lk_rank + 1) % lk_size, 5, &got, 1, MPI_INT,
		             (lk_rank + lk_size - 1) % lk_size, 5, MPI_COMM_WORLD,
		             MPI_STATUS_IGNORE);
		LK_CHECK(got == (lk_rank + lk_size - 1) % lk_size, "sendrecv among pending ones");
	}
	for (int k = NFLY - 1; k >= NFLY / 2; k--) /* the later half first */
		wait1(&q[k]);
	while (done < NFLY / 2) {
		MPI_Waitany(NFLY / 2, q, &idx, MPI_STATUS_IGNORE);
		LK_CHECK(idx >= 0 && idx < NFLY / 2, "waitany index %d", idx);
		done++;
	}
	for (int k = 0; k < NFLY; k++) {
		for (int i = 0; i < n; i++) {
			int want = 0;
			if (k % 3 == 0)
				for (int p = 0; p < lk_size; p++)
					want += v(p + k, i);
			else if (k % 3 == 1)
				want = v(k % lk_size + k, i);
			else
				want = v(lk_rank + k, i);
			sum += buf[k][i] != want;
		}
		free(buf[k]);
	}
	LK_CHECK(sum == 0, "%d wrong elements after %d collectives in flight", sum, NFLY);
}

static volatile double sink; /* keeps the compute loop */

/* A rank that computes and only calls MPI_Test sees its collectives finish: the other ranks
 * come late and do all their waiting in MPI_Wait. */
static void test_test_only(void)
{
	int n = 200000, *a = ialloc((size_t)n), flag = 0, tests = 0;
	double t0;
	MPI_Request q;

	for (int i = 0; i < n; i++)
		a[i] = lk_rank + i % 13;
	if (lk_rank != 0)
		usleep(100000);
	MPI_Iallreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	t0 = MPI_Wtime();
	if (lk_rank == 0) {
		while (!flag && MPI_Wtime() - t0 < 60) {
			for (int i = 0; i < 20000; i++) /* compute between tests */
				sink += i * 0.5;
			MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
			tests++;
		}
		LK_CHECK(flag, "iallreduce under MPI_Test only did not finish in 60 s (%d tests)",
		         tests);
	} else {
		wait1(&q);
	}
	for (int i = 0; i < n; i += 997)
		LK_CHECK(a[i] == lk_size * (lk_size - 1) / 2 + lk_size * (i % 13),
		         "iallreduce under MPI_Test: a[%d]=%d", i, a[i]);
	free(a);
}

/* Errors MPI says to give, returned with MPI_ERRORS_RETURN. */
static void test_errors(void)
{
	MPI_Request q = MPI_REQUEST_NULL;
	int x = 0, rc;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Ibcast(&x, 1, MPI_INT, lk_size, MPI_COMM_WORLD, &q);
	LK_CHECK(rc != MPI_SUCCESS, "ibcast to a root out of range succeeded");
	rc = MPI_Iallreduce(&x, &x, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	LK_CHECK(rc != MPI_SUCCESS, "iallreduce of count -1 succeeded");
	rc = MPI_Iallreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &q);
	LK_CHECK(rc != MPI_SUCCESS, "iallreduce with MPI_OP_NULL succeeded");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
	MPI_Comm dup;
	MPI_Request q;

	lk_init(&argc, &argv, "lk_nbc");
	for (int k = 0; k < NC; k++) {
		test_rooted(counts[k]);
		test_all(counts[k]);
	}
	test_noncommutative();
	test_in_flight();
	test_test_only();
	test_errors();
	/* a communicator freed while its last collective is pending */
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Ibarrier(dup, &q);
	MPI_Comm_free(&dup);
	wait1(&q);
	return lk_finish();
}
