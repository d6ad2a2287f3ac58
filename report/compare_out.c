/* compare's output: text (for people), CSV (every metric), JUnit XML (one
 * testcase per gated metric, for CI test views) and Markdown (a short table
 * for a merge-request comment). */
#include "compare.h"
#include "csvout.h"
#include "units.h"

#include <math.h>
#include <string.h>

static const char *const rpt_test_names[] = {
	[RPT_TEST_NONE] = "none", [RPT_TEST_RUNS] = "runs-t", [RPT_TEST_BOOT] = "block-bootstrap",
	[RPT_TEST_PROP] = "proportion" };

static void rpt_fmt_val(char *buf, size_t size, double v, const char *unit)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		rpt_fmt_auto(buf, size, v, unit);
}

static void rpt_fmt_delta(char *buf, size_t size, const struct rpt_cmprow *r)
{
	if (isinf(r->delta_pct))
		snprintf(buf, size, "%s", r->delta_pct > 0 ? "+inf" : "-inf");
	else if (isnan(r->delta_pct))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%+.1f%%", r->delta_pct);
}

/* "q=0.012, 8+8 intervals" / "q=0.2, 3+3 runs" */
static void rpt_fmt_how(char *buf, size_t size, const struct rpt_cmprow *r)
{
	switch (r->test) {
	case RPT_TEST_RUNS:
		snprintf(buf, size, "q=%.3g, %zu+%zu runs", r->q, r->kb, r->kn);
		break;
	case RPT_TEST_BOOT:
		snprintf(buf, size, "q=%.3g, %zu+%zu intervals", r->q, r->sb, r->sn);
		break;
	case RPT_TEST_PROP:
		if (r->kb + r->kn > 2)
			snprintf(buf, size, "q=%.3g, counted rate, %zu+%zu runs", r->q, r->kb, r->kn);
		else
			snprintf(buf, size, "q=%.3g, counted rate", r->q);
		break;
	default:
		snprintf(buf, size, "no samples to test");
	}
}

static void rpt_fmt_min(char *buf, size_t size, const struct rpt_cmprow *r)
{
	char a[48];
	rpt_fmt_val(a, sizeof(a), r->eff.abs, r->unit);
	if (r->eff.abs > 0)
		snprintf(buf, size, "min %g%% and %s", r->eff.rel_pct, a);
	else
		snprintf(buf, size, "min %g%%", r->eff.rel_pct);
}

/* "REGRESSION", "~" ..., or why a gate quantile was not gated:
 * "not gated: too few requests (n=600, needs >= 1000)". */
static const char *rpt_fmt_verdict(char *buf, size_t size, const struct rpt_cmprow *r)
{
	if (!r->tail_short)
		return r->verdict;
	snprintf(buf, size, "not gated: too few %s (n=%.0f, needs >= %.0f)",
		 r->tail_what && !strcmp(r->tail_what, "requests") ? "requests" : "samples",
		 r->tail_n, r->tail_need);
	return buf;
}

static void rpt_text_row(FILE *out, const struct rpt_cmprow *r)
{
	char b[48], n[48], d[24], how[64], mn[96], v[96];
	rpt_fmt_val(b, sizeof(b), r->b, r->unit);
	rpt_fmt_val(n, sizeof(n), r->n, r->unit);
	rpt_fmt_delta(d, sizeof(d), r);
	rpt_fmt_how(how, sizeof(how), r);
	rpt_fmt_min(mn, sizeof(mn), r);
	fprintf(out, "%s.%s [%s]\n    %s -> %s  %s  (%s; %s)  %s\n", r->table, r->metric, r->key,
		b, n, d, how, mn, rpt_fmt_verdict(v, sizeof(v), r));
}

void rpt_cmp_summary_line(FILE *f, const struct rpt_cmpres *r)
{
	const struct rpt_cmpstats *s = &r->st;
	fprintf(f, "compare: %zu gated metrics (%zu tested), %zu regressions, %zu improvements; "
		"%zu other metrics, %zu significant changes; %zu unmatched rows",
		s->gated, s->gated_tested, s->regressions, s->improvements, s->metrics - s->gated,
		s->significant, s->unmatched_base + s->unmatched_new);
	if (s->tail_short)
		fprintf(f, "; %zu quantiles not gated (too few requests)", s->tail_short);
	fprintf(f, ": %s", s->regressions ? "REGRESSION" : "OK");
	size_t shown = 0;
	for (size_t i = 0; i < r->nrows && shown < 3; i++) {
		const struct rpt_cmprow *w = &r->rows[i];
		if (w->regression)
			fprintf(f, "%s%s[%s].%s %+.1f%%", shown++ ? "; " : " (", w->table, w->key,
				w->metric, w->delta_pct);
	}
	fprintf(f, "%s\n", shown ? ")" : "");
}

