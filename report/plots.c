#include "plots.h"
#include "outfile.h"
#include "sections.h"
#include "textrep.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plots_int.h"

const char *rpt_gnuplot_path(void)
{
	static char found[4096];
	const char *env = getenv("NP_GNUPLOT");
	if (env)
		return *env && access(env, X_OK) == 0 ? env : NULL;
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/usr/bin:/bin");
	const char *ret = NULL;
	for (char *save, *d = strtok_r(copy, ":", &save); d && !ret; d = strtok_r(NULL, ":", &save)) {
		snprintf(found, sizeof(found), "%s/gnuplot", d);
		if (access(found, X_OK) == 0)
			ret = found;
	}
	free(copy);
	return ret;
}

FILE *rpt_open(struct rpt_plotctx *c, const char *name, const char *ext)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%s", c->dir, name, ext);
	FILE *f = rpt_create(path);
	if (!f) {
		fprintf(stderr, "npreport: cannot create %s: %s\n", path, strerror(errno));
		c->err = -1;
	}
	return f;
}

/* Plot names become file names: keep them to [A-Za-z0-9_-]. */
void rpt_plotname(char *buf, size_t size, const char *a, const char *b)
{
	snprintf(buf, size, "%s%s%s", a, b ? "-" : "", b ? b : "");
	for (char *p = buf; *p; p++)
		if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			*p = '_';
}

/* Labels go inside gnuplot double quotes. gnuplot runs `...` as a shell
 * command even there, and labels come from the analysis file (host names,
 * flow keys, URL paths): a backquote never reaches a script (SECURITY.md). */
void rpt_gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if (*s == '`')
			fputc('\'', f);
		else if ((unsigned char)*s >= 32)
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The same for a label built in place: no quote, backslash, backquote or
 * control character (a newline would start a new gnuplot command). */
void rpt_gp_label(char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || *s == '`')
			*s = '\'';
		else if ((unsigned char)*s < 32)
			*s = ' ';
}

void rpt_gp_head(FILE *f, const char *title, const char *xlabel, const char *ylabel)
{
	fputs("set datafile separator \"\\t\"\nset key below left Left reverse noenhanced\n"
	      "set grid\nset termoption noenhanced\n", f);
	/* eight colours a reader tells apart (Okabe-Ito + grey), then repeat */
	static const char *const pal[] = { "#0072B2", "#E69F00", "#009E73", "#D55E00",
					   "#CC79A7", "#56B4E9", "#F0E442", "#555555" };
	for (int i = 0; i < 8; i++)
		fprintf(f, "set linetype %d lc rgb '%s' lw 2 pt %d\n", i + 1, pal[i], 7);
	fputs("set linetype cycle 8\n", f);
	fputs("set title ", f); rpt_gp_str(f, title); fputc('\n', f);
	fputs("set xlabel ", f); rpt_gp_str(f, xlabel); fputc('\n', f);
	fputs("set ylabel ", f); rpt_gp_str(f, ylabel); fputc('\n', f);
}

/* Every script draws into PNG then SVG with the same plot command. */
void rpt_gp_outputs(FILE *f, const char *name, const char *plotcmd)
{
	fprintf(f, "set terminal pngcairo size 1100,760 noenhanced\nset output '%s.png'\n%s\n"
		"set terminal svg size 1100,760 noenhanced\nset output '%s.svg'\n%s\nunset output\n",
		name, plotcmd, name, plotcmd);
}

void rpt_run_gnuplot(struct rpt_plotctx *c, const char *name)
{
	c->res->scripts++;
	if (!c->gnuplot)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		char script[512], log[512];
		snprintf(script, sizeof(script), "%s.gp", name);
		snprintf(log, sizeof(log), "%s.log", name);
		if (chdir(c->dir) < 0)
			_exit(127);
		umask(077);   /* the images gnuplot writes: private like ours (outfile.c) */
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			dup2(fd, STDOUT_FILENO);
		}
		execl(c->gnuplot, "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "npreport: gnuplot failed on %s/%s.gp (see %s/%s.log)\n",
			c->dir, name, c->dir, name);
		return;
	}
	c->res->rendered++;
}

