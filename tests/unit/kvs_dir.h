/* tests/unit/kvs_dir.h: a KVS in a temporary directory (one file per key), so that transport
 * endpoints in forked processes can publish and read each other's business cards. */
#ifndef LAMKIT_TEST_KVS_DIR_H
#define LAMKIT_TEST_KVS_DIR_H

#include <stdio.h>

static char kvsdir[64]; /* the directory; the test makes it (mkdtemp) and removes it */

static int kput(void *arg, const char *key, const char *val)
{
	char p[256];
	FILE *f;

	(void)arg;
	snprintf(p, sizeof p, "%s/%s", kvsdir, key);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f) == 0 ? 0 : -1;
}

static int kget(void *arg, const char *key, char *val, size_t len)
{
	char p[256];
	FILE *f;
	size_t n;

	(void)arg;
	snprintf(p, sizeof p, "%s/%s", kvsdir, key);
	f = fopen(p, "r");
	if (!f)
		return -1;
	n = fread(val, 1, len - 1, f);
	val[n] = '\0';
	fclose(f);
	return 0;
}

#endif
