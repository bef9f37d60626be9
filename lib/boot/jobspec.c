/* lib/boot/jobspec.c: job spec encoding for BOOT_MSG_JOB_START. */
#include "core.h"
#include "proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void w_strv(struct core_wbuf *w, char **v, int n)
{
	core_w_u32(w, (uint32_t)n);
	for (int i = 0; i < n; i++)
		core_w_str(w, v[i]);
}

void boot_jobspec_encode(struct core_wbuf *w, const struct boot_jobspec *js)
{
	core_w_u32(w, js->jobid);
	core_w_str(w, js->kvsname);
	core_w_u32(w, (uint32_t)js->size);
	core_w_u32(w, (uint32_t)js->universe_size);
	core_w_u32(w, (uint32_t)js->tag_output);
	core_w_u32(w, (uint32_t)js->pmi_port);
	core_w_u32(w, (uint32_t)js->mpi_kind);
	core_w_u32(w, (uint32_t)js->oversubscribed);
	core_w_u32(w, (uint32_t)js->bind);
	core_w_str(w, js->wdir);
	w_strv(w, js->env, js->nenv);
	core_w_u32(w, (uint32_t)js->napps);
	for (int a = 0; a < js->napps; a++) {
		const struct boot_app *ap = &js->apps[a];
		core_w_str(w, ap->exe);
		w_strv(w, ap->argv, ap->argc);
		core_w_u32(w, (uint32_t)ap->nprocs);
		core_w_u32(w, (uint32_t)ap->first_rank);
		core_w_str(w, ap->wdir ? ap->wdir : "");
		w_strv(w, ap->env, ap->nenv);
	}
	core_w_str(w, js->process_mapping);
	core_w_u32(w, (uint32_t)js->nranks);
	for (int i = 0; i < js->nranks; i++)
		core_w_u32(w, (uint32_t)js->ranks[i]);
	core_w_u32(w, (uint32_t)js->nagents);
	core_w_str(w, js->fence_parent ? js->fence_parent : "");
	core_w_u32(w, (uint32_t)js->fence_children);
	core_w_str(w, js->spawner ? js->spawner : "");
	core_w_str(w, js->names_at ? js->names_at : "");
	w_strv(w, js->preput, js->npreput);
	core_w_str(w, js->placement ? js->placement : "");
	core_w_u32(w, (uint32_t)js->slots);
}

static char *r_dup(struct core_rbuf *r)
{
	const char *s = core_r_str(r);
	return r->err ? NULL : strdup(s);
}

/* A string vector; n is bounded by what the payload can hold (≥ 5 bytes each). */
static char **r_strv(struct core_rbuf *r, int *np)
{
	uint32_t n = core_r_u32(r);

	if (r->err || n > (r->len - r->off) / 5 + 1) {
		r->err = 1;
		return NULL;
	}
	char **v = calloc(n + 1, sizeof *v);
	if (!v) {
		r->err = 1;
		return NULL;
	}
	*np = (int)n; /* before the strings, so a failed decode frees what was read */
	for (uint32_t i = 0; i < n && !r->err; i++)
		v[i] = r_dup(r);
	return v;
}

static int r_int(struct core_rbuf *r, int max)
{
	uint32_t v = core_r_u32(r);

	if (v > (uint32_t)max)
		r->err = 1;
	return r->err ? 0 : (int)v;
}

int boot_jobspec_decode(struct boot_jobspec *js, const char *p, size_t len)
{
	struct core_rbuf r = {.p = p, .len = len};

	memset(js, 0, sizeof *js);
	js->jobid = core_r_u32(&r);
	js->kvsname = r_dup(&r);
	js->size = r_int(&r, 1 << 24);
	js->universe_size = r_int(&r, 1 << 24);
	js->tag_output = r_int(&r, 1);
	js->pmi_port = r_int(&r, 1);
	js->mpi_kind = r_int(&r, BOOT_MPI_PMIX);
	js->oversubscribed = r_int(&r, 1);
	js->bind = r_int(&r, BOOT_BIND_CORE);
	js->wdir = r_dup(&r);
	js->env = r_strv(&r, &js->nenv);
	js->napps = r_int(&r, 4096);
	if (!r.err && js->napps > 0)
		js->apps = calloc((size_t)js->napps, sizeof *js->apps);
	if (js->napps > 0 && !js->apps)
		r.err = 1;
	for (int a = 0; a < js->napps && !r.err; a++) {
		struct boot_app *ap = &js->apps[a];
		ap->exe = r_dup(&r);
		ap->argv = r_strv(&r, &ap->argc);
		ap->nprocs = r_int(&r, js->size);
		ap->first_rank = r_int(&r, js->size);
		ap->wdir = r_dup(&r);
		if (ap->wdir && !ap->wdir[0]) {
			free(ap->wdir);
			ap->wdir = NULL;
		}
		ap->env = r_strv(&r, &ap->nenv);
		if (!r.err && (ap->argc < 1 || ap->first_rank + ap->nprocs > js->size))
			r.err = 1;
	}
	js->process_mapping = r_dup(&r);
	js->nranks = r_int(&r, js->size);
	if (!r.err && js->nranks > 0)
		js->ranks = calloc((size_t)js->nranks, sizeof *js->ranks);
	if (js->nranks > 0 && !js->ranks)
		r.err = 1;
	for (int i = 0; i < js->nranks && !r.err; i++)
		js->ranks[i] = r_int(&r, js->size - 1);
	js->nagents = r_int(&r, 1 << 20);
	js->fence_parent = r_dup(&r);
	js->fence_children = r_int(&r, 1 << 20);
	js->spawner = r_dup(&r);
	js->names_at = r_dup(&r);
	js->preput = r_strv(&r, &js->npreput);
	js->placement = r_dup(&r);
	js->slots = r_int(&r, 1 << 20);
	if (r.err || js->size < 1 || js->napps < 1 || r.off != r.len || js->npreput % 2) {
		boot_jobspec_free(js);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void boot_jobspec_free(struct boot_jobspec *js)
{
	if (!js)
		return;
	free(js->kvsname);
	free(js->wdir);
	free(js->fence_parent);
	free(js->spawner);
	free(js->names_at);
	free(js->placement);
	core_strv_free(js->preput, js->npreput);
	core_strv_free(js->env, js->nenv);
	for (int a = 0; js->apps && a < js->napps; a++) {
		free(js->apps[a].exe);
		core_strv_free(js->apps[a].argv, js->apps[a].argc);
		free(js->apps[a].wdir);
		core_strv_free(js->apps[a].env, js->apps[a].nenv);
	}
	free(js->apps);
	free(js->process_mapping);
	free(js->ranks);
	free(js->clique);
	memset(js, 0, sizeof *js);
}

const struct boot_app *boot_jobspec_app(const struct boot_jobspec *js, int rank)
{
	for (int a = 0; a < js->napps; a++)
		if (rank >= js->apps[a].first_rank &&
		    rank < js->apps[a].first_rank + js->apps[a].nprocs)
			return &js->apps[a];
	return NULL;
}
