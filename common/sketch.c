/* Log-linear latency sketch: see sketch.h for the bucket scheme. */
#include "sketch.h"
#include "npmsg.h"

#include <stdlib.h>
#include <string.h>

uint64_t np_sketch_bucket_lo(uint32_t idx)
{
	if (idx < 2 * NP_SK_SUB)
		return idx;
	unsigned shift = idx / NP_SK_SUB - 1;
	uint64_t mant = NP_SK_SUB | (idx % NP_SK_SUB);
	return mant << shift;
}

uint64_t np_sketch_bucket_hi(uint32_t idx)
{
	if (idx < 2 * NP_SK_SUB)
		return idx;
	unsigned shift = idx / NP_SK_SUB - 1;
	return np_sketch_bucket_lo(idx) + ((1ull << shift) - 1);
}

void np_sketch_init(struct np_sketch *s)
{
	memset(s, 0, sizeof(*s));
}

void np_sketch_free(struct np_sketch *s)
{
	free(s->counts);
	memset(s, 0, sizeof(*s));
}

void np_sketch_reset(struct np_sketch *s)
{
	if (s->counts)
		memset(s->counts, 0, NP_SK_NBUCKETS * sizeof(uint64_t));
	s->n = 0;
	s->sum = 0;
	s->min = s->max = 0;
}

static bool ensure_counts(struct np_sketch *s)
{
	if (!s->counts)
		s->counts = calloc(NP_SK_NBUCKETS, sizeof(uint64_t));
	return s->counts != NULL;
}

static void note_range(struct np_sketch *s, uint64_t lo, uint64_t hi)
{
	if (s->n == 0 || lo < s->min)
		s->min = lo;
	if (s->n == 0 || hi > s->max)
		s->max = hi;
}

void np_sketch_add(struct np_sketch *s, uint64_t v, uint64_t count)
{
	if (count == 0 || !ensure_counts(s))
		return;
	note_range(s, v, v);
	s->counts[np_sketch_index(v)] += count;
	s->n += count;
	s->sum += (double)v * (double)count;
}

void np_sketch_add_bucket(struct np_sketch *s, uint32_t idx, uint64_t count)
{
	if (count == 0 || idx >= NP_SK_NBUCKETS || !ensure_counts(s))
		return;
	uint64_t lo = np_sketch_bucket_lo(idx), hi = np_sketch_bucket_hi(idx);
	note_range(s, lo, hi);
	s->counts[idx] += count;
	s->n += count;
	s->sum += ((double)lo + (double)hi) / 2.0 * (double)count;
}

void np_sketch_merge(struct np_sketch *dst, const struct np_sketch *src)
{
	if (src->n == 0 || !src->counts || !ensure_counts(dst))
		return;
	note_range(dst, src->min, src->max);
	for (uint32_t i = 0; i < NP_SK_NBUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->n += src->n;
	dst->sum += src->sum;
}

uint64_t np_sketch_quantile(const struct np_sketch *s, double q)
{
	if (s->n == 0 || !s->counts)
		return 0;
	if (q <= 0)
		return s->min;
	if (q >= 1)
		return s->max;
	/* Rank of the q-quantile, 1-based, "nearest rank" definition. */
	double r = q * (double)s->n;
	uint64_t rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t acc = 0;
	for (uint32_t i = 0; i < NP_SK_NBUCKETS; i++) {
		acc += s->counts[i];
		if (acc >= rank) {
			uint64_t lo = np_sketch_bucket_lo(i), hi = np_sketch_bucket_hi(i);
			uint64_t mid = lo + (hi - lo) / 2;
			/* The exact extremes are known: never report outside them. */
			if (mid < s->min)
				mid = s->min;
			if (mid > s->max)
				mid = s->max;
			return mid;
		}
	}
	return s->max;
}

double np_sketch_mean(const struct np_sketch *s)
{
	return s->n ? s->sum / (double)s->n : 0.0;
}

void np_sketch_pack(msgpack_packer *pk, const struct np_sketch *s)
{
	uint32_t nb = 0;
	if (s->counts)
		for (uint32_t i = 0; i < NP_SK_NBUCKETS; i++)
			nb += s->counts[i] != 0;
	msgpack_pack_map(pk, 5);
	np_pack_kv_u64(pk, "n", s->n);
	np_pack_kv_f64(pk, "sum", s->sum);
	np_pack_kv_u64(pk, "min", s->min);
	np_pack_kv_u64(pk, "max", s->max);
	np_pack_str(pk, "b");
	msgpack_pack_array(pk, 2 * nb);
	for (uint32_t i = 0; nb && i < NP_SK_NBUCKETS; i++) {
		if (s->counts[i]) {
			msgpack_pack_uint32(pk, i);
			msgpack_pack_uint64(pk, s->counts[i]);
		}
	}
}

int np_sketch_unpack(struct np_sketch *s, const msgpack_object *o)
{
	const msgpack_object_array *b = np_get_array(o, "b");
	if (!b || b->size % 2)
		return -1;
	struct np_sketch tmp;
	np_sketch_init(&tmp);
	int rc = 0;
	for (uint32_t i = 0; i + 1 < b->size; i += 2) {
		uint64_t idx, cnt;
		if (np_obj_u64(&b->ptr[i], &idx) < 0 || np_obj_u64(&b->ptr[i + 1], &cnt) < 0 ||
		    idx >= NP_SK_NBUCKETS) {
			rc = -1;
			continue;
		}
		np_sketch_add_bucket(&tmp, (uint32_t)idx, cnt);
	}
	/* Exact extremes and sum override the bucket estimates when present
	 * and consistent with the buckets. */
	uint64_t mn, mx;
	double sum;
	if (tmp.n && np_get_u64(o, "min", &mn) == 0 && np_get_u64(o, "max", &mx) == 0 &&
	    mn <= mx && mn >= tmp.min && mx <= tmp.max) {
		tmp.min = mn;
		tmp.max = mx;
	}
	if (tmp.n && np_get_f64(o, "sum", &sum) == 0 && sum >= 0)
		tmp.sum = sum;
	np_sketch_merge(s, &tmp);
	np_sketch_free(&tmp);
	return rc;
}
