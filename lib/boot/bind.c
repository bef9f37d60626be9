/* lib/boot/bind.c: mapping, ranking and binding of a node's ranks, and their report (bind.h). */
#include "bind.h"
#include "core.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- names ---- */

static const struct {
	const char *name;
	int v;
} objs[] = {
    {"slot", BOOT_MAP_SLOT},       {"node", BOOT_MAP_NODE},        {"core", BOOT_TOPO_CORE},
    {"socket", BOOT_TOPO_PACKAGE}, {"package", BOOT_TOPO_PACKAGE}, {"skt", BOOT_TOPO_PACKAGE},
    {"numa", BOOT_TOPO_NUMA},      {"l3cache", BOOT_TOPO_L3},      {"l3", BOOT_TOPO_L3},
    {"hwthread", BOOT_TOPO_PU},    {"thread", BOOT_TOPO_PU},       {"hwt", BOOT_TOPO_PU},
    {"none", BOOT_BINDTO_NONE},    {"auto", BOOT_BINDTO_AUTO},
};

/* The value of an object name (case-insensitive), or -1. */
static int obj_value(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
		if (strlen(objs[i].name) == len && !strncasecmp(objs[i].name, s, len))
			return objs[i].v;
	return -1;
}

const char *boot_bind_obj_name(int v)
{
	switch (v) {
	case BOOT_MAP_SLOT:
		return "slot";
	case BOOT_MAP_NODE:
		return "node";
	case BOOT_TOPO_PACKAGE:
		return "socket";
	case BOOT_TOPO_NUMA:
		return "numa";
	case BOOT_TOPO_L3:
		return "l3cache";
	case BOOT_TOPO_CORE:
		return "core";
	case BOOT_TOPO_PU:
		return "hwthread";
	case BOOT_BINDTO_NONE:
		return "none";
	case BOOT_BINDTO_AUTO:
		return "auto";
	}
	return "?";
}

void boot_bind_init(struct boot_bind_spec *s)
{
	memset(s, 0, sizeof *s);
	s->map = BOOT_MAP_DEFAULT;
	s->rank = BOOT_MAP_DEFAULT;
	s->bind = BOOT_BINDTO_DEFAULT;
	s->oversub = -1;
}

