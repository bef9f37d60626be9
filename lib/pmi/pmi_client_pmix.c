/* lib/pmi/pmi_client_pmix.c: libpmi under a PMIx launcher (srun --mpi=pmix, PRRTE, Flux, lamkit
 * itself): a rank that finds PMIx variables and no PMI ones starts `lamkit pmix-proxy`, the
 * lamkit binary as its PMIx client (cmd/pmixproxy.c), and speaks PMI-2 to it on a socketpair
 * as it would to any PMI-2 launcher. The program links nothing of PMIx; the node needs the
 * lamkit binary ($LAMKIT_PMIX_PROXY, else `lamkit` along PATH), which every lamkit node has. */
#include "pmi_client_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static pid_t proxy = -1;

/* Whether the environment names a PMIx server (and no PMI wire). */
static int pmix_only(void)
{
	int uri = 0;

	if (getenv("PMI_FD") || getenv("PMI_PORT") || !getenv("PMIX_NAMESPACE"))
		return 0;
	for (char **e = environ; e && *e && !uri; e++)
		uri = !strncmp(*e, "PMIX_SERVER_URI", 15);
	return uri;
}

int pmic_pmix_bridge(void)
{
	int sv[2];
	char num[16];
	const char *exe = getenv("LAMKIT_PMIX_PROXY");
	char *argv[] = {(char *)(exe && *exe ? exe : "lamkit"), "pmix-proxy", NULL};
	posix_spawn_file_actions_t fa;

	if (!pmix_only())
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 3); /* dup2 clears close-on-exec */
	int rc = posix_spawnp(&proxy, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		proxy = -1;
		errno = rc;
		return -1;
	}
	/* what a PMI-2 launcher sets: the rank then speaks PMI-2 on PMI_FD */
	snprintf(num, sizeof num, "%d", sv[0]);
	setenv("PMI_FD", num, 1);
	setenv("PMI_JOBID", getenv("PMIX_NAMESPACE"), 1);
	return 1;
}

void pmic_pmix_reap(void)
{
	if (proxy <= 0)
		return;
	/* the socket is closed: the proxy finalizes and exits; wait for it a little */
	for (int i = 0; i < 200; i++) {
		pid_t p = waitpid(proxy, NULL, WNOHANG);
		if (p == proxy || (p < 0 && errno != EINTR))
			break;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
	proxy = -1;
	unsetenv("PMI_FD");
	unsetenv("PMI_JOBID");
}
