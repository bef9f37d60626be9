/* tests/unit/t_pmi_kvs.c: KVS table, batch encode/merge format and value escaping. */
#include "tap.h"
#include "../../lib/pmi/pmi_server.h"
#include "../../lib/pmi/pmi_kvs.h"
#include "../../lib/pmi/pmi_wire.h"

#include <errno.h>

static void test_encode(void)
{
	char *b = NULL;
	size_t len = 0, cap = 0;

	ok(pmi_kvs_encode(&b, &len, &cap, "k", "v") == 0, "encode");
	ok(pmi_kvs_encode(&b, &len, &cap, "sp ace", " a\nb= c ") == 0, "binary-safe value");
	ok(pmi_kvs_encode(&b, &len, &cap, "e", "") == 0, "empty value");
	ok(len == 35 && memcmp(b, "1 1 k v\n6 8 sp ace  a\nb= c \n1 0 e \n", len) == 0, "format");
	ok(pmi_kvs_encode(&b, &len, &cap, "", "x") == -1 && errno == EINVAL, "empty key refused");
	is_int(len, 35, "failed encode leaves the buffer alone");

	pmi_kvs_t *k = pmi_kvs_create();
	ok(pmi_kvs_load(k, b, len) == 0, "load");
	is_int(pmi_kvs_count(k), 3, "three entries");
	is_str(pmi_kvs_get(k, "sp ace", 6, NULL), " a\nb= c ", "value with newline");
	is_str(pmi_kvs_get(k, "e", 1, NULL), "", "empty value back");
	pmi_kvs_destroy(k);
	free(b);
}

static void test_merge(void)
{
	char *b = NULL, *in = NULL;
	size_t len = 0, cap = 0, inlen = 0, incap = 0;

	pmi_kvs_encode(&b, &len, &cap, "a", "1");
	pmi_kvs_encode(&b, &len, &cap, "b", "2");
	pmi_kvs_encode(&in, &inlen, &incap, "b", "20");
	pmi_kvs_encode(&in, &inlen, &incap, "c", "3");
	pmi_kvs_encode(&in, &inlen, &incap, "c", "30");
	ok(pmi_kvs_merge(&b, &len, &cap, in, inlen) == 0, "merge");
	ok(len == 26 && memcmp(b, "1 1 a 1\n1 2 b 20\n1 2 c 30\n", len) == 0,
	   "later wins, order kept");
	ok(pmi_kvs_merge(&b, &len, &cap, NULL, 0) == 0 && len == 26, "merge of nothing");

	static const char *bad[] = {
	    "1 1 a 1",    /* no newline */
	    "1 1 a 1\n1", /* truncated record */
	    "0 1  1\n",   /* empty key */
	    "x 1 a 1\n",  /* not a number */
	    "1  1 a 1\n", /* double space */
	    "2 1 a 1\n",  /* wrong key length */
	    "1 1 a 12\n", /* wrong value length */
	    "99999999999 1 a\n" /* absurd length */,
	    "-1 1 a 1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		ok(pmi_kvs_merge(&b, &len, &cap, bad[i], strlen(bad[i])) == -1 && errno == EINVAL,
		   "malformed batch %zu refused", i);
	}
	ok(pmi_kvs_merge(&b, &len, &cap, "1 1 a\0001\n", 8) == -1, "NUL in a record refused");
	ok(len == 26 && memcmp(b, "1 1 a 1\n", 8) == 0, "failed merges leave *buf intact");

	char *e = NULL;
	size_t elen = 0, ecap = 0;
	ok(pmi_kvs_merge(&e, &elen, &ecap, b, len) == 0 && elen == len, "merge into empty");
	free(e);
	free(b);
	free(in);
}

