/* lib/mpi/mpi_io_view.c: file views: the stream <-> file offset map, set/get_view, positions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpio.h"

/* ---- building a view from a layout type ---- */

/* Runs of the layout type d (merged where contiguous) into v. MPI code: MPI_ERR_IO (ROMIO's
 * class for it, which MPICH's tests expect) for a type the standard does not allow in a view
 * (negative extent or displacements, displacements that decrease; overlapping data, in a file
 * opened for writing). Overlaps a read-only file may have set v->overlap. A tile whose data
 * reaches into the next tile (an extent smaller than the data's span, as parallel HDF5's
 * chunked collective writes set, lb past the first block) is allowed, as ROMIO allows it: it
 * sets v->tiles_overlap, and only an access across tiles is then not increasing. */
static int set_runs(struct mpio_view *v, const struct mpii_dtype *d, int rdonly)
{
	int n = 0;

	v->size = (MPI_Offset)d->size;
	v->ext = d->extent;
	if (d->size && d->extent <= 0)
		return MPI_ERR_IO;
	v->run = malloc(sizeof(*v->run) * (size_t)(d->nseg ? d->nseg : 1));
	v->pre = malloc(sizeof(*v->pre) * (size_t)(d->nseg + 1));
	if (!v->run || !v->pre)
		return MPI_ERR_NO_MEM;
	for (int k = 0; k < d->nseg; k++) {
		MPI_Offset off = d->seg[k].off, len = (MPI_Offset)d->seg[k].len;
		if (!len)
			continue;
		if (off < 0 || (n && off < v->run[n - 1].off))
			return MPI_ERR_IO;
		if (n && off < v->run[n - 1].off + v->run[n - 1].len) {
			if (!rdonly)
				return MPI_ERR_IO;
			v->overlap = 1;
		}
		if (n && off == v->run[n - 1].off + v->run[n - 1].len) {
			v->run[n - 1].len += len;
			continue;
		}
		v->run[n++] = (struct mpio_run){off, len};
	}
	if (n && v->run[n - 1].off + v->run[n - 1].len > v->ext + v->run[0].off)
		v->tiles_overlap = 1; /* tile i + 1 starts inside tile i */
	v->nrun = n;
	v->pre[0] = 0;
	for (int k = 0; k < n; k++)
		v->pre[k + 1] = v->pre[k] + v->run[k].len;
	v->contig = n == 1 && v->run[0].len == v->ext && !v->overlap;
	return MPI_SUCCESS;
}

void mpio_view_free(struct mpio_view *v)
{
	struct mpii_dtype *e = mpii_dt(v->etype), *t = mpii_dt(v->ftype);

	if (e && !e->predefined)
		PMPI_Type_free(&v->etype);
	if (t && !t->predefined)
		PMPI_Type_free(&v->ftype);
	free(v->run);
	free(v->pre);
	memset(v, 0, sizeof(*v));
}

