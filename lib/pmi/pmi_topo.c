/* lib/pmi/pmi_topo.c: the topology text "v1|node=N|nodes=M|ranks=R|bind=r:s[:c],..." (see
 * pmi_topo.h), and where a CPU sits according to /sys. */
#include "pmi_topo.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NUM_MAX (1 << 24) /* largest rank, socket or core number we read */

/* {==== /sys */

static int read_num(const char *path, int *out)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	if (pmi_wire_parse_int(buf, (size_t)n, out) < 0 || *out < 0 || *out > NUM_MAX) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int pmi_topo_cpu(const char *sysroot, int cpu, int *socket, int *core)
{
	char path[512];

	if (!sysroot || cpu < 0 || !socket || !core) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cpu%d/topology/physical_package_id", sysroot, cpu);
	if (read_num(path, socket) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cpu%d/topology/core_id", sysroot, cpu);
	return read_num(path, core);
}

/* CPUs online per sysroot/online ("0-3,8"); -1 if unknown. Not sysconf: musl's counts the
 * CPUs we may use, which is what we compare with. */
static int online_cpus(const char *sysroot)
{
	char path[512], buf[1024];
	int n = 0, fd;

	snprintf(path, sizeof(path), "%s/online", sysroot);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	for (char *p = buf; *p >= '0' && *p <= '9';) {
		long a = strtol(p, &p, 10), b = a;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		if (b < a || b - a > NUM_MAX)
			return -1;
		n += (int)(b - a + 1);
		if (*p == ',')
			p++;
	}
	return n > 0 ? n : -1;
}

int pmi_topo_self(const char *sysroot, int *socket, int *core)
{
	cpu_set_t set;
	int n = 0, s0 = -1, c0 = -1, same_core = 1, online = online_cpus(sysroot);

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		int s, c;
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (pmi_topo_cpu(sysroot, cpu, &s, &c) < 0 || (n > 0 && s != s0))
			return -1; /* unknown, or spans sockets: not bound to one */
		if (n > 0 && c != c0)
			same_core = 0;
		s0 = s;
		c0 = c;
		n++;
	}
	if (n == 0 || (online > 0 && n >= online))
		return -1; /* may run anywhere: not bound */
	*socket = s0;
	*core = same_core ? c0 : -1;
	return 0;
}

/* ====} */

/* {==== PMI_process_mapping */

struct block {
	long start, nodes, ppn;
};

