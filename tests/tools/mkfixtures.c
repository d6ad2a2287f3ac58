/* mkfixtures: deterministic, synthetic but schema-valid single-host
 * recordings and one analysis, for analyzer/report/dump tests and the fuzz
 * seed corpus. Same output on every run (fixed host identity, fixed clocks,
 * seeded values). The ground truth is in fixtures/mkfixtures.md.
 *
 *   mkfixtures DIR       writes DIR/rec-basic.npr, rec-truncated.npr,
 *                        rec-corrupt.npr, ana-basic.npa, fuzz/reader/...
 *
 * Record bodies mirror what nprec's families write (record/ sources and
 * docs/records/). To add a family: write one fx_NAME(rb, interval)
 * function and add it to fx_families[]. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "anatable.h"
#include "../unit/tabcols.h"
#include "container.h"
#include "hostinfo.h"
#include "npmsg.h"
#include "pktcols.h"
#include "records.h"

#define FX_INTERVALS   5
#define FX_INTERVAL_NS 1000000000ull
#define FX_START_NS    1000000000000ull        /* mono 1000 s */
#define FX_RT_START_NS 1767225600000000000ull  /* 2026-01-01T00:00:00Z */
#define FX_BT_OFFSET   5000000000ull           /* 5 s suspended */
#define FX_NCPU        2
#define FX_TXN_PER_IV  100

static uint64_t fx_t0(unsigned iv) { return FX_START_NS + iv * FX_INTERVAL_NS; }
static uint64_t fx_t1(unsigned iv) { return fx_t0(iv) + FX_INTERVAL_NS; }

static void fx_t01(msgpack_packer *pk, unsigned iv)
{
	np_pack_kv_u64(pk, "t0_ns", fx_t0(iv));
	np_pack_kv_u64(pk, "t1_ns", fx_t1(iv));
}

/* A record of type (version) with nkeys keys in all, the first ones t0_ns
 * and t1_ns of interval iv: the packer for the others. */
static msgpack_packer *fx_begin(struct np_recbuf *rb, uint16_t type, uint16_t version,
				size_t nkeys, unsigned iv)
{
	msgpack_packer *pk = np_recbuf_begin(rb, type, version);
	msgpack_pack_map(pk, nkeys);
	fx_t01(pk, iv);
	return pk;
}

static void fx_strcol(msgpack_packer *pk, const char *key, const char *const *v, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		np_pack_str(pk, v[i]);
}

/* One column of n values in a record: v (u64), d (u64, delta-coded) or s
 * (strings); FXU/FXD/FXS name one. */
struct fx_col { const char *key; const uint64_t *v, *d; const char *const *s; };
#define FXU(k, a) { .key = (k), .v = (a) }
#define FXD(k, a) { .key = (k), .d = (a) }
#define FXS(k, a) { .key = (k), .s = (a) }

static void fx_cols(msgpack_packer *pk, size_t n, const struct fx_col *c, size_t ncols)
{
	for (size_t i = 0; i < ncols; i++) {
		if (c[i].s)
			fx_strcol(pk, c[i].key, c[i].s, n);
		else if (c[i].d)
			np_pack_kv_u64_delta(pk, c[i].key, c[i].d, n);
		else
			np_pack_kv_u64_array(pk, c[i].key, c[i].v, n);
	}
}

/* FX_COLS(pk, n, FXU("proto", proto), FXS("laddr", la), ...): the columns in that order. */
#define FX_COLS(pk, n, ...)                                                          \
	fx_cols(pk, n, (const struct fx_col[]){ __VA_ARGS__ },                       \
		sizeof((const struct fx_col[]){ __VA_ARGS__ }) / sizeof(struct fx_col))

static void fx_clockref(struct np_clockref *c, uint64_t mono)
{
	c->mono_ns = mono;
	c->rt_ns = FX_RT_START_NS + (mono - FX_START_NS);
	c->bt_ns = mono + FX_BT_OFFSET;
}

/* ---- header chunk ---- */

static const char *const fx_probes[][4] = {
	{ "flows", "tp_btf/tcp_probe", "attached", "" },
	{ "netcpu", "tp_btf/softirq_entry", "attached", "" },
	{ "netcpu", "perf_event/cpu-clock", "attached", "" },
	{ "threads", "perf_event/cycles", "failed", "hardware counters not available (ENOENT)" },
	{ "pktpath", "tc/ingress", "skipped", "no --iface given" },
};
#define FX_NPROBES (sizeof(fx_probes) / sizeof(fx_probes[0]))

static void fx_probe_list(msgpack_packer *pk)
{
	msgpack_pack_array(pk, FX_NPROBES);
	for (size_t i = 0; i < FX_NPROBES; i++) {
		msgpack_pack_map(pk, 4);
		np_pack_kv_str(pk, "family", fx_probes[i][0]);
		np_pack_kv_str(pk, "probe", fx_probes[i][1]);
		np_pack_kv_str(pk, "state", fx_probes[i][2]);
		np_pack_kv_str(pk, "reason", fx_probes[i][3]);
	}
}

