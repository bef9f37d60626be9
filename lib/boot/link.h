/* lib/boot/link.h: one frame connection between a controller (mpiexec, boot, halt, nodes) and an
 * agent, either plain (a socketpair to a transient local agent) or secure (boot_sconn over TCP
 * inside a universe). Jobs and controllers use this and do not care which it is. */
#ifndef LAMKIT_BOOT_LINK_H
#define LAMKIT_BOOT_LINK_H

#include "auth.h"
#include "ev.h"

#include <stddef.h>

typedef struct boot_link boot_link_t;

struct boot_link_cbs {
	/* The peer is authenticated (secure) and frames may be sent; plain links are ready at
	 * creation and never call this. May be NULL. */
	void (*on_ready)(boot_link_t *l, void *arg);
	void (*on_frame)(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg);
	/* Called once; err 0 = clean close by the peer. why: one line beginning with the peer. The
	 * owner calls boot_link_destroy (may do so inside the callback). */
	void (*on_close)(boot_link_t *l, int err, const char *why, void *arg);
	/* The send queue drained below the low-water mark. May be NULL. */
	void (*on_drain)(boot_link_t *l, void *arg);
};

/* Wrap a connected stream fd. peer names the other end in messages ("host:port", "local
 * agent"). NULL with errno (fd left open). */
boot_link_t *boot_link_plain(core_ev_t *ev, int fd, const char *peer,
                             const struct boot_link_cbs *cbs, void *arg);
/* Same over boot_sconn: initiator 1 on the side that connected. handshake_ms <= 0: default. */
boot_link_t *boot_link_secure(core_ev_t *ev, int fd, int initiator,
                              const unsigned char key[BOOT_KEY_LEN], const char *peer,
                              int handshake_ms, const struct boot_link_cbs *cbs, void *arg);
/* Close and free; safe inside its own callbacks; accepts NULL. */
void boot_link_destroy(boot_link_t *l);

/* Queue a frame (two pieces, either may be empty). 0, or -1 with errno (ENOTCONN before
 * ready, EPIPE after close, ENOMEM, EMSGSIZE). */
int boot_link_send(boot_link_t *l, unsigned type, const void *a, size_t alen, const void *b,
                   size_t blen);
/* Plain links only (a socketpair, both ends in this binary): queue a frame that carries fd to
 * the peer, which takes it with boot_link_take_fd while handling that frame. The link owns fd
 * on success. 0, or -1 with errno (ENOTSUP on a secure link; fd still the caller's). */
int boot_link_send_fd(boot_link_t *l, unsigned type, const void *a, size_t alen, int fd);
/* The descriptor that came with the frame being handled (oldest not taken), or -1. */
int boot_link_take_fd(boot_link_t *l);
int boot_link_ready(const boot_link_t *l);
size_t boot_link_queued(const boot_link_t *l);
int boot_link_congested(const boot_link_t *l);
void boot_link_pause(boot_link_t *l, int paused);
/* Write out what is queued, blocking up to timeout_ms. 0, or -1 with errno. */
int boot_link_flush(boot_link_t *l, int timeout_ms);
/* Send end of file after what was written (shutdown SHUT_WR); frames still come in until the
 * peer closes. Closing a socket with unread input resets the connection instead, and the
 * peer may lose what it had not read yet. 0, or -1 with errno. */
int boot_link_shutdown_write(boot_link_t *l);
const char *boot_link_peer(const boot_link_t *l);
/* The link's socket (for TCP_INFO), or -1 once closed. */
int boot_link_fd(const boot_link_t *l);
/* Change the callback argument (e.g. once an accepted link knows what it serves). */
void boot_link_set_arg(boot_link_t *l, void *arg);
void *boot_link_arg(const boot_link_t *l);
/* Hand the link to another owner: new callbacks and argument. */
void boot_link_set_cbs(boot_link_t *l, const struct boot_link_cbs *cbs, void *arg);

/* {==== TCP helpers */
/* Start a nonblocking connect to "addr" (numeric IPv4/IPv6) port; the link layer finishes it
 * (a refused or unreachable peer shows as on_close with the errno). fd, or -1 with err. */
int boot_tcp_connect(const char *addr, int port, char *err, size_t errlen);
/* Blocking connect with a timeout. fd (blocking, CLOEXEC), or -1 with err ("addr:port: why"). */
int boot_tcp_connect_wait(const char *addr, int port, int timeout_ms, char *err, size_t errlen);
/* Listen on all addresses (IPv4 any), port 0 = ephemeral; *port receives the port. fd or -1. */
int boot_tcp_listen(int *port, char *err, size_t errlen);
/* "addr:port" of the peer / our end of a socket into buf. */
void boot_tcp_peer(int fd, char *buf, size_t len);
/* The numeric address of the peer into buf (no port). 0, or -1. */
int boot_tcp_peer_addr(int fd, char *buf, size_t len);
/* ====} */

#endif
