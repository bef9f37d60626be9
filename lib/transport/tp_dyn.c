/* lib/transport/tp_dyn.c: peers of other jobs: cards with a process uid, growable peer tables. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tp_internal.h"

uint64_t tp_new_uid(void)
{
	uint64_t u = 0;
	struct timespec ts;

	if (getrandom(&u, sizeof u, GRND_NONBLOCK) != (ssize_t)sizeof u || !u) {
		clock_gettime(CLOCK_REALTIME, &ts);
		u = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
	}
	return u ? u : 1;
}

void tp_dyn_free(tp_t *tp)
{
	for (int i = 0; tp->dcard && i < tp->npeers - tp->cfg.size; i++)
		free(tp->dcard[i]);
	free(tp->dcard);
	free(tp->duid);
	tp->dcard = NULL;
	tp->duid = NULL;
}

/* The tcp path, created (without publishing) if this rank had none. 0, or -1 (tp->err). */
static int need_tcp(tp_t *tp)
{
	if (!tp->tcp)
		tp->tcp = tp_tcp_create(tp, 0, tp->err, sizeof tp->err);
	return tp->tcp ? 0 : -1;
}

/* One more peer of another job; its index or -1 (ENOMEM). */
static int grow(tp_t *tp, uint64_t uid)
{
	int n = tp->npeers - tp->cfg.size, p = tp->npeers;

	if (p == tp->cap) {
		int cap = tp->cap + 16;
		uint8_t *k = realloc(tp->kind, (size_t)cap);
		int *sl;
		uint64_t *u;
		char **c;
		if (k)
			tp->kind = k;
		sl = k ? realloc(tp->slot, sizeof(int) * (size_t)cap) : NULL;
		if (sl)
			tp->slot = sl;
		u = sl ? realloc(tp->duid, sizeof(uint64_t) * (size_t)(cap - tp->cfg.size)) : NULL;
		if (u)
			tp->duid = u;
		c = u ? realloc(tp->dcard, sizeof(char *) * (size_t)(cap - tp->cfg.size)) : NULL;
		if (!c) {
			errno = ENOMEM;
			return -1;
		}
		tp->dcard = c;
		tp->cap = cap;
	}
	tp->kind[p] = TP_TCP;
	tp->slot[p] = -1;
	tp->duid[n] = uid;
	tp->dcard[n] = NULL;
	tp->npeers++;
	if (tp->tcp && tp_tcp_grow(tp->tcp) < 0) {
		tp->npeers--;
		errno = ENOMEM;
		return -1;
	}
	return p;
}

int tp_dyn_peer(tp_t *tp, uint64_t uid)
{
	for (int i = 0; i < tp->npeers - tp->cfg.size; i++)
		if (tp->duid[i] == uid)
			return tp->cfg.size + i;
	return grow(tp, uid);
}

int tp_card(tp_t *tp, char *card, size_t len)
{
	char full[TP_DYN_CARD_MAX + 32], *cut;
	size_t n;

	if (need_tcp(tp) < 0)
		return -1;
	n = (size_t)snprintf(full, sizeof full, "%016" PRIx64 "@%s", tp->uid,
	                     tp_tcp_own_card(tp->tcp));
	/* too long for the caller (a port name must fit 256 bytes): drop trailing addresses */
	while (n >= len && (cut = strrchr(full, ',')) && strrchr(full, ';') < cut) {
		*cut = '\0';
		n = strlen(full);
	}
	if (n >= len) {
		snprintf(tp->err, sizeof tp->err, "tp: card buffer too small");
		errno = EMSGSIZE;
		return -1;
	}
	memcpy(card, full, n + 1);
	return 0;
}

int tp_add_peer(tp_t *tp, const char *card)
{
	char *end;
	uint64_t uid;
	int p;

	errno = 0;
	uid = strtoull(card, &end, 16);
	if (errno || end != card + 16 || *end != '@' || !uid || strlen(end + 1) >= TP_CARD_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (uid == tp->uid)
		return tp->cfg.rank;
	if (need_tcp(tp) < 0 || (p = tp_dyn_peer(tp, uid)) < 0)
		return -1;
	if (!tp->dcard[p - tp->cfg.size] && !(tp->dcard[p - tp->cfg.size] = strdup(end + 1))) {
		errno = ENOMEM;
		return -1;
	}
	return p;
}

int tp_reach(tp_t *tp, int peer)
{
	if (peer < tp->cfg.size || peer >= tp->npeers)
		return 0;
	return tp_tcp_reach(tp->tcp, peer);
}

int tp_npeers(const tp_t *tp)
{
	return tp->npeers;
}
