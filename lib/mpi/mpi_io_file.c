/* lib/mpi/mpi_io_file.c: MPI_File_open/close/delete, size, sync, info, atomicity, errhandlers. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpio.h"

static struct mpii_tab files;
/* MPI_FILE_NULL's handler: what files are opened with, and what errors without a file
 * (MPI_File_open, MPI_File_delete) go to; MPI_ERRORS_RETURN until set (MPI-3.1 13.7). */
static struct mpii_comm fnull = {.errh = MPI_ERRORS_RETURN};

struct mpio_file *mpio_file(MPI_File fh)
{
	return mpii_tab_get(&files, fh);
}

int mpio_err(struct mpio_file *f, int code, const char *fn)
{
	if (code == MPI_SUCCESS)
		return code;
	return mpii_err_report(f ? f->comm : &fnull, code, fn);
}

int mpio_errno_class(int e)
{
	switch (e) {
	case EACCES:
	case EPERM:
		return MPI_ERR_ACCESS;
	case ENOENT:
	case ENOTDIR:
		return MPI_ERR_NO_SUCH_FILE;
	case EEXIST:
		return MPI_ERR_FILE_EXISTS;
	case EROFS:
		return MPI_ERR_READ_ONLY;
	case ENOSPC:
	case EFBIG:
		return MPI_ERR_NO_SPACE;
	case EDQUOT:
		return MPI_ERR_QUOTA;
	case ENAMETOOLONG:
	case EISDIR:
	case ELOOP:
		return MPI_ERR_BAD_FILE;
	case ETXTBSY:
	case EBUSY:
		return MPI_ERR_FILE_IN_USE;
	case ENOMEM:
		return MPI_ERR_NO_MEM;
	default:
		return MPI_ERR_IO;
	}
}

int mpio_agree(struct mpii_comm *c, int code)
{
	int *all, rc;

	if (c->size == 1)
		return code;
	all = malloc(sizeof(int) * (size_t)c->size);
	if (!all) { /* take part all the same, with a code of the same kind everyone gets */
		int mx = code == MPI_SUCCESS ? MPI_ERR_NO_MEM : code;
		rc = mpii_allreduce(&mx, &code, 1, mpii_dt(MPI_INT), MPI_MAX, c);
		return rc == MPI_SUCCESS ? code : rc;
	}
	rc = mpii_allgather(&code, 1, mpii_dt(MPI_INT), all, 1, mpii_dt(MPI_INT), c);
	for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++)
		if (all[r] != MPI_SUCCESS) {
			rc = all[r];
			break;
		}
	free(all);
	return rc;
}

/* ---- open ---- */

/* The path in name: a ROMIO file-system prefix ("ufs:", "nfs:", ...) removed. */
static const char *strip_prefix(const char *name)
{
	static const char *const pfx[] = {
	    "ufs:",   "nfs:", "lustre:", "gpfs:",    "pvfs2:", "testfs:",
	    "panfs:", "xfs:", "daos:",   "quobyte:", "beegfs:"};

	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return name + strlen(pfx[i]);
	return name;
}

static int amode_ok(int amode)
{
	int rw =
	    !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) + !!(amode & MPI_MODE_RDWR);
	int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
	            MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |
	            MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;

	if (rw != 1 || (amode & ~known))
		return 0;
	if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
		return 0;
	return !((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL));
}

/* open(2) of path for amode (create: with O_CREAT, and O_EXCL if asked). A write-only file is
 * opened for reading too when allowed: data sieving and two-phase writes read what they keep.
 * fd, or -1 with errno. */
static int open_path(const char *path, int amode, int create)
{
	int fl = O_CLOEXEC, fd;

	if (create && (amode & MPI_MODE_CREATE))
		fl |= O_CREAT | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
	if (amode & MPI_MODE_RDONLY)
		return open(path, fl | O_RDONLY, 0666);
	fd = open(path, fl | O_RDWR, 0666);
	if (fd < 0 && (amode & MPI_MODE_WRONLY) && (errno == EACCES || errno == EPERM))
		fd = open(path, fl | O_WRONLY, 0666);
	return fd;
}

