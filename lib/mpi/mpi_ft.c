/* lib/mpi/mpi_ft.c: failed processes, for jobs started with mpiexec --on-node-failure continue
 * (LAMKIT_FT=1 in the ranks' environment). The launcher names the ranks it lost in the job's KVS
 * key PMI_dead_processes ("2,3,6-7", MPICH's name for it), which a rank reads while it waits
 * (every 50 ms at most) and whenever the transport fails. A failed rank is forgotten by the
 * transport (tp_forget), and what involves it completes with MPI_ERR_PROC_FAILED instead of
 * waiting forever: a send or a receive naming it, a collective that needs it. A receive from
 * MPI_ANY_SOURCE is not failed (it may still match a live sender). The ULFM proposal's
 * MPIX_Comm_failure_ack, MPIX_Comm_failure_get_acked and MPIX_Comm_get_failed tell who. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpii.h"
#include "pmi.h"

#define FT_POLL_S    0.05 /* between two looks at PMI_dead_processes while waiting */
#define FT_RECOVER_S 15.0 /* a transport failure waits this long for the launcher's word */

static double next_poll;
static int nacked; /* failures acknowledged (MPIX_Comm_failure_ack): the first nacked marked */
static int *order; /* job ranks in the order they were marked failed */

int mpii_pmi_get(const char *key, char *val, size_t len);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mpii_ft_init(void)
{
	const char *e = getenv("LAMKIT_FT");

	if (!e || strcmp(e, "1") != 0 || mpii.size < 2)
		return;
	mpii.failed = calloc((size_t)mpii.size, 1);
	order = calloc((size_t)mpii.size, sizeof *order);
	mpii.ft = mpii.failed && order;
}

void mpii_ft_fini(void)
{
	free(mpii.failed);
	free(order);
	mpii.failed = NULL;
	order = NULL;
	mpii.ft = mpii.nfailed = nacked = 0;
}

void mpii_ft_mark(int w)
{
	if (!mpii.ft || w < 0 || w >= mpii.size || w == mpii.rank || mpii.failed[w])
		return;
	mpii.failed[w] = 1;
	order[mpii.nfailed++] = w;
	tp_forget(mpii.tp, w);
	mpii_fail_posted(w);
}

/* "2,3,6-7" -> mark each. How many were new. */
static int mark_list(const char *s)
{
	int before = mpii.nfailed;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long w = a; w <= b && w - a < (1 << 20); w++)
			mpii_ft_mark((int)w);
		s = *end == ',' ? end + 1 : end;
		if (*s && *s != ',' && (*s < '0' || *s > '9'))
			break;
	}
	return mpii.nfailed - before;
}

int mpii_ft_poll(int force)
{
	char v[1024];
	double t;

	if (!mpii.ft)
		return 0;
	t = now_s();
	if (!force && t < next_poll)
		return 0;
	next_poll = t + FT_POLL_S;
	if (mpii_pmi_get("PMI_dead_processes", v, sizeof v) < 0)
		return 0; /* not there: nobody failed */
	return mark_list(v);
}

int mpii_ft_recover(void)
{
	double end = now_s() + FT_RECOVER_S;

	if (!mpii.ft)
		return 0;
	while (now_s() < end) {
		if (mpii_ft_poll(1) > 0)
			return 1;
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
	return 0;
}

void mpii_ft_fail_req(struct lk_request *r)
{
	int w = -1;

	if (r->done || (r->kind != RQ_SEND && r->kind != RQ_RECV) || !r->comm)
		return;
	if (r->kind == RQ_SEND)
		w = r->wpeer;
	else if (r->peer >= 0)
		w = mpii_world_of(r->comm, r->peer);
	if (!mpii_ft_failed(w))
		return;
	if (r->kind == RQ_RECV && mpii_cancel_recv(r)) /* still posted: take it back */
		r->cancelled = r->st.lk_cancelled = 0;
	r->st.MPI_SOURCE = r->kind == RQ_RECV ? r->peer : r->st.MPI_SOURCE;
	r->st.MPI_ERROR = MPI_ERR_PROC_FAILED;
	if (!r->done)
		mpii_complete(r);
}

/* The group of comm's ranks among the first n failed. */
static int failed_group(MPI_Comm comm, int n, MPI_Group *out, const char *fn)
{
	struct mpii_comm *c = mpii_comm(comm);
	int *world, k = 0;

	if (!c)
		return mpii_err(NULL, MPI_ERR_COMM, fn);
	if (n < 0) /* all known: ask the launcher first */
		mpii_ft_poll(1), n = mpii.nfailed;
	world = malloc(((size_t)n + 1) * sizeof *world);
	if (!world)
		return mpii_err(c, MPI_ERR_NO_MEM, fn);
	for (int i = 0; i < n; i++) {
		struct mpii_group *g = c->inter ? c->rgrp : c->grp;
		for (int r = 0; r < g->size; r++)
			if (g->world[r] == order[i])
				world[k++] = order[i];
	}
	struct mpii_group *g = mpii_group_new(k, world);
	if (!g) {
		free(world);
		return mpii_err(c, MPI_ERR_NO_MEM, fn);
	}
	*out = g->handle;
	return MPI_SUCCESS;
}

MPII_PRAGMA(weak MPIX_Comm_failure_ack = PMPIX_Comm_failure_ack)
int PMPIX_Comm_failure_ack(MPI_Comm comm)
{
	if (!mpii_comm(comm))
		return mpii_err(NULL, MPI_ERR_COMM, "MPIX_Comm_failure_ack");
	mpii_ft_poll(1);
	nacked = mpii.nfailed;
	return MPI_SUCCESS;
}

MPII_PRAGMA(weak MPIX_Comm_failure_get_acked = PMPIX_Comm_failure_get_acked)
int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failed)
{
	return failed_group(comm, nacked, failed, "MPIX_Comm_failure_get_acked");
}

MPII_PRAGMA(weak MPIX_Comm_get_failed = PMPIX_Comm_get_failed)
int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failed)
{
	return failed_group(comm, -1, failed, "MPIX_Comm_get_failed");
}
