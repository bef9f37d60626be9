/* tests/unit/t_pmi_topo.c: the topology text (encode, parse, malformed and random input),
 * PMI_process_mapping to nodes, /sys lookups on a fake tree, and the engine's answers to
 * PMI-1 cmd=lamkit_topo and PMI-2 info-getnodeattr. */
#include "tap.h"
#include "../../lib/pmi/pmi_server.h"
#include "../../lib/pmi/pmi_topo.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

static char list_buf[512];

static const char *list(const int *r, int n)
{
	size_t off = 0;

	list_buf[0] = '\0';
	for (int i = 0; i < n && off < sizeof(list_buf); i++)
		off += (size_t)snprintf(list_buf + off, sizeof(list_buf) - off, "%s%d",
		                        i ? "," : "", r[i]);
	return list_buf;
}

static void test_encode(void)
{
	char t[PMI_TOPO_TEXT_MAX + 1];
	int ranks[] = {7, 4, 5, 6, 9};
	struct pmi_topo_bind b[] = {{9, 1, 3}, {4, 0, 0}, {5, 0, 1}, {6, 1, 0}, {7, 0, 0}};

	is_int(pmi_topo_encode(t, sizeof(t), 1, 2, ranks, 5, b, 5), (int)strlen(t), "encode");
	is_str(t, "v1|node=1|nodes=2|ranks=4-7,9|bind=4:0:0,5:0:1,6:1:0,7:0:0,9:1:3",
	       "ranks as ranges, bindings in rank order");
	is_int(pmi_topo_encode(t, sizeof(t), -1, -1, ranks, 1, NULL, 0), 10, "no node, no binding");
	is_str(t, "v1|ranks=7", "unknown node: left out");
	struct pmi_topo_bind s = {7, 2, -1};
	pmi_topo_encode(t, sizeof(t), 0, 1, ranks, 1, &s, 1);
	is_str(t, "v1|node=0|nodes=1|ranks=7|bind=7:2", "bound to a socket only");
	int dup[] = {1, 1};
	ok(pmi_topo_encode(t, sizeof(t), 0, 1, dup, 2, NULL, 0) < 0 && errno == EINVAL,
	   "a rank twice: EINVAL");
	struct pmi_topo_bind stray = {3, 0, 0};
	ok(pmi_topo_encode(t, sizeof(t), 0, 1, ranks, 2, &stray, 1) < 0 && errno == EINVAL,
	   "a binding of a rank not on the node: EINVAL");
	ok(pmi_topo_encode(t, 8, 0, 1, ranks, 2, NULL, 0) < 0 && errno == ENOSPC,
	   "no room for the ranks: ENOSPC");

	/* 300 ranks on a node: the ranks fit as a range, the bindings do not */
	int many[300];
	struct pmi_topo_bind mb[300];
	for (int i = 0; i < 300; i++) {
		many[i] = 1000 + i;
		mb[i] = (struct pmi_topo_bind){1000 + i, i / 150, i % 150};
	}
	pmi_topo_encode(t, sizeof(t), 3, 4, many, 300, mb, 300);
	is_str(t, "v1|node=3|nodes=4|ranks=1000-1299", "too many bindings: the node level alone");
}

