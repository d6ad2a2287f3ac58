/* The plots a network engineer draws for an incident: where each
 * endpoint's time goes, where a packet's time goes per service, request
 * latency over time with the degradation patterns' requests, lost packets
 * per host pair over time, and each host's clock model with its bound. */
#include "inctab.h"
#include "plots_int.h"
#include "sections.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_NBARS 8


/* ---- per endpoint: time inside the server vs network + client stack ---- */

struct rpt_epbar { const char *key; double server, client; };

static size_t rpt_ep_bars(const struct np_table *t, struct rpt_epbar *b, size_t max)
{
	static const char *const n_level[] = { "level", NULL }, *const n_key[] = { "key", NULL },
		*const n_role[] = { "role", NULL }, *const n_p50[] = { "p50", NULL };
	int cl = inc_col(t, n_level), ck = inc_col(t, n_key), cr = inc_col(t, n_role), cp = inc_col(t, n_p50);
	size_t n = 0;
	for (size_t r = 0; t && cl >= 0 && ck >= 0 && cr >= 0 && cp >= 0 && r < t->nrows; r++) {
		if (strcmp(inc_str(t, r, cl), "endpoint"))
			continue;
		const char *key = inc_str(t, r, ck);
		size_t i = 0;
		while (i < n && strcmp(b[i].key, key))
			i++;
		if (i == n && n == max)
			continue;
		if (i == n)
			b[n++] = (struct rpt_epbar){ .key = key, .server = NAN, .client = NAN };
		double v = inc_num(t, r, cp);
		if (!strcmp(inc_str(t, r, cr), "server"))
			b[i].server = v;
		else if (isnan(b[i].client) || v < b[i].client)
			b[i].client = v;
	}
	return n;
}

static int rpt_cmp_epbar(const void *x, const void *y)
{
	const struct rpt_epbar *a = x, *b = y;
	double va = isnan(a->client) ? a->server : a->client, vb = isnan(b->client) ? b->server : b->client;
	return (va < vb) - (va > vb);
}

void rpt_plot_endpoints(struct rpt_plotctx *c)
{
	struct rpt_epbar b[64];
	size_t n = rpt_ep_bars(np_analysis_table(c->a, "transactions"), b, 64);
	if (n == 0)
		return;
	qsort(b, n, sizeof(b[0]), rpt_cmp_epbar);
	if (n > RPT_NBARS)
		n = RPT_NBARS;
	double typ[RPT_NBARS];
	for (size_t i = 0; i < n; i++)
		typ[i] = isnan(b[i].client) ? b[i].server : b[i].client;
	struct rpt_scale sc = rpt_scale_pick(RPT_U_NS, "ns", rpt_typical(typ, n), 0);
	FILE *d, *g;
	if (rpt_open_pair(c, "endpoints", &d, &g) < 0)
		return;
	fputs("endpoint\tinside the server\tnetwork and client stack\n", d);
	for (size_t i = 0; i < n; i++) {
		char label[200];
		const char *sp = strchr(b[i].key, ' ');
		snprintf(label, sizeof(label), "%s %.*s", sp ? sp + 1 : b[i].key,
			 sp ? (int)(sp - b[i].key) : 0, b[i].key);
		rpt_gp_label(label);
		double srv = isnan(b[i].server) ? 0 : b[i].server;
		double net = isnan(b[i].client) || isnan(b[i].server) ? 0 : fmax(0, b[i].client - b[i].server);
		fprintf(d, "\"%s\"\t%.6g\t%.6g\n", label, srv / sc.div, net / sc.div);
	}
	char yl[64];
	snprintf(yl, sizeof(yl), "median latency (%s)", sc.label);
	rpt_gp_head(g, "Where each endpoint's median time goes (slowest first)", "", yl);
	fputs("set style data histograms\nset style histogram rowstacked\n"
	      "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset xtics rotate by -20 left\n"
	      "set key autotitle columnhead\nset bmargin 8\n", g);
	rpt_gp_outputs(g, "endpoints", "plot for [i=2:3] 'endpoints.dat' using i:xtic(1) lt (i-1), \\\n"
		       "  '' using 0:($2+$3):(sprintf('%.3g', $2+$3)) with labels offset 0,0.8 notitle");
	fclose(d);
	fclose(g);
	rpt_run_gnuplot(c, "endpoints");
}

/* ---- per service and direction: mean time of a packet in each segment ---- */

