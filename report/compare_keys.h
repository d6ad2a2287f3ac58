/* What of an analysis survives a rerun (docs/NPREPORT.md, "Stable keys"):
 * row keys with ephemeral ports and pids replaced by '*', rows that then
 * share a key aggregated (counts summed, latencies weighted by their count,
 * rates recomputed from their counts), plus derived per-run metrics
 * (retransmission rate, network CPU per request). One rpt_runobs per
 * analysis file: a sorted list of (table, stable key, metric) values. */
#ifndef RPT_COMPARE_KEYS_H
#define RPT_COMPARE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include "anatable.h"

/* The key cell s with ephemeral ports and pids replaced (caller frees):
 * "tcp 10.0.0.1:45194>10.0.0.2:8080" -> "tcp 10.0.0.1:*>10.0.0.2:8080",
 * "python3[1234]" -> "python3[*]", IPv6 link-local (random MACs) -> "fe80::*". */
char *rpt_stable_cell(const char *s);
/* The stable key of a '|'-joined row key (caller frees). */
char *rpt_stable_key(const char *rowkey);

struct rpt_obs {
	const char *table, *metric, *unit;   /* point into the analysis or static */
	char *key;                           /* stable key */
	int dir;                             /* enum rpt_dir */
	double v;                            /* the run's value */
	double num, den;                     /* a counted rate: v = num / den (den > 0) */
	const double *samples;               /* per-interval samples (one member row only) */
	size_t nsamples;
	size_t members;                      /* raw rows aggregated into this one */
	/* What a quantile of this row rests on: its `requests` column, else
	 * `count`, summed over the members; NAN when the row has neither. */
	double nobs;
	const char *nobs_name;               /* "requests" or "count"; NULL */
};

struct rpt_runobs {
	struct rpt_obs *v;
	size_t n, cap;
	size_t raw_rows, stable_rows;        /* rows of compared tables, before/after */
	size_t event_rows;                   /* rows of tables keyed by time */
	char **rowkeys;                      /* "table\x1fstable key", sorted, unique */
	size_t nrowkeys, rowcap;
	char *event_tables;                  /* comma separated */
};

/* Fills ro from a (which must outlive ro). Returns 0 or -ENOMEM. */
int  rpt_runobs_build(struct rpt_runobs *ro, const struct np_analysis *a);
void rpt_runobs_free(struct rpt_runobs *ro);
/* Sorted by (table, key, metric): the observation or NULL. */
const struct rpt_obs *rpt_runobs_find(const struct rpt_runobs *ro, const char *table,
				      const char *key, const char *metric);
bool rpt_runobs_has_row(const struct rpt_runobs *ro, const char *table, const char *key);
int  rpt_obs_cmp(const void *a, const void *b);

#endif
