/* lib/boot/jobctl_spawn.c: PMI spawn served by mpiexec's job controller: a rank's request
 * (BOOT_MSG_SPAWN from its agent) becomes a new job of the same family, placed on the free
 * slots of the universe (or of the --local-agents nodes; with one local agent, on this host),
 * started through the same agents with its own KVS holding the spawner's preput keys, and
 * answered (BOOT_MSG_SPAWN_REPLY) once every agent has forked its ranks. A spawned job shares
 * mpiexec's loop, output and failure policy: its failure ends the whole family with one line.
 * Protocol: doc/PROTOCOL-agent.md, "Spawn". */
#include "core.h"
#include "jobctl_internal.h"
#include "spawn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPAWN_MAX_PROCS (1 << 20)

static void reply(struct agent *a, int rank, int rc, const char *s)
{
	struct core_wbuf w = {0};

	if (!a || a->done || !a->link)
		return; /* the spawning rank's agent is gone: nobody waits */
	core_w_u32(&w, a->c->o->js->jobid);
	core_w_u32(&w, (uint32_t)rank);
	core_w_u32(&w, (uint32_t)rc);
	core_w_str(&w, s);
	if (!w.err)
		boot_link_send(a->link, BOOT_MSG_SPAWN_REPLY, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

/* Strings read from the frame (pointing into it) as a NULL-terminated vector. */
static char **r_strs(struct core_rbuf *r, int *np, int extra_front)
{
	uint32_t n = core_r_u32(r);

	if (r->err || n > (r->len - r->off) / 5) {
		r->err = 1;
		return NULL;
	}
	char **v = calloc(n + (uint32_t)extra_front + 1, sizeof *v);
	if (!v) {
		r->err = 1;
		return NULL;
	}
	for (uint32_t i = 0; i < n && !r->err; i++)
		v[i + (uint32_t)extra_front] = (char *)core_r_str(r);
	*np = (int)n;
	return v;
}

static const char *info_get(char **info, int n, const char *key)
{
	for (int i = 0; i + 1 < n; i += 2)
		if (!strcmp(info[i], key))
			return info[i + 1];
	return NULL;
}

static char *dupf(const char *fmt, const char *a, const char *b)
{
	size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, fmt, a, b);
	return s;
}

static void free_js(struct boot_jobspec *js)
{
	free(js->kvsname);
	free(js->wdir);
	for (int a = 0; js->apps && a < js->napps; a++) {
		struct boot_app *ap = &js->apps[a];
		for (int i = 0; ap->argv && i < ap->argc; i++)
			free(ap->argv[i]);
		free(ap->argv);
		free(ap->wdir);
		core_strv_free(ap->env, ap->nenv);
	}
	free(js->apps);
	core_strv_free(js->preput, js->npreput);
	free(js->spawner);
	free(js->ranks);
	free(js->process_mapping);
	/* js->env is the family's (borrowed) */
	memset(js, 0, sizeof *js);
}

void boot_ctl_spawn_free(struct ctl *sub)
{
	free_js(&sub->own_js);
	free(sub);
}

/* One app of the request into js->apps[i]. 0, or -1 with r->err or errno. */
static int read_app(struct core_rbuf *r, struct boot_jobspec *js, int i, const char *path_env,
                    const char **host)
{
	struct boot_app *ap = &js->apps[i];
	const char *exe = core_r_str(r);
	int nprocs = (int)core_r_u32(r), argc = 0, ninfo = 0;
	char **argv = r_strs(r, &argc, 1);
	char **info = r_strs(r, &ninfo, 0);
	int rc = -1;

	if (r->err || !argv || !info || !*exe || nprocs < 1 ||
	    nprocs > SPAWN_MAX_PROCS - js->size) {
		r->err = 1;
		goto out;
	}
	argv[0] = (char *)exe;
	ap->argc = argc + 1;
	ap->argv = calloc((size_t)ap->argc + 1, sizeof *ap->argv);
	ap->exe = NULL;
	for (int k = 0; ap->argv && k < ap->argc; k++)
		if (!(ap->argv[k] = strdup(argv[k])))
			goto out;
	if (!ap->argv)
		goto out;
	ap->exe = ap->argv[0];
	ap->nprocs = nprocs;
	ap->first_rank = js->size;
	js->size += nprocs;
	const char *w = info_get(info, ninfo, "wdir"), *p = info_get(info, ninfo, "path");
	if (w && !(ap->wdir = strdup(w)))
		goto out;
	const char *env = info_get(info, ninfo, "env");
	int nenv = 1;
	for (const char *q = env; q && *q; q++)
		nenv += *q == '\n';
	if (!(ap->env = calloc((size_t)nenv + 2, sizeof *ap->env)))
		goto out;
	if (p && *p) { /* MPI's "path": directories searched before the ranks' PATH */
		if (!(ap->env[ap->nenv] = dupf("PATH=%s:%s", p, path_env)))
			goto out;
		ap->nenv++;
	}
	/* "env": variables for the ranks, one per line (Open MPI's info key; PMIx_Spawn's
	 * app environment comes this way) */
	for (const char *q = env; q && *q;) {
		size_t k = strcspn(q, "\n");
		if (k && memchr(q, '=', k) && !(ap->env[ap->nenv++] = strndup(q, k)))
			goto out;
		q += k + (q[k] == '\n');
	}
	const char *h = info_get(info, ninfo, "host");
	if (h && !*host)
		*host = h;
	rc = 0;
out:
	free(argv);
	free(info);
	return rc;
}

/* The request as a job spec of the family (env borrowed from mpiexec's job). 0, or -1 with a
 * reason in err. */
static int read_request(struct ctl *c, struct core_rbuf *r, struct boot_jobspec *js,
                        const char **host, char *err, size_t errlen)
{
	struct ctl *root = boot_ctl_root(c);
	const struct boot_jobspec *pj = c->o->js, *rj = root->o->js;
	int ncmds = (int)core_r_u32(r);
	/* the PATH the ranks would get without the info key (boot_spawn_resolve's default
	 * when the job passes none) */
	const char *path_env = BOOT_SPAWN_DEFAULT_PATH;

	for (int i = 0; i < rj->nenv; i++)
		if (!strncmp(rj->env[i], "PATH=", 5))
			path_env = rj->env[i] + 5;
	if (r->err || ncmds < 1 || ncmds > 4096)
		return core_errprintf(err, errlen, "malformed spawn request");
	js->jobid = (rj->jobid + 1 + (uint32_t)root->nsubs) & 0x7fffffffu;
	if (!js->jobid)
		js->jobid = 1;
	char num[16];
	snprintf(num, sizeof num, "%d", root->nsubs + 1);
	js->kvsname = dupf("%s_s%s", rj->kvsname, num);
	js->spawner = strdup(pj->kvsname);
	js->wdir = strdup(pj->wdir);
	js->apps = calloc((size_t)ncmds, sizeof *js->apps);
	if (!js->kvsname || !js->spawner || !js->wdir || !js->apps)
		return core_errprintf(err, errlen, "out of memory");
	js->napps = ncmds;
	for (int i = 0; i < ncmds; i++)
		if (read_app(r, js, i, path_env, host) < 0)
			return core_errprintf(err, errlen,
			                      r->err ? "malformed spawn request" : "out of memory");
	int npre = 0;
	char **pre = r_strs(r, &npre, 0);
	if (r->err || !pre || npre % 2) {
		free(pre);
		return core_errprintf(err, errlen, "malformed spawn request");
	}
	js->preput = calloc((size_t)npre + 1, sizeof *js->preput);
	for (int i = 0; js->preput && i < npre; i++)
		if (!(js->preput[js->npreput++] = strdup(pre[i])))
			break;
	free(pre);
	if (!js->preput || js->npreput != npre)
		return core_errprintf(err, errlen, "out of memory");
	js->universe_size = root->placed ? root->universe_size : rj->universe_size;
	if (js->universe_size < js->size)
		js->universe_size = js->size;
	js->tag_output = rj->tag_output;
	js->mpi_kind = rj->mpi_kind; /* --mpi pmix: the children are PMIx clients too */
	js->pmi_port = rj->pmi_port;
	js->bind = rj->bind;
	js->env = rj->env;
	js->nenv = rj->nenv;
	js->names_at = rj->names_at; /* borrowed, like env */
	return 0;
}

/* {==== placement on the free slots */

static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && !strncmp(p, name, n))
			return 1;
		p += k + (p[k] == ',');
	}
	return 0;
}

