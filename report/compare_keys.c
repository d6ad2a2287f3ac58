#include "compare_keys.h"
#include "compare.h"
#include "compare_stats.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Linux's default ip_local_port_range starts here: the higher port of a
 * connection at or above it is the client's ephemeral port. */
#define RPT_EPHEMERAL_MIN 32768

struct rpt_span { size_t at, len; long port; };

/* The ":PORT" digits ending right before position end (spaces skipped). */
static struct rpt_span rpt_port_before(const char *s, size_t end)
{
	struct rpt_span sp = { 0, 0, -1 };
	while (end > 0 && s[end - 1] == ' ')
		end--;
	size_t b = end;
	while (b > 0 && isdigit((unsigned char)s[b - 1]))
		b--;
	if (b == end || b == 0 || s[b - 1] != ':' || end - b > 5)
		return sp;
	return (struct rpt_span){ b, end - b, strtol(s + b, NULL, 10) };
}

/* The ":PORT" digits ending the token that starts at position start. */
static struct rpt_span rpt_port_after(const char *s, size_t start)
{
	while (s[start] == ' ')
		start++;
	size_t e = start;
	while (s[e] && s[e] != ' ' && s[e] != '|' && s[e] != '>')
		e++;
	return rpt_port_before(s, e);
}

static void rpt_star(char *s, struct rpt_span sp)
{
	memmove(s + sp.at + 1, s + sp.at + sp.len, strlen(s + sp.at + sp.len) + 1);
	s[sp.at] = '*';
}

/* "comm[1234]" -> "comm[*]" */
static void rpt_star_pids(char *s)
{
	for (char *p = strchr(s, '['); p; p = strchr(p + 1, '[')) {
		size_t n = strspn(p + 1, "0123456789");
		if (n && p[1 + n] == ']') {
			memmove(p + 2, p + 1 + n, strlen(p + 1 + n) + 1);
			p[1] = '*';
		}
	}
}

static bool rpt_boundary(char c) { return !c || c == ' ' || c == '>' || c == '|' || c == ']'; }

/* IPv6 link-local addresses derive from a MAC that a new veth or container
 * interface gets at random: "fe80::ecef:d2ff:fecb:965c:0" -> "fe80::*:0"
 * (the last group of an unbracketed address:port is the port),
 * "[fe80::1]:443" -> "[fe80::*]:443". */
static void rpt_star_linklocal(char *s)
{
	for (char *p = strstr(s, "fe80:"); p; p = strstr(p + 1, "fe80:")) {
		if (p > s && !strchr(" >|[", p[-1]))
			continue;
		bool bracket = p > s && p[-1] == '[';
		char *e = p;
		while (!rpt_boundary(*e) || (!bracket && *e == ']'))
			e++;
		char *keep = e;
		if (!bracket)
			for (char *q = e; q > p + 5; q--)
				if (q[-1] == ':') {
					keep = q - 1;
					break;
				}
		if (keep <= p + 6)
			continue;
		memcpy(p, "fe80::*", 7);
		memmove(p + 7, keep, strlen(keep) + 1);
	}
}

char *rpt_stable_cell(const char *s)
{
	char *out = strdup(s ? s : "");
	if (!out)
		return NULL;
	for (char *gt = strchr(out, '>'); gt; gt = strchr(gt + 1, '>')) {
		size_t g = (size_t)(gt - out);
		struct rpt_span l = rpt_port_before(out, g), r = rpt_port_after(out, g + 1);
		if (l.port < 0 || r.port < 0)
			continue;
		/* the right one first: starring it leaves the left span valid */
		if (r.port >= l.port && r.port >= RPT_EPHEMERAL_MIN)
			rpt_star(out, r);
		if (l.port >= r.port && l.port >= RPT_EPHEMERAL_MIN)
			rpt_star(out, l);
		gt = out + g;
	}
	rpt_star_pids(out);
	rpt_star_linklocal(out);
	return out;
}

char *rpt_stable_key(const char *rowkey) { return rpt_stable_cell(rowkey); }

