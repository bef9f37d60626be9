/* lib/core/conn.h: framed, buffered, nonblocking stream connections on the event loop.
 * A frame is [u32 payload length][u16 type][u16 flags] + payload, little-endian. */
#ifndef LAMKIT_CORE_CONN_H
#define LAMKIT_CORE_CONN_H

#include "ev.h"

#include <stddef.h>

#define CORE_FRAME_MAX (16u << 20) /* a larger announced frame closes the connection */
#define CORE_FRAME_HDR 8u

typedef struct core_conn core_conn_t;

/* A whole frame arrived. The data is valid only during the call. */
typedef void (*core_conn_frame_f)(core_conn_t *c, unsigned type, const char *data, size_t len,
                                  void *arg);
/* The peer closed (err 0) or the connection failed (err = errno value). After this the conn
 * reads no more; the owner calls core_conn_destroy (it may do so inside the callback). */
typedef void (*core_conn_close_f)(core_conn_t *c, int err, void *arg);
/* The send queue fell below the low-water mark after having been above the high one. */
typedef void (*core_conn_drain_f)(core_conn_t *c, void *arg);

/* Wrap fd (made nonblocking) into a conn on ev. NULL with errno on failure. */
core_conn_t *core_conn_create(core_ev_t *ev, int fd, core_conn_frame_f on_frame,
                              core_conn_close_f on_close, void *arg);
/* Close the fd and free the conn; safe inside its own callbacks. Accepts NULL. */
void core_conn_destroy(core_conn_t *c);

/* Queue a frame (header + up to two payload pieces). 0, or -1 with errno (ENOMEM, EMSGSIZE,
 * EPIPE once the conn failed). */
int core_conn_send(core_conn_t *c, unsigned type, const void *a, size_t alen, const void *b,
                   size_t blen);
/* Bytes waiting to be written, and whether that is above the high-water mark (1 MiB). */
size_t core_conn_queued(const core_conn_t *c);
int core_conn_congested(const core_conn_t *c);
void core_conn_on_drain(core_conn_t *c, core_conn_drain_f cb);
/* Stop / resume reading frames (backpressure). */
void core_conn_pause(core_conn_t *c, int paused);
/* Try to write out everything queued, blocking up to timeout_ms. 0, or -1 (ETIMEDOUT...). */
int core_conn_flush(core_conn_t *c, int timeout_ms);
int core_conn_fd(const core_conn_t *c);

/* Descriptor passing, for a unix socket whose peer does the same: reads use recvmsg and keep
 * the descriptors that arrive (close-on-exec) for core_conn_take_fd. */
void core_conn_pass_fds(core_conn_t *c);
/* Queue a frame (one payload piece) carrying fd to the peer, which takes it with
 * core_conn_take_fd while it handles that frame (never later: an fd goes with a write that
 * begins at or before its frame; 16 at most per sendmsg, more waiting split the write). The
 * conn owns fd from here on (closed once sent, or with the conn). 0, or -1 with errno
 * (ENOTSUP without core_conn_pass_fds, EPIPE, ENOMEM); fd is still the caller's then. */
int core_conn_send_fd(core_conn_t *c, unsigned type, const void *a, size_t alen, int fd);
/* The oldest descriptor received and not taken yet (the caller owns it), or -1. Frames that
 * carry one must take it even when they are ignored. */
int core_conn_take_fd(core_conn_t *c);

#endif
