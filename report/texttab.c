#include "texttab.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_GAP 2
#define RPT_MIN_STRW 8

struct rpt_colview {
	struct rpt_scale sc;
	int numeric;
	size_t width;
	double typical, smallest;   /* median and smallest non-zero |value| */
};

/* The table's columns plus two synthetic ones for tables whose key columns
 * are too wide to repeat in every part: a row number and a short copy of the
 * most telling key column. */
struct rpt_grid {
	size_t nrows, ncols;       /* ncols = table columns + 2 */
	char **cells;              /* nrows * ncols strings */
	const char **names;
	struct rpt_colview *cv;
};

/* Byte offset of the display column `col` of s (or strlen). */
static size_t rpt_utf8_off(const char *s, size_t col)
{
	size_t i = 0, c = 0;
	while (s[i]) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (c == col)
				return i;
			c++;
		}
		i++;
	}
	return i;
}

void rpt_shorten(char *buf, size_t size, const char *s, size_t w)
{
	size_t sw = rpt_strwidth(s);
	if (sw <= w || w < 3) {
		snprintf(buf, size, "%s", s);
		if (w < 3 && sw > w)
			buf[rpt_utf8_off(buf, w)] = '\0';
		return;
	}
	size_t head = (w - 1) / 2, tail = w - 1 - head;
	size_t hb = rpt_utf8_off(s, head), tb = rpt_utf8_off(s, sw - tail);
	snprintf(buf, size, "%.*s…%s", (int)hb, s, s + tb);
}

/* Enough decimals that the smallest non-zero value keeps two digits. */
static void rpt_small_decimals(struct rpt_scale *sc, double smallest)
{
	if (sc->kind == RPT_U_TIME || smallest <= 0 || sc->div == 1)
		return;
	double s = smallest / sc->div;
	int need = s < 1 ? (int)ceil(-log10(s)) + 1 : 0;
	if (need > sc->decimals)
		sc->decimals = need > 4 ? 4 : need;
}

static struct rpt_colview rpt_col_view(const struct np_table *t, size_t c, double t0)
{
	struct rpt_colview v = { 0 };
	enum rpt_ukind k = rpt_ukind_of(t->cols[c].unit);
	double *vals = malloc((t->nrows ? t->nrows : 1) * sizeof(double));
	size_t n = 0, nstr = 0;
	int integral = 1;
	for (size_t r = 0; r < t->nrows; r++) {
		const struct np_cell *cell = np_table_cell_c(t, r, c);
		if (cell->kind == NP_CELL_STR)
			nstr++;
		double x = np_cell_f64(cell);
		if (isnan(x) || !vals)
			continue;
		if (cell->kind == NP_CELL_F64 && x != floor(x))
			integral = 0;
		vals[n++] = k == RPT_U_TIME ? x - t0 : x;
	}
	double smallest = 0;
	for (size_t i = 0; vals && i < n; i++)
		if (vals[i] != 0 && (smallest == 0 || fabs(vals[i]) < smallest))
			smallest = fabs(vals[i]);
	double typ = vals ? rpt_typical(vals, n) : 0;
	free(vals);
	v.numeric = k != RPT_U_STR && nstr == 0;
	v.typical = typ;
	v.smallest = smallest;
	v.sc = rpt_scale_pick(k, t->cols[c].unit, typ, integral);
	rpt_small_decimals(&v.sc, smallest);
	if (k == RPT_U_TIME)
		v.sc.offset = t0;
	return v;
}

/* One scale per unit across the table, so p50 and p99 read in the same unit;
 * decimals still per column. */
static void rpt_unify_scales(struct rpt_grid *g, const struct np_table *t, double t0)
{
	for (size_t c = 0; c < t->ncols; c++)
		g->cv[c] = rpt_col_view(t, c, t0);
	for (size_t c = 0; c < t->ncols; c++) {
		enum rpt_ukind k = g->cv[c].sc.kind;
		if (k != RPT_U_NS && k != RPT_U_BYTES && k != RPT_U_BPS && k != RPT_U_RATE)
			continue;
		size_t n = 0;
		double *v = malloc((t->nrows * t->ncols + 1) * sizeof(double));
		if (!v)
			return;
		for (size_t d = 0; d < t->ncols; d++)
			if (g->cv[d].sc.kind == k && !strcmp(t->cols[d].unit, t->cols[c].unit))
				for (size_t r = 0; r < t->nrows; r++)
					v[n++] = np_cell_f64(np_table_cell_c(t, r, d));
		double typ = rpt_typical(v, n);
		free(v);
		struct rpt_scale common = rpt_scale_pick(k, t->cols[c].unit, typ, 0);
		if (common.div != g->cv[c].sc.div) {
			/* keep two significant digits of this column's typical value */
			double own = g->cv[c].typical / common.div;
			g->cv[c].sc.div = common.div;
			g->cv[c].sc.label = common.label;
			g->cv[c].sc.decimals = own == 0 ? 2 : own < 1 ? 3 : own < 10 ? 2 : own < 100 ? 1 : 0;
			rpt_small_decimals(&g->cv[c].sc, g->cv[c].smallest);
		}
	}
}

