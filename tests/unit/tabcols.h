/* Unit tests and test tools (tests/tools/genana, mkfixtures): an analysis
 * table declared with all its columns in one call, rather than one
 * np_table_col line a column in every test that builds a table. */
#ifndef NP_TABCOLS_H
#define NP_TABCOLS_H
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "anatable.h"

struct tcol { const char *name, *unit, *desc; };

static inline struct np_table *tab_new(const char *name, const char *title, size_t nkey,
				       const struct tcol *cols, size_t ncols)
{
	struct np_table *t = np_table_new(name, title, nkey);
	for (size_t i = 0; i < ncols; i++)
		np_table_col(t, cols[i].name, cols[i].unit, cols[i].desc);
	return t;
}

/* TABLE("flows", "Flows", 1, { "flow", "str", NULL }, { "bytes", "bytes", "sent" }):
 * the columns in that order. */
#define TABLE(name, title, nkey, ...)                                             \
	tab_new(name, title, nkey, (const struct tcol[]){ __VA_ARGS__ },          \
		sizeof((const struct tcol[]){ __VA_ARGS__ }) / sizeof(struct tcol))

/* Column col of the row of t (may be NULL) whose column kc is the string
 * kv, as a number; NAN for nil, no such row or column. */
static inline double tab_lookup(const struct np_table *t, const char *kc, const char *kv,
				const char *col)
{
	int ik = t ? np_table_find_col(t, kc) : -1, ic = t ? np_table_find_col(t, col) : -1;
	for (size_t i = 0; ik >= 0 && ic >= 0 && i < t->nrows; i++) {
		const struct np_cell *c = np_table_cell_c(t, i, (size_t)ik);
		if (c->kind == NP_CELL_STR && !strcmp(c->s, kv))
			return np_cell_f64(np_table_cell_c(t, i, (size_t)ic));
	}
	return NAN;
}
#endif
