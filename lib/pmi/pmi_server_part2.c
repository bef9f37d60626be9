/* lib/pmi/pmi_server_part2.c: the PMI-1 engine's requests beyond the KVS and the fence: the
 * name service (publish/lookup/unpublish), spawn blocks (mcmd=spawn), lamkit's resource
 * registration and topology. The core (lines, KVS, fence, connections) is pmi_server.c. */
#include "pmi_server.h"
#include "pmi_kvs.h"
#include "pmi_server_int.h"
#include "pmi_spawn.h"
#include "pmi_topo.h"
#include "pmi_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pmi_srv_names_ask(pmi_conn_t *c, int op, const char *name, size_t nlen, const char *port,
                      size_t plen)
{
	if (!c->s->ops.names)
		return 0;
	if (c->names_op)
		return pmi_srv_fail(c, "name-service request before the previous answer");
	char *n = strndup(name, nlen), *p = port ? strndup(port, plen) : NULL;
	if (!n || (port && !p)) {
		free(n);
		free(p);
		return pmi_srv_fail(c, "out of memory");
	}
	c->names_op = op;
	int rc = c->s->ops.names(c->s->arg, c, op, n, p);
	free(n);
	free(p);
	if (rc != 0) {
		c->names_op = 0;
		return 0;
	}
	return 1;
}

const char *pmi_names_plain(const char *val)
{
	if (!val || val[0] != '\x1b')
		return val;
	for (int i = 0; i < 3 && val; i++) {
		val = strchr(val, '\x1f');
		val = val ? val + 1 : NULL;
	}
	return val ? val : "";
}

int pmi_server_names(pmi_server_t *s, int op, const char *name, const char *port, const char **val,
                     const char **why)
{
	size_t n = strlen(name);

	*why = "not_found";
	if (op == PMI_NAME_LOOKUP)
		return (*val = pmi_kvs_get(s->names, name, n, NULL)) ? 0 : -1;
	if (op == PMI_NAME_UNPUBLISH)
		return pmi_kvs_del(s->names, name, n);
	if (pmi_kvs_get(s->names, name, n, NULL))
		return *why = "already_published", -1;
	if (pmi_kvs_set(s->names, name, n, port, strlen(port)) < 0)
		return *why = "table_full", -1;
	return 0;
}

int pmi_conn_names_done(pmi_conn_t *c, int rc, const char *val)
{
	if (!c || !c->names_op) {
		errno = EINVAL;
		return -1;
	}
	int op = c->names_op;
	const char *why = rc && val && *val ? val : "failed";
	if (rc == 0)
		val = pmi_names_plain(val);
	c->names_op = 0;
	if (c->v2)
		pmi2_srv_names_done(c, op, rc, val);
	else if (op == PMI_NAME_LOOKUP && rc == 0)
		pmi_srv_reply(c, "cmd=lookup_result port=%s rc=0 msg=success", val ? val : "");
	else if (op == PMI_NAME_LOOKUP)
		pmi_srv_reply(c, "cmd=lookup_result rc=1 msg=%s", why);
	else if (rc == 0)
		pmi_srv_reply(c, "cmd=%s_result rc=0 msg=success",
		              op == PMI_NAME_PUBLISH ? "publish" : "unpublish");
	else
		pmi_srv_reply(c, "cmd=%s_result rc=-1 msg=%s",
		              op == PMI_NAME_PUBLISH ? "publish" : "unpublish", why);
	return 0;
}

int pmi1_h_publish(pmi_conn_t *c, const char *line, size_t len)
{
	size_t slen, plen;
	const char *svc = pmi_wire_find(line, len, "service", &slen);
	const char *port = pmi_wire_find(line, len, "port", &plen);
	int r;

	if (!svc || !port || slen == 0)
		return pmi_srv_reply(c, "cmd=publish_result rc=-1 msg=missing_%s",
		                     svc ? "port" : "service");
	if ((r = pmi_srv_names_ask(c, PMI_NAME_PUBLISH, svc, slen, port, plen)) != 0)
		return r < 0 ? -1 : 0;
	if (pmi_kvs_get(c->s->names, svc, slen, NULL))
		return pmi_srv_reply(c, "cmd=publish_result rc=-1 msg=already_published");
	if (pmi_kvs_set(c->s->names, svc, slen, port, plen) < 0)
		return pmi_srv_reply(c, "cmd=publish_result rc=-1 msg=table_full");
	return pmi_srv_reply(c, "cmd=publish_result rc=0 msg=success");
}

