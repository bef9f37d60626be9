/* lib/mpi/mpi_io_xchg.c: an allgather of variable-size items as a state machine of
 * point-to-point messages (Bruck's algorithm), for collective I/O that progresses nonblocking.
 *
 * The schedules of mpi_sched.c are not used: an I/O operation advances inside the progress
 * engine, where starting a schedule could be nested in another schedule's progress. */
#include <stdlib.h>
#include <string.h>

#include "mpio.h"

int mpio_xg_start(struct mpio_xg *x, struct mpii_comm *c, int tag, const void *mine,
                  const int *lens, char *out)
{
	int n = c->size;
	MPI_Offset total = 0;

	memset(x, 0, sizeof(*x));
	x->c = c;
	x->tag = tag;
	x->lens = lens;
	x->out = out;
	x->off = malloc(sizeof(MPI_Offset) * (size_t)(n + 1));
	if (!x->off)
		return x->err = MPI_ERR_NO_MEM;
	x->off[0] = 0; /* off[i]: where item (rank + i) mod n starts in tmp */
	for (int i = 0; i < n; i++)
		x->off[i + 1] = x->off[i] + lens[(c->rank + i) % n];
	total = x->off[n];
	x->tmp = malloc((size_t)total + 1);
	if (!x->tmp)
		return x->err = MPI_ERR_NO_MEM;
	memcpy(x->tmp, mine, (size_t)lens[c->rank]);
	x->have = 1;
	x->dist = 1;
	return MPI_SUCCESS;
}

/* Start the messages of the current distance: what I have (up to what the receiver lacks) to
 * rank - dist, the items of rank + dist onwards from it. */
static int post(struct mpio_xg *x)
{
	int n = x->c->size, cnt = x->dist < n - x->have ? x->dist : n - x->have;
	int to = (x->c->rank - x->dist + n) % n, from = (x->c->rank + x->dist) % n;
	MPI_Offset sb = x->off[cnt], rb = x->off[x->have + cnt] - x->off[x->have];
	int rc;

	x->cnt = cnt;
	if (sb > (1 << 30) || rb > (1 << 30))
		return MPI_ERR_NO_MEM; /* beyond what one message of this exchange carries */
	rc = mpii_isend(x->tmp, (int)sb, mpii_dt(MPI_BYTE), to, x->tag, x->c, 0, MODE_STD, &x->rs);
	if (rc == MPI_SUCCESS)
		rc = mpii_irecv(x->tmp + x->off[x->have], (int)rb, mpii_dt(MPI_BYTE), from, x->tag,
		                x->c, 0, &x->rr);
	return rc;
}

int mpio_xg_step(struct mpio_xg *x)
{
	int n = x->c->size;

	while (!x->err && x->have < n) {
		if (!x->rs && !x->rr) {
			x->err = post(x);
			continue;
		}
		if (!x->rs->done || !x->rr->done)
			return 0;
		if (x->rr->st.MPI_ERROR != MPI_SUCCESS)
			x->err = x->rr->st.MPI_ERROR;
		mpii_req_free(x->rs);
		mpii_req_free(x->rr);
		x->rs = x->rr = NULL;
		x->have += x->cnt;
		x->dist *= 2;
	}
	if (x->rs || x->rr) /* an error: let the messages finish before the memory goes */
		return (!x->rs || x->rs->done) && (!x->rr || x->rr->done);
	if (!x->err && x->out) { /* rotate into rank order: item r at the sum of lens[< r] */
		MPI_Offset at = 0;
		for (int r = 0; r < n; r++) {
			int i = (r - x->c->rank + n) % n;
			memcpy(x->out + at, x->tmp + x->off[i], (size_t)x->lens[r]);
			at += x->lens[r];
		}
	}
	return 1;
}

void mpio_xg_free(struct mpio_xg *x)
{
	if (x->rs)
		mpii_req_free(x->rs);
	if (x->rr)
		mpii_req_free(x->rr);
	free(x->off);
	free(x->tmp);
	memset(x, 0, sizeof(*x));
}
