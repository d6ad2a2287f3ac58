#!/bin/bash
# Overhead of the netcpu and threads families alone (other families off) on
# TCP throughput over veth between two namespaces, and what NET_RX stack
# sampling costs at 1 kHz and 10 kHz against sampling off. Modes are
# interleaved over REPS repetitions; the median per mode is printed. Then
# the CPU cost per syscall (tests/tools/nc_sysloop, thread CPU clock, best
# of 5) with no recorder and with netcpu alone.
# Not a test: it prints figures (docs/BENCHMARKS.md, section "netcpu").
# Env: BENCH_T (seconds per measurement, 4), REPS (3), NP_BUILD (build/).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec
T=${BENCH_T:-4}
REPS=${REPS:-3}
NSA=nc-bench-a NSB=nc-bench-b
TMP=$(mktemp -d /tmp/np-bench-netcpu.XXXXXX)
PIDS=()

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns del $NSA 2>/dev/null; ip netns del $NSB 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { echo "bench/netcpu.sh: needs root" >&2; exit 1; }
[ -x "$NPREC" ] || { echo "bench/netcpu.sh: $NPREC not built" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "bench/netcpu.sh: iperf3 missing" >&2; exit 1; }

ip netns del $NSA 2>/dev/null; ip netns del $NSB 2>/dev/null
ip netns add $NSA && ip netns add $NSB || exit 1
ip link add ncba0 netns $NSA type veth peer name ncbb0 netns $NSB
ip -n $NSA addr add 10.78.9.1/24 dev ncba0; ip -n $NSB addr add 10.78.9.2/24 dev ncbb0
for n in $NSA $NSB; do ip -n $n link set lo up; done
ip -n $NSA link set ncba0 up; ip -n $NSB link set ncbb0 up
ip netns exec $NSB iperf3 -s -B 10.78.9.2 -p 5301 >/dev/null 2>&1 & PIDS+=($!)
sleep 0.5

ONLY="--no-flows --no-txn"
declare -A ARGS=(
	[none]=""
	[netcpu_hz0]="$ONLY --no-threads --sample-hz 0"
	[netcpu_1k]="$ONLY --no-threads --sample-hz 1000"
	[netcpu_10k]="$ONLY --no-threads --sample-hz 10000"
	[threads]="$ONLY --no-netcpu"
	[both_1k]="$ONLY --sample-hz 1000"
)
MODES=(none netcpu_hz0 netcpu_1k netcpu_10k threads both_1k)

# run MODE: prints Gbit/s of one iperf3 run under MODE
run() {
	local rp=""
	if [ "$1" != none ]; then
		# shellcheck disable=SC2086
		"$NPREC" -q ${ARGS[$1]} -o "$TMP/$1.npr" & rp=$!
		for _ in $(seq 100); do [ -s "$TMP/$1.npr" ] && break; sleep 0.1; done
		sleep 0.3
	fi
	ip netns exec $NSA iperf3 -c 10.78.9.2 -p 5301 -t "$T" -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))'
	if [ -n "$rp" ]; then kill -INT "$rp"; wait "$rp"; rm -f "$TMP/$1.npr"; fi
}

declare -A RES
for r in $(seq "$REPS"); do
	for m in "${MODES[@]}"; do
		RES[$m]+="$(run "$m") "
		echo "rep $r $m: ${RES[$m]}" >&2
	done
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
BASE=$(median "${RES[none]}")
printf "%-12s %10s %9s   %s\n" mode Gbit/s vs_none "nprec args"
for m in "${MODES[@]}"; do
	v=$(median "${RES[$m]}")
	printf "%-12s %10s %8.1f%%   %s\n" "$m" "$v" "$(awk -v a="$v" -v b="$BASE" 'BEGIN{print (a-b)/b*100}')" "${ARGS[$m]}"
done

# per-syscall cost: getppid (filtered out at once) and socket read/write
SYSLOOP=$NP_BUILD/tools/nc_sysloop
if [ -x "$SYSLOOP" ]; then
	best() { for _ in 1 2 3 4 5; do taskset -c 1 "$SYSLOOP" 1000000; done | sort -t= -k2 -g | head -1; }
	echo
	echo "syscall cost, none:       $(best)"
	"$NPREC" -q ${ARGS[netcpu_hz0]} -o "$TMP/sys.npr" & rp=$!
	for _ in $(seq 100); do [ -s "$TMP/sys.npr" ] && break; sleep 0.1; done
	echo "syscall cost, netcpu:     $(best)"
	kill -INT "$rp"; wait "$rp"
fi
echo "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg)"
