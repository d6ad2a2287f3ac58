/* npanalyze's netcpu_sock names the sampler behind a sampled socket
 * figure (analyze/ana_families.c): the records' sock_sampler says whether
 * socket calls were split from their softirqs by the CPU's own timer
 * (local) or by the other CPU's timer (the remote split: remote-recv, the
 * default on 2+ CPUs since j33a, for receive calls; remote for both). A
 * recording of two intervals on two CPUs, written with each sampler, with
 * none named (before j32c: plain "sampled", as before) and with a mix;
 * exact rows stay "exact" whatever the cross-check's sampler. The remote
 * split's interval is the Poisson score interval of its count (recv_smp,
 * fewer than the samples when the remote reads were few) at the estimate
 * per unit of count, recv_smp_ns / recv_smp, not the timer's period. */
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

#define NS_T0 1000000000000ull
#define NS_IV 1000000000ull
#define NS_MS 1000000ull

static char ns_dir[] = "/tmp/np-test-ncsmp.XXXXXX";

/* Column totals over the recording, split over interval x CPU as 1, 2, 3,
 * 4 tenths. recv: 200 counts for 300 ms (1.5 ms a count at a 1 ms timer:
 * a remote split with few remote reads). */
struct ns_col { const char *key; uint64_t total; };
static const struct ns_col ns_cols[] = {
	{ "send_ns", 400 * NS_MS }, { "send_smp", 400 }, { "send_smp_ns", 400 * NS_MS },
	{ "recv_ns", 300 * NS_MS }, { "recv_smp", 200 }, { "recv_smp_ns", 300 * NS_MS },
	{ "netrx_ns", 100 * NS_MS }, { "netrx_smp", 100 }, { "netrx_smp_ns", 100 * NS_MS },
	{ "nettx_ns", 50 * NS_MS }, { "nettx_smp", 50 }, { "nettx_smp_ns", 50 * NS_MS },
};
#define NS_NCOLS (sizeof(ns_cols) / sizeof(ns_cols[0]))

/* smp: the interval's sock_sampler, NULL for none (before j32c) */
static void ns_interval(struct np_writer *w, struct np_recbuf *rb, int iv, const char *how, const char *smp)
{
	uint64_t t0 = NS_T0 + (uint64_t)iv * NS_IV, t1 = t0 + NS_IV;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_INTERVAL, 1);
	msgpack_pack_map(pk, 3);
	np_pack_kv_u64(pk, "seq", (uint64_t)iv);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_writer_commit(w, rb);

	pk = np_recbuf_begin(rb, NP_REC_NETCPU, 1);
	msgpack_pack_map(pk, 6 + NS_NCOLS + (smp != NULL));
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_str(pk, "sock", how);
	np_pack_kv_str(pk, "sirq", how);
	np_pack_kv_u64(pk, "smp_period_ns", NS_MS);
	if (smp)
		np_pack_kv_str(pk, "sock_sampler", smp);
	uint64_t cpu[2] = { 0, 1 };
	np_pack_kv_u64_array(pk, "cpu", cpu, 2);
	for (size_t c = 0; c < NS_NCOLS; c++) {
		uint64_t v[2];
		for (int k = 0; k < 2; k++)
			v[k] = ns_cols[c].total / 10 * (uint64_t)(1 + 2 * iv + k);
		np_pack_kv_u64_array(pk, ns_cols[c].key, v, 2);
	}
	np_writer_commit(w, rb);
}

/* smp[iv]: each interval's sock_sampler */
static bool ns_analyse(struct np_analysis *a, const char *name, const char *how, const char *const smp[2])
{
	char npr[96], npa[96];
	struct np_writer *w;
	struct np_recbuf rb;
	snprintf(npr, sizeof(npr), "%s/%s.npr", ns_dir, name);
	snprintf(npa, sizeof(npa), "%s/%s.npa", ns_dir, name);
	bool ok = rechdr_open(&w, &rb, npr) == 0;
	if (ok) {
		rechdr_commit(w, &rb, "test_ana_netcpu_sampler", "h1", "mmmm", NS_IV, NS_T0);
		for (int iv = 0; iv < 2; iv++)
			ns_interval(w, &rb, iv, how, smp[iv]);
		ok = rechdr_close(w, &rb) == 0;
	}
	CHECK(ok, "write %s", npr);
	if (!ok)
		return false;
	struct ana_model m;
	struct ana_options o = { .quiet = true };
	ana_model_init(&m, &o);
	ana_load_file(&m, npr, "h1");
	int rc = ana_run(&m, npa, NULL);
	ana_model_free(&m);
	CHECK(rc == 0, "ana_run %s", npr);
	memset(a, 0, sizeof(*a));
	ok = rc == 0 && np_analysis_load(a, npa, NULL, NULL) == 0;
	CHECK(ok, "load %s", npa);
	return ok;
}

