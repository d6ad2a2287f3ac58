/* Host-stack bottlenecks (perfmon S6: X_i = D_i / D_RTT) and the service
 * graph (deep-mon S3.2.2: U_i, D_i, lambda_sat, critical path). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"

/* ---- bottlenecks ---- */

/* Components = path segments of the traced packets; deviations are the
 * window's mean minus the whole recording's mean. */
static void ana_bneck_emit(const struct ana_model *m, struct np_table *t, struct ana_out *o,
			   const char *src, int64_t wa, int64_t wb, const double *sum,
			   const uint64_t *cnt, const char *what, bool own)
{
	const struct ana_ivseg *v = &m->ivseg;
	if (!cnt[ANA_SEG_TOTAL])
		return;
	/* per-packet contributions (segment time summed over the window's
	 * packets / packets), so that the D_i add up to D_RTT (perfmon eq. 2) */
	double n = (double)cnt[ANA_SEG_TOTAL];
	double drtt = sum[ANA_SEG_TOTAL] / n - v->pmean[ANA_SEG_TOTAL];
	double di[ANA_NSEGS] = { 0 };
	for (int s = 0; s < ANA_SEG_TOTAL; s++)
		if (cnt[s])
			di[s] = sum[s] / n - v->pmean[s];
	if (drtt <= 0)
		return;                      /* not slower than usual on the path */
	int best = -1;
	for (int s = 0; s < ANA_SEG_TOTAL; s++)
		if (cnt[s] && (best < 0 || di[s] > di[best]))
			best = s;
	char wbuf[260];
	snprintf(wbuf, sizeof(wbuf), "%s%s", what, own ? "" : " (all packets in the window)");
	for (int s = 0; s < ANA_SEG_TOTAL; s++) {
		if (!cnt[s])
			continue;
		size_t r = np_table_row(t);
		np_table_set_str(t, r, ANA_BN_SOURCE, src);
		np_table_set_i64(t, r, ANA_BN_FROM, wa);
		np_table_set_i64(t, r, ANA_BN_TO, wb);
		np_table_set_str(t, r, ANA_BN_COMPONENT, ana_seg_name(s));
		np_table_set_f64(t, r, ANA_BN_D_I, di[s]);
		np_table_set_f64(t, r, ANA_BN_D_RTT, drtt);
		np_table_set_f64(t, r, ANA_BN_X_I, di[s] / drtt);
		np_table_set_u64(t, r, ANA_BN_BOTTLENECK, s == best);
		np_table_set_str(t, r, ANA_BN_WHAT, wbuf);
	}
	/* scored by the time it adds, X up to 1, at most half of where a
	 * flow's latency is spent over the whole run (ana_decomp.c): one
	 * window is a moment. X alone (unbounded: a redis window's 2.2 ms
	 * client read against a recording whose mean is iperf3 packets
	 * queued on a balancer read X = 5.14) outranked every drop and
	 * queue. */
	double ms = best >= 0 ? di[best] / 1e6 : 0;
	if (best >= 0 && di[best] / drtt > 0.3)
		ana_out_candidate(o, fmin(di[best] / drtt, 1.0) * ms / (ms + 5.0), 1, "bottlenecks", ana_seg_name(best), "x", di[best] / drtt,
				  "in the %s window at %.3f s the %s adds %.1f us (X = %.2f of the extra latency)",
				  src, (double)(wa - v->t0) / 1e9, ana_seg_phrase(best), di[best] / 1e3,
				  di[best] / drtt);
}

static void ana_bneck_interval(const struct ana_model *m, struct np_table *t, struct ana_out *o,
			       size_t i, const char *what)
{
	const struct ana_ivseg *v = &m->ivseg;
	int64_t a = v->t0 + (int64_t)i * v->len;
	ana_bneck_emit(m, t, o, "slow_interval", a, a + v->len - 1, v->sum + i * ANA_NSEGS,
		       v->cnt + i * ANA_NSEGS, what, true);
}

static int ana_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The slow RPCs: server transactions above the p99 of all server
 * transactions, the 20 slowest, with their connection's ports. */
void ana_bneck_windows(struct ana_model *m)
{
	size_t ns = 0;
	m->bwins.n = 0;
	uint64_t *durs = malloc((m->txevs.n + 1) * sizeof(uint64_t));
	for (size_t i = 0; durs && i < m->txevs.n; i++)
		if (m->txevs.v[i].server)
			durs[ns++] = m->txevs.v[i].dur;
	if (ns < 100) {
		free(durs);
		return;
	}
	qsort(durs, ns, sizeof(*durs), ana_u64_cmp);
	uint64_t p99 = durs[(size_t)(0.99 * (double)(ns - 1))];
	uint64_t floor_ = ns > 20 ? durs[ns - 20] : 0;     /* the 20 slowest */
	free(durs);
	for (size_t i = 0; i < m->txevs.n && m->bwins.n < 20; i++) {
		const struct ana_txev *x = &m->txevs.v[i];
		if (!x->server || x->dur <= p99 || x->dur < floor_)
			continue;
		struct ana_bwres *w = ANA_PUSH(m->bwins);
		if (!w)
			break;
		memset(w, 0, sizeof(*w));
		w->ev = i;
		w->a = ana_host_aligned(m, x->host) ? ana_to_ref(m, x->host, x->start) : (int64_t)x->start;
		w->b = w->a + (int64_t)x->dur;
		for (size_t k = 0; k < m->txns.n; k++) {
			const struct ana_txn *c = &m->txns.v[k];
			if (c->host == x->host && c->server && c->conn_id == x->conn) {
				w->lport = c->local_port;
				w->rport = c->peer_port;
				break;
			}
		}
		snprintf(w->what, sizeof(w->what), "transaction of %.2f ms on %s (p99 %.2f ms)",
			 (double)x->dur / 1e6, m->hosts.v[x->host].name, (double)p99 / 1e6);
	}
}

