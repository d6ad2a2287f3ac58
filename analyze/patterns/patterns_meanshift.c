/* 1-D mean shift (flat kernel, bin seeding), the way the ICPE authors used
 * scikit-learn's MeanShift: in one dimension with sorted data every window
 * mean is two binary searches and a prefix-sum difference, so clustering n
 * values costs O(seeds * iterations * log n) instead of O(n^2). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "patterns_int.h"

/* First index with sorted[i] >= v. */
static size_t lower_bound(const double *x, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x[mid] < v) lo = mid + 1; else hi = mid;
	}
	return lo;
}

/* First index with sorted[i] > v. */
static size_t upper_bound(const double *x, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x[mid] <= v) lo = mid + 1; else hi = mid;
	}
	return lo;
}

/* Distance from x[i] to its k-th nearest neighbour (itself included, as
 * scikit-learn counts it): the k neighbours form a window [s, s+k) holding
 * i; the best s is where the left and right reaches cross. */
static double kth_distance(const double *x, size_t n, size_t i, size_t k)
{
	size_t smin = i + 1 >= k ? i + 1 - k : 0;
	size_t smax = i < n - k ? i : n - k;
	size_t lo = smin, hi = smax;
	while (lo < hi) {              /* first s whose right reach >= left reach */
		size_t mid = lo + (hi - lo) / 2;
		if (x[mid + k - 1] - x[i] >= x[i] - x[mid]) hi = mid; else lo = mid + 1;
	}
	double best = fmax(x[i] - x[lo], x[lo + k - 1] - x[i]);
	if (lo > smin) {
		double d = fmax(x[i] - x[lo - 1], x[lo + k - 2] - x[i]);
		if (d < best) best = d;
	}
	return best;
}

double pat_ms_bandwidth(const double *sorted, size_t n, double quantile)
{
	if (n < 2) return 1.0;
	size_t k = (size_t)((double)n * quantile);
	if (k < 2) k = 2;
	if (k > n) k = n;
	double sum = 0;
	for (size_t i = 0; i < n; i++) sum += kth_distance(sorted, n, i, k);
	double bw = sum / (double)n;
	if (!(bw > 0)) {
		/* more than quantile*n identical values: fall back to a share of
		 * the range so distinct values still separate */
		double range = sorted[n - 1] - sorted[0];
		bw = range > 0 ? range / 100.0 : 1.0;
	}
	return bw;
}

/* The deviations |x - med| of sorted x are two sorted runs, walking down
 * from the middle and up from it: merging them up to the middle rank gives
 * the median deviation in O(n), without a copy or a sort. */
double pat_ms_mad_sigma(const double *x, size_t n)
{
	if (n < 2) return 0;
	double med = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	size_t down = n / 2, up = n / 2;        /* next: x[down - 1], x[up] */
	double prev = 0, cur = 0;
	for (size_t r = 0; r <= n / 2; r++) {
		double dl = down > 0 ? med - x[down - 1] : INFINITY;
		double du = up < n ? x[up] - med : INFINITY;
		prev = cur;
		if (dl <= du) { cur = dl; down--; } else { cur = du; up++; }
	}
	return 1.4826 * (n % 2 ? cur : (prev + cur) / 2);
}

double pat_ms_auto_bw(const struct pat_opts *o, const double *x, size_t n)
{
	int rule = o->bw_rule;
	if (rule == PAT_BW_MODE) rule = o->mode == PAT_MODE_ICPE ? PAT_BW_KNN : PAT_BW_MAD;
	if (rule == PAT_BW_MAD) {
		double s = pat_ms_mad_sigma(x, n);
		if (s > 0) return s;
	}
	return pat_ms_bandwidth(x, n, PAT_KNN_QUANTILE);
}

struct ms_center { double c; size_t count; };

static int cmp_intensity(const void *a, const void *b)
{
	const struct ms_center *x = a, *y = b;
	if (x->count != y->count) return x->count < y->count ? 1 : -1;
	return (x->c > y->c) - (x->c < y->c);
}

static int cmp_center(const void *a, const void *b)
{
	const struct ms_center *x = a, *y = b;
	return (x->c > y->c) - (x->c < y->c);
}

/* Climbs from seed to a local maximum of the flat-kernel density. */
static int climb(const double *x, const double *prefix, size_t n, double bw, double c,
		 struct ms_center *out)
{
	for (int it = 0; it < 300; it++) {
		size_t a = lower_bound(x, n, c - bw), b = upper_bound(x, n, c + bw);
		if (a >= b) return -1;
		double mean = (prefix[b] - prefix[a]) / (double)(b - a);
		out->count = b - a;
		double shift = fabs(mean - c);
		c = mean;
		if (shift <= 1e-3 * bw) break;
	}
	out->c = c;
	size_t a = lower_bound(x, n, c - bw), b = upper_bound(x, n, c + bw);
	out->count = b - a;
	return 0;
}

