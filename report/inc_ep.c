/* Incident summary: slow endpoints, their downstream cause, latency tails
 * and where the slowest requests spent their time. */
#include "inctab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INC_SLOW_FACTOR   3.0      /* p50 at least 3x the service's other endpoints */
#define INC_SLOW_MIN_NS   1e6      /* and at least 1 ms more */
#define INC_TAIL_FACTOR   10.0     /* p99 at least 10x p50 */
#define INC_TAIL_MIN_NS   20e6     /* and 20 ms more */
#define INC_RTO_MIN_NS    200e6    /* Linux TCP_RTO_MIN: what one lost packet costs */

const char *inc_str(const struct np_table *t, size_t r, int c)
{
	if (!t || c < 0)
		return "";
	const struct np_cell *x = np_table_cell_c(t, r, (size_t)c);
	return x->kind == NP_CELL_STR && x->s ? x->s : "";
}

double inc_num(const struct np_table *t, size_t r, int c)
{
	return t && c >= 0 ? np_cell_f64(np_table_cell_c(t, r, (size_t)c)) : NAN;
}

int inc_col(const struct np_table *t, const char *const *names)
{
	for (; t && *names; names++) {
		int c = np_table_find_col(t, *names);
		if (c >= 0)
			return c;
	}
	return -1;
}

static int inc_cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Hosts that serve some endpoint: a caller that is none of them is a user. */
static bool inc_host_serves(const struct np_table *t, const char *host, int ch, int crole)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (!strcmp(inc_str(t, r, ch), host) && !strcmp(inc_str(t, r, crole), "server"))
			return true;
	return false;
}

static void inc_eps_mark_users(struct inc_eps *e, const struct np_table *t, int ch, int crole,
			       int clevel, int ckey)
{
	bool any_client = false;
	for (size_t r = 0; r < t->nrows; r++) {
		if (strcmp(inc_str(t, r, clevel), "endpoint") || strcmp(inc_str(t, r, crole), "client"))
			continue;
		any_client = true;
		if (inc_host_serves(t, inc_str(t, r, ch), ch, crole))
			continue;
		for (size_t i = 0; i < e->n; i++)
			if (!strcmp(e->v[i].key, inc_str(t, r, ckey)))
				e->v[i].user = true;
	}
	for (size_t i = 0; !any_client && i < e->n; i++)
		e->v[i].user = true;
}

/* Median p50 of the other endpoints of the same service. */
static void inc_eps_baselines(struct inc_eps *e)
{
	double *v = malloc((e->n + 1) * sizeof(double));
	for (size_t i = 0; v && i < e->n; i++) {
		size_t m = 0;
		for (size_t j = 0; j < e->n; j++)
			if (j != i && !strcmp(e->v[j].svc, e->v[i].svc) && isfinite(e->v[j].p50))
				v[m++] = e->v[j].p50;
		qsort(v, m, sizeof(double), inc_cmp_dbl);
		e->v[i].base = m ? v[m / 2] : NAN;
	}
	free(v);
}

static void inc_ep_fill(struct inc_ep *ep, const struct np_table *t, size_t r, const int *c)
{
	ep->key = inc_str(t, r, c[0]);
	ep->host = inc_str(t, r, c[1]);
	size_t sl = strcspn(ep->key, " ");
	snprintf(ep->svc, sizeof(ep->svc), "%.*s", (int)sl, ep->key);
	ep->name = ep->key[sl] ? ep->key + sl + 1 : ep->key;
	ep->p50 = inc_num(t, r, c[2]);
	ep->p99 = inc_num(t, r, c[3]);
	ep->rate = inc_num(t, r, c[4]);
	ep->n = inc_num(t, r, c[5]);
}

