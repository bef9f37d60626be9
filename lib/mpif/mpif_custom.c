/* lib/mpif/mpif_custom.c: the bodies of the Fortran bindings bindings.lua marks custom:
 * Fortran callbacks (attribute keyvals, generalized requests, data representations) behind C
 * trampolines, attribute
 * values of the predefined keys, spawn's argument vectors, MPI_Pcontrol and MPI_Address. */
#include "mpif_custom.h"

int mpif_Pcontrol(const int level)
{
	return PMPI_Pcontrol(level);
}

int mpif_Address(void *location, MPI_Aint *address)
{
	int rc = PMPI_Address(location, address);

	if (rc == MPI_SUCCESS && *address != (MPI_Fint)*address)
		return mpii_err(NULL, MPI_ERR_ARG,
		                "MPI_ADDRESS: the address does not fit a Fortran INTEGER (use "
		                "MPI_GET_ADDRESS)");
	return rc;
}

/* ---- attribute keyvals with Fortran callbacks: every argument by reference, values
 * INTEGER(KIND=MPI_ADDRESS_KIND) (old: INTEGER, MPI_KEYVAL_CREATE), flag a LOGICAL ---- */
typedef void mpif_copy_fn(MPI_Fint *obj, MPI_Fint *keyval, void *extra, void *in, void *out,
                          MPI_Fint *flag, MPI_Fint *ierr);
typedef void mpif_delete_fn(MPI_Fint *obj, MPI_Fint *keyval, void *val, void *extra,
                            MPI_Fint *ierr);

/* One per keyval made from Fortran, kept until MPI_FINALIZE (attributes of a freed keyval
 * still call its callbacks). */
struct mpif_kv {
	mpif_copy_fn *copy;
	mpif_delete_fn *del;
	MPI_Aint extra;
	MPI_Fint iextra;
	int old;
	struct mpif_kv *next;
};
static struct mpif_kv *kvs;
static void datareps_free(void);

int mpif_Finalize(void)
{
	int rc = PMPI_Finalize();

	while (kvs) {
		struct mpif_kv *k = kvs;
		kvs = k->next;
		free(k);
	}
	datareps_free();
	return rc;
}

void mpi_comm_null_copy_fn_(void), mpi_comm_dup_fn_(void), mpi_comm_null_delete_fn_(void);
void mpi_type_null_copy_fn_(void), mpi_type_dup_fn_(void), mpi_type_null_delete_fn_(void);
void mpi_win_null_copy_fn_(void), mpi_win_dup_fn_(void), mpi_win_null_delete_fn_(void);
void mpi_null_copy_fn_(void), mpi_dup_fn_(void), mpi_null_delete_fn_(void);

static int copy_tramp(int obj, int keyval, void *extra, void *in, void *out, int *flag)
{
	struct mpif_kv *k = extra;
	MPI_Fint fobj = obj, fkey = keyval, fflag = MPIF_FALSE, ierr = MPI_SUCCESS;

	if (k->old) {
		MPI_Fint fin = (MPI_Fint)(intptr_t)in, fout = 0;
		k->copy(&fobj, &fkey, &k->iextra, &fin, &fout, &fflag, &ierr);
		*(void **)out = (void *)(intptr_t)fout;
	} else {
		MPI_Aint fin = (MPI_Aint)in, fout = 0;
		k->copy(&fobj, &fkey, &k->extra, &fin, &fout, &fflag, &ierr);
		*(void **)out = (void *)fout;
	}
	*flag = fflag != MPIF_FALSE;
	return ierr;
}

static int delete_tramp(int obj, int keyval, void *val, void *extra)
{
	struct mpif_kv *k = extra;
	MPI_Fint fobj = obj, fkey = keyval, ierr = MPI_SUCCESS;

	if (k->old) {
		MPI_Fint fval = (MPI_Fint)(intptr_t)val;
		k->del(&fobj, &fkey, &fval, &k->iextra, &ierr);
	} else {
		MPI_Aint fval = (MPI_Aint)val;
		k->del(&fobj, &fkey, &fval, &k->extra, &ierr);
	}
	return ierr;
}

/* The C callbacks and extra state for a Fortran copy/delete pair: the predefined ones are
 * C's own, the others go through the trampolines. MPI code. */
