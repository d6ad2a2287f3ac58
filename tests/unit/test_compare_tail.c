/* npreport compare's min-tail rule: a gated quantile q is judged only where
 * every run of both sides has n x min(q, 1 - q) >= min_tail requests beyond
 * it. Endpoint analyses built in memory (the transactions table with
 * `requests`, p50, p99, p999, and per-interval series for one run a side):
 * a p99 of 600 requests moved +30 % is reported "not gated: too few
 * requests" where min_tail 0 (the old gate) fails the build; with 2000
 * requests it is still a REGRESSION; the p50 of 600 requests still gates;
 * the smaller side decides; the text, CSV and JUnit say why. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "anatable.h"
#include "compare.h"
#include "compare_gate.h"

#define EP_KEY "endpoint|10.0.0.2:80 GET /x|srv|server"
#define NINT 12

/* One run: the endpoint row and its per-interval p50/p99 series. */
struct run {
	struct np_table *t;
	struct np_table *tabs[1];
	struct np_series s[2], *sp[2];
	uint64_t ts[NINT];
	double v[2][NINT];
	struct np_analysis a;
};

/* requests in the run; p50/p99/p999 scaled by lat, run index k adds a
 * small spread (the runs' t-test needs variance). */
static void mk_run(struct run *r, double requests, double lat50, double lat99, int k)
{
	memset(r, 0, sizeof(*r));
	struct np_table *t = np_table_new("transactions", "Transactions", 4);
	const char *keys[] = { "level", "key", "host", "role" };
	for (size_t i = 0; i < 4; i++)
		np_table_col(t, keys[i], "str", NULL);
	np_table_col(t, "requests", "count", NULL);
	np_table_col(t, "p50", "ns", NULL);
	np_table_col(t, "p99", "ns", NULL);
	np_table_col(t, "p999", "ns", NULL);
	size_t row = np_table_row(t);
	const char *cells[] = { "endpoint", "10.0.0.2:80 GET /x", "srv", "server" };
	for (size_t i = 0; i < 4; i++)
		np_table_set_str(t, row, i, cells[i]);
	double spread = 1 + 0.01 * k;
	np_table_set_f64(t, row, 4, requests);
	np_table_set_f64(t, row, 5, 2e6 * lat50 * spread);
	np_table_set_f64(t, row, 6, 10e6 * lat99 * spread);
	np_table_set_f64(t, row, 7, 20e6 * lat99 * spread);
	static char *metrics[] = { "p50", "p99" };
	for (size_t m = 0; m < 2; m++) {
		for (size_t i = 0; i < NINT; i++) {
			r->ts[i] = 1000000000ULL * (i + 1);
			double base = m ? 10e6 * lat99 : 2e6 * lat50;
			r->v[m][i] = base * (1 + 0.002 * (double)((i * 7 + (size_t)k) % NINT));
		}
		r->s[m] = (struct np_series){ "transactions", EP_KEY, metrics[m], "ns", NINT, r->ts,
					      r->v[m] };
		r->sp[m] = &r->s[m];
	}
	r->t = t;
	r->tabs[0] = t;
	r->a = (struct np_analysis){ .ntables = 1, .tables = r->tabs, .nseries = 2, .series = r->sp };
}

static void free_run(struct run *r) { np_table_free(r->t); }

struct out { char *buf; size_t len; };

/* rpt_compare over nb base and nn new runs with the default gate and
 * min_tail; the output (format fmt) in o->buf. */
static int cmp(struct run *b, size_t nb, struct run *n, size_t nn, double min_tail,
	       enum rpt_cmpfmt fmt, struct rpt_cmpstats *st, struct out *o)
{
	struct np_analysis ab[4], an[4];
	const char *bp[4], *np[4];
	for (size_t i = 0; i < nb; i++)
		ab[i] = b[i].a, bp[i] = "base.npa";
	for (size_t i = 0; i < nn; i++)
		an[i] = n[i].a, np[i] = "new.npa";
	struct rpt_gate g;
	rpt_gate_init(&g);
	g.min_tail = min_tail;
	struct rpt_cmpopt opt = { .alpha = 0.05, .gate = &g, .format = fmt, .base_paths = bp,
				  .new_paths = np, .nbase = nb, .nnew = nn };
	struct rpt_textopt to = { .width = 100 };
	struct out dummy;
	o = o ? o : &dummy;
	FILE *f = open_memstream(&o->buf, &o->len);
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");      /* CSV/JUnit put the summary there */
	int ret = rpt_compare(f, ab, nb, an, nn, &opt, &to, st);
	fclose(stderr);
	stderr = saved;
	fclose(f);
	if (o == &dummy)
		free(o->buf);
	rpt_gate_free(&g);
	return ret;
}

