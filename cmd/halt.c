/* cmd/halt.c: `lamkit halt`: end the universe through its agents (each ends its jobs and
 * exits), then forget it. Nodes the watch declared down are named and left to 'lamkit wipe';
 * nodes that cannot be reached otherwise fail the halt (the state is kept for wipe). */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "proto.h"
#include "ucall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_halt(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096];
	int verbose = 0, timeout = 10;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = 1;
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			timeout = atoi(argv[++i]);
		else
			return cmd_usage_error("halt", "unknown argument '%s'", argv[i]);
	}
	if (bootlua_need_universe("halt", &u, path, sizeof path))
		return 1;
	struct boot_ucall_res *r = calloc((size_t)u.nnodes + 1, sizeof *r);
	if (!r) {
		boot_universe_free(&u);
		return CORE_EXIT_SYSTEM;
	}
	int64_t t0 = core_now_ms(), sent = boot_wall_ms(); /* the watch stamps falls with it */
	int nok = boot_ucall(&u, BOOT_MSG_HALT, 0, timeout * 1000, r);
	int ndown = boot_ucall_down(r, u.nnodes);
	char downs[1024] = "";
	for (int i = 0; i < u.nnodes; i++) {
		const struct boot_wdown *f = &r[i].fall;
		/* the watch may tell us of a node that halted on our HALT before its own link
		 * closes: that one is halted, not down. So is one whose agent the watch saw exit
		 * after our HALT went out: its goodbye to its head can lose the race with its
		 * link's close, and the head then says "exited" (t0410, 1 run in 5). A second of
		 * slack for the declaring agent's clock. */
		if (r[i].down && (!strncmp(f->why, "halted", 6) ||
		                  (!strncmp(f->why, "exited", 6) && f->since >= sent - 1000))) {
			r[i].down = 0, r[i].ok = 1, ndown--, nok++;
			if (verbose)
				printf("lamkit halt: %s halted\n", u.nodes[i].host);
			continue;
		}
		if (r[i].down) {
			char at[200];
			boot_wdown_text(f, at, sizeof at);
			snprintf(downs + strlen(downs), sizeof downs - strlen(downs), "%s%s (%s)",
			         downs[0] ? ", " : "", u.nodes[i].host, at);
		} else if (!r[i].ok)
			fprintf(stderr, "lamkit halt: %s\n", r[i].why);
		else if (verbose)
			printf("lamkit halt: %s halted (%.2f s)\n", u.nodes[i].host,
			       (double)r[i].ms / 1000);
	}
	boot_ucall_free(r, u.nnodes);
	free(r);
	int rc = 0;
	if (nok + ndown == u.nnodes) {
		bootlua_forget_universe(path, u.id);
		printf("lamkit halt: %d node(s) halted in %.2f s\n", nok,
		       (double)(core_now_ms() - t0) / 1000);
		if (ndown)
			printf("lamkit halt: %d node(s) were down: %s; what their agents left is "
			       "wipe's: lamkit wipe %s\n",
			       ndown, downs, u.schema && *u.schema ? u.schema : "SCHEMA");
	} else {
		fprintf(stderr,
		        "lamkit halt: %d of %d node(s) halted; run 'lamkit wipe' to clean up the "
		        "others (the universe state is kept for it)\n",
		        nok, u.nnodes);
		rc = 1;
	}
	boot_universe_free(&u);
	return rc;
}
