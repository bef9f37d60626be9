/* lib/boot/jobctl_run.c: the ways a job starts: one forked local agent, K forked ones standing
 * for nodes (--local-agents), or a universe's agents over secure links, after placing the ranks
 * over the nodes. The controller itself is jobctl.c. */
#include "agent.h"
#include "core.h"
#include "jobctl_internal.h"
#include "spawn.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINK_SNDBUF (2 << 20) /* the agent's send buffer: room for the ranks' output */
#define REAP_MS     5000      /* forked agents exit once we hang up; then SIGKILL */

/* {==== forked local agents */

/* In a forked agent of a spawned job: close what mpiexec had open (its links to the other
 * agents, its loop), so that only mpiexec's hangup ends those. */
#ifndef SYS_close_range
#define SYS_close_range 436 /* Linux 5.9; the same number on every architecture */
#endif

static void close_others(int keep)
{
	/* two syscalls instead of one close() per possible fd (tens of thousands of them) */
	if ((keep <= 3 || syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u) == 0) &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
		return;
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = 3; fd < max; fd++)
		if (fd != keep)
			close(fd);
}

/* Fork an agent for every entry of c->ag, each on a socketpair of its own (a->fd is our end).
 * Each child keeps only its own end. 0, or -1 with errno (those forked are reaped later). */
static int fork_agents(struct ctl *c, int singinit_fd, pid_t singinit_pid)
{
	int(*sv)[2] = calloc((size_t)c->nag, sizeof *sv), rc = 0;

	if (!sv)
		return -1;
	/* they hand us two pipes per rank (IO_PIPE); ranks still get the limit we were given */
	boot_spawn_raise_nofile();
	for (int i = 0; i < c->nag; i++)
		sv[i][0] = sv[i][1] = -1;
	for (int i = 0; i < c->nag && rc == 0; i++) {
		rc = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]);
		int sz = LINK_SNDBUF;
		if (rc == 0) /* best effort: the kernel caps it at net.core.wmem_max */
			(void)setsockopt(sv[i][1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	}
	fflush(NULL);
	for (int i = 0; i < c->nag && rc == 0; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			rc = -1;
			break;
		}
		if (pid == 0) {
			char name[64];
			for (int k = 0; k < c->nag; k++) {
				if (sv[k][0] >= 0)
					close(sv[k][0]);
				if (k != i && sv[k][1] >= 0)
					close(sv[k][1]);
			}
			if (c->parent) /* forked mid-job: the family's links are not this agent's */
				close_others(sv[i][1]);
			setsid(); /* terminal signals reach mpiexec only; it forwards them */
			snprintf(name, sizeof name, "local-%d", (int)getpid());
			struct boot_agent_opts ao = {.name = name,
			                             .singinit_fd = i == 0 ? singinit_fd : -1,
			                             .singinit_pid = singinit_pid};
			core_progname = "lamkit agent";
			int st = boot_agent_run(sv[i][1], &ao);
#ifdef LAMKIT_SANITIZE
			exit(st); /* LeakSanitizer checks the agent too (stdio flushed before fork)
			           */
#else
			_exit(st);
#endif
		}
		c->ag[i].pid = pid;
		c->ag[i].fd = sv[i][0];
		sv[i][0] = -1;
	}
	int e = errno;
	for (int i = 0; i < c->nag; i++) {
		if (sv[i][0] >= 0)
			close(sv[i][0]);
		if (sv[i][1] >= 0)
			close(sv[i][1]);
	}
	free(sv);
	if (singinit_fd >= 0)
		close(singinit_fd);
	errno = e;
	return rc;
}

/* Wrap each forked agent's socket in a plain link and start its part. */
static void start_local(struct ctl *c)
{
	for (int i = 0; i < c->nag && !c->killed; i++) {
		struct agent *a = &c->ag[i];
		a->link = boot_link_plain(c->ev, a->fd, c->nag > 1 ? a->host : "local agent",
		                          &boot_ctl_link_cbs, a);
		if (!a->link) {
			boot_ctl_fail(c, CORE_EXIT_SYSTEM, "cannot talk to the local agent: %s",
			              strerror(errno));
			break;
		}
		a->fd = -1;
		boot_ctl_start_agent(a);
	}
}