static void test_needs(void)
{
	CHECK(rpt_quantile_needs("p99", 10) == 1000, "p99: 1000");
	CHECK(rpt_quantile_needs("p999", 10) == 10000, "p999: 10000 (%g)", rpt_quantile_needs("p999", 10));
	CHECK(rpt_quantile_needs("p50", 10) == 20, "p50: 20");
	CHECK(rpt_quantile_needs("p90", 10) == 100, "p90: 100");
	CHECK(rpt_quantile_needs("p9999", 10) == 100000, "p9999: 100000");
	CHECK(rpt_quantile_needs("p5", 10) == 200, "p5 is q 0.05: the lower tail, 200");
	CHECK(rpt_quantile_needs("jitter_p99_abs", 10) == 1000, "jitter_p99_abs");
	CHECK(rpt_quantile_needs("p99", 0) == 0, "min_tail 0: every quantile gated");
	CHECK(rpt_quantile_needs("p99", 5) == 500, "min_tail 5");
	const char *none[] = { "requests", "rate", "pct", "p99x", "mean", "p", "p0", "p100x", "cpu_per_request" };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		CHECK(rpt_quantile_needs(none[i], 10) == 0, "%s is no quantile", none[i]);
}

/* Three runs a side, p99 and p999 +30 % in every new run (p50 unchanged). */
static void test_runs(void)
{
	struct run b[3], n[3];
	struct rpt_cmpstats st;
	struct out o;

	for (int k = 0; k < 3; k++) {
		mk_run(&b[k], 600, 1.0, 1.0, k);
		mk_run(&n[k], 600, 1.0, 1.3, k);
	}
	CHECK(cmp(b, 3, n, 3, 0, RPT_CMP_TEXT, &st, NULL) == 1, "min_tail 0 (old gate): p99 of 600 requests +30 %% fails");
	CHECK_EQ_U(st.regressions, 2);
	CHECK(cmp(b, 3, n, 3, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, &o) == 0,
	      "600 requests a run: p99/p999 not gated, exit 0");
	CHECK_EQ_U(st.regressions, 0);
	CHECK_EQ_U(st.tail_short, 2);
	CHECK_EQ_U(st.gated, 2);              /* p50, requests */
	CHECK(strstr(o.buf, "transactions.p99 [" EP_KEY "]\n") != NULL, "p99 row still shown");
	CHECK(strstr(o.buf, "not gated: too few requests (n=600, needs >= 1000)\n") != NULL,
	      "text says why (p99)");
	CHECK(strstr(o.buf, "not gated: too few requests (n=600, needs >= 10000)\n") != NULL,
	      "text says why (p999)");
	CHECK(strstr(o.buf, "; 2 quantiles not gated (too few requests): OK") != NULL,
	      "summary line counts them");
	free(o.buf);
	CHECK(cmp(b, 3, n, 3, RPT_GATE_MIN_TAIL, RPT_CMP_CSV, &st, &o) == 0, "csv exit 0");
	CHECK(strstr(o.buf, ",p99,ns,higher,latency,0,runs-t,") != NULL, "csv: p99 not gated, tested on runs");
	CHECK(strstr(o.buf, "\"not gated: too few requests (n=600, needs >= 1000)\"") != NULL,
	      "csv verdict (quoted)");
	free(o.buf);
	CHECK(cmp(b, 3, n, 3, RPT_GATE_MIN_TAIL, RPT_CMP_JUNIT, &st, &o) == 0, "junit exit 0");
	CHECK(strstr(o.buf, "name=\"p99 [" EP_KEY "]\"><skipped message=") != NULL &&
	      strstr(o.buf, "tests=\"4\" failures=\"0\" skipped=\"2\"") != NULL, "junit: skipped testcases");
	free(o.buf);
	CHECK(cmp(b, 3, n, 3, 5, RPT_CMP_TEXT, &st, NULL) == 1, "min_tail 5: p99 of 600 gated again");
	CHECK_EQ_U(st.regressions, 1);        /* p999 still needs 2000 */
	for (int k = 0; k < 3; k++) {
		free_run(&b[k]);
		free_run(&n[k]);
	}

	/* 2000 requests a run: the p99 (20 beyond it) gates, the p999 (2) not. */
	for (int k = 0; k < 3; k++) {
		mk_run(&b[k], 2000, 1.0, 1.0, k);
		mk_run(&n[k], 2000, 1.0, 1.3, k);
	}
	CHECK(cmp(b, 3, n, 3, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, &o) == 1, "2000 requests: p99 +30 %% fails");
	CHECK_EQ_U(st.regressions, 1);
	CHECK_EQ_U(st.tail_short, 1);
	CHECK(strstr(o.buf, "REGRESSION (transactions[" EP_KEY "].p99 +30") != NULL, "p99 named");
	free(o.buf);
	/* the smaller side decides: base 2000, one new run 999 */
	free_run(&n[1]);
	mk_run(&n[1], 999, 1.0, 1.3, 1);
	CHECK(cmp(b, 3, n, 3, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, &o) == 0, "one new run of 999: not gated");
	CHECK(strstr(o.buf, "(n=999, needs >= 1000)") != NULL, "the smallest run's n shown");
	free(o.buf);
	for (int k = 0; k < 3; k++) {
		free_run(&b[k]);
		free_run(&n[k]);
	}

	/* A real regression of 600-request runs is still caught by the p50. */
	for (int k = 0; k < 3; k++) {
		mk_run(&b[k], 600, 1.0, 1.0, k);
		mk_run(&n[k], 600, 1.3, 1.3, k);
	}
	CHECK(cmp(b, 3, n, 3, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, &o) == 1, "p50 +30 %% of 600 requests fails");
	CHECK_EQ_U(st.regressions, 1);
	CHECK(strstr(o.buf, "REGRESSION (transactions[" EP_KEY "].p50 +30") != NULL, "p50 named");
	free(o.buf);
	for (int k = 0; k < 3; k++) {
		free_run(&b[k]);
		free_run(&n[k]);
	}

	/* 15 requests: even the p50 (7.5 beyond it) is not gated. */
	for (int k = 0; k < 3; k++) {
		mk_run(&b[k], 15, 1.0, 1.0, k);
		mk_run(&n[k], 15, 1.3, 1.3, k);
	}
	CHECK(cmp(b, 3, n, 3, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, NULL) == 0, "15 requests: p50 not gated");
	CHECK_EQ_U(st.tail_short, 3);
	for (int k = 0; k < 3; k++) {
		free_run(&b[k]);
		free_run(&n[k]);
	}
}

