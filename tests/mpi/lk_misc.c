/* tests/mpi/lk_misc.c: Fortran/C++ datatype handles from C, MINLOC/MAXLOC on pair types (also
 * with long double), MPI_Get_elements on pairs, attribute callbacks (on free, failing copies,
 * MPI_COMM_SELF at MPI_Finalize), error strings of new classes, MPI_INFO_ENV, type names. */
#include <string.h>

#include "lk_util.h"

static void test_fortran_types(void)
{
	int iv = lk_rank + 1, isum = 0, two[2] = {lk_rank % 3, lk_rank}, tout[2];
	double dv = 0.5 * lk_rank, dsum = 0, dd[2] = {-(double)lk_rank, lk_rank}, dout[2];
	float fv[2] = {(float)lk_rank, (float)lk_rank}, fout[2];
	int sz;

	MPI_Allreduce(&iv, &isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(isum == lk_size * (lk_size + 1) / 2, "MPI_INTEGER sum %d", isum);
	MPI_Allreduce(&dv, &dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(dsum == 0.25 * lk_size * (lk_size - 1), "MPI_DOUBLE_PRECISION sum %g", dsum);
	MPI_Allreduce(two, tout, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD);
	LK_CHECK(tout[0] == (lk_size > 2 ? 2 : lk_size - 1) &&
	             tout[1] == (lk_size > 2 ? 2 : lk_size - 1),
	         "MPI_2INTEGER maxloc %d %d", tout[0], tout[1]);
	MPI_Allreduce(dd, dout, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD);
	LK_CHECK(dout[0] == 1 - lk_size && dout[1] == lk_size - 1, "MPI_2DOUBLE_PRECISION minloc");
	MPI_Allreduce(fv, fout, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD);
	LK_CHECK(fout[0] == lk_size - 1 && fout[1] == lk_size - 1, "MPI_2REAL maxloc");
	MPI_Type_size(MPI_DOUBLE_COMPLEX, &sz);
	LK_CHECK(sz == 16, "MPI_DOUBLE_COMPLEX size %d", sz);
	MPI_Type_size(MPI_CXX_BOOL, &sz);
	LK_CHECK(sz == (int)sizeof(_Bool), "MPI_CXX_BOOL size %d", sz);
	MPI_Type_size(MPI_INTEGER8, &sz);
	LK_CHECK(sz == 8, "MPI_INTEGER8 size %d", sz);
	/* a character array travels like MPI_CHAR */
	char s[8] = "abcdefg";
	MPI_Bcast(s, 8, MPI_CHARACTER, 0, MPI_COMM_WORLD);
	LK_CHECK(strcmp(s, "abcdefg") == 0, "MPI_CHARACTER bcast");
}

/* MAXLOC over MPI_LONG_DOUBLE_INT with an odd count, from buffers not 16-byte aligned. */
static void test_pairs(void)
{
	struct ldi {
		long double v;
		int k;
	} in[3], out[3];
	struct di {
		double v;
		int k;
	} p[2], q[2];
	MPI_Status st;
	int n;

	for (int i = 0; i < 3; i++) {
		in[i].v = (long double)((lk_rank * 7 + i) % (lk_size + 1));
		in[i].k = lk_rank;
	}
	MPI_Reduce(in, out, 3, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD);
	if (lk_rank == 0)
		for (int i = 0; i < 3; i++) {
			long double best = -1;
			int who = -1;
			for (int r = 0; r < lk_size; r++) {
				long double v = (long double)((r * 7 + i) % (lk_size + 1));
				if (v > best)
					best = v, who = r;
			}
			LK_CHECK(out[i].v == best && out[i].k == who, "long double maxloc [%d]", i);
		}
	p[0].v = 1.5, p[0].k = 1, p[1].v = 2.5, p[1].k = 2;
	MPI_Sendrecv(p, 2, MPI_DOUBLE_INT, 0, 0, q, 2, MPI_DOUBLE_INT, 0, 0, MPI_COMM_SELF, &st);
	MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
	LK_CHECK(n == 4, "get_elements on 2 MPI_DOUBLE_INT: %d", n);
	MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
	LK_CHECK(n == 2 && q[1].v == 2.5 && q[1].k == 2, "get_count on MPI_DOUBLE_INT: %d", n);
}

static int self_deletes;

static int get_in_delete(MPI_Comm c, int k, void *val, void *extra)
{
	int flag = 0, rc;
	void *v;

	(void)val, (void)extra;
	rc = MPI_Comm_get_attr(c, k, &v, &flag);
	LK_CHECK(rc == MPI_SUCCESS && flag, "delete callback cannot read its attribute");
	return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
	(void)c, (void)k, (void)extra, (void)in, (void)out;
	*flag = 0;
	return MPI_ERR_OTHER;
}

static int failing_type_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
	(void)t, (void)k, (void)extra, (void)in, (void)out;
	*flag = 0;
	return MPI_ERR_OTHER;
}

static int self_delete(MPI_Comm c, int k, void *val, void *extra)
{
	int fin = 1;

	(void)c, (void)k, (void)extra;
	MPI_Finalized(&fin);
	if (!fin && (long)val == 11 * (2 - self_deletes))
		self_deletes++;
	if (self_deletes == 2 && lk_rank == 0)
		printf("lk_misc: MPI_COMM_SELF attributes deleted at finalize, in LIFO order\n");
	return MPI_SUCCESS;
}

static void test_attrs(void)
{
	MPI_Comm dup, cp = MPI_COMM_WORLD;
	MPI_Datatype t, tcp = MPI_INT;
	int k1, k2, tk, k3, k4, rc;

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, get_in_delete, &k1, NULL);
	MPI_Comm_set_attr(dup, k1, (void *)1);
	MPI_Comm_free(&dup);
	MPI_Comm_free_keyval(&k1);

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
	MPI_Comm_set_attr(MPI_COMM_WORLD, k2, (void *)2);
	rc = MPI_Comm_dup(MPI_COMM_WORLD, &cp);
	LK_CHECK(rc != MPI_SUCCESS && cp == MPI_COMM_NULL, "dup with a failing copy: %d", rc);
	MPI_Comm_delete_attr(MPI_COMM_WORLD, k2);
	MPI_Comm_free_keyval(&k2);

	MPI_Type_contiguous(2, MPI_INT, &t);
	MPI_Type_create_keyval(failing_type_copy, MPI_TYPE_NULL_DELETE_FN, &tk, NULL);
	MPI_Type_set_attr(t, tk, (void *)3);
	rc = MPI_Type_dup(t, &tcp);
	LK_CHECK(rc != MPI_SUCCESS && tcp == MPI_DATATYPE_NULL, "type dup with a failing copy");
	MPI_Type_free(&t);
	MPI_Type_free_keyval(&tk);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

	/* deleted at MPI_Finalize, last set first */
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k3, NULL);
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k4, NULL);
	MPI_Comm_set_attr(MPI_COMM_SELF, k3, (void *)11);
	MPI_Comm_set_attr(MPI_COMM_SELF, k4, (void *)22);
}

