/* The incident summary: a handful of statements a person reads first, each
 * computed from the analysis tables alone (never from what a test or demo
 * injected) and each naming the table that proves it. Slow endpoints are
 * measured against the other endpoints of the same service, lost packets are
 * grouped by where and why they were dropped, then clock quality and the
 * recorder's own health. Items are ranked by an estimate of the latency they
 * add for users: request time added per second of traffic. */
#ifndef RPT_INCIDENT_H
#define RPT_INCIDENT_H

#include <stdio.h>
#include "anatable.h"

enum rpt_inc_kind {
	RPT_INC_SLOW = 0,   /* an endpoint slower than its service's others */
	RPT_INC_CAUSE,      /* a downstream endpoint carrying that added time */
	RPT_INC_WHERE,      /* where the slowest requests spent their time */
	RPT_INC_PATTERN,    /* what the degraded requests have in common */
	RPT_INC_TAIL,       /* p99 far above p50 */
	RPT_INC_LOSS,       /* packets lost at one place for one reason */
	RPT_INC_CLOCK,
	RPT_INC_RECORDER,
	RPT_INC_NKINDS
};

#define RPT_INC_MAX 24

struct rpt_inc_item {
	enum rpt_inc_kind kind;
	double impact;          /* ns of request time added per second; ranks */
	char subject[160];      /* endpoint, service or host the line is about */
	char host[64];
	double value_ns;        /* the measured latency / offset (NAN if none) */
	double baseline_ns;     /* what it is compared with (NAN if none) */
	double added_ns;        /* value - baseline where that means something */
	double bound_ns;        /* clock: error bound */
	double count;           /* requests, packets, events (NAN if none) */
	char table[80];         /* table(s) proving it, e.g. "transactions" */
	char text[640];         /* the sentence, without the table reference */
};

struct rpt_incident {
	size_t n;
	struct rpt_inc_item items[RPT_INC_MAX];
};

const char *rpt_inc_kind_name(enum rpt_inc_kind k);     /* CSV: "slow_endpoint" */
const char *rpt_inc_kind_label(enum rpt_inc_kind k);    /* text: "SLOW" */
/* Fills inc from a (ranked, most user impact first). */
void rpt_incident_build(const struct np_analysis *a, struct rpt_incident *inc);
void rpt_incident_text(FILE *f, const struct rpt_incident *inc, size_t width);
/* One row per item; numbers in ns / counts, RFC 4180. */
int rpt_incident_csv(FILE *f, const struct np_analysis *a);

#endif