static const char *skip_sp(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* Expect character ch (after spaces); NULL if it is not there. */
static const char *want(const char *p, char ch)
{
	p = skip_sp(p);
	return *p == ch ? p + 1 : NULL;
}

static const char *num(const char *p, long *out)
{
	char *end;

	p = skip_sp(p);
	if (*p < '0' || *p > '9')
		return NULL;
	*out = strtol(p, &end, 10);
	return *out > NUM_MAX ? NULL : end;
}

/* Parse "(vector,(s,n,p),...)" into a malloc'd block list. Count, or -1. */
static int parse_blocks(const char *p, struct block **out)
{
	int n = 0, cap = (int)(strlen(p) / 6) + 1;
	struct block *b = calloc((size_t)cap, sizeof(*b));

	p = want(p, '(');
	if (!b || !p || strncmp(skip_sp(p), "vector", 6) != 0)
		goto bad;
	p = skip_sp(p) + 6;
	while (p && (p = want(p, ',')) != NULL && n < cap) {
		struct block *k = &b[n++];
		p = want(p, '(');
		p = p ? num(p, &k->start) : NULL;
		p = p ? want(p, ',') : NULL;
		p = p ? num(p, &k->nodes) : NULL;
		p = p ? want(p, ',') : NULL;
		p = p ? num(p, &k->ppn) : NULL;
		p = p ? want(p, ')') : NULL;
		if (p && *skip_sp(p) == ')')
			break;
	}
	if (!p || !(p = want(p, ')')) || *skip_sp(p) || n == 0)
		goto bad;
	*out = b;
	return n;
bad:
	free(b);
	return -1;
}

/* Node of every rank: blocks in order, repeated until all ranks are placed. */
static int place(const struct block *b, int nb, int *node, int size)
{
	int r = 0;

	while (r < size) {
		int before = r;
		for (int i = 0; i < nb && r < size; i++) {
			for (long n = 0; n < b[i].nodes && r < size; n++) {
				for (long k = 0; k < b[i].ppn && r < size; k++)
					node[r++] = (int)(b[i].start + n);
			}
		}
		if (r == before)
			return -1;
	}
	return 0;
}

int pmi_topo_mapping(const char *map, int *node, int size)
{
	struct block *b;
	int nb, max = -1;

	if (!map || !node || size < 1 || (nb = parse_blocks(map, &b)) < 0) {
		errno = EINVAL;
		return -1;
	}
	int rc = place(b, nb, node, size);
	free(b);
	for (int r = 0; rc == 0 && r < size; r++)
		max = node[r] > max ? node[r] : max;
	if (rc < 0 || max > NUM_MAX) {
		errno = EINVAL;
		return -1;
	}
	return max + 1;
}

/* ====} */

/* {==== encoding */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int cmp_bind(const void *a, const void *b)
{
	return cmp_int(&((const struct pmi_topo_bind *)a)->rank,
	               &((const struct pmi_topo_bind *)b)->rank);
}

struct out {
	char *p;
	size_t len, cap;
	int full;
};

/* Append text, then the number n unless text is all (n < -1 means none). */
static void put(struct out *o, const char *text, int n)
{
	int k;

	if (o->full)
		return;
	k = n < -1 ? snprintf(o->p + o->len, o->cap - o->len, "%s", text)
	           : snprintf(o->p + o->len, o->cap - o->len, "%s%d", text, n);
	if (k < 0 || (size_t)k >= o->cap - o->len)
		o->full = 1;
	else
		o->len += (size_t)k;
}

#define NONE (-2)

/* ranks[n] ascending as "a-b,c,...". */
static void put_ranges(struct out *o, const int *r, int n)
{
	for (int i = 0; i < n;) {
		int k = i;
		while (k + 1 < n && r[k + 1] == r[k] + 1)
			k++;
		put(o, i ? "," : "", r[i]);
		if (k > i)
			put(o, "-", r[k]);
		i = k + 1;
	}
}

int pmi_topo_encode(char *out, size_t cap, int node, int nnodes, const int *ranks, int n,
                    const struct pmi_topo_bind *b, int nb)
{
	int *r = NULL, rc = -1;
	struct pmi_topo_bind *bs = NULL;
	struct out o = {out, 0, cap < PMI_TOPO_TEXT_MAX + 1 ? cap : PMI_TOPO_TEXT_MAX + 1, 0};

	if (!out || cap == 0 || !ranks || n < 1 || nb < 0 || (nb && !b)) {
		errno = EINVAL;
		return -1;
	}
	r = malloc((size_t)n * sizeof(*r));
	bs = nb ? malloc((size_t)nb * sizeof(*bs)) : NULL;
	if (!r || (nb && !bs)) {
		errno = ENOMEM;
		goto out;
	}
	memcpy(r, ranks, (size_t)n * sizeof(*r));
	qsort(r, (size_t)n, sizeof(*r), cmp_int);
	errno = EINVAL;
	for (int i = 0; i < n; i++)
		if (r[i] < 0 || r[i] > NUM_MAX || (i && r[i] == r[i - 1]))
			goto out;
	if (nb) {
		memcpy(bs, b, (size_t)nb * sizeof(*bs));
		qsort(bs, (size_t)nb, sizeof(*bs), cmp_bind);
	}
	for (int i = 0; i < nb; i++)
		if (!bsearch(&bs[i].rank, r, (size_t)n, sizeof(*r), cmp_int) ||
		    (i && bs[i].rank == bs[i - 1].rank) || bs[i].socket < 0 ||
		    bs[i].socket > NUM_MAX || bs[i].core < -1 || bs[i].core > NUM_MAX)
			goto out;
	put(&o, "v1", NONE);
	if (node >= 0 && nnodes > node) {
		put(&o, "|node=", node);
		put(&o, "|nodes=", nnodes);
	}
	put(&o, "|ranks=", NONE);
	put_ranges(&o, r, n);
	if (o.full) {
		errno = ENOSPC;
		goto out;
	}
	size_t keep = o.len;
	for (int i = 0; i < nb; i++) {
		put(&o, i ? "," : "|bind=", bs[i].rank);
		put(&o, ":", bs[i].socket);
		if (bs[i].core >= 0)
			put(&o, ":", bs[i].core);
	}
	if (o.full) /* too many bindings for one attribute: the node level alone */
		o.len = keep;
	out[o.len] = '\0';
	rc = (int)o.len;
out:
	free(r);
	free(bs);
	return rc;
}

/* ====} */

/* {==== parsing */

struct in {
	const char *p, *end; /* the current field's value */
};

/* A decimal number in [0, NUM_MAX]. */
static int get_num(struct in *in, int *out)
{
	long v = 0;
	const char *s = in->p;

	while (in->p < in->end && *in->p >= '0' && *in->p <= '9' && v <= NUM_MAX)
		v = v * 10 + (*in->p++ - '0');
	if (in->p == s || v > NUM_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

static int eat(struct in *in, char ch)
{
	if (in->p < in->end && *in->p == ch) {
		in->p++;
		return 1;
	}
	return 0;
}

/* "a-b,c,..." strictly ascending, each below size, into a malloc'd list. */
static int parse_ranges(struct in in, int size, int **out, int *n)
{
	int cap = 16, cnt = 0, prev = -1, a, b;
	int *r = malloc((size_t)cap * sizeof(*r));

	if (!r)
		return -1;
	do {
		if (get_num(&in, &a) < 0) {
			free(r);
			return -1;
		}
		b = a;
		if (eat(&in, '-') && get_num(&in, &b) < 0)
			b = -1;
		if (b < a || a <= prev || b >= size) {
			free(r);
			return -1;
		}
		for (int x = a; x <= b; x++) {
			if (cnt == cap) {
				int *nr = realloc(r, (size_t)(cap *= 2) * sizeof(*r));
				if (!nr) {
					free(r);
					return -1;
				}
				r = nr;
			}
			r[cnt++] = x;
		}
		prev = b;
	} while (eat(&in, ','));
	if (in.p != in.end) {
		free(r);
		return -1;
	}
	*out = r;
	*n = cnt;
	return 0;
}

static int has(const int *r, int n, int x)
{
	return bsearch(&x, r, (size_t)n, sizeof(*r), cmp_int) != NULL;
}

/* "r:s[:c],...": the ranks of the node that share my socket and my core. */
static int parse_bind(struct in in, const int *ranks, int n, int me, struct pmi_topo_view *v)
{
	int cap = n, nb = 0, mys = -1, myc = -1;
	struct pmi_topo_bind *b = calloc((size_t)cap, sizeof(*b));

	if (!b)
		return -1;
	while (in.p < in.end) {
		struct pmi_topo_bind e = {.core = -1};
		if (nb == cap || get_num(&in, &e.rank) < 0 || !eat(&in, ':') ||
		    get_num(&in, &e.socket) < 0 || (eat(&in, ':') && get_num(&in, &e.core) < 0) ||
		    !has(ranks, n, e.rank) || (in.p < in.end && !eat(&in, ',')) ||
		    (in.p == in.end && in.p[-1] == ',')) {
			free(b);
			return -1;
		}
		for (int i = 0; i < nb; i++)
			if (b[i].rank == e.rank) {
				free(b);
				return -1;
			}
		if (e.rank == me) {
			mys = e.socket;
			myc = e.core;
		}
		b[nb++] = e;
	}
	qsort(b, (size_t)nb, sizeof(*b), cmp_bind);
	for (int lv = 1; lv <= 2 && mys >= 0 && (lv == 1 || myc >= 0); lv++) {
		int *r = malloc((size_t)nb * sizeof(*r)), k = 0;
		if (!r) {
			free(b);
			return -1;
		}
		for (int i = 0; i < nb; i++)
			if (b[i].socket == mys && (lv == 1 || b[i].core == myc))
				r[k++] = b[i].rank;
		v->lv[lv].level = lv;
		v->lv[lv].index = lv == 1 ? mys : myc;
		v->lv[lv].nranks = k;
		v->lv[lv].ranks = r;
		v->nlevels = lv + 1;
	}
	free(b);
	return 0;
}

int pmi_topo_parse(const char *text, int me, int size, struct pmi_topo_view *v)
{
	const char *p = text, *bind = NULL, *bend = NULL;
	int *ranks = NULL, n = 0, have_node = 0;

	if (v)
		memset(v, 0, sizeof(*v));
	if (!text || !v || size < 1 || me < 0 || me >= size || strncmp(text, "v1", 2) != 0 ||
	    (text[2] && text[2] != '|'))
		goto bad;
	v->node = v->nnodes = -1;
	for (p = text + 2; *p == '|';) {
		const char *name = ++p, *eq = strchr(name, '='), *end = strchr(name, '|');
		if (!end)
			end = name + strlen(name);
		if (!eq || eq > end)
			goto bad;
		struct in in = {eq + 1, end};
		size_t nl = (size_t)(eq - name);
		if (nl == 4 && !memcmp(name, "node", 4)) {
			if (get_num(&in, &v->node) < 0 || in.p != end)
				goto bad;
			have_node |= 1;
		} else if (nl == 5 && !memcmp(name, "nodes", 5)) {
			if (get_num(&in, &v->nnodes) < 0 || in.p != end)
				goto bad;
			have_node |= 2;
		} else if (nl == 5 && !memcmp(name, "ranks", 5)) {
			if (ranks || parse_ranges(in, size, &ranks, &n) < 0)
				goto bad;
		} else if (nl == 4 && !memcmp(name, "bind", 4)) {
			bind = in.p;
			bend = end;
		}
		p = end;
	}
	if (*p || !ranks || !has(ranks, n, me) || (have_node && have_node != 3) ||
	    (have_node && v->node >= v->nnodes))
		goto bad;
	v->nlevels = 1;
	v->lv[0].level = 0;
	v->lv[0].index = v->node;
	v->lv[0].nranks = n;
	v->lv[0].ranks = ranks;
	ranks = NULL;
	if (bind && parse_bind((struct in){bind, bend}, v->lv[0].ranks, n, me, v) < 0)
		goto bad;
	return 0;
bad:
	free(ranks);
	pmi_topo_view_free(v);
	errno = EINVAL;
	return -1;
}

void pmi_topo_view_free(struct pmi_topo_view *v)
{
	if (!v)
		return;
	for (int i = 0; i < 3; i++)
		free(v->lv[i].ranks);
	memset(v, 0, sizeof(*v));
	v->node = v->nnodes = -1;
}

/* ====} */
