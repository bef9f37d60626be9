/* lib/atollrun/atl_engine.h: the starter side of the Atollrun init protocol as a line engine
 * that does no I/O (doc/PROTOCOL-atollrun.md). The caller feeds it each process's stdout lines,
 * end-of-file and the clock; it answers through ops->send and says what a process printed
 * through ops->output.
 *
 * The init runs in steps; a step is a barrier: the requests of step k+1 go out when every
 * process has given its step-k reply. Each step must complete within the timeout, counted from
 * when it began. Any failure reply, a line out of order, end of file before __FINISHED_INIT__
 * or a step past its deadline ends the engine in ATL_FAILED with the ID and step at fault.
 * A process that sent __FINISHED_INIT__ is running: its lines are its output. */
#ifndef LAMKIT_ATL_ENGINE_H
#define LAMKIT_ATL_ENGINE_H

#include <stddef.h>
#include <stdint.h>

enum atl_step {
	ATL_STEP_INIT,    /* waiting for __ATOLLRUN_INIT__ */
	ATL_STEP_PORT,    /* __YOUR_PORT__ -> __MY_PORT__ */
	ATL_STEP_VECTOR,  /* the port vector -> __PORT_VECTOR_ACCEPTED__ */
	ATL_STEP_CONNECT, /* __INIT_CONNECTIONS__ -> __INIT_STATUS__ */
	ATL_STEP_FINISH,  /* __FINISH_INIT__ -> __FINISHED_INIT__ */
	ATL_STEP_RUN,     /* every process finished init */
	ATL_FAILED
};

enum atl_status { ATL_STATUS_NONE, ATL_STATUS_SUCCESS, ATL_STATUS_IGNORED };

struct atl_engine_ops {
	void *ctx;
	/* Send line (no newline) to process id's stdin. 0, or -1 (the engine goes on: the
	 * process's end of file tells the rest). */
	int (*send)(void *ctx, int id, const char *line);
	/* A line of the process's own output (before its __ATOLLRUN_INIT__, or once running). */
	void (*output)(void *ctx, int id, const char *line);
	/* Progress: id -1 when step begins, id >= 0 when that process replied; may be NULL. */
	void (*progress)(void *ctx, enum atl_step step, int id);
};

typedef struct atl_engine atl_engine_t;

/* An engine for n processes (n >= 1) with a per-step timeout. NULL with errno. */
atl_engine_t *atl_engine_create(int n, int64_t timeout_ms, const struct atl_engine_ops *ops);
void atl_engine_destroy(atl_engine_t *e);

/* Begin (step INIT) at time now_ms. */
void atl_engine_start(atl_engine_t *e, int64_t now_ms);
/* A line (without its newline) printed by process id. 0, or -1 once the engine has failed. */
int atl_engine_line(atl_engine_t *e, int id, const char *line, int64_t now_ms);
/* Process id's stdout reached end of file. 0, or -1 when that is a failure (before it
 * finished init). */
int atl_engine_eof(atl_engine_t *e, int id);
/* Check the deadline. 0, or -1 when the current step timed out. */
int atl_engine_tick(atl_engine_t *e, int64_t now_ms);
/* When the current step times out (ms), or -1 when no step is pending. */
int64_t atl_engine_deadline(const atl_engine_t *e);

enum atl_step atl_engine_step(const atl_engine_t *e);
/* After a failure: the ID at fault, the step it failed in and what happened (one phrase). */
int atl_engine_failure(const atl_engine_t *e, enum atl_step *step, const char **what);
/* What process id answered to __INIT_CONNECTIONS__. */
enum atl_status atl_engine_init_status(const atl_engine_t *e, int id);
/* The port number process id gave (0 = none). */
uint64_t atl_engine_port(const atl_engine_t *e, int id);

/* "requesting ports", ... (the progress and error wording of each step: the Atollrun paper's
 * session log where it names the step). */
const char *atl_step_name(enum atl_step s);

#endif
