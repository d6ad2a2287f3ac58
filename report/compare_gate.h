/* Which compared metrics gate a build, and by how much they must move
 * (docs/NPREPORT.md, "The gate"). Built in: endpoint latency p50/p99/p999,
 * request throughput, loss and retransmission rates, network CPU per
 * request. --metric and `gate` lines of a config file replace that set
 * (`default on` keeps it). Every metric belongs to a family with a minimum
 * effect: a change gates only when it is at least `rel` percent AND `abs`
 * (in the metric's unit) away from the base. */
#ifndef RPT_COMPARE_GATE_H
#define RPT_COMPARE_GATE_H

#include <stdbool.h>
#include <stddef.h>

enum rpt_family { RPT_FAM_LATENCY, RPT_FAM_THROUGHPUT, RPT_FAM_LOSS, RPT_FAM_NETCPU,
		  RPT_FAM_HOSTSTACK, RPT_FAM_OTHER, RPT_NFAM };

struct rpt_mineff { double rel_pct, abs; };

struct rpt_gate_rule {
	char *metric;     /* fnmatch on table.metric, metric, table or section */
	char *key;        /* fnmatch on the stable row key; NULL = any */
	struct rpt_mineff eff;   /* NAN fields: the family's */
	bool exclude;     /* an `ignore` line */
};

struct rpt_gate {
	double alpha;                   /* NAN: not set */
	double min_tail;                /* observations beyond a gated quantile (min-tail) */
	int use_default;                /* -1: only when no rule was given */
	struct rpt_mineff fam[RPT_NFAM];
	struct rpt_gate_rule *rules;
	size_t nrules;
};

#define RPT_GATE_MAX_RULES 256
/* A quantile q is gated only where every run has n x min(q, 1 - q) >= this
 * many observations beyond it (n: the row's requests): fewer, and the p99
 * of ~600 requests is their 6th largest, which one scheduler stall moves. */
#define RPT_GATE_MIN_TAIL  10
#define RPT_GATE_MAX_FILE  (64 * 1024)

void rpt_gate_init(struct rpt_gate *g);
void rpt_gate_free(struct rpt_gate *g);
const char *rpt_family_name(enum rpt_family f);
enum rpt_family rpt_family_of(const char *table, const char *metric, const char *unit);
/* --metric PATTERN[@KEY]. Returns 0 or -1. */
int  rpt_gate_add(struct rpt_gate *g, const char *pattern, bool exclude, struct rpt_mineff eff);
/* Parses a config file's text (need not be NUL-terminated). Returns 0, or -1
 * with "line N: why" in err. Unknown directives are errors: a typo must not
 * silently widen the gate. */
int  rpt_gate_parse(struct rpt_gate *g, const char *text, size_t len, char *err, size_t errlen);
int  rpt_gate_load(struct rpt_gate *g, const char *path, char *err, size_t errlen);
/* Is this metric gated? *eff gets its minimum effect. */
bool rpt_gate_match(const struct rpt_gate *g, const char *table, const char *key,
		    const char *metric, const char *unit, struct rpt_mineff *eff);
/* The fewest observations for min_tail of them to lie beyond the quantile a
 * metric names (p50, p99, p999, jitter_p99_abs ...): ceil(min_tail /
 * min(q, 1 - q)); 0 when the name holds no quantile or min_tail is 0. */
double rpt_quantile_needs(const char *metric, double min_tail);
/* Sets the relative minimum of every family (--threshold). */
void rpt_gate_set_rel(struct rpt_gate *g, double rel_pct);

#endif
