/* lib/transport/tp_tcp_bye.c: ending a tcp connection to a process of another job in order
 * (doc/PROTOCOL-mpi-wire.md section 8.2): BYE as the last frame, our half shut down, the
 * connection lingering outside the peer's slot until the peer's BYE or EOF; tp_tcp_release and
 * tp_tcp_forget. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp_tcp_int.h"

/* Drop the fragments of queue q (the peer is gone or released: nobody waits for them). */
static void drop_queue(struct tp_tcp *t, struct conn *c)
{
	struct tp_frag *f;

	while ((f = tp_fifo_pop(&c->q))) {
		t->nqueued--;
		tp_frag_done(t->tp, f);
	}
	c->qbytes = 0;
}

/* Take peer's open connection out of its slot (which is then C_NONE: a later send connects
 * anew) into the lingering list, with BYE queued after whatever is queued on it. */
void tp_tcp_linger(struct tp_tcp *t, int peer)
{
	struct conn *c = &t->c[peer], *l;
	unsigned char hdr[TP_HDR_WIRE] = {0};
	uint32_t magic = BYE_MAGIC;
	struct tp_frag *f;

	if (t->nlg == t->lgcap) {
		int cap = t->lgcap + 4;
		l = realloc(t->lg, sizeof *l * (size_t)cap);
		if (!l) { /* no room to end it in order: end it at once */
			c->ended++;
			drop_queue(t, c);
			tp_tcp_conn_close(t, peer, C_NONE);
			return;
		}
		t->lg = l;
		t->lgcap = cap;
	}
	memcpy(hdr, &magic, sizeof magic);
	l = &t->lg[t->nlg++];
	*l = *c;
	l->peer = peer;
	l->lingering = 1;
	if ((f = tp_frag_new(hdr, sizeof hdr, NULL, 0, 0, NULL))) {
		tp_fifo_push(&l->q, f);
		t->nqueued++;
	}
	t->act[c->act] = t->act[--t->nact];
	t->c[t->act[c->act]].act = c->act;
	c->ended++;
	if (t->debug)
		fprintf(stderr, "lamkit tcp: rank %d -> peer %d: BYE%s, connection ending (%u)\n",
		        t->tp->cfg.rank, peer, l->bye_in ? " answered" : "", c->ended);
	memset(&c->q, 0, sizeof c->q);
	c->qbytes = 0;
	c->in = NULL;
	c->incap = 0;
	c->fd = -1;
	tp_tcp_conn_close(t, peer, C_NONE);
}

/* Whether a connection to peer is still ending. */
int tp_tcp_lingering_to(const struct tp_tcp *t, int peer)
{
	for (int i = 0; i < t->nlg; i++)
		if (t->lg[i].peer == peer)
			return 1;
	return 0;
}

/* Close lingering connection i (the last takes its place). */
static void linger_end(struct tp_tcp *t, int i, const char *why)
{
	struct conn *l = &t->lg[i];

	if (t->debug)
		fprintf(stderr, "lamkit tcp: rank %d -> peer %d: connection closed (%s)\n",
		        t->tp->cfg.rank, l->peer, why);
	int peer = l->peer;

	drop_queue(t, l);
	close(l->fd);
	free(l->in);
	t->lg[i] = t->lg[--t->nlg];
	/* one connection between two processes at a time: what waited for this one to end goes
	 * on a new one now (a peer that cannot be reached any more: dropped, as at EPIPE) */
	if (t->c[peer].st == C_LATER && !tp_tcp_lingering_to(t, peer)) {
		t->c[peer].st = C_NONE;
		if (tp_tcp_start_connect(t, peer) < 0)
			drop_queue(t, &t->c[peer]);
	}
}

/* Push BYE out, then shut our half; read what the peer still sends until its BYE or EOF. A
 * peer that has gone (an error on the socket) ends it too: nothing waits for it any more. */
int tp_tcp_poll_linger(struct tp_tcp *t)
{
	int n = 0;

	for (int i = t->nlg - 1; i >= 0; i--) {
		struct conn *l = &t->lg[i];
		int k = 0, gone = 0;
		if (l->q.head && (k = tp_tcp_push(t, l)) < 0)
			gone = 1;
		n += k > 0 ? k : 0;
		if (!gone && !l->q.head && !l->shut) {
			shutdown(l->fd, SHUT_WR);
			l->shut = 1;
		}
		if (!gone && !l->bye_in && (k = tp_tcp_read_frames(t, l, l->peer)) < 0)
			gone = 1;
		n += k > 0 ? k : 0;
		if (gone || l->eof || (l->shut && l->bye_in)) {
			linger_end(t, i, gone ? strerror(errno) : l->eof ? "EOF" : "both BYEs");
			n++;
		}
	}
	return n;
}

void tp_tcp_forget(struct tp_tcp *t, int peer)
{
	struct linger rst = {1, 0};

	/* reset, not FIN: the peer must see the connection fail (an end of file from a rank of
	 * the job would be taken for its end), and send again what we did not acknowledge, read
	 * or not (section 7.4) */
	if (t->c[peer].fd >= 0)
		setsockopt(t->c[peer].fd, SOL_SOCKET, SO_LINGER, &rst, sizeof rst);
	drop_queue(t, &t->c[peer]);
	tp_tcp_conn_close(t, peer, C_NONE);
	t->c[peer].forgot++;
}

int tp_tcp_release(struct tp_tcp *t, int peer)
{
	struct conn *c = &t->c[peer];

	/* a connect not answered yet is left to finish (closed unread, the ACK would make the
	 * kernel reset the peer's side), and fragments that wait for the peer's own connection
	 * are not dropped: either goes at the next release */
	if (c->st == C_UP && c->fd >= 0)
		tp_tcp_linger(t, peer);
	else if (c->st == C_WAITPEER && !c->q.head)
		c->st = C_NONE;
	if (c->fd < 0) {
		free(c->in);
		c->in = NULL;
		c->incap = 0;
	}
	return 0;
}

int tp_tcp_lingering(const struct tp_tcp *t)
{
	return t ? t->nlg : 0;
}