/* Creates NAME.dat and NAME.gp in the plot directory; 0 or -1. */
int rpt_open_pair(struct rpt_plotctx *c, const char *name, FILE **d, FILE **g)
{
	*d = rpt_open(c, name, "dat");
	*g = *d ? rpt_open(c, name, "gp") : NULL;
	if (*g)
		return 0;
	if (*d)
		fclose(*d);
	return -1;
}

/* Index of s in v[0..*n), appended when absent and there is room; SIZE_MAX
 * when absent and full. */
static size_t rpt_index_of(const char **v, size_t *n, size_t cap, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(v[i], s))
			return i;
	if (*n == cap)
		return SIZE_MAX;
	v[*n] = s;
	return (*n)++;
}

/* ---- latency CDF per segment (sketches of one table) ---- */

static int rpt_cmp_sketch_n(const void *x, const void *y)
{
	const struct np_sketchrec *a = *(const struct np_sketchrec *const *)x;
	const struct np_sketchrec *b = *(const struct np_sketchrec *const *)y;
	/* endpoints before connections and containers (what users call), the
	 * all-flows aggregate before single flows */
	int ea = !strncmp(a->key, "endpoint|", 9) || !strncmp(a->key, "all|", 4);
	int eb = !strncmp(b->key, "endpoint|", 9) || !strncmp(b->key, "all|", 4);
	if (ea != eb)
		return eb - ea;
	return (a->sk.n < b->sk.n) - (a->sk.n > b->sk.n);
}

static void rpt_plot_cdf(struct rpt_plotctx *c, const char *table)
{
	const struct np_sketchrec *sel[RPT_PLOT_MAXLINES];
	const struct np_sketchrec **all = calloc(c->a->nsketches + 1, sizeof(*all));
	size_t n = 0, nsel = 0;
	if (!all)
		return;
	for (size_t i = 0; i < c->a->nsketches; i++)
		if (!strcmp(c->a->sketches[i].table, table) && c->a->sketches[i].sk.n &&
		    c->a->sketches[i].sk.counts)
			all[n++] = &c->a->sketches[i];
	qsort(all, n, sizeof(*all), rpt_cmp_sketch_n);
	for (size_t i = 0; i < n && nsel < RPT_PLOT_MAXLINES; i++)
		sel[nsel++] = all[i];
	free(all);
	if (!nsel)
		return;
	double med[RPT_PLOT_MAXLINES];
	for (size_t i = 0; i < nsel; i++)
		med[i] = (double)np_sketch_quantile(&sel[i]->sk, 0.5);
	struct rpt_scale sc = rpt_scale_pick(rpt_ukind_of(sel[0]->unit), sel[0]->unit,
					     rpt_typical(med, nsel), 0);
	char name[256], xl[128], cmd[16384];
	rpt_plotname(name, sizeof(name), "cdf", table);
	FILE *d, *g;
	if (rpt_open_pair(c, name, &d, &g) < 0)
		return;
	size_t off = (size_t)snprintf(cmd, sizeof(cmd), "plot");
	for (size_t i = 0; i < nsel; i++) {
		const struct np_sketch *sk = &sel[i]->sk;
		uint64_t cum = 0;
		fprintf(d, "# %s %s\n", sel[i]->key, sel[i]->metric);
		for (uint32_t b = 0; b < NP_SK_NBUCKETS; b++) {
			if (!sk->counts[b])
				continue;
			cum += sk->counts[b];
			double v = (double)np_sketch_bucket_hi(b);
			if (v > (double)sk->max)
				v = (double)sk->max;
			fprintf(d, "%.6g\t%.6f\n", v / sc.div, (double)cum / (double)sk->n);
		}
		fputs("\n\n", d);
		char title[300];
		const char *k = !strncmp(sel[i]->key, "endpoint|", 9) ? sel[i]->key + 9 : sel[i]->key;
		snprintf(title, sizeof(title), "%s%s%s", k, strcmp(sel[i]->metric, "latency") ? " " : "",
			 strcmp(sel[i]->metric, "latency") ? sel[i]->metric : "");
		rpt_gp_label(title);
		for (char *p = title; *p; p++)
			if (*p == '|')
				*p = ' ';
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off,
					"%s '%s.dat' index %zu using 1:2 with steps lw 2 title \"%s\"",
					i ? ", \\\n  " : " ", name, i, title);
		if (off >= sizeof(cmd))
			break;
	}
	snprintf(xl, sizeof(xl), "latency (%s, log scale)", sc.label);
	char title[300];
	const struct np_table *tt = np_analysis_table(c->a, table);
	snprintf(title, sizeof(title), "Latency distribution: %s%s", tt && tt->title && *tt->title ?
		 tt->title : table, nsel == RPT_PLOT_MAXLINES ? " (8 curves: all-flows and endpoints first, then the busiest)" : "");
	rpt_gp_head(g, title, xl, "fraction of packets/requests <= x");
	fputs("set logscale x\nset yrange [0:1.02]\n", g);
	rpt_gp_outputs(g, name, cmd);
	fclose(d);
	fclose(g);
	rpt_run_gnuplot(c, name);
}