static void rpt_text_header(FILE *out, const struct rpt_cmpres *r, const struct rpt_cmpopt *o)
{
	fprintf(out, "npreport compare: %zu base run%s, %zu new run%s\n", o->nbase,
		o->nbase == 1 ? "" : "s", o->nnew, o->nnew == 1 ? "" : "s");
	for (size_t i = 0; i < o->nbase; i++)
		fprintf(out, "  base: %s\n", o->base_paths[i]);
	for (size_t i = 0; i < o->nnew; i++)
		fprintf(out, "  new:  %s\n", o->new_paths[i]);
	if (o->nbase + o->nnew >= 3)
		fprintf(out, "  test: t-test on the run-level values (log scale), between-run spread\n");
	else
		fprintf(out, "  test: block bootstrap of the median of per-interval samples; counted "
			"rates: two-proportion test\n");
	fprintf(out, "  false discovery rate %g (Benjamini-Hochberg over the gated metrics, and "
		"over the others)\n", o->alpha);
	const struct rpt_cmpstats *s = &r->st;
	fprintf(out, "  rows: %zu -> %zu stable rows (ephemeral ports and pids aggregated)",
		s->raw_rows, s->stable_rows);
	if (s->event_rows)
		fprintf(out, "; %zu rows keyed by time not compared (%s)", s->event_rows,
			r->event_tables ? r->event_tables : "");
	fputs("\n\n", out);
}

#define RPT_UNMATCHED_SHOWN 10

static void rpt_text_unmatched(FILE *out, const struct rpt_cmpres *r)
{
	const struct rpt_cmpstats *s = &r->st;
	if (!r->num)
		return;
	fprintf(out, "Unmatched rows (a stable key in one side only): %zu only in base, %zu only "
		"in new\n", s->unmatched_base, s->unmatched_new);
	for (size_t i = 0; i < r->num && i < RPT_UNMATCHED_SHOWN; i++)
		fprintf(out, "  %s [%s]: %s%s\n", r->um[i].table, r->um[i].key,
			r->um[i].in_base ? "base only" : "new only", r->um[i].gated ? " (gated row)" : "");
	if (r->num > RPT_UNMATCHED_SHOWN)
		fprintf(out, "  ... %zu more (every row in --format csv)\n", r->num - RPT_UNMATCHED_SHOWN);
	if (s->gated_missing)
		fprintf(out, "warning: %zu gated rows of base are missing in new (an endpoint that "
			"served nothing?)\n", s->gated_missing);
	fputc('\n', out);
}

static void rpt_print_text(FILE *out, const struct rpt_cmpres *r, const struct rpt_cmpopt *o)
{
	rpt_text_header(out, r, o);
	fprintf(out, "Gate (%zu metrics; a regression is worse, q < %g and at least the minimum "
		"effect)\n", r->st.gated, o->alpha);
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].gated)
			rpt_text_row(out, &r->rows[i]);
	if (!r->st.gated)
		fprintf(out, "  (no gated metric in both sides: nothing gates this comparison)\n");
	if (r->st.tail_short)
		fprintf(out, "\nGate quantiles not gated (%zu): fewer than %g observations beyond the "
			"quantile in a run (n x (1 - q); --min-tail)\n", r->st.tail_short, o->gate->min_tail);
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].tail_short)
			rpt_text_row(out, &r->rows[i]);
	size_t others = 0, shown = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct rpt_cmprow *w = &r->rows[i];
		if (w->gated || w->tail_short)
			continue;
		others++;
		if (!w->significant || !w->big_enough || w->dir == RPT_DIR_NONE)
			continue;
		if (!shown++)
			fprintf(out, "\nOther significant changes beyond their family's minimum "
				"(reported, not gated; --metric gates them)\n");
		rpt_text_row(out, w);
	}
	fprintf(out, "\n%zu other metrics compared, %zu shown; %zu metrics not judged "
		"(no per-interval samples or runs to test; all in --format csv)\n\n",
		others, shown, r->st.not_judged);
	rpt_text_unmatched(out, r);
	rpt_cmp_summary_line(out, r);
}