static char *rpt_cell_text(const struct np_cell *cell, const struct rpt_colview *v)
{
	char buf[64];
	switch (cell->kind) {
	case NP_CELL_STR: {
		char *s = strdup(cell->s);
		for (char *p = s; p && *p; p++)      /* one row, one line */
			if ((unsigned char)*p < 32 || *p == 127)
				*p = ' ';
		return s;
	}
	case NP_CELL_NIL:
		return strdup("-");
	default:
		if (v->sc.kind == RPT_U_STR) {   /* ids: exact integers */
			if (cell->kind == NP_CELL_INT)
				snprintf(buf, sizeof(buf), "%lld", (long long)cell->i);
			else if (cell->kind == NP_CELL_UINT)
				snprintf(buf, sizeof(buf), "%llu", (unsigned long long)cell->u);
			else
				snprintf(buf, sizeof(buf), "%g", cell->f);
		} else {
			rpt_fmt_scaled(buf, sizeof(buf), np_cell_f64(cell), &v->sc);
		}
		return strdup(buf);
	}
}


static void rpt_grid_free(struct rpt_grid *g)
{
	for (size_t i = 0; i < g->nrows * g->ncols; i++)
		free(g->cells[i]);
	free(g->cells);
	free(g->names);
	free(g->cv);
}

/* Key column with the most distinct values among the shown rows. */
static size_t rpt_telling_key(const struct np_table *t, size_t nkey, size_t nrows)
{
	size_t best = 0, best_n = 0, best_w = 0;
	for (size_t c = 0; c < nkey; c++) {
		size_t distinct = 0, w = 0;
		for (size_t r = 0; r < nrows; r++) {
			const struct np_cell *x = np_table_cell_c(t, r, c);
			bool seen = false;
			for (size_t q = 0; q < r && !seen; q++) {
				const struct np_cell *y = np_table_cell_c(t, q, c);
				seen = x->kind == y->kind && (x->kind != NP_CELL_STR ? x->u == y->u
								      : !strcmp(x->s, y->s));
			}
			distinct += !seen;
			if (x->kind == NP_CELL_STR && strlen(x->s) > w)
				w = strlen(x->s);
		}
		if (distinct > best_n || (distinct == best_n && w > best_w)) {
			best_n = distinct;
			best_w = w;
			best = c;
		}
	}
	return best;
}

static void rpt_grid_width(struct rpt_grid *g, size_t c)
{
	size_t w = rpt_strwidth(g->names[c]);
	if (rpt_strwidth(g->cv[c].sc.label) > w)
		w = rpt_strwidth(g->cv[c].sc.label);
	for (size_t r = 0; r < g->nrows; r++)
		if (rpt_strwidth(g->cells[r * g->ncols + c]) > w)
			w = rpt_strwidth(g->cells[r * g->ncols + c]);
	g->cv[c].width = w;
}

