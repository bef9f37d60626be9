/* lib/pmi/pmi_client_ext.c: libpmi clique, name service, spawn, KVS walk and legacy calls. */
#include "pmi.h"
#include "pmi2.h"
#include "pmi_client_int.h"
#include "pmi_server.h"
#include "pmi_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- clique from PMI_process_mapping ---- */

static int clique_from_mapping(void)
{
	char val[PMIC_LINE];
	int nn;

	if (pmic_jobattr("PMI_process_mapping", val, sizeof(val)) != PMI_SUCCESS)
		return -1;
	int *node = malloc((size_t)pmic.size * sizeof(*node));
	pmic.clique = malloc((size_t)pmic.size * sizeof(int));
	if (!node || !pmic.clique || (nn = pmi_topo_mapping(val, node, pmic.size)) < 0) {
		free(node);
		free(pmic.clique);
		pmic.clique = NULL;
		return -1;
	}
	pmic.nclique = 0;
	for (int r = 0; r < pmic.size; r++) {
		if (node[r] == node[pmic.rank])
			pmic.clique[pmic.nclique++] = r;
	}
	pmic.node = node[pmic.rank];
	pmic.nnodes = nn;
	free(node);
	return 0;
}

/* MPI_LOCALNRANKS/MPI_LOCALRANKID (Hydra's), assuming my node's ranks are consecutive. */
static int clique_from_env(void)
{
	const char *n = getenv("MPI_LOCALNRANKS"), *id = getenv("MPI_LOCALRANKID");
	int nl = 1, me = 0;

	if (n && id) {
		nl = atoi(n);
		me = atoi(id);
		if (nl < 1 || me < 0 || me >= nl || pmic.rank - me < 0 ||
		    pmic.rank - me + nl > pmic.size) {
			nl = 1;
			me = 0;
		}
	}
	pmic.clique = malloc((size_t)nl * sizeof(int));
	if (!pmic.clique)
		return -1;
	pmic.nclique = nl;
	for (int i = 0; i < nl; i++)
		pmic.clique[i] = pmic.rank - me + i;
	return 0;
}

static int clique(void)
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (pmic.clique)
		return PMI_SUCCESS;
	if (clique_from_mapping() == 0 || clique_from_env() == 0)
		return PMI_SUCCESS;
	return PMI_ERR_NOMEM;
}

int PMI_Get_clique_size(int *size)
{
	int rc = clique();

	if (rc != PMI_SUCCESS)
		return rc;
	if (!size)
		return PMI_ERR_INVALID_ARG;
	*size = pmic.nclique;
	return PMI_SUCCESS;
}

int PMI_Get_clique_ranks(int ranks[], int length)
{
	int rc = clique();

	if (rc != PMI_SUCCESS)
		return rc;
	if (!ranks || length < pmic.nclique)
		return PMI_ERR_INVALID_LENGTH;
	memcpy(ranks, pmic.clique, (size_t)pmic.nclique * sizeof(int));
	return PMI_SUCCESS;
}

/* ---- name service ---- */

/* Send one name-service request; its reply line in line[], rc in *rc. */
static int names_xact(const char *req, const char *result, char *line, int *rc)
{
	long n = pmic_xact(req, result, line, PMIC_LINE);

	if (n < 0)
		return -1;
	*rc = pmic_rc(line, (size_t)n);
	return (int)n;
}

int PMI_Publish_name(const char service_name[], const char port[])
{
	char req[PMI_LINE_MAX + 1], line[PMIC_LINE];
	int rc;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!pmic_token_ok(service_name) || !pmic_token_ok(port))
		return PMI_ERR_INVALID_ARG;
	if (pmic.mode == PMIC_SINGLETON) {
		if (pmic_local_get(PMIC_NAMES, service_name))
			return PMI_FAIL;
		return pmic_local_set(PMIC_NAMES, service_name, port) == 0 ? PMI_SUCCESS
		                                                           : PMI_ERR_NOMEM;
	}
	if (pmic.ver == 2)
		return PMI2_Nameserv_publish(service_name, NULL, port) == PMI2_SUCCESS ? PMI_SUCCESS
		                                                                       : PMI_FAIL;
	int n =
	    snprintf(req, sizeof(req), "cmd=publish_name service=%s port=%s\n", service_name, port);
	if (n < 0 || n > PMI_LINE_MAX)
		return PMI_ERR_INVALID_LENGTH;
	return names_xact(req, "publish_result", line, &rc) >= 0 && rc == 0 ? PMI_SUCCESS
	                                                                    : PMI_FAIL;
}

