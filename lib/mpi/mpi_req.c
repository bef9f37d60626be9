/* lib/mpi/mpi_req.c: request completion (Wait/Test families), cancel, persistent start, counts. */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

int mpii_start_persistent(struct lk_request *r);

static void empty_status(MPI_Status *st)
{
	if (!st || st == MPI_STATUS_IGNORE)
		return;
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
	st->MPI_ERROR = MPI_SUCCESS;
	st->lk_count = 0;
	st->lk_cancelled = 0;
}

/* Inactive: null handle or a persistent request not started. */
static int inactive(const struct lk_request *r)
{
	return !r || (r->persistent && !r->active);
}

/* r is done: report and release it. Returns the status error. Inlined: MPI_Waitall runs it
 * once per message. */
static inline __attribute__((always_inline)) int finish(MPI_Request *req, MPI_Status *st)
{
	struct lk_request *r = *req;
	int rc;

	if (inactive(r)) {
		empty_status(st);
		return MPI_SUCCESS;
	}
	if (r->kind == RQ_GREQ)
		return mpii_greq_finish(req, st);
	rc = r->st.MPI_ERROR;
	if (st && st != MPI_STATUS_IGNORE)
		*st = r->st;
	if (r->persistent) {
		r->active = 0;
	} else {
		mpii_req_free(r);
		*req = MPI_REQUEST_NULL;
	}
	return rc;
}

static struct mpii_comm *comm_of(const struct lk_request *r)
{
	return r && r->comm && r->comm->handle ? r->comm : NULL;
}

MPII_ALIAS(Wait)
int PMPI_Wait(MPI_Request *req, MPI_Status *status)
{
	struct lk_request *r = *req;
	struct mpii_comm *c = comm_of(r);

	if (!inactive(r))
		while (!r->done) {
			mpii_progress_wait();
			mpii_ft_check(r);
		}
	return mpii_err(c, finish(req, status), "MPI_Wait");
}

MPII_ALIAS(Test)
int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	struct lk_request *r = *req;
	struct mpii_comm *c = comm_of(r);

	if (!inactive(r) && !r->done) {
		mpii_progress();
		mpii_ft_check(r);
	}
	*flag = inactive(r) || r->done;
	if (!*flag)
		return MPI_SUCCESS;
	return mpii_err(c, finish(req, status), "MPI_Test");
}

static MPI_Status *nth(MPI_Status *v, int i)
{
	return v == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &v[i];
}

/* Finish every request of a completed Waitall/Testall. */
static int finish_all(int n, MPI_Request reqs[], MPI_Status *sts, const char *fn)
{
	int err = 0;
	struct mpii_comm *c = NULL;

	for (int i = 0; i < n; i++) {
		c = c ? c : comm_of(reqs[i]);
		if (finish(&reqs[i], nth(sts, i)) != MPI_SUCCESS)
			err = 1;
	}
	return err ? mpii_err(c, MPI_ERR_IN_STATUS, fn) : MPI_SUCCESS;
}

MPII_ALIAS(Waitall)
int PMPI_Waitall(int n, MPI_Request reqs[], MPI_Status *sts)
{
	for (int i = 0; i < n; i++) {
		struct lk_request *r = reqs[i];
		if (!inactive(r))
			while (!r->done) { /* the requests left bound the messages worth taking */
				mpii_progress_wait_n(n - i);
				mpii_ft_check(r);
			}
	}
	return finish_all(n, reqs, sts, "MPI_Waitall");
}

MPII_ALIAS(Testall)
int PMPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status *sts)
{
	mpii_progress();
	for (int i = 0; i < n; i++) {
		if (!inactive(reqs[i]))
			mpii_ft_check(reqs[i]);
		if (!inactive(reqs[i]) && !reqs[i]->done) {
			*flag = 0;
			return MPI_SUCCESS;
		}
	}
	*flag = 1;
	return finish_all(n, reqs, sts, "MPI_Testall");
}

/* Index of a done active request, -2 if none is active, -1 if active ones are pending. */
static int scan_any(int n, MPI_Request reqs[])
{
	int active = 0;

	for (int i = 0; i < n; i++) {
		if (inactive(reqs[i]))
			continue;
		active = 1;
		mpii_ft_check(reqs[i]);
		if (reqs[i]->done)
			return i;
	}
	return active ? -1 : -2;
}

static int any(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st, int block,
               const char *fn)
{
	int k = scan_any(n, reqs);
	struct mpii_comm *c;

	while (k == -1) {
		if (block)
			mpii_progress_wait();
		else
			mpii_progress();
		k = scan_any(n, reqs);
		if (!block)
			break;
	}
	if (flag)
		*flag = k != -1;
	if (k == -1)
		return MPI_SUCCESS;
	if (k == -2) {
		*index = MPI_UNDEFINED;
		empty_status(st);
		return MPI_SUCCESS;
	}
	*index = k;
	c = comm_of(reqs[k]);
	return mpii_err(c, finish(&reqs[k], st), fn);
}

MPII_ALIAS(Waitany)
int PMPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	return any(n, reqs, index, NULL, status, 1, "MPI_Waitany");
}

MPII_ALIAS(Testany)
int PMPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	*index = MPI_UNDEFINED;
	return any(n, reqs, index, flag, status, 0, "MPI_Testany");
}

