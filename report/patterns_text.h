/* Detail of the "patterns" table in the text report (report/patterns_text.c). */
#ifndef RPT_PATTERNS_TEXT_H
#define RPT_PATTERNS_TEXT_H

#include <stdio.h>
#include "anatable.h"

/* Each pattern of t with its conditions in full and the first max_ids of its
 * request ids (0: all of them). */
void rpt_patterns_detail(FILE *f, const struct np_analysis *a, const struct np_table *t, size_t width,
			 size_t max_ids);

#endif
