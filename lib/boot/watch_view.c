/* lib/boot/watch_view.c: the watch's view and its summary on the wire (doc/PROTOCOL-agent.md,
 * "The watch"), and the TCP evidence of a quiet link. */
#include "core.h"
#include "watch.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define WVIEW_MAX 65536 /* nodes in a view read from the wire */

int64_t boot_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct boot_wnode *boot_wview_node(const struct boot_wview *v, int index)
{
	for (int i = 0; i < v->nn; i++)
		if (v->n[i].index == index)
			return &v->n[i];
	return NULL;
}

struct boot_wnode *boot_wview_add(struct boot_wview *v, int index)
{
	struct boot_wnode *n = boot_wview_node(v, index);
	int at = 0;

	if (n)
		return n;
	n = realloc(v->n, (size_t)(v->nn + 1) * sizeof *n);
	if (!n)
		return NULL;
	v->n = n;
	while (at < v->nn && v->n[at].index < index)
		at++;
	memmove(&v->n[at + 1], &v->n[at], (size_t)(v->nn - at) * sizeof *n);
	memset(&v->n[at], 0, sizeof *n);
	v->n[at].index = index;
	v->nn++;
	return &v->n[at];
}

void boot_wview_free(struct boot_wview *v)
{
	free(v->n);
	memset(v, 0, sizeof *v);
}

void boot_wview_encode(struct core_wbuf *w, const struct boot_wview *v)
{
	core_w_u32(w, v->term);
	core_w_u32(w, v->version);
	core_w_u32(w, (uint32_t)v->head);
	core_w_u32(w, (uint32_t)v->nn);
	for (int i = 0; i < v->nn; i++) {
		const struct boot_wnode *n = &v->n[i];
		core_w_u32(w, (uint32_t)n->index);
		core_w_str(w, n->host);
		core_w_str(w, n->addr);
		core_w_u32(w, (uint32_t)n->port);
		core_w_u32(w, (uint32_t)n->cpus);
		core_w_i64(w, n->inc);
		core_w_u32(w, (uint32_t)n->state);
		core_w_i64(w, n->since);
		core_w_str(w, n->why);
	}
}

int boot_wview_decode(struct core_rbuf *r, struct boot_wview *v)
{
	struct boot_wview nv = {0};
	uint32_t nn;

	nv.term = core_r_u32(r);
	nv.version = core_r_u32(r);
	nv.head = (int)core_r_u32(r);
	nn = core_r_u32(r);
	if (r->err || nn > WVIEW_MAX || nn > (r->len - r->off) / 32)
		return -1;
	nv.n = calloc(nn + 1, sizeof *nv.n);
	if (!nv.n)
		return -1;
	for (uint32_t i = 0; i < nn && !r->err; i++) {
		struct boot_wnode *n = &nv.n[i];
		n->index = (int)core_r_u32(r);
		snprintf(n->host, sizeof n->host, "%s", core_r_str(r));
		snprintf(n->addr, sizeof n->addr, "%s", core_r_str(r));
		n->port = (int)core_r_u32(r);
		n->cpus = (int)core_r_u32(r);
		n->inc = core_r_i64(r);
		n->state = core_r_u32(r) ? BOOT_WDOWN : BOOT_WUP;
		n->since = core_r_i64(r);
		snprintf(n->why, sizeof n->why, "%s", core_r_str(r));
		if (i && n->index <= nv.n[i - 1].index)
			r->err = 1; /* sorted, each once */
	}
	if (r->err) {
		free(nv.n);
		return -1;
	}
	nv.nn = (int)nn;
	boot_wview_free(v);
	*v = nv;
	return 0;
}

void boot_wsummary_encode(struct core_wbuf *w, const struct boot_wview *v)
{
	uint32_t nd = 0;

	for (int i = 0; i < v->nn; i++)
		nd += v->n[i].state == BOOT_WDOWN;
	core_w_u32(w, v->term);
	core_w_u32(w, v->version);
	core_w_u32(w, (uint32_t)v->head);
	core_w_u32(w, nd);
	for (int i = 0; i < v->nn; i++) {
		if (v->n[i].state != BOOT_WDOWN)
			continue;
		core_w_u32(w, (uint32_t)v->n[i].index);
		core_w_i64(w, v->n[i].since);
		core_w_str(w, v->n[i].why);
	}
}

int boot_wsummary_decode(struct core_rbuf *r, struct boot_wsummary *s)
{
	uint32_t term = core_r_u32(r), version = core_r_u32(r), head = core_r_u32(r);
	uint32_t nd = core_r_u32(r);

	if (r->err || nd > WVIEW_MAX || nd > (r->len - r->off) / 16)
		return -1;
	struct boot_wdown *d = calloc(nd + 1, sizeof *d);
	if (!d)
		return -1;
	for (uint32_t i = 0; i < nd && !r->err; i++) {
		d[i].index = (int)core_r_u32(r);
		d[i].since = core_r_i64(r);
		snprintf(d[i].why, sizeof d[i].why, "%s", core_r_str(r));
	}
	/* an older summary than the one held (another agent had not heard yet) is not news */
	if (r->err || (s->known && (term < s->term || (term == s->term && version < s->version)))) {
		free(d);
		return r->err ? -1 : 0;
	}
	free(s->down);
	s->known = 1;
	s->term = term;
	s->version = version;
	s->head = (int)head;
	s->down = d;
	s->ndown = (int)nd;
	return 0;
}

void boot_wsummary_free(struct boot_wsummary *s)
{
	free(s->down);
	memset(s, 0, sizeof *s);
}

const struct boot_wdown *boot_wsummary_find(const struct boot_wsummary *s, int index)
{
	for (int i = 0; s && i < s->ndown; i++)
		if (s->down[i].index == index)
			return &s->down[i];
	return NULL;
}

void boot_wdown_text(const struct boot_wdown *d, char *buf, size_t len)
{
	time_t t = (time_t)(d->since / 1000);
	struct tm tm;
	char at[32] = "?";

	if (d->since > 0 && localtime_r(&t, &tm))
		strftime(at, sizeof at, "%H:%M:%S", &tm);
	snprintf(buf, len, "%s since %s", d->why[0] ? d->why : "down", at);
}

const char *boot_watch_evidence(int fd, int ms_quiet)
{
	struct tcp_info ti;
	socklen_t sl = sizeof ti;

	memset(&ti, 0, sizeof ti);
	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &sl) < 0)
		return "no answer";
	/* our pings went out; if the host took none of them, the network (or the host) is gone */
	if (ti.tcpi_state == 2 /* SYN_SENT */ ||
	    (ti.tcpi_unacked > 0 && ti.tcpi_last_ack_recv >= (uint32_t)ms_quiet / 2))
		return "unreachable";
	return "no answer";
}
