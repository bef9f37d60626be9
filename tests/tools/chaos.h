/* tests/tools/chaos.h: the chaos relay's fault decisions: seeded, no I/O, one stream per pair. */
#ifndef LAMKIT_CHAOS_H
#define LAMKIT_CHAOS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every datagram gets one verdict. A verdict draws the same number of random values from the
 * pair's stream whatever it decides, so two runs with the same seed and the same sequence of
 * datagram lengths give the same verdicts, datagram by datagram, whatever the timing (only the
 * blackhole windows depend on time). Order of the checks: blackhole, drop, then corrupt, dup and
 * reorder independently of each other.
 */

#define CHAOS_MAX_WINDOWS 8

struct chaos_knobs {
	double drop, corrupt, dup, reorder; /* probabilities in [0, 1] */
	unsigned delay_ms;                  /* added to every datagram */
	int nwindows;                       /* blackhole windows [from_ms, to_ms) after start */
	uint64_t from_ms[CHAOS_MAX_WINDOWS], to_ms[CHAOS_MAX_WINDOWS];
};

struct chaos_rng {
	uint64_t s;
};

struct chaos_verdict {
	int blackhole; /* inside a blackhole window: nothing else applies */
	int drop;
	long corrupt_bit; /* bit to flip (0 = lowest bit of byte 0), -1 for none */
	int dup;          /* send a second copy right after the first */
	int reorder;      /* hold back until a later datagram has gone out */
};

/* chaos_seed: the stream of pair PAIR for run seed SEED (streams of different pairs differ). */
void chaos_seed(struct chaos_rng *r, uint64_t seed, unsigned pair);

/* chaos_next: the next 64 random bits of the stream. */
uint64_t chaos_next(struct chaos_rng *r);

/* chaos_uniform: a double in [0, 1) from the stream. */
double chaos_uniform(struct chaos_rng *r);

/* chaos_in_window: 1 if T_MS (since start) is inside one of K's blackhole windows. */
int chaos_in_window(const struct chaos_knobs *k, uint64_t t_ms);

/* chaos_decide: the verdict for a datagram of LEN bytes arriving T_MS after start. */
struct chaos_verdict chaos_decide(const struct chaos_knobs *k, struct chaos_rng *r, size_t len,
                                  uint64_t t_ms);

/* chaos_parse_prob: parse a probability "0.05" into *P; -1 if not a number in [0, 1]. */
int chaos_parse_prob(const char *s, double *p);

/* chaos_parse_window: parse "T1:T2" (seconds, decimals allowed, T1 < T2) into K's next window;
 * -1 if malformed or K has CHAOS_MAX_WINDOWS already. */
int chaos_parse_window(struct chaos_knobs *k, const char *s);

#endif
