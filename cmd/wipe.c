/* cmd/wipe.c: `lamkit wipe [SCHEMA]`: end what lamkit left behind. With SCHEMA, or with a
 * universe state file, on every node (a fresh `lamkit agent --wipe` started through the boot
 * module: no live agent needed); otherwise on this node. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "wipe.h"
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void on_note(void *arg, enum boot_wipe_note kind, const char *line)
{
	const int *verbose = arg;

	if (kind != BOOT_WIPE_ACTION)
		fprintf(stderr, "lamkit wipe: %s\n", line);
	else if (*verbose)
		printf("lamkit wipe: %s\n", line);
}

/* Append ", <part>" (or "<part>" first) when n > 0; the part's format takes n and a plural. */
static void part(char *buf, size_t len, int n, const char *fmt, const char *one, const char *many)
{
	size_t used = strlen(buf);

	if (n <= 0 || used >= len)
		return;
	if (used)
		used += (size_t)snprintf(buf + used, len - used, ", ");
	if (used < len)
		snprintf(buf + used, len - used, fmt, n, n == 1 ? one : many);
}

static void summary(const struct boot_wipe_report *r, int dry, char *buf, size_t len)
{
	buf[0] = '\0';
	part(buf, len, r->killed, dry ? "would kill %d process%s" : "killed %d process%s", "",
	     "es");
	part(buf, len, r->files_removed,
	     dry ? "would remove %d registered file%s" : "removed %d registered file%s", "", "s");
	part(buf, len, r->dirs_removed,
	     dry ? "would remove %d session director%s" : "removed %d session director%s", "y",
	     "ies");
	part(buf, len, r->gone, "%d recorded process%s already gone", "", "es");
	part(buf, len, r->reused, "left %d reused pid%s alone", "", "s");
	part(buf, len, r->untrusted, "skipped %d record%s without a start time", "", "s");
	part(buf, len, r->files_skipped, "skipped %d registered path%s", "", "s");
	part(buf, len, r->failed, "%d problem%s", "", "s");
	if (!buf[0])
		snprintf(buf, len, "nothing to do");
}

/* Every node of the schema or universe: one wipe agent each, a table of what they did. */
static int wipe_nodes(const char *schema, struct boot_universe *u, const char *path, int dry,
                      int purge, int verbose)
{
	unsigned char key[BOOT_KEY_LEN];
	char id[33], err[2048];
	struct bootlua b;

	if (bootlua_new_identity(id, key) < 0)
		return CORE_EXIT_SYSTEM;
	struct bootlua_req q = {.cmd = "wipe",
	                        .fn = "wipe",
	                        .mode = BOOT_SRV_WIPE,
	                        .schema = schema,
	                        .state = u,
	                        .verbose = verbose,
	                        .dry_run = dry,
	                        .purge = purge,
	                        .first_node = 1,
	                        .key = key,
	                        .uid = id};
	int rc = bootlua_run(&q, &b, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "lamkit wipe: %s\n", err);
		rc = 1;
	} else {
		boot_srv_release(b.srv);
		int bad = cmd_print_rows(b.L, lua_gettop(b.L), 1);
		rc = bad ? 1 : 0;
		if (bad)
			fprintf(
			    stderr, "lamkit wipe: %d node(s) could not be wiped%s\n", bad,
			    u ? "; the universe state is kept so that 'lamkit wipe' can try again"
			      : "");
	}
	if (b.srv)
		boot_srv_release(b.srv);
	bootlua_close(&b);
	boot_key_wipe(key, sizeof key);
	if (u) {
		if (rc == 0 && !dry)
			bootlua_forget_universe(path, u->id);
		boot_universe_free(u);
	}
	return rc;
}

int cmd_wipe(int argc, char **argv)
{
	struct boot_wipe_opts o = {0};
	struct boot_wipe_report rep;
	const char *schema = NULL;
	char err[1024], line[1024];
	int verbose = 0, opts = 1, local = 0, purge = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts && !strcmp(a, "--")) {
			opts = 0;
		} else if (opts && !strcmp(a, "--dry-run")) {
			o.dry_run = 1;
		} else if (opts && !strcmp(a, "--local")) {
			local = 1;
		} else if (opts && !strcmp(a, "--purge")) {
			purge = 1;
		} else if (opts && !strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (opts && a[0] == '-' && a[1] && a[1] != '-') {
			for (const char *c = a + 1; *c; c++) {
				if (*c == 'n')
					o.dry_run = 1;
				else if (*c == 'v')
					verbose = 1;
				else
					return cmd_usage_error("wipe", "unknown option '-%c'", *c);
			}
		} else if (opts && a[0] == '-' && a[1]) {
			return cmd_usage_error("wipe", "unknown option '%s'", a);
		} else if (schema) {
			return cmd_usage_error("wipe", "takes at most one SCHEMA, got '%s' too", a);
		} else {
			schema = a;
		}
	}
	struct boot_universe u = {0};
	char path[4096];
	int have = 1;
	if (!schema && !local)
		have = bootlua_load_universe(&u, path, sizeof path, err, sizeof err);
	if (schema || have == 0)
		return wipe_nodes(schema, have == 0 ? &u : NULL, path, o.dry_run, purge, verbose);
	if (have < 0) /* a broken state file: the local wipe below removes it */
		fprintf(stderr, "lamkit wipe: %s\n", err);
	verbose |= o.dry_run; /* a dry run lists what it would do */
	o.note = on_note;
	o.arg = &verbose;
	if (boot_wipe_node(&o, &rep, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit wipe: %s: %s\n", core_hostname(), err);
		return CORE_EXIT_SYSTEM;
	}
	int purged = purge && !o.dry_run ? boot_ship_cache_purge() : 0;
	if (purged < 0) {
		fprintf(stderr,
		        "lamkit wipe: %s: cannot remove the cache of shipped binaries: %s\n",
		        core_hostname(), strerror(errno));
		rep.failed++;
	}
	summary(&rep, o.dry_run, line, sizeof line);
	if (purged > 0 && strlen(line) + 40 < sizeof line)
		strcat(line, ", removed the cache of shipped binaries");
	printf("lamkit wipe: %s: %s%s\n", core_hostname(), o.dry_run ? "dry run: " : "", line);
	return rep.failed ? 1 : 0;
}
