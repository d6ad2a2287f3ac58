/* Tests behind npreport compare (docs/NPREPORT.md, "Statistics"):
 *  - several runs a side: Student's t on run-level summaries (log scale when
 *    every value is positive), pooled variance: reruns are independent,
 *    their spread is the between-run noise a CI gate must be judged against;
 *    counted rates (loss): pooled counts, quasi-binomial;
 *  - one run a side: a circular block bootstrap of the median of the
 *    per-interval samples (blocks keep the autocorrelation of neighbouring
 *    intervals), or a two-proportion test for counted rates (loss);
 *  - Benjamini-Hochberg adjusted p-values across the metrics tested. */
#ifndef RPT_COMPARE_STATS_H
#define RPT_COMPARE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpt_test_res {
	double p;          /* two-sided; NAN when no test was possible */
	double b, n;       /* the compared summaries (geometric/arithmetic mean, median, rate) */
};

/* Two-sided P(|T| >= |t|) for Student's t with df degrees of freedom. */
double rpt_t_sf2(double t, double df);
/* Pooled-variance t-test on x[0..nx) vs y[0..ny): needs nx + ny >= 3 and a
 * side with 2 values. Log scale when every value is > 0. */
struct rpt_test_res rpt_runs_ttest(const double *x, size_t nx, const double *y, size_t ny);
/* Circular block bootstrap of median(y) - median(x) (B resamples, block
 * length ceil(n^(1/3)), deterministic in seed). */
struct rpt_test_res rpt_block_boot(const double *x, size_t nx, const double *y, size_t ny,
				   size_t B, uint64_t seed);
/* Two-proportion z-test (pooled): kx of nx vs ky of ny. */
struct rpt_test_res rpt_prop_test(double kx, double nx, double ky, double ny);
/* Several runs a side of a counted rate (k of n per run): the pooled
 * two-proportion test with its variance scaled by the runs' overdispersion
 * (Pearson chi2 / (runs - 2), at least 1): quasi-binomial. */
struct rpt_test_res rpt_prop_runs_test(const double *kx, const double *nx, size_t mx,
				       const double *ky, const double *ny, size_t my);
/* Benjamini-Hochberg: q[i] = adjusted p of p[i] (NAN entries are skipped
 * and stay NAN). */
void rpt_bh_adjust(const double *p, double *q, size_t m);
/* Median of v[0..n) (v is reordered). */
double rpt_median_inplace(double *v, size_t n);
uint64_t rpt_hash_str(uint64_t h, const char *s);

#endif