/* Ranks of the family still running on each node. */
static void count_used(struct ctl *c, int *used, int nnodes)
{
	for (int i = 0; c->placed && i < c->nag; i++)
		if (!c->ag[i].done && c->ag[i].node >= 0 && c->ag[i].node < nnodes)
			used[c->ag[i].node] += c->ag[i].nranks;
	for (int k = 0; k < c->nsubs; k++)
		count_used(c->subs[k], used, nnodes);
}

/* Turn nodes' cpus into their free slots and *hosts into the named nodes that have any. n must
 * fit in the free slots of the nodes that may take ranks. 0, or -1 with err. */
static int free_slots(struct ctl *root, struct boot_place_node *nodes, int nnodes, int n,
                      char **hosts, char *err, size_t errlen)
{
	int *used = calloc((size_t)nnodes, sizeof *used);
	long total = 0, nfree = 0, inuse = 0;
	size_t cap = (*hosts ? strlen(*hosts) : 0) + 2, len = 0;
	char *keep = calloc(cap, 1);

	if (!used || !keep) {
		free(used);
		free(keep);
		return core_errprintf(err, errlen, "out of memory");
	}
	count_used(root, used, nnodes);
	for (int k = 0; k < nnodes; k++) {
		int slots = nodes[k].cpus < 1 ? 1 : nodes[k].cpus;
		int ok = *hosts ? in_list(*hosts, nodes[k].host) : nodes[k].schedule != 0;
		int fr = slots > used[k] ? slots - used[k] : 0;
		if (!ok)
			continue;
		total += slots;
		inuse += used[k];
		nfree += fr;
		nodes[k].cpus = fr;
		if (fr == 0)
			nodes[k].schedule = 0;
	}
	/* the filter keeps its order, less the full nodes; a name that is no node is an error */
	for (const char *p = *hosts; p && *p;) {
		size_t k = strcspn(p, ",");
		int i = 0;
		while (i < nnodes && (strlen(nodes[i].host) != k || strncmp(p, nodes[i].host, k)))
			i++;
		if (i == nnodes) {
			free(used);
			free(keep);
			return core_errprintf(err, errlen,
			                      "info host: %.*s is not a node of the universe "
			                      "('lamkit nodes' lists them)",
			                      (int)k, p);
		}
		if (nodes[i].cpus > 0 && len + k + 1 < cap)
			len += (size_t)snprintf(keep + len, cap - len, "%s%.*s", len ? "," : "",
			                        (int)k, p);
		p += k + (p[k] == ',');
	}
	free(used);
	if (n > nfree) {
		free(keep);
		return core_errprintf(err, errlen,
		                      "%d process%s do%s not fit in the %ld free slot%s of %s (%ld "
		                      "slots, %ld in use by this job)",
		                      n, n == 1 ? "" : "es", n == 1 ? "es" : "", nfree,
		                      nfree == 1 ? "" : "s", *hosts ? *hosts : "the universe",
		                      total, inuse);
	}
	if (*hosts)
		*hosts = keep;
	else
		free(keep);
	return 0;
}