int rpt_obs_cmp(const void *a, const void *b)
{
	const struct rpt_obs *x = a, *y = b;
	int d = strcmp(x->table, y->table);
	if (!d)
		d = strcmp(x->key, y->key);
	return d ? d : strcmp(x->metric, y->metric);
}

static struct rpt_obs *rpt_obs_push(struct rpt_runobs *ro)
{
	if (ro->n == ro->cap) {
		size_t cap = ro->cap ? ro->cap * 2 : 128;
		void *p = realloc(ro->v, cap * sizeof(*ro->v));
		if (!p)
			return NULL;
		ro->v = p;
		ro->cap = cap;
	}
	struct rpt_obs *o = &ro->v[ro->n++];
	memset(o, 0, sizeof(*o));
	o->num = o->den = o->nobs = NAN;
	return o;
}

static int rpt_rowkey_add(struct rpt_runobs *ro, const char *table, const char *key)
{
	if (ro->nrowkeys == ro->rowcap) {
		size_t cap = ro->rowcap ? ro->rowcap * 2 : 64;
		void *p = realloc(ro->rowkeys, cap * sizeof(*ro->rowkeys));
		if (!p)
			return -ENOMEM;
		ro->rowkeys = p;
		ro->rowcap = cap;
	}
	size_t len = strlen(table) + strlen(key) + 2;
	char *k = malloc(len);
	if (!k)
		return -ENOMEM;
	snprintf(k, len, "%s\x1f%s", table, key);
	ro->rowkeys[ro->nrowkeys++] = k;
	return 0;
}

/* Series by (table, raw key, metric), sorted once per analysis. */
static int rpt_cmp_series(const void *x, const void *y)
{
	const struct np_series *a = *(const struct np_series *const *)x;
	const struct np_series *b = *(const struct np_series *const *)y;
	int d = strcmp(a->table, b->table);
	if (!d)
		d = strcmp(a->key, b->key);
	return d ? d : strcmp(a->metric, b->metric);
}

struct rpt_build {
	struct rpt_runobs *ro;
	const struct np_analysis *a;
	struct np_series **sidx;
};

static const struct np_series *rpt_series_of(const struct rpt_build *bd, const char *table,
					     const char *key, const char *metric)
{
	struct np_series probe = { .table = (char *)table, .key = (char *)key, .metric = (char *)metric };
	const struct np_series *pp = &probe;
	struct np_series **hit = bd->sidx ? bsearch(&pp, bd->sidx, bd->a->nseries,
						    sizeof(*bd->sidx), rpt_cmp_series) : NULL;
	return hit && (*hit)->n ? *hit : NULL;
}

static bool rpt_event_table(const struct np_table *t)
{
	for (size_t k = 0; k < t->nkey && k < t->ncols; k++)
		if (t->cols[k].unit && !strcmp(t->cols[k].unit, "time_ns"))
			return true;
	return false;
}

struct rpt_rowref { char *skey, *rawkey; size_t row; };

static int rpt_cmp_rowref(const void *a, const void *b)
{
	const struct rpt_rowref *x = a, *y = b;
	int d = strcmp(x->skey, y->skey);
	return d ? d : (x->row > y->row) - (x->row < y->row);
}

enum rpt_agg { RPT_AGG_SUM, RPT_AGG_MAX, RPT_AGG_MIN, RPT_AGG_WMEAN };

static bool rpt_has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static enum rpt_agg rpt_agg_of(const struct np_col *c)
{
	const char *u = c->unit ? c->unit : "", *n = c->name;
	if (rpt_has_prefix(n, "max") || strstr(n, "_max"))
		return RPT_AGG_MAX;
	if (rpt_has_prefix(n, "min") || strstr(n, "_min"))
		return RPT_AGG_MIN;
	if (!strcmp(u, "count") || !strcmp(u, "bytes") || !strcmp(u, "bps") || !strcmp(u, "rate"))
		return RPT_AGG_SUM;
	return RPT_AGG_WMEAN;
}

