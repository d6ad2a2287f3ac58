/* Text tables: connections of one service pair folded into one row. */
#ifndef RPT_FOLD_H
#define RPT_FOLD_H

#include "anatable.h"

/* A copy of t with the rows that differ only in the flow's ephemeral port
 * summed into one (the flow key saying how many connections), or NULL when
 * t cannot be folded (a column that does not add up, no flow key, nothing
 * to fold, too many rows). */
struct np_table *rpt_fold_connections(const struct np_table *t);

#endif
