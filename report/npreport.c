/* npreport: renders an analysis (.npa) as text, CSV and plots, compares two
 * analyses for CI, and dumps any np file. It never recomputes an analysis:
 * everything shown is what npanalyze stored. */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "anatable.h"
#include "compare.h"
#include "csvout.h"
#include "dump.h"
#include "html.h"
#include "merge.h"
#include "numarg.h"
#include "plots.h"
#include "sections.h"
#include "textrep.h"

#define RPT_EXIT_USAGE 2
#define RPT_MAX_SEL 64

static void rpt_usage(FILE *f)
{
	fprintf(f,
"usage: npreport FILE.npa... [--section NAME]... [--format text|csv] [-o DIR] [--plots DIR]\n"
"                [--rows N] [--width N] [--wide] [--legend] [--html FILE.html]\n"
"       npreport compare BASE.npa NEW.npa [options]\n"
"       npreport compare BASE.npa... -- NEW.npa... [--config FILE] [--metric M[@KEY]]...\n"
"                [--threshold PCT] [--alpha A] [--min-tail N] [--format text|csv|junit|markdown]\n"
"                [--width N]\n"
"       npreport dump FILE...\n"
"\n"
"Report: the incident summary and the three worst findings, then hosts, clock,\n"
"flows, decomp, jitter, loss, txn, netcpu, hoststack, graph, patterns and any\n"
"other table.\n"
"Several files (e.g. incident.npa patterns.npa) are shown as one analysis.\n"
"  -s, --section NAME  only this section or table (repeatable); also incident,\n"
"                      findings, and for CSV series and sketches\n"
"  -f, --format FMT    text (default) or csv (raw numbers in ns, bytes, bits/s)\n"
"  -o, --output DIR    CSV: one file per section in DIR (else one section to stdout)\n"
"  -p, --plots DIR     gnuplot data, scripts, PNG and SVG in DIR\n"
"  -r, --rows N        rows shown per text table (default 40, 0 = all)\n"
"  -w, --width N       text width (default: the terminal's, else COLUMNS, else 100);\n"
"                      columns that do not fit are left out (named under the table)\n"
"  -W, --wide          every column on one row, however wide\n"
"  -H, --html FILE     the report as one self-contained HTML file instead of text\n"
"                      (summary, tables, plots as inline SVG when gnuplot is installed)\n"
"  -l, --legend        what each column means, under each table\n"
"\n"
"Compare: rows matched by stable keys (ephemeral ports and pids aggregated);\n"
"several runs a side (BASE... -- NEW...): t-test on the run-level values; one\n"
"run a side: block bootstrap over per-interval samples; false discovery rate\n"
"by Benjamini-Hochberg. Gated by default: endpoint latency p50/p99/p999,\n"
"request throughput, loss and retransmission rates, network CPU per request;\n"
"everything else is reported only (docs/NPREPORT.md).\n"
"  -c, --config FILE   gate config (alpha, default, family, gate, ignore lines)\n"
"  -m, --metric M      gate these metrics instead of the default set: column,\n"
"                      table.column, table or section, @KEY for the stable row\n"
"                      key (shell patterns; repeatable); 'default' = the default set\n"
"  -t, --threshold PCT minimum relative change of every family (default: per\n"
"                      family, latency and throughput 10, netcpu 20)\n"
"  -a, --alpha A       false discovery rate (default 0.05)\n"
"      --min-tail N    gate a quantile q (p50, p99, p999 ...) only where every run\n"
"                      has n x (1 - q) >= N requests beyond it (default 10: a p99\n"
"                      needs 1000 requests, a p999 10000); the others are shown\n"
"                      'not gated: too few requests'. 0 gates every quantile\n"
"  -f, --format FMT    text, csv, junit (one testcase per gated metric), markdown\n"
"\n"
"Exit status: report 0 ok, 1 the file was damaged (what was readable is shown),\n"
"2 usage or input error. compare 0 no gated regression, 1 a gated metric regressed\n"
"(significant and beyond its minimum effect), 2 usage or input error. dump: see 'npreport dump --help'.\n");
}