/* ====} */

/* A spawned job's controller, sharing the family's loop. NULL on ENOMEM. */
static struct ctl *new_sub(struct ctl *root, struct agent *req, int rank)
{
	struct ctl *sub = calloc(1, sizeof *sub);
	struct ctl **subs = realloc(root->subs, (size_t)(root->nsubs + 1) * sizeof *subs);

	if (!subs || !sub) {
		free(sub);
		return NULL;
	}
	root->subs = subs;
	sub->parent = req->c;
	sub->own_o = *root->o;
	sub->own_o.js = &sub->own_js;
	sub->own_o.singinit_fd = -1;
	sub->o = &sub->own_o;
	sub->ev = root->ev;
	sub->u = root->u;
	sub->local_k = root->local_k;
	sub->local_slots = root->local_slots;
	sub->req_ag = req;
	sub->req_rank = rank;
	snprintf(sub->label, sizeof sub->label, "spawned job %d: ", root->nsubs + 1);
	return sub;
}

static int sub_alloc(struct ctl *sub)
{
	const struct boot_jobspec *js = &sub->own_js;

	sub->out = boot_outbuf_create(js->size, js->tag_output);
	sub->pids = calloc((size_t)js->size, sizeof *sub->pids);
	return sub->out && sub->pids ? 0 : -1;
}

