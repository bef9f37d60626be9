/* cmd/boot.c: `lamkit boot SCHEMA` and `lamkit grow HOST`: start agents through the boot
 * module and launch algorithm the schema chooses (lua/boot.lua), then write the universe state. */
#include "bootlua.h"
#include "cmd.h"
#include "core.h"
#include "jobctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bopts {
	const char *boot, *algorithm, *schema, *ship;
	double timeout;
	int fanout, window, verbose, keep_going, cpu;
	char **kv;
	int nkv;
};

int cmd_lam_ssi(const char *what, const char *key, const char *val, const char **boot, int *window)
{
	size_t kl = strlen(key), pl = strlen("_priority");
	char *end;

	if (!strcmp(key, "boot")) {
		*boot = val;
		return 0;
	}
	if (!strcmp(key, "boot_base_linear_win_size") && window) {
		long v = strtol(val, &end, 10);
		if (*end || v < 1 || v > 1 << 20)
			return cmd_usage_error(what, "-ssi %s wants a positive integer, not '%s'",
			                       key, val);
		*window = (int)v;
		return 0;
	}
	if (!strncmp(key, "boot_", 5) && kl > 5 + pl && !strcmp(key + kl - pl, "_priority")) {
		char var[128];
		int n = snprintf(var, sizeof var, "LAMKIT_BOOT_%.*s_PRIORITY", (int)(kl - 5 - pl),
		                 key + 5);
		for (int i = 12; i < n; i++)
			var[i] = (char)(var[i] >= 'a' && var[i] <= 'z' ? var[i] - 32 : var[i]);
		strtol(val, &end, 10);
		if (!*val || *end || n >= (int)sizeof var)
			return cmd_usage_error(what, "-ssi %s wants an integer, not '%s'", key,
			                       val);
		setenv(var, val, 1);
		return 0;
	}
	return cmd_usage_error(what,
	                       "unknown SSI parameter '%s' (lamkit takes boot, %sboot_<module>_"
	                       "priority)",
	                       key, window ? "boot_base_linear_win_size, " : "");
}

/* Shared option parsing; `what` is the command. Returns 0 or a usage status. */
static int parse(const char *what, int argc, char **argv, struct bopts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc;
		if (a[0] == '-' && a[1] == 'v' && strspn(a + 1, "v") == strlen(a + 1)) {
			o->verbose += (int)strlen(a + 1); /* -v, -vv, -vvv */
		} else if (!strcmp(a, "--verbose")) {
			o->verbose++;
		} else if (!strncmp(a, "--verbose=", 10)) {
			char *end;
			long v = strtol(a + 10, &end, 10);
			if (*end || v < 0 || v > 9)
				return cmd_usage_error(
				    what, "--verbose= wants a level 0-9, not '%s'", a + 10);
			o->verbose = (int)v;
		} else if (!strcmp(a, "-d")) {
			o->verbose = 3; /* LAM's debug flag: everything */
		} else if (!strcmp(a, "-ssi")) {
			if (i + 2 >= argc)
				return cmd_usage_error(what, "-ssi needs a KEY and a VALUE");
			int rc = cmd_lam_ssi(what, argv[i + 1], argv[i + 2], &o->boot, &o->window);
			if (rc)
				return rc;
			i += 2;
		} else if (!strcmp(a, "-k") || !strcmp(a, "--keep-going")) {
			o->keep_going = 1;
		} else if (!strcmp(a, "--ship") || !strcmp(a, "--no-ship")) {
			o->ship = a[2] == 'n' ? "never" : "always";
		} else if (!strncmp(a, "--ship=", 7)) {
			o->ship = a + 7;
			if (strcmp(o->ship, "auto") && strcmp(o->ship, "always") &&
			    strcmp(o->ship, "never"))
				return cmd_usage_error(
				    what, "--ship= wants auto, always or never, not '%s'", o->ship);
		} else if (!strcmp(a, "--boot") && more) {
			o->boot = argv[++i];
		} else if (!strcmp(a, "--algorithm") && more) {
			o->algorithm = argv[++i];
		} else if (!strcmp(a, "--timeout") && more) {
			char *end;
			o->timeout = strtod(argv[++i], &end);
			if (*end || !(o->timeout > 0) || o->timeout > 86400)
				return cmd_usage_error(
				    what, "--timeout wants seconds > 0, not '%s'", argv[i]);
		} else if ((!strcmp(a, "--fanout") || !strcmp(a, "--window") ||
		            !strcmp(a, "--cpu")) &&
		           more) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > 1 << 20)
				return cmd_usage_error(
				    what, "%s wants a positive integer, not '%s'", a, argv[i]);
			if (!strcmp(a, "--fanout"))
				o->fanout = (int)v;
			else if (!strcmp(a, "--window"))
				o->window = (int)v;
			else
				o->cpu = (int)v;
		} else if (a[0] == '-' && a[1]) {
			return cmd_usage_error(what, "unknown option '%s'", a);
		} else if (o->schema) {
			return cmd_usage_error(what, "takes one %s, got '%s' too",
			                       strcmp(what, "grow") ? "SCHEMA" : "HOST", a);
		} else {
			o->schema = a;
		}
	}
	if (o->verbose >= 3)
		setenv("LAMKIT_DEBUG", "1", 0); /* level 3: the C side's debug lines as well */
	/* inside a Slurm allocation the allocation is the node list */
	if (!o->schema && !strcmp(what, "boot") && getenv("SLURM_JOB_ID"))
		return 0;
	if (!o->schema)
		return cmd_usage_error(what, "missing %s",
		                       strcmp(what, "grow") ? "SCHEMA" : "HOST");
	return 0;
}

