/* lib/pmi/pmi_kvs.c: ordered hash table of PMI key/value pairs and its batch codec. */
#include "pmi_kvs.h"
#include "pmi_server.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kvs_ent {
	size_t klen, vlen;
	char *val;   /* points into data after the key's NUL */
	char data[]; /* key '\0' value '\0' */
};

struct pmi_kvs {
	struct kvs_ent **ents; /* insertion order */
	size_t n, cap;
	uint32_t *slots; /* open addressing: entry index + 1, 0 = empty */
	size_t nslots;   /* power of two, at least 2 * n */
	size_t bytes;
};

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

pmi_kvs_t *pmi_kvs_create(void)
{
	pmi_kvs_t *k = calloc(1, sizeof(*k));

	if (!k)
		errno = ENOMEM;
	return k;
}

void pmi_kvs_clear(pmi_kvs_t *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->ents[i]);
	k->n = 0;
	k->bytes = 0;
	if (k->slots)
		memset(k->slots, 0, k->nslots * sizeof(*k->slots));
}

void pmi_kvs_destroy(pmi_kvs_t *k)
{
	int saved = errno;

	if (k) {
		pmi_kvs_clear(k);
		free(k->ents);
		free(k->slots);
		free(k);
	}
	errno = saved;
}

/* Slot holding key, or the empty slot where it would go. */
static size_t find_slot(const pmi_kvs_t *k, const char *key, size_t klen)
{
	size_t mask = k->nslots - 1;
	size_t i = (size_t)hash(key, klen) & mask;

	while (k->slots[i]) {
		const struct kvs_ent *e = k->ents[k->slots[i] - 1];
		if (e->klen == klen && memcmp(e->data, key, klen) == 0)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

static int rehash(pmi_kvs_t *k, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots) {
		errno = ENOMEM;
		return -1;
	}
	free(k->slots);
	k->slots = slots;
	k->nslots = nslots;
	for (size_t i = 0; i < k->n; i++) {
		size_t s = find_slot(k, k->ents[i]->data, k->ents[i]->klen);
		k->slots[s] = (uint32_t)(i + 1);
	}
	return 0;
}

/* Make room for one more entry in both arrays. */
static int grow(pmi_kvs_t *k)
{
	if (k->n + 1 >= UINT32_MAX) {
		errno = ENOSPC;
		return -1;
	}
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		struct kvs_ent **e = realloc(k->ents, cap * sizeof(*e));
		if (!e) {
			errno = ENOMEM;
			return -1;
		}
		k->ents = e;
		k->cap = cap;
	}
	if ((k->n + 1) * 2 > k->nslots)
		return rehash(k, k->nslots ? k->nslots * 2 : 32);
	return 0;
}

static struct kvs_ent *ent_new(const char *key, size_t klen, const char *val, size_t vlen)
{
	struct kvs_ent *e = malloc(sizeof(*e) + klen + vlen + 2);

	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	e->klen = klen;
	e->vlen = vlen;
	memcpy(e->data, key, klen);
	e->data[klen] = '\0';
	e->val = e->data + klen + 1;
	memcpy(e->val, val, vlen);
	e->val[vlen] = '\0';
	return e;
}

int pmi_kvs_set(pmi_kvs_t *k, const char *key, size_t klen, const char *val, size_t vlen)
{
	if (klen == 0 || memchr(key, '\0', klen) || memchr(val, '\0', vlen)) {
		errno = EINVAL;
		return -1;
	}
	if (k->bytes + klen + vlen > PMI_KVS_BYTES_MAX) {
		errno = ENOSPC;
		return -1;
	}
	if (grow(k) < 0)
		return -1;
	size_t s = find_slot(k, key, klen);
	struct kvs_ent *e = ent_new(key, klen, val, vlen);
	if (!e)
		return -1;
	if (k->slots[s]) {
		struct kvs_ent **old = &k->ents[k->slots[s] - 1];
		k->bytes -= (*old)->klen + (*old)->vlen;
		free(*old);
		*old = e;
	} else {
		k->ents[k->n++] = e;
		k->slots[s] = (uint32_t)k->n;
	}
	k->bytes += klen + vlen;
	return 0;
}

const char *pmi_kvs_get(const pmi_kvs_t *k, const char *key, size_t klen, size_t *vlen)
{
	if (!k->nslots)
		return NULL;
	size_t s = find_slot(k, key, klen);
	if (!k->slots[s])
		return NULL;
	const struct kvs_ent *e = k->ents[k->slots[s] - 1];
	if (vlen)
		*vlen = e->vlen;
	return e->val;
}

int pmi_kvs_del(pmi_kvs_t *k, const char *key, size_t klen)
{
	size_t s = k->nslots ? find_slot(k, key, klen) : 0;

	if (!k->nslots || !k->slots[s]) {
		errno = ENOENT;
		return -1;
	}
	size_t idx = k->slots[s] - 1;
	k->bytes -= k->ents[idx]->klen + k->ents[idx]->vlen;
	free(k->ents[idx]);
	memmove(k->ents + idx, k->ents + idx + 1, (k->n - idx - 1) * sizeof(*k->ents));
	k->n--;
	return rehash(k, k->nslots);
}

size_t pmi_kvs_count(const pmi_kvs_t *k)
{
	return k->n;
}

