/* npanalyze's like-for-like cross-check of exact socket and NET_RX time
 * (analyze/ana_families.c, table netcpu_sock): a recording at --netcpu exact
 * of two intervals on two CPUs with known sample counts. The exact figure
 * holds the tracers' programs on its bounding tracepoints (probe samples)
 * and not the syscall's tail (outside samples; NET_RX: stray), so
 * window_vs_exact = (samples - outside + probe) x mean period / exact, with
 * the 95 % score interval of that count; sampled_vs_exact stays the bare
 * ratio. A recording without the probe columns (before j24o) and a sampled
 * one get no window figures; NET_TX, which has no probe column, neither.
 * The socket rows' unclocked count (calls without a syscall stamp, exact
 * mode since 2026-11-27) is the columns' sum, and unknown (nil) when an
 * exact recording lacks them, not 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "anatable.h"
#include "npmsg.h"
#include "records.h"
#include "rechdr.h"
#include "tabcols.h"
#include "tap.h"

#define NW_T0 1000000000000ull
#define NW_IV 1000000000ull
#define NW_MS 1000000ull

static char nw_dir[] = "/tmp/np-test-ncwin.XXXXXX";

/* Which columns a record has: since the first exact recordings, since the
 * probe columns (j24o), since the unclocked counts (2026-11-27). */
enum { NW_OLD, NW_PROBE, NW_UNCLOCKED };

/* Column totals over the recording; each is split over interval x CPU as
 * 1, 2, 3, 4 tenths so that the loader must sum cells and records. */
struct nw_col { const char *key; uint64_t total; int since; };
static const struct nw_col nw_cols[] = {
	{ "send_ns", 440 * NW_MS, NW_OLD }, { "send_smp", 300, NW_OLD }, { "send_smp_ns", 330 * NW_MS, NW_OLD },
	{ "send_probe_smp", 120, NW_PROBE }, { "send_outside_smp", 20, NW_PROBE },
	{ "recv_ns", 500 * NW_MS, NW_OLD }, { "recv_smp", 250, NW_OLD }, { "recv_smp_ns", 250 * NW_MS, NW_OLD },
	{ "recv_probe_smp", 40, NW_PROBE }, { "recv_outside_smp", 10, NW_PROBE },
	{ "netrx_ns", 300 * NW_MS, NW_OLD }, { "netrx_smp", 200, NW_OLD }, { "netrx_smp_ns", 200 * NW_MS, NW_OLD },
	{ "netrx_probe_smp", 50, NW_PROBE }, { "netrx_stray_smp", 10, NW_PROBE },
	{ "nettx_ns", 100 * NW_MS, NW_OLD }, { "nettx_smp", 80, NW_OLD }, { "nettx_smp_ns", 80 * NW_MS, NW_OLD },
	{ "send_unclocked_n", 30, NW_UNCLOCKED }, { "recv_unclocked_n", 0, NW_UNCLOCKED },
};
#define NW_NCOLS (sizeof(nw_cols) / sizeof(nw_cols[0]))

/* since: the newest columns written (NW_*) */
static void nw_interval(struct np_writer *w, struct np_recbuf *rb, int iv, const char *how, int since)
{
	uint64_t t0 = NW_T0 + (uint64_t)iv * NW_IV, t1 = t0 + NW_IV;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_INTERVAL, 1);
	msgpack_pack_map(pk, 3);
	np_pack_kv_u64(pk, "seq", (uint64_t)iv);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_writer_commit(w, rb);

	size_t n = 0;
	for (size_t c = 0; c < NW_NCOLS; c++)
		n += nw_cols[c].since <= since;
	pk = np_recbuf_begin(rb, NP_REC_NETCPU, 1);
	msgpack_pack_map(pk, 6 + n);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_str(pk, "sock", how);
	np_pack_kv_str(pk, "sirq", how);
	np_pack_kv_u64(pk, "smp_period_ns", NW_MS);
	uint64_t cpu[2] = { 0, 1 };
	np_pack_kv_u64_array(pk, "cpu", cpu, 2);
	for (size_t c = 0; c < NW_NCOLS; c++) {
		if (nw_cols[c].since > since)
			continue;
		uint64_t v[2];
		for (int k = 0; k < 2; k++)
			v[k] = nw_cols[c].total / 10 * (uint64_t)(1 + 2 * iv + k);
		np_pack_kv_u64_array(pk, nw_cols[c].key, v, 2);
	}
	np_writer_commit(w, rb);
}

