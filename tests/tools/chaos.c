/* tests/tools/chaos.c: the chaos relay's fault decisions: seeded, no I/O, one stream per pair. */
#include <errno.h>
#include <stdlib.h>

#include "chaos.h"

/* splitmix64: a counter through a 64-bit mixing function; every seed gives a full-period stream. */
uint64_t chaos_next(struct chaos_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void chaos_seed(struct chaos_rng *r, uint64_t seed, unsigned pair)
{
	r->s = seed;
	r->s = chaos_next(r) ^ ((uint64_t)pair + 1) * 0xd1b54a32d192ed03ULL;
	(void)chaos_next(r);
}

double chaos_uniform(struct chaos_rng *r)
{
	return (double)(chaos_next(r) >> 11) * (1.0 / 9007199254740992.0); /* 53 bits / 2^53 */
}

int chaos_in_window(const struct chaos_knobs *k, uint64_t t_ms)
{
	for (int i = 0; i < k->nwindows; i++)
		if (t_ms >= k->from_ms[i] && t_ms < k->to_ms[i])
			return 1;
	return 0;
}

struct chaos_verdict chaos_decide(const struct chaos_knobs *k, struct chaos_rng *r, size_t len,
                                  uint64_t t_ms)
{
	struct chaos_verdict v = {.corrupt_bit = -1};
	/* always five draws, so the stream stays aligned whatever is decided */
	double u_drop = chaos_uniform(r), u_corrupt = chaos_uniform(r), u_dup = chaos_uniform(r);
	double u_reorder = chaos_uniform(r);
	uint64_t u_bit = chaos_next(r);

	if (chaos_in_window(k, t_ms)) {
		v.blackhole = 1;
		return v;
	}
	if (u_drop < k->drop) {
		v.drop = 1;
		return v;
	}
	if (len > 0 && u_corrupt < k->corrupt)
		v.corrupt_bit = (long)(u_bit % ((uint64_t)len * 8));
	v.dup = u_dup < k->dup;
	v.reorder = u_reorder < k->reorder;
	return v;
}

int chaos_parse_prob(const char *s, double *p)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.0 && v <= 1.0))
		return -1;
	*p = v;
	return 0;
}

/* parse_seconds: "1.5" -> 1500 ms; -1 if not a non-negative number below a day. */
static long long parse_seconds(const char *s, char **end)
{
	errno = 0;
	double v = strtod(s, end);
	if (errno || *end == s || !(v >= 0.0 && v < 86400.0))
		return -1;
	return (long long)(v * 1000.0 + 0.5);
}

int chaos_parse_window(struct chaos_knobs *k, const char *s)
{
	char *end;
	long long a, b;
	if (k->nwindows == CHAOS_MAX_WINDOWS)
		return -1;
	if ((a = parse_seconds(s, &end)) < 0 || *end != ':')
		return -1;
	if ((b = parse_seconds(end + 1, &end)) < 0 || *end || b <= a)
		return -1;
	k->from_ms[k->nwindows] = (uint64_t)a;
	k->to_ms[k->nwindows++] = (uint64_t)b;
	return 0;
}
