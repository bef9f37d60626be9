/* lib/transport/tp.c: transport endpoint: per-peer path choice, the self path, dispatch. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tp_internal.h"

struct tp_frag *tp_frag_new(const void *hdr, size_t hlen, const void *data, size_t len, int ref,
                            void *cookie)
{
	struct tp_frag *f;

	if (hlen > TP_HDR_WIRE) {
		errno = EMSGSIZE;
		return NULL;
	}
	f = malloc(sizeof(*f) + (ref ? 0 : len));
	if (!f)
		return NULL;
	f->next = NULL;
	f->cookie = cookie;
	f->len = len;
	f->done = 0;
	f->hlen = (uint32_t)hlen;
	f->ref = ref;
	memcpy(f->hdr, hdr, hlen);
	if (ref) {
		f->data = data;
	} else {
		if (len)
			memcpy(f + 1, data, len);
		f->data = (const char *)(f + 1);
	}
	return f;
}

void tp_fifo_push(struct tp_fifo *q, struct tp_frag *f)
{
	f->next = NULL;
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
}

struct tp_frag *tp_fifo_pop(struct tp_fifo *q)
{
	struct tp_frag *f = q->head;

	if (f) {
		q->head = f->next;
		if (!q->head)
			q->tail = NULL;
	}
	return f;
}

void tp_frag_done(tp_t *tp, struct tp_frag *f)
{
	if (f->ref && tp->mp && ((uintptr_t)f->cookie & 1u))
		tp_mp_sent(tp, f->cookie); /* a multipath peer's: reported in send order */
	else if (f->ref && tp->cfg.ops.sent)
		tp->cfg.ops.sent(tp->cfg.arg, f->cookie);
	free(f);
}

/* LAMKIT_TP: the job's transport policy (doc/PROTOCOL-mpi-wire.md section 7). "auto" (or unset)
 * = shm inside a node, tcp across; "shm+" then the paths across nodes: "tcp", "udp", or several
 * ("tcp,udp", "tcp,tcp" = two tcp connections, each with an optional *WEIGHT, then
 * ";sched=rate|weight;small=tcp|udp;cutoff=N"), which schedules fragments on them with the order
 * kept. Without "shm+" the paths are used between every pair of ranks, on one node too. Sets
 * *local, *remote and *pol; -1 with a reason in err. */
static int tp_policy(enum tp_kind *local, enum tp_kind *remote, struct tp_mp_policy *pol, char *err,
                     size_t errlen)
{
	const char *e = getenv("LAMKIT_TP");
	int shm = 0;
	enum tp_kind k;

	*local = TP_SHM;
	*remote = TP_TCP;
	memset(pol, 0, sizeof *pol);
	if (!e || !*e || !strcmp(e, "auto"))
		return 0;
	if (!strncmp(e, "shm+", 4)) {
		shm = 1;
		e += 4;
	}
	if (tp_mp_parse(e, pol, err, errlen) < 0)
		return -1;
	k = pol->npaths > 1 ? TP_MULTI : pol->order[0] == 0 ? TP_TCP : TP_UDP;
	*remote = k;
	if (!shm)
		*local = k;
	return 0;
}

int tp_policy_check(const char *spec, char *err, size_t errlen)
{
	struct tp_mp_policy pol;

	if (!spec || !*spec || !strcmp(spec, "auto"))
		return 0;
	return tp_mp_parse(strncmp(spec, "shm+", 4) ? spec : spec + 4, &pol, err, errlen);
}

/* Fill kind[] and slot[] from the local rank list. */
static void choose_paths(tp_t *tp, enum tp_kind local, enum tp_kind remote)
{
	for (int r = 0; r < tp->cfg.size; r++) {
		tp->kind[r] = (uint8_t)remote;
		tp->slot[r] = -1;
	}
	for (int i = 0; i < tp->cfg.nlocal; i++) {
		int r = tp->local_ranks[i];
		tp->kind[r] = (uint8_t)local;
		tp->slot[r] = i;
	}
	tp->kind[tp->cfg.rank] = TP_SELF;
}

static int uses(const tp_t *tp, enum tp_kind k)
{
	for (int r = 0; r < tp->cfg.size; r++)
		if (tp->kind[r] == k)
			return 1;
	return 0;
}