static void test_table(void)
{
	pmi_kvs_t *k = pmi_kvs_create();
	char key[32], val[32];
	const char *kp, *vp;
	int bad = 0;

	for (int i = 0; i < 20000; i++) {
		int n = snprintf(key, sizeof(key), "key-%d", i);
		int m = snprintf(val, sizeof(val), "val %d", i * 3);
		if (pmi_kvs_set(k, key, (size_t)n, val, (size_t)m) < 0)
			bad++;
	}
	is_int(bad, 0, "20000 sets");
	for (int i = 0; i < 20000; i += 7) {
		int n = snprintf(key, sizeof(key), "key-%d", i);
		snprintf(val, sizeof(val), "val %d", i * 3);
		const char *v = pmi_kvs_get(k, key, (size_t)n, NULL);
		if (!v || strcmp(v, val) != 0)
			bad++;
	}
	is_int(bad, 0, "gets after rehashing");
	ok(pmi_kvs_set(k, "key-5", 5, "new", 3) == 0 && pmi_kvs_count(k) == 20000, "replace");
	ok(pmi_kvs_at(k, 5, &kp, &vp) == 0 && strcmp(kp, "key-5") == 0 && strcmp(vp, "new") == 0,
	   "replace keeps the position");
	ok(pmi_kvs_del(k, "key-0", 5) == 0 && pmi_kvs_count(k) == 19999, "del");
	ok(pmi_kvs_get(k, "key-0", 5, NULL) == NULL, "deleted key gone");
	ok(pmi_kvs_at(k, 0, &kp, &vp) == 0 && strcmp(kp, "key-1") == 0, "order after del");
	ok(pmi_kvs_get(k, "key-19999", 9, NULL) != NULL, "others still found after del");
	ok(pmi_kvs_del(k, "key-0", 5) == -1 && errno == ENOENT, "del of a missing key");
	ok(pmi_kvs_at(k, 19999, &kp, &vp) == -1 && errno == ERANGE, "at past the end");
	ok(pmi_kvs_set(k, "a\0b", 3, "x", 1) == -1 && errno == EINVAL, "NUL in key refused");
	pmi_kvs_clear(k);
	ok(pmi_kvs_count(k) == 0 && pmi_kvs_bytes(k) == 0, "clear");
	ok(pmi_kvs_get(k, "key-5", 5, NULL) == NULL, "cleared table is empty");
	pmi_kvs_destroy(k);
	pmi_kvs_destroy(NULL);
}

static void test_escape(void)
{
	char out[64], back[64];

	is_int(pmi_wire_escape("4142abc", out, sizeof(out)), 7, "plain value untouched");
	is_str(out, "4142abc", "byte-identical");
	is_int(pmi_wire_escape(" a%b c ", out, sizeof(out)), 15, "escaped length");
	is_str(out, "%20a%25b%20c%20", "space and percent escaped");
	pmi_wire_unescape(out, strlen(out), back, sizeof(back));
	is_str(back, " a%b c ", "round trip");
	pmi_wire_unescape("100%", 4, back, sizeof(back));
	is_str(back, "100%", "stray percent kept");
	ok(pmi_wire_escape("    ", out, 12) == -1 && errno == ENOSPC, "escape overflow");
	ok(pmi_wire_unescape("abcdef", 6, back, 6) == -1 && errno == ENOSPC, "unescape overflow");

	const char *line = "cmd=get_result rc=0 msg=success value=a b";
	size_t n;
	const char *v = pmi_wire_find(line, strlen(line), "value", &n);
	ok(v && n == 1 && *v == 'a', "find stops at a space");
	v = pmi_wire_find_rest(line, strlen(line), "value", &n, NULL);
	ok(v && n == 3, "find_rest runs to the end");
	ok(pmi_wire_find(line, strlen(line), "msg=success", &n) == NULL, "no partial key match");
	ok(pmi_wire_find(line, strlen(line), "rc", &n) && n == 1, "rc");
	int x;
	ok(pmi_wire_parse_int("-12", 3, &x) == 0 && x == -12, "parse_int");
	ok(pmi_wire_parse_int("99999999999", 11, &x) == -1, "parse_int overflow");
	ok(pmi_wire_parse_int("", 0, &x) == -1 && pmi_wire_parse_int("-", 1, &x) == -1, "empty");
}

int main(void)
{
	test_encode();
	test_merge();
	test_table();
	test_escape();
	return done_testing();
}
