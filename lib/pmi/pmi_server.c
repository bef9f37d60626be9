/* lib/pmi/pmi_server.c: PMI server engine: PMI-1 lines, KVS, fence, conns; calls ops. */
#include "pmi_server.h"
#include "pmi_kvs.h"
#include "pmi_server_int.h"
#include "pmi_spawn.h"
#include "pmi_topo.h"
#include "pmi_wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_MAX (PMI_LINE_MAX + PMI_VALLEN_MAX + 128) /* longest line we send */
#define CMD_MAX   64                                    /* longest command name we accept */

/* ---- replies and errors ---- */

void pmi_srv_send(pmi_conn_t *c, const char *line, size_t len)
{
	if (c->s && !c->doomed)
		c->s->ops.send(c->s->arg, c, line, len);
}

/* Format one reply line (without '\n') and send it. 0, or -1 if it did not fit. */
int pmi_srv_reply(pmi_conn_t *c, const char *fmt, ...)
{
	char line[REPLY_MAX];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - 1) {
		errno = EMSGSIZE;
		return -1;
	}
	line[n++] = '\n';
	pmi_srv_send(c, line, (size_t)n);
	return 0;
}

/* The client broke the protocol: tell the owner once and stop reading from it. */
int pmi_srv_fail(pmi_conn_t *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int n = snprintf(msg, sizeof(msg), "pmi rank %d: ", c->rank);

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	if (!c->dead && c->s && !c->doomed) {
		c->dead = 1;
		c->s->ops.error(c->s->arg, c, msg);
	}
	c->dead = 1;
	errno = EPROTO;
	return -1;
}

/* ---- KVS helpers ---- */

/* 0 if the request names our KVS or none; otherwise reply rc=-1 and return 1. */
static int wrong_kvs(pmi_conn_t *c, const char *line, size_t len, const char *result)
{
	size_t n;
	const char *k = pmi_wire_find(line, len, "kvsname", &n);

	if (!k || (n == strlen(c->s->kvsname) && memcmp(k, c->s->kvsname, n) == 0))
		return 0;
	pmi_srv_reply(c, "cmd=%s rc=-1 msg=unknown_kvsname", result);
	return 1;
}

/* ---- command handlers: each returns 0, or -1 after fail() ---- */

