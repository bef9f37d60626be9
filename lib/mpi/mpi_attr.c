/* lib/mpi/mpi_attr.c: keyvals and attributes on communicators and datatypes, predefined keys. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define FIRST_USER_KEY 16

struct keyval {
	int type; /* 0 communicator, 1 datatype */
	MPI_Comm_copy_attr_function *ccopy;
	MPI_Comm_delete_attr_function *cdel;
	MPI_Type_copy_attr_function *tcopy;
	MPI_Type_delete_attr_function *tdel;
	void *extra;
};

struct mpii_attr {
	struct mpii_attr *next;
	int key;
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

static struct keyval *get_key(int h, int type)
{
	struct keyval *k = h >= FIRST_USER_KEY ? mpii_tab_get(&keys, h) : NULL;

	return k && k->type == type ? k : NULL;
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

static int set(struct mpii_attr **list, int key, void *val)
{
	struct mpii_attr **p = find(list, key), *a;

	if (p) {
		(*p)->val = val;
		return MPI_SUCCESS;
	}
	a = malloc(sizeof(*a));
	if (!a)
		return MPI_ERR_NO_MEM;
	a->key = key;
	a->val = val;
	a->next = *list;
	*list = a;
	return MPI_SUCCESS;
}

/* Run the delete callback and unlink. */
static int del_comm(struct mpii_comm *c, struct mpii_attr **p)
{
	struct mpii_attr *a = *p;
	struct keyval *k = get_key(a->key, 0);
	int rc = MPI_SUCCESS;

	if (k && k->cdel)
		rc = k->cdel(c->handle, a->key, a->val, k->extra);
	if (rc != MPI_SUCCESS)
		return rc;
	*p = a->next;
	free(a);
	return MPI_SUCCESS;
}

static int del_type(struct mpii_dtype *d, struct mpii_attr **p)
{
	struct mpii_attr *a = *p;
	struct keyval *k = get_key(a->key, 1);
	int rc = MPI_SUCCESS;

	if (k && k->tdel)
		rc = k->tdel(d->handle, a->key, a->val, k->extra);
	if (rc != MPI_SUCCESS)
		return rc;
	*p = a->next;
	free(a);
	return MPI_SUCCESS;
}

void mpii_attr_clear_comm(struct mpii_comm *c)
{
	while (c->attrs)
		if (del_comm(c, &c->attrs) != MPI_SUCCESS) {
			struct mpii_attr *a = c->attrs;
			c->attrs = a->next;
			free(a);
		}
}

void mpii_attr_clear_type(struct mpii_dtype *d)
{
	while (d->attrs)
		if (del_type(d, &d->attrs) != MPI_SUCCESS) {
			struct mpii_attr *a = d->attrs;
			d->attrs = a->next;
			free(a);
		}
}

int mpii_attr_copy_comm(struct mpii_comm *from, struct mpii_comm *to)
{
	for (struct mpii_attr *a = from->attrs; a; a = a->next) {
		struct keyval *k = get_key(a->key, 0);
		void *val = NULL;
		int flag = 0, rc;

		if (!k || !k->ccopy)
			continue;
		rc = k->ccopy(from->handle, a->key, k->extra, a->val, &val, &flag);
		if (rc != MPI_SUCCESS)
			return rc;
		if (flag && (rc = set(&to->attrs, a->key, val)) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

int mpii_attr_copy_type(struct mpii_dtype *from, struct mpii_dtype *to)
{
	for (struct mpii_attr *a = from->attrs; a; a = a->next) {
		struct keyval *k = get_key(a->key, 1);
		void *val = NULL;
		int flag = 0, rc;

		if (!k || !k->tcopy)
			continue;
		rc = k->tcopy(from->handle, a->key, k->extra, a->val, &val, &flag);
		if (rc != MPI_SUCCESS)
			return rc;
		if (flag && (rc = set(&to->attrs, a->key, val)) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
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
	struct keyval k = {0, copy, del, NULL, NULL, extra};

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
	struct keyval k = {1, NULL, NULL, copy, del, extra};

	return mpii_err(NULL, new_key(&k, keyval), "MPI_Type_create_keyval");
}

static int free_key(int *keyval, int type, const char *fn)
{
	struct keyval *k = get_key(*keyval, type);

	if (!k)
		return mpii_err(NULL, MPI_ERR_KEYVAL, fn);
	/* attributes already set keep working (their callbacks stay reachable) until deleted */
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

MPII_ALIAS(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *keyval)
{
	return free_key(keyval, 0, "MPI_Comm_free_keyval");
}

MPII_ALIAS(Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
	return free_key(keyval, 0, "MPI_Keyval_free");
}

MPII_ALIAS(Type_free_keyval)
int PMPI_Type_free_keyval(int *keyval)
{
	return free_key(keyval, 1, "MPI_Type_free_keyval");
}

MPII_ALIAS(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
	struct mpii_comm *c = mpii_comm(comm);
	struct mpii_attr **p;

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_attr");
	if (!get_key(keyval, 0))
		return mpii_err(c, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
	p = find(&c->attrs, keyval);
	if (p && del_comm(c, p) != MPI_SUCCESS)
		return mpii_err(c, MPI_ERR_OTHER, "MPI_Comm_set_attr");
	return mpii_err(c, set(&c->attrs, keyval, val), "MPI_Comm_set_attr");
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
	struct mpii_attr **p;
	void *pv;

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_attr");
	pv = predefined(keyval);
	if (pv) {
		*(void **)val = pv;
		*flag = 1;
		return MPI_SUCCESS;
	}
	if (!get_key(keyval, 0))
		return mpii_err(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
	p = find(&c->attrs, keyval);
	*flag = p != NULL;
	if (p)
		*(void **)val = (*p)->val;
	return MPI_SUCCESS;
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
	struct mpii_attr **p;

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, "MPI_Comm_delete_attr");
	if (!get_key(keyval, 0))
		return mpii_err(c, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
	p = find(&c->attrs, keyval);
	if (!p)
		return mpii_err(c, MPI_ERR_ARG, "MPI_Comm_delete_attr");
	return mpii_err(c, del_comm(c, p), "MPI_Comm_delete_attr");
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
	struct mpii_attr **p;

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_set_attr");
	if (!get_key(keyval, 1))
		return mpii_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_set_attr");
	p = find(&d->attrs, keyval);
	if (p && del_type(d, p) != MPI_SUCCESS)
		return mpii_err(NULL, MPI_ERR_OTHER, "MPI_Type_set_attr");
	return mpii_err(NULL, set(&d->attrs, keyval, val), "MPI_Type_set_attr");
}

MPII_ALIAS(Type_get_attr)
int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void *val, int *flag)
{
	struct mpii_dtype *d = mpii_dt(type);
	struct mpii_attr **p;

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_attr");
	if (!get_key(keyval, 1))
		return mpii_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_get_attr");
	p = find(&d->attrs, keyval);
	*flag = p != NULL;
	if (p)
		*(void **)val = (*p)->val;
	return MPI_SUCCESS;
}

MPII_ALIAS(Type_delete_attr)
int PMPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
	struct mpii_dtype *d = mpii_dt(type);
	struct mpii_attr **p;

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Type_delete_attr");
	if (!get_key(keyval, 1))
		return mpii_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_delete_attr");
	p = find(&d->attrs, keyval);
	if (!p)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Type_delete_attr");
	return mpii_err(NULL, del_type(d, p), "MPI_Type_delete_attr");
}