void inc_eps_load(struct inc_eps *e, const struct np_table *t)
{
	static const char *const n_level[] = { "level", NULL }, *const n_key[] = { "key", NULL },
		*const n_host[] = { "host", NULL }, *const n_role[] = { "role", NULL },
		*const n_p50[] = { "p50", NULL }, *const n_p99[] = { "p99", NULL },
		*const n_rate[] = { "rate", NULL }, *const n_req[] = { "requests", "count", NULL };
	memset(e, 0, sizeof(*e));
	int clevel = inc_col(t, n_level), crole = inc_col(t, n_role);
	int c[6] = { inc_col(t, n_key), inc_col(t, n_host), inc_col(t, n_p50), inc_col(t, n_p99),
		     inc_col(t, n_rate), inc_col(t, n_req) };
	if (!t || clevel < 0 || crole < 0 || c[0] < 0 || c[2] < 0 || !(e->v = calloc(t->nrows + 1, sizeof(*e->v))))
		return;
	for (int pass = 0; pass < 2; pass++)     /* server rows first, then the rest */
		for (size_t r = 0; r < t->nrows; r++) {
			if (strcmp(inc_str(t, r, clevel), "endpoint") ||
			    (strcmp(inc_str(t, r, crole), "server") == 0) != (pass == 0))
				continue;
			bool seen = false;
			for (size_t i = 0; i < e->n && !seen; i++)
				seen = !strcmp(e->v[i].key, inc_str(t, r, c[0]));
			if (!seen)
				inc_ep_fill(&e->v[e->n++], t, r, c);
		}
	inc_eps_mark_users(e, t, c[1], crole, clevel, c[0]);
	inc_eps_baselines(e);
}

void inc_eps_free(struct inc_eps *e)
{
	free(e->v);
	memset(e, 0, sizeof(*e));
}

const char *inc_eps_server(const struct inc_eps *e, const char *svc)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->v[i].svc, svc))
			return e->v[i].host;
	return NULL;
}

static bool inc_is_slow(const struct inc_ep *ep)
{
	return isfinite(ep->base) && isfinite(ep->p50) && ep->p50 >= INC_SLOW_FACTOR * ep->base &&
	       ep->p50 - ep->base >= INC_SLOW_MIN_NS;
}

static struct rpt_inc_item *inc_slow_item(struct rpt_incident *inc, const struct inc_ep *ep,
					  enum rpt_inc_kind k, double impact, const char *tail)
{
	char p50[32], add[32], base[32], p99[32];
	double added = ep->p50 - ep->base;
	struct rpt_inc_item *it = rpt_inc_add(inc, k, impact, "transactions",
		"%s at %s on %s%s: p50 %s, +%s over the service's other endpoints (p50 %s); "
		"%.0f requests, p99 %s%s", ep->name, ep->svc, ep->host, ep->user ? " (called by users)" : "",
		rpt_inc_dur(p50, sizeof(p50), ep->p50), rpt_inc_dur(add, sizeof(add), added),
		rpt_inc_dur(base, sizeof(base), ep->base), ep->n, rpt_inc_dur(p99, sizeof(p99), ep->p99),
		tail);
	if (!it)
		return NULL;
	snprintf(it->subject, sizeof(it->subject), "%s", ep->key);
	snprintf(it->host, sizeof(it->host), "%s", ep->host);
	it->value_ns = ep->p50;
	it->baseline_ns = ep->base;
	it->added_ns = added;
	it->count = ep->n;
	return it;
}

/* A slow downstream endpoint whose added time explains most of a slow
 * user-facing one's: the user's added time is spent there. */
static const struct inc_ep *inc_cause_of(const struct inc_eps *e, const struct inc_ep *user)
{
	double want = user->p50 - user->base;
	const struct inc_ep *best = NULL;
	for (size_t i = 0; i < e->n; i++) {
		const struct inc_ep *d = &e->v[i];
		double got = d->p50 - d->base;
		if (d == user || d->user || !inc_is_slow(d) || got < 0.8 * want || got > 1.05 * want + 1e6)
			continue;
		if (!best || got > best->p50 - best->base)
			best = d;
	}
	return best;
}

