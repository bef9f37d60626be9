/* tests/unit/t_pmi_server.c: drives the PMI-1 engine with scripted lines and fake ops. */
#include "tap.h"
#include "../../lib/pmi/pmi_server.h"
#include "../../lib/pmi/pmi_spawn.h"

#include <errno.h>

#define NCONN 8

struct cbuf { /* everything the engine sent to one conn */
	char text[1 << 15];
	size_t len, pos;
};

static struct {
	pmi_server_t *s;
	struct cbuf out[NCONN];
	int nerr, nabort, nfin, nfence, nspawn, auto_done, destroy_on_error;
	int abort_code;
	char lasterr[256], abort_msg[256];
	pmi_conn_t *errconn;
	char delta[8192];
	size_t dlen;
	char spawn_desc[512];
	pmi_conn_t *spawn_conn;
	int spawn_argc;
	size_t spawn_lastlen; /* length of the last argument of the last request */
	char refused[256];
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
	F.nfence++;
	F.dlen = len < sizeof(F.delta) ? len : 0;
	memcpy(F.delta, delta, F.dlen);
	if (F.auto_done)
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
	F.nerr++;
	F.errconn = c;
	snprintf(F.lasterr, sizeof(F.lasterr), "%s", msg);
	if (F.destroy_on_error)
		pmi_conn_destroy(c);
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
	F.spawn_argc = cmds[0].argc;
	F.spawn_lastlen = cmds[0].argc ? strlen(cmds[0].argv[cmds[0].argc - 1]) : 0;
	if (strcmp(cmds[0].exe, "fail") == 0)
		return -1;
	if (strcmp(cmds[0].exe, "later") == 0) {
		F.spawn_conn = c;
		return 0;
	}
	return pmi_conn_spawn_done(c, 0, "kid-1", NULL);
}

static void f_refused(void *arg, pmi_conn_t *c, const char *msg)
{
	(void)arg;
	(void)c;
	snprintf(F.refused, sizeof(F.refused), "%s", msg);
}

/* The name service served elsewhere: remember the request; "local" is left to the engine. */
static char names_req[256];
static int f_names(void *arg, pmi_conn_t *c, int op, const char *name, const char *port)
{
	(void)arg;
	(void)c;
	snprintf(names_req, sizeof names_req, "%d %s %s", op, name, port ? port : "-");
	return strcmp(name, "local") == 0;
}

static struct pmi_server_ops ops = {f_send, f_fence, f_abort, f_finalize, f_error,
                                    NULL,   NULL,    NULL,    f_refused};

/* Pop the next line the engine sent to slot i ("" when none). */
static const char *next(int i)
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

static int pending(int i)
{
	return F.out[i].len > F.out[i].pos;
}

static pmi_server_t *mk(int size, int nlocal)
{
	struct pmi_server_cfg cfg = {"lamkit-42", size, size + 2, nlocal, NULL, NULL};

	memset(&F, 0, sizeof(F));
	F.auto_done = 1;
	F.s = pmi_server_create(&cfg, &ops, NULL);
	return F.s;
}

static pmi_conn_t *conn(int slot, int rank)
{
	pmi_conn_t *c = pmi_conn_create(F.s, rank);

	if (c)
		pmi_conn_set_data(c, &F.out[slot]);
	return c;
}

static int say(pmi_conn_t *c, const char *line)
{
	return pmi_conn_feed(c, line, strlen(line));
}

static void init_conn(pmi_conn_t *c, int slot)
{
	say(c, "cmd=init pmi_version=1 pmi_subversion=1\n");
	(void)next(slot);
}

