/* npreport compare: stable keys, aggregation of rows that share one,
 * the tests (t distribution, two-proportion, block bootstrap, BH) against
 * hand-computed values, the gate's default set and families, and the
 * config parser (good lines, every kind of bad line). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tabcols.h"
#include "anatable.h"
#include "compare.h"
#include "compare_gate.h"
#include "compare_keys.h"
#include "compare_stats.h"

static void check_key(const char *in, const char *want)
{
	char *got = rpt_stable_key(in);
	CHECK(got && !strcmp(got, want), "stable key of '%s': '%s' (want '%s')", in, got, want);
	free(got);
}

static void test_stable_keys(void)
{
	check_key("srv|tcp 10.93.1.2:8090>10.93.1.1:54134", "srv|tcp 10.93.1.2:8090>10.93.1.1:*");
	check_key("tcp 10.0.0.1:45194>10.0.0.2:8080", "tcp 10.0.0.1:*>10.0.0.2:8080");
	check_key("connection|10.93.1.2:8090>10.93.1.1:54134|srv|server",
		  "connection|10.93.1.2:8090>10.93.1.1:*|srv|server");
	check_key("endpoint|10.93.1.2:8090 GET /fast|srv|server", "endpoint|10.93.1.2:8090 GET /fast|srv|server");
	check_key("container|python3[18822]|srv|server", "container|python3[*]|srv|server");
	check_key("vertex|srv:python3[18822]|-", "vertex|srv:python3[*]|-");
	check_key("tcp [2001:db8::1]:40000>[2001:db8::2]:443", "tcp [2001:db8::1]:*>[2001:db8::2]:443");
	check_key("h|ip fe80::ecef:d2ff:fecb:965c:0>ff02::16:0|NOT_SPECIFIED",
		  "h|ip fe80::*:0>ff02::16:0|NOT_SPECIFIED");
	check_key("tcp [fe80::1:2]:40000>[fe80::3]:443", "tcp [fe80::*]:*>[fe80::*]:443");
	check_key("ip fe80::1:0", "ip fe80::*:0");
	check_key("xfe80::1234:5678:0", "xfe80::1234:5678:0");
	check_key("pod 10.0.0.1:8080 > 10.0.0.9:51000", "pod 10.0.0.1:8080 > 10.0.0.9:*");
	check_key("a:40000>b:40001", "a:40000>b:*");
	check_key("weird[12", "weird[12");
	check_key("", "");
}

/* Two connections of one service pair: counts summed, latency weighted
 * by count, retransmission rate from the sums. */
static void test_aggregation(void)
{
	struct np_table *t = TABLE("flows", "Flows", 2,
		{ "host", "str", NULL }, { "flow", "str", NULL }, { "tx_pkts", "count", NULL },
		{ "retrans", "count", NULL }, { "srtt_mean", "ns", NULL },
		{ "throughput_max", "bps", NULL });
	const char *flows[] = { "tcp 10.0.0.2:80>10.0.0.1:40001", "tcp 10.0.0.2:80>10.0.0.1:40002" };
	const double pkts[] = { 100, 300 }, rtx[] = { 1, 5 }, srtt[] = { 1000, 2000 }, mx[] = { 10, 30 };
	for (size_t i = 0; i < 2; i++) {
		size_t r = np_table_row(t);
		np_table_set_str(t, r, 0, "h");
		np_table_set_str(t, r, 1, flows[i]);
		np_table_set_f64(t, r, 2, pkts[i]);
		np_table_set_f64(t, r, 3, rtx[i]);
		np_table_set_f64(t, r, 4, srtt[i]);
		np_table_set_f64(t, r, 5, mx[i]);
	}
	struct np_table *tabs[] = { t };
	struct np_analysis a = { .ntables = 1, .tables = tabs };
	struct rpt_runobs ro;
	CHECK(rpt_runobs_build(&ro, &a) == 0, "build");
	const char *k = "h|tcp 10.0.0.2:80>10.0.0.1:*";
	const struct rpt_obs *o = rpt_runobs_find(&ro, "flows", k, "tx_pkts");
	CHECK(o && o->v == 400 && o->members == 2, "tx_pkts summed: %g", o ? o->v : -1);
	o = rpt_runobs_find(&ro, "flows", k, "srtt_mean");
	CHECK(o && fabs(o->v - 1750) < 1e-9, "srtt weighted by tx_pkts: %g", o ? o->v : -1);
	o = rpt_runobs_find(&ro, "flows", k, "throughput_max");
	CHECK(o && o->v == 30, "max of maxima: %g", o ? o->v : -1);
	o = rpt_runobs_find(&ro, "flows", k, "retrans_rate");
	CHECK(o && o->num == 6 && o->den == 400 && fabs(o->v - 0.015) < 1e-12, "retrans_rate 6/400");
	CHECK_EQ_U(ro.raw_rows, 2);
	CHECK_EQ_U(ro.stable_rows, 1);
	CHECK(rpt_runobs_has_row(&ro, "flows", k), "row index");
	rpt_runobs_free(&ro);
	np_table_free(t);
}

