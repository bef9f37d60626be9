/* bench/xcpu.c: how fast memory moves between two CPUs right now. Two processes pinned to the
 * first two CPUs we may use take turns copying 1 MiB through shared memory, each copy reading
 * what the other CPU wrote last; prints the MB/s of one side's copies over SECONDS (default 0.3).
 *
 * On the 2-vCPU machines here this flips between two levels for seconds to minutes at a time
 * (about 7000 against 1150 MB/s on the AMD EPYC one), and every MPI's shared-memory and loopback
 * figures follow it: bench/report prints it before and after each bench.
 * usage: xcpu [SECONDS]; exit status 1 when it cannot run (fewer than two CPUs, no memory).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1u << 20)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	cpu_set_t allowed, one;
	int cpus[2], n = 0;

	if (secs <= 0 || secs > 60) {
		fprintf(stderr, "usage: xcpu [SECONDS (0-60)]\n");
		return 1;
	}
	alarm((unsigned)secs + 10);
	if (sched_getaffinity(0, sizeof allowed, &allowed) < 0)
		return 1;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	if (n < 2) {
		fprintf(stderr, "xcpu: needs two CPUs\n");
		return 1;
	}
	char *m =
	    mmap(NULL, 2 * MIB + 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	char *a = m, *b = m + MIB;
	volatile int *turn = (volatile int *)(m + 2 * MIB); /* whose copy: 0, 1; -1: stop */
	memset(m, 1, 2 * MIB);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	int me = pid == 0;
	CPU_ZERO(&one);
	CPU_SET(cpus[me], &one);
	sched_setaffinity(0, sizeof one, &one);
	long copies = 0;
	double t0 = now(), t;
	for (;;) {
		int w;
		while ((w = __atomic_load_n(turn, __ATOMIC_ACQUIRE)) != me && w >= 0)
			;
		if (w < 0)
			break;
		if (me)
			memcpy(b, a, MIB);
		else
			memcpy(a, b, MIB);
		copies++;
		if (!me && (t = now()) - t0 > secs) {
			__atomic_store_n(turn, -1, __ATOMIC_RELEASE);
			break;
		}
		__atomic_store_n(turn, !me, __ATOMIC_RELEASE);
	}
	if (me)
		_exit(0);
	t = now();
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	printf("%.0f\n", (double)copies * MIB / (t - t0) / 1e6);
	return 0;
}
