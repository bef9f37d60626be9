/* tests/mpi/lk_rma.c: one-sided communication: every window flavour, fence, PSCW, locks, atomics,
 * derived target types, and passive-target progress while the target computes. */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lk_util.h"

#define N 64

/* Fence epochs: put to the right neighbour, get from the left, sum into rank 0. */
static void test_fence(MPI_Win win, int *mem)
{
	int right = (lk_rank + 1) % lk_size, left = (lk_rank + lk_size - 1) % lk_size;
	int src[N], got[N], one = lk_rank + 1;

	for (int i = 0; i < N; i++) {
		mem[i] = -1;
		src[i] = lk_rank * 1000 + i;
	}
	MPI_Win_fence(0, win);
	MPI_Put(src, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win);
	MPI_Accumulate(&one, 1, MPI_INT, 0, N - 1, 1, MPI_INT, MPI_SUM, win);
	MPI_Win_fence(0, win);
	for (int i = 0; i < N / 2; i++)
		LK_CHECK(mem[i] == left * 1000 + i, "fence put: mem[%d]=%d", i, mem[i]);
	if (lk_rank == 0)
		LK_CHECK(mem[N - 1] == -1 + lk_size * (lk_size + 1) / 2, "fence accumulate %d",
		         mem[N - 1]);
	MPI_Get(got, N / 2, MPI_INT, left, 0, N / 2, MPI_INT, win);
	MPI_Win_fence(0, win);
	for (int i = 0; i < N / 2; i++)
		LK_CHECK(got[i] == ((left + lk_size - 1) % lk_size) * 1000 + i, "fence get [%d]=%d",
		         i, got[i]);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}

/* A strided target type: 4 blocks of 2 ints every 5 ints, against 8 contiguous ints. */
static void test_derived(MPI_Win win, int *mem)
{
	MPI_Datatype vec;
	int src[8], back[8], right = (lk_rank + 1) % lk_size,
	                     left = (lk_rank + lk_size - 1) % lk_size;

	MPI_Type_vector(4, 2, 5, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (int i = 0; i < N; i++)
		mem[i] = 0;
	for (int i = 0; i < 8; i++)
		src[i] = lk_rank * 100 + i + 1;
	MPI_Win_fence(0, win);
	MPI_Put(src, 8, MPI_INT, right, 1, 1, vec, win);
	MPI_Win_fence(0, win);
	for (int b = 0, k = 0; b < 4; b++)
		for (int j = 0; j < 5; j++) {
			int want = j < 2 ? left * 100 + (k++) + 1 : 0;
			LK_CHECK(mem[1 + b * 5 + j] == want, "vector put: mem[%d]=%d want %d",
			         1 + b * 5 + j, mem[1 + b * 5 + j], want);
		}
	MPI_Win_fence(0, win); /* everyone has checked before the next updates */
	MPI_Accumulate(src, 8, MPI_INT, right, 1, 1, vec, MPI_SUM, win);
	MPI_Win_fence(0, win);
	MPI_Get(back, 8, MPI_INT, right, 1, 1, vec, win);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	for (int i = 0; i < 8; i++)
		LK_CHECK(back[i] == 2 * src[i], "vector accumulate+get [%d]=%d", i, back[i]);
	MPI_Type_free(&vec);
}

/* Post/start/complete/wait: expose to the left neighbour, access the right one. */
static void test_pscw(MPI_Win win, int *mem)
{
	MPI_Group world, lg, rg;
	int right = (lk_rank + 1) % lk_size, left = (lk_rank + lk_size - 1) % lk_size, v, flag = 0;

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &left, &lg);
	MPI_Group_incl(world, 1, &right, &rg);
	mem[3] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_post(lg, 0, win);
	MPI_Win_start(rg, 0, win);
	v = lk_rank + 7;
	MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win);
	MPI_Win_complete(win);
	while (!flag)
		MPI_Win_test(win, &flag);
	LK_CHECK(mem[3] == left + 7, "pscw put: %d", mem[3]);
	MPI_Group_free(&lg);
	MPI_Group_free(&rg);
	MPI_Group_free(&world);
}

/* Atomics under lock_all: every fetched counter value is unique, the total adds up; exactly one
 * compare-and-swap wins. */
