/* tests/mpi/lk_comm.c: communicators, groups, attributes, error handlers, intercommunicators. */
#include <string.h>

#include "lk_util.h"

static int copies, deletes, handler_calls;

static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
	(void)c, (void)k, (void)extra;
	copies++;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int k, void *val, void *extra)
{
	(void)c, (void)k, (void)val, (void)extra;
	deletes++;
	return MPI_SUCCESS;
}

static void handler(MPI_Comm *c, int *code, ...)
{
	(void)c, (void)code;
	handler_calls++;
}

static void test_split_dup(void)
{
	MPI_Comm half, dup, odd;
	MPI_Group wg, hg, eg;
	int hr, hs, sum, res, n, ranks[2] = {0, 1}, out[2];

	/* colour by parity, key reverses the order */
	MPI_Comm_split(MPI_COMM_WORLD, lk_rank % 2, lk_size - lk_rank, &half);
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	LK_CHECK(hs == (lk_size + 1 - lk_rank % 2) / 2, "split size %d", hs);
	LK_CHECK(hr == hs - 1 - lk_rank / 2, "split rank %d", hr);
	MPI_Allreduce(&lk_rank, &sum, 1, MPI_INT, MPI_SUM, half);
	n = 0;
	for (int r = lk_rank % 2; r < lk_size; r += 2)
		n += r;
	LK_CHECK(sum == n, "allreduce on split comm %d want %d", sum, n);
	MPI_Comm_dup(half, &dup);
	MPI_Comm_compare(half, dup, &res);
	LK_CHECK(res == MPI_CONGRUENT, "compare dup %d", res);
	MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
	LK_CHECK(res == MPI_IDENT, "compare ident %d", res);
	/* messages on dup and half must not mix */
	if (hs > 1) {
		int a = 1, b = 2, x, y;
		MPI_Send(&a, 1, MPI_INT, (hr + 1) % hs, 0, half);
		MPI_Send(&b, 1, MPI_INT, (hr + 1) % hs, 0, dup);
		MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 0, dup, MPI_STATUS_IGNORE);
		MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, half, MPI_STATUS_IGNORE);
		LK_CHECK(x == 1 && y == 2, "context isolation %d %d", x, y);
	}
	/* groups */
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Comm_group(half, &hg);
	MPI_Group_translate_ranks(wg, lk_size > 1 ? 2 : 1, ranks, hg, out);
	LK_CHECK(out[lk_rank % 2] != MPI_UNDEFINED, "translate own parity");
	MPI_Group_difference(wg, wg, &eg);
	MPI_Group_size(eg, &n);
	LK_CHECK(n == 0 && eg == MPI_GROUP_EMPTY, "difference empty %d", n);
	MPI_Group_incl(wg, 1, ranks, &eg);
	MPI_Comm_create(MPI_COMM_WORLD, eg, &odd);
	LK_CHECK((lk_rank == 0) == (odd != MPI_COMM_NULL), "comm_create membership");
	if (odd != MPI_COMM_NULL)
		MPI_Comm_free(&odd);
	MPI_Group_free(&eg);
	{
		int range[1][3] = {{0, lk_size - 1, 2}};
		MPI_Group ev, un, in;
		MPI_Group_range_incl(wg, 1, range, &ev);
		MPI_Group_size(ev, &n);
		LK_CHECK(n == (lk_size + 1) / 2, "range_incl %d", n);
		MPI_Group_union(ev, hg, &un);
		MPI_Group_intersection(ev, hg, &in);
		MPI_Group_size(in, &n);
		LK_CHECK(n == (lk_rank % 2 ? 0 : (lk_size + 1) / 2), "intersection %d", n);
		MPI_Group_compare(wg, wg, &res);
		LK_CHECK(res == MPI_IDENT, "group compare");
		MPI_Group_free(&ev);
		MPI_Group_free(&un);
		if (in != MPI_GROUP_EMPTY)
			MPI_Group_free(&in);
	}
	MPI_Group_free(&wg);
	MPI_Group_free(&hg);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&half);
}

static void test_attrs(void)
{
	int key, flag, *tagub, val = 17, *got;
	MPI_Comm dup;
	char name[MPI_MAX_OBJECT_NAME];

	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagub, &flag);
	LK_CHECK(flag && *tagub >= 32767, "tag_ub");
	MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL);
	MPI_Comm_set_attr(MPI_COMM_WORLD, key, &val);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_get_attr(dup, key, &got, &flag);
	LK_CHECK(flag && got == &val && copies == 1, "attr copied on dup");
	MPI_Comm_set_name(dup, "dupworld");
	MPI_Comm_get_name(dup, name, &flag);
	LK_CHECK(strcmp(name, "dupworld") == 0, "comm name '%s'", name);
	MPI_Comm_free(&dup);
	LK_CHECK(deletes == 1, "attr deleted on free %d", deletes);
	MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
	MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag);
	LK_CHECK(!flag && deletes == 2, "attr deleted");
	MPI_Comm_free_keyval(&key);
}

