/* The streamed analysis's tables (ana_decomp_stream_tables): sketches of
 * two windows merged must give the counts, minimum, maximum and quantiles of
 * one sketch fed every value (bucket counts add exactly), within the
 * sketch's stated 0.79 % of the exact quantile; the stream table holds the
 * run's totals and each window's counts. The pass structure itself is
 * tested end to end (tests/e2e/ana_stream.sh). */
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "tap.h"

static const struct np_table *find_table(const struct ana_out *o, const char *name)
{
	for (size_t i = 0; i < o->tables.n; i++)
		if (!strcmp(o->tables.v[i]->name, name))
			return o->tables.v[i];
	return NULL;
}

static int find_row(const struct np_table *t, const char *col, const char *val, const char *col2,
		    const char *val2)
{
	int c = np_table_find_col(t, col), c2 = col2 ? np_table_find_col(t, col2) : -1;
	for (size_t r = 0; c >= 0 && r < t->nrows; r++) {
		const struct np_cell *a = np_table_cell_c(t, r, (size_t)c);
		const struct np_cell *b = c2 >= 0 ? np_table_cell_c(t, r, (size_t)c2) : NULL;
		if (a->kind == NP_CELL_STR && !strcmp(a->s, val) &&
		    (!b || (b->kind == NP_CELL_STR && !strcmp(b->s, val2))))
			return (int)r;
	}
	return -1;
}

static double num(const struct np_table *t, int row, const char *col)
{
	int c = np_table_find_col(t, col);
	if (!t || row < 0 || c < 0)
		return NAN;
	const struct np_cell *x = np_table_cell_c(t, (size_t)row, (size_t)c);
	return x->kind == NP_CELL_UINT ? (double)x->u : x->kind == NP_CELL_INT ? (double)x->i
	       : x->kind == NP_CELL_F64 ? x->f : NAN;
}

/* The exact q-quantile of 1..n (nearest rank). */
static double exact_q(uint64_t n, double q)
{
	uint64_t k = (uint64_t)ceil(q * (double)n);
	return (double)(k ? k : 1);
}

static void test_merged_tables(void)
{
	struct ana_model m;
	ana_model_init(&m, NULL);
	struct ana_stream_acc acc = { 0 };
	struct np_sketch one, w[2];
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_init(&acc.all[s]);
	np_sketch_init(&one);
	np_sketch_init(&w[0]);
	np_sketch_init(&w[1]);
	/* total latency 1..20000 ns: the first half in window 0, the rest in 1 */
	for (uint64_t v = 1; v <= 20000; v++) {
		np_sketch_add(&w[v > 10000], v, 1);
		np_sketch_add(&one, v, 1);
	}
	np_sketch_merge(&acc.all[ANA_SEG_TOTAL], &w[0]);
	np_sketch_merge(&acc.all[ANA_SEG_TOTAL], &w[1]);
	np_sketch_add(&acc.all[ANA_SEG_WIRE], 500, 20000);
	acc.whole[ANA_SEG_TOTAL] = 4.0e6;
	acc.whole[ANA_SEG_WIRE] = 1.0e6;
	struct ana_stream_win win[2] = {
		{ .lo = 100, .hi = 200, .events = 90000, .acc = { .pkts = 10000, .sent = 10000, .received = 9990,
								  .lost = 10, .copies = 10002, .active = 3 } },
		{ .lo = 200, .hi = 300, .events = 91000, .acc = { .pkts = 10000, .sent = 10000, .received = 10000,
								  .copies = 10000, .active = 2 } },
	};
	acc.pkts = 20000; acc.sent = 20000; acc.received = 19990; acc.lost = 10; acc.copies = 20002;
	acc.flows = 4;
	struct ana_out o;
	ana_out_init(&o);
	ana_decomp_stream_tables(&m, &acc, win, 2, &o);
	const struct np_table *d = find_table(&o, "decomp"), *st = find_table(&o, "stream");
	CHECK(d && st, "decomp and stream tables written");
	if (!d || !st)
		goto out;
	int rt = find_row(d, "flow", "all", "segment", "total");
	CHECK_NEAR(num(d, rt, "count"), 20000, 0);
	CHECK_NEAR(num(d, rt, "max"), 20000, 0);
	for (const double *q = (const double[]){ 0.5, 0.9, 0.99, 0.999, -1 }; *q >= 0; q++) {
		const char *col = *q == 0.5 ? "p50" : *q == 0.9 ? "p90" : *q == 0.99 ? "p99" : "p999";
		double v = num(d, rt, col), e = exact_q(20000, *q);
		CHECK(fabs(v - e) <= 0.0079 * e + 1, "%s %.0f vs exact %.0f", col, v, e);
		CHECK_NEAR(v, (double)np_sketch_quantile(&one, *q), 0);   /* as one sketch */
	}
	CHECK_NEAR(num(d, rt, "mean"), 10000.5, 1e-6);
	int rw = find_row(d, "flow", "all", "segment", "wire");
	CHECK_NEAR(num(d, rw, "p50"), 500, 500 * 0.0079);
	CHECK_NEAR(num(d, rw, "share_mean"), 25.0, 1e-9);
	CHECK(find_row(d, "flow", "all", "segment", "qdisc") < 0, "no row for an empty segment");
	int ra = find_row(st, "window", "all", NULL, NULL);
	CHECK_NEAR(num(st, ra, "packets"), 20000, 0);
	CHECK_NEAR(num(st, ra, "lost"), 10, 0);
	CHECK_NEAR(num(st, ra, "copies"), 20002, 0);
	CHECK_NEAR(num(st, ra, "flows"), 4, 0);
	int r0 = find_row(st, "window", "0", NULL, NULL), r1 = find_row(st, "window", "1", NULL, NULL);
	CHECK_NEAR(num(st, r0, "from"), 100, 0);
	CHECK_NEAR(num(st, r1, "to"), 300, 0);
	CHECK_NEAR(num(st, r0, "received"), 9990, 0);
	CHECK_NEAR(num(st, r1, "events"), 91000, 0);
	CHECK_NEAR(num(st, r0, "flows"), 3, 0);
out:
	ana_out_free(&o);
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_free(&acc.all[s]);
	np_sketch_free(&one);
	np_sketch_free(&w[0]);
	np_sketch_free(&w[1]);
	ana_model_free(&m);
}

int main(void)
{
	test_merged_tables();
	return tap_done();
}