#define RPT_MAXSEG 8

struct rpt_svcgrp {
	char label[96];
	double n, sum[RPT_MAXSEG];
};

/* "tcp A>B": "to B" when B is the service side (lower port), else "from A". */
static void rpt_flow_group(char *buf, size_t size, const char *flow)
{
	const char *sp = strchr(flow, ' '), *a = sp ? sp + 1 : flow, *gt = strchr(a, '>');
	const char *pa = gt ? memrchr(a, ':', (size_t)(gt - a)) : NULL, *pb = gt ? strrchr(gt, ':') : NULL;
	if (!gt || !pa || !pb) {
		snprintf(buf, size, "%s", flow);
		return;
	}
	if (atoi(pb + 1) <= atoi(pa + 1))
		snprintf(buf, size, "requests to %s", gt + 1);
	else
		snprintf(buf, size, "responses from %.*s", (int)(gt - a), a);
}

static size_t rpt_svc_fill(const struct np_table *t, struct rpt_svcgrp *gs, size_t max,
			   const char **segs, size_t *nseg)
{
	static const char *const n_flow[] = { "flow", NULL }, *const n_seg[] = { "segment", NULL },
		*const n_cnt[] = { "count", "packets", NULL }, *const n_mean[] = { "mean", NULL };
	int cf = inc_col(t, n_flow), cs = inc_col(t, n_seg), cc = inc_col(t, n_cnt), cm = inc_col(t, n_mean);
	size_t ng = 0;
	for (size_t r = 0; cf >= 0 && cs >= 0 && cc >= 0 && cm >= 0 && r < t->nrows; r++) {
		const char *flow = inc_str(t, r, cf), *seg = inc_str(t, r, cs);
		double cnt = inc_num(t, r, cc), mean = inc_num(t, r, cm);
		if (!strcmp(flow, "all") || !strcmp(seg, "total") || !(cnt > 0) || isnan(mean))
			continue;
		size_t s = 0, i = 0;
		while (s < *nseg && strcmp(segs[s], seg))
			s++;
		if (s == *nseg && *nseg < RPT_MAXSEG)
			segs[(*nseg)++] = seg;
		char label[96];
		rpt_flow_group(label, sizeof(label), flow);
		while (i < ng && strcmp(gs[i].label, label))
			i++;
		if (i == ng && ng < max)
			snprintf(gs[ng++].label, sizeof(gs[0].label), "%s", label);
		if (i == ng || s == *nseg)
			continue;
		gs[i].sum[s] += cnt * mean;
		if (s == 0)
			gs[i].n += cnt;
	}
	return ng;
}

void rpt_plot_service_decomp(struct rpt_plotctx *c, const struct np_table *t)
{
	struct rpt_svcgrp gs[RPT_NBARS];
	const char *segs[RPT_MAXSEG];
	size_t nseg = 0;
	memset(gs, 0, sizeof(gs));
	size_t ng = rpt_svc_fill(t, gs, RPT_NBARS, segs, &nseg);
	if (ng == 0 || nseg < 2)
		return;
	double typ[RPT_NBARS * RPT_MAXSEG];
	size_t nt = 0;
	for (size_t i = 0; i < ng; i++)
		for (size_t s = 0; s < nseg && gs[i].n > 0; s++)
			typ[nt++] = gs[i].sum[s] / gs[i].n;
	struct rpt_scale sc = rpt_scale_pick(RPT_U_NS, "ns", rpt_typical(typ, nt), 0);
	char name[128];
	rpt_plotname(name, sizeof(name), "decomp-services", t->name);
	FILE *d, *g;
	if (rpt_open_pair(c, name, &d, &g) < 0)
		return;
	fputs("group", d);
	for (size_t s = 0; s < nseg; s++)
		fprintf(d, "\t%s", segs[s]);
	fputc('\n', d);
	for (size_t i = 0; i < ng; i++) {
		rpt_gp_label(gs[i].label);
		fprintf(d, "\"%s\"", gs[i].label);
		for (size_t s = 0; s < nseg; s++)
			fprintf(d, "\t%.6g", gs[i].n > 0 ? gs[i].sum[s] / gs[i].n / sc.div : 0);
		fputc('\n', d);
	}
	char yl[64], cmd[256];
	snprintf(yl, sizeof(yl), "mean time per packet (%s)", sc.label);
	rpt_gp_head(g, "Where a packet's time goes, per service and direction", "", yl);
	fputs("set style data histograms\nset style histogram rowstacked\n"
	      "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset xtics rotate by -20 left\n"
	      "set key autotitle columnhead\nset bmargin 8\n", g);
	snprintf(cmd, sizeof(cmd), "plot for [i=2:%zu] '%s.dat' using i:xtic(1) lt (i-1)", nseg + 1, name);
	rpt_gp_outputs(g, name, cmd);
	fclose(d);
	fclose(g);
	rpt_run_gnuplot(c, name);
}