int PMI_Unpublish_name(const char service_name[])
{
	char req[PMI_LINE_MAX + 1], line[PMIC_LINE];
	int rc;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!pmic_token_ok(service_name) || strlen(service_name) > PMI_LINE_MAX / 2)
		return PMI_ERR_INVALID_ARG;
	if (pmic.mode == PMIC_SINGLETON)
		return pmic_local_del(PMIC_NAMES, service_name) == 0 ? PMI_SUCCESS : PMI_FAIL;
	if (pmic.ver == 2)
		return PMI2_Nameserv_unpublish(service_name, NULL) == PMI2_SUCCESS ? PMI_SUCCESS
		                                                                   : PMI_FAIL;
	snprintf(req, sizeof(req), "cmd=unpublish_name service=%s\n", service_name);
	return names_xact(req, "unpublish_result", line, &rc) >= 0 && rc == 0 ? PMI_SUCCESS
	                                                                      : PMI_FAIL;
}

int PMI_Lookup_name(const char service_name[], char port[])
{
	char req[PMI_LINE_MAX + 1], line[PMIC_LINE];
	int rc, n;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!pmic_token_ok(service_name) || !port || strlen(service_name) > PMI_LINE_MAX / 2)
		return PMI_ERR_INVALID_ARG;
	if (pmic.mode == PMIC_SINGLETON) {
		const char *p = pmic_local_get(PMIC_NAMES, service_name);
		return p ? pmic_copy(port, PMIC_PORT, p) : PMI_FAIL;
	}
	if (pmic.ver == 2)
		return PMI2_Nameserv_lookup(service_name, NULL, port, PMIC_PORT) == PMI2_SUCCESS
		           ? PMI_SUCCESS
		           : PMI_FAIL;
	snprintf(req, sizeof(req), "cmd=lookup_name service=%s\n", service_name);
	if ((n = names_xact(req, "lookup_result", line, &rc)) < 0 || rc != 0)
		return PMI_FAIL;
	if (pmi_wire_get_str(line, (size_t)n, "port", port, PMIC_PORT) < 0)
		return PMI_FAIL;
	return PMI_SUCCESS;
}

/* ---- KVS walk ---- */

static int iter(const char *kvsname, char key[], int key_len, char val[], int val_len)
{
	char req[PMI_LINE_MAX + 1], line[PMIC_LINE], raw[PMIC_LINE];
	long n;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!pmic_token_ok(kvsname) || !key || !val || key_len <= 0 || val_len <= 0)
		return PMI_ERR_INVALID_ARG;
	key[0] = val[0] = '\0';
	if (pmic.mode == PMIC_SINGLETON) {
		const struct pmic_kv *e = pmic_local_at(PMIC_KVS, pmic.iter);
		if (!e)
			return PMI_SUCCESS;
		pmic.iter++;
		if (pmic_copy(key, key_len, e->key) != PMI_SUCCESS)
			return PMI_ERR_INVALID_KEY_LENGTH;
		return pmic_copy(val, val_len, e->val);
	}
	if (pmic.ver == 2)
		return PMI_FAIL; /* PMI-2 has no way to walk the KVS */
	n = snprintf(req, sizeof(req), "cmd=getbyidx kvsname=%s idx=%d\n", kvsname, pmic.iter);
	if (n < 0 || n > PMI_LINE_MAX ||
	    (n = pmic_xact(req, "getbyidx_results", line, sizeof(line))) < 0)
		return PMI_FAIL;
	if (pmic_rc(line, (size_t)n) != 0)
		return PMI_SUCCESS; /* no more entries: empty key */
	if (pmi_wire_get_int(line, (size_t)n, "nextidx", &pmic.iter) < 0 ||
	    pmi_wire_get_str(line, (size_t)n, "key", raw, sizeof(raw)) < 0)
		return PMI_FAIL;
	if (pmic_copy(key, key_len, raw) != PMI_SUCCESS)
		return PMI_ERR_INVALID_KEY_LENGTH;
	size_t vlen;
	const char *v = pmi_wire_find(line, (size_t)n, "val", &vlen);
	if (v && pmi_wire_unescape(v, vlen, val, (size_t)val_len) < 0)
		return PMI_ERR_INVALID_LENGTH;
	return PMI_SUCCESS;
}

