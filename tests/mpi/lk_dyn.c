/* tests/mpi/lk_dyn.c: dynamic processes in lamkit's MPI: spawn, spawn_multiple, accept/connect
 * between jobs, join, the errors.
 *   lk_dyn spawn N [R]    every rank of the job spawns N children (collective, root R, default
 *                         0): messages both ways, barrier and allreduce over the
 *                         intercommunicator and over MPI_Intercomm_merge, MPI_UNIVERSE_SIZE;
 *                         "lk_dyn: OK spawn ..." on rank 0
 *   lk_dyn multi          spawn_multiple: 1 child of "app0", 2 of "app1"; MPI_APPNUM 0, 1, 1
 *   lk_dyn crash K        spawn 2 children; child 1 exits K after talking (the job fails); K =
 *                         kill: child 1 kills itself (SIGKILL) in the middle of a 4 MiB exchange
 *   lk_dyn server WHERE   open a port, give it (WHERE = file:PATH or name:SERVICE), accept
 *   lk_dyn client WHERE   find the port (bounded wait) and connect; both exchange and reduce
 *   lk_dyn join           2 ranks: rank 0 listens on tcp, rank 1 connects, both MPI_Comm_join
 *   lk_dyn errors         MPI_ERR_PORT for a bogus port (within a bounded time), MPI_ERR_NAME,
 *                         MPI_ERR_SPAWN for 64 children (run it where they do not fit)
 *   lk_dyn path DIR NAME WDIR  spawn 2 children of NAME (a bare name found only along the info
 *                         key "path" = DIR) in working directory WDIR (info "wdir"); they check
 *                         their cwd and talk
 *   lk_dyn manyargs N LEN spawn 2 children with N arguments of LEN bytes each; they check them
 *                         all and talk
 *   lk_dyn xfer N         every rank spawns N children (collective); parent rank 0 and each child
 *                         exchange messages of 8 B .. 4 MiB both ways, one way and both at once,
 *                         and check every byte ("lk_dyn: xfer children=N checked")
 *   lk_dyn pingpong       one parent, one child: ping-pong time at 8 B and bandwidth at 1 MiB
 *                         ("pingpong 8 B: X us", "pingpong 1 MiB: Y MB/s")
 *   lk_dyn bench N        one parent spawns N children: "spawn N: X ms" to the intercomm barrier
 *   lk_dyn barrier        the children's side of bench without a parent (mpiexec -n N baseline)
 *   lk_dyn disc N R       R rounds of: spawn N children, talk (shm between the jobs), disconnect;
 *                         the children exit after it while the parents go on in their world.
 *                         After each round rank 0 waits (bounded) for the release of the
 *                         children and checks that its open fds, sockets and lamkit segments
 *                         (mapped, and in /dev/shm) are back where they were after round 1:
 *                         "lk_dyn: disc rounds=R fds A..B sockets C..D maps E" (MPICH's
 *                         spawn/concurrent_spawns)
 *   lk_dyn reconnect N R  spawn N children once; then R rounds of disconnect and accept/connect
 *                         again between the same processes (the port is the children's
 *                         argument), talking each time; every process checks that its sockets
 *                         and mapped segments stay bounded (MPICH's spawn/disconnect_reconnect)
 * Exit 0 when every check passed. */
#include <arpa/inet.h>
#include <mpi.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "lk_util.h"

static char *argv0;

/* Talk over inter (either side): remote rank r gets 1000 * (my rank + 1) + r from each; then an
 * intercomm barrier, an allreduce (sum of the other group's ranks + 1), Ibcast/Iallreduce/Ibarrier,
 * the merged comm's allreduce. `low` orders the merge and picks the Ibcast's root group. */
