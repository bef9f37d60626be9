/* cmd/exec.c: `lamkit exec [OPTIONS] PROGRAM [ARGS]` (lamexec): run a program that is not an
 * MPI program on the universe's nodes, once per node unless -n says otherwise, with mpiexec's
 * stdio, signal and exit rules (it is mpiexec with --mpi none and one rank per node). */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mpiexec options that take a value (two for -env/-genv): skipped while looking for -n. */
static int values_of(const char *a)
{
	static const char *one[] = {
	    "-n",           "-np",      "-envlist",  "-wdir",          "-genvlist",
	    "-ppn",         "--map-by", "-hosts",    "--host",         "--timeout",
	    "--kill-grace", "--mpi",    "--bind-to", "--local-agents", NULL};
	if (!strcmp(a, "-env") || !strcmp(a, "-genv"))
		return 2;
	for (int i = 0; one[i]; i++)
		if (!strcmp(a, one[i]))
			return 1;
	return 0;
}

int cmd_exec(int argc, char **argv)
{
	int has_n = 0, has_map = 0, prog = 0;

	for (int i = 1; i < argc && !prog; i++) {
		const char *a = argv[i];
		if (a[0] != '-') {
			prog = i;
			break;
		}
		has_n |= !strcmp(a, "-n") || !strcmp(a, "-np");
		has_map |= !strcmp(a, "-ppn") || !strcmp(a, "--map-by");
		i += values_of(a);
	}
	if (!prog)
		return cmd_usage_error("exec", "no program to run");
	/* one copy per node: per node up in a universe (mpiexec counts them), or this host alone */
	int universe = 0;
	struct boot_universe u;
	char path[4096], err[1024];
	const char *un = getenv("LAMKIT_UNIVERSE");
	if (!(un && !strcmp(un, "none")) &&
	    bootlua_load_universe(&u, path, sizeof path, err, sizeof err) == 0) {
		universe = 1;
		boot_universe_free(&u);
	}
	char **av = calloc((size_t)argc + 8, sizeof *av);
	int k = 0;
	if (!av)
		return CORE_EXIT_SYSTEM;
	av[k++] = "mpiexec";
	av[k++] = "--mpi";
	av[k++] = "none";
	if (!has_map) {
		av[k++] = "--map-by";
		av[k++] = "node";
	}
	if (!has_n && universe) {
		av[k++] = "--per-node";
	} else if (!has_n) {
		av[k++] = "-n";
		av[k++] = "1";
	}
	for (int i = 1; i < argc; i++)
		av[k++] = argv[i];
	int rc = cmd_mpiexec(k, av);
	free(av);
	return rc;
}
