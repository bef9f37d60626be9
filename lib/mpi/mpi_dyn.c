/* lib/mpi/mpi_dyn.c: ports and the accept/connect handshake between jobs, join, disconnect. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpii.h"
#include "pmi.h"

/* The transport calls of this file, under the transport's lock while the RMA progress thread
 * runs (mpi_rmat.c): adding a peer grows the arrays that thread's polls read. */
static int dyn_card(char *buf, size_t len)
{
	MPII_TP_LOCK();
	int rc = tp_card(mpii.tp, buf, len);
	MPII_TP_UNLOCK();
	return rc;
}

static int dyn_add_peer(const char *card)
{
	MPII_TP_LOCK();
	int p = tp_add_peer(mpii.tp, card);
	MPII_TP_UNLOCK();
	return p;
}

static int dyn_reach(int peer)
{
	MPII_TP_LOCK();
	int rc = tp_reach(mpii.tp, peer);
	MPII_TP_UNLOCK();
	return rc;
}

static int dyn_queued(void)
{
	MPII_TP_LOCK();
	int n = tp_queued(mpii.tp);
	MPII_TP_UNLOCK();
	return n;
}

/*
 * doc/PROTOCOL-mpi-wire.md section 8. A port is "lamkit-port:TAG:CARD" with CARD the root's
 * transport card (tp_card: uid@tcp-card). The connecting root sends HELLO {n, mask, card} on the
 * handshake context with tag TAG; the accepting root answers {n, id} (id 0: no context id free on
 * both sides), and the two swap the cards of their groups. Each root broadcasts the outcome to its
 * group; every member adds the remote processes as transport peers and builds the
 * intercommunicator on the agreed id, the accepting group first in the union order.
 */

#define PORT_PREFIX   "lamkit-port:"
#define HELLO_CONNECT 0
#define HELLO_SPAWNED 1
#define CARD          TP_DYN_CARD_MAX

struct hello {
	int32_t n, kind; /* kind: HELLO_CONNECT, or HELLO_SPAWNED (id and cards preset) */
	uint64_t mask[MPII_NCTX_WORDS];
	char card[CARD];
};

static unsigned port_seq;

/* Seconds to wait (LAMKIT_MPI_CONNECT_TIMEOUT / LAMKIT_MPI_ACCEPT_TIMEOUT, else dflt). */
static double timeout_of(const char *env, double dflt)
{
	const char *e = getenv(env);
	double v = e ? atof(e) : 0;

	return v > 0 ? v : dflt;
}

int mpii_open_port(char *port)
{
	char card[MPI_MAX_PORT_NAME - 24]; /* room for the prefix and the tag */

	if (dyn_card(card, sizeof card) < 0) {
		mpii_err_detail(tp_error(mpii.tp));
		return MPI_ERR_OTHER;
	}
	port_seq = port_seq % 1000000 + 1;
	snprintf(port, MPI_MAX_PORT_NAME, PORT_PREFIX "%u:%s", port_seq, card);
	return MPI_SUCCESS;
}

/* Tag and card of a port name; -1 if it is not one. */
static int parse_port(const char *port, int *tag, const char **card)
{
	char *end;
	long t;

	if (!port || strncmp(port, PORT_PREFIX, strlen(PORT_PREFIX)))
		return -1;
	t = strtol(port + strlen(PORT_PREFIX), &end, 10);
	if (t < 1 || t > MPII_TAG_UB || *end != ':' || strlen(end + 1) >= CARD)
		return -1;
	*tag = (int)t;
	*card = end + 1;
	return 0;
}

/* A private communicator of two on the handshake context: the accepting root is rank 0, the
 * connecting root rank 1; `peer` is the other's transport peer (-1 while unknown). */
static struct mpii_comm *hs_comm(int acceptor, int peer)
{
	int *w = malloc(2 * sizeof(int));
	struct mpii_comm *u = calloc(1, sizeof(*u));