static int nw_write(const char *path, const char *how, int since)
{
	struct np_writer *w;
	struct np_recbuf rb;
	if (rechdr_open(&w, &rb, path))
		return -1;
	rechdr_commit(w, &rb, "test_ana_netcpu_window", "h1", "mmmm", NW_IV, NW_T0);
	for (int iv = 0; iv < 2; iv++)
		nw_interval(w, &rb, iv, how, since);
	return rechdr_close(w, &rb);
}

static bool nw_analyse(struct np_analysis *a, const char *name, const char *how, int since)
{
	char npr[96], npa[96];
	struct ana_model m;
	struct ana_options o = { .quiet = true };
	snprintf(npr, sizeof(npr), "%s/%s.npr", nw_dir, name);
	snprintf(npa, sizeof(npa), "%s/%s.npa", nw_dir, name);
	if (nw_write(npr, how, since)) {
		CHECK(0, "write %s", npr);
		return false;
	}
	ana_model_init(&m, &o);
	ana_load_file(&m, npr, "h1");
	int rc = ana_run(&m, npa, NULL);
	ana_model_free(&m);
	CHECK(rc == 0, "ana_run %s", npr);
	memset(a, 0, sizeof(*a));
	bool ok = rc == 0 && np_analysis_load(a, npa, NULL, NULL) == 0;
	CHECK(ok, "load %s", npa);
	return ok;
}

/* Column col of netcpu_sock's row of class cls; NAN for nil or none. */
static double nw_cell(const struct np_analysis *a, const char *cls, const char *col)
{
	return tab_lookup(np_analysis_table(a, "netcpu_sock"), "class", cls, col);
}

#define NW_NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * fabs(b))

/* The 95 % score interval of a Poisson count n, written out here
 * (Wilson's score form: n + z^2/2 -+ z sqrt(n + z^2/4)). */
static void nw_score(double n, double *lo, double *hi)
{
	const double z = 1.959964;
	*lo = n + z * z / 2 - z * sqrt(n + z * z / 4);
	*hi = n + z * z / 2 + z * sqrt(n + z * z / 4);
}

/* cls's window figures against the count n = samples - outside + probe,
 * the mean period per (ns) and the exact figure ex (ns) */
static void nw_check_window(const struct np_analysis *a, const char *cls, double n, double per, double ex,
			    double probe, double out)
{
	double lo, hi;
	nw_score(n, &lo, &hi);
	double w = nw_cell(a, cls, "window_vs_exact");
	CHECK(NW_NEAR(w, n * per / ex), "%s window_vs_exact %.6f = %.0f x %.0f / %.0f", cls, w, n, per, ex);
	CHECK(NW_NEAR(nw_cell(a, cls, "window_lo"), lo * per / ex), "%s window_lo %.6f (want %.6f)", cls,
	      nw_cell(a, cls, "window_lo"), lo * per / ex);
	CHECK(NW_NEAR(nw_cell(a, cls, "window_hi"), hi * per / ex), "%s window_hi %.6f (want %.6f)", cls,
	      nw_cell(a, cls, "window_hi"), hi * per / ex);
	CHECK(nw_cell(a, cls, "probe") == probe && nw_cell(a, cls, "outside") == out, "%s probe %.0f outside %.0f",
	      cls, nw_cell(a, cls, "probe"), nw_cell(a, cls, "outside"));
}

