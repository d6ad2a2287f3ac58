#include "mwu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rpt_obs { double v; int side; };

static int rpt_cmp_obs(const void *a, const void *b)
{
	double x = ((const struct rpt_obs *)a)->v, y = ((const struct rpt_obs *)b)->v;
	return (x > y) - (x < y);
}

static int rpt_cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Coefficients of the Gaussian binomial [n1+n2 choose n1]_q: c[u] counts the
 * orderings with U = u. Built as prod (1 - q^(n2+i)) / (1 - q^i), exactly in
 * 128-bit integers (C(100,50) < 2^127). Returns NULL on allocation failure. */
static __int128 *rpt_mwu_counts(size_t n1, size_t n2)
{
	size_t deg = n1 * n2 + n1 + n2 + 1;
	__int128 *c = calloc(deg + 1, sizeof(*c));
	if (!c)
		return NULL;
	c[0] = 1;
	for (size_t i = 1; i <= n1; i++) {
		size_t m = n2 + i;
		for (size_t k = deg; k >= m; k--)      /* times (1 - q^m) */
			c[k] -= c[k - m];
		for (size_t k = i; k <= deg; k++)      /* divided by (1 - q^i) */
			c[k] += c[k - i];
	}
	return c;
}

static double rpt_mwu_exact_p(double u, size_t n1, size_t n2)
{
	__int128 *c = rpt_mwu_counts(n1, n2);
	if (!c)
		return NAN;
	double umin = fmin(u, (double)(n1 * n2) - u);
	__int128 below = 0, total = 0;
	for (size_t k = 0; k <= n1 * n2; k++) {
		total += c[k];
		if ((double)k <= umin + 1e-9)
			below += c[k];
	}
	free(c);
	double p = 2.0 * (double)below / (double)total;
	return p > 1 ? 1 : p;
}

double rpt_mwu_min_p(size_t n1, size_t n2)
{
	if (n1 == 0 || n2 == 0)
		return 1;
	/* 2 / C(n1+n2, n1), in logs to stay finite for large n. */
	double lc = lgamma((double)(n1 + n2 + 1)) - lgamma((double)(n1 + 1)) - lgamma((double)(n2 + 1));
	double p = 2.0 * exp(-lc);
	return p > 1 ? 1 : p;
}

struct rpt_mwu rpt_mwu_test(const double *x, size_t n1, const double *y, size_t n2)
{
	struct rpt_mwu r = { .u = 0, .p = 1, .exact = false };
	if (n1 == 0 || n2 == 0)
		return r;
	size_t n = n1 + n2;
	struct rpt_obs *o = malloc(n * sizeof(*o));
	if (!o) {
		r.p = NAN;
		return r;
	}
	for (size_t i = 0; i < n1; i++)
		o[i] = (struct rpt_obs){ x[i], 0 };
	for (size_t i = 0; i < n2; i++)
		o[n1 + i] = (struct rpt_obs){ y[i], 1 };
	qsort(o, n, sizeof(*o), rpt_cmp_obs);
	/* Mid-ranks; tie term sum(t^3 - t) for the variance correction. */
	double rank_sum_x = 0, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && o[j + 1].v == o[i].v)
			j++;
		double mid = (double)(i + j) / 2.0 + 1.0, t = (double)(j - i + 1);
		for (size_t k = i; k <= j; k++)
			if (o[k].side == 0)
				rank_sum_x += mid;
		ties += t * t * t - t;
		i = j + 1;
	}
	free(o);
	r.u = rank_sum_x - (double)n1 * (double)(n1 + 1) / 2.0;
	if (ties == 0 && n1 <= RPT_MWU_EXACT_MAX && n2 <= RPT_MWU_EXACT_MAX) {
		r.exact = true;
		r.p = rpt_mwu_exact_p(r.u, n1, n2);
		return r;
	}
	double mu = (double)n1 * (double)n2 / 2.0;
	double var = (double)n1 * (double)n2 / 12.0 *
		     ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
	if (var <= 0) {
		r.p = 1;
		return r;
	}
	double z = (fabs(r.u - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	r.p = erfc(z / M_SQRT2);
	if (r.p > 1)
		r.p = 1;
	return r;
}

double rpt_binom_half_cdf(size_t n, size_t k)
{
	if (k >= n)
		return 1;
	double sum = 0, ln2n = (double)n * log(2.0);
	for (size_t i = 0; i <= k; i++)
		sum += exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
			   lgamma((double)(n - i) + 1) - ln2n);
	return sum > 1 ? 1 : sum;
}

struct rpt_median rpt_median_ci(const double *v, size_t n, double conf)
{
	struct rpt_median m = { .median = NAN, .lo = NAN, .hi = NAN, .conf = 0 };
	if (n == 0)
		return m;
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return m;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), rpt_cmp_dbl);
	m.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
	/* [x_(k), x_(n-k+1)] (1-based) covers the median with probability
	 * 1 - 2 P(B <= k-1); take the narrowest k that still reaches conf,
	 * accumulating the binomial tail once. */
	double alpha2 = (1.0 - conf) / 2.0, tail = 0, ln2n = (double)n * log(2.0);
	size_t best = 0;
	double best_tail = 0;
	for (size_t j = 0; j + 1 <= n / 2; j++) {     /* tail = P(B <= j), k = j + 1 */
		tail += exp(lgamma((double)n + 1) - lgamma((double)j + 1) -
			    lgamma((double)(n - j) + 1) - ln2n);
		if (tail > alpha2)
			break;
		best = j + 1;
		best_tail = tail;
	}
	if (best) {
		m.lo = s[best - 1];
		m.hi = s[n - best];
		m.conf = 1.0 - 2.0 * best_tail;
	}
	free(s);
	return m;
}
