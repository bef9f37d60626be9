/* lib/atollrun/atl_engine.c: the starter's Atollrun line engine: steps as barriers, every
 * reply checked against the one line its step allows (no I/O; see atl_engine.h). */
#include "atl_engine.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PORT_MAX ((UINT64_C(1) << 48) - 1)

struct atl_proc {
	int replied;  /* gave this step's reply */
	int finished; /* sent __FINISHED_INIT__: running */
	enum atl_status status;
	uint64_t port;
};

struct atl_engine {
	int n, nreplied;
	enum atl_step step, failed_step;
	int64_t timeout_ms, deadline;
	int failed_id;
	struct atl_engine_ops ops;
	struct atl_proc *p;
	char what[256];
};

static const char *const step_names[] = {[ATL_STEP_INIT] = "waiting for processes",
                                         [ATL_STEP_PORT] = "requesting ports",
                                         [ATL_STEP_VECTOR] = "propagating network info",
                                         [ATL_STEP_CONNECT] = "initializing connections",
                                         [ATL_STEP_FINISH] = "finishing init procedure",
                                         [ATL_STEP_RUN] = "running",
                                         [ATL_FAILED] = "failed"};

/* The reply each step waits for (for messages). */
static const char *const step_reply[] = {[ATL_STEP_INIT] = "__ATOLLRUN_INIT__",
                                         [ATL_STEP_PORT] = "__MY_PORT__",
                                         [ATL_STEP_VECTOR] = "__PORT_VECTOR_ACCEPTED__",
                                         [ATL_STEP_CONNECT] = "__INIT_STATUS__",
                                         [ATL_STEP_FINISH] = "__FINISHED_INIT__"};

const char *atl_step_name(enum atl_step s)
{
	return s <= ATL_FAILED ? step_names[s] : "?";
}

atl_engine_t *atl_engine_create(int n, int64_t timeout_ms, const struct atl_engine_ops *ops)
{
	if (n < 1 || timeout_ms <= 0 || !ops || !ops->send || !ops->output) {
		errno = EINVAL;
		return NULL;
	}
	atl_engine_t *e = calloc(1, sizeof *e);
	if (!e || !(e->p = calloc((size_t)n, sizeof *e->p))) {
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	e->n = n;
	e->timeout_ms = timeout_ms;
	e->ops = *ops;
	e->deadline = -1;
	e->failed_id = -1;
	return e;
}

void atl_engine_destroy(atl_engine_t *e)
{
	if (!e)
		return;
	int saved = errno;
	free(e->p);
	free(e);
	errno = saved;
}

static int fail(atl_engine_t *e, int id, const char *fmt, ...)
{
	va_list ap;

	if (e->step == ATL_FAILED)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->what, sizeof e->what, fmt, ap);
	va_end(ap);
	e->failed_id = id;
	e->failed_step = e->step;
	e->step = ATL_FAILED;
	e->deadline = -1;
	return -1;
}

/* A line for a message: at most 60 characters, non-printable ones as '?'. */
static const char *shown(const char *line, char *buf, size_t len)
{
	size_t k = 0;

	for (; line[k] && k + 4 < len && k < 60; k++)
		buf[k] = line[k] >= 0x20 && line[k] < 0x7f ? line[k] : '?';
	if (line[k])
		buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
	buf[k] = 0;
	return buf;
}

static void progress(atl_engine_t *e, int id)
{
	if (e->ops.progress)
		e->ops.progress(e->ops.ctx, e->step, id);
}

static void send_requests(atl_engine_t *e, int id)
{
	char line[64];

	switch (e->step) {
	case ATL_STEP_PORT:
		e->ops.send(e->ops.ctx, id, e->n == 1 ? "__YOUR_PORT_SINGLE__" : "__YOUR_PORT__");
		break;
	case ATL_STEP_VECTOR:
		snprintf(line, sizeof line, "__NUMBER_OF_PROCESSES__%d", e->n);
		e->ops.send(e->ops.ctx, id, line);
		snprintf(line, sizeof line, "__YOUR_ID__%d", id);
		e->ops.send(e->ops.ctx, id, line);
		for (int j = 0; j < e->n; j++) {
			snprintf(line, sizeof line, "__REMOTE_PORT__%" PRIu64, e->p[j].port);
			e->ops.send(e->ops.ctx, id, line);
		}
		break;
	case ATL_STEP_CONNECT:
		e->ops.send(e->ops.ctx, id, "__INIT_CONNECTIONS__");
		break;
	case ATL_STEP_FINISH:
		e->ops.send(e->ops.ctx, id, "__FINISH_INIT__");
		break;
	default:
		break;
	}
}

static void begin_step(atl_engine_t *e, enum atl_step s, int64_t now_ms)
{
	e->step = s;
	e->nreplied = 0;
	for (int i = 0; i < e->n; i++)
		e->p[i].replied = 0;
	e->deadline = s == ATL_STEP_RUN ? -1 : now_ms + e->timeout_ms;
	progress(e, -1);
	for (int i = 0; i < e->n && e->step == s; i++)
		send_requests(e, i);
}

