/* lib/transport/tp_tcp_addr.c: tcp business cards: own addresses and netid, picking a peer's. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "tp_internal.h"

static uint32_t mask_of(int plen)
{
	return plen <= 0 ? 0 : plen >= 32 ? 0xffffffffu : ~((1u << (32 - plen)) - 1);
}

int tp_plen_of(uint32_t mask)
{
	int n = 0;

	while (mask & 0x80000000u) {
		n++;
		mask <<= 1;
	}
	return n;
}

/* Boot id and network namespace: loopback reaches a peer only when both are equal. */
void tp_netid(char *out, size_t len)
{
	char boot[64] = "";
	struct stat st;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = '\0';
		fclose(f);
	}
	boot[strcspn(boot, "-\n")] = '\0';
	if (boot[0] && stat("/proc/self/ns/net", &st) == 0)
		snprintf(out, len, "%s-%lx", boot, (unsigned long)st.st_ino);
	else
		snprintf(out, len, "-");
}

/* Append "a.b.c.d/len" to the card if it fits. */
static void card_add(char *card, struct in_addr a, int plen)
{
	char ip[INET_ADDRSTRLEN], item[40];
	size_t n = strlen(card);

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	snprintf(item, sizeof(item), "%s%s/%d", card[n - 1] == ';' ? "" : ",", ip, plen);
	if (n + strlen(item) < TP_CARD_MAX)
		memcpy(card + n, item, strlen(item) + 1);
}

/* Own subnets (for matching) and, unless LAMKIT_TCP_ADDR says otherwise, the card's addresses:
 * interfaces up and running, non-loopback first. */
static void scan_ifaces(struct tp_tcp_addr *t, char *card, int publish)
{
	struct ifaddrs *ifa, *i;

	if (getifaddrs(&ifa) < 0)
		return;
	for (int lo = 0; lo < 2; lo++) {
		for (i = ifa; i; i = i->ifa_next) {
			const struct sockaddr_in *sin = (const void *)i->ifa_addr;
			const struct sockaddr_in *msk = (const void *)i->ifa_netmask;
			unsigned fl = i->ifa_flags;
			uint32_t m;

			if (!sin || sin->sin_family != AF_INET || !msk ||
			    (fl & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING) ||
			    !(fl & IFF_LOOPBACK) != !lo)
				continue;
			m = ntohl(msk->sin_addr.s_addr);
			if (!lo && t->nnets < TP_NETS_MAX) {
				t->nets[t->nnets].addr = ntohl(sin->sin_addr.s_addr);
				t->nets[t->nnets++].mask = m;
			}
			if (publish)
				card_add(card, sin->sin_addr, tp_plen_of(m));
		}
	}
	freeifaddrs(ifa);
}

void tp_tcp_card(struct tp_tcp_addr *t, int port, char *card)
{
	const char *e = getenv("LAMKIT_TCP_ADDR");
	char list[TP_CARD_MAX], *s, *save = NULL;

	tp_netid(t->netid, sizeof(t->netid));
	t->nnets = 0;
	snprintf(card, TP_CARD_MAX, "%d;%s;", port, t->netid);
	scan_ifaces(t, card, !(e && *e));
	if (e && *e) {
		snprintf(list, sizeof(list), "%s", e);
		for (s = strtok_r(list, ", ", &save); s; s = strtok_r(NULL, ", ", &save)) {
			struct in_addr a;
			char *sl = strchr(s, '/');
			int plen = sl ? atoi(sl + 1) : 32;
			if (sl)
				*sl = '\0';
			if (inet_pton(AF_INET, s, &a) == 1)
				card_add(card, a, plen);
		}
	}
	if (card[strlen(card) - 1] == ';')
		card_add(card, (struct in_addr){htonl(INADDR_LOOPBACK)}, 8);
}

int tp_tcp_card_parse(char *card, int *port, char **netid, struct tp_tcp_cand *cv)
{
	char *p1 = strchr(card, ';'), *p2, *s, *save = NULL;
	int n = 0;

	if (!p1 || !(p2 = strchr(p1 + 1, ';')))
		return -1;
	*p1 = *p2 = '\0';
	*port = atoi(card);
	*netid = p1 + 1;
	for (s = strtok_r(p2 + 1, ",", &save); s && n < TP_CAND_MAX;
	     s = strtok_r(NULL, ",", &save)) {
		char *sl = strchr(s, '/');
		cv[n].plen = sl ? atoi(sl + 1) : 32;
		if (sl)
			*sl = '\0';
		if (inet_pton(AF_INET, s, &cv[n].a) != 1)
			continue;
		cv[n].lo = ntohl(cv[n].a.s_addr) >> 24 == 127;
		cv[n].tried = 0;
		n++;
	}
	return *port > 0 && *port < 65536 ? n : -1;
}

/* Whether a/plen and one of our interfaces are on one subnet (by either side's mask). */
static int on_my_subnet(const struct tp_tcp_addr *t, struct in_addr a, int plen)
{
	uint32_t h = ntohl(a.s_addr), m = mask_of(plen);

	for (int i = 0; i < t->nnets; i++)
		if (((h ^ t->nets[i].addr) & t->nets[i].mask) == 0 ||
		    ((h ^ t->nets[i].addr) & m) == 0)
			return 1;
	return 0;
}

int tp_tcp_next_cand(const struct tp_tcp_addr *t, struct tp_tcp_cand *cv, int n, int same_net)
{
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < n; i++) {
			if (cv[i].tried || (cv[i].lo && !same_net))
				continue;
			if ((pass == 0 && !cv[i].lo) ||
			    (pass == 1 && (cv[i].lo || !on_my_subnet(t, cv[i].a, cv[i].plen))))
				continue;
			cv[i].tried = 1;
			return i;
		}
	return -1;
}