static void nw_no_window(const struct np_analysis *a, const char *cls, const char *what)
{
	CHECK(isnan(nw_cell(a, cls, "window_vs_exact")) && isnan(nw_cell(a, cls, "window_lo")) &&
		      isnan(nw_cell(a, cls, "window_hi")) && isnan(nw_cell(a, cls, "probe")),
	      "%s: no window figures for %s", what, cls);
}

static void nw_exact(void)
{
	struct np_analysis a;
	if (!nw_analyse(&a, "exact", "exact", NW_UNCLOCKED))
		return;
	/* bare: sampled / exact, unchanged */
	CHECK(NW_NEAR(nw_cell(&a, "sock_send", "sampled_vs_exact"), 330.0 / 440.0), "send bare 0.75");
	CHECK(NW_NEAR(nw_cell(&a, "sock_recv", "sampled_vs_exact"), 250.0 / 500.0), "recv bare 0.5");
	/* send: 300 - 20 + 120 = 400 samples of 1.1 ms (330 ms over 300) over 440 ms = 1.0 */
	nw_check_window(&a, "sock_send", 400, 1.1e6, 440e6, 120, 20);
	CHECK(NW_NEAR(nw_cell(&a, "sock_send", "window_vs_exact"), 1.0), "send window 1.0");
	CHECK(nw_cell(&a, "sock_send", "window_lo") < 0.92 && nw_cell(&a, "sock_send", "window_hi") > 1.09,
	      "send: 400 samples resolve about +-10 %%");
	nw_check_window(&a, "sock_recv", 280, 1e6, 500e6, 40, 10);
	nw_check_window(&a, "net_rx", 240, 1e6, 300e6, 50, 10);
	nw_no_window(&a, "net_tx", "exact");
	CHECK(NW_NEAR(nw_cell(&a, "net_tx", "sampled_vs_exact"), 0.8), "net_tx bare 0.8");
	CHECK_EQ_U((uint64_t)nw_cell(&a, "sock_send", "unclocked"), 30);
	CHECK(nw_cell(&a, "sock_recv", "unclocked") == 0, "recv: 0 unclocked, not unknown (%.0f)",
	      nw_cell(&a, "sock_recv", "unclocked"));
	CHECK(isnan(nw_cell(&a, "net_rx", "unclocked")), "net_rx: no unclocked count");
	np_analysis_free(&a);
}

static void nw_old_and_sampled(void)
{
	struct np_analysis a;
	if (nw_analyse(&a, "old", "exact", NW_OLD)) {
		CHECK(NW_NEAR(nw_cell(&a, "sock_send", "sampled_vs_exact"), 0.75), "old: bare ratio still there");
		for (const char *const *c = (const char *const[]){ "sock_send", "sock_recv", "net_rx", NULL }; *c; c++)
			nw_no_window(&a, *c, "before j24o");
		CHECK(isnan(nw_cell(&a, "sock_send", "unclocked")), "old: unclocked unknown, not 0");
		np_analysis_free(&a);
	}
	if (nw_analyse(&a, "probe", "exact", NW_PROBE)) {
		CHECK(isnan(nw_cell(&a, "sock_send", "unclocked")) && isnan(nw_cell(&a, "sock_recv", "unclocked")),
		      "before the unclocked counts: unknown");
		nw_check_window(&a, "sock_send", 400, 1.1e6, 440e6, 120, 20);
		np_analysis_free(&a);
	}
	if (nw_analyse(&a, "sampled", "sampled", NW_PROBE)) {
		CHECK(nw_cell(&a, "sock_send", "samples") == 300 && isnan(nw_cell(&a, "sock_send", "sampled_vs_exact")),
		      "sampled: samples, no cross-check");
		nw_no_window(&a, "sock_send", "sampled");
		nw_no_window(&a, "net_rx", "sampled");
		CHECK(isnan(nw_cell(&a, "sock_send", "unclocked")), "sampled: no unclocked count");
		np_analysis_free(&a);
	}
}

int main(void)
{
	static void (*const tests[])(void) = { nw_exact, nw_old_and_sampled, NULL };
	return tap_run_in(nw_dir, tests);
}
