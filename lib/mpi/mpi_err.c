/* lib/mpi/mpi_err.c: handle tables, error handlers, error classes, codes and strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpii.h"
#include "pmi.h"

int mpii_tab_add(struct mpii_tab *t, void *obj)
{
	int h;

	for (h = t->first; h < t->n; h++)
		if (!t->v[h])
			break;
	if (h >= t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		void **v;

		while (cap <= h)
			cap *= 2;
		v = realloc(t->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return -1;
		memset(v + t->cap, 0, sizeof(*v) * (size_t)(cap - t->cap));
		t->v = v;
		t->cap = cap;
	}
	if (h >= t->n)
		t->n = h + 1;
	t->v[h] = obj;
	return h;
}

int mpii_tab_set(struct mpii_tab *t, int h, void *obj)
{
	int save = t->first, rc;

	if (h < t->n && !t->v[h]) {
		t->v[h] = obj;
		return 0;
	}
	t->first = h;
	rc = mpii_tab_add(t, obj);
	t->first = save;
	return rc == h ? 0 : -1;
}

void mpii_tab_del(struct mpii_tab *t, int h)
{
	if (h > 0 && h < t->n)
		t->v[h] = NULL;
}

/* ---- error handlers ---- */

enum { EH_ANY, EH_COMM, EH_WIN, EH_FILE }; /* what an errhandler may be attached to */

struct errh {
	MPI_Comm_errhandler_function *fn; /* a window's handler gets an MPI_Win *, also an int * */
	int kind;
};

static struct errh eh_fatal, eh_return;
static int lastcode = MPI_ERR_LASTCODE;
static int *code_class; /* user code - MPI_ERR_LASTCODE - 1 -> class */
static char **code_str;
static int ncodes;

static struct errh *errh_get(MPI_Errhandler h)
{
	if (!mpii.errhs.n) {
		mpii.errhs.first = 3;
		mpii_tab_set(&mpii.errhs, MPI_ERRORS_ARE_FATAL, &eh_fatal);
		mpii_tab_set(&mpii.errhs, MPI_ERRORS_RETURN, &eh_return);
	}
	return mpii_tab_get(&mpii.errhs, h);
}

int mpii_lastusedcode(void);
int mpii_lastusedcode(void)
{
	return lastcode;
}

static const char *const class_msg[] = {
    "no error",
    "invalid buffer pointer",
    "invalid count",
    "invalid datatype",
    "invalid tag",
    "invalid communicator",
    "invalid rank",
    "invalid request",
    "invalid root",
    "invalid group",
    "invalid operation",
    "invalid topology",
    "invalid dimensions",
    "invalid argument",
    "unknown error",
    "message truncated",
    "other error",
    "internal error",
    "error code in status",
    "pending request",
    "invalid keyval",
    "out of memory",
    "invalid base",
    "invalid info key",
    "invalid info value",
    "info key not found",
    "spawn failed",
    "invalid port",
    "invalid service",
    "invalid name",
    "invalid window",
    "invalid size",
    "invalid displacement",
    "invalid info",
    "invalid lock type",
    "invalid assert",
    "RMA conflict",
    "RMA synchronisation",
    "file error",
    "collective arguments differ",
    "operation not supported",
    "RMA target out of the window",
    "RMA attach conflict",
    "RMA shared memory not available",
    "wrong window flavor",
    "permission denied",
    "invalid access mode",
    "invalid file name",
    "data conversion failed",
    "data representation already registered",
    "file exists",
    "file in use",
    "I/O error",
    "no space left on device",
    "no such file",
    "quota exceeded",
    "read-only file or file system",
    "unsupported data representation",
};

static int class_of(int code)
{
	if (code >= 0 && code <= MPI_ERR_LASTCODE)
		return code;
	if (code > MPI_ERR_LASTCODE && code - MPI_ERR_LASTCODE - 1 < ncodes)
		return code_class[code - MPI_ERR_LASTCODE - 1];
	return -1;
}

