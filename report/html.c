/* The HTML report: one self-contained file to attach to an incident ticket.
 * The incident summary, the findings, the plots as inline SVG (rendered by
 * gnuplot into a temporary directory, removed afterwards), then every table
 * in section order; tables longer than a screen fold into <details>. No
 * script, no external resource. Numeric cells carry their raw value
 * (data-v, base units as in the CSV) next to the displayed one. */
#include "html.h"
#include "outfile.h"
#include "csvout.h"
#include "incident.h"
#include "plots.h"
#include "sections.h"
#include "textrep.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RPT_HTML_FOLD_ROWS 12

static void h_esc(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:  fputc(*s, f);
		}
}

static const char rpt_html_css[] =
	"body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}"
	"h1{font-size:1.5em}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:2em}"
	"h3{font-size:1.05em;margin-bottom:.3em}code{color:#555}"
	"table{border-collapse:collapse;font-size:.85em;margin:.3em 0 1em}"
	"th,td{border:1px solid #ccc;padding:2px 6px}th{background:#eef3f8;text-align:left}"
	"th small{font-weight:normal;color:#555}td.num{text-align:right;font-variant-numeric:tabular-nums}"
	"ol.incident li{margin:.4em 0}.kind{display:inline-block;min-width:6em;font-weight:bold}"
	".k-slow_endpoint,.k-slow_downstream,.k-loss{color:#b00}.k-tail,.k-time_spent{color:#a60}"
	"figure{margin:1em 0}figure svg{max-width:100%;height:auto}figcaption{color:#555}"
	"details summary{cursor:pointer;color:#0072B2}";

static void rpt_html_summary(FILE *f, const struct np_analysis *a)
{
	struct rpt_incident inc;
	rpt_incident_build(a, &inc);
	fputs("<section id=\"incident\"><h2>Incident summary</h2>\n<p>From the analysis alone; "
	      "the most added latency for users first. Each line links the table that proves it.</p>\n"
	      "<ol class=\"incident\">\n", f);
	for (size_t i = 0; i < inc.n; i++) {
		const struct rpt_inc_item *it = &inc.items[i];
		const char *kind = rpt_inc_kind_name(it->kind);
		fprintf(f, "<li class=\"k-%s\" data-kind=\"%s\"><span class=\"kind\">%s</span> ", kind, kind,
			rpt_inc_kind_label(it->kind));
		h_esc(f, it->text);
		fputs(" <a href=\"#tbl-", f);
		h_esc(f, it->table);
		fputs("\">[", f);
		h_esc(f, it->table);
		fputs("]</a></li>\n", f);
	}
	if (inc.n == 0)
		fputs("<li>nothing to summarise: no endpoint, loss, clock or recorder table</li>\n", f);
	fputs("</ol></section>\n", f);
}

static void rpt_html_findings(FILE *f, const struct np_analysis *a)
{
	size_t *idx = rpt_findings_order(a);
	fprintf(f, "<section id=\"findings\"><h2>Findings (%zu)</h2>\n<ol>\n", a->nfindings);
	for (size_t i = 0; idx && i < a->nfindings; i++) {
		const struct np_finding *fd = &a->findings[idx[i]];
		fprintf(f, "<li>[%s] ", rpt_severity_name(fd->severity));
		h_esc(f, fd->text);
		fputs("</li>\n", f);
	}
	fputs("</ol></section>\n", f);
	free(idx);
}

static void rpt_html_cell(FILE *f, const struct rpt_grid *g, const struct np_table *t, size_t r, size_t c)
{
	const struct np_cell *cell = np_table_cell_c(t, r, c);
	bool num = g->cv[c].numeric && cell->kind != NP_CELL_STR && cell->kind != NP_CELL_NIL;
	fputs(num ? "<td class=\"num\" data-v=\"" : "<td>", f);
	if (num) {
		rpt_csv_f64(f, np_cell_f64(cell));
		fputs("\">", f);
	}
	h_esc(f, g->cells[r * g->ncols + c]);
	fputs("</td>", f);
}

static void rpt_html_table(FILE *f, const struct np_table *t, double t0)
{
	struct rpt_grid g = { 0 };
	fputs("<h3 id=\"tbl-", f);
	h_esc(f, t->name);
	fputs("\">", f);
	h_esc(f, t->title && *t->title ? t->title : t->name);
	fputs(" <code>[", f);
	h_esc(f, t->name);
	fputs("]</code></h3>\n", f);
	if (rpt_grid_build(&g, t, t->nrows, t0) < 0) {
		fputs("<p>(out of memory)</p>\n", f);
		rpt_grid_free(&g);
		return;
	}
	bool fold = t->nrows > RPT_HTML_FOLD_ROWS;
	if (fold)
		fprintf(f, "<details><summary>%zu rows (show)</summary>\n", t->nrows);
	fputs("<table data-table=\"", f);
	h_esc(f, t->name);
	fputs("\"><thead><tr>", f);
	for (size_t c = 0; c < t->ncols; c++) {
		fputs("<th data-col=\"", f);
		h_esc(f, t->cols[c].name);
		fputs("\">", f);
		h_esc(f, g.names[c]);
		if (*g.cv[c].sc.label) {
			fputs("<br><small>", f);
			h_esc(f, g.cv[c].sc.label);
			fputs("</small>", f);
		}
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (size_t c = 0; c < t->ncols; c++)
			rpt_html_cell(f, &g, t, r, c);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	if (fold)
		fputs("</details>\n", f);
	rpt_grid_free(&g);
}

static void rpt_html_tables(FILE *f, const struct np_analysis *a, double t0)
{
	const struct np_table **tabs;
	size_t n = rpt_tables_ordered(a, &tabs), last = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		size_t sec = rpt_section_of(tabs[i]->name);
		if (sec != last) {
			fprintf(f, "%s<section id=\"sec-%s\"><h2>", last == (size_t)-1 ? "" : "</section>\n",
				sec < rpt_nsections ? rpt_sections[sec].name : "other");
			h_esc(f, sec < rpt_nsections ? rpt_sections[sec].title : "Other tables");
			fputs("</h2>\n", f);
		}
		last = sec;
		rpt_html_table(f, tabs[i], t0);
	}
	if (n)
		fputs("</section>\n", f);
	free(tabs);
}

