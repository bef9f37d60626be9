/* cmd/recon.c: `lamkit recon SCHEMA`: start a throw-away agent on every node through the boot
 * module (from this host, a window at a time) and print what worked: a table of node,
 * reachable, binary runs, version, cpus, time, problem. Leaves nothing behind. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tri(lua_State *L, int idx, const char *f)
{
	lua_getfield(L, idx, f);
	const char *v = lua_isnil(L, -1) ? "?" : lua_toboolean(L, -1) ? "yes" : "no";
	lua_pop(L, 1);
	return v;
}

static void field(lua_State *L, int idx, const char *f, char *buf, size_t len)
{
	lua_getfield(L, idx, f);
	if (lua_type(L, -1) == LUA_TNUMBER && !strcmp(f, "time"))
		snprintf(buf, len, "%.2f s", lua_tonumber(L, -1));
	else if (lua_isstring(L, -1))
		snprintf(buf, len, "%s", lua_tostring(L, -1));
	else
		snprintf(buf, len, "-");
	lua_pop(L, 1);
}

/* Print the rows of a recon/wipe result at idx; returns the number of rows that failed. */
int cmd_print_rows(lua_State *L, int idx, int wipe)
{
	int bad = 0;

	if (wipe)
		printf("%-5s %-20s %-4s %-9s %s\n", "node", "host", "ok", "time", "result");
	else
		printf("%-5s %-20s %-9s %-5s %-8s %4s %-9s %s\n", "node", "host", "reachable",
		       "runs", "version", "cpus", "time", "problem");
	lua_getfield(L, idx, "rows");
	for (int k = 1;; k++) {
		lua_geti(L, -1, k);
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		int row = lua_gettop(L);
		char host[256], version[64], cpus[16], t[32], stage[32], err[512], wipe_s[1024];
		field(L, row, "host", host, sizeof host);
		field(L, row, "version", version, sizeof version);
		field(L, row, "cpus", cpus, sizeof cpus);
		field(L, row, "time", t, sizeof t);
		field(L, row, "stage", stage, sizeof stage);
		field(L, row, "err", err, sizeof err);
		lua_getfield(L, row, "ok");
		int ok = lua_toboolean(L, -1);
		lua_pop(L, 1);
		bad += !ok;
		char problem[600] = "";
		if (!ok)
			snprintf(problem, sizeof problem, "%s: %s", stage, err);
		if (wipe) {
			lua_getfield(L, row, "wipe");
			const char *w = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
			const char *sp = strstr(w, " dry=");
			snprintf(wipe_s, sizeof wipe_s, "%s",
			         sp ? sp + 1 : w); /* drop "wipe host=H" */
			lua_pop(L, 1);
			printf("%-5d %-20s %-4s %-9s %s\n", k, host, ok ? "yes" : "no", t,
			       ok ? wipe_s : problem);
		} else {
			printf("%-5d %-20s %-9s %-5s %-8s %4s %-9s %s\n", k, host,
			       tri(L, row, "reachable"), tri(L, row, "runs"), ok ? version : "-",
			       ok ? cpus : "-", t, problem);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return bad;
}

int cmd_recon(int argc, char **argv)
{
	const char *schema = NULL, *boot = NULL;
	int verbose = 0;
	double timeout = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose") ||
		    !strcmp(argv[i], "-d"))
			verbose = 1;
		else if (!strcmp(argv[i], "--boot") && i + 1 < argc)
			boot = argv[++i];
		else if (!strcmp(argv[i], "-ssi") && i + 2 < argc) {
			int rc = cmd_lam_ssi("recon", argv[i + 1], argv[i + 2], &boot, NULL);
			if (rc)
				return rc;
			i += 2;
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc && atof(argv[i + 1]) > 0)
			timeout = atof(argv[++i]);
		else if (argv[i][0] == '-' && argv[i][1])
			return cmd_usage_error("recon", "unknown option '%s'", argv[i]);
		else if (schema)
			return cmd_usage_error("recon", "takes one SCHEMA, got '%s' too", argv[i]);
		else
			schema = argv[i];
	}
	if (!schema)
		return cmd_usage_error("recon", "missing SCHEMA");
	unsigned char key[BOOT_KEY_LEN];
	char id[33], err[2048];
	struct bootlua b;
	if (bootlua_new_identity(id, key) < 0)
		return CORE_EXIT_SYSTEM;
	struct bootlua_req q = {.cmd = "recon",
	                        .fn = "recon",
	                        .mode = BOOT_SRV_RECON,
	                        .schema = schema,
	                        .boot = boot,
	                        .timeout = timeout,
	                        .verbose = verbose,
	                        .first_node = 1,
	                        .key = key,
	                        .uid = id};
	int rc = bootlua_run(&q, &b, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "lamkit recon: %s\n", err);
	} else {
		boot_srv_release(b.srv);
		int bad = cmd_print_rows(b.L, lua_gettop(b.L), 0);
		rc = bad ? 1 : 0;
	}
	if (b.srv)
		boot_srv_release(b.srv);
	bootlua_close(&b);
	boot_key_wipe(key, sizeof key);
	return rc < 0 ? 1 : rc;
}