static void rpt_plot_cdfs(struct rpt_plotctx *c)
{
	for (size_t i = 0; i < c->a->nsketches; i++) {
		bool first = true;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(c->a->sketches[k].table, c->a->sketches[i].table))
				first = false;
		if (first)
			rpt_plot_cdf(c, c->a->sketches[i].table);
	}
}

/* ---- per-interval series over time (network CPU, loss) ---- */

static void rpt_plot_series(struct rpt_plotctx *c, size_t section, const char *what)
{
	const struct np_analysis *a = c->a;
	for (size_t i = 0; i < a->nseries; i++) {
		const struct np_series *s = a->series[i];
		if (rpt_section_of(s->table) != section)
			continue;
		bool first = true;     /* one plot per (table, metric) */
		for (size_t k = 0; k < i && first; k++)
			if (!strcmp(a->series[k]->table, s->table) && !strcmp(a->series[k]->metric, s->metric))
				first = false;
		if (!first)
			continue;
		char name[256], base[200], cmd[16384], yl[128];
		snprintf(base, sizeof(base), "%s-%s", what, s->table);
		rpt_plotname(name, sizeof(name), base, s->metric);
		double vals[4096];
		size_t nv = 0;
		for (size_t k = i; k < a->nseries; k++)
			if (!strcmp(a->series[k]->table, s->table) && !strcmp(a->series[k]->metric, s->metric))
				for (size_t j = 0; j < a->series[k]->n && nv < 4096; j++)
					vals[nv++] = a->series[k]->v[j];
		struct rpt_scale sc = rpt_scale_pick(rpt_ukind_of(s->unit), s->unit, rpt_typical(vals, nv), 0);
		FILE *d, *g;
		if (rpt_open_pair(c, name, &d, &g) < 0)
			return;
		size_t off = (size_t)snprintf(cmd, sizeof(cmd), "plot"), idx = 0;
		for (size_t k = i; k < a->nseries && idx < RPT_PLOT_MAXLINES; k++) {
			const struct np_series *x = a->series[k];
			if (strcmp(x->table, s->table) || strcmp(x->metric, s->metric))
				continue;
			fprintf(d, "# %s\n", x->key);
			for (size_t j = 0; j < x->n; j++)
				fprintf(d, "%.3f\t%.6g\n", ((double)x->t[j] - c->t0) / 1e9,
					x->v[j] / sc.div);
			fputs("\n\n", d);
			char title[200];
			snprintf(title, sizeof(title), "%s", x->key);
			rpt_gp_label(title);
			off += (size_t)snprintf(cmd + off, sizeof(cmd) - off,
						"%s '%s.dat' index %zu using 1:2 with linespoints title \"%s\"",
						idx ? ", \\\n  " : " ", name, idx, title);
			idx++;
			if (off >= sizeof(cmd))
				break;
		}
		char title[300];
		const struct np_table *tt = np_analysis_table(a, s->table);
		snprintf(title, sizeof(title), "%s: %s over time", tt && tt->title && *tt->title ? tt->title
			 : s->table, s->metric);
		snprintf(yl, sizeof(yl), "%s%s%s%s", s->metric, *sc.label ? " (" : "", sc.label,
			 *sc.label ? ")" : "");
		rpt_gp_head(g, title, "time since start of analysis (s)", yl);
		rpt_gp_outputs(g, name, cmd);
		fclose(d);
		fclose(g);
		rpt_run_gnuplot(c, name);
	}
}

