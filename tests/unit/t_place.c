/* tests/unit/t_place.c: rank placement (block by slots, -ppn, map by node, -hosts) and the
 * PMI_process_mapping text, checked by expanding it the way MPICH does. */
#include "place.h"
#include "tap.h"

#include <stdlib.h>

#define N(h, c, s)                                                                                 \
	{                                                                                          \
		.host = h, .cpus = c, .schedule = s                                                \
	}

static char err[512];

/* Place and return "node,node,..." of every rank (static buffer), or the error. */
static const char *where(const struct boot_place_node *nodes, int nn, int np, int ppn, int by_node,
                         const char *hosts, struct boot_placement *pl)
{
	static char buf[4096];
	struct boot_place_opts o = {.ppn = ppn, .by_node = by_node, .hosts = hosts};
	size_t off = 0;

	if (boot_place(nodes, nn, np, &o, pl, err, sizeof err) < 0)
		return err;
	buf[0] = '\0';
	for (int r = 0; r < np && off < sizeof buf - 16; r++)
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%d", r ? "," : "",
		                        pl->rank_node[r]);
	return buf;
}

static char *mapping(const struct boot_placement *pl, int np)
{
	static char *last;

	free(last);
	last = boot_process_mapping(pl->rank_node, np);
	return last;
}

/* Expand a mapping as MPICH's populate_ids_from_mapping does (blocks in order, repeated from
 * the first block starting at node 0). 0 if it gives node[] (renumbered by first rank). */
static int check_mapping(const char *m, const int *rank_node, int n)
{
	int blk[1024][3], nb = 0, off = 0, r = 0;
	int *pos = calloc(4096, sizeof *pos), next = 1, bad = 0;

	if (sscanf(m, "(vector%n", &off) != 0 || !off)
		bad = 1;
	m += off;
	while (!bad && nb < 1024 &&
	       sscanf(m, ",(%d,%d,%d)%n", &blk[nb][0], &blk[nb][1], &blk[nb][2], &off) == 3) {
		nb++;
		m += off;
	}
	if (bad || nb == 0 || strcmp(m, ")") != 0) {
		free(pos);
		return -1;
	}
	for (int wrap = 0; r < n && !bad; wrap = 1) {
		int b = 0;
		while (wrap && b < nb && blk[b][0] != 0)
			b++;
		for (; b < nb && r < n; b++)
			for (int k = 0; k < blk[b][1] && r < n; k++)
				for (int q = 0; q < blk[b][2] && r < n; q++, r++) {
					int *p = &pos[rank_node[r]];
					if (!*p)
						*p = next++;
					if (*p - 1 != blk[b][0] + k)
						bad = 1;
				}
	}
	free(pos);
	return bad ? -1 : 0;
}

