/* npanalyze patterns: mean shift, bitset evaluation against a naive
 * evaluator, searches on cases with a known unique optimum, determinism,
 * the §4.3 scoring, and the evaluation harness at reduced size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "anatable.h"
#include "patterns.h"
#include "patterns_eval.h"
#include "patterns_int.h"
#include "trace.h"

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Two tight groups: thresholds are the two minima plus max + 1. */
static void test_meanshift(void)
{
	double x[100];
	uint64_t rng = 7;
	for (int i = 0; i < 100; i++) x[i] = (i < 60 ? 10.0 : 60.0) + pat_rng_unit(&rng);
	qsort(x, 100, sizeof(double), cmpd);
	double *thr;
	int n = pat_ms_thresholds(x, 100, 2.0, 5, PAT_SMALL_BELOW, &thr);
	CHECK(n == 3, "%d thresholds", n);
	if (n == 3) {
		CHECK_NEAR(thr[0], x[0], 0);
		CHECK_NEAR(thr[1], x[60], 0);
		CHECK_NEAR(thr[2], x[99] + 1, 0);
	}
	free(thr);
	/* a cluster below min_size is no threshold of its own */
	n = pat_ms_thresholds(x, 100, 2.0, 40, PAT_SMALL_BELOW, &thr);
	CHECK(n == 3, "%d thresholds with min_size 40 (the second group has 40)", n);
	free(thr);
	n = pat_ms_thresholds(x, 100, 2.0, 41, PAT_SMALL_BELOW, &thr);
	CHECK(n == 2, "%d thresholds with min_size 41", n);
	free(thr);
	/* nominal times at 10 ms (60), a slow mode at 31 ms (40) whose fast
	 * edge came out as a cluster of its own at 28 ms (10, below
	 * min_size 20): joined to the cluster below it says "nominal" (the
	 * thresholds 10, 31), joined to the nearer one "slow" (10, 28) */
	double y[110];
	for (int i = 0; i < 110; i++) y[i] = i < 60 ? 10.0 : i < 70 ? 28.0 : 31.0;
	n = pat_ms_thresholds(y, 110, 1.0, 20, PAT_SMALL_NEAREST, &thr);
	CHECK(n == 3, "%d thresholds joining small clusters to the nearer one", n);
	if (n == 3) CHECK_NEAR(thr[1], 28.0, 0);
	free(thr);
	n = pat_ms_thresholds(y, 110, 1.0, 20, PAT_SMALL_BELOW, &thr);
	CHECK(n == 3, "%d thresholds joining small clusters to the one below", n);
	if (n == 3) CHECK_NEAR(thr[1], 31.0, 0);
	free(thr);
}

/* The O(n) median absolute deviation of sorted values against the
 * definition (sort the deviations, take their median), odd and even n,
 * ties and a skewed tail. */
static void test_mad(void)
{
	uint64_t rng = 11;
	for (int round = 0; round < 40; round++) {
		size_t n = 2 + (size_t)round * 7;
		double x[300], d[300];
		for (size_t i = 0; i < n; i++)
			x[i] = round % 3 ? floor(20 * pat_rng_unit(&rng)) : exp(3 * pat_rng_unit(&rng));
		qsort(x, n, sizeof(double), cmpd);
		double med = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
		for (size_t i = 0; i < n; i++) d[i] = fabs(x[i] - med);
		qsort(d, n, sizeof(double), cmpd);
		double want = 1.4826 * (n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2);
		CHECK_NEAR(pat_ms_mad_sigma(x, n), want, 1e-9);
	}
}

/* kNN bandwidth against the O(n^2 log n) definition. */
static void test_bandwidth(void)
{
	uint64_t rng = 3;
	for (int round = 0; round < 5; round++) {
		size_t n = 30 + pat_rng_below(&rng, 70);
		double *x = malloc(n * sizeof(double)), *d = malloc(n * sizeof(double));
		for (size_t i = 0; i < n; i++) x[i] = floor(pat_rng_unit(&rng) * 50) + (i % 3 ? 0 : 100);
		qsort(x, n, sizeof(double), cmpd);
		size_t k = (size_t)((double)n * 0.1);
		if (k < 2) k = 2;
		double sum = 0;
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j < n; j++) d[j] = fabs(x[i] - x[j]);
			qsort(d, n, sizeof(double), cmpd);
			sum += d[k - 1];
		}
		double naive = sum / (double)n;
		if (!(naive > 0)) continue;
		CHECK_NEAR(pat_ms_bandwidth(x, n, 0.1), naive, 1e-9);
		free(x); free(d);
	}
}

