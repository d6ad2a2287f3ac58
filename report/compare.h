/* npreport compare BASE NEW: metric by metric, base vs new (median of the
 * per-interval samples with a 95 % CI when both sides carry ANA_SERIES,
 * else the table value), relative change, Mann-Whitney significance, and
 * the verdict used as the CI exit status. */
#ifndef RPT_COMPARE_H
#define RPT_COMPARE_H

#include <stdio.h>
#include "anatable.h"
#include "texttab.h"

enum rpt_dir { RPT_DIR_NONE = 0, RPT_DIR_LOWER, RPT_DIR_HIGHER };

/* Which way is worse for a column; -1 when it is not a comparable metric
 * (strings, ids, timestamps). */
int rpt_metric_direction(const char *name, const char *unit);

struct rpt_cmpopt {
	double threshold_pct;        /* regressions smaller than this pass (default 5) */
	double alpha;                /* significance level (default 0.05) */
	const char *const *metrics;  /* --metric patterns (fnmatch on column, table.column) */
	size_t nmetrics;
	bool csv;
	const char *base_path, *new_path;
};

struct rpt_cmpstats {
	size_t metrics, significant, regressions, improvements, unmatched, no_samples, too_few;
};

/* Writes the comparison to out (summary line last); the summary line also
 * goes to stderr in CSV mode. Returns 1 on a regression, 0 otherwise, -1 on
 * an internal error. */
int rpt_compare(FILE *out, const struct np_analysis *base, const struct np_analysis *neu,
		const struct rpt_cmpopt *o, const struct rpt_textopt *to, struct rpt_cmpstats *st);

#endif
