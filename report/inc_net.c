/* Incident summary: where packets were lost and why, clock quality, and the
 * recorder's own health. */
#include "inctab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INC_RTO_MIN_NS 200e6     /* Linux TCP_RTO_MIN: what one lost packet costs a request */
#define INC_MAX_GROUPS 8

static const msgpack_object *inc_meta_get(const msgpack_object *m, const char *key)
{
	if (!m || m->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(key) &&
		    !memcmp(k->via.str.ptr, key, k->via.str.size))
			return &m->via.map.ptr[i].val;
	}
	return NULL;
}

static double inc_meta_num(const msgpack_object *m, const char *key)
{
	const msgpack_object *v = inc_meta_get(m, key);
	if (!v)
		return NAN;
	switch (v->type) {
	case MSGPACK_OBJECT_POSITIVE_INTEGER: return (double)v->via.u64;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER: return (double)v->via.i64;
	case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: return v->via.f64;
	case MSGPACK_OBJECT_BOOLEAN: return v->via.boolean;
	default: return NAN;
	}
}

/* Seconds the analysis covers: the meta's span, else the span of the
 * per-interval series, else 60 s (a recording's usual order). */
static double inc_span_s(const struct np_analysis *a)
{
	double lo = inc_meta_num(&a->meta, "t_first_ns"), hi = inc_meta_num(&a->meta, "t_last_ns");
	if (isfinite(lo) && isfinite(hi) && hi > lo)
		return (hi - lo) / 1e9;
	lo = INFINITY;
	hi = -INFINITY;
	for (size_t i = 0; i < a->nseries; i++)
		for (size_t k = 0; k < a->series[i]->n; k++) {
			lo = fmin(lo, (double)a->series[i]->t[k]);
			hi = fmax(hi, (double)a->series[i]->t[k]);
		}
	return hi > lo ? (hi - lo) / 1e9 : 60;
}

/* "tcp A:pa>B:pb": the service side (known endpoint, else the lower port). */
static void inc_flow_service(char *svc, size_t n, const char *flow, const struct inc_eps *e)
{
	const char *sp = strchr(flow, ' '), *a = sp ? sp + 1 : flow, *gt = strchr(a, '>');
	char src[64], dst[64];
	if (!gt) {
		snprintf(svc, n, "%s", flow);
		return;
	}
	snprintf(src, sizeof(src), "%.*s", (int)(gt - a), a);
	snprintf(dst, sizeof(dst), "%s", gt + 1);
	const char *ps = strrchr(src, ':'), *pd = strrchr(dst, ':');
	bool dst_known = inc_eps_server(e, dst), src_known = inc_eps_server(e, src);
	bool dst_lower = pd && ps && atoi(pd + 1) <= atoi(ps + 1);
	snprintf(svc, n, "%s", dst_known || (!src_known && dst_lower) ? dst : src);
}

static const char *inc_reason_words(const char *reason)
{
	static const struct { const char *r, *w; } words[] = {
		{ "NETFILTER_DROP", "a netfilter (iptables/nftables) rule dropped them" },
		{ "QDISC_DROP", "a full queueing discipline (qdisc) dropped them" },
		{ "NO_SOCKET", "no socket was listening" },
		{ "SOCKET_FILTER", "a socket filter dropped them" },
		{ "TCP_CSUM", "bad TCP checksums" },
		{ "SOCKET_RCVBUFF", "the receiver's socket buffer was full" },
		{ "PROTO_MEM", "the protocol's memory limit was reached" },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(reason, words[i].r))
			return words[i].w;
	return NULL;
}

struct inc_lossgrp {
	char svc[64];
	const char *host, *from, *to, *seg, *reason;
	size_t packets, conns;
	const char *flows[64];
};

static void inc_lossgrp_add(struct inc_lossgrp *g, const char *flow)
{
	g->packets++;
	for (size_t i = 0; i < g->conns && i < 64; i++)
		if (!strcmp(g->flows[i], flow))
			return;
	if (g->conns < 64)
		g->flows[g->conns] = flow;
	g->conns++;
}