/* A random table with missing values; every pattern counted by hand. */
static void test_bitsets_vs_naive(void)
{
	uint64_t rng = 11;
	for (int round = 0; round < 20; round++) {
		struct pat_table t;
		pat_table_init(&t);
		size_t n = 1 + pat_rng_below(&rng, 300), nr = 1 + pat_rng_below(&rng, 5);
		char nm[8];
		for (size_t j = 0; j < nr; j++) { snprintf(nm, sizeof(nm), "r%zu", j); pat_table_rpc(&t, nm); }
		for (size_t i = 0; i < n; i++) {
			long row = pat_table_row(&t, NULL, pat_rng_unit(&rng) * 100);
			for (size_t j = 0; j < nr; j++)
				if (pat_rng_below(&rng, 10)) pat_table_add(&t, (size_t)row, (int)j,
					(pat_rng_below(&rng, 3) ? 10 : 70) + pat_rng_unit(&rng) * 5);
		}
		struct pat_opts o;
		pat_opts_default(&o);
		o.bandwidth = 3;
		struct pat_model m;
		char err[128];
		if (pat_model_build(&m, &t, n / 5, &o, err, sizeof(err))) { CHECK(0, "model: %s", err); continue; }
		uint64_t *pos = calloc(m.nw + 1, sizeof(uint64_t));
		size_t npos = 0;
		for (size_t i = 0; i < n; i++)
			if (t.lat[i] >= 60) { pos[i / 64] |= 1ULL << (i % 64); npos++; }
		bool ok = true;
		for (int q = 0; q < 50 && m.ncand; q++) {
			struct pat_pattern p = { 0 };
			int want = 1 + (int)pat_rng_below(&rng, 3);
			for (int k = 0; k < want; k++) {
				struct pat_cond c = m.cand[pat_rng_below(&rng, (uint32_t)m.ncand)];
				if (pat_find_rpc(&p, c.rpc) < 0) p.c[p.n++] = c;
			}
			size_t tp, cnt, ntp = 0, ncnt = 0;
			pat_eval(&m, &p, pos, &tp, &cnt);
			for (size_t i = 0; i < n; i++) {
				bool match = true;
				for (int k = 0; k < p.n && match; k++) {
					double v = t.col[p.c[k].rpc][i];
					match = !isnan(v) && v >= m.thr[p.c[k].rpc][p.c[k].lo] && v < m.thr[p.c[k].rpc][p.c[k].hi];
				}
				ncnt += match;
				ntp += match && t.lat[i] >= 60;
			}
			if (tp != ntp || cnt != ncnt) { ok = false; CHECK(0, "round %d: tp %zu/%zu cnt %zu/%zu", round, tp, ntp, cnt, ncnt); }
			double f = pat_fitness(&m, &p, pos, npos);
			double nf = ntp ? 2.0 * (double)ntp / (double)(npos + ncnt) : 0;
			if (fabs(f - nf) > 1e-12) { ok = false; CHECK(0, "fitness %g vs %g", f, nf); }
		}
		CHECK(ok, "round %d", round);
		free(pos);
		pat_model_free(&m);
		pat_table_free(&t);
	}
}

/* 300 requests; group A (rows % 10 == 1) has rpc "b" +50 ms and latency
 * ~150, group B (rows % 10 == 2) has "c" and "d" +50 and latency ~200.
 * "a" is noise; "e" is missing in every third request. The unique optimum
 * per sub-interval is b slow, resp. c slow (or d slow) with F = 1. */