static void fx_header(struct np_recbuf *rb, const char *hostname)
{
	struct np_hostinfo h = { .ncpus = FX_NCPU };
	snprintf(h.hostname, sizeof(h.hostname), "%s", hostname);
	snprintf(h.machine_id, sizeof(h.machine_id), "%s", "0123456789abcdef0123456789abcdef");
	snprintf(h.boot_id, sizeof(h.boot_id), "%s", "01234567-89ab-cdef-0123-456789abcdef");
	snprintf(h.kernel, sizeof(h.kernel), "%s", "6.18.0-fixture");
	struct np_clockref c;
	fx_clockref(&c, FX_START_NS);
	static const char *const argv[] = { "nprec", "-o", "rec-basic.npr", "-d", "5s" };
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_HEADER, 1);
	msgpack_pack_map(pk, 11);
	np_pack_kv_str(pk, "kind", "recording");
	np_pack_kv_u64(pk, "format_version", NP_FORMAT_VERSION);
	np_pack_kv_str(pk, "producer", "mkfixtures");
	np_pack_str(pk, "host");
	np_hostinfo_pack(pk, &h);
	np_pack_str(pk, "clock");
	np_clockref_pack(pk, &c);
	np_pack_kv_u64(pk, "start_ns", FX_START_NS);
	np_pack_kv_i64(pk, "shift_ns", 0);
	np_pack_kv_u64(pk, "interval_ns", FX_INTERVAL_NS);
	fx_strcol(pk, "argv", argv, 5);
	np_pack_str(pk, "config");
	msgpack_pack_map(pk, 4);
	np_pack_kv_str(pk, "output", "rec-basic.npr");
	np_pack_kv_u64(pk, "duration_ns", FX_INTERVALS * FX_INTERVAL_NS);
	np_pack_kv_u64(pk, "interval_ns", FX_INTERVAL_NS);
	np_pack_kv_str(pk, "netns", "");
	np_pack_str(pk, "probes");
	fx_probe_list(pk);

	pk = np_recbuf_begin(rb, NP_REC_PROBES, 1);
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64(pk, "t_ns", FX_START_NS);
	np_pack_str(pk, "probes");
	fx_probe_list(pk);
}

/* ---- per-interval families ---- */

static void fx_interval(struct np_recbuf *rb, unsigned iv)
{
	struct np_clockref c;
	fx_clockref(&c, fx_t1(iv));
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_INTERVAL, 1);
	msgpack_pack_map(pk, 7);
	np_pack_kv_u64(pk, "seq", iv);
	fx_t01(pk, iv);
	np_pack_str(pk, "clock");
	np_clockref_pack(pk, &c);
	np_pack_kv_u64(pk, "self_cpu_ns", 2000000ull * (iv + 1));
	np_pack_kv_u64(pk, "self_rss_bytes", 8u << 20);
	np_pack_kv_u64(pk, "bytes_written", 4096ull * (iv + 1));
}

/* NET_RX on cpu c: (c+1) * 10 ms per interval; NET_TX 2 ms; send 3 ms;
 * recv 4 ms; counts 1000 each. */
static void fx_netcpu(struct np_recbuf *rb, unsigned iv)
{
	static const char *const cls[] = { "netrx", "nettx", "send", "recv" };
	static const uint64_t base[] = { 10000000, 2000000, 3000000, 4000000 };
	uint64_t col[FX_NCPU];
	msgpack_packer *pk = fx_begin(rb, NP_REC_NETCPU, 1, 4 + 2 * 4 + 2 + 1, iv);
	for (int i = 0; i < FX_NCPU; i++)
		col[i] = (uint64_t)i;
	np_pack_kv_u64_array(pk, "cpu", col, FX_NCPU);
	for (int k = 0; k < 4; k++) {
		char key[24];
		for (int i = 0; i < FX_NCPU; i++)
			col[i] = k == 0 ? base[k] * (uint64_t)(i + 1) : base[k];
		snprintf(key, sizeof(key), "%s_ns", cls[k]);
		np_pack_kv_u64_array(pk, key, col, FX_NCPU);
		for (int i = 0; i < FX_NCPU; i++)
			col[i] = 1000;
		snprintf(key, sizeof(key), "%s_n", cls[k]);
		np_pack_kv_u64_array(pk, key, col, FX_NCPU);
	}
	for (int i = 0; i < FX_NCPU; i++)
		col[i] = 100000;
	np_pack_kv_u64_array(pk, "nested_ns", col, FX_NCPU);
	np_pack_kv_u64(pk, "ncpu_online", FX_NCPU);
	np_pack_kv_bool(pk, "rapl", false);
	np_pack_kv_u64(pk, "net_ns", (10000000ull * 3) + 2 * (2000000 + 3000000 + 4000000));
}

static void fx_netrx(struct np_recbuf *rb, unsigned iv)
{
	static const char *const cat[] = { "driver", "gro", "tc", "netfilter", "bridge", "forward",
					   "ip", "tcp_udp", "socket", "xmit", "other" };
	uint64_t samples[11] = { 40, 20, 5, 10, 0, 0, 10, 10, 5, 0, 0 }, est[11];
	for (int k = 0; k < 11; k++)
		est[k] = 30000000ull * samples[k] / 100;   /* share of 30 ms NET_RX */
	uint64_t cpu_cat[2 * 11];
	for (int k = 0; k < 11; k++) {
		cpu_cat[k] = samples[k] / 3;
		cpu_cat[11 + k] = samples[k] - samples[k] / 3;
	}
	msgpack_packer *pk = fx_begin(rb, NP_REC_NETRX_STACKS, 1, 15, iv);
	np_pack_kv_u64(pk, "hz", 997);
	np_pack_kv_u64(pk, "samples", 1994);
	np_pack_kv_u64(pk, "samples_netrx", 100);
	np_pack_kv_u64(pk, "lost", 0);
	np_pack_kv_u64(pk, "unresolved", 0);
	FX_COLS(pk, 11,
		FXS("cat", cat), FXU("cat_samples", samples), FXU("cat_est_ns", est));
	np_pack_kv_u64(pk, "ncpu", FX_NCPU);
	np_pack_kv_u64_array(pk, "cpu_cat_samples", cpu_cat, 22);
	uint64_t top[1] = { 40 };
	np_pack_kv_u64_array(pk, "top_samples", top, 1);
	static const char *const tcat[] = { "driver" };
	fx_strcol(pk, "top_cat", tcat, 1);
	np_pack_str(pk, "top_stack");
	msgpack_pack_array(pk, 1);
	static const char *const frames[] = { "virtnet_poll+0x1c", "__napi_poll+0x2b", "net_rx_action+0x145" };
	msgpack_pack_array(pk, 3);
	for (int f = 0; f < 3; f++)
		np_pack_str(pk, frames[f]);
}

