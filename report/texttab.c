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
	v.sc = rpt_scale_pick(k, t->cols[c].unit, typ, integral);
	/* Enough decimals that the smallest non-zero value keeps two digits. */
	if (v.sc.decimals > 0 && v.sc.kind != RPT_U_TIME && smallest > 0) {
		double s = smallest / v.sc.div;
		int need = s < 1 ? (int)ceil(-log10(s)) + 1 : 0;
		if (need > v.sc.decimals)
			v.sc.decimals = need > 4 ? 4 : need;
	}
	if (k == RPT_U_TIME)
		v.sc.offset = t0;
	return v;
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

struct rpt_grid {
	size_t nrows, ncols;
	char **cells;              /* nrows * ncols strings */
	struct rpt_colview *cv;
};

static void rpt_grid_free(struct rpt_grid *g)
{
	for (size_t i = 0; i < g->nrows * g->ncols; i++)
		free(g->cells[i]);
	free(g->cells);
	free(g->cv);
}

static int rpt_grid_build(struct rpt_grid *g, const struct np_table *t, size_t nrows, double t0)
{
	g->nrows = nrows;
	g->ncols = t->ncols;
	g->cells = calloc(nrows * t->ncols + 1, sizeof(char *));
	g->cv = calloc(t->ncols + 1, sizeof(*g->cv));
	if (!g->cells || !g->cv)
		return -1;
	for (size_t c = 0; c < t->ncols; c++) {
		g->cv[c] = rpt_col_view(t, c, t0);
		size_t w = rpt_strwidth(t->cols[c].name);
		size_t lw = rpt_strwidth(g->cv[c].sc.label);
		if (lw > w)
			w = lw;
		for (size_t r = 0; r < nrows; r++) {
			char *s = rpt_cell_text(np_table_cell_c(t, r, c), &g->cv[c]);
			if (!s)
				return -1;
			g->cells[r * t->ncols + c] = s;
			if (rpt_strwidth(s) > w)
				w = rpt_strwidth(s);
		}
		g->cv[c].width = w;
	}
	return 0;
}

/* Strings longer than fit are shortened: any column at most half the width,
 * key columns together at most two thirds so a data column still fits. */
static void rpt_fit_widths(struct rpt_grid *g, size_t nkey, size_t width)
{
	size_t cap = width / 2 > RPT_MIN_STRW ? width / 2 : RPT_MIN_STRW;
	for (size_t c = 0; c < g->ncols; c++)
		if (g->cv[c].width > cap && !g->cv[c].numeric)
			g->cv[c].width = cap;
	for (;;) {
		size_t kw = 0, widest = 0;
		for (size_t c = 0; c < nkey; c++) {
			kw += g->cv[c].width + RPT_GAP;
			if (g->cv[c].width > g->cv[widest].width)
				widest = c;
		}
		if (nkey == 0 || kw <= width * 2 / 3 || g->cv[widest].width <= RPT_MIN_STRW)
			break;
		g->cv[widest].width--;
	}
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

static void rpt_print_part(FILE *f, const struct np_table *t, const struct rpt_grid *g,
			   const size_t *cols, size_t n)
{
	const char *texts[n ? n : 1];
	int any_label = 0;
	for (size_t i = 0; i < n; i++) {
		texts[i] = t->cols[cols[i]].name;
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
	rpt_fit_widths(&g, nkey, width);
	size_t keyw = 0;
	for (size_t c = 0; c < nkey; c++)
		keyw += g.cv[c].width + RPT_GAP;

	/* Group the data columns into parts that fit the width. */
	size_t *cols = malloc((t->ncols + 1) * sizeof(size_t));
	size_t nparts = 0, c = nkey;
	size_t starts[t->ncols + 2];
	while (c < t->ncols || nparts == 0) {
		starts[nparts++] = c;
		size_t w = keyw;
		do {
			if (c >= t->ncols)
				break;
			w += g.cv[c].width + RPT_GAP;
			c++;
		} while (c < t->ncols && w + g.cv[c].width <= width);
	}
	starts[nparts] = t->ncols;
	for (size_t p = 0; p < nparts && cols; p++) {
		size_t n = 0;
		for (size_t k = 0; k < nkey; k++)
			cols[n++] = k;
		for (size_t k = starts[p]; k < starts[p + 1]; k++)
			cols[n++] = k;
		if (nparts > 1)
			fprintf(f, "(part %zu of %zu)\n", p + 1, nparts);
		rpt_print_part(f, t, &g, cols, n);
	}
	if (nshow < t->nrows)
		fprintf(f, "... %zu more rows (--rows 0 shows all; CSV has every row)\n",
			t->nrows - nshow);
	if (t->nrows == 0)
		fputs("(no rows)\n", f);
	fputc('\n', f);
	free(cols);
	rpt_grid_free(&g);
}