static void build_known(struct pat_table *t)
{
	pat_table_init(t);
	const char *names[] = { "a", "b", "c", "d", "e" };
	for (int j = 0; j < 5; j++) pat_table_rpc(t, names[j]);
	uint64_t rng = 5;
	for (size_t i = 0; i < 300; i++) {
		int g = i % 10 == 1 ? 1 : i % 10 == 2 ? 2 : 0;
		double lat = 100 + pat_rng_unit(&rng) * 5 + (g == 1 ? 50 : g == 2 ? 100 : 0);
		char id[16];
		snprintf(id, sizeof(id), "q%zu", i);
		long row = pat_table_row(t, id, lat);
		pat_table_add(t, (size_t)row, 0, 10 + pat_rng_unit(&rng) * 2);
		pat_table_add(t, (size_t)row, 1, 10 + pat_rng_unit(&rng) + (g == 1 ? 50 : 0));
		pat_table_add(t, (size_t)row, 2, 10 + pat_rng_unit(&rng) + (g == 2 ? 50 : 0));
		pat_table_add(t, (size_t)row, 3, 10 + pat_rng_unit(&rng) + (g == 2 ? 50 : 0));
		if (i % 3) pat_table_add(t, (size_t)row, 4, 5 + pat_rng_unit(&rng));
	}
}

static void check_known(int mode, int threads)
{
	struct pat_table t;
	build_known(&t);
	struct pat_opts o;
	pat_opts_default(&o);
	o.mode = mode;
	o.threads = threads;
	o.have_interval = true; o.lo = 140; o.hi = 220;
	o.bw_rule = PAT_BW_MAD;
	struct pat_result r;
	char err[256];
	int rc = pat_analyze(&t, &o, &r, err, sizeof(err));
	CHECK(rc == 0, "%s: %s", pat_mode_name(mode), err);
	if (rc) { pat_table_free(&t); return; }
	CHECK(r.npos == 60, "%s: npos %zu", pat_mode_name(mode), r.npos);
	CHECK(r.nitems == 2, "%s: %zu patterns", pat_mode_name(mode), r.nitems);
	for (size_t k = 0; k < r.nitems && r.nitems == 2; k++) {
		const struct pat_item *it = &r.items[k];
		CHECK(it->ncond == 1, "%s: item %zu has %d conditions", pat_mode_name(mode), k, it->ncond);
		int want = k == 0 ? 1 : 2;
		CHECK(it->c[0].rpc == want || (k == 1 && it->c[0].rpc == 3), "%s: item %zu on rpc %d",
		      pat_mode_name(mode), k, it->c[0].rpc);
		CHECK_NEAR(it->f, 1.0, 1e-12);
		CHECK_EQ_U(it->nmembers, 30);
		bool right = true;
		for (size_t i = 0; i < it->nmembers; i++) right &= it->members[i] % 10 == (size_t)want;
		CHECK(right, "%s: item %zu members", pat_mode_name(mode), k);
		/* the slow cluster spans [60, 61): its minimum is the threshold */
		CHECK(it->c[0].lo >= 60 && it->c[0].lo < 61, "%s: lower bound %g", pat_mode_name(mode), it->c[0].lo);
	}
	pat_result_free(&r);
	pat_table_free(&t);
}

static void test_determinism(void)
{
	struct pat_table t;
	pat_table_init(&t);
	struct pat_gen g = { .n = 600, .noise = true, .seed = 42 };
	pat_gen_session(&t, &g);
	char a[4096] = "", b[4096] = "";
	for (int run = 0; run < 2; run++) {
		struct pat_opts o;
		pat_opts_default(&o);
		o.mode = PAT_MODE_ICPE;
		o.generations = 60;
		o.seed = 9;
		o.threads = run ? 2 : 1;
		o.have_interval = true; o.lo = g.lo; o.hi = g.hi;
		struct pat_result r;
		char err[256];
		if (pat_analyze(&t, &o, &r, err, sizeof(err))) { CHECK(0, "%s", err); break; }
		char *out = run ? b : a;
		size_t off = 0;
		for (size_t k = 0; k < r.nitems && off < 3000; k++) {
			char buf[1024];
			pat_item_format(&t, &r.items[k], buf, sizeof(buf));
			off += (size_t)snprintf(out + off, 4096 - off, "%s|%.9f|", buf, r.items[k].f);
		}
		pat_result_free(&r);
	}
	CHECK(a[0] && !strcmp(a, b), "same seed, 1 vs 2 threads:\n%s\n%s", a, b);
	pat_gen_free(&g);
	pat_table_free(&t);
}

