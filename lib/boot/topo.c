/* lib/boot/topo.c: the node's CPU topology from /sys, numbered as hwloc numbers it (topo.h). */
#include "topo.h"
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_MAX 8192 /* CPU numbers read are below this */

/* Per OS CPU while reading: the lowest CPU of each of its objects (-1: none known). */
struct cpu {
	int usable;
	int of[BOOT_TOPO_NTYPES];
};

/* Parse a kernel CPU list ("0-3,8,10-11") into set[CPU_MAX]. Count, or -1 if malformed. */
static int parse_list(const char *s, unsigned char *set)
{
	int n = 0;

	memset(set, 0, CPU_MAX);
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || a < 0 || a >= CPU_MAX)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b >= CPU_MAX)
				return -1;
			s = end;
		}
		for (long c = a; c <= b; c++)
			n += !set[c], set[c] = 1;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return n;
}

/* Read DIR/REL (a CPU list) into set. Count, or -1 when absent or malformed. */
static int read_list(const char *dir, const char *rel, unsigned char *set)
{
	char path[PATH_MAX], *text;
	int n;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	if (!(text = core_read_file(path, 1 << 16, NULL)))
		return -1;
	n = parse_list(text, set);
	free(text);
	return n;
}

/* For every usable CPU of set, record first_of(set) as its object of type t (the first
 * description wins: a CPU is in one object of each type). */
static void assign(struct cpu *cpus, const unsigned char *set, int t)
{
	int f = -1;

	for (int c = 0; c < CPU_MAX; c++)
		if (set[c] && cpus[c].usable && f < 0)
			f = c;
	for (int c = 0; f >= 0 && c < CPU_MAX; c++)
		if (set[c] && cpus[c].usable && cpus[c].of[t] < 0)
			cpus[c].of[t] = f;
}

/* cpu/cpuN/topology: packages and cores; cache/indexK: the L3. */
static void read_cpu(const char *dir, struct cpu *cpus, int c, unsigned char *set)
{
	char rel[128];

	snprintf(rel, sizeof rel, "cpu/cpu%d/topology/package_cpus_list", c);
	if (read_list(dir, rel, set) > 0 ||
	    (snprintf(rel, sizeof rel, "cpu/cpu%d/topology/core_siblings_list", c),
	     read_list(dir, rel, set) > 0))
		assign(cpus, set, BOOT_TOPO_PACKAGE);
	snprintf(rel, sizeof rel, "cpu/cpu%d/topology/core_cpus_list", c);
	if (read_list(dir, rel, set) > 0 ||
	    (snprintf(rel, sizeof rel, "cpu/cpu%d/topology/thread_siblings_list", c),
	     read_list(dir, rel, set) > 0))
		assign(cpus, set, BOOT_TOPO_CORE);
	for (int k = 0; k < 16; k++) {
		char path[PATH_MAX], *lv, *ty;
		snprintf(path, sizeof path, "%s/cpu/cpu%d/cache/index%d/level", dir, c, k);
		if (!(lv = core_read_file(path, 64, NULL)))
			continue; /* indexes may have holes */
		snprintf(path, sizeof path, "%s/cpu/cpu%d/cache/index%d/type", dir, c, k);
		ty = core_read_file(path, 64, NULL);
		int l3 = atoi(lv) == 3 && (!ty || strncmp(ty, "Instruction", 11) != 0);
		free(lv);
		free(ty);
		snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index%d/shared_cpu_list", c, k);
		if (l3 && read_list(dir, rel, set) > 0)
			assign(cpus, set, BOOT_TOPO_L3);
	}
}

/* node/nodeN/cpulist for every N. */
static void read_numa(const char *dir, struct cpu *cpus, unsigned char *set)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof path, "%s/node", dir);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		char rel[300];
		if (strncmp(e->d_name, "node", 4) || e->d_name[4] < '0' || e->d_name[4] > '9')
			continue;
		snprintf(rel, sizeof rel, "node/%s/cpulist", e->d_name);
		if (read_list(dir, rel, set) > 0)
			assign(cpus, set, BOOT_TOPO_NUMA);
	}
	closedir(d);
}

/* Which CPUs are usable: online (cpu/online, else every cpuN directory) and, with affinity,
 * in our mask. Count. */
static int usable(const char *dir, struct cpu *cpus, int affinity, unsigned char *set)
{
	cpu_set_t mask;
	int n = 0, have_mask = affinity && sched_getaffinity(0, sizeof mask, &mask) == 0;

	if (read_list(dir, "cpu/online", set) <= 0) {
		char path[PATH_MAX];
		struct dirent *e;
		DIR *d;
		snprintf(path, sizeof path, "%s/cpu", dir);
		memset(set, 0, CPU_MAX);
		if ((d = opendir(path))) {
			while ((e = readdir(d))) {
				char *end;
				long c = strtol(e->d_name + 3, &end, 10);
				if (!strncmp(e->d_name, "cpu", 3) && end != e->d_name + 3 &&
				    !*end && c >= 0 && c < CPU_MAX)
					set[c] = 1;
			}
			closedir(d);
		}
	}
	for (int c = 0; c < CPU_MAX; c++) {
		cpus[c].usable = set[c] && (!have_mask || (c < CPU_SETSIZE && CPU_ISSET(c, &mask)));
		n += cpus[c].usable;
		for (int t = 0; t < BOOT_TOPO_NTYPES; t++)
			cpus[c].of[t] = -1;
	}
	return n;
}

