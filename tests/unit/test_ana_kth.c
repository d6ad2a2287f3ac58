/* ana_kth (analyze/ana_kth.c): the jitter's percentiles by histogram must
 * be the k-th smallest value exactly, as a full sort gives it (the truth
 * here) and as the quickselect it replaced left it, for the shapes that
 * take its branches: few values (the quickselect fallback), one value
 * repeated (range 0), a few distinct values, signed values across the
 * whole int64 range (the sign flip), a long tail (a bucket refined again),
 * and the input left unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ana_kth.h"
#include "tap.h"
#include "kthfix.h"
#include "xorshift.h"

/* One array of shape and size n: ranks 0, n-1, the p50's, the p99's and a
 * random one against the sort, and against ana_select. */
static int check_one(int shape, size_t n)
{
	int64_t *v = malloc(n * sizeof(*v)), *sorted = malloc(n * sizeof(*v));
	int64_t *w = malloc(n * sizeof(*v)), *orig = malloc(n * sizeof(*v));
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
	size_t ks[5] = { 0, n - 1, (n + 1) / 2 - 1, (size_t)((99 * n + 99) / 100) - 1, xs_next() % n };
	for (int q = 0; q < 5; q++) {
		bad += ana_kth(v, n, ks[q], w) != sorted[ks[q]];
		memcpy(w, v, n * sizeof(*v));
		ana_select(w, n, ks[q]);
		bad += w[ks[q]] != sorted[ks[q]];
	}
	bad += memcmp(v, orig, n * sizeof(*v)) != 0;
	free(v); free(sorted); free(w); free(orig);
	return bad;
}

int main(void)
{
	static const size_t sizes[] = { 1, 2, 63, 64, 65, 1000, 4097, 100000 };
	for (int shape = 0; shape < 6; shape++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			CHECK(check_one(shape, sizes[i]) == 0, "shape %d, %zu values", shape, sizes[i]);
	int bad = 0;
	for (int it = 0; it < 300; it++)
		bad += check_one((int)(xs_next() % 6), 1 + xs_next() % 20000);
	CHECK(bad == 0, "%d random arrays off", bad);
	return tap_done();
}
