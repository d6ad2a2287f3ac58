/* Request rates between request starts (analyze/ana_graph.c ana_reqrate)
 * from the starts TXN_STATS carries (start_lo_ns, start_hi_ns), whatever
 * --txn-events kept. One server recording, three 1 s intervals: keep-alive
 * connections 1 and 2 with a request every 15 ms in every interval (events
 * kept), connection 3 in intervals 1 and 2 only, every 4 ms, sampled out
 * (TXN_STATS ev 0, no events): a later phase of the load at another rate.
 *  - with the starts: transactions rates (connection, endpoint) and the
 *    service graph's active_rate equal (N - 1) / (last start - first start)
 *    of the starts written, to 1e-9;
 *  - connection 1's last start 250 ms late (a straggler): left out;
 *  - the same late start in the client's recording (role client): kept,
 *    since a client's starts are when it sent, never read late;
 *  - the same recording without the two keys (an older recorder): read,
 *    and the rates fall back as before (the events of the kept
 *    connections, scaled by the exact count);
 *  - connection 4, open in every interval without a request (TXN_STATS
 *    rows of count 0, pid 0, as the recorder writes an idle connection):
 *    listed as a connection of 0 requests, no "pid[0]" container and no
 *    change to the endpoint's or the container's figures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "txnfix.h"
#include "tabcols.h"

#define RR_T0   1000000000000ull
#define RR_IV   3
#define RR_DUR  100000ull           /* every request: 100 us */

static char rr_dir[] = "/tmp/np-test-reqrate.XXXXXX";

/* Requests of connection c (1..3) in interval iv, and the start of its i-th. */
static int rr_per(int c, int iv) { return c == 3 ? (iv ? 200 : 0) : 50; }

static uint64_t rr_late;        /* added to connection 1's last start: a straggler */
static bool rr_idle;            /* connection 4: open, no request */
static bool rr_client;          /* the rows and events are the client's */

static uint64_t rr_start(int c, int iv, int i)
{
	uint64_t base = RR_T0 + (uint64_t)iv * 1000000000ull + (uint64_t)c * 1000;
	if (c == 3)
		return base + 5000000 + (uint64_t)i * 4000000;
	return base + 1000000 + (uint64_t)i * 15000000 + (c == 1 && iv == RR_IV - 1 && i == 49 ? rr_late : 0);
}

/* One interval's TXN_STATS rows, as the recorder writes them: start_lo is
 * the previous row's start_hi, or the first start in a connection's first
 * row (count == count_total). */
static void rr_stats(struct np_writer *w, struct np_recbuf *rb, int iv, bool starts)
{
	uint64_t conn[4], role[4], lport[4], rport[4], cnt[4], tot[4], pid[4], ev[4], lo[4], hi[4], s2[4], sp[4];
	size_t n = 0;
	for (int c = 1; c <= 3; c++) {
		if (!rr_per(c, iv))
			continue;
		uint64_t before = 0;
		for (int j = 0; j < iv; j++)
			before += (uint64_t)rr_per(c, j);
		conn[n] = (uint64_t)c; role[n] = rr_client ? 1 : 2;
		lport[n] = rr_client ? 40000 + (uint64_t)c : 8080;
		rport[n] = rr_client ? 8080 : 40000 + (uint64_t)c;
		cnt[n] = (uint64_t)rr_per(c, iv); tot[n] = before + cnt[n]; pid[n] = 7; ev[n] = c != 3;
		lo[n] = before ? rr_start(c, iv - 1, rr_per(c, iv - 1) - 1) : rr_start(c, iv, 0);
		hi[n] = rr_start(c, iv, rr_per(c, iv) - 1);
		s2[n] = rr_start(c, c == 3 ? 1 : 0, 1);             /* the connection's second */
		sp[n] = rr_start(c, iv, rr_per(c, iv) - 2);         /* the one before hi */
		n++;
	}
	if (rr_idle) {
		conn[n] = 4; role[n] = 2; lport[n] = 8080; rport[n] = 40004;
		cnt[n] = tot[n] = pid[n] = ev[n] = lo[n] = hi[n] = s2[n] = sp[n] = 0;
		n++;
	}
	uint64_t t0 = RR_T0 + (uint64_t)iv * 1000000000ull;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_TXN_STATS, 1);
	msgpack_pack_map(pk, starts ? 20 : 16);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t0 + 1000000000ull);
	np_pack_kv_u64(pk, "n", n);
	np_pack_kv_u64(pk, "ev_sample", 16);
	np_pack_kv_u64_array(pk, "ev", ev, n);
	np_pack_kv_u64_array(pk, "conn", conn, n);
	np_pack_kv_u64_array(pk, "role", role, n);
	txf_strs(pk, "laddr", rr_client ? "10.0.0.1" : "10.0.0.2", n);
	np_pack_kv_u64_array(pk, "lport", lport, n);
	txf_strs(pk, "raddr", rr_client ? "10.0.0.2" : "10.0.0.1", n);
	np_pack_kv_u64_array(pk, "rport", rport, n);
	np_pack_kv_u64_array(pk, "count", cnt, n);
	np_pack_kv_u64_array(pk, "count_total", tot, n);
	np_pack_kv_u64_array(pk, "pid", pid, n);
	txf_strs(pk, "method", "GET", n);
	txf_strs(pk, "path", "/x", n);
	if (starts) {
		np_pack_kv_u64_array(pk, "start_lo_ns", lo, n);
		np_pack_kv_u64_array(pk, "start_hi_ns", hi, n);
		np_pack_kv_u64_array(pk, "start_second_ns", s2, n);
		np_pack_kv_u64_array(pk, "start_prev_ns", sp, n);
	}
	np_pack_str(pk, "lat");
	msgpack_pack_array(pk, n);
	for (size_t k = 0; k < n; k++) {
		struct np_sketch sk;
		np_sketch_init(&sk);
		np_sketch_add(&sk, RR_DUR, cnt[k]);
		np_sketch_pack(pk, &sk);
		np_sketch_free(&sk);
	}
	np_writer_commit(w, rb);
}