/* Fill v for disp/etype/filetype/datarep (v zeroed). MPI code. */
static int view_make(struct mpio_view *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype ftype,
                     const char *rep, int rdonly)
{
	struct mpii_dtype *e = mpii_dt(etype), *t = mpii_dt(ftype), *lt;
	MPI_Datatype lh = MPI_DATATYPE_NULL;
	int rc;

	if (!e || !t || (!e->predefined && !e->committed) || (!t->predefined && !t->committed))
		return MPI_ERR_TYPE;
	if (!(v->dr = mpio_datarep_find(rep)))
		return MPI_ERR_UNSUPPORTED_DATAREP;
	if (!e->predefined) { /* the etype obeys the filetype's rules too */
		struct mpio_view ev = {0};
		rc = set_runs(&ev, e, rdonly);
		free(ev.run);
		free(ev.pre);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	snprintf(v->rep, sizeof(v->rep), "%s", rep);
	v->disp = disp;
	v->esize = mpio_datarep_size(v->dr, e, 1);
	if (v->esize < 0)
		return MPI_ERR_CONVERSION;
	lt = t;
	if (!mpio_datarep_native(v->dr)) {
		if ((rc = mpio_datarep_type(v->dr, ftype, &lh)) != MPI_SUCCESS)
			return rc;
		lt = mpii_dt(lh);
	}
	rc = set_runs(v, lt, rdonly);
	if (lh != MPI_DATATYPE_NULL)
		PMPI_Type_free(&lh);
	if (rc == MPI_SUCCESS && v->esize && v->size % v->esize)
		rc = MPI_ERR_ARG; /* the filetype must hold whole etypes */
	if (rc != MPI_SUCCESS)
		return rc;
	/* the view keeps the user's types alive, as copies the user cannot free */
	v->etype = etype;
	v->ftype = ftype;
	if (!e->predefined && (rc = PMPI_Type_dup(etype, &v->etype)) != MPI_SUCCESS)
		v->etype = MPI_DATATYPE_NULL;
	if (rc == MPI_SUCCESS && !t->predefined &&
	    (rc = PMPI_Type_dup(ftype, &v->ftype)) != MPI_SUCCESS)
		v->ftype = MPI_DATATYPE_NULL;
	return rc;
}

int mpio_view_default(struct mpio_view *v)
{
	memset(v, 0, sizeof(*v));
	return view_make(v, 0, MPI_BYTE, MPI_BYTE, "native", 0);
}

/* ---- the map ---- */

/* Index k of the run holding data byte r of a tile: pre[k] <= r < pre[k + 1]. */
static int run_of(const struct mpio_view *v, MPI_Offset r)
{
	int lo = 0, hi = v->nrun - 1;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (v->pre[mid] <= r)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int mpio_view_overlaps(const struct mpio_view *v, MPI_Offset s, MPI_Offset n)
{
	return v->overlap ||
	       (v->tiles_overlap && n > 0 && v->size && s / v->size != (s + n - 1) / v->size);
}

MPI_Offset mpio_view_off(const struct mpio_view *v, MPI_Offset s)
{
	MPI_Offset t = s / v->size, r = s % v->size;
	int k = v->nrun == 1 ? 0 : run_of(v, r);

	return v->disp + t * v->ext + v->run[k].off + (r - v->pre[k]);
}

MPI_Offset mpio_view_below(const struct mpio_view *v, MPI_Offset f)
{
	MPI_Offset x = f - v->disp, t, y;
	int lo = 0, hi = v->nrun - 1;

	if (!v->nrun || x <= v->run[0].off)
		return 0;
	t = (x - v->run[0].off) / v->ext;
	y = x - t * v->ext; /* in [run[0].off, run[0].off + ext) */
	while (lo < hi) {   /* the last run starting below y */
		int mid = (lo + hi + 1) / 2;
		if (v->run[mid].off < y)
			lo = mid;
		else
			hi = mid - 1;
	}
	y -= v->run[lo].off;
	return t * v->size + v->pre[lo] + (y < v->run[lo].len ? y : v->run[lo].len);
}

void mpio_it_init(struct mpio_it *it, const struct mpio_view *v, MPI_Offset s, MPI_Offset n)
{
	it->v = v;
	it->left = n;
	if (!n || !v->size) {
		it->left = 0;
		return;
	}
	it->tile = s / v->size;
	it->k = v->nrun == 1 ? 0 : run_of(v, s % v->size);
	it->inrun = s % v->size - v->pre[it->k];
}

int mpio_it_next(struct mpio_it *it, MPI_Offset *off, MPI_Offset *len)
{
	const struct mpio_view *v = it->v;
	int first = 1;

	while (it->left) {
		MPI_Offset o = v->disp + it->tile * v->ext + v->run[it->k].off + it->inrun;
		MPI_Offset l = v->run[it->k].len - it->inrun;

		if (l > it->left)
			l = it->left;
		if (!first && o != *off + *len)
			break;
		if (first)
			*off = o, *len = 0;
		*len += l;
		first = 0;
		it->left -= l;
		it->inrun += l;
		if (it->inrun == v->run[it->k].len) {
			it->inrun = 0;
			if (++it->k == v->nrun) {
				it->k = 0;
				it->tile++;
			}
		}
		if (v->contig) { /* one piece: the rest follows at once */
			*len += it->left;
			it->left = 0;
		}
	}
	return !first;
}

/* ---- views of other ranks ---- */

int mpio_view_to_wire(const struct mpio_view *v, char **out, int *len)
{
	int64_t *w;
	size_t n = 6 + 2 * (size_t)v->nrun;

	if (n * 8 > (size_t)1 << 30)
		return MPI_ERR_NO_MEM;
	w = malloc(n * 8);
	if (!w)
		return MPI_ERR_NO_MEM;
	w[0] = v->disp;
	w[1] = v->esize;
	w[2] = v->ext;
	w[3] = v->size;
	w[4] = v->nrun;
	w[5] = v->contig | v->overlap << 1 | v->tiles_overlap << 2;
	for (int k = 0; k < v->nrun; k++) {
		w[6 + 2 * k] = v->run[k].off;
		w[7 + 2 * k] = v->run[k].len;
	}
	*out = (char *)w;
	*len = (int)(n * 8);
	return MPI_SUCCESS;
}

int mpio_view_from_wire(struct mpio_view *v, const char *w, int len)
{
	int64_t h[6];

	memset(v, 0, sizeof(*v));
	if (len < 48)
		return -1;
	memcpy(h, w, sizeof(h));
	if (h[4] < 0 || (size_t)len != 48 + 16 * (size_t)h[4])
		return -1;
	v->disp = h[0];
	v->esize = h[1];
	v->ext = h[2];
	v->size = h[3];
	v->nrun = (int)h[4];
	v->contig = (int)(h[5] & 1);
	v->overlap = (int)(h[5] >> 1 & 1);
	v->tiles_overlap = (int)(h[5] >> 2 & 1);
	v->run = malloc(sizeof(*v->run) * (size_t)(v->nrun ? v->nrun : 1));
	v->pre = malloc(sizeof(*v->pre) * (size_t)(v->nrun + 1));
	if (!v->run || !v->pre) {
		mpio_view_free(v);
		return -1;
	}
	memcpy(v->run, w + 48, 16 * (size_t)v->nrun);
	v->pre[0] = 0;
	for (int k = 0; k < v->nrun; k++)
		v->pre[k + 1] = v->pre[k] + v->run[k].len;
	return 0;
}

/* ---- the API ---- */

struct mpio_vset *mpio_vset_default(int n)
{
	struct mpio_vset *vs = calloc(1, sizeof(*vs));

	if (!vs)
		return NULL;
	vs->refs = 1;
	vs->n = n;
	if (mpio_view_default(&vs->v) != MPI_SUCCESS) {
		mpio_vset_release(vs);
		return NULL;
	}
	return vs;
}

void mpio_vset_release(struct mpio_vset *vs)
{
	if (!vs || --vs->refs > 0)
		return;
	mpio_view_free(&vs->v);
	for (int r = 0; vs->all && r < vs->n; r++)
		mpio_view_free(&vs->all[r]);
	free(vs->all);
	free(vs);
}

/* What each rank says at MPI_File_set_view: its outcome so far and its view's digest. */
struct vinfo {
	uint64_t hash;
	int32_t rc, len;
};

static uint64_t fnv64(const char *p, int n)
{
	uint64_t h = 14695981039346656037ULL;

	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

/* Every rank's view into vs->all (their wires gathered), unless they are all the same as
 * mine. Collective; all[] as gathered. MPI code. */
static int gather_views(struct mpii_comm *c, struct mpio_vset *vs, const struct vinfo *all,
                        const char *wire)
{
	int n = c->size, same = 1, rc, *cnt, *dsp;
	char *wires;
	size_t total = 0;

	for (int r = 0; r < n; r++) {
		same &= all[r].hash == all[0].hash && all[r].len == all[0].len;
		total += (size_t)all[r].len;
	}
	if (same)
		return MPI_SUCCESS;
	cnt = malloc(sizeof(int) * (size_t)n);
	dsp = malloc(sizeof(int) * (size_t)n);
	wires = malloc(total);
	vs->all = calloc((size_t)n, sizeof(*vs->all));
	rc = cnt && dsp && wires && vs->all && total < (size_t)1 << 31 ? MPI_SUCCESS
	                                                               : MPI_ERR_NO_MEM;
	for (int r = 0, at = 0; rc == MPI_SUCCESS && r < n; at += all[r].len, r++) {
		cnt[r] = all[r].len;
		dsp[r] = at;
	}
	if (rc == MPI_SUCCESS) /* everyone gets here with the same total: no one fails alone */
		rc = mpii_allgatherv(wire, all[c->rank].len, mpii_dt(MPI_BYTE), wires, cnt, dsp, 0,
		                     mpii_dt(MPI_BYTE), c);
	for (int r = 0; rc == MPI_SUCCESS && r < n; r++)
		if (mpio_view_from_wire(&vs->all[r], wires + dsp[r], cnt[r]) < 0)
			rc = MPI_ERR_INTERN;
	free(cnt);
	free(dsp);
	free(wires);
	return rc;
}

MPII_ALIAS(File_set_view)
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
	static const char fn[] = "MPI_File_set_view";
	struct mpio_vset *vs;
	struct vinfo me = {0}, *all;
	char *wire = NULL;
	int rc = MPI_SUCCESS, cur = disp == MPI_DISPLACEMENT_CURRENT;
	MPI_Offset sh = 0;

	MPIO_FILE(f, fh, fn);
	if ((disp < 0 && !cur) || (cur && !(f->amode & MPI_MODE_SEQUENTIAL)))
		rc = MPI_ERR_DISP; /* "invalid displacement": the message says which argument */
	else if (!datarep)
		rc = MPI_ERR_UNSUPPORTED_DATAREP;
	if (cur) { /* a sequential file's view starts where the shared pointer is (rank 0's word) */
		if (f->comm->rank == 0 && rc == MPI_SUCCESS)
			rc = mpio_shared_fetch_add(f, 0, &sh);
		rc = mpio_agree(f->comm, rc);
		if (rc == MPI_SUCCESS)
			rc = mpii_bcast(&sh, 1, mpii_dt(MPI_OFFSET), 0, f->comm);
		if (rc == MPI_SUCCESS)
			disp = f->vs->v.size ? mpio_view_off(&f->vs->v, sh * f->vs->v.esize)
			                     : f->vs->v.disp;
	}
	vs = calloc(1, sizeof(*vs));
	all = malloc(sizeof(*all) * (size_t)f->comm->size);
	if (rc == MPI_SUCCESS && (!vs || !all))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = view_make(&vs->v, disp, etype, filetype, datarep,
		               (f->amode & MPI_MODE_RDONLY) != 0);
	if (rc == MPI_SUCCESS)
		rc = mpio_hints_set(&f->h, info, f->comm->size);
	if (rc == MPI_SUCCESS)
		rc = mpio_view_to_wire(&vs->v, &wire, &me.len);
	me.rc = rc;
	me.hash = wire ? fnv64(wire, me.len) : 0;
	if (all) {
		rc = mpii_allgather(&me, (int)sizeof(me), mpii_dt(MPI_BYTE), all, (int)sizeof(me),
		                    mpii_dt(MPI_BYTE), f->comm);
		for (int r = 0; rc == MPI_SUCCESS && r < f->comm->size; r++)
			rc = all[r].rc;
	}
	if (rc == MPI_SUCCESS) {
		vs->refs = 1;
		vs->n = f->comm->size;
		rc = gather_views(f->comm, vs, all, wire);
	}
	free(wire);
	free(all);
	if (rc != MPI_SUCCESS) {
		if (vs) {
			vs->refs = 1;
			vs->n = f->comm->size;
		}
		mpio_vset_release(vs);
		return mpio_err(f, rc, fn);
	}
	/* both pointers go back to 0: the shared one by a new epoch (mpi_io_shared.c), which every
	 * rank has here, after all took part in the exchange above */
	mpio_vset_release(f->vs);
	f->vs = vs;
	f->fp = 0;
	f->epoch++;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_get_view)
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
	static const char fn[] = "MPI_File_get_view";
	int rc = MPI_SUCCESS;

	MPIO_FILE(f, fh, fn);
	*disp = f->vs->v.disp;
	*etype = f->vs->v.etype;
	*filetype = f->vs->v.ftype;
	if (!mpii_dt(f->vs->v.etype)->predefined)
		rc = PMPI_Type_dup(f->vs->v.etype, etype);
	if (rc == MPI_SUCCESS && !mpii_dt(f->vs->v.ftype)->predefined)
		rc = PMPI_Type_dup(f->vs->v.ftype, filetype);
	if (datarep)
		snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->vs->v.rep);
	return mpio_err(f, rc, fn);
}