/* One run a side: the per-interval p99 series moved +80 % (beyond the
 * single-run tail minimum of 50 %). */
static void test_single(void)
{
	struct run b, n;
	struct rpt_cmpstats st;
	mk_run(&b, 600, 1.0, 1.0, 0);
	mk_run(&n, 600, 1.0, 1.8, 0);
	CHECK(cmp(&b, 1, &n, 1, 0, RPT_CMP_TEXT, &st, NULL) == 1, "one run, min_tail 0: p99 +80 %% fails");
	CHECK(cmp(&b, 1, &n, 1, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, NULL) == 0,
	      "one run of 600 requests: p99 not gated");
	CHECK_EQ_U(st.tail_short, 2);
	free_run(&n);
	mk_run(&n, 600, 1.3, 1.0, 0);
	CHECK(cmp(&b, 1, &n, 1, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, NULL) == 1,
	      "one run: p50 +30 %% still fails");
	free_run(&n);
	free_run(&b);
	mk_run(&b, 5000, 1.0, 1.0, 0);
	mk_run(&n, 5000, 1.0, 1.8, 0);
	CHECK(cmp(&b, 1, &n, 1, RPT_GATE_MIN_TAIL, RPT_CMP_TEXT, &st, NULL) == 1,
	      "one run of 5000 requests: p99 +80 %% fails");
	free_run(&n);
	free_run(&b);
}

static void test_config(void)
{
	struct rpt_gate g;
	char err[128] = "";
	rpt_gate_init(&g);
	CHECK(g.min_tail == RPT_GATE_MIN_TAIL, "default min_tail");
	const char ok[] = "min-tail 0\n";
	CHECK(rpt_gate_parse(&g, ok, sizeof(ok) - 1, err, sizeof(err)) == 0 && g.min_tail == 0,
	      "min-tail 0 (%s)", err);
	const char *bad[] = { "min-tail\n", "min-tail 5ms\n", "min-tail -1\n", "min-tail 1 2\n",
			      "min-tail nan\n", "min-tail 1e9\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK(rpt_gate_parse(&g, bad[i], strlen(bad[i]), err, sizeof(err)) < 0 &&
		      strstr(err, "line 1: min-tail"), "'%s' refused: %s", bad[i], err);
	}
	rpt_gate_free(&g);
}

int main(void)
{
	test_needs();
	test_runs();
	test_single();
	test_config();
	return tap_done();
}
