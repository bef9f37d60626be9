/* lib/mpi/mpi_greq.c: generalized requests (MPI_Grequest_start/complete) and their completion. */
#include <stdlib.h>

#include "mpii.h"

struct mpii_greq {
	MPI_Grequest_query_function *query;
	MPI_Grequest_free_function *free;
	MPI_Grequest_cancel_function *cancel;
	void *extra;
};

MPII_ALIAS(Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel, void *extra, MPI_Request *req)
{
	struct lk_request *r;
	struct mpii_greq *g;

	MPII_CHECK_INIT("MPI_Grequest_start");
	g = malloc(sizeof(*g));
	r = g ? mpii_req_new(RQ_GREQ) : NULL;
	if (!r) {
		free(g);
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
	}
	*g = (struct mpii_greq){query, free_fn, cancel, extra};
	r->greq = g;
	r->active = 1;
	*req = r;
	return MPI_SUCCESS;
}

/* Run the free callback and release r. The callback's code. */
static int release(struct lk_request *r)
{
	struct mpii_greq *g = r->greq;
	int rc = g->free ? g->free(g->extra) : MPI_SUCCESS;

	free(g);
	r->greq = NULL;
	mpii_req_free(r);
	return rc;
}

MPII_ALIAS(Grequest_complete)
int PMPI_Grequest_complete(MPI_Request req)
{
	if (!req || req->kind != RQ_GREQ || req->done)
		return mpii_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete");
	if (req->freed) /* MPI_Request_free came first: nobody will wait for it */
		return release(req);
	req->done = 1;
	return MPI_SUCCESS;
}

int mpii_greq_status(struct lk_request *r, MPI_Status *st)
{
	MPI_Status tmp = {0};
	MPI_Status *s = st && st != MPI_STATUS_IGNORE ? st : &tmp;
	struct mpii_greq *g = r->greq;

	s->MPI_SOURCE = MPI_UNDEFINED;
	s->MPI_TAG = MPI_UNDEFINED;
	s->MPI_ERROR = MPI_SUCCESS;
	s->lk_cancelled = 0;
	s->lk_count = 0;
	return g->query ? g->query(g->extra, s) : MPI_SUCCESS;
}

int mpii_greq_finish(MPI_Request *req, MPI_Status *st)
{
	struct lk_request *r = *req;
	int rc = mpii_greq_status(r, st), rc2 = release(r);

	*req = MPI_REQUEST_NULL;
	return rc != MPI_SUCCESS ? rc : rc2;
}

int mpii_greq_cancel(struct lk_request *r)
{
	struct mpii_greq *g = r->greq;

	return g->cancel ? g->cancel(g->extra, r->done) : MPI_SUCCESS;
}

int mpii_greq_free(struct lk_request *r)
{
	if (r->done)
		return release(r);
	r->freed = 1;
	return MPI_SUCCESS;
}
