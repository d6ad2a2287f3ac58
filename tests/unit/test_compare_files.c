/* npreport compare: direction rules, and rpt_compare on small analyses
 * written to disk (a known regression, no change, an improvement, a change
 * below the minimum effect, unmatched rows, too few samples). */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"
#include "anatable.h"
#include "compare.h"
#include "npmsg.h"
#include "records.h"

static void test_direction(void)
{
	CHECK(rpt_metric_direction("p99", "ns") == RPT_DIR_LOWER, "p99");
	CHECK(rpt_metric_direction("loss_rate", "ratio") == RPT_DIR_LOWER, "loss_rate");
	CHECK(rpt_metric_direction("jitter_rfc3550", "ns") == RPT_DIR_LOWER, "jitter");
	CHECK(rpt_metric_direction("net_rx", "ns") == RPT_DIR_LOWER, "ns durations");
	CHECK(rpt_metric_direction("throughput", "bps") == RPT_DIR_HIGHER, "throughput");
	CHECK(rpt_metric_direction("goodput", "bps") == RPT_DIR_HIGHER, "goodput");
	CHECK(rpt_metric_direction("offset", "ns") == RPT_DIR_NONE, "clock offset");
	CHECK(rpt_metric_direction("send_cpu", "ns") == RPT_DIR_LOWER, "send is not 'end'");
	CHECK(rpt_metric_direction("bytes", "bytes") == RPT_DIR_NONE, "bytes neutral");
	CHECK(rpt_metric_direction("flow", "str") == -1, "strings not compared");
	CHECK(rpt_metric_direction("start", "time_ns") == -1, "timestamps not compared");
	CHECK(rpt_metric_direction("requests", "count") == RPT_DIR_HIGHER, "requests: throughput");
}

/* ---- rpt_compare on analyses written to disk ---- */

struct ser { const char *key; double scale; size_t n; };

static int write_ana(const char *path, const char *const *keys, size_t nkeys,
		     const struct ser *sers, size_t nser)
{
	struct np_writer *w;
	unlink(path);
	if (np_writer_open(&w, path, NP_KIND_ANALYSIS, NULL) < 0)
		return -1;
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct np_table *t = np_table_new("flows", "Flows", 1);
	np_table_col(t, "flow", "str", NULL);
	np_table_col(t, "p99", "ns", NULL);
	for (size_t i = 0; i < nkeys; i++) {
		size_t r = np_table_row(t);
		np_table_set_str(t, r, 0, keys[i]);
		np_table_set_f64(t, r, 1, 1e6);
	}
	np_table_pack(&rb, t);
	np_table_free(t);
	for (size_t s = 0; s < nser; s++) {
		uint64_t ts[64];
		double v[64];
		for (size_t i = 0; i < sers[s].n; i++) {
			ts[i] = 1000000000ULL * (i + 1);
			v[i] = (1e6 + 1000.0 * (double)((i * 7) % sers[s].n)) * sers[s].scale;
		}
		np_series_pack(&rb, "flows", sers[s].key, "p99", "ns", ts, v, sers[s].n);
	}
	int err = np_writer_commit(w, &rb);
	np_recbuf_free(&rb);
	return np_writer_close(w) || err ? -1 : 0;
}

static int run_compare(const char *b, const char *n, struct rpt_cmpstats *st)
{
	struct np_analysis ab, an;
	if (np_analysis_load(&ab, b, NULL, NULL) < 0 || np_analysis_load(&an, n, NULL, NULL) < 0)
		return -2;
	struct rpt_gate g;
	rpt_gate_init(&g);
	rpt_gate_add(&g, "flows.p99", false, (struct rpt_mineff){ NAN, NAN });
	const char *bp[] = { b }, *np[] = { n };
	struct rpt_cmpopt o = { .alpha = 0.05, .gate = &g, .format = RPT_CMP_CSV,
				.base_paths = bp, .new_paths = np, .nbase = 1, .nnew = 1 };
	struct rpt_textopt to = { .width = 80 };
	FILE *devnull = fopen("/dev/null", "w");
	int ret = rpt_compare(devnull, &ab, 1, &an, 1, &o, &to, st);
	fclose(devnull);
	rpt_gate_free(&g);
	np_analysis_free(&ab);
	np_analysis_free(&an);
	return ret;
}

static void test_compare_files(void)
{
	char b[] = "/tmp/test_compare_b_XXXXXX", n[] = "/tmp/test_compare_n_XXXXXX";
	int fb = mkstemp(b), fn = mkstemp(n);
	close(fb);
	close(fn);
	const char *keys[] = { "a", "b" }, *keys_new[] = { "a", "c" };
	struct rpt_cmpstats st;

	/* +30 % on every sample of "a": significant regression (flows.p99 is
	 * gated by the rule; host-stack family: 20 % and 20 us minimum). */
	struct ser sb[] = { { "a", 1.0, 10 } }, sn[] = { { "a", 1.3, 10 } };
	CHECK(write_ana(b, keys, 2, sb, 1) == 0 && write_ana(n, keys_new, 2, sn, 1) == 0, "write");
	CHECK(run_compare(b, n, &st) == 1, "a +30%% regression exits 1");
	CHECK_EQ_U(st.regressions, 1);
	CHECK_EQ_U(st.gated, 1);
	CHECK_EQ_U(st.unmatched_base, 1);     /* b only in base */
	CHECK_EQ_U(st.unmatched_new, 1);      /* c only in new */

	/* Same samples: nothing significant, exit 0. */
	struct ser same[] = { { "a", 1.0, 10 } };
	CHECK(write_ana(n, keys, 2, same, 1) == 0, "write");
	CHECK(run_compare(b, n, &st) == 0, "identical exits 0");
	CHECK_EQ_U(st.significant, 0);
	CHECK_EQ_U(st.unmatched_base + st.unmatched_new, 0);
	CHECK_EQ_U(st.not_judged, 1);         /* row b has no series */

	/* An improvement (-30 %) is significant but not a regression. */
	struct ser better[] = { { "a", 0.7, 10 } };
	CHECK(write_ana(n, keys, 2, better, 1) == 0, "write");
	CHECK(run_compare(b, n, &st) == 0, "improvement exits 0");
	CHECK_EQ_U(st.improvements, 1);

	/* +10 %, significant: below the family's 20 %, exit 0. */
	struct ser small[] = { { "a", 1.1, 10 } };
	CHECK(write_ana(n, keys, 2, small, 1) == 0, "write");
	CHECK(run_compare(b, n, &st) == 0, "below the minimum effect exits 0");
	CHECK_EQ_U(st.significant, 1);
	CHECK_EQ_U(st.regressions, 0);

	/* Three samples a side: no test, exit 0. */
	struct ser few_b[] = { { "a", 1.0, 3 } }, few_n[] = { { "a", 2.0, 3 } };
	CHECK(write_ana(b, keys, 2, few_b, 1) == 0 && write_ana(n, keys, 2, few_n, 1) == 0, "write");
	CHECK(run_compare(b, n, &st) == 0, "too few samples exits 0");
	CHECK_EQ_U(st.gated_tested, 0);
	unlink(b);
	unlink(n);
}

int main(void)
{
	test_direction();
	test_compare_files();
	return tap_done();
}
