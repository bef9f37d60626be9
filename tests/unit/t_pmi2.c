/* tests/unit/t_pmi2.c: the PMI-2 codec and the engine's PMI-2 half, driven with scripted
 * messages, fake ops, and random and truncated input. */
#include "tap.h"
#include "../../lib/pmi/pmi2_wire.h"
#include "../../lib/pmi/pmi_server.h"

#include <errno.h>

#define NCONN 4

struct cbuf {
	char text[1 << 16];
	size_t len, pos;
};

static struct {
	pmi_server_t *s;
	struct cbuf out[NCONN];
	int nerr, nabort, nfin, nfence, nspawn, abort_code;
	char lasterr[256], abort_msg[256], spawn_desc[512], res_desc[700];
	pmi_conn_t *spawn_conn;
} F;

static void f_send(void *arg, pmi_conn_t *c, const char *line, size_t len)
{
	struct cbuf *b = pmi_conn_data(c);

	(void)arg;
	if (b && b->len + len < sizeof(b->text)) {
		memcpy(b->text + b->len, line, len);
		b->len += len;
	}
}

static void f_fence(void *arg, const char *delta, size_t len)
{
	(void)arg;
	(void)delta;
	(void)len;
	F.nfence++;
	pmi_server_fence_done(F.s, NULL, 0);
}

static void f_abort(void *arg, pmi_conn_t *c, int code, const char *msg)
{
	(void)arg;
	(void)c;
	F.nabort++;
	F.abort_code = code;
	snprintf(F.abort_msg, sizeof(F.abort_msg), "%s", msg ? msg : "(null)");
}

static void f_finalize(void *arg, pmi_conn_t *c)
{
	(void)arg;
	(void)c;
	F.nfin++;
}

static void f_error(void *arg, pmi_conn_t *c, const char *msg)
{
	(void)arg;
	(void)c;
	F.nerr++;
	snprintf(F.lasterr, sizeof(F.lasterr), "%s", msg);
}

/* Describe the request in F.spawn_desc: per command "N exe [arg].. {key=val}..", joined by
 * " | ", then the preput pairs. Exe "fail" refuses; "later" leaves the answer pending (in
 * F.spawn_conn); anything else answers at once with kvsname "kid-1". */
static int f_spawn(void *arg, pmi_conn_t *c, int ncmds, const struct pmi_spawn_cmd *cmds,
                   int npreput, char *const preput_kv[])
{
	size_t n = 0, sz = sizeof(F.spawn_desc);

	(void)arg;
	F.spawn_desc[0] = '\0';
	for (int k = 0; k < ncmds && n < sz; k++) {
		const struct pmi_spawn_cmd *m = &cmds[k];
		n += (size_t)snprintf(F.spawn_desc + n, sz - n, "%s%d %s", k ? " | " : "",
		                      m->nprocs, m->exe);
		for (int i = 0; i < m->argc && n < sz; i++)
			n += (size_t)snprintf(F.spawn_desc + n, sz - n, " [%s]", m->argv[i]);
		for (int i = 0; i < m->ninfo && n < sz; i++)
			n += (size_t)snprintf(F.spawn_desc + n, sz - n, " {%s=%s}", m->info[2 * i],
			                      m->info[2 * i + 1]);
	}
	for (int i = 0; i < npreput && n < sz; i++)
		n += (size_t)snprintf(F.spawn_desc + n, sz - n, " %s=%s", preput_kv[2 * i],
		                      preput_kv[2 * i + 1]);
	F.nspawn++;
	if (strcmp(cmds[0].exe, "fail") == 0)
		return -1;
	if (strcmp(cmds[0].exe, "later") == 0) {
		F.spawn_conn = c;
		return 0;
	}
	return pmi_conn_spawn_done(c, 0, "kid-1", NULL);
}