/* The column that says how much a row weighs (requests, packets ...). */
static int rpt_weight_col(const struct np_table *t)
{
	static const char *const names[] = { "count", "requests", "packets", "sent", "tx_pkts",
					     "samples", NULL };
	for (const char *const *n = names; *n; n++) {
		int c = np_table_find_col(t, *n);
		if (c >= (int)t->nkey)
			return c;
	}
	return -1;
}

static double rpt_aggregate(const struct np_table *t, const struct rpt_rowref *g, size_t n,
			    size_t col, int wcol)
{
	enum rpt_agg how = rpt_agg_of(&t->cols[col]);
	double acc = NAN, wsum = 0;
	for (size_t i = 0; i < n; i++) {
		double v = np_cell_f64(np_table_cell_c(t, g[i].row, col));
		if (isnan(v))
			continue;
		double w = wcol >= 0 ? np_cell_f64(np_table_cell_c(t, g[i].row, (size_t)wcol)) : 1;
		if (isnan(w) || w < 0)
			w = 0;
		if (isnan(acc))
			acc = how == RPT_AGG_WMEAN ? 0 : v;
		else if (how == RPT_AGG_SUM)
			acc += v;
		else if (how == RPT_AGG_MAX)
			acc = fmax(acc, v);
		else if (how == RPT_AGG_MIN)
			acc = fmin(acc, v);
		if (how == RPT_AGG_WMEAN) {
			acc += v * (n > 1 ? w : 1);
			wsum += n > 1 ? w : 1;
		}
	}
	if (how == RPT_AGG_WMEAN && !isnan(acc))
		acc = wsum > 0 ? acc / wsum : NAN;
	return acc;
}

static double rpt_col_sum(const struct np_table *t, const struct rpt_rowref *g, size_t n,
			  const char *name)
{
	int c = np_table_find_col(t, name);
	if (c < 0)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		double v = np_cell_f64(np_table_cell_c(t, g[i].row, (size_t)c));
		s += isnan(v) ? 0 : v;
	}
	return s;
}

/* How many observations the row's quantiles rest on (compare.c gates a
 * quantile only with enough of them beyond it): `requests` (transactions,
 * service_graph edges), else `count` (decomp), summed over the members.
 * NAN when the row has neither or no member has a value. */
static double rpt_obs_count(const struct np_table *t, const struct rpt_rowref *g, size_t n,
			    const char **name)
{
	static const char *const names[] = { "requests", "count", NULL };
	for (const char *const *nm = names; *nm; nm++) {
		int c = np_table_find_col(t, *nm);
		if (c < (int)t->nkey)
			continue;
		double s = NAN;
		for (size_t i = 0; i < n; i++) {
			double v = np_cell_f64(np_table_cell_c(t, g[i].row, (size_t)c));
			if (!isnan(v))
				s = isnan(s) ? v : s + v;
		}
		*name = *nm;
		return s;
	}
	*name = NULL;
	return NAN;
}

static struct rpt_obs *rpt_obs_add(struct rpt_runobs *ro, const char *table, const char *skey,
				   const char *metric, const char *unit, int dir, double v,
				   size_t members)
{
	struct rpt_obs *o = rpt_obs_push(ro);
	if (!o || !(o->key = strdup(skey))) {
		if (o)
			ro->n--;
		return NULL;
	}
	o->table = table;
	o->metric = metric;
	o->unit = unit;
	o->dir = dir;
	o->v = v;
	o->members = members;
	return o;
}

/* A counted rate num / den of a group (loss: lost / sent, retransmissions:
 * retrans / tx_pkts): tested as a proportion. */
static int rpt_add_rate(struct rpt_runobs *ro, const struct np_table *t, const struct rpt_rowref *g,
			size_t n, const char *metric, const char *num, const char *den)
{
	double k = rpt_col_sum(t, g, n, num), d = rpt_col_sum(t, g, n, den);
	if (isnan(k) || !(d > 0))
		return 0;
	struct rpt_obs *o = rpt_obs_add(ro, t->name, g[0].skey, metric, "ratio", RPT_DIR_LOWER,
					k / d, n);
	if (o) {
		o->num = k;
		o->den = d;
	}
	return 0;
}