static size_t inc_loss_group(const struct np_table *t, const struct inc_eps *e,
			     struct inc_lossgrp *gs)
{
	static const char *const n_flow[] = { "flow", NULL }, *const n_host[] = { "last_host", NULL },
		*const n_from[] = { "last_hook", NULL }, *const n_to[] = { "next_hook", NULL },
		*const n_seg[] = { "lost_in", NULL }, *const n_why[] = { "drop_reason", NULL };
	int c[6] = { inc_col(t, n_flow), inc_col(t, n_host), inc_col(t, n_from), inc_col(t, n_to),
		     inc_col(t, n_seg), inc_col(t, n_why) };
	size_t ng = 0;
	for (size_t r = 0; t && c[0] >= 0 && r < t->nrows; r++) {
		struct inc_lossgrp k = { .host = inc_str(t, r, c[1]), .from = inc_str(t, r, c[2]),
			.to = inc_str(t, r, c[3]), .seg = inc_str(t, r, c[4]), .reason = inc_str(t, r, c[5]) };
		inc_flow_service(k.svc, sizeof(k.svc), inc_str(t, r, c[0]), e);
		size_t i = 0;
		while (i < ng && (strcmp(gs[i].svc, k.svc) || strcmp(gs[i].host, k.host) ||
				  strcmp(gs[i].from, k.from) || strcmp(gs[i].to, k.to) ||
				  strcmp(gs[i].seg, k.seg) || strcmp(gs[i].reason, k.reason)))
			i++;
		if (i == ng && ng < INC_MAX_GROUPS)
			gs[ng++] = k;
		if (i < ng)
			inc_lossgrp_add(&gs[i], inc_str(t, r, c[0]));
	}
	return ng;
}

/* Packets sent towards svc according to the per-flow loss table. */
static double inc_sent_to(const struct np_table *loss, const char *svc)
{
	static const char *const n_flow[] = { "flow", NULL }, *const n_sent[] = { "sent", NULL };
	int cf = inc_col(loss, n_flow), cs = inc_col(loss, n_sent);
	double sent = 0;
	size_t sl = strlen(svc);
	for (size_t r = 0; loss && cf >= 0 && cs >= 0 && r < loss->nrows; r++) {
		const char *f = inc_str(loss, r, cf), *gt = strchr(f, '>');
		if (gt && !strncmp(gt + 1, svc, sl) && gt[1 + sl] == '\0' && isfinite(inc_num(loss, r, cs)))
			sent += inc_num(loss, r, cs);
	}
	return sent;
}

static void inc_loss_item(struct rpt_incident *inc, const struct inc_lossgrp *g, double span_s,
			  const struct np_table *loss)
{
	char where[200] = "", why[200] = "", share[96] = "";
	if (*g->from && *g->to)
		snprintf(where, sizeof(where), " between %s and %s%s%s%s", g->from, g->to,
			 *g->seg ? " (" : "", g->seg, *g->seg ? ")" : "");
	const char *w = inc_reason_words(g->reason);
	if (*g->reason)
		snprintf(why, sizeof(why), "; kernel drop reason %s%s%s", g->reason, w ? ": " : "", w ? w : "");
	double sent = inc_sent_to(loss, g->svc);
	if (sent > 0)
		snprintf(share, sizeof(share), "; %.2f %% of the %.0f packets sent to it [loss]",
			 100.0 * (double)g->packets / sent, sent);
	struct rpt_inc_item *it = rpt_inc_add(inc, RPT_INC_LOSS,
		(double)g->packets * INC_RTO_MIN_NS / span_s, "lost_packets",
		"%zu packets to %s (%zu connection%s) lost on %s%s%s%s", g->packets, g->svc, g->conns,
		g->conns == 1 ? "" : "s", *g->host ? g->host : "an unknown host", where, why, share);
	if (!it)
		return;
	snprintf(it->subject, sizeof(it->subject), "%s", g->svc);
	snprintf(it->host, sizeof(it->host), "%s", g->host);
	it->count = (double)g->packets;
}