/* ---- request latency over time, the patterns' requests on top ---- */

/* Series keys of transactions are "level|key|host|role". */
static bool rpt_ep_series(const struct np_series *s, const char *role, const char *metric)
{
	size_t rl = strlen(role), kl = strlen(s->key);
	return !strcmp(s->table, "transactions") && !strncmp(s->key, "endpoint|", 9) &&
	       !strcmp(s->metric, metric) && kl > rl && s->key[kl - rl - 1] == '|' &&
	       !strcmp(s->key + kl - rl, role);
}

/* Does host H (from "endpoint|K|H|client") serve any endpoint? Then it is
 * a service calling another, not a user. */
static bool rpt_series_host_serves(const struct rpt_plotctx *c, const struct np_series *s)
{
	const char *end = strrchr(s->key, '|'), *h = end;
	while (h && h > s->key && h[-1] != '|')
		h--;
	if (!end || !h)
		return false;
	for (size_t i = 0; i < c->a->nseries; i++) {
		const struct np_series *x = c->a->series[i];
		size_t kl = strlen(x->key), hl = (size_t)(end - h);
		if (rpt_ep_series(x, "server", s->metric) && kl > hl + 8 &&
		    !strncmp(x->key + kl - 7 - hl, h, hl) && x->key[kl - 8 - hl] == '|')
			return true;
	}
	return false;
}

static size_t rpt_write_series(FILE *d, const struct rpt_plotctx *c, const char *role,
			       const char *metric, size_t idx, char *cmd, size_t size, size_t *off,
			       size_t max, double div)
{
	size_t n = 0;
	for (size_t i = 0; i < c->a->nseries && n < max; i++) {
		const struct np_series *s = c->a->series[i];
		if (!rpt_ep_series(s, role, metric) || (!strcmp(role, "client") && rpt_series_host_serves(c, s)))
			continue;
		char title[200];
		const char *k = s->key + 9, *bar = strchr(k, '|');
		snprintf(title, sizeof(title), "%s %.*s", metric, bar ? (int)(bar - k) : (int)strlen(k), k);
		rpt_gp_label(title);
		fprintf(d, "# %s\n", s->key);
		for (size_t j = 0; j < s->n; j++)
			fprintf(d, "%.3f\t%.6g\n", ((double)s->t[j] - c->t0) / 1e9, s->v[j] / div);
		fputs("\n\n", d);
		*off += (size_t)snprintf(cmd + *off, size - *off, "%s'latency-time.dat' index %zu using 1:2 "
					 "with linespoints lt %zu dt %d title \"%s\"", *off > 5 ? ", \\\n  " : " ",
					 idx + n, n + 1, !strcmp(metric, "p50") ? 2 : 1, title);
		n++;
	}
	return n;
}

/* Each pattern's member requests as points: time from "...@T_NS". */
static size_t rpt_write_pattern_points(FILE *d, const struct rpt_plotctx *c, size_t idx, char *cmd,
				       size_t size, size_t *off, double div)
{
	static const char *const n_p[] = { "pattern", NULL }, *const n_r[] = { "request", NULL },
		*const n_l[] = { "latency", "latency_ns", NULL };
	const struct np_table *t = np_analysis_table(c->a, "pattern_requests");
	int cp = inc_col(t, n_p), cr = inc_col(t, n_r), cl = inc_col(t, n_l);
	size_t n = 0;
	for (double pat = 1; t && cp >= 0 && cr >= 0 && cl >= 0 && pat <= 2; pat++) {
		size_t rows = 0;
		fprintf(d, "# pattern %.0f\n", pat);
		for (size_t r = 0; r < t->nrows; r++) {
			const char *at = strrchr(inc_str(t, r, cr), '@');
			if (inc_num(t, r, cp) != pat || !at)
				continue;
			fprintf(d, "%.3f\t%.6g\n", (strtod(at + 1, NULL) - c->t0) / 1e9, inc_num(t, r, cl) / div);
			rows++;
		}
		fputs("\n\n", d);
		if (!rows)
			continue;
		*off += (size_t)snprintf(cmd + *off, size - *off, ", \\\n  'latency-time.dat' index %zu using "
					 "1:2 with points pt %d ps 1.3 lc rgb '%s' title \"requests of degradation "
					 "pattern %.0f\"", idx + n, pat == 1 ? 6 : 8, pat == 1 ? "#CC79A7" : "#000000",
					 pat);
		n++;
	}
	return n;
}