static void talk(MPI_Comm inter, int low)
{
	int rsize, me, v, sum = 0, want = 0, msize, total;
	MPI_Comm merged;

	MPI_Comm_remote_size(inter, &rsize);
	MPI_Comm_rank(inter, &me);
	for (int r = 0; r < rsize; r++) {
		v = 1000 * (me + 1) + r;
		MPI_Send(&v, 1, MPI_INT, r, 7, inter);
	}
	for (int r = 0; r < rsize; r++) {
		v = -1;
		MPI_Recv(&v, 1, MPI_INT, r, 7, inter, MPI_STATUS_IGNORE);
		LK_CHECK(v == 1000 * (r + 1) + me, "from remote %d got %d", r, v);
	}
	MPI_Barrier(inter);
	v = me + 1;
	MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
	for (int r = 0; r < rsize; r++)
		want += r + 1;
	LK_CHECK(sum == want, "intercomm allreduce %d, want %d", sum, want);
	/* the nonblocking ones number the union's ranks like the blocking ones (between jobs: the
	 * handshake's order); the low side's rank 0 is the Ibcast root */
	{
		MPI_Request q[3];
		MPI_Status st[3]; /* not MPI_STATUSES_IGNORE: gcc -Werror over MPICH's mpi.h */
		int b = low ? 77 : -1, isum = 0;
		v = me + 1;
		MPI_Ibcast(&b, 1, MPI_INT, low ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter,
		           &q[0]);
		MPI_Iallreduce(&v, &isum, 1, MPI_INT, MPI_SUM, inter, &q[1]);
		MPI_Ibarrier(inter, &q[2]);
		MPI_Waitall(3, q, st);
		LK_CHECK(b == 77, "intercomm Ibcast got %d, want 77", b);
		LK_CHECK(isum == want, "intercomm Iallreduce %d, want %d", isum, want);
	}
	MPI_Intercomm_merge(inter, !low, &merged);
	MPI_Comm_size(merged, &msize);
	MPI_Comm_size(inter, &v);
	LK_CHECK(msize == v + rsize, "merged size %d", msize);
	MPI_Comm_rank(merged, &v);
	LK_CHECK(low ? v == me : v == me + rsize, "merged rank %d (low %d)", v, low);
	MPI_Allreduce(&v, &total, 1, MPI_INT, MPI_SUM, merged);
	LK_CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
	MPI_Barrier(merged);
	/* groups mixing both jobs: even and odd merged ranks, joined by MPI_Intercomm_create */
	if (msize > 1) {
		MPI_Comm half, ic2;
		int hr, hs, rs2;
		MPI_Comm_split(merged, v % 2, v, &half);
		MPI_Comm_rank(half, &hr);
		MPI_Comm_size(half, &hs);
		MPI_Intercomm_create(half, 0, merged, (v + 1) % 2, 123, &ic2);
		MPI_Comm_remote_size(ic2, &rs2);
		LK_CHECK(rs2 == msize - hs, "Intercomm_create remote size %d", rs2);
		if (hr < rs2) {
			int got = -1;
			MPI_Sendrecv(&v, 1, MPI_INT, hr, 5, &got, 1, MPI_INT, hr, 5, ic2,
			             MPI_STATUS_IGNORE);
			LK_CHECK(got == 2 * hr + (v % 2 ? 0 : 1), "Intercomm_create: got %d", got);
		}
		MPI_Barrier(ic2);
		MPI_Comm_free(&ic2);
		MPI_Comm_free(&half);
	}
	MPI_Comm_free(&merged);
}

/* Argument i of "manyargs": its length is the parent's choice, each byte a letter from i. */
static char many_byte(int i, size_t k)
{
	return (char)('a' + (i + (int)k) % 26);
}

static int many_arg_ok(const char *a, int i)
{
	size_t n = strlen(a);

	for (size_t k = 0; k < n; k++)
		if (a[k] != many_byte(i, k))
			return 0;
	return n > 0;
}

static const int xfer_sizes[] = {0, 8, 1000, 16384, 20000, 65536, 300000, 4 << 20};
#define XFER_N (int)(sizeof xfer_sizes / sizeof xfer_sizes[0])

static unsigned char xfer_byte(int from, int size, size_t k)
{
	return (unsigned char)(k * 131 + (size_t)size * 7 + (size_t)from * 29 + (k >> 12));
}

static void xfer_fill(unsigned char *b, int from, int size)
{
	for (size_t k = 0; k < (size_t)size; k++)
		b[k] = xfer_byte(from, size, k);
}

static void xfer_check(const unsigned char *b, int from, int size, const char *how)
{
	size_t bad = (size_t)-1;

	for (size_t k = 0; k < (size_t)size && bad == (size_t)-1; k++)
		if (b[k] != xfer_byte(from, size, k))
			bad = k;
	LK_CHECK(bad == (size_t)-1, "%s: %d bytes from %d: byte %zu differs", how, size, from, bad);
}

/* With remote rank `peer` of inter: each size one way (`first` sends first), then both ways at
 * once. `from` names this side in the data (0 parent, 1 child). */
static void xfer_with(MPI_Comm inter, int peer, int first, int from)
{
	unsigned char *s = malloc((size_t)(4 << 20)), *r = malloc((size_t)(4 << 20));
	MPI_Request q[2];
	MPI_Status st[2];

	LK_CHECK(s && r, "out of memory");
	for (int i = 0; s && r && i < XFER_N; i++) {
		int n = xfer_sizes[i];
		xfer_fill(s, from, n);
		memset(r, 0xee, (size_t)n);
		for (int turn = 0; turn < 2; turn++) {
			if (turn == !first)
				MPI_Send(s, n, MPI_BYTE, peer, 20 + i, inter);
			else
				MPI_Recv(r, n, MPI_BYTE, peer, 20 + i, inter, MPI_STATUS_IGNORE);
		}
		xfer_check(r, !from, n, "one way");
		memset(r, 0xee, (size_t)n);
		MPI_Irecv(r, n, MPI_BYTE, peer, 40 + i, inter, &q[0]);
		MPI_Isend(s, n, MPI_BYTE, peer, 40 + i, inter, &q[1]);
		MPI_Waitall(2, q, st);
		xfer_check(r, !from, n, "both ways");
	}
	free(s);
	free(r);
}

static void pingpong(MPI_Comm inter, int first);
static int disc_child(MPI_Comm parent);
static int reconnect_child(MPI_Comm parent, const char *port, int rounds);

