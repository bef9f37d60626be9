/* lib/pmi/pmi2_wire.c: PMI-2 message codec shared by the server engine and libpmi. */
#include "pmi2_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

long pmi2_hdr_parse(const char hdr[PMI2_HDR_LEN])
{
	long v = 0;
	int i = 0, digits = 0;

	while (i < PMI2_HDR_LEN && hdr[i] == ' ')
		i++;
	for (; i < PMI2_HDR_LEN && hdr[i] >= '0' && hdr[i] <= '9'; i++, digits++)
		v = v * 10 + (hdr[i] - '0');
	while (i < PMI2_HDR_LEN && hdr[i] == ' ')
		i++;
	if (i != PMI2_HDR_LEN || digits == 0 || v > PMI2_MSG_MAX)
		return -1;
	return v;
}

static int key_ok(const char *k, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)k[i];
		if (ch <= ' ' || ch == 0x7f || ch == '=' || ch == ';')
			return 0;
	}
	return 1;
}

int pmi2_msg_parse(const char *body, size_t len, struct pmi2_msg *m, const char **why)
{
	size_t i = 0, o = 0;

	memset(m, 0, sizeof(*m));
	if (len == 0) {
		*why = "empty";
		return -1;
	}
	if (memchr(body, '\0', len)) {
		*why = "nul_byte";
		return -1;
	}
	m->text = malloc(len + 1);
	m->kv = malloc(sizeof(*m->kv) * 8);
	size_t cap = 8;
	if (!m->text || !m->kv) {
		*why = "no_memory";
		goto bad;
	}
	while (i < len) {
		const char *k = body + i;
		const char *eq = memchr(k, '=', len - i);
		size_t klen = eq ? (size_t)(eq - k) : 0;
		if (!eq || !key_ok(k, klen) || memchr(k, ';', klen)) {
			*why = "bad_key";
			goto bad;
		}
		if (klen > PMI2_KEY_MAX) {
			*why = "key_too_long";
			goto bad;
		}
		if (m->n == PMI2_PAIRS_MAX) {
			*why = "too_many_pairs";
			goto bad;
		}
		if (m->n == cap) {
			struct pmi2_kv *nkv = realloc(m->kv, sizeof(*nkv) * cap * 2);
			if (!nkv) {
				*why = "no_memory";
				goto bad;
			}
			m->kv = nkv;
			cap *= 2;
		}
		struct pmi2_kv *kv = &m->kv[m->n++];
		memcpy(m->text + o, k, klen);
		m->text[o + klen] = '\0';
		kv->key = m->text + o;
		o += klen + 1;
		i += klen + 1;
		kv->val = m->text + o;
		size_t vstart = o;
		while (i < len) {
			if (body[i] == ';') {
				if (i + 1 < len && body[i + 1] == ';') {
					m->text[o++] = ';';
					i += 2;
					continue;
				}
				i++; /* the terminator */
				break;
			}
			m->text[o++] = body[i++];
		}
		kv->vlen = o - vstart;
		m->text[o++] = '\0';
		if (kv->vlen > PMI2_CMD_VAL_MAX) {
			*why = "value_too_long";
			goto bad;
		}
	}
	if (strcmp(m->kv[0].key, "cmd") != 0 || m->kv[0].vlen == 0) {
		*why = "no_cmd";
		goto bad;
	}
	return 0;
bad:
	pmi2_msg_free(m);
	return -1;
}

void pmi2_msg_free(struct pmi2_msg *m)
{
	if (!m)
		return;
	free(m->text);
	free(m->kv);
	memset(m, 0, sizeof(*m));
}

const char *pmi2_msg_cmd(const struct pmi2_msg *m)
{
	return m->n ? m->kv[0].val : "";
}

const char *pmi2_msg_get(const struct pmi2_msg *m, const char *key, size_t *vlen)
{
	for (size_t i = 1; i < m->n; i++) {
		if (strcmp(m->kv[i].key, key) == 0) {
			if (vlen)
				*vlen = m->kv[i].vlen;
			return m->kv[i].val;
		}
	}
	return NULL;
}

int pmi2_msg_int(const struct pmi2_msg *m, const char *key, int *out)
{
	size_t n;
	const char *v = pmi2_msg_get(m, key, &n);

	return v ? pmi_wire_parse_int(v, n, out) : -1;
}

int pmi2_msg_bool(const struct pmi2_msg *m, const char *key, int dflt)
{
	const char *v = pmi2_msg_get(m, key, NULL);

	if (!v)
		return dflt;
	return strcasecmp(v, "TRUE") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0;
}

/* ---- building ---- */

static void out_reserve(struct pmi2_out *o, size_t more)
{
	if (o->err || o->len + more <= o->cap)
		return;
	if (o->len + more > PMI2_HDR_LEN + PMI2_MSG_MAX) {
		o->err = EMSGSIZE;
		return;
	}
	size_t cap = o->cap ? o->cap : 256;
	while (cap < o->len + more)
		cap *= 2;
	char *b = realloc(o->buf, cap);
	if (!b) {
		o->err = ENOMEM;
		return;
	}
	o->buf = b;
	o->cap = cap;
}

static void out_raw(struct pmi2_out *o, const char *s, size_t n)
{
	out_reserve(o, n);
	if (o->err)
		return;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

void pmi2_out_begin(struct pmi2_out *o, const char *cmd)
{
	memset(o, 0, sizeof(*o));
	out_raw(o, "      ", PMI2_HDR_LEN);
	pmi2_out_add(o, "cmd", cmd);
}

void pmi2_out_addn(struct pmi2_out *o, const char *key, const char *val, size_t vlen)
{
	out_raw(o, key, strlen(key));
	out_raw(o, "=", 1);
	for (size_t i = 0; i < vlen; i++) {
		if (val[i] == ';')
			out_raw(o, ";", 1);
		out_raw(o, val + i, 1);
	}
	out_raw(o, ";", 1);
}

void pmi2_out_add(struct pmi2_out *o, const char *key, const char *val)
{
	pmi2_out_addn(o, key, val, strlen(val));
}

void pmi2_out_addi(struct pmi2_out *o, const char *key, long val)
{
	char num[24];

	snprintf(num, sizeof(num), "%ld", val);
	pmi2_out_add(o, key, num);
}

long pmi2_out_finish(struct pmi2_out *o)
{
	char hdr[PMI2_HDR_LEN + 1];

	if (o->err) {
		errno = o->err;
		return -1;
	}
	snprintf(hdr, sizeof(hdr), "%-6zu", o->len - PMI2_HDR_LEN);
	memcpy(o->buf, hdr, PMI2_HDR_LEN);
	return (long)o->len;
}

void pmi2_out_free(struct pmi2_out *o)
{
	free(o->buf);
	memset(o, 0, sizeof(*o));
}
