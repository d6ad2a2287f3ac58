/* The text report: summary (inputs, damage, the three worst findings), then
 * every selected table in section order. */
#ifndef RPT_TEXTREP_H
#define RPT_TEXTREP_H

#include <stdio.h>
#include "anatable.h"
#include "sections.h"
#include "texttab.h"

/* Start of the analysis timeline: the earliest series timestamp or
 * time_ns cell (0 if none). */
double rpt_analysis_t0(const struct np_analysis *a);
/* Findings sorted worst first (stable); returns a malloc'd index array. */
size_t *rpt_findings_order(const struct np_analysis *a);
const char *rpt_severity_name(int severity);
/* The files behind a (several when shown as one): each gets its own
 * summary block. */
struct rpt_inputs {
	const struct np_analysis *parts;
	const char *const *paths;
	size_t n;
};
void rpt_text_report(FILE *f, const struct np_analysis *a, const struct rpt_inputs *in,
		     const struct rpt_selection *sel, const struct rpt_textopt *o);
/* The meta's array of maps under key (e.g. "hosts") as a table of strings,
 * or NULL; the caller frees it. */
struct np_table *rpt_meta_table(const struct np_analysis *a, const char *key);
/* Word-wraps text to width, the first line starting at column first_col,
 * continuation lines indented by indent. */
void rpt_wrap(FILE *f, const char *text, size_t first_col, size_t indent, size_t width);
/* Formats a scalar msgpack object (str, number, bool, nil) into buf. */
void rpt_obj_scalar(char *buf, size_t size, const msgpack_object *o);

#endif