MPII_ALIAS(File_get_byte_offset)
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
	static const char fn[] = "MPI_File_get_byte_offset";

	MPIO_FILE(f, fh, fn);
	if (offset < 0)
		return mpio_err(f, MPI_ERR_ARG, fn);
	if (f->amode & MPI_MODE_SEQUENTIAL)
		return mpio_err(f, MPI_ERR_UNSUPPORTED_OPERATION, fn);
	*disp = f->vs->v.size ? mpio_view_off(&f->vs->v, offset * f->vs->v.esize) : f->vs->v.disp;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_get_type_extent)
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype type, MPI_Aint *extent)
{
	static const char fn[] = "MPI_File_get_type_extent";
	struct mpii_dtype *d = mpii_dt(type);
	MPI_Datatype lt;
	int rc;

	MPIO_FILE(f, fh, fn);
	if (!d)
		return mpio_err(f, MPI_ERR_TYPE, fn);
	if (mpio_datarep_native(f->vs->v.dr)) {
		*extent = d->extent;
		return MPI_SUCCESS;
	}
	rc = mpio_datarep_type(f->vs->v.dr, type, &lt);
	if (rc != MPI_SUCCESS)
		return mpio_err(f, rc, fn);
	*extent = mpii_dt(lt)->extent;
	PMPI_Type_free(&lt);
	return MPI_SUCCESS;
}