/* ---- decomposition stacked bars per flow ---- */

static bool rpt_is_total(const char *s)
{
	return !strncmp(s, "total", 5) || !strcmp(s, "all") || !strncmp(s, "e2e", 3) ||
	       !strncmp(s, "rtt", 3);
}

/* The value column of a long (flow, segment, stats...) table. */
static int rpt_decomp_value_col(const struct np_table *t)
{
	static const char *const pref[] = { "mean", "p50", "median", "avg", NULL };
	for (const char *const *p = pref; *p; p++) {
		int col = np_table_find_col(t, *p);
		if (col >= (int)t->nkey)
			return col;
	}
	for (size_t col = t->nkey; col < t->ncols; col++)
		if (rpt_ukind_of(t->cols[col].unit) == RPT_U_NS)
			return (int)col;
	return -1;
}

#define RPT_MAXBARS 64
#define RPT_MAXSEGS 16

/* Flows x segments of a decomposition table. Long form (two key columns:
 * flow, segment) takes the value column; wide form (one key) one ns column
 * per segment. Totals are left out: the bars stack to them. */
struct rpt_bars {
	const char *xs[RPT_MAXBARS], *segs[RPT_MAXSEGS];
	size_t nx, nseg;
	int vcol, wcols[RPT_MAXSEGS];
	double m[RPT_MAXBARS][RPT_MAXSEGS];
};

static void rpt_bars_axes(struct rpt_bars *b, const struct np_table *t)
{
	bool longform = b->vcol >= 0;
	for (size_t r = 0; r < t->nrows; r++) {
		const struct np_cell *kx = np_table_cell_c(t, r, 0);
		const struct np_cell *ks = np_table_cell_c(t, r, longform ? 1 : 0);
		if (kx->kind != NP_CELL_STR)
			continue;
		rpt_index_of(b->xs, &b->nx, RPT_MAXBARS, kx->s);
		if (longform && ks->kind == NP_CELL_STR && !rpt_is_total(ks->s))
			rpt_index_of(b->segs, &b->nseg, RPT_MAXSEGS, ks->s);
	}
	for (size_t col = t->nkey; !longform && col < t->ncols && b->nseg < RPT_MAXSEGS; col++)
		if (rpt_ukind_of(t->cols[col].unit) == RPT_U_NS && !rpt_is_total(t->cols[col].name)) {
			b->wcols[b->nseg] = (int)col;
			b->segs[b->nseg++] = t->cols[col].name;
		}
}

/* Fills the matrix; returns the typical value (for the unit). */
static double rpt_bars_fill(struct rpt_bars *b, const struct np_table *t)
{
	double typ[RPT_MAXBARS * RPT_MAXSEGS];
	size_t ntyp = 0, nx = b->nx, nseg = b->nseg;
	for (size_t r = 0; r < t->nrows; r++) {
		const struct np_cell *kx = np_table_cell_c(t, r, 0);
		size_t i = kx->kind == NP_CELL_STR ? rpt_index_of(b->xs, &nx, nx, kx->s) : SIZE_MAX;
		for (size_t s = 0; i != SIZE_MAX && s < nseg; s++) {
			double v;
			if (b->vcol >= 0) {
				const struct np_cell *ks = np_table_cell_c(t, r, 1);
				if (ks->kind != NP_CELL_STR || strcmp(ks->s, b->segs[s]))
					continue;
				v = np_cell_f64(np_table_cell_c(t, r, (size_t)b->vcol));
			} else {
				v = np_cell_f64(np_table_cell_c(t, r, (size_t)b->wcols[s]));
			}
			if (!isnan(v)) {
				b->m[i][s] = v;
				typ[ntyp++] = v;
			}
		}
	}
	return rpt_typical(typ, ntyp);
}