/* What each rank says at MPI_File_open. */
struct openinfo {
	int amode, node, err, pid;
};

/* The private communicator of a file: c's group, a context of its own (collective). */
static int private_comm(struct mpii_comm *c, MPI_Comm *out)
{
	uint32_t ctx = mpii_ctx_alloc(c);

	if (!ctx)
		return MPI_ERR_INTERN;
	c->grp->refs++;
	return mpii_comm_finish(c, c->grp, NULL, ctx, out, NULL);
}

/* Node index of every rank, numbered by first appearance, from the ranks' mpii.node. */
static int node_map(struct mpio_file *f, const struct openinfo *all, int n)
{
	f->node = malloc(sizeof(int) * (size_t)n);
	if (!f->node)
		return MPI_ERR_NO_MEM;
	f->nnodes = 0;
	for (int r = 0; r < n; r++) {
		int k = 0;
		while (k < r && all[k].node != all[r].node)
			k++;
		f->node[r] = k < r ? f->node[k] : f->nnodes++;
	}
	return MPI_SUCCESS;
}

static void file_free(struct mpio_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	if (f->shfp_fd >= 0)
		close(f->shfp_fd);
	if (f->handle)
		mpii_tab_del(&files, f->handle);
	if (f->ch != MPI_COMM_NULL)
		PMPI_Comm_free(&f->ch);
	mpio_vset_release(f->vs);
	mpio_hints_free(&f->h);
	free(f->node);
	free(f->path);
	free(f->shfp_path);
	free(f);
}