/* One interval's events: connections 1 and 2 only (3 sampled out). */
static void rr_events(struct np_writer *w, struct np_recbuf *rb, int iv)
{
	struct txf_ev ev[100];
	size_t n = 0;
	for (int i = 0; i < 50; i++)
		for (int c = 1; c <= 2; c++)
			ev[n++] = (struct txf_ev){ .conn = (uint64_t)c, .role = rr_client ? 1 : 2, .start = rr_start(c, iv, i),
						   .dur = RR_DUR, .path = "/x" };
	txf_events(w, rb, RR_T0 + (uint64_t)iv * 1000000000ull, ev, n);
}

static int rr_write(const char *path, bool starts)
{
	struct np_writer *w;
	struct np_recbuf rb;
	if (rechdr_open(&w, &rb, path))
		return -1;
	txf_header(w, &rb, "test_ana_reqrate", RR_T0);
	for (int iv = 0; iv < RR_IV; iv++) {
		rr_stats(w, &rb, iv, starts);
		rr_events(w, &rb, iv);
	}
	return rechdr_close(w, &rb);
}

/* (N - 1) / (last - first) over the starts of the given connections
 * (without connection 1's last one when it is late). */
static double rr_truth(int c_lo, int c_hi)
{
	uint64_t lo = UINT64_MAX, hi = 0, n = 0;
	for (int c = c_lo; c <= c_hi; c++)
		for (int iv = 0; iv < RR_IV; iv++)
			for (int i = 0; i < rr_per(c, iv); i++) {
				if (rr_late && !rr_client && c == 1 && iv == RR_IV - 1 && i == 49)
					continue;
				uint64_t t = rr_start(c, iv, i);
				if (t < lo) lo = t;
				if (t > hi) hi = t;
				n++;
			}
	return (double)(n - 1) * 1e9 / (double)(hi - lo);
}

static void rr_analyse(struct txf_run *r, const char *name, bool starts)
{
	char npr[96], npa[96];
	snprintf(npr, sizeof(npr), "%s/%s.npr", rr_dir, name);
	snprintf(npa, sizeof(npa), "%s/%s.npa", rr_dir, name);
	CHECK(rr_write(npr, starts) == 0, "write %s", npr);
	txf_analyse(r, npr, npa);
}

/* Column col of the row of t whose column kc is kv. */
static double rr_cell(const struct txf_run *r, const char *table, const char *kc, const char *kv, const char *col)
{
	return tab_lookup(r->ok ? np_analysis_table(&r->a, table) : NULL, kc, kv, col);
}

#define RR_REL(a, b) (fabs((a) - (b)) <= 1e-9 * fabs(b))

/* Analyses the recording written with the starts: the endpoint's, the
 * connection's (port rport) and the graph edge's rates against all (every
 * connection's truth) and one (that connection's). */