/* A positive number of at most 100000 in s[0..len), or -1. */
static int count_of(const char *s, size_t len)
{
	char buf[16], *end;
	long v;

	if (!len || len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtol(buf, &end, 10);
	return *end || v < 1 || v > 100000 ? -1 : (int)v;
}

/* The modifiers of --map-by after its object: pe=M, span, oversubscribe, nooversubscribe,
 * separated by ',' (Open MPI 4) or ':' (Open MPI 5, PRRTE). */
static int map_mods(struct boot_bind_spec *s, const char *m, const char *all, char *err,
                    size_t errlen)
{
	while (*m) {
		size_t l = strcspn(m, ",:");
		if (l > 3 && !strncasecmp(m, "pe=", 3)) {
			if ((s->pe = count_of(m + 3, l - 3)) < 0)
				return core_errprintf(
				    err, errlen, "--map-by %s: pe= needs a number of CPUs per rank",
				    all);
		} else if (l == 4 && !strncasecmp(m, "span", 4)) {
			s->span = 1;
		} else if (l == 13 && !strncasecmp(m, "oversubscribe", 13)) {
			s->oversub = 1;
		} else if (l == 15 && !strncasecmp(m, "nooversubscribe", 15)) {
			s->oversub = 0;
		} else if (l) {
			return core_errprintf(err, errlen,
			                      "--map-by %s: unknown modifier '%.*s' (pe=N, span, "
			                      "oversubscribe, nooversubscribe)",
			                      all, (int)(l > 40 ? 40 : l), m);
		}
		m += l + (m[l] != '\0');
	}
	return 0;
}

static int parse_map(struct boot_bind_spec *s, const char *v, char *err, size_t errlen)
{
	size_t l = strcspn(v, ":");
	int o;

	s->map_given = 1;
	if (l == 3 && !strncasecmp(v, "ppr", 3)) { /* ppr:N:OBJ[:mods] */
		const char *n = v + 4, *ob;
		size_t nl = v[3] == ':' ? strcspn(n, ":") : 0;
		if (!nl || n[nl] != ':' || (s->ppr_n = count_of(n, nl)) < 0)
			return core_errprintf(
			    err, errlen, "--map-by %s: ppr needs N:OBJECT, e.g. ppr:2:socket", v);
		ob = n + nl + 1;
		o = obj_value(ob, strcspn(ob, ":,"));
		if (o < 0 || o == BOOT_MAP_SLOT || o >= BOOT_BINDTO_NONE)
			return core_errprintf(
			    err, errlen,
			    "--map-by %s: ppr's object is node, socket, numa, l3cache, "
			    "core or hwthread",
			    v);
		s->map = BOOT_MAP_PPR;
		s->ppr_obj = o;
		ob += strcspn(ob, ":,");
		return *ob ? map_mods(s, ob + 1, v, err, errlen) : 0;
	}
	if (l == 0) { /* only modifiers: Open MPI maps by socket */
		s->map = BOOT_TOPO_PACKAGE;
	} else if ((o = obj_value(v, l)) < 0 || o == BOOT_BINDTO_NONE || o == BOOT_BINDTO_AUTO) {
		return core_errprintf(err, errlen,
		                      "--map-by '%s': slot, node, core, socket, numa, l3cache, "
		                      "hwthread or ppr:N:OBJECT, with :pe=N, :span, :oversubscribe",
		                      v);
	} else {
		s->map = o;
	}
	if (s->map == BOOT_TOPO_PU)
		s->hwthreads = 1; /* mapping to hwthreads makes them the CPUs (as in Open MPI) */
	return v[l] ? map_mods(s, v + l + 1, v, err, errlen) : 0;
}

static int parse_rank(struct boot_bind_spec *s, const char *v, char *err, size_t errlen)
{
	size_t l = strcspn(v, ":");
	int o = obj_value(v, l);

	if (o < 0 || o >= BOOT_BINDTO_NONE ||
	    (v[l] && strcasecmp(v + l + 1, "fill") && strcasecmp(v + l + 1, "span")))
		return core_errprintf(err, errlen,
		                      "--rank-by '%s': slot, node, core, socket, numa, l3cache or "
		                      "hwthread, with :fill or :span",
		                      v);
	s->rank = o;
	s->rank_fill = v[l] && !strcasecmp(v + l + 1, "fill");
	return 0;
}

static int parse_bind(struct boot_bind_spec *s, const char *v, int hydra, char *err, size_t errlen)
{
	size_t l = strcspn(v, ":");
	int o = obj_value(v, l);

	if (o < 0 || o == BOOT_MAP_SLOT || o == BOOT_MAP_NODE)
		return core_errprintf(
		    err, errlen, "%s '%s': none, hwthread, core, l3cache, numa, socket or auto%s",
		    hydra ? "-bind-to" : "--bind-to", v,
		    hydra ? ", with :N for N of them" : ", with :overload-allowed");
	s->bind = o;
	s->hydra = hydra;
	if (o == BOOT_TOPO_PU)
		s->hwthreads = 1; /* binding to hwthreads makes them the CPUs (as in Open MPI) */
	for (const char *q = v[l] ? v + l + 1 : ""; *q;) {
		size_t ql = strcspn(q, ":,");
		if (ql == 16 && !strncasecmp(q, "overload-allowed", 16))
			s->overload = 1;
		else if ((ql == 12 && !strncasecmp(q, "if-supported", 12)) ||
		         (ql == 7 && !strncasecmp(q, "ordered", 7)))
			; /* binding is always supported on Linux; ranks are always in order */
		else if (hydra && (s->bind_n = count_of(q, ql)) > 0)
			;
		else
			return core_errprintf(err, errlen, "%s '%s': unknown qualifier '%.*s'",
			                      hydra ? "-bind-to" : "--bind-to", v,
			                      (int)(ql > 40 ? 40 : ql), q);
		q += ql + (q[ql] != '\0');
	}
	return 0;
}

int boot_bind_is_option(const char *name, int *valued)
{
	static const char *const with[] = {"map-by", "rank-by", "bind-to", "cpus-per-rank",
	                                   "cpus-per-proc"};
	static const char *const flags[] = {"use-hwthread-cpus", "report-bindings", "oversubscribe",
	                                    "nooversubscribe"};

	for (size_t i = 0; i < sizeof with / sizeof with[0]; i++)
		if (!strcmp(name, with[i]))
			return *valued = 1;
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
		if (!strcmp(name, flags[i]))
			return 1 + (*valued = 0);
	return 0;
}

int boot_bind_option(struct boot_bind_spec *s, const char *name, const char *value, int hydra,
                     char *err, size_t errlen)
{
	int valued = 0;

	if (!boot_bind_is_option(name, &valued))
		return 0;
	int flag = !valued;
	if (!flag && (!value || !*value))
		return core_errprintf(err, errlen, "--%s needs a value", name);
	if (!strcmp(name, "map-by"))
		return parse_map(s, value, err, errlen) < 0 ? -1 : 1;
	if (!strcmp(name, "rank-by"))
		return parse_rank(s, value, err, errlen) < 0 ? -1 : 1;
	if (!strcmp(name, "bind-to"))
		return parse_bind(s, value, hydra, err, errlen) < 0 ? -1 : 1;
	if (!strcmp(name, "use-hwthread-cpus"))
		s->hwthreads = 1;
	else if (!strcmp(name, "report-bindings"))
		s->report = 1;
	else if (!strcmp(name, "oversubscribe") || !strcmp(name, "nooversubscribe"))
		s->oversub = name[0] == 'o';
	else if ((s->pe = count_of(value, strlen(value))) < 0)
		return core_errprintf(err, errlen, "--%s needs a number of CPUs, not '%s'", name,
		                      value);
	return 1;
}

int boot_bind_check(const struct boot_bind_spec *s, char *err, size_t errlen)
{
	if (s->pe > 1 && s->map_given &&
	    (s->map == BOOT_TOPO_PU || (s->map == BOOT_TOPO_CORE && !s->hwthreads)))
		return core_errprintf(err, errlen,
		                      "--map-by %s with pe=%d: a rank needs more CPUs than one %s "
		                      "has; map by a larger object (socket, numa, l3cache, slot)",
		                      boot_bind_obj_name(s->map), s->pe,
		                      boot_bind_obj_name(s->map));
	if (s->pe > 0 && s->bind != BOOT_BINDTO_DEFAULT && s->bind != BOOT_BINDTO_NONE &&
	    s->bind != (s->hwthreads ? BOOT_TOPO_PU : BOOT_TOPO_CORE))
		return core_errprintf(err, errlen,
		                      "%d CPUs per rank bind each rank to its CPUs (--bind-to %s), "
		                      "not to a %s",
		                      s->pe, s->hwthreads ? "hwthread" : "core",
		                      boot_bind_obj_name(s->bind));
	return 0;
}

/* ---- canonical text: map=OBJ|ppr:N:OBJ;given;pe=M;span;over=0|1;rank=OBJ[:fill];
 * bind=OBJ;bindn=N;overload;hwt;report ---- */

void boot_bind_text(const struct boot_bind_spec *s, char *out, size_t len)
{
	size_t n = 0;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		int k = snprintf(out + n, n < len ? len - n : 0, __VA_ARGS__);                     \
		n += k > 0 ? (size_t)k : 0;                                                        \
	} while (0)
	out[0] = '\0';
	if (s->map == BOOT_MAP_PPR)
		ADD("map=ppr:%d:%s;", s->ppr_n, boot_bind_obj_name(s->ppr_obj));
	else if (s->map != BOOT_MAP_DEFAULT)
		ADD("map=%s;", boot_bind_obj_name(s->map));
	if (s->map_given)
		ADD("given;");
	if (s->pe)
		ADD("pe=%d;", s->pe);
	if (s->span)
		ADD("span;");
	if (s->oversub >= 0)
		ADD("over=%d;", s->oversub);
	if (s->rank != BOOT_MAP_DEFAULT)
		ADD("rank=%s%s;", boot_bind_obj_name(s->rank), s->rank_fill ? ":fill" : "");
	if (s->bind != BOOT_BINDTO_DEFAULT)
		ADD("bind=%s;", boot_bind_obj_name(s->bind));
	if (s->bind_n)
		ADD("bindn=%d;", s->bind_n);
	if (s->overload)
		ADD("overload;");
	if (s->hwthreads)
		ADD("hwt;");
	if (s->report)
		ADD("report;");
	if (s->hydra)
		ADD("hydra;");
#undef ADD
	if (n >= len && len)
		out[0] = '\0'; /* cut short: all defaults rather than half a request */
}

