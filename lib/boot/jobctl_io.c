/* lib/boot/jobctl_io.c: the ranks' output pipes that a forked agent handed to mpiexec
 * (IO_PIPE), read here straight into the line assembly (outbuf.c): no copy into the agent and
 * none through the socket between us, the two copies Hydra's proxy makes. */
#include "core.h"
#include "jobctl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define PIPE_READ   65536 /* one pipe's default capacity: each read empties it */
#define DRAIN_READS 16    /* at JOB_DONE, what a leftover writer still pours in is cut off */

struct ctl_pipe {
	struct ctl *c;
	struct agent *a;
	int fd, rank, stream;
};

static void pipe_close(struct ctl_pipe *p, int tell)
{
	struct ctl *c = p->c;

	core_ev_fd_del(c->ev, p->fd);
	close(p->fd);
	p->fd = -1;
	boot_outbuf_eof(c->out, p->rank, p->stream);
	if (tell && p->a->link && !p->a->done) {
		struct core_wbuf w = {0};
		core_w_u32(&w, c->o->js->jobid);
		core_w_u32(&w, (uint32_t)p->rank);
		core_w_u32(&w, (uint32_t)p->stream);
		if (!w.err)
			boot_link_send(p->a->link, BOOT_MSG_IO_EOF, w.p, w.len, NULL, 0);
		core_w_free(&w);
	}
}

/* One read per wakeup, so that a rank writing without pause does not starve the others. */
static void on_pipe(core_ev_t *ev, int fd, unsigned events, void *arg)
{
	struct ctl_pipe *p = arg;
	char buf[PIPE_READ];
	ssize_t n = read(fd, buf, sizeof buf);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0)
		boot_outbuf_data(p->c->out, p->rank, p->stream, buf, (size_t)n);
	else
		pipe_close(p, 1); /* EOF (or an error, which no pipe read has) */
}

void boot_ctl_pipe_open(struct agent *a, struct core_rbuf *r, int fd)
{
	struct ctl *c = a->c;
	int size = c->o->js->size;
	int rank = (int)core_r_u32(r), stream = (int)core_r_u32(r);

	if (fd < 0)
		return;
	if (r->err || rank < 0 || rank >= size || stream < 1 || stream > 2)
		goto drop;
	if (!c->pipes) {
		c->pipes = calloc((size_t)size * 2, sizeof *c->pipes);
		if (!c->pipes)
			goto drop;
		for (int i = 0; i < size * 2; i++)
			c->pipes[i].fd = -1;
	}
	struct ctl_pipe *p = &c->pipes[rank * 2 + stream - 1];
	if (p->fd >= 0)
		goto drop;
	/* already nonblocking: the agent made its end so (job.c make_pipe), and we hold that
	 * same open file */
	*p = (struct ctl_pipe){.c = c, .a = a, .fd = fd, .rank = rank, .stream = stream};
	if (core_ev_fd(c->ev, fd, CORE_EV_READ, on_pipe, p) < 0) {
		p->fd = -1;
		goto drop;
	}
	return;
drop:
	close(fd);
}

void boot_ctl_pipes_drain(struct ctl *c, const struct agent *a)
{
	char buf[PIPE_READ];

	for (int i = 0; c->pipes && i < c->o->js->size * 2; i++) {
		struct ctl_pipe *p = &c->pipes[i];
		if (p->fd < 0 || (a && p->a != a))
			continue;
		for (int k = 0; k < DRAIN_READS; k++) {
			ssize_t n = read(p->fd, buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			boot_outbuf_data(c->out, p->rank, p->stream, buf, (size_t)n);
		}
		pipe_close(p, 0);
	}
}

void boot_ctl_pipes_free(struct ctl *c)
{
	boot_ctl_pipes_drain(c, NULL);
	free(c->pipes);
	c->pipes = NULL;
}
