/* tests/unit/tap.h: a tiny TAP producer for C unit tests. */
#ifndef LAMKIT_TAP_H
#define LAMKIT_TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

/* ok(cond, fmt, ...): one TAP line; a failure also prints where it was. */
#define ok(cond, ...)                                                                              \
	do {                                                                                       \
		int tap_c_ = !!(cond);                                                             \
		printf("%sok %d - ", tap_c_ ? "" : "not ", ++tap_n);                               \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		if (!tap_c_) {                                                                     \
			tap_failed++;                                                              \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);            \
		}                                                                                  \
	} while (0)

#define is_int(a, b, ...)                                                                          \
	do {                                                                                       \
		long long tap_a_ = (a), tap_b_ = (b);                                              \
		ok(tap_a_ == tap_b_, __VA_ARGS__);                                                 \
		if (tap_a_ != tap_b_)                                                              \
			printf("#   got %lld, expected %lld\n", tap_a_, tap_b_);                   \
	} while (0)

#define is_str(a, b, ...)                                                                          \
	do {                                                                                       \
		const char *tap_a_ = (a), *tap_b_ = (b);                                           \
		int tap_eq_ = tap_a_ && tap_b_ && strcmp(tap_a_, tap_b_) == 0;                     \
		ok(tap_eq_, __VA_ARGS__);                                                          \
		if (!tap_eq_)                                                                      \
			printf("#   got '%s', expected '%s'\n", tap_a_ ? tap_a_ : "(null)",        \
			       tap_b_ ? tap_b_ : "(null)");                                        \
	} while (0)

/* done_testing(): prints the plan and returns the exit status for main. */
static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