static void rpt_plot_decomp_table(struct rpt_plotctx *c, const struct np_table *t)
{
	struct rpt_bars *b = calloc(1, sizeof(*b));
	if (!b)
		return;
	b->vcol = t->nkey >= 2 ? rpt_decomp_value_col(t) : -1;
	if (t->nkey < 2 || b->vcol >= 0)
		rpt_bars_axes(b, t);
	FILE *d, *g;
	char name[256], cmd[1024], yl[128], title[300];
	rpt_plotname(name, sizeof(name), "decomp-bars", t->name);
	/* more flows than a reader can label: the per-service plot says it */
	if (b->nx == 0 || b->nx > RPT_PLOT_MAXLINES || b->nseg < 2 || rpt_open_pair(c, name, &d, &g) < 0) {
		free(b);
		return;
	}
	struct rpt_scale sc = rpt_scale_pick(RPT_U_NS, "ns", rpt_bars_fill(b, t), 0);
	fputs("flow", d);
	for (size_t s = 0; s < b->nseg; s++)
		fprintf(d, "\t%s", b->segs[s]);
	fputc('\n', d);
	for (size_t i = 0; i < b->nx; i++) {
		fputs(b->xs[i], d);
		for (size_t s = 0; s < b->nseg; s++)
			fprintf(d, "\t%.6g", b->m[i][s] / sc.div);
		fputc('\n', d);
	}
	snprintf(title, sizeof(title), "Latency decomposition per flow (%s of %s)",
		 b->vcol >= 0 ? t->cols[b->vcol].name : "columns", t->name);
	snprintf(yl, sizeof(yl), "time (%s)", sc.label);
	rpt_gp_head(g, title, "", yl);
	fputs("set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
	      "set boxwidth 0.7\nset xtics rotate by -30 left\nset key autotitle columnhead\n", g);
	snprintf(cmd, sizeof(cmd), "plot for [i=2:%zu] '%s.dat' using i:xtic(1)", b->nseg + 1, name);
	rpt_gp_outputs(g, name, cmd);
	fclose(d);
	fclose(g);
	free(b);
	rpt_run_gnuplot(c, name);
}

/* ---- degradation patterns over the latency histogram ---- */

static int rpt_find_col_like(const struct np_table *t, const char *const *names)
{
	for (const char *const *n = names; *n; n++) {
		int col = np_table_find_col(t, *n);
		if (col >= 0)
			return col;
	}
	return -1;
}

/* The distribution of all the requests the patterns speak about: a sketch
 * of the pattern table itself, else the transactions sketch holding the most
 * requests among those that reach the patterns' latencies (the entry point
 * of the call tree, or the client side of it). */
static const struct np_sketchrec *rpt_pattern_sketch(const struct rpt_plotctx *c,
						     const struct np_table *t, double reach)
{
	const struct np_sketchrec *sk = NULL;
	for (size_t i = 0; i < c->a->nsketches; i++)
		if (!strcmp(c->a->sketches[i].table, t->name) && c->a->sketches[i].sk.counts)
			return &c->a->sketches[i];
	for (size_t i = 0; i < c->a->nsketches; i++) {
		const struct np_sketchrec *x = &c->a->sketches[i];
		if (!x->sk.counts || rpt_section_of(x->table) != rpt_section_of("txn") ||
		    (double)x->sk.max < reach)
			continue;
		if (!sk || x->sk.n > sk->sk.n)
			sk = x;
	}
	return sk;
}

#define RPT_HBINS 60

/* A patterns-section table: either one row per pattern with its latency
 * range (lo/hi columns), or one row per member request (pattern + latency). */
struct rpt_pattab {
	int clo, chi, cpat, clat;
	bool members;
	double lo, hi;                         /* latency span to draw */
	const struct np_sketchrec *sk;         /* all requests, if known */
	double step, edges[RPT_HBINS + 1];     /* log-spaced bins */
	size_t npat;
	uint64_t pats[RPT_PLOT_MAXLINES];
	double cnt[RPT_PLOT_MAXLINES + 1][RPT_HBINS];   /* [0] = all requests */
};