void ana_bneck_run(const struct ana_model *m, struct ana_out *o)
{
	/* columns: enum ana_bn_col (ana.h), also written by ana_calltree.c */
	struct np_table *t = np_table_new("bottlenecks", "Host-stack bottlenecks by relative importance X_i = D_i / D_RTT", 4);
	np_table_col_at(t, ANA_BN_SOURCE, "source", "str", "alerts, slow_rpc or slow_interval");
	np_table_col_at(t, ANA_BN_FROM, "from", "time_ns", "window start");
	np_table_col_at(t, ANA_BN_TO, "to", "time_ns", "window end");
	np_table_col_at(t, ANA_BN_COMPONENT, "component", "str", "segment or perfmon component (host:comp)");
	np_table_col_at(t, ANA_BN_D_I, "d_i", "ns", "deviation of the component");
	np_table_col_at(t, ANA_BN_D_RTT, "d_rtt", "ns", "deviation of the round trip / total");
	np_table_col_at(t, ANA_BN_X_I, "x_i", "ratio", "relative importance D_i / D_RTT");
	np_table_col_at(t, ANA_BN_BOTTLENECK, "bottleneck", "bool", "component with the largest X_i");
	np_table_col_at(t, ANA_BN_WHAT, "what", "str", "what made the window");
	/* perfmon alerts: windows of 1 s; D_i = value - threshold per host:comp */
	for (size_t i = 0; i < m->alerts.n; i++) {
		const struct ana_alert *a = &m->alerts.v[i];
		int64_t ta = ana_host_aligned(m, a->host) ? ana_to_ref(m, a->host, a->t) : (int64_t)a->t;
		int64_t w0 = ta - ta % 1000000000, w1 = w0 + 1000000000;
		bool done = false;
		for (size_t j = 0; j < i && !done; j++) {
			int64_t tb = ana_host_aligned(m, m->alerts.v[j].host) ? ana_to_ref(m, m->alerts.v[j].host, m->alerts.v[j].t) : (int64_t)m->alerts.v[j].t;
			done = tb >= w0 && tb < w1;
		}
		if (done)
			continue;
		struct { char comp[160]; double d; } c[32];
		int nc = 0;
		double drtt = 0, dsum = 0;
		for (size_t j = i; j < m->alerts.n; j++) {
			const struct ana_alert *b = &m->alerts.v[j];
			int64_t tb = ana_host_aligned(m, b->host) ? ana_to_ref(m, b->host, b->t) : (int64_t)b->t;
			if (tb < w0 || tb >= w1)
				continue;
			double d = (double)b->value_ns - (double)b->thresh_ns;
			if (!strcmp(b->comp, "rtt") || !strcmp(b->comp, "RTT")) {
				if (d > drtt) drtt = d;
				continue;
			}
			char name[160];
			snprintf(name, sizeof(name), "%s:%s", m->hosts.v[b->host].name, b->comp);
			int k;
			for (k = 0; k < nc && strcmp(c[k].comp, name); k++)
				;
			if (k == nc && nc < 32) {
				snprintf(c[nc].comp, sizeof(c[nc].comp), "%s", name);
				c[nc++].d = 0;
			}
			if (k < nc && d > c[k].d)
				c[k].d = d;
		}
		for (int k = 0; k < nc; k++)
			dsum += c[k].d > 0 ? c[k].d : 0;
		if (drtt <= 0)
			drtt = dsum;
		int best = -1;
		for (int k = 0; k < nc; k++)
			if (best < 0 || c[k].d > c[best].d)
				best = k;
		/* what no monitored component explains: the network, or the
		 * remote host when it runs no recorder */
		double rest = drtt - dsum;
		bool rest_best = rest > 0 && (best < 0 || rest > c[best].d);
		for (int k = 0; k < nc && drtt > 0; k++) {
			size_t r = np_table_row(t);
			np_table_set_str(t, r, ANA_BN_SOURCE, "alerts");
			np_table_set_i64(t, r, ANA_BN_FROM, w0);
			np_table_set_i64(t, r, ANA_BN_TO, w1);
			np_table_set_str(t, r, ANA_BN_COMPONENT, c[k].comp);
			np_table_set_f64(t, r, ANA_BN_D_I, c[k].d);
			np_table_set_f64(t, r, ANA_BN_D_RTT, drtt);
			np_table_set_f64(t, r, ANA_BN_X_I, c[k].d / drtt);
			np_table_set_u64(t, r, ANA_BN_BOTTLENECK, k == best && !rest_best);
			np_table_set_str(t, r, ANA_BN_WHAT, "perfmon alerts");
		}
		if (drtt > 0 && rest > 0.01 * drtt) {
			size_t r = np_table_row(t);
			np_table_set_str(t, r, ANA_BN_SOURCE, "alerts");
			np_table_set_i64(t, r, ANA_BN_FROM, w0);
			np_table_set_i64(t, r, ANA_BN_TO, w1);
			np_table_set_str(t, r, ANA_BN_COMPONENT, "unexplained");
			np_table_set_f64(t, r, ANA_BN_D_I, rest);
			np_table_set_f64(t, r, ANA_BN_D_RTT, drtt);
			np_table_set_f64(t, r, ANA_BN_X_I, rest / drtt);
			np_table_set_u64(t, r, ANA_BN_BOTTLENECK, rest_best);
			np_table_set_str(t, r, ANA_BN_WHAT, "RTT deviation no host component alert explains: "
					 "the network or an unrecorded host");
			if (rest_best)
				ana_out_candidate(o, 1.0 + rest / drtt, 2, "bottlenecks", "unexplained", "x",
						  rest / drtt, "perfmon RTT alerts (%.2f ms over the threshold) "
						  "that no host component explains: the network or an unrecorded host",
						  drtt / 1e6);
		}
		if (best >= 0 && drtt > 0 && !rest_best)
			ana_out_candidate(o, 1.0 + c[best].d / drtt, 2, "bottlenecks", c[best].comp, "x",
					  c[best].d / drtt, "perfmon alerts point at %s (X = %.2f)",
					  c[best].comp, c[best].d / drtt);
	}
	/* slow RPCs (windows picked by ana_bneck_windows, summed by the paths) */
	for (size_t i = 0; i < m->bwins.n; i++) {
		const struct ana_bwres *w = &m->bwins.v[i];
		bool own = w->cnt[ANA_SEG_TOTAL] > 0;
		ana_calltree_emit(m, t, o, w);
		ana_bneck_emit(m, t, o, "slow_rpc", w->a, w->b, own ? w->sum : w->asum,
			       own ? w->cnt : w->acnt, w->what, own);
	}
	/* slow intervals of the packet paths: total mean above twice the overall */
	const struct ana_ivseg *v = &m->ivseg;
	for (size_t i = 0; i < v->n; i++) {
		uint64_t c = v->cnt[i * ANA_NSEGS + ANA_SEG_TOTAL];
		if (!c || v->mean[ANA_SEG_TOTAL] <= 0)
			continue;
		double mean = v->sum[i * ANA_NSEGS + ANA_SEG_TOTAL] / (double)c;
		if (mean < 2 * v->mean[ANA_SEG_TOTAL])
			continue;
		char what[200];
		snprintf(what, sizeof(what), "interval mean %.1f us vs %.1f us overall",
			 mean / 1e3, v->mean[ANA_SEG_TOTAL] / 1e3);
		ana_bneck_interval(m, t, o, i, what);
	}
	ana_out_table(o, t);
}

