/* Plots with gnuplot: for each plot a data file and a .gp script are
 * written to DIR, then gnuplot renders PNG and SVG. Without gnuplot one
 * notice is printed and the data + scripts stay for later. */
#ifndef RPT_PLOTS_H
#define RPT_PLOTS_H

#include "anatable.h"

struct rpt_plotres {
	size_t scripts;     /* .gp scripts written */
	size_t rendered;    /* scripts gnuplot ran successfully */
	bool have_gnuplot;
};

/* Returns 0, or -1 when DIR cannot be written (reported on stderr). */
int rpt_plots(const char *dir, const struct np_analysis *a, struct rpt_plotres *res);
/* Path of the gnuplot binary (NP_GNUPLOT overrides; "" disables), or NULL. */
const char *rpt_gnuplot_path(void);

#endif