/* The terminal's width; COLUMNS when not a terminal, else 100 (a log or a
 * file read later in an editor). */
static int rpt_term_width(void)
{
	struct winsize ws;
	int w = 0;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		w = ws.ws_col;
	if (w <= 0 && getenv("COLUMNS"))
		w = atoi(getenv("COLUMNS"));
	if (w <= 0)
		w = 100;
	return w > 40 ? w : 40;
}

static void rpt_warn(void *ctx, const char *msg)
{
	(void)ctx;        /* the reader's messages name the file already */
	fprintf(stderr, "npreport: %s\n", msg);
}

static int rpt_load(struct np_analysis *a, const char *path)
{
	int err = np_analysis_load(a, path, rpt_warn, (void *)path);
	if (err == 0 && a->stats.records == 0 && a->stats.bad_file_header) {
		np_analysis_free(a);
		err = -EINVAL;
	}
	if (err == -EINVAL)
		fprintf(stderr, "npreport: %s is not an np analysis (.npa); run npanalyze on "
			"recordings first, or 'npreport dump' to inspect it\n", path);
	else if (err < 0)
		fprintf(stderr, "npreport: cannot read %s: %s\n", path, strerror(-err));
	return err;
}

static bool rpt_damaged(const struct np_analysis *a)
{
	const struct np_reader_stats *s = &a->stats;
	return s->chunks_bad || s->bytes_skipped || s->records_bad || s->truncated ||
	       s->bad_file_header;
}

static int rpt_parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	if (np_parse_num(s, lo, hi, out, NULL) == 0)
		return 0;
	fprintf(stderr, "npreport: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
	return -1;
}

static int rpt_parse_format(const char *s, bool *csv)
{
	if (!strcmp(s, "text") || !strcmp(s, "csv")) {
		*csv = !strcmp(s, "csv");
		return 0;
	}
	fprintf(stderr, "npreport: --format: '%s' is neither text nor csv\n", s);
	return -1;
}

static int rpt_parse_cmpfmt(const char *s, enum rpt_cmpfmt *f)
{
	static const char *const names[] = { [RPT_CMP_TEXT] = "text", [RPT_CMP_CSV] = "csv",
					     [RPT_CMP_JUNIT] = "junit", [RPT_CMP_MARKDOWN] = "markdown" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*f = (enum rpt_cmpfmt)i;
			return 0;
		}
	fprintf(stderr, "npreport: --format: '%s' is none of text, csv, junit, markdown\n", s);
	return -1;
}

struct rpt_cli {
	const char *sel[RPT_MAX_SEL];
	size_t nsel;
	bool csv;
	enum rpt_cmpfmt cfmt;
	const char *config;
	bool threshold_set, min_tail_set;
	const char *outdir, *plotdir, *html;
	struct rpt_textopt to;
	struct rpt_cmpopt co;
	double threshold_pct, min_tail;
};

static int rpt_add_sel(struct rpt_cli *c, const char *s)
{
	if (c->nsel >= RPT_MAX_SEL) {
		fprintf(stderr, "npreport: too many --section/--metric options (max %d)\n", RPT_MAX_SEL);
		return -1;
	}
	c->sel[c->nsel++] = s;
	return 0;
}

enum { RPT_OPT_MIN_TAIL = 256 };      /* long-only options */