	if (!w || !u)
		goto fail;
	w[acceptor ? 0 : 1] = mpii.rank;
	w[acceptor ? 1 : 0] = peer;
	u->grp = mpii_group_new(2, w);
	w = NULL;
	if (!u->grp)
		goto fail;
	u->handle = MPI_COMM_NULL;
	u->refs = 1;
	u->ctx = MPII_CTX_PORT;
	u->rank = u->grp->rank;
	u->size = 2;
	u->errh = MPI_ERRORS_RETURN;
	return u;
fail:
	free(w);
	free(u);
	return NULL;
}

/* Receive into buf from src on hs within secs (st: the message's status, or NULL): MPI code,
 * MPI_ERR_PORT on timeout. */
static int recv_within(void *buf, int len, int src, int tag, struct mpii_comm *hs, double secs,
                       MPI_Status *st)
{
	struct lk_request *r;
	double end = PMPI_Wtime() + secs;
	int rc = mpii_irecv(buf, len, mpii_dt(MPI_BYTE), src, tag, hs, 0, &r);

	if (rc != MPI_SUCCESS)
		return rc;
	/* the other side may be a job still starting on these CPUs (exec, MPI_Init: ms on a busy
	 * machine): after 1 ms, sleep until a message comes, so that this wait leaves the CPUs to
	 * the children instead of taking half of them; where the transport cannot sleep, nap
	 * between polls, 50 us doubling up to 500 us */
	long ns = 50000;
	for (double t0 = PMPI_Wtime(); !r->done && PMPI_Wtime() < end;) {
		mpii_progress_wait();
		if (!r->done && PMPI_Wtime() - t0 > 1e-3 && !mpii_progress_sleep(10)) {
			nanosleep(&(struct timespec){0, ns}, NULL);
			ns = ns < 250000 ? 2 * ns : 500000;
		}
	}
	if (!r->done && mpii_cancel_recv(r)) {
		mpii_req_free(r);
		return MPI_ERR_PORT;
	}
	return mpii_wait(r, st);
}

/* What a root learned, broadcast to its group: remote size and context id (or -code), cards. */
struct outcome {
	int n, id;
	char *cards;
};

static int swap_cards(struct mpii_comm *hs, int other, const char *mine, int nl, struct outcome *o,
                      int tag)
{
	o->cards = malloc((size_t)o->n * CARD + 1);
	if (!o->cards)
		return MPI_ERR_NO_MEM;
	return mpii_sendrecv(mine, nl * CARD, mpii_dt(MPI_BYTE), other, o->cards, o->n * CARD,
	                     mpii_dt(MPI_BYTE), other, tag, hs, 0, NULL);
}

static int accept_root(const char *port, const char *cards, int nl, const uint64_t *mask,
                       struct outcome *o)
{
	struct hello *h = calloc(1, sizeof(*h));
	char mine[CARD];
	const char *card;
	int tag, rc, p, ans[2];
	struct mpii_comm *hs = NULL;

	if (!h)
		return MPI_ERR_NO_MEM;
	rc = parse_port(port, &tag, &card) < 0 || dyn_card(mine, sizeof mine) < 0 ||
	             strcmp(card, mine)
	         ? MPI_ERR_PORT
	         : MPI_SUCCESS;
	if (rc == MPI_SUCCESS && !(hs = hs_comm(1, -1)))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = recv_within(h, (int)sizeof(*h), MPI_ANY_SOURCE, tag, hs,
		                 timeout_of("LAMKIT_MPI_ACCEPT_TIMEOUT", 600), NULL);
	mpii_comm_release(hs);
	hs = NULL;
	h->card[CARD - 1] = '\0';
	if (rc == MPI_SUCCESS &&
	    (h->kind != HELLO_CONNECT || (p = dyn_add_peer(h->card)) < 0 || h->n < 1))
		rc = MPI_ERR_PORT;
	if (rc == MPI_SUCCESS && !(hs = hs_comm(1, p)))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS) {
		uint64_t both[MPII_NCTX_WORDS];
		for (int i = 0; i < MPII_NCTX_WORDS; i++)
			both[i] = mask[i] & h->mask[i];
		ans[0] = nl;
		ans[1] = (int)mpii_ctx_lowest(both);
		o->n = h->n;
		o->id = ans[1] ? ans[1] : -MPI_ERR_INTERN;
		rc = mpii_send(ans, 2, mpii_dt(MPI_INT), 1, tag, hs, 0, MODE_STD);
	}
	if (rc == MPI_SUCCESS && o->id > 0)
		rc = swap_cards(hs, 1, cards, nl, o, tag);
	mpii_comm_release(hs);
	free(h);
	return rc;
}

