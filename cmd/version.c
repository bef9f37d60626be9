/* cmd/version.c: `lamkit version`: lamkit, git revision, Lua, libsodium, static or dynamic. */
#include "cmd.h"
#include "core.h"
#include "lua_host.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include <sodium.h>

/* <link.h> would give ElfW, but lib/boot/link.h shadows it on our include path */
#if UINTPTR_MAX > 0xffffffffu
#define ElfW(t) Elf64_##t
#else
#define ElfW(t) Elf32_##t
#endif

#ifndef LAMKIT_GIT_REV
#define LAMKIT_GIT_REV "unknown"
#endif

/* Static when the program headers have no PT_INTERP (no dynamic loader ran us). */
static int is_static(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);

	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return 0;
	return 1;
}

const char *cmd_build_id(void)
{
	return "lamkit " LAMKIT_VERSION " git " LAMKIT_GIT_REV
#ifdef __GLIBC__
	       " glibc"
#ifdef LAMKIT_SANITIZE
	       "-asan"
#endif
#else
	       " musl"
#endif
	    ;
}

int cmd_version(int argc, char **argv)
{
	char err[512];
	const char *luav = "unknown";
	lua_State *L;

	if (argc == 2 && !strcmp(argv[1], "--build")) { /* what boot compares on a node */
		printf("%s\n", cmd_build_id());
		return 0;
	}
	if (argc > 1)
		return cmd_usage_error("version", "takes no arguments but --build, got '%s'",
		                       argv[1]);
	L = core_lua_new(err, sizeof err);
	if (L) {
		lua_getglobal(L, "_VERSION");
		luav = lua_tostring(L, -1); /* "Lua 5.4" */
	}
	printf("lamkit %s (git %s)\n", LAMKIT_VERSION, LAMKIT_GIT_REV);
	printf("%s (%s, embedded)\n", luav ? luav : "Lua ?", LUA_RELEASE);
	printf("libsodium %s\n", sodium_version_string());
#ifdef __GLIBC__
	printf("%s, glibc%s\n", is_static() ? "static" : "dynamic",
#ifdef LAMKIT_SANITIZE
	       " + ASan/UBSan"
#else
	       ""
#endif
	);
#else
	printf("%s, musl\n", is_static() ? "static" : "dynamic");
#endif
	core_lua_close(L);
	return 0;
}