static const struct option rpt_opts[] = {
	{ "section", required_argument, NULL, 's' }, { "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' }, { "plots", required_argument, NULL, 'p' },
	{ "rows", required_argument, NULL, 'r' }, { "width", required_argument, NULL, 'w' },
	{ "threshold", required_argument, NULL, 't' }, { "alpha", required_argument, NULL, 'a' },
	{ "metric", required_argument, NULL, 'm' }, { "help", no_argument, NULL, 'h' },
	{ "legend", no_argument, NULL, 'l' }, { "wide", no_argument, NULL, 'W' },
	{ "html", required_argument, NULL, 'H' }, { "config", required_argument, NULL, 'c' },
	{ "version", no_argument, NULL, 'V' }, { "min-tail", required_argument, NULL, RPT_OPT_MIN_TAIL },
	{ NULL, 0, NULL, 0 },
};

/* Parses options of both modes; compare-only options are refused in report
 * mode and the other way round. Returns optind or -1 (usage printed), or 0
 * when --help/--version was handled. */
static int rpt_parse(struct rpt_cli *c, int argc, char **argv, bool compare)
{
	int opt;
	double v;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:f:o:p:r:w:t:a:m:c:lWH:hV", rpt_opts, NULL)) != -1) {
		bool cmp_only = opt == 't' || opt == 'a' || opt == 'm' || opt == 'c' ||
				opt == RPT_OPT_MIN_TAIL;
		bool rep_only = opt == 's' || opt == 'o' || opt == 'p' || opt == 'r' || opt == 'l' ||
				opt == 'W' || opt == 'H';
		if ((compare && rep_only) || (!compare && cmp_only)) {
			if (opt == RPT_OPT_MIN_TAIL)
				fprintf(stderr, "npreport: option --min-tail is for compare only\n");
			else
				fprintf(stderr, "npreport: option -%c is for %s\n", opt,
					compare ? "reports, not compare" : "compare only");
			return -1;
		}
		switch (opt) {
		case 's': case 'm': if (rpt_add_sel(c, optarg) < 0) return -1; break;
		case 'f': if ((compare ? rpt_parse_cmpfmt(optarg, &c->cfmt)
				  : rpt_parse_format(optarg, &c->csv)) < 0) return -1;
			  break;
		case 'c': c->config = optarg; break;
		case 'o': c->outdir = optarg; break;
		case 'l': c->to.legend = true; break;
		case 'W': c->to.wide = true; break;
		case 'H': c->html = optarg; break;
		case 'p': c->plotdir = optarg; break;
		case 'r': if (rpt_parse_num("--rows", optarg, 0, 1e9, &v) < 0) return -1;
			  c->to.max_rows = (size_t)v; break;
		case 'w': if (rpt_parse_num("--width", optarg, 40, 10000, &v) < 0) return -1;
			  c->to.width = (int)v; break;
		case 't': if (rpt_parse_num("--threshold", optarg, 0, 1e6, &c->threshold_pct) < 0)
				  return -1;
			  c->threshold_set = true;
			  break;
		case 'a': if (rpt_parse_num("--alpha", optarg, 1e-9, 0.5, &c->co.alpha) < 0) return -1;
			  break;
		case RPT_OPT_MIN_TAIL:
			  if (rpt_parse_num("--min-tail", optarg, 0, 1e6, &c->min_tail) < 0) return -1;
			  c->min_tail_set = true;
			  break;
		case 'h': rpt_usage(stdout); return 0;
		case 'V': printf("npreport %s\n", NP_VERSION); return 0;
		default: rpt_usage(stderr); return -1;
		}
	}
	return optind;
}

static int rpt_check_sections(const struct rpt_cli *c, const struct np_analysis *a)
{
	for (size_t i = 0; i < c->nsel; i++) {
		bool found = rpt_selector_known(c->sel[i]);
		for (size_t t = 0; !found && t < a->ntables; t++)
			found = rpt_selector_matches(c->sel[i], a->tables[t]);
		if (!found) {
			fprintf(stderr, "npreport: no section or table '%s'; tables in this analysis:",
				c->sel[i]);
			for (size_t t = 0; t < a->ntables; t++)
				fprintf(stderr, " %s", a->tables[t]->name);
			fputc('\n', stderr);
			return -1;
		}
	}
	return 0;
}