/* Copies DIR/NAME's <svg ...> element (without the XML prolog) into f. */
static void rpt_html_svg(FILE *f, const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *in = fopen(path, "r");
	if (!in)
		return;
	char *buf = NULL;
	size_t cap = 0, len = 0, k;
	char chunk[65536];
	while ((k = fread(chunk, 1, sizeof(chunk), in)) > 0) {
		char *nb = len + k + 1 > cap ? realloc(buf, (cap = (len + k + 1) * 2)) : buf;
		if (!nb)
			break;
		buf = nb;
		memcpy(buf + len, chunk, k);
		len += k;
	}
	fclose(in);
	char *svg = buf ? (buf[len] = '\0', strstr(buf, "<svg")) : NULL;
	if (svg) {
		fputs("<figure data-plot=\"", f);
		h_esc(f, name);
		fputs("\">\n", f);
		fputs(svg, f);
		fputs("<figcaption>", f);
		h_esc(f, name);
		fputs("</figcaption></figure>\n", f);
	}
	free(buf);
}

static int rpt_cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The incident's plots first, then the rest by name. */
static size_t rpt_plot_rank(const char *name)
{
	static const char *const first[] = { "endpoints.svg", "latency-time.svg", "loss-pairs.svg",
					     "retrans-time.svg", "clock.svg", "decomp-services-decomp.svg", NULL };
	for (size_t i = 0; first[i]; i++)
		if (!strcmp(name, first[i]))
			return i;
	return 100;
}

static void rpt_html_plots_from(FILE *f, const char *dir)
{
	DIR *d = opendir(dir);
	char *names[256];
	size_t n = 0;
	for (struct dirent *e; d && (e = readdir(d)) && n < 256;) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".svg"))
			names[n++] = strdup(e->d_name);
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(names[0]), rpt_cmp_str);
	fprintf(f, "<section id=\"plots\"><h2>Plots</h2>\n%s", n ? "" : "<p>No plots: gnuplot is not installed.</p>\n");
	for (size_t rank = 0; rank <= 100; rank++)
		for (size_t i = 0; i < n; i++)
			if (names[i] && rpt_plot_rank(names[i]) == rank) {
				rpt_html_svg(f, dir, names[i]);
				free(names[i]);
				names[i] = NULL;
			}
	fputs("</section>\n", f);
}

/* Renders the plots into a fresh temporary directory, inlines them, and
 * removes the directory. */
static void rpt_html_plots(FILE *f, const struct np_analysis *a)
{
	char dir[] = "/tmp/npreport-html-XXXXXX";
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/npreport-html-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *made = mkdtemp(path);
	if (!made && !(made = mkdtemp(dir))) {
		fprintf(stderr, "npreport: --html: no temporary directory for the plots: %s\n", strerror(errno));
		return;
	}
	struct rpt_plotres pr;
	if (rpt_gnuplot_path() && rpt_plots(made, a, &pr) == 0)
		rpt_html_plots_from(f, made);
	else
		rpt_html_plots_from(f, "/nonexistent");
	DIR *d = opendir(made);
	for (struct dirent *e; d && (e = readdir(d));) {
		char p[4200];
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", made, e->d_name);
			unlink(p);
		}
	}
	if (d)
		closedir(d);
	rmdir(made);
}

/* The recorded hosts (meta) and the analysis warnings, unless a hosts
 * table of the analysis is rendered with the others. */
static void rpt_html_files(FILE *f, const struct np_analysis *a)
{
	fputs("<section id=\"files\"><h2>Recorded hosts</h2>\n", f);
	struct np_table *hosts = np_analysis_table(a, "hosts") ? NULL : rpt_meta_table(a, "hosts");
	if (hosts) {
		rpt_html_table(f, hosts, 0);
		np_table_free(hosts);
	}
	fputs("</section>\n", f);
}

int rpt_html_report(const char *path, const struct np_analysis *a, const char *const *inputs,
		    size_t ninputs)
{
	FILE *f = rpt_create(path);
	if (!f) {
		fprintf(stderr, "npreport: cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>np report: ", f);
	h_esc(f, inputs[0]);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>np analysis report</h1>\n<p>", rpt_html_css);
	for (size_t i = 0; i < ninputs; i++) {
		fputs(i ? ", <code>" : "<code>", f);
		h_esc(f, inputs[i]);
		fputs("</code>", f);
	}
	fputs("</p>\n", f);
	rpt_html_summary(f, a);
	rpt_html_findings(f, a);
	rpt_html_plots(f, a);
	rpt_html_files(f, a);
	rpt_html_tables(f, a, rpt_analysis_t0(a));
	fputs("</body></html>\n", f);
	if (ferror(f) | (fclose(f) != 0)) {
		fprintf(stderr, "npreport: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