/* netcpu_sock's how of class cls, "" when there is no such row */
static const char *ns_how(const struct np_analysis *a, const char *cls)
{
	const struct np_table *t = np_analysis_table(a, "netcpu_sock");
	int ik = t ? np_table_find_col(t, "class") : -1, ih = t ? np_table_find_col(t, "how") : -1;
	for (size_t i = 0; ik >= 0 && ih >= 0 && i < t->nrows; i++) {
		const struct np_cell *c = np_table_cell_c(t, i, (size_t)ik), *h = np_table_cell_c(t, i, (size_t)ih);
		if (c->kind == NP_CELL_STR && !strcmp(c->s, cls))
			return h->kind == NP_CELL_STR ? h->s : "";
	}
	return "";
}

/* recording name, mode, the two intervals' samplers, and the how wanted of
 * sock_send, sock_recv and net_rx */
struct ns_case { const char *name, *how, *smp[2], *want[3]; };

static void ns_hows(void)
{
	static const char *const cls[3] = { "sock_send", "sock_recv", "net_rx" };
	static const struct ns_case cases[] = {
		{ "remote_recv", "sampled", { "remote-recv", "remote-recv" },
		  { "sampled (own timer)", "sampled (remote split)", "sampled" } },
		{ "remote", "sampled", { "remote", "remote" },
		  { "sampled (remote split)", "sampled (remote split)", "sampled" } },
		{ "local", "sampled", { "local", "local" }, { "sampled (own timer)", "sampled (own timer)", "sampled" } },
		{ "unnamed", "sampled", { NULL, NULL }, { "sampled", "sampled", "sampled" } },
		{ "unknown_name", "sampled", { "future", "future" }, { "sampled", "sampled", "sampled" } },
		{ "mixed", "sampled", { "local", "remote-recv" },
		  { "sampled (own timer)", "sampled (own timer and remote split)", "sampled" } },
		{ "old_and_local", "sampled", { NULL, "local" },
		  { "sampled (own timer)", "sampled (own timer)", "sampled" } },
		{ "exact", "exact", { "remote-recv", "remote-recv" }, { "exact", "exact", "exact" } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ns_case *c = &cases[i];
		struct np_analysis a;
		if (!ns_analyse(&a, c->name, c->how, c->smp))
			continue;
		for (int k = 0; k < 3; k++)
			CHECK(!strcmp(ns_how(&a, cls[k]), c->want[k]), "%s: %s how '%s' (want '%s')", c->name, cls[k],
			      ns_how(&a, cls[k]), c->want[k]);
		np_analysis_free(&a);
	}
}

static double ns_cell(const struct np_analysis *a, const char *cls, const char *col)
{
	return tab_lookup(np_analysis_table(a, "netcpu_sock"), "class", cls, col);
}

/* The interval of the remote split's receive row: the 95 % score interval
 * of its count (n + z^2/2 -+ z sqrt(n + z^2/4), written out here) times
 * the estimate per count, 1.5 ms; the timer's 1 ms would make it a third
 * too narrow. */
static void ns_interval_scale(void)
{
	struct np_analysis a;
	if (!ns_analyse(&a, "ci", "sampled", (const char *const[]){ "remote-recv", "remote-recv" }))
		return;
	const double z = 1.959964, n = 200, per = 1.5e6, x = 300e6;
	double lo = (n + z * z / 2 - z * sqrt(n + z * z / 4)) * per, hi = (n + z * z / 2 + z * sqrt(n + z * z / 4)) * per;
	CHECK(ns_cell(&a, "sock_recv", "samples") == n, "recv samples %.0f = the count", ns_cell(&a, "sock_recv", "samples"));
	CHECK(fabs(ns_cell(&a, "sock_recv", "ci95_lo") - lo) <= 2 && fabs(ns_cell(&a, "sock_recv", "ci95_hi") - hi) <= 2,
	      "recv interval %.0f..%.0f (want %.0f..%.0f)", ns_cell(&a, "sock_recv", "ci95_lo"),
	      ns_cell(&a, "sock_recv", "ci95_hi"), lo, hi);
	CHECK(fabs(ns_cell(&a, "sock_recv", "err95") - 100 * (hi - lo) / 2 / x) <= 1e-6,
	      "recv err95 %.4f %% (want %.4f)", ns_cell(&a, "sock_recv", "err95"), 100 * (hi - lo) / 2 / x);
	CHECK(ns_cell(&a, "sock_recv", "ci95_lo") < x && ns_cell(&a, "sock_recv", "ci95_hi") > x,
	      "the interval holds the figure");
	np_analysis_free(&a);
}

int main(void)
{
	static void (*const tests[])(void) = { ns_hows, ns_interval_scale, NULL };
	return tap_run_in(ns_dir, tests);
}
