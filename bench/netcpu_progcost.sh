#!/bin/bash
# Per-program kernel cost of the netcpu and threads families during an
# iperf3 transfer over veth: runs/s, ns per run and CPU ms per second of
# each BPF program, from the kernel's BPF run-time statistics
# (on while this script holds a BPF_ENABLE_STATS fd: refcounted, so other
# measurements on the machine are not switched off; the statistics
# themselves add two clock reads per run).
# Not a test: it prints figures (docs/BENCHMARKS.md, section "netcpu").
# Env: BENCH_T (seconds of transfer, 5), NP_BUILD (build/), NC_ARGS (more
# nprec options, e.g. "--sample-hz 10000"), NPREC_ALT (another build dir:
# measured after NP_BUILD on the same veth pair, ROUNDS times each in
# turn, 1 by default), IPERF_ARGS (more iperf3 client options, e.g. "-b 200M":
# a paced transfer, CPUs mostly idle), NPREC_ALT_ENV (environment of the
# NPREC_ALT runs, e.g. NPREC_TEST_SOCK_SAMPLER=local: NPREC_ALT=$NP_BUILD
# then compares the remote socket sampler with the local one in one
# build), BENCH_NS (prefix of the namespaces and veth ends, nc-pc),
# BENCH_NET (the veth pair's /24, 10.78.8).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
T=${BENCH_T:-5}
BNS=${BENCH_NS:-nc-pc} NET=${BENCH_NET:-10.78.8}
NSA=$BNS-a NSB=$BNS-b VA=${BNS}a0 VB=${BNS}b0
TMP=$(mktemp -d /tmp/np-bench-progcost.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns del "$NSA" 2>/dev/null; ip netns del "$NSB" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$NP_BUILD/nprec" ] || { echo "$NP_BUILD/nprec not built" >&2; exit 1; }

# bpf(BPF_ENABLE_STATS, BPF_STATS_RUN_TIME): stats on while the fd is open
python3 -c '
import ctypes, os, sys, time
attr = ctypes.create_string_buffer(128)          # union bpf_attr, enable_stats.type = 0
fd = ctypes.CDLL(None, use_errno=True).syscall(321, 32, attr, 128)
if fd < 0:
    sys.exit("BPF_ENABLE_STATS: " + os.strerror(ctypes.get_errno()))
open(sys.argv[1], "w").close()
while os.getppid() != 1 and os.path.exists(sys.argv[1]):
    time.sleep(0.2)
' "$TMP/stats.on" & PIDS+=($!)
for _ in $(seq 50); do [ -e "$TMP/stats.on" ] && break; sleep 0.1; done
[ -e "$TMP/stats.on" ] || { echo "cannot enable BPF statistics" >&2; exit 1; }
ip netns add "$NSA" && ip netns add "$NSB" || exit 1
ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB"
ip -n "$NSA" addr add "$NET.1/24" dev "$VA"; ip -n "$NSB" addr add "$NET.2/24" dev "$VB"
ip -n "$NSA" link set "$VA" up; ip -n "$NSB" link set "$VB" up
ip netns exec "$NSB" iperf3 -s -B "$NET.2" -p 5401 >/dev/null 2>&1 & PIDS+=($!)
# measure BUILD: one recording over one transfer, a line per program
measure() {
	local build=$1 P IDS
	rm -f "$TMP/pc.npr"
	# shellcheck disable=SC2086
	env ${2:-} "$build/nprec" -q --no-flows --no-txn ${NC_ARGS:-} -o "$TMP/pc.npr" & P=$!; PIDS+=($P)
	for _ in $(seq 100); do [ -s "$TMP/pc.npr" ] && break; sleep 0.1; done
	sleep 1
	# only this nprec's programs (other recorders may run on the machine):
	# their ids are in the fdinfo of its open program fds
	IDS=$(grep -h '^prog_id:' /proc/"$P"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u | tr '\n' ' ')
	snap() {
		bpftool prog show | awk -v ids=" $IDS" '/ name (nc_|nt_)/ {
			id = $1; sub(":", "", id); if (index(ids, " " id " ") == 0) next
			n = $4; t = 0; c = 0
			for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
			print n, t, c }' | sort
	}
	snap > "$TMP/s0"
	T0=$(date +%s%N)
	# shellcheck disable=SC2086
	ip netns exec "$NSA" iperf3 -c "$NET.2" -p 5401 -t "$T" ${IPERF_ARGS:-} >/dev/null
	T1=$(date +%s%N)
	snap > "$TMP/s1"
	kill -INT "$P"; wait "$P"
	echo "== $build ${2:-}"
	printf "%-18s %10s %8s %12s\n" program runs/s ns/run "CPU ms/s"
	join "$TMP/s0" "$TMP/s1" | awk -v d="$(( (T1 - T0) ))" '
		{ dt = $4 - $2; dc = $5 - $3
		  if (dc > 0) printf "%-18s %10.0f %8.0f %12.2f\n", $1, dc / d * 1e9, dt / dc, dt / d * 1e3 }'
}
for _ in $(seq "${ROUNDS:-1}"); do
	measure "$NP_BUILD"
	[ -n "${NPREC_ALT:-}" ] && measure "$NPREC_ALT" "${NPREC_ALT_ENV:-}"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