/* Kernel drops of the flow's packets on this host (the drops table, any
 * reason) over its packets both ways plus the drops: 0 when nothing was
 * dropped, so a run without loss still has a rate to compare. */
static int rpt_add_drop_rate(struct rpt_build *bd, const struct np_table *t,
			     const struct rpt_rowref *g, size_t n)
{
	const struct np_table *d = np_analysis_table(bd->a, "drops");
	int dc = d ? np_table_find_col(d, "drops") : -1;
	double pk = rpt_col_sum(t, g, n, "tx_pkts") + rpt_col_sum(t, g, n, "rx_pkts"), k = 0;
	if (isnan(pk))
		return 0;
	for (size_t r = 0; dc >= 0 && d->nkey >= 2 && r < d->nrows; r++) {
		const struct np_cell *h = np_table_cell_c(d, r, 0), *f = np_table_cell_c(d, r, 1);
		if (h->kind != NP_CELL_STR || f->kind != NP_CELL_STR)
			continue;
		size_t len = strlen(h->s) + strlen(f->s) + 2;
		char *raw = malloc(len);
		if (!raw)
			return -ENOMEM;
		snprintf(raw, len, "%s|%s", h->s, f->s);
		char *sk = rpt_stable_key(raw);
		free(raw);
		if (!sk)
			return -ENOMEM;
		double v = np_cell_f64(np_table_cell_c(d, r, (size_t)dc));
		if (!strcmp(sk, g[0].skey) && !isnan(v))
			k += v;
		free(sk);
	}
	if (!(pk + k > 0))
		return 0;
	struct rpt_obs *o = rpt_obs_add(bd->ro, t->name, g[0].skey, "drop_rate", "ratio",
					RPT_DIR_LOWER, k / (pk + k), n);
	if (!o)
		return -ENOMEM;
	o->num = k;
	o->den = pk + k;
	return 0;
}

static int rpt_add_group(struct rpt_build *bd, const struct np_table *t,
			 const struct rpt_rowref *g, size_t n)
{
	struct rpt_runobs *ro = bd->ro;
	int wcol = rpt_weight_col(t);
	const char *nobs_name;
	double nobs = rpt_obs_count(t, g, n, &nobs_name);
	for (size_t c = t->nkey; c < t->ncols; c++) {
		const struct np_col *col = &t->cols[c];
		int dir = rpt_metric_direction(col->name, col->unit);
		if (dir < 0)
			continue;
		double v = rpt_aggregate(t, g, n, c, wcol);
		const struct np_series *s = n == 1 ? rpt_series_of(bd, t->name, g[0].rawkey, col->name) : NULL;
		if (isnan(v) && !s)
			continue;
		struct rpt_obs *o = rpt_obs_add(ro, t->name, g[0].skey, col->name, col->unit, dir, v, n);
		if (!o)
			return -ENOMEM;
		if (s) {
			o->samples = s->v;
			o->nsamples = s->n;
		}
		o->nobs = nobs;
		o->nobs_name = nobs_name;
		if (!strcmp(col->name, "loss_rate") && np_table_find_col(t, "sent") >= 0) {
			double k = rpt_col_sum(t, g, n, "lost"), d = rpt_col_sum(t, g, n, "sent");
			if (!isnan(k) && d > 0) {
				o->num = k;
				o->den = d;
				o->v = k / d;
			}
		}
	}
	if (!strcmp(t->name, "flows")) {
		rpt_add_rate(ro, t, g, n, "retrans_rate", "retrans", "tx_pkts");
		if (rpt_add_drop_rate(bd, t, g, n) < 0)
			return -ENOMEM;
	}
	return rpt_rowkey_add(ro, t->name, g[0].skey);
}