static int child(int argc, char **argv, MPI_Comm parent)
{
	int *appnum, flag = 0, an;

	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
	an = flag ? *appnum : -1;
	if (argc > 2 && !strcmp(argv[2], "app1"))
		LK_CHECK(an == 1, "appnum %d, want 1", an);
	else if (argc > 2 && !strcmp(argv[2], "app0"))
		LK_CHECK(an == 0, "appnum %d, want 0", an);
	if (argc > 2 && !strcmp(argv[2], "xfer")) {
		xfer_with(parent, 0, 0, 1);
		MPI_Comm_disconnect(&parent);
		lk_name = "lk_dyn child";
		return lk_finish();
	}
	if (argc > 2 && !strcmp(argv[2], "pingpong")) {
		pingpong(parent, 0);
		MPI_Comm_disconnect(&parent);
		MPI_Finalize();
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "disc"))
		return disc_child(parent);
	if (argc > 3 && !strcmp(argv[2], "reconnect"))
		return reconnect_child(parent, argv[3], argc > 4 ? atoi(argv[4]) : 1);
	if (argc > 2 && !strcmp(argv[2], "bench")) {
		MPI_Barrier(parent);
		MPI_Comm_disconnect(&parent);
		MPI_Finalize();
		return 0;
	}
	if (argc > 3 && !strcmp(argv[2], "wdir")) {
		char cwd[4096];
		LK_CHECK(getcwd(cwd, sizeof cwd) && !strcmp(cwd, argv[3]), "cwd %s, want %s", cwd,
		         argv[3]);
	}
	if (argc > 3 && !strcmp(argv[2], "many")) {
		int n = atoi(argv[3]), bad = -1;
		LK_CHECK(argc == n + 4, "argc %d, want %d", argc, n + 4);
		for (int i = 4; i < argc && bad < 0; i++)
			if (!many_arg_ok(argv[i], i - 4))
				bad = i - 4;
		LK_CHECK(bad < 0, "argument %d differs from what the parent sent", bad);
	}
	talk(parent, 0);
	MPI_Send(&an, 1, MPI_INT, 0, 9, parent);
	if (argc > 3 && !strcmp(argv[2], "crash") && !strcmp(argv[3], "kill")) {
		static char big[4 << 20];
		MPI_Request q;
		/* rank 1 dies while the parent waits for the rest of its 4 MiB */
		MPI_Isend(big, lk_rank == 1 ? sizeof big / 2 : sizeof big, MPI_BYTE, 0, 10, parent,
		          &q);
		if (lk_rank == 1)
			kill(getpid(), SIGKILL);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
	}
	if (argc > 3 && !strcmp(argv[2], "crash") && lk_rank == 1)
		_exit(atoi(argv[3]));
	MPI_Comm_disconnect(&parent);
	LK_CHECK(parent == MPI_COMM_NULL, "disconnect sets the handle to null");
	MPI_Comm_get_parent(&parent);
	LK_CHECK(parent == MPI_COMM_NULL, "no parent after disconnect");
	lk_name = "lk_dyn child";
	return lk_finish();
}

static int spawn(int n, int root, const char *how)
{
	char *args[3] = {"child", (char *)how, NULL};
	int *errs = calloc((size_t)n, sizeof(int)), rsize = 0, an[3], *usize, flag = 0;
	MPI_Comm inter;

	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
	LK_CHECK(flag && *usize >= lk_size, "MPI_UNIVERSE_SIZE %d", flag ? *usize : -1);
	MPI_Comm_spawn(argv0, args, n, MPI_INFO_NULL, root, MPI_COMM_WORLD, &inter, errs);
	for (int i = 0; i < n; i++)
		LK_CHECK(errs[i] == MPI_SUCCESS, "errcode[%d] = %d", i, errs[i]);
	free(errs);
	MPI_Comm_remote_size(inter, &rsize);
	LK_CHECK(rsize == n, "remote size %d, want %d", rsize, n);
	talk(inter, 1);
	for (int i = 0; i < n && lk_rank == 0; i++)
		MPI_Recv(&an[0], 1, MPI_INT, i, 9, inter, MPI_STATUS_IGNORE);
	MPI_Comm_disconnect(&inter);
	if (lk_rank == 0)
		printf("lk_dyn: spawn parents=%d children=%d talked\n", lk_size, n);
	return lk_finish();
}

static int multi(void)
{
	char *cmds[2] = {argv0, argv0};
	char *a0[3] = {"child", "app0", NULL}, *a1[3] = {"child", "app1", NULL};
	char **args[2] = {a0, a1};
	int np[2] = {1, 2}, errs[3] = {-1, -1, -1}, an;
	MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
	MPI_Comm inter;

	MPI_Comm_spawn_multiple(2, cmds, args, np, infos, 0, MPI_COMM_WORLD, &inter, errs);
	LK_CHECK(!errs[0] && !errs[1] && !errs[2], "errcodes %d %d %d", errs[0], errs[1], errs[2]);
	talk(inter, 1);
	for (int i = 0; i < 3 && lk_rank == 0; i++) {
		MPI_Recv(&an, 1, MPI_INT, i, 9, inter, MPI_STATUS_IGNORE);
		LK_CHECK(an == (i > 0), "child %d has appnum %d", i, an);
	}
	MPI_Comm_disconnect(&inter);
	if (lk_rank == 0)
		printf("lk_dyn: spawn_multiple 1+2 appnums ok\n");
	return lk_finish();
}