static void test_score(void)
{
	uint8_t label[10] = { 1, 1, 1, 1, 2, 2, 2, 0, 0, 0 };
	size_t c1[] = { 0, 1, 2, 7 }, c2[] = { 4, 5 }, c3[] = { 3 };
	size_t *mem[] = { c1, c2, c3 }, sz[] = { 4, 2, 1 };
	struct pat_score s;
	pat_score_clusters(label, 10, 3, mem, sz, &s);
	/* A1 best: c1 (F 2*3/8); A2 best: c2 (F 2*2/5); G = 5, P = 7, C = 6 */
	CHECK_NEAR(s.recall, 5.0 / 7, 1e-12);
	CHECK_NEAR(s.precision, 5.0 / 6, 1e-12);
	CHECK_NEAR(s.f, 2 * (5.0 / 6) * (5.0 / 7) / (5.0 / 6 + 5.0 / 7), 1e-12);
}

/* The harness at reduced size: 10 normal + 10 noised sessions. */
static void test_harness(void)
{
	double sum[2] = { 0, 0 }, ksum = 0;
	int k = 10;
	for (int noised = 0; noised < 2; noised++)
		for (int s = 0; s < k; s++) {
			struct pat_table t;
			pat_table_init(&t);
			struct pat_gen g = { .n = 1000, .noise = noised, .seed = 1000 + (uint64_t)s };
			pat_gen_session(&t, &g);
			size_t n1 = 0, n2 = 0;
			for (size_t i = 0; i < t.nrows; i++) { n1 += g.label[i] == 1; n2 += g.label[i] == 2; }
			CHECK(n1 > 60 && n1 < 140 && n2 > 60 && n2 < 140, "session %d: %zu/%zu affected", s, n1, n2);
			struct pat_opts o;
			pat_opts_default(&o);
			o.have_interval = true; o.lo = g.lo; o.hi = g.hi;
			o.threads = 1;
			struct pat_result r;
			char err[256];
			if (pat_analyze(&t, &o, &r, err, sizeof(err))) { CHECK(0, "%s", err); continue; }
			struct pat_score sc;
			pat_score_result(g.label, t.nrows, &r, &sc);
			sum[noised] += sc.f;
			pat_result_free(&r);
			if (noised) {
				pat_kmeans_best(&t, g.label, g.lo, g.hi, g.seed, &sc);
				ksum += sc.f;
			}
			pat_gen_free(&g);
			pat_table_free(&t);
		}
	printf("# harness: mean F normal %.3f noised %.3f, k-means noised %.3f\n", sum[0] / k, sum[1] / k, ksum / k);
	CHECK(sum[0] / k >= 0.9, "mean F normal %.3f", sum[0] / k);
	CHECK(sum[1] / k >= 0.9, "mean F noised %.3f", sum[1] / k);
	CHECK(ksum / k > 0.3 && ksum / k < sum[1] / k, "k-means noised %.3f (set %.3f)", ksum / k, sum[1] / k);
}