/* ---- service graph ---- */

struct ana_tstart { uint16_t host; uint64_t conn, t, end; };

static int ana_tstart_cmp(const void *a, const void *b)
{
	const struct ana_tstart *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->conn != y->conn)
		return x->conn < y->conn ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int ana_cspan_cmp(const void *a, const void *b)
{
	const struct ana_cspan *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->conn < y->conn ? -1 : x->conn > y->conn;
}

/* What the connections' TXN_STATS rows say: a span for each connection
 * (one without events too), its starts from the rows in the window, and
 * whether some interval's events were sampled out. */
static void ana_conn_spans_stats(const struct ana_model *m, struct ana_cspans *s)
{
	size_t ne = s->n;
	for (size_t i = 0; i < m->txns.n; i++) {
		const struct ana_txn *x = &m->txns.v[i];
		struct ana_cspan key = { .host = (uint16_t)x->host, .conn = x->conn_id };
		if (!ne || !bsearch(&key, s->v, ne, sizeof(*s->v), ana_cspan_cmp))
			s->v[s->n++] = key;
	}
	qsort(s->v, s->n, sizeof(*s->v), ana_cspan_cmp);
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!k || ana_cspan_cmp(&s->v[k - 1], &s->v[i]))
			s->v[k++] = s->v[i];
	s->n = k;
	for (size_t i = 0; i < m->txns.n; i++) {
		const struct ana_txn *x = &m->txns.v[i];
		struct ana_cspan key = { .host = (uint16_t)x->host, .conn = x->conn_id };
		struct ana_cspan *c = s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), ana_cspan_cmp) : NULL;
		if (!c)
			continue;
		c->partial |= x->ev_skipped;
		if (!x->count || !ana_interval_in_window(m, x->host, x->t, m->hosts.v[x->host].interval_ns))
			continue;
		if (!x->start_hi) {
			c->nostarts = true;
			continue;
		}
		/* the rows of a connection chain (each one's start_lo is the
		 * previous one's start_hi): their gaps add up */
		if (!c->shi || x->start_lo < c->slo) c->slo = x->start_lo;
		if (x->start_hi > c->shi) {
			c->shi = x->start_hi;
			c->sp = x->start_prev;
		}
		if (x->start_second > c->s2) c->s2 = x->start_second;
		c->sfirst |= x->start_first_row;
		c->server |= x->server;
		c->sgaps += x->start_gaps;
	}
}