int mpio_end_etypes(struct mpio_file *f, MPI_Offset *e)
{
	struct stat sb;

	if (fstat(f->fd, &sb) < 0)
		return mpio_errno_class(errno);
	*e = 0;
	if (f->vs->v.size && f->vs->v.esize)
		*e = (mpio_view_below(&f->vs->v, sb.st_size) + f->vs->v.esize - 1) / f->vs->v.esize;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_seek)
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	static const char fn[] = "MPI_File_seek";
	MPI_Offset base = 0;
	int rc = MPI_SUCCESS;

	MPIO_FILE(f, fh, fn);
	if (f->amode & MPI_MODE_SEQUENTIAL)
		return mpio_err(f, MPI_ERR_UNSUPPORTED_OPERATION, fn);
	if (whence == MPI_SEEK_CUR)
		base = f->fp;
	else if (whence == MPI_SEEK_END)
		rc = mpio_end_etypes(f, &base);
	else if (whence != MPI_SEEK_SET)
		rc = MPI_ERR_ARG;
	if (rc == MPI_SUCCESS && base + offset < 0)
		rc = MPI_ERR_ARG;
	if (rc != MPI_SUCCESS)
		return mpio_err(f, rc, fn);
	f->fp = base + offset;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_get_position)
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
	static const char fn[] = "MPI_File_get_position";

	MPIO_FILE(f, fh, fn);
	if (f->amode & MPI_MODE_SEQUENTIAL)
		return mpio_err(f, MPI_ERR_UNSUPPORTED_OPERATION, fn);
	*offset = f->fp;
	return MPI_SUCCESS;
}