int PMI_KVS_Iter_first(const char kvsname[], char key[], int key_len, char val[], int val_len)
{
	pmic.iter = 0;
	return iter(kvsname, key, key_len, val, val_len);
}

int PMI_KVS_Iter_next(const char kvsname[], char key[], int key_len, char val[], int val_len)
{
	return iter(kvsname, key, key_len, val, val_len);
}

/* The paper's iterators: buffers as large as PMI_KVS_Get_key/value_length_max say. */
int PMI_KVS_iter_first(const char *kvsname, char *key, char *val)
{
	int kl = 0, vl = 0;

	PMI_KVS_Get_key_length_max(&kl);
	PMI_KVS_Get_value_length_max(&vl);
	return PMI_KVS_Iter_first(kvsname, key, kl, val, vl);
}

int PMI_KVS_iter_next(const char *kvsname, char *key, char *val)
{
	int kl = 0, vl = 0;

	PMI_KVS_Get_key_length_max(&kl);
	PMI_KVS_Get_value_length_max(&vl);
	return PMI_KVS_Iter_next(kvsname, key, kl, val, vl);
}

/* ---- spawn ---- */

struct sbuf {
	char *p;
	size_t len, cap;
	int bad;
};

static int has_ctl(const char *s, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)s[k] < ' ' || s[k] == 0x7f)
			return 1;
	return 0;
}

/* Append the line "key=val" (or just "key" when val is NULL) to the block; a line holding
 * control bytes (which cannot be sent) marks the block bad. No length bound here: lamkit's
 * server takes lines of up to PMI_SPAWN_LINE_MAX bytes in a block and refuses a longer one
 * with a line naming it (an MPICH-style server reads at most 1024 bytes a line). */
static void sline(struct sbuf *b, const char *key, const char *val)
{
	size_t kl = strlen(key), vl = val ? strlen(val) : 0, n = kl + (val ? 1 : 0) + vl + 1;

	if (!b->bad && (has_ctl(key, kl) || (val && has_ctl(val, vl))))
		b->bad = 1;
	if (b->bad)
		return;
	if (b->len + n > b->cap) {
		size_t cap = (b->cap + n) * 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->bad = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, key, kl);
	b->len += kl;
	if (val) {
		b->p[b->len++] = '=';
		memcpy(b->p + b->len, val, vl);
		b->len += vl;
	}
	b->p[b->len++] = '\n';
}

/* "key=<int>" */
static void sline_int(struct sbuf *b, const char *key, int v)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", v);
	sline(b, key, num);
}

/* "<prefix><i>=val" */
static void sline_idx(struct sbuf *b, const char *prefix, int i, const char *val)
{
	char key[32];

	snprintf(key, sizeof(key), "%s%d", prefix, i);
	sline(b, key, val ? val : "");
}