static int check_cfg(const struct tp_cfg *cfg, char *err, size_t errlen)
{
	int found = 0;

	if (cfg->size < 1 || cfg->rank < 0 || cfg->rank >= cfg->size || cfg->nlocal < 1 ||
	    !cfg->local_ranks || !cfg->ops.recv) {
		snprintf(err, errlen, "tp: bad configuration");
		errno = EINVAL;
		return -1;
	}
	for (int i = 0; i < cfg->nlocal; i++) {
		int r = cfg->local_ranks[i];
		if (r < 0 || r >= cfg->size || (i && r <= cfg->local_ranks[i - 1])) {
			snprintf(err, errlen, "tp: local rank list not ascending or out of range");
			errno = EINVAL;
			return -1;
		}
		found |= r == cfg->rank;
	}
	if (!found) {
		snprintf(err, errlen, "tp: own rank missing from the local rank list");
		errno = EINVAL;
		return -1;
	}
	return 0;
}

tp_t *tp_create(const struct tp_cfg *cfg, char *err, size_t errlen)
{
	tp_t *tp;
	enum tp_kind local, remote;
	struct tp_mp_policy pol;
	char why[200];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (check_cfg(cfg, err, errlen) < 0)
		return NULL;
	if (tp_policy(&local, &remote, &pol, why, sizeof why) < 0) {
		snprintf(
		    err, errlen,
		    "tp: LAMKIT_TP='%s': %s; expected auto, or [shm+]PATHS[;OPTIONS] with PATHS "
		    "tcp, udp, tcp,udp or tcp,tcp (mpiexec --tp; doc/PROTOCOL-mpi-wire.md section "
		    "7)",
		    getenv("LAMKIT_TP"), why);
		errno = EINVAL;
		return NULL;
	}
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		goto nomem;
	tp->cfg = *cfg;
	tp->bell_fd = -1;
	tp->npeers = tp->cap = cfg->size;
	tp->uid = tp_new_uid();
	tp->local_ranks = malloc(sizeof(int) * (size_t)cfg->nlocal);
	tp->kind = malloc((size_t)cfg->size);
	tp->slot = malloc(sizeof(int) * (size_t)cfg->size);
	if (!tp->local_ranks || !tp->kind || !tp->slot)
		goto nomem;
	memcpy(tp->local_ranks, cfg->local_ranks, sizeof(int) * (size_t)cfg->nlocal);
	tp->cfg.local_ranks = tp->local_ranks;
	choose_paths(tp, local, remote);
	/* LAMKIT_WAIT=block|spin (mpiexec --wait), or the older LAMKIT_YIELD=1|0, override what
	 * the launcher says (LAMKIT_OVERSUBSCRIBED, from its placement) or the count; every rank
	 * of a job on a node must agree, which the environment gives */
	tp->yield = tp_wait_mode(cfg->nlocal, ncpu);
	if (local == TP_SHM) /* no shm inside the job (LAMKIT_TP=tcp...): none with other jobs */
		tp_shmx_node(tp->node, sizeof tp->node);
	if (local == TP_SHM && cfg->nlocal > 1) {
		tp->shm = tp_shm_create(tp, err, errlen);
		if (!tp->shm)
			goto fail;
	}
	if (uses(tp, TP_MULTI)) {
		tp->mp = tp_mp_create(&pol, cfg->size);
		if (!tp->mp)
			goto nomem;
	}
	if (uses(tp, TP_TCP) || (tp->mp && pol.weight[0])) {
		tp->tcp = tp_tcp_create(tp, 1, err, errlen);
		if (!tp->tcp)
			goto fail;
	}
	if (tp->mp && pol.weight[TP_MP_TCP2]) {
		tp->tcp2 = tp_tcp_create(tp, 2, err, errlen);
		if (!tp->tcp2)
			goto fail;
	}
	if (uses(tp, TP_UDP) || (tp->mp && pol.weight[1])) {
		tp->udp = tp_udp_create(tp, err, errlen);
		if (!tp->udp)
			goto fail;
	}
	return tp;
nomem:
	snprintf(err, errlen, "tp: out of memory");
	errno = ENOMEM;
fail:
	tp_destroy(tp, 0);
	return NULL;
}

int tp_connect(tp_t *tp, char *err, size_t errlen)
{
	if (tp->shm && tp_shm_attach(tp->shm, err, errlen) < 0)
		return -1;
	return 0;
}

/* LAMKIT_TP_STATS=1: one line per rank of what went to each path, so that a test can count
 * the messages a collective sends between nodes (tcp, udp) and inside one (shm). */