/* The connecting root's side of a port: the port's process as a peer, reached now (each
 * address bounded), and the private communicator to it; *tag is the port's. MPI code, with the
 * reason as the error's detail. */
static int reach_port(const char *port, int *tag, struct mpii_comm **hs)
{
	const char *card;
	int p = -1;

	*hs = NULL;
	if (parse_port(port, tag, &card) < 0 || (p = dyn_add_peer(card)) < 0 || p == mpii.rank) {
		char why[160];
		snprintf(why, sizeof why, "not a port name of a lamkit MPI process: '%.100s'",
		         port ? port : "(null)");
		mpii_err_detail(why);
		return MPI_ERR_PORT;
	}
	if (dyn_reach(p) < 0) {
		mpii_err_detail(tp_error(mpii.tp));
		return MPI_ERR_PORT;
	}
	return (*hs = hs_comm(0, p)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int connect_root(const char *port, const char *cards, int nl, const uint64_t *mask,
                        struct outcome *o)
{
	struct hello *h = calloc(1, sizeof(*h));
	int tag = 0, rc = MPI_SUCCESS, ans[2] = {0, 0};
	struct mpii_comm *hs = NULL;

	if (!h)
		return MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = reach_port(port, &tag, &hs);
	if (rc == MPI_SUCCESS) {
		h->n = nl;
		memcpy(h->mask, mask, sizeof h->mask);
		if (dyn_card(h->card, sizeof h->card) < 0) {
			mpii_err_detail(tp_error(mpii.tp));
			rc = MPI_ERR_OTHER;
		} else
			rc = mpii_send(h, (int)sizeof(*h), mpii_dt(MPI_BYTE), 0, tag, hs, 0,
			               MODE_STD);
	}
	if (rc == MPI_SUCCESS) {
		double secs = timeout_of("LAMKIT_MPI_CONNECT_TIMEOUT", 60);
		rc = recv_within(ans, (int)sizeof ans, 0, tag, hs, secs, NULL);
		if (rc == MPI_ERR_PORT) {
			char why[120];
			snprintf(why, sizeof why, "nobody accepted on the port within %.0f s",
			         secs);
			mpii_err_detail(why);
		}
	}
	if (rc == MPI_SUCCESS) {
		o->n = ans[0];
		o->id = ans[1] ? ans[1] : -MPI_ERR_INTERN;
		if (o->id > 0)
			rc = swap_cards(hs, 0, cards, nl, o, tag);
	}
	mpii_comm_release(hs);
	free(h);
	return rc;
}

/* What each member gives its root: the context ids free on it and its card. */
struct member {
	uint64_t mask[MPII_NCTX_WORDS];
	char card[CARD];
};

/* One fan-in to the root (the other members send once and go on): the ids free on every member
 * (ANDed) and the members' cards, which only the root needs. MPI code; *cards is the root's. */
static int members_at_root(struct mpii_comm *c, int root, uint64_t *mask, char **cards)
{
	struct mpii_dtype *b = mpii_dt(MPI_BYTE);
	struct member me, *all = NULL;
	int rc = MPI_SUCCESS;

	*cards = NULL;
	memset(&me, 0, sizeof me);
	mpii_ctx_mine(me.mask);
	if (dyn_card(me.card, sizeof me.card) < 0)
		me.card[0] = '\0';
	if (c->rank != root)
		return mpii_gather(&me, (int)sizeof me, b, NULL, 0, b, root, c);
	all = malloc(sizeof(*all) * (size_t)c->size);
	*cards = malloc((size_t)c->size * CARD + 1);
	if (!all || !*cards) {
		free(all);
		free(*cards);
		*cards = NULL;
		return mpii_gather(&me, (int)sizeof me, b, NULL, 0, b, root, c);
	}
	rc = mpii_gather(&me, (int)sizeof me, b, all, (int)sizeof me, b, root, c);
	memcpy(mask, all[0].mask, sizeof all[0].mask);
	for (int i = 0; i < c->size; i++) {
		for (int w = 0; w < MPII_NCTX_WORDS; w++)
			mask[w] &= all[i].mask[w];
		memcpy(*cards + (size_t)i * CARD, all[i].card, CARD);
	}
	free(all);
	return rc;
}

/* Claim id and make the intercommunicator of c's group and the n peers rw[] (taken). */
static int build_inter(struct mpii_comm *c, int id, int n, int *rw, int acceptor, MPI_Comm *out)
{
	struct mpii_group *rg;
	int rc;

	mpii_ctx_claim((uint32_t)id);
	rg = mpii_group_new(n, rw);
	if (!rg)
		return MPI_ERR_NO_MEM;
	c->grp->refs++;
	rc = mpii_comm_finish(c, c->grp, rg, (uint32_t)id * 2, out, NULL);
	if (rc == MPI_SUCCESS)
		mpii_comm(*out)->order = acceptor ? 1 : 2;
	return rc;
}

/* The outcome a root broadcasts to its group: remote size, context id (or -code) and the first
 * remote cards, so that a small remote group (a spawning parent) costs one broadcast. */
#define INLINE_CARDS 4
struct result {
	int32_t n, id;
	char cards[INLINE_CARDS * CARD];
};

/* The root's outcome to every member of c (rc: the root's own result; o: what it learned), and
 * the intercommunicator every member builds from it (the accepting group first in the union
 * order). Frees o->cards. MPI code. */
static int share_outcome(struct mpii_comm *c, int root, int rc, struct outcome *o, int acceptor,
                         MPI_Comm *out)
{
	struct result res;
	int nin, *rw = NULL;

	memset(&res, 0, sizeof res);
	if (c->rank == root) {
		res.n = o->n;
		res.id = rc != MPI_SUCCESS ? -rc : o->id;
		if (res.id > 0)
			memcpy(res.cards, o->cards,
			       (size_t)(o->n < INLINE_CARDS ? o->n : INLINE_CARDS) * CARD);
		rc = MPI_SUCCESS; /* the outcome tells the group */
	}
	/* a member whose own part failed still relays the outcome (others may hang off it) */
	int bc = mpii_bcast(&res, (int)sizeof res, mpii_dt(MPI_BYTE), root, c);
	if (rc == MPI_SUCCESS)
		rc = bc;
	if (rc == MPI_SUCCESS && res.id <= 0)
		rc = -res.id;
	nin = res.n < INLINE_CARDS ? res.n : INLINE_CARDS;
	if (rc == MPI_SUCCESS && c->rank != root && !(o->cards = malloc((size_t)res.n * CARD + 1)))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS && c->rank != root)
		memcpy(o->cards, res.cards, (size_t)nin * CARD);
	if (rc == MPI_SUCCESS && res.n > nin)
		rc = mpii_bcast(o->cards + (size_t)nin * CARD, (res.n - nin) * CARD,
		                mpii_dt(MPI_CHAR), root, c);
	if (rc == MPI_SUCCESS && !(rw = malloc(sizeof(int) * (size_t)(res.n + 1))))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = mpii_cards_world(o->cards, res.n, rw);
	free(o->cards);
	o->cards = NULL;
	if (rc != MPI_SUCCESS) {
		free(rw);
		return rc;
	}
	return build_inter(c, res.id, res.n, rw, acceptor, out);
}

/* The members' side of accept/connect: every card of c and the ids free on it at the root; the
 * root runs its half; the outcome goes to everyone, who build the intercommunicator. */
static int handshake(const char *port, int root, struct mpii_comm *c, int acceptor, MPI_Comm *out)
{
	uint64_t mask[MPII_NCTX_WORDS];
	char *cards = NULL;
	struct outcome o = {0, 0, NULL};
	int rc;

	*out = MPI_COMM_NULL;
	rc = members_at_root(c, root, mask, &cards);
	if (c->rank == root && rc == MPI_SUCCESS)
		rc = acceptor ? accept_root(port, cards, c->size, mask, &o)
		              : connect_root(port, cards, c->size, mask, &o);
	free(cards);
	return share_outcome(c, root, rc, &o, acceptor, out);
}

int mpii_cards(struct mpii_comm *c, char **cards)
{
	char mine[CARD] = "";
	int rc;

	*cards = malloc((size_t)c->size * CARD);
	if (!*cards)
		return MPI_ERR_NO_MEM;
	if (dyn_card(mine, sizeof mine) < 0)
		mine[0] = '\0';
	rc = mpii_allgather(mine, CARD, mpii_dt(MPI_CHAR), *cards, CARD, mpii_dt(MPI_CHAR), c);
	if (rc != MPI_SUCCESS) {
		free(*cards);
		*cards = NULL;
	}
	return rc;
}

int mpii_cards_world(char *cards, int n, int *w)
{
	for (int i = 0; i < n; i++) {
		cards[(size_t)i * CARD + CARD - 1] = '\0';
		w[i] = dyn_add_peer(cards + (size_t)i * CARD);
		if (w[i] < 0)
			return MPI_ERR_INTERN;
	}
	return MPI_SUCCESS;
}

int mpii_accept(const char *port, int root, struct mpii_comm *c, MPI_Comm *out)
{
	return handshake(port, root, c, 1, out);
}

int mpii_connect(const char *port, int root, struct mpii_comm *c, MPI_Comm *out)
{
	return handshake(port, root, c, 0, out);
}

const char *mpii_port_card(const char *port)
{
	const char *card;
	int tag;

	return parse_port(port, &tag, &card) < 0 ? NULL : card;
}

/* ---- spawn: the children build their side alone (doc/PROTOCOL-mpi-wire.md section 8) ---- */

int mpii_spawn_gather(struct mpii_comm *c, int root, uint64_t *mask, char **cards)
{
	return members_at_root(c, root, mask, cards);
}

/* The parents' root: HELLO from the children's root with the children's cards after it, each
 * NUL-terminated (one message, eager for a few dozen children; the root knows how many
 * children it asked for, so the buffer holds their longest cards). Unpacked into slots. */
static int spawn_accept_root(const char *port, int nchildren, struct outcome *o)
{
	size_t len = sizeof(struct hello) + (size_t)nchildren * CARD;
	struct hello *h = calloc(1, len + 1);
	const char *card, *p, *end;
	int tag, rc, got = 0;
	struct mpii_comm *hs = NULL;
	MPI_Status st;

	if (!h)
		return MPI_ERR_NO_MEM;
	rc = parse_port(port, &tag, &card) < 0 ? MPI_ERR_PORT : MPI_SUCCESS;
	if (rc == MPI_SUCCESS && !(hs = hs_comm(1, -1)))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = recv_within(h, (int)len, MPI_ANY_SOURCE, tag, hs,
		                 timeout_of("LAMKIT_MPI_ACCEPT_TIMEOUT", 600), &st);
	mpii_comm_release(hs);
	if (rc == MPI_SUCCESS && PMPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS)
		got = 0;
	h->card[CARD - 1] = '\0';
	if (rc == MPI_SUCCESS && (got < (int)sizeof *h || h->kind != HELLO_SPAWNED ||
	                          h->n != nchildren || dyn_add_peer(h->card) < 0)) {
		mpii_err_detail("the spawned processes' HELLO does not match the spawn");
		rc = MPI_ERR_PORT;
	}
	if (rc == MPI_SUCCESS && !(o->cards = calloc((size_t)nchildren, CARD)))
		rc = MPI_ERR_NO_MEM;
	end = (const char *)h + (got > 0 ? got : 0);
	p = (const char *)(h + 1);
	((char *)h)[end - (const char *)h] = '\0'; /* got <= len, and the buffer has len + 1 */
	for (int i = 0; rc == MPI_SUCCESS && i < nchildren; i++) {
		size_t k = strlen(p);
		if (p + k >= end || k >= CARD) {
			mpii_err_detail("the spawned processes' HELLO lacks some of their cards");
			rc = MPI_ERR_PORT;
			break;
		}
		memcpy(o->cards + (size_t)i * CARD, p, k + 1);
		p += k + 1;
	}
	if (rc == MPI_SUCCESS)
		o->n = nchildren;
	free(h);
	return rc;
}

int mpii_spawn_accept(const char *port, int root, struct mpii_comm *c, int id, int nchildren,
                      MPI_Comm *out)
{
	struct outcome o = {0, id, NULL};
	int rc = MPI_SUCCESS;

	*out = MPI_COMM_NULL;
	if (c->rank == root)
		rc = spawn_accept_root(port, nchildren, &o);
	return share_outcome(c, root, rc, &o, 1, out);
}

/* The children's root: HELLO and the n children's cards (slots of CARD bytes) after it, each
 * NUL-terminated, to the parents' root; no answer. */
static int spawn_connect_root(const char *port, const char *cards, int n)
{
	size_t len = sizeof(struct hello);
	struct hello *h = calloc(1, sizeof(struct hello) + (size_t)n * CARD);
	int tag = 0, rc = MPI_SUCCESS;
	struct mpii_comm *hs = NULL;

	if (!h)
		return MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = reach_port(port, &tag, &hs);
	if (rc == MPI_SUCCESS) {
		h->n = n;
		h->kind = HELLO_SPAWNED;
		for (int i = 0; i < n; i++) {
			size_t k = strnlen(cards + (size_t)i * CARD, CARD - 1);
			memcpy((char *)h + len, cards + (size_t)i * CARD, k);
			len += k + 1; /* calloc'ed: the NUL is there */
		}
		if (dyn_card(h->card, sizeof h->card) < 0) {
			mpii_err_detail(tp_error(mpii.tp));
			rc = MPI_ERR_OTHER;
		}
	}
	if (rc == MPI_SUCCESS)
		rc = mpii_send(h, (int)len, mpii_dt(MPI_BYTE), 0, tag, hs, 0, MODE_STD);
	mpii_comm_release(hs);
	free(h);
	return rc;
}

int mpii_spawn_connect(const char *port, int id, char *pcards, int np, struct mpii_comm *c,
                       MPI_Comm *out)
{
	uint64_t mask[MPII_NCTX_WORDS];
	char *cards = NULL;
	int rc, *rw = NULL;

	*out = MPI_COMM_NULL;
	mpii_ctx_mine(mask);
	if (!(mask[id / 64] >> (id % 64) & 1)) {
		mpii_err_detail("the context id the parents chose is taken here");
		return MPI_ERR_INTERN;
	}
	rc = members_at_root(c, 0, mask, &cards);
	if (rc == MPI_SUCCESS && c->rank == 0)
		rc = spawn_connect_root(port, cards, c->size);
	free(cards);
	if (rc == MPI_SUCCESS && !(rw = malloc(sizeof(int) * (size_t)(np + 1))))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = mpii_cards_world(pcards, np, rw);
	if (rc != MPI_SUCCESS) {
		free(rw);
		return rc;
	}
	return build_inter(c, id, np, rw, 0, out);
}

/* ---- the API ---- */

#define GET_INTRA(c, h, fn)                                                                        \
	struct mpii_comm *c = mpii_comm(h);                                                        \
	if (!c || c->inter)                                                                        \
	return mpii_err(c, MPI_ERR_COMM, fn)

MPII_ALIAS(Open_port)
int PMPI_Open_port(MPI_Info info, char *port_name)
{
	(void)info;
	MPII_CHECK_INIT("MPI_Open_port");
	return mpii_err(NULL, mpii_open_port(port_name), "MPI_Open_port");
}

MPII_ALIAS(Close_port)
int PMPI_Close_port(const char *port_name)
{
	const char *card;
	int tag;

	MPII_CHECK_INIT("MPI_Close_port");
	if (parse_port(port_name, &tag, &card) < 0)
		return mpii_err(NULL, MPI_ERR_PORT, "MPI_Close_port");
	return MPI_SUCCESS; /* the listener is the transport's, shared by every port */
}

static int check_root(struct mpii_comm *c, int root, const char *fn)
{
	return root < 0 || root >= c->size ? mpii_err(c, MPI_ERR_ROOT, fn) : MPI_SUCCESS;
}

MPII_ALIAS(Comm_accept)
int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
	(void)info;
	MPII_CHECK_INIT("MPI_Comm_accept");
	GET_INTRA(c, comm, "MPI_Comm_accept");
	if (check_root(c, root, "MPI_Comm_accept"))
		return MPI_ERR_ROOT;
	return mpii_err(c, mpii_accept(port_name, root, c, newcomm), "MPI_Comm_accept");
}

