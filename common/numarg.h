/* Numbers given on the command line. One parser for every option value of
 * npanalyze and npreport, so they accept and refuse the same spellings; the
 * caller says what was wrong, naming its option. */
#ifndef NP_NUMARG_H
#define NP_NUMARG_H

/* s is a decimal number (strtod syntax, no NaN) in [lo, hi]. With unit NULL
 * nothing may follow it; else *unit points at what follows (the caller
 * decides which units it knows). 0, or -1 with *out and *unit untouched. */
int np_parse_num(const char *s, double lo, double hi, double *out, const char **unit);

#endif
