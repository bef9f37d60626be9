/* lib/boot/place.c: rank placement and PMI_process_mapping (see place.h). */
#include "place.h"
#include "core.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int slots_of(const struct boot_place_node *n)
{
	return n->cpus < 1 ? 1 : n->cpus;
}

/* "n1, n2, ..." (cut short when long) into buf. */
static void node_names(const struct boot_place_node *nodes, int nnodes, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < nnodes; i++) {
		if (off + strlen(nodes[i].host) + 8 >= len) { /* room left for ", ..." */
			snprintf(buf + off, len - off, "%s...", i ? ", " : "");
			return;
		}
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", nodes[i].host);
	}
}

/* The nodes that take ranks, in order, into cand (nnodes entries). Count, or -1 with err. */
static int select_nodes(const struct boot_place_node *nodes, int nnodes, const char *hosts,
                        int *cand, char *err, size_t errlen)
{
	int n = 0;
	char names[400];

	if (!hosts || !*hosts) {
		for (int i = 0; i < nnodes; i++)
			if (nodes[i].schedule)
				cand[n++] = i;
		if (n == 0 && nnodes == 0)
			return core_errprintf(err, errlen, "the universe has no nodes");
		if (n == 0)
			return core_errprintf(err, errlen,
			                      "no node of the universe may run ranks (all are "
			                      "schedule=no); name some with -hosts");
		return n;
	}
	for (const char *p = hosts; *p;) {
		size_t l = strcspn(p, ",");
		int found = 0;
		for (int i = 0; i < nnodes && l; i++) {
			if (strlen(nodes[i].host) != l || strncmp(nodes[i].host, p, l))
				continue;
			found = 1;
			int k = 0;
			while (k < n && cand[k] != i)
				k++;
			if (k == n) /* a host named twice is used once */
				cand[n++] = i;
		}
		if (l && !found) {
			node_names(nodes, nnodes, names, sizeof names);
			return core_errprintf(err, errlen,
			                      "host '%.*s' is not in the universe (nodes: %s)",
			                      (int)(l > 200 ? 200 : l), p, names);
		}
		p += l + (p[l] == ',');
	}
	if (n == 0)
		return core_errprintf(err, errlen, "-hosts names no host");
	return n;
}

static int total_slots(const struct boot_place_node *nodes, const int *cand, int nc)
{
	long s = 0;

	for (int i = 0; i < nc; i++)
		s += slots_of(&nodes[cand[i]]);
	return s > INT_MAX ? INT_MAX : (int)s;
}

int boot_place_slots(const struct boot_place_node *nodes, int nnodes, const char *hosts, char *err,
                     size_t errlen)
{
	int *cand = malloc((size_t)(nnodes + 1) * sizeof *cand);

	if (!cand)
		return core_errprintf(err, errlen, "out of memory");
	int nc = select_nodes(nodes, nnodes, hosts, cand, err, errlen);
	int s = nc < 0 ? -1 : total_slots(nodes, cand, nc);
	free(cand);
	return s;
}

void boot_placement_free(struct boot_placement *pl)
{
	free(pl->rank_node);
	free(pl->count);
	memset(pl, 0, sizeof *pl);
}

int boot_place(const struct boot_place_node *nodes, int nnodes, int nprocs,
               const struct boot_place_opts *o, struct boot_placement *pl, char *err, size_t errlen)
{
	int *cand = malloc((size_t)(nnodes + 1) * sizeof *cand);

	memset(pl, 0, sizeof *pl);
	pl->rank_node = malloc((size_t)(nprocs > 0 ? nprocs : 1) * sizeof *pl->rank_node);
	pl->count = calloc((size_t)(nnodes + 1), sizeof *pl->count);
	if (!cand || !pl->rank_node || !pl->count) {
		free(cand);
		boot_placement_free(pl);
		return core_errprintf(err, errlen, "out of memory");
	}
	int nc = select_nodes(nodes, nnodes, o->hosts, cand, err, errlen);
	if (nc < 0) {
		free(cand);
		boot_placement_free(pl);
		return -1;
	}
	pl->slots = total_slots(nodes, cand, nc);
	int cur = 0, used = 0; /* block by slots: the node being filled and its ranks so far */
	for (int r = 0; r < nprocs; r++) {
		int k;
		if (o->ppn > 0) {
			k = cand[(r / o->ppn) % nc];
		} else if (o->by_node) {
			k = cand[r % nc];
		} else {
			while (used >= slots_of(&nodes[cand[cur]])) {
				cur = (cur + 1) % nc;
				used = 0;
			}
			used++;
			k = cand[cur];
		}
		pl->rank_node[r] = k;
		if (pl->count[k]++ == 0)
			pl->nused++;
	}
	for (int i = 0; i < nnodes; i++)
		if (pl->count[i] > slots_of(&nodes[i]))
			pl->oversubscribed = 1;
	free(cand);
	return 0;
}

