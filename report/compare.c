#include "compare.h"
#include "csvout.h"
#include "mwu.h"
#include "sections.h"
#include "units.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_CONF 0.95

static bool rpt_has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

int rpt_metric_direction(const char *name, const char *unit)
{
	static const char *const skip_units[] = { "str", "id", "time_ns", "bool", NULL };
	static const char *const neutral[] = { "offset", "shift", "drift", "skew", "bound",
					       "_err", "error_ns", "share", NULL };
	static const char *const neutral_prefix[] = { "t0", "start", "end", "first", "last", NULL };
	static const char *const lower_prefix[] = { "p50", "p90", "p95", "p99", "p999", "mean",
						    "avg", "median", "max", "min", "jitter", "loss",
						    "lost", "drop", "retrans", "cpu", "rtt", "srtt",
						    "delay", "wait", NULL };
	static const char *const lower_any[] = { "latency", "jitter", "loss", "drop", "retrans",
						 "_cpu", "cpu_", "_p50", "_p90", "_p99", "_mean",
						 "_max", "rtt", "delay", "timeout", "fail", NULL };
	static const char *const higher_any[] = { "throughput", "goodput", "tput", "bps",
						  "fscore", "f_score", "precision", "recall", NULL };
	unit = unit ? unit : "";
	for (const char *const *u = skip_units; *u; u++)
		if (!strcmp(unit, *u))
			return -1;
	for (const char *const *p = neutral; *p; p++)
		if (strstr(name, *p))
			return RPT_DIR_NONE;
	for (const char *const *p = neutral_prefix; *p; p++)
		if (rpt_has_prefix(name, *p))
			return RPT_DIR_NONE;
	for (const char *const *p = higher_any; *p; p++)
		if (strstr(name, *p))
			return RPT_DIR_HIGHER;
	for (const char *const *p = lower_prefix; *p; p++)
		if (rpt_has_prefix(name, *p))
			return RPT_DIR_LOWER;
	for (const char *const *p = lower_any; *p; p++)
		if (strstr(name, *p))
			return RPT_DIR_LOWER;
	if (!strcmp(unit, "bps"))
		return RPT_DIR_HIGHER;
	if (!strcmp(unit, "ns"))
		return RPT_DIR_LOWER;
	return RPT_DIR_NONE;
}

/* Sorted views for lookups: series by (table, key, metric), rows by key. */
static int rpt_cmp_series(const void *x, const void *y)
{
	const struct np_series *a = *(const struct np_series *const *)x;
	const struct np_series *b = *(const struct np_series *const *)y;
	int d = strcmp(a->table, b->table);
	if (!d)
		d = strcmp(a->key, b->key);
	return d ? d : strcmp(a->metric, b->metric);
}

static struct np_series **rpt_series_index(const struct np_analysis *a)
{
	struct np_series **v = malloc((a->nseries + 1) * sizeof(*v));
	if (!v)
		return NULL;
	if (a->nseries)
		memcpy(v, a->series, a->nseries * sizeof(*v));
	qsort(v, a->nseries, sizeof(*v), rpt_cmp_series);
	return v;
}

static const struct np_series *rpt_find_series(struct np_series *const *idx, size_t n,
					       const char *table, const char *key, const char *metric)
{
	struct np_series probe = { .table = (char *)table, .key = (char *)key, .metric = (char *)metric };
	const struct np_series *pp = &probe;
	struct np_series *const *hit = idx ? bsearch(&pp, idx, n, sizeof(*idx), rpt_cmp_series) : NULL;
	return hit && (*hit)->n ? *hit : NULL;
}

struct rpt_rowkey { char *key; size_t row; };

static int rpt_cmp_rowkey(const void *x, const void *y)
{
	return strcmp(((const struct rpt_rowkey *)x)->key, ((const struct rpt_rowkey *)y)->key);
}

