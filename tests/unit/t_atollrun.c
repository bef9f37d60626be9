/* tests/unit/t_atollrun.c: the Atollrun starter's line engine, line by line (every request it
 * sends, every reply it accepts, each failure reply, lines out of order, end of file and silence
 * past the timeout), random garbage, and libatollrun's port encoding. */
#include "atl_engine.h"
#include "atollrun.h"
#include "tap.h"

#include <inttypes.h>

#define MAXP 8

static char sent[MAXP][64][64]; /* per ID, the lines the engine sent */
static int nsent[MAXP];
static char outl[256];
static int nout, nprog, last_prog_step;

static int send_cb(void *ctx, int id, const char *line)
{
	(void)ctx;
	if (nsent[id] < 64)
		snprintf(sent[id][nsent[id]++], 64, "%s", line);
	return 0;
}

static void out_cb(void *ctx, int id, const char *line)
{
	(void)ctx;
	snprintf(outl, sizeof outl, "%d:%s", id, line);
	nout++;
}

static void prog_cb(void *ctx, enum atl_step s, int id)
{
	(void)ctx;
	(void)id;
	nprog++;
	last_prog_step = s;
}

static const struct atl_engine_ops ops = {.send = send_cb, .output = out_cb, .progress = prog_cb};

static atl_engine_t *fresh(int n)
{
	memset(nsent, 0, sizeof nsent);
	nout = nprog = 0;
	atl_engine_t *e = atl_engine_create(n, 5000, &ops);
	atl_engine_start(e, 0);
	return e;
}

/* Feed every process the same reply for the current step; "PORTS": __MY_PORT__<1000+i>. */
static void all(atl_engine_t *e, int n, const char *reply)
{
	char line[64];
	for (int i = 0; i < n; i++) {
		if (strcmp(reply, "PORTS"))
			snprintf(line, sizeof line, "%s", reply);
		else
			snprintf(line, sizeof line, "__MY_PORT__%d", 1000 + i);
		atl_engine_line(e, i, line, 10);
	}
}

static void happy_path(void)
{
	atl_engine_t *e = fresh(3);

	is_int(nsent[0], 0, "nothing is sent before __ATOLLRUN_INIT__");
	atl_engine_line(e, 1, "hello before init", 1);
	is_str(outl, "1:hello before init", "a plain line before init is the program's output");
	all(e, 2, "__ATOLLRUN_INIT__");
	is_int(nsent[0], 0, "the step waits for every process");
	atl_engine_line(e, 2, "__ATOLLRUN_INIT__", 1);
	is_int(atl_engine_step(e), ATL_STEP_PORT, "all inited: requesting ports");
	is_str(sent[2][0], "__YOUR_PORT__", "__YOUR_PORT__ to each (n > 1)");
	all(e, 3, "PORTS");
	is_int(atl_engine_step(e), ATL_STEP_VECTOR, "all ports: the vector");
	is_int(nsent[1], 6, "vector = count, ID, 3 ports");
	is_str(sent[1][1], "__NUMBER_OF_PROCESSES__3", "__NUMBER_OF_PROCESSES__n");
	is_str(sent[1][2], "__YOUR_ID__1", "__YOUR_ID__i");
	is_str(sent[1][3], "__REMOTE_PORT__1000", "port of ID 0");
	is_str(sent[1][5], "__REMOTE_PORT__1002", "port of ID 2");
	is_str(sent[2][2], "__YOUR_ID__2", "each its own ID");
	all(e, 3, "__PORT_VECTOR_ACCEPTED__");
	is_str(sent[0][6], "__INIT_CONNECTIONS__", "then __INIT_CONNECTIONS__");
	atl_engine_line(e, 0, "__INIT_STATUS__SUCCESS", 20);
	atl_engine_line(e, 1, "__INIT_STATUS__IGNORED", 20);
	atl_engine_line(e, 2, "__INIT_STATUS__SUCCESS", 20);
	is_int(atl_engine_init_status(e, 1), ATL_STATUS_IGNORED, "IGNORED is recorded");
	is_str(sent[0][7], "__FINISH_INIT__", "then __FINISH_INIT__");
	atl_engine_line(e, 1, "__FINISHED_INIT__", 30);
	atl_engine_line(e, 1, "ID 1 runs already", 30);
	is_str(outl, "1:ID 1 runs already", "a finished process's lines are its output");
	atl_engine_line(e, 0, "__FINISHED_INIT__", 30);
	atl_engine_line(e, 2, "__FINISHED_INIT__", 30);
	is_int(atl_engine_step(e), ATL_STEP_RUN, "running");
	is_int(atl_engine_deadline(e), -1, "no deadline while running");
	is_int(last_prog_step, ATL_STEP_RUN, "progress saw the run step");
	atl_engine_line(e, 0, "__ATOLLRUN_INIT__", 40);
	is_str(outl, "0:__ATOLLRUN_INIT__", "after init even protocol-looking lines are output");
	is_int(atl_engine_eof(e, 2), 0, "end of file after init is no failure");
	is_int(atl_engine_tick(e, 1000000), 0, "no timeout while running");
	atl_engine_destroy(e);
}

