/* lib/pmi/pmi2_server.c: the engine's PMI-2 half: length-framed messages after
 * cmd=init pmi_version=2, answered from the same KVS, fence and name table as PMI-1. */
#include "pmi2_wire.h"
#include "pmi_server_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- replies ---- */

/* Finish and send a reply. Returns 0 (a reply too big for the wire becomes an rc=-1). */
static int send_out(pmi_conn_t *c, struct pmi2_out *o, const char *cmd)
{
	long n = pmi2_out_finish(o);

	if (n < 0) {
		pmi2_out_free(o);
		pmi2_out_begin(o, cmd);
		pmi2_out_add(o, "rc", "-1");
		pmi2_out_add(o, "errmsg", "reply_too_long");
		n = pmi2_out_finish(o);
	}
	if (n > 0)
		pmi_srv_send(c, o->buf, (size_t)n);
	pmi2_out_free(o);
	return 0;
}

/* A reply with just rc (and errmsg when rc != 0). */
static int reply_rc(pmi_conn_t *c, const char *cmd, int rc, const char *errmsg)
{
	struct pmi2_out o;

	pmi2_out_begin(&o, cmd);
	pmi2_out_addi(&o, "rc", rc);
	if (rc != 0 && errmsg)
		pmi2_out_add(&o, "errmsg", errmsg);
	return send_out(c, &o, cmd);
}

/* A found/value reply (kvs-get, info-get*attr, name-lookup uses its own). */
static int reply_found(pmi_conn_t *c, const char *cmd, const char *val, size_t vlen)
{
	struct pmi2_out o;

	pmi2_out_begin(&o, cmd);
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_add(&o, "found", val ? "TRUE" : "FALSE");
	if (val)
		pmi2_out_addn(&o, "value", val, vlen);
	return send_out(c, &o, cmd);
}

/* A key argument: present, non-empty, at most PMI2_KEY_MAX bytes. NULL after an rc reply. */
static const char *want_key(pmi_conn_t *c, const struct pmi2_msg *m, const char *name,
                            const char *cmd, size_t *klen)
{
	const char *k = pmi2_msg_get(m, name, klen);

	if (!k || *klen == 0) {
		reply_rc(c, cmd, -1, "missing_key");
		return NULL;
	}
	if (*klen > PMI2_KEY_MAX) {
		reply_rc(c, cmd, -1, "key_too_long");
		return NULL;
	}
	return k;
}

/* ---- handlers: 0, or -1 after pmi_srv_fail ---- */

static int h_fullinit(pmi_conn_t *c, const struct pmi2_msg *m)
{
	pmi_server_t *s = c->s;
	int id = -1, a;
	int have = pmi2_msg_int(m, "pmirank", &id) == 0 || pmi2_msg_int(m, "srcid", &id) == 0;

	if (c->v2full)
		return pmi_srv_fail(c, "PMI-2 fullinit sent twice");
	if (have && (id < 0 || id >= s->cfg.size))
		return pmi_srv_fail(c, "PMI-2 fullinit pmirank=%d out of range 0..%d", id,
		                    s->cfg.size - 1);
	if (have && c->rank >= 0 && id != c->rank)
		return pmi_srv_fail(c, "PMI-2 fullinit pmirank=%d on the connection of rank %d", id,
		                    c->rank);
	if (c->rank < 0) {
		if (!have)
			return pmi_srv_fail(c,
			                    "PMI-2 fullinit without pmirank on an anonymous conn");
		if (pmi_srv_rank_taken(s, c, id))
			return pmi_srv_fail(c, "PMI-2 fullinit pmirank=%d: rank already connected",
			                    id);
		c->rank = id;
	}
	c->v2full = 1;
	c->initialized = 1;
	a = s->appnum ? s->appnum[c->rank] : 0;

	struct pmi2_out o;
	pmi2_out_begin(&o, "fullinit-response");
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_add(&o, "pmi-version", "2");
	pmi2_out_add(&o, "pmi-subversion", "0");
	pmi2_out_addi(&o, "rank", c->rank);
	pmi2_out_addi(&o, "size", s->cfg.size);
	pmi2_out_addi(&o, "appnum", a);
	pmi2_out_add(&o, "debugged", "FALSE");
	pmi2_out_add(&o, "pmiverbose", "FALSE");
	if (s->cfg.spawner)
		pmi2_out_add(&o, "spawner-jobid", s->cfg.spawner);
	return send_out(c, &o, "fullinit-response");
}

