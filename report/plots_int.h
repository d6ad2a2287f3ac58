/* Internals shared by the plot modules (report/plots*.c): one plot is a
 * NAME.dat + NAME.gp pair in the plot directory, rendered by gnuplot. */
#ifndef RPT_PLOTS_INT_H
#define RPT_PLOTS_INT_H

#include <stdio.h>
#include "plots.h"

#define RPT_PLOT_MAXLINES 8     /* curves per plot a reader can tell apart */

struct rpt_plotctx {
	const char *dir;
	const struct np_analysis *a;
	double t0;
	struct rpt_plotres *res;
	const char *gnuplot;
	int err;
};

FILE *rpt_open(struct rpt_plotctx *c, const char *name, const char *ext);
/* Plot names become file names: [A-Za-z0-9_-]. */
void rpt_plotname(char *buf, size_t size, const char *a, const char *b);
/* s as a gnuplot double-quoted string: gnuplot runs `...` even inside
 * quotes, so no backquote from the analysis reaches a script. */
void rpt_gp_str(FILE *f, const char *s);
/* A label built in place made safe the same way (quotes, backslashes,
 * backquotes become ', control characters blanks). */
void rpt_gp_label(char *s);
/* Common settings, the palette, title and axis labels. */
void rpt_gp_head(FILE *f, const char *title, const char *xlabel, const char *ylabel);
/* The plot command drawn into NAME.png and NAME.svg. */
void rpt_gp_outputs(FILE *f, const char *name, const char *plotcmd);
void rpt_run_gnuplot(struct rpt_plotctx *c, const char *name);
/* Per-second counts, one "# key" block (gnuplot index) per key. */
void rpt_dat_bins(FILE *d, const char *const *keys, size_t nkeys, const double *bins, size_t nbins);
int rpt_open_pair(struct rpt_plotctx *c, const char *name, FILE **d, FILE **g);

/* report/plots_net.c: the plots of the incident. */
void rpt_plot_endpoints(struct rpt_plotctx *c);
void rpt_plot_service_decomp(struct rpt_plotctx *c, const struct np_table *t);
void rpt_plot_latency_time(struct rpt_plotctx *c);
void rpt_plot_loss_pairs(struct rpt_plotctx *c);
void rpt_plot_clock(struct rpt_plotctx *c);
void rpt_plot_retrans_time(struct rpt_plotctx *c);

#endif
