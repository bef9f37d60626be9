/* tests/mpi/portconn.c: MPI_Comm_accept / MPI_Comm_connect between two jobs, found through the
 * name service (MPI_Publish_name / MPI_Lookup_name):
 *   portconn server NAME   rank 0 opens a port and publishes it as NAME; the job accepts one
 *                          connection, talks, disconnects, unpublishes
 *   portconn client NAME   looks NAME up (retrying for 30 s), connects, talks, disconnects
 *   portconn family        rank 0 spawns two jobs of one rank each, a server and a client of
 *                          name "portconn-<pid>", which connect to each other
 * Talking: every client rank sends 1000 + its rank to server rank 0, which prints the sum;
 * server rank 0 sends 7 to every client rank, which prints it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(MPICH_VERSION) || defined(OPEN_MPI)

static void talk(MPI_Comm inter, int server)
{
	int rank, rsize;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_remote_size(inter, &rsize);
	if (server && rank == 0) {
		long sum = 0;
		for (int r = 0; r < rsize; r++) {
			int v;
			MPI_Recv(&v, 1, MPI_INT, r, 1, inter, MPI_STATUS_IGNORE);
			sum += v;
		}
		for (int r = 0; r < rsize; r++) {
			int seven = 7;
			MPI_Send(&seven, 1, MPI_INT, r, 2, inter);
		}
		printf("portconn: server: %d clients sent %ld\n", rsize, sum);
	} else if (!server) {
		int v = 1000 + rank;
		MPI_Send(&v, 1, MPI_INT, 0, 1, inter);
		MPI_Recv(&v, 1, MPI_INT, 0, 2, inter, MPI_STATUS_IGNORE);
		printf("portconn: client %d: server said %d\n", rank, v);
	}
	fflush(stdout);
	MPI_Comm_disconnect(&inter);
}

static int server(const char *name)
{
	char port[MPI_MAX_PORT_NAME] = "";
	int rank;
	MPI_Comm inter;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Open_port(MPI_INFO_NULL, port);
		MPI_Publish_name(name, MPI_INFO_NULL, port);
		printf("portconn: server: published %s\n", name);
		fflush(stdout);
	}
	MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
	talk(inter, 1);
	if (rank == 0) {
		MPI_Unpublish_name(name, MPI_INFO_NULL, port);
		MPI_Close_port(port);
	}
	return 0;
}

static int client(const char *name)
{
	char port[MPI_MAX_PORT_NAME] = "";
	int rank, rc = MPI_ERR_NAME;
	MPI_Comm inter;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		for (int i = 0; i < 300 && rc != MPI_SUCCESS; i++) {
			rc = MPI_Lookup_name(name, MPI_INFO_NULL, port);
			if (rc != MPI_SUCCESS)
				usleep(100000);
		}
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
		if (rc != MPI_SUCCESS) {
			printf("portconn: client: %s not found\n", name);
			fflush(stdout);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
	}
	MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
	talk(inter, 0);
	return 0;
}

static int family(char *self)
{
	char name[64], *sargs[3] = {"server", name, NULL}, *cargs[3] = {"client", name, NULL};
	MPI_Comm a, b;

	snprintf(name, sizeof name, "portconn-%d", (int)getpid());
	MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Comm_spawn(self, sargs, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &a, MPI_ERRCODES_IGNORE);
	MPI_Comm_spawn(self, cargs, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &b, MPI_ERRCODES_IGNORE);
	MPI_Comm_disconnect(&a);
	MPI_Comm_disconnect(&b);
	return 0;
}

int main(int argc, char **argv)
{
	MPI_Comm parent;
	int rc = 100;

	MPI_Init(&argc, &argv);
	MPI_Comm_get_parent(&parent);
	if (parent != MPI_COMM_NULL)
		MPI_Comm_disconnect(&parent); /* a job of `family`: on its own from here */
	if (argc > 2 && !strcmp(argv[1], "server"))
		rc = server(argv[2]);
	else if (argc > 2 && !strcmp(argv[1], "client"))
		rc = client(argv[2]);
	else if (argc > 1 && !strcmp(argv[1], "family"))
		rc = family(argv[0]);
	else
		fprintf(stderr, "usage: portconn server NAME | client NAME | family\n");
	MPI_Finalize();
	return rc;
}

#else

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	printf("portconn: this MPI has no MPI_Comm_accept\n");
	MPI_Finalize();
	return 0;
}

#endif