static struct np_table *rpt_csv_rows(const struct rpt_cmpres *r)
{
	static const char *const cols[][2] = {
		{ "table", "str" }, { "key", "str" }, { "metric", "str" }, { "unit", "str" },
		{ "worse_when", "str" }, { "family", "str" }, { "gated", "bool" }, { "test", "str" },
		{ "base_samples", "count" }, { "new_samples", "count" }, { "base_runs", "count" },
		{ "new_runs", "count" }, { "base", "" }, { "new", "" }, { "delta", "" },
		{ "delta_pct", "" }, { "min_rel_pct", "" }, { "min_abs", "" }, { "p", "" },
		{ "q", "" }, { "significant", "bool" }, { "verdict", "str" } };
	struct np_table *t = np_table_new("compare", "Comparison", 3);
	if (!t)
		return NULL;
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		np_table_col(t, cols[i][0], cols[i][1], NULL);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct rpt_cmprow *w = &r->rows[i];
		size_t row = np_table_row(t);
		const char *strs[] = { w->table, w->key, w->metric, w->unit ? w->unit : "",
				       w->dir == RPT_DIR_LOWER ? "higher" : w->dir == RPT_DIR_HIGHER ? "lower" : "",
				       rpt_family_name(w->fam) };
		for (size_t k = 0; k < 6; k++)
			np_table_set_str(t, row, k, strs[k]);
		np_table_set_u64(t, row, 6, w->gated);
		np_table_set_str(t, row, 7, rpt_test_names[w->test]);
		/* samples at column 9 as before the runs were added (scripts read it) */
		const double nums[] = { (double)w->sb, (double)w->sn, (double)w->kb, (double)w->kn,
					w->b, w->n, w->delta_abs, w->delta_pct, w->eff.rel_pct,
					w->eff.abs, w->p, w->q };
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
			if (!isnan(nums[k]) && !isinf(nums[k]))
				np_table_set_f64(t, row, 8 + k, nums[k]);
		np_table_set_u64(t, row, 20, w->significant);
		char v[96];
		np_table_set_str(t, row, 21, rpt_fmt_verdict(v, sizeof(v), w));
	}
	for (size_t i = 0; i < r->num; i++) {
		size_t row = np_table_row(t);
		np_table_set_str(t, row, 0, r->um[i].table);
		np_table_set_str(t, row, 1, r->um[i].key);
		np_table_set_u64(t, row, 6, r->um[i].gated);
		np_table_set_str(t, row, 21, r->um[i].in_base ? "base only" : "new only");
	}
	return t;
}

static void rpt_xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<') fputs("&lt;", out);
		else if (c == '>') fputs("&gt;", out);
		else if (c == '&') fputs("&amp;", out);
		else if (c == '"') fputs("&quot;", out);
		else if (c < 0x20 && c != '\t' && c != '\n') fputc(' ', out);   /* not allowed in XML 1.0 */
		else fputc(c, out);
	}
}

static void rpt_print_junit(FILE *out, const struct rpt_cmpres *r)
{
	size_t skipped = r->st.tail_short;
	for (size_t i = 0; i < r->nrows; i++)
		skipped += r->rows[i].gated && r->rows[i].test == RPT_TEST_NONE;
	for (size_t i = 0; i < r->num; i++)
		skipped += r->um[i].gated && r->um[i].in_base;
	size_t tests = r->st.gated + r->st.gated_missing + r->st.tail_short;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"npreport compare\" "
		"tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n  <testsuite name=\"npreport compare\" "
		"tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n", tests, r->st.regressions, skipped,
		tests, r->st.regressions, skipped);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct rpt_cmprow *w = &r->rows[i];
		if (!w->gated && !w->tail_short)
			continue;
		char b[48], n[48], d[24], how[64], mn[96], v[96], msg[384];
		rpt_fmt_val(b, sizeof(b), w->b, w->unit);
		rpt_fmt_val(n, sizeof(n), w->n, w->unit);
		rpt_fmt_delta(d, sizeof(d), w);
		rpt_fmt_how(how, sizeof(how), w);
		rpt_fmt_min(mn, sizeof(mn), w);
		snprintf(msg, sizeof(msg), "%s -> %s (%s; %s; %s): %s", b, n, d, how, mn,
			 rpt_fmt_verdict(v, sizeof(v), w));
		fputs("    <testcase classname=\"np.compare.", out);
		rpt_xml(out, w->table);
		fputs("\" name=\"", out);
		rpt_xml(out, w->metric);
		fputs(" [", out);
		rpt_xml(out, w->key);
		fputs("]\">", out);
		if (w->regression || w->test == RPT_TEST_NONE || w->tail_short) {
			fputs(w->regression ? "<failure message=\"" : "<skipped message=\"", out);
			rpt_xml(out, msg);
			fputs("\"/>", out);
		} else {
			fputs("<system-out>", out);
			rpt_xml(out, msg);
			fputs("</system-out>", out);
		}
		fputs("</testcase>\n", out);
	}
	for (size_t i = 0; i < r->num; i++) {
		if (!r->um[i].gated || !r->um[i].in_base)
			continue;
		fputs("    <testcase classname=\"np.compare.", out);
		rpt_xml(out, r->um[i].table);
		fputs("\" name=\"[", out);
		rpt_xml(out, r->um[i].key);
		fputs("]\"><skipped message=\"in base only: missing in new\"/></testcase>\n", out);
	}
	fputs("    <system-out>", out);
	char line[1024];
	FILE *m = fmemopen(line, sizeof(line), "w");
	if (m) {
		rpt_cmp_summary_line(m, r);
		fclose(m);
		line[sizeof(line) - 1] = 0;
		rpt_xml(out, line);
	}
	fputs("</system-out>\n  </testsuite>\n</testsuites>\n", out);
}

