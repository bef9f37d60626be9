/* tests/mpi/spawn.c: MPI_Comm_spawn / MPI_Comm_spawn_multiple from every rank of the job
 * (collective), messages both ways over the intercommunicator, MPI_Comm_disconnect.
 *   spawn [N [HOST]]  spawn N children (default 2) of this program, on HOST (info "host")
 *   multi             spawn_multiple: 1 child with "app0", 2 with "app1"
 *   exit K            spawn 2 children; child rank 1 exits K after talking to its parents
 * Each child prints its rank, appnum and node; the parents print what each child answered.
 * lamkit's own MPI has no dynamic processes yet: built with it, this only says so. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(MPICH_VERSION) || defined(OPEN_MPI)

static int child(int argc, char **argv, MPI_Comm parent)
{
	int rank, size, psize, *appnum, flag = 0, v = -1;
	char host[256];

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_remote_size(parent, &psize);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
	gethostname(host, sizeof host);
	MPI_Recv(&v, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
	printf("child %d of %d (%s, appnum %d, %d parents) on %s: got %d\n", rank, size,
	       argc > 2 ? argv[2] : "-", flag ? *appnum : -1, psize, host, v);
	fflush(stdout);
	v = 1000 + 10 * rank + v;
	MPI_Send(&v, 1, MPI_INT, 0, 8, parent);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Comm_disconnect(&parent);
	if (argc > 3 && !strcmp(argv[2], "exit") && rank == 1)
		return atoi(argv[3]);
	MPI_Finalize();
	return 0;
}

static int parent(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spawn";
	int rank, n = 2, csize;
	char *cargs[3] = {"child", (char *)mode, NULL};
	MPI_Comm inter;
	MPI_Info info = MPI_INFO_NULL;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!strcmp(mode, "multi")) {
		char *cmds[2] = {argv[0], argv[0]};
		char *a0[3] = {"child", "app0", NULL}, *a1[3] = {"child", "app1", NULL};
		char **args[2] = {a0, a1};
		int np[2] = {1, 2};
		MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
		MPI_Comm_spawn_multiple(2, cmds, args, np, infos, 0, MPI_COMM_WORLD, &inter,
		                        MPI_ERRCODES_IGNORE);
	} else {
		if (!strcmp(mode, "spawn") && argc > 2)
			n = atoi(argv[2]);
		if (!strcmp(mode, "exit")) {
			cargs[1] = "exit";
			cargs[2] = argc > 2 ? argv[2] : "3";
		}
		char *c3[4] = {cargs[0], cargs[1], cargs[2], NULL};
		if (!strcmp(mode, "spawn") && argc > 3) {
			MPI_Info_create(&info);
			MPI_Info_set(info, "host", argv[3]);
		}
		MPI_Comm_spawn(argv[0], c3, n, info, 0, MPI_COMM_WORLD, &inter,
		               MPI_ERRCODES_IGNORE);
		if (info != MPI_INFO_NULL)
			MPI_Info_free(&info);
	}
	MPI_Comm_remote_size(inter, &csize);
	if (rank == 0) {
		for (int c = 0; c < csize; c++) {
			int v = 100 + c;
			MPI_Send(&v, 1, MPI_INT, c, 7, inter);
		}
		for (int c = 0; c < csize; c++) {
			int v = -1;
			MPI_Recv(&v, 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE);
			printf("parent: child %d answered %d\n", c, v);
		}
		fflush(stdout);
	}
	MPI_Comm_disconnect(&inter);
	if (rank == 0)
		printf("parent: disconnected from %d children\n", csize);
	MPI_Finalize();
	return 0;
}

int main(int argc, char **argv)
{
	MPI_Comm p;

	MPI_Init(&argc, &argv);
	MPI_Comm_get_parent(&p);
	return p != MPI_COMM_NULL ? child(argc, argv, p) : parent(argc, argv);
}

#else

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	printf("spawn: this MPI has no MPI_Comm_spawn\n");
	MPI_Finalize();
	return 0;
}

#endif