static void test_errhandler(void)
{
	MPI_Errhandler eh;
	MPI_Comm dup;
	int rc;

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_create_errhandler(handler, &eh);
	MPI_Comm_set_errhandler(dup, eh);
	rc = MPI_Send(&rc, 1, MPI_INT, lk_size + 5, 0, dup); /* invalid rank */
	LK_CHECK(handler_calls == 1, "user error handler called %d", handler_calls);
	MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
	rc = MPI_Send(&rc, 1, MPI_INT, lk_size + 5, 0, dup);
	LK_CHECK(rc != MPI_SUCCESS, "errors_return");
	MPI_Error_class(rc, &rc);
	LK_CHECK(rc == MPI_ERR_RANK, "error class %d", rc);
	MPI_Errhandler_free(&eh);
	MPI_Comm_free(&dup);
}

static void test_intercomm(void)
{
	MPI_Comm half, inter, merged;
	int color = lk_rank % 2, rsize, flag, mr, ms, v;

	if (lk_size < 2)
		return;
	MPI_Comm_split(MPI_COMM_WORLD, color, lk_rank, &half);
	/* leaders: world rank 0 (evens) and 1 (odds) */
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &inter);
	MPI_Comm_test_inter(inter, &flag);
	MPI_Comm_remote_size(inter, &rsize);
	LK_CHECK(flag && rsize == (color ? (lk_size + 1) / 2 : lk_size / 2), "intercomm remote %d",
	         rsize);
	/* local rank 0 of each side talks to remote rank 0 */
	{
		int lr;
		MPI_Comm_rank(inter, &lr);
		if (lr == 0) {
			MPI_Sendrecv(&lk_rank, 1, MPI_INT, 0, 5, &v, 1, MPI_INT, 0, 5, inter,
			             MPI_STATUS_IGNORE);
			LK_CHECK(v == (color ? 0 : 1), "intercomm p2p got %d", v);
		}
	}
	MPI_Intercomm_merge(inter, color, &merged);
	MPI_Comm_rank(merged, &mr);
	MPI_Comm_size(merged, &ms);
	LK_CHECK(ms == lk_size, "merged size %d", ms);
	LK_CHECK(color ? mr >= (lk_size + 1) / 2 : mr < (lk_size + 1) / 2, "merged order %d", mr);
	MPI_Allreduce(&lk_rank, &v, 1, MPI_INT, MPI_SUM, merged);
	LK_CHECK(v == lk_size * (lk_size - 1) / 2, "merged allreduce %d", v);
	MPI_Comm_free(&merged);
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);
}

static void test_topo_info(void)
{
	int dims[2] = {0, 0}, per[2] = {1, 0}, coords[2], src, dst, r, n, flag, rem[2] = {1, 0};
	int d3[3] = {0, 3, 0};
	MPI_Comm cart, row, node;
	MPI_Info info;
	char val[16];

	MPI_Dims_create(12, 3, d3);
	LK_CHECK(d3[0] == 2 && d3[1] == 3 && d3[2] == 2, "dims_create %d %d %d", d3[0], d3[1],
	         d3[2]);
	MPI_Dims_create(lk_size, 2, dims);
	LK_CHECK(dims[0] * dims[1] == lk_size && dims[0] >= dims[1], "dims %d x %d", dims[0],
	         dims[1]);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
	MPI_Topo_test(cart, &flag);
	LK_CHECK(flag == MPI_CART, "topo_test");
	MPI_Comm_rank(cart, &r);
	MPI_Cart_coords(cart, r, 2, coords);
	LK_CHECK(coords[0] == r / dims[1] && coords[1] == r % dims[1], "cart coords");
	MPI_Cart_shift(cart, 0, 1, &src, &dst);
	LK_CHECK(dst == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1], "cart shift periodic");
	MPI_Cart_shift(cart, 1, 1, &src, &dst);
	LK_CHECK(coords[1] + 1 < dims[1] ? dst == r + 1 : dst == MPI_PROC_NULL, "cart shift edge");
	MPI_Cart_sub(cart, rem, &row);
	MPI_Comm_size(row, &n);
	LK_CHECK(n == dims[0], "cart_sub size %d", n);
	MPI_Comm_free(&row);
	MPI_Comm_free(&cart);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &n);
	LK_CHECK(n >= 1 && n <= lk_size, "split_type shared %d", n);
	MPI_Comm_free(&node);
	MPI_Info_create(&info);
	MPI_Info_set(info, "color", "blue");
	MPI_Info_set(info, "shape", "round");
	MPI_Info_get(info, "color", sizeof(val) - 1, val, &flag);
	LK_CHECK(flag && strcmp(val, "blue") == 0, "info get");
	MPI_Info_delete(info, "color");
	MPI_Info_get_nkeys(info, &n);
	LK_CHECK(n == 1, "info nkeys %d", n);
	MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
	lk_init(&argc, &argv, "lk_comm");
	test_split_dup();
	test_attrs();
	test_errhandler();
	test_intercomm();
	test_topo_info();
	return lk_finish();
}