/* Keys of every row, sorted (first row wins for duplicate keys). */
static struct rpt_rowkey *rpt_row_index(const struct np_table *t)
{
	struct rpt_rowkey *v = calloc(t->nrows + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t r = 0; r < t->nrows; r++) {
		v[r].key = np_table_row_key(t, r);
		v[r].row = r;
		if (!v[r].key)
			v[r].key = strdup("");
	}
	qsort(v, t->nrows, sizeof(*v), rpt_cmp_rowkey);
	return v;
}

static void rpt_row_index_free(struct rpt_rowkey *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].key);
	free(v);
}

static long rpt_find_row(const struct rpt_rowkey *idx, size_t n, const char *key)
{
	struct rpt_rowkey probe = { .key = (char *)key };
	const struct rpt_rowkey *hit = idx ? bsearch(&probe, idx, n, sizeof(*idx), rpt_cmp_rowkey) : NULL;
	if (!hit)
		return -1;
	while (hit > idx && !strcmp(hit[-1].key, key))
		hit--;
	size_t best = hit->row;
	for (const struct rpt_rowkey *h = hit; h < idx + n && !strcmp(h->key, key); h++)
		if (h->row < best)
			best = h->row;
	return (long)best;
}

static bool rpt_metric_wanted(const struct rpt_cmpopt *o, const struct np_table *t, const char *col)
{
	if (o->nmetrics == 0)
		return true;
	char full[512];
	snprintf(full, sizeof(full), "%s.%s", t->name, col);
	size_t sec = rpt_section_of(t->name);
	for (size_t i = 0; i < o->nmetrics; i++) {
		const char *m = o->metrics[i];
		if (!fnmatch(m, col, 0) || !fnmatch(m, full, 0) || !strcmp(m, t->name) ||
		    (sec < rpt_nsections && !strcmp(m, rpt_sections[sec].name)))
			return true;
	}
	return false;
}

/* One compared metric. */
struct rpt_cmprow {
	const char *table, *metric, *unit;
	char *key;
	int dir;
	struct rpt_median b, n;
	size_t bn, nn;            /* samples; 0 = table value used */
	double delta_pct, p;
	bool significant, regression, improvement, too_few;
	const char *verdict;
};

struct rpt_cmpctx {
	const struct rpt_cmpopt *o;
	const struct np_analysis *base, *neu;
	struct np_series **sidx_base, **sidx_new;
	struct rpt_cmprow *rows;
	size_t nrows, cap;
	struct np_table *unmatched;   /* table, key, side */
	char *skipped;                /* event tables not compared, comma separated */
	struct rpt_cmpstats st;
};

static struct rpt_cmprow *rpt_push(struct rpt_cmpctx *c)
{
	if (c->nrows == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *p = realloc(c->rows, cap * sizeof(*c->rows));
		if (!p)
			return NULL;
		c->rows = p;
		c->cap = cap;
	}
	struct rpt_cmprow *r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	return r;
}

static void rpt_judge(struct rpt_cmpctx *c, struct rpt_cmprow *r, const struct np_series *sb,
		      const struct np_series *sn, double vb, double vn)
{
	const struct rpt_cmpopt *o = c->o;
	r->p = NAN;
	if (sb && sn) {
		r->bn = sb->n;
		r->nn = sn->n;
		r->b = rpt_median_ci(sb->v, sb->n, RPT_CONF);
		r->n = rpt_median_ci(sn->v, sn->n, RPT_CONF);
		r->p = rpt_mwu_test(sb->v, sb->n, sn->v, sn->n).p;
		r->too_few = rpt_mwu_min_p(sb->n, sn->n) > o->alpha;
	} else {
		r->b = (struct rpt_median){ vb, NAN, NAN, 0 };
		r->n = (struct rpt_median){ vn, NAN, NAN, 0 };
	}
	double b = r->b.median, n = r->n.median;
	if (b != 0)
		r->delta_pct = (n - b) / fabs(b) * 100.0;
	else
		r->delta_pct = n == 0 ? 0 : (n > 0 ? INFINITY : -INFINITY);
	r->significant = !isnan(r->p) && r->p < o->alpha && n != b;
	bool worse = (r->dir == RPT_DIR_LOWER && n > b) || (r->dir == RPT_DIR_HIGHER && n < b);
	bool better = (r->dir == RPT_DIR_LOWER && n < b) || (r->dir == RPT_DIR_HIGHER && n > b);
	r->regression = r->significant && worse && fabs(r->delta_pct) > o->threshold_pct;
	r->improvement = r->significant && better;
	r->verdict = !(sb && sn) ? "no-samples" : r->regression ? "REGRESSION"
		     : r->significant && worse ? "worse" : r->improvement ? "better"
		     : r->significant ? "changed" : "~";
	c->st.metrics++;
	c->st.significant += r->significant;
	c->st.regressions += r->regression;
	c->st.improvements += r->improvement;
	c->st.no_samples += !(sb && sn);
	c->st.too_few += r->too_few;
}

