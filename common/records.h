/* Record types of the np container. A record is [type, version, body-map];
 * bodies are msgpack maps with short string keys. Readers skip unknown types
 * and unknown keys; a reader that sees a higher version than it knows reads
 * the keys it knows. The body schema of every type is in docs/FORMAT.md.
 *
 * Conventions for every body:
 *  - times are u64 ns of CLOCK_MONOTONIC of the recording host ("mono ns"),
 *    the clock bpf_ktime_get_ns() uses; keys ending in _ns are durations or
 *    mono timestamps, _rt_ns CLOCK_REALTIME, _bt_ns CLOCK_BOOTTIME;
 *  - byte counts end in _bytes or are named bytes/len;
 *  - batches of many small items are columnar: one array per field, all of
 *    the same length n, integer columns delta-encoded where the key ends in
 *    "_d" (first element absolute, then differences), so zstd sees runs.
 */
#ifndef NP_RECORDS_H
#define NP_RECORDS_H

enum np_rec_type {
	/* ---- every file ---- */
	NP_REC_HEADER        = 1,  /* host identity, clocks, cmdline, config, probes */
	NP_REC_PROBES        = 2,  /* probe status list (also inside HEADER) */
	NP_REC_INTERVAL      = 3,  /* start of a snapshot interval: clocks, self cost */
	NP_REC_END           = 4,  /* final totals, written on clean stop */
	NP_REC_LOST          = 5,  /* lost-event counters per family (per interval) */
	NP_REC_TRIGGER       = 6,  /* flight-recorder dump: which trigger, when */
	NP_REC_INDEX         = 7,  /* chunk index, the last chunk of a finished file (chunkindex.h) */
	NP_REC_PROGS         = 8,  /* per BPF program: runs the kernel skipped (per interval) */

	/* ---- recorder families (issue 3) ---- */
	NP_REC_NETCPU        = 10, /* per-CPU ns in NET_RX/NET_TX/sock send/recv */
	NP_REC_NETRX_STACKS  = 11, /* NET_RX breakdown from stack sampling */
	NP_REC_THREADS       = 12, /* per-thread CPU, ctx switches, counters, cgroup */
	NP_REC_CGROUPS       = 13, /* cgroup id -> path */
	NP_REC_FLOWS         = 14, /* per flow bytes/pkts/retrans/srtt/cwnd */
	NP_REC_DROPS         = 15, /* drops by flow and kernel drop reason */
	NP_REC_TXN_STATS     = 16, /* per connection transaction aggregates + sketch */
	NP_REC_TXN_EVENTS    = 17, /* batch of per-transaction events */
	NP_REC_POWER         = 18, /* RAPL energy and attribution, when available */

	/* ---- packet paths, host stack, clock sync (issue 4) ---- */
	NP_REC_PKT_EVENTS    = 20, /* batch of packet-hook events */
	NP_REC_PKT_FLOWS     = 21, /* flow table for PKT_EVENTS (flow index -> tuple) */
	NP_REC_STACK_EWMA    = 22, /* perfmon per-flow EWMA of RTT/RNST1/CNST/RNST2 */
	NP_REC_ALERTS        = 23, /* perfmon alerts that survived the window filter */
	NP_REC_SYNC          = 24, /* clock sync exchanges T1..T4 */
	NP_REC_BASELINE      = 25, /* perfmon baseline profile */

	/* ---- analysis files (issues 6-8) ---- */
	NP_REC_ANA_META      = 64, /* inputs, hosts, reference host, warnings */
	NP_REC_ANA_TABLE     = 65, /* a named table: typed columns + rows */
	NP_REC_ANA_SERIES    = 66, /* per-interval samples of one metric of one row */
	NP_REC_ANA_SKETCH    = 67, /* a latency distribution (np_sketch) of one row */
	NP_REC_ANA_FINDING   = 68, /* one sentence finding with severity */
};

const char *np_rec_type_name(int type);   /* "header", "flows", ...; NULL if unknown */

#endif