void rpt_plot_latency_time(struct rpt_plotctx *c)
{
	const char *role = "client";
	size_t have = 0;
	for (size_t i = 0; i < c->a->nseries; i++)
		have += rpt_ep_series(c->a->series[i], role, "p99");
	if (!have)
		role = "server";
	FILE *d, *g;
	if (rpt_open_pair(c, "latency-time", &d, &g) < 0)
		return;
	char cmd[8192];
	size_t off = (size_t)snprintf(cmd, sizeof(cmd), "plot"), n;
	n = rpt_write_series(d, c, role, "p99", 0, cmd, sizeof(cmd), &off, 3, 1e6);
	n += rpt_write_series(d, c, role, "p50", n, cmd, sizeof(cmd), &off, 3, 1e6);
	n += rpt_write_pattern_points(d, c, n, cmd, sizeof(cmd), &off, 1e6);
	rpt_gp_head(g, "Request latency over time (per second; the degradation patterns' requests marked)",
		    "time since start of analysis (s)", "latency (ms, log scale)");
	fputs("set logscale y\n", g);
	rpt_gp_outputs(g, "latency-time", cmd);
	fclose(d);
	fclose(g);
	if (n)
		rpt_run_gnuplot(c, "latency-time");
}

/* ---- lost packets per second per host pair ---- */

static const char *rpt_pair_of(const struct np_table *pf, const char *flow, char *buf, size_t size)
{
	static const char *const n_f[] = { "flow", NULL }, *const n_s[] = { "sender", NULL },
		*const n_r[] = { "receiver", NULL };
	int cf = inc_col(pf, n_f), cs = inc_col(pf, n_s), cr = inc_col(pf, n_r);
	for (size_t r = 0; pf && cf >= 0 && cs >= 0 && cr >= 0 && r < pf->nrows; r++)
		if (!strcmp(inc_str(pf, r, cf), flow)) {
			snprintf(buf, size, "%s -> %s", inc_str(pf, r, cs), inc_str(pf, r, cr));
			return buf;
		}
	char svc[96];
	rpt_flow_group(svc, sizeof(svc), flow);
	snprintf(buf, size, "%s", svc);
	return buf;
}

void rpt_plot_loss_pairs(struct rpt_plotctx *c)
{
	static const char *const n_f[] = { "flow", NULL }, *const n_t[] = { "time", NULL };
	const struct np_table *lp = np_analysis_table(c->a, "lost_packets"),
		*pf = np_analysis_table(c->a, "pkt_flows");
	int cf = inc_col(lp, n_f), ct = inc_col(lp, n_t);
	if (!lp || cf < 0 || ct < 0 || lp->nrows == 0)
		return;
	char pairs[RPT_PLOT_MAXLINES][128];
	size_t np = 0, nbins = 1;
	for (size_t r = 0; r < lp->nrows; r++) {
		double tt = (inc_num(lp, r, ct) - c->t0) / 1e9;
		if (tt >= 0 && tt < 86400 && (size_t)tt + 1 > nbins)
			nbins = (size_t)tt + 1;
	}
	double *bins = calloc(RPT_PLOT_MAXLINES * nbins, sizeof(double));
	FILE *d, *g;
	if (!bins || rpt_open_pair(c, "loss-pairs", &d, &g) < 0) {
		free(bins);
		return;
	}
	for (size_t r = 0; r < lp->nrows; r++) {
		char buf[128];
		const char *pair = rpt_pair_of(pf, inc_str(lp, r, cf), buf, sizeof(buf));
		double tt = (inc_num(lp, r, ct) - c->t0) / 1e9;
		size_t i = 0;
		while (i < np && strcmp(pairs[i], pair))
			i++;
		if (i == np && np < RPT_PLOT_MAXLINES)
			snprintf(pairs[np++], sizeof(pairs[0]), "%s", pair);
		if (i < np && tt >= 0 && (size_t)tt < nbins)
			bins[i * nbins + (size_t)tt]++;
	}
	char cmd[4096];
	size_t off = (size_t)snprintf(cmd, sizeof(cmd), "plot");
	const char *keys[RPT_PLOT_MAXLINES];
	for (size_t i = 0; i < np; i++)
		keys[i] = pairs[i];
	rpt_dat_bins(d, keys, np, bins, nbins);
	for (size_t i = 0; i < np; i++) {
		rpt_gp_label(pairs[i]);
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "%s'loss-pairs.dat' index %zu using "
					"($1+0.5):2 with boxes fs solid 0.7 lt %zu title \"%s\"",
					i ? ", \\\n  " : " ", i, i + 1, pairs[i]);
	}
	rpt_gp_head(g, "Lost packets per second, per host pair (sender -> receiver)",
		    "time since start of analysis (s)", "lost packets");
	fputs("set xrange [0:*]\nset yrange [0:*]\nset ytics 1\nset boxwidth 0.8\n", g);
	rpt_gp_outputs(g, "loss-pairs", cmd);
	fclose(d);
	fclose(g);
	free(bins);
	rpt_run_gnuplot(c, "loss-pairs");
}

