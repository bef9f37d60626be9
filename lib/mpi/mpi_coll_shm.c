/* lib/mpi/mpi_coll_shm.c: barrier, and allreduce, allgather and alltoall of small messages, in
 * shared memory, for a communicator whose ranks are all on one node (see mpii.h;
 * doc/PROTOCOL-mpi-wire.md section 10).
 *
 * The communicator's ranks share one segment, made at its first collective: a generation word,
 * an arrival counter and two banks of one slot per rank. Collective number k (counted by every
 * rank alike, since every rank calls the same collectives in the same order) uses bank k & 1:
 *   1. wait until the generation is k: every rank has arrived at collective k - 1, so every
 *      reader of bank k & 1 (collective k - 2) is done with it;
 *   2. write what the rank gives into its own slot of the bank;
 *   3. arrive: the last of the n to arrive sets the counter back to 0, then the generation to
 *      k + 1, and wakes the ranks asleep on it;
 *   4. wait until the generation is k + 1 and read the others' slots.
 * Every rank waits by polling its transport and then sleeping on the generation word
 * (mpii_progress_wait_word), as a window lock does.
 *
 * With more ranks than cores a collective over point-to-point messages needs each rank to run
 * once per round (two rounds of a 4-rank barrier, and each message waits for its receiver to be
 * scheduled); here each rank runs once to arrive and once to read. Only collectives in which
 * every rank needs every rank's part come here: a bcast and a reduce stay on messages, whose
 * eager sends let the root (bcast) or the leaves (reduce) run many calls ahead, each rank in a
 * long time slice; in shared memory they ran at most one call ahead and paid a round of the
 * scheduler per call (4 ranks on 2 cores, medians of 7 paired runs: bcast of 8 B 2.5 us -> 17.3,
 * of 1 KiB 1.0 -> 11.7; reduce of 8 B 2.1 -> 19.4, of 1 KiB 3.7 -> 12.4).
 * An allreduce combines the slots in rank order on every rank: each rank gets the same bits,
 * also for a floating-point sum, and non-commutative operations are right.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpii.h"

#define SLOT     8192 /* bytes of a rank's slot in one bank */
#define MAX_SIZE 64   /* ranks; a larger communicator uses point-to-point collectives */

struct ctl {
	uint32_t gen, pad0, gen_waiters,
	    pad1; /* gen_waiters 8 bytes after gen (mpii_wlock_waiters) */
	char line0[48];
	uint32_t count; /* arrivals at the current collective */
	char line1[60];
};
_Static_assert(sizeof(struct ctl) == 128, "two cache lines");

struct mpii_cshm {
	struct ctl *ctl;
	char *bank[2];
	size_t len;
	int n, rank;
	uint32_t k; /* this rank's collectives on the segment so far */
};

static int enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("LAMKIT_COLL_SHM");
		on = !(e && strcmp(e, "0") == 0);
	}
	/* a job that survives failed ranks waits only on messages, which fail with the rank */
	return on && !mpii.ft;
}

/* Every rank of c on this node (the job's node map): decided alike by every rank. */
static int one_node(const struct mpii_comm *c)
{
	const int *node = mpii_node_map();
	int me = -1;

	if (!node)
		return 0;
	for (int r = 0; r < c->size; r++) {
		int w = c->grp->world[r];
		if (w < 0 || w >= mpii.size) /* a process of another job */
			return 0;
		if (me < 0)
			me = node[w];
		else if (node[w] != me)
			return 0;
	}
	return 1;
}

/* one_node, looked at once per communicator */
static int on_one_node(struct mpii_comm *c)
{
	if (!c->one_node)
		c->one_node = one_node(c) ? 1 : -1;
	return c->one_node > 0;
}