int pmi1_h_lookup(pmi_conn_t *c, const char *line, size_t len)
{
	size_t slen;
	const char *svc = pmi_wire_find(line, len, "service", &slen);
	int r = svc && slen ? pmi_srv_names_ask(c, PMI_NAME_LOOKUP, svc, slen, NULL, 0) : 0;

	if (r != 0)
		return r < 0 ? -1 : 0;
	const char *port = svc && slen ? pmi_kvs_get(c->s->names, svc, slen, NULL) : NULL;
	if (!port)
		return pmi_srv_reply(c, "cmd=lookup_result rc=1 msg=%s",
		                     svc ? "not_found" : "missing_service");
	return pmi_srv_reply(c, "cmd=lookup_result port=%s rc=0 msg=success",
	                     pmi_names_plain(port));
}

int pmi1_h_unpublish(pmi_conn_t *c, const char *line, size_t len)
{
	size_t slen;
	const char *svc = pmi_wire_find(line, len, "service", &slen);
	int r = svc && slen ? pmi_srv_names_ask(c, PMI_NAME_UNPUBLISH, svc, slen, NULL, 0) : 0;

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (!svc || slen == 0 || pmi_kvs_del(c->s->names, svc, slen) < 0)
		return pmi_srv_reply(c, "cmd=unpublish_result rc=-1 msg=%s",
		                     svc ? "not_found" : "missing_service");
	return pmi_srv_reply(c, "cmd=unpublish_result rc=0 msg=success");
}

void pmi1_spawn_drop(pmi_conn_t *c)
{
	pmi_spawn_free(c->spawn);
	c->spawn = NULL;
	for (int i = 0; i < c->nsblk; i++)
		pmi_spawn_free(c->sblk[i]);
	c->nsblk = 0;
}

/* Refuse the request at once: rc=-1 with a one-word reason, and the line saying why to the
 * owner (ops->refused) so that the user sees more than a failed MPI_Comm_spawn. */
static int spawn_refuse(pmi_conn_t *c, const char *why, const char *detail)
{
	pmi_server_t *s = c->s;
	char line[96];

	if (!detail || !*detail) { /* a malformed block: say which field */
		snprintf(line, sizeof(line), "a malformed spawn request (%s)", why);
		detail = line;
	}
	if (s->ops.refused)
		s->ops.refused(s->arg, c, detail);
	pmi1_spawn_drop(c);
	return pmi_srv_reply(c, "cmd=spawn_result rc=-1 msg=%s", why);
}

/* endcmd: parse the block and keep it; once the last block of the request is in, hand the
 * whole request to ops->spawn, which answers now (refused) or later (pmi_conn_spawn_done). */
static int spawn_end(pmi_conn_t *c)
{
	struct pmi_spawn_req req[PMI_SPAWN_BLOCKS_MAX];
	struct pmi_spawn_cmd cmd[PMI_SPAWN_BLOCKS_MAX];
	char why[32], detail[96];
	pmi_server_t *s = c->s;
	int rc = -1;

	if (pmi_spawn_parse(c->spawn, &req[0], why, sizeof(why)) < 0)
		return spawn_refuse(c, why, pmi_spawn_detail(c->spawn));
	if (c->nsblk >= PMI_SPAWN_BLOCKS_MAX || req[0].totspawns > PMI_SPAWN_BLOCKS_MAX) {
		snprintf(detail, sizeof(detail),
		         "a spawn request of more than %d commands is over the bound",
		         PMI_SPAWN_BLOCKS_MAX);
		return spawn_refuse(c, "too_many_blocks", detail);
	}
	c->sblk[c->nsblk++] = c->spawn;
	c->spawn = NULL;
	if (req[0].spawnssofar < req[0].totspawns)
		return 0; /* more blocks of the same request follow */
	for (int i = 0; i < c->nsblk; i++) {
		pmi_spawn_parse(c->sblk[i], &req[i], why, sizeof(why)); /* parsed once already */
		cmd[i] = (struct pmi_spawn_cmd){req[i].exe,  req[i].nprocs, req[i].argc,
		                                req[i].argv, req[i].ninfo,  req[i].info};
	}
	if (!s->ops.spawn) {
		pmi1_spawn_drop(c);
		return pmi_srv_reply(c, "cmd=spawn_result rc=-1 msg=spawn_not_served");
	}
	c->spawn_wait = 1;
	rc = s->ops.spawn(s->arg, c, c->nsblk, cmd, req[0].npreput, req[0].preput);
	pmi1_spawn_drop(c);
	if (rc != 0 && c->spawn_wait) {
		c->spawn_wait = 0;
		return pmi_srv_reply(c, "cmd=spawn_result rc=-1 msg=spawn_failed");
	}
	return 0;
}