static void rpt_unmatched(struct rpt_cmpctx *c, const char *table, const char *key, const char *side)
{
	size_t r = np_table_row(c->unmatched);
	np_table_set_str(c->unmatched, r, 0, table);
	np_table_set_str(c->unmatched, r, 1, key);
	np_table_set_str(c->unmatched, r, 2, side);
	c->st.unmatched++;
}

static void rpt_compare_table(struct rpt_cmpctx *c, const struct np_table *tb, const struct np_table *tn)
{
	struct rpt_rowkey *ib = rpt_row_index(tb), *in = rpt_row_index(tn);
	for (size_t r = 0; r < tb->nrows; r++) {
		char *key = np_table_row_key(tb, r);
		if (!key)
			continue;
		long rn = rpt_find_row(in, tn->nrows, key);
		if (rn < 0) {
			rpt_unmatched(c, tb->name, key, "base only");
			free(key);
			continue;
		}
		for (size_t col = tb->nkey; col < tb->ncols; col++) {
			const struct np_col *cb = &tb->cols[col];
			int dir = rpt_metric_direction(cb->name, cb->unit);
			int cn = np_table_find_col(tn, cb->name);
			if (dir < 0 || cn < 0 || !rpt_metric_wanted(c->o, tb, cb->name))
				continue;
			double vb = np_cell_f64(np_table_cell_c(tb, r, col));
			double vn = np_cell_f64(np_table_cell_c(tn, (size_t)rn, (size_t)cn));
			const struct np_series *sb = rpt_find_series(c->sidx_base, c->base->nseries,
								     tb->name, key, cb->name);
			const struct np_series *sn = rpt_find_series(c->sidx_new, c->neu->nseries,
								     tb->name, key, cb->name);
			if (isnan(vb) && isnan(vn) && !(sb && sn))
				continue;
			struct rpt_cmprow *row = rpt_push(c);
			if (!row)
				break;
			row->table = tb->name;
			row->metric = cb->name;
			row->unit = cb->unit;
			row->key = strdup(key);
			row->dir = dir;
			rpt_judge(c, row, sb, sn, vb, vn);
		}
		free(key);
	}
	for (size_t r = 0; r < tn->nrows; r++) {
		char *key = np_table_row_key(tn, r);
		if (key && rpt_find_row(ib, tb->nrows, key) < 0)
			rpt_unmatched(c, tn->name, key, "new only");
		free(key);
	}
	rpt_row_index_free(ib, tb->nrows);
	rpt_row_index_free(in, tn->nrows);
}

/* Was this series already compared as a column of its table? */
static bool rpt_row_exists(const struct rpt_cmpctx *c, const struct np_series *s)
{
	const struct np_table *tb = np_analysis_table(c->base, s->table);
	const struct np_table *tn = np_analysis_table(c->neu, s->table);
	return tb && tn && np_table_find_col(tb, s->metric) >= (int)tb->nkey &&
	       np_table_find_col(tn, s->metric) >= 0;
}

/* Series whose metric is no column of their table (e.g. netcpu "cpu" per
 * interval) are compared on their own. */
