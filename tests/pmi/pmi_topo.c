/* tests/pmi/pmi_topo.c: PMI_Topo_cluster_info checked against what the rank reads itself
 * (sched_getaffinity and /sys) and against every other rank's answer (through the KVS).
 * Usage: pmi_topo bound|unbound|any. Prints one line per rank:
 * "topo rank=R node=N ranks=a,b [socket=S sranks=...] [core=C cranks=...] attr=yes|no OK". */
#include <pmi.h>
#include <pmi2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void fail(const char *what)
{
	printf("topo rank=%d FAIL %s\n", rank, what);
	fflush(stdout);
	PMI_Abort(1, what);
}

static int sysnum(int cpu, const char *what)
{
	char path[256];
	int v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
	if (!(f = fopen(path, "r")) || fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* My CPU when I may run on exactly one, else -1. */
static int my_cpu(void)
{
	cpu_set_t set;
	int n = 0, cpu = -1;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			n++;
			cpu = c;
		}
	return n == 1 ? cpu : -1;
}

static void list(char *out, size_t cap, const int *r, int n)
{
	size_t off = 0;

	out[0] = '\0';
	for (int i = 0; i < n && off < cap; i++)
		off += (size_t)snprintf(out + off, cap - off, "%s%d", i ? "," : "", r[i]);
}

/* The ranks whose triple matches mine at level lv (0 node, 1 socket, 2 core), ascending. */
static int expect(int (*t)[3], int size, int lv, int *out)
{
	int n = 0;

	for (int r = 0; r < size; r++) {
		int same = t[r][0] == t[rank][0];
		if (lv >= 1)
			same = same && t[r][1] >= 0 && t[r][1] == t[rank][1];
		if (lv >= 2)
			same = same && t[r][2] >= 0 && t[r][2] == t[rank][2];
		if (same)
			out[n++] = r;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : "any";
	PMI_Topo_level_t lv[PMI_TOPO_LEVELS_MAX];
	int spawned, size, type = 0, nl = 0, found = 0, cpu = my_cpu();
	char kvs[256], key[64], val[256], a[1024], line[4096], attr[PMI2_MAX_VALLEN];

	if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&rank) != PMI_SUCCESS ||
	    PMI_Get_size(&size) != PMI_SUCCESS ||
	    PMI_KVS_Get_my_name(kvs, sizeof(kvs)) != PMI_SUCCESS)
		return 1;
	if (PMI_Topo_type(PMI_GROUP_WORLD, &type) != PMI_SUCCESS || type != PMI_TOPO_CLUSTER)
		fail("PMI_Topo_type");
	if (PMI_Topo_type(PMI_GROUP_WORLD + 1, &type) != PMI_ERR_INVALID_ARG)
		fail("PMI_Topo_type took an unknown group");
	if (PMI_Lamkit_topo_cluster_info(lv, 0, &nl) != PMI_ERR_INVALID_ARG)
		fail("maxlevels 0 accepted");
	if (PMI_Lamkit_topo_cluster_info(lv, PMI_TOPO_LEVELS_MAX, &nl) != PMI_SUCCESS || nl < 1 ||
	    nl > 3)
		fail("PMI_Lamkit_topo_cluster_info");
	/* the paper's form: the same levels, my cluster and my rank in each */
	int plevels = -1, pcl[PMI_TOPO_MAX_LEVELS], prk[PMI_TOPO_MAX_LEVELS], dims[3];
	if (PMI_Topo_cluster_info(PMI_GROUP_WORLD, &plevels, pcl, prk) != PMI_SUCCESS ||
	    plevels != nl)
		fail("PMI_Topo_cluster_info: not the levels of the lamkit call");
	for (int i = 0; i < nl; i++)
		if (pcl[i] != lv[i].index || prk[i] < 0 || prk[i] >= lv[i].nranks ||
		    lv[i].ranks[prk[i]] != rank)
			fail("PMI_Topo_cluster_info: my_cluster/my_rank differ from the lamkit "
			     "call");
	if (PMI_Topo_cluster_info(3, &plevels, pcl, prk) != PMI_ERR_INVALID_ARG)
		fail("PMI_Topo_cluster_info took an unknown group");
	if (PMI_Topo_mesh_info(PMI_GROUP_WORLD, 3, dims) != PMI_ERR_UNSUPPORTED)
		fail("PMI_Topo_mesh_info: a cluster answered as a mesh");
	for (int i = 0; i < nl; i++) {
		int me = 0;
		if (lv[i].level != i || lv[i].nranks < 1)
			fail("level order");
		for (int k = 0; k < lv[i].nranks; k++) {
			me |= lv[i].ranks[k] == rank;
			if (k && lv[i].ranks[k] <= lv[i].ranks[k - 1])
				fail("ranks not ascending");
		}
		if (!me)
			fail("a level without me");
	}
	if (strcmp(want, "bound") == 0 && (cpu < 0 || nl != 3))
		fail("bound, but no socket and core levels");
	if (strcmp(want, "unbound") == 0 && nl != 1)
		fail("not bound, but socket or core levels");
	if (nl >= 2 && (cpu < 0 || lv[1].index != sysnum(cpu, "physical_package_id")))
		fail("socket differs from /sys");
	if (nl >= 3 && lv[2].index != sysnum(cpu, "core_id"))
		fail("core differs from /sys");

	/* every rank's (node, socket, core), to check the sharing lists */
	snprintf(key, sizeof(key), "topo-%d", rank);
	snprintf(val, sizeof(val), "%d,%d,%d", lv[0].ranks[0], nl >= 2 ? lv[1].index : -1,
	         nl >= 3 ? lv[2].index : -1);
	if (PMI_KVS_Put(kvs, key, val) != PMI_SUCCESS || PMI_KVS_Commit(kvs) != PMI_SUCCESS ||
	    PMI_Barrier() != PMI_SUCCESS)
		fail("KVS");
	int(*t)[3] = calloc((size_t)size, sizeof(*t));
	int *e = calloc((size_t)size, sizeof(int));
	if (!t || !e)
		fail("memory");
	for (int r = 0; r < size; r++) {
		snprintf(key, sizeof(key), "topo-%d", r);
		if (PMI_KVS_Get(kvs, key, val, sizeof(val)) != PMI_SUCCESS ||
		    sscanf(val, "%d,%d,%d", &t[r][0], &t[r][1], &t[r][2]) != 3)
			fail("KVS get");
	}
	for (int i = 0; i < nl; i++) {
		int n = expect(t, size, i, e);
		if (n != lv[i].nranks || memcmp(e, lv[i].ranks, (size_t)n * sizeof(int)) != 0)
			fail(i == 0 ? "node ranks differ from the others' answers"
			            : "socket or core ranks differ from the others' answers");
	}
	(void)PMI2_Info_GetNodeAttr("lamkit_topo", attr, sizeof(attr), &found, 0);
	list(a, sizeof(a), lv[0].ranks, lv[0].nranks);
	int off =
	    snprintf(line, sizeof(line), "topo rank=%d node=%d ranks=%s", rank, lv[0].index, a);
	for (int i = 1; i < nl; i++) {
		list(a, sizeof(a), lv[i].ranks, lv[i].nranks);
		off += snprintf(line + off, sizeof(line) - (size_t)off, " %s=%d %s=%s",
		                i == 1 ? "socket" : "core", lv[i].index,
		                i == 1 ? "sranks" : "cranks", a);
	}
	printf("%s attr=%s OK\n", line, found ? "yes" : "no");
	free(t);
	free(e);
	PMI_Finalize();
	return 0;
}
