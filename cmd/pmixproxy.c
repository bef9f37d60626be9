/* cmd/pmixproxy.c: `lamkit pmix-proxy` (hidden): libpmi's way onto a PMIx launcher. A rank of
 * lamkit's MPI (or any libpmi program) that finds PMIx variables and no PMI ones runs this
 * helper with one end of a socketpair as fd 3 (lib/pmi/pmi_client_pmix.c); the helper is the
 * rank's PMIx client (OpenPMIx, built into this binary, with the rank's environment) and
 * answers the rank's PMI-2 requests on fd 3 with PMIx calls: put/fence/get, the job's facts,
 * abort, finalize. So a static lamkit MPI program needs nothing installed on the node. */
#include "cmd.h"
#include "core.h"
#include "pmi2_wire.h"

#include <errno.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_PREFIX "lkpmi:" /* PMIx reserves keys that start with "pmix" */

static pmix_proc_t me;
static uint32_t jsize, usize, appnum;

static int read_all(int fd, char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int send_out(int fd, struct pmi2_out *o)
{
	long n = pmi2_out_finish(o);
	int rc = n < 0 || core_write_all(fd, o->buf, (size_t)n) < 0 ? -1 : 0;

	pmi2_out_free(o);
	return rc;
}

static int reply_rc(int fd, const char *cmd, int rc, const char *errmsg)
{
	struct pmi2_out o = {0};

	pmi2_out_begin(&o, cmd);
	pmi2_out_addi(&o, "rc", rc);
	if (errmsg)
		pmi2_out_add(&o, "errmsg", errmsg);
	return send_out(fd, &o);
}

static int reply_found(int fd, const char *cmd, const char *val)
{
	struct pmi2_out o = {0};

	pmi2_out_begin(&o, cmd);
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_add(&o, "found", val ? "TRUE" : "FALSE");
	if (val)
		pmi2_out_add(&o, "value", val);
	return send_out(fd, &o);
}

static int get_u32(pmix_rank_t rank, const char *key, uint32_t *out)
{
	pmix_proc_t p;
	pmix_value_t *v = NULL;
	int rc = -1;

	PMIX_LOAD_PROCID(&p, me.nspace, rank);
	if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
		return -1;
	if (v->type == PMIX_UINT32 || v->type == PMIX_INT)
		*out = v->data.uint32, rc = 0;
	else if (v->type == PMIX_UINT16)
		*out = v->data.uint16, rc = 0;
	PMIX_VALUE_RELEASE(v);
	return rc;
}

/* MPICH's (vector,(start,nodes,ppn),...) from every rank's PMIX_NODEID: runs of ranks on one
 * node, and runs of such runs on consecutive nodes with the same count, compressed. */
static int mapping(char *out, size_t len)
{
	int start = -1, nodes = 0, ppn = 0, cur = -1, cnt = 0;
	size_t off = (size_t)snprintf(out, len, "(vector");

	for (uint32_t r = 0; r <= jsize; r++) {
		uint32_t n = 0;
		if (r < jsize && get_u32(r, PMIX_NODEID, &n) < 0)
			return -1;
		if (r < jsize && (int)n == cur) {
			cnt++;
			continue;
		}
		if (cur >= 0) { /* the run of cnt ranks on node cur ended */
			if (start >= 0 && ppn == cnt && cur == start + nodes) {
				nodes++;
			} else {
				if (start >= 0)
					off +=
					    (size_t)snprintf(out + off, off < len ? len - off : 0,
					                     ",(%d,%d,%d)", start, nodes, ppn);
				start = cur, nodes = 1, ppn = cnt;
			}
		}
		cur = (int)n;
		cnt = 1;
	}
	if (start >= 0)
		off += (size_t)snprintf(out + off, off < len ? len - off : 0, ",(%d,%d,%d)", start,
		                        nodes, ppn);
	off += (size_t)snprintf(out + off, off < len ? len - off : 0, ")");
	return off < len ? 0 : -1;
}

static int h_get(int fd, const struct pmi2_msg *m)
{
	const char *key = pmi2_msg_get(m, "key", NULL);
	int src = -1;
	char k[PMI2_KEY_MAX + sizeof KEY_PREFIX + 1];
	pmix_proc_t p;
	pmix_value_t *v = NULL;
	pmix_info_t to;
	int secs = 10;

	if (!key)
		return reply_rc(fd, "kvs-get-response", -1, "missing_key");
	pmi2_msg_int(m, "srcid", &src);
	snprintf(k, sizeof k, KEY_PREFIX "%s", key);
	PMIX_LOAD_PROCID(&p, me.nspace, src >= 0 ? (pmix_rank_t)src : PMIX_RANK_UNDEF);
	PMIX_INFO_LOAD(&to, PMIX_TIMEOUT, &secs, PMIX_INT);
	pmix_status_t st = PMIx_Get(&p, k, &to, 1, &v);
	PMIX_INFO_DESTRUCT(&to);
	int rc =
	    reply_found(fd, "kvs-get-response",
	                st == PMIX_SUCCESS && v && v->type == PMIX_STRING ? v->data.string : NULL);
	if (v)
		PMIX_VALUE_RELEASE(v);
	return rc;
}

static int h_put(int fd, const struct pmi2_msg *m)
{
	const char *key = pmi2_msg_get(m, "key", NULL), *val = pmi2_msg_get(m, "value", NULL);
	char k[PMI2_KEY_MAX + sizeof KEY_PREFIX + 1];
	pmix_value_t v;

	if (!key || !val)
		return reply_rc(fd, "kvs-put-response", -1, key ? "missing_value" : "missing_key");
	snprintf(k, sizeof k, KEY_PREFIX "%s", key);
	PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
	pmix_status_t st = PMIx_Put(PMIX_GLOBAL, k, &v);
	PMIX_VALUE_DESTRUCT(&v);
	return reply_rc(fd, "kvs-put-response", st == PMIX_SUCCESS ? 0 : -1,
	                st == PMIX_SUCCESS ? NULL : "put_failed");
}

static int h_fence(int fd)
{
	pmix_info_t collect;
	bool yes = true;
	pmix_status_t st = PMIx_Commit();

	PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
	if (st == PMIX_SUCCESS)
		st = PMIx_Fence(NULL, 0, &collect, 1);
	PMIX_INFO_DESTRUCT(&collect);
	return reply_rc(fd, "kvs-fence-response", st == PMIX_SUCCESS ? 0 : -1,
	                st == PMIX_SUCCESS ? NULL : "fence_failed");
}

static int h_fullinit(int fd)
{
	struct pmi2_out o = {0};

	pmi2_out_begin(&o, "fullinit-response");
	pmi2_out_add(&o, "rc", "0");
	pmi2_out_add(&o, "pmi-version", "2");
	pmi2_out_add(&o, "pmi-subversion", "0");
	pmi2_out_addi(&o, "rank", (long)me.rank);
	pmi2_out_addi(&o, "size", (long)jsize);
	pmi2_out_addi(&o, "appnum", (long)appnum);
	pmi2_out_add(&o, "debugged", "FALSE");
	pmi2_out_add(&o, "pmiverbose", "FALSE");
	return send_out(fd, &o);
}

static int h_jobattr(int fd, const struct pmi2_msg *m)
{
	const char *key = pmi2_msg_get(m, "key", NULL);
	char buf[PMI2_VAL_MAX + 1];

	if (key && !strcmp(key, "universeSize")) {
		snprintf(buf, sizeof buf, "%u", usize);
		return reply_found(fd, "info-getjobattr-response", buf);
	}
	if (key && !strcmp(key, "PMI_process_mapping") && mapping(buf, sizeof buf) == 0)
		return reply_found(fd, "info-getjobattr-response", buf);
	return reply_found(fd, "info-getjobattr-response", NULL);
}

/* One request; 1 when the rank finalized (the reply is sent), -1 on a broken stream. */
static int handle(int fd, const struct pmi2_msg *m)
{
	const char *cmd = pmi2_msg_cmd(m);
	char resp[80];

	if (!strcmp(cmd, "fullinit"))
		return h_fullinit(fd);
	if (!strcmp(cmd, "job-getid")) {
		struct pmi2_out o = {0};
		pmi2_out_begin(&o, "job-getid-response");
		pmi2_out_add(&o, "rc", "0");
		pmi2_out_add(&o, "jobid", me.nspace);
		return send_out(fd, &o);
	}
	if (!strcmp(cmd, "info-getjobattr"))
		return h_jobattr(fd, m);
	if (!strcmp(cmd, "info-getnodeattr"))
		return reply_found(fd, "info-getnodeattr-response", NULL);
	if (!strcmp(cmd, "kvs-put"))
		return h_put(fd, m);
	if (!strcmp(cmd, "kvs-fence"))
		return h_fence(fd);
	if (!strcmp(cmd, "kvs-get"))
		return h_get(fd, m);
	if (!strcmp(cmd, "abort")) {
		int code = 1;
		const char *msg = pmi2_msg_get(m, "msg", NULL);
		pmi2_msg_int(m, "exitcode", &code);
		PMIx_Abort(code, msg ? msg : "", NULL, 0);
		_exit(code ? code : 1);
	}
	if (!strcmp(cmd, "finalize")) {
		PMIx_Finalize(NULL, 0);
		return reply_rc(fd, "finalize-response", 0, NULL) < 0 ? -1 : 1;
	}
	snprintf(resp, sizeof resp, "%.60s-response", cmd);
	return reply_rc(fd, resp, -1, "not_served_over_pmix");
}

int cmd_pmix_proxy(int argc, char **argv)
{
	const int fd = 3;
	char line[256], hdr[PMI2_HDR_LEN];
	size_t n = 0;

	/* the PMI-1 line that switches the stream to PMI-2 */
	while (n + 1 < sizeof line && read_all(fd, line + n, 1) == 0 && line[n] != '\n')
		n++;
	if (n == 0 || !strstr(line, "pmi_version=2"))
		return 1;
	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
		static const char no[] =
		    "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=-1\n";
		core_write_all(fd, no, sizeof no - 1);
		fprintf(stderr, "lamkit pmix-proxy: PMIx_Init failed: the PMIx launcher cannot be "
		                "reached\n");
		return 111;
	}
	if (get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &jsize) < 0)
		jsize = 1;
	if (get_u32(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &usize) < 0)
		usize = jsize;
	if (get_u32(me.rank, PMIX_APPNUM, &appnum) < 0)
		appnum = 0;
	static const char yes[] = "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";
	if (core_write_all(fd, yes, sizeof yes - 1) < 0)
		return 1;
	for (;;) {
		struct pmi2_msg m = {0};
		const char *why;
		if (read_all(fd, hdr, sizeof hdr) < 0)
			break; /* the rank is gone */
		long len = pmi2_hdr_parse(hdr);
		char *body = len > 0 ? malloc((size_t)len) : NULL;
		if (!body || read_all(fd, body, (size_t)len) < 0 ||
		    pmi2_msg_parse(body, (size_t)len, &m, &why) < 0) {
			free(body);
			break;
		}
		free(body);
		int rc = handle(fd, &m);
		pmi2_msg_free(&m);
		if (rc != 0)
			return rc < 0 ? 1 : 0;
	}
	PMIx_Finalize(NULL, 0); /* the rank died or hung up before finalize */
	return 0;
}