static int rpt_pattab_columns(struct rpt_pattab *p, const struct np_table *t)
{
	static const char *const lo_names[] = { "lat_lo", "latency_lo", "lo_ns", "range_lo",
						"min_ns", "lat_min", "lo", "from", NULL };
	static const char *const hi_names[] = { "lat_hi", "latency_hi", "hi_ns", "range_hi",
						"max_ns", "lat_max", "hi", "to", NULL };
	p->clo = rpt_find_col_like(t, lo_names);
	p->chi = rpt_find_col_like(t, hi_names);
	p->cpat = np_table_find_col(t, "pattern");
	p->clat = -1;
	for (size_t col = 0; col < t->ncols && p->clo < 0; col++)
		if ((int)col != p->cpat && rpt_ukind_of(t->cols[col].unit) == RPT_U_NS)
			p->clat = (int)col;
	p->members = p->cpat >= 0 && p->clat >= 0 && p->clo < 0;
	return p->members || (p->clo >= 0 && p->chi >= 0) ? 0 : -1;
}

/* The latency span of the table and of all requests; -1 if empty. */
static int rpt_pattab_span(struct rpt_pattab *p, const struct rpt_plotctx *c, const struct np_table *t)
{
	p->lo = INFINITY;
	p->hi = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		double a = np_cell_f64(np_table_cell_c(t, r, (size_t)(p->members ? p->clat : p->clo)));
		double b = p->members ? a : np_cell_f64(np_table_cell_c(t, r, (size_t)p->chi));
		if (!isnan(a) && a > 0 && a < p->lo)
			p->lo = a;
		if (!isnan(b) && b > p->hi)
			p->hi = b;
	}
	p->sk = rpt_pattern_sketch(c, t, isinf(p->lo) ? 0 : p->lo);
	if (p->sk && (double)p->sk->sk.min > 0 && (double)p->sk->sk.min < p->lo)
		p->lo = (double)p->sk->sk.min;
	if (p->sk && (double)p->sk->sk.max > p->hi)
		p->hi = (double)p->sk->sk.max;
	return isinf(p->lo) || p->hi <= p->lo ? -1 : 0;
}

static int rpt_pattab_bin(const struct rpt_pattab *p, double v)
{
	int i = v <= p->lo ? 0 : (int)(log(v / p->lo) / p->step);
	return i < 0 ? 0 : i >= RPT_HBINS ? RPT_HBINS - 1 : i;
}

static void rpt_pattab_count(struct rpt_pattab *p, const struct np_table *t)
{
	p->step = log(p->hi * 1.001 / p->lo) / RPT_HBINS;
	for (int i = 0; i <= RPT_HBINS; i++)
		p->edges[i] = p->lo * exp(p->step * i);
	for (uint32_t b = 0; p->sk && b < NP_SK_NBUCKETS; b++)
		if (p->sk->sk.counts[b])
			p->cnt[0][rpt_pattab_bin(p, ((double)np_sketch_bucket_lo(b) +
						     (double)np_sketch_bucket_hi(b)) / 2)] +=
				(double)p->sk->sk.counts[b];
	for (size_t r = 0; p->members && r < t->nrows; r++) {
		uint64_t id = (uint64_t)np_cell_f64(np_table_cell_c(t, r, (size_t)p->cpat));
		double v = np_cell_f64(np_table_cell_c(t, r, (size_t)p->clat));
		size_t k;
		for (k = 0; k < p->npat && p->pats[k] != id; k++)
			;
		if (k == p->npat && p->npat < RPT_PLOT_MAXLINES)
			p->pats[p->npat++] = id;
		if (k < p->npat && !isnan(v) && v > 0)
			p->cnt[k + 1][rpt_pattab_bin(p, v)]++;
	}
}

/* Each pattern's latency range shaded and numbered. */
static void rpt_pattab_ranges(FILE *g, const struct rpt_pattab *p, const struct np_table *t,
			      const struct rpt_scale *sc)
{
	for (size_t r = 0; !p->members && r < t->nrows && r < RPT_PLOT_MAXLINES; r++) {
		double a = np_cell_f64(np_table_cell_c(t, r, (size_t)p->clo));
		double b = np_cell_f64(np_table_cell_c(t, r, (size_t)p->chi));
		if (isnan(a) || isnan(b) || b <= a)
			continue;
		if (a <= 0)
			a = p->lo;
		char *label = np_table_row_key(t, r);
		fprintf(g, "set object %zu rect from %.6g, graph 0 to %.6g, graph 1 fc lt %zu "
			"fs transparent solid 0.2 noborder behind\n", r + 1, a / sc->div, b / sc->div, r + 2);
		fprintf(g, "set label %zu ", r + 1);
		rpt_gp_str(g, label ? label : "");
		fprintf(g, " at %.6g, graph %.2f\n", a / sc->div, 0.95 - 0.05 * (double)r);
		free(label);
	}
}