/* Three threads: nginx worker (cgroup 100), curl (cgroup 200), ksoftirqd. */
static void fx_threads(struct np_recbuf *rb, unsigned iv)
{
	uint64_t tid[3] = { 1001, 1002, 15 }, pid[3] = { 1001, 1000, 15 };
	uint64_t cg[3] = { 100, 200, 1 }, oncpu[3] = { 50000000, 20000000, 5000000 };
	uint64_t nv[3] = { 100 + iv, 50, 10 }, niv[3] = { 3, 1, 0 }, ex[3] = { 0, 0, 0 };
	static const char *const comm[] = { "nginx", "curl", "ksoftirqd/0" };
	msgpack_packer *pk = fx_begin(rb, NP_REC_THREADS, 1, 12, iv);
	np_pack_kv_u64(pk, "n", 3);
	FX_COLS(pk, 3,
		FXD("tid_d", tid), FXU("pid", pid), FXS("comm", comm), FXU("cgroup_id", cg),
		FXU("oncpu_ns", oncpu), FXU("nvcsw", nv), FXU("nivcsw", niv), FXU("exited", ex));
	np_pack_kv_bool(pk, "hw", false);

	uint64_t ids[3] = { 100, 200, 1 };
	static const char *const paths[] = { "/system.slice/nginx.service", "/user.slice", "/" };
	pk = np_recbuf_begin(rb, NP_REC_CGROUPS, 1);
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64_array(pk, "id", ids, 3);
	fx_strcol(pk, "path", paths, 3);
}

/* Flow 0: TCP client 10.0.1.1:40000 -> 10.0.1.2:8080, 100000*(iv+1) bytes
 * out, 5000*(iv+1) in, iv retransmissions. Flow 1: UDP 53, 512 B each way. */
static void fx_flows(struct np_recbuf *rb, unsigned iv)
{
	const size_t n = 2;
	uint64_t proto[2] = { 6, 17 }, netns[2] = { 4026531840u, 4026531840u };
	uint64_t lport[2] = { 40000, 50000 }, rport[2] = { 8080, 53 };
	uint64_t tx[2] = { 100000ull * (iv + 1), 512 }, rx[2] = { 5000ull * (iv + 1), 512 };
	uint64_t txp[2] = { 70ull * (iv + 1), 1 }, rxp[2] = { 40ull * (iv + 1), 1 };
	uint64_t re[2] = { iv, 0 }, txt[2], rxt[2];
	for (int i = 0; i < 2; i++) {
		txt[i] = i == 0 ? 100000ull * (iv + 1) * (iv + 2) / 2 : 512ull * (iv + 1);
		rxt[i] = i == 0 ? 5000ull * (iv + 1) * (iv + 2) / 2 : 512ull * (iv + 1);
	}
	uint64_t srtt_n[2] = { 50, 0 }, srtt[2] = { 250 + 10 * iv, 0 }, smin[2] = { 200, 0 };
	uint64_t smax[2] = { 400, 0 }, cwnd[2] = { 10 + iv, 0 };
	uint64_t open[2] = { FX_START_NS + 1000, FX_START_NS + 2000 };
	uint64_t close[2] = { iv == FX_INTERVALS - 1 ? fx_t1(iv) - 1000 : 0, 0 };
	uint64_t pid[2] = { 1000, 1000 }, cg[2] = { 200, 200 };
	static const char *const la[] = { "10.0.1.1", "10.0.1.1" }, *const ra[] = { "10.0.1.2", "10.0.1.53" };
	static const char *const comm[] = { "curl", "curl" };
	msgpack_packer *pk = fx_begin(rb, NP_REC_FLOWS, 1, 29, iv);
	np_pack_kv_u64(pk, "n", n);
	FX_COLS(pk, n,
		FXU("proto", proto), FXU("netns", netns), FXS("laddr", la), FXU("lport", lport),
		FXS("raddr", ra), FXU("rport", rport), FXU("tx_bytes", tx), FXU("rx_bytes", rx),
		FXU("tx_pkts", txp), FXU("rx_pkts", rxp), FXU("retrans", re),
		FXU("retrans_segs", re), FXU("tx_bytes_total", txt), FXU("rx_bytes_total", rxt),
		FXU("srtt_n", srtt_n), FXU("srtt_mean_us", srtt), FXU("srtt_min_us", smin),
		FXU("srtt_max_us", smax), FXU("srtt_us", srtt), FXU("cwnd", cwnd),
		FXU("open_ns", open), FXU("close_ns", close), FXU("pid", pid), FXU("tid", pid),
		FXS("comm", comm), FXU("cgroup_id", cg));
}