void ana_conn_spans(const struct ana_model *m, struct ana_cspans *s)
{
	memset(s, 0, sizeof(*s));
	struct ana_tstart *t = malloc((m->txevs.n + 1) * sizeof(*t));
	s->starts = malloc((m->txevs.n + 1) * sizeof(*s->starts));
	s->v = malloc((m->txevs.n + m->txns.n + 1) * sizeof(*s->v));
	size_t n = 0;
	for (size_t i = 0; t && s->starts && s->v && i < m->txevs.n; i++) {
		const struct ana_txev *e = &m->txevs.v[i];
		/* inside --from/--to, as the TXN_STATS rows counted */
		if (ana_host_aligned(m, e->host) && !ana_in_window(m, ana_to_ref(m, e->host, e->start)))
			continue;
		uint64_t end = e->end > e->start + e->dur ? e->end : e->start + e->dur;
		t[n++] = (struct ana_tstart){ .host = e->host, .conn = e->conn, .t = e->start, .end = end };
	}
	if (!t || !s->starts || !s->v) {
		free(t);
		ana_conn_spans_free(s);
		return;
	}
	qsort(t, n, sizeof(*t), ana_tstart_cmp);
	for (size_t i = 0; i < n; i++) {
		s->starts[i] = t[i].t;
		struct ana_cspan *c = s->n ? &s->v[s->n - 1] : NULL;
		if (!c || c->host != t[i].host || c->conn != t[i].conn) {
			c = &s->v[s->n++];
			*c = (struct ana_cspan){ .host = t[i].host, .conn = t[i].conn, .lo = t[i].t,
						 .starts = &s->starts[i] };
		}
		c->n++;
		if (t[i].end > c->hi)
			c->hi = t[i].end;
	}
	free(t);
	ana_conn_spans_stats(m, s);
}

void ana_conn_spans_free(struct ana_cspans *s)
{
	free(s->v);
	free(s->starts);
	memset(s, 0, sizeof(*s));
}

const struct ana_cspan *ana_conn_span(const struct ana_cspans *s, uint16_t host, uint64_t conn)
{
	struct ana_cspan key = { .host = host, .conn = conn };
	return s->v && s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), ana_cspan_cmp) : NULL;
}

void ana_reqrate_add(struct ana_reqrate *r, const struct ana_cspan *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < r->c.n; i++)
		if (r->c.v[i] == c)
			return;                 /* a connection has a TXN_STATS row per interval */
	const struct ana_cspan **slot = ANA_PUSH(r->c);
	if (slot)
		*slot = c;
}

/* A connection's first or last start is a straggler when the gap to its
 * neighbour is this many times the connection's mean gap. With one request
 * in flight per connection (wrk, redis-benchmark) a server that stalls
 * when the load stops reads that connection's last request late: mb_path,
 * nginx read one 207 ms after the connection's previous one (mean gap 2 ms),
 * and that one start made the server's rate 3.5 % lower than the client's. */
#define ANA_STRAGGLER_GAPS 10

/* The starts of connection c from *lo to *hi: its first and last left out
 * when they are stragglers (known: its second start, the one before its
 * last). Returns how many. */
static uint64_t ana_cspan_starts(const struct ana_cspan *c, uint64_t *lo, uint64_t *hi)
{
	uint64_t n = c->sgaps + 1;
	*lo = c->slo;
	*hi = c->shi;
	if (c->sgaps < 3 || !c->server)
		return n;
	double gap = (double)(c->shi - c->slo) / (double)c->sgaps;
	if (c->sfirst && c->s2 > c->slo && c->s2 < c->shi &&
	    (double)(c->s2 - c->slo) > ANA_STRAGGLER_GAPS * gap) {
		*lo = c->s2;
		n--;
	}
	if (c->sp > *lo && c->sp < c->shi && (double)(c->shi - c->sp) > ANA_STRAGGLER_GAPS * gap) {
		*hi = c->sp;
		n--;
	}
	return n;
}

/* From the starts TXN_STATS carries (recorders since 2026-11-26): every
 * connection's, whatever --txn-events kept, so the rate does not depend
 * on the sampling. The starts of all connections in [lo, hi] number the
 * sum of each one's gaps + 1 (less its stragglers). NAN when a connection
 * with requests lacks them (an older recorder). */
