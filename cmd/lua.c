/* cmd/lua.c: `lamkit lua SCRIPT` and `lamkit lua-dump DIR`. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "lua_host.h"

#include <stdio.h>
#include <string.h>

int cmd_lua(int argc, char **argv)
{
	char err[4096];
	int status = 0;

	if (argc < 2)
		return cmd_usage_error("lua", "missing SCRIPT");
	lua_State *L = core_lua_new(err, sizeof err);
	if (!L) {
		fprintf(stderr, "lamkit lua: %s\n", err);
		return CORE_EXIT_SYSTEM;
	}
	bootlua_register(L); /* scripts see what boot's Lua sees (lamkit.tp_check) */
	int rc = core_lua_run_file(L, argv[1], argc - 1, argv + 1, &status, err, sizeof err);
	core_lua_close(L);
	if (rc < 0) {
		fprintf(stderr, "lamkit lua: %s\n", err);
		return 1;
	}
	return status;
}

int cmd_lua_dump(int argc, char **argv)
{
	char err[4096];
	int force = 0, i = 1;

	if (i < argc && !strcmp(argv[i], "-f")) {
		force = 1;
		i++;
	}
	if (i >= argc)
		return cmd_usage_error("lua-dump", "missing DIR");
	if (i + 1 < argc)
		return cmd_usage_error("lua-dump", "unexpected argument '%s'", argv[i + 1]);
	int n = core_lua_dump(argv[i], force, err, sizeof err);
	if (n < 0) {
		fprintf(stderr, "lamkit lua-dump: %s\n", err);
		return CORE_EXIT_SYSTEM;
	}
	printf("lamkit lua-dump: wrote %d script(s) under %s/lua\n", n, argv[i]);
	return 0;
}