static void string_of(int code, char *out, size_t len)
{
	int k = code - MPI_ERR_LASTCODE - 1;

	if (code >= 0 && code < (int)(sizeof(class_msg) / sizeof(class_msg[0])))
		snprintf(out, len, "%s", class_msg[code]);
	else if (code == MPI_ERR_PROC_FAILED)
		snprintf(out, len, "a process involved has failed (MPI_ERR_PROC_FAILED)");
	else if (k >= 0 && k < ncodes)
		snprintf(out, len, "%s",
		         code_str[k] ? code_str[k] : ""); /* user codes start empty */
	else
		snprintf(out, len, "error code %d", code);
}

static char detail[MPI_MAX_ERROR_STRING];

void mpii_err_detail(const char *why)
{
	snprintf(detail, sizeof(detail), "%s", why ? why : "");
}

const char *mpii_err_take_detail(char *buf, size_t len)
{
	snprintf(buf, len, "%s", detail);
	detail[0] = '\0';
	return buf;
}

int mpii_err_report(struct mpii_comm *c, int code, const char *fn)
{
	struct errh *e;
	char msg[MPI_MAX_ERROR_STRING], why[MPI_MAX_ERROR_STRING];
	MPI_Comm h;

	if (code == MPI_SUCCESS)
		return code;
	memcpy(why, detail, sizeof(why)); /* this error's detail, if any: used once */
	detail[0] = '\0';
	if (!c)
		c = mpii_comm(MPI_COMM_WORLD);
	e = errh_get(c ? c->errh : MPI_ERRORS_ARE_FATAL);
	if (e == &eh_return)
		return code;
	if (e && e->fn) {
		h = !c ? MPI_COMM_WORLD : c->file ? c->file : c->win ? c->win : c->handle;
		e->fn(&h, &code, NULL);
		return code;
	}
	if (why[0])
		memcpy(msg, why, sizeof(msg));
	else
		string_of(code, msg, sizeof(msg));
	fprintf(stderr, "lamkit MPI: rank %d: %s: %s (fatal)\n", mpii.rank, fn, msg);
	if (mpii.initialized && !mpii.finalized && mpii.size > 1)
		PMI_Abort(code, msg);
	_exit(code);
}

void mpii_err_fini(void)
{
	for (int i = 0; i < ncodes; i++)
		free(code_str[i]);
	free(code_str);
	free(code_class);
	code_str = NULL;
	code_class = NULL;
	ncodes = 0;
	for (int h = 3; h < mpii.errhs.n; h++)
		free(mpii.errhs.v[h]);
	free(mpii.errhs.v);
	memset(&mpii.errhs, 0, sizeof(mpii.errhs));
}

MPII_ALIAS(Error_class)
int PMPI_Error_class(int code, int *cls)
{
	int k = class_of(code);

	if (k < 0)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Error_class");
	*cls = k;
	return MPI_SUCCESS;
}

MPII_ALIAS(Error_string)
int PMPI_Error_string(int code, char *str, int *len)
{
	string_of(code, str, MPI_MAX_ERROR_STRING);
	*len = (int)strlen(str);
	return MPI_SUCCESS;
}

static int add_code(int cls)
{
	int *c = realloc(code_class, sizeof(int) * (size_t)(ncodes + 1));
	char **s;

	if (!c)
		return -1;
	code_class = c;
	s = realloc(code_str, sizeof(char *) * (size_t)(ncodes + 1));
	if (!s)
		return -1;
	code_str = s;
	code_str[ncodes] = NULL;
	code_class[ncodes] = cls;
	ncodes++;
	lastcode = MPI_ERR_LASTCODE + ncodes;
	return lastcode;
}

MPII_ALIAS(Add_error_class)
int PMPI_Add_error_class(int *cls)
{
	int k = add_code(0);

	if (k < 0)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_class");
	code_class[ncodes - 1] = k; /* a new class is its own class */
	*cls = k;
	return MPI_SUCCESS;
}

MPII_ALIAS(Add_error_code)
int PMPI_Add_error_code(int cls, int *code)
{
	int k;

	if (class_of(cls) != cls)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code");
	k = add_code(cls);
	if (k < 0)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_code");
	*code = k;
	return MPI_SUCCESS;
}

MPII_ALIAS(Add_error_string)
int PMPI_Add_error_string(int code, const char *str)
{
	int k = code - MPI_ERR_LASTCODE - 1;
	char *s;

	if (k < 0 || k >= ncodes)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Add_error_string");
	s = strdup(str);
	if (!s)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string");
	free(code_str[k]);
	code_str[k] = s;
	return MPI_SUCCESS;
}