/* Copy a node of the Lua result (at stack top) into n: host, cpu, schedule, other keys. */
static int node_from_lua(lua_State *L, struct boot_unode *n, char ***kvp)
{
	int nkv = 0;
	char **kv = calloc(1, sizeof *kv);

	lua_getfield(L, -1, "host");
	n->host = (char *)lua_tostring(L, -1);
	lua_pop(L, 1);
	n->cpus = bootlua_int(L, -1, "cpu", 1);
	lua_getfield(L, -1, "schedule");
	n->schedule = lua_isnil(L, -1) || lua_toboolean(L, -1);
	lua_pop(L, 1);
	lua_pushnil(L);
	while (kv && lua_next(L, -2)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		int t = lua_type(L, -1);
		if (k && strcmp(k, "host") && strcmp(k, "cpu") && strcmp(k, "schedule") &&
		    strcmp(k, "line") && strcmp(k, "index") &&
		    (t == LUA_TSTRING || t == LUA_TNUMBER || t == LUA_TBOOLEAN)) {
			char buf[1024];
			if (t == LUA_TBOOLEAN)
				snprintf(buf, sizeof buf, "%s=%s", k,
				         lua_toboolean(L, -1) ? "true" : "false");
			else
				snprintf(buf, sizeof buf, "%s=%s", k, lua_tostring(L, -1));
			char **nk = realloc(kv, (size_t)(nkv + 2) * sizeof *kv);
			if (nk) {
				kv = nk;
				kv[nkv++] = strdup(buf);
				kv[nkv] = NULL;
			}
		}
		lua_pop(L, 1);
	}
	n->kv = kv;
	*kvp = kv;
	return nkv;
}

/* Print the failures of a result (at index res). Returns their number. */
static int report_failures(lua_State *L, int res, char *first, size_t flen)
{
	int nfail = 0;

	first[0] = '\0';
	lua_getfield(L, res, "failed");
	for (int k = 1; lua_istable(L, -1); k++) {
		lua_geti(L, -1, k);
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		lua_getfield(L, -1, "host");
		lua_getfield(L, -2, "stage");
		lua_getfield(L, -3, "err");
		if (!nfail)
			snprintf(first, flen, "%s at %s: %s", lua_tostring(L, -3),
			         lua_tostring(L, -2), lua_tostring(L, -1));
		lua_pop(L, 4);
		nfail++;
	}
	lua_pop(L, 1);
	return nfail;
}

