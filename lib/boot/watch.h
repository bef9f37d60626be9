/* lib/boot/watch.h: the universe's watch: its agents watch each other, so that a node whose agent
 * died, hung, or lost its network is declared down within a bound, without a job running.
 * One agent, the head, watches the others over authenticated links and authors the view (who is
 * up, who is down since when and why); the others watch the head and elect a new one when it
 * goes. Protocol and rules: doc/PROTOCOL-agent.md, "The watch". */
#ifndef LAMKIT_BOOT_WATCH_H
#define LAMKIT_BOOT_WATCH_H

#include "ev.h"
#include "link.h"
#include "msg.h"

#include <stdint.h>

/* Defaults of the schema's `watch = { interval = S, timeout = S }`. */
#define BOOT_WATCH_INTERVAL_MS 500
#define BOOT_WATCH_TIMEOUT_MS  4000

enum boot_wstate { BOOT_WUP = 0, BOOT_WDOWN = 1 };

/* One node of the view. */
struct boot_wnode {
	int index;
	char host[256];
	char addr[64];
	int port, cpus;
	int64_t inc;   /* incarnation: its agent's start, unix ms (0 = not known yet) */
	int state;     /* enum boot_wstate */
	int64_t since; /* down: when it was declared, unix ms */
	char why[160]; /* down: "exited", "no answer", "unreachable", "halted", with details */
};

/* The view a head authors: term counts the heads, version the changes within a term. */
struct boot_wview {
	uint32_t term, version;
	int head;
	struct boot_wnode *n;
	int nn;
};

/* {==== the down list commands and mpiexec get (HELLO's tail, VIEW_DOWN) */
struct boot_wdown {
	int index;
	int64_t since;
	char why[160];
};
struct boot_wsummary {
	int known; /* a summary arrived */
	uint32_t term, version;
	int head;
	struct boot_wdown *down;
	int ndown;
};
/* Write the summary of v (term, version, head, the nodes down). */
void boot_wsummary_encode(struct core_wbuf *w, const struct boot_wview *v);
/* Read one (after HELLO's own fields, or a VIEW_DOWN payload) into s, replacing what s held
 * when it is newer (term, version). 0, or -1 (malformed, nothing there: s unchanged). */
int boot_wsummary_decode(struct core_rbuf *r, struct boot_wsummary *s);
void boot_wsummary_free(struct boot_wsummary *s);
/* The down record of node index, or NULL when it is up (or nothing is known). */
const struct boot_wdown *boot_wsummary_find(const struct boot_wsummary *s, int index);
/* "no answer since 12:03:04" (local time) into buf. */
void boot_wdown_text(const struct boot_wdown *d, char *buf, size_t len);
/* ====} */

/* {==== the view (watch_view.c) */
void boot_wview_encode(struct core_wbuf *w, const struct boot_wview *v);
/* Replace v by the view in r. 0, or -1 (malformed: v unchanged). */
int boot_wview_decode(struct core_rbuf *r, struct boot_wview *v);
void boot_wview_free(struct boot_wview *v);
struct boot_wnode *boot_wview_node(const struct boot_wview *v, int index);
/* Add a node (kept sorted by index); NULL on ENOMEM. */
struct boot_wnode *boot_wview_add(struct boot_wview *v, int index);
/* Wall clock, unix ms. */
int64_t boot_wall_ms(void);
/* ====} */

typedef struct boot_watch boot_watch_t;

struct boot_watch_opts {
	core_ev_t *ev;
	const unsigned char *key;
	int me;      /* this agent's node index */
	int64_t inc; /* this agent's incarnation (start, unix ms) */
	int port, cpus;
	int interval_ms, timeout_ms;
	/* This agent was declared down (it exits: a node declared down stays down until it is
	 * brought back with a new agent). */
	void (*on_down)(void *arg, const char *why);
	/* The view changed (the agent tells its controllers). May be NULL. */
	void (*on_change)(void *arg);
	void *arg;
};

boot_watch_t *boot_watch_create(const struct boot_watch_opts *o);
/* The universe is complete: start watching over these nodes (copied). lead: this agent may
 * be the head at once when it is the first node (boot); a grown agent looks for the head
 * first. 0, or -1 (ENOMEM). */
int boot_watch_start(boot_watch_t *w, const struct boot_wnode *nodes, int n, int lead);
/* A watch frame (BOOT_MSG_WATCH_*) arrived on a link this agent accepted: the watch takes the
 * link over (new callbacks; the caller forgets it) when it keeps it. Returns 1 if it took it. */
int boot_watch_frame(boot_watch_t *w, boot_link_t *l, unsigned type, struct core_rbuf *r);
/* The summary of the current view (for HELLO and VIEW_DOWN). */
void boot_watch_summary(const boot_watch_t *w, struct core_wbuf *wb);
/* This agent halts: tell the head (or, as the head, every member), bounded. */
void boot_watch_bye(boot_watch_t *w);
const struct boot_wview *boot_watch_view(const boot_watch_t *w);
/* Close every link and free. Accepts NULL. */
void boot_watch_destroy(boot_watch_t *w);

/* TCP's own view of a link that went quiet: "unreachable" when what we sent has not been
 * acknowledged for ms_quiet, else "no answer" (the host answers, the agent does not). */
const char *boot_watch_evidence(int fd, int ms_quiet);

#endif