static int keyval_fns(void (*copy)(void), void (*del)(void), void (*nullcopy)(void),
                      void (*dup)(void), void (*nulldel)(void), MPI_Aint extra, int old,
                      MPI_Comm_copy_attr_function **ccopy, MPI_Comm_delete_attr_function **cdel,
                      void **cextra)
{
	struct mpif_kv *k = malloc(sizeof(*k));

	if (!k)
		return MPI_ERR_NO_MEM;
	*k = (struct mpif_kv){(mpif_copy_fn *)(void *)copy,
	                      (mpif_delete_fn *)(void *)del,
	                      extra,
	                      (MPI_Fint)extra,
	                      old,
	                      kvs};
	kvs = k;
	*ccopy = copy == nullcopy ? lk_mpi_null_copy_fn : copy == dup ? lk_mpi_dup_fn : copy_tramp;
	*cdel = del == nulldel ? lk_mpi_null_delete_fn : delete_tramp;
	*cextra = k;
	return MPI_SUCCESS;
}

#define MPIF_FN(p) ((void (*)(void))(void *)(p))

int mpif_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
	MPI_Comm_copy_attr_function *c;
	MPI_Comm_delete_attr_function *d;
	void *x;
	int rc = keyval_fns(MPIF_FN(comm_copy_attr_fn), MPIF_FN(comm_delete_attr_fn),
	                    mpi_comm_null_copy_fn_, mpi_comm_dup_fn_, mpi_comm_null_delete_fn_,
	                    (MPI_Aint)extra_state, 0, &c, &d, &x);

	if (rc != MPI_SUCCESS)
		return mpif_nomem("MPI_Comm_create_keyval");
	return PMPI_Comm_create_keyval(c, d, comm_keyval, x);
}

int mpif_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
	MPI_Comm_copy_attr_function *c;
	MPI_Comm_delete_attr_function *d;
	void *x;
	int rc = keyval_fns(MPIF_FN(copy_fn), MPIF_FN(delete_fn), mpi_null_copy_fn_, mpi_dup_fn_,
	                    mpi_null_delete_fn_, (MPI_Aint)extra_state, 1, &c, &d, &x);

	if (rc != MPI_SUCCESS)
		return mpif_nomem("MPI_Keyval_create");
	return PMPI_Keyval_create(c, d, keyval, x);
}

int mpif_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
	MPI_Comm_copy_attr_function *c;
	MPI_Comm_delete_attr_function *d;
	void *x;
	int rc = keyval_fns(MPIF_FN(type_copy_attr_fn), MPIF_FN(type_delete_attr_fn),
	                    mpi_type_null_copy_fn_, mpi_type_dup_fn_, mpi_type_null_delete_fn_,
	                    (MPI_Aint)extra_state, 0, &c, &d, &x);

	if (rc != MPI_SUCCESS)
		return mpif_nomem("MPI_Type_create_keyval");
	/* handles of every kind are ints: the communicator callbacks serve datatypes */
	return PMPI_Type_create_keyval((MPI_Type_copy_attr_function *)(void *)c,
	                               (MPI_Type_delete_attr_function *)(void *)d, type_keyval, x);
}

int mpif_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
	MPI_Comm_copy_attr_function *c;
	MPI_Comm_delete_attr_function *d;
	void *x;
	int rc = keyval_fns(MPIF_FN(win_copy_attr_fn), MPIF_FN(win_delete_attr_fn),
	                    mpi_win_null_copy_fn_, mpi_win_dup_fn_, mpi_win_null_delete_fn_,
	                    (MPI_Aint)extra_state, 0, &c, &d, &x);

	if (rc != MPI_SUCCESS)
		return mpif_nomem("MPI_Win_create_keyval");
	return PMPI_Win_create_keyval((MPI_Win_copy_attr_function *)(void *)c,
	                              (MPI_Win_delete_attr_function *)(void *)d, win_keyval, x);
}

/* ---- attribute values: Fortran stores the value itself (C's get then gets a pointer to it)
 * and gets the value stored, the address of a C-set attribute, the value of a predefined one
 * (mpii_attr_fset / mpii_attr_fget) ---- */

int mpif_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
	return mpii_attr_fset(MPII_ATTR_COMM, comm, comm_keyval, (MPI_Aint)attribute_val,
	                      "MPI_Comm_set_attr");
}

int mpif_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
	return mpii_attr_fset(MPII_ATTR_COMM, comm, keyval, (MPI_Aint)attribute_val,
	                      "MPI_Attr_put");
}

int mpif_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
	return mpii_attr_fset(MPII_ATTR_TYPE, datatype, type_keyval, (MPI_Aint)attribute_val,
	                      "MPI_Type_set_attr");
}

int mpif_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
	return mpii_attr_fset(MPII_ATTR_WIN, win, win_keyval, (MPI_Aint)attribute_val,
	                      "MPI_Win_set_attr");
}