static void basics(void)
{
	struct boot_placement pl;
	struct boot_place_node two[] = {N("a", 2, 1), N("b", 2, 1)};

	is_str(where(two, 2, 4, 0, 0, NULL, &pl), "0,0,1,1", "block: 2 nodes x 2 slots");
	is_str(mapping(&pl, 4), "(vector,(0,2,2))", "block mapping");
	ok(pl.nused == 2 && pl.slots == 4 && !pl.oversubscribed, "2 used, 4 slots, not over");
	is_int(pl.count[0] * 10 + pl.count[1], 22, "counts per node");
	boot_placement_free(&pl);
	is_str(where(two, 2, 3, 0, 0, NULL, &pl), "0,0,1", "block: a short last node");
	is_str(mapping(&pl, 3), "(vector,(0,1,2),(1,1,1))", "its mapping");
	boot_placement_free(&pl);
	is_str(where(two, 2, 1, 0, 0, NULL, &pl), "0", "one rank: one node");
	ok(pl.nused == 1, "only the first node is used");
	is_str(mapping(&pl, 1), "(vector,(0,1,1))", "one rank mapping");
	boot_placement_free(&pl);

	struct boot_place_node uneven[] = {N("a", 2, 1), N("b", 1, 1)};
	is_str(where(uneven, 2, 7, 0, 0, NULL, &pl), "0,0,1,0,0,1,0", "block wraps around");
	ok(pl.oversubscribed, "and is oversubscribed");
	is_str(mapping(&pl, 7), "(vector,(0,1,2),(1,1,1),(0,1,2),(1,1,1),(0,1,1))",
	       "wrapped mapping, exact");
	boot_placement_free(&pl);

	struct boot_place_node three[] = {N("a", 4, 1), N("b", 4, 1), N("c", 4, 1)};
	is_str(where(three, 3, 8, 2, 0, NULL, &pl), "0,0,1,1,2,2,0,0", "-ppn 2 over 3 nodes");
	is_str(mapping(&pl, 8), "(vector,(0,3,2),(0,1,2))", "-ppn mapping");
	ok(!pl.oversubscribed, "-ppn within slots");
	boot_placement_free(&pl);
	is_str(where(three, 3, 4, 5, 0, NULL, &pl), "0,0,0,0", "-ppn 5 with 4 ranks: one node");
	ok(pl.oversubscribed == 0 && pl.nused == 1, "4 ranks on a 4-slot node");
	boot_placement_free(&pl);
	is_str(where(three, 3, 10, 5, 0, NULL, &pl), "0,0,0,0,0,1,1,1,1,1", "-ppn 5 > slots");
	ok(pl.oversubscribed, "-ppn beyond the slots is oversubscribed");
	boot_placement_free(&pl);

	struct boot_place_node four[] = {N("a", 8, 1), N("b", 8, 1), N("c", 8, 1), N("d", 8, 1)};
	is_str(where(four, 4, 8, 0, 1, NULL, &pl), "0,1,2,3,0,1,2,3", "map by node");
	is_str(mapping(&pl, 8), "(vector,(0,4,1),(0,4,1))", "map by node mapping");
	boot_placement_free(&pl);
	is_str(where(four, 4, 6, 0, 1, NULL, &pl), "0,1,2,3,0,1", "map by node, uneven");
	is_str(mapping(&pl, 6), "(vector,(0,4,1),(0,2,1))", "its mapping");
	boot_placement_free(&pl);
	is_str(where(four, 4, 8, 2, 1, NULL, &pl), "0,0,1,1,2,2,3,3", "-ppn wins over by_node");
	boot_placement_free(&pl);
}

static void filters(void)
{
	struct boot_placement pl;
	struct boot_place_node n[] = {N("head", 4, 0), N("n1", 1, 1), N("n2", 1, 1)};

	is_str(where(n, 3, 2, 0, 0, NULL, &pl), "1,2", "schedule=no node gets no ranks");
	is_str(mapping(&pl, 2), "(vector,(0,2,1))", "mapping renumbers the nodes used");
	is_int(pl.slots, 2, "slots of schedulable nodes only");
	boot_placement_free(&pl);
	is_int(boot_place_slots(n, 3, NULL, err, sizeof err), 2, "default -n: schedulable slots");
	is_int(boot_place_slots(n, 3, "head,n2", err, sizeof err), 5, "default -n under -hosts");
	is_str(where(n, 3, 3, 0, 0, "n2,head", &pl), "2,0,0",
	       "-hosts order, names a schedule=no node");
	is_str(mapping(&pl, 3), "(vector,(0,1,1),(1,1,2))", "its mapping");
	boot_placement_free(&pl);
	is_str(where(n, 3, 2, 0, 0, "n1,n1,", &pl), "1,1", "a host named twice is used once");
	ok(pl.oversubscribed, "so it is oversubscribed");
	boot_placement_free(&pl);
	is_str(where(n, 3, 2, 0, 0, "n1,bogus", &pl),
	       "host 'bogus' is not in the universe (nodes: head, n1, n2)", "unknown host");
	is_int(boot_place_slots(n, 3, "x", err, sizeof err), -1, "slots: unknown host fails");
	is_str(where(n, 3, 2, 0, 0, ",", &pl), "-hosts names no host", "an empty filter");
	struct boot_place_node none[] = {N("head", 4, 0)};
	ok(strstr(where(none, 1, 1, 0, 0, NULL, &pl), "no node of the universe may run ranks") !=
	       NULL,
	   "no schedulable node: %s", err);
	ok(strstr(where(none, 0, 1, 0, 0, NULL, &pl), "no nodes") != NULL, "no nodes at all");
	/* a long node list is cut short */
	struct boot_place_node many[200];
	char names[200][16];
	for (int i = 0; i < 200; i++) {
		snprintf(names[i], sizeof names[i], "node%03d", i);
		many[i] = (struct boot_place_node)N(names[i], 1, 1);
	}
	const char *e = where(many, 200, 1, 0, 0, "zz", &pl);
	ok(strlen(e) < sizeof err - 1 && strstr(e, "node000, node001") && strstr(e, "...)"),
	   "long node list cut short: %s", e);
}

