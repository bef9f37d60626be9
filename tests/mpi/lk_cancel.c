/* tests/mpi/lk_cancel.c: MPI_Cancel of sends (eager, synchronous, rendezvous, persistent,
 * buffered) and of receives, and what MPI_Test_cancelled says. Ranks 0 and 1 take part; needs 2 or
 * more ranks. The standard lets a send cancel fail; when it does the message must still arrive.
 * lamkit's library must succeed for messages not yet matched (LAMKIT_MPI). */
#include <string.h>

#include "lk_util.h"

#define BIG (1 << 20)

static char *big;

/* Rank 0 starts a send the receiver has not matched, cancels it, then sends a marker on the
 * same tag: rank 1 must see exactly one of (the cancelled message, the marker) first. */
static void cancel_unmatched(int mode, int count, int tag)
{
	MPI_Request rq;
	MPI_Status st;
	int flag = -1, marker = -7;

	if (lk_rank == 0) {
		memset(big, mode + 1, (size_t)count);
		if (mode == 0)
			MPI_Isend(big, count, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &rq);
		else if (mode == 1)
			MPI_Issend(big, count, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &rq);
		else if (mode == 2)
			MPI_Send_init(big, count, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &rq);
		else if (mode == 3)
			MPI_Ibsend(big, count, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &rq);
		else
			MPI_Bsend_init(big, count, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &rq);
		if (mode == 2 || mode == 4)
			MPI_Start(&rq);
		MPI_Cancel(&rq);
		/* a failed cancel of a synchronous or large send completes only once matched; other
		 * MPIs may refuse the cancel, so they get less time to show which they did */
		int done = 0;
#ifdef LAMKIT_MPI
		const double wait_s = 2.0;
#else
		const double wait_s = 0.2;
#endif
		for (double t0 = MPI_Wtime(); !done && MPI_Wtime() - t0 < wait_s;)
			MPI_Test(&rq, &done, &st);
		if (done)
			MPI_Test_cancelled(&st, &flag);
		else
			flag = 0;
#ifdef LAMKIT_MPI
		LK_CHECK(done && flag, "mode %d count %d: unmatched send not cancelled", mode,
		         count);
#endif
		MPI_Send(&flag, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
		if (!done) {
			MPI_Wait(&rq, &st);
			MPI_Test_cancelled(&st, &flag);
			LK_CHECK(!flag, "a send reported cancelled after it was received");
		}
		if (mode == 2 || mode == 4)
			MPI_Request_free(&rq);
		if (mode >= 3) { /* a withdrawn buffered message gives its buffer space back */
			void *b;
			int n;
			MPI_Buffer_detach(&b, &n);
			MPI_Buffer_attach(b, n);
			MPI_Bsend(big, BIG, MPI_CHAR, 1, 98, MPI_COMM_WORLD);
			MPI_Bsend(big, BIG, MPI_CHAR, 1, 98, MPI_COMM_WORLD);
			MPI_Buffer_detach(&b, &n); /* returns once both are delivered */
			MPI_Buffer_attach(b, n);
		}
		MPI_Send(&marker, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
	} else if (lk_rank == 1) {
		MPI_Recv(&flag, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (!flag) {
			memset(big, 0, (size_t)count);
			MPI_Recv(big, count, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &st);
			LK_CHECK(big[0] == mode + 1 && big[count - 1] == mode + 1,
			         "mode %d: not-cancelled message lost", mode);
		}
		for (int i = 0; mode >= 3 && i < 2; i++)
			MPI_Recv(big, BIG, MPI_CHAR, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		int got = 0;
		MPI_Recv(&got, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &st);
		LK_CHECK(got == marker, "mode %d: after the cancel got %d, want the marker", mode,
		         got);
		MPI_Test_cancelled(&st, &flag);
		LK_CHECK(!flag, "a received message reports cancelled");
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* A send the receiver already matched cannot be cancelled. */
static void cancel_matched(void)
{
	MPI_Request rq;
	MPI_Status st;
	int v = 42, got = 0, flag = -1;

	if (lk_rank == 0) {
		MPI_Isend(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Cancel(&rq);
		MPI_Wait(&rq, &st);
		MPI_Test_cancelled(&st, &flag);
		LK_CHECK(!flag, "a matched send reports cancelled");
	} else {
		if (lk_rank == 1) {
			MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			LK_CHECK(got == 42, "matched send got %d", got);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void cancel_recv(void)
{
	MPI_Request rq;
	MPI_Status st;
	int buf, flag = 0;

	MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &rq);
	MPI_Cancel(&rq);
	MPI_Wait(&rq, &st);
	MPI_Test_cancelled(&st, &flag);
	LK_CHECK(flag, "a posted receive was not cancelled");
	LK_CHECK(rq == MPI_REQUEST_NULL, "cancelled request not freed by wait");
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_cancel");
	if (lk_size < 2) {
		if (lk_rank == 0)
			printf("lk_cancel: needs 2 or more ranks\n");
		MPI_Finalize();
		return 1;
	}
	big = malloc(BIG);
	/* room for two BIG buffered messages, only if a cancelled one is given back */
	int bsize = 2 * (BIG + MPI_BSEND_OVERHEAD);
	MPI_Buffer_attach(malloc((size_t)bsize), bsize);
	for (int rep = 0; rep < 3; rep++) {
		cancel_unmatched(0, 8, 10);
		cancel_unmatched(1, 8, 11);
		cancel_unmatched(0, BIG, 12);
		cancel_unmatched(1, BIG, 13);
		cancel_unmatched(2, 100, 14);
		cancel_unmatched(2, BIG, 15);
		cancel_unmatched(3, 8, 16);
		cancel_unmatched(3, BIG, 17);
		cancel_unmatched(4, 100, 18);
		cancel_unmatched(4, BIG, 19);
		cancel_matched();
		cancel_recv();
	}
	void *b;
	MPI_Buffer_detach(&b, &bsize);
	free(b);
	free(big);
	return lk_finish();
}
