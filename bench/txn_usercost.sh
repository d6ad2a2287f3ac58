#!/bin/bash
# User-space cost of the transactions family: nprec --no-flows --no-netcpu
# --no-threads (-I 1) records while wrk -c8 saturates nginx over veth
# between two namespaces (the setup of bench/record.sh). Prints nprec's CPU
# per interval (INTERVAL self_cpu_ns differences: median and max), the
# transactions per interval, and wrk's req/s and p99; with PERF=1 also the
# top symbols of `perf record -g` on nprec. Not a test: it prints figures.
# Env: NP_BUILD (build/), BENCH_T (seconds of load, 6), BENCH_NS (tx-uc), PERF.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
T=${BENCH_T:-6}
NSA=${BENCH_NS:-tx-uc}-a NSB=${BENCH_NS:-tx-uc}-b
IPA=10.77.11.1 IPB=10.77.11.2
TMP=$(mktemp -d /tmp/np-bench-txuc.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
[ -x "$NP_BUILD/nprec" ] || { echo "$NP_BUILD/nprec not built" >&2; exit 1; }

txn_setup_nginx txuch
sleep 1

"$NP_BUILD/nprec" -q --no-flows --no-netcpu --no-threads -I 1 -o "$TMP/u.npr" & P=$!; PIDS+=($P)
for _ in $(seq 100); do [ -s "$TMP/u.npr" ] && break; sleep 0.1; done
sleep 1
if [ -n "${PERF:-}" ]; then
	perf record -q -g -p $P -o "$TMP/perf.data" -- sleep "$T" >/dev/null 2>&1 & PF=$!
fi
ip netns exec $NSA wrk -t1 -c8 -d"${T}s" --latency "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
[ -n "${PERF:-}" ] && wait $PF
sleep 1.2
kill -INT $P; wait $P 2>/dev/null
echo "build: $NP_BUILD ($(cd "$ROOT" && git log --oneline -1 | cut -c1-60))"
awk '/^Requests\/sec/ {r=$2} $1=="99%" {p=$2} END {printf "wrk: %.0f req/s, p99 %s\n", r, p}' "$TMP/wrk.out"
"$NP_BUILD/npreport" dump "$TMP/u.npr" 2>/dev/null | python3 -c '
import json, sys, statistics as st
cpu, ev = [], []
for l in sys.stdin:
    r = json.loads(l); b = r.get("body", {})
    if r["type"] == "interval": cpu.append(b["self_cpu_ns"])
    if r["type"] == "txn_events": ev.append(b["n"])
d = [(b - a) / 1e6 for a, b in zip(cpu, cpu[1:])]
busy = [x for x, n in zip(d, ev[1:]) if n > 1000]
print("intervals %d, transactions/interval median %.0f max %d" % (len(cpu), st.median(ev) if ev else 0, max(ev) if ev else 0))
if busy:
    print("nprec CPU per loaded interval: median %.1f ms, max %.1f ms (%d intervals)" % (st.median(busy), max(busy), len(busy)))
'
if [ -n "${PERF:-}" ]; then
	perf report -i "$TMP/perf.data" --no-children --stdio --percent-limit 2 -g none 2>/dev/null |
		grep -v '^#' | grep -v '^$' | head -25
	echo "inclusive (children): snapshot burst vs per-tick drain vs chunk compression"
	perf report -i "$TMP/perf.data" --children --stdio -g none 2>/dev/null |
		grep -E ' (rc_txn_snapshot|rc_txn_drain|rc_txn_collect_stats|rc_txn_collect_sketch|rc_txn_pack_events|rc_txn_on_event|np_chunk_build|rc_interval)$'
fi