/* {==== PMI_process_mapping */

struct blk {
	int start, count, ppn;
};

static char *format_blocks(const struct blk *b, int nb)
{
	size_t cap = (size_t)nb * 40 + 16, off;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	off = (size_t)snprintf(s, cap, "(vector");
	for (int i = 0; i < nb; i++)
		off += (size_t)snprintf(s + off, cap - off, ",(%d,%d,%d)", b[i].start, b[i].count,
		                        b[i].ppn);
	snprintf(s + off, cap - off, ")");
	return s;
}

/* Whether the first p blocks, repeated until n ranks are placed, give node[]. */
static int repeats(const struct blk *b, int p, const int *node, int n)
{
	int r = 0;

	while (r < n) {
		for (int i = 0; i < p && r < n; i++)
			for (int k = 0; k < b[i].count && r < n; k++)
				for (int q = 0; q < b[i].ppn && r < n; q++)
					if (node[r++] != b[i].start + k)
						return 0;
	}
	return 1;
}

/* Blocks of node[] (renumbered nodes): runs of one node, merged while the next run is as
 * long and on the next node. Count. */
static int make_blocks(const int *node, int n, struct blk *b)
{
	int nb = 0;

	for (int r = 0; r < n;) {
		int s = r;
		while (r < n && node[r] == node[s])
			r++;
		struct blk *last = nb ? &b[nb - 1] : NULL;
		if (last && last->ppn == r - s && last->start + last->count == node[s])
			last->count++;
		else
			b[nb++] = (struct blk){.start = node[s], .count = 1, .ppn = r - s};
	}
	return nb;
}

static char *mapping_of(const int *node, int n, struct blk *b)
{
	int nb = make_blocks(node, n, b);
	char *s = format_blocks(b, nb);

	if (!s || strlen(s) <= BOOT_MAPPING_MAX)
		return s;
	free(s);
	/* a repetition starts on node 0, which never merges into the block before it */
	for (int p = 1; p < nb; p++) {
		if (b[p].start != 0 || !repeats(b, p, node, n))
			continue;
		s = format_blocks(b, p);
		if (!s || strlen(s) <= BOOT_MAPPING_MAX)
			return s;
		free(s);
		break;
	}
	return strdup("");
}

char *boot_process_mapping(const int *rank_node, int n)
{
	int max = 0, next = 0;

	if (n <= 0)
		return strdup("");
	for (int r = 0; r < n; r++) {
		if (rank_node[r] < 0) {
			errno = EINVAL;
			return NULL;
		}
		if (rank_node[r] > max)
			max = rank_node[r];
	}
	int *pos = malloc(((size_t)max + 1) * sizeof *pos);
	int *node = malloc((size_t)n * sizeof *node);
	struct blk *b = malloc((size_t)n * sizeof *b);
	char *s = NULL;
	if (pos && node && b) {
		for (int i = 0; i <= max; i++)
			pos[i] = -1;
		for (int r = 0; r < n; r++) {
			if (pos[rank_node[r]] < 0)
				pos[rank_node[r]] = next++;
			node[r] = pos[rank_node[r]];
		}
		s = mapping_of(node, n, b);
	}
	free(pos);
	free(node);
	free(b);
	if (!s)
		errno = ENOMEM;
	return s;
}

/* ====} */
