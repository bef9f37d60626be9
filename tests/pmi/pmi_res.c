/* tests/pmi/pmi_res.c: registers a shared-memory segment, a /dev/shm file and a helper
 * process (in its own session), a SysV segment and semaphore set through
 * PMI_Resource_register, then holds or exits.
 * Usage: pmi_res PREFIX hold|exit|release
 *   hold: print "pmi_res: rank R ready ..." and sleep until killed;
 *   exit: return 0 with everything still registered (the agent must clean up);
 *   release: also create PREFIX-keep-R, register it, release it in two phases, create it
 *   again unregistered (it must survive), then hold.
 * Names: /dev/shm/PREFIX-seg-R (segment), /dev/shm/PREFIX-file-R; the SysV ids and the
 * helper's pid printed. */
#include "pmi.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

static int rank = -1;

static int fail(const char *what, int rc)
{
	printf("pmi_res: rank %d: FAIL %s (rc %d)\n", rank, what, rc);
	fflush(stdout);
	return 1;
}

static int make_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	return fd < 0 || write(fd, "x\n", 2) != 2 || close(fd) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	char seg[256], file[256], keep[256], pidstr[32];
	int spawned, rc;

	if (argc < 3)
		return fail("usage: pmi_res PREFIX hold|exit|release", 0);
	if ((rc = PMI_Init(&spawned)) || (rc = PMI_Get_rank(&rank)))
		return fail("init", rc);
	snprintf(seg, sizeof(seg), "/%s-seg-%d", argv[1], rank);
	snprintf(file, sizeof(file), "/dev/shm/%s-file-%d", argv[1], rank);
	snprintf(keep, sizeof(keep), "/dev/shm/%s-keep-%d", argv[1], rank);

	int fd = shm_open(seg, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return fail("shm_open", 0);
	close(fd);
	if ((rc = PMI_Resource_register("shm", seg)))
		return fail("register shm", rc);
	if (make_file(file) < 0 || (rc = PMI_Resource_register("file", file)))
		return fail("register file", rc);
	pid_t helper = fork();
	if (helper == 0) { /* a helper that outlives its rank unless someone kills it */
		setsid();
		execl("/bin/sleep", "sleep", "300", (char *)NULL);
		_exit(127);
	}
	snprintf(pidstr, sizeof(pidstr), "%ld", (long)helper);
	if (helper < 0 || (rc = PMI_Resource_register("pid", pidstr)))
		return fail("register helper", rc);
	/* SysV IPC: a segment and a semaphore set, by id */
	char shmid[16], semid[16];
	int ish = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600),
	    ise = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	snprintf(shmid, sizeof(shmid), "%d", ish);
	snprintf(semid, sizeof(semid), "%d", ise);
	if (ish < 0 || ise < 0 || (rc = PMI_Resource_register("sysv-shm", shmid)) ||
	    (rc = PMI_Resource_register("sysv-sem", semid)))
		return fail("register SysV ids", rc);
	/* what cleanup would not remove is refused at registration */
	if (PMI_Resource_register("file", "/etc/passwd") == PMI_SUCCESS ||
	    PMI_Resource_register("shm", "/a/b") == PMI_SUCCESS ||
	    PMI_Resource_register("pid", "1") == PMI_SUCCESS ||
	    PMI_Resource_register("sysv", "1") == PMI_SUCCESS ||
	    PMI_Resource_register("sysv-msg", "x1") == PMI_SUCCESS ||
	    PMI_Resource_release_end("file", "/dev/shm/never-registered") == PMI_SUCCESS)
		return fail("a bad registration was accepted", 0);
	if (strcmp(argv[2], "release") == 0) {
		if (make_file(keep) < 0 || (rc = PMI_Resource_register("file", keep)) ||
		    (rc = PMI_Resource_release_begin("file", keep)) || unlink(keep) < 0 ||
		    (rc = PMI_Resource_release_end("file", keep)) || make_file(keep) < 0)
			return fail("two-phase release", rc);
	}
	printf("pmi_res: rank %d ready seg=%s file=%s sysv-shm=%s sysv-sem=%s helper=%ld\n", rank,
	       seg, file, shmid, semid, (long)helper);
	fflush(stdout);
	if (strcmp(argv[2], "exit") == 0) {
		PMI_Barrier();
		PMI_Finalize();
		return 0;
	}
	for (;;)
		pause();
}
