/* lib/mpi/mpi_attr.c: keyvals and attributes on communicators, datatypes and windows, predefined
 * keys. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define FIRST_USER_KEY 16

enum { K_COMM = MPII_ATTR_COMM, K_TYPE = MPII_ATTR_TYPE, K_WIN = MPII_ATTR_WIN };

struct keyval {
	int kind; /* K_* */
	MPI_Comm_copy_attr_function *copy;
	MPI_Comm_delete_attr_function *del;
	void *extra;
};

struct mpii_attr {
	struct mpii_attr *next;
	int key;
	int fortran; /* set from Fortran: val is the value itself, C's get gets a pointer to it */
	void *val;
};

static struct mpii_tab keys;
static int tag_ub = MPII_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global;
static int universe, appnum, lastused;

int mpii_lastusedcode(void);

int lk_mpi_null_copy_fn(MPI_Comm c, int k, void *e, void *in, void *out, int *flag)
{
	(void)c, (void)k, (void)e, (void)in, (void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

int lk_mpi_dup_fn(MPI_Comm c, int k, void *e, void *in, void *out, int *flag)
{
	(void)c, (void)k, (void)e;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int lk_mpi_null_delete_fn(MPI_Comm c, int k, void *v, void *e)
{
	(void)c, (void)k, (void)v, (void)e;
	return MPI_SUCCESS;
}

int lk_mpi_type_null_copy_fn(MPI_Datatype t, int k, void *e, void *in, void *out, int *flag)
{
	(void)t, (void)k, (void)e, (void)in, (void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

int lk_mpi_type_dup_fn(MPI_Datatype t, int k, void *e, void *in, void *out, int *flag)
{
	(void)t, (void)k, (void)e;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int lk_mpi_type_null_delete_fn(MPI_Datatype t, int k, void *v, void *e)
{
	(void)t, (void)k, (void)v, (void)e;
	return MPI_SUCCESS;
}

static int new_key(const struct keyval *kv, int *out)
{
	struct keyval *k = malloc(sizeof(*k));
	int h;

	keys.first = FIRST_USER_KEY;
	if (!k || (h = mpii_tab_add(&keys, k)) < 0) {
		free(k);
		return MPI_ERR_NO_MEM;
	}
	*k = *kv;
	*out = h;
	return MPI_SUCCESS;
}

static struct keyval *get_key(int h, int kind)
{
	struct keyval *k = h >= FIRST_USER_KEY ? mpii_tab_get(&keys, h) : NULL;

	return k && k->kind == kind ? k : NULL;
}

void mpii_attr_fini(void)
{
	for (int h = FIRST_USER_KEY; h < keys.n; h++)
		free(keys.v[h]);
	free(keys.v);
	memset(&keys, 0, sizeof(keys));
}

static struct mpii_attr **find(struct mpii_attr **list, int key)
{
	for (; *list; list = &(*list)->next)
		if ((*list)->key == key)
			return list;
	return NULL;
}

static int set(struct mpii_attr **list, int key, void *val, int fortran)
{
	struct mpii_attr **p = find(list, key), *a;

	if (p) {
		(*p)->val = val;
		(*p)->fortran = fortran;
		return MPI_SUCCESS;
	}
	a = malloc(sizeof(*a));
	if (!a)
		return MPI_ERR_NO_MEM;
	a->key = key;
	a->val = val;
	a->fortran = fortran;
	a->next = *list;
	*list = a;
	return MPI_SUCCESS;
}

/* ---- the same machinery for every kind of object: obj is the user's handle of the object
 * that holds list (handles of all kinds are ints, so one callback type serves them all) ---- */

/* Run the delete callback and unlink. */
static int del_one(int kind, int obj, struct mpii_attr **p)
{
	struct mpii_attr *a = *p;
	struct keyval *k = get_key(a->key, kind);
	int rc = MPI_SUCCESS;

	if (k && k->del)
		rc = k->del(obj, a->key, a->val, k->extra);
	if (rc != MPI_SUCCESS)
		return rc;
	*p = a->next;
	free(a);
	return MPI_SUCCESS;
}

/* Delete every attribute; one whose callback fails goes anyway (its object is going away). */
static void clear(int kind, int obj, struct mpii_attr **list)
{
	while (*list)
		if (del_one(kind, obj, list) != MPI_SUCCESS) {
			struct mpii_attr *a = *list;
			*list = a->next;
			free(a);
		}
}

static int copy_all(int kind, int obj, const struct mpii_attr *from, struct mpii_attr **to)
{
	for (const struct mpii_attr *a = from; a; a = a->next) {
		struct keyval *k = get_key(a->key, kind);
		void *val = NULL;
		int flag = 0, rc;

		if (!k || !k->copy)
			continue;
		rc = k->copy(obj, a->key, k->extra, a->val, &val, &flag);
		if (rc != MPI_SUCCESS)
			return rc;
		if (flag && (rc = set(to, a->key, val, a->fortran)) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* The bodies of MPI_X_set_attr / get_attr / delete_attr (fortran: for the Fortran bindings).
 * MPI codes. */
static int set_attr(int kind, int obj, struct mpii_attr **list, int keyval, void *val, int fortran)
{
	struct mpii_attr **p;

	if (!get_key(keyval, kind))
		return MPI_ERR_KEYVAL;
	p = find(list, keyval);
	if (p && del_one(kind, obj, p) != MPI_SUCCESS)
		return MPI_ERR_OTHER;
	return set(list, keyval, val, fortran);
}

/* C gets the pointer stored (a pointer to the value of one set from Fortran); Fortran gets
 * the value stored (the address of one set from C). */
static int get_attr(int kind, struct mpii_attr **list, int keyval, void *val, int *flag,
                    int fortran)
{
	struct mpii_attr **p;

	if (!get_key(keyval, kind))
		return MPI_ERR_KEYVAL;
	p = find(list, keyval);
	*flag = p != NULL;
	if (p && fortran)
		*(MPI_Aint *)val = (MPI_Aint)(*p)->val;
	else if (p)
		*(void **)val = (*p)->fortran ? (void *)&(*p)->val : (*p)->val;
	return MPI_SUCCESS;
}

static int delete_attr(int kind, int obj, struct mpii_attr **list, int keyval)
{
	struct mpii_attr **p;

	if (!get_key(keyval, kind))
		return MPI_ERR_KEYVAL;
	p = find(list, keyval);
	return p ? del_one(kind, obj, p) : MPI_ERR_ARG;
}

void mpii_attr_clear_comm(struct mpii_comm *c)
{
	clear(K_COMM, c->handle, &c->attrs);
}

void mpii_attr_clear_type(struct mpii_dtype *d)
{
	clear(K_TYPE, d->handle, &d->attrs);
}

void mpii_attr_clear_win(struct mpii_win *w)
{
	clear(K_WIN, w->handle, &w->attrs);
}

int mpii_attr_copy_comm(struct mpii_comm *from, struct mpii_comm *to)
{
	return copy_all(K_COMM, from->handle, from->attrs, &to->attrs);
}

int mpii_attr_copy_type(struct mpii_dtype *from, struct mpii_dtype *to)
{
	return copy_all(K_TYPE, from->handle, from->attrs, &to->attrs);
}

/* Predefined attribute values (pointers to ints, as the standard wants). */
static void *predefined(int key)
{
	switch (key) {
	case MPI_TAG_UB:
		return &tag_ub;
	case MPI_HOST:
		return &host;
	case MPI_IO:
		return &io;
	case MPI_WTIME_IS_GLOBAL:
		return &wtime_global;
	case MPI_UNIVERSE_SIZE:
		universe = mpii.universe;
		return &universe;
	case MPI_APPNUM:
		appnum = mpii.appnum;
		return &appnum;
	case MPI_LASTUSEDCODE:
		lastused = mpii_lastusedcode();
		return &lastused;
	default:
		return NULL;
	}
}

MPII_ALIAS(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                            int *keyval, void *extra)
{
	struct keyval k = {K_COMM, copy, del, extra};

	return mpii_err(NULL, new_key(&k, keyval), "MPI_Comm_create_keyval");
}

MPII_ALIAS(Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval, void *extra)
{
	return PMPI_Comm_create_keyval(copy, del, keyval, extra);
}

MPII_ALIAS(Type_create_keyval)
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del,
                            int *keyval, void *extra)
{
	struct keyval k = {K_TYPE, copy, del, extra};

	return mpii_err(NULL, new_key(&k, keyval), "MPI_Type_create_keyval");
}

/* Windows are never duplicated: copy is kept only to be faithful to what the caller gave. */
MPII_ALIAS(Win_create_keyval)
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del,
                           int *keyval, void *extra)
{
	struct keyval k = {K_WIN, copy, del, extra};

	return mpii_err(NULL, new_key(&k, keyval), "MPI_Win_create_keyval");
}

static int free_key(int *keyval, int kind, const char *fn)
{
	struct keyval *k = get_key(*keyval, kind);

	if (!k)
		return mpii_err(NULL, MPI_ERR_KEYVAL, fn);
	/* attributes already set keep working (their callbacks stay reachable) until deleted */
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *keyval)
{
	return free_key(keyval, K_COMM, "MPI_Comm_free_keyval");
}

MPII_ALIAS(Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
	return free_key(keyval, K_COMM, "MPI_Keyval_free");
}

MPII_ALIAS(Type_free_keyval)
int PMPI_Type_free_keyval(int *keyval)
{
	return free_key(keyval, K_TYPE, "MPI_Type_free_keyval");
}

MPII_ALIAS(Win_free_keyval)
int PMPI_Win_free_keyval(int *keyval)
{
	return free_key(keyval, K_WIN, "MPI_Win_free_keyval");
}

MPII_ALIAS(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
	struct mpii_comm *c = mpii_comm(comm);

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_attr");
	return mpii_err(c, set_attr(K_COMM, comm, &c->attrs, keyval, val, 0), "MPI_Comm_set_attr");
}

MPII_ALIAS(Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *val)
{
	return PMPI_Comm_set_attr(comm, keyval, val);
}

MPII_ALIAS(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag)
{
	struct mpii_comm *c = mpii_comm(comm);
	void *pv;

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_attr");
	pv = predefined(keyval);
	if (pv) {
		*(void **)val = pv;
		*flag = 1;
		return MPI_SUCCESS;
	}
	return mpii_err(c, get_attr(K_COMM, &c->attrs, keyval, val, flag, 0), "MPI_Comm_get_attr");
}

MPII_ALIAS(Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *val, int *flag)
{
	return PMPI_Comm_get_attr(comm, keyval, val, flag);
}

MPII_ALIAS(Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
	struct mpii_comm *c = mpii_comm(comm);

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_delete_attr");
	return mpii_err(c, delete_attr(K_COMM, comm, &c->attrs, keyval), "MPI_Comm_delete_attr");
}

MPII_ALIAS(Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return PMPI_Comm_delete_attr(comm, keyval);
}

MPII_ALIAS(Type_set_attr)
int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void *val)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_set_attr");
	return mpii_err(NULL, set_attr(K_TYPE, type, &d->attrs, keyval, val, 0),
	                "MPI_Type_set_attr");
}

MPII_ALIAS(Type_get_attr)
int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void *val, int *flag)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_attr");
	return mpii_err(NULL, get_attr(K_TYPE, &d->attrs, keyval, val, flag, 0),
	                "MPI_Type_get_attr");
}

MPII_ALIAS(Type_delete_attr)
int PMPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_delete_attr");
	return mpii_err(NULL, delete_attr(K_TYPE, type, &d->attrs, keyval), "MPI_Type_delete_attr");
}

/* Errors on a window go to the window's handler (mpii_err on its private communicator). */
MPII_ALIAS(Win_set_attr)
int PMPI_Win_set_attr(MPI_Win win, int keyval, void *val)
{
	struct mpii_win *w = mpii_win(win);

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_set_attr");
	return mpii_err(w->comm, set_attr(K_WIN, win, &w->attrs, keyval, val, 0),
	                "MPI_Win_set_attr");
}

MPII_ALIAS(Win_get_attr)
int PMPI_Win_get_attr(MPI_Win win, int keyval, void *val, int *flag)
{
	struct mpii_win *w = mpii_win(win);

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_get_attr");
	if (mpii_win_predefined(w, keyval, val)) {
		*flag = 1;
		return MPI_SUCCESS;
	}
	return mpii_err(w->comm, get_attr(K_WIN, &w->attrs, keyval, val, flag, 0),
	                "MPI_Win_get_attr");
}

MPII_ALIAS(Win_delete_attr)
int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
	struct mpii_win *w = mpii_win(win);

	if (!w)
		return mpii_err(NULL, MPI_ERR_WIN, "MPI_Win_delete_attr");
	return mpii_err(w->comm, delete_attr(K_WIN, win, &w->attrs, keyval), "MPI_Win_delete_attr");
}

/* ---- for the Fortran bindings (lib/mpif) ---- */

int mpii_attr_fset(int kind, int obj, int keyval, MPI_Aint val, const char *fn)
{
	struct mpii_comm *c;
	struct mpii_dtype *d;
	struct mpii_win *w;

	switch (kind) {
	case K_COMM:
		if (!(c = mpii_comm(obj)))
			return mpii_err(NULL, MPI_ERR_COMM, fn);
		return mpii_err(c, set_attr(K_COMM, obj, &c->attrs, keyval, (void *)val, 1), fn);
	case K_TYPE:
		if (!(d = mpii_dt(obj)))
			return mpii_err(NULL, MPI_ERR_TYPE, fn);
		return mpii_err(NULL, set_attr(K_TYPE, obj, &d->attrs, keyval, (void *)val, 1), fn);
	default:
		if (!(w = mpii_win(obj)))
			return mpii_err(NULL, MPI_ERR_WIN, fn);
		return mpii_err(w->comm, set_attr(K_WIN, obj, &w->attrs, keyval, (void *)val, 1),
		                fn);
	}
}

int mpii_attr_fget(int kind, int obj, int keyval, MPI_Aint *val, int *flag, const char *fn)
{
	struct mpii_comm *c;
	struct mpii_dtype *d;
	struct mpii_win *w;
	void *pv;

	switch (kind) {
	case K_COMM:
		if (!(c = mpii_comm(obj)))
			return mpii_err(NULL, MPI_ERR_COMM, fn);
		if ((pv = predefined(keyval))) {
			*val = *(int *)pv;
			*flag = 1;
			return MPI_SUCCESS;
		}
		return mpii_err(c, get_attr(K_COMM, &c->attrs, keyval, val, flag, 1), fn);
	case K_TYPE:
		if (!(d = mpii_dt(obj)))
			return mpii_err(NULL, MPI_ERR_TYPE, fn);
		return mpii_err(NULL, get_attr(K_TYPE, &d->attrs, keyval, val, flag, 1), fn);
	default:
		if (!(w = mpii_win(obj)))
			return mpii_err(NULL, MPI_ERR_WIN, fn);
		if (mpii_win_predefined(w, keyval, &pv)) {
			/* the base is an address; the others point at their value */
			*val = keyval == MPI_WIN_BASE   ? (MPI_Aint)pv
			       : keyval == MPI_WIN_SIZE ? *(MPI_Aint *)pv
			                                : *(int *)pv;
			*flag = 1;
			return MPI_SUCCESS;
		}
		return mpii_err(w->comm, get_attr(K_WIN, &w->attrs, keyval, val, flag, 1), fn);
	}
}
