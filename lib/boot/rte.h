/* lib/boot/rte.h: what an agent start means on its node, as lua/rte.lua decided on the origin
 * and passed in the agent's argv (--rte-env NAME=VALUE, --rte-limit NAME=VALUE, --rte-wdir DIR,
 * --rte-prolog CMD, --rte-epilog CMD, --rte-wrap WORD...): environment, resource limits
 * (inherited by the ranks), working directory, the commands run at boot and at halt or wipe, and
 * a prefix command the agent runs itself under. doc/BOOT-LUA.md, "RTE". */
#ifndef LAMKIT_BOOT_RTE_H
#define LAMKIT_BOOT_RTE_H

#include <stddef.h>
#include <sys/resource.h>

#define BOOT_RTE_MAX_LIMITS 16
#define BOOT_RTE_HOOK_MS    60000 /* a prolog or epilog that runs longer is killed */

struct boot_rte {
	const char **env; /* "NAME=VALUE", n entries (pointers into argv) */
	int nenv;
	struct {
		int res;
		rlim_t v;
	} lim[BOOT_RTE_MAX_LIMITS];
	int nlim;
	const char *wdir, *prolog, *epilog;
	const char **wrap; /* the prefix command's words, nwrap of them (pointers into argv) */
	int nwrap;
};

/* Take one argv option: returns 1 and consumes val when opt is an --rte-* option, 0 when it
 * is not one, -1 with err for a bad value ("--rte-limit nofil=3: unknown limit ..."). */
int boot_rte_arg(struct boot_rte *r, const char *opt, const char *val, char *err, size_t errlen);
/* Set the environment, the limits (soft, raising the hard limit when we may) and chdir to
 * wdir. 0, or -1 with err naming what failed. */
int boot_rte_apply(const struct boot_rte *r, char *err, size_t errlen);
/* Run `sh -c cmd` in a process group of its own, stdin /dev/null, stdout to our stderr, with
 * LAMKIT_RTE_EVENT=event, LAMKIT_NODE=node, LAMKIT_UNIVERSE_ID=universe; killed after
 * BOOT_RTE_HOOK_MS. 0 when it exits 0, else -1 with err ("exit 3", "killed after 60 s"). */
int boot_rte_hook(const char *cmd, const char *event, int node, const char *universe, char *err,
                  size_t errlen);
/* With wrap words: exec wrap... SELF argv[0..argc) without the --rte-wrap options, SELF being
 * this program (/proc/self/exe), so that the agent runs again under the prefix command (which
 * is expected to exec it in turn, keeping its pid, as env, nice, numactl, taskset do). Returns
 * 0 without wrap words, else -1 with err ("cannot run 'numactl': No such file or directory"). */
int boot_rte_exec_wrapped(const struct boot_rte *r, int argc, char **argv, char *err,
                          size_t errlen);
void boot_rte_free(struct boot_rte *r);

#endif
