/* lib/pmi/pmi2_client.c: libpmi's PMI-2 wire (fullinit, queries) and the PMI2_* API, which
 * also runs over a PMI-1 wire and as a singleton. */
#include "pmi.h"
#include "pmi2.h"
#include "pmi_client_int.h"
#include "pmi_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the PMI-2 wire ---- */

int pmic2_xact(struct pmi2_out *o, const char *want, struct pmi2_msg *resp)
{
	char hdr[PMI2_HDR_LEN];
	const char *why;
	long n = pmi2_out_finish(o);
	int rc = -1;

	memset(resp, 0, sizeof(*resp));
	if (n > 0 && pmic_send(o->buf, (size_t)n) == 0 && pmic_read_exact(hdr, sizeof(hdr)) == 0) {
		long len = pmi2_hdr_parse(hdr);
		char *body = len > 0 ? malloc((size_t)len) : NULL;
		if (body && pmic_read_exact(body, (size_t)len) == 0 &&
		    pmi2_msg_parse(body, (size_t)len, resp, &why) == 0)
			rc = strcmp(pmi2_msg_cmd(resp), want) == 0 ? 0 : -1;
		free(body);
	}
	pmi2_out_free(o);
	if (rc < 0)
		pmi2_msg_free(resp);
	return rc;
}

/* rc= of a reply (missing counts as failure, as MPICH's client does). */
static int reply_rc(const struct pmi2_msg *m)
{
	int rc;

	return pmi2_msg_int(m, "rc", &rc) == 0 ? rc : -1;
}

int pmic2_simple(struct pmi2_out *o, const char *want)
{
	struct pmi2_msg m;

	if (pmic2_xact(o, want, &m) < 0)
		return PMI_FAIL;
	int rc = reply_rc(&m) == 0 ? PMI_SUCCESS : PMI_FAIL;
	pmi2_msg_free(&m);
	return rc;
}

int pmic2_query(const char *cmd, const char *key, const char *xk, const char *xv, char *out,
                size_t outlen, int *found)
{
	struct pmi2_out o;
	struct pmi2_msg m;
	char want[64];
	size_t vlen;

	*found = 0;
	snprintf(want, sizeof(want), "%s-response", cmd);
	pmi2_out_begin(&o, cmd);
	if (xk)
		pmi2_out_add(&o, xk, xv);
	pmi2_out_add(&o, "key", key);
	if (pmic2_xact(&o, want, &m) < 0)
		return PMI_FAIL;
	const char *v = pmi2_msg_get(&m, "value", &vlen);
	int rc = PMI_SUCCESS;
	if (reply_rc(&m) != 0)
		rc = PMI_FAIL;
	else if (pmi2_msg_bool(&m, "found", v != NULL) && v) {
		*found = 1;
		if (vlen >= outlen)
			rc = PMI_ERR_INVALID_LENGTH;
		else
			memcpy(out, v, vlen + 1);
	}
	pmi2_msg_free(&m);
	return rc;
}

int pmic2_init(void)
{
	struct pmi2_out o;
	struct pmi2_msg m;
	const char *jobid = getenv("PMI_JOBID"), *rank = getenv("PMI_RANK");
	const char *id = getenv("PMI_ID");

	pmi2_out_begin(&o, "fullinit");
	if (jobid && *jobid)
		pmi2_out_add(&o, "pmijobid", jobid);
	if (id && *id)
		pmi2_out_add(&o, "srcid", id);
	else if (rank && *rank)
		pmi2_out_add(&o, "pmirank", rank);
	pmi2_out_add(&o, "threaded", "FALSE");
	if (pmic2_xact(&o, "fullinit-response", &m) < 0)
		return -1;
	int ok = reply_rc(&m) == 0 && pmi2_msg_int(&m, "rank", &pmic.rank) == 0 &&
	         pmi2_msg_int(&m, "size", &pmic.size) == 0;
	if (pmi2_msg_int(&m, "appnum", &pmic.appnum) < 0 || pmic.appnum < 0)
		pmic.appnum = 0; /* Slurm answers -1 */
	pmic.spawned = pmi2_msg_get(&m, "spawner-jobid", NULL) != NULL;
	pmi2_msg_free(&m);
	if (!ok)
		return -1;
	pmi2_out_begin(&o, "job-getid");
	if (pmic2_xact(&o, "job-getid-response", &m) < 0)
		return -1;
	size_t n;
	const char *j = pmi2_msg_get(&m, "jobid", &n);
	ok = reply_rc(&m) == 0 && j && n > 0 && n < sizeof(pmic.kvsname) && pmic_token_ok(j);
	if (ok)
		memcpy(pmic.kvsname, j, n + 1);
	pmi2_msg_free(&m);
	pmic.kvsname_max = PMI_KVSNAME_MAX;
	pmic.keylen_max = PMI2_KEY_MAX;
	pmic.vallen_max = PMI2_VAL_MAX;
	return ok ? 0 : -1;
}

