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

	if (hlen > TP_HDR_MAX) {
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
	if (f->ref && tp->cfg.ops.sent)
		tp->cfg.ops.sent(tp->cfg.arg, f->cookie);
	free(f);
}

static int want_tcp_locally(void)
{
	const char *e = getenv("LAMKIT_TP");

	return e && strcmp(e, "tcp") == 0;
}

/* Fill kind[] and slot[] from the local rank list; returns whether tcp is needed. */
static int choose_paths(tp_t *tp)
{
	int force_tcp = want_tcp_locally(), need_tcp = 0;

	for (int r = 0; r < tp->cfg.size; r++) {
		tp->kind[r] = TP_TCP;
		tp->slot[r] = -1;
	}
	for (int i = 0; i < tp->cfg.nlocal; i++) {
		int r = tp->local_ranks[i];
		tp->kind[r] = force_tcp ? TP_TCP : TP_SHM;
		tp->slot[r] = i;
	}
	tp->kind[tp->cfg.rank] = TP_SELF;
	for (int r = 0; r < tp->cfg.size; r++)
		need_tcp |= tp->kind[r] == TP_TCP;
	return need_tcp;
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
	int need_tcp, nlocal_shm;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (check_cfg(cfg, err, errlen) < 0)
		return NULL;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		goto nomem;
	tp->cfg = *cfg;
	tp->local_ranks = malloc(sizeof(int) * (size_t)cfg->nlocal);
	tp->kind = malloc((size_t)cfg->size);
	tp->slot = malloc(sizeof(int) * (size_t)cfg->size);
	if (!tp->local_ranks || !tp->kind || !tp->slot)
		goto nomem;
	memcpy(tp->local_ranks, cfg->local_ranks, sizeof(int) * (size_t)cfg->nlocal);
	tp->cfg.local_ranks = tp->local_ranks;
	need_tcp = choose_paths(tp);
	tp->yield = ncpu > 0 && cfg->nlocal > ncpu;
	nlocal_shm = want_tcp_locally() ? 1 : cfg->nlocal;
	if (nlocal_shm > 1) {
		tp->shm = tp_shm_create(tp, err, errlen);
		if (!tp->shm)
			goto fail;
	}
	if (need_tcp) {
		tp->tcp = tp_tcp_create(tp, err, errlen);
		if (!tp->tcp)
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

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void tp_destroy(tp_t *tp, int timeout_ms)
{
	int e = errno;
	long end = now_ms() + timeout_ms;
	struct tp_frag *f;

	if (!tp)
		return;
	while (((tp->shm && tp_shm_busy(tp->shm)) || (tp->tcp && tp_tcp_busy(tp->tcp))) &&
	       now_ms() < end) {
		if (tp_poll(tp) < 0)
			break;
		if (tp->yield)
			sched_yield();
	}
	while ((f = tp_fifo_pop(&tp->selfq)))
		free(f);
	tp_shm_destroy(tp->shm);
	tp_tcp_destroy(tp->tcp);
	free(tp->local_ranks);
	free(tp->kind);
	free(tp->slot);
	free(tp);
	errno = e;
}

int tp_send(tp_t *tp, int peer, const void *hdr, size_t hlen, const void *data, size_t len,
            void *cookie)
{
	struct tp_frag *f;

	if (peer < 0 || peer >= tp->cfg.size || hlen > TP_HDR_MAX) {
		errno = peer < 0 || peer >= tp->cfg.size ? EINVAL : EMSGSIZE;
		return -1;
	}
	switch (tp->kind[peer]) {
	case TP_SHM:
		return tp_shm_send(tp->shm, tp->slot[peer], hdr, hlen, data, len, cookie);
	case TP_TCP:
		return tp_tcp_send(tp->tcp, peer, hdr, hlen, data, len, cookie);
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
	int n = 0;

	if (tp->selfq.head)
		n += poll_self(tp);
	if (tp->shm)
		n += tp_shm_poll(tp->shm);
	if (tp->tcp && (n == 0 || (++tp->polls & 15) == 0)) {
		int k = tp_tcp_poll(tp->tcp);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

size_t tp_eager_max(const tp_t *tp, int peer)
{
	switch (tp->kind[peer]) {
	case TP_SHM:
		return tp_shm_eager_max(tp->shm);
	case TP_TCP:
		return 64 * 1024;
	default:
		return 256 * 1024;
	}
}

size_t tp_frag_max(const tp_t *tp, int peer)
{
	switch (tp->kind[peer]) {
	case TP_SHM:
		return tp_shm_frag_max(tp->shm);
	case TP_TCP:
		return 256 * 1024;
	default:
		return 256 * 1024;
	}
}

int tp_can_get(const tp_t *tp, int peer)
{
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

const char *tp_path_name(const tp_t *tp, int peer)
{
	static const char *const names[] = {"self", "shm", "tcp"};

	return names[tp->kind[peer]];
}

int tp_queued(const tp_t *tp)
{
	return (tp->shm ? tp_shm_busy(tp->shm) : 0) + (tp->tcp ? tp_tcp_busy(tp->tcp) : 0);
}

const char *tp_error(const tp_t *tp)
{
	return tp->err;
}

int tp_should_yield(const tp_t *tp)
{
	return tp->yield;
}
