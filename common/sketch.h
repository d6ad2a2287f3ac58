/* A mergeable log-linear latency sketch (HdrHistogram-like): a value v >= 64
 * falls in bucket (msb(v)-5)*64 + the 6 bits after its msb; values below 64
 * are exact. Bucket width is at most 1/64 of its lower bound, so a quantile
 * read as the bucket midpoint has relative error <= 0.79 %. The same index
 * function is used in BPF (np_sketch_index is plain C, no builtins). */
#ifndef NP_SKETCH_H
#define NP_SKETCH_H

#include "npwire.h"   /* NP_SK_* and np_sketch_index, shared with BPF */

#ifndef __bpf__
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>

uint64_t np_sketch_bucket_lo(uint32_t idx);   /* smallest value in bucket */
uint64_t np_sketch_bucket_hi(uint32_t idx);   /* largest value in bucket */

struct np_sketch {
	uint64_t *counts;      /* dense, NP_SK_NBUCKETS entries, or NULL if empty */
	uint64_t  n;
	double    sum;
	uint64_t  min, max;
};

void np_sketch_init(struct np_sketch *s);
void np_sketch_free(struct np_sketch *s);
void np_sketch_reset(struct np_sketch *s);
void np_sketch_add(struct np_sketch *s, uint64_t v, uint64_t count);
void np_sketch_add_bucket(struct np_sketch *s, uint32_t idx, uint64_t count);
void np_sketch_merge(struct np_sketch *dst, const struct np_sketch *src);
/* np_sketch_index with the CPU's leading-zero count: the same bucket. */
static inline uint32_t np_sketch_index_fast(uint64_t v)
{
	if (v < NP_SK_SUB)
		return (uint32_t)v;
	unsigned shift = 63 - (unsigned)__builtin_clzll(v) - NP_SK_SUB_BITS;
	return (shift + 1) * NP_SK_SUB + (uint32_t)((v >> shift) & (NP_SK_SUB - 1));
}

/* np_sketch_add(s, v, 1) with v's bucket idx known (np_sketch_index_fast),
 * inline: the decomposition adds each latency to three sketches, tens of
 * millions of adds per run. The same counts, extremes and sum. */
static inline void np_sketch_add_one(struct np_sketch *s, uint64_t v, uint32_t idx)
{
	if (!s->counts) {            /* the first add allocates */
		np_sketch_add(s, v, 1);
		return;
	}
	if (s->n == 0 || v < s->min)
		s->min = v;
	if (s->n == 0 || v > s->max)
		s->max = v;
	s->counts[idx]++;
	s->n++;
	s->sum += (double)v;
}

/* q in [0,1]; 0 if empty. Exact for min (q=0) and max (q=1). */
uint64_t np_sketch_quantile(const struct np_sketch *s, double q);
double   np_sketch_mean(const struct np_sketch *s);
/* Packs as a map {n, sum, min, max, b:[idx,count,idx,count...]} (sorted). */
void np_sketch_pack(msgpack_packer *pk, const struct np_sketch *s);
/* Unpacks such a map into s (initialised by caller); adds to what s holds.
 * Returns 0, or -1 on malformed input (s keeps what was valid). */
int  np_sketch_unpack(struct np_sketch *s, const msgpack_object *o);
#endif

#endif