int boot_bind_from_text(struct boot_bind_spec *s, const char *text)
{
	boot_bind_init(s);
	for (const char *p = text ? text : ""; *p;) {
		size_t l = strcspn(p, ";");
		char w[64];
		snprintf(w, sizeof w, "%.*s", (int)(l < sizeof w ? l : sizeof w - 1), p);
		if (!strncmp(w, "map=ppr:", 8)) {
			char *c = strchr(w + 8, ':');
			s->map = BOOT_MAP_PPR;
			s->ppr_n = atoi(w + 8);
			if (!c || s->ppr_n < 1 ||
			    (s->ppr_obj = obj_value(c + 1, strlen(c + 1))) < 0)
				return -1;
		} else if (!strncmp(w, "map=", 4)) {
			if ((s->map = obj_value(w + 4, strlen(w + 4))) < 0)
				return -1;
		} else if (!strncmp(w, "rank=", 5)) {
			char *c = strchr(w + 5, ':');
			s->rank_fill = c && !strcmp(c, ":fill");
			if ((s->rank = obj_value(w + 5, c ? (size_t)(c - w - 5) : strlen(w + 5))) <
			    0)
				return -1;
		} else if (!strncmp(w, "bind=", 5)) {
			if ((s->bind = obj_value(w + 5, strlen(w + 5))) < 0)
				return -1;
		} else if (!strncmp(w, "pe=", 3)) {
			s->pe = atoi(w + 3);
		} else if (!strncmp(w, "over=", 5)) {
			s->oversub = atoi(w + 5);
		} else if (!strncmp(w, "bindn=", 6)) {
			s->bind_n = atoi(w + 6);
		} else {
			s->map_given |= !strcmp(w, "given");
			s->span |= !strcmp(w, "span");
			s->overload |= !strcmp(w, "overload");
			s->hwthreads |= !strcmp(w, "hwt");
			s->report |= !strcmp(w, "report");
			s->hydra |= !strcmp(w, "hydra");
		}
		p += l + (p[l] == ';');
	}
	return 0;
}