static void test_mpich_sequence(void)
{
	pmi_conn_t *c[2];

	mk(2, 2);
	ok(pmi_server_preput(F.s, "PMI_process_mapping", "(vector,(0,1,2))") == 0, "preput");
	for (int r = 0; r < 2; r++) {
		c[r] = conn(r, r);
		say(c[r], "cmd=init pmi_version=1 pmi_subversion=1\n");
		is_str(next(r), "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
		       "init %d", r);
		ok(pmi_conn_initialized(c[r]), "initialized");
		say(c[r], "cmd=get_maxes\n");
		is_str(next(r), "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024", "maxes");
		say(c[r], "cmd=get_appnum\n");
		is_str(next(r), "cmd=appnum appnum=0", "appnum");
		say(c[r], "cmd=get_my_kvsname\n");
		is_str(next(r), "cmd=my_kvsname kvsname=lamkit-42", "kvsname");
		say(c[r], "cmd=get kvsname=lamkit-42 key=PMI_process_mapping\n");
		is_str(next(r), "cmd=get_result rc=0 msg=success value=(vector,(0,1,2))",
		       "mapping");
		say(c[r], "cmd=get_universe_size\n");
		is_str(next(r), "cmd=universe_size size=4", "universe");
	}
	say(c[0], "cmd=barrier_in\n");
	ok(!pending(0) && F.nfence == 0, "first rank waits in the barrier");
	say(c[1], "cmd=barrier_in\n");
	is_int(F.nfence, 1, "fence once all local ranks entered");
	is_int(F.dlen, 0, "empty delta");
	is_str(next(0), "cmd=barrier_out", "barrier_out 0");
	is_str(next(1), "cmd=barrier_out", "barrier_out 1");
	say(c[0], "cmd=put kvsname=lamkit-42 key=-bcast-1-0 value=2F6D7069636800\n");
	is_str(next(0), "cmd=put_result rc=0 msg=success", "put");
	say(c[0], "cmd=barrier_in\n");
	say(c[1], "cmd=barrier_in\n");
	is_str(F.delta, "10 14 -bcast-1-0 2F6D7069636800\n", "delta carries the put");
	next(0);
	next(1);
	say(c[1], "cmd=get kvsname=lamkit-42 key=-bcast-1-0\n");
	is_str(next(1), "cmd=get_result rc=0 msg=success value=2F6D7069636800", "get after fence");
	say(c[1], "cmd=get kvsname=lamkit-42 key=nope\n");
	is_str(next(1), "cmd=get_result rc=-1 msg=key_not_found", "missing key");
	for (int r = 0; r < 2; r++) {
		say(c[r], "cmd=finalize\n");
		is_str(next(r), "cmd=finalize_ack", "finalize_ack %d", r);
		ok(pmi_conn_finalized(c[r]), "finalized");
	}
	is_int(F.nfin, 2, "ops->finalize per rank");
	is_int(F.nerr, 0, "no errors in the whole sequence");
	pmi_server_destroy(F.s);
}

static void test_two_agents(void)
{
	struct pmi_server_cfg cfg = {"kv", 2, 2, 1, NULL, NULL};
	pmi_server_t *a, *b;
	pmi_conn_t *ca, *cb;
	char *batch = NULL;
	size_t len = 0, cap = 0;

	mk(2, 1);
	pmi_server_destroy(F.s);
	F.auto_done = 0;
	a = pmi_server_create(&cfg, &ops, NULL);
	b = pmi_server_create(&cfg, &ops, NULL);
	F.s = a;
	ca = pmi_conn_create(a, 0);
	cb = pmi_conn_create(b, 1);
	pmi_conn_set_data(ca, &F.out[0]);
	pmi_conn_set_data(cb, &F.out[1]);
	init_conn(ca, 0);
	init_conn(cb, 1);
	say(ca, "cmd=put kvsname=kv key=k0 value=zero\n");
	say(cb, "cmd=put kvsname=kv key=k1 value=one two\n");
	next(0);
	next(1);
	say(ca, "cmd=barrier_in\n");
	pmi_kvs_merge(&batch, &len, &cap, F.delta, F.dlen);
	say(cb, "cmd=barrier_in\n");
	pmi_kvs_merge(&batch, &len, &cap, F.delta, F.dlen);
	is_int(F.nfence, 2, "each agent fenced");
	ok(!pending(0) && !pending(1), "no barrier_out before fence_done");
	ok(pmi_server_fence_done(a, "3 1 bad", 7) == -1 && errno == EINVAL, "malformed batch");
	ok(pmi_server_fence_done(a, batch, len) == 0 && pmi_server_fence_done(b, batch, len) == 0,
	   "fence_done on both agents");
	is_str(next(0), "cmd=barrier_out", "agent a released");
	is_str(next(1), "cmd=barrier_out", "agent b released");
	say(ca, "cmd=get kvsname=kv key=k1\n");
	is_str(next(0), "cmd=get_result rc=0 msg=success value=one two", "remote value on a");
	say(cb, "cmd=get kvsname=kv key=k0\n");
	is_str(next(1), "cmd=get_result rc=0 msg=success value=zero", "remote value on b");
	free(batch);
	pmi_server_destroy(a);
	pmi_server_destroy(b);
}