static int rpt_add_table(struct rpt_build *bd, const struct np_table *t)
{
	struct rpt_rowref *rr = calloc(t->nrows + 1, sizeof(*rr));
	int err = rr ? 0 : -ENOMEM;
	size_t n = 0;
	for (size_t r = 0; !err && r < t->nrows; r++) {
		char *raw = np_table_row_key(t, r);
		char *sk = raw ? rpt_stable_key(raw) : NULL;
		if (!raw || !sk) {
			free(raw);
			free(sk);
			continue;
		}
		rr[n++] = (struct rpt_rowref){ sk, raw, r };
	}
	if (rr)
		qsort(rr, n, sizeof(*rr), rpt_cmp_rowref);
	bd->ro->raw_rows += n;
	for (size_t i = 0; !err && i < n;) {
		size_t j = i + 1;
		while (j < n && !strcmp(rr[j].skey, rr[i].skey))
			j++;
		err = rpt_add_group(bd, t, rr + i, j - i);
		bd->ro->stable_rows++;
		i = j;
	}
	for (size_t i = 0; i < n; i++) {
		free(rr[i].skey);
		free(rr[i].rawkey);
	}
	free(rr);
	return err;
}

/* Was this series already taken as a column of its table? */
static bool rpt_series_is_col(const struct np_analysis *a, const struct np_series *s)
{
	const struct np_table *t = np_analysis_table(a, s->table);
	return t && np_table_find_col(t, s->metric) >= (int)t->nkey;
}

/* Series whose metric is no column (netcpu "cpu" per interval): their median
 * is the run's value; a stable key that several series fall on is skipped. */
static int rpt_add_series_only(struct rpt_build *bd)
{
	const struct np_analysis *a = bd->a;
	for (size_t i = 0; i < a->nseries; i++) {
		const struct np_series *s = bd->sidx[i];
		int dir = rpt_metric_direction(s->metric, s->unit);
		if (dir < 0 || !s->n || rpt_series_is_col(a, s))
			continue;
		const struct np_table *t = np_analysis_table(a, s->table);
		if (t && rpt_event_table(t))
			continue;
		char *sk = rpt_stable_key(s->key);
		if (!sk)
			return -ENOMEM;
		double *tmp = malloc(s->n * sizeof(*tmp));
		if (!tmp) {
			free(sk);
			return -ENOMEM;
		}
		memcpy(tmp, s->v, s->n * sizeof(*tmp));
		struct rpt_obs *o = rpt_obs_add(bd->ro, s->table, sk, s->metric, s->unit, dir,
						rpt_median_inplace(tmp, s->n), 1);
		free(tmp);
		free(sk);
		if (!o)
			return -ENOMEM;
		o->samples = s->v;
		o->nsamples = s->n;
	}
	return 0;
}

/* Network CPU per request: a host's netcpu total over the requests its
 * endpoints served (else made, as a client), summed over the run. */
static int rpt_add_cpu_per_request(struct rpt_runobs *ro, const struct np_analysis *a)
{
	const struct np_table *nc = np_analysis_table(a, "netcpu");
	const struct np_table *tx = np_analysis_table(a, "transactions");
	int ch = nc ? np_table_find_col(nc, "host") : -1, ct = nc ? np_table_find_col(nc, "total") : -1;
	int tl = tx ? np_table_find_col(tx, "level") : -1, th = tx ? np_table_find_col(tx, "host") : -1;
	int trole = tx ? np_table_find_col(tx, "role") : -1;
	int treq = tx ? np_table_find_col(tx, "requests") : -1;
	if (ch < 0 || ct < 0 || tl < 0 || th < 0 || trole < 0 || treq < 0)
		return 0;
	for (size_t r = 0; r < nc->nrows; r++) {
		const char *host = np_table_cell_c(nc, r, (size_t)ch)->s;
		double total = np_cell_f64(np_table_cell_c(nc, r, (size_t)ct));
		double req[2] = { 0, 0 };      /* server, client */
		for (size_t q = 0; host && q < tx->nrows; q++) {
			const char *lv = np_table_cell_c(tx, q, (size_t)tl)->s;
			const char *h = np_table_cell_c(tx, q, (size_t)th)->s;
			const char *role = np_table_cell_c(tx, q, (size_t)trole)->s;
			double n = np_cell_f64(np_table_cell_c(tx, q, (size_t)treq));
			if (lv && h && role && !strcmp(lv, "endpoint") && !strcmp(h, host) && !isnan(n))
				req[strcmp(role, "server") != 0] += n;
		}
		double n = req[0] > 0 ? req[0] : req[1];
		if (!host || isnan(total) || !(n > 0))
			continue;
		char *sk = rpt_stable_key(host);
		struct rpt_obs *o = sk ? rpt_obs_add(ro, nc->name, sk, "cpu_per_request", "ns",
						     RPT_DIR_LOWER, total / n, 1) : NULL;
		free(sk);
		if (!o)
			return -ENOMEM;
	}
	return 0;
}

