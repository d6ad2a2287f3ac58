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
# a paced transfer, CPUs mostly idle).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
T=${BENCH_T:-5}
TMP=$(mktemp -d /tmp/np-bench-progcost.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns del nc-pc-a 2>/dev/null; ip netns del nc-pc-b 2>/dev/null
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
ip netns add nc-pc-a && ip netns add nc-pc-b || exit 1
ip link add ncpa0 netns nc-pc-a type veth peer name ncpb0 netns nc-pc-b
ip -n nc-pc-a addr add 10.78.8.1/24 dev ncpa0; ip -n nc-pc-b addr add 10.78.8.2/24 dev ncpb0
ip -n nc-pc-a link set ncpa0 up; ip -n nc-pc-b link set ncpb0 up
ip netns exec nc-pc-b iperf3 -s -B 10.78.8.2 -p 5401 >/dev/null 2>&1 & PIDS+=($!)
# measure BUILD: one recording over one transfer, a line per program
measure() {
	local build=$1 P IDS
	rm -f "$TMP/pc.npr"
	# shellcheck disable=SC2086
	"$build/nprec" -q --no-flows --no-txn ${NC_ARGS:-} -o "$TMP/pc.npr" & P=$!; PIDS+=($P)
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
	ip netns exec nc-pc-a iperf3 -c 10.78.8.2 -p 5401 -t "$T" ${IPERF_ARGS:-} >/dev/null
	T1=$(date +%s%N)
	snap > "$TMP/s1"
	kill -INT "$P"; wait "$P"
	echo "== $build"
	printf "%-18s %10s %8s %12s\n" program runs/s ns/run "CPU ms/s"
	join "$TMP/s0" "$TMP/s1" | awk -v d="$(( (T1 - T0) ))" '
		{ dt = $4 - $2; dc = $5 - $3
		  if (dc > 0) printf "%-18s %10.0f %8.0f %12.2f\n", $1, dc / d * 1e9, dt / dc, dt / d * 1e3 }'
}
for _ in $(seq "${ROUNDS:-1}"); do
	measure "$NP_BUILD"
	[ -n "${NPREC_ALT:-}" ] && measure "$NPREC_ALT"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
