/* lib/core/lua_host.c: Lua state setup, the embedded/override module searcher, protected
 * calls with one-line errors, lua-dump. */
#include "lua_host.h"
#include "core.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lualib.h"

/* {==== the lamkit module: primitives every script may use */

static int l_core_log(lua_State *L)
{
	static const char *const names[] = {"debug", "info", "warn", "error", NULL};
	int lvl = luaL_checkoption(L, 1, "info", names);
	const char *msg = luaL_checkstring(L, 2);

	core_log((enum core_log_level)lvl, "%s", msg);
	return 0;
}

static int l_core_time(lua_State *L)
{
	lua_pushnumber(L, (lua_Number)core_now_ns() / 1e9);
	return 1;
}

static int l_core_getenv(lua_State *L)
{
	const char *v = getenv(luaL_checkstring(L, 1));

	if (v)
		lua_pushstring(L, v);
	else
		lua_pushnil(L);
	return 1;
}

static int l_core_hostname(lua_State *L)
{
	lua_pushstring(L, core_hostname());
	return 1;
}

static int l_core_cpus(lua_State *L)
{
	lua_pushinteger(L, core_cpu_count());
	return 1;
}

static int l_core_file_exists(lua_State *L)
{
	struct stat st;

	lua_pushboolean(L, stat(luaL_checkstring(L, 1), &st) == 0);
	return 1;
}

/* lamkit.resolve(host) -> numeric address (IPv4 preferred) | nil, "why" */
static int l_core_resolve(lua_State *L)
{
	const char *host = luaL_checkstring(L, 1);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL, *best = NULL;
	char buf[INET6_ADDRSTRLEN];
	int rc = getaddrinfo(host, NULL, &hints, &res);

	if (rc != 0) {
		lua_pushnil(L);
		lua_pushstring(L, gai_strerror(rc));
		return 2;
	}
	for (struct addrinfo *a = res; a; a = a->ai_next)
		if (!best || (a->ai_family == AF_INET && best->ai_family != AF_INET))
			best = a;
	if (best && getnameinfo(best->ai_addr, best->ai_addrlen, buf, sizeof buf, NULL, 0,
	                        NI_NUMERICHOST) == 0)
		lua_pushstring(L, buf);
	else
		lua_pushnil(L);
	freeaddrinfo(res);
	if (lua_isnil(L, -1)) {
		lua_pushstring(L, "no address");
		return 2;
	}
	return 1;
}

static const luaL_Reg core_fns[] = {
    {"resolve", l_core_resolve},
    {"log", l_core_log},
    {"time", l_core_time},
    {"getenv", l_core_getenv},
    {"hostname", l_core_hostname},
    {"cpus", l_core_cpus},
    {"file_exists", l_core_file_exists},
    {NULL, NULL},
};

/* ====} */

/* {==== searcher: LAMKIT_LUA_PATH directories, then embedded "lua/<mod path>.lua" */

static int load_override(lua_State *L, const char *rel)
{
	const char *path = getenv("LAMKIT_LUA_PATH");
	char file[4096];

	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		if (n > 0 &&
		    snprintf(file, sizeof file, "%.*s/%s", (int)n, path, rel) < (int)sizeof file &&
		    access(file, R_OK) == 0) {
			if (luaL_loadfilex(L, file, "t") != LUA_OK)
				return lua_error(L);
			lua_pushstring(L, file);
			return 2;
		}
		path = end ? end + 1 : NULL;
	}
	return 0;
}

static int l_searcher(lua_State *L)
{
	const char *mod = luaL_checkstring(L, 1);
	char rel[512], name[600];

	if (strlen(mod) >= sizeof rel - 8)
		return luaL_error(L, "module name too long: %s", mod);
	size_t i = 0;
	for (; mod[i]; i++)
		rel[i] = mod[i] == '.' ? '/' : mod[i];
	memcpy(rel + i, ".lua", 5);
	int n = load_override(L, rel);
	if (n)
		return n;
	snprintf(name, sizeof name, "lua/%s", rel);
	const struct core_blob *b = core_blob_find(core_lua_blobs, name);
	if (!b) {
		lua_pushfstring(L, "no embedded script '%s' and none in LAMKIT_LUA_PATH", name);
		return 1;
	}
	char chunk[620];
	snprintf(chunk, sizeof chunk, "@%s", name);
	if (luaL_loadbufferx(L, (const char *)b->data, b->len, chunk, "t") != LUA_OK)
		return lua_error(L);
	lua_pushstring(L, name);
	return 2;
}