static void test_auto_interval(void)
{
	struct pat_table t;
	build_known(&t);
	struct pat_opts o;
	pat_opts_default(&o);
	struct pat_result r;
	char err[256];
	int rc = pat_analyze(&t, &o, &r, err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	if (!rc) {
		CHECK(r.auto_interval, "auto");
		CHECK(r.lo > 105 && r.lo < 151, "auto lo %g (group A: 150..155)", r.lo);
		CHECK_EQ_U(r.npos, 60);
		pat_result_free(&r);
	}
	pat_table_free(&t);
	/* a single mode: nothing degraded, a clear error */
	pat_table_init(&t);
	pat_table_rpc(&t, "x");
	for (int i = 0; i < 100; i++) pat_table_add(&t, (size_t)pat_table_row(&t, NULL, 100 + i % 7), 0, 5);
	rc = pat_analyze(&t, &o, &r, err, sizeof(err));
	CHECK(rc != 0 && strstr(err, "--interval"), "single mode: rc %d '%s'", rc, err);
	pat_table_free(&t);
}

/* Rows of group g: i % 10 == g. Returns true when some item's cluster is
 * exactly that group. */
static bool has_cluster(const struct pat_result *r, int g, size_t n)
{
	for (size_t k = 0; k < r->nitems; k++) {
		const struct pat_item *it = &r->items[k];
		bool ok = it->nmembers == n / 10;
		for (size_t i = 0; i < it->nmembers && ok; i++) ok = it->members[i] % 10 == (size_t)g;
		if (ok) return true;
	}
	return false;
}

/* 300 requests, latency ~100 ms + the delays; rpc values ~10 ms + delays. */
static void build_groups(struct pat_table *t, const double delay[3][2])
{
	pat_table_init(t);
	pat_table_rpc(t, "a");
	pat_table_rpc(t, "b");
	pat_table_rpc(t, "c");
	uint64_t rng = 99;
	for (size_t i = 0; i < 300; i++) {
		int g = i % 10 == 1 ? 1 : i % 10 == 2 ? 2 : 0;
		double d[2] = { g ? delay[g][0] : 0, g ? delay[g][1] : 0 };
		if (g == 1 && delay[0][0] > 0 && i % 20 == 11) d[0] = delay[0][0];   /* the other half */
		double a = 10 + pat_rng_unit(&rng) + d[0], b = 10 + pat_rng_unit(&rng) + d[1];
		double c = 10 + pat_rng_unit(&rng);
		long row = pat_table_row(t, NULL, 70 + a + b + c + pat_rng_unit(&rng));
		pat_table_add(t, (size_t)row, 0, a);
		pat_table_add(t, (size_t)row, 1, b);
		pat_table_add(t, (size_t)row, 2, c);
	}
}

/* Merge: one degradation whose delay is 50 ms or 60 ms (noise 1), cut in two
 * by the split points; set mode reports one cluster, beam two halves. */
static void test_merge(void)
{
	const double delay[3][2] = { { 60, 0 }, { 50, 0 }, { 0, 0 } };   /* group 1: a +50 or +60 */
	struct pat_table t;
	build_groups(&t, delay);
	for (int mode = 0; mode < 2; mode++) {
		struct pat_opts o;
		pat_opts_default(&o);
		o.mode = mode ? PAT_MODE_BEAM : PAT_MODE_SET;
		o.have_interval = true; o.lo = 140; o.hi = 200;
		o.lat_bandwidth = 2;       /* splits the 50 and 60 ms halves */
		o.bandwidth = 2;
		o.threads = 1;
		struct pat_result r;
		char err[256];
		if (pat_analyze(&t, &o, &r, err, sizeof(err))) { CHECK(0, "%s", err); continue; }
		CHECK(r.nsplit >= 3, "%s: %zu split points", pat_mode_name(o.mode), r.nsplit);
		if (mode == 0) CHECK(has_cluster(&r, 1, 300), "set: one cluster of the whole degradation (%zu items)", r.nitems);
		else CHECK(!has_cluster(&r, 1, 300) && r.nitems >= 2, "beam: halves (%zu items)", r.nitems);
		pat_result_free(&r);
	}
	pat_table_free(&t);
}

/* Split: group 1 has a slow, group 2 a and b slow, one latency sub-interval
 * holds both (large latency bandwidth): set mode still returns one cluster
 * per group, beam cannot. */
static void test_split(void)
{
	const double delay[3][2] = { { 0, 0 }, { 50, 0 }, { 50, 50 } };
	struct pat_table t;
	build_groups(&t, delay);
	for (int mode = 0; mode < 2; mode++) {
		struct pat_opts o;
		pat_opts_default(&o);
		o.mode = mode ? PAT_MODE_BEAM : PAT_MODE_SET;
		o.have_interval = true; o.lo = 140; o.hi = 260;
		o.lat_bandwidth = 500;     /* no inner split point */
		o.threads = 1;
		struct pat_result r;
		char err[256];
		if (pat_analyze(&t, &o, &r, err, sizeof(err))) { CHECK(0, "%s", err); continue; }
		CHECK_EQ_U(r.nsplit, 2);
		bool both = has_cluster(&r, 1, 300) && has_cluster(&r, 2, 300);
		if (mode == 0) CHECK(both, "set: a cluster per degradation (%zu items)", r.nitems);
		else CHECK(!both, "beam: one pattern for both");
		pat_result_free(&r);
	}
	pat_table_free(&t);
}

/* Cover (default mode) on hand-made tables of 300 requests with two
 * injected degradations that slow requests into the same latency range:
 *  1. group 1: a +40, group 2: b +40 (two RPCs, exclusive);
 *  2. group 1: a +60, group 2: a +25 and b +35 (one RPC at two levels);
 *  3. group 1: a +50 in half of it, +60 in the other (noise 1: one cause);
 *  4. group 1: a +50, group 2: a +50 and b +50 (nested, different latency).
 * A cluster per group, exactly its requests, whatever the thread count. */
static void test_cover(void)
{
	static const struct {
		double delay[3][2];
		double lo, hi;
		bool two;
		const char *what;
	} cases[] = {
		{ { { 0, 0 }, { 40, 0 }, { 0, 40 } }, 130, 180, true, "exclusive RPCs" },
		{ { { 0, 0 }, { 60, 0 }, { 25, 35 } }, 150, 200, true, "one RPC at two levels" },
		{ { { 60, 0 }, { 50, 0 }, { 0, 0 } }, 140, 200, false, "noise 1" },
		{ { { 0, 0 }, { 50, 0 }, { 50, 50 } }, 140, 260, true, "nested" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct pat_table t;
		build_groups(&t, cases[k].delay);
		char first[2048] = "";
		for (int threads = 1; threads <= 2; threads++) {
			struct pat_opts o;
			pat_opts_default(&o);
			CHECK(o.mode == PAT_MODE_COVER, "cover is the default");
			o.have_interval = true; o.lo = cases[k].lo; o.hi = cases[k].hi;
			o.threads = threads;
			struct pat_result r;
			char err[256], out[2048] = "";
			if (pat_analyze(&t, &o, &r, err, sizeof(err))) { CHECK(0, "%s", err); break; }
			CHECK(has_cluster(&r, 1, 300), "%s: group 1 is one cluster (%zu items)", cases[k].what, r.nitems);
			if (cases[k].two)
				CHECK(has_cluster(&r, 2, 300), "%s: group 2 is one cluster", cases[k].what);
			for (size_t i = 0; i < r.nitems; i++) {
				char buf[512];
				pat_item_format(&t, &r.items[i], buf, sizeof(buf));
				CHECK(r.items[i].nmembers > 0, "%s: no empty pattern", cases[k].what);
				for (size_t j = 0; j < i; j++)        /* disjoint clusters, no duplicate */
					for (size_t a = 0; a < r.items[i].nmembers; a++)
						for (size_t b = 0; b < r.items[j].nmembers; b++)
							if (r.items[i].members[a] == r.items[j].members[b]) {
								CHECK(0, "%s: request %zu in two clusters", cases[k].what,
								      r.items[i].members[a]);
								a = r.items[i].nmembers; break;
							}
				strncat(out, buf, sizeof(out) - strlen(out) - 1);
			}
			if (threads == 1) snprintf(first, sizeof(first), "%s", out);
			else CHECK(!strcmp(first, out), "%s: 1 vs 2 threads:\n%s\n%s", cases[k].what, first, out);
			pat_result_free(&r);
		}
		pat_table_free(&t);
	}
}

/* nsga2 on the known case: one set with a cluster per group; the same
 * seed gives the same set. */
static void test_nsga2(void)
{
	struct pat_table t;
	build_known(&t);
	char first[2048] = "";
	for (int run = 0; run < 2; run++) {
		struct pat_opts o;
		pat_opts_default(&o);
		o.mode = PAT_MODE_NSGA2;
		o.have_interval = true; o.lo = 140; o.hi = 220;
		o.generations = 100;
		o.seed = 3;
		struct pat_result r;
		char err[256], out[2048] = "";
		if (pat_analyze(&t, &o, &r, err, sizeof(err))) { CHECK(0, "%s", err); break; }
		CHECK(has_cluster(&r, 1, 300) && has_cluster(&r, 2, 300), "nsga2: a cluster per group (%zu items)", r.nitems);
		for (size_t k = 0; k < r.nitems; k++) {
			char buf[512];
			pat_item_format(&t, &r.items[k], buf, sizeof(buf));
			strncat(out, buf, sizeof(out) - strlen(out) - 1);
		}
		if (run == 0) snprintf(first, sizeof(first), "%s", out);
		else CHECK(!strcmp(first, out), "nsga2 seed determinism:\n%s\n%s", first, out);
		pat_result_free(&r);
	}
	pat_table_free(&t);
}

/* The command end to end: CSV in, text out, .npa tables read back. */
static void test_cli(void)
{
	char csv[] = "/tmp/np-test-pat-XXXXXX", npa[64];
	int fd = mkstemp(csv);
	CHECK(fd >= 0, "mkstemp");
	if (fd < 0) return;
	FILE *f = fdopen(fd, "w");
	struct pat_table t;
	pat_table_init(&t);
	struct pat_gen g = { .n = 1000, .noise = true, .seed = 77 };
	pat_gen_session(&t, &g);
	fprintf(f, "id");
	for (size_t j = 0; j < t.nrpc; j++) fprintf(f, ",%s_us", t.rpc[j]);
	fprintf(f, ",latency\n");
	for (size_t i = 0; i < t.nrows; i++) {
		fprintf(f, "%s", t.id[i]);
		for (size_t j = 0; j < t.nrpc; j++) fprintf(f, ",%.0f", t.col[j][i] * 1000);
		fprintf(f, ",%.4f\n", t.lat[i]);
	}
	fclose(f);
	snprintf(npa, sizeof(npa), "%s.npa", csv);
	char lo[64];
	snprintf(lo, sizeof(lo), "%.4f:%.4f", g.lo - 0.001, g.hi + 0.001);
	char *argv[] = { "patterns", "--csv", csv, "--interval", lo, "--threads", "1", "-o", npa, NULL };
	int rc = patterns_main(9, argv);
	CHECK(rc == 0, "patterns_main rc %d", rc);
	struct np_analysis a;
	rc = np_analysis_load(&a, npa, NULL, NULL);
	CHECK(rc == 0, "load %s: %d", npa, rc);
	if (!rc) {
		const struct np_table *tp = np_analysis_table(&a, "patterns");
		const struct np_table *tr = np_analysis_table(&a, "pattern_requests");
		CHECK(tp && tr, "tables present");
		if (tp && tr) {
			CHECK(tp->nrows >= 2, "%zu patterns", tp->nrows);
			int cf = np_table_find_col(tp, "fscore"), cs = np_table_find_col(tp, "support");
			int cc = np_table_find_col(tp, "conditions");
			/* cover (default): F of a pattern is over all of I, so each
			 * of the two degradations' patterns scores ~0.5-0.7; what it
			 * promises is precision: its matches lie in I */
			int cpr = np_table_find_col(tp, "precision");
			size_t support = 0, good = 0;
			for (size_t r = 0; r < tp->nrows && cf >= 0 && cs >= 0 && cpr >= 0; r++) {
				good += np_cell_f64(np_table_cell_c(tp, r, (size_t)cpr)) >= 0.9 &&
					np_cell_f64(np_table_cell_c(tp, r, (size_t)cf)) >= 0.3;
				support += (size_t)np_cell_f64(np_table_cell_c(tp, r, (size_t)cs));
			}
			CHECK(good >= 2, "%zu patterns with precision >= 0.9", good);
			CHECK_EQ_U(tr->nrows, support);
			const struct np_cell *c = cc >= 0 ? np_table_cell_c(tp, 0, (size_t)cc) : NULL;
			CHECK(c && c->kind == NP_CELL_STR && strstr(c->s, " ∈ [") && strstr(c->s, " ms)"),
			      "conditions cell: %s", c && c->kind == NP_CELL_STR ? c->s : "?");
		}
		CHECK(a.nfindings == (tp ? tp->nrows : 0), "%zu findings", a.nfindings);
		CHECK(a.nsketches == 2 && a.sketches[0].sk.n == t.nrows, "latency sketch of all %zu requests",
		      t.nrows);
		np_analysis_free(&a);
	}
	/* --table-out writes what --csv reads back */
	char back[80];
	snprintf(back, sizeof(back), "%s.back.csv", csv);
	char *argv2[] = { "patterns", "--csv", csv, "--interval", lo, "--table-out", back, NULL };
	CHECK(patterns_main(7, argv2) == 0, "--table-out run");
	struct pat_table t2;
	pat_table_init(&t2);
	char err[256];
	rc = trace_csv_load(back, &t2, err, sizeof(err));
	CHECK(rc == 0 && t2.nrows == t.nrows && t2.nrpc == t.nrpc, "table back: %s", err);
	double worst = 0;
	for (size_t j = 0; !rc && j < t.nrpc && t2.nrpc == t.nrpc; j++)
		for (size_t i = 0; i < t.nrows && t2.nrows == t.nrows; i++)
			worst = fmax(worst, fabs(t.col[j][i] - t2.col[j][i]));
	CHECK(worst < 0.001, "table back differs by %g ms", worst);
	pat_table_free(&t2);
	unlink(back);
	char *bad[] = { "patterns", "--csv", csv, "--zipkin", csv, NULL };
	CHECK(patterns_main(5, bad) == 2, "two sources refused");
	char *bad2[] = { "patterns", "--csv", csv, "--mode", "nope", NULL };
	CHECK(patterns_main(5, bad2) == 2, "unknown mode refused");
	char *bad3[] = { "patterns", "--csv", "/nonexistent/x.csv", NULL };
	CHECK(patterns_main(3, bad3) == 1, "missing file: exit 1");
	unlink(csv);
	unlink(npa);
	pat_gen_free(&g);
	pat_table_free(&t);
}

/* The same session as a table and as Zipkin spans: the importer's pure
 * execution times (span minus synchronous children) must give the table
 * back, and the analysis must find the same degradations. */
static void test_zipkin_session(void)
{
	struct pat_table a, b;
	pat_table_init(&a);
	pat_table_init(&b);
	struct pat_gen g1 = { .n = 1000, .noise = true, .seed = 4242 }, g2 = g1;
	pat_gen_session(&a, &g1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pat_gen_zipkin(f, &g2);
	fclose(f);
	char err[256];
	int rc = trace_zipkin_load_mem(buf, len, "gethome", &b, err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	CHECK_EQ_U(b.nrows, a.nrows);
	CHECK_EQ_U(b.nrpc, a.nrpc);
	double worst = 0, worstlat = 0;
	for (size_t j = 0; j < a.nrpc && b.nrows == a.nrows && b.nrpc == a.nrpc; j++) {
		int jb = pat_table_rpc(&b, a.rpc[j]);
		for (size_t i = 0; i < a.nrows; i++) {
			double d = fabs(a.col[j][i] - b.col[jb][i]);
			if (!(d <= worst)) worst = d;
		}
	}
	for (size_t i = 0; i < a.nrows && b.nrows == a.nrows; i++)
		worstlat = fmax(worstlat, fabs(a.lat[i] - b.lat[i]));
	/* µs timestamps: a few µs of rounding per span */
	CHECK(worst < 0.01, "worst RPC time difference %g ms", worst);
	CHECK(worstlat < 0.001, "worst latency difference %g ms", worstlat);
	struct pat_opts o;
	pat_opts_default(&o);
	o.have_interval = true; o.lo = g2.lo; o.hi = g2.hi; o.threads = 1;
	struct pat_result r;
	if (pat_analyze(&b, &o, &r, err, sizeof(err)) == 0) {
		struct pat_score sc;
		pat_score_result(g2.label, b.nrows, &r, &sc);
		CHECK(sc.f >= 0.95, "F on the Zipkin import %.3f", sc.f);
		pat_result_free(&r);
	} else {
		CHECK(0, "%s", err);
	}
	free(buf);
	pat_gen_free(&g1); pat_gen_free(&g2);
	pat_table_free(&a); pat_table_free(&b);
}

int main(void)
{
	test_meanshift();
	test_bandwidth();
	test_mad();
	test_bitsets_vs_naive();
	check_known(PAT_MODE_SET, 1);
	check_known(PAT_MODE_BEAM, 2);
	check_known(PAT_MODE_ICPE, 2);
	check_known(PAT_MODE_GASET, 1);
	test_determinism();
	test_score();
	test_auto_interval();
	test_harness();
	test_cli();
	test_zipkin_session();
	test_merge();
	test_split();
	test_nsga2();
	test_cover();
	return tap_done();
}
