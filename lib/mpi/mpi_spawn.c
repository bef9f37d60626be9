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

int mpii_spawn_init(const char *kvsname)
{
	char port[MPI_MAX_PORT_NAME];
	int rc;

	mpii.parent = MPI_COMM_NULL;
	if (PMI_KVS_Get(kvsname, PARENT_KEY, port, (int)sizeof port) != PMI_SUCCESS)
		return MPI_SUCCESS; /* started by PMI spawn, but not by an MPI_Comm_spawn */
	rc = mpii_connect(port, 0, mpii_comm(MPI_COMM_WORLD), &mpii.parent);
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

/* The root's request to the process manager. 0 or an MPI code. */
static int pm_spawn(int count, char **cmds, char ***argvs, const int *np, const MPI_Info *infos,
                    const char *port)
{
	const PMI_keyval_t **iv = calloc((size_t)count, sizeof(*iv));
	int *ni = calloc((size_t)count, sizeof(int)), total = 0, *errs, rc;
	PMI_keyval_t pre = {PARENT_KEY, (char *)port};

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
	rc = PMI_Spawn_multiple(count, (const char **)cmds, (const char ***)argvs, np, ni, iv, 1,
	                        &pre, errs);
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

static int spawn(int count, char **cmds, char ***argvs, const int *np, const MPI_Info *infos,
                 int root, MPI_Comm comm, MPI_Comm *inter, int *errcodes, const char *fn)
{
	struct mpii_comm *c = mpii_comm(comm);
	char port[MPI_MAX_PORT_NAME] = "";
	int res[2] = {MPI_SUCCESS, 0}, rc;

	MPII_CHECK_INIT(fn);
	if (!c || c->inter)
		return mpii_err(c, MPI_ERR_COMM, fn);
	if (root < 0 || root >= c->size)
		return mpii_err(c, MPI_ERR_ROOT, fn);
	*inter = MPI_COMM_NULL;
	if (c->rank == root) {
		res[0] = check_args(count, cmds, np);
		for (int i = 0; res[0] == MPI_SUCCESS && i < count; i++)
			res[1] += np[i];
		if (res[0] == MPI_SUCCESS)
			res[0] = mpii_open_port(port);
		if (res[0] == MPI_SUCCESS)
			res[0] = pm_spawn(count, cmds, argvs, np, infos, port);
	}
	rc = mpii_bcast(res, 2, mpii_dt(MPI_INT), root, c);
	if (rc == MPI_SUCCESS)
		rc = res[0];
	for (int i = 0; errcodes && i < res[1]; i++)
		errcodes[i] = rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
	if (rc == MPI_ERR_SPAWN && c->rank != root)
		mpii_err_detail("the root's PMI_Spawn_multiple failed");
	if (rc == MPI_SUCCESS)
		rc = mpii_accept(port, root, c, inter);
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