/* One local agent for the whole job, on this host. */
static int local_one(struct ctl *sub, const char *host, char *err, size_t errlen)
{
	struct boot_jobspec *js = &sub->own_js;
	char map[64];

	if (host && strcmp(host, core_hostname()) && strcmp(host, "localhost"))
		return core_errprintf(err, errlen,
		                      "host %s: no universe is booted, spawned ranks run on %s "
		                      "only",
		                      host, core_hostname());
	snprintf(map, sizeof map, "(vector,(0,1,%d))", js->size);
	js->process_mapping = strdup(map);
	js->ranks = calloc((size_t)js->size, sizeof *js->ranks);
	sub->ag = calloc(1, sizeof *sub->ag);
	if (!js->process_mapping || !js->ranks || !sub->ag)
		return core_errprintf(err, errlen, "out of memory");
	for (int i = 0; i < js->size; i++)
		js->ranks[i] = i;
	js->nranks = js->size;
	js->nagents = 1;
	sub->nag = 1;
	sub->ag[0] = (struct agent){.c = sub, .pid = -1, .fd = -1};
	snprintf(sub->ag[0].host, sizeof sub->ag[0].host, "%s", core_hostname());
	sub->host_from_hello = 1;
	return 0;
}

void boot_ctl_spawn(struct agent *a, struct core_rbuf *r)
{
	struct ctl *c = a->c, *root = boot_ctl_root(c);
	int rank = (int)core_r_u32(r);
	const char *host = NULL;
	char err[1024] = "", *hosts = NULL;
	struct boot_place_node *nodes = NULL;
	int nnodes = 0;

	if (r->err || rank < 0 || rank >= c->o->js->size || root->failed || root->killed)
		return;
	struct core_rbuf peek = *r;
	if (core_r_u32(&peek) == 0 && !peek.err) { /* no commands: the agent refused it */
		const char *why = core_r_str(&peek);
		if (!peek.err)
			boot_ctl_msg(c, "%srank %d on %s cannot spawn: %s", c->label, rank, a->host,
			             why);
		return;
	}
	struct ctl *sub = new_sub(root, a, rank);
	if (!sub) {
		reply(a, rank, -1, "out_of_memory");
		return;
	}
	if (read_request(c, r, &sub->own_js, &host, err, sizeof err) < 0)
		goto refused;
	if (!root->u && !root->local_k) {
		if (local_one(sub, host, err, sizeof err) < 0)
			goto refused;
	} else {
		nnodes = root->u ? root->u->nnodes : root->local_k;
		nodes = root->u ? boot_universe_place_nodes(root->u)
		                : boot_local_agent_nodes(root->local_k, root->local_slots);
		hosts = (char *)host;
		if (!nodes) {
			snprintf(err, sizeof err, "out of memory");
			goto refused;
		}
		if (free_slots(root, nodes, nnodes, sub->own_js.size, &hosts, err, sizeof err) < 0)
			goto refused;
	}
	if (sub_alloc(sub) < 0) {
		snprintf(err, sizeof err, "out of memory");
		goto refused;
	}
	root->subs[root->nsubs++] = sub;
	const char *exe = sub->own_js.apps[0].exe, *base = strrchr(exe, '/');
	snprintf(sub->label, sizeof sub->label, "spawned job %d (%.30s): ", root->nsubs,
	         base ? base + 1 : exe);
	if (c->o->verbose)
		boot_ctl_msg(c, "%srank %d on %s spawns job %d: %d rank%s of %s", c->label, rank,
		             a->host, root->nsubs, sub->own_js.size,
		             sub->own_js.size == 1 ? "" : "s", exe);
	struct boot_place_opts po = {.hosts = hosts};
	int rc = boot_ctl_start(sub, nodes, nnodes, &po, root->u);
	if (hosts != host)
		free(hosts);
	if (rc < 0) /* said; the family cannot go on as its ranks expect */
		boot_ctl_fail(sub, sub->exit_code ? sub->exit_code : CORE_EXIT_SYSTEM,
		              "could not be started");
	return;
refused:
	boot_ctl_msg(c, "%srank %d on %s cannot spawn: %s", c->label, rank, a->host, err);
	reply(a, rank, -1, "spawn_refused");
	free(nodes);
	if (hosts != host)
		free(hosts);
	free(sub->ag);
	boot_ctl_spawn_free(sub);
}

void boot_ctl_spawn_started(struct agent *a)
{
	struct ctl *sub = a->c;

	a->ran = 1;
	for (int i = 0; i < sub->nag; i++)
		if (!sub->ag[i].ran)
			return;
	if (sub->replied)
		return;
	sub->replied = 1;
	reply(sub->req_ag, sub->req_rank, 0, sub->own_js.kvsname);
}
