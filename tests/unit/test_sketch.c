/* Sketch tests: quantile accuracy against exact (sorted) quantiles, merge is
 * the union, pack/unpack round trip, bucket bounds. */
#include "tap.h"
#include "sketch.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}
static double urand(void) { return (double)(rng() >> 11) / 9007199254740992.0; }

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of sorted v. */
static uint64_t exact_q(const uint64_t *v, size_t n, double q)
{
	if (q <= 0)
		return v[0];
	size_t rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static const double qs[] = { 0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1 };
#define NQ (sizeof(qs) / sizeof(qs[0]))

/* Checks every quantile of s against v within 1 %; returns the worst error. */
static double check_accuracy(const struct np_sketch *s, uint64_t *v, size_t n, const char *what)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	double worst = 0;
	for (size_t i = 0; i < NQ; i++) {
		double want = (double)exact_q(v, n, qs[i]);
		double got = (double)np_sketch_quantile(s, qs[i]);
		double err = want > 0 ? fabs(got - want) / want : fabs(got);
		if (err > worst)
			worst = err;
		CHECK(err <= 0.01, "%s q=%g: sketch %.0f exact %.0f (%.3f %%)", what, qs[i], got, want, err * 100);
	}
	return worst;
}

static void test_accuracy(void)
{
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v));
	struct np_sketch s;

	/* Log-normal-ish latencies from 1 us to ~1 s. */
	np_sketch_init(&s);
	for (size_t i = 0; i < n; i++) {
		v[i] = (uint64_t)(1000.0 * exp(urand() * 13.8));
		np_sketch_add(&s, v[i], 1);
	}
	CHECK_EQ_U(s.n, n);
	double w1 = check_accuracy(&s, v, n, "lognormal");
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	CHECK_NEAR(np_sketch_mean(&s), sum / (double)n, sum / (double)n * 1e-9);
	np_sketch_free(&s);

	/* Uniform over the full 64-bit range, the widest buckets. */
	np_sketch_init(&s);
	for (size_t i = 0; i < n; i++) {
		v[i] = rng();
		np_sketch_add(&s, v[i], 1);
	}
	double w2 = check_accuracy(&s, v, n, "uniform64");
	np_sketch_free(&s);

	/* Small values (< 64) are exact. */
	np_sketch_init(&s);
	for (size_t i = 0; i < 1000; i++) {
		v[i] = rng() % 64;
		np_sketch_add(&s, v[i], 1);
	}
	qsort(v, 1000, sizeof(*v), cmp_u64);
	int exact = 0;
	for (size_t i = 0; i < NQ; i++)
		exact += np_sketch_quantile(&s, qs[i]) == exact_q(v, 1000, qs[i]);
	CHECK_EQ_U(exact, NQ);
	np_sketch_free(&s);
	printf("# worst relative error: lognormal %.4f %%, uniform64 %.4f %%\n", w1 * 100, w2 * 100);
	free(v);

	np_sketch_init(&s);
	CHECK_EQ_U(np_sketch_quantile(&s, 0.5), 0);
	np_sketch_add(&s, 123456789, 10);
	CHECK_EQ_U(np_sketch_quantile(&s, 0.5), 123456789);   /* clamped to exact min/max */
	CHECK_EQ_U(s.n, 10);
	np_sketch_free(&s);
}

/* Bucket i covers [lo(i), hi(i)], buckets tile the u64 range, index agrees. */
static void test_buckets(void)
{
	size_t gaps = 0, wide = 0;
	for (uint32_t i = 0; i + 1 < NP_SK_NBUCKETS; i++) {
		gaps += np_sketch_bucket_hi(i) + 1 != np_sketch_bucket_lo(i + 1);
		uint64_t lo = np_sketch_bucket_lo(i), hi = np_sketch_bucket_hi(i);
		wide += lo >= 64 && (double)(hi - lo) / 2 > (double)lo / 128 + 1;
	}
	CHECK_EQ_U(gaps, 0);
	CHECK_EQ_U(wide, 0);
	CHECK_EQ_U(np_sketch_bucket_hi(NP_SK_NBUCKETS - 1), UINT64_MAX);
	CHECK(np_sketch_index(UINT64_MAX) == NP_SK_NBUCKETS - 1, "max index");
	size_t bad = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rng() >> (rng() % 64);
		uint32_t idx = np_sketch_index(v);
		bad += idx >= NP_SK_NBUCKETS || v < np_sketch_bucket_lo(idx) || v > np_sketch_bucket_hi(idx);
	}
	CHECK_EQ_U(bad, 0);
}

static bool same_sketch(const struct np_sketch *a, const struct np_sketch *b)
{
	if (a->n != b->n || a->min != b->min || a->max != b->max)
		return false;
	if (fabs(a->sum - b->sum) > 1e-9 * (fabs(a->sum) + 1))
		return false;
	for (uint32_t i = 0; i < NP_SK_NBUCKETS; i++)
		if ((a->counts ? a->counts[i] : 0) != (b->counts ? b->counts[i] : 0))
			return false;
	return true;
}