MPII_ALIAS(Comm_connect)
int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
	(void)info;
	MPII_CHECK_INIT("MPI_Comm_connect");
	GET_INTRA(c, comm, "MPI_Comm_connect");
	if (check_root(c, root, "MPI_Comm_connect"))
		return MPI_ERR_ROOT;
	return mpii_err(c, mpii_connect(port_name, root, c, newcomm), "MPI_Comm_connect");
}

/* ---- disconnect: releasing the processes of other jobs ---- */

/*
 * Each process of another job (peer index >= the job's size) is held by every communicator whose
 * groups contain it: intra or inter, made by accept/connect/spawn/join or from such a one by dup,
 * split, create or merge. MPI_Comm_disconnect frees its communicator and then lets every such
 * process that nothing holds any more go (tp_release: its connection ended in order with BYE,
 * its pair segment unmapped; doc/PROTOCOL-mpi-wire.md section 8.2). MPI_Comm_free of the last
 * holder does not: MPI does not promise it (MPI-4 11.10.4), and free is local, so the other side
 * may still be sending on its copy of the communicator; its process is let go at the next
 * disconnect, or at MPI_Finalize. A request on a freed communicator keeps it, and its holds,
 * until the request is freed.
 */
static int *holds, nholds;

void mpii_dyn_hold(struct mpii_comm *c, int d)
{
	const struct mpii_group *g[2] = {c->grp, c->rgrp};

	/* the private ones (handshake, union, node parts) are made without holds */
	if ((d > 0) == (c->holds != 0))
		return;
	c->holds = d > 0;
	for (int k = 0; k < 2; k++)
		for (int i = 0; g[k] && i < g[k]->size; i++) {
			int p = g[k]->world[i] - mpii.size;
			if (p < 0)
				continue;
			if (p >= nholds) {
				int n = p + 16, *h = realloc(holds, sizeof(int) * (size_t)n);
				if (!h)
					continue; /* then it is not let go before MPI_Finalize */
				memset(h + nholds, 0, sizeof(int) * (size_t)(n - nholds));
				holds = h;
				nholds = n;
			}
			holds[p] += d;
		}
}

