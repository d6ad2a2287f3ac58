/* npreport --html FILE: the report as one self-contained HTML file. */
#ifndef RPT_HTML_H
#define RPT_HTML_H

#include <stddef.h>
#include "anatable.h"

/* Writes the HTML report of a to path; inputs name the analysis files.
 * Returns 0 or -1 (reported on stderr). */
int rpt_html_report(const char *path, const struct np_analysis *a, const char *const *inputs,
		    size_t ninputs);

#endif