/* Add every node that came up (in ctx index order) to u. */
static void collect_up(struct bootlua *b, int res, struct boot_universe *u, int first_node)
{
	lua_State *L = b->L;
	int nup = 0;

	lua_getfield(L, res, "up");
	nup = (int)luaL_len(L, -1);
	lua_pop(L, 1);
	for (int k = 1; k <= nup; k++) {
		int i = bootlua_geti(L, res, "up", k);
		const struct boot_srv_info *in = boot_srv_info(b->srv, i);
		if (!in)
			continue;
		lua_getfield(L, res, "nodes");
		lua_geti(L, -1, i);
		struct boot_unode n = {0};
		char **kv = NULL;
		int nkv = node_from_lua(L, &n, &kv);
		n.index = first_node + i - 1;
		n.addr = (char *)in->addr;
		n.port = in->port;
		n.pid = in->pid;
		int parent = bootlua_geti(L, res, "parent", i);
		n.parent = parent > 0 ? first_node + parent - 1 : 0;
		if (!boot_universe_add(u, &n))
			core_log(CORE_LOG_ERROR, "out of memory");
		core_strv_free(kv, nkv);
		lua_pop(L, 2);
	}
}

static const char *str_field(lua_State *L, int idx, const char *f)
{
	lua_getfield(L, idx, f);
	const char *v = lua_tostring(L, -1); /* the result table keeps it alive */
	lua_pop(L, 1);
	return v ? v : "";
}

