/* Unit tests and benches (tests/tools/ctbench): Marsaglia's xorshift64,
 * one stream a program with the same seed, so that every run draws the
 * same data. */
#ifndef NP_XORSHIFT_H
#define NP_XORSHIFT_H
#include <stdint.h>

static uint64_t xs_state = 88172645463325252ull;

static inline uint64_t xs_next(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}
#endif
