/* lib/boot/wipe.h: end what this user's lamkit sessions left on this node, from their records. */
#ifndef LAMKIT_BOOT_WIPE_H
#define LAMKIT_BOOT_WIPE_H

#include <stddef.h>

/* What a note line is about. */
enum boot_wipe_note {
	BOOT_WIPE_ACTION, /* something done (or, in a dry run, that would be done) */
	BOOT_WIPE_SKIP,   /* something deliberately left alone: reused pid, path outside, symlink */
	BOOT_WIPE_FAIL,   /* something that should have been done and could not */
};

struct boot_wipe_opts {
	int dry_run; /* only find and report; kill and remove nothing */
	int wait_ms; /* how long to wait for killed processes to go; 0 = 2000 */
	/* Called with one line naming the pid or path per action, skip or failure; or NULL. */
	void (*note)(void *arg, enum boot_wipe_note kind, const char *line);
	void *arg;
	/* Only this agent directory (its name under the root, e.g. "u<id>-n2"): what one agent
	 * left, for the agent that takes its place; NULL = everything of this user. */
	const char *only;
};

struct boot_wipe_report {
	int killed;        /* processes sent SIGKILL (recorded ones and what they left running) */
	int gone;          /* records whose process had already ended */
	int reused;        /* records whose pid now belongs to another process (left alone) */
	int untrusted;     /* records without a start time (left alone) */
	int files_removed; /* registered files and shared-memory segments removed */
	int files_skipped; /* registered paths not honoured: outside, not ours, via a symlink */
	int dirs_removed;  /* agent and job directories removed */
	int failed;        /* things that could not be done (survivors, unremovable paths) */
};

/* Kill every process that this user's session records under $LAMKIT_TMPDIR|$TMPDIR|/tmp
 * /lamkit-<uid> name (checking start times), plus what those left behind, then remove the
 * registered files and the session directories. Needs no live agent. Fills *rep (zeroed first).
 * Returns 0 (problems are counted and noted), or -1 with err when the root is unusable. */
int boot_wipe_node(const struct boot_wipe_opts *o, struct boot_wipe_report *rep, char *err,
                   size_t errlen);

/* The session root path this user's records live under (not created). 0, or -1 with err. */
int boot_wipe_root(char *buf, size_t len, char *err, size_t errlen);

#endif