int boot_bind_ppr_count(const struct boot_bind_spec *s, const struct boot_topo *t)
{
	if (s->map != BOOT_MAP_PPR)
		return -1;
	if (s->ppr_obj == BOOT_MAP_NODE)
		return s->ppr_n;
	return s->ppr_n * t->n[s->ppr_obj];
}

/* ---- placing a node's ranks ---- */

/* CPUs in object i of type ty: its cores, or its hwthreads when they are the CPUs. */
static int cpus_in(const struct boot_topo *t, int hwt, int ty, int i)
{
	return hwt ? boot_topo_npus(t, ty, i) : boot_topo_ncores(t, ty, i);
}

/* The policies for this job once the defaults are filled in (Open MPI 4.1's, bind.h). */
struct policy {
	int map, mapobj, rank, bind, bind_given;
	int overload; /* ranks may share a CPU (:overload-allowed, or an oversubscribed node) */
};

static struct policy resolve(const struct boot_topo *t, const struct boot_bind_spec *s, int njob)
{
	struct policy p = {0};
	int cpu = s->hwthreads ? BOOT_TOPO_PU : BOOT_TOPO_CORE, given = s->map_given;

	p.map = s->map;
	/* Hydra: -bind-to core alone puts rank i on core i; -bind-to core:2 on cores 2i, 2i+1 */
	if (p.map == BOOT_MAP_DEFAULT && s->hydra && s->bind < BOOT_TOPO_NTYPES)
		p.map = s->bind_n > 1 ? BOOT_MAP_SLOT : s->bind, given = 1;
	if (p.map == BOOT_MAP_DEFAULT) {
		if (s->pe > 1)
			p.map = BOOT_TOPO_NUMA, given = 1; /* a rank needs several CPUs below it */
		else
			p.map = njob <= 2 ? cpu : BOOT_TOPO_NUMA;
	}
	if (p.map < BOOT_TOPO_NTYPES && t->n[p.map] == 0)
		p.map = BOOT_MAP_SLOT; /* no such object here: by slot, as Open MPI falls back */
	p.mapobj = p.map == BOOT_MAP_PPR ? s->ppr_obj : p.map;
	if (s->rank != BOOT_MAP_DEFAULT)
		p.rank = s->rank;
	else if (given && p.map < BOOT_TOPO_NTYPES)
		p.rank = p.map;
	else
		p.rank = BOOT_MAP_SLOT;
	p.bind_given = s->bind != BOOT_BINDTO_DEFAULT && s->bind != BOOT_BINDTO_AUTO;
	if (p.bind_given)
		p.bind = s->bind;
	else if (s->bind == BOOT_BINDTO_DEFAULT && s->pe > 0)
		p.bind = cpu;
	else if (s->bind == BOOT_BINDTO_DEFAULT && given && p.map < BOOT_TOPO_NTYPES)
		p.bind = p.map;
	else if (s->bind == BOOT_BINDTO_DEFAULT && p.map == BOOT_MAP_PPR)
		p.bind = njob <= 2 ? cpu : BOOT_TOPO_NUMA; /* Open MPI's, for ppr too */
	else /* Open MPI binds a core (2 ranks or fewer) or a NUMA node here: lamkit's auto */
		p.bind = BOOT_BINDTO_AUTO;
	return p;
}