/* 7 drops NO_SOCKET (reason 3) in interval 2 only. */
static void fx_drops(struct np_recbuf *rb, unsigned iv)
{
	if (iv != 2)
		return;
	uint64_t netns[1] = { 4026531840u }, proto[1] = { 6 }, sport[1] = { 40001 };
	uint64_t dport[1] = { 9999 }, reason[1] = { 3 }, count[1] = { 7 };
	static const char *const sa[] = { "10.0.1.1" }, *const da[] = { "10.0.1.2" };
	static const char *const rn[] = { "NO_SOCKET" };
	msgpack_packer *pk = fx_begin(rb, NP_REC_DROPS, 1, 13, iv);
	np_pack_kv_u64(pk, "n", 1);
	FX_COLS(pk, 1,
		FXU("netns", netns), FXU("proto", proto), FXS("saddr", sa), FXU("sport", sport),
		FXS("daddr", da), FXU("dport", dport), FXU("reason", reason),
		FXS("reason_name", rn), FXU("count", count));
	np_pack_kv_bool(pk, "tuple_from_packet", true);
}

/* Transaction k (0..99) of interval iv lasts 1 ms + 10 us * k: the same
 * latencies every interval (p50 1.495 ms, p99 1.985 ms by nearest rank). */
static uint64_t fx_txn_lat(unsigned k) { return 1000000ull + 10000ull * k; }

static void fx_txn_stats(struct np_recbuf *rb, unsigned iv)
{
	struct np_sketch sk;
	np_sketch_init(&sk);
	uint64_t sum = 0;
	for (unsigned k = 0; k < FX_TXN_PER_IV; k++) {
		np_sketch_add(&sk, fx_txn_lat(k), 1);
		sum += fx_txn_lat(k);
	}
	uint64_t one[1];
	static const char *const la[] = { "10.0.1.2" }, *const ra[] = { "10.0.1.1" };
	static const char *const meth[] = { "GET" }, *const path[] = { "/api/items" };
	msgpack_packer *pk = fx_begin(rb, NP_REC_TXN_STATS, 1, 24, iv);
	np_pack_kv_u64(pk, "n", 1);
#define FX_ONE(key, v) do { one[0] = (v); np_pack_kv_u64_array(pk, key, one, 1); } while (0)
	FX_ONE("conn", 1);
	FX_ONE("role", 1);   /* server */
	FX_ONE("netns", 4026531840u);
	fx_strcol(pk, "laddr", la, 1);
	FX_ONE("lport", 8080);
	fx_strcol(pk, "raddr", ra, 1);
	FX_ONE("rport", 40000);
	FX_ONE("count", FX_TXN_PER_IV);
	FX_ONE("count_total", FX_TXN_PER_IV * (iv + 1));
	FX_ONE("bytes_req", 100 * FX_TXN_PER_IV);
	FX_ONE("bytes_resp", 1000 * FX_TXN_PER_IV);
	FX_ONE("lat_sum_ns", sum);
	FX_ONE("http_count", FX_TXN_PER_IV);
	FX_ONE("pid", 1001);
	FX_ONE("tid", 1001);
	FX_ONE("close_ns", 0);
	fx_strcol(pk, "method", meth, 1);
	fx_strcol(pk, "path", path, 1);
	FX_ONE("path_hash", 0x1234abcd);
#undef FX_ONE
	np_pack_kv_bool(pk, "redacted", false);
	np_pack_str(pk, "lat");
	msgpack_pack_array(pk, 1);
	np_sketch_pack(pk, &sk);
	np_sketch_free(&sk);
}

static void fx_txn_events(struct np_recbuf *rb, unsigned iv)
{
	enum { N = FX_TXN_PER_IV };
	uint64_t conn[N], role[N], pid[N], start[N], resp[N], dur[N], breq[N], bresp[N], ph[N];
	const char *meth[N], *path[N];
	for (unsigned k = 0; k < N; k++) {
		conn[k] = 1;
		role[k] = 1;
		pid[k] = 1001;
		start[k] = fx_t0(iv) + 5000000ull * k;
		dur[k] = fx_txn_lat(k);
		resp[k] = dur[k] - 50000;
		breq[k] = 100;
		bresp[k] = 1000;
		ph[k] = 0x1234abcd;
		meth[k] = "GET";
		path[k] = "/api/items";
	}
	msgpack_packer *pk = fx_begin(rb, NP_REC_TXN_EVENTS, 1, 16, iv);
	np_pack_kv_u64(pk, "n", N);
	FX_COLS(pk, N,
		FXU("conn", conn), FXU("role", role), FXU("pid", pid), FXU("tid", pid),
		FXD("start_ns_d", start), FXU("resp_off_ns", resp), FXU("dur_ns", dur),
		FXU("bytes_req", breq), FXU("bytes_resp", bresp), FXS("method", meth),
		FXS("path", path), FXU("path_hash", ph));
	np_pack_kv_bool(pk, "redacted", false);
}

/* Exchanges with peer fx-host-b whose clock is 250 us ahead; 40 us each
 * way; the server answers after 5 us. Cristian's estimate gives +250 us. */
