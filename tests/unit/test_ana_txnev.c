/* npanalyze endpoint level from TXN_EVENTS (analyze/ana_families.c): two
 * keep-alive server connections, each alternating GET /slow (30 ms + a few 100 ns)
 * and GET /fast (300 us + a few 100 ns) for three 1 s intervals. TXN_STATS carry, as
 * the recorder does, only the last path per connection and interval
 * (/fast), with the sketch of all of the interval's transactions.
 *  - complete events: endpoint rows /slow and /fast with the exact counts
 *    and p50/p99 within 1 % of the known durations, series per endpoint and
 *    interval, connection rows from TXN_STATS, no warning;
 *  - one event of connection 2 missing (and a LOST txn 1): connection 1
 *    still from its events, connection 2 from its TXN_STATS rows (all on
 *    /fast, as recorded), and the warning says so;
 *  - connection 2 sampled out by the recorder (TXN_STATS ev 0, ev_sample
 *    2, none of its events): the same figures as with one missing, but a
 *    note says what was sampled instead of a warning of missing events. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "txnfix.h"

#define TXE_T0      1000000000000ull
#define TXE_IV      3
#define TXE_PER     10          /* transactions per connection per interval */
#define TXE_SLOW    30000000ull
#define TXE_FAST    300000ull

static char txe_dir[] = "/tmp/np-test-txnev.XXXXXX";

static uint64_t txe_dur(int conn, int iv, int i)
{
	uint64_t base = i % 2 ? TXE_FAST : TXE_SLOW;      /* even: /slow, odd: /fast */
	/* dense: neighbours 100-200 ns apart, so rank conventions differ < 0.1 % */
	return base + (uint64_t)(iv * TXE_PER + i) * 200 + (uint64_t)conn * 100;
}

/* One interval: TXN_STATS rows of connections 1 and 2 (last path /fast);
 * sampled: connection 2's events were not kept (ev 0, ev_sample 2). */
static void txe_stats(struct np_writer *w, struct np_recbuf *rb, int iv, bool sampled)
{
	uint64_t ev[2] = { 1, 0 };
	uint64_t conn[2] = { 1, 2 }, role[2] = { 2, 2 }, lport[2] = { 8080, 8080 };
	uint64_t rport[2] = { 40001, 40002 }, cnt[2] = { TXE_PER, TXE_PER }, pid[2] = { 7, 7 };
	uint64_t t0 = TXE_T0 + (uint64_t)iv * 1000000000ull;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_TXN_STATS, 1);
	msgpack_pack_map(pk, sampled ? 16 : 14);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t0 + 1000000000ull);
	np_pack_kv_u64(pk, "n", 2);
	if (sampled) {
		np_pack_kv_u64(pk, "ev_sample", 2);
		np_pack_kv_u64_array(pk, "ev", ev, 2);
	}
	np_pack_kv_u64_array(pk, "conn", conn, 2);
	np_pack_kv_u64_array(pk, "role", role, 2);
	txf_strs(pk, "laddr", "10.0.0.2", 2);
	np_pack_kv_u64_array(pk, "lport", lport, 2);
	txf_strs(pk, "raddr", "10.0.0.1", 2);
	np_pack_kv_u64_array(pk, "rport", rport, 2);
	np_pack_kv_u64_array(pk, "count", cnt, 2);
	np_pack_kv_u64_array(pk, "pid", pid, 2);
	txf_strs(pk, "method", "GET", 2);
	txf_strs(pk, "path", "/fast", 2);
	np_pack_str(pk, "lat");
	msgpack_pack_array(pk, 2);
	for (int c = 1; c <= 2; c++) {
		struct np_sketch sk;
		np_sketch_init(&sk);
		for (int i = 0; i < TXE_PER; i++)
			np_sketch_add(&sk, txe_dur(c, iv, i), 1);
		np_sketch_pack(pk, &sk);
		np_sketch_free(&sk);
	}
	np_writer_commit(w, rb);
}

/* One interval's events; skip = the index of connection 2's event left out
 * (-1: none, TXE_ALL: every one). */
