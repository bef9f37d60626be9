/* lib/mpi/mpi_spawn.c: MPI_Comm_spawn(_multiple) over PMI spawn, and the children's parent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"
#include "pmi.h"

/*
 * The root opens a port and asks the process manager for the children (PMI_Spawn_multiple) with
 * the port as the preput key PARENT_ROOT_PORT_NAME (the key MPICH uses); every child's MPI_Init
 * finds it in its own KVS and connects over its MPI_COMM_WORLD while the parents accept
 * (doc/PROTOCOL-mpi-wire.md section 8).
 */
#define PARENT_KEY "PARENT_ROOT_PORT_NAME"
/* Without a handshake (parents of at most SPAWN_PRESET_MAX ranks): "ID,NPARENTS,ROOT,PORT" (no
 * spaces: PMI-1 values end at one) and the card of each parent rank but the root's (which is in
 * the port) */
#define PRESET_KEY       "lamkit-spawn"
#define PRESET_CARD_KEY  "lamkit-spawn-card-%d"
#define SPAWN_PRESET_MAX 16

/* LAMKIT_MPI_SPAWN=handshake: the children connect as any job does (accept/connect), to test
 * that path; it must be the same for every rank of the spawning job. */
static int preset_allowed(const struct mpii_comm *c)
{
	const char *e = getenv("LAMKIT_MPI_SPAWN");

	return c->size <= SPAWN_PRESET_MAX && !(e && !strcmp(e, "handshake"));
}

/* The children's side without a handshake: the id, the port and the parents' cards from the
 * KVS (spec: "ID,NPARENTS,ROOT,PORT"). */
static int preset_connect(const char *kvsname, const char *spec)
{
	const char *rcard = NULL, *port = NULL;
	char key[64], *cards;
	int id, np, root, at = 0, rc = MPI_SUCCESS;

	if (sscanf(spec, "%d,%d,%d,%n", &id, &np, &root, &at) == 3 && at > 0)
		rcard = mpii_port_card(port = spec + at);
	if (!rcard || id < 3 || id >= MPII_NCTX_WORDS * 64 || np < 1 || np > SPAWN_PRESET_MAX ||
	    root < 0 || root >= np || strlen(rcard) >= MPII_CARD) {
		mpii_err_detail("the parents' spawn keys in the KVS are malformed");
		return MPI_ERR_INTERN;
	}
	if (!(cards = calloc((size_t)np, MPII_CARD)))
		return MPI_ERR_NO_MEM;
	memcpy(cards + (size_t)root * MPII_CARD, rcard, strlen(rcard) + 1);
	for (int i = 0; rc == MPI_SUCCESS && i < np; i++) {
		if (i == root)
			continue;
		snprintf(key, sizeof key, PRESET_CARD_KEY, i);
		if (PMI_KVS_Get(kvsname, key, cards + (size_t)i * MPII_CARD, MPII_CARD) !=
		    PMI_SUCCESS) {
			mpii_err_detail("a parent's card is missing from the KVS");
			rc = MPI_ERR_INTERN;
		}
	}
	if (rc == MPI_SUCCESS)
		rc = mpii_spawn_connect(port, id, cards, np, mpii_comm(MPI_COMM_WORLD),
		                        &mpii.parent);
	free(cards);
	return rc;
}

/* lamkit's launcher gives the preset spec in the environment too, as "KVSNAME|SPEC": 32 ranks
 * asking the agent for it at once waited up to 7 ms for its answers on 2 cores. 1 when found
 * (for this job's KVS), into spec[len]. */
static int preset_env(const char *kvsname, char *spec, size_t len)
{
	const char *e = getenv("LAMKIT_SPAWN_PRESET");
	size_t k = strlen(kvsname);

	if (!e || strncmp(e, kvsname, k) || e[k] != '|' || strlen(e + k + 1) >= len)
		return 0;
	memcpy(spec, e + k + 1, strlen(e + k + 1) + 1);
	return 1;
}