static void test_values_with_spaces(void)
{
	mk(1, 1);
	pmi_conn_t *c = conn(0, 0);
	init_conn(c, 0);
	say(c, "cmd=put kvsname=lamkit-42 key=1-0-key0 value= pad ded  \n");
	is_str(next(0), "cmd=put_result rc=0 msg=success", "put with spaces");
	say(c, "cmd=get kvsname=lamkit-42 key=1-0-key0\n");
	is_str(next(0), "cmd=get_result rc=0 msg=success value= pad ded  ", "spaces survive");
	say(c, "cmd=put kvsname=lamkit-42 key=k2 value=a key=zz value=b\n");
	next(0);
	say(c, "cmd=get kvsname=lamkit-42 key=k2\n");
	is_str(next(0), "cmd=get_result rc=0 msg=success value=a key=zz value=b",
	       "value runs to EOL");
	say(c, "cmd=put kvsname=lamkit-42 key=e value=\n");
	next(0);
	say(c, "cmd=get kvsname=lamkit-42 key=e\n");
	is_str(next(0), "cmd=get_result rc=0 msg=success value=", "empty value");
	say(c, "cmd=put kvsname=lamkit-42 key= value=\n");
	is_str(next(0), "cmd=put_result rc=0 msg=success", "empty key accepted (singinit)");
	say(c, "cmd=put kvsname=other key=x value=1\n");
	is_str(next(0), "cmd=put_result rc=-1 msg=unknown_kvsname", "wrong kvsname");
	say(c, "cmd=put kvsname=lamkit-42 key=x\n");
	is_str(next(0), "cmd=put_result rc=-1 msg=missing_value", "missing value");
	say(c, "cmd=put kvsname=lamkit-42 value=x\n");
	is_str(next(0), "cmd=put_result rc=-1 msg=missing_key", "missing key");
	say(c, "cmd=get kvsname=lamkit-42\n");
	is_str(next(0), "cmd=get_result rc=-1 msg=missing_key", "get without key");
	say(c, "cmd=put kvsname=lamkit-42 key=k123456789012345678901234567890123456789012345678901"
	       "234567890123456 value=1\n");
	is_str(next(0), "cmd=put_result rc=-1 msg=key_too_long", "key over 64 bytes");
	say(c, "cmd=get_maxes future=1 found=TRUE\n");
	ok(strncmp(next(0), "cmd=maxes ", 10) == 0, "unknown keys ignored");
	is_int(F.nerr, 0, "none of these closes the conn");
	pmi_server_destroy(F.s);
}

/* A fresh 1-rank server and an initialized conn on slot 0. */
static pmi_conn_t *fresh(void)
{
	mk(2, 2);
	pmi_conn_t *c = conn(0, 0);
	init_conn(c, 0);
	return c;
}