static int crash(const char *k)
{
	char *args[4] = {"child", "crash", (char *)k, NULL};
	MPI_Comm inter;
	int an;

	MPI_Comm_spawn(argv0, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
	               MPI_ERRCODES_IGNORE);
	talk(inter, 1);
	for (int i = 0; i < 2 && lk_rank == 0; i++)
		MPI_Recv(&an, 1, MPI_INT, i, 9, inter, MPI_STATUS_IGNORE);
	if (!strcmp(k, "kill") && lk_rank == 0) {
		static char big[4 << 20];
		for (int i = 0; i < 2; i++)
			MPI_Recv(big, sizeof big, MPI_BYTE, i, 10, inter, MPI_STATUS_IGNORE);
	}
	sleep(30); /* the job is ended for the crashed child before this */
	return 1;
}

/* WHERE = file:PATH or name:SERVICE */
static int server(const char *where)
{
	char port[MPI_MAX_PORT_NAME];
	MPI_Comm inter;

	MPI_Open_port(MPI_INFO_NULL, port);
	if (lk_rank == 0 && !strncmp(where, "file:", 5)) {
		char tmp[4096];
		FILE *f;
		snprintf(tmp, sizeof tmp, "%s.tmp", where + 5);
		f = fopen(tmp, "w");
		LK_CHECK(f && fprintf(f, "%s\n", port) > 0 && fclose(f) == 0 &&
		             rename(tmp, where + 5) == 0,
		         "cannot write %s", where + 5);
	} else if (lk_rank == 0) {
		LK_CHECK(MPI_Publish_name(where + 5, MPI_INFO_NULL, port) == MPI_SUCCESS,
		         "publish %s", where + 5);
	}
	MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
	talk(inter, 1);
	MPI_Comm_disconnect(&inter);
	if (lk_rank == 0 && strncmp(where, "file:", 5))
		MPI_Unpublish_name(where + 5, MPI_INFO_NULL, port);
	MPI_Close_port(port);
	if (lk_rank == 0)
		printf("lk_dyn: server accepted and talked\n");
	return lk_finish();
}

static int client(const char *where)
{
	char port[MPI_MAX_PORT_NAME] = "";
	MPI_Comm inter;
	int found = 0;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int i = 0; i < 300 && !found && lk_rank == 0; i++) {
		if (!strncmp(where, "file:", 5)) {
			FILE *f = fopen(where + 5, "r");
			found = f && fgets(port, sizeof port, f) && port[0];
			if (f)
				fclose(f);
			port[strcspn(port, "\n")] = '\0';
		} else {
			found = MPI_Lookup_name(where + 5, MPI_INFO_NULL, port) == MPI_SUCCESS;
		}
		if (!found)
			usleep(100000);
	}
	LK_CHECK(found || lk_rank, "no port at %s", where);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
	talk(inter, 0);
	MPI_Comm_disconnect(&inter);
	if (lk_rank == 0)
		printf("lk_dyn: client connected and talked\n");
	return lk_finish();
}

/* Rank 0's IPv4 addresses, non-loopback first, space-separated, into buf. */
static void my_addrs(char *buf, size_t len)
{
	struct ifaddrs *ifa = NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (getifaddrs(&ifa) < 0)
		return;
	for (int lo = 0; lo < 2; lo++)
		for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
			char ip[INET_ADDRSTRLEN];
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
			    !!(i->ifa_flags & IFF_LOOPBACK) != lo)
				continue;
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip,
			          sizeof ip);
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s ", ip);
		}
	freeifaddrs(ifa);
}

/* Connect to one of the addresses in list on port (each attempt bounded). fd or -1. */
static int dial(char *list, int port)
{
	for (char *a = strtok(list, " "); a; a = strtok(NULL, " ")) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		struct timeval tv = {3, 0};
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || inet_pton(AF_INET, a, &sa.sin_addr) != 1)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			return fd;
		close(fd);
	}
	return -1;
}

