/* tests/unit/tp_pair.h: two transport endpoints in one test process: a small KVS table for their
 * business cards, a clock, and a loop that polls both until a condition holds or time runs out. */
#ifndef LAMKIT_TEST_TP_PAIR_H
#define LAMKIT_TEST_TP_PAIR_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tp.h"

#define PAIR_KVS_MAX 8
static char kvs_key[PAIR_KVS_MAX][32], kvs_val[PAIR_KVS_MAX][1024];
static int kvs_n;

static int kput(void *arg, const char *key, const char *val)
{
	(void)arg;
	if (kvs_n == PAIR_KVS_MAX)
		return -1;
	snprintf(kvs_key[kvs_n], sizeof(kvs_key[0]), "%s", key);
	snprintf(kvs_val[kvs_n++], sizeof(kvs_val[0]), "%s", val);
	return 0;
}

static int kget(void *arg, const char *key, char *val, size_t len)
{
	(void)arg;
	for (int i = 0; i < kvs_n; i++)
		if (strcmp(kvs_key[i], key) == 0) {
			snprintf(val, len, "%s", kvs_val[i]);
			return 0;
		}
	return -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define POLL_UNTIL(a, b, secs, cond)                                                               \
	do {                                                                                       \
		double end_ = now() + (secs);                                                      \
		while (!(cond) && now() < end_) {                                                  \
			tp_poll(a);                                                                \
			tp_poll(b);                                                                \
		}                                                                                  \
	} while (0)

#endif