static void test_malformed(void)
{
	char big[1200];
	pmi_conn_t *c = fresh();

	say(c, "cmd=frobnicate x=1\n");
	is_str(next(0), "cmd=frobnicate_result rc=-1 msg=unknown_command", "unknown command");
	say(c, "cmd=get_appnum\n");
	is_str(next(0), "cmd=appnum appnum=0", "conn still open after unknown command");
	memset(big, 'v', sizeof(big));
	memcpy(big, "cmd=put kvsname=lamkit-42 key=big value=", 40);
	big[1024] = '\n';
	is_int(pmi_conn_feed(c, big, 1025), 0, "a 1024-byte line is fine");
	is_str(next(0), "cmd=put_result rc=0 msg=success", "put of a long value");
	say(c, "cmd=get key=big\n");
	is_int(strlen(next(0)), 38 + 1024 - 40, "long value comes back whole");
	big[1024] = 'v';
	is_int(pmi_conn_feed(c, big, 1100), -1, "line over 1024 bytes");
	ok(F.nerr == 1 && strstr(F.lasterr, "longer than 1024"), "error names it: %s", F.lasterr);
	is_int(say(c, "cmd=get_appnum\n"), -1, "failed conn stays failed");
	is_int(F.nerr, 1, "error reported once");
	pmi_server_destroy(F.s);

	c = fresh();
	is_int(pmi_conn_feed(c, "cmd=get\0key=x\n", 14), -1, "NUL byte");
	ok(strstr(F.lasterr, "0x00") != NULL, "error names the byte: %s", F.lasterr);
	pmi_server_destroy(F.s);
	c = fresh();
	is_int(say(c, "cmd=get_maxes\r\n"), -1, "CR is binary garbage");
	pmi_server_destroy(F.s);
	c = fresh();
	is_int(say(c, "hello there\n"), -1, "line without cmd=");
	ok(strstr(F.lasterr, "cmd=") != NULL, "%s", F.lasterr);
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = conn(0, 0);
	is_int(say(c, "cmd=get_maxes\n"), -1, "command before init");
	ok(strstr(F.lasterr, "before cmd=init") != NULL, "%s", F.lasterr);
	ok(!pending(0), "no reply before init");
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = conn(0, 0);
	is_int(say(c, "cmd=init pmi_version=3 pmi_subversion=0\n"), -1, "PMI-3 init refused");
	is_str(next(0), "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=-1", "rc!=0");
	ok(strstr(F.lasterr, "version 3") != NULL, "%s", F.lasterr);
	pmi_server_destroy(F.s);

	mk(2, 2);
	c = conn(0, 0);
	is_int(say(c, "cmd=init pmi_subversion=1\n"), -1, "init without pmi_version");
	pmi_server_destroy(F.s);
}

static void test_state_errors(void)
{
	pmi_conn_t *c = fresh();

	say(c, "cmd=barrier_in\n");
	is_int(say(c, "cmd=get_appnum\n"), -1, "request while in a barrier");
	ok(strstr(F.lasterr, "barrier") != NULL, "%s", F.lasterr);
	pmi_server_destroy(F.s);

	c = fresh();
	say(c, "cmd=finalize\n");
	next(0);
	is_int(say(c, "cmd=get_appnum\n"), -1, "request after finalize");
	pmi_server_destroy(F.s);

	c = fresh();
	F.destroy_on_error = 1;
	is_int(say(c, "cmd=get_maxes\n\x01\ncmd=get_maxes\n"), -1, "owner destroys in ops->error");
	is_int(F.nerr, 1, "deferred free, no second error");
	pmi_server_destroy(F.s);

	c = fresh();
	const char *msg = "cmd=get kvsname=lamkit-42 key=PMI_process_mapping\n";
	for (size_t i = 0; msg[i]; i++)
		pmi_conn_feed(c, msg + i, 1);
	is_str(next(0), "cmd=get_result rc=-1 msg=key_not_found", "byte-at-a-time feed");
	ok(pmi_conn_create(F.s, 2) == NULL && errno == EINVAL, "conn rank out of range");
	pmi_server_destroy(F.s);
}

