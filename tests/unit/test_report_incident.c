/* The incident summary on hand-built tables whose answer is known: a
 * user-facing endpoint 58 ms slower than its service's others, the
 * downstream endpoint that carries it, 3 packets dropped by netfilter on the
 * backend, a 5 ms clock offset; then degenerate analyses (no tables, tables
 * without the expected columns) must give no statement and no crash. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tabcols.h"
#include "anatable.h"
#include "incident.h"

static void txn_row(struct np_table *t, const char *key, const char *host, const char *role,
		    double p50, double p99)
{
	size_t r = np_table_row(t);
	np_table_set_str(t, r, 0, "endpoint");
	np_table_set_str(t, r, 1, key);
	np_table_set_str(t, r, 2, host);
	np_table_set_str(t, r, 3, role);
	np_table_set_u64(t, r, 4, 100);
	np_table_set_f64(t, r, 5, 10);
	np_table_set_f64(t, r, 6, p50);
	np_table_set_f64(t, r, 7, p99);
}

/* Front (10.0.0.2:80) serves /a (1 ms) and /b (60 ms) to a client; it calls
 * back (10.0.1.2:90) /x (0.3 ms) and /y (59 ms). */
static struct np_table *txn_table(void)
{
	struct np_table *t = np_table_new("transactions", "Transactions", 4);
	const char *cols[][2] = { { "level", "str" }, { "key", "str" }, { "host", "str" }, { "role", "str" },
				  { "requests", "count" }, { "rate", "rate" }, { "p50", "ns" }, { "p99", "ns" } };
	for (size_t i = 0; i < 8; i++)
		np_table_col(t, cols[i][0], cols[i][1], NULL);
	txn_row(t, "10.0.0.2:80 GET /a", "h/client", "client", 1.2e6, 3e6);
	txn_row(t, "10.0.0.2:80 GET /b", "h/client", "client", 60.2e6, 70e6);
	txn_row(t, "10.0.0.2:80 GET /a", "h/front", "server", 1.0e6, 2e6);
	txn_row(t, "10.0.0.2:80 GET /b", "h/front", "server", 60.0e6, 69e6);
	txn_row(t, "10.0.1.2:90 GET /x", "h/front", "client", 0.4e6, 1e6);
	txn_row(t, "10.0.1.2:90 GET /y", "h/front", "client", 59.1e6, 60e6);
	txn_row(t, "10.0.1.2:90 GET /x", "h/back", "server", 0.3e6, 0.9e6);
	txn_row(t, "10.0.1.2:90 GET /y", "h/back", "server", 59.0e6, 59.5e6);
	return t;
}

static struct np_table *lost_table(void)
{
	struct np_table *t = np_table_new("lost_packets", "Lost", 2);
	const char *cols[] = { "flow", "last_host", "last_hook", "next_hook", "lost_in", "drop_reason" };
	for (size_t i = 0; i < 6; i++)
		np_table_col(t, cols[i], "str", NULL);
	const char *flows[] = { "tcp 10.0.1.1:40001>10.0.1.2:90", "tcp 10.0.1.1:40002>10.0.1.2:90",
				"tcp 10.0.1.1:40001>10.0.1.2:90" };
	for (size_t i = 0; i < 3; i++) {
		size_t r = np_table_row(t);
		const char *v[] = { flows[i], "h/back", "tc_ingress", "tcp_rcv", "receiver_stack", "NETFILTER_DROP" };
		for (size_t c = 0; c < 6; c++)
			np_table_set_str(t, r, c, v[c]);
	}
	return t;
}

static struct np_table *clock_table(void)
{
	struct np_table *t = TABLE("clock", "Clock", 1,
		{ "host", "str", NULL }, { "quality", "str", NULL }, { "offset", "ns", NULL },
		{ "offset_err", "ns", NULL });
	const char *h[] = { "h/client", "h/front", "h/back" }, *q[] = { "reference", "accurate", "accurate" };
	const double off[] = { 0, 1200, 5000100 }, err[] = { 0, 900, 3000 };
	for (size_t i = 0; i < 3; i++) {
		size_t r = np_table_row(t);
		np_table_set_str(t, r, 0, h[i]);
		np_table_set_str(t, r, 1, q[i]);
		np_table_set_f64(t, r, 2, off[i]);
		np_table_set_f64(t, r, 3, err[i]);
	}
	return t;
}