/* The file object once every rank has its fd. MPI code (collective: the others fail too). */
static int file_make(struct mpii_comm *c, const char *path, int amode, MPI_Info info, int fd,
                     const struct openinfo *all, char *hints_text, struct mpio_file **out)
{
	struct mpio_file *f = calloc(1, sizeof(*f));
	int rc = f ? MPI_SUCCESS : MPI_ERR_NO_MEM, h;

	if (f) {
		f->fd = fd;
		f->shfp_fd = -1;
		f->amode = amode;
		f->nranks = c->size;
		f->shfp_pid = all[0].pid;
		f->path = strdup(path);
		rc = f->path ? node_map(f, all, c->size) : MPI_ERR_NO_MEM;
	} else {
		close(fd);
	}
	if (rc == MPI_SUCCESS)
		rc = (f->vs = mpio_vset_default(c->size)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS) {
		mpio_hints_default(&f->h, f->nnodes);
		rc = mpio_hints_file(&f->h, hints_text, info, c->size, c->rank);
		if (rc == MPI_SUCCESS)
			rc = mpio_hints_set(&f->h, info, c->size);
	}
	rc = mpio_agree(c, rc);
	if (rc == MPI_SUCCESS)
		rc = private_comm(c, &f->ch);
	files.first = 1; /* 0 is MPI_FILE_NULL */
	h = rc == MPI_SUCCESS ? mpii_tab_add(&files, f) : -1;
	if (rc == MPI_SUCCESS && h < 0)
		rc = MPI_ERR_NO_MEM; /* the handle table is local: no one else fails here */
	if (rc != MPI_SUCCESS) {
		file_free(f);
		return rc;
	}
	f->handle = h;
	f->comm = mpii_comm(f->ch);
	f->comm->errh = fnull.errh;
	f->comm->file = h;
	*out = f;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_open)
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
	static const char fn[] = "MPI_File_open";
	struct mpii_comm *c = mpii_comm(comm);
	struct openinfo me = {amode, mpii.node, MPI_SUCCESS, (int)getpid()}, *all;
	const char *path = filename ? strip_prefix(filename) : NULL;
	struct mpio_file *f = NULL;
	char hints_text[MPIO_HINTS_TEXT]; /* the hints file's (ROMIO_HINTS) */
	int rc, fd = -1, nk;

	MPII_CHECK_INIT(fn);
	*fh = MPI_FILE_NULL;
	if (!c || c->inter)
		return mpio_err(NULL, MPI_ERR_COMM, fn);
	mpio_bounce_dear(); /* probed once, here rather than in the first access */
	if (!path || !*path)
		me.err = MPI_ERR_BAD_FILE;
	else if (!amode_ok(amode))
		me.err = MPI_ERR_AMODE;
	else if (info != MPI_INFO_NULL && PMPI_Info_get_nkeys(info, &nk) != MPI_SUCCESS)
		me.err = MPI_ERR_INFO;
	all = malloc(sizeof(*all) * (size_t)c->size);
	if (!all)
		return mpio_err(NULL, MPI_ERR_NO_MEM, fn);
	rc = mpii_allgather(&me, (int)sizeof(me), mpii_dt(MPI_BYTE), all, (int)sizeof(me),
	                    mpii_dt(MPI_BYTE), c);
	for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++) {
		if (all[r].err != MPI_SUCCESS)
			rc = all[r].err;
		else if (all[r].amode != amode)
			rc = MPI_ERR_NOT_SAME;
	}
	if (rc == MPI_SUCCESS) /* every rank is here: the same rc everywhere */
		rc = mpio_hints_fetch(c, hints_text);
	/* every rank is here (so a slow rank's MPI_File_delete of the name is behind it): rank 0
	 * creates the file first, so that the others find it and O_EXCL means once */
	if (rc == MPI_SUCCESS && (amode & MPI_MODE_CREATE)) {
		int crc = MPI_SUCCESS;
		if (c->rank == 0 && (fd = open_path(path, amode, 1)) < 0)
			crc = mpio_errno_class(errno);
		rc = mpio_agree(c, crc);
	}
	if (rc == MPI_SUCCESS) { /* every rank saw the same: all open, and agree on it */
		if (fd < 0 && (fd = open_path(path, amode, 0)) < 0)
			rc = mpio_errno_class(errno);
		rc = mpio_agree(c, rc);
	}
	if (rc == MPI_SUCCESS)
		rc = file_make(c, path, amode, info, fd, all, hints_text, &f);
	else if (fd >= 0)
		close(fd);
	free(all);
	if (rc == MPI_SUCCESS && (amode & MPI_MODE_APPEND)) {
		struct stat sb;
		rc = fstat(f->fd, &sb) < 0 ? mpio_errno_class(errno) : MPI_SUCCESS;
		if (rc == MPI_SUCCESS)
			f->fp = sb.st_size;
		if (rc == MPI_SUCCESS && c->rank == 0)
			rc = mpio_shared_set(f, sb.st_size);
		rc = mpio_agree(f->comm, rc);
	}
	if (rc != MPI_SUCCESS) {
		if (f)
			file_free(f);
		return mpio_err(NULL, rc, fn);
	}
	*fh = f->handle;
	return MPI_SUCCESS;
}

/* ---- close, delete ---- */

MPII_ALIAS(File_close)
int PMPI_File_close(MPI_File *fh)
{
	static const char fn[] = "MPI_File_close";
	int rc = MPI_SUCCESS;

	MPIO_FILE(f, *fh, fn);
	while (f->pending) /* nonblocking operations the program did not wait for */
		mpii_progress_wait();
	if (f->split) { /* a split collective without its _end */
		mpii_req_free(f->split);
		f->split = NULL;
	}
	if (close(f->fd) < 0)
		rc = mpio_errno_class(errno);
	f->fd = -1;
	rc = mpio_agree(f->comm, rc); /* every rank has closed its descriptor */
	if (f->comm->rank == 0) {
		mpio_shared_remove(f);
		if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(f->path) < 0 &&
		    rc == MPI_SUCCESS)
			rc = mpio_errno_class(errno);
	}
	if (rc != MPI_SUCCESS)
		rc = mpio_err(f, rc, fn); /* the file's handler, while the file exists */
	file_free(f);
	*fh = MPI_FILE_NULL;
	return rc;
}

