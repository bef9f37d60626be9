/* lib/boot/job_env.c: the environment each rank starts with: the job's (after -genv*), the
 * app's -env, then what PMI and the MPI library need. Open MPI programs get only their
 * variables and MPICH programs only theirs. */
#include "core.h"
#include "elfinfo.h"
#include "job_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct envb {
	char **v;
	int n, cap, err;
};

static int key_eq(const char *a, const char *b)
{
	size_t i = 0;

	while (a[i] && a[i] == b[i] && a[i] != '=')
		i++;
	return (a[i] == '=' || !a[i]) && (b[i] == '=' || !b[i]);
}

static void env_put(struct envb *e, char *kv)
{
	if (!kv) {
		e->err = 1;
		return;
	}
	for (int i = 0; i < e->n; i++) {
		if (key_eq(e->v[i], kv)) {
			free(e->v[i]);
			e->v[i] = kv;
			return;
		}
	}
	if (e->n + 1 >= e->cap) {
		int cap = e->cap ? e->cap * 2 : 64;
		char **v = realloc(e->v, (size_t)cap * sizeof *v);
		if (!v) {
			free(kv);
			e->err = 1;
			return;
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
}

static void env_set(struct envb *e, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void env_set(struct envb *e, const char *key, const char *fmt, ...)
{
	char val[4400], *kv = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof val, fmt, ap);
	va_end(ap);
	if (asprintf(&kv, "%s=%s", key, val) < 0)
		kv = NULL;
	env_put(e, kv);
}

/* Drop every variable whose name starts with prefix, except those starting with keep. */
static void env_drop_but(struct envb *e, const char *prefix, const char *keep)
{
	size_t n = strlen(prefix);

	for (int i = 0; i < e->n;) {
		if (!strncmp(e->v[i], prefix, n) &&
		    !(keep && !strncmp(e->v[i], keep, strlen(keep)))) {
			free(e->v[i]);
			e->v[i] = e->v[--e->n];
			e->v[e->n] = NULL;
		} else {
			i++;
		}
	}
}

static void env_drop_prefix(struct envb *e, const char *prefix)
{
	env_drop_but(e, prefix, NULL);
}

const char *boot_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

void boot_env_free(char **envp)
{
	free(envp); /* one block: pointers and the per-rank strings (see boot_job_env) */
}

static void ompi_env(boot_job_t *j, struct envb *e, int flags)
{
	uint32_t h = 2166136261u; /* FNV-1a of the KVS name: the same on every agent of the job */

	for (const char *p = j->js.kvsname; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	/* PMIx variables from elsewhere never reach a rank: ours come per rank (job_pmix.c), and
	 * on the flux path they would win over our libpmi.so; the user's PMIx parameters
	 * (PMIX_MCA_*) go to PMIx clients */
	env_drop_but(e, "PMIX_", flags & BOOT_APP_PMIX ? "PMIX_MCA_" : NULL);
	if (!(flags & BOOT_APP_OMPI))
		return; /* a PMIx client that is no Open MPI program */
	if (flags & BOOT_APP_PMIX) {
		/* Open MPI 4.1 counts a rank as launched by a resource manager (not a singleton
		 * that must start its own daemon) only where its schizo framework recognises one:
		 * Slurm, Flux, LSF's jsm. FLUX_JOB_ID says "direct launch, do not bind" and nothing
		 * else; without FLUX_PMI_LIBRARY_PATH the flux PMI component stays out, and the
		 * PMIx component (ext3x) talks to our server */
		env_drop_prefix(e, "FLUX_PMI_LIBRARY_PATH=");
		env_drop_prefix(e, "OMPI_MCA_pmix=");
		env_set(e, "FLUX_JOB_ID", "%u", (unsigned)(h % 32000u) + 1);
		goto files;
	}
	/* a decimal below 32768 (Open MPI 4.1 falls apart above: ranks get different job ids),
	 * the same for all the job's ranks on every node and distinct for concurrent jobs (Open
	 * MPI derives its job family from it); its files are per job anyway, see below */
	env_set(e, "FLUX_JOB_ID", "%u", (unsigned)(h % 32000u) + 1);
	env_set(e, "FLUX_PMI_LIBRARY_PATH", "%s", j->pmi_lib);
	env_set(e, "OMPI_MCA_pmix", "flux");
files:
	/* its shared-memory files and session directories go into the job's own directory */
	env_set(e, "OMPI_MCA_btl_vader_backing_directory", "%s", j->dir);
	env_set(e, "OMPI_MCA_orte_tmpdir_base", "%s", j->dir);
	env_set(e, "OMPI_MCA_osc_rdma_backing_directory", "%s", j->dir);
	env_set(e, "OMPI_MCA_osc_sm_backing_directory", "%s", j->dir);
	env_set(e, "OMPI_MCA_shmem_mmap_backing_file_base_dir", "%s", j->dir);
	if (j->js.oversubscribed || j->blocking)
		env_set(e, "OMPI_MCA_mpi_yield_when_idle", "1");
}

/* The part of an app's environment that is the same for all its ranks, built once per job:
 * the job's, the app's -env, then what PMI and the MPI library need. */
static char **app_base_env(boot_job_t *j, const struct boot_app *app)
{
	struct envb e = {0};
	int a = (int)(app - j->js.apps);

	if (!j->app_env && !(j->app_env = calloc((size_t)j->js.napps, sizeof *j->app_env)))
		return NULL;
	if (j->app_env[a])
		return j->app_env[a];
	for (int i = 0; i < j->js.nenv; i++)
		env_put(&e, strdup(j->js.env[i]));
	for (int i = 0; i < app->nenv; i++)
		env_put(&e, strdup(app->env[i]));
	/* set per rank below: never inherited from the caller by accident */
	env_drop_prefix(&e, "PMI_RANK=");
	env_drop_prefix(&e, "PMI_ID=");
	env_drop_prefix(&e, "MPI_LOCALRANKID=");
	env_drop_prefix(&e, "PMI_JOBID=");
	env_drop_prefix(&e, "PMI_SPAWNED=");
	if (j->js.spawner && *j->js.spawner)
		env_set(&e, "PMI_SPAWNED", "1"); /* PMI-1 clients learn they were spawned here */
	if (j->js.pmi_port) {
		env_set(&e, "PMI_PORT", "%s", j->port_str);
	} else {
		env_set(&e, "PMI_FD", "%d", BOOT_PMI_FD_NUM);
		/* as Slurm's pmi2 plugin does: PMI-2 is served on PMI_FD (libpmi prefers it) */
		env_set(&e, "PMI_JOBID", "%s", j->js.kvsname);
	}
	env_set(&e, "PMI_SIZE", "%d", j->js.size);
	env_set(&e, "MPI_LOCALNRANKS", "%d", j->nranks);
	env_set(&e, "LAMKIT_SESSION_DIR", "%s", j->dir);
	/* lamkit's MPI blocks rather than spins when its node is oversubscribed (job_wait.c) */
	if (!boot_env_get(e.v, "LAMKIT_OVERSUBSCRIBED"))
		env_set(&e, "LAMKIT_OVERSUBSCRIBED", "%d", j->oversub);
	env_set(&e, "LAMKIT_JOBID", "%u", j->js.jobid);
	/* lamkit's MPI reads its spawn preset here, not with a PMI get from each of its ranks at
	 * once (doc/PROTOCOL-mpi-wire.md section 8, "Spawn"); tagged with the KVS it belongs to */
	env_drop_prefix(&e, "LAMKIT_SPAWN_PRESET=");
	for (int i = 0; i + 1 < j->js.npreput; i += 2)
		if (!strcmp(j->js.preput[i], "lamkit-spawn"))
			env_set(&e, "LAMKIT_SPAWN_PRESET", "%s|%s", j->js.kvsname,
			        j->js.preput[i + 1]);
	env_drop_prefix(&e, "LAMKIT_SHM_SEGMENT=");
	if (j->node_seg[0])
		env_set(&e, "LAMKIT_SHM_SEGMENT", "%s", j->node_seg);
	if (j->app_ompi && j->app_ompi[a] && (j->pmi_lib[0] || j->app_ompi[a] & BOOT_APP_PMIX))
		ompi_env(j, &e, j->app_ompi[a]);
	if (e.err || !e.v) {
		for (int i = 0; i < e.n; i++)
			free(e.v[i]);
		free(e.v);
		return NULL;
	}
	return j->app_env[a] = e.v;
}

void boot_job_env_free_cache(boot_job_t *j)
{
	for (int a = 0; j->app_env && a < j->js.napps; a++) {
		for (char **p = j->app_env[a]; p && *p; p++)
			free(*p);
		free(j->app_env[a]);
	}
	free(j->app_env);
	j->app_env = NULL;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

char **boot_job_env(boot_job_t *j, const struct boot_app *app, const struct boot_rank *r,
                    int localid)
{
	char **base = app_base_env(j, app), *own[6];
	int n = 0, k = 0;
	size_t sz = 0;

	if (!base)
		return NULL;
	while (base[n])
		n++;
	own[k++] = fmt("PMI_RANK=%d", r->rank);
	own[k++] = fmt("MPI_LOCALRANKID=%d", localid);
	if (j->js.pmi_port)
		own[k++] = fmt("PMI_ID=%d", r->rank);
	/* a bound rank's OpenMP threads on its CPUs, one place per core, unless the user said */
	if (r->omp_threads > 0 && !boot_env_get(base, "OMP_NUM_THREADS"))
		own[k++] = fmt("OMP_NUM_THREADS=%d", r->omp_threads);
	if (r->omp_places && !boot_env_get(base, "OMP_PLACES"))
		own[k++] = fmt("OMP_PLACES=%s", r->omp_places);
	if (r->omp_places && !boot_env_get(base, "OMP_PROC_BIND"))
		own[k++] = fmt("OMP_PROC_BIND=close");
	for (int i = 0; i < k; i++)
		sz += own[i] ? strlen(own[i]) + 1 : 0; /* NULL: no memory, found below */
	/* one block: the base pointers (borrowed), our k strings, NULL; boot_env_free frees it */
	size_t ptrs = (size_t)(n + k + 1) * sizeof(char *);
	char **envp = malloc(ptrs + sz);
	for (int i = 0; envp && i < k; i++)
		if (!own[i]) {
			free(envp);
			envp = NULL;
		}
	if (envp) {
		memcpy(envp, base, (size_t)n * sizeof(char *));
		char *str = (char *)envp + ptrs;
		for (int i = 0; i < k; i++) {
			size_t l = strlen(own[i]) + 1;
			memcpy(str, own[i], l);
			envp[n + i] = str;
			str += l;
		}
		envp[n + k] = NULL;
	}
	for (int i = 0; i < k; i++)
		free(own[i]);
	return envp;
}