int mpii_spawn_init(const char *kvsname)
{
	char port[MPI_MAX_PORT_NAME], spec[MPI_MAX_PORT_NAME + 48];
	int rc;

	mpii.parent = MPI_COMM_NULL;
	if (preset_env(kvsname, spec, sizeof spec) ||
	    PMI_KVS_Get(kvsname, PRESET_KEY, spec, (int)sizeof spec) == PMI_SUCCESS)
		rc = preset_connect(kvsname, spec);
	else if (PMI_KVS_Get(kvsname, PARENT_KEY, port, (int)sizeof port) == PMI_SUCCESS)
		rc = mpii_connect(port, 0, mpii_comm(MPI_COMM_WORLD), &mpii.parent);
	else /* started by PMI spawn, but not by an MPI_Comm_spawn */
		return MPI_SUCCESS;
	if (rc == MPI_SUCCESS) /* the name MPI gives it (MPI-4 11.8.2) */
		snprintf(mpii_comm(mpii.parent)->name, MPI_MAX_OBJECT_NAME, "MPI_COMM_PARENT");
	return rc;
}

MPII_ALIAS(Comm_get_parent)
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
	MPII_CHECK_INIT("MPI_Comm_get_parent");
	*parent = mpii_comm(mpii.parent) ? mpii.parent : MPI_COMM_NULL;
	return MPI_SUCCESS;
}

/* The info keys of one command as PMI key/value pairs (strings owned by the array). */
static PMI_keyval_t *info_kv(MPI_Info info, int *n)
{
	PMI_keyval_t *kv;
	int nk = 0, flag;

	*n = 0;
	if (info == MPI_INFO_NULL || PMPI_Info_get_nkeys(info, &nk) != MPI_SUCCESS || nk <= 0)
		return NULL;
	kv = calloc((size_t)nk, sizeof(*kv));
	for (int i = 0; kv && i < nk; i++) {
		char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
		if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS ||
		    PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag) != MPI_SUCCESS || !flag)
			continue;
		kv[*n].key = strdup(key);
		kv[*n].val = strdup(val);
		if (kv[*n].key && kv[*n].val)
			(*n)++;
	}
	return kv;
}

static void kv_free(PMI_keyval_t *kv, int n)
{
	for (int i = 0; kv && i < n; i++) {
		free((char *)kv[i].key);
		free(kv[i].val);
	}
	free(kv);
}

/* The root's request to the process manager; npre keys go into the children's KVS. 0 or an
 * MPI code. */
static int pm_spawn(int count, char **cmds, char ***argvs, const int *np, const MPI_Info *infos,
                    const PMI_keyval_t *pre, int npre)
{
	const PMI_keyval_t **iv = calloc((size_t)count, sizeof(*iv));
	int *ni = calloc((size_t)count, sizeof(int)), total = 0, *errs, rc;

	for (int i = 0; i < count; i++)
		total += np[i] > 0 ? np[i] : 0;
	errs = calloc((size_t)total + 1, sizeof(int));
	if (!iv || !ni || !errs) {
		free(iv);
		free(ni);
		free(errs);
		return MPI_ERR_NO_MEM;
	}
	for (int i = 0; infos && i < count; i++)
		iv[i] = info_kv(infos[i], &ni[i]);
	rc = PMI_Spawn_multiple(count, (const char **)cmds, (const char ***)argvs, np, ni, iv, npre,
	                        pre, errs);
	for (int i = 0; i < count; i++)
		kv_free((PMI_keyval_t *)iv[i], ni[i]);
	free(iv);
	free(ni);
	free(errs);
	if (rc != PMI_SUCCESS) {
		char why[160];
		snprintf(
		    why, sizeof why,
		    "PMI_Spawn_multiple failed (PMI code %d; a line from the process manager, if "
		    "any, says why)",
		    rc);
		mpii_err_detail(why);
	}
	return rc == PMI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
}

static int check_args(int count, char **cmds, const int *np)
{
	if (count < 1 || !cmds || !np)
		return MPI_ERR_ARG;
	for (int i = 0; i < count; i++)
		if (!cmds[i] || !*cmds[i] || np[i] < 1)
			return MPI_ERR_ARG;
	return MPI_SUCCESS;
}

/* The root starts the children: the port, and without a handshake (id > 0) the id and the
 * cards of the parents in rank order, but the root's (its card is in the port). MPI code. */