static void test_atomics(MPI_Win win, int *mem)
{
	enum { ITER = 200 };
	int got[ITER], one = 1, sum = 0, mine = lk_rank, old = -2, minus = -1, wins, bad = 0;
	long long total;

	mem[0] = 0;
	mem[1] = -1;
	MPI_Win_fence(0, win);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	MPI_Win_lock_all(0, win);
	for (int i = 0; i < ITER; i++)
		MPI_Fetch_and_op(&one, &got[i], MPI_INT, 0, 0, MPI_SUM, win);
	MPI_Compare_and_swap(&mine, &minus, &old, MPI_INT, 0, 1, win);
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 1; i < ITER; i++)
		bad += got[i] <= got[i - 1];
	LK_CHECK(!bad, "fetch_and_op values not increasing (%d times)", bad);
	for (int i = 0; i < ITER; i++)
		sum += got[i];
	total = sum;
	MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	{ /* distinct values 0 .. n*ITER-1 sum to this */
		long long n = (long long)lk_size * ITER;
		LK_CHECK(total == n * (n - 1) / 2, "fetch_and_op values not unique: sum %lld",
		         total);
	}
	if (lk_rank == 0)
		LK_CHECK(mem[0] == lk_size * ITER, "fetch_and_op counter %d", mem[0]);
	wins = old == -1;
	MPI_Allreduce(MPI_IN_PLACE, &wins, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LK_CHECK(wins == 1, "%d compare-and-swaps won", wins);
	if (lk_rank == 0)
		LK_CHECK(mem[1] >= 0 && mem[1] < lk_size, "cas left %d", mem[1]);
	/* get_accumulate: NO_OP reads, REPLACE swaps */
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == lk_size - 1) {
		int r = -5, nv = 4242, prev = -5;
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Get_accumulate(NULL, 0, MPI_INT, &r, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP,
		                   win);
		MPI_Get_accumulate(&nv, 1, MPI_INT, &prev, 1, MPI_INT, 0, 0, 1, MPI_INT,
		                   MPI_REPLACE, win);
		MPI_Win_unlock(0, win);
		LK_CHECK(r == lk_size * ITER && prev == r, "get_accumulate no_op %d replace %d", r,
		         prev);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		LK_CHECK(mem[0] == 4242, "replace result %d", mem[0]);
		MPI_Win_unlock(0, win);
	}
}