int mpif_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	return mpii_attr_fget(MPII_ATTR_COMM, comm, comm_keyval, attribute_val, flag,
	                      "MPI_Comm_get_attr");
}

int mpif_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	MPI_Aint v = 0;
	int rc = mpii_attr_fget(MPII_ATTR_COMM, comm, keyval, &v, flag, "MPI_Attr_get");

	if (rc == MPI_SUCCESS && *flag)
		*(MPI_Fint *)attribute_val = (MPI_Fint)v;
	return rc;
}

int mpif_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
	return mpii_attr_fget(MPII_ATTR_TYPE, datatype, type_keyval, attribute_val, flag,
	                      "MPI_Type_get_attr");
}

int mpif_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
	return mpii_attr_fget(MPII_ATTR_WIN, win, win_keyval, attribute_val, flag,
	                      "MPI_Win_get_attr");
}

/* ---- generalized requests with Fortran callbacks ---- */
typedef void mpif_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierr);
typedef void mpif_free_fn(MPI_Aint *extra, MPI_Fint *ierr);
typedef void mpif_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierr);

/* The callbacks get the caller's own extra_state variable (by reference, as MPICH's tests
 * check: what free_fn writes there, the caller sees). */
struct mpif_greq {
	mpif_query_fn *query;
	mpif_free_fn *free;
	mpif_cancel_fn *cancel;
	MPI_Aint *extra;
};

static int query_tramp(void *extra, MPI_Status *status)
{
	struct mpif_greq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS;

	g->query(g->extra, (MPI_Fint *)(void *)status, &ierr);
	return ierr;
}

static int free_tramp(void *extra)
{
	struct mpif_greq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS;

	g->free(g->extra, &ierr);
	free(g);
	return ierr;
}

static int cancel_tramp(void *extra, int complete)
{
	struct mpif_greq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS, c = complete ? MPIF_TRUE : MPIF_FALSE;

	g->cancel(g->extra, &c, &ierr);
	return ierr;
}

int mpif_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
	struct mpif_greq *g = malloc(sizeof(*g));
	int rc;

	if (!g)
		return mpif_nomem("MPI_Grequest_start");
	*g = (struct mpif_greq){(mpif_query_fn *)(void *)query_fn, (mpif_free_fn *)(void *)free_fn,
	                        (mpif_cancel_fn *)(void *)cancel_fn, extra_state};
	rc = PMPI_Grequest_start(query_tramp, free_tramp, cancel_tramp, g, request);
	if (rc != MPI_SUCCESS)
		free(g);
	return rc;
}

/* ---- data representations with Fortran conversion callbacks: the buffers' addresses as they
 * are (a choice buffer by reference, TYPE(C_PTR) by value: the same pointer), every other
 * argument by reference, the extra state INTEGER(KIND=MPI_ADDRESS_KIND) ---- */
typedef void mpif_conv_fn(void *userbuf, MPI_Fint *type, MPI_Fint *count, void *filebuf,
                          MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierr);
typedef void mpif_extent_fn(MPI_Fint *type, MPI_Aint *extent, MPI_Aint *extra, MPI_Fint *ierr);

/* One per data representation registered from Fortran: registrations last as long as MPI. */
struct mpif_datarep {
	mpif_conv_fn *read, *write;
	mpif_extent_fn *extent;
	MPI_Aint extra;
	struct mpif_datarep *next;
};
static struct mpif_datarep *datareps;

static int conv(mpif_conv_fn *fn, void *userbuf, MPI_Datatype type, int count, void *filebuf,
                MPI_Offset position, struct mpif_datarep *d)
{
	MPI_Fint ftype = (MPI_Fint)type, fcount = count, ierr = MPI_SUCCESS;

	fn(userbuf, &ftype, &fcount, filebuf, &position, &d->extra, &ierr);
	return ierr;
}

static int read_tramp(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                      MPI_Offset position, void *extra)
{
	struct mpif_datarep *d = extra;
	return conv(d->read, userbuf, type, count, filebuf, position, d);
}

static int write_tramp(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                       MPI_Offset position, void *extra)
{
	struct mpif_datarep *d = extra;
	return conv(d->write, userbuf, type, count, filebuf, position, d);
}

static int extent_tramp(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
	struct mpif_datarep *d = extra;
	MPI_Fint ftype = (MPI_Fint)type, ierr = MPI_SUCCESS;

	d->extent(&ftype, extent, &d->extra, &ierr);
	return ierr;
}