/* ---- each host's clock model over the analysis, with its bound ---- */

void rpt_plot_clock(struct rpt_plotctx *c)
{
	static const char *const n_h[] = { "host", NULL }, *const n_q[] = { "quality", NULL },
		*const n_o[] = { "offset", NULL }, *const n_d[] = { "drift", NULL },
		*const n_e[] = { "offset_err", "err_bound", NULL }, *const n_f[] = { "first", NULL };
	const struct np_table *t = np_analysis_table(c->a, "clock");
	int ch = inc_col(t, n_h), cq = inc_col(t, n_q), co = inc_col(t, n_o), cd = inc_col(t, n_d),
	    ce = inc_col(t, n_e), cf = inc_col(t, n_f);
	if (!t || ch < 0 || co < 0)
		return;
	size_t rows[4], n = 0;
	for (size_t r = 0; r < t->nrows && n < 4; r++)
		if (strcmp(inc_str(t, r, cq), "reference") && !isnan(inc_num(t, r, co)))
			rows[n++] = r;
	FILE *d, *g;
	if (n == 0 || rpt_open_pair(c, "clock", &d, &g) < 0)
		return;
	double span = 0;
	for (size_t i = 0; i < c->a->nseries; i++)
		for (size_t k = 0; k < c->a->series[i]->n; k++)
			span = fmax(span, ((double)c->a->series[i]->t[k] - c->t0) / 1e9);
	span = span > 1 ? span + 1 : 60;
	rpt_gp_head(g, "", "time since start of analysis (s)", "offset from the reference (µs)");
	fprintf(g, "set terminal pngcairo size 1100,%zu noenhanced\nset output 'clock.png'\n", 220 + 220 * n);
	char cmd[4096];
	size_t off = 0;
	off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "set multiplot layout %zu,1 title "
				"\"Clock model per host: offset from the reference and its error bound\"\n", n);
	for (size_t i = 0; i < n; i++) {
		size_t r = rows[i];
		double o = inc_num(t, r, co), dr = cd >= 0 ? inc_num(t, r, cd) : 0, e = inc_num(t, r, ce);
		double first = cf >= 0 ? (inc_num(t, r, cf) - c->t0) / 1e9 : 0;
		fprintf(d, "# %s\n", inc_str(t, r, ch));
		for (double x = 0; x <= span; x += span / 50) {
			double v = (o + (isnan(dr) ? 0 : dr) * 1e-6 * (x - (isnan(first) ? 0 : first)) * 1e9) / 1e3;
			fprintf(d, "%.3f\t%.6f\t%.6f\t%.6f\n", x, v, v - (isnan(e) ? 0 : e / 1e3),
				v + (isnan(e) ? 0 : e / 1e3));
		}
		fputs("\n\n", d);
		char h[96], q[48];
		snprintf(h, sizeof(h), "%s", inc_str(t, r, ch));
		snprintf(q, sizeof(q), "%s", inc_str(t, r, cq));
		rpt_gp_label(h);
		rpt_gp_label(q);
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "set title \"%s (%s)\"\n"
			"plot 'clock.dat' index %zu using 1:3:4 with filledcurves fs transparent solid 0.3 "
			"lt %zu title 'error bound', '' index %zu using 1:2 with lines lt %zu title 'offset'\n",
			h, q, i, i + 1, i, i + 1);
	}
	snprintf(cmd + off, sizeof(cmd) - off, "unset multiplot");
	fprintf(g, "%s\nset terminal svg size 1100,%zu noenhanced\nset output 'clock.svg'\n%s\nunset output\n",
		cmd, 220 + 220 * n, cmd);
	fclose(d);
	fclose(g);
	rpt_run_gnuplot(c, "clock");
}