/* Map: the object (of type p->mapobj) each rank goes to, in mapping order; -1 = the node. */
static int map_node(const struct boot_topo *t, const struct boot_bind_spec *s,
                    const struct policy *p, int n, int *loc, char *err, size_t errlen)
{
	int no = p->mapobj < BOOT_TOPO_NTYPES ? t->n[p->mapobj] : 0;

	for (int i = 0; i < n; i++)
		loc[i] = -1;
	if (!no)
		return 0; /* slot, node, ppr:N:node: the whole node */
	if (p->map == BOOT_MAP_PPR) {
		if (n > s->ppr_n * no)
			return core_errprintf(
			    err, errlen, "ppr:%d:%s places %d ranks on this node (%d %s%s), not %d",
			    s->ppr_n, boot_bind_obj_name(s->ppr_obj), s->ppr_n * no, no,
			    boot_bind_obj_name(s->ppr_obj), no == 1 ? "" : "s", n);
		for (int i = 0; i < n; i++)
			loc[i] = i / s->ppr_n;
	} else if (s->span) { /* blocks: each object its share, the first ones one more */
		int avg = n / no ? n / no : 1, extra = n - avg * no, i = 0;
		for (int o = 0; o < no && i < n; o++)
			for (int k = 0; k < avg + (o < extra) && i < n; k++)
				loc[i++] = o;
		for (; i < n; i++)
			loc[i] = i % no;
	} else {
		for (int i = 0; i < n; i++)
			loc[i] = i % no;
	}
	for (int i = 0; s->pe > 1 && i < n; i++)
		if (cpus_in(t, s->hwthreads, p->mapobj, loc[i]) < s->pe)
			return core_errprintf(
			    err, errlen,
			    "%d CPUs per rank, but a %s here has %d: map by a larger "
			    "object",
			    s->pe, boot_bind_obj_name(p->mapobj),
			    cpus_in(t, s->hwthreads, p->mapobj, loc[i]));
	return 0;
}

/* The PU range of a rank's locale: its object, or the whole node. */
static void locale_range(const struct boot_topo *t, const struct policy *p, int loc, int *lo,
                         int *hi)
{
	if (loc < 0) {
		*lo = 0;
		*hi = t->npu;
	} else {
		*lo = t->first[p->mapobj][loc];
		*hi = t->first[p->mapobj][loc + 1];
	}
}

