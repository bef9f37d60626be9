/* lib/boot/bootsrv.c: the startup server and the Lua ctx of lua/boot.lua. Agents started by
 * the boot module connect back, authenticate with the universe key and send AGENT_INFO; the
 * launch processes' exits and the agents' LAUNCH_EXIT reports turn into failure events. */
#include "bootsrv.h"
#include "core.h"
#include "launch.h"
#include "link.h"
#include "proto.h"

#include "lauxlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum { S_IDLE, S_LAUNCHING, S_UP, S_FAILED, S_CANCELLED };

struct snode {
	int state, via, group; /* group: index into s->groups, or -1 */
	char *host;
	char addrs[512]; /* the --boot address list for this node */
	char known[512]; /* the host's own addresses (resolved), "" when it does not resolve */
	boot_launch_t *launch;
	boot_link_t *link;
	struct boot_srv_info info;
};

struct sgroup {
	boot_launch_t *l;
	int *idx;
	int n;
};

struct event {
	int index, ok, exit;
	char stage[16];
	char err[512];
};

struct pend {
	boot_srv_t *s;
	boot_link_t *l;
	int node; /* 0 while unidentified, else ctx index */
	char addr[64];
};

struct boot_srv {
	struct boot_srv_opts o;
	core_ev_t *ev;
	int listen_fd, port;
	char key_line[BOOT_KEY_HEX_LEN + 2];
	char all_addrs[512];
	int local;       /* module local: agents reach us on loopback */
	int promiscuous; /* accept agents calling from addresses that are not their node's */
	int foreground;
	struct snode *n;
	int nn;
	struct sgroup *groups;
	int ngroups;
	struct pend **pend; /* every link we accepted, identified or not */
	int npend;
	struct event *q;
	int nq, qcap;
	int drew_progress;
	int draining; /* commit waits for the agents to hang up: each close ends a loop pass */
};

static int loopback(const char *a)
{
	return !strncmp(a, "127.", 4) || !strcmp(a, "::1");
}

/* Is addr one of the comma-separated list? A loopback address matches any loopback one (a
 * host named by 127.0.1.1 calls back over 127.0.0.1). */
static int in_list(const char *list, const char *addr)
{
	size_t n = strlen(addr);

	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");
		char one[INET6_ADDRSTRLEN];
		snprintf(one, sizeof one, "%.*s", (int)l, p);
		if ((l == n && !strncmp(p, addr, n)) || (loopback(one) && loopback(addr)))
			return 1;
		p += l + (p[l] == ',');
	}
	return 0;
}

/* {==== events */

static void push_event(boot_srv_t *s, int index, int ok, const char *stage, int exit,
                       const char *err)
{
	if (s->nq == s->qcap) {
		int cap = s->qcap ? s->qcap * 2 : 16;
		struct event *q = realloc(s->q, (size_t)cap * sizeof *q);
		if (!q) { /* the node then ends by its timeout, named as such */
			core_log(CORE_LOG_ERROR, "out of memory recording the event of node %d",
			         index);
			return;
		}
		s->q = q;
		s->qcap = cap;
	}
	struct event *e = &s->q[s->nq++];
	memset(e, 0, sizeof *e);
	e->index = index;
	e->ok = ok;
	e->exit = exit;
	snprintf(e->stage, sizeof e->stage, "%s", stage ? stage : "");
	snprintf(e->err, sizeof e->err, "%s", err ? err : "");
	core_ev_stop(s->ev);
}

/* A launch process ended before its agent came up: which stage failed, and why. */
static void launch_failed(boot_srv_t *s, int i, int status, const char *line)
{
	char why[512];
	const char *stage = "launch";
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;

	if (code == 3)
		stage = "connect";
	else if (code == 4)
		stage = "auth";
	else if (code == 5)
		stage = "prolog"; /* lua/rte.lua's prolog, or its settings, failed on the node */
	if (line && *line)
		snprintf(why, sizeof why, "%s", line);
	else if (WIFSIGNALED(status))
		snprintf(why, sizeof why, "launch process killed by signal %d", WTERMSIG(status));
	else
		snprintf(why, sizeof why, "exit %d", code);
	s->n[i].state = S_FAILED;
	push_event(s, i + 1, 0, stage, code, why);
}

/* ====} */

/* {==== agent links */