static void rpt_compare_series_only(struct rpt_cmpctx *c)
{
	for (size_t i = 0; i < c->base->nseries; i++) {
		const struct np_series *sb = c->base->series[i];
		int dir = rpt_metric_direction(sb->metric, sb->unit);
		const struct np_table *tb = np_analysis_table(c->base, sb->table);
		struct np_table fake = { .name = sb->table };
		if (dir < 0 || !sb->n || rpt_row_exists(c, sb) ||
		    !rpt_metric_wanted(c->o, tb ? tb : &fake, sb->metric))
			continue;
		const struct np_series *sn = rpt_find_series(c->sidx_new, c->neu->nseries,
							     sb->table, sb->key, sb->metric);
		if (!sn)
			continue;
		struct rpt_cmprow *row = rpt_push(c);
		if (!row)
			return;
		row->table = sb->table;
		row->metric = sb->metric;
		row->unit = sb->unit;
		row->key = strdup(sb->key);
		row->dir = dir;
		rpt_judge(c, row, sb, sn, NAN, NAN);
	}
}

/* Rows keyed by a timestamp (events: lost packets, slow windows) never
 * recur in another run: such tables are named, not compared. */
static bool rpt_event_table(const struct np_table *t)
{
	for (size_t k = 0; k < t->nkey && k < t->ncols; k++)
		if (t->cols[k].unit && !strcmp(t->cols[k].unit, "time_ns"))
			return true;
	return false;
}

static void rpt_compare_all(struct rpt_cmpctx *c)
{
	const struct np_table **tabs;
	size_t n = rpt_tables_ordered(c->base, &tabs);
	for (size_t i = 0; i < n; i++) {
		const struct np_table *tn = np_analysis_table(c->neu, tabs[i]->name);
		if (rpt_event_table(tabs[i]) || (tn && rpt_event_table(tn))) {
			size_t len = c->skipped ? strlen(c->skipped) : 0;
			char *p = realloc(c->skipped, len + strlen(tabs[i]->name) + 3);
			if (p) {
				sprintf(p + len, "%s%s", len ? ", " : "", tabs[i]->name);
				c->skipped = p;
			}
			continue;
		}
		if (tn)
			rpt_compare_table(c, tabs[i], tn);
		else
			rpt_unmatched(c, tabs[i]->name, "(whole table)", "base only");
	}
	free(tabs);
	rpt_compare_series_only(c);
	for (size_t i = 0; i < c->neu->ntables; i++)
		if (!np_analysis_table(c->base, c->neu->tables[i]->name))
			rpt_unmatched(c, c->neu->tables[i]->name, "(whole table)", "new only");
}

/* "12.3 ms ± 4%" */
static void rpt_fmt_side(char *buf, size_t size, const struct rpt_median *m, const char *unit)
{
	int len = rpt_fmt_auto(buf, size, m->median, unit);
	if (len < 0 || (size_t)len >= size)
		return;
	if (!isnan(m->lo) && m->median != 0) {
		double pm = fmax(m->hi - m->median, m->median - m->lo) / fabs(m->median) * 100.0;
		snprintf(buf + len, size - (size_t)len, " ±%.0f%%", pm);
	}
}

static void rpt_fmt_delta(char *buf, size_t size, const struct rpt_cmprow *r)
{
	if (!r->significant)
		snprintf(buf, size, "~");
	else if (isinf(r->delta_pct))
		snprintf(buf, size, "%s", r->delta_pct > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, size, "%+.2f%%", r->delta_pct);
}