MPII_ALIAS(File_delete)
int PMPI_File_delete(const char *filename, MPI_Info info)
{
	static const char fn[] = "MPI_File_delete";

	(void)info;
	MPII_CHECK_INIT(fn);
	if (!filename || !*filename)
		return mpio_err(NULL, MPI_ERR_BAD_FILE, fn);
	if (unlink(strip_prefix(filename)) < 0)
		return mpio_err(NULL, mpio_errno_class(errno), fn);
	return MPI_SUCCESS;
}

void mpio_files_fini(void)
{
	for (int h = 1; h < files.n; h++) {
		struct mpio_file *f = files.v[h];
		if (f) { /* the program did not close it: no collective now, only our own part */
			f->ch = MPI_COMM_NULL; /* freed with every communicator at finalize */
			file_free(f);
		}
	}
	free(files.v);
	memset(&files, 0, sizeof(files));
}

/* ---- size, sync ---- */

/* Only rank 0 changes the file; the others learn the outcome. Collective. MPI code. */
static int on_rank0(struct mpio_file *f, int (*fn)(struct mpio_file *, MPI_Offset), MPI_Offset v)
{
	int rc = MPI_SUCCESS;

	if (f->comm->rank == 0)
		rc = fn(f, v);
	return mpio_agree(f->comm, rc);
}

static int truncate_to(struct mpio_file *f, MPI_Offset size)
{
	return ftruncate(f->fd, size) < 0 ? mpio_errno_class(errno) : MPI_SUCCESS;
}

MPII_ALIAS(File_set_size)
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	static const char fn[] = "MPI_File_set_size";
	int rc;

	MPIO_FILE(f, fh, fn);
	if (size < 0)
		rc = MPI_ERR_ARG;
	else if (f->amode & (MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL))
		rc = f->amode & MPI_MODE_RDONLY ? MPI_ERR_READ_ONLY : MPI_ERR_UNSUPPORTED_OPERATION;
	else
		rc = MPI_SUCCESS;
	rc = mpio_agree(f->comm, rc);
	if (rc == MPI_SUCCESS)
		rc = on_rank0(f, truncate_to, size);
	return mpio_err(f, rc, fn);
}

/* Storage for the first size bytes; the file grows to size if smaller. */
static int allocate(struct mpio_file *f, MPI_Offset size)
{
	struct stat sb;
	int e;

	if (fstat(f->fd, &sb) < 0)
		return mpio_errno_class(errno);
	if (size <= sb.st_size)
		return MPI_SUCCESS;
	e = posix_fallocate(f->fd, 0, size);
	if (e == EOPNOTSUPP || e == EINVAL) { /* the file system cannot: grow it */
		e = ftruncate(f->fd, size) < 0 ? errno : 0;
	}
	return e ? mpio_errno_class(e) : MPI_SUCCESS;
}

MPII_ALIAS(File_preallocate)
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	static const char fn[] = "MPI_File_preallocate";
	int rc;

	MPIO_FILE(f, fh, fn);
	if (size < 0)
		rc = MPI_ERR_ARG;
	else if (f->amode & (MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL))
		rc = f->amode & MPI_MODE_RDONLY ? MPI_ERR_READ_ONLY : MPI_ERR_UNSUPPORTED_OPERATION;
	else
		rc = MPI_SUCCESS;
	rc = mpio_agree(f->comm, rc);
	if (rc == MPI_SUCCESS)
		rc = on_rank0(f, allocate, size);
	return mpio_err(f, rc, fn);
}

MPII_ALIAS(File_get_size)
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	static const char fn[] = "MPI_File_get_size";
	struct stat sb;

	MPIO_FILE(f, fh, fn);
	if (fstat(f->fd, &sb) < 0)
		return mpio_err(f, mpio_errno_class(errno), fn);
	*size = sb.st_size;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_sync)