static void print_sent(const tp_t *tp)
{
	static const char *const name[] = {"self", "shm", "tcp", "udp", "multi"};
	const char *e = getenv("LAMKIT_TP_STATS");
	char line[256];
	int n;

	if (!e || !*e || strcmp(e, "0") == 0)
		return;
	n = snprintf(line, sizeof(line), "lamkit tp: rank %d sent", tp->cfg.rank);
	for (int k = 0; k < 5 && n > 0 && (size_t)n < sizeof(line); k++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %s %llu frags %llu bytes%s",
		              name[k], tp->sent_frags[k], tp->sent_bytes[k], k < 4 ? ";" : "");
	fprintf(stderr, "%s\n", line);
	tp_shm_stats(tp->shm, tp->cfg.rank);
	if (tp->npeers > tp->cfg.size) {
		struct tp_dyn_counts d;
		tp_dyn_counts(tp, &d);
		/* what disconnect let go shows here: 0 after every communicator with them went */
		fprintf(stderr,
		        "lamkit tp: rank %d other jobs: %d met, %d connections (%d ending), %d "
		        "segments\n",
		        tp->cfg.rank, tp->npeers - tp->cfg.size, d.conns, d.lingering, d.segments);
	}
	if (tp->nsleep || tp->nbell)
		fprintf(
		    stderr,
		    "lamkit tp: rank %d slept %llu times (%llu ran to the timeout, %llu of them "
		    "with a record waiting; %llu waiting for ring room), rang %llu doorbells\n",
		    tp->cfg.rank, tp->nsleep, tp->nsleep_timeout + tp->nsleep_late, tp->nsleep_late,
		    tp->nsleep_room, tp->nbell);
}

void tp_destroy(tp_t *tp, int timeout_ms)
{
	int e = errno;
	long end = tp_now_ms() + timeout_ms;
	struct tp_frag *f;

	if (!tp)
		return;
	print_sent(tp);
	while (tp_queued(tp) && tp_now_ms() < end) {
		if (tp_poll(tp) < 0)
			break;
		if (tp->yield)
			sched_yield();
	}
	while ((f = tp_fifo_pop(&tp->selfq)))
		free(f);
	tp_shm_destroy(tp->shm);
	tp_shmx_destroy(tp->shmx);
	tp_tcp_destroy(tp->tcp);
	tp_tcp_destroy(tp->tcp2);
	/* udp drains itself: every packet acknowledged, a FIN from each peer it talked to */
	tp_udp_destroy(tp->udp, end > tp_now_ms() ? (int)(end - tp_now_ms()) : 0);
	tp_mp_destroy(tp);
	tp_dyn_free(tp);
	tp_bell_close(tp);
	free(tp->local_ranks);
	free(tp->kind);
	free(tp->slot);
	free(tp->gone);
	free(tp);
	errno = e;
}

int tp_flush(tp_t *tp, int timeout_ms)
{
	long end = tp_now_ms() + timeout_ms;

	if (tp->mp) /* the ACKs owed: nobody polls during the final fence */
		tp_mp_flush_acks(tp);
	while (tp_queued(tp) && tp_now_ms() < end) {
		if (tp_poll(tp) < 0)
			return -1;
		if (tp->yield)
			sched_yield();
	}
	if (tp->udp)
		return tp_udp_flush(tp->udp, end > tp_now_ms() ? (int)(end - tp_now_ms()) : 0);
	return tp_queued(tp) ? -1 : 0;
}

int tp_send(tp_t *tp, int peer, const void *hdr, size_t hlen, const void *data, size_t len,
            void *cookie)
{
	struct tp_frag *f;

	/* the common case first: a rank of this job on this node */
	if (peer >= 0 && peer < tp->cfg.size && tp->kind[peer] == TP_SHM && hlen <= TP_HDR_MAX) {
		tp->sent_frags[TP_SHM]++;
		tp->sent_bytes[TP_SHM] += len;
		return tp_shm_send(tp->shm, tp->slot[peer], hdr, hlen, data, len, cookie);
	}
	if (peer < 0 || peer >= tp->npeers || hlen > TP_HDR_MAX) {
		errno = peer < 0 || peer >= tp->npeers ? EINVAL : EMSGSIZE;
		return -1;
	}
	if (tp->gone && peer < tp->cfg.size && tp->gone[peer]) {
		errno = EPIPE;
		return -1;
	}
	if (peer >= tp->cfg.size && tp->kind[peer] == TP_TCP && tp->slot[peer] >= 0)
		tp_shmx_try_switch(tp, peer, len);
	tp->sent_frags[tp->kind[peer]]++;
	tp->sent_bytes[tp->kind[peer]] += len;
	switch (tp->kind[peer]) {
	case TP_SHM: /* another job's process on this node (the job's ranks were sent above) */
		return tp_shmx_send(tp->shmx, tp->slot[peer], hdr, hlen, data, len, cookie);
	case TP_TCP:
		return tp_tcp_send(tp->tcp, peer, hdr, hlen, data, len, cookie);
	case TP_UDP:
		return tp_udp_send(tp->udp, peer, hdr, hlen, data, len, cookie);
	case TP_MULTI:
		return tp_mp_send(tp, peer, hdr, hlen, data, len, cookie);
	default:
		f = tp_frag_new(hdr, hlen, data, len, 0, NULL);
		if (!f)
			return -1;
		tp_fifo_push(&tp->selfq, f);
		return 0;
	}
}

