/* Aggregates of the recorder-core families: flows and throughput, drops,
 * transactions (per connection / endpoint / container, sketches merged
 * across intervals, deep-mon S4.2.3) and network CPU cost (netto). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "sampleci.h"

#define ANA_SERIES_MAX 600

static int64_t ana_ref_or_local(const struct ana_model *m, int host, uint64_t t)
{
	return ana_host_aligned(m, host) ? ana_to_ref(m, host, t) : (int64_t)t;
}

/* --flow FILTER: substring of the flow key (or of a connection/endpoint). */
static bool ana_key_match(const struct ana_model *m, const char *key)
{
	const char *flt = m->opt ? m->opt->flow_filter : NULL;
	return !flt || !*flt || strstr(key, flt) != NULL;
}

/* ---- flows ---- */

struct ana_fkey { uint16_t host; const char *key; size_t first; };

static int ana_fstat_cmp(const void *a, const void *b)
{
	const struct ana_flowstat *x = a, *y = b;
	if (x->host != y->host) return x->host < y->host ? -1 : 1;
	int c = strcmp(x->key, y->key);
	if (c) return c;
	return x->t < y->t ? -1 : x->t > y->t;
}

void ana_flows_run(const struct ana_model *m, struct ana_out *o)
{
	if (!m->fstats.n && !m->drops.n)
		return;
	struct ana_flowstat *v = m->fstats.v;
	size_t n = m->fstats.n;
	if (n)   /* drops without flow stats: v is NULL */
		qsort(v, n, sizeof(*v), ana_fstat_cmp);
	/* columns of "flows", in the order of the np_table_col_at calls below */
	enum { FL_HOST, FL_FLOW, FL_COMM, FL_PID, FL_TX_BYTES, FL_RX_BYTES, FL_TX_PKTS,
	       FL_RX_PKTS, FL_RETRANS, FL_THROUGHPUT, FL_THROUGHPUT_MAX, FL_SRTT_MEAN,
	       FL_NCOLS };
	struct np_table *t = np_table_new("flows", "Flows (recorder flow table)", 2);
	np_table_col_at(t, FL_HOST, "host", "str", NULL);
	np_table_col_at(t, FL_FLOW, "flow", "str", "proto local:port>remote:port");
	np_table_col_at(t, FL_COMM, "comm", "str", "owning process");
	np_table_col_at(t, FL_PID, "pid", "id", NULL);
	np_table_col_at(t, FL_TX_BYTES, "tx_bytes", "bytes", NULL);
	np_table_col_at(t, FL_RX_BYTES, "rx_bytes", "bytes", NULL);
	np_table_col_at(t, FL_TX_PKTS, "tx_pkts", "count", NULL);
	np_table_col_at(t, FL_RX_PKTS, "rx_pkts", "count", NULL);
	np_table_col_at(t, FL_RETRANS, "retrans", "count", "retransmissions");
	np_table_col_at(t, FL_THROUGHPUT, "throughput", "bps", "(tx+rx) bits over the intervals the flow was active");
	np_table_col_at(t, FL_THROUGHPUT_MAX, "throughput_max", "bps", "busiest interval");
	np_table_col_at(t, FL_SRTT_MEAN, "srtt_mean", "ns", "mean smoothed RTT over intervals");
	uint64_t *ts = malloc(ANA_SERIES_MAX * sizeof(*ts));
	double *val = malloc(ANA_SERIES_MAX * sizeof(*val));
	for (size_t a = 0; a < n;) {
		size_t b = a;
		uint64_t tx = 0, rx = 0, tp = 0, rp = 0, re = 0, dur = 0, srs = 0, srn = 0;
		double bmax = 0;
		size_t k = 0;
		bool keep = ana_key_match(m, v[a].key);
		while (b < n && v[b].host == v[a].host && !strcmp(v[b].key, v[a].key)) {
			if (!keep || !ana_interval_in_window(m, v[b].host, v[b].t, v[b].dur_ns)) {
				b++;
				continue;
			}
			tx += v[b].tx_bytes; rx += v[b].rx_bytes;
			tp += v[b].tx_pkts; rp += v[b].rx_pkts; re += v[b].retrans;
			dur += v[b].dur_ns;
			if (v[b].srtt_ns) { srs += v[b].srtt_ns; srn++; }
			double bps = v[b].dur_ns ? (double)(v[b].tx_bytes + v[b].rx_bytes) * 8e9 / (double)v[b].dur_ns : 0;
			if (bps > bmax) bmax = bps;
			if (ts && val && k < ANA_SERIES_MAX) {
				ts[k] = (uint64_t)ana_ref_or_local(m, v[b].host, v[b].t);
				val[k++] = bps;
			}
			b++;
		}
		if (!dur) {                     /* nothing inside --from/--to */
			a = b;
			continue;
		}
		size_t r = np_table_row(t);
		np_table_set_str(t, r, FL_HOST, m->hosts.v[v[a].host].name);
		np_table_set_str(t, r, FL_FLOW, v[a].key);
		if (v[a].comm[0]) np_table_set_str(t, r, FL_COMM, v[a].comm);
		if (v[a].pid) np_table_set_u64(t, r, FL_PID, v[a].pid);
		np_table_set_u64(t, r, FL_TX_BYTES, tx);
		np_table_set_u64(t, r, FL_RX_BYTES, rx);
		np_table_set_u64(t, r, FL_TX_PKTS, tp);
		np_table_set_u64(t, r, FL_RX_PKTS, rp);
		np_table_set_u64(t, r, FL_RETRANS, re);
		if (dur)
			np_table_set_f64(t, r, FL_THROUGHPUT, (double)(tx + rx) * 8e9 / (double)dur);
		np_table_set_f64(t, r, FL_THROUGHPUT_MAX, bmax);
		if (srn)
			np_table_set_f64(t, r, FL_SRTT_MEAN, (double)srs / (double)srn);
		if (k) {
			char key[400];
			snprintf(key, sizeof(key), "%s|%s", m->hosts.v[v[a].host].name, v[a].key);
			np_series_pack(&o->rb, "flows", key, "throughput", "bps", ts, val, k);
		}
		/* more than 1 % of at least 100 segments: 1 of an iperf3 control
		 * connection's 13 is no finding */
		if (tp >= 100 && re * 100 > tp)
			ana_out_candidate(o, (double)re / (double)tp * 20, 1, "flows", v[a].key, "retrans",
					  (double)re, "flow %s on %s retransmitted %llu of %llu segments (%.1f %%)",
					  v[a].key, m->hosts.v[v[a].host].name, (unsigned long long)re,
					  (unsigned long long)tp, 100.0 * (double)re / (double)tp);
		a = b;
	}
	free(ts); free(val);
	ana_out_table(o, t);

	/* drops by host, flow, kernel reason */
	/* columns of "drops", in the order of the np_table_col_at calls below */
	enum { DR_HOST, DR_FLOW, DR_REASON, DR_DROPS, DR_NCOLS };
	struct np_table *d = np_table_new("drops", "Kernel packet drops by reason", 3);
	np_table_col_at(d, DR_HOST, "host", "str", NULL);
	np_table_col_at(d, DR_FLOW, "flow", "str", NULL);
	np_table_col_at(d, DR_REASON, "reason", "str", "kernel drop reason (skb_drop_reason)");
	np_table_col_at(d, DR_DROPS, "drops", "count", NULL);
	for (size_t i = 0; i < m->drops.n; i++) {
		const struct ana_drop *x = &m->drops.v[i];
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = m->drops.v[j].host == x->host && !strcmp(m->drops.v[j].flowkey, x->flowkey) &&
			       !strcmp(m->drops.v[j].reason, x->reason);
		if (seen)
			continue;
		uint64_t cnt = 0;
		for (size_t j = i; j < m->drops.n; j++)
			if (m->drops.v[j].host == x->host && !strcmp(m->drops.v[j].flowkey, x->flowkey) &&
			    !strcmp(m->drops.v[j].reason, x->reason))
				cnt += m->drops.v[j].count;
		size_t r = np_table_row(d);
		np_table_set_str(d, r, DR_HOST, m->hosts.v[x->host].name);
		np_table_set_str(d, r, DR_FLOW, x->flowkey);
		np_table_set_str(d, r, DR_REASON, x->reason);
		np_table_set_u64(d, r, DR_DROPS, cnt);
	}
	ana_out_table(o, d);
}

