/* cmd/bootlua.c: running lua/boot.lua with the startup server; universe helpers. */
#include "bootlua.h"
#include "tp.h"
#include "cmd.h"
#include "core.h"
#include "lua_host.h"
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sodium.h>

int bootlua_new_identity(char id[33], unsigned char key[BOOT_KEY_LEN])
{
	unsigned char r[BOOT_KEY_LEN];
	char hex[BOOT_KEY_HEX_LEN + 1];

	if (boot_key_generate(key) < 0 || boot_key_generate(r) < 0)
		return -1;
	boot_key_to_hex(r, hex);
	snprintf(id, 33, "%.16s", hex);
	return 0;
}

static void set_str(lua_State *L, const char *k, const char *v)
{
	if (v) {
		lua_pushstring(L, v);
		lua_setfield(L, -2, k);
	}
}

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

/* Push {host=, cpu=, schedule=, other keys} for a universe node. */
static void push_node(lua_State *L, const struct boot_unode *n)
{
	lua_newtable(L);
	for (int k = 0; n->kv && n->kv[k]; k++) {
		const char *eq = strchr(n->kv[k], '=');
		if (!eq)
			continue;
		lua_pushlstring(L, n->kv[k], (size_t)(eq - n->kv[k]));
		lua_pushstring(L, eq + 1);
		lua_settable(L, -3);
	}
	set_str(L, "host", n->host);
	set_int(L, "cpu", n->cpus);
	lua_pushboolean(L, n->schedule);
	lua_setfield(L, -2, "schedule");
}

/* Push the schema argument: the path, or boot.from_state({...}). */
static int push_schema(lua_State *L, const struct bootlua_req *q, char *err, size_t errlen)
{
	if (q->schema) {
		lua_pushstring(L, q->schema);
		return 0;
	}
	if (!q->state) { /* no schema: the Slurm allocation's nodes */
		lua_newtable(L);
		set_str(L, "file", "(Slurm allocation)");
		lua_newtable(L);
		lua_setfield(L, -2, "nodes");
		return 0;
	}
	const struct boot_universe *u = q->state;
	lua_newtable(L);
	set_str(L, "schema", u->schema ? u->schema : "");
	set_str(L, "module", u->module ? u->module : "");
	lua_newtable(L);
	if (q->repair) {
		push_node(L, q->repair);
		lua_rawseti(L, -2, 1);
	} else if (q->grow_host) {
		struct boot_unode n = {
		    .host = (char *)q->grow_host, .cpus = q->grow_cpu, .schedule = 1};
		push_node(L, &n);
		lua_rawseti(L, -2, 1);
	} else {
		for (int i = 0; i < u->nnodes; i++) {
			push_node(L, &u->nodes[i]);
			lua_rawseti(L, -2, i + 1);
		}
	}
	lua_setfield(L, -2, "nodes");
	return core_lua_call(L, "boot", "from_state", 1, 1, err, errlen);
}

/* The sha256 of a file as hex into sum; its size, or -1. Boot ships its own binary by it. */
static long long sha256_file(const char *path, char *sum)
{
	unsigned char buf[65536], h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_state st;
	long long size = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	crypto_hash_sha256_init(&st);
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		crypto_hash_sha256_update(&st, buf, (unsigned long long)n);
		size += n;
	}
	close(fd);
	crypto_hash_sha256_final(&st, h);
	sodium_bin2hex(sum, crypto_hash_sha256_BYTES * 2 + 1, h, sizeof h);
	return n < 0 ? -1 : size;
}

/* opts.self_sha256 / opts.self_size, computed the first time something asks (fetch, when boot
 * finds or ships its binary): hashing the 5 MB binary took ~20 ms of every boot before it
 * started anything, and a schema naming its program never needs it. */
static int l_opts_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	char sum[crypto_hash_sha256_BYTES * 2 + 1];
	long long size;

	if (!k || (strcmp(k, "self_sha256") && strcmp(k, "self_size")))
		return 0;
	lua_pushvalue(L, lua_upvalueindex(1)); /* done once: a failure stays nil */
	if (lua_toboolean(L, -1))
		return 0;
	lua_pop(L, 1);
	lua_pushboolean(L, 1);
	lua_replace(L, lua_upvalueindex(1));
	lua_getfield(L, 1, "self");
	size = lua_isstring(L, -1) ? sha256_file(lua_tostring(L, -1), sum) : -1;
	lua_pop(L, 1);
	if (size <= 0)
		return 0;
	lua_pushvalue(L, 1);
	set_str(L, "self_sha256", sum);
	set_int(L, "self_size", size);
	lua_pop(L, 1);
	lua_pushvalue(L, 2);
	lua_rawget(L, 1);
	return 1;
}

