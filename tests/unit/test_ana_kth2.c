/* ana_kth2 (analyze/ana_kth2.c): both ranks must be the k-th smallest
 * values a full sort gives, for the shapes that take its branches: few
 * values (two ana_kth calls), one value (range 0), both ranks in one
 * histogram bucket with room for two copies (a long tail) and without
 * (few distinct values), in two buckets that together hold every value
 * (the two extremes), across the signed range; the input left unchanged
 * and nothing written past w. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ana_kth2.h"
#include "kthfix.h"
#include "tap.h"
#include "xorshift.h"

/* One array of shape and size n, ranks (k1, k2) of several kinds. */
static int check_one(int shape, size_t n)
{
	int64_t *v = malloc(n * sizeof(*v)), *sorted = malloc(n * sizeof(*v));
	int64_t *w = malloc((n + 1) * sizeof(*v)), *orig = malloc(n * sizeof(*v));
	int bad = 0;
	if (!v || !sorted || !w || !orig) {
		free(v); free(sorted); free(w); free(orig);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = kth_value(shape, xs_next());
	memcpy(sorted, v, n * sizeof(*v));
	memcpy(orig, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*v), cmp_i64);
	size_t p50 = (n + 1) / 2 - 1, p99 = (size_t)((99 * n + 99) / 100) - 1;
	size_t ks[][2] = { { p99, p50 }, { p50, p99 }, { 0, n - 1 }, { n - 1, 0 }, { p50, p50 },
			   { xs_next() % n, xs_next() % n }, { p99, p99 > 0 ? p99 - 1 : 0 } };
	for (size_t q = 0; q < sizeof(ks) / sizeof(ks[0]); q++) {
		int64_t x1 = 7, x2 = 7;
		w[n] = 0x5a5a;
		ana_kth2(v, n, ks[q][0], ks[q][1], w, &x1, &x2);
		bad += x1 != sorted[ks[q][0]];
		bad += x2 != sorted[ks[q][1]];
		bad += w[n] != 0x5a5a;
	}
	bad += memcmp(v, orig, n * sizeof(*v)) != 0;
	free(v); free(sorted); free(w); free(orig);
	return bad;
}

int main(void)
{
	xs_state = 0x9e3779b97f4a7c15ull;   /* the stream this test was written with */
	static const size_t sizes[] = { 1, 2, 63, 64, 65, 66, 1000, 4097, 100000 };
	for (int shape = 0; shape < KTH_SHAPES; shape++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			CHECK(check_one(shape, sizes[i]) == 0, "shape %d, %zu values", shape, sizes[i]);
	int bad = 0;
	for (int it = 0; it < 300; it++)
		bad += check_one((int)(xs_next() % KTH_SHAPES), 1 + xs_next() % 20000);
	CHECK(bad == 0, "%d random arrays off", bad);
	return tap_done();
}