static struct snode *node_of(boot_srv_t *s, struct pend *p)
{
	return p->node > 0 && p->node <= s->nn ? &s->n[p->node - 1] : NULL;
}

static void drop_link(boot_srv_t *s, boot_link_t *l)
{
	struct pend *p = boot_link_arg(l);

	for (int i = 0; i < s->npend; i++)
		if (s->pend[i] == p) {
			s->pend[i] = s->pend[--s->npend];
			break;
		}
	struct snode *nd = node_of(s, p);
	if (nd && nd->link == l)
		nd->link = NULL;
	free(p);
	boot_link_destroy(l);
	if (s->draining)
		core_ev_stop(s->ev);
}

/* AGENT_INFO: u32 node, str host, u32 pid, u32 cpus, u32 port, str version, str slurm name,
 * str wipe report. */
static void got_info(boot_srv_t *s, boot_link_t *l, struct pend *p, struct core_rbuf *r)
{
	int node = (int)core_r_u32(r);
	const char *host = core_r_str(r);
	int pid = (int)core_r_u32(r), cpus = (int)core_r_u32(r), port = (int)core_r_u32(r);
	const char *version = core_r_str(r), *slurm = core_r_str(r), *wipe = core_r_str(r);
	int i = -1;

	if (r->err) {
		core_log(CORE_LOG_ERROR, "%s: malformed agent info", boot_link_peer(l));
		drop_link(s, l);
		return;
	}
	if (node > 0) {
		i = node - s->o.first_node;
	} else { /* a group launch: find the node by the Slurm node name, else the host name */
		for (int pass = 0; pass < 2 && i < 0; pass++) {
			const char *want = pass == 0 ? slurm : host;
			for (int k = 0; *want && k < s->nn && i < 0; k++)
				if (s->n[k].group >= 0 && s->n[k].state == S_LAUNCHING &&
				    !s->n[k].link && s->n[k].host &&
				    !strcasecmp(s->n[k].host, want))
					i = k;
		}
	}
	if (i < 0 || i >= s->nn || s->n[i].state != S_LAUNCHING || s->n[i].link) {
		core_log(CORE_LOG_WARN,
		         "%s: agent for node %d (%s) is not expected (late or unknown); "
		         "telling it to exit",
		         boot_link_peer(l), node, host);
		boot_link_send(l, BOOT_MSG_HALT, NULL, 0, NULL, 0);
		boot_link_flush(l, 1000);
		drop_link(s, l);
		return;
	}
	struct snode *nd = &s->n[i];
	/* not promiscuous: an agent must call from one of its host's addresses (when the host
	 * resolves here; names only ssh's configuration knows cannot be checked) */
	if (!s->promiscuous && nd->known[0] && !in_list(nd->known, p->addr)) {
		char why[700];
		snprintf(why, sizeof why,
		         "its agent called back from %s, which is not an address of %s (%s); set "
		         "promiscuous = true in the schema to allow that (NAT, several interfaces)",
		         p->addr, nd->host, nd->known);
		core_log(CORE_LOG_DEBUG, "%s: %s", boot_link_peer(l), why);
		boot_link_send(l, BOOT_MSG_HALT, NULL, 0, NULL, 0);
		boot_link_flush(l, 1000);
		drop_link(s, l);
		nd->state = S_FAILED;
		push_event(s, i + 1, 0, "address", 0, why);
		return;
	}
	p->node = i + 1;
	nd->link = l;
	nd->state = S_UP;
	struct boot_srv_info *in = &nd->info;
	snprintf(in->hostname, sizeof in->hostname, "%s", host);
	snprintf(in->version, sizeof in->version, "%s", version);
	snprintf(in->wipe, sizeof in->wipe, "%s", wipe);
	in->pid = pid;
	in->cpus = cpus;
	in->port = port;
	snprintf(in->addr, sizeof in->addr, "%s", p->addr);
	push_event(s, i + 1, 1, NULL, 0, NULL);
}

static void on_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	struct pend *p = arg;
	boot_srv_t *s = p->s;
	struct core_rbuf r = {.p = d, .len = len};

	if (type == BOOT_MSG_AGENT_INFO && p->node == 0) {
		got_info(s, l, p, &r);
	} else if (type == BOOT_MSG_LAUNCH_EXIT && p->node > 0) {
		int i = (int)core_r_u32(&r) - 1, status = (int)core_r_u32(&r);
		const char *line = core_r_str(&r);
		if (r.err || i < 0 || i >= s->nn)
			return;
		if (s->n[i].state == S_LAUNCHING &&
		    !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			launch_failed(s, i, status, line);
	}
}

