#include "texttab.h"
#include "fold.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_GAP 2
#define RPT_MIN_STRW 8

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
	if (!(s > 0))      /* a subnormal smallest divided to 0 (fuzz_report) */
		return;
	double need = s < 1 ? ceil(-log10(s)) + 1 : 0;
	if (need > sc->decimals)
		sc->decimals = need > 4 ? 4 : (int)need;
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


void rpt_grid_free(struct rpt_grid *g)
{
	for (size_t i = 0; i < g->nrows * g->ncols; i++)
		free(g->cells[i]);
	free(g->cells);
	free(g->names);
	free(g->namebuf);
	free(g->cv);
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

/* The header without the unit suffix the label line already says
 * ("lo_ns" over "s" read as nanoseconds). */
static const char *rpt_header_name(const struct np_table *t, size_t c, const struct rpt_scale *sc,
				   char *buf, size_t size)
{
	static const char *const sfx[] = { "_ns", "_bytes", "_bps", "_pct", "_ratio", "_ppm", NULL };
	const char *name = t->cols[c].name;
	size_t n = strlen(name);
	for (size_t i = 0; *sc->label && sfx[i]; i++) {
		size_t m = strlen(sfx[i]);
		if (n > m && !strcmp(name + n - m, sfx[i])) {
			snprintf(buf, size, "%.*s", (int)(n - m), name);
			return buf;
		}
	}
	return name;
}

int rpt_grid_build(struct rpt_grid *g, const struct np_table *t, size_t nrows, double t0)
{
	size_t nc = t->ncols;
	g->nrows = nrows;
	g->ncols = nc;
	g->cells = calloc(nrows * nc + 1, sizeof(char *));
	g->names = calloc(nc + 1, sizeof(char *));
	g->namebuf = calloc(nc + 1, RPT_NAMEBUF);
	g->cv = calloc(nc + 1, sizeof(*g->cv));
	if (!g->cells || !g->cv || !g->names || !g->namebuf)
		return -1;
	rpt_unify_scales(g, t, t0);
	for (size_t c = 0; c < t->ncols; c++) {
		g->names[c] = rpt_header_name(t, c, &g->cv[c].sc, g->namebuf + c * RPT_NAMEBUF, RPT_NAMEBUF);
		for (size_t r = 0; r < nrows; r++) {
			char *s = rpt_cell_text(np_table_cell_c(t, r, c), &g->cv[c]);
			if (!s)
				return -1;
			g->cells[r * nc + c] = s;
		}
		rpt_grid_width(g, c);
	}
	return 0;
}

/* Keys stay readable but leave room for values: each key at most half the
 * width, all keys at most two thirds (the widest shortened first, in the
 * middle so both ends stay). Long text values are capped likewise. */
static void rpt_fit_widths(struct rpt_grid *g, size_t nkey, size_t width)
{
	size_t cap = width / 2 > RPT_MIN_STRW ? width / 2 : RPT_MIN_STRW;
	size_t ncol = g->ncols;
	for (size_t c = 0; c < nkey; c++)
		if (g->cv[c].width > cap && !g->cv[c].numeric)
			g->cv[c].width = cap;
	for (;;) {
		size_t widest = 0, kw = 0;
		for (size_t c = 0; c < nkey; c++) {
			kw += g->cv[c].width + RPT_GAP;
			if (g->cv[c].width > g->cv[widest].width)
				widest = c;
		}
		if (nkey == 0 || kw <= width * 2 / 3 || g->cv[widest].width <= RPT_MIN_STRW ||
		    g->cv[widest].numeric)
			break;
		g->cv[widest].width--;
	}
	/* a long text value may take what the keys leave but 20 columns */
	size_t kw = 0;
	for (size_t c = 0; c < nkey; c++)
		kw += g->cv[c].width + RPT_GAP;
	size_t dcap = width > kw + 20 + width / 3 ? width - kw - 20 : width / 3;
	if (dcap < 2 * RPT_MIN_STRW)
		dcap = 2 * RPT_MIN_STRW;
	for (size_t c = nkey; c < ncol; c++)
		if (g->cv[c].width > dcap && !g->cv[c].numeric)
			g->cv[c].width = dcap;
}

/* What a person looks at first: lower rank is kept when columns must go. */
static size_t rpt_col_rank(const char *name, size_t index)
{
	static const char *const first[] = {
		"p50", "p99", "requests", "count", "lost", "loss_rate", "drops", "state", "reason", "drop_reason",
		"jitter_rfc3550", "jitter_p99_abs",
		"quality", "offset", "offset_err", "component", "x_i", "bottleneck", "share_p99",
		"last_host", "lost_in", "last_hook", "conditions", "fscore", "latency", "mean",
		"throughput", "total", "cpu_mean", "share", "retrans", "sent", "packets", "bytes",
		"rate", "role", "p90", "max", NULL };
	for (size_t i = 0; first[i]; i++)
		if (!strcmp(name, first[i]))
			return i;
	return 1000 + index;
}

/* Columns shown, in table order: the keys, then by rank while they fit
 * (all of them when wide). Returns the count; *omitted gets the rest. */
static size_t rpt_pick_cols(const struct rpt_grid *g, const struct np_table *t, size_t nkey,
			    size_t width, bool wide, size_t *cols, size_t *omitted)
{
	size_t n = t->ncols, w = 0, nord = 0, nshow = 0;
	size_t *order = malloc((n + 1) * sizeof(size_t));
	bool *keep = calloc(n + 1, sizeof(bool));
	if (!order || !keep) {          /* keys only */
		free(order);
		free(keep);
		for (size_t c = 0; c < nkey; c++)
			cols[c] = c;
		*omitted = n - nkey;
		return nkey;
	}
	for (size_t c = 0; c < n; c++) {
		keep[c] = c < nkey || wide;
		if (c < nkey)
			w += g->cv[c].width + RPT_GAP;
		else
			order[nord++] = c;
	}
	for (size_t i = 1; i < nord; i++)        /* insertion sort by rank, stable */
		for (size_t j = i; j > 0 && rpt_col_rank(t->cols[order[j]].name, order[j]) <
					      rpt_col_rank(t->cols[order[j - 1]].name, order[j - 1]); j--) {
			size_t x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (size_t i = 0; i < nord && !wide; i++)
		if (w + g->cv[order[i]].width <= width || (nkey == 0 && w == 0)) {
			keep[order[i]] = true;
			w += g->cv[order[i]].width + RPT_GAP;
		}
	*omitted = 0;
	for (size_t c = 0; c < n; c++) {
		if (keep[c])
			cols[nshow++] = c;
		else
			(*omitted)++;
	}
	free(order);
	free(keep);
	return nshow;
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

static void rpt_print_omitted(FILE *f, const struct np_table *t, const size_t *cols, size_t n,
			      size_t width)
{
	size_t k = 0, col = 11;
	fputs("(not shown:", f);
	for (size_t c = 0; c <= t->ncols; c++) {
		if (c < t->ncols && k < n && cols[k] == c) {
			k++;
			continue;
		}
		const char *w = c < t->ncols ? t->cols[c].name : "(--wide shows all))";
		if (col + 1 + strlen(w) + 1 > width) {
			fputs("\n ", f);
			col = 1;
		}
		fprintf(f, " %s", w);
		col += 1 + strlen(w);
	}
	fputc('\n', f);
}

/* Drops every occurrence of prefix that starts a word ("vm/dm-back",
 * "app:vm/dm-back", "vm/dm-client:tc_egress"), in place. */
static void rpt_strip_prefix(char *s, const char *prefix)
{
	size_t pl = strlen(prefix);
	char *w = s;
	for (const char *r = s; *r;) {
		bool start = r == s || strchr(" :|(>,[", r[-1]);
		if (start && !strncmp(r, prefix, pl) && r[pl]) {
			r += pl;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

static void rpt_grid_strip(struct rpt_grid *g, const char *prefix)
{
	for (size_t c = 0; c < g->ncols; c++) {
		if (g->cv[c].numeric)
			continue;
		for (size_t r = 0; r < g->nrows; r++)
			rpt_strip_prefix(g->cells[r * g->ncols + c], prefix);
		rpt_grid_width(g, c);
	}
}

static void rpt_text_table_one(FILE *f, const struct np_table *t, const struct rpt_textopt *o,
			       const struct np_table *orig);

void rpt_text_table(FILE *f, const struct np_table *t, const struct rpt_textopt *o)
{
	struct np_table *folded = o->fold ? rpt_fold_connections(t) : NULL;
	rpt_text_table_one(f, folded ? folded : t, o, t);
	np_table_free(folded);
}

static void rpt_text_table_one(FILE *f, const struct np_table *t, const struct rpt_textopt *o,
			       const struct np_table *orig)
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
	size_t *cols = malloc((t->ncols + 1) * sizeof(size_t));
	if (!cols || rpt_grid_build(&g, t, nshow, o->t0) < 0) {
		fputs("(out of memory)\n\n", f);
		rpt_grid_free(&g);
		free(cols);
		return;
	}
	size_t nkey = t->nkey < t->ncols ? t->nkey : 0, omitted;
	if (o->strip && *o->strip)
		rpt_grid_strip(&g, o->strip);
	if (!o->wide)
		rpt_fit_widths(&g, nkey, width);
	size_t n = rpt_pick_cols(&g, t, nkey, width, o->wide, cols, &omitted);
	rpt_print_part(f, &g, cols, n);
	if (omitted)
		rpt_print_omitted(f, t, cols, n, width);
	if (nshow < t->nrows)
		fprintf(f, "... %zu more rows (--rows 0 shows all; CSV has every row)\n",
			t->nrows - nshow);
	if (t != orig)
		fprintf(f, "(%zu rows folded: one per service pair, ephemeral port '*',\n"
			" counts summed; the CSV has one row per connection)\n", orig->nrows);
	if (t->nrows == 0)
		fputs("(no rows)\n", f);
	for (size_t k = 0; o->legend && k < t->ncols; k++)
		if (t->cols[k].desc && *t->cols[k].desc)
			fprintf(f, "  %s: %s\n", t->cols[k].name, t->cols[k].desc);
	fputc('\n', f);
	free(cols);
	rpt_grid_free(&g);
}