#define FX_PEER_OFFSET_NS 250000ull
static void fx_sync(struct np_recbuf *rb, unsigned iv)
{
	enum { N = 10 };
	uint64_t id[N], seq[N], t1[N], t2[N], t3[N], t4[N];
	const char *role[N], *peer[N];
	for (unsigned k = 0; k < N; k++) {
		id[k] = 0xb0b;
		seq[k] = iv * N + k;
		t1[k] = fx_t0(iv) + 100000000ull * k + 17;
		t2[k] = t1[k] + 40000 + FX_PEER_OFFSET_NS + (k % 3) * 1000;   /* queueing jitter */
		t3[k] = t2[k] + 5000;
		t4[k] = t3[k] - FX_PEER_OFFSET_NS + 40000;
		role[k] = "client";
		peer[k] = "fx-host-b";
	}
	msgpack_packer *pk = fx_begin(rb, NP_REC_SYNC, 1, 13, iv);
	np_pack_kv_u64(pk, "self_id", 0xa0a);
	np_pack_kv_u64(pk, "n", N);
	FX_COLS(pk, N,
		FXS("role", role), FXU("peer_id", id), FXS("peer", peer), FXU("seq", seq),
		FXU("t1", t1), FXU("t2", t2), FXU("t3", t3), FXU("t4", t4));
	np_pack_str(pk, "probes");
	msgpack_pack_map(pk, 3);
	np_pack_kv_u64(pk, "sent", N * (iv + 1));
	np_pack_kv_u64(pk, "replies", N * (iv + 1));
	np_pack_kv_u64(pk, "errors", 0);
}

/* 20 TCP segments of 1448 bytes per interval on flow 0, each seen at
 * dev_queue (2), qdisc_enq (4), qdisc_deq (5) 3 us later, dev_xmit (7)
 * 1 us after that. */
#define FX_PKTS 20
static void fx_pktpath(struct np_recbuf *rb, unsigned iv)
{
	struct pktcols_flow fl = { .idx = 0, .family = 4, .proto = 6, .sport = 40000, .dport = 8080,
				   .saddr = { 10, 0, 1, 1 }, .daddr = { 10, 0, 1, 2 } };
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PKT_FLOWS, PKTCOLS_VERSION);
	msgpack_pack_map(pk, PKTCOLS_FLOW_KEYS);
	pktcols_pack_flows(pk, &fl, 1);

	static const uint8_t hooks[4] = { 2, 4, 5, 7 };
	static const uint64_t hook_off[4] = { 0, 500, 3500, 4500 };
	struct pktcols_ev ev[FX_PKTS * 4];
	size_t n = 0;
	for (unsigned p = 0; p < FX_PKTS; p++) {
		uint32_t seq = 1000000u + (iv * FX_PKTS + p) * 1448u;
		for (unsigned h = 0; h < 4; h++) {
			struct pktcols_ev *e = &ev[n++];
			memset(e, 0, sizeof(*e));
			e->ts = fx_t0(iv) + 10000000ull * p + hook_off[h];
			e->flow = 0;
			e->seq = seq;
			e->end_seq = seq + 1448;
			e->ack = 5000u + iv;
			e->tsval = 777000u + iv * 1000 + p;
			e->ifindex = 2;
			e->len = 1448 + 52;
			e->ipid = (uint16_t)(iv * FX_PKTS + p);
			e->cpu = (uint16_t)(p % FX_NCPU);
			e->hook = hooks[h];
			e->tcpflags = 0x18;   /* PSH ACK */
			e->doff = 8;
			e->flags = 0x02;      /* TCP timestamp present */
		}
	}
	pk = fx_begin(rb, NP_REC_PKT_EVENTS, PKTCOLS_VERSION, PKTCOLS_EVENT_KEYS + 4 + 2, iv);
	np_pack_kv_u64(pk, "n", n);
	np_pack_kv_u64(pk, "sample_n", 1);
	np_pack_str(pk, "hooks");
	msgpack_pack_map(pk, 4);
	for (unsigned h = 0; h < 4; h++) {
		np_pack_str(pk, pktcols_hook_name(hooks[h]));
		msgpack_pack_map(pk, 5);
		np_pack_kv_u64(pk, "seen", FX_PKTS);
		np_pack_kv_u64(pk, "sampled_out", 0);
		np_pack_kv_u64(pk, "capped", 0);
		np_pack_kv_u64(pk, "lost", 0);
		np_pack_kv_u64(pk, "emitted", FX_PKTS);
	}
	np_pack_kv_u64(pk, "user_dropped", 0);
	pktcols_pack_events(pk, ev, n);
}

/* perfmon host-stack components of flow 10.0.1.1:40000-10.0.1.2:8080 (intra
 * bucket): EWMA rtt 250 us, rnst1 20 us, cnst 5 us, rnst2 30 us; one cnst
 * alert (value 60 us over a 40 us threshold) in interval 3. */
static const char *const fx_sm_comp[4] = { "rtt", "rnst1", "cnst", "rnst2" };
static const uint64_t fx_sm_ewma[4] = { 250000, 20000, 5000, 30000 };
static const uint64_t fx_sm_thresh[2][4] = { { 500000, 40000, 40000, 60000 },
					     { 900000, 80000, 80000, 120000 } };