#define TXE_ALL 1000
static void txe_events(struct np_writer *w, struct np_recbuf *rb, int iv, int skip)
{
	struct txf_ev ev[2 * TXE_PER];
	size_t n = 0;
	uint64_t t0 = TXE_T0 + (uint64_t)iv * 1000000000ull;
	for (int i = 0; i < TXE_PER; i++)
		for (int c = 1; c <= 2; c++) {
			if (c == 2 && (i == skip || skip == TXE_ALL))
				continue;
			ev[n++] = (struct txf_ev){ .conn = (uint64_t)c, .role = 2,
				.start = t0 + 1000000 + (uint64_t)i * 90000000ull + (uint64_t)c * 1000,
				.dur = txe_dur(c, iv, i), .path = i % 2 ? "/fast" : "/slow" };
		}
	txf_events(w, rb, t0, ev, n);
}

static void txe_lost(struct np_writer *w, struct np_recbuf *rb, uint64_t n)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_LOST, 1);
	msgpack_pack_map(pk, 4);
	np_pack_kv_u64(pk, "t0_ns", TXE_T0);
	np_pack_kv_u64(pk, "t1_ns", TXE_T0 + 1000000000ull);
	txf_strs(pk, "family", "txn", 1);
	np_pack_kv_u64_array(pk, "lost", &n, 1);
	np_writer_commit(w, rb);
}

static int txe_write(const char *path, bool drop_one, bool sampled)
{
	struct np_writer *w;
	struct np_recbuf rb;
	if (rechdr_open(&w, &rb, path))
		return -1;
	txf_header(w, &rb, "test_ana_txnev", TXE_T0);
	for (int iv = 0; iv < TXE_IV; iv++) {
		txe_stats(w, &rb, iv, sampled);
		txe_events(w, &rb, iv, sampled ? TXE_ALL : drop_one && iv == 1 ? 3 : -1);
	}
	if (drop_one)
		txe_lost(w, &rb, 1);
	return rechdr_close(w, &rb);
}

