/* tests/mpi/lk_p2p.c: point-to-point semantics: order, wildcards, unexpected, truncation, modes. */
#include <string.h>
#include <time.h>

#include "lk_util.h"

#define NMSG 64

/* Value of byte i of message k from rank r. */
static char pat(int r, int k, long i)
{
	return (char)(r * 31 + k * 7 + i % 251);
}

static int msg_len(int k)
{
	static const int lens[] = {0, 1, 8, 100, 4096, 20000, 70000, 300000};
	return lens[k % 8];
}

/* Everybody sends NMSG messages of mixed sizes to rank 0 before it posts anything (they
 * arrive unexpected); rank 0 then receives them by ANY_SOURCE/specific source and checks that
 * each sender's messages come in the order sent (non-overtaking). */
static void test_order_unexpected(void)
{
	char *buf = malloc(300000), *sb[NMSG];
	int next[64] = {0};
	MPI_Request rq[NMSG];

	for (int k = 0; k < NMSG && lk_rank != 0; k++) {
		int n = msg_len(k);
		sb[k] = malloc((size_t)n + 1);
		for (int i = 0; i < n; i++)
			sb[k][i] = pat(lk_rank, k, i);
		MPI_Isend(sb[k], n, MPI_CHAR, 0, k % 3, MPI_COMM_WORLD, &rq[k]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		for (int m = 0; m < NMSG * (lk_size - 1); m++) {
			MPI_Status st;
			int cnt, src, k, bad = 0;
			int want = MPI_ANY_SOURCE;
			for (int s = 1; s < lk_size && m % 2 == 0; s++)
				if (next[1 + (m / 2 + s) % (lk_size - 1)] < NMSG)
					want = 1 + (m / 2 + s) % (lk_size - 1);
			MPI_Recv(buf, 300000, MPI_CHAR, want, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			src = st.MPI_SOURCE;
			k = next[src]++;
			MPI_Get_count(&st, MPI_CHAR, &cnt);
			LK_CHECK(st.MPI_TAG == k % 3, "order: tag %d from %d msg %d", st.MPI_TAG,
			         src, k);
			LK_CHECK(cnt == msg_len(k), "order: len %d from %d msg %d", cnt, src, k);
			for (int i = 0; i < cnt && !bad; i++)
				bad = buf[i] != pat(src, k, i);
			LK_CHECK(!bad, "order: data from %d msg %d", src, k);
		}
	}
	for (int k = 0; k < NMSG && lk_rank != 0; k++) {
		MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
		free(sb[k]);
	}
	/* A sender whose messages are all received may start the next test while rank 0 still
	 * waits for another sender's; its ANY_SOURCE receive would then rightly take that newer
	 * message. Nobody goes on until rank 0 has them all. */
	MPI_Barrier(MPI_COMM_WORLD);
	free(buf);
}

static void test_truncate(void)
{
	int rc, cls;
	MPI_Status st;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int n = 0; n < 2; n++) {
		int len = n ? 50000 : 100;
		int *src = calloc((size_t)len, sizeof(int)),
		    *dst = calloc((size_t)len, sizeof(int));
		if (lk_rank == 1)
			MPI_Send(src, len, MPI_INT, 0, 5, MPI_COMM_WORLD);
		if (lk_rank == 0) {
			rc = MPI_Recv(dst, len / 2, MPI_INT, 1, 5, MPI_COMM_WORLD, &st);
			MPI_Error_class(rc, &cls);
			LK_CHECK(cls == MPI_ERR_TRUNCATE, "truncate len %d: class %d", len, cls);
		}
		free(src);
		free(dst);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_modes(void)
{
	int peer = lk_rank ^ 1, v = -1, x, bsize = 4 * (100000 + MPI_BSEND_OVERHEAD);
	int *big = malloc(100000 * sizeof(int)), *got = malloc(100000 * sizeof(int));
	void *bbuf = malloc((size_t)bsize), *ret;
	MPI_Request r;
	MPI_Status st;

	if (peer >= lk_size || (lk_size % 2 && lk_rank == lk_size - 1)) {
		free(big);
		free(got);
		free(bbuf);
		return;
	}
	for (int i = 0; i < 100000; i++)
		big[i] = i * (lk_rank + 1);
	/* Ssend / Rsend / Bsend, small and large */
	if (lk_rank < peer) {
		x = 42;
		MPI_Ssend(&x, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
		MPI_Ssend(big, 100000, MPI_INT, peer, 2, MPI_COMM_WORLD);
		MPI_Recv(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &st);
		LK_CHECK(v == 7, "rsend got %d", v);
		MPI_Buffer_attach(bbuf, bsize);
		MPI_Bsend(big, 100000, MPI_INT, peer, 4, MPI_COMM_WORLD);
		MPI_Bsend(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
		MPI_Buffer_detach(&ret, &bsize);
		LK_CHECK(ret == bbuf, "buffer_detach pointer");
	} else {
		MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
		LK_CHECK(v == 42, "ssend got %d", v);
		MPI_Recv(got, 100000, MPI_INT, peer, 2, MPI_COMM_WORLD, &st);
		LK_CHECK(got[99999] == 99999 * (peer + 1), "ssend large");
		MPI_Irecv(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &r); /* unrelated, cancelled */
		x = 7;
		MPI_Rsend(&x, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
		MPI_Cancel(&r);
		MPI_Wait(&r, &st);
		MPI_Test_cancelled(&st, &x);
		LK_CHECK(x, "receive not cancelled");
		MPI_Recv(got, 100000, MPI_INT, peer, 4, MPI_COMM_WORLD, &st);
		LK_CHECK(got[5] == 5 * (peer + 1), "bsend large");
		MPI_Recv(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &st);
		LK_CHECK(v == 42, "bsend small %d", v);
	}
	free(big);
	free(got);
	free(bbuf);
}

static void test_probe_sendrecv(void)
{
	int right = (lk_rank + 1) % lk_size, left = (lk_rank + lk_size - 1) % lk_size;
	int v[3] = {lk_rank, lk_rank * 2, lk_rank * 3}, flag = 0, cnt;
	int *big = malloc(40000 * sizeof(int));
	MPI_Status st;

	MPI_Send(v, 3, MPI_INT, right, 9, MPI_COMM_WORLD);
	MPI_Probe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_INT, &cnt);
	LK_CHECK(st.MPI_SOURCE == left && cnt == 3, "probe src %d cnt %d", st.MPI_SOURCE, cnt);
	MPI_Iprobe(left, 9, MPI_COMM_WORLD, &flag, &st);
	LK_CHECK(flag, "iprobe after probe");
	MPI_Recv(v, 3, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	LK_CHECK(v[2] == left * 3, "probe data");
	for (int i = 0; i < 40000; i++)
		big[i] = lk_rank + i;
	MPI_Sendrecv_replace(big, 40000, MPI_INT, right, 10, left, 10, MPI_COMM_WORLD, &st);
	LK_CHECK(big[39999] == left + 39999 && st.MPI_SOURCE == left, "sendrecv_replace");
	MPI_Sendrecv(&lk_rank, 1, MPI_INT, right, 11, &cnt, 1, MPI_INT, left, 11, MPI_COMM_WORLD,
	             &st);
	LK_CHECK(cnt == left, "sendrecv %d", cnt);
	MPI_Sendrecv(&lk_rank, 1, MPI_INT, MPI_PROC_NULL, 0, &cnt, 1, MPI_INT, MPI_PROC_NULL, 0,
	             MPI_COMM_WORLD, &st);
	LK_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "proc_null source %d", st.MPI_SOURCE);
	free(big);
}

static void test_nonblocking(void)
{
	enum { N = 8 };
	MPI_Request rq[2 * N], pr[2];
	MPI_Status st[2 * N];
	int in[N], out[N], idx[2 * N], done = 0, outc, flag = 0, pin = -1, pout;
	int right = (lk_rank + 1) % lk_size, left = (lk_rank + lk_size - 1) % lk_size;

	for (int i = 0; i < N; i++) {
		out[i] = lk_rank * 100 + i;
		MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &rq[i]);
	}
	for (int i = N - 1; i >= 0; i--)
		MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &rq[N + i]);
	while (done < 2 * N) {
		MPI_Waitsome(2 * N, rq, &outc, idx, st);
		LK_CHECK(outc != MPI_UNDEFINED, "waitsome undefined");
		if (outc == MPI_UNDEFINED)
			break;
		done += outc;
	}
	for (int i = 0; i < N; i++)
		LK_CHECK(in[i] == left * 100 + i, "tagged irecv %d got %d", i, in[i]);
	MPI_Waitany(2 * N, rq, &outc, st);
	LK_CHECK(outc == MPI_UNDEFINED, "waitany on null requests");
	/* persistent */
	MPI_Recv_init(&pin, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &pr[0]);
	MPI_Send_init(&pout, 1, MPI_INT, right, 20, MPI_COMM_WORLD, &pr[1]);
	for (int it = 0; it < 5; it++) {
		pout = lk_rank + it;
		MPI_Startall(2, pr);
		do
			MPI_Testall(2, pr, &flag, st);
		while (!flag);
		LK_CHECK(pin == left + it, "persistent it %d got %d", it, pin);
	}
	MPI_Request_free(&pr[0]);
	MPI_Request_free(&pr[1]);
}

/* A blocking send's buffer is the caller's again once MPI_Send returns, even for a long
 * message whose last piece is short (here 1000 bytes past a multiple of 64 KiB, so that piece
 * fits the transport's eager size): rank 0 scribbles over the buffer right after each send and
 * rank 1 must still get the pattern. */
static void test_send_reuse(void)
{
	const long n = 2L * 1024 * 1024 + 1000;
	char *buf = malloc((size_t)n);

	for (int it = 0; it < 4 && lk_rank < 2; it++) {
		int bad = -1;
		if (lk_rank == 0) {
			for (long i = 0; i < n; i++)
				buf[i] = pat(0, it, i);
			MPI_Send(buf, (int)n, MPI_CHAR, 1, 30 + it, MPI_COMM_WORLD);
			memset(buf, 0x5a, (size_t)n);
		} else {
			MPI_Recv(buf, (int)n, MPI_CHAR, 0, 30 + it, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			for (long i = 0; i < n && bad < 0; i++)
				if (buf[i] != pat(0, it, i))
					bad = (int)i;
			LK_CHECK(bad < 0, "send reuse: message %d wrong from byte %d", it, bad);
		}
	}
	free(buf);
}

/* A window of MPI_Isend larger than the shared-memory ring (160 x 12 KiB, eager where the
 * node's limit is 16 KiB or more) while the receiver is not yet receiving: the sends that do
 * not fit wait in the transport by reference, so each completes only once its payload left;
 * rank 0 scribbles over every buffer as soon as MPI_Waitall returns, and rank 1 must still
 * get each pattern, in order. */
static void test_isend_window(void)
{
	enum { K = 160, LEN = 12 * 1024 };
	char *buf = malloc((size_t)K * LEN);
	MPI_Request rq[K];
	MPI_Status st[K];

	if (lk_rank == 0) {
		for (int k = 0; k < K; k++) {
			for (long i = 0; i < LEN; i++)
				buf[(size_t)k * LEN + i] = pat(0, k, i);
			MPI_Isend(buf + (size_t)k * LEN, LEN, MPI_CHAR, 1, 40, MPI_COMM_WORLD,
			          &rq[k]);
		}
		MPI_Waitall(K, rq, st);
		memset(buf, 0x5a, (size_t)K * LEN);
	} else if (lk_rank == 1) {
		struct timespec d = {0, 100 * 1000 * 1000};
		nanosleep(&d, NULL); /* the sender fills the ring meanwhile */
		for (int k = 0; k < K; k++) {
			int bad = -1;
			MPI_Recv(buf, LEN, MPI_CHAR, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (long i = 0; i < LEN && bad < 0; i++)
				if (buf[i] != pat(0, k, i))
					bad = (int)i;
			LK_CHECK(bad < 0, "isend window: message %d wrong from byte %d", k, bad);
		}
	}
	free(buf);
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_p2p");
	if (lk_size < 2) {
		if (lk_rank == 0)
			printf("lk_p2p: needs 2 or more ranks\n");
		MPI_Finalize();
		return 1;
	}
	test_order_unexpected();
	test_truncate();
	test_modes();
	test_probe_sendrecv();
	test_nonblocking();
	test_send_reuse();
	test_isend_window();
	return lk_finish();
}