static void fx_stackmon(struct np_recbuf *rb, unsigned iv)
{
	msgpack_packer *pk = fx_begin(rb, NP_REC_STACK_EWMA, 1, 8 + 3 * 4, iv);
	np_pack_kv_u64(pk, "n", 1);
	static const char *const pa[] = { "10.0.1.1" }, *const ra[] = { "10.0.1.2" };
	static const char *const bucket[] = { "intra" };
	uint64_t one[1];
	fx_strcol(pk, "paddr", pa, 1);
	one[0] = 40000;
	np_pack_kv_u64_array(pk, "pport", one, 1);
	fx_strcol(pk, "raddr", ra, 1);
	one[0] = 8080;
	np_pack_kv_u64_array(pk, "rport", one, 1);
	fx_strcol(pk, "bucket", bucket, 1);
	for (int c = 0; c < 4; c++) {
		char k[32];
		snprintf(k, sizeof(k), "f_%s_ns", fx_sm_comp[c]);
		one[0] = fx_sm_ewma[c];
		np_pack_kv_u64_array(pk, k, one, 1);
		snprintf(k, sizeof(k), "n_%s", fx_sm_comp[c]);
		one[0] = 70;
		np_pack_kv_u64_array(pk, k, one, 1);
		snprintf(k, sizeof(k), "alerts_%s", fx_sm_comp[c]);
		one[0] = c == 2 && iv == 3 ? 1 : 0;
		np_pack_kv_u64_array(pk, k, one, 1);
	}

	size_t n = iv == 3 ? 1 : 0;
	pk = fx_begin(rb, NP_REC_ALERTS, 1, 18, iv);
	np_pack_kv_u64(pk, "n", n);
	np_pack_kv_u64(pk, "raised", iv >= 3 ? 2 : 0);
	np_pack_kv_u64(pk, "kept", iv >= 3 ? 1 : 0);
	np_pack_kv_u64(pk, "filtered", iv >= 3 ? 1 : 0);
	np_pack_kv_u64(pk, "window_ns", 100000000);
	np_pack_kv_u64(pk, "window_t", 2);
	uint64_t ts[1] = { fx_t0(iv) + 123456789 }, val[1] = { 60000 }, samp[1] = { 61000 };
	uint64_t thr[1] = { fx_sm_thresh[0][2] }, seq[1] = { 1000000 + 1448 * 7 }, ack[1] = { 5003 };
	static const char *const comp[] = { "cnst" }, *const flow[] = { "10.0.1.1:40000-10.0.1.2:8080" };
	FX_COLS(pk, n,
		FXU("ts_ns", ts), FXS("component", comp), FXS("bucket", bucket),
		FXU("value_ns", val), FXU("sample_ns", samp), FXU("threshold_ns", thr),
		FXU("seq", seq), FXU("ack", ack), FXS("flow", flow));
	np_pack_str(pk, "thresholds");
	msgpack_pack_map(pk, 2);
	static const char *const bname[2] = { "intra", "inter" };
	for (int b = 0; b < 2; b++) {
		np_pack_str(pk, bname[b]);
		msgpack_pack_map(pk, 4);
		for (int c = 0; c < 4; c++)
			np_pack_kv_u64(pk, fx_sm_comp[c], fx_sm_thresh[b][c]);
	}
}

/* The baseline profile the thresholds came from (scale X = 2 of p99). */
static void fx_baseline(struct np_recbuf *rb)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_BASELINE, 1);
	msgpack_pack_map(pk, 3);
	np_pack_kv_str(pk, "stat", "p99");
	np_pack_kv_f64(pk, "ewma_alpha", 0.125);
	np_pack_str(pk, "buckets");
	msgpack_pack_map(pk, 2);
	static const char *const bname[2] = { "intra", "inter" };
	for (int b = 0; b < 2; b++) {
		np_pack_str(pk, bname[b]);
		msgpack_pack_map(pk, 8);
		for (int c = 0; c < 4; c++) {
			char k[32];
			snprintf(k, sizeof(k), "%s_p99_ns", fx_sm_comp[c]);
			np_pack_kv_u64(pk, k, fx_sm_thresh[b][c] / 2);
			snprintf(k, sizeof(k), "%s_n", fx_sm_comp[c]);
			np_pack_kv_u64(pk, k, 1000);
		}
	}
}

static const char *const fx_family_names[] = { "netcpu", "threads", "flows", "txn", "clocksync", "pktpath", "stackmon" };
#define FX_NFAM (sizeof(fx_family_names) / sizeof(fx_family_names[0]))

/* Lost events: pktpath loses 3 events in interval 4, nothing else. */
static uint64_t fx_lost(unsigned fam, unsigned iv) { return fam == 5 && iv == 4 ? 3 : 0; }

static void fx_lost_rec(struct np_recbuf *rb, unsigned iv)
{
	uint64_t d[FX_NFAM], t[FX_NFAM];
	for (unsigned f = 0; f < FX_NFAM; f++) {
		d[f] = fx_lost(f, iv);
		t[f] = 0;
		for (unsigned j = 0; j <= iv; j++)
			t[f] += fx_lost(f, j);
	}
	msgpack_packer *pk = fx_begin(rb, NP_REC_LOST, 1, 5, iv);
	FX_COLS(pk, FX_NFAM,
		FXS("family", fx_family_names), FXU("lost", d), FXU("lost_total", t));
}

/* The families, in the order nprec snapshots them. Add new ones here. */
static void (*const fx_families[])(struct np_recbuf *, unsigned) = {
	fx_interval, fx_netcpu, fx_netrx, fx_threads, fx_flows, fx_drops,
	fx_txn_stats, fx_txn_events, fx_sync, fx_pktpath, fx_stackmon, fx_lost_rec,
};

