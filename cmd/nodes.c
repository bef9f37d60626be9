/* cmd/nodes.c: `lamkit nodes`: the universe's nodes, asked live: state, slots, address, pid,
 * jobs and ranks running, uptime; a node the watch declared down with since when and why. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "msg.h"
#include "proto.h"
#include "ucall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_nodes(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096];

	for (int i = 1; i < argc; i++)
		return cmd_usage_error("nodes", "unknown argument '%s'", argv[i]);
	if (bootlua_need_universe("nodes", &u, path, sizeof path))
		return 1;
	struct boot_ucall_res *r = calloc((size_t)u.nnodes + 1, sizeof *r);
	if (!r) {
		boot_universe_free(&u);
		return CORE_EXIT_SYSTEM;
	}
	struct boot_wsummary view = {0};
	struct boot_ucall_req q = {.type = BOOT_MSG_STATUS,
	                           .reply_type = BOOT_MSG_STATUS_REPLY,
	                           .timeout_ms = 5000,
	                           .view = &view};
	int told = 0; /* nodes that answered, or that the view has down */
	boot_ucall_ex(&u, &q, r);
	printf("%-5s %-16s %-22s %5s %-5s %-8s %5s %6s %9s\n", "node", "host", "address", "cpus",
	       "sched", "state", "jobs", "ranks", "uptime");
	for (int i = 0; i < u.nnodes; i++) {
		const struct boot_unode *n = &u.nodes[i];
		char addr[96], up[32] = "-", jobs[16] = "-", ranks[16] = "-", note[240] = "";
		/* the watch's view decides: an agent that answers on a node the view has down is
		 * one declared down that has not heard yet (cut off until now), or one `grow`
		 * started that has not found the head yet; the jobs place around it either way */
		const struct boot_wdown *d = boot_wsummary_find(&view, n->index);
		if (d) {
			boot_wdown_text(d, note, sizeof note);
			if (r[i].ok)
				snprintf(note + strlen(note), sizeof note - strlen(note),
				         "; an agent there still answers");
		}
		told += r[i].ok || d;
		snprintf(addr, sizeof addr, "%s:%d", n->addr, n->port);
		if (r[i].ok) {
			struct core_rbuf rb = {.p = r[i].reply, .len = r[i].rlen};
			core_r_u32(&rb);
			core_r_str(&rb);
			core_r_u32(&rb);
			core_r_u32(&rb);
			unsigned nj = core_r_u32(&rb), nr = core_r_u32(&rb);
			int64_t ms = core_r_i64(&rb);
			if (!rb.err) {
				snprintf(jobs, sizeof jobs, "%u", nj);
				snprintf(ranks, sizeof ranks, "%u", nr);
				snprintf(up, sizeof up, "%lld s", (long long)(ms / 1000));
			}
		}
		printf("%-5d %-16s %-22s %5d %-5s %-8s %5s %6s %9s%s%s\n", n->index, n->host, addr,
		       n->cpus, n->schedule ? "yes" : "no", r[i].ok && !d ? "up" : "down", jobs,
		       ranks, up, note[0] ? "  " : "", note);
	}
	for (int i = 0; i < u.nnodes; i++)
		if (!r[i].ok && !boot_wsummary_find(&view, u.nodes[i].index))
			fprintf(stderr, "lamkit nodes: %s\n", r[i].why);
	boot_ucall_free(r, u.nnodes);
	free(r);
	boot_wsummary_free(&view);
	/* a node the watch declared down is an answer; one nobody can tell about is not */
	int rc = told == u.nnodes ? 0 : 1;
	boot_universe_free(&u);
	return rc;
}