static void test_abort(void)
{
	pmi_conn_t *c = fresh();

	is_int(say(c, "cmd=abort exitcode=7 error_msg=it broke: x=1 y=2\ncmd=get_maxes\n"), 0,
	       "abort");
	is_int(F.nabort, 1, "ops->abort called");
	is_int(F.abort_code, 7, "exit code");
	is_str(F.abort_msg, "it broke: x=1 y=2", "message with spaces");
	ok(!pending(0), "no reply to abort, later input ignored");
	pmi_server_destroy(F.s);
	c = fresh();
	say(c, "cmd=abort exitcode=3\n");
	ok(F.abort_code == 3 && strcmp(F.abort_msg, "(null)") == 0, "abort without message");
	pmi_server_destroy(F.s);
}

static void test_initack(void)
{
	mk(4, 4);
	pmi_conn_t *c = conn(0, -1);
	is_int(pmi_conn_rank(c), -1, "PMI_PORT conn starts without a rank");
	say(c, "cmd=initack pmiid=2\n");
	is_str(next(0), "cmd=initack", "initack");
	is_str(next(0), "cmd=set size=4", "set size");
	is_str(next(0), "cmd=set rank=2", "set rank");
	is_str(next(0), "cmd=set debug=0", "set debug");
	is_int(pmi_conn_rank(c), 2, "rank learnt");
	init_conn(c, 0);
	pmi_conn_t *d = conn(1, -1);
	is_int(say(d, "cmd=initack pmiid=2\n"), -1, "rank already connected");
	pmi_conn_t *e = conn(2, -1);
	is_int(say(e, "cmd=initack pmiid=4\n"), -1, "pmiid out of range");
	ok(strstr(F.lasterr, "out of range") != NULL, "%s", F.lasterr);
	pmi_conn_t *f = conn(3, -1);
	is_int(say(f, "cmd=initack pmiid=x1\n"), -1, "pmiid not a number");
	pmi_conn_t *g = conn(4, -1);
	init_conn(g, 4);
	say(g, "cmd=get_appnum\n");
	is_str(next(4), "cmd=appnum appnum=0", "PMI_RANK-style conn works without initack");
	pmi_server_destroy(F.s);
}

static void test_singinit(void)
{
	mk(1, 1);
	pmi_conn_t *c = conn(0, -1);
	pmi_conn_start_singinit(c);
	is_str(next(0), "cmd=singinit pmi_version=1 pmi_subversion=1 stdio=no authtype=none",
	       "server opens with singinit");
	say(c, "cmd=singinit pmi_version=1 pmi_subversion=1 stdio=yes authtype=none\n");
	is_str(next(0), "cmd=singinit_info versionok=yes stdio=no kvsname=lamkit-42", "info");
	is_int(pmi_conn_rank(c), 0, "singleton is rank 0");
	init_conn(c, 0);
	say(c, "cmd=put kvsname=lamkit-42 key= value=\n");
	is_str(next(0), "cmd=put_result rc=0 msg=success", "empty put of the upgrade");
	pmi_server_destroy(F.s);
}

static const char spawn_block[] = "mcmd=spawn\nnprocs=2\nexecname=./worker\ntotspawns=1\n"
                                  "spawnssofar=1\nargcnt=2\narg1=-x\narg2=a b=c\npreput_num=1\n"
                                  "preput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0$\n"
                                  "info_num=1\ninfo_key_0=host\ninfo_val_0=n1\nendcmd\n";

