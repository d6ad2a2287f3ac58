/* Two order statistics of one array at once (the jitter's p50 and p99 of
 * a flow, ana_decomp.c). */
#ifndef NP_ANA_KTH2_H
#define NP_ANA_KTH2_H

#include <stddef.h>
#include <stdint.h>

/* The k1-th and k2-th smallest (0-based, both < n) of v[0, n) into *x1 and
 * *x2: the values ana_kth gives for each. v is not changed, w (n entries,
 * not v) is scratch. */
void ana_kth2(const int64_t *v, size_t n, size_t k1, size_t k2, int64_t *w, int64_t *x1, int64_t *x2);

#endif
