/* cmd/cmd.h: the command table shared by the dispatcher and the command files. */
#ifndef LAMKIT_CMD_H
#define LAMKIT_CMD_H

struct cmd {
	const char *name;
	const char *links; /* space-separated symlink names that run this command, or NULL */
	const char *summary;
	const char *usage;                 /* full --help text (after the "usage:" line), or NULL */
	int (*run)(int argc, char **argv); /* argv[0] is the command name; NULL = not yet built */
	int hidden;
};

/* The table, NULL-name terminated. */
extern const struct cmd cmd_table[];

/* One-line usage error for `cmd`: prints "lamkit CMD: msg" + a hint, returns 100. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line naming this exact build ("lamkit 0.1.0 git REV musl"): `lamkit version --build`
 * prints it, and boot runs a node's lamkit only when it prints the same. */
const char *cmd_build_id(void);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_lua(int argc, char **argv);
int cmd_lua_dump(int argc, char **argv);
int cmd_mpiexec(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_wipe(int argc, char **argv);
int cmd_mpicc(int argc, char **argv);
int cmd_mpicxx(int argc, char **argv);
int cmd_mpifort(int argc, char **argv);
int cmd_boot(int argc, char **argv);
int cmd_grow(int argc, char **argv);
int cmd_recon(int argc, char **argv);
int cmd_halt(int argc, char **argv);
int cmd_nodes(int argc, char **argv);
int cmd_atollrun(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_pmix_proxy(int argc, char **argv);

/* LAM's `-ssi KEY VALUE` on boot, grow and recon: boot (the module: *boot),
 * boot_base_linear_win_size (*window, when window is not NULL), boot_<module>_priority (sets
 * LAMKIT_BOOT_<MODULE>_PRIORITY). 0, or a usage status (said). */
int cmd_lam_ssi(const char *what, const char *key, const char *val, const char **boot, int *window);

struct lua_State;
/* The recon/wipe result table's rows at stack index idx as a table; returns failed rows. */
int cmd_print_rows(struct lua_State *L, int idx, int wipe);

#endif