/* Latency histogram of all requests (grey), the members of each pattern,
 * and each pattern's latency range shaded. */
static void rpt_plot_patterns(struct rpt_plotctx *c, const struct np_table *t)
{
	struct rpt_pattab *p = calloc(1, sizeof(*p));
	FILE *d, *g;
	char name[256], title[400], xl[128], cmd[8192];
	rpt_plotname(name, sizeof(name), "patterns-hist", t->name);
	if (!p || rpt_pattab_columns(p, t) < 0 || rpt_pattab_span(p, c, t) < 0 ||
	    rpt_open_pair(c, name, &d, &g) < 0) {
		free(p);
		return;
	}
	rpt_pattab_count(p, t);
	struct rpt_scale sc = rpt_scale_pick(RPT_U_NS, "ns", p->sk ? (double)np_sketch_quantile(&p->sk->sk, 0.5)
									 : p->lo, 0);
	for (int i = 0; i < RPT_HBINS; i++) {
		fprintf(d, "%.6g\t%.6g", sqrt(p->edges[i] * p->edges[i + 1]) / sc.div,
			(p->edges[i + 1] - p->edges[i]) / sc.div);
		for (size_t k = 0; k <= p->npat; k++)
			fprintf(d, "\t%.0f", p->cnt[k][i]);
		fputc('\n', d);
	}
	if (p->sk)
		snprintf(title, sizeof(title), "Request latency histogram with the degradation patterns (%s)",
			 t->name);
	else
		snprintf(title, sizeof(title), "Latency of the requests of each degradation pattern (%s)",
			 t->name);
	snprintf(xl, sizeof(xl), "latency (%s, log scale)", sc.label);
	rpt_gp_head(g, title, xl, "requests");
	fputs("set logscale x\nset yrange [0:*]\nset style fill transparent solid 0.5 noborder\n", g);
	rpt_pattab_ranges(g, p, t, &sc);
	size_t off = (size_t)snprintf(cmd, sizeof(cmd), "plot '%s.dat' using 1:3:2 with boxes "
				      "lc rgb '#a0a0a0' title '%s'", name, p->sk ? "all requests" : "");
	for (size_t k = 0; k < p->npat && off < sizeof(cmd); k++)
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, ", \\\n  '%s.dat' using 1:%zu:2 "
					"with boxes lt %zu title 'pattern %llu'", name, k + 4, k + 2,
					(unsigned long long)p->pats[k]);
	rpt_gp_outputs(g, name, cmd);
	fclose(d);
	fclose(g);
	free(p);
	rpt_run_gnuplot(c, name);
}

void rpt_dat_bins(FILE *d, const char *const *keys, size_t nkeys, const double *bins, size_t nbins)
{
	for (size_t i = 0; i < nkeys; i++) {
		fprintf(d, "# %s\n", keys[i]);
		for (size_t b = 0; b < nbins; b++)
			fprintf(d, "%zu\t%.0f\n", b, bins[i * nbins + b]);
		fputs("\n\n", d);
	}
}

/* Loss over time when the analysis lists lost packets with a timestamp:
 * rows counted per second, one line per value of the first key column. */