static void on_close(boot_link_t *l, int err, const char *why, void *arg)
{
	struct pend *p = arg;
	boot_srv_t *s = p->s;
	struct snode *nd = node_of(s, p);

	if (!nd) /* never identified: a wrong key, garbage, or a port scanner */
		core_log(CORE_LOG_ERROR, "%s (connection dropped; not retried)", why);
	else if (err)
		core_log(CORE_LOG_WARN, "%s: %s", nd->host ? nd->host : "?", why);
	drop_link(s, l);
}

static const struct boot_link_cbs link_cbs = {.on_frame = on_frame, .on_close = on_close};

static void on_accept(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	boot_srv_t *s = arg;

	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (cfd < 0)
			return;
		char peer[128];
		struct pend *p = calloc(1, sizeof *p);
		struct pend **np = realloc(s->pend, (size_t)(s->npend + 1) * sizeof *np);
		if (np)
			s->pend = np;
		if (!p || !np) {
			free(p);
			close(cfd);
			continue;
		}
		p->s = s;
		boot_tcp_peer(cfd, peer, sizeof peer);
		/* the address the agent reached us from is the one controllers will reach it at */
		boot_tcp_peer_addr(cfd, p->addr, sizeof p->addr);
		boot_link_t *l = boot_link_secure(ev, cfd, 0, s->o.key, peer, 10000, &link_cbs, p);
		if (!l) {
			free(p);
			close(cfd);
			continue;
		}
		s->pend[s->npend++] = p;
		p->l = l;
	}
}

/* ====} */

/* {==== addresses agents call back to */

static void add_addr(char *list, size_t len, const char *a)
{
	size_t al = strlen(a), n = strlen(list);

	for (const char *p = list; *p;) { /* already there? */
		const char *e = strchr(p, ',');
		size_t pl = e ? (size_t)(e - p) : strlen(p);
		if (pl == al && !strncmp(p, a, al))
			return;
		p = e ? e + 1 : p + pl;
	}
	if (n + al + 2 < len)
		snprintf(list + n, len - n, "%s%s", n ? "," : "", a);
}

/* Every IPv4 address of this host that is up and not loopback. */
static void local_addrs(char *list, size_t len)
{
	struct ifaddrs *ifa = NULL;

	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		char a[INET_ADDRSTRLEN];
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a, sizeof a);
		add_addr(list, len, a);
	}
	freeifaddrs(ifa);
}

/* Every IPv4/IPv6 address host resolves to, comma-separated into out ("" if none). One
 * lookup per host: a lost resolver reply costs the whole boot the resolver's retry interval
 * (musl: 2.5 s), so nothing here asks twice. */
static void host_addrs(const char *host, char *out, size_t len)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;

	out[0] = '\0';
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		char buf[INET6_ADDRSTRLEN];
		if (getnameinfo(a->ai_addr, a->ai_addrlen, buf, sizeof buf, NULL, 0,
		                NI_NUMERICHOST) == 0)
			add_addr(out, len, buf);
	}
	freeaddrinfo(res);
}

/* The address this host sends from towards the first IPv4 address of the list known (the
 * route's source), or "". */
static void route_source(const char *known, char *out, size_t len)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)}, me;
	socklen_t ml = sizeof me;

	out[0] = '\0';
	for (const char *p = known; *p;) {
		size_t l = strcspn(p, ",");
		char one[INET6_ADDRSTRLEN];
		snprintf(one, sizeof one, "%.*s", (int)l, p);
		if (inet_pton(AF_INET, one, &to.sin_addr) == 1)
			break;
		to.sin_addr.s_addr = 0;
		p += l + (p[l] == ',');
	}
	if (!to.sin_addr.s_addr)
		return;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof to) == 0 &&
	    getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
		inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)len);
	if (fd >= 0)
		close(fd);
}