/* Send a block of nargs arguments, each `arglen` bytes, fed in pieces of 700 bytes. */
static int say_args(pmi_conn_t *c, int nargs, int argcnt, size_t arglen)
{
	size_t cap = (size_t)nargs * (arglen + 16) + 256, n = 0;
	char *b = malloc(cap);
	int rc = 0;

	n += (size_t)snprintf(b, cap, "mcmd=spawn\nnprocs=1\nexecname=many\nargcnt=%d\n", argcnt);
	for (int i = 1; i <= nargs; i++) {
		n += (size_t)snprintf(b + n, cap - n, "arg%d=", i);
		memset(b + n, 'a' + i % 26, arglen);
		n += arglen;
		b[n++] = '\n';
	}
	n += (size_t)snprintf(b + n, cap - n, "endcmd\n");
	for (size_t off = 0; off < n && rc == 0; off += 700)
		rc = pmi_conn_feed(c, b + off, n - off < 700 ? n - off : 700);
	free(b);
	return rc;
}

/* Many and long arguments: accepted up to the bounds; past one, refused with rc=-1 and a line
 * through ops->refused, and the connection goes on. */
static void test_spawn_bounds(pmi_conn_t *c)
{
	is_int(say_args(c, 1024, 1024, 8), 0, "1024 arguments fed");
	is_str(next(0), "cmd=spawn_result rc=0 kvsname=kid-1", "1024 arguments spawned");
	is_int(F.spawn_argc, 1024, "all 1024 arguments reach ops->spawn");
	is_int(say_args(c, 2, 2, 10000), 0, "arguments of 10000 bytes fed");
	is_str(next(0), "cmd=spawn_result rc=0 kvsname=kid-1",
	       "a line over PMI_LINE_MAX inside a block");
	is_int((int)F.spawn_lastlen, 10000, "the long argument arrives whole");
	F.refused[0] = '\0';
	is_int(say_args(c, 1, 1, PMI_SPAWN_LINE_MAX + 10), 0, "an overlong argument is read");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=arg_too_long", "and refused");
	ok(strstr(F.refused, "over the bound of 16384 bytes") != NULL, "refused: %s", F.refused);
	F.refused[0] = '\0';
	is_int(say(c, "mcmd=spawn\nnprocs=1\nexecname=x\nargcnt=5000\nendcmd\n"), 0,
	       "argcnt past the bound");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=too_many_args", "refused");
	ok(strstr(F.refused, "5000 arguments is over the bound of 4096") != NULL, "refused: %s",
	   F.refused);
	is_int(say_args(c, 3000, 3000, 400), 0, "a block past the byte bound is read to its end");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=request_too_big", "and refused");
	is_int(say(c, "cmd=get_appnum\n"), 0, "the connection goes on");
	is_str(next(0), "cmd=appnum appnum=0", "served");
}