static int rpt_grid_build(struct rpt_grid *g, const struct np_table *t, size_t nrows, double t0)
{
	size_t nc = t->ncols + 2, num = t->ncols, shortkey = t->ncols + 1;
	g->nrows = nrows;
	g->ncols = nc;
	g->cells = calloc(nrows * nc + 1, sizeof(char *));
	g->names = calloc(nc, sizeof(char *));
	g->cv = calloc(nc, sizeof(*g->cv));
	if (!g->cells || !g->cv || !g->names)
		return -1;
	rpt_unify_scales(g, t, t0);
	for (size_t c = 0; c < t->ncols; c++) {
		g->names[c] = t->cols[c].name;
		for (size_t r = 0; r < nrows; r++) {
			char *s = rpt_cell_text(np_table_cell_c(t, r, c), &g->cv[c]);
			if (!s)
				return -1;
			g->cells[r * nc + c] = s;
		}
		rpt_grid_width(g, c);
	}
	size_t kc = rpt_telling_key(t, t->nkey < t->ncols ? t->nkey : 0, nrows);
	g->names[num] = "#";
	g->cv[num].numeric = 1;
	g->cv[num].sc.label = "";
	g->names[shortkey] = t->cols[kc].name;
	g->cv[shortkey] = g->cv[kc];
	for (size_t r = 0; r < nrows; r++) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%zu", r + 1);
		g->cells[r * nc + num] = strdup(buf);
		g->cells[r * nc + shortkey] = strdup(g->cells[r * nc + kc] ? g->cells[r * nc + kc] : "");
		if (!g->cells[r * nc + num] || !g->cells[r * nc + shortkey])
			return -1;
	}
	rpt_grid_width(g, num);
	rpt_grid_width(g, shortkey);
	if (g->cv[shortkey].width > 36)
		g->cv[shortkey].width = 36;
	return 0;
}

/* Strings longer than half the width are shortened. Returns true when the
 * key columns are too wide to repeat in every part (compact layout: the
 * first part carries the keys, the others a row number and one key). */
static bool rpt_fit_widths(struct rpt_grid *g, size_t nkey, size_t width)
{
	size_t cap = width / 2 > RPT_MIN_STRW ? width / 2 : RPT_MIN_STRW;
	size_t num = g->ncols - 2, shortkey = g->ncols - 1;
	for (size_t c = 0; c < nkey; c++)
		if (g->cv[c].width > cap && !g->cv[c].numeric)
			g->cv[c].width = cap;
	size_t kw = 0;
	for (size_t c = 0; c < nkey; c++)
		kw += g->cv[c].width + RPT_GAP;
	bool compact = nkey > 0 && kw > width * 2 / 3;
	size_t budget = compact ? width - g->cv[num].width - RPT_GAP : width;
	while (compact) {             /* keys + row number within the width */
		size_t widest = 0;
		kw = 0;
		for (size_t c = 0; c < nkey; c++) {
			kw += g->cv[c].width + RPT_GAP;
			if (g->cv[c].width > g->cv[widest].width)
				widest = c;
		}
		if (kw <= budget || g->cv[widest].width <= RPT_MIN_STRW)
			break;
		g->cv[widest].width--;
	}
	/* A long text column may fill a part of its own next to the leading
	 * columns of the continuation parts. */
	size_t lead = compact ? g->cv[num].width + g->cv[shortkey].width + 2 * RPT_GAP : kw;
	size_t dcap = width > lead + RPT_MIN_STRW ? width - lead : RPT_MIN_STRW;
	for (size_t c = nkey; c < num; c++)
		if (g->cv[c].width > dcap && !g->cv[c].numeric)
			g->cv[c].width = dcap;
	return compact;
}

/* Appends s to line padded to w columns (right-aligned numbers). */
static size_t rpt_put(char *line, size_t off, size_t size, const char *s, size_t w, int right)
{
	char buf[1024];
	rpt_shorten(buf, sizeof(buf), s, w);
	size_t pad = w - rpt_strwidth(buf);
	if (off < size)
		off += (size_t)snprintf(line + off, size - off, "%*s%s%*s", right ? (int)pad : 0, "",
					buf, right ? 0 : (int)pad, "");
	return off < size ? off : size - 1;
}

/* One line of cells; trailing blanks dropped. */
static void rpt_print_line(FILE *f, const struct rpt_grid *g, const size_t *cols, size_t n,
			   const char *const *texts)
{
	char line[8192];
	size_t off = 0;
	line[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			off = rpt_put(line, off, sizeof(line), "", RPT_GAP, 0);
		off = rpt_put(line, off, sizeof(line), texts[i], g->cv[cols[i]].width,
			      g->cv[cols[i]].numeric);
	}
	while (off > 0 && line[off - 1] == ' ')
		line[--off] = '\0';
	fputs(line, f);
	fputc('\n', f);
}

