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
	if (tp->node[0]) /* same node and user: a pair segment can carry what we exchange */
		n = (size_t)snprintf(full, sizeof full, "%016" PRIx64 ":%s:%ld@%s", tp->uid,
		                     tp->node, (long)getpid(), tp_tcp_own_card(tp->tcp));
	else
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

/* "UID[:NODE:PID]@": the uid, and the node token (node[TP_NODE_MAX], "" when absent) and pid.
 * The tcp card after the '@', or NULL when malformed. */
static const char *card_head(const char *card, uint64_t *uid, char *node, long *pid)
{
	char *end;
	size_t n;

	errno = 0;
	*uid = strtoull(card, &end, 16);
	node[0] = '\0';
	*pid = 0;
	if (errno || end != card + 16 || !*uid)
		return NULL;
	if (*end == ':') {
		n = strspn(end + 1, "0123456789abcdef");
		if (n != 16 || end[17] != ':')
			return NULL;
		memcpy(node, end + 1, n);
		node[n] = '\0';
		*pid = strtol(end + 18, &end, 10);
		if (errno || *pid <= 0)
			return NULL;
	}
	return *end == '@' && strlen(end + 1) < TP_CARD_MAX ? end + 1 : NULL;
}

int tp_add_peer(tp_t *tp, const char *card)
{
	char node[TP_NODE_MAX];
	const char *tcp;
	uint64_t uid;
	long pid;
	int p;

	if (!(tcp = card_head(card, &uid, node, &pid))) {
		errno = EINVAL;
		return -1;
	}
	if (uid == tp->uid)
		return tp->cfg.rank;
	if (need_tcp(tp) < 0 || (p = tp_dyn_peer(tp, uid)) < 0)
		return -1;
	if (!tp->dcard[p - tp->cfg.size] && !(tp->dcard[p - tp->cfg.size] = strdup(tcp))) {
		errno = ENOMEM;
		return -1;
	}
	if (tp->node[0] && !strcmp(node, tp->node) && tp_shmx_add(tp, p, uid, pid) < 0) {
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

int tp_release(tp_t *tp, int peer)
{
	if (peer < tp->cfg.size || peer >= tp->npeers) {
		errno = EINVAL;
		return -1;
	}
	/* the ring first: our last records there come before our BYE on tcp */
	tp_shmx_bye(tp, peer);
	if (tp->tcp)
		tp_tcp_release(tp->tcp, peer);
	return 0;
}

void tp_dyn_counts(const tp_t *tp, struct tp_dyn_counts *out)
{
	out->lingering = tp_tcp_lingering(tp->tcp);
	out->conns = out->lingering;
	for (int p = tp->cfg.size; tp->tcp && p < tp->npeers; p++)
		out->conns += tp_tcp_connected(tp->tcp, p);
	out->segments = tp_shmx_mapped(tp->shmx);
}