static void spawn_block(struct sbuf *b, int i, int count, const char *cmd, const char **argv,
                        int maxprocs, int ninfo, const PMI_keyval_t *info, int npre,
                        const PMI_keyval_t *pre)
{
	int argc = 0;

	while (argv && argv[argc])
		argc++;
	sline(b, "mcmd", "spawn");
	sline_int(b, "nprocs", maxprocs);
	sline(b, "execname", cmd ? cmd : "");
	sline_int(b, "totspawns", count);
	sline_int(b, "spawnssofar", i + 1);
	sline_int(b, "argcnt", argc);
	for (int a = 0; a < argc; a++)
		sline_idx(b, "arg", a + 1, argv[a]);
	sline_int(b, "preput_num", npre);
	for (int k = 0; k < npre; k++) {
		sline_idx(b, "preput_key_", k, pre[k].key);
		sline_idx(b, "preput_val_", k, pre[k].val);
	}
	sline_int(b, "info_num", ninfo);
	for (int k = 0; k < ninfo; k++) {
		sline_idx(b, "info_key_", k, info[k].key);
		sline_idx(b, "info_val_", k, info[k].val);
	}
	sline(b, "endcmd", NULL);
}

/* PMI_Spawn_multiple, and the new job's KVS name into kvsname (when not NULL; "" when the
 * server does not say it). */
static int spawn(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                 const int info_keyval_sizesp[], const PMI_keyval_t *info_keyval_vectors[],
                 int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[], int errors[],
                 char *kvsname, int kvsnamelen)
{
	struct sbuf b = {0};
	char line[PMIC_LINE];
	int total = 0, rc = PMI_FAIL;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (count < 1 || !cmds || !maxprocs || preput_keyval_size < 0 ||
	    (preput_keyval_size && !preput_keyval_vector))
		return PMI_ERR_INVALID_ARGS;
	if (pmic.mode == PMIC_SINGLETON)
		return PMI_FAIL; /* no process manager to start anything */
	if (pmic.ver == 2) {
		rc = pmic2_spawn(count, cmds, argvs, maxprocs, info_keyval_sizesp,
		                 info_keyval_vectors, preput_keyval_size, preput_keyval_vector,
		                 kvsname, kvsnamelen);
		for (int i = 0; i < count; i++)
			total += maxprocs[i];
		for (int i = 0; errors && i < total; i++)
			errors[i] = rc == PMI_SUCCESS ? 0 : -1;
		return rc;
	}
	for (int i = 0; i < count; i++) {
		int ninfo = info_keyval_sizesp && info_keyval_vectors ? info_keyval_sizesp[i] : 0;
		spawn_block(&b, i, count, cmds[i], argvs ? argvs[i] : NULL, maxprocs[i], ninfo,
		            ninfo ? info_keyval_vectors[i] : NULL, preput_keyval_size,
		            preput_keyval_vector);
		total += maxprocs[i];
	}
	if (!b.bad && pmic_send(b.p, b.len) == 0) {
		/* the blocks went out above: the empty request only reads the reply */
		long n = pmic_xact("", "spawn_result", line, sizeof(line));
		int r = n < 0 ? -1 : pmic_rc(line, (size_t)n);
		for (int i = 0; errors && i < total; i++)
			errors[i] = r;
		rc = r == 0 ? PMI_SUCCESS : PMI_FAIL;
		if (rc == PMI_SUCCESS && kvsname && kvsnamelen > 0 &&
		    pmi_wire_get_str(line, (size_t)n, "kvsname", kvsname, (size_t)kvsnamelen) < 0)
			kvsname[0] = '\0'; /* lamkit's agents say it; other servers need not */
	} else if (b.bad) {
		rc = PMI_ERR_INVALID_ARGS;
	}
	free(b.p);
	return rc;
}

int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                       const int info_keyval_sizesp[], const PMI_keyval_t *info_keyval_vectors[],
                       int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[],
                       int errors[])
{
	return spawn(count, cmds, argvs, maxprocs, info_keyval_sizesp, info_keyval_vectors,
	             preput_keyval_size, preput_keyval_vector, errors, NULL, 0);
}

int PMI_Spawn(const char *cmd, const char *argv[], const int maxprocs, char *spawned_kvsname,
              const int kvsnamelen)
{
	const char **argvs[1] = {argv};
	int n = maxprocs;

	if (!cmd || maxprocs < 1 || (spawned_kvsname && kvsnamelen < 1))
		return PMI_ERR_INVALID_ARGS;
	return spawn(1, &cmd, argvs, &n, NULL, NULL, 0, NULL, NULL, spawned_kvsname,
	             spawned_kvsname ? kvsnamelen : 0);
}