static void test_misc(void)
{
	int cls, len = -1, flag = 1, nkeys = -1;
	char str[MPI_MAX_ERROR_STRING], val[8], name[MPI_MAX_OBJECT_NAME];
	float a[2] = {(float)(lk_rank % 2), 0}, b[2];

	MPI_Add_error_class(&cls);
	MPI_Error_string(cls, str, &len);
	LK_CHECK(len == 0 && str[0] == 0, "new error class has string '%s'", str);
	MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
	LK_CHECK(nkeys >= 0, "MPI_INFO_ENV nkeys %d", nkeys);
	MPI_Info_get(MPI_INFO_ENV, "lk-no-such-key", 8, val, &flag);
	LK_CHECK(!flag, "MPI_INFO_ENV has lk-no-such-key");
	MPI_Type_get_name(MPI_C_COMPLEX, name, &len);
	LK_CHECK(strcmp(name, "MPI_C_COMPLEX") == 0 || strcmp(name, "MPI_C_FLOAT_COMPLEX") == 0,
	         "MPI_C_COMPLEX named %s", name);
	/* logical operations on a floating type (an extension MPICH offers too) */
	MPI_Allreduce(a, b, 2, MPI_FLOAT, MPI_LXOR, MPI_COMM_WORLD);
	LK_CHECK(b[0] == (float)((lk_size / 2) % 2) && b[1] == 0, "LXOR on float %g %g", b[0],
	         b[1]);
}

/* Fortran handles: a C handle survives c2f + f2c and still works; a status too. */
static void test_f2c(void)
{
	MPI_Comm dup, c;
	MPI_Group g;
	MPI_Datatype t;
	MPI_Info info;
	MPI_Status st, st2;
	MPI_Fint fst[16]; /* MPI_F_STATUS_SIZE or more (Open MPI 4.1 lacks the macro) */
	int n = -1, cnt = -1, v = 3, w = 0;

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	c = MPI_Comm_f2c(MPI_Comm_c2f(dup));
	MPI_Comm_size(c, &n);
	LK_CHECK(c == dup && n == lk_size, "comm through Fortran");
	MPI_Comm_group(dup, &g);
	LK_CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "group through Fortran");
	MPI_Type_contiguous(2, MPI_INT, &t);
	LK_CHECK(MPI_Type_f2c(MPI_Type_c2f(t)) == t &&
	             MPI_Type_f2c(MPI_Type_c2f(MPI_INT)) == MPI_INT,
	         "type through Fortran");
	LK_CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "op through Fortran");
	MPI_Info_create(&info);
	LK_CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "info through Fortran");
	LK_CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
	         "errhandler through Fortran");
	MPI_Sendrecv(&v, 1, MPI_INT, lk_rank, 4, &w, 1, MPI_INT, lk_rank, 4, c, &st);
	MPI_Status_c2f(&st, fst);
	MPI_Status_f2c(fst, &st2);
	MPI_Get_count(&st2, MPI_INT, &cnt);
	LK_CHECK(w == 3 && cnt == 1 && st2.MPI_SOURCE == lk_rank && st2.MPI_TAG == 4,
	         "status through Fortran");
	MPI_Info_free(&info);
	MPI_Type_free(&t);
	MPI_Group_free(&g);
	MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_misc");
	test_f2c();
	test_fortran_types();
	test_pairs();
	test_attrs();
	test_misc();
	return lk_finish();
}