static double ana_reqrate_stats(const struct ana_reqrate *r)
{
	uint64_t lo = 0, hi = 0, starts = 0;
	for (size_t i = 0; i < r->c.n; i++) {
		const struct ana_cspan *c = r->c.v[i];
		uint64_t a, b;
		if (c->nostarts)
			return NAN;
		if (!c->shi)
			continue;               /* no request in the window */
		starts += ana_cspan_starts(c, &a, &b);
		if (!hi || a < lo) lo = a;
		if (b > hi) hi = b;
	}
	return starts >= 2 && hi > lo ? (double)(starts - 1) * 1e9 / (double)(hi - lo) : NAN;
}

/* Between request starts, not to the last response: a server that stalled
 * when wrk stopped answered 2 requests 110 ms late that wrk never read,
 * and its span ran 3.9 % longer than the client's. From the events, the
 * first and last 0.1 % of the starts are left out for the same reason
 * (stragglers). */
/* Without starts in TXN_STATS, a row with a connection whose events
 * --txn-events did not keep in some interval gets NAN (the caller falls
 * back to the intervals with requests): after the switch to 1 in 16
 * connections the starts of the others stop (mb_path, wrk 4 connections:
 * the events alone said 3 124/s against 3 533/s in the capture), and the
 * kept ones may cover another part of the run (redis-benchmark's SET and
 * GET phases: scaled, 37 218/s against 17 921/s). */
double ana_reqrate(const struct ana_reqrate *r, uint64_t count_all)
{
	double rate = ana_reqrate_stats(r);
	if (isfinite(rate))
		return rate;
	size_t n = 0;
	for (size_t i = 0; i < r->c.n; i++) {
		if (r->c.v[i]->partial && r->c.v[i]->n)
			return NAN;
		n += r->c.v[i]->n;
	}
	uint64_t *t = n >= 2 ? malloc(n * sizeof(*t)) : NULL;
	if (!t)
		return NAN;
	size_t k = 0;
	for (size_t i = 0; i < r->c.n; i++)
		for (size_t j = 0; j < r->c.v[i]->n; j++)
			t[k++] = r->c.v[i]->starts[j];
	qsort(t, n, sizeof(*t), ana_u64_cmp);
	size_t trim = n / 1000;
	uint64_t span = t[n - 1 - trim] - t[trim];
	free(t);
	/* Events lost on the way (a full ring): the starts give the span, the
	 * exact count of the row the number. */
	double inside = (double)(n - 1 - 2 * trim);
	if (count_all > n)
		inside *= (double)count_all / (double)n;
	return span ? inside * 1e9 / (double)span : NAN;
}

void ana_reqrate_free(struct ana_reqrate *r)
{
	free(r->c.v);
	memset(r, 0, sizeof(*r));
}

#define ANA_GV_MAX 256

struct ana_gv { uint16_t host; char name[160]; uint32_t pid; bool external;
		double cpu_ns; uint32_t ntid; double u, d; double in_rate; };
struct ana_ge {
	int from, to; uint64_t count; struct np_sketch lat; double rate; uint64_t p50, p90, p99;
	uint64_t t_lo, t_hi, iv;    /* first and last interval with requests, interval length */
	struct ana_reqrate rr;      /* its connections' request starts (TXN_EVENTS) */
};

static int ana_gv_get(struct ana_gv *v, int *n, uint16_t host, const char *name, uint32_t pid, bool ext)
{
	for (int i = 0; i < *n; i++)
		if (v[i].host == host && !strcmp(v[i].name, name))
			return i;
	if (*n >= ANA_GV_MAX)
		return -1;
	struct ana_gv *x = &v[(*n)++];
	memset(x, 0, sizeof(*x));
	x->host = host;
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->pid = pid;
	x->external = ext;
	return *n - 1;
}

static void ana_vertex_name(const struct ana_model *m, const struct ana_txn *x, char *buf, size_t n)
{
	const char *cg = x->container[0] ? x->container : NULL;
	for (size_t i = 0; !cg && i < m->threads.n; i++)
		if (m->threads.v[i].host == x->host && m->threads.v[i].pid == x->pid && m->threads.v[i].cgroup)
			for (size_t j = 0; j < m->cgroups.n && !cg; j++)
				if (m->cgroups.v[j].host == x->host && m->cgroups.v[j].id == m->threads.v[i].cgroup &&
				    m->cgroups.v[j].path[0] && strcmp(m->cgroups.v[j].path, "/"))
					cg = m->cgroups.v[j].path;
	const char *comm = x->comm;
	for (size_t i = 0; !comm[0] && i < m->threads.n; i++)
		if (m->threads.v[i].host == x->host && m->threads.v[i].pid == x->pid)
			comm = m->threads.v[i].comm;
	if (cg)
		snprintf(buf, n, "%.40s:%.110s", m->hosts.v[x->host].name, cg);
	else
		snprintf(buf, n, "%.40s:%.20s[%u]", m->hosts.v[x->host].name, comm[0] ? comm : "pid", x->pid);
}

/* Widest path (max over paths of the min edge weight) from src by DFS; the
 * graphs are small. Returns the width and fills path/len. */