static void test_parse(void)
{
	struct pmi_topo_view v;
	const char *t = "v1|node=1|nodes=2|ranks=4-7,9|bind=4:0:0,5:0:1,6:1:0,7:0:0,9:1:3";

	is_int(pmi_topo_parse(t, 7, 10, &v), 0, "parse for rank 7");
	is_int(v.nlevels, 3, "node, socket, core");
	is_int(v.node * 10 + v.nnodes, 12, "node 1 of 2");
	is_str(list(v.lv[0].ranks, v.lv[0].nranks), "4,5,6,7,9", "node ranks");
	is_int(v.lv[1].index, 0, "socket 0");
	is_str(list(v.lv[1].ranks, v.lv[1].nranks), "4,5,7", "socket ranks");
	is_int(v.lv[2].index, 0, "core 0");
	is_str(list(v.lv[2].ranks, v.lv[2].nranks), "4,7", "core ranks");
	pmi_topo_view_free(&v);
	is_int(pmi_topo_parse("v1|ranks=0-3|bind=0:0:0,1:0:1|future=x", 3, 4, &v), 0,
	       "an unbound rank, an unknown field");
	is_int(v.nlevels * 100 + v.node, 100 - 1, "node level only, node unknown");
	pmi_topo_view_free(&v);
	is_int(pmi_topo_parse("v1|ranks=0-3|bind=0:1,1:1,2:0:0", 1, 4, &v), 0, "socket only");
	is_int(v.nlevels, 2, "two levels");
	is_str(list(v.lv[1].ranks, v.lv[1].nranks), "0,1", "the socket's ranks");
	pmi_topo_view_free(&v);

	static const char *const bad[] = {
	    "",
	    "v2|ranks=0",
	    "v1",
	    "v1|ranks=1",             /* rank 0 asks: not on this node */
	    "v1|ranks=0-4",           /* past size 4 */
	    "v1|ranks=2-1,0",         /* backwards */
	    "v1|ranks=0,0",           /* twice */
	    "v1|ranks=1,0",           /* not ascending */
	    "v1|ranks=0,",            /* trailing comma */
	    "v1|ranks=0|ranks=1",     /* twice */
	    "v1|ranks=0|bind=1:0:0",  /* a rank not on the node */
	    "v1|ranks=0|bind=0:0:0,", /* trailing comma */
	    "v1|ranks=0|bind=0:0:0,0:0:1",
	    "v1|ranks=0|bind=0",
	    "v1|ranks=0|bind=0:x",
	    "v1|ranks=0|bind=0:-1:0",
	    "v1|ranks=0|node=1",           /* node without nodes */
	    "v1|ranks=0|node=2|nodes=2",   /* node out of range */
	    "v1|ranks=0|node=99999999999", /* too big */
	    "v1|ranks=-1",
	    "v1|ranks",
	    "v1||ranks=0",
	    "v1 |ranks=0",
	    "v1|ranks=0|",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = pmi_topo_parse(bad[i], 0, 4, &v);
		ok(rc < 0 && errno == EINVAL && v.nlevels == 0, "malformed '%s' rejected", bad[i]);
	}
	ok(pmi_topo_parse(NULL, 0, 1, &v) < 0, "NULL text");
	ok(pmi_topo_parse("v1|ranks=0", 1, 1, &v) < 0, "me out of range");
}

/* Random bytes, and every truncation and one-byte change of a good text: never a crash, and
 * what parses names me at the node level. */
static void test_fuzz(void)
{
	const char *good = "v1|node=0|nodes=3|ranks=0-2,5|bind=0:0:0,1:0:1,2:1:0,5:1:1";
	char t[128];
	struct pmi_topo_view v;
	int bad = 0, parsed = 0;
	unsigned seed = 12345;

	for (size_t cut = 0; cut <= strlen(good); cut++) {
		snprintf(t, sizeof(t), "%.*s", (int)cut, good);
		if (pmi_topo_parse(t, 0, 8, &v) == 0) {
			parsed++;
			bad += v.lv[0].ranks[0] != 0;
			pmi_topo_view_free(&v);
		}
	}
	for (int i = 0; i < 20000; i++) {
		seed = seed * 1103515245u + 12345u;
		size_t n = strlen(good);
		memcpy(t, good, n + 1);
		t[(seed >> 8) % n] = (char)(" 0123456789|,:-=vx\x80"[(seed >> 20) % 19]);
		if (i % 3 == 0) {
			for (size_t k = 0; k < n; k++) {
				seed = seed * 1103515245u + 12345u;
				t[k] = (char)(1 + (seed >> 16) % 255);
			}
		}
		if (pmi_topo_parse(t, 5, 8, &v) == 0) {
			int me = 0;
			for (int k = 0; k < v.lv[0].nranks; k++)
				me |= v.lv[0].ranks[k] == 5;
			bad += !me || v.nlevels < 1 || v.nlevels > 3;
			parsed++;
			pmi_topo_view_free(&v);
		}
	}
	is_int(bad, 0, "fuzz: %d texts parsed, each about me", parsed);
}