static int new_errh(MPI_Comm_errhandler_function *fn, int kind, MPI_Errhandler *eh,
                    const char *what)
{
	struct errh *e = malloc(sizeof(*e));
	int h;

	errh_get(MPI_ERRORS_RETURN);
	if (!e || (h = mpii_tab_add(&mpii.errhs, e)) < 0) {
		free(e);
		return mpii_err(NULL, MPI_ERR_NO_MEM, what);
	}
	e->fn = fn;
	e->kind = kind;
	*eh = h;
	return MPI_SUCCESS;
}

/* Attach handler eh to c (a window's private communicator for kind EH_WIN). MPI code. */
static int set_errh(struct mpii_comm *c, MPI_Errhandler eh, int kind)
{
	struct errh *e = errh_get(eh);

	if (!e || (e->kind != EH_ANY && e->kind != kind))
		return MPI_ERR_ARG;
	c->errh = eh;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_create_errhandler)
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
	return new_errh(fn, EH_COMM, eh, "MPI_Comm_create_errhandler");
}

MPII_ALIAS(Errhandler_create)
int PMPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *eh)
{
	return PMPI_Comm_create_errhandler(fn, eh);
}

MPII_ALIAS(Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
	struct mpii_comm *c = mpii_comm(comm);

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_errhandler");
	return mpii_err(c, set_errh(c, eh, EH_COMM), "MPI_Comm_set_errhandler");
}

MPII_ALIAS(Errhandler_set)
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler eh)
{
	return PMPI_Comm_set_errhandler(comm, eh);
}

MPII_ALIAS(Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
	struct mpii_comm *c = mpii_comm(comm);

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_errhandler");
	*eh = c->errh;
	return MPI_SUCCESS;
}

MPII_ALIAS(Errhandler_get)
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *eh)
{
	return PMPI_Comm_get_errhandler(comm, eh);
}

MPII_ALIAS(Errhandler_free)
int PMPI_Errhandler_free(MPI_Errhandler *eh)
{
	if (!errh_get(*eh))
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Errhandler_free");
	/* Handlers stay valid while communicators use them; they are reclaimed at finalize. */
	*eh = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_call_errhandler)
int PMPI_Comm_call_errhandler(MPI_Comm comm, int code)
{
	struct mpii_comm *c = mpii_comm(comm);

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_call_errhandler");
	mpii_err(c, code, "MPI_Comm_call_errhandler");
	return MPI_SUCCESS;
}

/* ---- windows: a window's errors are raised on its private communicator (w->comm), which
 * carries the window's handler and hands the window's handle to a user handler ---- */

MPII_ALIAS(Win_create_errhandler)
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *eh)
{
	return new_errh((MPI_Comm_errhandler_function *)fn, EH_WIN, eh,
	                "MPI_Win_create_errhandler");
}

MPII_ALIAS(Win_set_errhandler)
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler eh)
{
	struct mpii_win *w = mpii_win(win);

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_set_errhandler");
	return mpii_err(w->comm, set_errh(w->comm, eh, EH_WIN), "MPI_Win_set_errhandler");
}

MPII_ALIAS(Win_get_errhandler)
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *eh)
{
	struct mpii_win *w = mpii_win(win);

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_get_errhandler");
	*eh = w->comm->errh;
	return MPI_SUCCESS;
}

MPII_ALIAS(Win_call_errhandler)
int PMPI_Win_call_errhandler(MPI_Win win, int code)
{
	struct mpii_win *w = mpii_win(win);

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_call_errhandler");
	mpii_err(w->comm, code, "MPI_Win_call_errhandler");
	return MPI_SUCCESS;
}

/* ---- files: a file's errors are raised on its private communicator too (mpi_io_file.c) ---- */

MPII_ALIAS(File_create_errhandler)
int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *eh)
{
	return new_errh((MPI_Comm_errhandler_function *)fn, EH_FILE, eh,
	                "MPI_File_create_errhandler");
}

/* Whether eh exists and may be attached to a file (declared in mpio.h). */
int mpii_errh_file_ok(MPI_Errhandler eh);
int mpii_errh_file_ok(MPI_Errhandler eh)
{
	struct errh *e = errh_get(eh);

	return e && (e->kind == EH_ANY || e->kind == EH_FILE);
}