static void single(void)
{
	atl_engine_t *e = fresh(1);
	atl_engine_line(e, 0, "__ATOLLRUN_INIT__", 1);
	is_str(sent[0][0], "__YOUR_PORT_SINGLE__", "one process: __YOUR_PORT_SINGLE__");
	is_int(atl_engine_line(e, 0, "__MY_PORT__0", 1), 0, "a single process may have no port");
	is_str(sent[0][1], "__NUMBER_OF_PROCESSES__1", "n = 1");
	is_str(sent[0][3], "__REMOTE_PORT__0", "its port vector holds its 0");
	atl_engine_destroy(e);

	e = fresh(2);
	all(e, 2, "__ATOLLRUN_INIT__");
	atl_engine_line(e, 0, "__MY_PORT__0", 1);
	is_int(atl_engine_step(e), ATL_FAILED, "no port with 2 processes fails");
	atl_engine_destroy(e);
}

/* Drive to step s, then feed line from ID 1: the failure it gives. */
static const char *fail_at(enum atl_step s, const char *line, int *id, enum atl_step *st)
{
	static char what[256];
	const char *w;
	const char *replies[] = {"__ATOLLRUN_INIT__", "PORTS", "__PORT_VECTOR_ACCEPTED__",
	                         "__INIT_STATUS__SUCCESS", "__FINISHED_INIT__"};
	atl_engine_t *e = fresh(3);

	for (int k = 0; k < (int)s; k++)
		all(e, 3, replies[k]);
	atl_engine_line(e, 1, line, 50);
	*id = atl_engine_failure(e, st, &w);
	snprintf(what, sizeof what, "%s", atl_engine_step(e) == ATL_FAILED ? w : "(no failure)");
	atl_engine_destroy(e);
	return what;
}