int PMI_Args_to_info(int *argcp, char ***argvp, void *infop)
{
	(void)infop; /* lamkit's launcher takes no arguments of its own from a program's argv */
	if (!argcp || !argvp)
		return PMI_ERR_INVALID_ARGS;
	return PMI_SUCCESS;
}

/* ---- legacy calls ---- */

int PMI_Get_id_length_max(int *length)
{
	return PMI_KVS_Get_name_length_max(length);
}

int PMI_Get_id(char id_str[], int length)
{
	return PMI_KVS_Get_my_name(id_str, length);
}

int PMI_Get_kvs_domain_id(char id_str[], int length)
{
	return PMI_KVS_Get_my_name(id_str, length);
}

int PMI_KVS_Create(char kvsname[], int length)
{
	(void)kvsname;
	(void)length;
	return PMI_FAIL;
}

int PMI_KVS_Destroy(const char kvsname[])
{
	(void)kvsname;
	return PMI_FAIL;
}

int PMI_Parse_option(int num_args, char *args[], int *num_parsed, PMI_keyval_t **keyvalp, int *size)
{
	(void)num_args;
	(void)args;
	if (num_parsed)
		*num_parsed = 0;
	if (keyvalp)
		*keyvalp = NULL;
	if (size)
		*size = 0;
	return PMI_FAIL;
}

int PMI_Args_to_keyval(int *argcp, char *((*argvp)[]), PMI_keyval_t **keyvalp, int *size)
{
	(void)argcp;
	(void)argvp;
	if (keyvalp)
		*keyvalp = NULL;
	if (size)
		*size = 0;
	return PMI_FAIL;
}

int PMI_Free_keyvals(PMI_keyval_t keyvalp[], int size)
{
	if (size < 0 || (size > 0 && !keyvalp))
		return PMI_ERR_INVALID_ARG;
	for (int i = 0; i < size; i++) {
		free((char *)keyvalp[i].key);
		free(keyvalp[i].val);
	}
	free(keyvalp);
	return PMI_SUCCESS;
}

/* ---- resource registration (lamkit's extension) ---- */

static int resource(const char *op1, const char *op2, const char *kind, const char *name)
{
	char req[PMI_LINE_MAX + 1], line[PMIC_LINE], want[64];
	const char *sd = getenv("LAMKIT_SESSION_DIR");

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!pmic_token_ok(kind) || !name || !*name || strlen(name) > PMI_RES_NAME_MAX ||
	    strchr(name, '\n'))
		return PMI_ERR_INVALID_ARG;
	if (pmic.mode != PMIC_WIRE || !sd || !*sd)
		return PMI_FAIL; /* only lamkit's agents serve it; others may not take unknown
		                    requests */
	if (pmic.ver == 2) {
		struct pmi2_out o;
		snprintf(want, sizeof(want), "%s-response", op2);
		pmi2_out_begin(&o, op2);
		pmi2_out_add(&o, "kind", kind);
		pmi2_out_add(&o, "name", name);
		return pmic2_simple(&o, want);
	}
	int n = snprintf(req, sizeof(req), "cmd=%s kind=%s name=%s\n", op1, kind, name);
	if (n < 0 || n > PMI_LINE_MAX)
		return PMI_ERR_INVALID_LENGTH;
	snprintf(want, sizeof(want), "%s_result", op1);
	long r = pmic_xact(req, want, line, sizeof(line));
	return r >= 0 && pmic_rc(line, (size_t)r) == 0 ? PMI_SUCCESS : PMI_FAIL;
}

int PMI_Resource_register(const char kind[], const char name[])
{
	return resource("resource_register", "lamkit-resource-register", kind, name);
}

int PMI_Resource_release_begin(const char kind[], const char name[])
{
	return resource("resource_release_begin", "lamkit-resource-release-begin", kind, name);
}

int PMI_Resource_release_end(const char kind[], const char name[])
{
	return resource("resource_release_end", "lamkit-resource-release-end", kind, name);
}
