/* CSV output (RFC 4180 via libcsv): one file per table, raw numbers in base
 * units (ns, bytes, bits/s), a header row naming the unit where the column
 * name does not already, CRLF line ends. */
#ifndef RPT_CSVOUT_H
#define RPT_CSVOUT_H

#include <stdio.h>
#include "anatable.h"
#include "sections.h"

/* One field: quoted when needed (RFC 4180); a number in its shortest exact
 * form, nothing for NAN. */
void rpt_csv_str(FILE *f, const char *s);
void rpt_csv_f64(FILE *f, double v);
/* Header name of column c: name, plus "_UNIT" for measured units. */
void rpt_csv_colname(char *buf, size_t size, const struct np_col *c);
int rpt_csv_table(FILE *f, const struct np_table *t);
int rpt_csv_findings(FILE *f, const struct np_analysis *a);
int rpt_csv_meta(FILE *f, const struct np_analysis *a);
int rpt_csv_series(FILE *f, const struct np_analysis *a);
int rpt_csv_sketches(FILE *f, const struct np_analysis *a);
/* Writes every selected section to DIR/NAME.csv (creating DIR); reports
 * errors on stderr with the path. Returns 0 or -1. */
int rpt_csv_dir(const char *dir, const struct np_analysis *a, const struct rpt_selection *sel);
/* Exactly one section to f; -1 (message printed) when sel does not name
 * exactly one table or pseudo section. */
int rpt_csv_one(FILE *f, const struct np_analysis *a, const struct rpt_selection *sel);

#endif
