/* Several analysis files shown as one (e.g. npanalyze's incident.npa and
 * the patterns.npa of `npanalyze patterns`): a view whose arrays point into
 * the loaded parts. The first part's meta is the view's meta. */
#ifndef RPT_MERGE_H
#define RPT_MERGE_H

#include "anatable.h"

/* Fills view from parts[0..n); returns 0 or -ENOMEM. The parts must outlive
 * the view; free the view with rpt_view_free, then each part. */
int  rpt_view_merge(struct np_analysis *view, const struct np_analysis *parts, size_t n);
void rpt_view_free(struct np_analysis *view);

#endif
