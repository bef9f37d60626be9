/* lib/boot/job_bind.c: the CPUs an agent binds a job's ranks to on its node (bind.h), what it
 * reports (--report-bindings), and the OpenMP variables a bound rank starts with. */
#include "bind.h"
#include "core.h"
#include "job_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The legacy binding (no placement options, or --bind-to core|none|auto only spelled the old
 * way): --bind-to core binds local rank i to the i-th CPU we may use (round robin); auto does so
 * only for Open MPI programs when this node runs at most two ranks and they fit, which is what
 * Open MPI's mpirun does; a -1 is no binding. */
static int legacy_cpu(boot_job_t *j, const struct boot_app *app, int localid)
{
	cpu_set_t set;
	int n = 0, cpus[CPU_SETSIZE];

	if (j->js.bind == BOOT_BIND_NONE)
		return -1;
	if (sched_getaffinity(0, sizeof set, &set) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (n == 0)
		return -1;
	if (j->js.bind == BOOT_BIND_AUTO &&
	    !(j->app_ompi && j->app_ompi[app - j->js.apps] && j->nranks <= 2 && j->nranks <= n))
		return -1;
	return cpus[localid % n];
}

/* The topology, read once per job (NULL when it cannot be read: then no placement options). */
static struct boot_topo *topo(boot_job_t *j, char *err, size_t errlen)
{
	if (!j->topo && (j->topo = calloc(1, sizeof *j->topo)) &&
	    boot_topo_read(j->topo, err, errlen) < 0) {
		free(j->topo);
		j->topo = NULL;
	}
	return j->topo;
}

/* A rank's CPU set from its range of logical PUs. */
static int set_range(boot_job_t *j, struct boot_rank *r, int lo, int hi)
{
	r->bind_lo = lo;
	r->bind_hi = hi;
	if (lo < 0)
		return 0;
	if (!(r->cpus = calloc(1, sizeof *r->cpus)))
		return -1;
	for (int pu = lo; pu < hi; pu++)
		if (j->topo->os[pu] < CPU_SETSIZE)
			CPU_SET(j->topo->os[pu], r->cpus);
	return 0;
}

/* The logical PU of CPU c, or -1. */
static int pu_of(const struct boot_topo *t, int c)
{
	for (int i = 0; i < t->npu; i++)
		if (t->os[i] == c)
			return i;
	return -1;
}

static void report(boot_job_t *j, int fatal, const char *text)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, j->js.jobid);
	core_w_u32(&w, (uint32_t)fatal);
	core_w_str(&w, text);
	boot_job_send(j, BOOT_MSG_REPORT, &w, NULL, 0);
	core_w_free(&w);
}

/* --report-bindings: one line per rank, as Open MPI's mpirun prints them. */
static void report_bindings(boot_job_t *j)
{
	struct core_wbuf w = {0};
	char desc[4096], line[4300];

	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		struct boot_binding b = {r->bind_lo, r->bind_hi};
		boot_bind_describe(j->topo, &b, desc, sizeof desc);
		if (desc[0])
			snprintf(line, sizeof line, "[%s:%d] MCW rank %d bound to %s\n",
			         core_hostname(), (int)getpid(), r->rank, desc);
		else
			snprintf(line, sizeof line,
			         "[%s:%d] MCW rank %d is not bound (or bound to all available "
			         "processors)\n",
			         core_hostname(), (int)getpid(), r->rank);
		core_w_bytes(&w, line, strlen(line));
	}
	core_w_bytes(&w, "", 1);
	if (!w.err)
		report(j, 0, w.p);
	core_w_free(&w);
}

/* OMP_NUM_THREADS and OMP_PLACES of each bound rank (boot_job_env sets them unless the user did:
 * threads on the rank's cores, one place per core). */
static void omp_vars(boot_job_t *j)
{
	char places[4096];

	for (int i = 0; i < j->nranks; i++) {
		struct boot_rank *r = &j->r[i];
		struct boot_binding b = {r->bind_lo, r->bind_hi};
		if (r->bind_lo < 0)
			continue;
		boot_bind_omp_places(j->topo, &j->spec, &b, places, sizeof places);
		r->omp_threads = boot_bind_ncpus(j->topo, &j->spec, &b);
		r->omp_places = places[0] ? strdup(places) : NULL;
	}
}

/* What lamkit's auto binding does on this node: a core each for the ranks of an Open MPI
 * program when there are at most two and they fit (Open MPI's mpirun), else nothing. */
static int auto_core(boot_job_t *j)
{
	for (int a = 0; j->app_ompi && a < j->js.napps; a++)
		if (j->app_ompi[a] && j->nranks <= 2 && j->nranks <= j->topo->n[BOOT_TOPO_CORE])
			return 1;
	return 0;
}

int boot_job_bind(boot_job_t *j)
{
	char err[600], line[800];
	struct boot_binding *b;
	int legacy = !j->js.placement || !*j->js.placement, slots;

	for (int i = 0; i < j->nranks; i++)
		j->r[i].bind_lo = j->r[i].bind_hi = -1;
	boot_bind_init(&j->spec);
	if (legacy) {
		for (int i = 0; i < j->nranks; i++) {
			struct boot_rank *r = &j->r[i];
			const struct boot_app *app = boot_jobspec_app(&j->js, r->rank);
			int c =
			    app && !boot_job_pmi_adopts(j, r->rank) ? legacy_cpu(j, app, i) : -1;
			if (c >= 0 && topo(j, err, sizeof err) && pu_of(j->topo, c) >= 0)
				set_range(j, r, pu_of(j->topo, c), pu_of(j->topo, c) + 1);
			else if (c >= 0 && (r->cpus = calloc(1, sizeof *r->cpus)))
				CPU_SET(c, r->cpus); /* a CPU the topology does not know */
		}
		if (j->topo)
			omp_vars(j);
		return 0;
	}
	if (boot_bind_from_text(&j->spec, j->js.placement) < 0 || !topo(j, err, sizeof err)) {
		if (j->topo == NULL && !err[0])
			snprintf(err, sizeof err, "a placement this agent cannot read: '%s'",
			         j->js.placement);
		goto fail;
	}
	slots = j->js.slots > 0 ? j->js.slots : j->topo->npu;
	if (!(b = malloc(sizeof *b * (size_t)(j->nranks + 1)))) {
		snprintf(err, sizeof err, "out of memory");
		goto fail;
	}
	if (boot_bind_node(j->topo, &j->spec, j->nranks, j->js.size, slots, auto_core(j), b, err,
	                   sizeof err) < 0) {
		free(b);
		goto fail;
	}
	for (int i = 0; i < j->nranks; i++)
		if (set_range(j, &j->r[i], b[i].lo, b[i].hi) < 0) {
			free(b);
			snprintf(err, sizeof err, "out of memory");
			goto fail;
		}
	free(b);
	omp_vars(j);
	if (j->spec.report)
		report_bindings(j);
	return 0;
fail:
	snprintf(line, sizeof line, "on %s: %s", core_hostname(), err);
	report(j, 1, line);
	return -1;
}

void boot_job_bind_free(boot_job_t *j)
{
	for (int i = 0; j->r && i < j->nranks; i++) {
		free(j->r[i].cpus);
		free(j->r[i].omp_places);
	}
	if (j->topo)
		boot_topo_free(j->topo);
	free(j->topo);
	j->topo = NULL;
}