void atl_engine_start(atl_engine_t *e, int64_t now_ms)
{
	begin_step(e, ATL_STEP_INIT, now_ms);
}

static int parse_port(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || x > PORT_MAX)
		return -1;
	*v = x;
	return 0;
}

/* Check a reply in the current step; 0 when it is the expected one. */
static int check_reply(atl_engine_t *e, int id, const char *line)
{
	char b[72];
	const char *rest;

	switch (e->step) {
	case ATL_STEP_PORT:
		if (strncmp(line, "__MY_PORT__", 11))
			break;
		rest = line + 11;
		if (!strcmp(rest, "FAILURE"))
			return fail(e, id,
			            "it replied __MY_PORT__FAILURE (it could not open a port)");
		if (parse_port(rest, &e->p[id].port) < 0)
			return fail(e, id, "a bad port number in '%s'", shown(line, b, sizeof b));
		if (e->p[id].port == 0 && e->n > 1)
			return fail(e, id,
			            "it gave no port (__MY_PORT__0) but there are %d processes",
			            e->n);
		return 0;
	case ATL_STEP_VECTOR:
	case ATL_STEP_FINISH:
		if (strcmp(line, step_reply[e->step]))
			break;
		return 0;
	case ATL_STEP_CONNECT:
		if (strncmp(line, "__INIT_STATUS__", 15))
			break;
		rest = line + 15;
		if (!strcmp(rest, "SUCCESS"))
			e->p[id].status = ATL_STATUS_SUCCESS;
		else if (!strcmp(rest, "IGNORED"))
			e->p[id].status = ATL_STATUS_IGNORED;
		else if (!strcmp(rest, "FAILURE"))
			return fail(e, id,
			            "it replied __INIT_STATUS__FAILURE (it could not connect)");
		else
			break;
		return 0;
	default:
		break;
	}
	return fail(e, id, "'%s' out of order (expected %s)", shown(line, b, sizeof b),
	            step_reply[e->step]);
}

int atl_engine_line(atl_engine_t *e, int id, const char *line, int64_t now_ms)
{
	char b[72];

	if (e->step == ATL_FAILED)
		return -1;
	if (id < 0 || id >= e->n)
		return 0;
	struct atl_proc *p = &e->p[id];
	if (p->finished) {
		e->ops.output(e->ops.ctx, id, line);
		return 0;
	}
	if (e->step == ATL_STEP_INIT && !p->replied) {
		if (strcmp(line, "__ATOLLRUN_INIT__")) {
			if (!strncmp(line, "__", 2))
				return fail(e, id, "'%s' out of order (expected __ATOLLRUN_INIT__)",
				            shown(line, b, sizeof b));
			e->ops.output(e->ops.ctx, id, line); /* printed before Atollrun_Init */
			return 0;
		}
	} else if (p->replied) {
		return fail(e, id, "'%s' out of order (it had replied %s and waits for the others)",
		            shown(line, b, sizeof b), step_reply[e->step]);
	} else if (check_reply(e, id, line) < 0) {
		return -1;
	}
	p->replied = 1;
	if (e->step == ATL_STEP_FINISH)
		p->finished = 1;
	e->nreplied++;
	progress(e, id);
	if (e->nreplied == e->n)
		begin_step(e, e->step + 1, now_ms);
	return 0;
}

int atl_engine_eof(atl_engine_t *e, int id)
{
	if (e->step == ATL_FAILED)
		return -1;
	if (id < 0 || id >= e->n || e->p[id].finished)
		return 0;
	if (e->step == ATL_STEP_INIT && !e->p[id].replied)
		return fail(e, id, "it ended before sending __ATOLLRUN_INIT__");
	return fail(e, id, "it ended during the init protocol (no %s)",
	            e->p[id].replied ? "further line" : step_reply[e->step]);
}

int atl_engine_tick(atl_engine_t *e, int64_t now_ms)
{
	if (e->step == ATL_FAILED)
		return -1;
	if (e->deadline < 0 || now_ms < e->deadline)
		return 0;
	int first = -1, silent = 0;
	for (int i = 0; i < e->n; i++)
		if (!e->p[i].replied) {
			silent++;
			if (first < 0)
				first = i;
		}
	char more[48] = "";
	if (silent > 1)
		snprintf(more, sizeof more, " (and %d more)", silent - 1);
	return fail(e, first, "no %s within %" PRId64 " s%s", step_reply[e->step],
	            e->timeout_ms / 1000, more);
}

int64_t atl_engine_deadline(const atl_engine_t *e)
{
	return e->deadline;
}

enum atl_step atl_engine_step(const atl_engine_t *e)
{
	return e->step;
}

int atl_engine_failure(const atl_engine_t *e, enum atl_step *step, const char **what)
{
	if (step)
		*step = e->failed_step;
	if (what)
		*what = e->what;
	return e->failed_id;
}

enum atl_status atl_engine_init_status(const atl_engine_t *e, int id)
{
	return id >= 0 && id < e->n ? e->p[id].status : ATL_STATUS_NONE;
}

uint64_t atl_engine_port(const atl_engine_t *e, int id)
{
	return id >= 0 && id < e->n ? e->p[id].port : 0;
}
