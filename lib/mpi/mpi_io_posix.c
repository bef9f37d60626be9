/* lib/mpi/mpi_io_posix.c: independent access over POSIX: runs, data sieving, byte-range locks. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpio.h"

MPI_Offset mpio_pread(int fd, void *buf, MPI_Offset n, MPI_Offset off)
{
	MPI_Offset done = 0;

	while (done < n) {
		size_t m = n - done > (1 << 30) ? (size_t)1 << 30 : (size_t)(n - done);
		ssize_t k = pread(fd, (char *)buf + done, m, off + done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break; /* end of file */
		done += k;
	}
	return done;
}

MPI_Offset mpio_pwrite(int fd, const void *buf, MPI_Offset n, MPI_Offset off)
{
	MPI_Offset done = 0;

	while (done < n) {
		size_t m = n - done > (1 << 30) ? (size_t)1 << 30 : (size_t)(n - done);
		ssize_t k = pwrite(fd, (const char *)buf + done, m, off + done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			errno = ENOSPC;
			return -1;
		}
		done += k;
	}
	return done;
}

/* Open file description locks: held by the descriptor, not the process, so the I/O thread and
 * the main thread (and two files of one path) never share or drop each other's locks. */
static int setlk(int fd, int type, MPI_Offset off, MPI_Offset len)
{
	struct flock fl = {
	    .l_type = (short)type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};

	for (;;) {
		if (fcntl(fd, F_OFD_SETLKW, &fl) == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

int mpio_lock(int fd, int excl, MPI_Offset off, MPI_Offset len)
{
	return setlk(fd, excl ? F_WRLCK : F_RDLCK, off, len);
}

void mpio_unlock(int fd, MPI_Offset off, MPI_Offset len)
{
	setlk(fd, F_UNLCK, off, len);
}

/* ---- pieces of an access ---- */

struct piece {
	MPI_Offset off, len; /* in the file */
	char *buf;           /* in the stream */
};

/* Sieve a window of pieces p[0..n) (in file order): read the span they cover into scratch and
 * copy the pieces out (read), or read it, copy the pieces in and write it back, under an
 * exclusive lock unless the caller holds one (write). *done: bytes of the pieces done. 0,
 * ENODATA when a read reached the end of the file, or an errno. */
static int sieve(int fd, int write, int locked, const struct piece *p, int n, char *scratch,
                 MPI_Offset *done)
{
	MPI_Offset lo = p[0].off, span = p[n - 1].off + p[n - 1].len - lo, got;
	int e = 0;

	if (write && !locked && mpio_lock(fd, 1, lo, span) < 0)
		return errno;
	got = mpio_pread(fd, scratch, span, lo);
	if (got < 0) {
		e = errno;
	} else if (write) {
		if (got <
		    span) /* beyond the end: the holes stay zero, as writing there makes them */
			memset(scratch + got, 0, (size_t)(span - got));
		for (int i = 0; i < n; i++)
			memcpy(scratch + (p[i].off - lo), p[i].buf, (size_t)p[i].len);
		if (mpio_pwrite(fd, scratch, span, lo) < 0)
			e = errno;
		else
			for (int i = 0; i < n; i++)
				*done += p[i].len;
	} else {
		for (int i = 0; i < n; i++) {
			MPI_Offset have = got - (p[i].off - lo);
			MPI_Offset m = have < p[i].len ? (have > 0 ? have : 0) : p[i].len;
			memcpy(p[i].buf, scratch + (p[i].off - lo), (size_t)m);
			*done += m;
			if (m < p[i].len) {
				e = ENODATA; /* the end of the file */
				break;
			}
		}
	}
	if (write && !locked)
		mpio_unlock(fd, lo, span);
	return e;
}

/* One piece by itself, the call's way (cp). 0, ENODATA at the end of the file, or an errno. */
static int direct(int fd, int write, struct mpio_copy *cp, const struct piece *p, MPI_Offset *done)
{
	MPI_Offset k = mpio_copy_io(cp, write, fd, p->buf, p->len, p->off);

	if (k < 0)
		return errno;
	*done += k;
	return k < p->len ? ENODATA : 0;
}

/* Whether a window of n pieces holding data bytes over span bytes of the file is cheaper
 * sieved (the span read, and for a write written back, under a lock) than piece by piece: a
 * system call costs about as much as copying SYSCALL_BYTES (a few microseconds). So 8-byte
 * pieces are sieved and 16 KiB blocks of four interleaved writers are not (ROMIO sieves both,
 * and its writers then take turns rewriting each other's windows). */
#define SYSCALL_BYTES (8 << 10)
static int worth_sieving(int write, int n, MPI_Offset data, MPI_Offset span)
{
	return (write ? 2 : 1) * span < data + (MPI_Offset)n * SYSCALL_BYTES;
}

/* How data sieving applies to an access of f: a write-only descriptor cannot read what a
 * window keeps; overlapping pieces are not in file order. */
static int ds_mode(const struct mpio_file *f, int write, int overlap)
{
	if ((write && (fcntl(f->fd, F_GETFL) & O_ACCMODE) == O_WRONLY) || overlap)
		return MPIO_DISABLE;
	return write ? f->h.ds_write : f->h.ds_read;
}

/* The window of pieces p[i..*j) of p[0..n) (those within one sieve buffer of p[i]) and whether
 * it is sieved; if not, p[i] goes alone and the next window starts at p[i + 1]. */
static int window(const struct mpio_file *f, int write, int ds, const struct piece *p, int i, int n,
                  int *j)
{
	MPI_Offset win = write ? f->h.ind_wr_buffer_size : f->h.ind_rd_buffer_size;
	MPI_Offset data = p[i].len;
	int k = i + 1;

	while (k < n && p[k].off + p[k].len - p[i].off <= win) {
		data += p[k].len;
		k++;
	}
	*j = k;
	return ds != MPIO_DISABLE && k - i > 1 &&
	       (ds == MPIO_ENABLE ||
	        worth_sieving(write, k - i, data, p[k - 1].off + p[k - 1].len - p[i].off));
}

/* Do pieces p[0..n): windows of small pieces sieved, large pieces alone. 0 or an errno
 * (ENODATA: a read reached the end of the file). */
static int pieces(struct mpio_file *f, int write, int locked, int ds, struct piece *p, int n,
                  char **scratch, struct mpio_copy *cp, MPI_Offset *done)
{
	MPI_Offset win = write ? f->h.ind_wr_buffer_size : f->h.ind_rd_buffer_size;
	int i = 0, j, e = 0;

	while (i < n && !e) {
		if (window(f, write, ds, p, i, n, &j)) {
			if (!*scratch && !(*scratch = malloc((size_t)win)))
				return ENOMEM;
			e = sieve(f->fd, write, locked, p + i, j - i, *scratch, done);
			i = j;
			continue;
		}
		e = direct(f->fd, write, cp, &p[i], done);
		i++;
	}
	return e;
}

#define BATCH 1024

int mpio_pio(struct mpio_file *f, const struct mpio_view *v, int write, char *buf, MPI_Offset s,
             MPI_Offset n, MPI_Offset *done)
{
	struct piece *p;
	struct mpio_it it;
	MPI_Offset lo = 0, hi = 0, off, len;
	char *scratch = NULL;
	struct mpio_copy cp;
	int over = mpio_view_overlaps(v, s, n);
	int np = 0, e = 0, locked = 0, ds = ds_mode(f, write, over);

	*done = 0;
	if (!n)
		return MPI_SUCCESS;
	if (!v->size)
		return MPI_ERR_IO; /* a view with no data */
	mpio_copy_init(&cp, buf, n);
	if (v->contig) { /* one piece: straight to the system */
		off = mpio_view_off(v, s);
		if (f->atomic && mpio_lock(f->fd, write, off, n) < 0)
			return mpio_errno_class(errno);
		len = mpio_copy_io(&cp, write, f->fd, buf, n, off);
		e = len < 0 ? errno : 0;
		if (f->atomic)
			mpio_unlock(f->fd, off, n);
		mpio_copy_done(&cp);
		*done = len < 0 ? 0 : len;
		return e ? mpio_errno_class(e) : MPI_SUCCESS;
	}
	p = malloc(sizeof(*p) * BATCH);
	if (!p)
		return MPI_ERR_NO_MEM;
	if (f->atomic) { /* the access is one atomic unit: lock all it touches */
		lo = over ? 0 : mpio_view_off(v, s); /* overlapping: the whole file */
		hi = over ? 0 : mpio_view_off(v, s + n - 1) + 1;
		if (mpio_lock(f->fd, write, lo, hi - lo) < 0) {
			free(p);
			return mpio_errno_class(errno);
		}
		locked = 1;
	}
	mpio_it_init(&it, v, s, n);
	while (!e && mpio_it_next(&it, &off, &len)) {
		p[np++] = (struct piece){off, len, buf};
		buf += len;
		if (np < BATCH)
			continue;
		e = pieces(f, write, locked, ds, p, np, &scratch, &cp, done);
		np = 0;
	}
	if (!e && np)
		e = pieces(f, write, locked, ds, p, np, &scratch, &cp, done);
	if (locked)
		mpio_unlock(f->fd, lo, hi - lo);
	mpio_copy_done(&cp);
	free(scratch);
	free(p);
	if (e == ENODATA)
		return MPI_SUCCESS; /* a read reached the end of the file: *done says how far */
	return e ? mpio_errno_class(e) : MPI_SUCCESS;
}

int mpio_pio_sieves(const struct mpio_file *f, const struct mpio_view *v, MPI_Offset s,
                    MPI_Offset n)
{
	struct piece *p;
	struct mpio_it it;
	MPI_Offset off, len;
	int np = 0, j, hit = 0, ds = ds_mode(f, 1, mpio_view_overlaps(v, s, n));

	if (!n || !v->size || v->contig || ds == MPIO_DISABLE)
		return 0;
	if (!(p = malloc(sizeof(*p) * BATCH)))
		return 1; /* cannot tell: as if it did */
	mpio_it_init(&it, v, s, n);
	for (int more = 1; more && !hit;) {
		more = mpio_it_next(&it, &off, &len);
		if (more)
			p[np++] = (struct piece){off, len, NULL};
		if (np == BATCH || (!more && np)) { /* mpio_pio's batches and windows */
			for (int i = 0; i < np && !hit; i++)
				hit = window(f, 1, ds, p, i, np, &j);
			np = 0;
		}
	}
	free(p);
	return hit;
}
