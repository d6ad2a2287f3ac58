#!/bin/bash
# Packet-path tracing cost (part of make bench-record): iperf3 between two
# namespaces with no recorder, with `nprec --packets` (every packet) and with
# `--packets --sample 1/16`, one nprec per namespace (--netns, TC on the veth
# end). Prints per mode: TCP throughput and its loss against "none", packet-
# hook events recorded per second, bytes per event in the file (zstd'ed
# recording of the pktpath family alone, header included), lost events, and
# the run time of the recorders' BPF programs (kernel.bpf_stats_enabled):
# mean ns per program run and the CPU share they took, figures the load of
# the machine does not blur the way it blurs throughput.
# Modes are interleaved over REPS repetitions; medians are printed.
# Env: BENCH_T (seconds per run, 5), REPS (3), NP_BUILD (build/), BENCH_NS
# (namespace prefix, pk-bench).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec
PM=$NP_BUILD/tools/pktmatch
T=${BENCH_T:-5}
REPS=${REPS:-3}
NSA=${BENCH_NS:-pk-bench}-a NSB=${BENCH_NS:-pk-bench}-b IPA=10.77.8.1 IPB=10.77.8.2
TMP=$(mktemp -d /tmp/np-bench-pkt.XXXXXX)
PIDS=()
BPF_STATS_ORIG=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
. "$ROOT/bench/txn_lib.sh"   # txn_traps (txn_cleanup on exit), txn_setup_veth
txn_traps
[ "$(id -u)" -eq 0 ] || { echo "bench-pktpath: needs root" >&2; exit 1; }
[ -x "$NPREC" ] && [ -x "$PM" ] || { echo "bench-pktpath: nprec or tools/pktmatch not built" >&2; exit 1; }

txn_setup_veth pk-b
ip netns exec $NSB iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null
sleep 1

# bpf_runtime PID...: "runs ns" summed over the BPF programs the processes hold
bpf_runtime() {
	python3 "$ROOT/bench/recprogs.py" --sum "$@" | awk '{print $3, $1}'
}

# *_small: 128-byte writes with TCP_NODELAY, for a high packet (event) rate.
MODES=(none full s16 none_small full_small)
measure() {   # MODE REP -> "mode gbps events_per_s bytes_per_event lost"
	local mode=$1 out=$TMP/$1.$2 opt=() rp=()
	local ip=()
	case $mode in full|full_small) opt=(--packets);; s16) opt=(--packets --sample 1/16);; esac
	case $mode in *_small) ip=(-N -l 128);; esac
	if [ "${mode%_small}" != none ]; then
		for side in a b; do
			local ns=$NSA if=pk-ba0; [ $side = b ] && ns=$NSB if=pk-bb0
			"$NPREC" -q -o "$out.$side.npr" --no-flows --no-txn --no-netcpu --no-threads \
				--netns $ns -i $if --port 5201 "${opt[@]}" 2>>"$TMP/err" & rp+=($!); PIDS+=($!)
		done
		for _ in $(seq 50); do [ -s "$out.a.npr" ] && [ -s "$out.b.npr" ] && break; sleep 0.1; done
		sleep 0.5
	fi
	local gbps
	gbps=$(ip netns exec $NSA iperf3 -c $IPB -p 5201 -t "$T" "${ip[@]}" -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))' 2>/dev/null)
	local ev=0 bytes=0 lost=0 runs=0 rns=0
	if [ "${mode%_small}" != none ]; then
		read -r runs rns < <(bpf_runtime "${rp[@]}")
		kill -INT "${rp[@]}"; wait "${rp[@]}" 2>/dev/null
		for side in a b; do
			"$PM" stats "$out.$side.npr" > "$out.$side.txt"
			ev=$((ev + $(awk -F= '$1=="events"{print $2}' "$out.$side.txt")))
			lost=$((lost + $(awk -F= '$1=="lost"{print $2}' "$out.$side.txt")))
			bytes=$((bytes + $(stat -c %s "$out.$side.npr")))
		done
	fi
	awk -v m=$mode -v g=${gbps:-0} -v e=$ev -v b=$bytes -v l=$lost -v t=$T -v r=${runs:-0} -v n=${rns:-0} \
		'BEGIN{printf "%s %s %.0f %.2f %d %.0f %.2f\n", m, g, e/t, (e ? b/e : 0), l, (r ? n/r : 0), n/(t*1e7)}' >> "$TMP/results"
	rm -f "$out".*
}

echo "bench-pktpath: $REPS x (${MODES[*]}), iperf3 -t $T, veth $NSA <-> $NSB, one nprec per side" >&2
for rep in $(seq "$REPS"); do
	for m in "${MODES[@]}"; do
		measure "$m" "$rep"
		echo "  rep $rep: $(tail -1 "$TMP/results")" >&2
	done
done
python3 - "$TMP/results" "${MODES[@]}" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
med = {m: [st.median(float(x[i]) for x in rows if x[0] == m) for i in range(1, 7)] for m in sys.argv[2:]}
base = med["none"][0]
base_small = med.get("none_small", [0])[0]
print("%-24s %10s %7s %12s %9s %8s %9s %9s" % ("pktpath mode", "tcp_Gbit/s", "loss%", "events/s", "B/event",
      "lost", "bpf_ns/run", "bpf_cpu%"))
names = {"none": "none", "full": "--packets", "s16": "--packets --sample 1/16",
         "none_small": "none, 128 B writes", "full_small": "--packets, 128 B writes"}
for m in sys.argv[2:]:
    g, e, b, l, nsr, cpu = med[m]
    ref = base_small if m.endswith("_small") else base
    print("%-24s %10.3f %6.1f%% %12.0f %9.2f %8.0f %9.0f %8.1f%%" % (names[m], g, (1 - g / ref) * 100 if ref else 0,
          e, b, l, nsr, cpu))
PY