static int h_getid(pmi_conn_t *c, const struct pmi2_msg *m)
{
	struct pmi2_out o;

	(void)m;
	pmi2_out_begin(&o, "job-getid-response");
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_add(&o, "jobid", c->s->kvsname);
	return send_out(c, &o, "job-getid-response");
}

static int h_getjobattr(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "info-getjobattr-response";
	size_t klen, vlen = 0;
	const char *key = want_key(c, m, "key", cmd, &klen);
	char num[24];

	if (!key)
		return 0;
	if (strcmp(key, "universeSize") == 0) {
		vlen = (size_t)snprintf(num, sizeof(num), "%d", c->s->cfg.universe_size);
		return reply_found(c, cmd, num, vlen);
	}
	/* job attributes are the keys the launcher stored before start (PMI_process_mapping) */
	const char *v =
	    strncmp(key, "PMI_", 4) == 0 ? pmi_kvs_get(c->s->kvs, key, klen, &vlen) : NULL;
	return reply_found(c, cmd, v, vlen);
}

/* Answer every conn waiting for node attribute key. */
static void wake_nodeattr(pmi_server_t *s, const char *key, const char *val, size_t vlen)
{
	pmi_conn_t *next;

	for (pmi_conn_t *o = s->conns; o; o = next) {
		next = o->next;
		if (!o->nawait || strcmp(o->nawait, key) != 0)
			continue;
		free(o->nawait);
		o->nawait = NULL;
		reply_found(o, "info-getnodeattr-response", val, vlen);
	}
}

static int h_putnodeattr(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "info-putnodeattr-response";
	size_t klen, vlen;
	const char *key = want_key(c, m, "key", cmd, &klen);
	const char *val = key ? pmi2_msg_get(m, "value", &vlen) : NULL;

	if (!key)
		return 0;
	if (!val)
		return reply_rc(c, cmd, -1, "missing_value");
	if (vlen > PMI2_VAL_MAX)
		return reply_rc(c, cmd, -1, "value_too_long");
	if (pmi_kvs_set(c->s->nodeattr, key, klen, val, vlen) < 0)
		return reply_rc(c, cmd, -1, errno == ENOSPC ? "table_full" : "no_memory");
	reply_rc(c, cmd, 0, NULL);
	wake_nodeattr(c->s, key, val, vlen);
	return 0;
}

static int h_getnodeattr(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "info-getnodeattr-response";
	size_t klen, vlen;
	const char *key = want_key(c, m, "key", cmd, &klen);

	if (!key)
		return 0;
	const char *v = pmi_kvs_get(c->s->nodeattr, key, klen, &vlen);
	if (v || !pmi2_msg_bool(m, "wait", 0))
		return reply_found(c, cmd, v, vlen);
	c->nawait = strdup(key); /* answered by the putnodeattr that stores it */
	if (!c->nawait)
		return reply_rc(c, cmd, -1, "no_memory");
	return 0;
}

static int h_put(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "kvs-put-response";
	pmi_server_t *s = c->s;
	size_t klen, vlen;
	const char *key = want_key(c, m, "key", cmd, &klen);
	const char *val = key ? pmi2_msg_get(m, "value", &vlen) : NULL;

	if (!key)
		return 0;
	if (!val)
		return reply_rc(c, cmd, -1, "missing_value");
	if (vlen > PMI2_VAL_MAX)
		return reply_rc(c, cmd, -1, "value_too_long");
	if (pmi_kvs_set(s->kvs, key, klen, val, vlen) < 0 ||
	    pmi_kvs_set(s->delta, key, klen, val, vlen) < 0)
		return reply_rc(c, cmd, -1, errno == ENOSPC ? "kvs_full" : "no_memory");
	return reply_rc(c, cmd, 0, NULL);
}

static int h_fence(pmi_conn_t *c, const struct pmi2_msg *m)
{
	pmi_server_t *s = c->s;

	(void)m;
	c->waiting = 1;
	if (++s->nwaiting >= s->cfg.nlocal)
		pmi_srv_start_fence(s);
	return 0;
}

void pmi2_srv_fence_out(pmi_conn_t *c)
{
	reply_rc(c, "kvs-fence-response", 0, NULL);
}

