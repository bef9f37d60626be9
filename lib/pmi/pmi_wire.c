/* lib/pmi/pmi_wire.c: PMI-1 line tokens and value escaping shared by the engine and libpmi. */
#include "pmi_wire.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* The first token `key=...` of line[0..len): its value start, and the token start. */
static const char *find_token(const char *line, size_t len, const char *key, size_t *tokstart)
{
	size_t klen = strlen(key);
	size_t i = 0;

	while (i < len) {
		while (i < len && line[i] == ' ')
			i++;
		size_t start = i;
		while (i < len && line[i] != ' ')
			i++;
		if (i - start > klen && memcmp(line + start, key, klen) == 0 &&
		    line[start + klen] == '=') {
			if (tokstart)
				*tokstart = start;
			return line + start + klen + 1;
		}
	}
	return NULL;
}

const char *pmi_wire_find(const char *line, size_t len, const char *key, size_t *vlen)
{
	const char *v = find_token(line, len, key, NULL);

	if (v) {
		const char *end = memchr(v, ' ', len - (size_t)(v - line));
		*vlen = end ? (size_t)(end - v) : len - (size_t)(v - line);
	}
	return v;
}

const char *pmi_wire_find_rest(const char *line, size_t len, const char *key, size_t *vlen,
                               size_t *tokstart)
{
	const char *v = find_token(line, len, key, tokstart);

	if (v)
		*vlen = len - (size_t)(v - line);
	return v;
}

int pmi_wire_get_str(const char *line, size_t len, const char *key, char *buf, size_t buflen)
{
	size_t vlen;
	const char *v = pmi_wire_find(line, len, key, &vlen);

	if (!v) {
		errno = ENOENT;
		return -1;
	}
	if (vlen >= buflen) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	return 0;
}

int pmi_wire_parse_int(const char *s, size_t len, int *out)
{
	long long v = 0;
	size_t i = 0;
	int neg = 0;

	if (len > 0 && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == len || len - i > 10) {
		errno = EINVAL;
		return -1;
	}
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			errno = EINVAL;
			return -1;
		}
		v = v * 10 + (s[i] - '0');
	}
	if (neg)
		v = -v;
	if (v > INT_MAX || v < INT_MIN) {
		errno = EINVAL;
		return -1;
	}
	*out = (int)v;
	return 0;
}

int pmi_wire_get_int(const char *line, size_t len, const char *key, int *out)
{
	size_t vlen;
	const char *v = pmi_wire_find(line, len, key, &vlen);

	if (!v) {
		errno = ENOENT;
		return -1;
	}
	return pmi_wire_parse_int(v, vlen, out);
}

int pmi_wire_must_escape(unsigned char ch)
{
	return ch == '%' || ch == ';' || ch <= ' ' || ch == 0x7f;
}

long pmi_wire_escape(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		size_t need = pmi_wire_must_escape(*p) ? 3 : 1;
		if (o + need >= outlen) {
			errno = ENOSPC;
			return -1;
		}
		if (need == 1) {
			out[o++] = (char)*p;
			continue;
		}
		out[o++] = '%';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 15];
	}
	if (outlen == 0) {
		errno = ENOSPC;
		return -1;
	}
	out[o] = '\0';
	return (long)o;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

long pmi_wire_unescape(const char *in, size_t inlen, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < inlen; i++) {
		char c = in[i];
		if (c == '%' && i + 2 < inlen && hexval(in[i + 1]) >= 0 && hexval(in[i + 2]) >= 0) {
			c = (char)(hexval(in[i + 1]) * 16 + hexval(in[i + 2]));
			i += 2;
		}
		if (o + 1 >= outlen) {
			errno = ENOSPC;
			return -1;
		}
		out[o++] = c;
	}
	if (outlen == 0) {
		errno = ENOSPC;
		return -1;
	}
	out[o] = '\0';
	return (long)o;
}