/* Deliver what was queued to ourselves before this call (new self-sends wait for next poll). */
static int poll_self(tp_t *tp)
{
	struct tp_frag *f, *last = tp->selfq.tail;
	int n = 0;

	while (last && (f = tp_fifo_pop(&tp->selfq))) {
		int stop = f == last;

		tp->cfg.ops.recv(tp->cfg.arg, tp->cfg.rank, f->hdr, f->hlen, f->data, f->len);
		free(f);
		n++;
		if (stop)
			break;
	}
	return n;
}

int tp_poll(tp_t *tp)
{
	return tp_poll_n(tp, 1);
}

int tp_poll_n(tp_t *tp, int budget)
{
	int n = 0;

	if (tp->selfq.head)
		n += poll_self(tp);
	if (tp->shm)
		n += tp_shm_poll(tp->shm, budget > 1 ? budget : 1);
	if (tp->shmx) {
		int k = tp_shmx_poll(tp->shmx);
		if (k < 0)
			return -1;
		n += k;
	}
	/* a path with nothing to do is looked at every 16th time, except that both paths of a
	 * multipath peer always are: a fragment one of them holds back stalls the other's */
	if (tp->tcp && (n == 0 || tp->mp || (++tp->polls & 15) == 0)) {
		int k = tp_tcp_poll(tp->tcp);
		if (k < 0)
			return -1;
		n += k;
	}
	if (tp->tcp2) { /* only with multipath peers: polled like the first connection */
		int k = tp_tcp_poll(tp->tcp2);
		if (k < 0)
			return -1;
		n += k;
	}
	if (tp->udp && (n == 0 || tp->mp || (++tp->polls & 15) == 0)) {
		int k = tp_udp_poll(tp->udp);
		if (k < 0)
			return -1;
		n += k;
	}
	if (!tp->mp) /* no multipath peer: spare every poll two calls into tp_mp.c */
		return n;
	if (tp_mp_release_due(tp))
		tp_mp_release(tp);
	if (tp_mp_poll_due(tp) && tp_mp_poll(tp) < 0)
		return -1;
	return n;
}

size_t tp_eager_max(const tp_t *tp, int peer)
{
	size_t eager, frag;

	if (peer >= tp->cfg.size && tp_shmx_limits(tp, peer, &eager, &frag) == 0)
		return eager; /* the same before and after the switch: both paths take it */
	switch (tp->kind[peer]) {
	case TP_SHM:
		return tp_shm_eager_max(tp->shm);
	case TP_TCP:
		return 64 * 1024;
	case TP_UDP:
		return tp_udp_eager_max(tp->udp);
	case TP_MULTI: /* what fits every path: udp's limits are the smaller */
		return tp->udp ? tp_udp_eager_max(tp->udp) : 64 * 1024;
	default:
		return 256 * 1024;
	}
}

size_t tp_frag_max(const tp_t *tp, int peer)
{
	size_t eager, frag;

	if (peer >= tp->cfg.size && tp_shmx_limits(tp, peer, &eager, &frag) == 0)
		return frag;
	switch (tp->kind[peer]) {
	case TP_SHM:
		return tp_shm_frag_max(tp->shm);
	case TP_TCP:
		return tp_tcp_frag_max(tp->tcp);
	case TP_UDP:
		return tp_udp_frag_max(tp->udp);
	case TP_MULTI:
		return tp->udp ? tp_udp_frag_max(tp->udp) : 256 * 1024;
	default:
		return 256 * 1024;
	}
}

int tp_rx_buffer_ok(const tp_t *tp, int peer)
{
	if (peer < 0 || peer >= tp->cfg.size || tp->kind[peer] != TP_TCP)
		return 0;
	return tp_tcp_rx_buffer_ok(tp->tcp, peer);
}

