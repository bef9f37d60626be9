/* lib/boot/auth.h: the universe key and authenticated, encrypted connections (boot_sconn).
 * Wire format, key derivation and what is rejected: doc/PROTOCOL-startup.md. */
#ifndef LAMKIT_BOOT_AUTH_H
#define LAMKIT_BOOT_AUTH_H

#include <stddef.h>

#include "conn.h"
#include "ev.h"

#define BOOT_KEY_LEN     32
#define BOOT_KEY_HEX_LEN 64 /* characters, without the NUL */

/* Fill key with a fresh random universe key. 0, or -1 with errno (libsodium unusable). */
int boot_key_generate(unsigned char key[BOOT_KEY_LEN]);
/* Write key as 64 lowercase hex characters plus a NUL into hex. */
void boot_key_to_hex(const unsigned char key[BOOT_KEY_LEN], char hex[BOOT_KEY_HEX_LEN + 1]);
/* Parse the hex form: exactly 64 hex digits (either case), optionally followed by one '\n',
 * and nothing else (len counts every byte given). 0, or -1 with errno EINVAL (key is zeroed). */
int boot_key_from_hex(unsigned char key[BOOT_KEY_LEN], const char *text, size_t len);
/* Wipe n bytes of key material (a key, its hex form, a buffer that held either). */
void boot_key_wipe(void *p, size_t n);

/* Frame types 0xFF00..0xFFFF belong to the secure layer; applications use 0..0xFEFF. */
#define BOOT_SCONN_TYPE_MAX 0xFEFFu
/* The largest application payload one frame can carry. */
#define BOOT_SCONN_FRAME_MAX (CORE_FRAME_MAX - 16u)
/* Handshake timeout used when the caller passes 0 or less. */
#define BOOT_SCONN_HANDSHAKE_MS 10000

typedef struct boot_sconn boot_sconn_t;

/* The handshake finished: the peer proved it holds the universe key; sending is now allowed. */
typedef void (*boot_sconn_ready_f)(boot_sconn_t *s, void *arg);
/* An authenticated frame arrived, in order. The data is valid only during the call. */
typedef void (*boot_sconn_frame_f)(boot_sconn_t *s, unsigned type, const char *d, size_t len,
                                   void *arg);
/* The connection is over and its fd already closed; called once. err: 0 = the peer closed after
 * the handshake; EACCES = authentication failed (wrong key, forged, altered, replayed or
 * reflected); EPROTO = not our protocol; EMSGSIZE = frame too large; ETIMEDOUT = handshake
 * too slow; ECONNRESET = peer closed during the handshake; else the socket's errno.
 * why is one line naming the peer, e.g. "10.88.1.12:4711: authentication failed (...)". */
typedef void (*boot_sconn_close_f)(boot_sconn_t *s, int err, const char *why, void *arg);
/* The send queue fell below the low-water mark after having been above the high one. */
typedef void (*boot_sconn_drain_f)(boot_sconn_t *s, void *arg);

struct boot_sconn_cbs {
	boot_sconn_ready_f on_ready; /* may be NULL */
	boot_sconn_frame_f on_frame; /* required */
	boot_sconn_close_f on_close; /* required */
};

/* Take over the connected stream socket fd and start the handshake at once. initiator: 1 on
 * the side that connected (the agent), 0 on the side that accepted (boot). key: the universe
 * key (copied as derived subkeys only). peer: text naming the peer in reasons ("host:port").
 * handshake_timeout_ms <= 0 means BOOT_SCONN_HANDSHAKE_MS. Callbacks never run inside this
 * call. NULL with errno on failure (fd is then left open). Callers must ignore SIGPIPE. */
boot_sconn_t *boot_sconn_create(core_ev_t *ev, int fd, int initiator,
                                const unsigned char key[BOOT_KEY_LEN], const char *peer,
                                int handshake_timeout_ms, const struct boot_sconn_cbs *cbs,
                                void *arg);
/* Close the fd (if still open), wipe the keys and free; safe inside its own callbacks.
 * Accepts NULL; keeps errno. */
void boot_sconn_destroy(boot_sconn_t *s);

/* Seal and queue one frame made of two pieces (either may be empty). 0, or -1 with errno:
 * ENOTCONN before on_ready, EPIPE once closed, EINVAL for a reserved type, EMSGSIZE above
 * BOOT_SCONN_FRAME_MAX, ENOMEM. May call on_close (the socket failed) before returning. */
int boot_sconn_send(boot_sconn_t *s, unsigned type, const void *a, size_t alen, const void *b,
                    size_t blen);
/* 1 once the handshake finished and until the connection closes, else 0. */
int boot_sconn_ready(const boot_sconn_t *s);
/* The peer text given at creation. */
const char *boot_sconn_peer(const boot_sconn_t *s);

/* Pass-throughs to the inner core_conn (see conn.h); harmless after close. */
size_t boot_sconn_queued(const boot_sconn_t *s);
int boot_sconn_congested(const boot_sconn_t *s);
void boot_sconn_on_drain(boot_sconn_t *s, boot_sconn_drain_f cb);
/* Stop / resume reading frames (handshake frames included). */
void boot_sconn_pause(boot_sconn_t *s, int paused);
/* Write out everything queued, blocking up to timeout_ms. 0, or -1 with errno. */
int boot_sconn_flush(boot_sconn_t *s, int timeout_ms);
/* The socket, or -1 once closed. */
int boot_sconn_fd(const boot_sconn_t *s);

#endif
