/* Folding connections in text tables: rows whose flow differs only in the
 * client's ephemeral port become one row per service pair, with the
 * connection count in the key ("tcp 10.78.1.2:8080>10.78.1.1:* (4 conns)").
 * Only tables whose other columns all add up (counts, bytes) or are text
 * equal within the group are folded: a sum of p99s or of ratios would be
 * wrong, and those tables are shown per connection. */
#include "fold.h"

#include <stdlib.h>
#include <string.h>

#define RPT_EPHEMERAL_MIN 32768    /* Linux ip_local_port_range starts here by default */
#define RPT_FOLD_MAX_ROWS 20000    /* grouping is quadratic: bigger tables stay as they are */

/* "tcp A:pa>B:pb" with the ephemeral side's port replaced by '*'; false when
 * neither side is ephemeral (or both are). */
static bool rpt_flow_fold_key(char *buf, size_t size, const char *flow)
{
	const char *gt = strchr(flow, '>'), *pa = gt ? memrchr(flow, ':', (size_t)(gt - flow)) : NULL;
	const char *pb = gt ? strrchr(gt, ':') : NULL;
	if (!pa || !pb)
		return false;
	long a = strtol(pa + 1, NULL, 10), b = strtol(pb + 1, NULL, 10);
	bool ea = a >= RPT_EPHEMERAL_MIN, eb = b >= RPT_EPHEMERAL_MIN;
	if (ea == eb)
		return false;
	if (ea)
		snprintf(buf, size, "%.*s:*%s", (int)(pa - flow), flow, gt);
	else
		snprintf(buf, size, "%.*s:*", (int)(pb - flow), flow);
	return true;
}

static bool rpt_additive(const char *unit)
{
	return unit && (!strcmp(unit, "count") || !strcmp(unit, "bytes"));
}

static bool rpt_textual(const char *unit)
{
	return unit && (!strcmp(unit, "str") || !strcmp(unit, "id"));
}

/* The row's group: every text cell, the flow folded. */
static char *rpt_group_of(const struct np_table *t, size_t r, int fcol, bool *folds)
{
	size_t cap = 256, len = 0;
	char *g = malloc(cap);
	*folds = false;
	for (size_t c = 0; g && c < t->ncols; c++) {
		const struct np_cell *x = np_table_cell_c(t, r, c);
		char part[512];
		if (!rpt_textual(t->cols[c].unit) && (int)c != fcol)
			continue;
		const char *s = x->kind == NP_CELL_STR ? x->s : "";
		if ((int)c == fcol && rpt_flow_fold_key(part, sizeof(part), s))
			*folds = true;
		else
			snprintf(part, sizeof(part), "%s", s);
		size_t pl = strlen(part);
		if (len + pl + 2 > cap) {
			char *ng = realloc(g, cap = (len + pl + 2) * 2);
			if (!ng) {
				free(g);
				return NULL;
			}
			g = ng;
		}
		memcpy(g + len, part, pl);
		len += pl;
		g[len++] = '\x1f';
	}
	if (g)
		g[len] = '\0';
	return g;
}

static bool rpt_foldable(const struct np_table *t, int *fcol)
{
	*fcol = np_table_find_col(t, "flow");
	if (*fcol < 0 || (size_t)*fcol >= t->nkey || t->nrows < 2 || t->nrows > RPT_FOLD_MAX_ROWS)
		return false;
	for (size_t c = 0; c < t->ncols; c++)
		if ((int)c != *fcol && !rpt_additive(t->cols[c].unit) && !rpt_textual(t->cols[c].unit))
			return false;
	return true;
}

/* Adds row r of t into row d of f (a new row when first of its group). */
static void rpt_fold_into(struct np_table *f, size_t d, const struct np_table *t, size_t r, bool first)
{
	for (size_t c = 0; c < t->ncols; c++) {
		const struct np_cell *x = np_table_cell_c(t, r, c);
		if (first && x->kind == NP_CELL_STR)
			np_table_set_str(f, d, c, x->s);
		else if (first && x->kind != NP_CELL_NIL)
			np_table_set_f64(f, d, c, np_cell_f64(x));
		else if (rpt_additive(t->cols[c].unit) && x->kind != NP_CELL_NIL && x->kind != NP_CELL_STR)
			np_table_set_f64(f, d, c, np_cell_f64(np_table_cell_c(f, d, c)) + np_cell_f64(x));
	}
}

static struct np_table *rpt_fold_build(const struct np_table *t, int fcol, char **groups,
				       size_t *row_of, size_t *count)
{
	struct np_table *f = np_table_new(t->name, t->title, t->nkey);
	for (size_t c = 0; f && c < t->ncols; c++)
		np_table_col(f, t->cols[c].name, t->cols[c].unit, t->cols[c].desc);
	size_t ng = 0;
	for (size_t r = 0; f && r < t->nrows; r++) {
		size_t g = 0;
		while (g < r && (!groups[g] || !groups[r] || strcmp(groups[g], groups[r])))
			g++;
		bool first = g == r;
		if (first) {
			row_of[r] = np_table_row(f);
			ng++;
		}
		rpt_fold_into(f, row_of[g], t, r, first);
		count[row_of[g]]++;
	}
	for (size_t d = 0; f && d < ng; d++) {
		const struct np_cell *x = np_table_cell_c(f, d, (size_t)fcol);
		char key[600];
		if (count[d] < 2 || x->kind != NP_CELL_STR || !rpt_flow_fold_key(key, sizeof(key) - 40, x->s))
			continue;
		snprintf(key + strlen(key), 40, " (%zu conns)", count[d]);
		np_table_set_str(f, d, (size_t)fcol, key);
	}
	return f;
}

struct np_table *rpt_fold_connections(const struct np_table *t)
{
	int fcol;
	if (!rpt_foldable(t, &fcol))
		return NULL;
	char **groups = calloc(t->nrows, sizeof(char *));
	size_t *row_of = calloc(t->nrows, sizeof(size_t)), *count = calloc(t->nrows, sizeof(size_t));
	struct np_table *f = NULL;
	bool any = false;
	for (size_t r = 0; groups && row_of && count && r < t->nrows; r++) {
		bool folds;
		groups[r] = rpt_group_of(t, r, fcol, &folds);
		for (size_t q = 0; folds && groups[r] && q < r && !any; q++)
			any = groups[q] && !strcmp(groups[q], groups[r]);
	}
	if (any)
		f = rpt_fold_build(t, fcol, groups, row_of, count);
	for (size_t r = 0; groups && r < t->nrows; r++)
		free(groups[r]);
	free(groups);
	free(row_of);
	free(count);
	return f;
}
