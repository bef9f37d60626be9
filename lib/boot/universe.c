/* lib/boot/universe.c: read and write the universe state file (doc/FORMAT-universe.md). */
#include "universe.h"
#include "core.h"
#include "session.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE_MAX (4u << 20)

int boot_universe_path(char *buf, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("LAMKIT_UNIVERSE");
	char root[4096];

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	if (boot_session_root(root, sizeof root, err, errlen) < 0)
		return -1;
	if ((size_t)snprintf(buf, len, "%s/universe", root) >= len)
		return core_errprintf(err, errlen, "%s/universe: path too long", root);
	return 0;
}

/* {==== escaping: words are separated by spaces; %XX for space, %, control bytes */

static void put_word(FILE *f, const char *s)
{
	if (!*s) {
		fputs("%00", f); /* the empty word; never a real value (NUL cannot occur) */
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p <= ' ' || *p == '%' || *p == 0x7f)
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
	}
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* Decode one word in place; -1 on a bad escape. "%00" alone is the empty word. */
static int unescape(char *w)
{
	char *o = w;

	if (!strcmp(w, "%00")) {
		*w = '\0';
		return 0;
	}
	for (char *p = w; *p; p++) {
		if (*p != '%') {
			*o++ = *p;
			continue;
		}
		int h = hexval((unsigned char)p[1]), l = h < 0 ? -1 : hexval((unsigned char)p[2]);
		if (l < 0 || (h == 0 && l == 0))
			return -1;
		*o++ = (char)(h * 16 + l);
		p += 2;
	}
	*o = '\0';
	return 0;
}

/* ====} */

void boot_universe_free(struct boot_universe *u)
{
	for (int i = 0; i < u->nnodes; i++) {
		struct boot_unode *n = &u->nodes[i];
		free(n->host);
		free(n->addr);
		if (n->kv) {
			int k = 0;
			while (n->kv[k])
				k++;
			core_strv_free(n->kv, k);
		}
	}
	free(u->nodes);
	free(u->origin);
	free(u->module);
	free(u->schema);
	free(u->transport);
	boot_key_wipe(u->key, sizeof u->key);
	memset(u, 0, sizeof *u);
}

struct boot_unode *boot_universe_add(struct boot_universe *u, const struct boot_unode *n)
{
	struct boot_unode *nv = realloc(u->nodes, (size_t)(u->nnodes + 1) * sizeof *nv);

	if (!nv)
		return NULL;
	u->nodes = nv;
	struct boot_unode *d = &nv[u->nnodes];
	*d = *n;
	d->host = strdup(n->host ? n->host : "");
	d->addr = strdup(n->addr ? n->addr : "");
	d->kv = NULL;
	int k = 0;
	while (n->kv && n->kv[k])
		k++;
	d->kv = calloc((size_t)k + 1, sizeof *d->kv);
	for (int i = 0; d->kv && i < k; i++)
		if (!(d->kv[i] = strdup(n->kv[i])))
			break;
	if (!d->host || !d->addr || !d->kv) {
		free(d->host);
		free(d->addr);
		if (d->kv)
			core_strv_free(d->kv, k);
		errno = ENOMEM;
		return NULL;
	}
	u->nnodes++;
	return d;
}

struct boot_unode *boot_universe_node(const struct boot_universe *u, int index)
{
	for (int i = 0; i < u->nnodes; i++)
		if (u->nodes[i].index == index)
			return &u->nodes[i];
	return NULL;
}

int boot_universe_save(const struct boot_universe *u, const char *path, char *err, size_t errlen)
{
	char *buf = NULL, hex[BOOT_KEY_HEX_LEN + 1];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return core_errprintf(err, errlen, "out of memory");
	boot_key_to_hex(u->key, hex);
	fprintf(f, "lamkit-universe 1\nid %s\nkey %s\norigin ", u->id, hex);
	boot_key_wipe(hex, sizeof hex);
	put_word(f, u->origin ? u->origin : "");
	fputs("\nmodule ", f);
	put_word(f, u->module ? u->module : "");
	fputs("\nschema ", f);
	put_word(f, u->schema ? u->schema : "");
	if (u->transport && *u->transport) {
		fputs("\ntransport ", f);
		put_word(f, u->transport);
	}
	if (u->watch_off)
		fputs("\nwatch off", f);
	else if (u->watch_interval_ms || u->watch_timeout_ms)
		fprintf(f, "\nwatch %d %d", u->watch_interval_ms, u->watch_timeout_ms);
	fprintf(f, "\nbooted %lld\n", (long long)u->booted);
	for (int i = 0; i < u->nnodes; i++) {
		const struct boot_unode *n = &u->nodes[i];
		fprintf(f, "node %d ", n->index);
		put_word(f, n->host);
		fputc(' ', f);
		put_word(f, n->addr);
		fprintf(f, " %d %d %d %d %d", n->port, n->cpus, n->schedule ? 1 : 0, n->pid,
		        n->parent);
		for (int k = 0; n->kv && n->kv[k]; k++) {
			fputc(' ', f);
			put_word(f, n->kv[k]);
		}
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return core_errprintf(err, errlen, "out of memory");
	}
	int rc = core_write_file_atomic(path, buf, len, 0600);
	int e = errno;
	boot_key_wipe(buf, len);
	free(buf);
	if (rc < 0)
		return core_errprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
	return 0;
}