static void ana_widest(const struct ana_ge *e, int ne, int at, uint64_t width, int *cur, int depth,
		       bool *onpath, int *best, int *bestlen, uint64_t *bestw)
{
	bool ext = false;
	for (int i = 0; i < ne; i++) {
		if (e[i].from != at || onpath[e[i].to] || depth >= 15)
			continue;
		ext = true;
		uint64_t w = e[i].p99 < width ? e[i].p99 : width;
		cur[depth] = i;
		onpath[e[i].to] = true;
		ana_widest(e, ne, e[i].to, w, cur, depth + 1, onpath, best, bestlen, bestw);
		onpath[e[i].to] = false;
	}
	if (!ext && depth > 0 && (width > *bestw || (width == *bestw && depth > *bestlen))) {
		*bestw = width;
		*bestlen = depth;
		memcpy(best, cur, (size_t)depth * sizeof(int));
	}
}

/* The peer row of x through a destination NAT (a balancer's DNAT rewrites
 * the server's address and port, not the client's): the other role's row
 * whose client side is the same address and port, when exactly one is;
 * -1 otherwise (ambiguous: the same client port towards two services). */
static ssize_t ana_nat_peer(const struct ana_model *m, const struct ana_txn *x)
{
	const char *caddr = x->server ? x->peer_host_addr : x->local_addr;
	uint16_t cport = x->server ? x->peer_port : x->local_port;
	ssize_t found = -1;
	for (size_t j = 0; j < m->txns.n; j++) {
		const struct ana_txn *y = &m->txns.v[j];
		if (y->server == x->server || y->host == x->host)
			continue;
		const char *ya = y->server ? y->peer_host_addr : y->local_addr;
		uint16_t yp = y->server ? y->peer_port : y->local_port;
		if (yp != cport || strcmp(ya, caddr))
			continue;
		if (found >= 0 && strcmp(m->txns.v[found].conn, y->conn))
			return -1;
		if (found < 0)
			found = (ssize_t)j;
	}
	return found;
}

