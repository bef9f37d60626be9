/* lib/pmi/pmi_client_topo.c: libpmi's topology calls (the PMI paper's and lamkit's richer
 * one): the node's text from the launcher, or the clique when the launcher does not serve it. */
#include "pmi.h"
#include "pmi_client_int.h"
#include "pmi_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pmic_topo_text(char *out, size_t cap)
{
	char line[PMIC_LINE];
	const char *sd = getenv("LAMKIT_SESSION_DIR");
	int found = 0;

	if (pmic.mode == PMIC_SINGLETON) { /* one rank on one node, bound as it finds itself */
		struct pmi_topo_bind b = {0, -1, -1};
		int me = 0, nb = pmi_topo_self(PMI_TOPO_SYSFS, &b.socket, &b.core) == 0;
		return pmi_topo_encode(out, cap, 0, 1, &me, 1, &b, nb) < 0 ? PMI_FAIL : PMI_SUCCESS;
	}
	if (pmic.mode != PMIC_WIRE)
		return PMI_ERR_INIT;
	if (pmic.ver == 2) { /* any PMI-2 server answers a node attribute; only ours has it */
		int rc = pmic2_query("info-getnodeattr", PMI_TOPO_KEY, "wait", "FALSE", out, cap,
		                     &found);
		return rc == PMI_SUCCESS && !found ? PMI_FAIL : rc;
	}
	if (!sd || !*sd)
		return PMI_FAIL; /* Hydra and others may not take an unknown command calmly */
	long n = pmic_xact("cmd=lamkit_topo\n", "lamkit_topo_result", line, sizeof(line));
	if (n < 0 || pmic_rc(line, (size_t)n) != 0 ||
	    pmi_wire_get_str(line, (size_t)n, "value", out, cap) < 0)
		return PMI_FAIL;
	return PMI_SUCCESS;
}

/* The launcher's answer, else the node from the clique (PMI_process_mapping, Hydra's
 * MPI_LOCALNRANKS, or just me). */
static int load(void)
{
	char text[PMI_TOPO_TEXT_MAX + 64];
	int n = 0;

	if (pmic.topo_ok)
		return PMI_SUCCESS;
	if (pmic_topo_text(text, sizeof(text)) == PMI_SUCCESS &&
	    pmi_topo_parse(text, pmic.rank, pmic.size, &pmic.topo) == 0) {
		pmic.topo_ok = 1;
		return PMI_SUCCESS;
	}
	if (PMI_Get_clique_size(&n) != PMI_SUCCESS || n < 1)
		return PMI_FAIL;
	int *r = malloc((size_t)n * sizeof(*r));
	if (!r)
		return PMI_ERR_NOMEM;
	if (PMI_Get_clique_ranks(r, n) != PMI_SUCCESS) {
		free(r);
		return PMI_FAIL;
	}
	pmi_topo_view_free(&pmic.topo);
	pmic.topo.node = pmic.node;
	pmic.topo.nnodes = pmic.nnodes;
	pmic.topo.nlevels = 1;
	pmic.topo.lv[0].level = PMI_TOPO_LEVEL_NODE;
	pmic.topo.lv[0].index = pmic.node;
	pmic.topo.lv[0].nranks = n;
	pmic.topo.lv[0].ranks = r;
	pmic.topo_ok = 1;
	return PMI_SUCCESS;
}

int PMI_Topo_type(PMI_Group group, int *kind)
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (group != PMI_GROUP_WORLD || !kind)
		return PMI_ERR_INVALID_ARG;
	*kind = PMI_TOPO_CLUSTER;
	return PMI_SUCCESS;
}

int PMI_Topo_cluster_info(PMI_Group group, int *levels, int my_cluster[], int my_rank[])
{
	int rc;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (group != PMI_GROUP_WORLD || !levels || !my_cluster || !my_rank)
		return PMI_ERR_INVALID_ARG;
	if ((rc = load()) != PMI_SUCCESS)
		return rc;
	*levels = pmic.topo.nlevels;
	for (int i = 0; i < pmic.topo.nlevels; i++) {
		int k = 0;
		while (k < pmic.topo.lv[i].nranks && pmic.topo.lv[i].ranks[k] < pmic.rank)
			k++; /* ascending, and I am among them */
		my_cluster[i] = pmic.topo.lv[i].index;
		my_rank[i] = k;
	}
	return PMI_SUCCESS;
}

int PMI_Topo_mesh_info(PMI_Group group, int ndims, int dims[])
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (group != PMI_GROUP_WORLD || ndims < 0 || (ndims > 0 && !dims))
		return PMI_ERR_INVALID_ARG;
	return PMI_ERR_UNSUPPORTED; /* nodes, sockets and cores: a cluster, not a mesh */
}

int PMI_Lamkit_topo_cluster_info(PMI_Topo_level_t levels[], int maxlevels, int *nlevels)
{
	int rc;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!levels || maxlevels < 1 || !nlevels)
		return PMI_ERR_INVALID_ARG;
	if ((rc = load()) != PMI_SUCCESS)
		return rc;
	*nlevels = pmic.topo.nlevels < maxlevels ? pmic.topo.nlevels : maxlevels;
	for (int i = 0; i < *nlevels; i++) {
		levels[i].level = pmic.topo.lv[i].level;
		levels[i].index = pmic.topo.lv[i].index;
		levels[i].nranks = pmic.topo.lv[i].nranks;
		levels[i].ranks = pmic.topo.lv[i].ranks;
	}
	return PMI_SUCCESS;
}

int PMI_Topo_node_map(int node[], int size)
{
	char val[PMIC_LINE];

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!node || size != pmic.size)
		return PMI_ERR_INVALID_ARG;
	if (pmic.mode != PMIC_WIRE ||
	    pmic_jobattr("PMI_process_mapping", val, sizeof(val)) != PMI_SUCCESS ||
	    pmi_topo_mapping(val, node, size) < 0)
		return PMI_FAIL;
	return PMI_SUCCESS;
}