static void test_merge(void)
{
	struct np_sketch a, b, all, empty;
	np_sketch_init(&a);
	np_sketch_init(&b);
	np_sketch_init(&all);
	np_sketch_init(&empty);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = (uint64_t)(500.0 * exp(urand() * 10));
		np_sketch_add(i % 3 ? &a : &b, v, 1);
		np_sketch_add(&all, v, 1);
	}
	np_sketch_merge(&a, &b);
	CHECK(same_sketch(&a, &all), "merge equals the sketch of the union");
	np_sketch_merge(&a, &empty);
	CHECK(same_sketch(&a, &all), "merging an empty sketch changes nothing");
	np_sketch_merge(&empty, &all);
	CHECK(same_sketch(&empty, &all), "merge into empty copies");
	np_sketch_free(&a);
	np_sketch_free(&b);
	np_sketch_free(&all);
	np_sketch_free(&empty);
}

/* The inline add the decomposition uses equals np_sketch_add bit for bit:
 * index, counts, extremes and the double sum (checked with ==, not near). */
static void test_add_one(void)
{
	size_t badidx = 0;
	for (int i = 0; i < 200000; i++) {
		uint64_t v = rng() >> (rng() % 64);
		badidx += np_sketch_index_fast(v) != np_sketch_index(v);
	}
	for (uint64_t v = 0; v < 4096; v++)
		badidx += np_sketch_index_fast(v) != np_sketch_index(v);
	badidx += np_sketch_index_fast(UINT64_MAX) != np_sketch_index(UINT64_MAX);
	CHECK_EQ_U(badidx, 0);
	struct np_sketch a, b;
	np_sketch_init(&a);
	np_sketch_init(&b);
	for (int i = 0; i < 100000; i++) {
		/* large values too: sums past 2^53 round, in the same order */
		uint64_t v = i % 1000 == 7 ? rng() : (uint64_t)(300.0 * exp(urand() * 12));
		np_sketch_add(&a, v, 1);
		np_sketch_add_one(&b, v, np_sketch_index_fast(v));
	}
	size_t diff = a.n != b.n || a.min != b.min || a.max != b.max || a.sum != b.sum;
	for (uint32_t i = 0; i < NP_SK_NBUCKETS; i++)
		diff += a.counts[i] != b.counts[i];
	CHECK_EQ_U(diff, 0);
	CHECK(a.sum > 0x1p53, "sum went past 2^53 (rounding exercised)");
	np_sketch_free(&a);
	np_sketch_free(&b);
}

static int unpack_bytes(struct np_sketch *s, const char *data, size_t len)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	int rc = -2;
	if (msgpack_unpack_next(&u, data, len, &off) == MSGPACK_UNPACK_SUCCESS)
		rc = np_sketch_unpack(s, &u.data);
	msgpack_unpacked_destroy(&u);
	return rc;
}

static void test_pack(void)
{
	struct np_sketch s, r;
	np_sketch_init(&s);
	np_sketch_init(&r);
	for (int i = 0; i < 10000; i++)
		np_sketch_add(&s, rng() % 100000000, 1 + i % 3);
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	np_sketch_pack(&pk, &s);
	CHECK(unpack_bytes(&r, sb.data, sb.size) == 0, "unpack");
	CHECK(same_sketch(&s, &r), "pack/unpack round trip");
	printf("# 10000 values in %zu packed bytes\n", sb.size);

	/* Unpacking adds to what the sketch holds (merge). */
	CHECK(unpack_bytes(&r, sb.data, sb.size) == 0, "unpack again");
	CHECK_EQ_U(r.n, 2 * s.n);
	np_sketch_free(&r);
	np_sketch_init(&r);

	/* An empty sketch round-trips as empty. */
	struct np_sketch e;
	np_sketch_init(&e);
	msgpack_sbuffer_clear(&sb);
	np_sketch_pack(&pk, &e);
	CHECK(unpack_bytes(&r, sb.data, sb.size) == 0 && r.n == 0, "empty");

	/* Malformed: odd bucket list, bucket index out of range. */
	msgpack_sbuffer_clear(&sb);
	msgpack_pack_map(&pk, 1);
	msgpack_pack_str(&pk, 1);
	msgpack_pack_str_body(&pk, "b", 1);
	msgpack_pack_array(&pk, 3);
	msgpack_pack_uint32(&pk, 1);
	msgpack_pack_uint32(&pk, 1);
	msgpack_pack_uint32(&pk, 1);
	CHECK(unpack_bytes(&r, sb.data, sb.size) == -1, "odd list refused");
	msgpack_sbuffer_clear(&sb);
	msgpack_pack_map(&pk, 1);
	msgpack_pack_str(&pk, 1);
	msgpack_pack_str_body(&pk, "b", 1);
	msgpack_pack_array(&pk, 4);
	msgpack_pack_uint32(&pk, NP_SK_NBUCKETS);
	msgpack_pack_uint32(&pk, 5);
	msgpack_pack_uint32(&pk, 100);
	msgpack_pack_uint32(&pk, 2);
	CHECK(unpack_bytes(&r, sb.data, sb.size) == -1, "bad index refused");
	CHECK_EQ_U(r.n, 2);   /* the valid pair is kept */
	msgpack_sbuffer_destroy(&sb);
	np_sketch_free(&s);
	np_sketch_free(&r);
}

int main(void)
{
	test_buckets();
	test_accuracy();
	test_merge();
	test_add_one();
	test_pack();
	return tap_done();
}