static int h_init(pmi_conn_t *c, const char *line, size_t len)
{
	int ver = 0, sub = 0;

	if (pmi_wire_get_int(line, len, "pmi_version", &ver) < 0 || (ver != 1 && ver != 2)) {
		pmi_srv_reply(c, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=-1");
		return pmi_srv_fail(c, "init asks for PMI version %d; PMI-1 and PMI-2 are served",
		                    ver);
	}
	(void)pmi_wire_get_int(line, len, "pmi_subversion", &sub);
	if (ver == 2) { /* from the next byte on, the conn speaks PMI-2 (fullinit first) */
		c->v2 = 1;
		return pmi_srv_reply(c, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0");
	}
	c->initialized = 1;
	return pmi_srv_reply(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
}

static int h_maxes(pmi_conn_t *c, const char *line, size_t len)
{
	(void)line;
	(void)len;
	return pmi_srv_reply(c, "cmd=maxes kvsname_max=%d keylen_max=%d vallen_max=%d",
	                     PMI_KVSNAME_MAX, PMI_KEYLEN_MAX, PMI_VALLEN_MAX);
}

static int h_appnum(pmi_conn_t *c, const char *line, size_t len)
{
	int a = (c->rank >= 0 && c->s->appnum) ? c->s->appnum[c->rank] : 0;

	(void)line;
	(void)len;
	return pmi_srv_reply(c, "cmd=appnum appnum=%d", a);
}

static int h_kvsname(pmi_conn_t *c, const char *line, size_t len)
{
	(void)line;
	(void)len;
	return pmi_srv_reply(c, "cmd=my_kvsname kvsname=%s", c->s->kvsname);
}

static int h_usize(pmi_conn_t *c, const char *line, size_t len)
{
	(void)line;
	(void)len;
	return pmi_srv_reply(c, "cmd=universe_size size=%d", c->s->cfg.universe_size);
}

static int h_put(pmi_conn_t *c, const char *line, size_t len)
{
	size_t vlen, klen, vstart;
	const char *val = pmi_wire_find_rest(line, len, "value", &vlen, &vstart);
	const char *key = pmi_wire_find(line, val ? vstart : len, "key", &klen);
	pmi_server_t *s = c->s;

	if (!key || !val)
		return pmi_srv_reply(c, "cmd=put_result rc=-1 msg=missing_%s",
		                     key ? "value" : "key");
	if (wrong_kvs(c, line, vstart, "put_result"))
		return 0;
	if (klen > PMI_KEYLEN_MAX)
		return pmi_srv_reply(c, "cmd=put_result rc=-1 msg=key_too_long");
	if (klen == 0) /* MPICH's singleton upgrade puts an empty key: accept, store nothing */
		return pmi_srv_reply(c, "cmd=put_result rc=0 msg=success");
	if (pmi_kvs_set(s->kvs, key, klen, val, vlen) < 0 ||
	    pmi_kvs_set(s->delta, key, klen, val, vlen) < 0)
		return pmi_srv_reply(c, "cmd=put_result rc=-1 msg=%s",
		                     errno == ENOSPC ? "kvs_full" : "no_memory");
	return pmi_srv_reply(c, "cmd=put_result rc=0 msg=success");
}

static int h_get(pmi_conn_t *c, const char *line, size_t len)
{
	size_t klen, vlen;
	const char *key = pmi_wire_find(line, len, "key", &klen);

	if (!key)
		return pmi_srv_reply(c, "cmd=get_result rc=-1 msg=missing_key");
	if (wrong_kvs(c, line, len, "get_result"))
		return 0;
	const char *val = pmi_kvs_get(c->s->kvs, key, klen, &vlen);
	if (!val)
		return pmi_srv_reply(c, "cmd=get_result rc=-1 msg=key_not_found");
	if (pmi_srv_reply(c, "cmd=get_result rc=0 msg=success value=%s", val) < 0)
		return pmi_srv_reply(c, "cmd=get_result rc=-1 msg=value_too_long");
	return 0;
}

static int h_getbyidx(pmi_conn_t *c, const char *line, size_t len)
{
	const char *key, *val;
	int idx;

	if (pmi_wire_get_int(line, len, "idx", &idx) < 0 || idx < 0)
		return pmi_srv_reply(c, "cmd=getbyidx_results rc=-1 reason=bad_idx");
	if (wrong_kvs(c, line, len, "getbyidx_results"))
		return 0;
	if (pmi_kvs_at(c->s->kvs, (size_t)idx, &key, &val) < 0)
		return pmi_srv_reply(c, "cmd=getbyidx_results rc=-1 reason=no_more_keyvals");
	if (pmi_srv_reply(c, "cmd=getbyidx_results rc=0 nextidx=%d key=%s val=%s", idx + 1, key,
	                  val) < 0)
		return pmi_srv_reply(c, "cmd=getbyidx_results rc=-1 reason=value_too_long");
	return 0;
}

/* Every local rank is inside barrier_in: hand this agent's delta to the owner. */
void pmi_srv_start_fence(pmi_server_t *s)
{
	s->flen = 0;
	if (pmi_kvs_dump(s->delta, &s->fbuf, &s->flen, &s->fcap) < 0)
		s->flen = 0; /* out of memory: the fence still runs, without our entries */
	pmi_kvs_clear(s->delta);
	s->ops.fence(s->arg, s->fbuf ? s->fbuf : "", s->flen);
}

static int h_barrier(pmi_conn_t *c, const char *line, size_t len)
{
	pmi_server_t *s = c->s;

	(void)line;
	(void)len;
	c->waiting = 1;
	if (++s->nwaiting >= s->cfg.nlocal)
		pmi_srv_start_fence(s);
	return 0;
}

static int h_finalize(pmi_conn_t *c, const char *line, size_t len)
{
	(void)line;
	(void)len;
	c->finalized = 1;
	pmi_srv_reply(c, "cmd=finalize_ack");
	if (c->s && !c->doomed && c->s->ops.finalize)
		c->s->ops.finalize(c->s->arg, c);
	return 0;
}

static int h_abort(pmi_conn_t *c, const char *line, size_t len)
{
	char msg[PMI_LINE_MAX + 1];
	size_t mlen, mstart;
	const char *m = pmi_wire_find_rest(line, len, "error_msg", &mlen, &mstart);
	int code = 1;

	if (m) {
		memcpy(msg, m, mlen);
		msg[mlen] = '\0';
	}
	if (pmi_wire_get_int(line, m ? mstart : len, "exitcode", &code) < 0)
		code = 1;
	c->quiet = 1; /* no reply; ignore whatever the client still sends */
	c->s->ops.abort(c->s->arg, c, code, m ? msg : NULL);
	return 0;
}

int pmi_srv_rank_taken(const pmi_server_t *s, const pmi_conn_t *self, int rank)
{
	for (const pmi_conn_t *o = s->conns; o; o = o->next) {
		if (o != self && o->rank == rank)
			return 1;
	}
	return 0;
}

static int h_initack(pmi_conn_t *c, const char *line, size_t len)
{
	int id;

	if (pmi_wire_get_int(line, len, "pmiid", &id) < 0)
		return pmi_srv_fail(c, "initack without a numeric pmiid");
	if (id < 0 || id >= c->s->cfg.size)
		return pmi_srv_fail(c, "initack pmiid=%d out of range 0..%d", id,
		                    c->s->cfg.size - 1);
	if (c->rank >= 0 && c->rank != id)
		return pmi_srv_fail(c, "initack pmiid=%d on the connection of rank %d", id,
		                    c->rank);
	if (pmi_srv_rank_taken(c->s, c, id))
		return pmi_srv_fail(c, "initack pmiid=%d: rank already connected", id);
	c->rank = id;
	pmi_srv_reply(c, "cmd=initack");
	pmi_srv_reply(c, "cmd=set size=%d", c->s->cfg.size);
	pmi_srv_reply(c, "cmd=set rank=%d", id);
	return pmi_srv_reply(c, "cmd=set debug=0");
}

static int h_singinit(pmi_conn_t *c, const char *line, size_t len)
{
	int ver = 0;

	if (pmi_wire_get_int(line, len, "pmi_version", &ver) < 0 || ver != 1) {
		pmi_srv_reply(c, "cmd=singinit_info versionok=no stdio=no kvsname=%s",
		              c->s->kvsname);
		return pmi_srv_fail(c, "singinit asks for PMI version %d; only PMI-1 is served",
		                    ver);
	}
	if (c->rank < 0)
		c->rank = 0; /* a singleton is rank 0 of its own job */
	return pmi_srv_reply(c, "cmd=singinit_info versionok=yes stdio=no kvsname=%s",
	                     c->s->kvsname);
}

typedef int (*handler_t)(pmi_conn_t *c, const char *line, size_t len);

static const struct {
	const char *name;
	handler_t fn;
	int needs_init;
} handlers[] = {
    {"init", h_init, 0},
    {"initack", h_initack, 0},
    {"singinit", h_singinit, 0},
    {"get_maxes", h_maxes, 1},
    {"get_appnum", h_appnum, 1},
    {"get_my_kvsname", h_kvsname, 1},
    {"get_universe_size", h_usize, 1},
    {"put", h_put, 1},
    {"get", h_get, 1},
    {"getbyidx", h_getbyidx, 1},
    {"barrier_in", h_barrier, 1},
    {"finalize", h_finalize, 1},
    {"abort", h_abort, 0},
    {"publish_name", pmi1_h_publish, 1},
    {"lookup_name", pmi1_h_lookup, 1},
    {"unpublish_name", pmi1_h_unpublish, 1},
    {"resource_register", pmi1_h_res_reg, 1},
    {"resource_release_begin", pmi1_h_res_begin, 1},
    {"resource_release_end", pmi1_h_res_end, 1},
    {"lamkit_topo", pmi1_h_topo, 1},
};

static int valid_cmd(const char *cmd, size_t n)
{
	if (n == 0 || n > CMD_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = cmd[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

static int dispatch(pmi_conn_t *c, const char *line, size_t len)
{
	size_t n;
	const char *cmd = pmi_wire_find(line, len, "cmd", &n);

	if (!cmd || !valid_cmd(cmd, n))
		return pmi_srv_fail(c, "request without a valid cmd= field");
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
		if (strlen(handlers[i].name) != n || memcmp(handlers[i].name, cmd, n) != 0)
			continue;
		if (handlers[i].needs_init && !c->initialized)
			return pmi_srv_fail(c, "cmd=%.*s before cmd=init", (int)n, cmd);
		return handlers[i].fn(c, line, len);
	}
	return pmi_srv_reply(c, "cmd=%.*s_result rc=-1 msg=unknown_command", (int)n, cmd);
}

/* One complete line (no '\n'); the bytes were already checked to be printable. */
static int handle_line(pmi_conn_t *c, const char *line, size_t len)
{
	if (len == 0)
		return 0; /* blank lines carry nothing */
	if (c->waiting)
		return pmi_srv_fail(c, "request while waiting in a barrier");
	if (c->finalized)
		return pmi_srv_fail(c, "request after finalize");
	if (len >= 10 && memcmp(line, "mcmd=spawn", 10) == 0 && (len == 10 || line[10] == ' ')) {
		if (!c->initialized)
			return pmi_srv_fail(c, "mcmd=spawn before cmd=init");
		return pmi1_spawn_start(c, line, len);
	}
	return dispatch(c, line, len);
}

/* ---- connections ---- */

static void conn_free(pmi_conn_t *c)
{
	pmi1_spawn_drop(c);
	pmi2_srv_conn_free(c);
	free(c);
}

/* Consume buf[0..len): collect bytes into lines; stop on the first error. */
static int feed_bytes(pmi_conn_t *c, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)buf[i];
		if (c->spawn) { /* a block's lines may be longer: they go to it as they come */
			size_t k = i;
			while (k < len && buf[k] != '\n' && (unsigned char)buf[k] >= 0x20 &&
			       buf[k] != 0x7f)
				k++;
			if (k < len && buf[k] != '\n')
				return pmi_srv_fail(c, "binary byte 0x%02x in a request",
				                    (unsigned char)buf[k]);
			if (pmi1_spawn_bytes(c, buf + i, k - i, k < len) < 0)
				return -1;
			if (c->quiet || c->doomed || !c->s)
				return 0;
			i = k;
			continue;
		}
		if (ch == '\n') {
			size_t n = c->ilen;
			c->ilen = 0;
			if (handle_line(c, c->ibuf, n) < 0)
				return -1;
			if (c->quiet || c->doomed || !c->s)
				return 0;
			if (c->v2) /* init switched the conn: the rest is PMI-2 */
				return pmi2_srv_feed(c, buf + i + 1, len - i - 1);
			continue;
		}
		if (ch < 0x20 || ch == 0x7f)
			return pmi_srv_fail(c, "binary byte 0x%02x in a request", ch);
		if (c->ilen >= PMI_LINE_MAX)
			return pmi_srv_fail(c, "request line longer than %d bytes", PMI_LINE_MAX);
		c->ibuf[c->ilen++] = (char)ch;
	}
	return 0;
}

int pmi_conn_feed(pmi_conn_t *c, const char *buf, size_t len)
{
	if (!c || (!buf && len)) {
		errno = EINVAL;
		return -1;
	}
	if (c->dead || c->doomed || !c->s) {
		errno = EPROTO;
		return -1;
	}
	if (c->quiet)
		return 0;
	c->busy++;
	int rc = c->v2 ? pmi2_srv_feed(c, buf, len) : feed_bytes(c, buf, len);
	c->busy--;
	if (c->doomed && c->busy == 0) {
		conn_free(c);
		return rc;
	}
	return rc;
}

pmi_conn_t *pmi_conn_create(pmi_server_t *s, int rank)
{
	if (!s || rank < -1 || rank >= s->cfg.size) {
		errno = EINVAL;
		return NULL;
	}
	pmi_conn_t *c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->s = s;
	c->rank = rank;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	return c;
}

/* Take c out of its server's list and barrier count. */
static void conn_unlink(pmi_conn_t *c)
{
	pmi_server_t *s = c->s;

	if (!s)
		return;
	if (c->waiting)
		s->nwaiting--;
	c->waiting = 0;
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
	c->s = NULL;
}

void pmi_conn_destroy(pmi_conn_t *c)
{
	int saved = errno;

	if (c) {
		conn_unlink(c);
		if (c->busy)
			c->doomed = 1; /* inside pmi_conn_feed: freed when it returns */
		else
			conn_free(c);
	}
	errno = saved;
}

void pmi_conn_start_singinit(pmi_conn_t *c)
{
	if (c && c->s)
		pmi_srv_reply(c,
		              "cmd=singinit pmi_version=1 pmi_subversion=1 stdio=no authtype=none");
}

int pmi_conn_rank(const pmi_conn_t *c)
{
	return c->rank;
}

int pmi_conn_initialized(const pmi_conn_t *c)
{
	return c->initialized;
}

int pmi_conn_finalized(const pmi_conn_t *c)
{
	return c->finalized;
}

void pmi_conn_set_data(pmi_conn_t *c, void *data)
{
	c->data = data;
}

void *pmi_conn_data(const pmi_conn_t *c)
{
	return c->data;
}

/* ---- the server ---- */

static int cfg_ok(const struct pmi_server_cfg *cfg, const struct pmi_server_ops *ops)
{
	if (!cfg || !ops || !ops->send || !ops->fence || !ops->abort || !ops->error)
		return 0;
	if (!cfg->kvsname || !*cfg->kvsname || strlen(cfg->kvsname) >= PMI_KVSNAME_MAX ||
	    strpbrk(cfg->kvsname, " \n"))
		return 0;
	return cfg->size > 0 && cfg->nlocal > 0 && cfg->nlocal <= cfg->size;
}

pmi_server_t *pmi_server_create(const struct pmi_server_cfg *cfg, const struct pmi_server_ops *ops,
                                void *arg)
{
	if (!cfg_ok(cfg, ops)) {
		errno = EINVAL;
		return NULL;
	}
	pmi_server_t *s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->cfg = *cfg;
	s->ops = *ops;
	s->arg = arg;
	s->kvsname = strdup(cfg->kvsname);
	if (cfg->spawner && *cfg->spawner && !(s->spawner = strdup(cfg->spawner))) {
		pmi_server_destroy(s);
		errno = ENOMEM;
		return NULL;
	}
	s->kvs = pmi_kvs_create();
	s->delta = pmi_kvs_create();
	s->names = pmi_kvs_create();
	s->nodeattr = pmi_kvs_create();
	if (cfg->appnum) {
		s->appnum = malloc((size_t)cfg->size * sizeof(int));
		if (s->appnum)
			memcpy(s->appnum, cfg->appnum, (size_t)cfg->size * sizeof(int));
	}
	if (!s->kvsname || !s->kvs || !s->delta || !s->names || !s->nodeattr ||
	    (cfg->appnum && !s->appnum)) {
		pmi_server_destroy(s);
		errno = ENOMEM;
		return NULL;
	}
	s->cfg.kvsname = s->kvsname;
	s->cfg.spawner = s->spawner;
	s->cfg.appnum = s->appnum;
	return s;
}

void pmi_server_destroy(pmi_server_t *s)
{
	int saved = errno;

	if (!s)
		return;
	while (s->conns)
		pmi_conn_destroy(s->conns);
	pmi_kvs_destroy(s->kvs);
	pmi_kvs_destroy(s->delta);
	pmi_kvs_destroy(s->names);
	pmi_kvs_destroy(s->nodeattr);
	free(s->fbuf);
	free(s->appnum);
	free(s->kvsname);
	free(s->spawner);
	free(s);
	errno = saved;
}

/* Store key=val in kvs for the owner; keys with one of the bad characters are refused. */
static int owner_set(pmi_kvs_t *kvs, const char *key, const char *val, const char *bad)
{
	if (!kvs || !key || !val || !*key || strlen(key) > PMI_KEYLEN_MAX ||
	    strlen(val) > PMI_VALLEN_MAX || strpbrk(key, bad)) {
		errno = EINVAL;
		return -1;
	}
	return pmi_kvs_set(kvs, key, strlen(key), val, strlen(val));
}

int pmi_server_preput(pmi_server_t *s, const char *key, const char *val)
{
	return owner_set(s ? s->kvs : NULL, key, val, " \n");
}

int pmi_server_nodeattr(pmi_server_t *s, const char *key, const char *val)
{
	return owner_set(s ? s->nodeattr : NULL, key, val, " \n;=");
}

int pmi_server_fence_done(pmi_server_t *s, const char *entries, size_t len)
{
	if (!s) {
		errno = EINVAL;
		return -1;
	}
	if (pmi_kvs_load(s->kvs, entries, len) < 0)
		return -1;
	pmi_conn_t *next;
	for (pmi_conn_t *c = s->conns; c; c = next) {
		next = c->next;
		if (!c->waiting)
			continue;
		c->waiting = 0;
		s->nwaiting--;
		if (c->v2)
			pmi2_srv_fence_out(c);
		else
			pmi_srv_reply(c, "cmd=barrier_out");
	}
	return 0;
}
