/* cmd/atollrun_cmd.h: what the atollrun command's files share: option and host-file parsing, the
 * remote helper. */
#ifndef LAMKIT_CMD_ATOLLRUN_CMD_H
#define LAMKIT_CMD_ATOLLRUN_CMD_H

#include <stddef.h>

/* The most processes one starter handles (3 pipes each, one line buffer pair each). */
#define ATL_MAX_PROCS 4096

struct atl_opts {
	int nprocs, log, verbose, timeout;
	const char *machinefile, *groupfile, *rsh;
	int machinefile_given, groupfile_given;
	char **argv; /* the program and its arguments */
	int argc;
};

/* Parse `atollrun` options. 0; 1 after --help (printed); CORE_EXIT_USAGE (message printed). */
int atl_parse_opts(int argc, char **argv, struct atl_opts *o);

/* Read a machinefile: one host per line, '#' comments. *hosts gets a malloc'd array of
 * malloc'd names. The number of hosts (>= 0), or -1 with "file:line: what" in err. */
int atl_read_machinefile(const char *path, char ***hosts, char *err, size_t errlen);
/* Check a groupfile (NAME: host, host ...). The number of groups, or -1 with err. */
int atl_read_groupfile(const char *path, char *err, size_t errlen);

/* `lamkit atollrun --exec DIR TIMEOUT PROG [ARGS]`: the remote end of a process started over
 * ssh/rsh: runs PROG in DIR with the protocol environment, relays stdin to it, and ends it
 * when stdin closes (the starter or its ssh went away). Exits with PROG's status. */
int atl_exec_main(int argc, char **argv);
/* The --help text, on stdout. */
void atl_print_help(void);

#endif