static void datareps_free(void)
{
	while (datareps) {
		struct mpif_datarep *d = datareps;
		datareps = d->next;
		free(d);
	}
}

void mpi_conversion_fn_null_(void);

int mpif_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
	void (*null)(void) = mpi_conversion_fn_null_;
	void (*rd)(void) = MPIF_FN(read_conversion_fn), (*wr)(void) = MPIF_FN(write_conversion_fn);
	struct mpif_datarep *d = malloc(sizeof(*d));
	int rc;

	if (!d)
		return mpif_nomem("MPI_Register_datarep");
	*d = (struct mpif_datarep){
	    (mpif_conv_fn *)(void *)read_conversion_fn, (mpif_conv_fn *)(void *)write_conversion_fn,
	    (mpif_extent_fn *)(void *)dtype_file_extent_fn, (MPI_Aint)extra_state, NULL};
	rc = PMPI_Register_datarep(datarep, rd == null ? MPI_CONVERSION_FN_NULL : read_tramp,
	                           wr == null ? MPI_CONVERSION_FN_NULL : write_tramp, extent_tramp,
	                           d);
	if (rc != MPI_SUCCESS) {
		free(d);
		return rc;
	}
	d->next = datareps; /* kept: the library calls the callbacks until MPI_FINALIZE */
	datareps = d;
	return rc;
}

/* ---- spawn: Fortran argument vectors are CHARACTER arrays ended by a blank element ---- */

/* The C argv of one Fortran vector of len-character elements, element i at f + i * step
 * (a row of a 2-D array has step count * len); NULL on ENOMEM. */
static char **argv_of(const char *f, size_t len, size_t step)
{
	size_t n = 0, cap = 8;
	char **v = malloc(sizeof(*v) * cap);

	if (!v)
		return NULL;
	for (;;) {
		const char *e = f + n * step;
		size_t l = len;

		while (l > 0 && e[l - 1] == ' ')
			l--;
		if (l == 0) {
			v[n] = NULL;
			return v;
		}
		if (n + 2 > cap) {
			char **nv = realloc(v, sizeof(*v) * (cap *= 2));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = strndup(e, l)))
			break;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return NULL;
}

static void argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int mpif_Comm_spawn(const char *command, const char *argv, size_t argv_len, int maxprocs,
                    MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm,
                    int array_of_errcodes[])
{
	char **v = NULL;
	int rc;

	if (argv != lamkit_argv_null_ && !(v = argv_of(argv, argv_len, argv_len)))
		return mpif_nomem("MPI_Comm_spawn");
	rc = PMPI_Comm_spawn(command, v, maxprocs, info, root, comm, intercomm, array_of_errcodes);
	argv_free(v);
	return rc;
}

int mpif_Comm_spawn_multiple(int count, const char *array_of_commands, size_t array_of_commands_len,
                             const char *array_of_argv, size_t array_of_argv_len,
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
	char **cmds = count > 0 ? calloc((size_t)count, sizeof(*cmds)) : NULL;
	char ***argvs = NULL;
	int rc = MPI_SUCCESS;

	if (count > 0 && !cmds)
		return mpif_nomem("MPI_Comm_spawn_multiple");
	if (array_of_argv != lamkit_argvs_null_ && count > 0 &&
	    !(argvs = calloc((size_t)count, sizeof(*argvs))))
		rc = MPI_ERR_NO_MEM;
	for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
		const char *c = array_of_commands + (size_t)i * array_of_commands_len;
		size_t l = array_of_commands_len;

		while (l > 0 && c[l - 1] == ' ')
			l--;
		cmds[i] = strndup(c, l);
		if (!cmds[i])
			rc = MPI_ERR_NO_MEM;
		/* array_of_argv(count, *): the arguments of command i are row i */
		if (argvs && rc == MPI_SUCCESS &&
		    !(argvs[i] = argv_of(array_of_argv + (size_t)i * array_of_argv_len,
		                         array_of_argv_len, (size_t)count * array_of_argv_len)))
			rc = MPI_ERR_NO_MEM;
	}
	if (rc == MPI_SUCCESS)
		rc = PMPI_Comm_spawn_multiple(count, cmds, argvs, array_of_maxprocs, array_of_info,
		                              root, comm, intercomm, array_of_errcodes);
	else
		rc = mpif_nomem("MPI_Comm_spawn_multiple");
	for (int i = 0; i < count; i++) {
		free(cmds[i]);
		if (argvs)
			argv_free(argvs[i]);
	}
	free(cmds);
	free(argvs);
	return rc;
}