static int rpt_report_main(int argc, char **argv)
{
	struct rpt_cli c = { .to = { .width = rpt_term_width(), .max_rows = 40 } };
	int ind = rpt_parse(&c, argc, argv, false);
	if (ind <= 0)
		return ind < 0 ? RPT_EXIT_USAGE : 0;
	if (argc - ind < 1 || argc - ind > RPT_MAX_SEL) {
		rpt_usage(stderr);
		return RPT_EXIT_USAGE;
	}
	if (c.outdir && !c.csv) {
		fprintf(stderr, "npreport: -o DIR writes CSV files: add --format csv\n");
		return RPT_EXIT_USAGE;
	}
	size_t nparts = (size_t)(argc - ind);
	struct np_analysis parts[RPT_MAX_SEL], a;
	for (size_t i = 0; i < nparts; i++)
		if (rpt_load(&parts[i], argv[ind + (int)i]) < 0) {
			while (i-- > 0)
				np_analysis_free(&parts[i]);
			return RPT_EXIT_USAGE;
		}
	if (rpt_view_merge(&a, parts, nparts) < 0) {
		fprintf(stderr, "npreport: out of memory\n");
		for (size_t i = 0; i < nparts; i++)
			np_analysis_free(&parts[i]);
		return RPT_EXIT_USAGE;
	}
	int ret = 0;
	struct rpt_selection sel = { c.sel, c.nsel };
	c.to.t0 = rpt_analysis_t0(&a);
	if (rpt_check_sections(&c, &a) < 0) {
		ret = RPT_EXIT_USAGE;
	} else if (c.html) {
		if (rpt_html_report(c.html, &a, (const char *const *)argv + ind, nparts) < 0)
			ret = RPT_EXIT_USAGE;
	} else if (c.csv) {
		if (c.outdir ? rpt_csv_dir(c.outdir, &a, &sel) : rpt_csv_one(stdout, &a, &sel))
			ret = RPT_EXIT_USAGE;
	} else {
		struct rpt_inputs in = { parts, (const char *const *)argv + ind, nparts };
		rpt_text_report(stdout, &a, &in, &sel, &c.to);
	}
	if (ret == 0 && c.plotdir) {
		struct rpt_plotres pr;
		if (rpt_plots(c.plotdir, &a, &pr) < 0)
			ret = RPT_EXIT_USAGE;
		else
			fprintf(stderr, "npreport: %zu plots %s in %s\n", pr.scripts,
				pr.have_gnuplot ? "rendered" : "prepared (no gnuplot)", c.plotdir);
	}
	if (ret == 0 && fflush(stdout) != 0) {
		fprintf(stderr, "npreport: cannot write the report: %s\n", strerror(errno));
		ret = RPT_EXIT_USAGE;
	}
	if (ret == 0 && rpt_damaged(&a))
		ret = 1;
	rpt_view_free(&a);
	for (size_t i = 0; i < nparts; i++)
		np_analysis_free(&parts[i]);
	return ret;
}

/* The gate: --config first, then --metric and --threshold on top. */
static int rpt_compare_gate(struct rpt_gate *g, const struct rpt_cli *c)
{
	char err[256];
	rpt_gate_init(g);
	if (c->config && rpt_gate_load(g, c->config, err, sizeof(err)) < 0) {
		fprintf(stderr, "npreport: --config %s: %s\n", c->config, err);
		return -1;
	}
	struct rpt_mineff fam = { NAN, NAN };
	for (size_t i = 0; i < c->nsel; i++) {
		if (!strcmp(c->sel[i], "default"))
			g->use_default = 1;
		else if (rpt_gate_add(g, c->sel[i], false, fam) < 0) {
			fprintf(stderr, "npreport: --metric %s: too many rules\n", c->sel[i]);
			return -1;
		}
	}
	if (c->threshold_set)
		rpt_gate_set_rel(g, c->threshold_pct);
	if (c->min_tail_set)
		g->min_tail = c->min_tail;
	return 0;
}

