/* Order statistics of the jitter (see ana_kth.h). */
#include <string.h>
#include "ana_kth.h"

/* Puts the k-th smallest of v[0..n) at v[k] (quickselect). */
void ana_select(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n ? n - 1 : 0;
	while (lo < hi) {
		int64_t pv = v[lo + (hi - lo) / 2];
		size_t i = lo, r = hi;
		while (i <= r) {
			while (v[i] < pv) i++;
			while (v[r] > pv) r--;
			if (i <= r) {
				int64_t t = v[i]; v[i] = v[r]; v[r] = t;
				i++;
				if (r == 0) break;
				r--;
			}
		}
		if (k <= r) hi = r;
		else if (k >= i) lo = i;
		else return;
	}
}

/* The k-th smallest (0-based, k < n) of v[0, n), the value ana_select
 * leaves at v[k]; v is not changed, w (n entries) is scratch. By
 * histogram: the values' range cut into ANA_KBUCKETS buckets, the bucket
 * holding rank k kept (into w) and cut again, until one value or a few are
 * left: passes without data-dependent branches, where quickselect's
 * partitions mispredict about every other compare. */
#define ANA_KBUCKETS 2048
int64_t ana_kth(const int64_t *v, size_t n, size_t k, int64_t *w)
{
	const uint64_t flip = 1ull << 63;        /* signed order as unsigned */
	const int64_t *src = v;
	while (n > 64 && n < UINT32_MAX) {
		uint64_t lo = UINT64_MAX, hi = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t u = (uint64_t)src[i] ^ flip;
			lo = u < lo ? u : lo;
			hi = u > hi ? u : hi;
		}
		if (lo == hi)
			return src[0];
		unsigned sh = 0;
		while (((hi - lo) >> sh) >= ANA_KBUCKETS)
			sh++;
		uint32_t cnt[ANA_KBUCKETS] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[(((uint64_t)src[i] ^ flip) - lo) >> sh]++;
		size_t b = 0, below = 0;
		while (below + cnt[b] <= k)
			below += cnt[b++];
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {         /* in place when src is w: m <= i */
			int64_t x = src[i];
			w[m] = x;
			m += ((((uint64_t)x ^ flip) - lo) >> sh) == b;
		}
		src = w;
		n = m;
		k -= below;
	}
	if (src != w)
		memcpy(w, src, n * sizeof(*w));
	ana_select(w, n, k);
	return w[k];
}