static int rpt_note_event_table(struct rpt_runobs *ro, const struct np_table *t)
{
	ro->event_rows += t->nrows;
	size_t len = ro->event_tables ? strlen(ro->event_tables) : 0;
	char *p = realloc(ro->event_tables, len + strlen(t->name) + 3);
	if (!p)
		return -ENOMEM;
	sprintf(p + len, "%s%s", len ? ", " : "", t->name);
	ro->event_tables = p;
	return 0;
}

static int rpt_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rpt_runobs_build(struct rpt_runobs *ro, const struct np_analysis *a)
{
	memset(ro, 0, sizeof(*ro));
	struct rpt_build bd = { ro, a, malloc((a->nseries + 1) * sizeof(*bd.sidx)) };
	if (!bd.sidx)
		return -ENOMEM;
	if (a->nseries)
		memcpy(bd.sidx, a->series, a->nseries * sizeof(*bd.sidx));
	qsort(bd.sidx, a->nseries, sizeof(*bd.sidx), rpt_cmp_series);
	int err = 0;
	for (size_t i = 0; !err && i < a->ntables; i++) {
		const struct np_table *t = a->tables[i];
		if (np_analysis_table(a, t->name) != t)
			continue;      /* a second table of the same name is not compared */
		err = rpt_event_table(t) ? rpt_note_event_table(ro, t) : rpt_add_table(&bd, t);
	}
	if (!err)
		err = rpt_add_series_only(&bd);
	if (!err)
		err = rpt_add_cpu_per_request(ro, a);
	free(bd.sidx);
	if (ro->n)     /* an analysis with no metric at all: ro->v is NULL */
		qsort(ro->v, ro->n, sizeof(*ro->v), rpt_obs_cmp);
	/* drop duplicates (a series-only metric twice on one stable key) */
	size_t w = 0;
	for (size_t i = 0; i < ro->n; i++) {
		if (w && !rpt_obs_cmp(&ro->v[w - 1], &ro->v[i])) {
			free(ro->v[i].key);
			continue;
		}
		ro->v[w++] = ro->v[i];
	}
	ro->n = w;
	if (ro->nrowkeys)
		qsort(ro->rowkeys, ro->nrowkeys, sizeof(*ro->rowkeys), rpt_cmp_str);
	if (err)
		rpt_runobs_free(ro);
	return err;
}

void rpt_runobs_free(struct rpt_runobs *ro)
{
	for (size_t i = 0; i < ro->n; i++)
		free(ro->v[i].key);
	for (size_t i = 0; i < ro->nrowkeys; i++)
		free(ro->rowkeys[i]);
	free(ro->v);
	free(ro->rowkeys);
	free(ro->event_tables);
	memset(ro, 0, sizeof(*ro));
}

const struct rpt_obs *rpt_runobs_find(const struct rpt_runobs *ro, const char *table,
				      const char *key, const char *metric)
{
	struct rpt_obs probe = { .table = table, .key = (char *)key, .metric = metric };
	return ro->n ? bsearch(&probe, ro->v, ro->n, sizeof(*ro->v), rpt_obs_cmp) : NULL;
}

bool rpt_runobs_has_row(const struct rpt_runobs *ro, const char *table, const char *key)
{
	size_t len = strlen(table) + strlen(key) + 2;
	char *k = malloc(len);
	if (!k)
		return false;
	snprintf(k, len, "%s\x1f%s", table, key);
	bool hit = ro->nrowkeys && bsearch(&k, ro->rowkeys, ro->nrowkeys, sizeof(*ro->rowkeys),
					   rpt_cmp_str);
	free(k);
	return hit;
}