/* ---- transactions ---- */

/* pid -> container path through THREADS (pid, cgroup) and CGROUPS. */
static const char *ana_container_of(const struct ana_model *m, uint16_t host, uint32_t pid,
				    uint64_t cgroup)
{
	for (size_t i = 0; !cgroup && i < m->threads.n; i++)
		if (m->threads.v[i].host == host && m->threads.v[i].pid == pid)
			cgroup = m->threads.v[i].cgroup;
	for (size_t i = 0; cgroup && i < m->cgroups.n; i++)
		if (m->cgroups.v[i].host == host && m->cgroups.v[i].id == cgroup && m->cgroups.v[i].path[0] &&
		    strcmp(m->cgroups.v[i].path, "/"))          /* the root cgroup is no container */
			return m->cgroups.v[i].path;
	return NULL;
}

struct ana_tgroup { char level[12]; char key[300]; uint16_t host; bool server;
		    uint64_t count, bytes; struct np_sketch lat; uint64_t t_lo, t_hi;
		    uint64_t r_lo, r_hi; /* built from TXN_EVENTS: first start, last end */
		    struct ana_reqrate rr; /* its connections' request starts (TXN_EVENTS) */ };

static struct ana_tgroup *ana_tgroup_get(struct ana_tgroup **g, size_t *n, size_t *cap,
					 const char *level, const char *key, uint16_t host, bool server)
{
	for (size_t i = 0; i < *n; i++)
		if ((*g)[i].host == host && (*g)[i].server == server && !strcmp((*g)[i].level, level) &&
		    !strcmp((*g)[i].key, key))
			return &(*g)[i];
	if (ana_vec_grow((void **)g, cap, *n + 1, sizeof(**g)))
		return NULL;
	struct ana_tgroup *x = &(*g)[(*n)++];
	memset(x, 0, sizeof(*x));
	snprintf(x->level, sizeof(x->level), "%s", level);
	snprintf(x->key, sizeof(x->key), "%s", key);
	x->host = host;
	x->server = server;
	x->t_lo = UINT64_MAX;
	np_sketch_init(&x->lat);
	return x;
}

static int ana_txn_idx_cmp(const void *a, const void *b, void *ctx)
{
	const struct ana_txn *const *v = ctx;
	const struct ana_txn *x = v[*(const size_t *)a], *y = v[*(const size_t *)b];
	int c = x->host != y->host ? (x->host < y->host ? -1 : 1) : 0;
	if (!c) c = x->server != y->server ? (x->server ? -1 : 1) : 0;
	if (!c) c = strcmp(x->endpoint, y->endpoint);
	if (!c) c = x->t < y->t ? -1 : x->t > y->t;
	return c;
}

static bool ana_txn_same_ep(const struct ana_txn *x, const struct ana_txn *y)
{
	return x->host == y->host && x->server == y->server && !strcmp(x->endpoint, y->endpoint);
}

/* Per-interval p50/p99/requests of every endpoint (for compare and plots):
 * the endpoint rows of one interval are merged into one sketch. */
static void ana_txn_series(struct ana_model *m, struct ana_out *o, const struct ana_txn *const *v, size_t n)
{
	size_t *ix = malloc((n ? n : 1) * sizeof(size_t));
	uint64_t *ts = malloc((n ? n : 1) * sizeof(uint64_t));
	double *p50 = malloc((n ? n : 1) * sizeof(double)), *p99 = malloc((n ? n : 1) * sizeof(double));
	double *cnt = malloc((n ? n : 1) * sizeof(double));
	struct np_sketch sk;
	np_sketch_init(&sk);
	if (!ix || !ts || !p50 || !p99 || !cnt)
		goto out;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), ana_txn_idx_cmp, (void *)v);
	for (size_t a = 0; a < n;) {
		const struct ana_txn *x = v[ix[a]];
		size_t b = a, k = 0;
		while (b < n && ana_txn_same_ep(v[ix[b]], x)) {
			uint64_t t = v[ix[b]]->t;
			np_sketch_reset(&sk);
			while (b < n && v[ix[b]]->t == t && ana_txn_same_ep(v[ix[b]], x)) {
				np_sketch_merge(&sk, &v[ix[b]]->lat);
				b++;
			}
			if (!sk.n || !ana_interval_in_window(m, x->host, t, m->hosts.v[x->host].interval_ns))
				continue;
			ts[k] = (uint64_t)ana_ref_or_local(m, x->host, t);
			p50[k] = (double)np_sketch_quantile(&sk, 0.5);
			p99[k] = (double)np_sketch_quantile(&sk, 0.99);
			cnt[k] = (double)sk.n;
			k++;
		}
		if (k) {
			char key[640];
			snprintf(key, sizeof(key), "endpoint|%s|%s|%s", x->endpoint, m->hosts.v[x->host].name,
				 x->server ? "server" : "client");
			np_series_pack(&o->rb, "transactions", key, "p50", "ns", ts, p50, k);
			np_series_pack(&o->rb, "transactions", key, "p99", "ns", ts, p99, k);
			np_series_pack(&o->rb, "transactions", key, "requests", "count", ts, cnt, k);
		}
		a = b;
	}
out:
	np_sketch_free(&sk);
	free(ix); free(ts); free(p50); free(p99); free(cnt);
}

/* ---- endpoint level from TXN_EVENTS ----
 * TXN_STATS keep one HTTP path per connection per interval (the last one),
 * so on a keep-alive connection serving several paths their latency lands
 * on one path. Every TXN_EVENTS row carries its own method, path and exact
 * duration: where a connection's events are complete (as many as its
 * TXN_STATS transactions), its endpoint figures come from them. */

struct ana_tconn {              /* one connection side: TXN_STATS rows with one conn id */
	uint16_t host;
	uint64_t conn;
	size_t row;                 /* one of its TXN_STATS rows (addresses, role) */
	uint64_t stats_n, ev_n;
	bool use_ev;
	bool skipped;               /* events sampled out by the recorder (TXN_STATS ev = 0) */
	uint64_t ev_sample;         /* the highest 1-in-N of its rows */
};