int pmic_jobattr(const char *key, char *out, size_t outlen)
{
	int found = 0;

	if (pmic.mode == PMIC_WIRE && pmic.ver == 2) {
		int rc = pmic2_query("info-getjobattr", key, NULL, NULL, out, outlen, &found);
		return rc == PMI_SUCCESS && !found ? PMI_FAIL : rc;
	}
	return pmic_get(pmic.kvsname, key, out, outlen);
}

/* ---- the PMI2_* API ---- */

static int v2(void)
{
	return pmic.mode == PMIC_WIRE && pmic.ver == 2;
}

int PMI2_Init(int *spawned, int *size, int *rank, int *appnum)
{
	int sp = 0, rc = PMI_Init(&sp);

	if (rc != PMI_SUCCESS)
		return rc == PMI_FAIL ? PMI2_ERR_OTHER : rc;
	if (spawned)
		*spawned = sp;
	if (size)
		*size = pmic.size;
	if (rank)
		*rank = pmic.rank;
	if (appnum)
		*appnum = pmic.appnum;
	return PMI2_SUCCESS;
}

int PMI2_Finalize(void)
{
	return PMI_Finalize();
}

int PMI2_Initialized(void)
{
	return pmic.mode != PMIC_NONE;
}

int PMI2_Abort(int flag, const char msg[])
{
	(void)flag; /* lamkit always ends the whole job */
	return PMI_Abort(1, msg);
}

int PMI2_Job_GetId(char jobid[], int jobid_size)
{
	if (pmic.mode == PMIC_NONE)
		return PMI2_ERR_INIT;
	return pmic_copy(jobid, jobid_size, pmic.kvsname);
}

int PMI2_Job_GetRank(int *rank)
{
	return PMI_Get_rank(rank);
}

int PMI2_Info_GetSize(int *size)
{
	return PMI_Get_clique_size(size);
}

int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn)
{
	(void)jobid;
	(void)conn;
	return PMI2_FAIL;
}

int PMI2_Job_Disconnect(const char jobid[])
{
	(void)jobid;
	return PMI2_FAIL;
}

/* Key check shared by the calls below. */
static int key_ok(const char *key)
{
	if (!pmic_token_ok(key))
		return PMI2_ERR_INVALID_KEY;
	if (strlen(key) >= PMI2_MAX_KEYLEN)
		return PMI2_ERR_INVALID_KEY_LENGTH;
	return PMI2_SUCCESS;
}

int PMI2_KVS_Put(const char key[], const char value[])
{
	int rc = key_ok(key);

	if (pmic.mode == PMIC_NONE)
		return PMI2_ERR_INIT;
	if (rc != PMI2_SUCCESS)
		return rc;
	if (!value)
		return PMI2_ERR_INVALID_VAL;
	if (strlen(value) >= PMI2_MAX_VALLEN)
		return PMI2_ERR_INVALID_VAL_LENGTH;
	if (!v2()) /* PMI-1 wire or singleton: the PMI-1 call (escapes what it must) */
		return PMI_KVS_Put(pmic.kvsname, key, value);
	struct pmi2_out o;
	pmi2_out_begin(&o, "kvs-put");
	pmi2_out_add(&o, "key", key);
	pmi2_out_add(&o, "value", value);
	return pmic2_simple(&o, "kvs-put-response");
}

int PMI2_KVS_Fence(void)
{
	return PMI_Barrier();
}

int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                 int *vallen)
{
	int rc = key_ok(key), found = 0;

	(void)src_pmi_id;
	if (pmic.mode == PMIC_NONE)
		return PMI2_ERR_INIT;
	if (rc != PMI2_SUCCESS)
		return rc;
	if (!value || maxvalue <= 0)
		return PMI2_ERR_INVALID_ARG;
	if (!jobid || !*jobid)
		jobid = pmic.kvsname;
	if (!v2()) {
		rc = PMI_KVS_Get(jobid, key, value, maxvalue);
		found = rc == PMI_SUCCESS;
	} else {
		char raw[PMI2_VAL_MAX + 1];
		rc = pmic2_query("kvs-get", key, "jobid", jobid, raw, sizeof(raw), &found);
		if (rc == PMI_SUCCESS && found) {
			size_t n = strlen(raw);
			memcpy(value, raw, n < (size_t)maxvalue ? n + 1 : (size_t)maxvalue);
			value[maxvalue - 1] = '\0';
			if (vallen)
				*vallen = n < (size_t)maxvalue ? (int)n : -(int)n;
			return PMI2_SUCCESS;
		}
	}
	if (rc == PMI_SUCCESS && found && vallen)
		*vallen = (int)strlen(value);
	return rc == PMI_SUCCESS && found ? PMI2_SUCCESS : PMI2_FAIL;
}