static void rpt_plot_event_table(struct rpt_plotctx *c, const struct np_table *t)
{
	int tcol = -1;
	for (size_t col = 0; col < t->ncols && tcol < 0; col++)
		if (rpt_ukind_of(t->cols[col].unit) == RPT_U_TIME)
			tcol = (int)col;
	if (tcol < 0 || t->nrows == 0)
		return;
	const char *keys[RPT_PLOT_MAXLINES];
	size_t nkeys = 0;
	double tmax = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		const struct np_cell *k = np_table_cell_c(t, r, 0);
		double tt = (np_cell_f64(np_table_cell_c(t, r, (size_t)tcol)) - c->t0) / 1e9;
		if (tt > tmax)
			tmax = tt;
		if (k->kind != NP_CELL_STR)
			continue;
		size_t i;
		for (i = 0; i < nkeys && strcmp(keys[i], k->s); i++)
			;
		if (i == nkeys && nkeys < RPT_PLOT_MAXLINES)
			keys[nkeys++] = k->s;
	}
	if (!nkeys || tmax > 86400)
		return;
	size_t nbins = (size_t)tmax + 1;
	double *bins = calloc(nkeys * nbins, sizeof(double));
	if (!bins)
		return;
	for (size_t r = 0; r < t->nrows; r++) {
		const struct np_cell *k = np_table_cell_c(t, r, 0);
		double tt = (np_cell_f64(np_table_cell_c(t, r, (size_t)tcol)) - c->t0) / 1e9;
		if (k->kind != NP_CELL_STR || isnan(tt) || tt < 0)
			continue;
		for (size_t i = 0; i < nkeys; i++)
			if (!strcmp(keys[i], k->s))
				bins[i * nbins + (size_t)tt]++;
	}
	char name[256], cmd[16384], title[300];
	rpt_plotname(name, sizeof(name), "loss-time", t->name);
	FILE *d, *g;
	if (rpt_open_pair(c, name, &d, &g) < 0) {
		free(bins);
		return;
	}
	size_t off = (size_t)snprintf(cmd, sizeof(cmd), "plot");
	rpt_dat_bins(d, keys, nkeys, bins, nbins);
	for (size_t i = 0; i < nkeys; i++) {
		char lt[200];
		snprintf(lt, sizeof(lt), "%s", keys[i]);
		rpt_gp_label(lt);
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off,
					"%s '%s.dat' index %zu using 1:2 with steps lw 2 title \"%s\"",
					i ? ", \\\n  " : " ", name, i, lt);
		if (off >= sizeof(cmd))
			break;
	}
	snprintf(title, sizeof(title), "Loss over time: rows of %s per second", t->name);
	rpt_gp_head(g, title, "time since start of analysis (s)", "lost packets per second");
	rpt_gp_outputs(g, name, cmd);
	fclose(d);
	fclose(g);
	free(bins);
	rpt_run_gnuplot(c, name);
}

int rpt_plots(const char *dir, const struct np_analysis *a, struct rpt_plotres *res)
{
	memset(res, 0, sizeof(*res));
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "npreport: cannot create directory %s: %s\n", dir, strerror(errno));
		return -1;
	}
	struct rpt_plotctx c = { .dir = dir, .a = a, .t0 = rpt_analysis_t0(a), .res = res,
				 .gnuplot = rpt_gnuplot_path() };
	res->have_gnuplot = c.gnuplot != NULL;
	if (!c.gnuplot)
		fprintf(stderr, "npreport: gnuplot not found: plot data and scripts written to %s, "
			"no images (install gnuplot-nox and run 'gnuplot NAME.gp' there)\n", dir);
	rpt_plot_endpoints(&c);
	rpt_plot_cdfs(&c);
	for (size_t i = 0; i < a->ntables; i++) {
		size_t s = rpt_section_of(a->tables[i]->name);
		if (s < rpt_nsections && !strcmp(rpt_sections[s].name, "decomp"))
			rpt_plot_decomp_table(&c, a->tables[i]);
		if (s < rpt_nsections && !strcmp(rpt_sections[s].name, "decomp"))
			rpt_plot_service_decomp(&c, a->tables[i]);
		if (s < rpt_nsections && !strcmp(rpt_sections[s].name, "patterns"))
			rpt_plot_patterns(&c, a->tables[i]);
		if (s < rpt_nsections && !strcmp(rpt_sections[s].name, "loss") &&
		    strcmp(a->tables[i]->name, "lost_packets"))    /* loss-pairs draws it */
			rpt_plot_event_table(&c, a->tables[i]);
	}
	rpt_plot_latency_time(&c);
	rpt_plot_loss_pairs(&c);
	rpt_plot_retrans_time(&c);
	rpt_plot_clock(&c);
	rpt_plot_series(&c, rpt_section_of("netcpu"), "netcpu");
	if (!np_analysis_table(a, "lost_packets"))    /* else loss-pairs says it per host pair */
		rpt_plot_series(&c, rpt_section_of("loss"), "loss");
	return c.err;
}