static int ana_tconn_cmp(const void *a, const void *b)
{
	const struct ana_tconn *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->conn < y->conn ? -1 : x->conn > y->conn;
}

static struct ana_tconn *ana_tconn_find(struct ana_tconn *v, size_t n, uint16_t host, uint64_t conn)
{
	struct ana_tconn key = { .host = host, .conn = conn };
	return n ? bsearch(&key, v, n, sizeof(*v), ana_tconn_cmp) : NULL;
}

/* The connections of the TXN_STATS rows, sorted, with their transaction
 * counts in both sources (whole recording, window ignored). */
static struct ana_tconn *ana_tconns(const struct ana_model *m, size_t *np)
{
	struct ana_tconn *v = malloc((m->txns.n + 1) * sizeof(*v));
	size_t k = 0;
	*np = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < m->txns.n; i++)
		v[i] = (struct ana_tconn){ .host = m->txns.v[i].host, .conn = m->txns.v[i].conn_id, .row = i,
					   .stats_n = m->txns.v[i].count, .skipped = m->txns.v[i].ev_skipped,
					   .ev_sample = m->txns.v[i].ev_sample };
	qsort(v, m->txns.n, sizeof(*v), ana_tconn_cmp);
	for (size_t i = 0; i < m->txns.n; i++) {
		if (k && !ana_tconn_cmp(&v[k - 1], &v[i])) {
			v[k - 1].stats_n += v[i].stats_n;
			v[k - 1].skipped |= v[i].skipped;
			if (v[i].ev_sample > v[k - 1].ev_sample)
				v[k - 1].ev_sample = v[i].ev_sample;
		} else {
			v[k++] = v[i];
		}
	}
	for (size_t i = 0; i < m->txevs.n; i++) {
		struct ana_tconn *c = ana_tconn_find(v, k, m->txevs.v[i].host, m->txevs.v[i].conn);
		if (c)
			c->ev_n++;
	}
	for (size_t i = 0; i < k; i++)
		v[i].use_ev = v[i].ev_n && v[i].ev_n == v[i].stats_n;
	*np = k;
	return v;
}

/* A host whose recorder sampled connections for events: say which share
 * was kept and where the others' endpoint figures come from. */
static void ana_tconn_note_sampled(struct ana_model *m, size_t h, uint64_t skipped, uint64_t all, uint64_t n)
{
	ana_note(m, "%s: transaction events sampled by connection: %llu of %llu connections without events "
		 "(up to 1 in %llu kept, by a hash of the connection that every host computes alike; "
		 "nprec --txn-events all keeps every one). Transaction counts, bytes and latency sketches "
		 "are exact for all; the endpoint figures of those connections come from TXN_STATS, call "
		 "trees only from the connections with events", m->hosts.v[h].name,
		 (unsigned long long)skipped, (unsigned long long)all, (unsigned long long)n);
}

/* Hosts with events but connections whose events are incomplete: say that
 * their endpoint figures come from TXN_STATS (sampled-out ones in a note). */
static void ana_tconn_warn(struct ana_model *m, const struct ana_tconn *v, size_t n)
{
	for (size_t h = 0; h < m->hosts.n; h++) {
		uint64_t bad = 0, all = 0, ev = 0, st = 0, skipped = 0, sample = 0;
		for (size_t i = 0; i < n; i++) {
			if (v[i].host != h)
				continue;
			all++;
			ev += v[i].ev_n;
			st += v[i].stats_n;
			if (v[i].ev_sample > sample)
				sample = v[i].ev_sample;
			if (v[i].skipped && !v[i].use_ev && v[i].stats_n) {
				skipped++;
				continue;
			}
			bad += !v[i].use_ev && v[i].stats_n;
		}
		if (skipped)
			ana_tconn_note_sampled(m, h, skipped, all, sample);
		const struct ana_host *hp = &m->hosts.v[h];
		uint64_t lost = 0;
		for (int k = 0; k < 8 && hp->lost_fam[k][0]; k++)
			if (!strcmp(hp->lost_fam[k], "txn"))
				lost += hp->lost_fam_n[k];
		if (bad && (ev || lost))
			ana_warn(m, "%s: transaction events missing for %llu of %llu connections (%llu events for "
				 "%llu transactions, %llu lost): their endpoint figures come from TXN_STATS, which "
				 "keep one HTTP path per connection and interval", hp->name, (unsigned long long)bad,
				 (unsigned long long)all, (unsigned long long)ev, (unsigned long long)st,
				 (unsigned long long)lost);
	}
}

struct ana_tevref { size_t ev; const struct ana_txn *row; uint64_t t; };

static int ana_tevref_cmp(const void *a, const void *b, void *ctx)
{
	const struct ana_tevref *x = a, *y = b;
	const struct ana_txev *ev = ctx, *ex = &ev[x->ev], *ey = &ev[y->ev];
	const struct ana_txn *rx = x->row, *ry = y->row;
	if (rx->host != ry->host)
		return rx->host < ry->host ? -1 : 1;
	if (rx->server != ry->server)
		return rx->server ? -1 : 1;
	int c = strcmp(rx->server ? rx->local_addr : rx->peer_host_addr,
		       ry->server ? ry->local_addr : ry->peer_host_addr);
	unsigned px = rx->server ? rx->local_port : rx->peer_port, py = ry->server ? ry->local_port : ry->peer_port;
	if (!c) c = px < py ? -1 : px > py;
	if (!c) c = strcmp(ex->method, ey->method);
	if (!c) c = strcmp(ex->path, ey->path);
	if (!c) c = x->t < y->t ? -1 : x->t > y->t;
	return c;
}

static int ana_u64pair_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The TXN_STATS interval (start) holding time t on host h: the last one
 * starting at or before t, else the first. iv = sorted (host, t) pairs. */