/* Without per-packet locations: the per-flow loss table's total. */
static void inc_loss_flows(struct rpt_incident *inc, const struct np_table *loss, double span_s)
{
	static const char *const n_lost[] = { "lost", NULL };
	int cl = inc_col(loss, n_lost);
	double total = 0, worst = 0;
	size_t wr = 0;
	for (size_t r = 0; loss && cl >= 0 && r < loss->nrows; r++) {
		double v = inc_num(loss, r, cl);
		if (!(v > 0))
			continue;
		total += v;
		if (v > worst) {
			worst = v;
			wr = r;
		}
	}
	if (total <= 0)
		return;
	static const char *const n_why[] = { "reason", "drop_reason", "worst_hook", NULL };
	const char *why = inc_str(loss, wr, inc_col(loss, n_why));
	char *key = np_table_row_key(loss, wr);
	struct rpt_inc_item *it = rpt_inc_add(inc, RPT_INC_LOSS, total * INC_RTO_MIN_NS / span_s, "loss",
		"%.0f packets lost; most (%.0f) in %s%s%s", total, worst, key ? key : "?",
		*why ? ", reason " : "", why);
	if (it) {
		snprintf(it->subject, sizeof(it->subject), "%s", key ? key : "");
		it->count = total;
	}
	free(key);
}

void inc_loss(struct rpt_incident *inc, const struct np_analysis *a, const struct inc_eps *e)
{
	struct inc_lossgrp gs[INC_MAX_GROUPS];
	const struct np_table *lp = np_analysis_table(a, "lost_packets"), *loss = np_analysis_table(a, "loss");
	size_t ng = inc_loss_group(lp, e, gs);
	double span = inc_span_s(a);
	for (size_t i = 0; i < ng; i++)
		inc_loss_item(inc, &gs[i], span, loss);
	if (ng == 0)
		inc_loss_flows(inc, loss, span);
}

double inc_lost_total(const struct rpt_incident *inc)
{
	double n = 0;
	for (size_t i = 0; i < inc->n; i++)
		if (inc->items[i].kind == RPT_INC_LOSS)
			n += inc->items[i].count;
	return n;
}

static int inc_cmp_abs_off(const void *x, const void *y, void *ctx)
{
	const double *off = ctx;
	double a = fabs(off[*(const size_t *)x]), b = fabs(off[*(const size_t *)y]);
	return (a < b) - (a > b);
}

void inc_clock(struct rpt_incident *inc, const struct np_table *clk)
{
	static const char *const n_host[] = { "host", NULL }, *const n_q[] = { "quality", NULL },
		*const n_off[] = { "offset", "offset_ns", NULL },
		*const n_err[] = { "offset_err", "offset_err_ns", "err_bound", NULL },
		*const n_ref[] = { "ref", NULL };
	int ch = inc_col(clk, n_host), cq = inc_col(clk, n_q), co = inc_col(clk, n_off),
	    ce = inc_col(clk, n_err), cr = inc_col(clk, n_ref);
	if (!clk || ch < 0 || co < 0 || clk->nrows == 0)
		return;
	size_t *idx = malloc(clk->nrows * sizeof(size_t)), n = 0;
	double *off = malloc(clk->nrows * sizeof(double));
	const char *ref = NULL;
	if (!idx || !off) {
		free(idx);
		free(off);
		return;
	}
	for (size_t r = 0; r < clk->nrows; r++) {
		off[r] = inc_num(clk, r, co);
		if (!strcmp(inc_str(clk, r, cq), "reference") || (cq < 0 && off[r] == 0))
			ref = inc_str(clk, r, ch);
		else
			idx[n++] = r;
	}
	if (!ref && cr >= 0)
		ref = inc_str(clk, 0, cr);
	qsort_r(idx, n, sizeof(size_t), inc_cmp_abs_off, off);
	char text[600];
	size_t o = (size_t)snprintf(text, sizeof(text), "clocks vs the reference %s:", ref ? ref : "host");
	bool bad = false;
	for (size_t i = 0; i < n && i < 4 && o < sizeof(text); i++) {
		const char *q = inc_str(clk, idx[i], cq);
		bool ok = cq < 0 || !strcmp(q, "accurate");
		bad |= !ok;
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s %s %+.3f µs (error bound ±%.2f µs%s%s)",
				      i ? ";" : "", inc_str(clk, idx[i], ch), off[idx[i]] / 1e3,
				      inc_num(clk, idx[i], ce) / 1e3, ok ? "" : ", ", ok ? "" : q);
	}
	if (n > 4 && o < sizeof(text))
		o += (size_t)snprintf(text + o, sizeof(text) - o, "; %zu more hosts", n - 4);
	if (o < sizeof(text))
		snprintf(text + o, sizeof(text) - o, bad ? "; times of hosts not 'accurate' are not "
			 "trustworthy across hosts" : "; cross-host times are corrected by these offsets");
	struct rpt_inc_item *it = rpt_inc_add(inc, RPT_INC_CLOCK, -1, "clock", "%s", text);
	if (it && n) {
		snprintf(it->subject, sizeof(it->subject), "%s", ref ? ref : "");
		snprintf(it->host, sizeof(it->host), "%s", inc_str(clk, idx[0], ch));
		it->value_ns = off[idx[0]];
		it->bound_ns = inc_num(clk, idx[0], ce);
		it->count = (double)n;
	}
	free(idx);
	free(off);
}

