#include "compare_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Regularised incomplete beta I_x(a, b) by Lentz's continued fraction. */
static double rpt_betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	d = 1 / (fabs(d) < tiny ? tiny : d);
	double h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m;
		double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + aa * d; d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + aa / c; c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + aa * d; d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + aa / c; c = fabs(c) < tiny ? tiny : c;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	return h;
}

static double rpt_ibeta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * rpt_betacf(a, b, x) / a;
	return 1 - exp(lbt) * rpt_betacf(b, a, 1 - x) / b;
}

double rpt_t_sf2(double t, double df)
{
	if (isnan(t) || df <= 0)
		return NAN;
	if (isinf(t))
		return 0;
	return rpt_ibeta(df / 2, 0.5, df / (df + t * t));
}

static void rpt_mean_var(const double *v, size_t n, bool lg, double *mean, double *ss)
{
	double m = 0, s = 0;
	for (size_t i = 0; i < n; i++)
		m += lg ? log(v[i]) : v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = (lg ? log(v[i]) : v[i]) - m;
		s += d * d;
	}
	*mean = m;
	*ss = s;
}

struct rpt_test_res rpt_runs_ttest(const double *x, size_t nx, const double *y, size_t ny)
{
	struct rpt_test_res r = { NAN, NAN, NAN };
	if (!nx || !ny || nx + ny < 3)
		return r;
	bool lg = true;
	for (size_t i = 0; i < nx; i++)
		lg = lg && x[i] > 0;
	for (size_t i = 0; i < ny; i++)
		lg = lg && y[i] > 0;
	double mx, my, sx, sy;
	rpt_mean_var(x, nx, lg, &mx, &sx);
	rpt_mean_var(y, ny, lg, &my, &sy);
	r.b = lg ? exp(mx) : mx;
	r.n = lg ? exp(my) : my;
	double df = (double)(nx + ny - 2);
	double s2 = (sx + sy) / df;
	double se = sqrt(s2 * (1.0 / (double)nx + 1.0 / (double)ny));
	if (mx == my)
		r.p = 1;
	else
		r.p = se > 0 ? rpt_t_sf2((my - mx) / se, df) : 0;
	return r;
}

static int rpt_cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double rpt_median_inplace(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), rpt_cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t rpt_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t rpt_hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* One circular block resample of v into out, its median. */
static double rpt_resample_median(const double *v, size_t n, size_t L, double *out, uint64_t *rng)
{
	size_t k = 0;
	while (k < n) {
		size_t start = (size_t)(rpt_splitmix(rng) % n);
		for (size_t j = 0; j < L && k < n; j++)
			out[k++] = v[(start + j) % n];
	}
	return rpt_median_inplace(out, n);
}

struct rpt_test_res rpt_block_boot(const double *x, size_t nx, const double *y, size_t ny,
				   size_t B, uint64_t seed)
{
	struct rpt_test_res r = { NAN, NAN, NAN };
	if (!nx || !ny || !B)
		return r;
	double *buf = malloc((nx + ny) * sizeof(*buf));
	if (!buf)
		return r;
	memcpy(buf, x, nx * sizeof(*x));
	r.b = rpt_median_inplace(buf, nx);
	memcpy(buf, y, ny * sizeof(*y));
	r.n = rpt_median_inplace(buf, ny);
	size_t lx = (size_t)ceil(cbrt((double)nx)), ly = (size_t)ceil(cbrt((double)ny));
	size_t below = 0, above = 0;
	uint64_t rng = seed;
	for (size_t i = 0; i < B; i++) {
		double d = rpt_resample_median(y, ny, ly, buf, &rng) -
			   rpt_resample_median(x, nx, lx, buf, &rng);
		below += d <= 0;
		above += d >= 0;
	}
	free(buf);
	double tail = (double)(below < above ? below : above);
	r.p = fmin(1.0, 2.0 * (tail + 1) / ((double)B + 1));
	return r;
}

struct rpt_test_res rpt_prop_test(double kx, double nx, double ky, double ny)
{
	struct rpt_test_res r = { NAN, NAN, NAN };
	if (!(nx > 0) || !(ny > 0) || kx < 0 || ky < 0)
		return r;
	r.b = kx / nx;
	r.n = ky / ny;
	double pool = (kx + ky) / (nx + ny);
	double se = sqrt(pool * (1 - pool) * (1 / nx + 1 / ny));
	if (r.b == r.n)
		r.p = 1;
	else
		r.p = se > 0 ? erfc(fabs(r.n - r.b) / se / M_SQRT2) : 0;
	return r;
}

/* Inverse of erfc on (0, 2) by bisection (only for rescaling a z). */
static double rpt_erfc_inv(double y)
{
	double lo = -10, hi = 10;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (erfc(mid) > y)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

struct rpt_pidx { double p; size_t i; };

static int rpt_cmp_pidx(const void *a, const void *b)
{
	const struct rpt_pidx *x = a, *y = b;
	return x->p < y->p ? -1 : x->p > y->p ? 1 : (x->i > y->i) - (x->i < y->i);
}

void rpt_bh_adjust(const double *p, double *q, size_t m)
{
	struct rpt_pidx *v = malloc((m + 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < m; i++) {
		q[i] = NAN;
		if (v && !isnan(p[i]))
			v[n++] = (struct rpt_pidx){ p[i], i };
	}
	if (!v)
		return;
	qsort(v, n, sizeof(*v), rpt_cmp_pidx);
	double run = 1;
	for (size_t k = n; k-- > 0;) {
		double adj = v[k].p * (double)n / (double)(k + 1);
		run = fmin(run, adj);
		q[v[k].i] = run;
	}
	free(v);
}

/* Pearson dispersion of one side's runs around the side's pooled rate. */
static double rpt_pearson(const double *k, const double *n, size_t m, double rate)
{
	double chi = 0;
	for (size_t i = 0; i < m; i++)
		if (rate > 0 && rate < 1 && n[i] > 0) {
			double d = k[i] - rate * n[i];
			chi += d * d / (rate * (1 - rate) * n[i]);
		}
	return chi;
}

struct rpt_test_res rpt_prop_runs_test(const double *kx, const double *nx, size_t mx,
				       const double *ky, const double *ny, size_t my)
{
	struct rpt_test_res r = { NAN, NAN, NAN };
	double sk[2] = { 0, 0 }, sn[2] = { 0, 0 };
	for (size_t i = 0; i < mx; i++)
		sk[0] += kx[i], sn[0] += nx[i];
	for (size_t i = 0; i < my; i++)
		sk[1] += ky[i], sn[1] += ny[i];
	r = rpt_prop_test(sk[0], sn[0], sk[1], sn[1]);
	if (isnan(r.p) || mx + my <= 2)
		return r;
	double chi = rpt_pearson(kx, nx, mx, r.b) + rpt_pearson(ky, ny, my, r.n);
	double phi = fmax(1.0, chi / (double)(mx + my - 2));
	if (r.p > 0 && r.p < 1) {
		/* the same z, its variance scaled by the overdispersion */
		double z = fabs(M_SQRT2 * rpt_erfc_inv(r.p));
		r.p = erfc(z / sqrt(phi) / M_SQRT2);
	}
	return r;
}