static void rr_check_starts(const char *name, unsigned rport, double all, double one, const char *what)
{
	struct txf_run r;
	char conn[64];
	snprintf(conn, sizeof(conn), "10.0.0.2:8080>10.0.0.1:%u", rport);
	rr_analyse(&r, name, true);
	double ep = rr_cell(&r, "transactions", "key", "10.0.0.2:8080 GET /x", "rate");
	double cn = rr_cell(&r, "transactions", "key", conn, "rate");
	double g = rr_cell(&r, "service_graph", "kind", "edge", "active_rate");
	CHECK(RR_REL(ep, all), "%s: endpoint rate %.6f == %.6f", what, ep, all);
	CHECK(RR_REL(cn, one), "%s: connection %s's rate %.6f == %.6f", what, conn, cn, one);
	CHECK(RR_REL(g, all), "%s: service graph active_rate %.6f == %.6f", what, g, all);
	txf_free(&r);
}

static void test_from_stats(void)
{
	rr_check_starts("starts", 40003, rr_truth(1, 3), rr_truth(3, 3), "every connection's starts");
}

/* Connection 1's last request read 250 ms after its previous one (a
 * server that stalled when the load stopped; its mean gap is 15 ms): left
 * out, the rate is that of the other starts. */
static void test_straggler(void)
{
	rr_late = 250000000;
	double all = rr_truth(1, 3), c1 = rr_truth(1, 1);
	rr_check_starts("straggler", 40001, all, c1, "without the straggler");
	rr_late = 0;
	CHECK(!RR_REL(all, rr_truth(1, 3)), "(with it: %.6f)", rr_truth(1, 3));
}

/* The same late start in the client's recording is a request the client
 * made then (e.g. after a retransmission wait), not one read late: kept.
 * Before, the server's rule applied to it too (mb_path, wrk's edge read
 * 4 % above the capture's rate in a loaded run). */
static void test_client_late_start(void)
{
	struct txf_run r;
	rr_late = 250000000;
	rr_client = true;
	double all = rr_truth(1, 3);
	rr_analyse(&r, "client", true);
	double g = rr_cell(&r, "service_graph", "kind", "edge", "active_rate");
	CHECK(RR_REL(g, all), "client: service graph active_rate %.6f == %.6f with the late start", g, all);
	rr_client = false;
	CHECK(!RR_REL(all, rr_truth(1, 3)), "(without it: %.6f)", rr_truth(1, 3));
	rr_late = 0;
	txf_free(&r);
}

static void test_older_recorder(void)
{
	struct txf_run r;
	rr_analyse(&r, "nostarts", false);
	/* as before: the kept connections' 300 starts, 0.1 % trimmed (none of
	 * 300), scaled by the exact count of 700 */
	double events = 299.0 * 700.0 / 300.0 * 1e9 / (double)(rr_start(2, 2, 49) - rr_start(1, 0, 0));
	double ep = rr_cell(&r, "transactions", "key", "10.0.0.2:8080 GET /x", "rate");
	double g = rr_cell(&r, "service_graph", "kind", "edge", "active_rate");
	CHECK(RR_REL(ep, events), "endpoint rate %.6f == %.6f from the kept events", ep, events);
	CHECK(RR_REL(g, events), "service graph active_rate %.6f == %.6f from the kept events", g, events);
	CHECK(!RR_REL(ep, rr_truth(1, 3)), "(which is not the exact %.6f)", rr_truth(1, 3));
	txf_free(&r);
}

static void test_idle_connection(void)
{
	struct txf_run r;
	rr_idle = true;
	rr_analyse(&r, "idle", true);
	rr_idle = false;
	double ep = rr_cell(&r, "transactions", "key", "10.0.0.2:8080 GET /x", "rate");
	double epn = rr_cell(&r, "transactions", "key", "10.0.0.2:8080 GET /x", "requests");
	double c4 = rr_cell(&r, "transactions", "key", "10.0.0.2:8080>10.0.0.1:40004", "requests");
	double p7 = rr_cell(&r, "transactions", "key", "pid[7]", "requests");
	double p0 = rr_cell(&r, "transactions", "key", "pid[0]", "requests");
	CHECK(c4 == 0, "idle connection listed with 0 requests (%g)", c4);
	CHECK(isnan(p0), "no pid[0] container row (%g requests)", p0);
	CHECK(p7 == 700 && epn == 700, "container pid[7] and endpoint keep 700 requests (%g, %g)", p7, epn);
	CHECK(RR_REL(ep, rr_truth(1, 3)), "endpoint rate %.6f == %.6f", ep, rr_truth(1, 3));
	txf_free(&r);
}

int main(void)
{
	static void (*const tests[])(void) = {
		test_from_stats, test_straggler, test_client_late_start, test_older_recorder, test_idle_connection, NULL
	};
	return tap_run_in(rr_dir, tests);
}