static const struct rpt_inc_item *find(const struct rpt_incident *inc, enum rpt_inc_kind k)
{
	for (size_t i = 0; i < inc->n; i++)
		if (inc->items[i].kind == k)
			return &inc->items[i];
	return NULL;
}

static void test_known_incident(void)
{
	struct np_table *tabs[] = { clock_table(), lost_table(), txn_table() };
	struct np_analysis a = { .ntables = 3, .tables = tabs };
	a.meta.type = MSGPACK_OBJECT_NIL;
	struct rpt_incident inc;
	rpt_incident_build(&a, &inc);
	CHECK(inc.n >= 4, "%zu statements", inc.n);
	const struct rpt_inc_item *slow = find(&inc, RPT_INC_SLOW), *cause = find(&inc, RPT_INC_CAUSE),
		*loss = find(&inc, RPT_INC_LOSS), *clk = find(&inc, RPT_INC_CLOCK);
	CHECK(slow && slow == &inc.items[0], "the slow user-facing endpoint ranks first");
	if (slow) {
		CHECK(!strcmp(slow->subject, "10.0.0.2:80 GET /b"), "slow: %s", slow->subject);
		CHECK(!strcmp(slow->host, "h/front"), "measured at the server: %s", slow->host);
		CHECK_NEAR(slow->added_ns, 59.0e6, 1);    /* 60 ms vs the other endpoint's 1 ms */
		CHECK(strstr(slow->text, "(called by users)") != NULL, "%s", slow->text);
	}
	CHECK(cause && cause == &inc.items[1], "its cause right after it");
	if (cause) {
		CHECK(!strcmp(cause->subject, "10.0.1.2:90 GET /y") && !strcmp(cause->host, "h/back"),
		      "cause: %s on %s", cause->subject, cause->host);
		CHECK_NEAR(cause->added_ns, 58.7e6, 1);
		CHECK(strstr(cause->text, "spent inside h/back") != NULL, "%s", cause->text);
	}
	CHECK(loss != NULL, "loss stated");
	if (loss) {
		CHECK_NEAR(loss->count, 3, 0);
		CHECK(!strcmp(loss->subject, "10.0.1.2:90") && !strcmp(loss->host, "h/back"),
		      "loss at %s on %s", loss->subject, loss->host);
		CHECK(strstr(loss->text, "(2 connections)") && strstr(loss->text, "NETFILTER_DROP: a netfilter"),
		      "%s", loss->text);
	}
	CHECK(clk && !strcmp(clk->host, "h/back"), "clock: the largest offset first");
	if (clk) {
		CHECK_NEAR(clk->value_ns, 5000100, 0);
		CHECK(strstr(clk->text, "h/back +5000.100 µs (error bound ±3.00 µs)") != NULL, "%s", clk->text);
	}
	for (size_t i = 1; i < inc.n; i++)
		CHECK(inc.items[i].impact <= inc.items[i - 1].impact, "ranked by impact (%zu)", i);
	for (size_t i = 0; i < 3; i++)
		np_table_free(tabs[i]);
}

static void test_degenerate(void)
{
	struct rpt_incident inc;
	struct np_analysis none = { 0 };
	none.meta.type = MSGPACK_OBJECT_NIL;
	rpt_incident_build(&none, &inc);
	CHECK_EQ_U(inc.n, 0);
	/* tables of the right names without the expected columns */
	struct np_table *tabs[] = { np_table_new("transactions", "t", 1), np_table_new("clock", "c", 1),
				    np_table_new("lost_packets", "l", 1), np_table_new("bottlenecks", "b", 1) };
	for (size_t i = 0; i < 4; i++) {
		np_table_col(tabs[i], "x", "str", NULL);
		np_table_set_str(tabs[i], np_table_row(tabs[i]), 0, "endpoint");
	}
	struct np_analysis odd = { .ntables = 4, .tables = tabs };
	odd.meta.type = MSGPACK_OBJECT_NIL;
	rpt_incident_build(&odd, &inc);
	CHECK_EQ_U(inc.n, 0);
	for (size_t i = 0; i < 4; i++)
		np_table_free(tabs[i]);
}