int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found, int waitfor)
{
	int rc = key_ok(name);

	if (pmic.mode == PMIC_NONE)
		return PMI2_ERR_INIT;
	if (rc != PMI2_SUCCESS)
		return rc;
	if (!value || valuelen <= 0 || !found)
		return PMI2_ERR_INVALID_ARG;
	*found = 0;
	const char *v = pmic.mode == PMIC_SINGLETON ? pmic_local_get(PMIC_NODE, name) : NULL;
	if (!v2() && !v && strcmp(name, PMI_TOPO_KEY) == 0) { /* lamkit's agents, singleton */
		char t[PMI_TOPO_TEXT_MAX + 64];
		*found = pmic_topo_text(t, sizeof(t)) == PMI_SUCCESS;
		return *found ? pmic_copy(value, valuelen, t) : PMI2_SUCCESS;
	}
	if (pmic.mode == PMIC_SINGLETON) {
		*found = v != NULL;
		return v ? pmic_copy(value, valuelen, v) : PMI2_SUCCESS;
	}
	if (!v2())
		return PMI2_SUCCESS; /* a PMI-1 launcher has no node attributes: not found */
	return pmic2_query("info-getnodeattr", name, "wait", waitfor ? "TRUE" : "FALSE", value,
	                   (size_t)valuelen, found);
}

int PMI2_Info_PutNodeAttr(const char name[], const char value[])
{
	int rc = key_ok(name);

	if (pmic.mode == PMIC_NONE)
		return PMI2_ERR_INIT;
	if (rc != PMI2_SUCCESS)
		return rc;
	if (!value)
		return PMI2_ERR_INVALID_VAL;
	if (strlen(value) >= PMI2_MAX_VALLEN)
		return PMI2_ERR_INVALID_VAL_LENGTH;
	if (pmic.mode == PMIC_SINGLETON)
		return pmic_local_set(PMIC_NODE, name, value) == 0 ? PMI2_SUCCESS : PMI2_ERR_NOMEM;
	if (!v2())
		return PMI2_FAIL;
	struct pmi2_out o;
	pmi2_out_begin(&o, "info-putnodeattr");
	pmi2_out_add(&o, "key", name);
	pmi2_out_add(&o, "value", value);
	return pmic2_simple(&o, "info-putnodeattr-response");
}

int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found)
{
	int rc = key_ok(name);

	if (pmic.mode == PMIC_NONE)
		return PMI2_ERR_INIT;
	if (rc != PMI2_SUCCESS)
		return rc;
	if (!value || valuelen <= 0 || !found)
		return PMI2_ERR_INVALID_ARG;
	*found = 0;
	if (strcmp(name, "universeSize") == 0) {
		int u;
		if (PMI_Get_universe_size(&u) != PMI_SUCCESS)
			return PMI2_FAIL;
		*found = 1;
		return snprintf(value, (size_t)valuelen, "%d", u) < valuelen
		           ? PMI2_SUCCESS
		           : PMI2_ERR_INVALID_LENGTH;
	}
	if (pmic.mode == PMIC_SINGLETON) { /* one rank on one node */
		if (strcmp(name, "PMI_process_mapping") != 0)
			return PMI2_SUCCESS;
		*found = 1;
		return pmic_copy(value, valuelen, "(vector,(0,1,1))");
	}
	rc = pmic_jobattr(name, value, (size_t)valuelen);
	*found = rc == PMI_SUCCESS;
	return rc == PMI_ERR_INVALID_LENGTH ? PMI2_ERR_INVALID_LENGTH : PMI2_SUCCESS;
}

/* "1,2,3" into array[arraylen]. */
static int int_array(const char *v, int array[], int arraylen, int *outlen)
{
	int n = 0;

	while (*v && n < arraylen) {
		char *end;
		long x = strtol(v, &end, 10);
		if (end == v)
			return PMI2_FAIL;
		array[n++] = (int)x;
		v = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return PMI2_FAIL;
	}
	*outlen = n;
	return PMI2_SUCCESS;
}

