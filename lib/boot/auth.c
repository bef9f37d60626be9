/* lib/boot/auth.c: universe key handling and boot_sconn, a mutually authenticated, sealed conn. */
#include "auth.h"

#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Wire constants: doc/PROTOCOL-startup.md. */
#define T_HELLO       0xFF01u
#define T_PROOF       0xFF02u
#define HELLO_LEN     40
#define PROOF_LEN     32
#define NONCE_LEN     32
#define PROTO_V       1
#define ROLE_I        'I'
#define ROLE_R        'R'
#define TAG_LEN       crypto_aead_chacha20poly1305_ietf_ABYTES
#define KDF_CTX       "lksconn1"
#define KDF_ID_AUTH   1
#define KDF_ID_SESS   2
#define SCRATCH_KEEP  (256u << 10) /* larger seal/open buffers are freed after use */
#define FAIL_FLUSH_MS 50           /* how long a rejecting side tries to get its proof out */

static const unsigned char hello_magic[4] = {'L', 'K', 'S', 'C'};

enum { ST_HELLO, ST_PROOF, ST_READY, ST_CLOSED };

struct boot_sconn {
	core_ev_t *ev;
	core_conn_t *conn;
	int initiator, state, timeout_ms;
	int depth, dead, creating, flushing, report, close_err;
	int64_t timer;
	uint64_t tx_n, rx_n;
	unsigned char k_auth[32], k_sess[32], k_tx[32], k_rx[32];
	unsigned char my_hello[HELLO_LEN], peer_hello[HELLO_LEN];
	struct boot_sconn_cbs cb;
	boot_sconn_drain_f on_drain;
	void *arg;
	char *peer;
	unsigned char *txb, *rxb;
	size_t txcap, rxcap;
	char why[320];
};

/* {==== universe key */

static int sodium_ready(void)
{
	if (sodium_init() < 0) {
		errno = ENOSYS;
		return -1;
	}
	return 0;
}

int boot_key_generate(unsigned char key[BOOT_KEY_LEN])
{
	if (sodium_ready() < 0)
		return -1;
	randombytes_buf(key, BOOT_KEY_LEN);
	return 0;
}

void boot_key_to_hex(const unsigned char key[BOOT_KEY_LEN], char hex[BOOT_KEY_HEX_LEN + 1])
{
	sodium_bin2hex(hex, BOOT_KEY_HEX_LEN + 1, key, BOOT_KEY_LEN);
}