/* Rank: order[k] = the mapping-order index of the node's k-th rank. */
static void rank_node(const struct boot_topo *t, const struct policy *p, int fill, int n,
                      const int *loc, int *order)
{
	int k = 0, ty = p->rank, no = ty < BOOT_TOPO_NTYPES ? t->n[ty] : 0;
	char *done = calloc((size_t)n + 1, 1);

	if (!done || !no) { /* slot or node (or no memory): the mapping's order */
		for (int i = 0; i < n; i++)
			order[i] = i;
		free(done);
		return;
	}
	for (int progress = 1; k < n && progress;) {
		progress = 0;
		for (int o = 0; o < no && k < n; o++) {
			int olo = t->first[ty][o], ohi = t->first[ty][o + 1];
			for (int i = 0; i < n && k < n; i++) {
				int lo, hi;
				locale_range(t, p, loc[i], &lo, &hi);
				if (done[i] || hi <= olo || lo >= ohi)
					continue;
				done[i] = 1;
				order[k++] = i;
				progress = 1;
				if (!fill)
					break; /* one rank per object per pass */
			}
		}
	}
	for (int i = 0; i < n && k < n; i++) /* nothing left out */
		if (!done[i])
			order[k++] = i;
	free(done);
}

/* Overloaded: more ranks on an object than its CPUs. Asked for and not allowed: an error;
 * a default binding: no binding at all (Open MPI's rule). 1 to unbind, -1 error, 0 fine. */
static int overloaded(const struct boot_bind_spec *s, const struct policy *p, int bound, int ncpus,
                      char *err, size_t errlen)
{
	(void)s;
	if (ncpus >= bound || p->overload)
		return 0;
	if (!p->bind_given)
		return 1;
	return core_errprintf(err, errlen,
	                      "--bind-to %s puts %d ranks on a %s with %d CPU%s; add "
	                      ":overload-allowed to do so, or bind to a larger object",
	                      boot_bind_obj_name(p->bind), bound, boot_bind_obj_name(p->bind),
	                      ncpus, ncpus == 1 ? "" : "s");
}

/* Bind each rank (mapping order) below or above its locale: to the least used object of the
 * binding type that meets it, plus the next ones until it has pe CPUs (Hydra: bind_n of
 * them). 0, 1 (unbind everything), -1. */
static int bind_generic(const struct boot_topo *t, const struct boot_bind_spec *s,
                        const struct policy *p, int n, const int *loc, int *nb,
                        struct boot_binding *b, char *err, size_t errlen)
{
	int ty = p->bind, no = t->n[ty];

	for (int i = 0; i < n; i++) {
		int lo, hi, trg = -1, cpus = 0, k = 0, r;
		locale_range(t, p, loc[i], &lo, &hi);
		for (int o = 0; o < no; o++)
			if (t->first[ty][o] < hi && t->first[ty][o + 1] > lo &&
			    (trg < 0 || nb[o] < nb[trg]))
				trg = o;
		if (trg < 0)
			return core_errprintf(err, errlen, "no %s to bind to",
			                      boot_bind_obj_name(ty));
		b[i].lo = t->first[ty][trg];
		do {
			if (trg + k >= no)
				return core_errprintf(
				    err, errlen, "not enough CPUs for %d per rank on this node",
				    s->pe);
			nb[trg + k]++;
			if ((r = overloaded(s, p, nb[trg + k],
			                    cpus_in(t, s->hwthreads, ty, trg + k), err, errlen)) !=
			    0)
				return r;
			cpus += cpus_in(t, s->hwthreads, ty, trg + k);
			k++;
		} while (s->bind_n ? k < s->bind_n : cpus < s->pe);
		b[i].hi = t->first[ty][trg + k];
	}
	return 0;
}

/* Bind each rank to the object it was mapped to, or a neighbour of it with room. */
static int bind_in_place(const struct boot_topo *t, const struct boot_bind_spec *s,
                         const struct policy *p, int n, const int *loc, int *nb,
                         struct boot_binding *b, char *err, size_t errlen)
{
	int ty = p->bind, no = t->n[ty], r;

