/* npreport compare BASE... -- NEW...: metric by metric on stable keys
 * (compare_keys.h), tested against between-run variation (compare_stats.h),
 * Benjamini-Hochberg across the metrics, gated by compare_gate.h; the
 * verdict is the CI exit status. Output in compare_out.c. */
#ifndef RPT_COMPARE_H
#define RPT_COMPARE_H

#include <stdio.h>
#include "anatable.h"
#include "compare_gate.h"
#include "texttab.h"

enum rpt_dir { RPT_DIR_NONE = 0, RPT_DIR_LOWER, RPT_DIR_HIGHER };

/* Which way is worse for a column; -1 when it is not a comparable metric
 * (strings, ids, timestamps). */
int rpt_metric_direction(const char *name, const char *unit);

enum rpt_cmpfmt { RPT_CMP_TEXT, RPT_CMP_CSV, RPT_CMP_JUNIT, RPT_CMP_MARKDOWN };

struct rpt_cmpopt {
	double alpha;                   /* false discovery rate (default 0.05) */
	const struct rpt_gate *gate;
	enum rpt_cmpfmt format;
	const char *const *base_paths, *const *new_paths;
	size_t nbase, nnew;
};

struct rpt_cmpstats {
	size_t metrics, tested, gated, gated_tested, significant, regressions, improvements;
	size_t not_judged, unmatched_base, unmatched_new, gated_missing;
	size_t event_rows, raw_rows, stable_rows;
	size_t tail_short;              /* gate quantiles left ungated: too few observations */
};

enum rpt_test_kind { RPT_TEST_NONE, RPT_TEST_RUNS, RPT_TEST_BOOT, RPT_TEST_PROP };

/* One compared metric. */
struct rpt_cmprow {
	const char *table, *metric, *unit, *key;
	int dir;
	enum rpt_family fam;
	struct rpt_mineff eff;
	bool gated;
	size_t kb, kn;                  /* runs with the metric */
	size_t sb, sn;                  /* per-interval samples (one run a side) */
	enum rpt_test_kind test;
	double b, n, delta_pct, delta_abs, p, q;
	bool significant, big_enough, regression, improvement;
	const char *verdict;
	/* The fewest observations (requests) in a run of either side, and the
	 * quantile's need: a gate quantile with tail_n < tail_need is tail_short,
	 * reported but not gated (min-tail). */
	double tail_n, tail_need;
	const char *tail_what;          /* the count column: "requests", "count" */
	bool tail_short;
};

struct rpt_unmatched { char *table, *key; bool in_base; bool gated; };

struct rpt_cmpres {
	struct rpt_cmprow *rows;
	size_t nrows, cap;
	struct rpt_unmatched *um;
	size_t num, umcap;
	char *event_tables;
	struct rpt_cmpstats st;
};

/* Writes the comparison to out (CSV: summary line on stderr). Returns 1 on
 * a gated regression, 0 otherwise, -1 on an internal error. */
int rpt_compare(FILE *out, const struct np_analysis *base, size_t nbase,
		const struct np_analysis *neu, size_t nnew, const struct rpt_cmpopt *o,
		const struct rpt_textopt *to, struct rpt_cmpstats *st);

/* compare_out.c */
void rpt_cmp_write(FILE *out, const struct rpt_cmpres *r, const struct rpt_cmpopt *o,
		   const struct rpt_textopt *to);
void rpt_cmp_summary_line(FILE *f, const struct rpt_cmpres *r);

#endif