static void rpt_md(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' || *s == '_' || *s == '<')
			fputc('\\', out);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
	}
}

/* Gated metrics first (regressions on top), then other significant changes,
 * at most 20 other rows: a merge-request comment stays short. */
static void rpt_print_markdown(FILE *out, const struct rpt_cmpres *r, const struct rpt_cmpopt *o)
{
	const struct rpt_cmpstats *s = &r->st;
	fprintf(out, "### npreport compare: %s\n\n%zu base run%s vs %zu new run%s; %zu gated metrics, "
		"%zu regressions; false discovery rate %g (Benjamini-Hochberg)\n\n",
		s->regressions ? "REGRESSION" : "OK", o->nbase, o->nbase == 1 ? "" : "s", o->nnew,
		o->nnew == 1 ? "" : "s", s->gated, s->regressions, o->alpha);
	fputs("| verdict | metric | key | base | new | change | q |\n|---|---|---|---|---|---:|---:|\n", out);
	size_t other = 0;
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < r->nrows; i++) {
			const struct rpt_cmprow *w = &r->rows[i];
			bool want = pass == 0 ? w->regression
				    : pass == 1 ? (w->gated && !w->regression) || w->tail_short
				    : !w->gated && !w->tail_short && w->significant && w->big_enough &&
				      w->dir != RPT_DIR_NONE;
			if (!want || (pass == 2 && other++ >= 20))
				continue;
			char b[48], n[48], d[24], v[96];
			rpt_fmt_val(b, sizeof(b), w->b, w->unit);
			rpt_fmt_val(n, sizeof(n), w->n, w->unit);
			rpt_fmt_delta(d, sizeof(d), w);
			fprintf(out, "| %s%s%s | ", w->regression ? "**" : "",
				rpt_fmt_verdict(v, sizeof(v), w), w->regression ? "**" : "");
			rpt_md(out, w->table);
			fputc('.', out);
			rpt_md(out, w->metric);
			fputs(w->gated || w->tail_short ? " | " : " (not gated) | ", out);
			rpt_md(out, w->key);
			fprintf(out, " | %s | %s | %s | ", b, n, d);
			fprintf(out, isnan(w->q) ? "- |\n" : "%.3g |\n", w->q);
		}
	if (other > 20)
		fprintf(out, "\n%zu more significant changes outside the gate (`--format csv`).\n", other - 20);
	if (s->unmatched_base + s->unmatched_new)
		fprintf(out, "\n%zu rows only in base, %zu only in new%s.\n", s->unmatched_base,
			s->unmatched_new, s->gated_missing ? " (gated rows missing in new!)" : "");
}

void rpt_cmp_write(FILE *out, const struct rpt_cmpres *r, const struct rpt_cmpopt *o,
		   const struct rpt_textopt *to)
{
	(void)to;
	switch (o->format) {
	case RPT_CMP_CSV: {
		struct np_table *t = rpt_csv_rows(r);
		if (t)
			rpt_csv_table(out, t);
		np_table_free(t);
		rpt_cmp_summary_line(stderr, r);
		break;
	}
	case RPT_CMP_JUNIT:
		rpt_print_junit(out, r);
		rpt_cmp_summary_line(stderr, r);
		break;
	case RPT_CMP_MARKDOWN:
		rpt_print_markdown(out, r, o);
		rpt_cmp_summary_line(stderr, r);
		break;
	default:
		rpt_print_text(out, r, o);
	}
}