static void test_spawn(void)
{
	pmi_conn_t *c = fresh();

	is_int(say(c, spawn_block), 0, "spawn block without ops->spawn");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=spawn_not_served", "refused");
	is_int(F.nerr, 0, "conn stays open");
	pmi_server_destroy(F.s);

	ops.spawn = f_spawn;
	c = fresh();
	say(c, spawn_block);
	is_str(next(0), "cmd=spawn_result rc=0 kvsname=kid-1", "spawned");
	is_str(F.spawn_desc, "2 ./worker [-x] [a b=c] {host=n1} PARENT_ROOT_PORT_NAME=tag#0$",
	       "fields, info keys passed on");
	say(c, "mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=2\nspawnssofar=1\npreput_num=1\n"
	       "preput_key_0=k\npreput_val_0=v\nendcmd\n");
	ok(!pending(0), "no reply after the first of two blocks");
	is_int(F.nspawn, 1, "ops->spawn not called before the last block");
	say(c, "mcmd=spawn\nnprocs=3\nexecname=b\ntotspawns=2\nspawnssofar=2\nargcnt=1\n"
	       "arg0=zero\npreput_num=1\npreput_key_0=k\npreput_val_0=v\nendcmd\n");
	is_str(next(0), "cmd=spawn_result rc=0 kvsname=kid-1", "one reply after the last block");
	is_str(F.spawn_desc, "1 a | 3 b [zero] k=v", "both blocks in one call, arg0-based args");
	is_int(F.nspawn, 2, "ops->spawn once per request");
	say(c, "mcmd=spawn\nnprocs=1\nexecname=fail\nendcmd\n");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=spawn_failed", "ops->spawn refusal");
	say(c, "mcmd=spawn\nnprocs=1\nexecname=later\nendcmd\n");
	ok(!pending(0) && F.spawn_conn == c, "accepted: no answer yet");
	say(c, "cmd=get_appnum\n");
	is_str(next(0), "cmd=appnum appnum=0", "other requests still served");
	is_int(say(c, "mcmd=spawn\nnprocs=1\nexecname=x\nendcmd\n"), -1,
	       "a second spawn while one is pending breaks the protocol");
	pmi_server_destroy(F.s);
	c = fresh();
	say(c, "mcmd=spawn\nnprocs=1\nexecname=later\nendcmd\n");
	is_int(pmi_conn_spawn_done(c, 0, "kid-2", NULL), 0, "answered later");
	is_str(next(0), "cmd=spawn_result rc=0 kvsname=kid-2", "late spawn_result");
	is_int(pmi_conn_spawn_done(c, 0, "kid-2", NULL), -1, "nothing pending: EINVAL");
	say(c, "mcmd=spawn\nnprocs=1\nexecname=later\nendcmd\n");
	pmi_conn_spawn_done(c, 1, NULL, "no_free_slots");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=no_free_slots", "late failure with reason");
	say(c, "mcmd=spawn\nnprocs=1\nargcnt=0\nendcmd\n");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=missing_execname", "missing execname");
	F.refused[0] = '\0';
	say(c, "mcmd=spawn\nnprocs=1\nexecname=x\nargcnt=3\narg1=a\nendcmd\n");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=bad_args", "missing arguments");
	is_str(F.refused, "a malformed spawn request (bad_args)", "ops->refused says which field");
	say(c, "mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=17\nspawnssofar=1\nendcmd\n");
	is_str(next(0), "cmd=spawn_result rc=-1 msg=too_many_blocks", "block count bounded");
	say(c, "mcmd=spawn nprocs=3 execname=y\nendcmd\n");
	ok(strcmp(next(0), "cmd=spawn_result rc=0 kvsname=kid-1") == 0 &&
	       strcmp(F.spawn_desc, "3 y") == 0,
	   "fields on the mcmd line");
	test_spawn_bounds(c);
	ops.spawn = NULL;
	pmi_server_destroy(F.s);
}

static void test_getbyidx_publish(void)
{
	pmi_conn_t *c = fresh();

	pmi_server_preput(F.s, "a", "1");
	pmi_server_preput(F.s, "b", "2 3");
	say(c, "cmd=getbyidx kvsname=lamkit-42 idx=0\n");
	is_str(next(0), "cmd=getbyidx_results rc=0 nextidx=1 key=a val=1", "idx 0");
	say(c, "cmd=getbyidx kvsname=lamkit-42 idx=1\n");
	is_str(next(0), "cmd=getbyidx_results rc=0 nextidx=2 key=b val=2 3", "idx 1");
	say(c, "cmd=getbyidx kvsname=lamkit-42 idx=2\n");
	is_str(next(0), "cmd=getbyidx_results rc=-1 reason=no_more_keyvals", "end");
	say(c, "cmd=getbyidx kvsname=lamkit-42\n");
	is_str(next(0), "cmd=getbyidx_results rc=-1 reason=bad_idx", "no idx");

	say(c, "cmd=publish_name service=svc port=tcp://h:1\n");
	is_str(next(0), "cmd=publish_result rc=0 msg=success", "publish");
	say(c, "cmd=publish_name service=svc port=tcp://h:2\n");
	is_str(next(0), "cmd=publish_result rc=-1 msg=already_published", "publish twice");
	say(c, "cmd=lookup_name service=svc\n");
	is_str(next(0), "cmd=lookup_result port=tcp://h:1 rc=0 msg=success", "lookup");
	say(c, "cmd=unpublish_name service=svc\n");
	is_str(next(0), "cmd=unpublish_result rc=0 msg=success", "unpublish");
	say(c, "cmd=lookup_name service=svc\n");
	is_str(next(0), "cmd=lookup_result rc=1 msg=not_found", "lookup after unpublish");
	say(c, "cmd=unpublish_name service=svc\n");
	is_str(next(0), "cmd=unpublish_result rc=-1 msg=not_found", "unpublish twice");
	say(c, "cmd=publish_name port=1\n");
	is_str(next(0), "cmd=publish_result rc=-1 msg=missing_service", "publish without service");
	is_int(F.nerr, 0, "no errors");
	pmi_server_destroy(F.s);
}