static int split(char *line, char **w, int max)
{
	int n = 0;

	for (char *t = strtok(line, " "); t && n < max; t = strtok(NULL, " "))
		w[n++] = t;
	return n;
}

static int num(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);

	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_line(struct boot_universe *u, char *line, int *seen_key)
{
	char *w[256];
	int n = split(line, w, 256);

	if (n == 0)
		return 0;
	for (int i = 1; i < n; i++)
		if (unescape(w[i]) < 0)
			return -1;
	if (!strcmp(w[0], "id") && n == 2 && strlen(w[1]) < sizeof u->id) {
		snprintf(u->id, sizeof u->id, "%s", w[1]);
	} else if (!strcmp(w[0], "key") && n == 2) {
		if (boot_key_from_hex(u->key, w[1], strlen(w[1])) < 0)
			return -1;
		boot_key_wipe(w[1], strlen(w[1]));
		*seen_key = 1;
	} else if (!strcmp(w[0], "origin") && n == 2) {
		free(u->origin);
		u->origin = strdup(w[1]);
	} else if (!strcmp(w[0], "module") && n == 2) {
		free(u->module);
		u->module = strdup(w[1]);
	} else if (!strcmp(w[0], "schema") && n == 2) {
		free(u->schema);
		u->schema = strdup(w[1]);
	} else if (!strcmp(w[0], "transport") && n == 2) {
		free(u->transport);
		u->transport = strdup(w[1]);
	} else if (!strcmp(w[0], "watch") && n == 2 && !strcmp(w[1], "off")) {
		u->watch_off = 1;
	} else if (!strcmp(w[0], "watch") && n == 3) {
		if (num(w[1], 0, 3600000, &u->watch_interval_ms) < 0 ||
		    num(w[2], 0, 3600000, &u->watch_timeout_ms) < 0)
			return -1;
	} else if (!strcmp(w[0], "booted") && n == 2) {
		u->booted = strtoll(w[1], NULL, 10);
	} else if (!strcmp(w[0], "node") && n >= 9) {
		struct boot_unode nd = {.host = w[2], .addr = w[3]};
		if (num(w[1], 1, 1 << 24, &nd.index) < 0 || num(w[4], 1, 65535, &nd.port) < 0 ||
		    num(w[5], 1, 1 << 20, &nd.cpus) < 0 || num(w[6], 0, 1, &nd.schedule) < 0 ||
		    num(w[7], 0, 1 << 30, &nd.pid) < 0 || num(w[8], 0, 1 << 24, &nd.parent) < 0)
			return -1;
		w[n] = NULL;
		nd.kv = &w[9];
		if (boot_universe_node(u, nd.index) || !boot_universe_add(u, &nd))
			return -1;
	} else {
		return -1;
	}
	return 0;
}

int boot_universe_load(struct boot_universe *u, const char *path, char *err, size_t errlen)
{
	size_t len;
	struct stat st;

	memset(u, 0, sizeof *u);
	char *text = core_read_file(path, STATE_MAX, &len);
	if (!text) {
		int e = errno;
		core_errprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (stat(path, &st) == 0 && (st.st_uid != getuid() || (st.st_mode & 077))) {
		boot_key_wipe(text, len);
		free(text);
		errno = EPERM;
		return core_errprintf(err, errlen,
		                      "%s: not owned by you or readable by others; refusing to use "
		                      "the universe key in it",
		                      path);
	}
	int lineno = 0, seen_key = 0, rc = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, "lamkit-universe 1") != 0) {
				rc = core_errprintf(
				    err, errlen,
				    "%s:1: not a lamkit universe state file (version 1)", path);
				break;
			}
			continue;
		}
		if (parse_line(u, line, &seen_key) < 0) {
			rc = core_errprintf(err, errlen, "%s:%d: malformed line", path, lineno);
			break;
		}
	}
	if (rc == 0 && (!seen_key || !u->id[0]))
		rc = core_errprintf(err, errlen, "%s: no universe id or key in it", path);
	boot_key_wipe(text, len);
	free(text);
	if (rc < 0) {
		boot_universe_free(u);
		errno = EINVAL;
	}
	return rc;
}

int boot_universe_remove(struct boot_universe *u, int index)
{
	for (int i = 0; i < u->nnodes; i++) {
		struct boot_unode *n = &u->nodes[i];
		if (n->index != index)
			continue;
		free(n->host);
		free(n->addr);
		if (n->kv) {
			int k = 0;
			while (n->kv[k])
				k++;
			core_strv_free(n->kv, k);
		}
		memmove(n, n + 1, (size_t)(u->nnodes - i - 1) * sizeof *n);
		u->nnodes--;
		return 0;
	}
	return -1;
}
