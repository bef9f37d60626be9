/* bench/mpiio.c: MPI-IO bandwidth: write then read one shared file, contiguous (each rank one
 * block) or block-cyclic (blocks of B bytes dealt round robin), collective (_all) or independent,
 * at each size per rank. Any MPI (built by bench/mpiio with each MPI's compiler).
 *
 * usage: mpiio DIR LABEL [-s MiB,MiB,...] [-b BLOCK] [-d]
 *   DIR: where the file goes; LABEL: the first word of every line (the file system's name);
 *   -s sizes per rank in MiB (default 1,16,256); -b the cyclic block in bytes (default 16384);
 *   -d disk: a write is timed up to MPI_File_sync (the data on the device), and the file's pages
 *   are dropped from the page cache before it is read back (posix_fadvise), so the read comes
 *   from the device.
 * Prints "# ... ranks=N", then one line per case: "LABEL PATTERN MODE OP MIB  MBps" where MBps
 * = all ranks' bytes / the slowest rank's time (MB = 1e6 B), the ranks started together. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* Time of one access by the slowest rank: barrier, call, (sync), max over ranks. */
static double timed(MPI_File fh, int write, int coll, int cyclic, MPI_Offset off, char *buf,
                    int count, MPI_Datatype t, int sync)
{
	MPI_Status st;
	double t0, dt, mx;
	int rc;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (cyclic)
		rc = write ? (coll ? MPI_File_write_all(fh, buf, count, t, &st)
		                   : MPI_File_write(fh, buf, count, t, &st))
		           : (coll ? MPI_File_read_all(fh, buf, count, t, &st)
		                   : MPI_File_read(fh, buf, count, t, &st));
	else
		rc = write ? (coll ? MPI_File_write_at_all(fh, off, buf, count, t, &st)
		                   : MPI_File_write_at(fh, off, buf, count, t, &st))
		           : (coll ? MPI_File_read_at_all(fh, off, buf, count, t, &st)
		                   : MPI_File_read_at(fh, off, buf, count, t, &st));
	if (rc == MPI_SUCCESS && write && sync)
		rc = MPI_File_sync(fh);
	dt = MPI_Wtime() - t0;
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "mpiio: rank %d: an access failed (%d)\n", rank, rc);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return mx;
}

/* The file's pages out of the page cache (after they reached the device). */
static void drop_cache(const char *path)
{
	if (rank == 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			fdatasync(fd);
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void one(const char *dir, const char *label, long mib, long blk, int cyclic, int coll,
                int disk)
{
	char path[4096];
	long bytes = mib << 20, nblk = bytes / blk;
	char *buf = malloc((size_t)bytes);
	MPI_Datatype vec = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL, chunk = MPI_DATATYPE_NULL;
	MPI_File fh;
	double w, r;
	int count = 1;

	snprintf(path, sizeof(path), "%s/mpiio.%s.dat", dir, label);
	for (long i = 0; i < bytes; i++)
		buf[i] = (char)(i * 7 + rank);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	/* the data as one element of a contiguous type (sizes above 2 GiB would need it) */
	MPI_Type_contiguous((int)blk, MPI_BYTE, &chunk);
	MPI_Type_commit(&chunk);
	count = (int)nblk;
	if (cyclic) {
		MPI_Type_vector((int)nblk, 1, size, chunk, &vec);
		MPI_Type_create_resized(vec, 0, (MPI_Aint)blk * nblk * size, &ft);
		MPI_Type_commit(&ft);
		MPI_File_set_view(fh, (MPI_Offset)rank * blk, chunk, ft, "native", MPI_INFO_NULL);
	}
	w = timed(fh, 1, coll, cyclic, (MPI_Offset)rank * bytes, buf, count, chunk, disk);
	if (disk)
		drop_cache(path);
	if (cyclic)
		MPI_File_seek(fh, 0, MPI_SEEK_SET);
	memset(buf, 0, (size_t)bytes);
	r = timed(fh, 0, coll, cyclic, (MPI_Offset)rank * bytes, buf, count, chunk, 0);
	for (long i = 0; i < bytes; i += 4093)
		if (buf[i] != (char)(i * 7 + rank)) {
			fprintf(stderr, "mpiio: rank %d: byte %ld read back wrong\n", rank, i);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	MPI_File_close(&fh);
	if (rank == 0) {
		const char *pat = cyclic ? "cyclic" : "contig", *mode = coll ? "coll" : "indep";
		double mb = (double)bytes * size / 1e6;
		printf("%s %s %s write %ld  %.0f\n", label, pat, mode, mib, mb / w);
		printf("%s %s %s read %ld  %.0f\n", label, pat, mode, mib, mb / r);
		fflush(stdout);
		MPI_File_delete(path, MPI_INFO_NULL);
	}
	if (ft != MPI_DATATYPE_NULL) {
		MPI_Type_free(&ft);
		MPI_Type_free(&vec);
	}
	MPI_Type_free(&chunk);
	free(buf);
}

int main(int argc, char **argv)
{
	const char *sizes = "1,16,256";
	long blk = 16384;
	int disk = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpiio DIR LABEL [-s MiB,...] [-b BLOCK] [-d]\n");
		MPI_Finalize();
		return 100;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			sizes = argv[++i];
		else if (!strcmp(argv[i], "-b") && i + 1 < argc)
			blk = atol(argv[++i]);
		else if (!strcmp(argv[i], "-d"))
			disk = 1;
	}
	if (rank == 0)
		printf("# mpiio %s ranks=%d block=%ld disk=%d\n", argv[2], size, blk, disk);
	for (const char *p = sizes; *p;) {
		long mib = strtol(p, (char **)&p, 10);
		if (blk <= 0 || mib <= 0 || (mib << 20) % blk)
			break;
		for (int cyclic = 0; cyclic < 2; cyclic++)
			for (int coll = 1; coll >= 0; coll--)
				one(argv[1], argv[2], mib, blk, cyclic, coll, disk);
		if (*p == ',')
			p++;
	}
	MPI_Finalize();
	return 0;
}
