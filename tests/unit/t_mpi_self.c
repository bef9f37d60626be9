/* tests/unit/t_mpi_self.c: libmpi as a singleton: matching engine over the self path, datatypes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "tap.h"

static void matching(void)
{
	int a = 1, b = 2, c = 3, x = 0, flag = 0, cnt = -1, cls;
	MPI_Status st;
	MPI_Request r;

	/* unexpected, then matched out of order by tag, then by ANY_TAG in arrival order */
	MPI_Send(&a, 1, MPI_INT, 0, 10, MPI_COMM_SELF);
	MPI_Send(&b, 1, MPI_INT, 0, 20, MPI_COMM_SELF);
	MPI_Send(&c, 1, MPI_INT, 0, 10, MPI_COMM_SELF);
	MPI_Recv(&x, 1, MPI_INT, 0, 20, MPI_COMM_SELF, &st);
	ok(x == 2 && st.MPI_TAG == 20, "match by tag skips earlier messages");
	MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st);
	ok(x == 1 && st.MPI_TAG == 10 && st.MPI_SOURCE == 0, "ANY_TAG takes the oldest");
	MPI_Iprobe(0, 10, MPI_COMM_SELF, &flag, &st);
	MPI_Get_count(&st, MPI_INT, &cnt);
	ok(flag && cnt == 1, "iprobe sees the last one");
	MPI_Recv(&x, 1, MPI_INT, 0, 10, MPI_COMM_SELF, MPI_STATUS_IGNORE);
	ok(x == 3, "non-overtaking on one tag");
	/* posted first */
	MPI_Irecv(&x, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &r);
	MPI_Test(&r, &flag, &st);
	ok(!flag, "posted receive waits");
	MPI_Send(&a, 1, MPI_INT, 0, 5, MPI_COMM_SELF);
	MPI_Wait(&r, &st);
	ok(x == 1 && r == MPI_REQUEST_NULL, "posted receive completes");
	/* truncation with ERRORS_RETURN */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	{
		int big[4] = {1, 2, 3, 4}, small[2];
		MPI_Send(big, 4, MPI_INT, 0, 1, MPI_COMM_SELF);
		int rc = MPI_Recv(small, 2, MPI_INT, 0, 1, MPI_COMM_SELF, &st);
		MPI_Error_class(rc, &cls);
		ok(cls == MPI_ERR_TRUNCATE && small[1] == 2, "truncation reported");
	}
	/* cancel */
	MPI_Irecv(&x, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &r);
	MPI_Cancel(&r);
	MPI_Wait(&r, &st);
	MPI_Test_cancelled(&st, &flag);
	ok(flag, "posted receive cancelled");
	/* large (rendezvous through the self path) */
	{
		size_t n = 3 << 20;
		char *s = malloc(n), *d = calloc(1, n);
		for (size_t i = 0; i < n; i++)
			s[i] = (char)(i * 13);
		MPI_Isend(s, (int)n, MPI_CHAR, 0, 7, MPI_COMM_SELF, &r);
		MPI_Recv(d, (int)n, MPI_CHAR, 0, 7, MPI_COMM_SELF, &st);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		ok(memcmp(s, d, n) == 0, "3 MiB rendezvous to self");
		free(s);
		free(d);
	}
}