/* Accepts kind "shm" only; records what it was asked. */
static int f_resource(void *arg, pmi_conn_t *c, int op, const char *kind, const char *name,
                      char *why, size_t whylen)
{
	(void)arg;
	snprintf(F.res_desc, sizeof(F.res_desc), "rank %d op %d %s [%s]", pmi_conn_rank(c), op,
	         kind, name);
	if (strcmp(kind, "shm") != 0) {
		snprintf(why, whylen, "unknown_kind");
		return -1;
	}
	return 0;
}

static struct pmi_server_ops ops = {f_send,  f_fence,    f_abort, f_finalize, f_error,
                                    f_spawn, f_resource, NULL,    NULL};

static void mk(int size, int nlocal)
{
	struct pmi_server_cfg cfg = {"lamkit-7", size, size + 3, nlocal, NULL, NULL};

	memset(&F, 0, sizeof(F));
	F.s = pmi_server_create(&cfg, &ops, NULL);
}

static pmi_conn_t *conn(int slot, int rank)
{
	pmi_conn_t *c = pmi_conn_create(F.s, rank);

	if (c)
		pmi_conn_set_data(c, &F.out[slot]);
	return c;
}

/* Send one PMI-2 message with body `body` (the header is added). */
static int say2(pmi_conn_t *c, const char *body)
{
	char msg[8192];
	int n = snprintf(msg, sizeof(msg), "%-6zu%s", strlen(body), body);

	return pmi_conn_feed(c, msg, (size_t)n);
}

/* Pop the next PMI-2 message sent to slot i: its body ("" when none or malformed). */
static const char *next2(int i)
{
	static char body[PMI2_MSG_MAX + 1];
	struct cbuf *b = &F.out[i];

	if (b->len - b->pos < PMI2_HDR_LEN)
		return "";
	long n = pmi2_hdr_parse(b->text + b->pos);
	if (n < 0 || b->len - b->pos - PMI2_HDR_LEN < (size_t)n)
		return "";
	memcpy(body, b->text + b->pos + PMI2_HDR_LEN, (size_t)n);
	body[n] = '\0';
	b->pos += PMI2_HDR_LEN + (size_t)n;
	return body;
}

/* Pop the next PMI-1 line sent to slot i. */
static const char *next1(int i)
{
	static char line[4096];
	struct cbuf *b = &F.out[i];
	const char *nl = memchr(b->text + b->pos, '\n', b->len - b->pos);

	if (!nl)
		return "";
	size_t n = (size_t)(nl - (b->text + b->pos));
	memcpy(line, b->text + b->pos, n);
	line[n] = '\0';
	b->pos += n + 1;
	return line;
}