void inc_slow_endpoints(struct rpt_incident *inc, const struct inc_eps *e)
{
	bool *used = calloc(e->n + 1, sizeof(bool));
	if (!used)
		return;
	for (size_t i = 0; i < e->n; i++) {
		const struct inc_ep *ep = &e->v[i];
		if (!ep->user || !inc_is_slow(ep))
			continue;
		double impact = (ep->p50 - ep->base) * (isfinite(ep->rate) ? ep->rate : 1);
		inc_slow_item(inc, ep, RPT_INC_SLOW, impact, "");
		const struct inc_ep *d = inc_cause_of(e, ep);
		if (!d)
			continue;
		char tail[200], add[32];
		snprintf(tail, sizeof(tail), "; measured at the server, so the %s added to %s is spent "
			 "inside %s", rpt_inc_dur(add, sizeof(add), ep->p50 - ep->base), ep->name, d->host);
		inc_slow_item(inc, d, RPT_INC_CAUSE, impact * 0.999, tail);
		used[d - e->v] = true;
	}
	for (size_t i = 0; i < e->n; i++) {      /* slow inside, not (yet) felt by users */
		const struct inc_ep *ep = &e->v[i];
		if (!ep->user && !used[i] && inc_is_slow(ep))
			inc_slow_item(inc, ep, RPT_INC_CAUSE, (ep->p50 - ep->base) * 0.1, "");
	}
	free(used);
}

void inc_tails(struct rpt_incident *inc, const struct inc_eps *e, double lost)
{
	for (size_t i = 0; i < e->n; i++) {
		const struct inc_ep *ep = &e->v[i];
		double extra = ep->p99 - ep->p50;
		if (!ep->user || !(ep->p99 >= INC_TAIL_FACTOR * ep->p50) || !(extra >= INC_TAIL_MIN_NS))
			continue;
		char p99[32], p50[32], why[160] = "";
		if (lost > 0 && fabs(extra - INC_RTO_MIN_NS) < 0.25 * INC_RTO_MIN_NS)
			snprintf(why, sizeof(why), "; p99 - p50 is close to 200 ms, the minimum TCP "
				 "retransmission timeout: requests that lost a packet (see LOSS)");
		struct rpt_inc_item *it = rpt_inc_add(inc, RPT_INC_TAIL,
			extra * (isfinite(ep->rate) ? ep->rate : 1) * 0.01, "transactions",
			"%s at %s on %s: p99 %s is %.0fx its p50 (%s)%s", ep->name, ep->svc, ep->host,
			rpt_inc_dur(p99, sizeof(p99), ep->p99), ep->p99 / ep->p50,
			rpt_inc_dur(p50, sizeof(p50), ep->p50), why);
		if (!it)
			return;
		snprintf(it->subject, sizeof(it->subject), "%s", ep->key);
		snprintf(it->host, sizeof(it->host), "%s", ep->host);
		it->value_ns = ep->p99;
		it->baseline_ns = ep->p50;
		it->added_ns = extra;
		it->count = ep->n;
	}
}

/* Per component: in how many slow requests it was the bottleneck, and its
 * median share there. */
struct inc_comp { const char *name; size_t n; double share[64]; };

static size_t inc_comp_collect(const struct np_table *bn, const char *source, struct inc_comp *cs,
			       size_t max, size_t *windows)
{
	static const char *const n_src[] = { "source", NULL }, *const n_comp[] = { "component", NULL },
		*const n_bn[] = { "bottleneck", NULL }, *const n_x[] = { "x_i", NULL };
	int csrc = inc_col(bn, n_src), ccomp = inc_col(bn, n_comp), cbn = inc_col(bn, n_bn),
	    cx = inc_col(bn, n_x);
	size_t nc = 0;
	*windows = 0;
	for (size_t r = 0; bn && ccomp >= 0 && cbn >= 0 && r < bn->nrows; r++) {
		if ((csrc >= 0 && strcmp(inc_str(bn, r, csrc), source)) || !(inc_num(bn, r, cbn) > 0))
			continue;
		const char *comp = inc_str(bn, r, ccomp);
		size_t k = 0;
		while (k < nc && strcmp(cs[k].name, comp))
			k++;
		if (k == nc && nc < max)
			cs[nc++] = (struct inc_comp){ .name = comp };
		if (k < nc && cs[k].n < 64)
			cs[k].share[cs[k].n] = inc_num(bn, r, cx);
		if (k < nc)
			cs[k].n++;
		(*windows)++;
	}
	return nc;
}