int cmd_boot(int argc, char **argv)
{
	struct bopts o = {0};
	struct boot_universe u = {0}, old;
	struct bootlua b;
	char path[4096], err[2048], first[1024];
	int rc = parse("boot", argc, argv, &o);

	if (rc)
		return rc;
	int have = bootlua_load_universe(&old, path, sizeof path, err, sizeof err);
	if (have == 0) {
		fprintf(
		    stderr,
		    "lamkit boot: a universe of %d node(s) is running already (%s); 'lamkit halt' "
		    "ends it, 'lamkit wipe' cleans up after a crash\n",
		    old.nnodes, path);
		boot_universe_free(&old);
		return 1;
	}
	if (have < 0) {
		fprintf(stderr, "lamkit boot: %s; 'lamkit wipe' removes it\n", err);
		return 1;
	}
	if (bootlua_new_identity(u.id, u.key) < 0) {
		fprintf(stderr, "lamkit boot: cannot make a universe key: %s\n", strerror(errno));
		return CORE_EXIT_SYSTEM;
	}
	struct bootlua_req q = {.cmd = "boot",
	                        .fn = "run",
	                        .mode = BOOT_SRV_BOOT,
	                        .schema = o.schema,
	                        .boot = o.boot,
	                        .algorithm = o.algorithm,
	                        .ship = o.ship,
	                        .timeout = o.timeout,
	                        .fanout = o.fanout,
	                        .window = o.window,
	                        .verbose = o.verbose,
	                        .first_node = 1,
	                        .key = u.key,
	                        .uid = u.id};
	int64_t t0 = core_now_ms();
	if (bootlua_run(&q, &b, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit boot: %s\n", err);
		if (b.srv)
			boot_srv_abort(b.srv);
		bootlua_close(&b);
		boot_universe_free(&u);
		return 1;
	}
	lua_State *L = b.L;
	int res = lua_gettop(L);
	int nfail = report_failures(L, res, first, sizeof first);
	lua_getfield(L, res, "nodes");
	int total = (int)luaL_len(L, -1);
	lua_pop(L, 1);
	const char *module = str_field(L, res, "module"), *alg = str_field(L, res, "algorithm");
	if (nfail && !o.keep_going) {
		fprintf(
		    stderr,
		    "lamkit boot: failed: %d of %d node(s) did not come up (first: %s); the others "
		    "were halted. -v shows each node; -k keeps the nodes that came up\n",
		    nfail, total, first);
		boot_srv_abort(b.srv);
		bootlua_close(&b);
		boot_universe_free(&u);
		return 1;
	}
	collect_up(&b, res, &u, 1);
	u.origin = strdup(core_hostname());
	u.module = strdup(module);
	char *abs = realpath(str_field(L, res, "file"), NULL); /* later commands run elsewhere */
	u.schema = abs ? abs : strdup(str_field(L, res, "file"));
	if (*str_field(L, res, "transport"))
		u.transport = strdup(str_field(L, res, "transport"));
	lua_getfield(L, res, "watch_off");
	u.watch_off = lua_toboolean(L, -1);
	lua_getfield(L, res, "watch_interval");
	lua_getfield(L, res, "watch_timeout");
	u.watch_interval_ms = (int)(lua_tonumber(L, -2) * 1000);
	u.watch_timeout_ms = (int)(lua_tonumber(L, -1) * 1000);
	lua_pop(L, 3);
	u.booted = (int64_t)time(NULL);
	if (u.nnodes == 0 || boot_universe_save(&u, path, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit boot: %s\n", u.nnodes ? err : "no node came up");
		boot_srv_abort(b.srv);
		bootlua_close(&b);
		boot_universe_free(&u);
		return 1;
	}
	boot_srv_commit(b.srv, &u);
	printf("lamkit boot: %d of %d node(s) up in %.2f s (%s, %s)%s\n", u.nnodes, total,
	       (double)(core_now_ms() - t0) / 1000, module, alg,
	       nfail ? "; see the failures above" : "");
	bootlua_close(&b);
	boot_universe_free(&u);
	return nfail ? 1 : 0;
}

/* After grow: wait until the new agent of node index is in the watch (it found the head, or
 * it is the one node up), so that `nodes` and the next job see the node up the moment grow
 * returns. Finding the head costs it at most one watch timeout per node asked (a node that
 * does not answer). 0, or 1 after saying why not. */
static int wait_joined(const struct boot_universe *u, int index, const char *host, int verbose)
{
	int tmo = u->watch_timeout_ms > 0 ? u->watch_timeout_ms : BOOT_WATCH_TIMEOUT_MS;
	int wait = tmo * (u->nnodes + 1), head = 0;
	int64_t t0 = core_now_ms();

	if (u->watch_off)
		return 0;
	wait = wait < 5000 ? 5000 : wait > 60000 ? 60000 : wait;
	if (boot_universe_joined(u, index, wait, &head) < 0) {
		fprintf(stderr,
		        "lamkit grow: %s: its agent runs but has not found the universe's head in "
		        "%.1f s (%s); it keeps looking: 'lamkit nodes' shows it up once it has\n",
		        host, (double)wait / 1000,
		        !head           ? "it named no head yet"
		        : head == index ? "it reached none of the other nodes up and leads alone"
		                        : "its view has it down");
		return 1;
	}
	if (verbose)
		printf("lamkit grow: %s joined the watch (its head: node %d) in %.2f s\n", host,
		       head, (double)(core_now_ms() - t0) / 1000);
	return 0;
}

/* Bring node n, which is down, back in place: a new agent with its index, slots and keys,
 * started after it wiped what the old agent left; the state gets its new address, port, pid. */
static int grow_repair(const struct bopts *o, struct boot_universe *u, struct boot_unode *n,
                       const char *path)
{
	struct bootlua b;
	char err[2048], first[1024], host[256];
	int rc = 1;

	if (o->cpu)
		n->cpus = o->cpu;
	snprintf(host, sizeof host, "%s", n->host);
	struct bootlua_req q = {.cmd = "grow",
	                        .fn = "run",
	                        .mode = BOOT_SRV_BOOT,
	                        .state = u,
	                        .repair = n,
	                        .boot = o->boot,
	                        .algorithm = "linear",
	                        .ship = o->ship,
	                        .timeout = o->timeout,
	                        .verbose = o->verbose,
	                        .first_node = n->index,
	                        .key = u->key,
	                        .uid = u->id};
	int64_t t0 = core_now_ms();
	const struct boot_srv_info *in = NULL;
	if (bootlua_run(&q, &b, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit grow: %s\n", err);
	} else if (report_failures(b.L, lua_gettop(b.L), first, sizeof first)) {
		fprintf(stderr, "lamkit grow: %s did not come up: %s\n", host, first);
	} else if (!(in = boot_srv_info(b.srv, 1))) {
		fprintf(stderr, "lamkit grow: %s did not come up\n", host);
	} else {
		char *addr = strdup(in->addr);
		if (addr) {
			free(n->addr);
			n->addr = addr;
		}
		n->port = in->port;
		n->pid = in->pid;
		n->parent = 0;
		if (!addr || boot_universe_save(u, path, err, sizeof err) < 0)
			fprintf(stderr, "lamkit grow: %s\n", addr ? err : "out of memory");
		else
			rc = 0;
	}
	if (rc) {
		if (b.srv)
			boot_srv_abort(b.srv);
		bootlua_close(&b);
		boot_universe_free(u);
		return 1;
	}
	if (in->wipe[0] && o->verbose)
		printf("lamkit grow: %s\n", in->wipe);
	boot_srv_commit(b.srv, u);
	bootlua_close(&b);
	rc = wait_joined(u, n->index, host, o->verbose);
	if (!rc)
		printf("lamkit grow: %s back as node %d (%d cpu(s)) in %.2f s; what its old "
		       "agent left was wiped\n",
		       host, n->index, n->cpus, (double)(core_now_ms() - t0) / 1000);
	boot_universe_free(u);
	return rc;
}

/* grow NODE of a node the universe has already: the watch must have it down (a live one is
 * refused). Its index, or 0 after saying why not. */
static int down_node(struct boot_universe *u, int i, const char *name)
{
	struct boot_wsummary v = {0};
	const struct boot_wdown *d = NULL;
	int index = u->nodes[i].index;

	if (!u->watch_off && boot_universe_view(u, index, 5000, &v) == 0)
		d = boot_wsummary_find(&v, index);
	if (!d) {
		fprintf(
		    stderr,
		    "lamkit grow: %s is node %d of the universe already%s ('lamkit nodes' shows "
		    "it; a node the watch declared down is brought back in place)\n",
		    name, index, v.known ? ", and up" : "");
		index = 0;
	} else {
		char at[200];
		boot_wdown_text(d, at, sizeof at);
		printf("lamkit grow: %s (node %d) is down (%s): a new agent takes its place\n",
		       name, index, at);
	}
	boot_wsummary_free(&v);
	return index;
}

int cmd_grow(int argc, char **argv)
{
	struct bopts o = {0};
	struct boot_universe u;
	struct bootlua b;
	char path[4096], err[2048], first[1024];
	int rc = parse("grow", argc, argv, &o);

	if (rc)
		return rc;
	if (bootlua_need_universe("grow", &u, path, sizeof path))
		return 1;
	int next = 1;
	struct boot_unode *repair = NULL;
	for (int i = 0; i < u.nnodes; i++) {
		if (!strcasecmp(u.nodes[i].host, o.schema) ||
		    (atoi(o.schema) == u.nodes[i].index &&
		     o.schema[strspn(o.schema, "0123456789")] == 0)) {
			if (!down_node(&u, i, o.schema)) {
				boot_universe_free(&u);
				return 1;
			}
			repair = &u.nodes[i];
			break;
		}
		if (u.nodes[i].index >= next)
			next = u.nodes[i].index + 1;
	}
	if (repair)
		return grow_repair(&o, &u, repair, path);
	struct bootlua_req q = {.cmd = "grow",
	                        .fn = "run",
	                        .mode = BOOT_SRV_BOOT,
	                        .state = &u,
	                        .grow_host = o.schema,
	                        .grow_cpu = o.cpu ? o.cpu : 1,
	                        .boot = o.boot,
	                        .algorithm = "linear",
	                        .ship = o.ship,
	                        .timeout = o.timeout,
	                        .verbose = o.verbose,
	                        .first_node = next,
	                        .key = u.key,
	                        .uid = u.id};
	int64_t t0 = core_now_ms();
	if (bootlua_run(&q, &b, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit grow: %s\n", err);
		if (b.srv)
			boot_srv_abort(b.srv);
		bootlua_close(&b);
		boot_universe_free(&u);
		return 1;
	}
	int res = lua_gettop(b.L);
	if (report_failures(b.L, res, first, sizeof first)) {
		fprintf(stderr, "lamkit grow: %s did not come up: %s\n", o.schema, first);
		boot_srv_abort(b.srv);
		bootlua_close(&b);
		boot_universe_free(&u);
		return 1;
	}
	int before = u.nnodes;
	collect_up(&b, res, &u, next);
	if (u.nnodes == before || boot_universe_save(&u, path, err, sizeof err) < 0) {
		fprintf(stderr, "lamkit grow: %s\n", u.nnodes == before ? "no node came up" : err);
		boot_srv_abort(b.srv);
		bootlua_close(&b);
		boot_universe_free(&u);
		return 1;
	}
	boot_srv_commit(b.srv, &u);
	bootlua_close(&b);
	rc = wait_joined(&u, next, o.schema, o.verbose);
	if (!rc)
		printf("lamkit grow: %s up as node %d (%d cpu(s)) in %.2f s; the universe has %d "
		       "node(s)\n",
		       o.schema, next, u.nodes[u.nnodes - 1].cpus,
		       (double)(core_now_ms() - t0) / 1000, u.nnodes);
	boot_universe_free(&u);
	return rc;
}