/* A conn of `rank` through init v2 and fullinit, its replies consumed. */
static pmi_conn_t *v2conn(int slot, int rank)
{
	char body[128];
	pmi_conn_t *c = conn(slot, rank);

	pmi_conn_feed(c, "cmd=init pmi_version=2 pmi_subversion=0\n", 40);
	(void)next1(slot);
	snprintf(body, sizeof(body), "cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
	say2(c, body);
	(void)next2(slot);
	return c;
}

static void test_codec(void)
{
	struct pmi2_msg m;
	struct pmi2_out o;
	const char *why = "";
	size_t n;
	int v;

	is_int(pmi2_hdr_parse("42    "), 42, "header left-justified (Slurm)");
	is_int(pmi2_hdr_parse("    42"), 42, "header right-justified");
	is_int(pmi2_hdr_parse("000042"), 42, "header zero-padded");
	is_int(pmi2_hdr_parse("4 2   "), -1, "header with a gap");
	is_int(pmi2_hdr_parse("      "), -1, "blank header");
	is_int(pmi2_hdr_parse("99999x"), -1, "header with a letter");
	is_int(pmi2_hdr_parse("524288"), 524288, "the largest header (PMI2_MSG_MAX)");
	is_int(pmi2_hdr_parse("524289"), -1, "header over PMI2_MSG_MAX");

	const char *b = "cmd=kvs-put;key=a;value=x;;y=z;; w;;;";
	ok(pmi2_msg_parse(b, strlen(b), &m, &why) == 0, "parse a put");
	is_str(pmi2_msg_cmd(&m), "kvs-put", "cmd");
	is_str(pmi2_msg_get(&m, "value", &n), "x;y=z; w;", "';;' is one ';', '=' and ' ' stay");
	is_int(n, 9, "value length");
	pmi2_msg_free(&m);
	ok(pmi2_msg_parse("cmd=x;rc=5", 10, &m, &why) == 0 && pmi2_msg_int(&m, "rc", &v) == 0 &&
	       v == 5,
	   "a missing final ';' is accepted");
	pmi2_msg_free(&m);

	static const struct {
		const char *body, *why;
	} bad[] = {
	    {"", "empty"},
	    {"key=v;", "no_cmd"},
	    {"cmd=;", "no_cmd"},
	    {"cmd=x;=v;", "bad_key"},
	    {"cmd=x;novalue;", "bad_key"},
	    {"cmd=x;a b=c;", "bad_key"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = "";
		ok(pmi2_msg_parse(bad[i].body, strlen(bad[i].body), &m, &why) < 0 &&
		       strcmp(why, bad[i].why) == 0,
		   "'%s' refused as %s (%s)", bad[i].body, bad[i].why, why);
	}
	char big[PMI2_CMD_VAL_MAX + 64];
	int k = snprintf(big, sizeof(big), "cmd=x;v=");
	memset(big + k, 'a', PMI2_CMD_VAL_MAX + 1);
	ok(pmi2_msg_parse(big, (size_t)k + PMI2_CMD_VAL_MAX + 1, &m, &why) < 0 &&
	       strcmp(why, "value_too_long") == 0,
	   "a value over %d bytes is refused", PMI2_CMD_VAL_MAX);
	k = snprintf(big, sizeof(big), "cmd=x;%0*d=v;", PMI2_KEY_MAX + 1, 0);
	ok(pmi2_msg_parse(big, (size_t)k, &m, &why) < 0 && strcmp(why, "key_too_long") == 0,
	   "a key over %d bytes is refused", PMI2_KEY_MAX);
	ok(pmi2_msg_parse("cmd=x;a=\0;", 10, &m, &why) < 0 && strcmp(why, "nul_byte") == 0,
	   "a NUL byte is refused");

	pmi2_out_begin(&o, "kvs-get-response");
	pmi2_out_add(&o, "value", "a;b");
	pmi2_out_addi(&o, "rc", -3);
	long len = pmi2_out_finish(&o);
	ok(len == 6 + 38 && memcmp(o.buf, "38    cmd=kvs-get-response;value=a;;b;rc=-3;", 44) == 0,
	   "builder: left-justified length, ';' doubled");
	ok(pmi2_msg_parse(o.buf + 6, (size_t)len - 6, &m, &why) == 0 &&
	       strcmp(pmi2_msg_get(&m, "value", NULL), "a;b") == 0,
	   "round trip");
	pmi2_msg_free(&m);
	pmi2_out_free(&o);
}

static void test_sequence(void)
{
	pmi_conn_t *c[2];

	mk(2, 2);
	ok(pmi_server_preput(F.s, "PMI_process_mapping", "(vector,(0,1,2))") == 0, "preput");
	for (int r = 0; r < 2; r++) {
		c[r] = conn(r, r);
		is_int(pmi_conn_feed(c[r], "cmd=init pmi_version=2 pmi_subversion=0\n", 40), 0,
		       "init v2");
		is_str(next1(r), "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0",
		       "PMI-1 style reply, then PMI-2");
		say2(c[r], r ? "cmd=fullinit;pmijobid=x;pmirank=1;threaded=FALSE;"
		             : "cmd=fullinit;threaded=FALSE;");
		is_str(
		    next2(r),
		    r ? "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=2;"
		        "appnum=0;debugged=FALSE;pmiverbose=FALSE;"
		      : "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=2;"
		        "appnum=0;debugged=FALSE;pmiverbose=FALSE;",
		    "fullinit %d", r);
		ok(pmi_conn_initialized(c[r]), "initialized");
	}
	say2(c[0], "cmd=job-getid;");
	is_str(next2(0), "cmd=job-getid-response;rc=0;jobid=lamkit-7;", "job-getid");
	say2(c[0], "cmd=info-getjobattr;key=PMI_process_mapping;");
	is_str(next2(0), "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2));",
	       "process mapping");
	say2(c[0], "cmd=info-getjobattr;key=universeSize;");
	is_str(next2(0), "cmd=info-getjobattr-response;rc=0;found=TRUE;value=5;", "universeSize");
	say2(c[0], "cmd=info-getjobattr;key=nope;");
	is_str(next2(0), "cmd=info-getjobattr-response;rc=0;found=FALSE;", "unknown job attr");

	/* node attributes: rank 1 waits, rank 0 puts, rank 1 is answered */
	say2(c[1], "cmd=info-getnodeattr;key=shm;wait=TRUE;");
	is_str(next2(1), "", "getnodeattr with wait blocks");
	is_int(say2(c[1], "cmd=job-getid;"), -1, "a request while waiting is an error");
	ok(strstr(F.lasterr, "info-getnodeattr") != NULL, "%s", F.lasterr);
	F.nerr = 0;
	pmi_conn_destroy(c[1]);
	c[1] = v2conn(1, 1);
	say2(c[1], "cmd=info-getnodeattr;key=shm;wait=TRUE;");
	say2(c[0], "cmd=info-putnodeattr;key=shm;value=/lk;;1;");
	is_str(next2(0), "cmd=info-putnodeattr-response;rc=0;", "putnodeattr");
	is_str(next2(1), "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=/lk;;1;",
	       "the waiter gets the value");
	say2(c[1], "cmd=info-getnodeattr;key=other;wait=FALSE;");
	is_str(next2(1), "cmd=info-getnodeattr-response;rc=0;found=FALSE;", "no wait: not found");

	/* kvs and fence */
	say2(c[0], "cmd=kvs-put;key=bc-0;value=a b;;c;");
	is_str(next2(0), "cmd=kvs-put-response;rc=0;", "put");
	say2(c[0], "cmd=kvs-fence;");
	is_str(next2(0), "", "first rank waits in the fence");
	is_int(F.nfence, 0, "no fence yet");
	say2(c[1], "cmd=kvs-fence;");
	is_int(F.nfence, 1, "fence once both entered");
	is_str(next2(0), "cmd=kvs-fence-response;rc=0;", "fence-response 0");
	is_str(next2(1), "cmd=kvs-fence-response;rc=0;", "fence-response 1");
	say2(c[1], "cmd=kvs-get;jobid=lamkit-7;srcid=0;key=bc-0;");
	is_str(next2(1), "cmd=kvs-get-response;rc=0;found=TRUE;value=a b;;c;", "get");
	say2(c[1], "cmd=kvs-get;key=nope;");
	is_str(next2(1), "cmd=kvs-get-response;rc=0;found=FALSE;", "missing key: found=FALSE");
	say2(c[1], "cmd=kvs-get;jobid=other;key=bc-0;");
	is_str(next2(1), "cmd=kvs-get-response;rc=-1;errmsg=unknown_jobid;", "another job id");

	/* a PMI-1 put is visible to PMI-2 gets: one KVS */
	pmi_conn_t *p1 = conn(2, -1);
	pmi_conn_feed(p1, "cmd=init pmi_version=1 pmi_subversion=1\n", 40);
	(void)next1(2);
	pmi_conn_feed(p1, "cmd=put kvsname=lamkit-7 key=v1 value=x y\n", 42);
	is_str(next1(2), "cmd=put_result rc=0 msg=success", "PMI-1 put");
	say2(c[0], "cmd=kvs-get;key=v1;");
	is_str(next2(0), "cmd=kvs-get-response;rc=0;found=TRUE;value=x y;", "seen by PMI-2");
	pmi_conn_destroy(p1);

	/* names */
	say2(c[0], "cmd=name-publish;name=svc;port=tcp://h:1;");
	is_str(next2(0), "cmd=name-publish-response;rc=0;", "publish");
	say2(c[0], "cmd=name-publish;name=svc;port=x;");
	is_str(next2(0), "cmd=name-publish-response;rc=-1;errmsg=already_published;", "twice");
	say2(c[1], "cmd=name-lookup;name=svc;");
	is_str(next2(1), "cmd=name-lookup-response;rc=0;value=tcp://h:1;", "lookup");
	say2(c[1], "cmd=name-unpublish;name=svc;");
	is_str(next2(1), "cmd=name-unpublish-response;rc=0;", "unpublish");
	say2(c[1], "cmd=name-lookup;name=svc;");
	is_str(next2(1), "cmd=name-lookup-response;rc=1;errmsg=not_found;", "gone");

	/* spawn */
	say2(c[0], "cmd=spawn;ncmds=1;preputcount=1;ppkey0=k;ppval0=v;subcmd=/bin/x;maxprocs=2;"
	           "argc=2;argv0=a;argv1=b c;infokeycount=1;infokey0=wdir;infoval0=/;");
	is_str(next2(0), "cmd=spawn-response;rc=0;jobid=kid-1;", "spawn answers the new jobid");
	is_str(F.spawn_desc, "2 /bin/x [a] [b c] {wdir=/} k=v", "ops->spawn got the request");
	say2(c[0], "cmd=spawn;ncmds=2;preputcount=0;subcmd=later;maxprocs=1;argc=0;subcmd=/b;"
	           "maxprocs=3;argc=1;argv0=z;infokeycount=1;infokey0=host;infoval0=n2;");
	ok(F.out[0].len == F.out[0].pos && F.spawn_conn == c[0],
	   "two commands accepted, answer pending");
	is_str(F.spawn_desc, "1 later | 3 /b [z] {host=n2}", "both commands in one call");
	is_int(pmi_conn_spawn_done(c[0], 1, NULL, "no_free_slots"), 0, "late answer");
	is_str(next2(0), "cmd=spawn-response;rc=-1;errmsg=no_free_slots;", "late failure");
	say2(c[0], "cmd=spawn;ncmds=1;preputcount=0;subcmd=fail;maxprocs=1;argc=0;");
	is_str(next2(0), "cmd=spawn-response;rc=-1;errmsg=spawn_failed;", "refused at once");
	say2(c[0], "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/x;maxprocs=1;argc=2;argv0=a;");
	is_str(next2(0), "cmd=spawn-response;rc=-1;errmsg=bad_argv;", "missing argv1");

	/* semantic errors keep the conn */
	say2(c[0], "cmd=kvs-put;key=k;");
	is_str(next2(0), "cmd=kvs-put-response;rc=-1;errmsg=missing_value;", "put without value");
	char body[2048];
	snprintf(body, sizeof(body), "cmd=kvs-put;key=k;value=%01025d;", 0);
	say2(c[0], body);
	is_str(next2(0), "cmd=kvs-put-response;rc=-1;errmsg=value_too_long;", "value over 1024");
	say2(c[0], "cmd=no-such-thing;a=b;");
	is_str(next2(0), "cmd=no-such-thing-response;rc=-1;errmsg=unknown_command;",
	       "unknown command answered");

	for (int r = 0; r < 2; r++) {
		say2(c[r], "cmd=finalize;");
		is_str(next2(r), "cmd=finalize-response;rc=0;", "finalize %d", r);
		ok(pmi_conn_finalized(c[r]), "finalized");
	}
	is_int(F.nfin, 2, "ops->finalize per rank");
	is_int(F.nerr, 0, "no protocol errors in the whole sequence");
	pmi_server_destroy(F.s);
}

static void test_errors(void)
{
	pmi_conn_t *c;

	mk(2, 2);
	c = v2conn(0, 0);
	is_int(say2(c, "cmd=abort;isworld=TRUE;msg=bye;exitcode=42;"), 0, "abort");
	is_int(F.nabort, 1, "ops->abort");
	is_int(F.abort_code, 42, "lamkit's exitcode= extension");
	is_str(F.abort_msg, "bye", "message");
	is_str(next2(0), "", "no reply to abort");
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = v2conn(0, 0);
	say2(c, "cmd=abort;isworld=TRUE;msg=x;");
	is_int(F.abort_code, 1, "Slurm-style abort without a code exits 1");
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = conn(0, 0);
	pmi_conn_feed(c, "cmd=init pmi_version=2 pmi_subversion=0\n", 40);
	(void)next1(0);
	is_int(say2(c, "cmd=kvs-get;key=a;"), -1, "a request before fullinit");
	is_str(next2(0), "cmd=error;rc=-1;errmsg=fullinit_first;", "answered before closing");
	ok(strstr(F.lasterr, "before fullinit") != NULL, "%s", F.lasterr);
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = conn(0, 1);
	pmi_conn_feed(c, "cmd=init pmi_version=2 pmi_subversion=0\n", 40);
	is_int(say2(c, "cmd=fullinit;pmirank=0;"), -1, "fullinit for another rank");
	ok(strstr(F.lasterr, "connection of rank 1") != NULL, "%s", F.lasterr);
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = conn(0, -1);
	pmi_conn_feed(c, "cmd=init pmi_version=2 pmi_subversion=0\n", 40);
	is_int(say2(c, "cmd=fullinit;pmirank=1;"), 0, "an anonymous conn names its rank");
	is_int(pmi_conn_rank(c), 1, "and gets it");
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = v2conn(0, 0);
	is_int(pmi_conn_feed(c, "12x   cmd=x;", 12), -1, "a bad header closes the conn");
	ok(strstr(F.lasterr, "length header") != NULL, "%s", F.lasterr);
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = v2conn(0, 0);
	is_int(pmi_conn_feed(c, "0     ", 6), -1, "a zero length closes at once");
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = v2conn(0, 0);
	is_int(pmi_conn_feed(c, "999999", 6), -1, "a length over the limit closes at once");
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = v2conn(0, 0);
	is_int(say2(c, "key=v;"), -1, "a message without cmd");
	is_str(next2(0), "cmd=error;rc=-1;errmsg=no_cmd;", "gets an error reply");
	is_int(F.nerr, 1, "and one ops->error");
	pmi_server_destroy(F.s);

	/* a message split at every byte */
	mk(1, 1);
	c = v2conn(0, 0);
	const char *msg = "26    cmd=kvs-put;key=k;value=v;";
	for (size_t i = 0; msg[i]; i++)
		pmi_conn_feed(c, msg + i, 1);
	is_str(next2(0), "cmd=kvs-put-response;rc=0;", "byte-by-byte message");
	pmi_server_destroy(F.s);
}

/* Random and truncated input at fresh PMI-2 conns: never a crash, each complete bad input
 * answered with one error (rc != 0 reply, or one ops->error that closes the conn). */
static void test_fuzz(void)
{
	static const char *good[] = {
	    "cmd=kvs-put;key=k;value=v;",
	    "cmd=kvs-get;key=k;",
	    "cmd=info-getjobattr;key=x;",
	    "cmd=spawn;ncmds=1;preputcount=0;subcmd=a;maxprocs=1;argc=0;",
	    "cmd=name-publish;name=a;port=b;",
	    "cmd=info-putnodeattr;key=a;value=b;",
	};
	unsigned seed = 4242;
	int bad = 0, rounds = 3000;

	for (int round = 0; round < rounds; round++) {
		char buf[4096];
		size_t n = 0;
		mk(2, 1);
		pmi_conn_t *c = v2conn(0, 0);
		F.out[0].len = F.out[0].pos = 0;
		F.nerr = 0;
		int mode = round % 3;
		const char *g = good[(unsigned)round % (sizeof(good) / sizeof(good[0]))];
		seed = seed * 1103515245u + 12345u;
		if (mode == 0) { /* random bytes, random header */
			n = (seed >> 8) % 3000 + 1;
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				buf[i] = (char)((seed >> 16) & 0xff);
			}
		} else if (mode == 1) { /* good header, body with bytes flipped */
			size_t bl = strlen(g);
			n = (size_t)snprintf(buf, sizeof(buf), "%-6zu%s", bl, g);
			for (int k = 0; k < 3; k++) {
				seed = seed * 1103515245u + 12345u;
				buf[PMI2_HDR_LEN + (seed >> 8) % bl] = (char)((seed >> 16) & 0xff);
			}
		} else { /* truncated: a prefix of a good message */
			n = (size_t)snprintf(buf, sizeof(buf), "%-6zu%s", strlen(g), g);
			n = (seed >> 8) % n;
		}
		int rc = pmi_conn_feed(c, buf, n);
		int replies = 0, errs = 0;
		const char *r;
		while (*(r = next2(0))) {
			replies++;
			errs += strstr(r, "rc=0;") == NULL;
		}
		if (rc != 0 && rc != -1)
			bad++;
		else if ((rc == -1) != (F.nerr == 1) || F.nerr > 1)
			bad++; /* a closed conn is reported once, an open one never */
		else if (mode == 2 && (rc != 0 || replies != 0))
			bad++; /* a truncated message waits for the rest */
		else if (mode == 1 && rc == 0 && replies == 0 && F.nfence == 0)
			bad++; /* a complete message always gets an answer */
		(void)errs;
		pmi_server_destroy(F.s);
	}
	is_int(bad, 0, "%d random, corrupted and truncated PMI-2 inputs handled", rounds);
}

/* Resource registration on both wires reaches ops->resource and answers its verdict. */
static void test_resources(void)
{
	pmi_conn_t *c1, *c2;

	mk(2, 2);
	c1 = conn(0, 0);
	pmi_conn_feed(c1, "cmd=init pmi_version=1 pmi_subversion=1\n", 40);
	(void)next1(0);
	const char *l = "cmd=resource_register kind=shm name=/lk seg\n";
	pmi_conn_feed(c1, l, strlen(l));
	is_str(next1(0), "cmd=resource_register_result rc=0 msg=success", "PMI-1 register");
	is_str(F.res_desc, "rank 0 op 0 shm [/lk seg]", "name runs to the end of the line");
	l = "cmd=resource_release_begin kind=file name=/x\n";
	pmi_conn_feed(c1, l, strlen(l));
	is_str(next1(0), "cmd=resource_release_begin_result rc=-1 msg=unknown_kind",
	       "the owner's refusal is answered");
	l = "cmd=resource_release_end name=/x\n";
	pmi_conn_feed(c1, l, strlen(l));
	is_str(next1(0), "cmd=resource_release_end_result rc=-1 msg=missing_kind", "no kind");
	c2 = v2conn(1, 1);
	say2(c2, "cmd=lamkit-resource-release-end;kind=shm;name=/a;;b;");
	is_str(next2(1), "cmd=lamkit-resource-release-end-response;rc=0;", "PMI-2 release_end");
	is_str(F.res_desc, "rank 1 op 2 shm [/a;b]", "op and unescaped name");
	say2(c2, "cmd=lamkit-resource-register;kind=shm;");
	is_str(next2(1), "cmd=lamkit-resource-register-response;rc=-1;errmsg=missing_name;",
	       "PMI-2 without a name");
	is_int(F.nerr, 0, "refusals are not protocol errors");
	pmi_server_destroy(F.s);

	ops.resource = NULL;
	mk(1, 1);
	c2 = v2conn(0, 0);
	say2(c2, "cmd=lamkit-resource-register;kind=shm;name=/x;");
	is_str(next2(0), "cmd=lamkit-resource-register-response;rc=-1;errmsg=not_served;",
	       "an owner without ops->resource: not_served");
	pmi_server_destroy(F.s);
	ops.resource = f_resource;
}

int main(void)
{
	test_codec();
	test_sequence();
	test_errors();
	test_resources();
	test_fuzz();
	return done_testing();
}