static struct np_table *rpt_csv_rows(const struct rpt_cmpctx *c)
{
	struct np_table *t = np_table_new("compare", "Comparison", 3);
	static const char *const cols[][2] = {
		{ "table", "str" }, { "key", "str" }, { "metric", "str" }, { "unit", "str" },
		{ "worse_when", "str" }, { "base", "" }, { "base_lo", "" }, { "base_hi", "" },
		{ "base_n", "count" }, { "new", "" }, { "new_lo", "" }, { "new_hi", "" },
		{ "new_n", "count" }, { "delta_pct", "" }, { "p", "" }, { "significant", "bool" },
		{ "verdict", "str" } };
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		np_table_col(t, cols[i][0], cols[i][1], NULL);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct rpt_cmprow *r = &c->rows[i];
		size_t row = np_table_row(t);
		np_table_set_str(t, row, 0, r->table);
		np_table_set_str(t, row, 1, r->key);
		np_table_set_str(t, row, 2, r->metric);
		np_table_set_str(t, row, 3, r->unit ? r->unit : "");
		np_table_set_str(t, row, 4, r->dir == RPT_DIR_LOWER ? "higher"
				 : r->dir == RPT_DIR_HIGHER ? "lower" : "");
		const double nums[] = { r->b.median, r->b.lo, r->b.hi, (double)r->bn, r->n.median,
					r->n.lo, r->n.hi, (double)r->nn, r->delta_pct, r->p };
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
			if (!isnan(nums[k]))
				np_table_set_f64(t, row, 5 + k, nums[k]);
		np_table_set_u64(t, row, 15, r->significant);
		np_table_set_str(t, row, 16, r->verdict);
	}
	for (size_t i = 0; i < c->unmatched->nrows; i++) {
		size_t row = np_table_row(t);
		np_table_set_str(t, row, 0, np_table_cell_c(c->unmatched, i, 0)->s);
		np_table_set_str(t, row, 1, np_table_cell_c(c->unmatched, i, 1)->s);
		np_table_set_str(t, row, 16, np_table_cell_c(c->unmatched, i, 2)->s);
	}
	return t;
}

static size_t rpt_samples_needed(double alpha)
{
	size_t m = 1;
	while (m < 1000 && rpt_mwu_min_p(m, m) > alpha)
		m++;
	return m;
}

static void rpt_summary_line(FILE *f, const struct rpt_cmpctx *c)
{
	const struct rpt_cmpstats *s = &c->st;
	fprintf(f, "compare: %zu metrics, %zu significant changes (%zu regressions beyond %g%%, "
		"%zu improvements), %zu without samples, %zu unmatched rows: %s",
		s->metrics, s->significant, s->regressions, c->o->threshold_pct, s->improvements,
		s->no_samples, s->unmatched, s->regressions ? "REGRESSION" : "OK");
	size_t shown = 0;
	for (size_t i = 0; i < c->nrows && shown < 3; i++) {
		const struct rpt_cmprow *r = &c->rows[i];
		if (!r->regression)
			continue;
		fprintf(f, "%s%s[%s].%s %+.1f%%", shown ? "; " : " (", r->table, r->key, r->metric,
			r->delta_pct);
		shown++;
	}
	if (shown)
		fputc(')', f);
	fputc('\n', f);
}

static void rpt_fmt_note(char *buf, size_t size, const struct rpt_cmprow *r)
{
	if (isnan(r->p))
		snprintf(buf, size, "%s", r->verdict);
	else
		snprintf(buf, size, "p=%.3f n=%zu+%zu%s%s%s", r->p, r->bn, r->nn,
			 strcmp(r->verdict, "~") ? " " : "", strcmp(r->verdict, "~") ? r->verdict : "",
			 r->too_few ? " (too few samples)" : "");
}

/* One block per (table, metric): a row per key, the key on its own line when
 * key and values do not fit the width together. */