static int l_tp_check(lua_State *L)
{
	char why[300];

	if (tp_policy_check(luaL_checkstring(L, 1), why, sizeof why) < 0) {
		lua_pushnil(L);
		lua_pushstring(L, why);
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

void bootlua_register(lua_State *L)
{
	static const luaL_Reg fns[] = {{"tp_check", l_tp_check}, {NULL, NULL}};

	core_lua_register(L, fns);
}

int bootlua_run(const struct bootlua_req *q, struct bootlua *b, char *err, size_t errlen)
{
	char root[4096], self[PATH_MAX] = "", etc[PATH_MAX + 16] = "";

	memset(b, 0, sizeof *b);
	if (boot_session_root(root, sizeof root, err, errlen) < 0)
		return -1;
	snprintf(b->logdir, sizeof b->logdir, "%s/origin-%s", root, q->uid);
	struct boot_srv_opts so = {.cmd = q->cmd,
	                           .mode = q->mode,
	                           .key = q->key,
	                           .uid = q->uid,
	                           .first_node = q->first_node > 0 ? q->first_node : 1,
	                           .verbose = q->verbose,
	                           .dry_run = q->dry_run,
	                           .purge = q->purge,
	                           .replace = q->repair != NULL,
	                           .logdir = b->logdir};
	b->srv = boot_srv_create(&so, err, errlen);
	if (!b->srv)
		return -1;
	b->L = core_lua_new(err, errlen);
	if (!b->L)
		return -1;
	lua_State *L = b->L;
	bootlua_register(L);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof tmp, "%s", self);
		char *bin = dirname(tmp); /* <install>/bin/lamkit -> <install>/etc */
		snprintf(etc, sizeof etc, "%s/etc", dirname(bin));
	}
	boot_srv_push_ctx(b->srv, L);
	if (push_schema(L, q, err, errlen) < 0)
		return -1;
	lua_newtable(L);
	set_str(L, "boot", q->boot);
	set_str(L, "algorithm", q->algorithm);
	set_str(L, "ship", q->ship);
	set_int(L, "verbose", q->verbose);
	set_str(L, "build", cmd_build_id());
	if (self[0]) {
		set_str(L, "self", self);
		lua_newtable(L); /* the metatable: self_sha256 and self_size on first use */
		lua_pushboolean(L, 0);
		lua_pushcclosure(L, l_opts_index, 1);
		lua_setfield(L, -2, "__index");
		lua_setmetatable(L, -2);
	}
	if (etc[0])
		set_str(L, "install_etc", etc);
	if (q->timeout > 0) {
		lua_pushnumber(L, q->timeout);
		lua_setfield(L, -2, "timeout");
	}
	if (q->fanout > 0)
		set_int(L, "fanout", q->fanout);
	if (q->window > 0)
		set_int(L, "window", q->window);
	int rc = core_lua_call(L, "boot", q->fn, 3, 1, err, errlen);
	boot_srv_end_progress(b->srv);
	return rc;
}

void bootlua_close(struct bootlua *b)
{
	core_lua_close(b->L);
	boot_srv_destroy(b->srv);
	memset(b, 0, sizeof *b);
}

int bootlua_int(lua_State *L, int idx, const char *field, int dflt)
{
	lua_getfield(L, idx, field);
	int v = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : dflt;
	lua_pop(L, 1);
	return v;
}

int bootlua_geti(lua_State *L, int idx, const char *field, int i)
{
	int v = 0;

	lua_getfield(L, idx, field);
	if (lua_istable(L, -1)) {
		lua_geti(L, -1, i);
		v = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return v;
}

int bootlua_load_universe(struct boot_universe *u, char *path, size_t plen, char *err,
                          size_t errlen)
{
	if (boot_universe_path(path, plen, err, errlen) < 0)
		return -1;
	if (boot_universe_load(u, path, err, errlen) == 0)
		return 0;
	if (errno == ENOENT) {
		snprintf(err, errlen,
		         "no universe is running (no %s); 'lamkit boot SCHEMA' starts one", path);
		return 1;
	}
	return -1;
}

int bootlua_need_universe(const char *cmd, struct boot_universe *u, char *path, size_t plen)
{
	char err[2048];
	int have = bootlua_load_universe(u, path, plen, err, sizeof err);

	if (have)
		fprintf(stderr, "lamkit %s: %s%s\n", cmd, err,
		        have < 0 ? "; 'lamkit wipe' removes it" : "");
	return have ? 1 : 0;
}

void bootlua_forget_universe(const char *path, const char *id)
{
	char root[4096], err[256], dir[4200];

	unlink(path);
	if (boot_session_root(root, sizeof root, err, sizeof err) == 0) {
		snprintf(dir, sizeof dir, "%s/origin-%s", root, id);
		core_rm_rf(dir);
	}
}

int bootlua_select_nodes(const char *cmd, const struct boot_universe *u, int n, char **names,
                         char **only)
{
	*only = calloc((size_t)u->nnodes + 1, 1);
	if (!*only)
		return CORE_EXIT_SYSTEM;
	for (int i = 0; i < u->nnodes; i++)
		(*only)[i] = n == 0;
	for (int k = 0; k < n; k++) {
		int found = 0;
		char *end;
		long idx = strtol(names[k], &end, 10);
		for (int i = 0; i < u->nnodes; i++) {
			if (!strcasecmp(u->nodes[i].host, names[k]) ||
			    (!*end && idx == u->nodes[i].index)) {
				(*only)[i] = 1;
				found = 1;
			}
		}
		if (!found) {
			char list[512] = "";
			for (int i = 0; i < u->nnodes && strlen(list) + 2 < sizeof list; i++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
				         i ? " " : "", u->nodes[i].host);
			fprintf(stderr, "lamkit %s: no node '%s' in the universe (its nodes: %s)\n",
			        cmd, names[k], list);
			free(*only);
			*only = NULL;
			return 1;
		}
	}
	return 0;
}