/* The agents exit once we hang up. Wait for them without polling (pidfd), at most REAP_MS
 * in all, then SIGKILL: nothing of ours outlives mpiexec. */
void boot_ctl_reap_agents(struct ctl *c)
{
	int64_t end = core_now_ms() + REAP_MS;
	int st;

	for (int i = 0; i < c->nag; i++) {
		pid_t pid = c->ag[i].pid;
		if (pid <= 0)
			continue;
		int pfd = (int)syscall(SYS_pidfd_open, pid, 0), killed = 0;
		st = 0;
		while (waitpid(pid, &st, WNOHANG) == 0) {
			int64_t left = end - core_now_ms();
			if (left <= 0) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				killed = 1;
				break;
			}
			if (pfd >= 0) {
				struct pollfd p = {.fd = pfd, .events = POLLIN};
				poll(&p, 1, (int)left);
			} else {
				usleep(1000); /* kernels before 5.3 have no pidfd */
			}
		}
		if (pfd >= 0)
			close(pfd);
		if (killed || WIFSIGNALED(st))
			boot_ctl_msg(
			    c, "the local agent (pid %d) %s; 'lamkit wipe' removes what it left",
			    (int)pid,
			    killed ? "did not exit in time: killed" : strsignal(WTERMSIG(st)));
		c->ag[i].pid = -1;
	}
}

/* ====} */

int boot_run_local(const struct boot_run_opts *o)
{
	struct ctl c;

	if (boot_ctl_init(&c, o, 1) < 0)
		goto out;
	snprintf(c.ag[0].host, sizeof c.ag[0].host, "%s", core_hostname());
	c.host_from_hello = 1;
	if (fork_agents(&c, o->singinit_fd, o->singinit_pid) < 0) {
		boot_ctl_msg(&c, "cannot start the local agent: %s", strerror(errno));
		c.exit_code = CORE_EXIT_SYSTEM;
		goto out;
	}
	start_local(&c);
	boot_ctl_loop(&c);
out:
	return boot_ctl_end(&c);
}

/* {==== placed jobs */

/* Place the ranks over nodes and make one agent per node used, in the order of their first
 * rank (rank 0's agent is ag[0]). 0, or -1 with err. */
static int place_agents(struct ctl *c, const struct boot_place_node *nodes, int nnodes,
                        const struct boot_place_opts *p, char *err, size_t errlen)
{
	struct boot_placement pl;
	int size = c->o->js->size;
	long slots = 0;

	if (boot_place(nodes, nnodes, size, p, &pl, err, errlen) < 0)
		return -1;
	int *agent_of = malloc((size_t)nnodes * sizeof *agent_of);
	struct agent *ag = calloc((size_t)pl.nused, sizeof *ag);
	c->mapping = boot_process_mapping(pl.rank_node, size);
	if (!agent_of || !ag || !c->mapping) {
		free(agent_of);
		free(ag);
		boot_placement_free(&pl);
		return core_errprintf(err, errlen, "out of memory");
	}
	free(c->ag);
	c->ag = ag;
	c->nag = 0;
	for (int k = 0; k < nnodes; k++)
		agent_of[k] = -1;
	for (int r = 0; r < size; r++) {
		int k = pl.rank_node[r];
		if (agent_of[k] < 0) {
			struct agent *a = &c->ag[c->nag];
			agent_of[k] = c->nag++;
			a->c = c;
			a->node = k;
			a->pid = -1;
			a->fd = -1;
			a->cpus = nodes[k].cpus;
			slots += a->cpus < 1 ? 1 : a->cpus;
			snprintf(a->host, sizeof a->host, "%s", nodes[k].host);
			snprintf(a->where, sizeof a->where, "%s", nodes[k].host);
			a->ranks = malloc((size_t)pl.count[k] * sizeof *a->ranks);
			if (!a->ranks) {
				free(agent_of);
				boot_placement_free(&pl);
				return core_errprintf(err, errlen, "out of memory");
			}
		}
		struct agent *a = &c->ag[agent_of[k]];
		a->ranks[a->nranks++] = r;
	}
	c->placed = 1;
	c->universe_size = slots > size ? (int)(slots > 1 << 30 ? 1 << 30 : slots) : size;
	int over = pl.oversubscribed;
	free(agent_of);
	boot_placement_free(&pl);
	if (c->o->verbose) {
		boot_ctl_msg(c, "%d rank%s on %d agent%s%s, PMI_process_mapping %s", size,
		             size == 1 ? "" : "s", c->nag, c->nag == 1 ? "" : "s",
		             over ? " (oversubscribed)" : "", c->mapping);
		for (int i = 0; i < c->nag; i++)
			boot_ctl_msg(c, "agent %d on %s: %d rank%s from rank %d", i, c->ag[i].host,
			             c->ag[i].nranks, c->ag[i].nranks == 1 ? "" : "s",
			             c->ag[i].ranks[0]);
	}
	return 0;
}