static void node_addrs(boot_srv_t *s, struct snode *nd)
{
	char src[INET_ADDRSTRLEN];

	nd->addrs[0] = '\0';
	if (!s->local && nd->known[0]) {
		route_source(nd->known, src, sizeof src);
		if (src[0])
			add_addr(nd->addrs, sizeof nd->addrs, src);
	}
	if (s->local || !strncmp(nd->addrs, "127.", 4)) {
		snprintf(nd->addrs, sizeof nd->addrs, "127.0.0.1");
		return;
	}
	const char *p = s->all_addrs;
	while (*p) {
		char a[64];
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		snprintf(a, sizeof a, "%.*s", (int)l, p);
		add_addr(nd->addrs, sizeof nd->addrs, a);
		p = e ? e + 1 : p + l;
	}
	if (!nd->addrs[0])
		snprintf(nd->addrs, sizeof nd->addrs, "127.0.0.1");
}

/* ====} */

/* {==== launch processes */

static void on_sigchld(core_ev_t *ev, int signo, void *arg)
{
	boot_srv_t *s = arg;
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		char line[512];
		for (int i = 0; i < s->nn; i++) {
			struct snode *nd = &s->n[i];
			if (!boot_launch_reaped(nd->launch, pid, st))
				continue;
			boot_launch_last_line(nd->launch, line, sizeof line);
			if (nd->state == S_LAUNCHING && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
				launch_failed(s, i, st, line);
			else if (nd->state == S_UP && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
				core_log(CORE_LOG_WARN, "%s: the launch process ended: %s",
				         nd->host, line[0] ? line : "non-zero exit");
		}
		for (int g = 0; g < s->ngroups; g++) {
			struct sgroup *gr = &s->groups[g];
			if (!boot_launch_reaped(gr->l, pid, st))
				continue;
			boot_launch_last_line(gr->l, line, sizeof line);
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
				continue;
			for (int k = 0; k < gr->n; k++)
				if (s->n[gr->idx[k]].state == S_LAUNCHING)
					launch_failed(s, gr->idx[k], st, line);
		}
	}
}

static void log_path(boot_srv_t *s, char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "%s/launch-%s.log", s->o.logdir, what);
}

/* ====} */

/* {==== the ctx object */