void mpii_dyn_release_idle(void)
{
	MPII_TP_LOCK();
	int n = tp_npeers(mpii.tp) - mpii.size;
	for (int p = 0; p < n; p++)
		if (p >= nholds || holds[p] <= 0)
			tp_release(mpii.tp, mpii.size + p);
	MPII_TP_UNLOCK();
}

void mpii_dyn_fini(void)
{
	free(holds);
	holds = NULL;
	nholds = 0;
}

MPII_ALIAS(Comm_disconnect)
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
	struct mpii_comm *c;
	int rc;

	MPII_CHECK_INIT("MPI_Comm_disconnect");
	c = comm ? mpii_comm(*comm) : NULL;
	if (!c || c->handle <= MPI_COMM_SELF)
		return mpii_err(c, MPI_ERR_COMM, "MPI_Comm_disconnect");
	/* what this process sent has left, and every member got this far: nothing of the
	 * communicator is in flight any more */
	for (double t0 = PMPI_Wtime(); dyn_queued() && PMPI_Wtime() - t0 < 10.0;)
		mpii_progress_wait();
	rc = c->inter ? mpii_inter_barrier(c) : mpii_barrier(c);
	if (rc != MPI_SUCCESS)
		return mpii_err(c, rc, "MPI_Comm_disconnect");
	rc = PMPI_Comm_free(comm);
	/* the barrier's own last messages may still wait for a connection to be answered */
	for (double t0 = PMPI_Wtime(); dyn_queued() && PMPI_Wtime() - t0 < 10.0;)
		mpii_progress_wait();
	if (rc == MPI_SUCCESS)
		mpii_dyn_release_idle();
	return rc;
}