int pmi_kvs_at(const pmi_kvs_t *k, size_t idx, const char **key, const char **val)
{
	if (idx >= k->n) {
		errno = ERANGE;
		return -1;
	}
	*key = k->ents[idx]->data;
	*val = k->ents[idx]->val;
	return 0;
}

size_t pmi_kvs_bytes(const pmi_kvs_t *k)
{
	return k->bytes;
}

/* Append raw bytes to a growing buffer. */
static int buf_put(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n > *cap || !*buf) {
		size_t ncap = *cap ? *cap : 256;
		while (ncap < *len + n)
			ncap *= 2;
		char *nb = realloc(*buf, ncap);
		if (!nb) {
			errno = ENOMEM;
			return -1;
		}
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	return 0;
}

static int encode_n(char **buf, size_t *len, size_t *cap, const char *key, size_t klen,
                    const char *val, size_t vlen)
{
	char head[48];
	size_t old = *len;

	if (klen == 0 || klen > PMI_KVS_REC_KEY_MAX || vlen > PMI_KVS_REC_VAL_MAX) {
		errno = klen == 0 ? EINVAL : E2BIG;
		return -1;
	}
	int n = snprintf(head, sizeof(head), "%zu %zu ", klen, vlen);
	if (buf_put(buf, len, cap, head, (size_t)n) < 0 || buf_put(buf, len, cap, key, klen) < 0 ||
	    buf_put(buf, len, cap, " ", 1) < 0 || buf_put(buf, len, cap, val, vlen) < 0 ||
	    buf_put(buf, len, cap, "\n", 1) < 0) {
		*len = old;
		return -1;
	}
	return 0;
}

int pmi_kvs_encode(char **buf, size_t *len, size_t *cap, const char *key, const char *val)
{
	if (!buf || !len || !cap || !key || !val) {
		errno = EINVAL;
		return -1;
	}
	return encode_n(buf, len, cap, key, strlen(key), val, strlen(val));
}

int pmi_kvs_dump(const pmi_kvs_t *k, char **buf, size_t *len, size_t *cap)
{
	for (size_t i = 0; i < k->n; i++) {
		const struct kvs_ent *e = k->ents[i];
		if (encode_n(buf, len, cap, e->data, e->klen, e->val, e->vlen) < 0)
			return -1;
	}
	return 0;
}

/* Parse a decimal length ended by ' ' at in[*pos]; advances *pos past the space. */
static int parse_len(const char *in, size_t inlen, size_t *pos, size_t max, size_t *out)
{
	size_t v = 0, i = *pos;

	if (i >= inlen || in[i] < '0' || in[i] > '9')
		return -1;
	for (; i < inlen && in[i] >= '0' && in[i] <= '9'; i++) {
		v = v * 10 + (size_t)(in[i] - '0');
		if (v > max)
			return -1;
	}
	if (i >= inlen || in[i] != ' ')
		return -1;
	*pos = i + 1;
	*out = v;
	return 0;
}

/* Decode the record at in[*pos]: key/value bounds; advances *pos. 0 or -1 (malformed). */
static int next_rec(const char *in, size_t inlen, size_t *pos, const char **key, size_t *klen,
                    const char **val, size_t *vlen)
{
	size_t p = *pos;

	if (parse_len(in, inlen, &p, PMI_KVS_REC_KEY_MAX, klen) < 0 ||
	    parse_len(in, inlen, &p, PMI_KVS_REC_VAL_MAX, vlen) < 0 || *klen == 0)
		return -1;
	if (inlen - p < *klen + *vlen + 2 || in[p + *klen] != ' ' ||
	    in[p + *klen + 1 + *vlen] != '\n')
		return -1;
	*key = in + p;
	*val = in + p + *klen + 1;
	if (memchr(*key, '\0', *klen) || memchr(*val, '\0', *vlen))
		return -1;
	*pos = p + *klen + *vlen + 2;
	return 0;
}

int pmi_kvs_load(pmi_kvs_t *k, const char *in, size_t inlen)
{
	const char *key, *val;
	size_t klen, vlen, pos = 0;

	if (!in && inlen) {
		errno = EINVAL;
		return -1;
	}
	while (pos < inlen) { /* validate everything first: all or nothing */
		if (next_rec(in, inlen, &pos, &key, &klen, &val, &vlen) < 0) {
			errno = EINVAL;
			return -1;
		}
	}
	for (pos = 0; pos < inlen;) {
		next_rec(in, inlen, &pos, &key, &klen, &val, &vlen);
		if (pmi_kvs_set(k, key, klen, val, vlen) < 0)
			return -1;
	}
	return 0;
}

int pmi_kvs_merge(char **buf, size_t *len, size_t *cap, const char *in, size_t inlen)
{
	char *nb = NULL;
	size_t nlen = 0, ncap = 0;
	int rc = -1;

	if (!buf || !len || !cap) {
		errno = EINVAL;
		return -1;
	}
	pmi_kvs_t *k = pmi_kvs_create();
	if (!k)
		return -1;
	if (pmi_kvs_load(k, *buf, *len) < 0 || pmi_kvs_load(k, in, inlen) < 0 ||
	    pmi_kvs_dump(k, &nb, &nlen, &ncap) < 0)
		goto out;
	free(*buf);
	*buf = nb;
	*len = nlen;
	*cap = ncap;
	nb = NULL;
	rc = 0;
out:
	free(nb);
	pmi_kvs_destroy(k);
	return rc;
}