static void long_mappings(void)
{
	struct boot_placement pl;
	static struct boot_place_node n[400];
	static char names[400][16];

	for (int i = 0; i < 400; i++) {
		snprintf(names[i], sizeof names[i], "n%d", i);
		n[i] = (struct boot_place_node)N(names[i], 1 + i % 2, 1);
	}
	/* 60 nodes of 1 and 2 slots, 3 passes: too long written out, one period is short */
	where(n, 60, 90 * 3 - 5, 0, 0, NULL, &pl);
	char *m = mapping(&pl, 90 * 3 - 5);
	ok(m && strlen(m) <= BOOT_MAPPING_MAX, "long wrapped mapping fits (%zu bytes)",
	   m ? strlen(m) : 0);
	ok(m && check_mapping(m, pl.rank_node, 90 * 3 - 5) == 0, "and expands to the placement");
	boot_placement_free(&pl);
	/* 400 nodes of alternating slots: even one period is too long */
	where(n, 400, 600, 0, 0, NULL, &pl);
	is_str(mapping(&pl, 600), "", "no mapping rather than a wrong or oversized one");
	boot_placement_free(&pl);
	/* 400 equal nodes map by node: one block */
	for (int i = 0; i < 400; i++)
		n[i].cpus = 2;
	where(n, 400, 800, 0, 0, NULL, &pl);
	is_str(mapping(&pl, 800), "(vector,(0,400,2))", "400 nodes in one block");
	boot_placement_free(&pl);
	int neg[] = {0, -1};
	ok(boot_process_mapping(neg, 2) == NULL, "a negative node is refused");
}

/* Random nodes and options: the mapping always expands back to the placement. */
static void random_placements(void)
{
	struct boot_place_node n[12];
	static char names[12][16];
	int bad = 0, runs = 0;

	srand(7);
	for (int t = 0; t < 3000; t++) {
		int nn = 1 + rand() % 12, np = 1 + rand() % 100;
		for (int i = 0; i < nn; i++) {
			snprintf(names[i], sizeof names[i], "h%d", i);
			n[i] = (struct boot_place_node)N(names[i], 1 + rand() % 5, rand() % 4 != 0);
		}
		n[rand() % nn].schedule = 1;
		struct boot_placement pl;
		struct boot_place_opts o = {.ppn = rand() % 3 ? 0 : 1 + rand() % 4,
		                            .by_node = rand() % 2};
		if (boot_place(n, nn, np, &o, &pl, err, sizeof err) < 0) {
			bad++;
			continue;
		}
		int sum = 0;
		for (int i = 0; i < nn; i++) {
			sum += pl.count[i];
			if (pl.count[i] && !n[i].schedule)
				bad++;
		}
		char *m = boot_process_mapping(pl.rank_node, np);
		if (sum != np || pl.rank_node[0] < 0 || !m || !*m ||
		    check_mapping(m, pl.rank_node, np))
			bad++;
		free(m);
		boot_placement_free(&pl);
		runs++;
	}
	is_int(bad, 0, "%d random placements: counts, schedule and mappings agree", runs);
}

int main(void)
{
	basics();
	filters();
	long_mappings();
	random_placements();
	return done_testing();
}