/* ---- MPI_Comm_join: the port names go over the socket ---- */

/* Write or read all of buf[len] on fd, each wait bounded by secs. 0, or -1. */
static int fd_io(int fd, char *buf, size_t len, int wr, double secs)
{
	double end = PMPI_Wtime() + secs;

	while (len) {
		struct pollfd p = {.fd = fd, .events = wr ? POLLOUT : POLLIN};
		ssize_t k;
		int ms = (int)((end - PMPI_Wtime()) * 1000);
		if (ms <= 0 || poll(&p, 1, ms) <= 0) {
			if (ms > 0 && errno == EINTR)
				continue;
			return -1;
		}
		k = wr ? write(fd, buf, len) : read(fd, buf, len);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		buf += k;
		len -= (size_t)k;
	}
	return 0;
}

MPII_ALIAS(Comm_join)
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
	char mine[MPI_MAX_PORT_NAME], theirs[MPI_MAX_PORT_NAME];
	double secs = timeout_of("LAMKIT_MPI_CONNECT_TIMEOUT", 60);
	int rc;

	MPII_CHECK_INIT("MPI_Comm_join");
	rc = mpii_open_port(mine);
	if (rc != MPI_SUCCESS)
		return mpii_err(NULL, rc, "MPI_Comm_join");
	memset(theirs, 0, sizeof theirs);
	/* fixed size both ways: the same bytes whatever the name's length */
	if (fd_io(fd, mine, sizeof mine, 1, secs) < 0 ||
	    fd_io(fd, theirs, sizeof theirs, 0, secs) < 0) {
		mpii_err_detail(
		    "MPI_Comm_join: the socket did not carry the other side's port name");
		return mpii_err(NULL, MPI_ERR_OTHER, "MPI_Comm_join");
	}
	theirs[sizeof theirs - 1] = '\0';
	rc = strcmp(mine, theirs);
	if (rc == 0)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Comm_join");
	/* the side with the lower name accepts on it, the other connects */
	rc = rc < 0 ? mpii_accept(mine, 0, mpii_comm(MPI_COMM_SELF), intercomm)
	            : mpii_connect(theirs, 0, mpii_comm(MPI_COMM_SELF), intercomm);
	return mpii_err(NULL, rc, "MPI_Comm_join");
}