int tp_can_get(const tp_t *tp, int peer)
{
	if (peer >= tp->cfg.size) /* another job's process on this node: its pid is in its card */
		return tp_shmx_can_get(tp, peer);
	switch (tp->kind[peer]) {
	case TP_SHM:
		return tp_shm_can_get(tp->shm);
	case TP_SELF:
		return 1;
	default:
		return 0;
	}
}

int tp_get(tp_t *tp, int peer, void *dst, uint64_t raddr, size_t len)
{
	if (peer >= tp->cfg.size)
		return tp_shmx_get(tp, peer, dst, raddr, len);
	switch (tp->kind[peer]) {
	case TP_SHM:
		return tp_shm_get(tp->shm, tp->slot[peer], dst, raddr, len);
	case TP_SELF:
		memcpy(dst, (const void *)(uintptr_t)raddr, len);
		return 0;
	default:
		errno = ENOTSUP;
		return -1;
	}
}

void tp_batch_stop(tp_t *tp)
{
	tp->batch_stop = 1;
}

int tp_coop_begin(tp_t *tp, int peer, size_t len)
{
	return peer < tp->cfg.size && tp->kind[peer] == TP_SHM &&
	       tp_shm_coop_begin(tp->shm, tp->slot[peer], len);
}

uint32_t tp_coop_open(tp_t *tp)
{
	return tp_shm_coop_open(tp->shm);
}

int tp_coop_recv(tp_t *tp, int peer, void *dst, uint64_t raddr, size_t len)
{
	return tp_shm_coop_recv(tp->shm, tp->slot[peer], dst, raddr, len);
}

int tp_coop_help(tp_t *tp, int peer, uint32_t gen, const void *src, uint64_t rdst, size_t len)
{
	if (peer >= tp->cfg.size || tp->kind[peer] != TP_SHM)
		return 0;
	return tp_shm_coop_help(tp->shm, tp->slot[peer], gen, src, rdst, len);
}

void tp_forget(tp_t *tp, int peer)
{
	if (peer < 0 || peer >= tp->cfg.size || peer == tp->cfg.rank)
		return;
	if (!tp->gone && !(tp->gone = calloc((size_t)tp->cfg.size, 1)))
		return;
	if (tp->gone[peer])
		return;
	tp->gone[peer] = 1;
	if (tp->tcp && (tp->kind[peer] == TP_TCP || tp->kind[peer] == TP_MULTI))
		tp_tcp_forget(tp->tcp, peer);
	if (tp->tcp2 && tp->kind[peer] == TP_MULTI)
		tp_tcp_forget(tp->tcp2, peer);
	if (tp->udp && (tp->kind[peer] == TP_UDP || tp->kind[peer] == TP_MULTI))
		tp_udp_forget(tp->udp, peer);
}

const char *tp_path_name(const tp_t *tp, int peer)
{
	static const char *const names[] = {"self", "shm", "tcp", "udp"};

	return tp->kind[peer] == TP_MULTI ? tp_mp_name(tp) : names[tp->kind[peer]];
}

unsigned long long tp_shm_wraps(const tp_t *tp)
{
	return tp_shm_wrapped(tp->shm);
}

int tp_queued(const tp_t *tp)
{
	/* asked after every eager MPI send: only the paths this process has are called */
	int n = tp->shm ? tp_shm_busy(tp->shm) : 0;

	if (tp->shmx)
		n += tp_shmx_busy(tp->shmx);
	if (tp->tcp)
		n += tp_tcp_busy(tp->tcp);
	if (tp->tcp2)
		n += tp_tcp_busy(tp->tcp2);
	if (tp->udp)
		n += tp_udp_busy(tp->udp);
	if (tp->mp)
		n += tp_mp_queued(tp);
	return n;
}

const char *tp_error(const tp_t *tp)
{
	return tp->err;
}

int tp_wait_mode(int nlocal, long ncpu)
{
	const char *w = getenv("LAMKIT_WAIT"), *y = getenv("LAMKIT_YIELD");
	const char *o = getenv("LAMKIT_OVERSUBSCRIBED");

	if (w && !strcmp(w, "block"))
		return 1;
	if (w && !strcmp(w, "spin"))
		return 0;
	if (y && *y)
		return strcmp(y, "0") != 0;
	if (o && (!strcmp(o, "0") || !strcmp(o, "1")))
		return o[0] == '1';
	return ncpu > 0 && nlocal > ncpu;
}

int tp_wait_check(const char *mode)
{
	return mode && (!strcmp(mode, "auto") || !strcmp(mode, "block") || !strcmp(mode, "spin"))
	           ? 0
	           : -1;
}

int tp_should_yield(const tp_t *tp)
{
	return tp->yield;
}
