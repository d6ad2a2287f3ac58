/* Renders any analysis table as aligned text: one display unit per column,
 * numbers right-aligned, long strings shortened in the middle. A row is
 * never split: when the table is wider than the terminal the least telling
 * columns are left out (named under the table); --wide shows them all. */
#ifndef RPT_TEXTTAB_H
#define RPT_TEXTTAB_H

#include <stdbool.h>
#include <stdio.h>
#include "anatable.h"

struct rpt_textopt {
	int width;            /* terminal columns (>= 40) */
	size_t max_rows;      /* 0 = all */
	double t0;            /* start of the analysis timeline (time_ns columns) */
	const char *heading;  /* overrides the table title when set */
	bool legend;          /* print each column's description under the table */
	bool wide;            /* every column on one row, however wide */
};

void rpt_text_table(FILE *f, const struct np_table *t, const struct rpt_textopt *o);
/* Copies s into buf shortened to at most w display columns ("…" in the middle). */
void rpt_shorten(char *buf, size_t size, const char *s, size_t w);

#endif
