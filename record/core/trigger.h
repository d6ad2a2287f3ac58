/* Flight-recorder trigger conditions (--trigger-on EXPR): parsed once, then
 * evaluated on every interval's records before they are written.
 *
 *   alert            any perfmon ALERTS record with at least one alert
 *   alert>N          more than N alerts in one interval
 *   retrans>N/s      TCP retransmissions per second (FLOWS records) above N
 *   drops>N/s        kernel packet drops per second (DROPS records) above N
 *
 * N may be fractional; "/s" may be omitted (rates are always per second).
 * A condition fires on its rising edge: once it fired it re-arms only after
 * an interval in which it was false, so a sustained condition makes one dump.
 * Body keys read: docs/records/incident.md. */
#ifndef NP_REC_TRIGGER_H
#define NP_REC_TRIGGER_H

#include <stddef.h>
#include <stdint.h>
#include "container.h"

struct rec_trigger;

/* What the last firing saw (for the TRIGGER record). */
struct rec_trigger_fire {
	const char *expr;      /* the expression as given */
	const char *metric;    /* "alert", "retrans", "drops" */
	double value;          /* measured: count (alert) or rate per second */
	double threshold;
};

/* Parses n expressions. 0, or -EINVAL with err naming the bad one. */
int  rec_trigger_parse(struct rec_trigger **t, const char *const *exprs, unsigned n,
		       char *err, size_t errlen);
/* 1 when a condition fired on this interval (why: "retrans>100/s: 340.0/s"),
 * 0 otherwise. interval_ns: length of the interval the records cover. */
int  rec_trigger_check(struct rec_trigger *t, const struct np_recbuf *rb, uint64_t interval_ns,
		       char *why, size_t whylen);
const struct rec_trigger_fire *rec_trigger_last(const struct rec_trigger *t);
void rec_trigger_free(struct rec_trigger *t);

/* Sums of one interval's trigger metrics, decoded from the records in rb
 * (exposed for tests and for the progress line). */
struct rec_trigger_counts {
	uint64_t alerts, retrans, drops;
};
void rec_trigger_count(const struct np_recbuf *rb, struct rec_trigger_counts *out);

#endif