/* ---- retransmissions per second per host pair (flows|HOST|FLOW retrans series) ---- */

static bool rpt_is_retrans(const struct np_series *s)
{
	return !strcmp(s->table, "flows") && !strcmp(s->metric, "retrans");
}

/* "SENDER -> RECEIVER" of a retrans series: the sender is the recording
 * host (the recorder counts retransmissions at the sending socket); the
 * receiver is the host whose flows table holds the reverse flow, else the
 * remote address without its port. */
static void rpt_retrans_pair(const struct np_table *fl, const char *skey, char *buf, size_t size)
{
	static const char *const n_h[] = { "host", NULL }, *const n_f[] = { "flow", NULL };
	const char *bar = strchr(skey, '|'), *flow = bar ? bar + 1 : skey;
	const char *sp = strchr(flow, ' '), *gt = strchr(flow, '>');
	int hl = bar ? (int)(bar - skey) : 0;
	if (!sp || !gt || gt < sp) {
		snprintf(buf, size, "%.*s -> ?", hl, skey);
		return;
	}
	char rev[200];
	snprintf(rev, sizeof(rev), "%.*s%s>%.*s", (int)(sp - flow + 1), flow, gt + 1, (int)(gt - sp - 1), sp + 1);
	int ch = inc_col(fl, n_h), cf = inc_col(fl, n_f);
	for (size_t r = 0; fl && ch >= 0 && cf >= 0 && r < fl->nrows; r++)
		if (!strcmp(inc_str(fl, r, cf), rev)) {
			snprintf(buf, size, "%.*s -> %s", hl, skey, inc_str(fl, r, ch));
			return;
		}
	const char *port = strrchr(gt + 1, ':');
	snprintf(buf, size, "%.*s -> %.*s", hl, skey, port ? (int)(port - gt - 1) : (int)strlen(gt + 1), gt + 1);
}

struct rpt_rtpair { char name[160]; double total; size_t flows; };

/* Host pairs of the retrans series (*pair_of[i]: the pair of series i, or
 * SIZE_MAX), most retransmissions first; returns how many. */
static size_t rpt_retrans_pairs(const struct np_analysis *a, struct rpt_rtpair *p, size_t *pair_of)
{
	const struct np_table *fl = np_analysis_table(a, "flows");
	size_t n = 0;
	for (size_t i = 0; i < a->nseries; i++) {
		pair_of[i] = SIZE_MAX;
		if (!rpt_is_retrans(a->series[i]))
			continue;
		char name[160];
		rpt_retrans_pair(fl, a->series[i]->key, name, sizeof(name));
		size_t j = 0;
		while (j < n && strcmp(p[j].name, name))
			j++;
		if (j == n)
			snprintf(p[n++].name, sizeof(p[0].name), "%s", name);
		pair_of[i] = j;
		p[j].flows++;
		for (size_t k = 0; k < a->series[i]->n; k++)
			p[j].total += a->series[i]->v[k];
	}
	return n;
}

static int rpt_rtpair_cmp(const void *x, const void *y)
{
	const struct rpt_rtpair *a = x, *b = y;
	return a->total < b->total ? 1 : a->total > b->total ? -1 : strcmp(a->name, b->name);
}

/* Curve of each pair after sorting: the 7 largest their own, the rest one. */
static size_t rpt_retrans_line(const struct rpt_rtpair *sorted, size_t n, const char *name)
{
	for (size_t i = 0; i < n && i + 1 < RPT_PLOT_MAXLINES; i++)
		if (!strcmp(sorted[i].name, name))
			return i;
	return n <= RPT_PLOT_MAXLINES ? n - 1 : RPT_PLOT_MAXLINES - 1;
}

