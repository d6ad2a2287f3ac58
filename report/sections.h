/* Which tables form which report section, and in what order the sections
 * come. Tables are matched by name prefix; any table no section claims is
 * rendered after the known ones, in file order. */
#ifndef RPT_SECTIONS_H
#define RPT_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include "anatable.h"

/* Pseudo sections not backed by a table. */
#define RPT_SEC_SUMMARY  "summary"
#define RPT_SEC_FINDINGS "findings"
#define RPT_SEC_INCIDENT "incident"   /* the incident summary alone */
#define RPT_SEC_SERIES   "series"     /* CSV only: every per-interval sample */
#define RPT_SEC_SKETCHES "sketches"   /* CSV only: quantiles of every sketch */

struct rpt_section {
	const char *name;         /* what --section accepts */
	const char *title;
	const char *const *prefixes;
};

extern const struct rpt_section rpt_sections[];
extern const size_t rpt_nsections;

/* Index into rpt_sections of the section holding table `name`, or
 * rpt_nsections for "other". */
size_t rpt_section_of(const char *table_name);
/* Tables of a in report order (stable); returns the count, *out malloc'd. */
size_t rpt_tables_ordered(const struct np_analysis *a, const struct np_table ***out);
/* Does the selector (section name or exact table name) pick table t? */
bool rpt_selector_matches(const char *sel, const struct np_table *t);
/* Is sel a known section (including the pseudo sections)? */
bool rpt_selector_known(const char *sel);

/* The --section arguments; n == 0 selects everything. */
struct rpt_selection {
	const char *const *names;
	size_t n;
};
bool rpt_selected_table(const struct rpt_selection *sel, const struct np_table *t);
/* For the pseudo sections; `dflt` is the answer when nothing was selected. */
bool rpt_selected_name(const struct rpt_selection *sel, const char *name, bool dflt);

#endif