static int rpt_load_all(struct np_analysis *a, char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rpt_load(&a[i], paths[i]) < 0) {
			while (i-- > 0)
				np_analysis_free(&a[i]);
			return -1;
		}
	return 0;
}

/* BASE... -- NEW... (options on either side of "--"), or BASE NEW. */
static int rpt_compare_args(struct rpt_cli *c, int argc, char **argv, char ***files, size_t *nb,
			    size_t *nn)
{
	int dd = 0;
	for (int i = 1; i < argc && !dd; i++)
		if (!strcmp(argv[i], "--"))
			dd = i;
	char *second[argc + 1];
	int n2 = 0;
	if (dd) {
		second[n2++] = argv[0];
		for (int i = dd + 1; i < argc; i++)
			second[n2++] = argv[i];
		second[n2] = NULL;
		argv[dd] = NULL;
		argc = dd;
	}
	int ind = rpt_parse(c, argc, argv, true);
	if (ind <= 0)
		return ind;
	int ind2 = dd ? rpt_parse(c, n2, second, true) : n2;
	if (ind2 <= 0 && dd)
		return ind2;
	size_t b = (size_t)(argc - ind), n = dd ? (size_t)(n2 - ind2) : 0;
	if (!dd && b == 2)
		b = n = 1;
	if (b < 1 || n < 1 || b + n > RPT_MAX_SEL) {
		fprintf(stderr, "npreport: compare needs BASE NEW, or BASE... -- NEW... (at most %d files)\n",
			RPT_MAX_SEL);
		return -1;
	}
	*files = malloc((b + n) * sizeof(**files));
	if (!*files)
		return -1;
	for (size_t i = 0; i < b + (dd ? 0 : n); i++)
		(*files)[i] = argv[ind + (int)i];
	for (size_t i = 0; dd && i < n; i++)
		(*files)[b + i] = second[ind2 + (int)i];
	*nb = b;
	*nn = n;
	return 1;
}

static int rpt_compare_main(int argc, char **argv)
{
	struct rpt_cli c = { .to = { .width = rpt_term_width() }, .co = { .alpha = NAN } };
	char **files = NULL;
	size_t nb = 0, nn = 0;
	int ind = rpt_compare_args(&c, argc, argv, &files, &nb, &nn);
	if (ind <= 0) {
		if (ind < 0)
			rpt_usage(stderr);
		return ind < 0 ? RPT_EXIT_USAGE : 0;
	}
	struct rpt_gate gate;
	struct np_analysis a[RPT_MAX_SEL];
	if (rpt_compare_gate(&gate, &c) < 0 || rpt_load_all(a, files, nb + nn) < 0) {
		rpt_gate_free(&gate);
		free(files);
		return RPT_EXIT_USAGE;
	}
	c.co.alpha = !isnan(c.co.alpha) ? c.co.alpha : !isnan(gate.alpha) ? gate.alpha : 0.05;
	c.co.gate = &gate;
	c.co.format = c.cfmt;
	c.co.base_paths = (const char *const *)files;
	c.co.new_paths = (const char *const *)files + nb;
	c.co.nbase = nb;
	c.co.nnew = nn;
	int ret = rpt_compare(stdout, a, nb, a + nb, nn, &c.co, &c.to, NULL);
	if (ret < 0) {
		fprintf(stderr, "npreport: compare: out of memory\n");
		ret = RPT_EXIT_USAGE;
	}
	for (size_t i = 0; i < nb + nn; i++)
		np_analysis_free(&a[i]);
	rpt_gate_free(&gate);
	free(files);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		rpt_usage(stderr);
		return RPT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "compare"))
		return rpt_compare_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return dump_main(argc - 1, argv + 1);
	return rpt_report_main(argc, argv);
}