/* Read-modify-write by get and put under an exclusive lock: no update is lost. */
static void test_exclusive(MPI_Win win, int *mem)
{
	enum { ITER = 100 };
	int v;

	mem[5] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < ITER; i++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Get(&v, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
		MPI_Win_flush(0, win);
		v++;
		MPI_Put(&v, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		LK_CHECK(mem[5] == lk_size * ITER, "exclusive lock lost updates: %d of %d", mem[5],
		         lk_size * ITER);
		MPI_Win_unlock(0, win);
	}
}

/* Rank 0 computes without calling MPI until the others' passive-target updates have all
 * landed in its window (lamkit needs no call from the target; other MPIs get MPI_Iprobe). */
static void test_passive(MPI_Win win, volatile int *mem)
{
	int one = 1;

	mem[7] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		time_t t0 = time(NULL);
		int flag, seen = 0;
		for (long spin = 0; spin < 2000000000L; spin++) {
			__sync_synchronize();
			seen = mem[7];
			if (seen >= lk_size - 1)
				break;
#ifndef LAMKIT_MPI
			MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
#else
			(void)flag;
			if (spin % 4096 == 0 && time(NULL) - t0 > 30)
				break;
#endif
		}
		LK_CHECK(seen == lk_size - 1, "passive target: %d of %d updates seen in %ld s",
		         seen, lk_size - 1, (long)(time(NULL) - t0));
	} else {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Accumulate(&one, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_SUM, win);
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* MAXLOC on a pair type, whose packed form (12 bytes) differs from its layout (16). */
static void test_pair(MPI_Win win, int *mem)
{
	struct {
		double v;
		int k;
	} *t = (void *)(mem + 8), mine[2];

	if (lk_rank == 0)
		for (int i = 0; i < 2; i++)
			t[i].v = -1, t[i].k = -1;
	for (int i = 0; i < 2; i++) {
		mine[i].v = (lk_rank * 7 + i * 3) % 5;
		mine[i].k = lk_rank;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	MPI_Accumulate(mine, 2, MPI_DOUBLE_INT, 0, 8, 2, MPI_DOUBLE_INT, MPI_MAXLOC, win);
	MPI_Win_unlock(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (lk_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		for (int i = 0; i < 2; i++) {
			double best = -1;
			int who = -1;
			for (int p = 0; p < lk_size; p++)
				if ((p * 7 + i * 3) % 5 > best)
					best = (p * 7 + i * 3) % 5, who = p;
			LK_CHECK(t[i].v == best && t[i].k == who, "maxloc accumulate [%d]: %g,%d",
			         i, t[i].v, t[i].k);
		}
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void run_all(MPI_Win win, int *mem, const char *what)
{
	(void)what;
	test_fence(win, mem);
	test_derived(win, mem);
	test_pscw(win, mem);
	test_atomics(win, mem);
	test_exclusive(win, mem);
	test_pair(win, mem);
	test_passive(win, mem);
}

static void test_shared(void)
{
	MPI_Comm node;
	MPI_Win win;
	int *mine, nr, me, *peer, du, flag;
	MPI_Aint sz;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &nr);
	MPI_Comm_rank(node, &me);
	MPI_Win_allocate_shared((MPI_Aint)(sizeof(int) * (me + 1)), sizeof(int), MPI_INFO_NULL,
	                        node, &mine, &win);
	MPI_Win_lock_all(0, win);
	for (int i = 0; i <= me; i++)
		mine[i] = me * 10 + i;
	MPI_Win_sync(win);
	MPI_Barrier(node);
	MPI_Win_sync(win);
	for (int r = 0; r < nr; r++) {
		MPI_Win_shared_query(win, r, &sz, &du, &peer);
		LK_CHECK(sz == (MPI_Aint)sizeof(int) * (r + 1) && du == (int)sizeof(int),
		         "shared_query size %ld unit %d", (long)sz, du);
		for (int i = 0; i <= r; i++)
			LK_CHECK(peer[i] == r * 10 + i, "shared load rank %d [%d]=%d", r, i,
			         peer[i]);
		if (r > 0) { /* contiguous by default */
			int *prev;
			MPI_Aint psz;
			MPI_Win_shared_query(win, r - 1, &psz, &du, &prev);
			LK_CHECK((char *)prev + psz == (char *)peer,
			         "shared window not contiguous");
		}
	}
	MPI_Win_unlock_all(win);
	{
		int *flav;
		MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flav, &flag);
		LK_CHECK(flag && *flav == MPI_WIN_FLAVOR_SHARED, "flavor attribute");
	}
	MPI_Win_free(&win);
	LK_CHECK(win == MPI_WIN_NULL, "win_free sets MPI_WIN_NULL");
	MPI_Comm_free(&node);
}

static int deleted, eh_calls, eh_class;
static MPI_Win eh_win = MPI_WIN_NULL;

static int del_cb(MPI_Win w, int key, void *val, void *extra)
{
	(void)key;
	deleted += (int)(intptr_t)val;
	*(MPI_Win *)extra = w;
	return MPI_SUCCESS;
}

static void win_eh(MPI_Win *w, int *code, ...)
{
	MPI_Error_class(*code, &eh_class);
	eh_calls++;
	eh_win = *w;
}

static void info_is(MPI_Win win, const char *key, const char *want)
{
	MPI_Info info;
	char v[MPI_MAX_INFO_VAL + 1] = "";
	int flag = 0;

	MPI_Win_get_info(win, &info);
	MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
	MPI_Info_free(&info);
	if (want)
		LK_CHECK(flag && strcmp(v, want) == 0, "win info %s: '%s' (set %d), want '%s'", key,
		         v, flag, want);
	else
		LK_CHECK(!flag, "win info %s reported ('%s'), should be ignored", key, v);
}

/* A window's attributes (delete callbacks on replace, delete and MPI_Win_free), error handler
 * (its own, MPI_ERRORS_ARE_FATAL until set, whatever its communicator has; given the window),
 * info hints (reported as set, unknown keys ignored) and name; MPI_Aint arithmetic. */
static void test_win_objects(void)
{
	MPI_Win win, seen = MPI_WIN_NULL;
	MPI_Info info;
	MPI_Errhandler eh, got;
	MPI_Aint a0, a3;
	int key, flag, len, *buf, x = 1, rc, cls = -1, arr[4];
	void *val;
	char name[MPI_MAX_OBJECT_NAME];

	MPI_Info_create(&info);
	MPI_Info_set(info, "no_locks", "true");
	MPI_Info_set(info, "lk_unknown_key", "1");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Win_allocate((MPI_Aint)sizeof(int) * 4, sizeof(int), info, MPI_COMM_WORLD, &buf, &win);
	MPI_Info_free(&info);
	MPI_Win_get_errhandler(win, &got);
	LK_CHECK(got == MPI_ERRORS_ARE_FATAL, "a new window's handler is not MPI_ERRORS_ARE_FATAL");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

	MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_cb, &key, &seen);
	MPI_Win_set_attr(win, key, (void *)1);
	MPI_Win_set_attr(win, key, (void *)10);
	MPI_Win_get_attr(win, key, &val, &flag);
	LK_CHECK(flag && val == (void *)10, "win attribute read back: flag %d", flag);
	LK_CHECK(deleted == 1 && seen == win, "replacing an attribute deletes the old (%d)",
	         deleted);
	MPI_Win_delete_attr(win, key);
	MPI_Win_get_attr(win, key, &val, &flag);
	LK_CHECK(!flag && deleted == 11, "MPI_Win_delete_attr: flag %d deleted %d", flag, deleted);
	MPI_Win_set_attr(win, key, (void *)100);

	MPI_Win_create_errhandler(win_eh, &eh);
	MPI_Win_set_errhandler(win, eh);
	MPI_Errhandler_free(&eh);
	MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
	LK_CHECK(eh_calls == 1 && eh_class == MPI_ERR_OTHER && eh_win == win,
	         "MPI_Win_call_errhandler: %d calls, class %d", eh_calls, eh_class);
	MPI_Win_fence(0, win);
	rc = MPI_Put(&x, 1, MPI_INT, lk_size, 0, 1, MPI_INT, win); /* no such rank */
	MPI_Win_fence(0, win);
	MPI_Error_class(rc, &cls);
	LK_CHECK(eh_calls == 2 && eh_class == MPI_ERR_RANK && eh_win == win && cls == MPI_ERR_RANK,
	         "put to a bad rank: handler calls %d class %d, returned class %d", eh_calls,
	         eh_class, cls);

	info_is(win, "no_locks", "true");
	info_is(win, "accumulate_ordering", "rar,raw,war,waw");
	info_is(win, "lk_unknown_key", NULL);
	MPI_Info_create(&info);
	MPI_Info_set(info, "accumulate_ordering", "none");
	MPI_Info_set(info, "same_disp_unit", "true");
	MPI_Win_set_info(win, info);
	MPI_Info_free(&info);
	info_is(win, "accumulate_ordering", "none");
	info_is(win, "same_disp_unit", "true");

	MPI_Win_get_name(win, name, &len);
	LK_CHECK(len == 0, "unnamed window's name '%s'", name);
	MPI_Win_set_name(win, "lk-win");
	MPI_Win_get_name(win, name, &len);
	LK_CHECK(len == 6 && strcmp(name, "lk-win") == 0, "window name '%s'", name);

	MPI_Win_free(&win);
	LK_CHECK(deleted == 111, "MPI_Win_free runs the delete callback (%d)", deleted);
	MPI_Win_free_keyval(&key);
	LK_CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval resets the key");

	MPI_Get_address(&arr[0], &a0);
	MPI_Get_address(&arr[3], &a3);
	LK_CHECK(MPI_Aint_diff(a3, a0) == (MPI_Aint)(3 * sizeof(int)) &&
	             MPI_Aint_add(a0, (MPI_Aint)(3 * sizeof(int))) == a3,
	         "MPI_Aint_add / MPI_Aint_diff");
}

int main(int argc, char **argv)
{
	MPI_Win win;
	int *mem = malloc(sizeof(int) * N), *amem, flag;
	void *base;
	MPI_Aint *size;

	lk_init(&argc, &argv, "lk_rma");
	MPI_Win_create(mem, (MPI_Aint)sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
	               &win);
	MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
	LK_CHECK(flag && base == mem, "MPI_WIN_BASE");
	MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag);
	LK_CHECK(flag && *size == (MPI_Aint)sizeof(int) * N, "MPI_WIN_SIZE");
	run_all(win, mem, "create");
	MPI_Win_free(&win);
	MPI_Win_allocate((MPI_Aint)sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
	                 &amem, &win);
	run_all(win, amem, "allocate");
#ifdef LAMKIT_MPI
	{ /* outside the target's window: an error, not a write into its other memory */
		int x = 1, rc;
		MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		rc = MPI_Put(&x, 1, MPI_INT, 0, N, 1, MPI_INT, win);
		MPI_Win_unlock(0, win);
		LK_CHECK(rc == MPI_ERR_RMA_RANGE, "put past the window end gave %d", rc);
	}
#endif
	MPI_Win_free(&win);
	test_shared();
	test_win_objects();
	free(mem);
	return lk_finish();
}
