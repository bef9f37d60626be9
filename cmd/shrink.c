/* cmd/shrink.c: `lamkit shrink NODE` (lamshrink): take one node out of the running universe.
 * Its agent is halted (its ranks are killed, so the jobs using it fail with a message naming
 * the node), then the node leaves the universe state. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "proto.h"
#include "ucall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_shrink(int argc, char **argv)
{
	struct boot_universe u;
	char path[4096], err[1024];
	const char *name = NULL;
	int force = 0, timeout = 10;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			timeout = atoi(argv[++i]);
		else if (argv[i][0] == '-')
			return cmd_usage_error("shrink", "unknown option '%s'", argv[i]);
		else if (name)
			return cmd_usage_error("shrink", "takes one NODE, got '%s' too", argv[i]);
		else
			name = argv[i];
	}
	if (!name)
		return cmd_usage_error("shrink", "missing NODE (a host name or node number)");
	if (bootlua_need_universe("shrink", &u, path, sizeof path))
		return 1;
	char *only = NULL;
	int rc = bootlua_select_nodes("shrink", &u, 1, (char **)&name, &only);
	struct boot_ucall_res *r = rc ? NULL : calloc((size_t)u.nnodes + 1, sizeof *r);
	int at = -1, nn = u.nnodes;
	for (int i = 0; !rc && i < u.nnodes; i++)
		if (only[i])
			at = i;
	if (!rc && u.nnodes == 1) {
		fprintf(stderr,
		        "lamkit shrink: %s is the universe's only node; 'lamkit halt' ends "
		        "the universe\n",
		        u.nodes[at].host);
		rc = 1;
	}
	if (!rc && r) {
		struct boot_ucall_req q = {
		    .type = BOOT_MSG_HALT, .only = only, .timeout_ms = timeout * 1000};
		int ok = boot_ucall_ex(&u, &q, r) == 1;
		if (!ok && r[at].down) { /* the watch declared it down: nothing to halt there */
			fprintf(stderr, "lamkit shrink: %s; 'lamkit wipe' cleans the node later\n",
			        r[at].why);
			ok = 1;
		}
		if (!ok && !force) {
			fprintf(stderr,
			        "lamkit shrink: %s; 'lamkit shrink --force %s' removes it from "
			        "the universe anyway ('lamkit wipe' cleans the node later)\n",
			        r[at].why, name);
			rc = 1;
		}
	}
	if (!rc && r) {
		char host[256];
		int index = u.nodes[at].index;
		snprintf(host, sizeof host, "%s", u.nodes[at].host);
		snprintf(err, sizeof err, "node %d is gone from the universe state", index);
		if (boot_universe_remove(&u, index) < 0 ||
		    boot_universe_save(&u, path, err, sizeof err) < 0) {
			fprintf(stderr, "lamkit shrink: %s\n", err);
			rc = CORE_EXIT_SYSTEM;
		} else {
			printf("lamkit shrink: node %d (%s) left the universe; %d node(s) remain\n",
			       index, host, u.nnodes);
		}
	}
	if (r)
		boot_ucall_free(r, nn);
	free(r);
	free(only);
	boot_universe_free(&u);
	return rc;
}