void ana_graph_run(const struct ana_model *m, struct ana_out *o)
{
	if (!m->txns.n)
		return;
	struct ana_gv *v = calloc(ANA_GV_MAX, sizeof(*v));
	struct ana_ge *e = NULL;
	size_t ecap = 0;
	int nv = 0, ne = 0;
	if (!v)
		return;
	uint64_t span_lo = UINT64_MAX, span_hi = 0;
	for (size_t i = 0; i < m->txns.n; i++) {
		const struct ana_txn *x = &m->txns.v[i];
		if (x->t < span_lo) span_lo = x->t;
		if (x->t > span_hi) span_hi = x->t;
	}
	double span_s = (double)(span_hi - span_lo) / 1e9 + 1.0;
	struct ana_cspans spans;
	ana_conn_spans(m, &spans);
	/* an edge per (client vertex, server vertex); a server row whose
	 * client is not recorded gets an external client vertex */
	for (size_t i = 0; i < m->txns.n; i++) {
		const struct ana_txn *x = &m->txns.v[i];
		char me[160], other[160];
		if (!x->count)
			continue;               /* a connection without a request: no vertex */
		ana_vertex_name(m, x, me, sizeof(me));
		int vi = ana_gv_get(v, &nv, x->host, me, x->pid, false);
		int vo = -1;
		/* the peer's row: same 4-tuple reversed, other role */
		for (size_t j = 0; j < m->txns.n && vo < 0; j++) {
			const struct ana_txn *y = &m->txns.v[j];
			if (y->server != x->server && y->local_port == x->peer_port && y->peer_port == x->local_port &&
			    !strcmp(y->local_addr, x->peer_host_addr) && !strcmp(y->peer_host_addr, x->local_addr)) {
				char nm[160];
				ana_vertex_name(m, y, nm, sizeof(nm));
				vo = ana_gv_get(v, &nv, y->host, nm, y->pid, false);
			}
		}
		if (vo < 0) {
			ssize_t nj = ana_nat_peer(m, x);
			if (nj >= 0) {
				char nm[160];
				ana_vertex_name(m, &m->txns.v[nj], nm, sizeof(nm));
				vo = ana_gv_get(v, &nv, m->txns.v[nj].host, nm, m->txns.v[nj].pid, false);
			}
		}
		if (vo < 0) {
			if (x->server)
				snprintf(other, sizeof(other), "client %s", x->peer_host_addr);
			else
				snprintf(other, sizeof(other), "%s:%u", x->peer_host_addr, x->peer_port);
			vo = ana_gv_get(v, &nv, ANA_HOST_NONE, other, 0, true);
		} else if (!x->server)
			continue;               /* matched pair: count it once, from the server row */
		if (vi < 0 || vo < 0)
			continue;
		int from = x->server ? vo : vi, to = x->server ? vi : vo;
		int k;
		for (k = 0; k < ne && !(e[k].from == from && e[k].to == to); k++)
			;
		if (k == ne) {
			if (ana_vec_grow((void **)&e, &ecap, (size_t)ne + 1, sizeof(*e)))
				continue;
			memset(&e[ne], 0, sizeof(e[ne]));
			e[ne].from = from; e[ne].to = to;
			np_sketch_init(&e[ne].lat);
			ne++;
		}
		e[k].count += x->count;
		np_sketch_merge(&e[k].lat, &x->lat);
		if (!e[k].t_hi || x->t < e[k].t_lo)
			e[k].t_lo = x->t;
		if (x->t > e[k].t_hi)
			e[k].t_hi = x->t;
		if (!e[k].iv)
			e[k].iv = m->hosts.v[x->host].interval_ns ? m->hosts.v[x->host].interval_ns
								  : 1000000000ull;
		/* an edge's rows are all on one host (its server's, or its
		 * client's when the server is not recorded): one clock */
		ana_reqrate_add(&e[k].rr, ana_conn_span(&spans, x->host, x->conn_id));
	}
	/* CPU of each vertex from THREADS (by pid), utilisation eq. 3 */
	for (int i = 0; i < nv; i++) {
		if (v[i].external)
			continue;
		uint32_t tids[64];
		uint32_t nt = 0;
		for (size_t j = 0; j < m->threads.n; j++) {
			const struct ana_thread *th = &m->threads.v[j];
			if (th->host != v[i].host || th->pid != v[i].pid)
				continue;
			v[i].cpu_ns += (double)th->cpu_ns;
			bool seen = false;
			for (uint32_t q = 0; q < nt && !seen; q++)
				seen = tids[q] == th->tid;
			if (!seen && nt < 64)
				tids[nt++] = th->tid;
		}
		v[i].ntid = nt ? nt : 1;
		unsigned cores = m->hosts.v[v[i].host].ncpus ? m->hosts.v[v[i].host].ncpus : 1;
		double cpu = v[i].cpu_ns / (span_s * 1e9);
		v[i].u = cpu / (double)(cores < v[i].ntid ? cores : v[i].ntid);
	}
	/* entry points: unrecorded clients and recorded pure clients (load
	 * generators: no incoming edge); their requests are the arrivals */
	bool *entry = calloc((size_t)nv + 1, sizeof(bool));
	for (int i = 0; entry && i < nv; i++) {
		bool in = false;
		for (int k = 0; k < ne && !in; k++)
			in = e[k].to == i;
		entry[i] = v[i].external || !in;
	}
	double lambda = 0;                  /* arrivals from outside the application */
	for (int k = 0; k < ne; k++) {
		e[k].rate = (double)e[k].count / span_s;
		e[k].p50 = np_sketch_quantile(&e[k].lat, 0.5);
		e[k].p90 = np_sketch_quantile(&e[k].lat, 0.9);
		e[k].p99 = np_sketch_quantile(&e[k].lat, 0.99);
		if (entry && entry[e[k].from])
			lambda += e[k].rate;
		v[e[k].to].in_rate += e[k].rate;
	}
	int bott = -1;
	for (int i = 0; i < nv; i++) {
		v[i].d = lambda > 0 ? v[i].u / lambda : 0;
		if (!v[i].external && !(entry && entry[i]) && v[i].d > 0 && (bott < 0 || v[i].d > v[bott].d))
			bott = i;
	}
	/* columns of "service_graph", in the order of the np_table_col_at calls below */
	enum { SG_KIND, SG_FROM, SG_TO, SG_RATE, SG_P50, SG_P90, SG_P99, SG_UTILIZATION,
	       SG_SERVICE_DEMAND, SG_LAMBDA_SAT, SG_BOTTLENECK, SG_ENTRY, SG_REQUESTS,
	       SG_ACTIVE_RATE, SG_NCOLS };
	struct np_table *t = np_table_new("service_graph", "Service graph (vertices and edges)", 3);
	np_table_col_at(t, SG_KIND, "kind", "str", "vertex or edge");
	np_table_col_at(t, SG_FROM, "from", "str", "vertex (host:container or host:comm[pid]); edge client");
	np_table_col_at(t, SG_TO, "to", "str", "edge server");
	np_table_col_at(t, SG_RATE, "rate", "rate", "requests/s (edge), arrivals/s (vertex)");
	np_table_col_at(t, SG_P50, "p50", "ns", NULL);
	np_table_col_at(t, SG_P90, "p90", "ns", NULL);
	np_table_col_at(t, SG_P99, "p99", "ns", NULL);
	np_table_col_at(t, SG_UTILIZATION, "utilization", "ratio", "U_i = CPU / min(cores, threads) (deep-mon eq. 3)");
	np_table_col_at(t, SG_SERVICE_DEMAND, "service_demand", "ns", "D_i = U_i / lambda (eq. 4), seconds as ns");
	np_table_col_at(t, SG_LAMBDA_SAT, "lambda_sat", "rate", "1 / D_max (eq. 5), on the bottleneck vertex");
	np_table_col_at(t, SG_BOTTLENECK, "bottleneck", "bool", NULL);
	np_table_col_at(t, SG_ENTRY, "entry", "bool", "entry point: unrecorded or pure client (its requests are the arrivals)");
	np_table_col_at(t, SG_REQUESTS, "requests", "count", "edge: requests over the run");
	np_table_col_at(t, SG_ACTIVE_RATE, "active_rate", "rate",
			"edge: requests/s between its request starts (TXN_STATS starts; from older recorders "
			"TXN_EVENTS, first and last 0.1 % left out; without either over the intervals it had "
			"requests in); rate divides by the whole run");
	for (int i = 0; i < nv; i++) {
		size_t r = np_table_row(t);
		np_table_set_str(t, r, SG_KIND, "vertex");
		np_table_set_str(t, r, SG_FROM, v[i].name);
		np_table_set_f64(t, r, SG_RATE, v[i].in_rate);
		if (!v[i].external) {
			np_table_set_f64(t, r, SG_UTILIZATION, v[i].u);
			if (lambda > 0)
				np_table_set_f64(t, r, SG_SERVICE_DEMAND, v[i].d * 1e9);
		}
		if (i == bott && v[i].d > 0)
			np_table_set_f64(t, r, SG_LAMBDA_SAT, 1.0 / v[i].d);
		np_table_set_u64(t, r, SG_BOTTLENECK, i == bott);
		np_table_set_u64(t, r, SG_ENTRY, entry && entry[i]);
	}
	for (int k = 0; k < ne; k++) {
		size_t r = np_table_row(t);
		np_table_set_str(t, r, SG_KIND, "edge");
		np_table_set_str(t, r, SG_FROM, v[e[k].from].name);
		np_table_set_str(t, r, SG_TO, v[e[k].to].name);
		np_table_set_f64(t, r, SG_RATE, e[k].rate);
		np_table_set_u64(t, r, SG_P50, e[k].p50);
		np_table_set_u64(t, r, SG_P90, e[k].p90);
		np_table_set_u64(t, r, SG_P99, e[k].p99);
		np_table_set_u64(t, r, SG_REQUESTS, e[k].count);
		/* over the time requests were made (wrk's 3 s read 2 982/s over
		 * the 4 one-second intervals it touched, 3 976/s by wrk) */
		double ar = ana_reqrate(&e[k].rr, e[k].count);
		if (isfinite(ar))
			np_table_set_f64(t, r, SG_ACTIVE_RATE, ar);
		else if (e[k].iv)
			np_table_set_f64(t, r, SG_ACTIVE_RATE, (double)e[k].count * 1e9 /
						   (double)(e[k].t_hi - e[k].t_lo + e[k].iv));
	}
	ana_out_table(o, t);
	if (bott >= 0 && v[bott].d > 0 && lambda > 0 && lambda > 0.8 / v[bott].d)
		ana_out_candidate(o, 1.5, 2, "service_graph", v[bott].name, "lambda_sat", 1.0 / v[bott].d,
				  "%s is near saturation: %.0f req/s arrive, it saturates at %.0f req/s (U = %.0f %%)",
				  v[bott].name, lambda, 1.0 / v[bott].d, v[bott].u * 100);

	/* critical path: widest path (p99) from the entry points */
	/* columns of "critical_path", in the order of the np_table_col_at calls below */
	enum { CRP_STEP, CRP_FROM, CRP_TO, CRP_P99, CRP_WIDTH, CRP_NCOLS };
	struct np_table *cp = np_table_new("critical_path", "Critical path by widest path over edge p99", 1);
	np_table_col_at(cp, CRP_STEP, "step", "count", NULL);
	np_table_col_at(cp, CRP_FROM, "from", "str", NULL);
	np_table_col_at(cp, CRP_TO, "to", "str", NULL);
	np_table_col_at(cp, CRP_P99, "p99", "ns", "edge p99 latency");
	np_table_col_at(cp, CRP_WIDTH, "width", "ns", "min p99 along the path (the path's score)");
	int cur[16], best[16], bestlen = 0;
	uint64_t bestw = 0;
	bool onpath[ANA_GV_MAX] = { false };
	for (int i = 0; i < nv; i++)
		if (entry && entry[i]) {
			onpath[i] = true;
			ana_widest(e, ne, i, UINT64_MAX, cur, 0, onpath, best, &bestlen, &bestw);
			onpath[i] = false;
		}
	for (int s = 0; s < bestlen; s++) {
		const struct ana_ge *g = &e[best[s]];
		size_t r = np_table_row(cp);
		np_table_set_u64(cp, r, CRP_STEP, (uint64_t)s + 1);
		np_table_set_str(cp, r, CRP_FROM, v[g->from].name);
		np_table_set_str(cp, r, CRP_TO, v[g->to].name);
		np_table_set_u64(cp, r, CRP_P99, g->p99);
		np_table_set_u64(cp, r, CRP_WIDTH, bestw);
	}
	ana_out_table(o, cp);
	for (int k = 0; k < ne; k++) {
		np_sketch_free(&e[k].lat);
		ana_reqrate_free(&e[k].rr);
	}
	ana_conn_spans_free(&spans);
	free(entry);
	free(e);
	free(v);
}