static int root_spawn(int count, char **cmds, char ***argvs, const int *np, const MPI_Info *infos,
                      const char *port, int id, const char *pcards, int nparents, int root)
{
	PMI_keyval_t *pre = calloc((size_t)nparents + 2, sizeof(*pre));
	char spec[MPI_MAX_PORT_NAME + 48], (*keys)[32] = calloc((size_t)nparents, sizeof(*keys));
	int npre = 0, rc;

	if (!pre || !keys) {
		free(pre);
		free(keys);
		return MPI_ERR_NO_MEM;
	}
	pre[npre++] = (PMI_keyval_t){PARENT_KEY, (char *)port};
	if (id > 0) {
		snprintf(spec, sizeof spec, "%d,%d,%d,%s", id, nparents, root, port);
		pre[npre++] = (PMI_keyval_t){PRESET_KEY, spec};
		for (int i = 0; i < nparents; i++) {
			if (i == root)
				continue;
			snprintf(keys[i], sizeof keys[i], PRESET_CARD_KEY, i);
			pre[npre++] =
			    (PMI_keyval_t){keys[i], (char *)pcards + (size_t)i * MPII_CARD};
		}
	}
	rc = pm_spawn(count, cmds, argvs, np, infos, pre, npre);
	free(pre);
	free(keys);
	return rc;
}

static int spawn(int count, char **cmds, char ***argvs, const int *np, const MPI_Info *infos,
                 int root, MPI_Comm comm, MPI_Comm *inter, int *errcodes, const char *fn)
{
	struct mpii_comm *c = mpii_comm(comm);
	char port[MPI_MAX_PORT_NAME] = "", *pcards = NULL;
	uint64_t mask[MPII_NCTX_WORDS];
	int res[3] = {MPI_SUCCESS, 0, 0}, rc, preset; /* result, children, preset id */

	MPII_CHECK_INIT(fn);
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, fn);
	if (root < 0 || root >= c->size)
		return mpii_err(c, MPI_ERR_ROOT, fn);
	*inter = MPI_COMM_NULL;
	/* without a handshake, the parents' free ids and cards are at the root before the
	 * children start */
	preset = preset_allowed(c);
	rc = preset ? mpii_spawn_gather(c, root, mask, &pcards) : MPI_SUCCESS;
	if (c->rank == root) {
		res[0] = rc != MPI_SUCCESS ? rc : check_args(count, cmds, np);
		for (int i = 0; res[0] == MPI_SUCCESS && i < count; i++)
			res[1] += np[i];
		if (res[0] == MPI_SUCCESS)
			res[0] = mpii_open_port(port);
		if (res[0] == MPI_SUCCESS && preset && !(res[2] = (int)mpii_ctx_lowest(mask)))
			res[0] = MPI_ERR_INTERN; /* no context id free on every parent */
		if (res[0] == MPI_SUCCESS)
			res[0] = root_spawn(count, cmds, argvs, np, infos, port, res[2], pcards,
			                    c->size, root);
	}
	free(pcards);
	rc = mpii_bcast(res, 3, mpii_dt(MPI_INT), root, c);
	if (rc == MPI_SUCCESS)
		rc = res[0];
	for (int i = 0; errcodes && i < res[1]; i++)
		errcodes[i] = rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
	if (rc == MPI_ERR_SPAWN && c->rank != root)
		mpii_err_detail("the root's PMI_Spawn_multiple failed");
	if (rc == MPI_SUCCESS)
		rc = res[2] ? mpii_spawn_accept(port, root, c, res[2], res[1], inter)
		            : mpii_accept(port, root, c, inter);
	return mpii_err(c, rc, fn);
}

MPII_ALIAS(Comm_spawn)
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
	char *cmds[1] = {(char *)command};
	char **argvs[1] = {argv};

	return spawn(1, cmds, argvs, &maxprocs, &info, root, comm, intercomm, array_of_errcodes,
	             "MPI_Comm_spawn");
}

MPII_ALIAS(Comm_spawn_multiple)
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
	return spawn(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info,
	             root, comm, intercomm, array_of_errcodes, "MPI_Comm_spawn_multiple");
}