/* A symmetric collective (allgather, alltoall) on a node with more ranks than CPUs sends its
 * blocks eagerly up to what the transport takes in one piece (64 KiB on shm): every rank sends
 * and receives alike, so what one rank puts in a ring its peer takes out in the same call, and
 * each step costs no RTS to wait for and no FIN back, two handshakes that each wait for the
 * peer to get a CPU. bcast's binomial tree does too (mpi_coll.c), its root running calls ahead
 * through the rings; reduce keeps the usual limit. (At stop 43, 64 KiB eager for every message
 * took allgather and alltoall at 64 KiB to 0.15-0.81 of the better peer, but bcast to 2.8 and
 * reduce to 4.1; with the rings' window, bcast alone at 4 ranks 35.7 -> 23.8 us, Open MPI 38.6,
 * at 8 ranks 88 -> 51, 101.) LAMKIT_COLL_EAGER=0: off. */
size_t mpii_coll_eager(struct mpii_comm *c)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("LAMKIT_COLL_EAGER");
		on = !(e && strcmp(e, "0") == 0);
	}
	return on && c->size >= 2 && mpii_shares_cpus(c) ? (size_t)-1 : 0;
}

int mpii_shares_cpus(struct mpii_comm *c)
{
	return mpii.yield && !c->inter && on_one_node(c);
}

struct mpii_cshm *mpii_cshm_of(struct mpii_comm *c)
{
	if (c->cshm_state == 0) {
		c->cshm_state = -1; /* also while the segment is made: its bcast runs flat */
		if (!c->inter && c->size > 2 && c->size <= MAX_SIZE && enabled() &&
		    on_one_node(c)) {
			struct mpii_cshm *s = calloc(1, sizeof(*s));
			size_t len = sizeof(struct ctl) + 2 * (size_t)c->size * SLOT;
			/* every rank calls mpii_map_segment, which agrees on the outcome; a rank
			 * short of memory for s still takes part and unmaps */
			void *p = mpii_map_segment(c, len);
			if (p && s) {
				s->ctl = p;
				s->bank[0] = (char *)p + sizeof(struct ctl);
				s->bank[1] = s->bank[0] + (size_t)c->size * SLOT;
				s->len = len;
				s->n = c->size;
				s->rank = c->rank;
				c->cshm = s;
			} else if (p) {
				munmap(p, len);
			}
			if (!c->cshm)
				free(s);
			int ok = c->cshm != NULL, all = 0;
			/* a rank without s would leave the others waiting on the segment */
			mpii_allreduce(&ok, &all, 1, mpii_dt(MPI_INT), MPI_MIN, c);
			if (!all && c->cshm) {
				mpii_cshm_free(c->cshm);
				c->cshm = NULL;
			}
			if (all)
				c->cshm_state = 1;
		}
	}
	return c->cshm_state > 0 ? c->cshm : NULL;
}

void mpii_cshm_free(struct mpii_cshm *s)
{
	if (!s)
		return;
	munmap(s->ctl, s->len);
	free(s);
}

static inline uint32_t gen_now(const struct mpii_cshm *s)
{
	return __atomic_load_n(&s->ctl->gen, __ATOMIC_ACQUIRE);
}

/* Until the generation reaches g (wrapping). */
static void wait_gen(struct mpii_cshm *s, uint32_t g)
{
	uint32_t now;

	while ((int32_t)((now = gen_now(s)) - g) < 0)
		mpii_progress_wait_word((int *)&s->ctl->gen, (int)now);
}

/* Steps 1 and 3 around the caller's write: start returns this collective's slot bank. */
static char *start(struct mpii_cshm *s)
{
	wait_gen(s, s->k);
	return s->bank[s->k & 1];
}

static void arrive(struct mpii_cshm *s)
{
	struct ctl *ct = s->ctl;

	if (__atomic_add_fetch(&ct->count, 1, __ATOMIC_ACQ_REL) == (uint32_t)s->n) {
		__atomic_store_n(&ct->count, 0, __ATOMIC_RELAXED);
		/* stored, then counted: a sleeper counts itself before its last look */
		__atomic_store_n(&ct->gen, s->k + 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&ct->gen_waiters, __ATOMIC_SEQ_CST))
			tp_futex_wake(&ct->gen);
	}
	s->k++;
}