static const struct cpu *g_cpus; /* for the sort below */
static const int *g_order;

/* Logical order: by each ancestor's lowest CPU, outermost first, then the CPU number. */
static int cmp_pu(const void *a, const void *b)
{
	const struct cpu *x = &g_cpus[*(const int *)a], *y = &g_cpus[*(const int *)b];

	for (int k = 0; k < BOOT_TOPO_NTYPES - 1; k++) {
		int t = g_order[k];
		if (x->of[t] != y->of[t])
			return x->of[t] < y->of[t] ? -1 : 1;
	}
	return *(const int *)a < *(const int *)b ? -1 : *(const int *)a > *(const int *)b;
}

/* Count the objects of type t among the usable CPUs (distinct `of` values). */
static int count_objs(const struct cpu *cpus, int t)
{
	int n = 0;

	for (int c = 0; c < CPU_MAX; c++)
		if (cpus[c].usable && cpus[c].of[t] == c)
			n++;
	return n;
}

/* Outermost first: fewer objects is outer; ties keep package, NUMA, L3. */
static void sort_levels(struct boot_topo *t, const int *cnt)
{
	int o[3] = {BOOT_TOPO_PACKAGE, BOOT_TOPO_NUMA, BOOT_TOPO_L3};

	/* an absent level (count 0) sorts after the others */
#define KEY(ty) (cnt[ty] ? cnt[ty] : INT_MAX)
	for (int i = 1; i < 3; i++)
		for (int j = i; j > 0 && KEY(o[j]) < KEY(o[j - 1]); j--) {
			int x = o[j];
			o[j] = o[j - 1];
			o[j - 1] = x;
		}
#undef KEY
	for (int i = 0; i < 3; i++)
		t->order[i] = o[i];
	t->order[3] = BOOT_TOPO_CORE;
	t->order[4] = BOOT_TOPO_PU;
}

/* Build first[type] from the logical order; a level whose objects are not contiguous is
 * dropped. 0, or -1 (ENOMEM). */
static int build_levels(struct boot_topo *t, const struct cpu *cpus, const int *lpu)
{
	for (int ty = 0; ty < BOOT_TOPO_NTYPES; ty++) {
		int *f = malloc(sizeof(int) * (size_t)(t->npu + 1)), n = 0, ok = 1;
		if (!f)
			return -1;
		for (int i = 0; i < t->npu; i++) {
			int id = ty == BOOT_TOPO_PU ? lpu[i] : cpus[lpu[i]].of[ty];
			int prev =
			    i ? (ty == BOOT_TOPO_PU ? lpu[i - 1] : cpus[lpu[i - 1]].of[ty]) : -2;
			if (id == prev)
				continue;
			/* a new object must not be one seen before */
			for (int k = 0; k < n && ok; k++)
				ok =
				    (ty == BOOT_TOPO_PU ? lpu[f[k]] : cpus[lpu[f[k]]].of[ty]) != id;
			f[n++] = i;
		}
		f[n] = t->npu;
		t->first[ty] = f;
		t->n[ty] = ok ? n : 0;
	}
	return 0;
}