/* Two hosts' probe outcomes: on "a" netcpu's per-syscall tracepoints failed
 * and tp_btf/sys_enter replaced them, pktpath is off for a kernel reason,
 * stackmon off by choice and hw counters skipped (neither named); on "b"
 * a flows probe failed with no replacement. */
static void probe_row(struct np_table *t, const char *host, const char *fam, const char *probe,
		      const char *state, const char *reason)
{
	size_t r = np_table_row(t);
	const char *v[] = { host, fam, probe, state, reason };
	for (size_t c = 0; c < 5; c++)
		np_table_set_str(t, r, c, v[c]);
}

static struct np_table *probes_table(bool all_ok)
{
	struct np_table *t = np_table_new("probes", "Probes", 3);
	const char *cols[] = { "host", "family", "probe", "state", "reason" };
	for (size_t i = 0; i < 5; i++)
		np_table_col(t, cols[i], "str", NULL);
	probe_row(t, "a", "netcpu", "tp_btf/softirq_entry", "attached", "");
	probe_row(t, "a", "netcpu", "tracepoint/syscalls/sys_enter_<socket calls>", all_ok ? "skipped" : "failed",
		  all_ok ? "tp_btf/sys_enter used" : "sys_enter_sendto: No such file (tracefs not mounted)");
	probe_row(t, "a", "netcpu", "tp_btf/sys_enter", "attached", "");
	probe_row(t, "a", "stackmon", "(family)", "skipped", "off");
	probe_row(t, "a", "threads", "perf_event/hw-counters", "skipped", "no hardware counters");
	probe_row(t, "b", "flows", "tp_btf/tcp_retransmit_skb", "attached", "");
	if (!all_ok) {
		probe_row(t, "a", "pktpath", "(family)", "skipped", "no BTF for sk_buff");
		probe_row(t, "b", "flows", "tp_btf/kfree_skb", "failed", "no such tracepoint");
	}
	return t;
}

static struct np_table *hosts_table(void)
{
	struct np_table *t = np_table_new("hosts", "Hosts", 1);
	np_table_col(t, "host", "str", NULL);
	np_table_col(t, "lost_events", "count", NULL);
	for (size_t i = 0; i < 2; i++) {
		size_t r = np_table_row(t);
		np_table_set_str(t, r, 0, i ? "b" : "a");
		np_table_set_u64(t, r, 1, 0);
	}
	return t;
}

static void test_missing_probes(void)
{
	for (int ok = 0; ok < 2; ok++) {
		struct np_table *tabs[] = { hosts_table(), probes_table(ok) };
		struct np_analysis a = { .ntables = 2, .tables = tabs };
		a.meta.type = MSGPACK_OBJECT_NIL;
		struct rpt_incident inc;
		rpt_incident_build(&a, &inc);
		const struct rpt_inc_item *rec = find(&inc, RPT_INC_RECORDER);
		CHECK(rec != NULL, "RECORDER stated (all ok: %d)", ok);
		if (!rec)
			goto next;
		const char *t = rec->text;
		if (ok) {
			CHECK(!strstr(t, "missing probes") && !strcmp(rec->table, "hosts"), "%s [%s]", t, rec->table);
			goto next;
		}
		CHECK(strstr(t, "2 hosts recorded; no events lost; missing probes") != NULL, "%s", t);
		CHECK(strstr(t, "a netcpu: tracepoint/syscalls/sys_enter_<socket calls> failed "
			       "(sys_enter_sendto: No such file (tracefs not mounted)), using tp_btf/sys_enter") != NULL,
		      "fallback named: %s", t);
		CHECK(strstr(t, "a pktpath: family off (no BTF for sk_buff)") != NULL, "family off: %s", t);
		CHECK(strstr(t, "b flows: tp_btf/kfree_skb failed (no such tracepoint); ") != NULL,
		      "no fallback invented: %s", t);
		CHECK(!strstr(t, "stackmon") && !strstr(t, "hw-counters"), "skips by design not named: %s", t);
		CHECK(!strcmp(rec->table, "hosts, probes"), "[%s]", rec->table);
next:
		for (size_t i = 0; i < 2; i++)
			np_table_free(tabs[i]);
	}
}

int main(void)
{
	test_known_incident();
	test_degenerate();
	test_missing_probes();
	return tap_done();
}