static uint64_t ana_tiv_of(const uint64_t *iv, size_t n, uint16_t h, uint64_t t)
{
	size_t lo = 0, hi = n;   /* first pair > (h, t) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (iv[2 * mid] < h || (iv[2 * mid] == h && iv[2 * mid + 1] <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && iv[2 * (lo - 1)] == h)
		return iv[2 * (lo - 1) + 1];
	return lo < n && iv[2 * lo] == h ? iv[2 * lo + 1] : t;
}

static void ana_tev_endpoint(const struct ana_txn *row, const struct ana_txev *e, char *buf, size_t size)
{
	snprintf(buf, size, "%s:%u%s%s%s%s", row->server ? row->local_addr : row->peer_host_addr,
		 row->server ? row->local_port : row->peer_port, e->method[0] || e->path[0] ? " " : "",
		 e->method, e->method[0] && e->path[0] ? " " : "", e->path);
}

/* --flow: the event's connection or its endpoint */
static bool ana_tev_match(const struct ana_model *m, const struct ana_txn *row, const struct ana_txev *e)
{
	if (ana_key_match(m, row->conn))
		return true;
	char ep[sizeof(row->endpoint)];
	ana_tev_endpoint(row, e, ep, sizeof(ep));
	return ana_key_match(m, ep);
}

/* Endpoint rows (one per host, role, endpoint and interval) built from the
 * events of the connections whose events are complete. */
static struct ana_txn *ana_txn_from_events(struct ana_model *m, struct ana_tconn *tc, size_t ntc, size_t *np,
					   const struct ana_cspans *sp, struct ana_reqrate **rrp)
{
	size_t n = m->txevs.n, ni = 0, nr = 0;
	struct ana_tevref *ref = malloc((n + 1) * sizeof(*ref));
	uint64_t *iv = malloc((m->txns.n + 1) * 2 * sizeof(uint64_t));
	struct ana_txn *out = NULL;
	*np = 0;
	if (!ref || !iv)
		goto done;
	for (size_t i = 0; i < m->txns.n; i++, ni++) {
		iv[2 * ni] = m->txns.v[i].host;
		iv[2 * ni + 1] = m->txns.v[i].t;
	}
	qsort(iv, ni, 2 * sizeof(uint64_t), ana_u64pair_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ana_txev *e = &m->txevs.v[i];
		const struct ana_tconn *c = ana_tconn_find(tc, ntc, e->host, e->conn);
		if (!c || !c->use_ev)
			continue;
		const struct ana_txn *row = &m->txns.v[c->row];
		uint64_t t = ana_tiv_of(iv, ni, e->host, e->end);
		if (!ana_interval_in_window(m, e->host, t, m->hosts.v[e->host].interval_ns) ||
		    !ana_tev_match(m, row, e))
			continue;
		ref[k++] = (struct ana_tevref){ .ev = i, .row = row, .t = t };
	}
	qsort_r(ref, k, sizeof(*ref), ana_tevref_cmp, m->txevs.v);
	out = calloc(k + 1, sizeof(*out));
	/* each row's connections, for its request rate */
	struct ana_reqrate *rr = *rrp = calloc(k + 1, sizeof(*rr));
	if (!out || !rr)
		goto done;
	for (size_t a = 0; a < k;) {
		size_t b = a;
		struct ana_txn *x = &out[nr++];
		const struct ana_txn *row = ref[a].row;
		const struct ana_txev *e = &m->txevs.v[ref[a].ev];
		np_sketch_init(&x->lat);
		x->host = row->host;
		x->server = row->server;
		x->t = ref[a].t;
		x->conn_id = row->conn_id;
		snprintf(x->conn, sizeof(x->conn), "%s", row->conn);
		ana_tev_endpoint(row, e, x->endpoint, sizeof(x->endpoint));
		for (; b < k && !ana_tevref_cmp(&ref[a], &ref[b], m->txevs.v); b++) {
			const struct ana_txev *eb = &m->txevs.v[ref[b].ev];
			np_sketch_add(&x->lat, eb->dur, 1);
			x->count++;
			x->bytes += eb->bytes;
			uint64_t end = eb->end > eb->start + eb->dur ? eb->end : eb->start + eb->dur;
			if (!x->ev_hi || eb->start < x->ev_lo) x->ev_lo = eb->start;
			if (end > x->ev_hi) x->ev_hi = end;
			ana_reqrate_add(&rr[nr - 1], ana_conn_span(sp, ref[b].row->host, ref[b].row->conn_id));
		}
		a = b;
	}
	*np = nr;
done:
	free(ref);
	free(iv);
	return out;
}

static void ana_txn_add(struct ana_tgroup **g, size_t *ng, size_t *cap, const char *level, const char *key,
			const struct ana_txn *x, const struct ana_cspan *cs)
{
	struct ana_tgroup *t = ana_tgroup_get(g, ng, cap, level, key, x->host, x->server);
	if (!t)
		return;
	/* an interval without transactions lists the connection and adds
	 * nothing: its span is the intervals with requests */
	if (!x->count)
		return;
	if (cs)
		ana_reqrate_add(&t->rr, cs);
	if (x->ev_hi) {                 /* a row built from the events of several connections */
		if (!t->r_hi || x->ev_lo < t->r_lo) t->r_lo = x->ev_lo;
		if (x->ev_hi > t->r_hi) t->r_hi = x->ev_hi;
	}
	t->count += x->count;
	t->bytes += x->bytes;
	np_sketch_merge(&t->lat, &x->lat);
	if (x->t < t->t_lo) t->t_lo = x->t;
	if (x->t > t->t_hi) t->t_hi = x->t;
}

static const char *ana_txn_container(const struct ana_model *m, const struct ana_txn *x, char *buf, size_t size)
{
	const char *cont = x->container[0] ? x->container : ana_container_of(m, x->host, x->pid, x->cgroup);
	if (cont)
		return cont;
	const char *comm = x->comm;
	for (size_t k = 0; !comm[0] && k < m->threads.n; k++)
		if (m->threads.v[k].host == x->host && m->threads.v[k].pid == x->pid)
			comm = m->threads.v[k].comm;
	snprintf(buf, size, "%s[%u]", comm[0] ? comm : "pid", x->pid);
	return buf;
}

static void ana_txn_table(struct ana_model *m, struct ana_out *o, struct ana_tgroup *g, size_t ng)
{
	/* columns of "transactions", in the order of the np_table_col_at calls below */
	enum { TX_LEVEL, TX_KEY, TX_HOST, TX_ROLE, TX_REQUESTS, TX_RATE, TX_BYTES, TX_SK,
	       TX_NCOLS = TX_SK + ANA_SK_NCOLS };
	struct np_table *t = np_table_new("transactions", "Transaction latency (merged across intervals)", 4);
	np_table_col_at(t, TX_LEVEL, "level", "str", "connection / endpoint / container");
	np_table_col_at(t, TX_KEY, "key", "str", "conn tuple, server ip:port + HTTP path, or cgroup");
	np_table_col_at(t, TX_HOST, "host", "str", NULL);
	np_table_col_at(t, TX_ROLE, "role", "str", "server or client side");
	np_table_col_at(t, TX_REQUESTS, "requests", "count", NULL);
	np_table_col_at(t, TX_RATE, "rate", "rate", "requests per second between request starts (as service_graph.active_rate)");
	np_table_col_at(t, TX_BYTES, "bytes", "bytes", "request + response bytes");
	ana_sketch_cols(t, TX_SK);
	for (size_t i = 0; i < ng; i++) {
		struct ana_tgroup *x = &g[i];
		size_t r = np_table_row(t);
		np_table_set_str(t, r, TX_LEVEL, x->level);
		np_table_set_str(t, r, TX_KEY, x->key);
		np_table_set_str(t, r, TX_HOST, m->hosts.v[x->host].name);
		np_table_set_str(t, r, TX_ROLE, x->server ? "server" : "client");
		np_table_set_u64(t, r, TX_REQUESTS, x->count);
		/* over the time requests were made, as the service graph's
		 * active_rate; rows built from events over their first start
		 * to last end; without TXN_EVENTS over the intervals with
		 * requests */
		uint64_t span = x->t_hi > x->t_lo ? x->t_hi - x->t_lo : 0;
		span += m->hosts.v[x->host].interval_ns ? m->hosts.v[x->host].interval_ns : 1000000000ull;
		if (x->r_hi > x->r_lo)
			span = x->r_hi - x->r_lo;
		double rate = ana_reqrate(&x->rr, x->count);
		np_table_set_f64(t, r, TX_RATE, isfinite(rate) ? rate : (double)x->count * 1e9 / (double)span);
		np_table_set_u64(t, r, TX_BYTES, x->bytes);
		/* the sketch carries the latency; count column is requests */
		ana_sketch_cells(t, r, TX_SK, &x->lat);
		np_table_set_u64(t, r, TX_SK, x->lat.n);
		char key[640];
		snprintf(key, sizeof(key), "%s|%s|%s|%s", x->level, x->key, m->hosts.v[x->host].name,
			 x->server ? "server" : "client");
		np_sketchrec_pack(&o->rb, "transactions", key, "latency", "ns", &x->lat);
		if (!strcmp(x->level, "endpoint") && x->server && x->lat.n >= 20) {
			double p50 = (double)np_sketch_quantile(&x->lat, 0.5);
			double p99 = (double)np_sketch_quantile(&x->lat, 0.99);
			/* ranked by the time the tail adds, as the decomposition's
			 * findings are (5 ms scoring 1), and never above a
			 * segment holding the same time in every packet: by the
			 * ratio alone a 0.03 ms p99 at 7x a 4 us median outranked
			 * 97 % of 6 ms in a balancer's queue; with the ratio
			 * weighing up to 3x, a quiet fresh-clone CI's 2.87 ms
			 * redis p99 on a stalled server (57x its median) did */
			double tms = (p99 - p50) / 1e6;
			if (p50 > 0 && p99 > 5 * p50)
				ana_out_candidate(o, fmin(p99 / p50 / 10.0, 1.0) * 2.0 * tms / (tms + 5.0), 1,
						  "transactions", key, "p99", p99,
						  "endpoint %s on %s has p99 %.2f ms, %.0fx its median",
						  x->key, m->hosts.v[x->host].name, p99 / 1e6, p99 / p50);
		}
	}
	ana_out_table(o, t);
}

void ana_txn_run(struct ana_model *m, struct ana_out *o)
{
	if (!m->txns.n)
		return;
	size_t ntc = 0, nev = 0, nep = 0;
	struct ana_tconn *tc = ana_tconns(m, &ntc);
	ana_tconn_warn(m, tc, ntc);
	struct ana_cspans sp;
	ana_conn_spans(m, &sp);
	struct ana_reqrate *evrr = NULL;
	struct ana_txn *evrows = ana_txn_from_events(m, tc, ntc, &nev, &sp, &evrr);
	const struct ana_txn **ep = malloc((m->txns.n + nev + 1) * sizeof(*ep));
	struct ana_tgroup *g = NULL;
	size_t ng = 0, cap = 0;
	for (size_t i = 0; i < m->txns.n; i++) {
		struct ana_txn *x = &m->txns.v[i];
		if (!ana_interval_in_window(m, x->host, x->t, m->hosts.v[x->host].interval_ns) ||
		    (!ana_key_match(m, x->conn) && !ana_key_match(m, x->endpoint)))
			continue;
		char cbuf[160];
		const struct ana_cspan *cs = ana_conn_span(&sp, x->host, x->conn_id);
		ana_txn_add(&g, &ng, &cap, "connection", x->conn, x, cs);
		/* a connection without requests (yet) has no endpoint (no
		 * method or path) and often no process (pid 0): it is not a
		 * "pid[0]" container or a pathless endpoint of 0 requests */
		if (!x->count)
			continue;
		const struct ana_tconn *c = ana_tconn_find(tc, ntc, x->host, x->conn_id);
		if (!c || !c->use_ev) {
			ana_txn_add(&g, &ng, &cap, "endpoint", x->endpoint, x, cs);
			if (ep)
				ep[nep++] = x;
		}
		ana_txn_add(&g, &ng, &cap, "container", ana_txn_container(m, x, cbuf, sizeof(cbuf)), x, cs);
	}
	for (size_t i = 0; i < nev; i++) {
		const struct ana_txn *x = &evrows[i];
		ana_txn_add(&g, &ng, &cap, "endpoint", x->endpoint, x, NULL);
		struct ana_tgroup *t = evrr ? ana_tgroup_get(&g, &ng, &cap, "endpoint", x->endpoint, x->host, x->server)
					    : NULL;
		for (size_t c = 0; t && c < evrr[i].c.n; c++)
			ana_reqrate_add(&t->rr, evrr[i].c.v[c]);
		if (ep)
			ep[nep++] = x;
	}
	ana_txn_table(m, o, g, ng);
	if (ep)
		ana_txn_series(m, o, ep, nep);
	for (size_t i = 0; i < ng; i++) {
		np_sketch_free(&g[i].lat);
		ana_reqrate_free(&g[i].rr);
	}
	for (size_t i = 0; i < nev; i++) {
		np_sketch_free(&evrows[i].lat);
		if (evrr)
			ana_reqrate_free(&evrr[i]);
	}
	free(evrr);
	free(g); free(ep); free(evrows); free(tc);
	ana_conn_spans_free(&sp);
}

/* ---- network CPU cost ---- */

/* A host's time of one class (socket op or NET_RX/NET_TX softirq) over
 * the window: the figure, how it was measured, and the sampler's counts
 * behind it. */
struct ana_sock_sum {
	uint64_t ns, smp, smp_ns;   /* figure; samples; samples x their periods */
	uint64_t period;            /* the last sampling period seen, 0 = no sampler */
	unsigned how_mask;          /* 1 << enum ana_sock_how of its intervals */
	/* exact mode: samples in tracers' programs while the exact clock ran,
	 * counted samples while it did not (docs/NETCPU.md "What the two
	 * figures hold") */
	uint64_t probe, out;
	bool no_probe;              /* an exact interval without those columns */
	unsigned split_mask;        /* socket classes: 1 << enum ana_sock_split of its intervals */
	/* exact socket classes: calls not clocked (in no ns); uc_seen: an exact
	 * interval counted, uc_unknown: one without the columns */
	uint64_t unclocked;
	bool uc_seen, uc_unknown;
};

/* Who split a socket call's samples from the softirqs under it: the CPU's
 * own timer, the other CPU's timer (the remote split, docs/NETCPU.md
 * "j32c", "j33a"), or a record that does not say (before j32c: own). */
enum ana_sock_split { ANA_SPLIT_UNNAMED = 0, ANA_SPLIT_OWN, ANA_SPLIT_REMOTE };

/* k: 0 send, 1 receive */
static unsigned ana_sock_split_of(const struct ana_netcpu *x, int k)
{
	switch (x->sock_sampler) {
	case ANA_SAMPLER_LOCAL: return ANA_SPLIT_OWN;
	case ANA_SAMPLER_REMOTE_RECV: return k ? ANA_SPLIT_REMOTE : ANA_SPLIT_OWN;
	case ANA_SAMPLER_REMOTE: return ANA_SPLIT_REMOTE;
	}
	return ANA_SPLIT_UNNAMED;
}

static const char *ana_sock_how_name(unsigned mask)
{
	switch (mask) {
	case 1u << ANA_SOCK_EXACT: return "exact";
	case 1u << ANA_SOCK_SAMPLED: return "sampled";
	case 1u << ANA_SOCK_NONE: return "none";
	}
	return "mixed";
}

/* netcpu_sock's how: a sampled socket row also names its sampler; plain
 * "sampled" when no record named it (recordings before j32c) */
static const char *ana_sock_row_how(const struct ana_sock_sum *s)
{
	if (s->how_mask != 1u << ANA_SOCK_SAMPLED || !s->split_mask || s->split_mask == 1u << ANA_SPLIT_UNNAMED)
		return ana_sock_how_name(s->how_mask);
	if (!(s->split_mask & (1u << ANA_SPLIT_REMOTE)))
		return "sampled (own timer)";
	if (s->split_mask == 1u << ANA_SPLIT_REMOTE)
		return "sampled (remote split)";
	return "sampled (own timer and remote split)";
}

/* smp_ns: the samples weighed by their own periods, 0 in recordings before
 * the dithered rate (then samples x the fixed period) */
static void ana_sock_add(struct ana_sock_sum *s, const struct ana_netcpu *x, uint64_t ns, uint64_t smp,
			 uint64_t smp_ns, unsigned how)
{
	s->ns += ns;
	s->smp += smp;
	s->smp_ns += smp_ns ? smp_ns : smp * x->smp_period_ns;
	s->how_mask |= 1u << how;
	if (x->smp_period_ns)
		s->period = x->smp_period_ns;
}

/* has: the interval's record carried the probe columns (since j24o; never
 * for NET_TX) */
static void ana_sock_add_probe(struct ana_sock_sum *s, unsigned how, uint64_t probe, uint64_t out, bool has)
{
	s->probe += probe;
	s->out += out;
	if (how == ANA_SOCK_EXACT && !has)
		s->no_probe = true;
}

static void ana_sock_add_unclocked(struct ana_sock_sum *s, unsigned how, uint64_t n, bool has)
{
	if (how != ANA_SOCK_EXACT)
		return;
	s->unclocked += n;
	s->uc_seen = true;
	s->uc_unknown |= !has;
}

/* columns of "netcpu_sock", in the order of the np_table_col_at calls below */
enum { NS_HOST, NS_CLASS, NS_HOW, NS_TIME, NS_LO, NS_HI, NS_ERR, NS_SAMPLES, NS_SAMPLED,
       NS_RATIO, NS_WIN, NS_WIN_LO, NS_WIN_HI, NS_PROBE, NS_OUTSIDE, NS_UNCLOCKED, NS_NCOLS };

static struct np_table *ana_sock_table(void)
{
	struct np_table *t = np_table_new("netcpu_sock", "Network CPU time per class: exact or sampled estimate", 2);
	np_table_col_at(t, NS_HOST, "host", "str", NULL);
	np_table_col_at(t, NS_CLASS, "class", "str", "net_rx, net_tx, sock_send or sock_recv (columns of netcpu)");
	np_table_col_at(t, NS_HOW, "how", "str",
			"exact: every socket call / softirq clocked (nprec --netcpu exact); sampled: samples x their timer periods; "
			"socket rows name who split the calls from their softirqs: (own timer) or (remote split), the other CPU's timer");
	np_table_col_at(t, NS_TIME, "time", "ns", "the figure in netcpu");
	np_table_col_at(t, NS_LO, "ci95_lo", "ns", "sampled: 95 % interval, low (Poisson score interval of the samples)");
	np_table_col_at(t, NS_HI, "ci95_hi", "ns", "sampled: 95 % interval, high");
	np_table_col_at(t, NS_ERR, "err95", "pct", "sampled: half-width of the interval, % of the figure");
	np_table_col_at(t, NS_SAMPLES, "samples", "count",
			"timer samples inside socket calls / the softirq (remote split: the count whose interval is the estimate's)");
	np_table_col_at(t, NS_SAMPLED, "sampled", "ns", "exact: the sampler's estimate over the same time");
	np_table_col_at(t, NS_RATIO, "sampled_vs_exact", "ratio",
			"exact: sampled / exact (bare: exact also holds tracers' programs, see window_vs_exact)");
	np_table_col_at(t, NS_WIN, "window_vs_exact", "ratio",
			"exact: (samples - outside + probe) x mean period / exact, both over one definition");
	np_table_col_at(t, NS_WIN_LO, "window_lo", "ratio", "exact: window_vs_exact's 95 % interval, low (its count)");
	np_table_col_at(t, NS_WIN_HI, "window_hi", "ratio", "exact: window_vs_exact's 95 % interval, high");
	np_table_col_at(t, NS_PROBE, "probe", "count",
			"exact: samples in tracers' programs while the exact clock ran (exact holds them, sampled not)");
	np_table_col_at(t, NS_OUTSIDE, "outside", "count",
			"exact: samples counted while the exact clock did not run (socket: the syscall's tail)");
	np_table_col_at(t, NS_UNCLOCKED, "unclocked", "count",
			"exact socket rows: calls that reached the socket layer without a syscall stamp (sendfile, "
			"splice, io_uring, a stamp the kernel did not deliver): their time is not in time");
	return t;
}

/* The like-for-like cross-check of an exact row: the samples inside the
 * exact window (counted less outside, plus the tracers' programs exact
 * cannot leave out) x their mean period over exact, with the 95 % score
 * interval of that count. None when a recording lacked the probe columns. */
static void ana_sock_window(struct np_table *t, size_t r, const struct ana_sock_sum *s)
{
	if (s->no_probe || !s->ns || !s->smp || s->out > s->smp)
		return;
	uint64_t n = s->smp - s->out + s->probe;
	double lo, hi, per = (double)s->smp_ns / (double)s->smp, x = (double)s->ns;
	np_poisson_ci(n, NP_CI_Z95, &lo, &hi);
	np_table_set_u64(t, r, NS_PROBE, s->probe);
	np_table_set_u64(t, r, NS_OUTSIDE, s->out);
	np_table_set_f64(t, r, NS_WIN, (double)n * per / x);
	np_table_set_f64(t, r, NS_WIN_LO, lo * per / x);
	np_table_set_f64(t, r, NS_WIN_HI, hi * per / x);
}

/* One row of netcpu_sock. The interval is scaled by the mean period of the
 * samples (one period per host unless the recordings differ). */
static void ana_sock_row(struct np_table *t, const char *host, const char *cls, const struct ana_sock_sum *s)
{
	size_t r = np_table_row(t);
	np_table_set_str(t, r, NS_HOST, host);
	np_table_set_str(t, r, NS_CLASS, cls);
	np_table_set_str(t, r, NS_HOW, ana_sock_row_how(s));
	np_table_set_u64(t, r, NS_TIME, s->ns);
	if (s->how_mask == 1u << ANA_SOCK_EXACT && s->uc_seen && !s->uc_unknown)
		np_table_set_u64(t, r, NS_UNCLOCKED, s->unclocked);
	/* sampled with no sample: the interval still bounds the time */
	if (s->how_mask & (1u << ANA_SOCK_NONE) || !s->period ||
	    (!s->smp_ns && s->how_mask == 1u << ANA_SOCK_EXACT))
		return;
	np_table_set_u64(t, r, NS_SAMPLES, s->smp);
	if (s->how_mask == 1u << ANA_SOCK_EXACT) {
		np_table_set_u64(t, r, NS_SAMPLED, s->smp_ns);
		if (s->ns)
			np_table_set_f64(t, r, NS_RATIO, (double)s->smp_ns / (double)s->ns);
		ana_sock_window(t, r, s);
		return;
	}
	double lo, hi, per = s->smp ? (double)s->smp_ns / (double)s->smp : (double)s->period;
	np_poisson_ci(s->smp, NP_CI_Z95, &lo, &hi);
	np_table_set_u64(t, r, NS_LO, (uint64_t)(lo * per));
	np_table_set_u64(t, r, NS_HI, (uint64_t)(hi * per));
	if (s->ns)
		np_table_set_f64(t, r, NS_ERR, 100.0 * (hi - lo) / 2.0 * per / (double)s->ns);
}

void ana_netcpu_run(const struct ana_model *m, struct ana_out *o)
{
	if (!m->netcpu.n)
		return;
	/* columns of "netcpu", in the order of the np_table_col_at calls below */
	enum { NC_HOST, NC_NET_RX, NC_NET_TX, NC_SOCK_SEND, NC_SOCK_RECV, NC_TOTAL,
	       NC_CPU_MEAN, NC_CPU_MAX, NC_CPU_SHARE, NC_SOCK_HOW, NC_SIRQ_HOW, NC_NCOLS };
	struct np_table *t = np_table_new("netcpu", "Network CPU cost per host", 1);
	np_table_col_at(t, NC_HOST, "host", "str", NULL);
	np_table_col_at(t, NC_NET_RX, "net_rx", "ns", "CPU time in NET_RX softirq (see sirq_how)");
	np_table_col_at(t, NC_NET_TX, "net_tx", "ns", "CPU time in NET_TX softirq (see sirq_how)");
	np_table_col_at(t, NC_SOCK_SEND, "sock_send", "ns", "CPU time in socket send (see sock_how)");
	np_table_col_at(t, NC_SOCK_RECV, "sock_recv", "ns", "CPU time in socket receive (see sock_how)");
	np_table_col_at(t, NC_TOTAL, "total", "ns", NULL);
	np_table_col_at(t, NC_CPU_MEAN, "cpu_mean", "pct", "mean network CPU, % of one core");
	np_table_col_at(t, NC_CPU_MAX, "cpu_max", "pct", "busiest interval, % of one core");
	np_table_col_at(t, NC_CPU_SHARE, "cpu_share", "pct", "% of all cores of the host");
	np_table_col_at(t, NC_SOCK_HOW, "sock_how", "str",
			"socket times exact or sampled (estimates: error in netcpu_sock)");
	np_table_col_at(t, NC_SIRQ_HOW, "sirq_how", "str",
			"net_rx / net_tx exact or sampled (estimates: error in netcpu_sock)");
	struct np_table *st = ana_sock_table();
	uint64_t *ts = malloc(ANA_SERIES_MAX * sizeof(*ts));
	double *val = malloc(ANA_SERIES_MAX * sizeof(*val));
	for (size_t h = 0; h < m->hosts.n; h++) {
		uint64_t rx = 0, tx = 0, sd = 0, rv = 0, dur = 0;
		struct ana_sock_sum ss = { 0 }, sr = { 0 }, sx = { 0 }, sy = { 0 };
		double mx = 0;
		size_t k = 0;
		for (size_t i = 0; i < m->netcpu.n; i++) {
			const struct ana_netcpu *x = &m->netcpu.v[i];
			if (x->host != h || !ana_interval_in_window(m, x->host, x->t, x->dur_ns))
				continue;
			uint64_t tot = x->net_rx_ns + x->net_tx_ns + x->sock_send_ns + x->sock_recv_ns;
			rx += x->net_rx_ns; tx += x->net_tx_ns; sd += x->sock_send_ns; rv += x->sock_recv_ns;
			ana_sock_add(&ss, x, x->sock_send_ns, x->send_smp, x->send_smp_ns, x->sock_how);
			ana_sock_add(&sr, x, x->sock_recv_ns, x->recv_smp, x->recv_smp_ns, x->sock_how);
			ss.split_mask |= 1u << ana_sock_split_of(x, 0);
			sr.split_mask |= 1u << ana_sock_split_of(x, 1);
			ana_sock_add(&sx, x, x->net_rx_ns, x->rx_smp, x->rx_smp_ns, x->sirq_how);
			ana_sock_add(&sy, x, x->net_tx_ns, x->tx_smp, x->tx_smp_ns, x->sirq_how);
			bool ps = x->probe_mask & ANA_NC_PROBE_SOCK, pr = x->probe_mask & ANA_NC_PROBE_RX;
			ana_sock_add_probe(&ss, x->sock_how, x->send_probe_smp, x->send_out_smp, ps);
			ana_sock_add_probe(&sr, x->sock_how, x->recv_probe_smp, x->recv_out_smp, ps);
			ana_sock_add_probe(&sx, x->sirq_how, x->rx_probe_smp, x->rx_stray_smp, pr);
			ana_sock_add_probe(&sy, x->sirq_how, 0, 0, false);
			ana_sock_add_unclocked(&ss, x->sock_how, x->send_unclocked, x->has_unclocked);
			ana_sock_add_unclocked(&sr, x->sock_how, x->recv_unclocked, x->has_unclocked);
			dur += x->dur_ns;
			double pct = x->dur_ns ? 100.0 * (double)tot / (double)x->dur_ns : 0;
			if (pct > mx) mx = pct;
			if (ts && val && k < ANA_SERIES_MAX) {
				ts[k] = (uint64_t)ana_ref_or_local(m, (int)h, x->t);
				val[k++] = pct;
			}
		}
		if (!dur)
			continue;
		uint64_t tot = rx + tx + sd + rv;
		size_t r = np_table_row(t);
		np_table_set_str(t, r, NC_HOST, m->hosts.v[h].name);
		np_table_set_u64(t, r, NC_NET_RX, rx);
		np_table_set_u64(t, r, NC_NET_TX, tx);
		np_table_set_u64(t, r, NC_SOCK_SEND, sd);
		np_table_set_u64(t, r, NC_SOCK_RECV, rv);
		np_table_set_u64(t, r, NC_TOTAL, tot);
		np_table_set_f64(t, r, NC_CPU_MEAN, 100.0 * (double)tot / (double)dur);
		np_table_set_f64(t, r, NC_CPU_MAX, mx);
		unsigned nc = m->hosts.v[h].ncpus ? m->hosts.v[h].ncpus : 1;
		np_table_set_f64(t, r, NC_CPU_SHARE, 100.0 * (double)tot / (double)dur / nc);
		np_table_set_str(t, r, NC_SOCK_HOW, ana_sock_how_name(ss.how_mask | sr.how_mask));
		np_table_set_str(t, r, NC_SIRQ_HOW, ana_sock_how_name(sx.how_mask | sy.how_mask));
		ana_sock_row(st, m->hosts.v[h].name, "net_rx", &sx);
		ana_sock_row(st, m->hosts.v[h].name, "net_tx", &sy);
		ana_sock_row(st, m->hosts.v[h].name, "sock_send", &ss);
		ana_sock_row(st, m->hosts.v[h].name, "sock_recv", &sr);
		if (k)
			np_series_pack(&o->rb, "netcpu", m->hosts.v[h].name, "cpu", "pct", ts, val, k);
		double share = 100.0 * (double)tot / (double)dur / nc;
		if (share > 10)
			ana_out_candidate(o, share / 50.0, share > 30 ? 2 : 1, "netcpu", m->hosts.v[h].name,
					  "cpu_share", share, "networking takes %.0f %% of all CPU on %s (peak %.0f %% of a core%s)",
					  share, m->hosts.v[h].name, mx,
					  (ss.how_mask | sr.how_mask | sx.how_mask | sy.how_mask) & (1u << ANA_SOCK_SAMPLED)
						  ? "; sampled estimate, error in netcpu_sock" : "");
	}
	free(ts); free(val);
	ana_out_table(o, t);
	ana_out_table(o, st);

	/* columns of "netrx_breakdown", in the order of the np_table_col_at calls below */
	enum { NRX_HOST, NRX_COMPONENT, NRX_TIME, NRX_SAMPLES, NRX_SHARE, NRX_HOW, NRX_NCOLS };
	struct np_table *b = np_table_new("netrx_breakdown", "NET_RX time by stack component", 2);
	np_table_col_at(b, NRX_HOST, "host", "str", NULL);
	np_table_col_at(b, NRX_COMPONENT, "component", "str", "driver poll, GRO, TC, netfilter, bridge, forward, local delivery ...");
	np_table_col_at(b, NRX_TIME, "time", "ns", "estimated NET_RX time (samples x NET_RX time)");
	np_table_col_at(b, NRX_SAMPLES, "samples", "count", "stack samples");
	np_table_col_at(b, NRX_SHARE, "share", "pct", "% of the host's NET_RX time");
	np_table_col_at(b, NRX_HOW, "net_rx_how", "str",
			"the NET_RX time shared out: exact or sampled (its error in netcpu_sock)");
	for (size_t h = 0; h < m->hosts.n; h++) {
		uint64_t all = 0;
		unsigned how = 0;
		for (size_t i = 0; i < m->netcpu.n; i++)
			if (m->netcpu.v[i].host == h)
				how |= 1u << m->netcpu.v[i].sirq_how;
		for (size_t i = 0; i < m->netrx.n; i++)
			if (m->netrx.v[i].host == h)
				all += m->netrx.v[i].est_ns;
		for (size_t i = 0; i < m->netrx.n; i++) {
			const struct ana_netrx *x = &m->netrx.v[i];
			if (x->host != h)
				continue;
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = m->netrx.v[j].host == h && !strcmp(m->netrx.v[j].comp, x->comp);
			if (seen)
				continue;
			uint64_t est = 0, smp = 0;
			for (size_t j = i; j < m->netrx.n; j++)
				if (m->netrx.v[j].host == h && !strcmp(m->netrx.v[j].comp, x->comp)) {
					est += m->netrx.v[j].est_ns;
					smp += m->netrx.v[j].samples;
				}
			if (!est && !smp)
				continue;
			size_t r = np_table_row(b);
			np_table_set_str(b, r, NRX_HOST, m->hosts.v[h].name);
			np_table_set_str(b, r, NRX_COMPONENT, x->comp);
			np_table_set_u64(b, r, NRX_TIME, est);
			np_table_set_u64(b, r, NRX_SAMPLES, smp);
			if (all)
				np_table_set_f64(b, r, NRX_SHARE, 100.0 * (double)est / (double)all);
			if (how)
				np_table_set_str(b, r, NRX_HOW, ana_sock_how_name(how));
		}
	}
	ana_out_table(o, b);
}

/* ---- perfmon host-stack components ---- */

/* Per pod flow and component: the EWMA over the recording (mean and
 * largest of the per-interval snapshots), samples and alerts (the largest
 * of the snapshots: the recorder's counters are per flow since it was
 * first seen). */
void ana_stack_run(const struct ana_model *m, struct ana_out *o)
{
	static const char *const comp[4] = { "rtt", "rnst1", "cnst", "rnst2" };
	if (!m->ewma.n)
		return;
	/* columns of "stack_components", in the order of the np_table_col_at calls below */
	enum { SC_HOST, SC_FLOW, SC_COMPONENT, SC_BUCKET, SC_EWMA_MEAN, SC_EWMA_MAX,
	       SC_SAMPLES, SC_ALERTS, SC_NCOLS };
	struct np_table *t = np_table_new("stack_components",
					  "Host-stack components per pod flow (perfmon EWMA)", 3);
	np_table_col_at(t, SC_HOST, "host", "str", NULL);
	np_table_col_at(t, SC_FLOW, "flow", "str", "pod address:port > remote address:port");
	np_table_col_at(t, SC_COMPONENT, "component", "str", "rtt, rnst1, cnst, rnst2 (perfmon Fig. 4a)");
	np_table_col_at(t, SC_BUCKET, "bucket", "str", "intra or inter node");
	np_table_col_at(t, SC_EWMA_MEAN, "ewma_mean", "ns", "mean of the interval snapshots of the EWMA");
	np_table_col_at(t, SC_EWMA_MAX, "ewma_max", "ns", "largest snapshot");
	np_table_col_at(t, SC_SAMPLES, "samples", "count", NULL);
	np_table_col_at(t, SC_ALERTS, "alerts", "count", "threshold crossings raised in the kernel");
	for (size_t i = 0; i < m->ewma.n; i++) {
		const struct ana_ewma *x = &m->ewma.v[i];
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = m->ewma.v[j].host == x->host && !strcmp(m->ewma.v[j].flowkey, x->flowkey);
		if (seen || !ana_key_match(m, x->flowkey))
			continue;
		for (int k = 0; k < 4; k++) {
			double sum = 0;
			uint64_t cnt = 0, mx = 0, n = 0, al = 0;
			for (size_t j = i; j < m->ewma.n; j++) {
				const struct ana_ewma *y = &m->ewma.v[j];
				if (y->host != x->host || strcmp(y->flowkey, x->flowkey) ||
				    !ana_interval_in_window(m, y->host, y->t, m->hosts.v[y->host].interval_ns))
					continue;
				if (y->f[k]) {
					sum += (double)y->f[k];
					cnt++;
				}
				if (y->f[k] > mx) mx = y->f[k];
				if (y->n[k] > n) n = y->n[k];
				if (y->alerts[k] > al) al = y->alerts[k];
			}
			if (!cnt && !n)
				continue;
			size_t r = np_table_row(t);
			np_table_set_str(t, r, SC_HOST, m->hosts.v[x->host].name);
			np_table_set_str(t, r, SC_FLOW, x->flowkey);
			np_table_set_str(t, r, SC_COMPONENT, comp[k]);
			np_table_set_str(t, r, SC_BUCKET, x->bucket);
			if (cnt)
				np_table_set_f64(t, r, SC_EWMA_MEAN, sum / (double)cnt);
			np_table_set_u64(t, r, SC_EWMA_MAX, mx);
			np_table_set_u64(t, r, SC_SAMPLES, n);
			np_table_set_u64(t, r, SC_ALERTS, al);
		}
	}
	ana_out_table(o, t);
}
