/* Distribution-free statistics for compare, as Go's benchstat does them:
 * the median with a confidence interval from binomial order statistics, and
 * the two-sided Mann-Whitney U test (exact without ties for small samples,
 * normal approximation with tie and continuity correction otherwise). */
#ifndef RPT_MWU_H
#define RPT_MWU_H

#include <stdbool.h>
#include <stddef.h>

#define RPT_MWU_EXACT_MAX 50   /* exact distribution when both n <= this and no ties */

struct rpt_mwu {
	double u;         /* U of the first sample: pairs (x, y) with x > y, ties count 1/2 */
	double p;         /* two-sided p-value */
	bool exact;
};

/* x and y are not modified. n1, n2 >= 1, else p = 1. */
struct rpt_mwu rpt_mwu_test(const double *x, size_t n1, const double *y, size_t n2);
/* Smallest two-sided p-value any data of these sizes can give (no ties). */
double rpt_mwu_min_p(size_t n1, size_t n2);

struct rpt_median {
	double median;
	double lo, hi;     /* CI bounds; NAN when n is too small for conf */
	double conf;       /* achieved confidence (>= requested), 0 if none */
};
/* Median of v[0..n) with a distribution-free CI at confidence `conf`. */
struct rpt_median rpt_median_ci(const double *v, size_t n, double conf);
/* P(B <= k) for B ~ Binomial(n, 1/2). */
double rpt_binom_half_cdf(size_t n, size_t k);

#endif
