/* Display units for analysis columns: a column's unit string ("ns", "bytes",
 * "bps", ...) is mapped to a kind, and one scale (µs, MB, Mbps ...) is picked
 * per column from its typical magnitude so a column reads in one unit. */
#ifndef RPT_UNITS_H
#define RPT_UNITS_H

#include <stddef.h>

enum rpt_ukind {
	RPT_U_PLAIN = 0,  /* unknown unit: number as is, unit shown verbatim */
	RPT_U_NS,         /* duration in ns */
	RPT_U_TIME,       /* timestamp in ns on the reference timeline */
	RPT_U_BYTES,
	RPT_U_BPS,
	RPT_U_RATE,       /* per second */
	RPT_U_RATIO,      /* 0..1, shown as % */
	RPT_U_PCT,
	RPT_U_PPM,
	RPT_U_COUNT,
	RPT_U_STR,        /* str, id */
	RPT_U_BOOL,
};

struct rpt_scale {
	enum rpt_ukind kind;
	const char *label;    /* shown under the column name ("" for none) */
	double div;           /* displayed = (value - offset) / div */
	double offset;        /* time columns: the analysis start */
	int decimals;
};

enum rpt_ukind rpt_ukind_of(const char *unit);
/* Scale for values whose typical magnitude (e.g. median of |v|) is typical. */
struct rpt_scale rpt_scale_pick(enum rpt_ukind k, const char *unit, double typical, int all_integral);
/* Formats v with scale s (no unit label). Returns the length. */
int rpt_fmt_scaled(char *buf, size_t n, double v, const struct rpt_scale *s);
/* Formats v with its own best scale and the label, e.g. "12.3 ms". */
int rpt_fmt_auto(char *buf, size_t n, double v, const char *unit);
/* Display width of a UTF-8 string (code points; all we print is narrow). */
size_t rpt_strwidth(const char *s);
/* Median of |v| over finite non-zero values (0 if none); v is reordered. */
double rpt_typical(double *v, size_t n);

#endif