static void failures(void)
{
	static const struct {
		enum atl_step step;
		const char *line, *want;
	} cases[] = {
	    {ATL_STEP_INIT, "__MY_PORT__5", "out of order (expected __ATOLLRUN_INIT__)"},
	    {ATL_STEP_PORT, "__MY_PORT__FAILURE", "replied __MY_PORT__FAILURE"},
	    {ATL_STEP_PORT, "__MY_PORT__12x", "a bad port number"},
	    {ATL_STEP_PORT, "__MY_PORT__281474976710656", "a bad port number"},
	    {ATL_STEP_PORT, "__MY_PORT__", "a bad port number"},
	    {ATL_STEP_PORT, "__PORT_VECTOR_ACCEPTED__", "out of order (expected __MY_PORT__)"},
	    {ATL_STEP_PORT, "garbage \x01 line", "'garbage ? line' out of order"},
	    {ATL_STEP_VECTOR, "__MY_PORT__7", "out of order (expected __PORT_VECTOR_ACCEPTED__)"},
	    {ATL_STEP_VECTOR, "__FINISHED_INIT__", "out of order"},
	    {ATL_STEP_CONNECT, "__INIT_STATUS__FAILURE", "replied __INIT_STATUS__FAILURE"},
	    {ATL_STEP_CONNECT, "__INIT_STATUS__MAYBE", "out of order (expected __INIT_STATUS__)"},
	    {ATL_STEP_CONNECT, "__PORT_VECTOR_ACCEPTED__", "out of order"},
	    {ATL_STEP_FINISH, "__INIT_STATUS__SUCCESS",
	     "out of order (expected __FINISHED_INIT__)"},
	    {ATL_STEP_FINISH, "", "'' out of order"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		int id;
		enum atl_step st;
		const char *w = fail_at(cases[k].step, cases[k].line, &id, &st);
		ok(strstr(w, cases[k].want) != NULL && id == 1 && st == cases[k].step,
		   "'%s' at %s: %s", cases[k].line, atl_step_name(cases[k].step), w);
	}
}

static void twice_eof_silence(void)
{
	const char *w;
	enum atl_step st;
	atl_engine_t *e = fresh(2);

	atl_engine_line(e, 0, "__ATOLLRUN_INIT__", 1);
	atl_engine_line(e, 0, "__ATOLLRUN_INIT__", 1);
	ok(atl_engine_step(e) == ATL_FAILED && atl_engine_failure(e, &st, &w) == 0 &&
	       strstr(w, "waits for the others"),
	   "a second line while waiting for the others: %s", w);
	atl_engine_destroy(e);

	e = fresh(2);
	atl_engine_line(e, 0, "__ATOLLRUN_INIT__", 1);
	is_int(atl_engine_eof(e, 1), -1, "end of file before init fails");
	ok(atl_engine_failure(e, &st, &w) == 1 && st == ATL_STEP_INIT &&
	       strstr(w, "ended before sending __ATOLLRUN_INIT__"),
	   "names ID 1 at the init step: %s", w);
	atl_engine_destroy(e);

	e = fresh(2);
	all(e, 2, "__ATOLLRUN_INIT__");
	all(e, 2, "PORTS");
	is_int(atl_engine_eof(e, 0), -1, "end of file mid-protocol fails");
	ok(atl_engine_failure(e, &st, &w) == 0 && st == ATL_STEP_VECTOR &&
	       strstr(w, "no __PORT_VECTOR_ACCEPTED__"),
	   "names the reply it never gave: %s", w);
	atl_engine_destroy(e);

	e = fresh(4);
	all(e, 4, "__ATOLLRUN_INIT__");
	atl_engine_line(e, 0, "__MY_PORT__5", 100);
	atl_engine_line(e, 2, "__MY_PORT__6", 100);
	is_int(atl_engine_deadline(e), 10 + 5000, "the step's deadline is counted from its start");
	is_int(atl_engine_tick(e, 5009), 0, "not yet silent");
	is_int(atl_engine_tick(e, 5010), -1, "silent past the timeout");
	ok(atl_engine_failure(e, &st, &w) == 1 && st == ATL_STEP_PORT &&
	       strstr(w, "no __MY_PORT__ within 5 s (and 1 more)"),
	   "names the first silent ID and counts the rest: %s", w);
	is_int(atl_engine_line(e, 1, "__MY_PORT__7", 6000), -1, "a failed engine stays failed");
	atl_engine_destroy(e);

	e = fresh(2);
	is_int(atl_engine_tick(e, 5000), -1, "nobody inits: timeout at the first step");
	ok(atl_engine_failure(e, &st, &w) == 0 && st == ATL_STEP_INIT, "ID 0 named: %s", w);
	atl_engine_destroy(e);
}

/* Random lines never crash the engine; it either fails with a reason or goes on. */
static void fuzz(void)
{
	const char *pieces[] = {"__",
	                        "MY_PORT__",
	                        "ATOLLRUN_INIT__",
	                        "1",
	                        "FAILURE",
	                        "\xff",
	                        "x",
	                        "__INIT_STATUS__",
	                        "SUCCESS",
	                        "__FINISHED_INIT__",
	                        "99999999999999999"};
	unsigned seed = 12345;
	int failed = 0, bad = 0;

	for (int round = 0; round < 3000; round++) {
		atl_engine_t *e = fresh(1 + round % 4);
		for (int k = 0; k < 20 && atl_engine_step(e) != ATL_FAILED; k++) {
			char line[128] = "";
			int parts = (int)((seed = seed * 1103515245 + 12345) >> 16) % 4;
			for (int p = 0; p <= parts; p++)
				strcat(line,
				       pieces[((seed = seed * 1103515245 + 12345) >> 16) % 11]);
			atl_engine_line(e, (int)(seed >> 20) % 4, line, k);
		}
		if (atl_engine_step(e) == ATL_FAILED) {
			const char *w;
			failed++;
			bad += atl_engine_failure(e, NULL, &w) < 0 || !*w;
		}
		atl_engine_destroy(e);
	}
	ok(failed > 0 && bad == 0, "3000 random sessions: %d failed, each with an ID and a reason",
	   failed);
}

static void ports(void)
{
	char buf[32];
	atollport_t p = Atollrun_encodePort(0x0a580b0d, 40000);

	is_int(p, ((atollport_t)0x0a580b0d << 16) | 40000, "IPv4 << 16 | port");
	is_int(Atollrun_decodePort(p, buf, sizeof buf), 0, "decodes");
	is_str(buf, "10.88.11.13:40000", "as a.b.c.d:port");
	is_int(Atollrun_decodePort(0, buf, sizeof buf), -1, "0 is no endpoint");
	is_int(Atollrun_decodePort((atollport_t)1 << 48, buf, sizeof buf), -1, "above 48 bits");
	is_int(Atollrun_decodePort(p, buf, 8), -1, "a short buffer is refused");
	is_int(Atollrun_getHandle(0), -1, "no handle before init");
}

int main(void)
{
	happy_path();
	single();
	failures();
	twice_eof_silence();
	fuzz();
	ports();
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