struct boot_place_node *boot_universe_place_nodes(const struct boot_universe *u)
{
	struct boot_place_node *nodes = calloc((size_t)u->nnodes + 1, sizeof *nodes);

	for (int i = 0; nodes && i < u->nnodes; i++)
		nodes[i] = (struct boot_place_node){.host = u->nodes[i].host,
		                                    .cpus = u->nodes[i].cpus,
		                                    .schedule = u->nodes[i].schedule};
	return nodes;
}

struct boot_place_node *boot_local_agent_nodes(int k, int slots)
{
	const size_t nlen = 300;
	struct boot_place_node *nodes;

	if (k < 1)
		k = 1;
	nodes = calloc((size_t)k, sizeof *nodes + nlen);
	if (!nodes)
		return NULL;
	char *names = (char *)(nodes + k);
	for (int i = 0; i < k; i++) {
		char *name = names + (size_t)i * nlen;
		snprintf(name, nlen, "%s:%d", core_hostname(), i + 1);
		nodes[i] = (struct boot_place_node){
		    .host = name, .cpus = slots > 0 ? slots : core_cpu_count(), .schedule = 1};
	}
	return nodes;
}

/* Place, connect or fork. nodes is freed. */
static int start_placed(struct ctl *c, struct boot_place_node *nodes, int nnodes,
                        const struct boot_place_opts *p, const struct boot_universe *u)
{
	char err[1024];

	if (!nodes) {
		boot_ctl_msg(c, "out of memory");
		c->exit_code = CORE_EXIT_SYSTEM;
		return -1;
	}
	if (u && boot_ctl_universe_nodes(c, nodes, p) < 0) { /* around the nodes down */
		free(nodes);
		return -1;
	}
	if (u && c->o->per_node && !c->parent) { /* one rank per node up, as they are now */
		for (int i = 0; i < nnodes; i++)
			nodes[i].cpus = 1;
		int up = boot_place_slots(nodes, nnodes, p->hosts, err, sizeof err);
		struct boot_jobspec *js = c->o->js;
		if (up > 0 && up < js->size && js->napps == 1) /* arrays stay sized for more */
			js->size = js->apps[0].nprocs = up;
	}
	int rc = place_agents(c, nodes, nnodes, p, err, sizeof err);
	free(nodes);
	if (rc < 0) {
		boot_ctl_msg(c, "%s", err);
		c->exit_code = CORE_EXIT_USAGE;
		return -1;
	}
	if (!u) {
		if (fork_agents(c, -1, 0) < 0) {
			boot_ctl_msg(c, "cannot start the local agents: %s", strerror(errno));
			c->exit_code = CORE_EXIT_SYSTEM;
			return -1;
		}
		start_local(c);
	}
	/* universe jobs fence over a k-ary tree of their agents (position 0 = rank 0's agent is
	 * the root): no central merge, the controller sees no FENCE_UP */
	/* --on-node-failure continue: the controller merges (a star), so that a failed agent never
	 * holds up the fences of the others */
	int tree = boot_ctl_root(c)->o->on_node_failure != BOOT_NODEFAIL_CONTINUE;
	for (int i = 0; u && tree && c->nag > 1 && i < c->nag; i++) {
		struct agent *a = &c->ag[i];
		if (i > 0) {
			const struct boot_unode *pn =
			    &u->nodes[c->ag[(i - 1) / BOOT_FENCE_FANOUT].node];
			snprintf(a->fence_parent, sizeof a->fence_parent, "%s:%d", pn->addr,
			         pn->port);
		}
		for (int k = 1; k <= BOOT_FENCE_FANOUT; k++)
			a->fence_children += BOOT_FENCE_FANOUT * i + k < c->nag;
	}
	/* connect to every node at once; each link starts its part when it is ready */
	for (int i = 0; u && i < c->nag && !c->killed; i++) {
		struct agent *a = &c->ag[i];
		const struct boot_unode *n = &u->nodes[a->node];
		snprintf(a->where, sizeof a->where, "%s (%s:%d)", n->host, n->addr, n->port);
		int fd = boot_tcp_connect(n->addr, n->port, err, sizeof err);
		if (fd < 0) {
			char pre[300];
			snprintf(pre, sizeof pre, "connect %s:%d", n->addr, n->port);
			boot_ctl_unreachable(a, boot_ctl_after_peer(err, pre));
			break;
		}
		a->link = boot_link_secure(c->ev, fd, 1, u->key, a->where, BOOT_AGENT_CONNECT_MS,
		                           &boot_ctl_link_cbs, a);
		if (!a->link) {
			boot_ctl_unreachable(a, strerror(errno));
			close(fd);
			break;
		}
	}
	if (u)
		boot_ctl_universe_connected(c);
	return 0;
}