static boot_srv_t *ctx_srv(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

static struct snode *ctx_node(lua_State *L, boot_srv_t *s, int arg)
{
	lua_Integer i = luaL_checkinteger(L, arg);

	if (i < 1 || i > s->nn)
		luaL_error(L, "ctx: node index %d out of range (1..%d)", (int)i, s->nn);
	return &s->n[i - 1];
}

/* ctx:setup(nodes, module): the node list and the module, before any agent_args call. */
static int ctx_setup(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	const char *mod = luaL_checkstring(L, 3);
	lua_Integer n;

	luaL_checktype(L, 2, LUA_TTABLE);
	n = luaL_len(L, 2);
	s->local = !strcmp(mod, "local");
	s->foreground = !strcmp(mod, "slurm");
	for (int i = 0; i < s->nn; i++)
		free(s->n[i].host);
	free(s->n);
	s->n = calloc((size_t)n + 1, sizeof *s->n);
	s->nn = s->n ? (int)n : 0;
	/* {promiscuous = true}: the schema's setting; {resolve = false}: the module was told not
	 * to resolve the host names (ssh.verify = false: names only ssh's configuration knows),
	 * so the origin asks no resolver about them either */
	int resolve = 1;
	if (lua_istable(L, 4)) {
		lua_getfield(L, 4, "promiscuous");
		s->promiscuous = lua_toboolean(L, -1);
		lua_getfield(L, 4, "resolve");
		resolve = lua_isnil(L, -1) || lua_toboolean(L, -1);
		lua_pop(L, 2);
	}
	for (int i = 0; i < s->nn; i++) {
		lua_geti(L, 2, i + 1);
		lua_getfield(L, -1, "host");
		s->n[i].host = strdup(lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
		lua_pop(L, 2);
		s->n[i].group = -1;
		if (!s->local && resolve && s->n[i].host)
			host_addrs(s->n[i].host, s->n[i].known, sizeof s->n[i].known);
		node_addrs(s, &s->n[i]);
	}
	return 0;
}

static int ctx_agent_args(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	char boot[600], node[16];
	const char *tmp = getenv("LAMKIT_TMPDIR");
	int k = 1;

	if (lua_isnoneornil(L, 2)) {
		snprintf(boot, sizeof boot, "%s:%d", s->local ? "127.0.0.1" : s->all_addrs,
		         s->port);
		snprintf(node, sizeof node, "0");
	} else {
		struct snode *nd = ctx_node(L, s, 2);
		snprintf(boot, sizeof boot, "%s:%d", nd->addrs, s->port);
		snprintf(node, sizeof node, "%d", (int)(nd - s->n) + s->o.first_node);
	}
	lua_newtable(L);
	const char *words[] = {"agent", "--boot", boot, "--universe", s->o.uid, "--node", node};
	for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
		lua_pushstring(L, words[w]);
		lua_rawseti(L, -2, k++);
	}
	if (tmp && *tmp) {
		lua_pushstring(L, "--tmpdir");
		lua_rawseti(L, -2, k++);
		lua_pushstring(L, tmp);
		lua_rawseti(L, -2, k++);
	}
	const char *extra[3] = {NULL, NULL, NULL};
	if (s->o.mode == BOOT_SRV_RECON)
		extra[0] = "--recon";
	else if (s->o.mode == BOOT_SRV_WIPE)
		extra[0] = "--wipe", extra[1] = s->o.dry_run ? "--dry-run"
		                                : s->o.purge ? "--purge"
		                                             : NULL;
	else if (s->foreground)
		extra[0] = "--foreground", extra[1] = s->o.replace ? "--replace" : NULL;
	else if (s->o.replace)
		extra[0] = "--replace";
	for (int e = 0; e < 3 && extra[e]; e++) {
		lua_pushstring(L, extra[e]);
		lua_rawseti(L, -2, k++);
	}
	return 1;
}

/* argv table at index arg -> malloc'd NULL-terminated array of pointers into Lua strings
 * (valid while the table is on the stack). */
static char **argv_of(lua_State *L, int arg)
{
	luaL_checktype(L, arg, LUA_TTABLE);
	lua_Integer n = luaL_len(L, arg);
	char **v = calloc((size_t)n + 1, sizeof *v);

	for (lua_Integer i = 1; v && i <= n; i++) {
		lua_geti(L, arg, i);
		v[i - 1] = (char *)luaL_checkstring(L, -1);
		lua_pop(L, 1); /* the string stays alive: the table holds it */
	}
	return v;
}

static int ret_false(lua_State *L, const char *why)
{
	lua_pushboolean(L, 0);
	lua_pushstring(L, why);
	return 2;
}

static int ctx_start(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	struct snode *nd = ctx_node(L, s, 2);
	int i = (int)(nd - s->n);
	char **argv = argv_of(L, 4), err[512], log[4300], what[16];

	if (!argv)
		return ret_false(L, "out of memory");
	/* opts {again = true, ship = PATH}: start a node that failed once more, from here, with
	 * the file PATH after the key on its stdin (lua/boot/fetch.lua ships the agent so) */
	const char *ship = NULL;
	int again = 0;
	if (lua_istable(L, 5)) {
		lua_getfield(L, 5, "again");
		again = lua_toboolean(L, -1);
		lua_getfield(L, 5, "ship");
		ship = lua_tostring(L, -1); /* stays on the stack until we return */
	}
	if (again && nd->state == S_FAILED && lua_isnoneornil(L, 3) &&
	    (!nd->launch || boot_launch_done(nd->launch, NULL))) {
		boot_launch_free(nd->launch, 0);
		nd->launch = NULL;
		nd->via = 0;
	} else if (nd->state != S_IDLE) {
		free(argv);
		return luaL_error(L, "ctx:start(%d): node started twice", i + 1);
	}
	nd->state = S_LAUNCHING;
	if (lua_isnoneornil(L, 3)) {
		snprintf(what, sizeof what, "%d", i + 1);
		log_path(s, log, sizeof log, what);
		nd->launch = boot_launch_start_ship(argv, s->key_line, ship, log, err, sizeof err);
		free(argv);
		if (!nd->launch) {
			nd->state = S_FAILED;
			return ret_false(L, err);
		}
		lua_pushboolean(L, 1);
		return 1;
	}
	struct snode *via = ctx_node(L, s, 3);
	nd->via = (int)(via - s->n) + 1;
	if (via->state != S_UP || !via->link) {
		free(argv);
		nd->state = S_FAILED;
		return ret_false(L, "the agent that was to start it is gone");
	}
	struct core_wbuf w = {0};
	int argc = 0;
	while (argv[argc])
		argc++;
	core_w_u32(&w, (uint32_t)i + 1);
	core_w_u32(&w, (uint32_t)argc);
	for (int a = 0; a < argc; a++)
		core_w_str(&w, argv[a]);
	free(argv);
	int rc = boot_link_send(via->link, BOOT_MSG_LAUNCH, w.p, w.len, NULL, 0);
	core_w_free(&w);
	if (rc < 0) {
		nd->state = S_FAILED;
		return ret_false(L, "cannot reach the agent that was to start it");
	}
	lua_pushboolean(L, 1);
	return 1;
}

static int ctx_start_group(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	char **argv = argv_of(L, 3), err[512], log[4300];

	luaL_checktype(L, 2, LUA_TTABLE);
	lua_Integer n = luaL_len(L, 2);
	struct sgroup *ng = realloc(s->groups, (size_t)(s->ngroups + 1) * sizeof *ng);
	int *idx = calloc((size_t)n + 1, sizeof *idx);
	if (!argv || !ng || !idx) {
		free(argv);
		free(idx);
		if (ng)
			s->groups = ng;
		return ret_false(L, "out of memory");
	}
	s->groups = ng;
	for (lua_Integer k = 1; k <= n; k++) {
		lua_geti(L, 2, k);
		lua_Integer i = luaL_checkinteger(L, -1);
		lua_pop(L, 1);
		if (i < 1 || i > s->nn || s->n[i - 1].state != S_IDLE) {
			free(argv);
			free(idx);
			return luaL_error(L, "ctx:start_group: bad or already started node %d",
			                  (int)i);
		}
		idx[k - 1] = (int)i - 1;
	}
	log_path(s, log, sizeof log, "group");
	boot_launch_t *l = boot_launch_start(argv, s->key_line, log, err, sizeof err);
	free(argv);
	if (!l) {
		for (lua_Integer k = 0; k < n; k++)
			s->n[idx[k]].state = S_FAILED;
		free(idx);
		return ret_false(L, err);
	}
	for (lua_Integer k = 0; k < n; k++) {
		s->n[idx[k]].state = S_LAUNCHING;
		s->n[idx[k]].group = s->ngroups;
	}
	s->groups[s->ngroups++] = (struct sgroup){.l = l, .idx = idx, .n = (int)n};
	lua_pushboolean(L, 1);
	return 1;
}

static void on_wait_timer(core_ev_t *ev, void *arg)
{
	core_ev_stop(ev);
}

static void set_s(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

static void set_i(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

/* Run the loop for at most ms (0: one pass), or until an event stops it. */
static void run_for(boot_srv_t *s, int64_t ms)
{
	int64_t tm = core_ev_timer(s->ev, ms, on_wait_timer, s);

	core_ev_run(s->ev);
	core_ev_timer_cancel(s->ev, tm);
}

static int ctx_wait(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	lua_Number t = luaL_checknumber(L, 2);

	if (!(t >= 0) || t > 1e6)
		return luaL_error(L, "ctx:wait: timeout must be a finite number >= 0");
	if (s->nq == 0)
		run_for(s, (int64_t)(t * 1000 + 0.999));
	if (s->nq == 0) {
		lua_pushnil(L);
		return 1;
	}
	struct event e = s->q[0];
	memmove(s->q, s->q + 1, (size_t)(s->nq - 1) * sizeof *s->q);
	s->nq--;
	lua_newtable(L);
	set_i(L, "index", e.index);
	lua_pushboolean(L, e.ok);
	lua_setfield(L, -2, "ok");
	if (!e.ok) {
		set_s(L, "stage", e.stage);
		set_s(L, "err", e.err);
		if (e.exit >= 0)
			set_i(L, "exit", e.exit);
		return 1;
	}
	const struct boot_srv_info *in = &s->n[e.index - 1].info;
	set_s(L, "version", in->version);
	set_s(L, "addr", in->addr);
	set_s(L, "hostname", in->hostname);
	set_i(L, "cpus", in->cpus);
	set_i(L, "port", in->port);
	set_i(L, "pid", in->pid);
	if (in->wipe[0])
		set_s(L, "wipe", in->wipe);
	return 1;
}

static int ctx_cancel(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	struct snode *nd = ctx_node(L, s, 2);

	if (nd->state == S_LAUNCHING || nd->state == S_IDLE)
		nd->state = S_CANCELLED;
	if (nd->launch)
		boot_launch_kill(nd->launch);
	return 0;
}

static int ctx_log(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	const char *lvl = luaL_checkstring(L, 2), *msg = luaL_checkstring(L, 3);

	if (!strcmp(lvl, "debug")) {
		if (s->o.verbose >= 2 || core_log_debug_enabled())
			fprintf(stderr, "lamkit %s: %s\n", s->o.cmd, msg);
		return 0;
	}
	if (!strcmp(lvl, "info") && !s->o.verbose)
		return 0;
	boot_srv_end_progress(s);
	fprintf(strcmp(lvl, "info") ? stderr : stdout, "lamkit %s: %s\n", s->o.cmd, msg);
	fflush(stdout);
	return 0;
}

static int ctx_progress(lua_State *L)
{
	boot_srv_t *s = ctx_srv(L);
	lua_Integer up = luaL_checkinteger(L, 2), total = luaL_checkinteger(L, 3);

	if (s->o.verbose || !isatty(2))
		return 0;
	fprintf(stderr, "\rlamkit %s: %d/%d nodes up ", s->o.cmd, (int)up, (int)total);
	s->drew_progress = 1;
	return 0;
}

void boot_srv_end_progress(boot_srv_t *s)
{
	if (s->drew_progress)
		fprintf(stderr, "\r\033[K");
	s->drew_progress = 0;
}

void boot_srv_push_ctx(boot_srv_t *s, lua_State *L)
{
	static const luaL_Reg m[] = {
	    {"setup", ctx_setup}, {"agent_args", ctx_agent_args},
	    {"start", ctx_start}, {"start_group", ctx_start_group},
	    {"wait", ctx_wait},   {"cancel", ctx_cancel},
	    {"log", ctx_log},     {"progress", ctx_progress},
	    {NULL, NULL},
	};
	lua_newtable(L);
	lua_pushlightuserdata(L, s);
	luaL_setfuncs(L, m, 1);
}

/* ====} */

boot_srv_t *boot_srv_create(const struct boot_srv_opts *o, char *err, size_t errlen)
{
	boot_srv_t *s = calloc(1, sizeof *s);

	if (!s) {
		core_errprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->o = *o;
	s->listen_fd = -1;
	if (core_mkdir_p(o->logdir, 0700) < 0) {
		core_errprintf(err, errlen, "cannot create %s: %s", o->logdir, strerror(errno));
		goto fail;
	}
	s->ev = core_ev_create();
	if (!s->ev) {
		core_errprintf(err, errlen, "event loop: %s", strerror(errno));
		goto fail;
	}
	s->listen_fd = boot_tcp_listen(&s->port, err, errlen);
	if (s->listen_fd < 0)
		goto fail;
	if (core_ev_fd(s->ev, s->listen_fd, CORE_EV_READ, on_accept, s) < 0 ||
	    core_ev_signal(s->ev, SIGCHLD, on_sigchld, s) < 0) {
		core_errprintf(err, errlen, "event loop: %s", strerror(errno));
		goto fail;
	}
	signal(SIGPIPE, SIG_IGN);
	boot_key_to_hex(o->key, s->key_line);
	strcat(s->key_line, "\n");
	local_addrs(s->all_addrs, sizeof s->all_addrs);
	if (!s->all_addrs[0])
		snprintf(s->all_addrs, sizeof s->all_addrs, "127.0.0.1");
	return s;
fail:
	boot_srv_destroy(s);
	return NULL;
}

const struct boot_srv_info *boot_srv_info(const boot_srv_t *s, int i)
{
	if (i < 1 || i > s->nn || s->n[i - 1].state != S_UP)
		return NULL;
	return &s->n[i - 1].info;
}

/* Run the loop until cond(s) or ms passed. */
static void run_until(boot_srv_t *s, int (*cond)(boot_srv_t *), int ms)
{
	int64_t end = core_now_ms() + ms;

	while (!cond(s) && core_now_ms() < end)
		run_for(s, 20);
}

static int no_links(boot_srv_t *s)
{
	return s->npend == 0;
}

static int launches_done(boot_srv_t *s)
{
	for (int i = 0; i < s->nn; i++)
		if (s->n[i].launch && !boot_launch_done(s->n[i].launch, NULL))
			return 0;
	for (int g = 0; g < s->ngroups; g++)
		if (!boot_launch_done(s->groups[g].l, NULL))
			return 0;
	return 1;
}

void boot_srv_commit(boot_srv_t *s, const struct boot_universe *u)
{
	struct core_wbuf w = {0};

	core_w_str(&w, u->id);
	core_w_u32(&w, (uint32_t)u->nnodes);
	for (int i = 0; i < u->nnodes; i++) {
		core_w_u32(&w, (uint32_t)u->nodes[i].index);
		core_w_str(&w, u->nodes[i].host);
		core_w_str(&w, u->nodes[i].addr);
		core_w_u32(&w, (uint32_t)u->nodes[i].port);
		core_w_u32(&w, (uint32_t)u->nodes[i].cpus);
	}
	/* the watch: its settings (UINT32_MAX: none), and whether these agents join a running
	 * universe (grow: they look for its head) */
	core_w_u32(&w, u->watch_off ? UINT32_MAX : (uint32_t)u->watch_interval_ms);
	core_w_u32(&w, (uint32_t)u->watch_timeout_ms);
	core_w_u32(&w, !strcmp(s->o.cmd, "grow") ? 1 : 0);
	for (int i = 0; i < s->nn; i++) { /* and its own node: one of a group launch knows none */
		uint32_t me = (uint32_t)(s->o.first_node + i);
		if (s->n[i].link)
			boot_link_send(s->n[i].link, BOOT_MSG_UNIVERSE, w.p, w.len, &me, sizeof me);
	}
	core_w_free(&w);
	for (int i = 0; i < s->nn; i++)
		if (s->n[i].link)
			boot_link_flush(s->n[i].link, 2000);
	/* hang up without a reset: parents in a launch tree may still be reporting their
	 * launches' exits, and closing on unread input resets the connection, which can make an
	 * agent miss UNIVERSE (it then exits: "boot ended before the universe was complete");
	 * send end of file and read on until each agent closes (bounded) */
	for (int k = 0; k < s->npend;) {
		struct pend *p = s->pend[k];
		if (node_of(s, p) && boot_link_shutdown_write(p->l) == 0)
			k++;
		else
			drop_link(s, p->l); /* unidentified, or failing: nothing to wait for */
	}
	s->draining = 1;
	run_until(s, no_links, 2000);
	s->draining = 0;
	while (s->npend)
		drop_link(s, s->pend[0]->l);
}

void boot_srv_abort(boot_srv_t *s)
{
	for (int i = 0; i < s->nn; i++) {
		if (s->n[i].link)
			boot_link_send(s->n[i].link, BOOT_MSG_HALT, NULL, 0, NULL, 0);
		if (s->n[i].state == S_LAUNCHING && s->n[i].launch)
			boot_launch_kill(s->n[i].launch);
	}
	/* agents that are up exit on HALT and close; those not up yet exit when boot goes */
	run_until(s, no_links, 5000);
	while (s->npend)
		drop_link(s, s->pend[0]->l);
	run_until(s, launches_done, 3000);
}

void boot_srv_release(boot_srv_t *s)
{
	while (s->npend)
		drop_link(s, s->pend[0]->l);
	run_until(s, launches_done, 5000);
	for (int i = 0; i < s->nn; i++)
		boot_launch_kill(s->n[i].launch);
	for (int g = 0; g < s->ngroups; g++)
		boot_launch_kill(s->groups[g].l);
	run_until(s, launches_done, 1000);
}

void boot_srv_destroy(boot_srv_t *s)
{
	if (!s)
		return;
	while (s->npend)
		drop_link(s, s->pend[0]->l);
	free(s->pend);
	for (int i = 0; i < s->nn; i++) {
		struct snode *nd = &s->n[i];
		/* a launch that still runs (srun holding its agent) keeps its log */
		boot_launch_free(nd->launch, nd->launch && boot_launch_done(nd->launch, NULL));
		free(nd->host);
	}
	free(s->n);
	for (int g = 0; g < s->ngroups; g++) {
		boot_launch_free(s->groups[g].l, boot_launch_done(s->groups[g].l, NULL));
		free(s->groups[g].idx);
	}
	free(s->groups);
	free(s->q);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	core_ev_destroy(s->ev);
	boot_key_wipe(s->key_line, sizeof s->key_line);
	rmdir(s->o.logdir); /* only when empty */
	free(s);
}