int boot_topo_read_dir(struct boot_topo *t, const char *dir, int affinity, char *err, size_t errlen)
{
	struct cpu *cpus = calloc(CPU_MAX, sizeof *cpus);
	unsigned char *set = malloc(CPU_MAX);
	int *lpu = NULL, n, cnt[BOOT_TOPO_NTYPES];

	memset(t, 0, sizeof *t);
	snprintf(t->source, sizeof t->source, "%s", dir);
	if (!cpus || !set)
		goto nomem;
	if ((n = usable(dir, cpus, affinity, set)) <= 0) {
		free(cpus);
		free(set);
		return core_errprintf(err, errlen, "%s: no usable CPU described (cpu/online)", dir);
	}
	for (int c = 0; c < CPU_MAX; c++)
		if (cpus[c].usable)
			read_cpu(dir, cpus, c, set);
	read_numa(dir, cpus, set);
	/* what the node does not say: one package and one NUMA node, each PU its own core */
	for (int c = 0; c < CPU_MAX; c++) {
		if (!cpus[c].usable)
			continue;
		if (cpus[c].of[BOOT_TOPO_PACKAGE] < 0 || cpus[c].of[BOOT_TOPO_NUMA] < 0) {
			int f = 0;
			while (!cpus[f].usable)
				f++;
			if (cpus[c].of[BOOT_TOPO_PACKAGE] < 0)
				cpus[c].of[BOOT_TOPO_PACKAGE] = f;
			if (cpus[c].of[BOOT_TOPO_NUMA] < 0)
				cpus[c].of[BOOT_TOPO_NUMA] = f;
		}
		if (cpus[c].of[BOOT_TOPO_CORE] < 0)
			cpus[c].of[BOOT_TOPO_CORE] = c;
		cpus[c].of[BOOT_TOPO_PU] = c;
	}
	/* an L3 known for some CPUs only is no level */
	for (int c = 0; c < CPU_MAX; c++)
		if (cpus[c].usable && cpus[c].of[BOOT_TOPO_L3] < 0) {
			for (int d = 0; d < CPU_MAX; d++)
				cpus[d].of[BOOT_TOPO_L3] = -1;
			break;
		}
	for (int ty = 0; ty < BOOT_TOPO_NTYPES; ty++)
		cnt[ty] = count_objs(cpus, ty);
	sort_levels(t, cnt);
	if (!(lpu = malloc(sizeof(int) * (size_t)n)) || !(t->os = malloc(sizeof(int) * (size_t)n)))
		goto nomem;
	t->npu = 0;
	for (int c = 0; c < CPU_MAX; c++)
		if (cpus[c].usable)
			lpu[t->npu++] = c;
	g_cpus = cpus;
	g_order = t->order;
	qsort(lpu, (size_t)n, sizeof *lpu, cmp_pu);
	memcpy(t->os, lpu, sizeof(int) * (size_t)n);
	if (build_levels(t, cpus, lpu) < 0)
		goto nomem;
	if (!cnt[BOOT_TOPO_L3])
		t->n[BOOT_TOPO_L3] = 0;
	free(lpu);
	free(cpus);
	free(set);
	return 0;
nomem:
	free(lpu);
	free(cpus);
	free(set);
	boot_topo_free(t);
	return core_errprintf(err, errlen, "out of memory reading the topology");
}

int boot_topo_read(struct boot_topo *t, char *err, size_t errlen)
{
	const char *e = getenv("LAMKIT_SYSFS");

	if (e && *e)
		return boot_topo_read_dir(t, e, 0, err, errlen);
	return boot_topo_read_dir(t, "/sys/devices/system", 1, err, errlen);
}

void boot_topo_free(struct boot_topo *t)
{
	free(t->os);
	for (int ty = 0; ty < BOOT_TOPO_NTYPES; ty++)
		free(t->first[ty]);
	memset(t, 0, sizeof *t);
}

int boot_topo_obj_of(const struct boot_topo *t, int type, int pu)
{
	int lo = 0, hi = t->n[type] - 1;

	if (t->n[type] <= 0 || pu < 0 || pu >= t->npu)
		return -1;
	while (lo < hi) { /* the last object whose first PU is <= pu */
		int mid = (lo + hi + 1) / 2;
		if (t->first[type][mid] <= pu)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int boot_topo_npus(const struct boot_topo *t, int type, int i)
{
	return i < 0 || i >= t->n[type] ? 0 : t->first[type][i + 1] - t->first[type][i];
}

int boot_topo_ncores(const struct boot_topo *t, int type, int i)
{
	int lo, hi;

	if (i < 0 || i >= t->n[type])
		return 0;
	lo = boot_topo_obj_of(t, BOOT_TOPO_CORE, t->first[type][i]);
	hi = boot_topo_obj_of(t, BOOT_TOPO_CORE, t->first[type][i + 1] - 1);
	return lo < 0 ? 0 : hi - lo + 1;
}

const char *boot_topo_type_name(int type)
{
	static const char *const name[] = {"package", "numa", "l3cache", "core", "hwthread"};

	return type >= 0 && type < BOOT_TOPO_NTYPES ? name[type] : NULL;
}

int boot_topo_shape(struct boot_topo *t, int sockets, int cores, int threads)
{
	int per[BOOT_TOPO_NTYPES];

	memset(t, 0, sizeof *t);
	if (sockets < 1 || cores < 1 || threads < 1 || sockets > 4096 || cores > 4096 ||
	    threads > 64 || (long)sockets * cores * threads > CPU_MAX)
		return -1;
	t->npu = sockets * cores * threads;
	snprintf(t->source, sizeof t->source, "%d sockets x %d cores x %d threads", sockets, cores,
	         threads);
	per[BOOT_TOPO_PACKAGE] = per[BOOT_TOPO_NUMA] = per[BOOT_TOPO_L3] = cores * threads;
	per[BOOT_TOPO_CORE] = threads;
	per[BOOT_TOPO_PU] = 1;
	if (!(t->os = malloc(sizeof(int) * (size_t)t->npu)))
		return -1;
	for (int i = 0; i < t->npu; i++)
		t->os[i] = i;
	for (int ty = 0; ty < BOOT_TOPO_NTYPES; ty++) {
		t->n[ty] = t->npu / per[ty];
		t->order[ty] = ty;
		if (!(t->first[ty] = malloc(sizeof(int) * (size_t)(t->n[ty] + 1)))) {
			boot_topo_free(t);
			return -1;
		}
		for (int i = 0; i <= t->n[ty]; i++)
			t->first[ty][i] = i * per[ty];
	}
	return 0;
}