int pat_ms_cluster(const double *x, size_t n, double bw, size_t **startp)
{
	*startp = NULL;
	if (n == 0) return 0;
	double *prefix = malloc((n + 1) * sizeof(double));
	if (!prefix) return -ENOMEM;
	prefix[0] = 0;
	for (size_t i = 0; i < n; i++) prefix[i + 1] = prefix[i] + x[i];

	/* bin seeding: one seed per occupied bin of width bw */
	size_t cap = 64, nseed = 0;
	struct ms_center *cent = malloc(cap * sizeof(*cent));
	if (!cent) { free(prefix); return -ENOMEM; }
	double lastbin = NAN;
	for (size_t i = 0; i < n; i++) {
		double bin = round(x[i] / bw);
		if (bin == lastbin) continue;
		lastbin = bin;
		if (nseed == cap) {
			struct ms_center *nc = realloc(cent, (cap *= 2) * sizeof(*cent));
			if (!nc) { free(cent); free(prefix); return -ENOMEM; }
			cent = nc;
		}
		if (climb(x, prefix, n, bw, bin * bw, &cent[nseed]) == 0) nseed++;
	}
	free(prefix);
	if (nseed == 0) {            /* cannot happen with bw > 0, be safe */
		cent[0].c = x[0]; cent[0].count = n; nseed = 1;
	}

	/* keep the most intense centers, dropping those within bw of a kept one */
	qsort(cent, nseed, sizeof(*cent), cmp_intensity);
	size_t nkeep = 0;
	for (size_t i = 0; i < nseed; i++) {
		bool near = false;
		for (size_t j = 0; j < nkeep && !near; j++)
			near = fabs(cent[j].c - cent[i].c) < bw;
		if (!near) cent[nkeep++] = cent[i];
	}
	qsort(cent, nkeep, sizeof(*cent), cmp_center);

	/* nearest center: in 1-D the borders are the midpoints */
	size_t *start = malloc((nkeep + 1) * sizeof(size_t));
	if (!start) { free(cent); return -ENOMEM; }
	size_t nc = 0;
	start[nc++] = 0;
	for (size_t i = 1; i < nkeep; i++) {
		double mid = (cent[i - 1].c + cent[i].c) / 2;
		size_t s = lower_bound(x, n, mid);
		if (s > start[nc - 1] && s < n) start[nc++] = s;
	}
	start[nc] = n;
	free(cent);
	*startp = start;
	return (int)nc;
}

/* Merges the smallest cluster (fewer than min_size points) into the
 * neighbour whose centre (midrange) is nearer, until none is small or one
 * is left; start[] shrinks in place. Returns the new count. With a
 * bandwidth fitted to the nominal spread a degraded mode, wider than the
 * nominal one, falls apart into several small clusters; joining each to
 * the cluster below (PAT_SMALL_BELOW) hands the lower part of the mode to
 * the nominal tail (TrainTicket 156: getRouteByTripId slowed to 32-38 ms,
 * threshold at 35 ms). */
static int merge_small_nearest(const double *x, size_t *start, int nc, size_t min_size)
{
	while (nc > 1) {
		int s = -1;
		for (int i = 0; i < nc; i++)
			if (start[i + 1] - start[i] < min_size && (s < 0 || start[i + 1] - start[i] < start[s + 1] - start[s]))
				s = i;
		if (s < 0) break;
		double mean_s = (x[start[s]] + x[start[s + 1] - 1]) / 2;
		double dlo = s > 0 ? mean_s - (x[start[s - 1]] + x[start[s] - 1]) / 2 : INFINITY;
		double dhi = s + 1 < nc ? (x[start[s + 1]] + x[start[s + 2] - 1]) / 2 - mean_s : INFINITY;
		int drop = dhi < dlo ? s + 1 : s;          /* the border that goes */
		memmove(start + drop, start + drop + 1, (size_t)(nc - drop) * sizeof(size_t));
		nc--;
	}
	return nc;
}

int pat_ms_thresholds(const double *x, size_t n, double bw, size_t min_size, enum pat_small small,
		      double **thrp)
{
	*thrp = NULL;
	if (n == 0) return 0;
	size_t *start;
	int nc = pat_ms_cluster(x, n, bw, &start);
	if (nc < 0) return nc;
	if (small == PAT_SMALL_NEAREST) {
		nc = merge_small_nearest(x, start, nc, min_size);
		min_size = 0;
	}
	double *thr = malloc(((size_t)nc + 1) * sizeof(double));
	if (!thr) { free(start); return -ENOMEM; }
	int nt = 0;
	thr[nt++] = x[0];
	for (int i = 1; i < nc; i++)
		if (start[i + 1] - start[i] >= min_size && x[start[i]] > thr[nt - 1])
			thr[nt++] = x[start[i]];
	thr[nt++] = x[n - 1] + 1.0;
	free(start);
	*thrp = thr;
	return nt;
}