/* ====} */

static int setup(lua_State *L)
{
	luaL_openlibs(L);
	luaL_newlib(L, core_fns);
	lua_pushstring(L, LAMKIT_VERSION);
	lua_setfield(L, -2, "version");
	lua_pushvalue(L, -1);
	lua_setglobal(L, "lamkit");
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, "lamkit");
	lua_pop(L, 2);
	/* package.searchers = { preload, ours }: scripts never come from the system's LUA_PATH */
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchers");
	lua_pushcfunction(L, l_searcher);
	lua_rawseti(L, -2, 2);
	lua_pushnil(L);
	lua_rawseti(L, -2, 3);
	lua_pushnil(L);
	lua_rawseti(L, -2, 4);
	lua_pop(L, 2);
	return 0;
}

static int msgh(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (!msg)
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	if (core_log_debug_enabled())
		luaL_traceback(L, L, msg, 1);
	return 1;
}

static int pcall_msg(lua_State *L, int nargs, int nres, char *err, size_t errlen)
{
	int base = lua_gettop(L) - nargs;

	lua_pushcfunction(L, msgh);
	lua_insert(L, base);
	int rc = lua_pcall(L, nargs, nres, base);
	lua_remove(L, base);
	if (rc != LUA_OK) {
		core_errprintf(err, errlen, "%s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return -1;
	}
	return 0;
}

lua_State *core_lua_new(char *err, size_t errlen)
{
	lua_State *L = luaL_newstate();

	if (!L) {
		core_errprintf(err, errlen, "cannot create Lua state: out of memory");
		return NULL;
	}
	lua_pushcfunction(L, setup);
	if (pcall_msg(L, 0, 0, err, errlen) < 0) {
		lua_close(L);
		return NULL;
	}
	return L;
}

void core_lua_register(lua_State *L, const luaL_Reg *fns)
{
	lua_getglobal(L, "lamkit");
	luaL_setfuncs(L, fns, 0);
	lua_pop(L, 1);
}

int core_lua_call(lua_State *L, const char *mod, const char *fn, int nargs, int nres, char *err,
                  size_t errlen)
{
	lua_getglobal(L, "require");
	lua_pushstring(L, mod);
	if (pcall_msg(L, 1, 1, err, errlen) < 0) {
		lua_pop(L, nargs);
		return -1;
	}
	lua_getfield(L, -1, fn);
	lua_remove(L, -2);
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1 + nargs);
		return core_errprintf(err, errlen, "lua/%s.lua: no function '%s'", mod, fn);
	}
	lua_insert(L, -1 - nargs);
	return pcall_msg(L, nargs, nres, err, errlen);
}

int core_lua_run_file(lua_State *L, const char *path, int argc, char **argv, int *status, char *err,
                      size_t errlen)
{
	lua_createtable(L, argc, 0);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i);
	}
	lua_setglobal(L, "arg");
	if (luaL_loadfilex(L, path, "t") != LUA_OK) {
		core_errprintf(err, errlen, "%s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return -1;
	}
	for (int i = 1; i < argc; i++)
		lua_pushstring(L, argv[i]);
	if (pcall_msg(L, argc > 0 ? argc - 1 : 0, 1, err, errlen) < 0)
		return -1;
	*status = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
	lua_pop(L, 1);
	return 0;
}

int core_lua_dump(const char *dir, int force, char *err, size_t errlen)
{
	int n = 0;
	char path[4096];

	for (const struct core_blob *b = core_lua_blobs; b->name; b++) {
		if (snprintf(path, sizeof path, "%s/%s", dir, b->name) >= (int)sizeof path)
			return core_errprintf(err, errlen, "%s: path too long", dir);
		char *slash = strrchr(path, '/');
		*slash = '\0';
		if (core_mkdir_p(path, 0755) < 0)
			return core_errprintf(err, errlen, "%s: %s", path, strerror(errno));
		*slash = '/';
		if (!force && access(path, F_OK) == 0)
			continue;
		if (core_write_file_atomic(path, b->data, b->len, 0644) < 0)
			return core_errprintf(err, errlen, "%s: %s", path, strerror(errno));
		n++;
	}
	return n;
}

void core_lua_close(lua_State *L)
{
	if (L)
		lua_close(L);
}