static int inc_cmp_comp(const void *x, const void *y)
{
	const struct inc_comp *a = x, *b = y;
	return (a->n < b->n) - (a->n > b->n);
}

static const char *inc_comp_words(char *buf, size_t n, const char *comp)
{
	if (!strncmp(comp, "app:", 4))
		snprintf(buf, n, "the application on %s", comp + 4);
	else if (!strcmp(comp, "network"))
		snprintf(buf, n, "the network (incl. retransmission waits)");
	else
		snprintf(buf, n, "%s", comp);
	return buf;
}

void inc_time_spent(struct rpt_incident *inc, const struct np_table *bn)
{
	struct inc_comp cs[8];
	size_t windows, nc = inc_comp_collect(bn, "slow_rpc_tree", cs, 8, &windows);
	if (nc == 0)
		nc = inc_comp_collect(bn, "slow_rpc", cs, 8, &windows);
	if (nc == 0)
		return;
	qsort(cs, nc, sizeof(cs[0]), inc_cmp_comp);
	char text[600];
	size_t off = (size_t)snprintf(text, sizeof(text), "the slowest requests, split over their calls, "
				      "spent most of their time in");
	for (size_t k = 0; k < nc && k < 3 && off < sizeof(text); k++) {
		char w[120];
		size_t m = cs[k].n < 64 ? cs[k].n : 64;
		qsort(cs[k].share, m, sizeof(double), inc_cmp_dbl);
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s %s in %zu of %zu (median %.0f %%)",
					k ? (k + 1 == nc || k == 2 ? " and" : ",") : "",
					inc_comp_words(w, sizeof(w), cs[k].name), cs[k].n, windows,
					100 * cs[k].share[m / 2]);
	}
	/* ranked after the slow endpoints it explains, before tails */
	double top = inc->n ? inc->items[0].impact * 0.998 : 1;
	struct rpt_inc_item *it = rpt_inc_add(inc, RPT_INC_WHERE, top, "bottlenecks", "%s", text);
	if (it) {
		snprintf(it->subject, sizeof(it->subject), "%s", cs[0].name);
		it->count = (double)cs[0].n;
	}
}

/* The degradation pattern that explains the most degraded requests. */
void inc_pattern(struct rpt_incident *inc, const struct np_table *t)
{
	static const char *const n_cond[] = { "conditions", NULL }, *const n_f[] = { "fscore", NULL },
		*const n_sup[] = { "support", NULL }, *const n_pos[] = { "positives", NULL },
		*const n_lo[] = { "lo", "lo_ns", NULL }, *const n_hi[] = { "hi", "hi_ns", NULL };
	int cc = inc_col(t, n_cond), cf = inc_col(t, n_f), cs = inc_col(t, n_sup), cp = inc_col(t, n_pos);
	size_t best = 0;
	for (size_t r = 1; t && cf >= 0 && r < t->nrows; r++)
		if (inc_num(t, r, cf) > inc_num(t, best, cf))
			best = r;
	if (!t || cc < 0 || cf < 0 || t->nrows == 0 || !(inc_num(t, best, cf) >= 0.5))
		return;
	char lo[32], hi[32], range[96] = "degraded";
	double vlo = inc_num(t, best, inc_col(t, n_lo)), vhi = inc_num(t, best, inc_col(t, n_hi));
	if (isfinite(vlo) && isfinite(vhi))
		snprintf(range, sizeof(range), "%s .. %s", rpt_inc_dur(lo, sizeof(lo), vlo),
			 rpt_inc_dur(hi, sizeof(hi), vhi));
	double top = inc->n ? inc->items[0].impact * 0.997 : 1;
	struct rpt_inc_item *it = rpt_inc_add(inc, RPT_INC_PATTERN, top, "patterns",
		"requests taking %s are those where %s (F = %.2f; %.0f of %.0f such requests match)",
		range, inc_str(t, best, cc), inc_num(t, best, cf), inc_num(t, best, cs), inc_num(t, best, cp));
	if (it) {
		snprintf(it->subject, sizeof(it->subject), "%s", inc_str(t, best, cc));
		it->value_ns = vlo;
		it->count = inc_num(t, best, cs);
	}
}