int boot_key_from_hex(unsigned char key[BOOT_KEY_LEN], const char *text, size_t len)
{
	size_t got = 0;

	if (text && len == BOOT_KEY_HEX_LEN + 1 && text[BOOT_KEY_HEX_LEN] == '\n')
		len--;
	if (!text || len != BOOT_KEY_HEX_LEN ||
	    sodium_hex2bin(key, BOOT_KEY_LEN, text, len, NULL, &got, NULL) != 0 ||
	    got != BOOT_KEY_LEN) {
		sodium_memzero(key, BOOT_KEY_LEN);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void boot_key_wipe(void *p, size_t n)
{
	if (p && n)
		sodium_memzero(p, n);
}

/* }==== */

/* {==== lifetime: callbacks may destroy the sconn; entry points hold it with enter/leave */

static void enter(boot_sconn_t *s)
{
	s->depth++;
}

static void wipe_keys(boot_sconn_t *s)
{
	sodium_memzero(s->k_auth, sizeof s->k_auth);
	sodium_memzero(s->k_sess, sizeof s->k_sess);
	sodium_memzero(s->k_tx, sizeof s->k_tx);
	sodium_memzero(s->k_rx, sizeof s->k_rx);
}

static void sc_free(boot_sconn_t *s)
{
	if (s->timer > 0)
		core_ev_timer_cancel(s->ev, s->timer);
	core_conn_destroy(s->conn);
	wipe_keys(s);
	free(s->txb);
	free(s->rxb);
	free(s->peer);
	sodium_memzero(s, sizeof *s);
	free(s);
}

/* 1 if this was the last hold and the sconn is now freed: the caller must not touch it. */
static int leave(boot_sconn_t *s)
{
	if (--s->depth == 0 && s->dead) {
		sc_free(s);
		return 1;
	}
	return 0;
}

/* Close the socket, unless boot_sconn_flush is inside core_conn_flush (it closes it after). */
static void drop_conn(boot_sconn_t *s)
{
	if (!s->conn || s->flushing)
		return;
	core_conn_destroy(s->conn);
	s->conn = NULL;
}

/* }==== */

static void notify_close(boot_sconn_t *s)
{
	if (s->creating) {
		s->report = 1; /* delivered by the timer, never inside boot_sconn_create */
		return;
	}
	s->cb.on_close(s, s->close_err, s->why, s->arg);
}

/* End the connection once: stop reading, close the fd, wipe keys, tell the owner why. */
static void sc_fail(boot_sconn_t *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void sc_fail(boot_sconn_t *s, int err, const char *fmt, ...)
{
	va_list ap;
	int in_handshake = s->state != ST_READY;

	if (s->state == ST_CLOSED)
		return;
	s->state = ST_CLOSED;
	s->close_err = err;
	int n = snprintf(s->why, sizeof s->why, "%s: ", s->peer);
	va_start(ap, fmt);
	vsnprintf(s->why + n, sizeof s->why - (size_t)n, fmt, ap);
	va_end(ap);
	if (s->timer > 0 && !s->creating) {
		core_ev_timer_cancel(s->ev, s->timer);
		s->timer = 0;
	}
	wipe_keys(s);
	/* let a peer we reject during the handshake see our proof, so it can name the cause */
	if (in_handshake && s->conn && !s->flushing && (err == EACCES || err == EPROTO))
		core_conn_flush(s->conn, FAIL_FLUSH_MS);
	drop_conn(s);
	notify_close(s);
}

/* {==== handshake */

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static const unsigned char *hello_of(const boot_sconn_t *s, int role)
{
	return (role == ROLE_I) == !!s->initiator ? s->my_hello : s->peer_hello;
}

/* Keyed BLAKE2b-256 over label, NUL, the initiator's hello and the responder's hello. */
static void transcript_mac(const boot_sconn_t *s, unsigned char out[32],
                           const unsigned char key[32], const char *label)
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, key, 32, 32);
	crypto_generichash_update(&st, (const unsigned char *)label, strlen(label) + 1);
	crypto_generichash_update(&st, hello_of(s, ROLE_I), HELLO_LEN);
	crypto_generichash_update(&st, hello_of(s, ROLE_R), HELLO_LEN);
	crypto_generichash_final(&st, out, 32);
	sodium_memzero(&st, sizeof st);
}

static const char *proof_label(int role)
{
	return role == ROLE_I ? "lamkit sconn v1 proof by initiator"
	                      : "lamkit sconn v1 proof by responder";
}

static void derive_session_keys(boot_sconn_t *s)
{
	unsigned char *i2r = s->initiator ? s->k_tx : s->k_rx;
	unsigned char *r2i = s->initiator ? s->k_rx : s->k_tx;

	transcript_mac(s, i2r, s->k_sess, "lamkit sconn v1 key initiator to responder");
	transcript_mac(s, r2i, s->k_sess, "lamkit sconn v1 key responder to initiator");
	sodium_memzero(s->k_sess, sizeof s->k_sess);
}

static int my_role(const boot_sconn_t *s)
{
	return s->initiator ? ROLE_I : ROLE_R;
}

static const char *role_name(int role)
{
	return role == ROLE_I ? "initiator" : "responder";
}

static int check_hello(boot_sconn_t *s, unsigned type, const unsigned char *h, size_t len)
{
	if (type != T_HELLO) {
		sc_fail(s, EPROTO, "unexpected message (type %u) before the handshake finished",
		        type);
		return -1;
	}
	if (len != HELLO_LEN || memcmp(h, hello_magic, 4) != 0 || h[6] || h[7] ||
	    (h[5] != ROLE_I && h[5] != ROLE_R)) {
		sc_fail(s, EPROTO, "not a lamkit startup peer (malformed hello)");
		return -1;
	}
	if (h[4] != PROTO_V) {
		sc_fail(s, EPROTO, "peer speaks startup protocol version %u, we speak %u", h[4],
		        PROTO_V);
		return -1;
	}
	if (h[5] == my_role(s)) {
		sc_fail(s, EACCES,
		        "authentication failed: peer also claims to be the %s "
		        "(reflected connection?)",
		        role_name(h[5]));
		return -1;
	}
	return 0;
}

static void got_hello(boot_sconn_t *s, unsigned type, const char *d, size_t len)
{
	unsigned char proof[PROOF_LEN];

	if (check_hello(s, type, (const unsigned char *)d, len) < 0)
		return;
	memcpy(s->peer_hello, d, HELLO_LEN);
	transcript_mac(s, proof, s->k_auth, proof_label(my_role(s)));
	derive_session_keys(s);
	s->state = ST_PROOF;
	core_conn_send(s->conn, T_PROOF, proof, sizeof proof, NULL, 0);
	sodium_memzero(proof, sizeof proof);
}

static void got_proof(boot_sconn_t *s, unsigned type, const char *d, size_t len)
{
	unsigned char want[PROOF_LEN];
	int peer_role = s->initiator ? ROLE_R : ROLE_I;

	if (type != T_PROOF) {
		sc_fail(s, EPROTO, "unexpected message (type %u) before the handshake finished",
		        type);
		return;
	}
	transcript_mac(s, want, s->k_auth, proof_label(peer_role));
	int good = len == PROOF_LEN && sodium_memcmp(want, d, PROOF_LEN) == 0;
	sodium_memzero(want, sizeof want);
	sodium_memzero(s->k_auth, sizeof s->k_auth);
	if (!good) {
		sc_fail(s, EACCES, "authentication failed (wrong universe key?)");
		return;
	}
	if (s->timer > 0)
		core_ev_timer_cancel(s->ev, s->timer);
	s->timer = 0;
	s->state = ST_READY;
	if (s->cb.on_ready)
		s->cb.on_ready(s, s->arg);
}

/* }==== */

/* {==== sealed frames */

static void frame_nonce(unsigned char n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES], uint64_t ctr)
{
	memset(n, 0, crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
	put64(n, ctr);
}

static void type_ad(unsigned char ad[2], unsigned type)
{
	ad[0] = (unsigned char)(type & 0xff);
	ad[1] = (unsigned char)(type >> 8 & 0xff);
}

/* Make *buf hold at least n bytes. 0, or -1 (ENOMEM). */
static int scratch(unsigned char **buf, size_t *cap, size_t n)
{
	if (*cap >= n && *buf)
		return 0;
	unsigned char *p = realloc(*buf, n ? n : 1);
	if (!p)
		return -1;
	*buf = p;
	*cap = n ? n : 1;
	return 0;
}

static void scratch_trim(unsigned char **buf, size_t *cap)
{
	if (*cap > SCRATCH_KEEP) {
		free(*buf);
		*buf = NULL;
		*cap = 0;
	}
}

static void got_sealed(boot_sconn_t *s, unsigned type, const char *d, size_t len)
{
	unsigned char nonce[crypto_aead_chacha20poly1305_ietf_NPUBBYTES], ad[2];
	unsigned long long mlen = 0;

	if (type > BOOT_SCONN_TYPE_MAX) {
		sc_fail(s, EPROTO, "unexpected handshake message (type %u) after the handshake",
		        type);
		return;
	}
	if (len < TAG_LEN || s->rx_n == UINT64_MAX) {
		sc_fail(s, EPROTO, "malformed sealed frame (%zu bytes)", len);
		return;
	}
	if (scratch(&s->rxb, &s->rxcap, len - TAG_LEN) < 0) {
		sc_fail(s, ENOMEM, "out of memory opening a %zu-byte frame", len);
		return;
	}
	frame_nonce(nonce, s->rx_n);
	type_ad(ad, type);
	if (crypto_aead_chacha20poly1305_ietf_decrypt(s->rxb, &mlen, NULL, (const unsigned char *)d,
	                                              len, ad, 2, nonce, s->k_rx) != 0) {
		sc_fail(s, EACCES,
		        "authentication failed: frame %llu rejected (forged, altered, replayed "
		        "or out of order)",
		        (unsigned long long)s->rx_n);
		return;
	}
	s->rx_n++;
	s->cb.on_frame(s, type, (const char *)s->rxb, (size_t)mlen, s->arg);
	if (!s->dead)
		scratch_trim(&s->rxb, &s->rxcap);
}

/* }==== */

/* {==== inner conn and timer callbacks */

static void on_core_frame(core_conn_t *c, unsigned type, const char *d, size_t len, void *arg)
{
	boot_sconn_t *s = arg;

	enter(s);
	if (s->state == ST_HELLO)
		got_hello(s, type, d, len);
	else if (s->state == ST_PROOF)
		got_proof(s, type, d, len);
	else if (s->state == ST_READY)
		got_sealed(s, type, d, len);
	leave(s);
}

static void on_core_close(core_conn_t *c, int err, void *arg)
{
	boot_sconn_t *s = arg;
	int hs = s->state != ST_READY;

	if (s->state == ST_CLOSED)
		return;
	enter(s);
	if (err == 0 && !hs)
		sc_fail(s, 0, "connection closed by the peer");
	else if (err == 0)
		sc_fail(s, ECONNRESET, "connection closed by the peer during the handshake");
	else if (err == EMSGSIZE && hs)
		sc_fail(s, EPROTO, "oversized frame during the handshake (not a lamkit peer?)");
	else if (err == EMSGSIZE)
		sc_fail(s, EMSGSIZE, "frame too large (over %u bytes)", CORE_FRAME_MAX);
	else
		sc_fail(s, err, "connection failed: %s", strerror(err));
	leave(s);
}

static void on_core_drain(core_conn_t *c, void *arg)
{
	boot_sconn_t *s = arg;

	if (s->state != ST_READY || !s->on_drain)
		return;
	enter(s);
	s->on_drain(s, s->arg);
	leave(s);
}

static void on_timer(core_ev_t *ev, void *arg)
{
	boot_sconn_t *s = arg;

	s->timer = 0;
	enter(s);
	if (s->report) {
		s->report = 0;
		s->cb.on_close(s, s->close_err, s->why, s->arg);
	} else if (s->state == ST_HELLO || s->state == ST_PROOF) {
		sc_fail(s, ETIMEDOUT, "handshake not finished after %d ms", s->timeout_ms);
	}
	leave(s);
}

/* }==== */

/* {==== public API */

static void make_hello(boot_sconn_t *s)
{
	unsigned char *h = s->my_hello;

	memcpy(h, hello_magic, 4);
	h[4] = PROTO_V;
	h[5] = (unsigned char)my_role(s);
	h[6] = h[7] = 0;
	randombytes_buf(h + 8, NONCE_LEN);
}

static boot_sconn_t *sc_alloc(core_ev_t *ev, int initiator, const unsigned char *key,
                              const char *peer, int timeout_ms)
{
	boot_sconn_t *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	s->peer = strdup(peer && *peer ? peer : "peer");
	if (!s->peer) {
		free(s);
		return NULL;
	}
	s->ev = ev;
	s->initiator = !!initiator;
	s->timeout_ms = timeout_ms > 0 ? timeout_ms : BOOT_SCONN_HANDSHAKE_MS;
	crypto_kdf_derive_from_key(s->k_auth, sizeof s->k_auth, KDF_ID_AUTH, KDF_CTX, key);
	crypto_kdf_derive_from_key(s->k_sess, sizeof s->k_sess, KDF_ID_SESS, KDF_CTX, key);
	make_hello(s);
	return s;
}

boot_sconn_t *boot_sconn_create(core_ev_t *ev, int fd, int initiator,
                                const unsigned char key[BOOT_KEY_LEN], const char *peer,
                                int handshake_timeout_ms, const struct boot_sconn_cbs *cbs,
                                void *arg)
{
	if (!ev || fd < 0 || !key || !cbs || !cbs->on_frame || !cbs->on_close) {
		errno = EINVAL;
		return NULL;
	}
	if (sodium_ready() < 0)
		return NULL;
	boot_sconn_t *s = sc_alloc(ev, initiator, key, peer, handshake_timeout_ms);
	if (!s)
		return NULL;
	s->cb = *cbs;
	s->arg = arg;
	s->timer = core_ev_timer(ev, s->timeout_ms, on_timer, s);
	if (s->timer > 0)
		s->conn = core_conn_create(ev, fd, on_core_frame, on_core_close, s);
	if (!s->conn) {
		int e = errno;
		sc_free(s);
		errno = e;
		return NULL;
	}
	core_conn_on_drain(s->conn, on_core_drain);
	s->creating = 1;
	if (core_conn_send(s->conn, T_HELLO, s->my_hello, HELLO_LEN, NULL, 0) < 0)
		sc_fail(s, errno, "cannot send the hello: %s", strerror(errno));
	s->creating = 0;
	if (s->report) { /* failed already: report from the loop, not from here */
		core_ev_timer_cancel(ev, s->timer);
		s->timer = core_ev_timer(ev, 0, on_timer, s);
	}
	return s;
}

void boot_sconn_destroy(boot_sconn_t *s)
{
	int saved = errno;

	if (!s)
		return;
	if (s->timer > 0)
		core_ev_timer_cancel(s->ev, s->timer);
	s->timer = 0;
	s->report = 0;
	s->state = ST_CLOSED;
	s->dead = 1;
	drop_conn(s);
	if (s->depth == 0)
		sc_free(s);
	errno = saved;
}

static int send_check(const boot_sconn_t *s, unsigned type, size_t alen, size_t blen)
{
	if (s->state == ST_CLOSED || !s->conn)
		errno = EPIPE;
	else if (s->state != ST_READY)
		errno = ENOTCONN;
	else if (type > BOOT_SCONN_TYPE_MAX)
		errno = EINVAL;
	else if (alen > BOOT_SCONN_FRAME_MAX || blen > BOOT_SCONN_FRAME_MAX - alen)
		errno = EMSGSIZE;
	else if (s->tx_n == UINT64_MAX)
		errno = EOVERFLOW;
	else
		return 0;
	return -1;
}

int boot_sconn_send(boot_sconn_t *s, unsigned type, const void *a, size_t alen, const void *b,
                    size_t blen)
{
	unsigned char nonce[crypto_aead_chacha20poly1305_ietf_NPUBBYTES], ad[2];
	size_t n = alen + blen;

	if (send_check(s, type, alen, blen) < 0)
		return -1;
	if (scratch(&s->txb, &s->txcap, n + TAG_LEN) < 0)
		return -1;
	if (alen)
		memcpy(s->txb, a, alen);
	if (blen)
		memcpy(s->txb + alen, b, blen);
	frame_nonce(nonce, s->tx_n);
	type_ad(ad, type);
	crypto_aead_chacha20poly1305_ietf_encrypt(s->txb, NULL, s->txb, n, ad, 2, NULL, nonce,
	                                          s->k_tx);
	enter(s);
	int r = core_conn_send(s->conn, type, s->txb, n + TAG_LEN, NULL, 0), e = errno;
	if (r == 0)
		s->tx_n++;
	if (!s->dead)
		scratch_trim(&s->txb, &s->txcap);
	leave(s);
	errno = e;
	return r;
}

int boot_sconn_ready(const boot_sconn_t *s)
{
	return s->state == ST_READY;
}

const char *boot_sconn_peer(const boot_sconn_t *s)
{
	return s->peer;
}

size_t boot_sconn_queued(const boot_sconn_t *s)
{
	return s->conn && s->state != ST_CLOSED ? core_conn_queued(s->conn) : 0;
}

int boot_sconn_congested(const boot_sconn_t *s)
{
	return s->conn && s->state != ST_CLOSED ? core_conn_congested(s->conn) : 0;
}

void boot_sconn_on_drain(boot_sconn_t *s, boot_sconn_drain_f cb)
{
	s->on_drain = cb;
}

void boot_sconn_pause(boot_sconn_t *s, int paused)
{
	if (!s->conn || s->state == ST_CLOSED)
		return;
	enter(s);
	core_conn_pause(s->conn, paused);
	leave(s);
}

int boot_sconn_flush(boot_sconn_t *s, int timeout_ms)
{
	if (!s->conn || s->state == ST_CLOSED) {
		errno = EPIPE;
		return -1;
	}
	enter(s);
	s->flushing = 1;
	int r = core_conn_flush(s->conn, timeout_ms), e = errno;
	s->flushing = 0;
	if (s->state == ST_CLOSED) /* failed meanwhile: close the socket now */
		drop_conn(s);
	leave(s);
	errno = e;
	return r;
}

int boot_sconn_fd(const boot_sconn_t *s)
{
	return s->conn && s->state != ST_CLOSED ? core_conn_fd(s->conn) : -1;
}

/* }==== */