static int h_get(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "kvs-get-response";
	size_t klen, jlen, vlen = 0;
	const char *key = want_key(c, m, "key", cmd, &klen);
	const char *job = key ? pmi2_msg_get(m, "jobid", &jlen) : NULL;

	if (!key)
		return 0;
	if (job && jlen && strcmp(job, c->s->kvsname) != 0)
		return reply_rc(c, cmd, -1, "unknown_jobid");
	const char *v = pmi_kvs_get(c->s->kvs, key, klen, &vlen);
	return reply_found(c, cmd, v, vlen);
}

static int h_publish(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "name-publish-response";
	size_t nlen, plen;
	const char *name = pmi2_msg_get(m, "name", &nlen);
	const char *port = pmi2_msg_get(m, "port", &plen);

	int r;

	if (!name || !nlen || !port)
		return reply_rc(c, cmd, -1, name && nlen ? "missing_port" : "missing_name");
	if ((r = pmi_srv_names_ask(c, PMI_NAME_PUBLISH, name, nlen, port, plen)) != 0)
		return r < 0 ? -1 : 0;
	if (pmi_kvs_get(c->s->names, name, nlen, NULL))
		return reply_rc(c, cmd, -1, "already_published");
	if (pmi_kvs_set(c->s->names, name, nlen, port, plen) < 0)
		return reply_rc(c, cmd, -1, "table_full");
	return reply_rc(c, cmd, 0, NULL);
}

static int h_unpublish(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "name-unpublish-response";
	size_t nlen;
	const char *name = pmi2_msg_get(m, "name", &nlen);
	int r = name && nlen ? pmi_srv_names_ask(c, PMI_NAME_UNPUBLISH, name, nlen, NULL, 0) : 0;

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (!name || !nlen || pmi_kvs_del(c->s->names, name, nlen) < 0)
		return reply_rc(c, cmd, -1, name && nlen ? "not_found" : "missing_name");
	return reply_rc(c, cmd, 0, NULL);
}

static int h_lookup(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const char cmd[] = "name-lookup-response";
	size_t nlen, plen = 0;
	const char *name = pmi2_msg_get(m, "name", &nlen);
	int r = name && nlen ? pmi_srv_names_ask(c, PMI_NAME_LOOKUP, name, nlen, NULL, 0) : 0;
	struct pmi2_out o;

	if (r != 0)
		return r < 0 ? -1 : 0;
	const char *port = name && nlen ? pmi_kvs_get(c->s->names, name, nlen, &plen) : NULL;
	if (!port)
		return reply_rc(c, cmd, 1, name && nlen ? "not_found" : "missing_name");
	if (port[0] == '\x1b') { /* published over PMIx: the value alone */
		port = pmi_names_plain(port);
		plen = strlen(port);
	}
	pmi2_out_begin(&o, cmd);
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_addn(&o, "value", port, plen);
	return send_out(c, &o, cmd);
}

void pmi2_srv_names_done(pmi_conn_t *c, int op, int rc, const char *val)
{
	static const char *const cmds[] = {"", "name-publish-response", "name-unpublish-response",
	                                   "name-lookup-response"};
	const char *cmd = cmds[op >= 1 && op <= 3 ? op : 1];
	struct pmi2_out o;

	if (rc != 0 || op != PMI_NAME_LOOKUP) {
		reply_rc(c, cmd, rc ? (op == PMI_NAME_LOOKUP ? 1 : -1) : 0,
		         rc ? (val && *val ? val : "failed") : NULL);
		return;
	}
	pmi2_out_begin(&o, cmd);
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_add(&o, "value", val ? val : "");
	send_out(c, &o, cmd);
}

static int h_abort(pmi_conn_t *c, const struct pmi2_msg *m)
{
	const char *msg = pmi2_msg_get(m, "msg", NULL);
	int code = 1;

	/* PMI-2 carries no exit code; lamkit's libpmi adds exitcode= (others ignore it) */
	if (pmi2_msg_int(m, "exitcode", &code) < 0)
		code = 1;
	c->quiet = 1; /* no reply; ignore whatever the client still sends */
	c->s->ops.abort(c->s->arg, c, code, msg && *msg ? msg : NULL);
	return 0;
}

