/* lib/core/lua_host.h: the embedded Lua 5.4: state setup, module searcher (user override
 * directories first, then the scripts compiled into the binary), protected calls. */
#ifndef LAMKIT_CORE_LUA_HOST_H
#define LAMKIT_CORE_LUA_HOST_H

#include <stddef.h>

#include "lauxlib.h"
#include "lua.h"

/* A new state with the standard libraries, the `lamkit` module (global and require-able) and
 * our searcher in place of the file searchers. NULL with a message in err on failure. */
lua_State *core_lua_new(char *err, size_t errlen);
/* Add C functions to the `lamkit` module table. Call before running scripts. */
void core_lua_register(lua_State *L, const luaL_Reg *fns);
/* Call require(mod)[fn] with the nargs values on the stack, leaving nres results.
 * 0, or -1 with "file:line: message" in err (and the stack as it was before the args). */
int core_lua_call(lua_State *L, const char *mod, const char *fn, int nargs, int nres, char *err,
                  size_t errlen);
/* Run a script file with `arg` set to argv (argv[0] = the script). Its first result, if an
 * integer, is stored in *status (else 0). 0, or -1 with the error in err. */
int core_lua_run_file(lua_State *L, const char *path, int argc, char **argv, int *status, char *err,
                      size_t errlen);
/* Write the embedded scripts into dir (lua/... kept as relative paths). Files that exist
 * are not overwritten unless force. Returns the number written, or -1 with err. */
int core_lua_dump(const char *dir, int force, char *err, size_t errlen);
/* Close a state. Accepts NULL. */
void core_lua_close(lua_State *L);

#endif
