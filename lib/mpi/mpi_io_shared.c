/* lib/mpi/mpi_io_shared.c: the shared file pointer: a counter in a file of its own, changed
 * under a byte-range lock; MPI_File_seek_shared, MPI_File_get_position_shared.
 *
 * The counter is two int64: the view epoch it belongs to and its value. MPI_File_set_view
 * puts the pointer back to 0 by moving every rank to the next epoch (a value of an older epoch
 * reads as 0), so it needs no write and no barrier of its own.
 *
 * Where the file's ranks share one node the counter lives in /dev/shm (a POSIX shm object,
 * /lkmpi-io-CTX-PID, registered in the session directory so that the agent removes it if the
 * job dies); where
 * they span nodes, next to the file itself (".NAME.lkshfp.PID.CTX"), on the file system every
 * rank already reaches it through, whose locks every node sees (ROMIO does the same). No rank
 * has to serve the others: a rank that computes does not hold anyone up. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpio.h"

/* The counter's name for f (malloc'ed into f->shfp_path on first need). MPI code. */
static int name(struct mpio_file *f)
{
	char buf[4200];
	const char *slash;

	if (f->shfp_path)
		return MPI_SUCCESS;
	if (f->nnodes == 1) {
		snprintf(buf, sizeof(buf), "/lkmpi-io-%u-%d", f->comm->ctx, f->shfp_pid);
	} else {
		slash = strrchr(f->path, '/');
		if (slash)
			snprintf(buf, sizeof(buf), "%.*s/.%s.lkshfp.%d.%u", (int)(slash - f->path),
			         f->path, slash + 1, f->shfp_pid, f->comm->ctx);
		else
			snprintf(buf, sizeof(buf), ".%s.lkshfp.%d.%u", f->path, f->shfp_pid,
			         f->comm->ctx);
	}
	f->shfp_path = strdup(buf);
	return f->shfp_path ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* $LAMKIT_SESSION_DIR/shm-<name>: the agent removes the object if nobody else does. */
static void registration(const struct mpio_file *f, int add)
{
	const char *dir = getenv("LAMKIT_SESSION_DIR");
	char p[4200];
	int fd;

	if (!dir || !*dir || f->nnodes != 1)
		return;
	snprintf(p, sizeof(p), "%s/shm-%s", dir, f->shfp_path + 1);
	if (!add) {
		unlink(p);
		return;
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (dprintf(fd, "%s\n", f->shfp_path) < 0)
			(void)0;
		close(fd);
	}
}

/* Open (creating) the counter. MPI code. */
static int open_counter(struct mpio_file *f, int create)
{
	int fl = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), rc = name(f);

	if (rc != MPI_SUCCESS || f->shfp_fd >= 0)
		return rc;
	if (f->nnodes == 1) {
		f->shfp_fd = shm_open(f->shfp_path, fl, 0600);
		if (f->shfp_fd >= 0 && create)
			registration(f, 1);
	} else {
		f->shfp_fd = open(f->shfp_path, fl, 0600);
	}
	return f->shfp_fd < 0 ? mpio_errno_class(errno) : MPI_SUCCESS;
}

/* Under the lock: old value into *old, *old + delta (set: val) written back. MPI code. */
static int update(struct mpio_file *f, int set, MPI_Offset v, MPI_Offset *old)
{
	int64_t w[2] = {0, 0}, nw[2];
	MPI_Offset got;
	int rc = MPI_SUCCESS;

	if (mpio_lock(f->shfp_fd, 1, 0, sizeof(w)) < 0)
		return mpio_errno_class(errno);
	got = mpio_pread(f->shfp_fd, w, sizeof(w), 0);
	if (got < 0)
		rc = mpio_errno_class(errno);
	else if (got < (MPI_Offset)sizeof(w) || w[0] != f->epoch) /* new, or of an older view */
		w[1] = 0;
	nw[0] = f->epoch;
	nw[1] = set ? v : w[1] + v;
	if (rc == MPI_SUCCESS && (nw[0] != w[0] || nw[1] != w[1] || got < (MPI_Offset)sizeof(w)) &&
	    mpio_pwrite(f->shfp_fd, nw, sizeof(nw), 0) < 0)
		rc = mpio_errno_class(errno);
	mpio_unlock(f->shfp_fd, 0, sizeof(w));
	if (old)
		*old = w[1];
	return rc;
}

int mpio_shared_fetch_add(struct mpio_file *f, MPI_Offset delta, MPI_Offset *old)
{
	int rc = open_counter(f, 1);

	return rc == MPI_SUCCESS ? update(f, 0, delta, old) : rc;
}

int mpio_shared_set(struct mpio_file *f, MPI_Offset val)
{
	int rc = open_counter(f, val != 0);

	if (rc == MPI_ERR_NO_SUCH_FILE && !val) /* never used: it is 0 already */
		return MPI_SUCCESS;
	return rc == MPI_SUCCESS ? update(f, 1, val, NULL) : rc;
}

void mpio_shared_remove(struct mpio_file *f)
{
	if (name(f) != MPI_SUCCESS)
		return;
	if (f->nnodes == 1) {
		if (shm_unlink(f->shfp_path) == 0 || errno != ENOENT)
			registration(f, 0);
	} else {
		unlink(f->shfp_path);
	}
}

MPII_ALIAS(File_seek_shared)
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	static const char fn[] = "MPI_File_seek_shared";
	int64_t mine[2] = {offset, whence}, *all;
	MPI_Offset base = 0;
	int rc = MPI_SUCCESS;

	MPIO_FILE(f, fh, fn);
	all = malloc(sizeof(mine) * (size_t)f->comm->size);
	if (!all)
		return mpio_err(f, MPI_ERR_NO_MEM, fn); /* nobody can go on: a lost rank */
	rc = mpii_allgather(mine, 2, mpii_dt(MPI_INT64_T), all, 2, mpii_dt(MPI_INT64_T), f->comm);
	for (int r = 0; rc == MPI_SUCCESS && r < f->comm->size; r++)
		if (all[2 * r] != offset || all[2 * r + 1] != whence)
			rc = MPI_ERR_NOT_SAME; /* the standard asks for the same arguments
			                          everywhere */
	free(all);
	if (rc == MPI_SUCCESS && (f->amode & MPI_MODE_SEQUENTIAL))
		rc = MPI_ERR_UNSUPPORTED_OPERATION;
	if (rc == MPI_SUCCESS && whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR &&
	    whence != MPI_SEEK_END)
		rc = MPI_ERR_ARG;
	if (rc == MPI_SUCCESS && f->comm->rank == 0) {
		if (whence == MPI_SEEK_CUR)
			rc = mpio_shared_fetch_add(f, 0, &base);
		else if (whence == MPI_SEEK_END)
			rc = mpio_end_etypes(f, &base);
		if (rc == MPI_SUCCESS)
			rc = base + offset < 0 ? MPI_ERR_ARG : mpio_shared_set(f, base + offset);
	}
	return mpio_err(f, mpio_agree(f->comm, rc), fn);
}

MPII_ALIAS(File_get_position_shared)
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
	static const char fn[] = "MPI_File_get_position_shared";

	MPIO_FILE(f, fh, fn);
	return mpio_err(f, mpio_shared_fetch_add(f, 0, offset), fn);
}