static int txe_u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Exact quantile of the durations of one path (even i: /slow) over the given connections. */
static double txe_truth(bool slow, int conns, double q)
{
	uint64_t v[2 * TXE_IV * TXE_PER];
	size_t n = 0;
	for (int c = 1; c <= conns; c++)
		for (int iv = 0; iv < TXE_IV; iv++)
			for (int i = slow ? 0 : 1; i < TXE_PER; i += 2)
				v[n++] = txe_dur(c, iv, i);
	qsort(v, n, sizeof(*v), txe_u64cmp);
	return (double)v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static int txe_row(const struct np_table *t, const char *level, const char *key)
{
	int il = t ? np_table_find_col(t, "level") : -1, ik = t ? np_table_find_col(t, "key") : -1;
	for (size_t r = 0; il >= 0 && ik >= 0 && r < t->nrows; r++) {
		const struct np_cell *a = np_table_cell_c(t, r, (size_t)il), *b = np_table_cell_c(t, r, (size_t)ik);
		if (a->kind == NP_CELL_STR && b->kind == NP_CELL_STR && !strcmp(a->s, level) && !strcmp(b->s, key))
			return (int)r;
	}
	return -1;
}

static double txe_cell(const struct np_table *t, int row, const char *col)
{
	int c = t ? np_table_find_col(t, col) : -1;
	return c < 0 || row < 0 ? NAN : np_cell_f64(np_table_cell_c(t, (size_t)row, (size_t)c));
}

static size_t txe_series_n(const struct np_analysis *a, const char *key, const char *metric)
{
	for (size_t i = 0; i < a->nseries; i++)
		if (!strcmp(a->series[i]->table, "transactions") && !strcmp(a->series[i]->key, key) &&
		    !strcmp(a->series[i]->metric, metric))
			return a->series[i]->n;
	return 0;
}

static bool txe_warned(const struct ana_model *m, const char *needle)
{
	for (size_t i = 0; i < m->warnings.n; i++)
		if (strstr(m->warnings.v[i], needle))
			return true;
	return false;
}

static void txe_check_ep(const struct np_table *t, bool slow, double count, int conns)
{
	const char *key = slow ? "10.0.0.2:8080 GET /slow" : "10.0.0.2:8080 GET /fast";
	int r = txe_row(t, "endpoint", key);
	CHECK(r >= 0, "endpoint row %s", key);
	CHECK_NEAR(txe_cell(t, r, "requests"), count, 0.0);
	double p50 = txe_truth(slow, conns, 0.5), p99 = txe_truth(slow, conns, 0.99);
	CHECK(fabs(txe_cell(t, r, "p50") - p50) <= 0.01 * p50, "%s p50 %g vs %g", key, txe_cell(t, r, "p50"), p50);
	CHECK(fabs(txe_cell(t, r, "p99") - p99) <= 0.01 * p99, "%s p99 %g vs %g", key, txe_cell(t, r, "p99"), p99);
}

static void test_complete(void)
{
	char npr[64], npa[64];
	snprintf(npr, sizeof(npr), "%s/full.npr", txe_dir);
	snprintf(npa, sizeof(npa), "%s/full.npa", txe_dir);
	CHECK(txe_write(npr, false, false) == 0, "write %s", npr);
	struct txf_run r;
	txf_analyse(&r, npr, npa);
	const struct np_table *t = r.ok ? np_analysis_table(&r.a, "transactions") : NULL;
	txe_check_ep(t, true, 2 * TXE_IV * TXE_PER / 2, 2);
	txe_check_ep(t, false, 2 * TXE_IV * TXE_PER / 2, 2);
	CHECK(txe_row(t, "endpoint", "10.0.0.2:8080 /fast") < 0, "no stats-derived endpoint row");
	int c1 = txe_row(t, "connection", "10.0.0.2:8080>10.0.0.1:40001");
	CHECK_NEAR(txe_cell(t, c1, "requests"), TXE_IV * TXE_PER, 0.0);
	CHECK_EQ_U(txe_series_n(&r.a, "endpoint|10.0.0.2:8080 GET /slow|srv|server", "p99"), TXE_IV);
	CHECK_EQ_U(txe_series_n(&r.a, "endpoint|10.0.0.2:8080 GET /fast|srv|server", "requests"), TXE_IV);
	CHECK(!txe_warned(&r.m, "transaction events missing"), "no event warning");
	txf_free(&r);
}

/* Writes and analyses a recording whose connection 2 has incomplete
 * events (one lost, or all sampled out): connection 1 from its events,
 * connection 2 from TXN_STATS, all on /fast. The table, or NULL. */
static const struct np_table *txe_conn2_from_stats(struct txf_run *r, const char *name, bool drop, bool sampled)
{
	char npr[64], npa[64];
	snprintf(npr, sizeof(npr), "%s/%s.npr", txe_dir, name);
	snprintf(npa, sizeof(npa), "%s/%s.npa", txe_dir, name);
	CHECK(txe_write(npr, drop, sampled) == 0, "write %s", npr);
	txf_analyse(r, npr, npa);
	const struct np_table *t = r->ok ? np_analysis_table(&r->a, "transactions") : NULL;
	txe_check_ep(t, true, TXE_IV * TXE_PER / 2, 1);
	int f = txe_row(t, "endpoint", "10.0.0.2:8080 GET /fast");
	CHECK_NEAR(txe_cell(t, f, "requests"), TXE_IV * TXE_PER / 2 + TXE_IV * TXE_PER, 0.0);
	CHECK(txe_cell(t, f, "p99") > 0.9 * TXE_SLOW, "conn 2's stats carry /slow latency onto /fast (%g)",
	      txe_cell(t, f, "p99"));
	return t;
}

static void test_one_missing(void)
{
	struct txf_run r;
	txe_conn2_from_stats(&r, "lost", true, false);
	CHECK(txe_warned(&r.m, "transaction events missing for 1 of 2 connections"), "fallback warning");
	CHECK(txe_warned(&r.m, "come from TXN_STATS"), "warning names the source");
	txf_free(&r);
}

static void test_sampled(void)
{
	struct txf_run r;
	const struct np_table *t = txe_conn2_from_stats(&r, "sampled", false, true);
	int c2 = txe_row(t, "connection", "10.0.0.2:8080>10.0.0.1:40002");
	CHECK_NEAR(txe_cell(t, c2, "requests"), TXE_IV * TXE_PER, 0.0);
	CHECK(!txe_warned(&r.m, "transaction events missing"), "no missing-events warning");
	CHECK(txe_warned(&r.m, "sampled by connection: 1 of 2 connections without events (up to 1 in 2 kept"),
	      "note says what was sampled");
	CHECK_EQ_U(r.m.nminor, r.m.warnings.n);
	txf_free(&r);
}

int main(void)
{
	static void (*const tests[])(void) = {
		test_complete, test_one_missing, test_sampled, NULL
	};
	return tap_run_in(txe_dir, tests);
}