static void rpt_print_group(FILE *out, const struct rpt_cmpctx *c, size_t first, size_t width)
{
	const struct rpt_cmprow *g = &c->rows[first];
	char b[64], n[64], d[32], note[96];
	size_t kw = 3, bw = 4, nw = 3, dw = 5;
	for (size_t i = first; i < c->nrows; i++) {
		const struct rpt_cmprow *r = &c->rows[i];
		if (strcmp(r->table, g->table) || strcmp(r->metric, g->metric) || !r->bn)
			continue;
		rpt_fmt_side(b, sizeof(b), &r->b, r->unit);
		rpt_fmt_side(n, sizeof(n), &r->n, r->unit);
		rpt_fmt_delta(d, sizeof(d), r);
		kw = rpt_strwidth(r->key) > kw ? rpt_strwidth(r->key) : kw;
		bw = rpt_strwidth(b) > bw ? rpt_strwidth(b) : bw;
		nw = rpt_strwidth(n) > nw ? rpt_strwidth(n) : nw;
		dw = rpt_strwidth(d) > dw ? rpt_strwidth(d) : dw;
	}
	size_t restw = bw + nw + dw + 6 + 22;
	bool own_line = kw + 2 + restw > width;
	size_t lead = own_line ? 4 : kw + 2;
	fprintf(out, "%s.%s (%s is worse)\n", g->table, g->metric,
		g->dir == RPT_DIR_LOWER ? "higher" : g->dir == RPT_DIR_HIGHER ? "lower" : "neither");
	fprintf(out, "%-*s%-*s  %-*s  delta\n", (int)lead, own_line ? "" : "key", (int)bw, "base",
		(int)nw, "new");
	for (size_t i = first; i < c->nrows; i++) {
		const struct rpt_cmprow *r = &c->rows[i];
		if (strcmp(r->table, g->table) || strcmp(r->metric, g->metric) || !r->bn)
			continue;
		rpt_fmt_side(b, sizeof(b), &r->b, r->unit);
		rpt_fmt_side(n, sizeof(n), &r->n, r->unit);
		rpt_fmt_delta(d, sizeof(d), r);
		rpt_fmt_note(note, sizeof(note), r);
		if (own_line)
			fprintf(out, "%s\n%*s", r->key, (int)lead, "");
		else
			fprintf(out, "%s%*s", r->key, (int)(lead - rpt_strwidth(r->key)), "");
		fprintf(out, "%s%*s  %s%*s  %s%*s  %s\n", b, (int)(bw - rpt_strwidth(b)), "",
			n, (int)(nw - rpt_strwidth(n)), "", d, (int)(dw - rpt_strwidth(d)), "", note);
	}
	fputc('\n', out);
}

static bool rpt_group_first(const struct rpt_cmpctx *c, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (c->rows[k].bn && !strcmp(c->rows[k].table, c->rows[i].table) &&
		    !strcmp(c->rows[k].metric, c->rows[i].metric))
			return false;
	return c->rows[i].bn > 0;
}

/* Metrics without samples: only those that moved more than the threshold. */
static void rpt_print_unjudged(FILE *out, const struct rpt_cmpctx *c)
{
	size_t shown = 0, quiet = 0;
	for (size_t i = 0; i < c->nrows; i++) {
		const struct rpt_cmprow *r = &c->rows[i];
		if (r->bn)
			continue;
		if (!(fabs(r->delta_pct) > c->o->threshold_pct) || r->dir == RPT_DIR_NONE) {
			quiet++;
			continue;
		}
		char b[64], n[64];
		rpt_fmt_auto(b, sizeof(b), r->b.median, r->unit);
		rpt_fmt_auto(n, sizeof(n), r->n.median, r->unit);
		if (!shown++)
			fprintf(out, "Changed by more than %g%% but without per-interval samples "
				"(not judged):\n", c->o->threshold_pct);
		fprintf(out, "  %s[%s].%s: %s -> %s (%+.1f%%)\n", r->table, r->key, r->metric, b, n,
			r->delta_pct);
	}
	if (shown)
		fputc('\n', out);
	if (quiet)
		fprintf(out, "%zu metrics without samples changed less than %g%% or have no "
			"better direction (all in --format csv)\n", quiet, c->o->threshold_pct);
}