static void test_mapping(void)
{
	int node[8];

	is_int(pmi_topo_mapping("(vector,(0,2,2))", node, 4), 2, "2 nodes x 2");
	is_str(list(node, 4), "0,0,1,1", "block");
	is_int(pmi_topo_mapping("(vector,(0,2,1))", node, 5), 2, "repeated until placed");
	is_str(list(node, 5), "0,1,0,1,0", "round robin");
	is_int(pmi_topo_mapping(" ( vector , (0,1,3), (1,1,1) ) ", node, 4), 2, "spaces");
	is_str(list(node, 4), "0,0,0,1", "uneven");
	ok(pmi_topo_mapping("(vector)", node, 2) < 0, "no block");
	ok(pmi_topo_mapping("(vector,(0,0,0))", node, 2) < 0, "empty blocks place nobody");
	ok(pmi_topo_mapping("(vector,(0,1,1)", node, 2) < 0, "unclosed");
	ok(pmi_topo_mapping("", node, 2) < 0, "empty");
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_sysfs(void)
{
	char root[] = "/tmp/t_pmi_topo.XXXXXX", p[256];
	int s = -1, c = -1;

	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(p, sizeof(p), "%s/cpu3", root);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/cpu3/topology", root);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/cpu3/topology/physical_package_id", root);
	put_file(p, "1\n");
	snprintf(p, sizeof(p), "%s/cpu3/topology/core_id", root);
	put_file(p, "12\n");
	is_int(pmi_topo_cpu(root, 3, &s, &c), 0, "cpu3 from a fake /sys");
	is_int(s * 100 + c, 112, "socket 1, core 12");
	ok(pmi_topo_cpu(root, 4, &s, &c) < 0, "a CPU /sys does not know");
	snprintf(p, sizeof(p), "%s/cpu3/topology/core_id", root);
	put_file(p, "x\n");
	ok(pmi_topo_cpu(root, 3, &s, &c) < 0 && errno == EINVAL, "garbage in /sys: EINVAL");
	unlink(p);
	snprintf(p, sizeof(p), "%s/cpu3/topology/physical_package_id", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/cpu3/topology", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/cpu3", root);
	rmdir(p);
	rmdir(root);
}

/* {==== the engine */

static char sent[4096];
static size_t nsent;
static int nerr;

static void f_send(void *arg, pmi_conn_t *c, const char *line, size_t len)
{
	if (nsent + len < sizeof(sent)) {
		memcpy(sent + nsent, line, len);
		nsent += len;
		sent[nsent] = '\0';
	}
}
static void f_fence(void *arg, const char *delta, size_t len)
{
}
static void f_abort(void *arg, pmi_conn_t *c, int code, const char *msg)
{
}
static void f_error(void *arg, pmi_conn_t *c, const char *msg)
{
	nerr++;
}

static void test_server(void)
{
	static const struct pmi_server_ops ops = {
	    .send = f_send, .fence = f_fence, .abort = f_abort, .error = f_error};
	struct pmi_server_cfg cfg = {
	    .kvsname = "kvs_1", .size = 4, .universe_size = 4, .nlocal = 2};
	const char *t = "v1|node=1|nodes=2|ranks=2-3|bind=2:0:0,3:0:1";
	pmi_server_t *s = pmi_server_create(&cfg, &ops, NULL);
	pmi_conn_t *c = pmi_conn_create(s, 2), *c2 = pmi_conn_create(s, 3);
	const char *v1 = "cmd=init pmi_version=1 pmi_subversion=1\ncmd=lamkit_topo\n";

	ok(s && c && c2, "engine and conns");
	pmi_conn_feed(c, v1, strlen(v1));
	ok(strstr(sent, "cmd=lamkit_topo_result rc=-1 msg=not_known\n") != NULL,
	   "PMI-1 before the owner stored it: not_known");
	ok(pmi_server_nodeattr(s, "bad key", t) < 0 && errno == EINVAL, "a key with a space");
	is_int(pmi_server_nodeattr(s, PMI_TOPO_KEY, t), 0, "the owner stores the node's text");
	nsent = 0;
	pmi_conn_feed(c, "cmd=lamkit_topo junk=1\n", 23);
	is_str(sent,
	       "cmd=lamkit_topo_result rc=0 msg=success value=v1|node=1|nodes=2|ranks=2-3|"
	       "bind=2:0:0,3:0:1\n",
	       "PMI-1 cmd=lamkit_topo (extra fields ignored)");
	nsent = 0;
	char v2[256];
	const char *m1 = "cmd=fullinit;pmirank=3;", *m2 = "cmd=info-getnodeattr;key=lamkit_topo;";
	int n = snprintf(v2, sizeof(v2), "cmd=init pmi_version=2 pmi_subversion=0\n%-6d%s%-6d%s",
	                 (int)strlen(m1), m1, (int)strlen(m2), m2);
	pmi_conn_feed(c2, v2, (size_t)n);
	ok(strstr(sent, "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=v1|node=1|nodes=2|"
	                "ranks=2-3|bind=2:0:0,3:0:1;") != NULL,
	   "PMI-2: node attribute lamkit_topo");
	is_int(nerr, 0, "no protocol error");
	pmi_server_destroy(s);
}

/* ====} */

int main(void)
{
	test_encode();
	test_parse();
	test_fuzz();
	test_mapping();
	test_sysfs();
	test_server();
	return done_testing();
}