/* ---- names (the process manager's name service: the universe's) ---- */

MPII_ALIAS(Publish_name)
int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
	(void)info;
	MPII_CHECK_INIT("MPI_Publish_name");
	if (!service_name || !port_name || !*service_name)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Publish_name");
	if (PMI_Publish_name(service_name, port_name) != PMI_SUCCESS)
		return mpii_err(NULL, MPI_ERR_SERVICE, "MPI_Publish_name");
	return MPI_SUCCESS;
}

MPII_ALIAS(Unpublish_name)
int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
	(void)info;
	(void)port_name;
	MPII_CHECK_INIT("MPI_Unpublish_name");
	if (!service_name || PMI_Unpublish_name(service_name) != PMI_SUCCESS)
		return mpii_err(NULL, MPI_ERR_SERVICE, "MPI_Unpublish_name");
	return MPI_SUCCESS;
}

MPII_ALIAS(Lookup_name)
int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
	char buf[MPI_MAX_PORT_NAME + 1] = "";

	(void)info;
	MPII_CHECK_INIT("MPI_Lookup_name");
	if (!service_name || PMI_Lookup_name(service_name, buf) != PMI_SUCCESS || !buf[0])
		return mpii_err(NULL, MPI_ERR_NAME, "MPI_Lookup_name");
	snprintf(port_name, MPI_MAX_PORT_NAME, "%s", buf);
	return MPI_SUCCESS;
}