int PMPI_File_sync(MPI_File fh)
{
	static const char fn[] = "MPI_File_sync";
	int rc = MPI_SUCCESS;

	MPIO_FILE(f, fh, fn);
	if (f->amode & MPI_MODE_RDONLY)
		rc = MPI_ERR_ACCESS;
	else if (fsync(f->fd) < 0)
		rc = mpio_errno_class(errno);
	return mpio_err(f, mpio_agree(f->comm, rc), fn);
}

/* ---- queries, info, atomicity ---- */

MPII_ALIAS(File_get_group)
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
	MPIO_FILE(f, fh, "MPI_File_get_group");
	return mpio_err(f, PMPI_Comm_group(f->ch, group), "MPI_File_get_group");
}

MPII_ALIAS(File_get_amode)
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
	MPIO_FILE(f, fh, "MPI_File_get_amode");
	*amode = f->amode;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_set_info)
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
	MPIO_FILE(f, fh, "MPI_File_set_info");
	return mpio_err(f, mpio_agree(f->comm, mpio_hints_set(&f->h, info, f->comm->size)),
	                "MPI_File_set_info");
}

MPII_ALIAS(File_get_info)
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
	MPIO_FILE(f, fh, "MPI_File_get_info");
	return mpio_err(f, mpio_hints_get(&f->h, info_used), "MPI_File_get_info");
}

MPII_ALIAS(File_set_atomicity)
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
	static const char fn[] = "MPI_File_set_atomicity";
	int v = flag != 0, all = v, rc;

	MPIO_FILE(f, fh, fn);
	rc = mpii_allreduce(&v, &all, 1, mpii_dt(MPI_INT), MPI_SUM, f->comm);
	if (rc == MPI_SUCCESS && all != 0 && all != f->comm->size)
		rc = MPI_ERR_NOT_SAME; /* every rank must ask for the same */
	if (rc == MPI_SUCCESS)
		f->atomic = v;
	return mpio_err(f, rc, fn);
}

MPII_ALIAS(File_get_atomicity)
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
	MPIO_FILE(f, fh, "MPI_File_get_atomicity");
	*flag = f->atomic;
	return MPI_SUCCESS;
}

/* ---- error handlers, handle conversion ---- */

MPII_ALIAS(File_set_errhandler)
int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler eh)
{
	static const char fn[] = "MPI_File_set_errhandler";
	struct mpio_file *f = mpio_file(fh);

	MPII_CHECK_INIT(fn);
	if (fh != MPI_FILE_NULL && !f)
		return mpio_err(NULL, MPI_ERR_FILE, fn);
	if (!mpii_errh_file_ok(eh))
		return mpio_err(f, MPI_ERR_ARG, fn);
	if (f)
		f->comm->errh = eh;
	else
		fnull.errh = eh;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_get_errhandler)
int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *eh)
{
	static const char fn[] = "MPI_File_get_errhandler";
	struct mpio_file *f = mpio_file(fh);

	MPII_CHECK_INIT(fn);
	if (fh != MPI_FILE_NULL && !f)
		return mpio_err(NULL, MPI_ERR_FILE, fn);
	*eh = f ? f->comm->errh : fnull.errh;
	return MPI_SUCCESS;
}

MPII_ALIAS(File_call_errhandler)
int PMPI_File_call_errhandler(MPI_File fh, int code)
{
	static const char fn[] = "MPI_File_call_errhandler";
	struct mpio_file *f = mpio_file(fh);

	MPII_CHECK_INIT(fn);
	if (fh != MPI_FILE_NULL && !f)
		return mpio_err(NULL, MPI_ERR_FILE, fn);
	mpio_err(f, code, fn);
	return MPI_SUCCESS;
}

MPII_PRAGMA(weak MPI_File_c2f = PMPI_File_c2f)
MPI_Fint PMPI_File_c2f(MPI_File fh)
{
	return (MPI_Fint)fh;
}

MPII_PRAGMA(weak MPI_File_f2c = PMPI_File_f2c)
MPI_File PMPI_File_f2c(MPI_Fint fh)
{
	return (MPI_File)fh;
}