static int h_finalize(pmi_conn_t *c, const struct pmi2_msg *m)
{
	(void)m;
	c->finalized = 1;
	reply_rc(c, "finalize-response", 0, NULL);
	if (c->s && !c->doomed && c->s->ops.finalize)
		c->s->ops.finalize(c->s->arg, c);
	return 0;
}

/* lamkit-resource-register / -release-begin / -release-end;kind=K;name=N; */
static int h_resource(pmi_conn_t *c, const struct pmi2_msg *m)
{
	static const struct {
		const char *cmd, *resp;
		int op;
	} ops[] = {
	    {"lamkit-resource-register", "lamkit-resource-register-response", PMI_RES_REGISTER},
	    {"lamkit-resource-release-begin", "lamkit-resource-release-begin-response",
	     PMI_RES_RELEASE_BEGIN},
	    {"lamkit-resource-release-end", "lamkit-resource-release-end-response",
	     PMI_RES_RELEASE_END},
	};
	size_t i = 0, klen = 0, nlen = 0;
	const char *kind = pmi2_msg_get(m, "kind", &klen), *name = pmi2_msg_get(m, "name", &nlen);
	char why[64];

	while (i < 2 && strcmp(ops[i].cmd, pmi2_msg_cmd(m)) != 0)
		i++;
	if (pmi_srv_resource(c, ops[i].op, kind, klen, name, nlen, why, sizeof(why)) < 0)
		return reply_rc(c, ops[i].resp, -1, why);
	return reply_rc(c, ops[i].resp, 0, NULL);
}

/* {==== spawn: ncmds, preputcount, ppkeyI/ppvalI, then per command subcmd, maxprocs, argc,
 * argvI, [infokeycount, infokeyI/infovalI]. Pairs are read in order, as Slurm does. */

#define SPAWN_LIST_MAX 128

struct cursor {
	const struct pmi2_msg *m;
	size_t i;
};

/* The next pair, which must be named `key` (with index idx appended when idx >= 0). */
static const char *next_val(struct cursor *cur, const char *key, int idx)
{
	char want[PMI2_KEY_MAX + 16];

	if (cur->i >= cur->m->n)
		return NULL;
	if (idx >= 0)
		snprintf(want, sizeof(want), "%s%d", key, idx);
	else
		snprintf(want, sizeof(want), "%s", key);
	const struct pmi2_kv *kv = &cur->m->kv[cur->i];
	if (strcmp(kv->key, want) != 0)
		return NULL;
	cur->i++;
	return kv->val;
}

static int next_int(struct cursor *cur, const char *key, int lo, int hi, int *out)
{
	const char *v = next_val(cur, key, -1);

	if (!v || pmi_wire_parse_int(v, strlen(v), out) < 0 || *out < lo || *out > hi)
		return -1;
	return 0;
}

/* Parse one subcmd into cmd; its argv and info arrays are taken from the pointer pool at
 * *pool (advanced). 0, or -1 with why set. */
static int spawn_one(struct cursor *cur, struct pmi_spawn_cmd *cmd, char ***pool, char **end,
                     const char **why)
{
	int nprocs, argc, ninfo = 0;
	const char *exe = next_val(cur, "subcmd", -1);
	char **argv = *pool, **info;

	if (!exe || !*exe || next_int(cur, "maxprocs", 1, 1 << 20, &nprocs) < 0 ||
	    next_int(cur, "argc", 0, 1 << 30, &argc) < 0) {
		*why = "bad_subcmd";
		return -1;
	}
	if (argc > PMI_SPAWN_ARGS_MAX) {
		*why = "too_many_args";
		return -1;
	}
	if (argv + argc + 1 > end) {
		*why = "bad_argv";
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		argv[i] = (char *)next_val(cur, "argv", i);
		if (!argv[i]) {
			*why = "bad_argv";
			return -1;
		}
	}
	argv[argc] = NULL;
	info = argv + argc + 1;
	if (cur->i < cur->m->n && strcmp(cur->m->kv[cur->i].key, "infokeycount") == 0) {
		if (next_int(cur, "infokeycount", 0, SPAWN_LIST_MAX, &ninfo) < 0 ||
		    info + 2 * ninfo + 1 > end) {
			*why = "bad_infokeycount";
			return -1;
		}
		for (int i = 0; i < ninfo; i++) {
			info[2 * i] = (char *)next_val(cur, "infokey", i);
			info[2 * i + 1] = (char *)next_val(cur, "infoval", i);
			if (!info[2 * i] || !info[2 * i + 1]) {
				*why = "bad_info";
				return -1;
			}
		}
	}
	info[2 * ninfo] = NULL;
	*pool = info + 2 * ninfo + 1;
	*cmd = (struct pmi_spawn_cmd){exe, nprocs, argc, argv, ninfo, info};
	return 0;
}