/* At most RPT_UNMATCHED_SHOWN rows per table; the CSV has them all. */
#define RPT_UNMATCHED_SHOWN 10
static void rpt_print_unmatched(FILE *out, const struct rpt_cmpctx *c, const struct rpt_textopt *to)
{
	const struct np_table *u = c->unmatched;
	struct np_table *t = np_table_new("unmatched", "Unmatched rows (in one analysis only)", 2);
	if (!t)
		return;
	for (size_t k = 0; k < u->ncols; k++)
		np_table_col(t, u->cols[k].name, u->cols[k].unit, NULL);
	char more[4096] = "";
	size_t off = 0;
	for (size_t r = 0; r < u->nrows; r++) {
		const char *tab = np_table_cell_c(u, r, 0)->s;
		size_t seen = 0, total = 0;
		bool first = true;
		for (size_t q = 0; q < u->nrows; q++)
			if (!strcmp(np_table_cell_c(u, q, 0)->s, tab)) {
				if (q < r)
					seen++, first = false;
				total++;
			}
		if (seen < RPT_UNMATCHED_SHOWN) {
			size_t row = np_table_row(t);
			for (size_t k = 0; k < u->ncols; k++)
				np_table_set_str(t, row, k, np_table_cell_c(u, r, k)->s);
		}
		if (first && total > RPT_UNMATCHED_SHOWN && off < sizeof(more))
			off += (size_t)snprintf(more + off, sizeof(more) - off, "%s%zu more in %s",
						off ? ", " : "", total - RPT_UNMATCHED_SHOWN, tab);
	}
	struct rpt_textopt so = *to;
	so.max_rows = 0;
	rpt_text_table(out, t, &so);
	if (off)
		fprintf(out, "(%s; every row in --format csv)\n\n", more);
	np_table_free(t);
}

static void rpt_print_text(FILE *out, const struct rpt_cmpctx *c, const struct rpt_textopt *to)
{
	const struct rpt_cmpopt *o = c->o;
	size_t width = to->width >= 40 ? (size_t)to->width : 80;
	fprintf(out, "npreport compare\n  base: %s\n  new:  %s\n  medians of per-interval samples "
		"with %g%% CI; Mann-Whitney U, alpha %g; threshold %g%%; ~ = no significant change\n\n",
		o->base_path, o->new_path, RPT_CONF * 100, o->alpha, o->threshold_pct);
	for (size_t i = 0; i < c->nrows; i++)
		if (rpt_group_first(c, i))
			rpt_print_group(out, c, i, width);
	rpt_print_unjudged(out, c);
	if (c->unmatched->nrows)
		rpt_print_unmatched(out, c, to);
	if (c->skipped)
		fprintf(out, "not compared (rows keyed by time, they do not recur): %s\n", c->skipped);
	if (c->st.too_few)
		fprintf(out, "warning: %zu metrics have too few samples on a side to ever be "
			"significant at alpha %g (need >= %zu per side)\n", c->st.too_few, o->alpha,
			rpt_samples_needed(o->alpha));
	rpt_summary_line(out, c);
}

int rpt_compare(FILE *out, const struct np_analysis *base, const struct np_analysis *neu,
		const struct rpt_cmpopt *o, const struct rpt_textopt *to, struct rpt_cmpstats *st)
{
	struct rpt_cmpctx c = { .o = o, .base = base, .neu = neu };
	c.unmatched = np_table_new("unmatched", "Unmatched rows", 2);
	if (!c.unmatched)
		return -1;
	np_table_col(c.unmatched, "table", "str", NULL);
	np_table_col(c.unmatched, "key", "str", NULL);
	np_table_col(c.unmatched, "only_in", "str", NULL);
	c.sidx_base = rpt_series_index(base);
	c.sidx_new = rpt_series_index(neu);
	rpt_compare_all(&c);
	if (o->csv) {
		struct np_table *t = rpt_csv_rows(&c);
		if (t)
			rpt_csv_table(out, t);
		np_table_free(t);
		rpt_summary_line(stderr, &c);
	} else {
		rpt_print_text(out, &c, to);
	}
	if (st)
		*st = c.st;
	int ret = c.st.regressions ? 1 : 0;
	for (size_t i = 0; i < c.nrows; i++)
		free(c.rows[i].key);
	free(c.rows);
	free(c.skipped);
	free(c.sidx_base);
	free(c.sidx_new);
	np_table_free(c.unmatched);
	return ret;
}