static void test_stats(void)
{
	/* Student's t: P(|T| >= 2.228) with 10 df = 0.05; 1 df: 2 atan(1/t)/pi */
	CHECK_NEAR(rpt_t_sf2(2.228138851986, 10), 0.05, 1e-6);
	CHECK_NEAR(rpt_t_sf2(1.0, 1), 0.5, 1e-9);
	CHECK_NEAR(rpt_t_sf2(0, 5), 1, 1e-12);
	/* pooled t on logs: x = e^{0,0.2}, y = e^{1,1.2}: t = 1 / sqrt(0.02 * 1) = 7.071, 2 df */
	double x[] = { 1, exp(0.2) }, y[] = { exp(1), exp(1.2) };
	struct rpt_test_res r = rpt_runs_ttest(x, 2, y, 2);
	CHECK_NEAR(r.p, rpt_t_sf2(1 / sqrt(0.02), 2), 1e-12);
	CHECK_NEAR(r.p, 0.019419, 1e-5);
	CHECK_NEAR(r.b, exp(0.1), 1e-12);
	r = rpt_runs_ttest(x, 1, y, 1);
	CHECK(isnan(r.p), "1 + 1 runs: no t-test");
	/* proportions 10/1000 vs 30/1000: z = 0.02 / sqrt(0.02*0.98*0.002) = 3.194 */
	r = rpt_prop_test(10, 1000, 30, 1000);
	CHECK_NEAR(r.p, erfc(0.02 / sqrt(0.02 * 0.98 * 0.002) / sqrt(2)), 1e-12);
	CHECK_NEAR(r.p, 0.001402, 2e-6);
	r = rpt_prop_test(0, 1000, 0, 1000);
	CHECK(r.p == 1, "0 vs 0: p 1");
	/* several runs of a counted rate: no overdispersion -> the pooled test;
	 * runs far apart (10 and 50 of 1000 on one side) -> a larger p */
	double k1[] = { 10, 10 }, n1[] = { 1000, 1000 }, k2[] = { 20, 20 };
	struct rpt_test_res pooled = rpt_prop_test(20, 2000, 40, 2000);
	r = rpt_prop_runs_test(k1, n1, 2, k2, n1, 2);
	CHECK_NEAR(r.p, pooled.p, 1e-9);
	double k3[] = { 10, 50 };
	struct rpt_test_res wide = rpt_prop_runs_test(k1, n1, 2, k3, n1, 2);
	pooled = rpt_prop_test(20, 2000, 60, 2000);
	CHECK(wide.p > pooled.p * 10, "overdispersed runs: p %g > pooled %g", wide.p, pooled.p);
	/* bootstrap: disjoint samples give the smallest p, identical ones a large p */
	double a[12], b[12];
	for (int i = 0; i < 12; i++) {
		a[i] = 100 + (i * 5) % 12;
		b[i] = 200 + (i * 7) % 12;
	}
	r = rpt_block_boot(a, 12, b, 12, 999, 42);
	CHECK_NEAR(r.p, 2.0 / 1000, 1e-12);
	CHECK(r.b == 105.5 && r.n == 205.5, "medians %g %g", r.b, r.n);
	r = rpt_block_boot(a, 12, a, 12, 999, 42);
	CHECK(r.p > 0.5, "same samples: p %g", r.p);
	struct rpt_test_res r2 = rpt_block_boot(a, 12, b, 12, 999, 42);
	CHECK(r2.p == 2.0 / 1000, "deterministic in the seed");
	/* BH: p = .01 .04 .03 .005 (m 4): q = .02 .04 .04 .02 */
	double p[] = { 0.01, 0.04, 0.03, 0.005, NAN }, q[5];
	rpt_bh_adjust(p, q, 5);
	CHECK_NEAR(q[0], 0.02, 1e-12);
	CHECK_NEAR(q[1], 0.04, 1e-12);
	CHECK_NEAR(q[2], 0.04, 1e-12);
	CHECK_NEAR(q[3], 0.02, 1e-12);
	CHECK(isnan(q[4]), "NAN stays out");
}