static const char spawn_resp[] = "spawn-response";

void pmi2_srv_spawn_done(pmi_conn_t *c, int rc, const char *jobid, const char *why)
{
	struct pmi2_out o;

	if (rc != 0) {
		reply_rc(c, spawn_resp, -1, why && *why ? why : "spawn_failed");
		return;
	}
	pmi2_out_begin(&o, spawn_resp);
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_add(&o, "jobid", jobid ? jobid : "");
	send_out(c, &o, spawn_resp);
}

/* Refuse a request at once: rc=-1 with the reason, and one line for the user through
 * ops->refused (the bound passed, or which field was malformed). */
static int spawn_refuse(pmi_conn_t *c, const char *why)
{
	char line[96];

	if (!strcmp(why, "too_many_args"))
		snprintf(line, sizeof(line),
		         "a spawn command with more than %d arguments is over the bound",
		         PMI_SPAWN_ARGS_MAX);
	else
		snprintf(line, sizeof(line), "a malformed spawn request (%s)", why);
	if (c->s->ops.refused)
		c->s->ops.refused(c->s->arg, c, line);
	return reply_rc(c, spawn_resp, -1, why);
}

/* The whole request goes to ops->spawn in one call; it answers through
 * pmi_conn_spawn_done() (now or later), or refuses by returning nonzero. */
static int h_spawn(pmi_conn_t *c, const struct pmi2_msg *m)
{
	struct cursor cur = {m, 1};
	int ncmds, npre, rc = -1;
	const char *why = "bad_subcmd";
	char *pre[2 * SPAWN_LIST_MAX];

	if (c->spawn_wait)
		return pmi_srv_fail(c, "spawn before the previous spawn-response");
	/* libpmi's stand-in for a request too big for the framing: it says why */
	const char *over = pmi2_msg_get(m, "lamkit-over", NULL);
	if (over) {
		if (c->s->ops.refused)
			c->s->ops.refused(c->s->arg, c, over);
		return reply_rc(c, spawn_resp, -1, "request_too_big");
	}
	if (cur.i < m->n && strcmp(m->kv[cur.i].key, "thrid") == 0)
		cur.i++;
	if (next_int(&cur, "ncmds", 1, SPAWN_LIST_MAX, &ncmds) < 0 ||
	    next_int(&cur, "preputcount", 0, SPAWN_LIST_MAX, &npre) < 0)
		return spawn_refuse(c, "bad_ncmds_or_preputcount");
	for (int i = 0; i < npre; i++) {
		pre[2 * i] = (char *)next_val(&cur, "ppkey", i);
		pre[2 * i + 1] = (char *)next_val(&cur, "ppval", i);
		if (!pre[2 * i] || !pre[2 * i + 1])
			return spawn_refuse(c, "bad_preput");
	}
	/* every argv/info pointer comes from the message's pairs: m->n bounds them all */
	size_t npool = m->n + 2 * (size_t)ncmds + 1;
	struct pmi_spawn_cmd *cmds = calloc((size_t)ncmds, sizeof(*cmds));
	char **pool = calloc(npool, sizeof(*pool)), **p = pool;
	if (!cmds || !pool) {
		free(cmds);
		free(pool);
		return reply_rc(c, spawn_resp, -1, "out_of_memory");
	}
	for (int i = 0; i < ncmds; i++) {
		if (spawn_one(&cur, &cmds[i], &p, pool + npool, &why) < 0) {
			free(cmds);
			free(pool);
			return spawn_refuse(c, why);
		}
	}
	int served = c->s->ops.spawn != NULL;
	if (served) {
		c->spawn_wait = 1;
		rc = c->s->ops.spawn(c->s->arg, c, ncmds, cmds, npre, pre);
	}
	free(cmds);
	free(pool);
	if (rc != 0 && (c->spawn_wait || !served)) {
		c->spawn_wait = 0;
		if (c->doomed || !c->s)
			return 0;
		return reply_rc(c, spawn_resp, -1, served ? "spawn_failed" : "spawn_not_served");
	}
	return 0;
}

