/* lib/transport/tp_udp_thread.c: the udp path's probe answering thread: it answers route probes,
 * so a rank that computes for minutes without calling MPI is still known to be alive, and after
 * tp_udp_flush re-acknowledges retransmissions; it never touches the data path. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tp_udp_int.h"

/* After tp_udp_flush the main thread blocks in the job's final fence and reads nothing: a peer
 * whose last acknowledgement was lost retransmits, and this answers it from the thread. */
static void linger_datagram(struct tp_udp *u, unsigned char *b, size_t n, int lr)
{
	struct uhdr h;
	uint32_t c;
	struct peer *p;

	if (n < sizeof(h))
		return;
	memcpy(&h, b, sizeof(h));
	c = h.crc;
	memset(b, 0, 4);
	if (tp_crc32c(0, b, n) != c || h.magic != UDP_MAGIC || h.type != P_DATA ||
	    h.job != u->job || h.dst != u->me || h.src < 0 || h.src >= u->size || h.src == u->me ||
	    !u->p[h.src].known)
		return;
	p = &u->p[h.src];
	if (h.seq >= p->expect)
		return;
	p->dup++;
	p->ack_route = lr;
	p->echo_seq = h.seq;
	p->echo_ts = h.ts;
	p->echo_nsend = h.nsend;
	tp_udp_send_ack(u, h.src, 1);
}

void *tp_udp_prober(void *arg)
{
	struct tp_udp *u = arg;
	struct pollfd pf[2 * MAXR + 1];
	unsigned char b[512];

	for (int i = 0; i < u->nl; i++)
		pf[i] = (struct pollfd){.fd = u->l[i].hbfd, .events = POLLIN};
	pf[u->nl] = (struct pollfd){.fd = u->wake[0], .events = POLLIN};
	int nfd = u->nl + 1;

	while (!atomic_load(&u->stop)) {
		if (nfd == u->nl + 1 && atomic_load(&u->linger)) {
			for (int i = 0; i < u->nl; i++)
				pf[nfd++] = (struct pollfd){.fd = u->l[i].fd, .events = POLLIN};
		}
		if (poll(pf, (nfds_t)nfd, 1000) <= 0)
			continue;
		if (pf[u->nl].revents) {
			char c[16];
			while (read(u->wake[0], c, sizeof(c)) > 0)
				;
		}
		for (int i = u->nl + 1; i < nfd; i++) {
			ssize_t n;
			struct iovec iov = {u->rxb, u->rxsz};
			struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
			for (;;) {
				m.msg_control = u->cm[0].b;
				m.msg_controllen = sizeof(u->cm[0].b);
				if ((n = recvmsg(pf[i].fd, &m, MSG_DONTWAIT)) <= 0)
					break;
				size_t seg = tp_udp_gro_size(&m), len = (size_t)n;
				for (size_t off = 0; off < len; off += seg ? seg : len)
					linger_datagram(u, u->rxb + off,
					                seg && len - off > seg ? seg : len - off,
					                i - u->nl - 1);
			}
		}
		for (int i = 0; i < u->nl; i++) {
			ssize_t n;
			while ((n = recv(pf[i].fd, b, sizeof(b), MSG_DONTWAIT)) > 0) {
				struct uhdr h;
				struct probebody pb;
				uint32_t c;
				if ((size_t)n != sizeof(h) + sizeof(pb))
					continue;
				memcpy(&h, b, sizeof(h));
				memcpy(&pb, b + sizeof(h), sizeof(pb));
				c = h.crc;
				((struct uhdr *)(void *)b)->crc = 0;
				if (tp_crc32c(0, b, (size_t)n) != c || h.magic != UDP_MAGIC ||
				    h.type != P_PROBE || h.job != u->job || h.dst != u->me)
					continue;
				struct sockaddr_in to = {.sin_family = AF_INET,
				                         .sin_port = pb.reply_port,
				                         .sin_addr = {pb.reply_ip}};
				h.type = P_PROBEACK;
				h.src = u->me;
				h.dst = (int32_t)((struct uhdr *)(void *)b)->src;
				pb.dst_route = (uint16_t)i;
				struct iovec v[2] = {{&h, sizeof(h)}, {&pb, sizeof(pb)}};
				tp_udp_seal(&h, v, 2);
				tp_udp_xmit(u, &u->thr_fi, u->l[i].fd, &to, v, 2, 1);
			}
		}
	}
	return NULL;
}