/* ops->names takes requests and answers later; what it declines the job's table serves. */
static void test_names_elsewhere(void)
{
	pmi_conn_t *c;

	ops.names = f_names;
	c = fresh();
	say(c, "cmd=publish_name service=svc port=tcp://h:1\n");
	is_str(names_req, "1 svc tcp://h:1", "publish handed over");
	ok(!pending(0), "no answer yet");
	say(c, "cmd=lookup_name service=x\n");
	is_int(F.nerr, 1, "a second request before the answer breaks the protocol");
	pmi_server_destroy(F.s);
	c = fresh();
	say(c, "cmd=publish_name service=svc port=tcp://h:1\n");
	is_int(pmi_conn_names_done(c, 0, NULL), 0, "answered");
	is_str(next(0), "cmd=publish_result rc=0 msg=success", "publish result");
	is_int(pmi_conn_names_done(c, 0, NULL), -1, "nothing pending any more");
	say(c, "cmd=lookup_name service=svc\n");
	is_str(names_req, "3 svc -", "lookup handed over");
	pmi_conn_names_done(c, 0, "tcp://h:1");
	is_str(next(0), "cmd=lookup_result port=tcp://h:1 rc=0 msg=success", "lookup result");
	say(c, "cmd=unpublish_name service=svc\n");
	pmi_conn_names_done(c, 1, "not_found");
	is_str(next(0), "cmd=unpublish_result rc=-1 msg=not_found", "unpublish refused");
	say(c, "cmd=publish_name service=local port=p\n");
	is_str(next(0), "cmd=publish_result rc=0 msg=success", "declined: served here");
	ops.names = NULL;
	pmi_server_destroy(F.s);
}

/* Random bytes at fresh conns: every outcome is 0 or -1 with at most one error. */
static void test_fuzz(void)
{
	unsigned seed = 12345;
	int bad = 0;

	ops.spawn = f_spawn;
	for (int round = 0; round < 2000; round++) {
		char buf[3000];
		pmi_conn_t *c = fresh();
		size_t n = (size_t)(round * 7 % 2900) + 1;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned v = (seed >> 16) & 0xff;
			buf[i] = round % 2 ? (char)v
			                   : (char)(v % 3 == 0   ? ' '
			                            : v % 5 == 0 ? '\n'
			                                         : 'a' + v % 26);
		}
		int rc = pmi_conn_feed(c, buf, n);
		if ((rc != 0 && rc != -1) || F.nerr > 1 || (rc == -1) != (F.nerr == 1))
			bad++;
		pmi_server_destroy(F.s);
	}
	ops.spawn = NULL;
	is_int(bad, 0, "2000 random inputs handled");
}

int main(void)
{
	test_mpich_sequence();
	test_two_agents();
	test_values_with_spaces();
	test_malformed();
	test_state_errors();
	test_abort();
	test_initack();
	test_singinit();
	test_spawn();
	test_getbyidx_publish();
	test_names_elsewhere();
	test_fuzz();
	return done_testing();
}