static int join(void)
{
	int fd = -1, port = 0, one = 1, rsize = 0, v;
	char addrs[1024] = "";
	MPI_Comm inter;

	if (lk_size != 2) {
		LK_CHECK(0, "join wants 2 ranks");
		return lk_finish();
	}
	if (lk_rank == 0) {
		struct sockaddr_in sa = {.sin_family = AF_INET};
		struct pollfd p = {.events = POLLIN};
		socklen_t sl = sizeof sa;
		int l = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		LK_CHECK(l >= 0 && bind(l, (struct sockaddr *)&sa, sizeof sa) == 0 &&
		             listen(l, 1) == 0 && getsockname(l, (struct sockaddr *)&sa, &sl) == 0,
		         "listen");
		port = ntohs(sa.sin_port);
		my_addrs(addrs, sizeof addrs);
		/* synchronous: the messages have arrived before this rank blocks outside MPI */
		MPI_Ssend(addrs, sizeof addrs, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
		MPI_Ssend(&port, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
		p.fd = l;
		if (poll(&p, 1, 20000) == 1)
			fd = accept(l, NULL, NULL);
		close(l);
	} else {
		MPI_Recv(addrs, sizeof addrs, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(&port, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		fd = dial(addrs, port);
	}
	LK_CHECK(fd >= 0, "no socket between the two ranks");
	if (fd < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Comm_join(fd, &inter);
	close(fd);
	MPI_Comm_remote_size(inter, &rsize);
	LK_CHECK(rsize == 1, "join: remote size %d", rsize);
	v = lk_rank;
	MPI_Sendrecv_replace(&v, 1, MPI_INT, 0, 3, 0, 3, inter, MPI_STATUS_IGNORE);
	LK_CHECK(v == 1 - lk_rank, "join: got %d", v);
	talk(inter, lk_rank == 0);
	MPI_Comm_disconnect(&inter);
	if (lk_rank == 0)
		printf("lk_dyn: join talked\n");
	return lk_finish();
}

static int errors(void)
{
	char port[MPI_MAX_PORT_NAME];
	MPI_Comm inter = MPI_COMM_NULL;
	double t0;
	int rc, cls = -1;

	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	t0 = MPI_Wtime();
	/* a well-formed port of a process that does not exist: nothing listens on tcp port 1 */
	rc = MPI_Comm_connect("lamkit-port:1:00000000000000ab@1;-;127.0.0.1/8", MPI_INFO_NULL, 0,
	                      MPI_COMM_SELF, &inter);
	MPI_Error_class(rc, &cls);
	LK_CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL, "dead port: class %d", cls);
	rc = MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
	MPI_Error_class(rc, &cls);
	LK_CHECK(cls == MPI_ERR_PORT, "garbage port: class %d", cls);
	LK_CHECK(MPI_Wtime() - t0 < 10, "the refusals took %.1f s", MPI_Wtime() - t0);
	/* our own port, nobody accepts: the connect gives up after LAMKIT_MPI_CONNECT_TIMEOUT */
	MPI_Open_port(MPI_INFO_NULL, port);
	if (lk_size > 1 && lk_rank == 1) {
		MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 4, MPI_COMM_WORLD,
		         MPI_STATUS_IGNORE);
		t0 = MPI_Wtime();
		rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
		MPI_Error_class(rc, &cls);
		LK_CHECK(cls == MPI_ERR_PORT, "unaccepted port: class %d", cls);
		printf("lk_dyn: unaccepted connect failed after %.1f s\n", MPI_Wtime() - t0);
	} else if (lk_size > 1 && lk_rank == 0) {
		MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Close_port(port);
	/* more children than the universe has slots: MPI_ERR_SPAWN, and in every errcode */
	{
		int *codes = calloc(64, sizeof(int)), bad = 0;
		char *args[3] = {"child", "never", NULL};
		rc = MPI_Comm_spawn(argv0, args, 64, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
		                    codes);
		MPI_Error_class(rc, &cls);
		for (int i = 0; i < 64; i++)
			bad += codes[i] != MPI_ERR_SPAWN;
		LK_CHECK(cls == MPI_ERR_SPAWN && !bad && inter == MPI_COMM_NULL,
		         "refused spawn: class %d, %d errcodes not MPI_ERR_SPAWN", cls, bad);
		free(codes);
	}
	rc = MPI_Lookup_name("lk-dyn-no-such-service", MPI_INFO_NULL, port);
	MPI_Error_class(rc, &cls);
	LK_CHECK(cls == MPI_ERR_NAME, "lookup of an unknown name: class %d", cls);
	if (lk_rank == 0)
		printf("lk_dyn: errors as MPI says\n");
	return lk_finish();
}

/* Spawn 2 children with `args` and `info`, talk; "lk_dyn: <what> talked" on rank 0. */
static int spawn_talk(const char *cmd, char **args, MPI_Info info, const char *what)
{
	int errs[2] = {-1, -1}, rsize = 0, an;
	MPI_Comm inter;

	MPI_Comm_spawn(cmd, args, 2, info, 0, MPI_COMM_WORLD, &inter, errs);
	LK_CHECK(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS, "errcodes %d %d", errs[0],
	         errs[1]);
	MPI_Comm_remote_size(inter, &rsize);
	LK_CHECK(rsize == 2, "remote size %d, want 2", rsize);
	talk(inter, 1);
	for (int i = 0; i < 2 && lk_rank == 0; i++)
		MPI_Recv(&an, 1, MPI_INT, i, 9, inter, MPI_STATUS_IGNORE);
	MPI_Comm_disconnect(&inter);
	if (lk_rank == 0)
		printf("lk_dyn: %s talked\n", what);
	return lk_finish();
}

static int spawn_path(const char *dir, const char *name, const char *wdir)
{
	char *args[4] = {"child", "wdir", (char *)wdir, NULL};
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "path", dir);
	MPI_Info_set(info, "wdir", wdir);
	int rc = spawn_talk(name, args, info, "path spawn");
	MPI_Info_free(&info);
	return rc;
}

static int manyargs(int n, int len)
{
	char **args = calloc((size_t)n + 4, sizeof *args), num[16];

	snprintf(num, sizeof num, "%d", n);
	args[0] = "child";
	args[1] = "many";
	args[2] = num;
	for (int i = 0; i < n; i++) {
		args[i + 3] = malloc((size_t)len + 1);
		for (int k = 0; k < len; k++)
			args[i + 3][k] = many_byte(i, (size_t)k);
		args[i + 3][len] = '\0';
	}
	char what[64];
	snprintf(what, sizeof what, "manyargs %d x %d bytes", n, len);
	int rc = spawn_talk(argv0, args, MPI_INFO_NULL, what);
	for (int i = 0; i < n; i++)
		free(args[i + 3]);
	free(args);
	return rc;
}

/* Parent (first) and child: 8 B ping-pong, then 1 MiB; the parent prints the figures. */
static void pingpong(MPI_Comm inter, int first)
{
	static const int sizes[2] = {8, 1 << 20}, iters[2] = {5000, 200};
	char *b = calloc(1, (size_t)(1 << 20));

	for (int s = 0; s < 2; s++) {
		double t0 = 0;
		for (int i = -iters[s] / 10; i < iters[s]; i++) {
			if (i == 0)
				t0 = MPI_Wtime();
			if (first) {
				MPI_Send(b, sizes[s], MPI_BYTE, 0, 5, inter);
				MPI_Recv(b, sizes[s], MPI_BYTE, 0, 5, inter, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(b, sizes[s], MPI_BYTE, 0, 5, inter, MPI_STATUS_IGNORE);
				MPI_Send(b, sizes[s], MPI_BYTE, 0, 5, inter);
			}
		}
		double half = (MPI_Wtime() - t0) / iters[s] / 2;
		if (first && s == 0)
			printf("pingpong 8 B: %.2f us\n", half * 1e6);
		else if (first)
			printf("pingpong 1 MiB: %.0f MB/s\n", sizes[s] / half / 1e6);
	}
	free(b);
}

static int xfer(int n)
{
	char *args[3] = {"child", "xfer", NULL};
	MPI_Comm inter;

	MPI_Comm_spawn(argv0, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
	               MPI_ERRCODES_IGNORE);
	for (int i = 0; i < n && lk_rank == 0; i++)
		xfer_with(inter, i, 1, 0);
	MPI_Comm_disconnect(&inter);
	if (lk_rank == 0)
		printf("lk_dyn: xfer children=%d checked\n", n);
	return lk_finish();
}

static int pingpong_parent(void)
{
	char *args[3] = {"child", "pingpong", NULL};
	MPI_Comm inter;

	MPI_Comm_spawn(argv0, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
	               MPI_ERRCODES_IGNORE);
	if (lk_rank == 0)
		pingpong(inter, 1);
	MPI_Comm_disconnect(&inter);
	MPI_Finalize();
	return 0;
}

static int bench(int n)
{
	char *args[3] = {"child", "bench", NULL};
	MPI_Comm inter;
	double t0 = MPI_Wtime();

	MPI_Comm_spawn(argv0, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
	               MPI_ERRCODES_IGNORE);
	MPI_Barrier(inter);
	if (lk_rank == 0)
		printf("spawn %d: %.1f ms\n", n, (MPI_Wtime() - t0) * 1e3);
	MPI_Comm_disconnect(&inter);
	MPI_Finalize();
	return 0;
}

/* ---- disconnect releases the other job's processes ---- */

/* What this process holds: open fds, tcp sockets among them (other sockets, e.g. the transport's
 * doorbell opened when the process first sleeps, are not counted), lamkit MPI segments mapped
 * (/proc/self/maps), and its pair segments' names in /dev/shm. */
struct held {
	int fds, socks, maps, names;
};

/* Whether socket inode ino is a tcp socket of this process. */
static int is_tcp(unsigned long ino)
{
	static const char *const f[] = {"/proc/self/net/tcp", "/proc/self/net/tcp6"};
	char line[512];
	int found = 0;

	for (int k = 0; k < 2 && !found; k++) {
		FILE *t = fopen(f[k], "r");
		while (t && !found && fgets(line, sizeof line, t)) {
			unsigned long i = 0;
			/* sl local rem st tx:rx tr:when retr uid timeout inode */
			if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %lu", &i) == 1 &&
			    i == ino)
				found = 1;
		}
		if (t)
			fclose(t);
	}
	return found;
}

static void count_held(struct held *h)
{
	char path[300], link[256], line[512], me[32];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	FILE *f;

	memset(h, 0, sizeof *h);
	while (d && (e = readdir(d))) {
		unsigned long ino;
		ssize_t k;
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		k = readlink(path, link, sizeof link - 1);
		if (k > 0 && (link[k] = '\0', sscanf(link, "socket:[%lu]", &ino) == 1)) {
			if (!is_tcp(ino))
				continue;
			h->socks++;
		}
		h->fds++;
	}
	if (d)
		closedir(d);
	if ((f = fopen("/proc/self/maps", "r"))) {
		char last[512] = "";
		/* one segment may be several lines (parts faulted in differently), adjacent */
		while (fgets(line, sizeof line, f)) {
			const char *n = strstr(line, "/dev/shm/lkmpi-x");
			if (n && strcmp(n, last))
				h->maps++;
			snprintf(last, sizeof last, "%s", n ? n : "");
		}
		fclose(f);
	}
	/* a pair segment's name ends with both makers' pids */
	snprintf(me, sizeof me, "-%ld", (long)getpid());
	if ((d = opendir("/dev/shm"))) {
		while ((e = readdir(d)))
			h->names += !strncmp(e->d_name, "lkmpi-x", 7) && strstr(e->d_name, me);
		closedir(d);
	}
}

/* Make progress (an Iprobe on world) until what is held is at most `max`, within `secs`; the
 * last count in *h. 1 when it got there. */
static int settle(const struct held *max, struct held *h, double secs)
{
	double end = MPI_Wtime() + secs;
	int flag, ok;

	for (;;) {
		count_held(h);
		ok = h->fds <= max->fds && h->socks <= max->socks && h->maps <= max->maps &&
		     h->names <= max->names;
		if (ok || MPI_Wtime() > end)
			return ok;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		usleep(2000);
	}
}

/* The baseline after the first round: at most what was held before it plus what the first
 * round opens for good (the listener for other jobs, the doorbell), no segment; then the least
 * seen while making progress for 0.2 s more (connections still ending). */
static int baseline(const struct held *start, struct held *h)
{
	struct held max = {start->fds + 2, start->socks + 2, 0, 0}, c;
	int ok = settle(&max, h, 10.0);

	for (double end = MPI_Wtime() + 0.2; ok && MPI_Wtime() < end;) {
		int flag;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		count_held(&c);
		if (c.fds < h->fds || c.socks < h->socks)
			*h = c;
		usleep(2000);
	}
	return ok;
}

/* Both sides of a round: talk, and 256 KiB each way between rank 0 and remote rank 0 (the
 * pair's rings carry it once switched). */
static void disc_talk(MPI_Comm inter, int low)
{
	static char buf[256 << 10];
	int me;

	talk(inter, low);
	MPI_Comm_rank(inter, &me);
	if (me == 0) {
		memset(buf, low ? 'p' : 'c', sizeof buf);
		MPI_Sendrecv_replace(buf, sizeof buf, MPI_BYTE, 0, 11, 0, 11, inter,
		                     MPI_STATUS_IGNORE);
		LK_CHECK(buf[0] == (low ? 'c' : 'p') && buf[sizeof buf - 1] == buf[0],
		         "256 KiB from the other job: '%c'", buf[0]);
	}
}

static int disc_child(MPI_Comm parent)
{
	disc_talk(parent, 0);
	MPI_Comm_disconnect(&parent);
	LK_CHECK(parent == MPI_COMM_NULL, "disconnect sets the handle to null");
	/* the parents are already on their own: this job ends while they compute and talk */
	usleep(20000);
	lk_name = "lk_dyn child";
	return lk_finish();
}

static int disc(int n, int rounds)
{
	char *args[3] = {"child", "disc", NULL};
	struct held start, first = {0, 0, 0, 0}, h = {0, 0, 0, 0}, most = {0, 0, 0, 0};
	int bad = 0;

	count_held(&start);
	for (int k = 0; k < rounds; k++) {
		MPI_Comm inter;
		int v = 1, sum = 0;
		MPI_Comm_spawn(argv0, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
		               MPI_ERRCODES_IGNORE);
		disc_talk(inter, 1);
		MPI_Comm_disconnect(&inter);
		/* the parents compute and talk in their own world while the children end */
		for (int i = 0; i < 50; i++)
			MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		LK_CHECK(sum == lk_size, "allreduce after disconnect %d", sum);
		if (k == 0) {
			/* the children's connections and segments are gone */
			LK_CHECK(
			    baseline(&start, &first),
			    "after round 1: fds %d sockets %d (%d %d before), %d segments mapped, "
			    "%d names in /dev/shm",
			    first.fds, first.socks, start.fds, start.socks, first.maps,
			    first.names);
			most = first;
			continue;
		}
		if (!settle(&first, &h, 10.0) && bad++ < 3)
			LK_CHECK(
			    0,
			    "after round %d: fds %d sockets %d maps %d names %d, after round 1: "
			    "%d %d %d %d",
			    k + 1, h.fds, h.socks, h.maps, h.names, first.fds, first.socks,
			    first.maps, first.names);
		most.fds = h.fds > most.fds ? h.fds : most.fds;
		most.socks = h.socks > most.socks ? h.socks : most.socks;
		most.maps = h.maps > most.maps ? h.maps : most.maps;
	}
	if (lk_rank == 0)
		printf("lk_dyn: disc rounds=%d children=%d fds %d..%d sockets %d..%d maps %d\n",
		       rounds, n, first.fds, most.fds, first.socks, most.socks, most.maps);
	return lk_finish();
}

/* One accept/connect round over world: the parents accept, the children connect. */
static void rejoin(const char *port, int accept, MPI_Comm *inter)
{
	if (accept)
		MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter);
	else
		MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter);
}

/* Rounds of disconnect and reconnect. The other side may be connecting again while this one
 * counts, so only the growth over the rounds is checked after each (a little slack), and at
 * the end, when nobody connects any more, that nothing of the other job is held. */
static void reconnect_rounds(MPI_Comm inter, const char *port, int rounds, int parent)
{
	struct held start, first = {0, 0, 0, 0}, h = {0, 0, 0, 0}, max;

	count_held(&start);
	for (int k = 0; k < rounds; k++) {
		if (k)
			rejoin(port, parent, &inter);
		disc_talk(inter, parent);
		MPI_Comm_disconnect(&inter);
		LK_CHECK(inter == MPI_COMM_NULL, "disconnect sets the handle to null");
		count_held(k ? &h : &first);
		if (k)
			LK_CHECK(h.fds <= first.fds + 3 && h.socks <= first.socks + 3,
			         "after round %d: fds %d sockets %d, after round 1: %d %d", k + 1,
			         h.fds, h.socks, first.fds, first.socks);
	}
	max = (struct held){start.fds + 2, start.socks + 2, 0, 0};
	LK_CHECK(settle(&max, &h, 10.0),
	         "after %d rounds: fds %d sockets %d (%d %d before), %d segments mapped, %d names",
	         rounds, h.fds, h.socks, start.fds, start.socks, h.maps, h.names);
	if (lk_rank == 0 && parent)
		printf("lk_dyn: reconnect rounds=%d fds %d..%d sockets %d..%d maps %d\n", rounds,
		       start.fds, h.fds, start.socks, h.socks, h.maps);
}

static int reconnect_child(MPI_Comm parent, const char *port, int rounds)
{
	reconnect_rounds(parent, port, rounds, 0);
	lk_name = "lk_dyn child";
	return lk_finish();
}

static int reconnect(int n, int rounds)
{
	char port[MPI_MAX_PORT_NAME], nr[16], *args[5] = {"child", "reconnect", port, nr, NULL};
	MPI_Comm inter;

	if (lk_rank == 0)
		MPI_Open_port(MPI_INFO_NULL, port);
	MPI_Bcast(port, sizeof port, MPI_CHAR, 0, MPI_COMM_WORLD);
	snprintf(nr, sizeof nr, "%d", rounds);
	MPI_Comm_spawn(argv0, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
	               MPI_ERRCODES_IGNORE);
	reconnect_rounds(inter, port, rounds, 1);
	if (lk_rank == 0)
		MPI_Close_port(port);
	return lk_finish();
}

int main(int argc, char **argv)
{
	MPI_Comm parent;
	const char *mode = argc > 1 ? argv[1] : "spawn";

	argv0 = argv[0];
	lk_init(&argc, &argv, "lk_dyn");
	MPI_Comm_get_parent(&parent);
	if (parent != MPI_COMM_NULL)
		return child(argc, argv, parent);
	if (!strcmp(mode, "spawn"))
		return spawn(argc > 2 ? atoi(argv[2]) : 2, argc > 3 ? atoi(argv[3]) : 0, "spawned");
	if (!strcmp(mode, "multi"))
		return multi();
	if (!strcmp(mode, "crash"))
		return crash(argc > 2 ? argv[2] : "3");
	if (!strcmp(mode, "server") && argc > 2)
		return server(argv[2]);
	if (!strcmp(mode, "client") && argc > 2)
		return client(argv[2]);
	if (!strcmp(mode, "join"))
		return join();
	if (!strcmp(mode, "errors"))
		return errors();
	if (!strcmp(mode, "path") && argc > 4)
		return spawn_path(argv[2], argv[3], argv[4]);
	if (!strcmp(mode, "manyargs") && argc > 3)
		return manyargs(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(mode, "xfer"))
		return xfer(argc > 2 ? atoi(argv[2]) : 1);
	if (!strcmp(mode, "pingpong"))
		return pingpong_parent();
	if (!strcmp(mode, "bench"))
		return bench(argc > 2 ? atoi(argv[2]) : 1);
	if (!strcmp(mode, "disc"))
		return disc(argc > 2 ? atoi(argv[2]) : 1, argc > 3 ? atoi(argv[3]) : 10);
	if (!strcmp(mode, "reconnect"))
		return reconnect(argc > 2 ? atoi(argv[2]) : 1, argc > 3 ? atoi(argv[3]) : 10);
	if (!strcmp(mode, "barrier")) {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Finalize();
		return 0;
	}
	fprintf(stderr, "lk_dyn: unknown mode %s\n", mode);
	MPI_Finalize();
	return 100;
}
