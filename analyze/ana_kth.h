/* Order statistics for the decomposition's jitter (ana_decomp.c). */
#ifndef NP_ANA_KTH_H
#define NP_ANA_KTH_H

#include <stddef.h>
#include <stdint.h>

/* Puts the k-th smallest of v[0..n) at v[k] (quickselect). */
void ana_select(int64_t *v, size_t n, size_t k);
/* The k-th smallest (0-based, k < n) of v[0, n), the value ana_select
 * leaves at v[k]; v is not changed, w (n entries) is scratch. */
int64_t ana_kth(const int64_t *v, size_t n, size_t k, int64_t *w);

#endif