static void fx_end(struct np_recbuf *rb)
{
	uint64_t ev[FX_NFAM] = { 10, 15, 10, 5 * FX_TXN_PER_IV, 50, 5 * 4 * FX_PKTS, 1 };
	uint64_t lost[FX_NFAM] = { 0, 0, 0, 0, 0, 3, 0 }, tot = 0;
	for (unsigned f = 0; f < FX_NFAM; f++)
		tot += ev[f];
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_END, 1);
	msgpack_pack_map(pk, 10);
	np_pack_kv_u64(pk, "t_ns", fx_t1(FX_INTERVALS - 1));
	np_pack_kv_u64(pk, "duration_ns", FX_INTERVALS * FX_INTERVAL_NS);
	np_pack_kv_u64(pk, "intervals", FX_INTERVALS);
	np_pack_kv_str(pk, "reason", "duration");
	np_pack_kv_u64(pk, "events_total", tot);
	np_pack_kv_u64(pk, "lost_total", 3);
	np_pack_kv_u64(pk, "self_cpu_ns", 2000000ull * FX_INTERVALS);
	FX_COLS(pk, FX_NFAM,
		FXS("family", fx_family_names), FXU("events", ev), FXU("lost", lost));
}

/* ---- files ---- */

struct fx_out {
	struct np_writer *w;
	struct np_recbuf rb;
	const char *path;
	int err;
};

static int fx_open(struct fx_out *o, const char *path, enum np_file_kind kind)
{
	o->path = path;
	o->err = 0;
	np_recbuf_init(&o->rb);
	unlink(path);
	int err = np_writer_open(&o->w, path, kind, NULL);
	if (err)
		fprintf(stderr, "mkfixtures: cannot create %s: %s\n", path, strerror(-err));
	return err;
}

static void fx_commit(struct fx_out *o)
{
	int err = np_writer_commit(o->w, &o->rb);
	if (err && !o->err)
		o->err = err;
}

static int fx_close(struct fx_out *o)
{
	int err = np_writer_close(o->w);
	np_recbuf_free(&o->rb);
	if (!err)
		err = o->err;
	if (err)
		fprintf(stderr, "mkfixtures: writing %s: %s\n", o->path, strerror(-err));
	return err;
}

static int fx_recording(const char *path)
{
	struct fx_out o;
	if (fx_open(&o, path, NP_KIND_RECORDING))
		return -1;
	fx_header(&o.rb, "fx-host-a");
	fx_baseline(&o.rb);
	fx_commit(&o);
	for (unsigned iv = 0; iv < FX_INTERVALS; iv++) {
		for (size_t f = 0; f < sizeof(fx_families) / sizeof(fx_families[0]); f++)
			fx_families[f](&o.rb, iv);
		fx_commit(&o);
	}
	fx_end(&o.rb);
	fx_commit(&o);
	return fx_close(&o);
}

static int fx_analysis(const char *path)
{
	struct fx_out o;
	if (fx_open(&o, path, NP_KIND_ANALYSIS))
		return -1;
	msgpack_packer *pk = np_recbuf_begin(&o.rb, NP_REC_ANA_META, 1);
	msgpack_pack_map(pk, 5);
	np_pack_kv_str(pk, "producer", "mkfixtures");
	static const char *const inputs[] = { "rec-basic.npr" }, *const hosts[] = { "fx-host-a" };
	fx_strcol(pk, "inputs", inputs, 1);
	fx_strcol(pk, "hosts", hosts, 1);
	np_pack_kv_str(pk, "reference_host", "fx-host-a");
	np_pack_str(pk, "warnings");
	msgpack_pack_array(pk, 0);

	struct np_table *t = TABLE("flows", "Flows", 1,
		{ "flow", "str", "local > remote" }, { "tx_bytes", "bytes", NULL },
		{ "rx_bytes", "bytes", NULL }, { "retrans", "count", NULL },
		{ "throughput_bps", "bps", "mean over the recording" });
	size_t r = np_table_row(t);
	np_table_set_str(t, r, 0, "10.0.1.1:40000>10.0.1.2:8080");
	np_table_set_u64(t, r, 1, 1500000);
	np_table_set_u64(t, r, 2, 75000);
	np_table_set_u64(t, r, 3, 10);
	np_table_set_f64(t, r, 4, 1500000 * 8 / 5.0);
	r = np_table_row(t);
	np_table_set_str(t, r, 0, "10.0.1.1:50000>10.0.1.53:53");
	np_table_set_u64(t, r, 1, 2560);
	np_table_set_u64(t, r, 2, 2560);
	np_table_set_u64(t, r, 3, 0);
	np_table_set_f64(t, r, 4, 2560 * 8 / 5.0);
	np_table_pack(&o.rb, t);
	np_table_free(t);

	struct np_sketch sk;
	np_sketch_init(&sk);
	for (unsigned iv = 0; iv < FX_INTERVALS; iv++)
		for (unsigned k = 0; k < FX_TXN_PER_IV; k++)
			np_sketch_add(&sk, fx_txn_lat(k), 1);
	t = np_table_new("txn", "Transactions", 1);
	np_table_col(t, "endpoint", "str", NULL);
	np_table_col(t, "count", "count", NULL);
	np_table_col(t, "p50_ns", "ns", NULL);
	np_table_col(t, "p99_ns", "ns", NULL);
	r = np_table_row(t);
	np_table_set_str(t, r, 0, "10.0.1.2:8080 GET /api/items");
	np_table_set_u64(t, r, 1, sk.n);
	np_table_set_u64(t, r, 2, np_sketch_quantile(&sk, 0.5));
	np_table_set_u64(t, r, 3, np_sketch_quantile(&sk, 0.99));
	np_table_pack(&o.rb, t);
	np_table_free(t);
	np_sketchrec_pack(&o.rb, "txn", "10.0.1.2:8080 GET /api/items", "latency", "ns", &sk);
	np_sketch_free(&sk);

	uint64_t ts[FX_INTERVALS];
	double bps[FX_INTERVALS];
	for (unsigned iv = 0; iv < FX_INTERVALS; iv++) {
		ts[iv] = fx_t0(iv);
		bps[iv] = 100000.0 * (iv + 1) * 8;
	}
	np_series_pack(&o.rb, "flows", "10.0.1.1:40000>10.0.1.2:8080", "throughput_bps", "bps",
		       ts, bps, FX_INTERVALS);
	np_finding_pack(&o.rb, 1, "10 retransmissions on 10.0.1.1:40000>10.0.1.2:8080", "flows",
			"10.0.1.1:40000>10.0.1.2:8080", "retrans", 10);
	np_finding_pack(&o.rb, 0, "3 packet events lost (pktpath, interval 4)", NULL, NULL, NULL, 3);
	fx_commit(&o);
	return fx_close(&o);
}

