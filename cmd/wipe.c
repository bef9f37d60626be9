/* cmd/wipe.c: `lamkit wipe`: end what lamkit left on this node; a schema's nodes come later. */
#include "cmd.h"
#include "core.h"
#include "wipe.h"

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

int cmd_wipe(int argc, char **argv)
{
	struct boot_wipe_opts o = {0};
	struct boot_wipe_report rep;
	const char *schema = NULL;
	char err[1024], line[1024];
	int verbose = 0, opts = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts && !strcmp(a, "--")) {
			opts = 0;
		} else if (opts && !strcmp(a, "--dry-run")) {
			o.dry_run = 1;
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
	if (schema) {
		fprintf(stderr,
		        "lamkit wipe: wiping the nodes of %s needs the boot modules, which are not "
		        "wired into lamkit %s yet; run 'lamkit wipe' on each node instead\n",
		        schema, LAMKIT_VERSION);
		return 1;
	}
	verbose |= o.dry_run; /* a dry run lists what it would do */
	o.note = on_note;
	o.arg = &verbose;
	if (boot_wipe_node(&o, &rep, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit wipe: %s: %s\n", core_hostname(), err);
		return CORE_EXIT_SYSTEM;
	}
	summary(&rep, o.dry_run, line, sizeof line);
	printf("lamkit wipe: %s: %s%s\n", core_hostname(), o.dry_run ? "dry run: " : "", line);
	return rep.failed ? 1 : 0;
}