int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                  int *found)
{
	char v[PMI2_MAX_ATTRVALUE];
	int rc = PMI2_Info_GetNodeAttr(name, v, sizeof(v), found, 0);

	if (rc != PMI2_SUCCESS || !*found)
		return rc;
	if (!array || !outlen)
		return PMI2_ERR_INVALID_ARG;
	return int_array(v, array, arraylen, outlen);
}

int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                 int *found)
{
	char v[PMI2_MAX_ATTRVALUE];
	int rc = PMI2_Info_GetJobAttr(name, v, sizeof(v), found);

	if (rc != PMI2_SUCCESS || !*found)
		return rc;
	if (!array || !outlen)
		return PMI2_ERR_INVALID_ARG;
	return int_array(v, array, arraylen, outlen);
}

int PMI2_Nameserv_publish(const char service_name[], const PMI2_keyval_t *info_ptr,
                          const char port[])
{
	(void)info_ptr;
	if (!v2())
		return PMI_Publish_name(service_name, port) == PMI_SUCCESS ? PMI2_SUCCESS
		                                                           : PMI2_FAIL;
	if (!pmic_token_ok(service_name) || !port)
		return PMI2_ERR_INVALID_ARG;
	struct pmi2_out o;
	pmi2_out_begin(&o, "name-publish");
	pmi2_out_add(&o, "name", service_name);
	pmi2_out_add(&o, "port", port);
	return pmic2_simple(&o, "name-publish-response");
}

int PMI2_Nameserv_unpublish(const char service_name[], const PMI2_keyval_t *info_ptr)
{
	(void)info_ptr;
	if (!v2())
		return PMI_Unpublish_name(service_name) == PMI_SUCCESS ? PMI2_SUCCESS : PMI2_FAIL;
	if (!pmic_token_ok(service_name))
		return PMI2_ERR_INVALID_ARG;
	struct pmi2_out o;
	pmi2_out_begin(&o, "name-unpublish");
	pmi2_out_add(&o, "name", service_name);
	return pmic2_simple(&o, "name-unpublish-response");
}

int PMI2_Nameserv_lookup(const char service_name[], const PMI2_keyval_t *info_ptr, char port[],
                         int portLen)
{
	struct pmi2_out o;
	struct pmi2_msg m;
	size_t n;

	(void)info_ptr;
	if (!port || portLen <= 0)
		return PMI2_ERR_INVALID_ARG;
	if (!v2()) {
		char p[PMIC_PORT];
		if (PMI_Lookup_name(service_name, p) != PMI_SUCCESS)
			return PMI2_FAIL;
		return pmic_copy(port, portLen, p);
	}
	if (!pmic_token_ok(service_name))
		return PMI2_ERR_INVALID_ARG;
	pmi2_out_begin(&o, "name-lookup");
	pmi2_out_add(&o, "name", service_name);
	if (pmic2_xact(&o, "name-lookup-response", &m) < 0)
		return PMI2_FAIL;
	const char *v = pmi2_msg_get(&m, "value", &n);
	int rc = reply_rc(&m) == 0 && v ? pmic_copy(port, portLen, v) : PMI2_FAIL;
	pmi2_msg_free(&m);
	return rc;
}

/* A spawn request that the PMI-2 framing cannot carry (a message over PMI2_MSG_MAX bytes or
 * an argument over PMI2_CMD_VAL_MAX) is replaced by one naming the bound, so that the server
 * refuses it with a line for the user (doc/PROTOCOL-pmi.md, part 2) instead of us failing
 * alone. */
static void over_stand_in(struct pmi2_out *o, size_t longest)
{
	char why[160];

	if (longest > PMI2_CMD_VAL_MAX)
		snprintf(why, sizeof(why),
		         "a spawn argument of %zu bytes is over the PMI-2 bound of %d bytes",
		         longest, PMI2_CMD_VAL_MAX);
	else
		snprintf(why, sizeof(why),
		         "a spawn request is over the PMI-2 bound of %d bytes per message",
		         PMI2_MSG_MAX);
	pmi2_out_free(o);
	pmi2_out_begin(o, "spawn");
	pmi2_out_add(o, "lamkit-over", why);
}

