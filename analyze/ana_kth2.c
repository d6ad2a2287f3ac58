/* ana_kth2 (ana_kth2.h). Two ana_kth calls over one array each pass over
 * it three times (its range, the histogram, the bucket kept); here the
 * range and the histogram are taken once for both ranks, and both ranks'
 * buckets are kept in one pass: the first rank's from the front of w, the
 * second's from its back. Each then goes on in its part of w by ana_kth,
 * in place. The k-th smallest value is one value, whatever finds it. */
#include <string.h>
#include "ana_kth.h"
#include "ana_kth2.h"

#define ANA_K2BUCKETS 2048

/* Bucket of rank k in cnt; *below: how many values lie in lower buckets. */
static size_t ana_k2_bucket(const uint32_t *cnt, size_t k, size_t *below)
{
	size_t b = 0, n = 0;
	while (n + cnt[b] <= k)
		n += cnt[b++];
	*below = n;
	return b;
}

void ana_kth2(const int64_t *v, size_t n, size_t k1, size_t k2, int64_t *w, int64_t *x1, int64_t *x2)
{
	const uint64_t flip = 1ull << 63;        /* signed order as unsigned */
	if (n <= 64 || n >= UINT32_MAX) {
		*x1 = ana_kth(v, n, k1, w);
		*x2 = ana_kth(v, n, k2, w);
		return;
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t u = (uint64_t)v[i] ^ flip;
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
	}
	if (lo == hi) {
		*x1 = *x2 = v[0];
		return;
	}
	unsigned sh = 0;
	while (((hi - lo) >> sh) >= ANA_K2BUCKETS)
		sh++;
	uint32_t cnt[ANA_K2BUCKETS] = { 0 };
	for (size_t i = 0; i < n; i++)
		cnt[(((uint64_t)v[i] ^ flip) - lo) >> sh]++;
	size_t below1, below2;
	size_t b1 = ana_k2_bucket(cnt, k1, &below1), b2 = ana_k2_bucket(cnt, k2, &below2);
	if (b1 == b2 && 2 * (size_t)cnt[b1] > n) {   /* no room for two copies of it */
		*x1 = ana_kth(v, n, k1, w);
		*x2 = ana_kth(v, n, k2, w);
		return;
	}
	size_t m1 = 0, m2 = 0;
	int64_t *back = w + n - 1;
	for (size_t i = 0; i < n; i++) {
		int64_t x = v[i];
		size_t b = (((uint64_t)x ^ flip) - lo) >> sh;
		w[m1] = x;
		m1 += b == b1;
		if (b1 != b2) {
			back[-(ptrdiff_t)m2] = x;
			m2 += b == b2;
		}
	}
	if (b1 == b2) {                          /* the same bucket: a copy for each */
		m2 = m1;
		memcpy(w + n - m2, w, m1 * sizeof(*w));
	}
	*x1 = ana_kth(w, m1, k1 - below1, w);
	*x2 = ana_kth(w + n - m2, m2, k2 - below2, w + n - m2);
}