static void rpt_print_part(FILE *f, const struct rpt_grid *g, const size_t *cols, size_t n)
{
	const char *texts[n ? n : 1];
	int any_label = 0;
	for (size_t i = 0; i < n; i++) {
		texts[i] = g->names[cols[i]];
		if (*g->cv[cols[i]].sc.label)
			any_label = 1;
	}
	rpt_print_line(f, g, cols, n, texts);
	if (any_label) {
		for (size_t i = 0; i < n; i++)
			texts[i] = g->cv[cols[i]].sc.label;
		rpt_print_line(f, g, cols, n, texts);
	}
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs("  ", f);
		for (size_t k = 0; k < g->cv[cols[i]].width; k++)
			fputc('-', f);
	}
	fputc('\n', f);
	for (size_t r = 0; r < g->nrows; r++) {
		for (size_t i = 0; i < n; i++)
			texts[i] = g->cells[r * g->ncols + cols[i]];
		rpt_print_line(f, g, cols, n, texts);
	}
}

void rpt_text_table(FILE *f, const struct np_table *t, const struct rpt_textopt *o)
{
	size_t width = o->width >= 40 ? (size_t)o->width : 80;
	size_t nshow = t->nrows;
	if (o->max_rows && nshow > o->max_rows)
		nshow = o->max_rows;
	const char *title = o->heading ? o->heading : (t->title && *t->title ? t->title : t->name);
	fprintf(f, "%s [%s]\n", title, t->name);
	if (t->ncols == 0) {
		fputs("(no columns)\n\n", f);
		return;
	}
	struct rpt_grid g = { 0 };
	if (rpt_grid_build(&g, t, nshow, o->t0) < 0) {
		fputs("(out of memory)\n\n", f);
		rpt_grid_free(&g);
		return;
	}
	size_t nkey = t->nkey < t->ncols ? t->nkey : 0;
	bool compact = rpt_fit_widths(&g, nkey, width);
	size_t num = t->ncols, shortkey = t->ncols + 1;
	/* Columns that lead every part: the keys, or in compact layout the row
	 * number (+ all keys in the first part, one short key in the others). */
	size_t lead_first[t->ncols + 2], lead_rest[t->ncols + 2], nlf = 0, nlr = 0;
	if (compact) {
		lead_first[nlf++] = num;
		lead_rest[nlr++] = num;
		lead_rest[nlr++] = shortkey;
	}
	for (size_t k = 0; k < nkey; k++) {
		lead_first[nlf++] = k;
		if (!compact)
			lead_rest[nlr++] = k;
	}
	size_t *cols = malloc((g.ncols + 1) * sizeof(size_t));
	size_t c = nkey, part = 0;
	size_t nparts_max = t->ncols + 2, starts[t->ncols + 3];
	size_t nparts = 0;
	while ((c < t->ncols || nparts == 0) && nparts < nparts_max) {
		const size_t *lead = nparts == 0 ? lead_first : lead_rest;
		size_t nl = nparts == 0 ? nlf : nlr, w = 0;
		for (size_t i = 0; i < nl; i++)
			w += g.cv[lead[i]].width + RPT_GAP;
		starts[nparts++] = c;
		/* a part takes at least one data column, unless the keys alone fill it */
		bool first = !(compact && nparts == 1 && w + g.cv[c < t->ncols ? c : 0].width > width);
		while (c < t->ncols && (first || w + g.cv[c].width <= width)) {
			w += g.cv[c].width + RPT_GAP;
			c++;
			first = false;
		}
	}
	starts[nparts] = t->ncols;
	for (part = 0; part < nparts && cols; part++) {
		const size_t *lead = part == 0 ? lead_first : lead_rest;
		size_t nl = part == 0 ? nlf : nlr, n = 0;
		for (size_t i = 0; i < nl; i++)
			cols[n++] = lead[i];
		for (size_t k = starts[part]; k < starts[part + 1]; k++)
			cols[n++] = k;
		if (nparts > 1)
			fprintf(f, "(part %zu of %zu)\n", part + 1, nparts);
		rpt_print_part(f, &g, cols, n);
	}
	if (nshow < t->nrows)
		fprintf(f, "... %zu more rows (--rows 0 shows all; CSV has every row)\n",
			t->nrows - nshow);
	if (t->nrows == 0)
		fputs("(no rows)\n", f);
	for (size_t k = 0; o->legend && k < t->ncols; k++)
		if (t->cols[k].desc && *t->cols[k].desc)
			fprintf(f, "  %s: %s\n", t->cols[k].name, t->cols[k].desc);
	fputc('\n', f);
	free(cols);
	rpt_grid_free(&g);
}