static void rpt_retrans_labels(const struct rpt_rtpair *p, size_t n, char labels[][200], size_t nl)
{
	for (size_t i = 0; i < nl; i++)
		snprintf(labels[i], sizeof(labels[0]), "%s (%.0f, %zu flow%s)", p[i].name, p[i].total,
			 p[i].flows, p[i].flows == 1 ? "" : "s");
	if (n > nl) {
		double rest = 0;
		for (size_t i = nl - 1; i < n; i++)
			rest += p[i].total;
		snprintf(labels[nl - 1], sizeof(labels[0]), "%zu other host pairs (%.0f)", n - nl + 1, rest);
	}
}

/* One curve per host pair (sender -> receiver), at most 8: beyond, the 7
 * largest and the rest summed. Binned per second since the analysis'
 * start, so the .dat sums to the flows table's retrans column. */
void rpt_plot_retrans_time(struct rpt_plotctx *c)
{
	const struct np_analysis *a = c->a;
	struct rpt_rtpair *p = calloc(a->nseries + 1, sizeof(*p)), *sorted = calloc(a->nseries + 1, sizeof(*p));
	size_t *pair_of = malloc((a->nseries + 1) * sizeof(*pair_of));
	size_t n = p && sorted && pair_of ? rpt_retrans_pairs(a, p, pair_of) : 0, nbins = 1;
	size_t nl = n > RPT_PLOT_MAXLINES ? RPT_PLOT_MAXLINES : n;
	for (size_t i = 0; i < a->nseries; i++)
		for (size_t k = 0; pair_of && pair_of[i] != SIZE_MAX && k < a->series[i]->n; k++) {
			double tt = ((double)a->series[i]->t[k] - c->t0) / 1e9;
			if (tt >= 0 && tt < 86400 && (size_t)tt + 1 > nbins)
				nbins = (size_t)tt + 1;
		}
	double *bins = n ? calloc(nl * nbins, sizeof(double)) : NULL;
	FILE *d, *g;
	if (!bins || rpt_open_pair(c, "retrans-time", &d, &g) < 0) {
		free(p); free(sorted); free(pair_of); free(bins);
		return;
	}
	memcpy(sorted, p, n * sizeof(*p));
	qsort(sorted, n, sizeof(*sorted), rpt_rtpair_cmp);
	for (size_t i = 0; i < a->nseries; i++) {
		if (pair_of[i] == SIZE_MAX)
			continue;
		size_t line = rpt_retrans_line(sorted, n, p[pair_of[i]].name);
		for (size_t k = 0; k < a->series[i]->n; k++) {
			double tt = ((double)a->series[i]->t[k] - c->t0) / 1e9;
			size_t b = tt < 0 ? 0 : tt >= (double)nbins ? nbins - 1 : (size_t)tt;
			bins[line * nbins + b] += a->series[i]->v[k];
		}
	}
	char labels[RPT_PLOT_MAXLINES][200], cmd[4096];
	const char *keys[RPT_PLOT_MAXLINES];
	rpt_retrans_labels(sorted, n, labels, nl);
	size_t off = (size_t)snprintf(cmd, sizeof(cmd), "plot");
	for (size_t i = 0; i < nl; i++)
		keys[i] = labels[i];
	rpt_dat_bins(d, keys, nl, bins, nbins);
	double top = 0;
	for (size_t i = 0; i < nl * nbins; i++)
		top = bins[i] > top ? bins[i] : top;
	for (size_t i = 0; i < nl && off < sizeof(cmd); i++) {
		rpt_gp_label(labels[i]);
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "%s'retrans-time.dat' index %zu using "
					"($1+0.5):2 with histeps lw 2 lt %zu title \"%s\"",
					i ? ", \\\n  " : " ", i, i + 1, labels[i]);
	}
	rpt_gp_head(g, "Retransmissions per second, per host pair (sender -> receiver; total, flows)",
		    "time since start of analysis (s)", "retransmitted segments");
	fprintf(g, "set xrange [0:%zu]\nset yrange [0:*]\nset key top left\n%s", nbins,
		top <= 10 ? "set ytics 1\n" : "");   /* whole segments, no 0.5 ticks */
	rpt_gp_outputs(g, "retrans-time", cmd);
	fclose(d);
	fclose(g);
	free(p); free(sorted); free(pair_of); free(bins);
	rpt_run_gnuplot(c, "retrans-time");
}