	for (int i = 0; i < n; i++) {
		int o = loc[i];
		if (cpus_in(t, s->hwthreads, ty, o) < nb[o] + 1) {
			int found = -1;
			for (int c = o + 1; c < no && found < 0; c++)
				if (nb[c] < cpus_in(t, s->hwthreads, ty, c))
					found = c;
			for (int c = o - 1; c >= 0 && found < 0; c--)
				if (nb[c] < cpus_in(t, s->hwthreads, ty, c))
					found = c;
			if (found >= 0)
				o = found;
			else if ((r = overloaded(s, p, nb[o] + 1, cpus_in(t, s->hwthreads, ty, o),
			                         err, errlen)) != 0)
				return r;
		}
		nb[o]++;
		b[i].lo = t->first[ty][o];
		b[i].hi = t->first[ty][o + 1];
	}
	return 0;
}

int boot_bind_node(const struct boot_topo *t, const struct boot_bind_spec *s, int n, int njob,
                   int slots, int auto_core, struct boot_binding *out, char *err, size_t errlen)
{
	struct policy p = resolve(t, s, njob);
	int *loc = malloc(sizeof(int) * (size_t)(n + 1)),
	    *order = malloc(sizeof(int) * (size_t)(n + 1));
	int *nb = calloc((size_t)t->npu + 1, sizeof(int)), rc = 0;
	struct boot_binding *b = malloc(sizeof *b * (size_t)(n + 1));

	if (!loc || !order || !nb || !b) {
		rc = core_errprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		b[i].lo = b[i].hi = -1;
	if (n > slots && s->oversub == 0) {
		rc = core_errprintf(
		    err, errlen, "%d ranks on a node of %d slots, and :nooversubscribe was asked",
		    n, slots);
		goto out;
	}
	if ((rc = map_node(t, s, &p, n, loc, err, errlen)) < 0)
		goto out;
	/* more ranks than slots, which lamkit allows unless told :nooversubscribe: a binding
	 * asked for shares the CPUs round robin (Open MPI refuses to start such a job) */
	p.overload = s->overload || n > slots;
	if (p.bind == BOOT_BINDTO_AUTO)
		p.bind =
		    auto_core ? (s->hwthreads ? BOOT_TOPO_PU : BOOT_TOPO_CORE) : BOOT_BINDTO_NONE;
	/* an oversubscribed node binds only when asked to (Open MPI's rule) */
	if (p.bind == BOOT_BINDTO_NONE || (n > slots && !p.bind_given)) {
		rc = 0;
	} else if (t->n[p.bind] == 0) {
		rc = p.bind_given
		         ? core_errprintf(err, errlen, "this node has no %s to bind to (%s)",
		                          boot_bind_obj_name(p.bind), t->source)
		         : 0;
	} else {
		if (p.bind == p.mapobj && !s->pe && !s->bind_n)
			rc = bind_in_place(t, s, &p, n, loc, nb, b, err, errlen);
		else
			rc = bind_generic(t, s, &p, n, loc, nb, b, err, errlen);
		if (rc == 1) /* a default binding that does not fit: none */
			for (int i = 0; i < n; i++)
				b[i].lo = b[i].hi = -1;
		rc = rc < 0 ? -1 : 0;
	}
	if (rc == 0) {
		rank_node(t, &p, s->rank_fill, n, loc, order);
		for (int k = 0; k < n; k++)
			out[k] = b[order[k]];
	}
out:
	free(loc);
	free(order);
	free(nb);
	free(b);
	return rc;
}

/* ---- describing a binding ---- */

void boot_bind_describe(const struct boot_topo *t, const struct boot_binding *b, char *out,
                        size_t len)
{
	size_t n = 0;
	int np = t->n[BOOT_TOPO_PACKAGE];

	out[0] = '\0';
	if (b->lo < 0 || (b->lo == 0 && b->hi >= t->npu))
		return; /* not bound, or bound to every CPU */
#define ADD(...)                                                                                   \
	do {                                                                                       \
		int k = snprintf(out + n, n < len ? len - n : 0, __VA_ARGS__);                     \
		n += k > 0 ? (size_t)k : 0;                                                        \
	} while (0)
	for (int c = 0; c < t->n[BOOT_TOPO_CORE]; c++) {
		int clo = t->first[BOOT_TOPO_CORE][c], chi = t->first[BOOT_TOPO_CORE][c + 1];
		int lo = clo > b->lo ? clo : b->lo, hi = chi < b->hi ? chi : b->hi;
		if (lo >= hi)
			continue;
		ADD("%ssocket %d[core %d[hwt ", n ? ", " : "",
		    np ? boot_topo_obj_of(t, BOOT_TOPO_PACKAGE, clo) : 0, c);
		ADD(hi - lo > 1 ? "%d-%d]]" : "%d]]", lo - clo, hi - 1 - clo);
	}
	ADD(": ");
	for (int s = 0; s < (np ? np : 1); s++) {
		int slo = np ? t->first[BOOT_TOPO_PACKAGE][s] : 0;
		int shi = np ? t->first[BOOT_TOPO_PACKAGE][s + 1] : t->npu;
		ADD("[");
		for (int pu = slo; pu < shi; pu++) {
			if (pu > slo &&
			    t->first[BOOT_TOPO_CORE][boot_topo_obj_of(t, BOOT_TOPO_CORE, pu)] == pu)
				ADD("/");
			ADD("%c", pu >= b->lo && pu < b->hi ? 'B' : '.');
		}
		ADD("]");
	}
#undef ADD
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a < *(const int *)b ? -1 : *(const int *)a > *(const int *)b;
}

void boot_bind_cpulist(const struct boot_topo *t, const struct boot_binding *b, char *out,
                       size_t len)
{
	int m = b->lo < 0 ? 0 : b->hi - b->lo, *v = malloc(sizeof(int) * (size_t)(m + 1));
	size_t n = 0;

	out[0] = '\0';
	if (!v)
		return;
	for (int i = 0; i < m; i++)
		v[i] = t->os[b->lo + i];
	qsort(v, (size_t)m, sizeof *v, cmp_int);
	for (int i = 0; i < m;) {
		int j = i;
		while (j + 1 < m && v[j + 1] == v[j] + 1)
			j++;
		int k = snprintf(out + n, n < len ? len - n : 0, j > i ? "%s%d-%d" : "%s%d",
		                 n ? "," : "", v[i], v[j]);
		n += k > 0 ? (size_t)k : 0;
		i = j + 1;
	}
	free(v);
}

void boot_bind_omp_places(const struct boot_topo *t, const struct boot_bind_spec *s,
                          const struct boot_binding *b, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int pu = b->lo < 0 ? 0 : b->lo; b->lo >= 0 && pu < b->hi;) {
		int c = boot_topo_obj_of(t, BOOT_TOPO_CORE, pu);
		int end = s->hwthreads ? pu + 1 : t->first[BOOT_TOPO_CORE][c + 1];
		int k = snprintf(out + n, n < len ? len - n : 0, "%s{", n ? "," : "");
		n += k > 0 ? (size_t)k : 0;
		for (int q = pu; q < end && q < b->hi; q++) {
			k = snprintf(out + n, n < len ? len - n : 0, "%s%d", q > pu ? "," : "",
			             t->os[q]);
			n += k > 0 ? (size_t)k : 0;
		}
		k = snprintf(out + n, n < len ? len - n : 0, "}");
		n += k > 0 ? (size_t)k : 0;
		pu = end;
	}
	if (n >= len && len)
		out[0] = '\0'; /* cut short: none rather than a wrong list */
}

int boot_bind_ncpus(const struct boot_topo *t, const struct boot_bind_spec *s,
                    const struct boot_binding *b)
{
	if (b->lo < 0)
		return 0;
	if (s->hwthreads)
		return b->hi - b->lo;
	return boot_topo_obj_of(t, BOOT_TOPO_CORE, b->hi - 1) -
	       boot_topo_obj_of(t, BOOT_TOPO_CORE, b->lo) + 1;
}