int pmi_conn_spawn_done(pmi_conn_t *c, int rc, const char *kvsname, const char *why)
{
	if (!c || !c->spawn_wait) {
		errno = EINVAL;
		return -1;
	}
	c->spawn_wait = 0;
	if (c->v2) {
		pmi2_srv_spawn_done(c, rc, kvsname, why);
		return 0;
	}
	if (rc == 0 && kvsname && *kvsname && !kvsname[strcspn(kvsname, " \n=")])
		pmi_srv_reply(c, "cmd=spawn_result rc=0 kvsname=%s",
		              kvsname); /* lamkit's addition */
	else if (rc == 0)
		pmi_srv_reply(c, "cmd=spawn_result rc=0");
	else
		pmi_srv_reply(c, "cmd=spawn_result rc=-1 msg=%s",
		              why && *why ? why : "spawn_failed");
	return 0;
}

/* The mcmd=spawn line: a new block. */
int pmi1_spawn_start(pmi_conn_t *c, const char *line, size_t len)
{
	if (c->spawn)
		return pmi_srv_fail(c, "mcmd=spawn inside a spawn block");
	if (c->spawn_wait)
		return pmi_srv_fail(c, "mcmd=spawn before the previous spawn_result");
	c->spawn = pmi_spawn_new();
	if (!c->spawn)
		return pmi_srv_fail(c, "out of memory for a spawn block");
	return pmi_spawn_first(c->spawn, line, len);
}

/* Bytes of a line inside a block (no '\n'); eol: the line ends after them. */
int pmi1_spawn_bytes(pmi_conn_t *c, const char *buf, size_t len, int eol)
{
	pmi_spawn_more(c->spawn, buf, len);
	if (eol && pmi_spawn_eol(c->spawn))
		return spawn_end(c);
	return 0;
}

int pmi_srv_resource(pmi_conn_t *c, int op, const char *kind, size_t klen, const char *name,
                     size_t nlen, char *why, size_t whylen)
{
	char k[16], n[PMI_RES_NAME_MAX + 1];

	if (!kind || !name || klen == 0 || nlen == 0) {
		snprintf(why, whylen, "%s", kind && klen ? "missing_name" : "missing_kind");
		return -1;
	}
	if (klen >= sizeof(k) || nlen > PMI_RES_NAME_MAX) {
		snprintf(why, whylen, "%s", klen >= sizeof(k) ? "unknown_kind" : "name_too_long");
		return -1;
	}
	if (!c->s->ops.resource) {
		snprintf(why, whylen, "not_served");
		return -1;
	}
	memcpy(k, kind, klen);
	k[klen] = '\0';
	memcpy(n, name, nlen);
	n[nlen] = '\0';
	why[0] = '\0';
	if (c->s->ops.resource(c->s->arg, c, op, k, n, why, whylen) == 0)
		return 0;
	if (!why[0])
		snprintf(why, whylen, "refused");
	return -1;
}

/* resource_register / resource_release_begin / resource_release_end kind=K name=N (rest of
 * the line: paths may hold spaces). */
static int h_resource(pmi_conn_t *c, const char *line, size_t len, int op, const char *result)
{
	size_t klen = 0, nlen = 0, nstart;
	const char *name = pmi_wire_find_rest(line, len, "name", &nlen, &nstart);
	const char *kind = pmi_wire_find(line, name ? nstart : len, "kind", &klen);
	char why[64];

	if (pmi_srv_resource(c, op, kind, klen, name, nlen, why, sizeof(why)) < 0)
		return pmi_srv_reply(c, "cmd=%s rc=-1 msg=%s", result, why);
	return pmi_srv_reply(c, "cmd=%s rc=0 msg=success", result);
}

int pmi1_h_res_reg(pmi_conn_t *c, const char *line, size_t len)
{
	return h_resource(c, line, len, PMI_RES_REGISTER, "resource_register_result");
}

int pmi1_h_res_begin(pmi_conn_t *c, const char *line, size_t len)
{
	return h_resource(c, line, len, PMI_RES_RELEASE_BEGIN, "resource_release_begin_result");
}

int pmi1_h_res_end(pmi_conn_t *c, const char *line, size_t len)
{
	return h_resource(c, line, len, PMI_RES_RELEASE_END, "resource_release_end_result");
}

/* lamkit_topo: the node's topology text the owner stored (doc/PROTOCOL-pmi.md part 5). */
int pmi1_h_topo(pmi_conn_t *c, const char *line, size_t len)
{
	size_t vlen;
	const char *v = pmi_kvs_get(c->s->nodeattr, PMI_TOPO_KEY, strlen(PMI_TOPO_KEY), &vlen);

	(void)line;
	(void)len;
	if (!v)
		return pmi_srv_reply(c, "cmd=lamkit_topo_result rc=-1 msg=not_known");
	return pmi_srv_reply(c, "cmd=lamkit_topo_result rc=0 msg=success value=%s", v);
}
