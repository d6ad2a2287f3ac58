/* Renders any analysis table as aligned text: one display unit per column,
 * numbers right-aligned, long strings shortened in the middle. A row is
 * never split: when the table is wider than the terminal the least telling
 * columns are left out (named under the table); --wide shows them all. */
#ifndef RPT_TEXTTAB_H
#define RPT_TEXTTAB_H

#include <stdbool.h>
#include <stdio.h>
#include "anatable.h"
#include "units.h"

struct rpt_textopt {
	int width;            /* terminal columns (>= 40) */
	size_t max_rows;      /* 0 = all */
	double t0;            /* start of the analysis timeline (time_ns columns) */
	const char *heading;  /* overrides the table title when set */
	bool legend;          /* print each column's description under the table */
	bool wide;            /* every column on one row, however wide */
	const char *strip;    /* prefix all host names share ("vm/"), left out of cells */
	bool fold;            /* fold connections of a service pair where counts add up */
};

/* The cells of a table as displayed: one scale per column (label under the
 * name), numbers formatted, names without the unit suffix. Used by the text
 * and the HTML report. */
struct rpt_colview {
	struct rpt_scale sc;
	int numeric;
	size_t width;
	double typical, smallest;   /* median and smallest non-zero |value| */
};

#define RPT_NAMEBUF 64

/* The table's cells as text, the header names and per column view. */
struct rpt_grid {
	size_t nrows, ncols;
	char **cells;              /* nrows * ncols strings */
	const char **names;
	char *namebuf;             /* names shortened by their unit suffix */
	struct rpt_colview *cv;
};

int rpt_grid_build(struct rpt_grid *g, const struct np_table *t, size_t nrows, double t0);
void rpt_grid_free(struct rpt_grid *g);

void rpt_text_table(FILE *f, const struct np_table *t, const struct rpt_textopt *o);
/* Copies s into buf shortened to at most w display columns ("…" in the middle). */
void rpt_shorten(char *buf, size_t size, const char *s, size_t w);

#endif
