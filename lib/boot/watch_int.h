/* lib/boot/watch_int.h: what the files of the universe's watch share (watch.c: links, frames,
 * callbacks, the timer and the interface; watch_head.c: the head, its evidence, quorum and
 * declarations; watch_seek.c: a member, losing its head and looking for one). Rules:
 * doc/PROTOCOL-agent.md, "The watch". */
#ifndef LAMKIT_BOOT_WATCH_INT_H
#define LAMKIT_BOOT_WATCH_INT_H

#include "core.h"
#include "proto.h"
#include "watch.h"

#include <stdint.h>

enum role { R_IDLE, R_SEEK, R_MEMBER, R_HEAD, R_GONE };
enum lkind { L_MEMBER, L_HEAD, L_SEEK, L_PROBE };

#define SEEK_RETRY_MS 300  /* a candidate not ready to lead yet: ask again after this */
#define SEEK_ROUND_MS 1000 /* every candidate failed: the next round after this */

struct wlink {
	boot_watch_t *w;
	boot_link_t *l;
	int kind; /* enum lkind */
	int node; /* the node at the other end (0: not known yet) */
	int ready, asked, dead;
	int64_t t0, heard, sent; /* monotonic ms */
	struct wlink *next;
};

/* A node the head holds evidence against that needs a quorum ("unreachable"). */
struct suspect {
	int node;
	int64_t inc;
	char why[160];
};

struct boot_watch {
	struct boot_watch_opts o;
	struct boot_wview v;
	int role, lead;
	struct wlink *links;
	struct wlink *head; /* member: the link to the head; seek: the candidate being asked */
	int64_t timer, last_tick, started;
	/* seek: candidates in index order, those failed in this round marked */
	int *tried, ntried;
	int lost; /* the head we lost, 0 none */
	int64_t retry_at;
	/* head */
	struct suspect *sus;
	int nsus;
	int64_t *grace; /* per view node: no check of it before this (monotonic ms) */
	int ngrace;
	int64_t next_probe;
	int probe_rr;
};

static inline int64_t now_ms(void)
{
	return core_now_ms();
}

/* The candidate order: b has a better claim to lead than a (a newer term, or the same term
 * and a lower node). */
static inline int better(uint32_t ta, int ha, uint32_t tb, int hb)
{
	return tb > ta || (tb == ta && hb < ha);
}

/* watch.c: links and the frames written on them */
/* Connect to node n (view entry) for kind (L_SEEK, L_PROBE). NULL when it cannot even start
 * (the reason is then in why). */
struct wlink *wt_link_to(boot_watch_t *w, const struct boot_wnode *n, int kind, char *why,
                         size_t wl);
void wt_send_frame(struct wlink *k, unsigned type, const struct core_wbuf *b);
void wt_send_simple(struct wlink *k, unsigned type);
void wt_send_bye(struct wlink *k, const char *why);
void wt_send_down(struct wlink *k, const struct boot_wnode *n);
void wt_send_nothead(struct wlink *k);
/* The view to every member (only: to that link alone). */
void wt_send_view(boot_watch_t *w, struct wlink *only);
/* The view changed: a head sends it out; the agent hears (on_change). */
void wt_changed(boot_watch_t *w);

/* watch_head.c */
int64_t *wt_grace_of(boot_watch_t *w, int node);
struct wlink *wt_member_link(boot_watch_t *w, int node);
/* Keep the evidence against node (once) without acting on it. */
void wt_remember(boot_watch_t *w, int node, const char *why);
/* Head: evidence against node; declared at once, or (unreachable) once a quorum agrees. */
void wt_suspect(boot_watch_t *w, int node, const char *why);
void wt_unsuspect(boot_watch_t *w, int node);
void wt_declare(boot_watch_t *w, int node, int64_t inc, const char *why);
void wt_become_head(boot_watch_t *w);
/* A PROBE or STATUS from node `node` (inc, role, head, term) on link k. */
void wt_judge(boot_watch_t *w, struct wlink *k, int node, int64_t inc, int role, int head,
              uint32_t term);
/* A JOIN on link k: a member, or turned away. */
void wt_on_join(boot_watch_t *w, struct wlink *k, struct core_rbuf *r);
/* A member's link went away without a reason, or a node never joined: look at it. */
void wt_check(boot_watch_t *w, struct boot_wnode *n);
void wt_head_tick(boot_watch_t *w, int64_t now);

/* watch_seek.c */
void wt_lose_head(boot_watch_t *w, const char *why);
void wt_seek_failed(boot_watch_t *w, int node, const char *why);
void wt_ask(boot_watch_t *w, const struct boot_wnode *n);
void wt_seek_next(boot_watch_t *w);
void wt_seek_tick(boot_watch_t *w, int64_t now);
void wt_member_tick(boot_watch_t *w, int64_t now);
void wt_on_nothead(boot_watch_t *w, struct wlink *k, struct core_rbuf *r);
/* The head's view: ours from now on (or, when it has us down or replaced, we go). */
void wt_adopt(boot_watch_t *w, struct core_rbuf *r);

#endif
