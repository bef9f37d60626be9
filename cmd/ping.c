/* cmd/ping.c: `lamkit ping [NODE...]` (tping): the round trip to each agent over its
 * authenticated link, and how long connecting and authenticating took. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "proto.h"
#include "ucall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_ping(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096];
	int timeout = 5, nnames = 0;
	char **names = calloc((size_t)argc + 1, sizeof *names);

	if (!names)
		return CORE_EXIT_SYSTEM;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc && atoi(argv[i + 1]) > 0) {
			timeout = atoi(argv[++i]);
		} else if (argv[i][0] == '-') {
			free(names);
			return cmd_usage_error("ping", "unknown option '%s'", argv[i]);
		} else {
			names[nnames++] = argv[i];
		}
	}
	if (bootlua_need_universe("ping", &u, path, sizeof path)) {
		free(names);
		return 1;
	}
	char *only = NULL;
	int rc = bootlua_select_nodes("ping", &u, nnames, names, &only);
	free(names);
	struct boot_ucall_res *r = calloc((size_t)u.nnodes + 1, sizeof *r);
	if (rc || !r) {
		free(only);
		free(r);
		boot_universe_free(&u);
		return rc ? rc : CORE_EXIT_SYSTEM;
	}
	struct boot_ucall_req q = {.type = BOOT_MSG_STATUS,
	                           .reply_type = BOOT_MSG_STATUS_REPLY,
	                           .only = only,
	                           .timeout_ms = timeout * 1000};
	int nok = boot_ucall_ex(&u, &q, r), asked = 0;
	printf("%-5s %-16s %-22s %10s %14s\n", "node", "host", "address", "rtt", "connect+auth");
	for (int i = 0; i < u.nnodes; i++) {
		const struct boot_unode *n = &u.nodes[i];
		char addr[96];
		if (r[i].skipped)
			continue;
		asked++;
		snprintf(addr, sizeof addr, "%s:%d", n->addr, n->port);
		if (r[i].ok)
			printf("%-5d %-16s %-22s %7.3f ms %11.1f ms\n", n->index, n->host, addr,
			       (double)r[i].rtt / 1000, (double)r[i].conn_us / 1000);
		else
			printf("%-5d %-16s %-22s %10s %14s\n", n->index, n->host, addr, "-", "-");
	}
	for (int i = 0; i < u.nnodes; i++)
		if (!r[i].ok && !r[i].skipped)
			fprintf(stderr, "lamkit ping: %s\n", r[i].why);
	/* ping all: a node declared down is named, not a failure; ping NODE of a down one fails */
	if (!nnames)
		nok += boot_ucall_down(r, u.nnodes);
	boot_ucall_free(r, u.nnodes);
	free(r);
	free(only);
	boot_universe_free(&u);
	return nok == asked ? 0 : 1;
}