static inline char *slot(char *bank, int r)
{
	return bank + (size_t)r * SLOT;
}

int mpii_cshm_barrier(struct mpii_cshm *s)
{
	start(s);
	arrive(s);
	wait_gen(s, s->k);
	return MPI_SUCCESS;
}

/* Whether a reduction of count elements of d fits: its packed form is its memory form. */
static int reducible(const struct mpii_dtype *d, int count)
{
	return d->contig && d->size * (size_t)count <= SLOT;
}

/* out = in[0] op in[1] op ... op in[n - 1], from the slots of bank b, in that order. */
static int combine_all(struct mpii_cshm *s, char *b, void *out, int count, struct mpii_dtype *d,
                       MPI_Op op)
{
	size_t bytes = d->size * (size_t)count;
	int rc = MPI_SUCCESS;

	memcpy(mpii_at(out, d->true_lb), slot(b, s->n - 1), bytes);
	for (int r = s->n - 2; r >= 0 && rc == MPI_SUCCESS; r--)
		rc = mpii_reduce_local(mpii_at(slot(b, r), -d->true_lb), out, count, d, op);
	return rc;
}

int mpii_cshm_allreduce(struct mpii_cshm *s, const void *sbuf, void *rbuf, int count,
                        struct mpii_dtype *d, MPI_Op op)
{
	if (!reducible(d, count))
		return MPII_CSHM_NO;
	char *b = start(s);
	const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	memcpy(slot(b, s->rank), mpii_at(in, d->true_lb), d->size * (size_t)count);
	arrive(s);
	wait_gen(s, s->k);
	return combine_all(s, b, rbuf, count, d, op);
}

int mpii_cshm_allgather(struct mpii_cshm *s, const void *sbuf, int scount, struct mpii_dtype *sd,
                        void *rbuf, int rcount, struct mpii_dtype *rd)
{
	size_t bytes = rd->size * (size_t)rcount; /* each rank's block, as every rank knows it */

	if (bytes > SLOT)
		return MPII_CSHM_NO;
	char *b = start(s);
	if (sbuf == MPI_IN_PLACE)
		mpii_pack(rd, rcount, mpii_at(rbuf, (MPI_Aint)s->rank * rcount * rd->extent), 0,
		          slot(b, s->rank), bytes);
	else
		mpii_pack(sd, scount, sbuf, 0, slot(b, s->rank), bytes);
	arrive(s);
	wait_gen(s, s->k);
	for (int r = 0; r < s->n; r++)
		mpii_unpack(rd, rcount, mpii_at(rbuf, (MPI_Aint)r * rcount * rd->extent), 0,
		            slot(b, r), bytes);
	return MPI_SUCCESS;
}

int mpii_cshm_alltoall(struct mpii_cshm *s, const void *sbuf, int scount, struct mpii_dtype *sd,
                       void *rbuf, int rcount, struct mpii_dtype *rd)
{
	size_t bytes = rd->size * (size_t)rcount; /* one block */

	if (bytes * (size_t)s->n > SLOT || sbuf == MPI_IN_PLACE)
		return MPII_CSHM_NO;
	char *b = start(s), *mine = slot(b, s->rank);
	for (int r = 0; r < s->n; r++)
		mpii_pack(sd, scount, mpii_at(sbuf, (MPI_Aint)r * scount * sd->extent), 0,
		          mine + (size_t)r * bytes, bytes);
	arrive(s);
	wait_gen(s, s->k);
	for (int r = 0; r < s->n; r++)
		mpii_unpack(rd, rcount, mpii_at(rbuf, (MPI_Aint)r * rcount * rd->extent), 0,
		            slot(b, r) + (size_t)s->rank * bytes, bytes);
	return MPI_SUCCESS;
}