/* ---- damaged copies and fuzz seeds ---- */

static uint8_t *fx_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		buf = n > 0 ? malloc((size_t)n) : NULL;
		if (buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static int fx_spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len) {
		fprintf(stderr, "mkfixtures: cannot write %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* Start offsets of the chunks of a well-formed file (walking the headers). */
static size_t fx_chunks(const uint8_t *d, size_t len, size_t *off, size_t max)
{
	size_t pos = NP_FILE_HDR_LEN, n = 0;
	while (pos + NP_CHUNK_HDR_LEN <= len && n < max) {
		uint32_t clen = d[pos + 8] | d[pos + 9] << 8 | d[pos + 10] << 16 | (uint32_t)d[pos + 11] << 24;
		off[n++] = pos;
		pos += NP_CHUNK_HDR_LEN + clen + NP_CHUNK_TRL_LEN;
	}
	return n;
}

static int fx_damaged(const char *dir, const char *basic)
{
	char path[4096];
	size_t len, off[64];
	uint8_t *d = fx_slurp(basic, &len);
	if (!d)
		return -1;
	size_t n = fx_chunks(d, len, off, 64);
	int rc = 0;
	/* Cut in the middle of the last chunk (the END record): what a crash
	 * during the final write leaves. */
	snprintf(path, sizeof(path), "%s/rec-truncated.npr", dir);
	rc |= fx_spit(path, d, off[n - 1] + (len - off[n - 1]) / 2);
	/* A flipped payload byte in chunk 3 (interval 1) and 37 bytes of
	 * garbage before chunk 5 (interval 3). */
	uint8_t *c = malloc(len + 37);
	memcpy(c, d, off[4]);
	memset(c + off[4], 0x5a, 37);
	memcpy(c + off[4] + 37, d + off[4], len - off[4]);
	c[off[2] + NP_CHUNK_HDR_LEN + 10] ^= 0x01;
	snprintf(path, sizeof(path), "%s/rec-corrupt.npr", dir);
	rc |= fx_spit(path, c, len + 37);
	free(c);
	free(d);
	return rc;
}

/* Seeds for fuzz_reader: the small files are copied by run_fuzz.sh; here
 * one record of each type as a bare msgpack payload (the fuzzer's third mode
 * wraps its input into a valid chunk, so these reach the record decoders). */
static int fx_fuzz_seeds(const char *dir, const char *const *files, size_t nfiles)
{
	char path[4096];
	bool seen[256] = { false };
	int rc = 0;
	snprintf(path, sizeof(path), "%s/fuzz", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fuzz/reader", dir);
	mkdir(path, 0755);
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (size_t i = 0; i < nfiles; i++) {
		struct np_reader *r;
		if (np_reader_open(&r, files[i], NULL, NULL) != 0)
			return -1;
		struct np_record rec;
		while (np_reader_next(r, &rec) == 1) {
			if (rec.type >= 256 || seen[rec.type])
				continue;
			seen[rec.type] = true;
			msgpack_sbuffer_clear(&sb);
			msgpack_pack_array(&pk, 3);
			msgpack_pack_uint16(&pk, rec.type);
			msgpack_pack_uint16(&pk, rec.version);
			msgpack_pack_object(&pk, *rec.body);
			/* libFuzzer's default max_len is 4096: larger seeds are cut */
			snprintf(path, sizeof(path), "%s/fuzz/reader/rec-%s.bin", dir,
				 np_rec_type_name(rec.type) ? np_rec_type_name(rec.type) : "unknown");
			rc |= fx_spit(path, sb.data, sb.size);
		}
		np_reader_close(r);
	}
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkfixtures DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	char rec[4096], ana[4096];
	mkdir(dir, 0755);
	snprintf(rec, sizeof(rec), "%s/rec-basic.npr", dir);
	snprintf(ana, sizeof(ana), "%s/ana-basic.npa", dir);
	if (fx_recording(rec) || fx_analysis(ana) || fx_damaged(dir, rec))
		return 1;
	const char *const files[] = { rec, ana };
	if (fx_fuzz_seeds(dir, files, 2))
		return 1;
	return 0;
}