/* PMI-2 spawn message from the PMI-1 style arguments (used by both APIs on a PMI-2 wire). */
int pmic2_spawn(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                const int ninfo[], const PMI_keyval_t *info[], int npre, const PMI_keyval_t pre[],
                char *jobid, int jobid_size)
{
	struct pmi2_out o;
	struct pmi2_msg m;
	char key[32];

	pmi2_out_begin(&o, "spawn");
	pmi2_out_addi(&o, "ncmds", count);
	pmi2_out_addi(&o, "preputcount", npre);
	for (int k = 0; k < npre; k++) {
		snprintf(key, sizeof(key), "ppkey%d", k);
		pmi2_out_add(&o, key, pre[k].key ? pre[k].key : "");
		snprintf(key, sizeof(key), "ppval%d", k);
		pmi2_out_add(&o, key, pre[k].val ? pre[k].val : "");
	}
	size_t longest = 0;
	for (int i = 0; i < count; i++) {
		int argc = 0;
		while (argvs && argvs[i] && argvs[i][argc])
			argc++;
		pmi2_out_add(&o, "subcmd", cmds[i] ? cmds[i] : "");
		pmi2_out_addi(&o, "maxprocs", maxprocs[i]);
		pmi2_out_addi(&o, "argc", argc);
		for (int a = 0; a < argc; a++) {
			size_t n = strlen(argvs[i][a]);
			longest = n > longest ? n : longest;
			snprintf(key, sizeof(key), "argv%d", a);
			pmi2_out_add(&o, key, argvs[i][a]);
		}
		int ni = ninfo && info ? ninfo[i] : 0;
		pmi2_out_addi(&o, "infokeycount", ni);
		for (int k = 0; k < ni; k++) {
			snprintf(key, sizeof(key), "infokey%d", k);
			pmi2_out_add(&o, key, info[i][k].key ? info[i][k].key : "");
			snprintf(key, sizeof(key), "infoval%d", k);
			pmi2_out_add(&o, key, info[i][k].val ? info[i][k].val : "");
		}
	}
	if (o.err == EMSGSIZE || longest > PMI2_CMD_VAL_MAX)
		over_stand_in(&o, longest);
	if (pmic2_xact(&o, "spawn-response", &m) < 0)
		return PMI_FAIL;
	size_t n;
	const char *j = pmi2_msg_get(&m, "jobid", &n);
	int rc = reply_rc(&m) == 0 ? PMI_SUCCESS : PMI_FAIL;
	if (rc == PMI_SUCCESS && jobid && jobid_size > 0)
		pmic_copy(jobid, jobid_size, j ? j : "");
	pmi2_msg_free(&m);
	return rc;
}

int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[],
                   const int maxprocs[], const int info_keyval_sizes[],
                   const PMI2_keyval_t *info_keyval_vectors[], int preput_keyval_size,
                   const PMI2_keyval_t *preput_keyval_vector[], char jobId[], int jobIdSize,
                   int errors[])
{
	PMI_keyval_t *pre = NULL;
	int total = 0, rc;

	(void)argcs; /* argv lists are NULL-terminated, as MPICH passes them */
	if (pmic.mode == PMIC_NONE)
		return PMI2_ERR_INIT;
	if (count < 1 || !cmds || !maxprocs || preput_keyval_size < 0)
		return PMI2_ERR_INVALID_ARGS;
	if (preput_keyval_size > 0) {
		if (!preput_keyval_vector || !preput_keyval_vector[0])
			return PMI2_ERR_INVALID_ARGS;
		pre = calloc((size_t)preput_keyval_size, sizeof(*pre));
		if (!pre)
			return PMI2_ERR_NOMEM;
		for (int k = 0; k < preput_keyval_size; k++)
			pre[k] = (PMI_keyval_t){preput_keyval_vector[0][k].key,
			                        preput_keyval_vector[0][k].val};
	}
	for (int i = 0; i < count; i++)
		total += maxprocs[i];
	if (v2())
		rc = pmic2_spawn(count, cmds, argvs, maxprocs, info_keyval_sizes,
		                 (const PMI_keyval_t **)info_keyval_vectors, preput_keyval_size,
		                 pre, jobId, jobIdSize);
	else
		rc = PMI_Spawn_multiple(count, cmds, argvs, maxprocs, info_keyval_sizes,
		                        (const PMI_keyval_t **)info_keyval_vectors,
		                        preput_keyval_size, pre, errors);
	for (int i = 0; errors && i < total; i++)
		errors[i] = rc == PMI_SUCCESS ? 0 : PMI2_FAIL;
	free(pre);
	return rc == PMI_SUCCESS ? PMI2_SUCCESS : PMI2_FAIL;
}