static void datatypes(void)
{
	double m[64], out[64], col[8];
	MPI_Datatype vec, st, rs;
	MPI_Aint lb, ext;
	int sz, pos = 0, bl[2] = {1, 3};
	MPI_Aint dp[2] = {0, 16};
	MPI_Datatype ty[2] = {MPI_CHAR, MPI_INT};
	char packed[512];

	for (int i = 0; i < 64; i++)
		m[i] = i;
	MPI_Type_vector(8, 1, 8, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	MPI_Type_size(vec, &sz);
	MPI_Type_get_extent(vec, &lb, &ext);
	ok(sz == 64 && lb == 0 && ext == 57 * 8, "vector size/extent");
	MPI_Pack(m + 2, 1, vec, packed, sizeof(packed), &pos, MPI_COMM_SELF);
	memcpy(col, packed, sizeof(col));
	ok(pos == 64 && col[7] == 58, "pack a column");
	memset(out, 0, sizeof(out));
	pos = 0;
	MPI_Unpack(packed, sizeof(packed), &pos, out + 1, 1, vec, MPI_COMM_SELF);
	ok(out[1] == 2 && out[57] == 58 && out[2] == 0, "unpack a column");
	MPI_Type_create_struct(2, bl, dp, ty, &st);
	MPI_Type_get_extent(st, &lb, &ext);
	MPI_Type_size(st, &sz);
	ok(sz == 13 && ext == 28, "struct size %d extent %ld (aligned)", sz, (long)ext);
	MPI_Type_create_resized(st, 0, 32, &rs);
	MPI_Type_get_extent(rs, &lb, &ext);
	ok(ext == 32, "resized extent");
	/* a self message through a non-contiguous type at both ends */
	memset(out, 0, sizeof(out));
	MPI_Sendrecv(m, 1, vec, 0, 3, out, 1, vec, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
	ok(out[56] == 56 && out[1] == 0, "vector to vector");
	MPI_Type_free(&rs);
	MPI_Type_free(&st);
	MPI_Type_free(&vec);
}

static void reductions(void)
{
	int in[3] = {1, 5, 3}, io[3] = {4, 2, 3};
	struct {
		float v;
		int k;
	} a = {1.5f, 3}, b = {1.5f, 1};

	MPI_Reduce_local(in, io, 3, MPI_INT, MPI_MAX);
	ok(io[0] == 4 && io[1] == 5 && io[2] == 3, "reduce_local max");
	MPI_Reduce_local(&a, &b, 1, MPI_FLOAT_INT, MPI_MINLOC);
	ok(b.v == 1.5f && b.k == 1, "minloc tie keeps the lower index");
	{
		struct {
			double v;
			int k;
		} p[3] = {{1.0, 1}, {2.0, 2}, {3.0, 3}}, q[3];
		int sz;
		MPI_Aint lb, ext;
		MPI_Type_size(MPI_DOUBLE_INT, &sz);
		MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
		ok(sz == (int)(sizeof(double) + sizeof(int)) && ext == (MPI_Aint)sizeof(p[0]),
		   "MPI_DOUBLE_INT size %d extent %ld", sz, (long)ext);
		MPI_Sendrecv(p, 3, MPI_DOUBLE_INT, 0, 1, q, 3, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF,
		             MPI_STATUS_IGNORE);
		ok(q[2].v == 3.0 && q[2].k == 3 && q[0].k == 1, "pair array through self");
		MPI_Type_size(MPI_SHORT_INT, &sz);
		ok(sz == (int)(sizeof(short) + sizeof(int)), "MPI_SHORT_INT size %d", sz);
	}
	MPI_Allreduce(MPI_IN_PLACE, io, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	ok(io[1] == 5, "allreduce on one rank");
}

/* Buffered sends to self withdrawn before the receive is posted: eager and rendezvous, by
 * MPI_Ibsend and by a persistent MPI_Bsend_init; the buffer space comes back each time. */
static void bsend_cancel(void)
{
	enum { BIG = 1 << 20 };
	int bsize = BIG + MPI_BSEND_OVERHEAD, n, flag, sizes[2] = {16, BIG};
	char *buf = malloc((size_t)bsize), *msg = calloc(BIG, 1);
	void *b;
	MPI_Request r;
	MPI_Status st;

	MPI_Buffer_attach(buf, bsize);
	for (int k = 0; k < 4; k++) {
		n = sizes[k % 2];
		if (k < 2) {
			MPI_Ibsend(msg, n, MPI_CHAR, 0, 7, MPI_COMM_SELF, &r);
		} else {
			MPI_Bsend_init(msg, n, MPI_CHAR, 0, 7, MPI_COMM_SELF, &r);
			MPI_Start(&r);
		}
		MPI_Cancel(&r);
		MPI_Wait(&r, &st);
		flag = 0;
		MPI_Test_cancelled(&st, &flag);
		ok(flag, "buffered send of %d bytes (%s) cancelled", n,
		   k < 2 ? "Ibsend" : "persistent");
		if (k >= 2)
			MPI_Request_free(&r);
		MPI_Iprobe(0, 7, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
		ok(!flag, "the cancelled message is gone");
	}
	/* freed while its cancel is pending: the copy still goes, its space still comes back */
	MPI_Ibsend(msg, BIG, MPI_CHAR, 0, 7, MPI_COMM_SELF, &r);
	MPI_Cancel(&r);
	MPI_Request_free(&r);
	MPI_Buffer_detach(&b, &bsize);
	MPI_Buffer_attach(b, bsize);
	MPI_Iprobe(0, 7, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
	ok(!flag, "a freed, cancelled buffered send is gone");
	MPI_Bsend(msg, BIG, MPI_CHAR, 0, 8, MPI_COMM_SELF); /* needs all the space back */
	MPI_Recv(msg, BIG, MPI_CHAR, 0, 8, MPI_COMM_SELF, MPI_STATUS_IGNORE);
	MPI_Buffer_detach(&b, &bsize);
	ok(b == buf, "detach");
	free(buf);
	free(msg);
}

static int greq_query(void *extra, MPI_Status *st)
{
	(void)extra;
	MPI_Status_set_elements(st, MPI_BYTE, 3);
	return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
	++*(int *)extra;
	return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

static void greq_and_external32(void)
{
	int frees = 0, flag = -1, cnt = -1, v[2] = {0x01020304, -1}, w[2];
	MPI_Request r;
	MPI_Status st;
	unsigned char x[8];
	MPI_Aint pos = 0;

	MPI_Grequest_start(greq_query, greq_free, greq_cancel, &frees, &r);
	MPI_Test(&r, &flag, &st);
	ok(!flag, "generalized request pending");
	MPI_Grequest_complete(r);
	MPI_Test(&r, &flag, &st);
	MPI_Get_count(&st, MPI_BYTE, &cnt);
	ok(flag && cnt == 3 && frees == 1 && r == MPI_REQUEST_NULL, "generalized request done");
	MPI_Pack_external("external32", v, 2, MPI_INT, x, 8, &pos);
	ok(pos == 8 && x[0] == 1 && x[3] == 4 && x[4] == 0xff, "external32 is big-endian");
	pos = 0;
	MPI_Unpack_external("external32", x, 8, &pos, w, 2, MPI_INT);
	ok(w[0] == v[0] && w[1] == -1, "external32 round trip");
}

int main(int argc, char **argv)
{
	int size = 0, flag = 0;

	ok(MPI_Init(&argc, &argv) == MPI_SUCCESS, "singleton init");
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	is_int(size, 1, "world size");
	matching();
	datatypes();
	reductions();
	bsend_cancel();
	greq_and_external32();
	ok(MPI_Finalize() == MPI_SUCCESS, "finalize");
	MPI_Finalized(&flag);
	ok(flag, "finalized");
	return done_testing();
}