static int some(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status *sts, int block,
                const char *fn)
{
	int k, cnt = 0, err = 0;
	struct mpii_comm *c = NULL;

	k = scan_any(n, reqs);
	while (k == -1 && block) {
		mpii_progress_wait();
		k = scan_any(n, reqs);
	}
	if (k == -1 && !block) {
		mpii_progress();
		k = scan_any(n, reqs);
	}
	if (k == -2) {
		*outcount = MPI_UNDEFINED;
		return MPI_SUCCESS;
	}
	for (int i = 0; i < n; i++) {
		if (inactive(reqs[i]) || !reqs[i]->done)
			continue;
		c = c ? c : comm_of(reqs[i]);
		idx[cnt] = i;
		if (finish(&reqs[i], nth(sts, cnt)) != MPI_SUCCESS)
			err = 1;
		cnt++;
	}
	*outcount = cnt;
	return err ? mpii_err(c, MPI_ERR_IN_STATUS, fn) : MPI_SUCCESS;
}

MPII_ALIAS(Waitsome)
int PMPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *sts)
{
	return some(n, reqs, outcount, indices, sts, 1, "MPI_Waitsome");
}

MPII_ALIAS(Testsome)
int PMPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *sts)
{
	return some(n, reqs, outcount, indices, sts, 0, "MPI_Testsome");
}

MPII_ALIAS(Request_get_status)
int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
	if (inactive(req)) {
		*flag = 1;
		empty_status(status);
		return MPI_SUCCESS;
	}
	if (!req->done)
		mpii_progress();
	*flag = req->done;
	if (*flag && req->kind == RQ_GREQ)
		return mpii_err(NULL, mpii_greq_status(req, status), "MPI_Request_get_status");
	if (*flag && status && status != MPI_STATUS_IGNORE)
		*status = req->st;
	return MPI_SUCCESS;
}

MPII_ALIAS(Cancel)
int PMPI_Cancel(MPI_Request *req)
{
	struct lk_request *r = *req;

	if (!r)
		return mpii_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
	if (r->kind == RQ_GREQ)
		return mpii_err(NULL, mpii_greq_cancel(r), "MPI_Cancel");
	if (r->kind == RQ_RECV && r->active && !r->done)
		mpii_cancel_recv(r);
	/* a send is withdrawn only if its receiver has not matched it yet (asked, answered later;
	 * sends to MPI_PROC_NULL are never cancelled) */
	if (r->kind == RQ_SEND && r->comm && r->mode == MODE_BUF && (r->active || r->done))
		mpii_cancel_bsend(r);
	else if (r->kind == RQ_SEND && r->comm && (r->active || r->done))
		mpii_cancel_send(r);
	return MPI_SUCCESS;
}

MPII_ALIAS(Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	*flag = status->lk_cancelled;
	return MPI_SUCCESS;
}

MPII_ALIAS(Status_set_cancelled)
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	status->lk_cancelled = flag;
	return MPI_SUCCESS;
}

MPII_ALIAS(Request_free)
int PMPI_Request_free(MPI_Request *req)
{
	struct lk_request *r = *req;

	if (!r)
		return mpii_err(NULL, MPI_ERR_REQUEST, "MPI_Request_free");
	*req = MPI_REQUEST_NULL;
	if (r->kind == RQ_GREQ)
		return mpii_err(NULL, mpii_greq_free(r), "MPI_Request_free");
	if (r->done || (r->persistent && !r->active))
		mpii_req_free(r);
	else
		r->freed = 1;
	return MPI_SUCCESS;
}

MPII_ALIAS(Start)
int PMPI_Start(MPI_Request *req)
{
	struct lk_request *r = *req;

	if (!r)
		return mpii_err(NULL, MPI_ERR_REQUEST, "MPI_Start");
	return mpii_err(comm_of(r), mpii_start_persistent(r), "MPI_Start");
}

MPII_ALIAS(Startall)
int PMPI_Startall(int n, MPI_Request reqs[])
{
	for (int i = 0; i < n; i++) {
		int rc = PMPI_Start(&reqs[i]);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

MPII_ALIAS(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype type, int *count)
{
	struct mpii_dtype *d = mpii_dt(type);

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Get_count");
	if (!d->size)
		*count = 0;
	else if ((size_t)status->lk_count % d->size)
		*count = MPI_UNDEFINED;
	else
		*count = (int)((size_t)status->lk_count / d->size);
	return MPI_SUCCESS;
}

MPII_ALIAS(Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype type, int *count)
{
	struct mpii_dtype *d = mpii_dt(type);
	long long n;

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Get_elements");
	n = mpii_elements(d, (size_t)status->lk_count);
	*count = n < 0 ? MPI_UNDEFINED : (int)n;
	return MPI_SUCCESS;
}

MPII_ALIAS(Status_set_elements)
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype type, int count)
{
	struct mpii_dtype *d = mpii_dt(type);
	size_t per = 0;

	if (!d)
		return mpii_err(NULL, MPI_ERR_TYPE, "MPI_Status_set_elements");
	for (int k = 0; k < d->nseg; k++)
		per = mpii_basic_size(d->seg[k].basic);
	status->lk_count = (long long)(per ? per : d->size) * count;
	return MPI_SUCCESS;
}