/* }==== */

typedef int (*h2_t)(pmi_conn_t *c, const struct pmi2_msg *m);

static const struct {
	const char *name;
	h2_t fn;
	int needs_init;
} handlers[] = {
    {"fullinit", h_fullinit, 0},
    {"job-getid", h_getid, 1},
    {"info-getjobattr", h_getjobattr, 1},
    {"info-putnodeattr", h_putnodeattr, 1},
    {"info-getnodeattr", h_getnodeattr, 1},
    {"kvs-put", h_put, 1},
    {"kvs-fence", h_fence, 1},
    {"kvs-get", h_get, 1},
    {"name-publish", h_publish, 1},
    {"name-unpublish", h_unpublish, 1},
    {"name-lookup", h_lookup, 1},
    {"spawn", h_spawn, 1},
    {"lamkit-resource-register", h_resource, 1},
    {"lamkit-resource-release-begin", h_resource, 1},
    {"lamkit-resource-release-end", h_resource, 1},
    {"abort", h_abort, 0},
    {"finalize", h_finalize, 1},
};

/* One complete message body. */
static int handle_msg(pmi_conn_t *c, const char *body, size_t len)
{
	struct pmi2_msg m;
	const char *why;
	char cmdname[80];
	int rc = 0;

	if (c->waiting || c->nawait)
		return pmi_srv_fail(c, "PMI-2 request while waiting in %s",
		                    c->waiting ? "kvs-fence" : "info-getnodeattr");
	if (c->finalized)
		return pmi_srv_fail(c, "PMI-2 request after finalize");
	if (pmi2_msg_parse(body, len, &m, &why) < 0) {
		reply_rc(c, "error", -1, why);
		return pmi_srv_fail(c, "malformed PMI-2 message (%s)", why);
	}
	const char *cmd = pmi2_msg_cmd(&m);
	size_t i, nh = sizeof(handlers) / sizeof(handlers[0]);
	for (i = 0; i < nh && strcmp(handlers[i].name, cmd) != 0; i++)
		;
	if (i == nh) {
		snprintf(cmdname, sizeof(cmdname), "%.63s-response", cmd);
		reply_rc(c, cmdname, -1, "unknown_command");
	} else if (handlers[i].needs_init && !c->v2full) {
		reply_rc(c, "error", -1, "fullinit_first");
		rc = pmi_srv_fail(c, "PMI-2 %.63s before fullinit", cmd);
	} else {
		rc = handlers[i].fn(c, &m);
	}
	pmi2_msg_free(&m);
	return rc;
}

int pmi2_srv_feed(pmi_conn_t *c, const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (c->hlen < PMI2_HDR_LEN) {
			size_t take = PMI2_HDR_LEN - c->hlen;
			take = take < len - i ? take : len - i;
			memcpy(c->hdr + c->hlen, buf + i, take);
			c->hlen += take;
			i += take;
			if (c->hlen < PMI2_HDR_LEN)
				return 0;
			long n = pmi2_hdr_parse(c->hdr);
			if (n <= 0)
				return pmi_srv_fail(c, "PMI-2 length header '%.6s' is not 1..%d",
				                    c->hdr, PMI2_MSG_MAX);
			c->mneed = (size_t)n;
			c->mlen = 0;
			free(c->mbuf);
			c->mbuf = malloc(c->mneed);
			if (!c->mbuf)
				return pmi_srv_fail(c, "out of memory for a PMI-2 message");
		}
		size_t take = c->mneed - c->mlen;
		take = take < len - i ? take : len - i;
		memcpy(c->mbuf + c->mlen, buf + i, take);
		c->mlen += take;
		i += take;
		if (c->mlen < c->mneed)
			return 0;
		c->hlen = 0;
		int rc = handle_msg(c, c->mbuf, c->mlen);
		free(c->mbuf);
		c->mbuf = NULL;
		if (rc < 0)
			return -1;
		if (c->quiet || c->doomed || !c->s)
			return 0;
	}
	return 0;
}

void pmi2_srv_conn_free(pmi_conn_t *c)
{
	free(c->mbuf);
	free(c->nawait);
	c->mbuf = NULL;
	c->nawait = NULL;
}