/* Analyses without host meta: a "hosts" table with a lost-events column. */
static size_t inc_hosts_table(const struct np_table *t, char *lossy, size_t size, double *lost)
{
	static const char *const n_host[] = { "host", "name", NULL },
		*const n_lost[] = { "lost_events", "lost", NULL };
	int ch = inc_col(t, n_host), cl = inc_col(t, n_lost);
	size_t o = 0;
	for (size_t r = 0; t && cl >= 0 && r < t->nrows && o < size; r++) {
		double l = inc_num(t, r, cl);
		if (!(l > 0))
			continue;
		*lost += l;
		o += (size_t)snprintf(lossy + o, size - o, "%s%s %.0f", o ? ", " : "", inc_str(t, r, ch), l);
	}
	return t ? t->nrows : 0;
}

void inc_recorder(struct rpt_incident *inc, const struct np_analysis *a)
{
	const msgpack_object *hosts = inc_meta_get(&a->meta, "hosts"), *warn = inc_meta_get(&a->meta, "warnings");
	size_t nh = hosts && hosts->type == MSGPACK_OBJECT_ARRAY ? hosts->via.array.size : 0;
	size_t nw = warn && warn->type == MSGPACK_OBJECT_ARRAY ? warn->via.array.size : 0;
	char text[1100], lossy[300] = "";
	size_t lo = 0;
	double lost = 0;
	for (size_t i = 0; i < nh; i++) {
		const msgpack_object *h = &hosts->via.array.ptr[i], *name = inc_meta_get(h, "name");
		double l = inc_meta_num(h, "lost_events");
		if (!(l > 0) || !name || name->type != MSGPACK_OBJECT_STR || lo >= sizeof(lossy))
			continue;
		lost += l;
		lo += (size_t)snprintf(lossy + lo, sizeof(lossy) - lo, "%s%.*s %.0f", lo ? ", " : "",
				       (int)name->via.str.size, name->via.str.ptr, l);
	}
	if (nh == 0)
		nh = inc_hosts_table(np_analysis_table(a, "hosts"), lossy, sizeof(lossy), &lost);
	const struct np_table *pt = np_analysis_table(a, "probes");
	char miss[400] = "";
	size_t nm = pt ? inc_probes_text(pt, nh > 1, miss, sizeof(miss)) : 0;
	if (nh == 0 && nw == 0 && nm == 0)
		return;
	int o = snprintf(text, sizeof(text), "%zu host%s recorded; %s%s%s%s%s", nh, nh == 1 ? "" : "s",
			 lost > 0 ? "events lost (ring buffer full, data has gaps): " : "no events lost",
			 lossy, nm ? "; missing probes (data they give is absent or from a fallback): " : "",
			 miss, nw ? "; " : "; no warnings");
	if (nw && o > 0 && (size_t)o < sizeof(text)) {
		const msgpack_object *w0 = &warn->via.array.ptr[0];
		int wl = w0->type == MSGPACK_OBJECT_STR ? (int)w0->via.str.size : 0;
		snprintf(text + o, sizeof(text) - (size_t)o, "%zu warning%s, first: %.*s%s", nw,
			 nw == 1 ? "" : "s", wl > 200 ? 200 : wl, wl ? w0->via.str.ptr : "",
			 wl > 200 ? "…" : "");
	}
	struct rpt_inc_item *it = rpt_inc_add(inc, RPT_INC_RECORDER, -2, nm ? "hosts, probes" : "hosts",
					      "%s", text);
	if (it)
		it->count = lost;
}
