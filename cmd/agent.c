/* cmd/agent.c: `lamkit agent`: the per-node daemon's entry; for now only its --wipe mode. */
#include "cmd.h"
#include "core.h"
#include "wipe.h"

#include <stdio.h>
#include <string.h>

static void on_note(void *arg, enum boot_wipe_note kind, const char *line)
{
	const int *verbose = arg;

	if (kind != BOOT_WIPE_ACTION || *verbose)
		fprintf(stderr, "lamkit agent: %s\n", line);
}

/* One line on stdout for the caller (a multi-node wipe over ssh/srun) to parse:
 * "wipe host=H dry=0 killed=N gone=N reused=N untrusted=N files=N skipped=N dirs=N failed=N",
 * or "wipe host=H error=MESSAGE" (the rest of the line). Notes go to stderr. */
static int agent_wipe(int dry_run, int verbose)
{
	struct boot_wipe_opts o = {.dry_run = dry_run, .note = on_note, .arg = &verbose};
	struct boot_wipe_report r;
	char err[1024];

	if (boot_wipe_node(&o, &r, err, sizeof err) < 0) {
		for (char *c = err; *c; c++)
			if (*c == '\n')
				*c = ' ';
		printf("wipe host=%s error=%s\n", core_hostname(), err);
		return CORE_EXIT_SYSTEM;
	}
	printf("wipe host=%s dry=%d killed=%d gone=%d reused=%d untrusted=%d files=%d skipped=%d "
	       "dirs=%d failed=%d\n",
	       core_hostname(), dry_run, r.killed, r.gone, r.reused, r.untrusted, r.files_removed,
	       r.files_skipped, r.dirs_removed, r.failed);
	return r.failed ? 1 : 0;
}

int cmd_agent(int argc, char **argv)
{
	int wipe = 0, dry_run = 0, verbose = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wipe"))
			wipe = 1;
		else if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--dry-run"))
			dry_run = 1;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = 1;
		else
			return cmd_usage_error("agent", "unknown argument '%s'", argv[i]);
	}
	if (!wipe)
		return cmd_usage_error("agent", "only --wipe is available as a command so far "
		                                "(mpiexec starts its agent itself)");
	return agent_wipe(dry_run, verbose);
}