static void test_gate_default(void)
{
	struct rpt_gate g;
	struct rpt_mineff e;
	rpt_gate_init(&g);
	CHECK(rpt_gate_match(&g, "transactions", "endpoint|1.2.3.4:80 GET /x|h|server", "p99", "ns", &e),
	      "endpoint p99 gated");
	CHECK(e.rel_pct == 10 && e.abs == 100e3, "latency family 10 %% and 100 us");
	CHECK(!rpt_gate_match(&g, "transactions", "connection|1.2.3.4:80>1.2.3.5:*|h|server", "p99",
			      "ns", &e), "connection p99 not gated");
	CHECK(!rpt_gate_match(&g, "decomp", "all|receiver_stack", "p99", "ns", &e), "decomp not gated");
	CHECK(e.rel_pct == 20 && e.abs == 20e3, "host-stack family");
	CHECK(rpt_gate_match(&g, "loss", "tcp a:1>b:*", "loss_rate", "ratio", &e), "loss gated");
	CHECK(e.abs == 0.002, "loss: 0.2 points");
	CHECK(rpt_gate_match(&g, "netcpu", "h", "cpu_per_request", "ns", &e), "netcpu per request");
	CHECK(rpt_family_of("netcpu", "cpu_per_request", "ns") == RPT_FAM_NETCPU, "netcpu family");
	/* --metric replaces the default set; "@" restricts the key */
	rpt_gate_add(&g, "decomp.p99@all|*", false, (struct rpt_mineff){ NAN, 0 });
	CHECK(rpt_gate_match(&g, "decomp", "all|receiver_stack", "p99", "ns", &e) && e.abs == 0,
	      "decomp gated by the rule, abs overridden");
	CHECK(!rpt_gate_match(&g, "transactions", "endpoint|x", "p99", "ns", &e), "default set replaced");
	g.use_default = 1;
	CHECK(rpt_gate_match(&g, "transactions", "endpoint|x", "p99", "ns", &e), "default on again");
	rpt_gate_set_rel(&g, 3);
	CHECK(rpt_gate_match(&g, "transactions", "endpoint|x", "p50", "ns", &e) && e.rel_pct == 3,
	      "--threshold sets every family's rel");
	rpt_gate_free(&g);
}

static int parse(struct rpt_gate *g, const char *text, char *err, size_t n)
{
	rpt_gate_free(g);
	rpt_gate_init(g);
	return rpt_gate_parse(g, text, strlen(text), err, n);
}

static void test_config(void)
{
	struct rpt_gate g;
	struct rpt_mineff e;
	char err[128] = "";
	rpt_gate_init(&g);
	const char *good =
		"# CI gate for the checkout service\n"
		"alpha 0.01\n"
		"default on   # keep the built-in set\n"
		"family latency rel 15% abs 2ms\r\n"
		"family loss abs 0.2%\n"
		"\n"
		"gate decomp.p99@all|* rel 30 abs 50us\n"
		"ignore \"transactions.p999@*GET /health*\"\n";
	CHECK(parse(&g, good, err, sizeof(err)) == 0, "good config parses (%s)", err);
	CHECK(g.alpha == 0.01 && g.use_default == 1, "alpha, default");
	CHECK(g.fam[RPT_FAM_LATENCY].rel_pct == 15 && g.fam[RPT_FAM_LATENCY].abs == 2e6, "family latency");
	CHECK(fabs(g.fam[RPT_FAM_LOSS].abs - 0.002) < 1e-15 && g.fam[RPT_FAM_LOSS].rel_pct == 10,
	      "family loss abs 0.2%% = 0.002, rel kept");
	CHECK(rpt_gate_match(&g, "decomp", "all|wire", "p99", "ns", &e) && e.rel_pct == 30 && e.abs == 50e3,
	      "gate rule with its own minimum");
	CHECK(!rpt_gate_match(&g, "transactions", "endpoint|1:80 GET /health|h|server", "p999", "ns", &e),
	      "ignore wins");
	CHECK(rpt_gate_match(&g, "transactions", "endpoint|1:80 GET /x|h|server", "p99", "ns", &e) &&
	      e.rel_pct == 15, "default set with the family's new minimum");
	static const char *const bad[][2] = {
		{ "alpha 2\n", "line 1:" }, { "alpha\n", "line 1:" }, { "\n\nfoo bar\n", "line 3: unknown" },
		{ "default maybe\n", "line 1:" }, { "family nope rel 5\n", "unknown family" },
		{ "family latency\n", "needs rel" }, { "gate\n", "needs a pattern" },
		{ "gate x rel\n", "need a value" }, { "gate x rel -5\n", "bad 'rel'" },
		{ "gate x abs 5parsecs\n", "bad 'abs'" }, { "gate x speed 5\n", "expected 'rel'" },
		{ "ignore a b\n", "one pattern" }, { "gate a b c d e f g h i\n", "too many words" },
		{ "alpha nan\n", "line 1:" }, { "gate \"x y\n", "unterminated" }, { "gate x abs 1e999\n", "bad 'abs'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		int rc = parse(&g, bad[i][0], err, sizeof(err));
		CHECK(rc < 0 && strstr(err, bad[i][1]), "bad config %zu refused: '%s'", i, err);
	}
	char longline[700];
	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	CHECK(parse(&g, longline, err, sizeof(err)) < 0 && strstr(err, "longer"), "long line refused");
	const char nul[] = "alpha 0.1\0x\n";
	rpt_gate_free(&g);
	rpt_gate_init(&g);
	CHECK(rpt_gate_parse(&g, nul, sizeof(nul) - 1, err, sizeof(err)) < 0 && strstr(err, "NUL"),
	      "NUL byte refused");
	CHECK(rpt_gate_load(&g, "/nonexistent/gate.conf", err, sizeof(err)) < 0, "missing file");
	rpt_gate_free(&g);
}

int main(void)
{
	test_stable_keys();
	test_aggregation();
	test_stats();
	test_gate_default();
	test_config();
	return tap_done();
}
