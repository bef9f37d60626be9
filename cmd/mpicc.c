/* cmd/mpicc.c: `lamkit mpicc`, `lamkit mpicxx` and `lamkit mpifort`: compile and link C, C++ and
 * Fortran programs against lamkit's mpi.h (mpif.h, mpi.mod, mpi_f08.mod) and libmpi.a
 * (libmpifort.a), found next to the binary (release: bin/../include, bin/../lib; build tree:
 * out/include, out/lib). Default: the system cc (c++, gfortran) with the glibc libraries;
 * -musl (C only): musl-gcc with the musl libraries and -static, a program that needs nothing on
 * the nodes. mpi.h is plain C inside extern "C", so C++ programs use the same library. */
#include "cmd.h"
#include "core.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "lamkit mpicc [-show] [-musl] [COMPILER ARGS...]\n"
    "Runs the C compiler with lamkit's MPI headers and libraries added:\n"
    "  -show   print the command instead of running it\n"
    "  -musl   use musl-gcc and link statically against the musl build of the libraries\n"
    "The compiler is $LAMKIT_CC (default cc, or musl-gcc with -musl). Compile-only runs\n"
    "(-c, -E, -S, -M) get no libraries.\n";

static const char usage_cxx[] =
    "lamkit mpicxx [-show] [COMPILER ARGS...]\n"
    "Runs the C++ compiler with lamkit's MPI headers and libraries added (the C API of\n"
    "mpi.h; there are no MPI C++ bindings, which MPI-3 removed):\n"
    "  -show   print the command instead of running it\n"
    "The compiler is $LAMKIT_CXX (default c++). Compile-only runs (-c, -E, -S, -M) get no\n"
    "libraries. -musl is refused: Debian has no musl C++ toolchain.\n";

static const char usage_fort[] =
    "lamkit mpifort [-show] [COMPILER ARGS...]\n"
    "Runs the Fortran compiler with lamkit's MPI added: mpif.h and the modules mpi and\n"
    "mpi_f08 (gfortran's) on the include path, libmpifort.a and libmpi.a linked:\n"
    "  -show   print the command instead of running it\n"
    "The compiler is $LAMKIT_FC (default gfortran, given -fallow-argument-mismatch as\n"
    "mpifort.mpich does: mpif.h code passes buffers of any type). Compile-only runs (-c, -E,\n"
    "-S, -M) get no libraries. -musl is refused: Debian's Fortran runtime is for glibc only;\n"
    "-static-libgfortran gives a program that needs no Fortran runtime on the nodes.\n";

enum { LANG_C, LANG_CXX, LANG_FORTRAN };
static const char *const lang_cmd[] = {"mpicc", "mpicxx", "mpifort"};

static int is_dir_with(const char *dir, const char *file)
{
	char p[PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof p, "%s/%s", dir, file);
	return stat(p, &st) == 0;
}

/* Find DIR such that DIR/include/mpi.h exists: the binary's dir or its parent. */
static int find_prefix(char *prefix, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0'; /* the binary's directory */
	if (is_dir_with(exe, "include/mpi.h")) {
		snprintf(prefix, len, "%s", exe);
		return 0;
	}
	slash = strrchr(exe, '/');
	if (slash) {
		*slash = '\0';
		if (is_dir_with(exe[0] ? exe : "/", "include/mpi.h")) {
			snprintf(prefix, len, "%s", exe[0] ? exe : "/");
			return 0;
		}
	}
	return -1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int compile_only(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-E") || !strcmp(argv[i], "-S") ||
		    !strcmp(argv[i], "-M") || !strcmp(argv[i], "-MM"))
			return 1;
	return 0;
}

static int compile(int lang, int argc, char **argv)
{
	char prefix[PATH_MAX], inc[PATH_MAX + 16], lib[PATH_MAX + 16];
	const char *name = lang_cmd[lang];
	int show = 0, musl = 0, n = 0;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-help"))) {
		printf("usage: %s", lang == LANG_FORTRAN ? usage_fort
		                    : lang == LANG_CXX   ? usage_cxx
		                                         : usage);
		return 0;
	}
	if (find_prefix(prefix, sizeof prefix) < 0) {
		fprintf(stderr,
		        "lamkit %s: cannot find include/mpi.h next to the lamkit binary "
		        "(expected BIN/../include or BIN/include)\n",
		        name);
		return 1;
	}
	char **args = calloc((size_t)argc + 16, sizeof *args);
	if (!args)
		return CORE_EXIT_SYSTEM;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-show"))
			show = 1;
		else if (!strcmp(argv[i], "-musl"))
			musl = 1;
	}
	if (lang == LANG_CXX && musl) {
		fprintf(stderr,
		        "lamkit mpicxx: -musl is for C programs only (Debian has no musl C++ "
		        "toolchain); build without it, or set LAMKIT_CXX to one\n");
		free(args);
		return CORE_EXIT_USAGE;
	}
	if (lang == LANG_FORTRAN && musl) {
		fprintf(stderr,
		        "lamkit mpifort: -musl is for C programs only: Debian's Fortran runtime "
		        "(libgfortran) is built for glibc, and linked with musl it leaves glibc "
		        "symbols undefined; build without -musl (-static-libgfortran: no Fortran "
		        "runtime needed on the nodes)\n");
		free(args);
		return CORE_EXIT_USAGE;
	}
	static const char *const cc_env[] = {"LAMKIT_CC", "LAMKIT_CXX", "LAMKIT_FC"};
	static const char *const cc_default[] = {"cc", "c++", "gfortran"};
	const char *cc = getenv(cc_env[lang]);
	args[n++] = (char *)(cc && *cc ? cc : musl ? "musl-gcc" : cc_default[lang]);
	snprintf(inc, sizeof inc, "-I%s/include", prefix);
	args[n++] = inc;
	/* what Debian's mpifort.mpich adds too: FORTRAN 77 code that passes buffers of different
	 * types to one MPI routine through mpif.h is an error for gfortran >= 10 without it */
	if (lang == LANG_FORTRAN && !strncmp(base_name(args[0]), "gfortran", 8))
		args[n++] = "-fallow-argument-mismatch";
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-show") && strcmp(argv[i], "-musl"))
			args[n++] = argv[i];
	if (!compile_only(argc, argv)) {
		snprintf(lib, sizeof lib, "-L%s/lib%s", prefix, musl ? "/musl" : "");
		args[n++] = lib;
		if (lang == LANG_FORTRAN)
			args[n++] = "-lmpifort";
		args[n++] = "-lmpi";
		args[n++] = "-ltransport";
		args[n++] = "-lpmi";
		args[n++] = "-lm";
		if (musl)
			args[n++] = "-static";
	}
	args[n] = NULL;
	if (show) {
		for (int i = 0; i < n; i++)
			printf("%s%s", i ? " " : "", args[i]);
		printf("\n");
		free(args);
		return 0;
	}
	execvp(args[0], args);
	fprintf(stderr, "lamkit %s: cannot run %s: %s\n", name, args[0], strerror(errno));
	free(args);
	return 127;
}

int cmd_mpicc(int argc, char **argv)
{
	return compile(LANG_C, argc, argv);
}

int cmd_mpicxx(int argc, char **argv)
{
	return compile(LANG_CXX, argc, argv);
}

int cmd_mpifort(int argc, char **argv)
{
	return compile(LANG_FORTRAN, argc, argv);
}