int boot_ctl_start(struct ctl *c, struct boot_place_node *nodes, int nnodes,
                   const struct boot_place_opts *p, const struct boot_universe *u)
{
	if (nodes || u)
		return start_placed(c, nodes, nnodes, p, u);
	if (fork_agents(c, -1, 0) < 0) {
		boot_ctl_msg(c, "cannot start the local agent: %s", strerror(errno));
		c->exit_code = CORE_EXIT_SYSTEM;
		return -1;
	}
	start_local(c);
	return 0;
}

int boot_run_universe(const struct boot_run_opts *o, const struct boot_universe *u,
                      const struct boot_place_opts *p)
{
	struct ctl c;

	if (boot_ctl_init(&c, o, 0) == 0) {
		c.u = u;
		if (o->view && o->view->known) { /* mpiexec asked already */
			c.view = *o->view;
			c.view.down = malloc((size_t)(o->view->ndown + 1) * sizeof *c.view.down);
			if (c.view.down)
				memcpy(c.view.down, o->view->down,
				       (size_t)o->view->ndown * sizeof *c.view.down);
			else
				memset(&c.view, 0, sizeof c.view);
		}
		if (start_placed(&c, boot_universe_place_nodes(u), u->nnodes, p, u) == 0)
			boot_ctl_loop(&c);
	}
	return boot_ctl_end(&c);
}

int boot_run_local_agents(const struct boot_run_opts *o, int k, int slots,
                          const struct boot_place_opts *p)
{
	struct ctl c;

	if (boot_ctl_init(&c, o, 0) == 0) {
		c.local_k = k < 1 ? 1 : k;
		c.local_slots = slots;
		if (start_placed(&c, boot_local_agent_nodes(k, slots), k, p, NULL) == 0)
			boot_ctl_loop(&c);
	}
	return boot_ctl_end(&c);
}

/* ====} */
