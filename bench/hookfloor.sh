#!/bin/bash
# bench/hookfloor.sh: the cost floor of nprec's hooks. tests/tools/hookfloor
# attaches EMPTY BPF programs to every hook nprec uses at default settings
# (same program types, same number of programs per hook, a 1 kHz cpu-clock
# sampler per CPU or, all_tick, a program on hrtimer_expire_entry, nprec's
# default tick sampling source); what that costs a saturated veth benchmark
# is what no optimisation of nprec's program bodies can go below.
#
# Setup as bench/record.sh: namespaces A and B, veth, nginx (1 worker,
# pinned to CPU 1) and iperf3 -s in B; wrk pinned to CPU 0, iperf3 -A 0,1.
# Measurement is PAIRED because run-to-run noise here (±15–20 %) hides a
# 3 % effect: per configuration PAIRS pairs of (none, with) runs, the order
# alternating pair by pair, each run T seconds of wrk then T seconds of
# iperf3; the ratio with/none is taken per pair and the median and range of
# the ratios are printed.
#
# Configurations (HF_CONFIGS, default all of them, in this order):
#   all            every hook, empty programs ("dispatch only")
#   all_clock      every hook, each program writes bpf_ktime_get_ns() to a per-CPU slot
#   all_tick       every hook, the tick program (hrtimer_expire_entry) instead of
#                  the cpu-clock sampler, empty programs (nprec's default hooks)
#   all_nosampler  every hook but a sampler, empty programs
#   syscalls softirq sock sched sampler tick tcp   one group alone, empty programs
#   nprec          the real recorder at defaults (nprec -q -o ...: tick sampling)
#   nprec_1k       the real recorder with the 1 kHz cpu-clock sampler (--sample-hz 1000)
#
# Env: NP_BUILD (build/), BENCH_T (3 s), PAIRS (8), BENCH_NS (hf-bench),
# HF_CONFIGS. Run under `flock /tmp/np-bench.lock`. Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec
HF=$NP_BUILD/tools/hookfloor
T=${BENCH_T:-3}
PAIRS=${PAIRS:-8}
NSA=${BENCH_NS:-hf-bench}-a NSB=${BENCH_NS:-hf-bench}-b
IPA=10.77.13.1 IPB=10.77.13.2
TMP=$(mktemp -d /tmp/np-bench-hookfloor.XXXXXX)
CONFIGS=(${HF_CONFIGS:-all all_tick all_clock all_nosampler syscalls softirq sock sched sampler tick tcp nprec})
PIDS=()
REC=

cfg_all() { rec_bg "$HF" -q; }
cfg_all_clock() { rec_bg "$HF" -q --clock; }
cfg_all_tick() { rec_bg "$HF" -q --tick; }
cfg_all_nosampler() { rec_bg "$HF" -q --no-sampler; }
cfg_syscalls() { rec_bg "$HF" -q --only syscalls; }
cfg_softirq() { rec_bg "$HF" -q --only softirq; }
cfg_sock() { rec_bg "$HF" -q --only sock; }
cfg_sched() { rec_bg "$HF" -q --only sched; }
cfg_sampler() { rec_bg "$HF" -q --only sampler; }
cfg_tick() { rec_bg "$HF" -q --only tick; }
cfg_tcp() { rec_bg "$HF" -q --only tcp; }
cfg_nprec() { rec_bg "$NPREC" -q -o "$TMP/rec.npr"; }
cfg_nprec_1k() { rec_bg "$NPREC" -q --sample-hz 1000 -o "$TMP/rec.npr"; }

. "$ROOT/bench/txn_lib.sh"   # txn_traps (txn_cleanup on exit), txn_setup_nginx
txn_traps

rec_bg() { "$@" 2>>"$TMP/rec.err" & REC=$!; PIDS+=($!); }
rec_stop() {
	[ -n "$REC" ] || return 0
	kill -INT "$REC" 2>/dev/null; wait "$REC" 2>/dev/null; REC=
	rm -f "$TMP"/rec.npr*
}

[ "$(id -u)" -eq 0 ] || { echo "hookfloor: needs root" >&2; exit 1; }
for t in iperf3 wrk nginx taskset bpftool python3; do
	command -v $t >/dev/null || { echo "hookfloor: $t missing (make deps)" >&2; exit 1; }
done
[ -x "$HF" ] || { echo "hookfloor: $HF not built (make O=... tools with BPF)" >&2; exit 1; }
[ -x "$NPREC" ] || { echo "hookfloor: $NPREC not built" >&2; exit 1; }
for c in "${CONFIGS[@]}"; do
	declare -F "cfg_$c" >/dev/null || { echo "hookfloor: unknown configuration $c" >&2; exit 1; }
done

# ---- setup: two namespaces, veth, nginx + iperf3 server in B ----
# (nginx's one worker on CPU 1, wrk on CPU 0)
txn_setup_nginx hfl 10
ip netns exec $NSB iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
sleep 1

# links of BPF programs that are not ours (another recorder on the machine
# would bias every figure); counted during the "none" runs
other_links() { bpftool link show 2>/dev/null | grep -c '^[0-9]'; }

# run CONFIG|none -> "rps gbps links"
run() {
	local links=0 rps gbps
	if [ "$1" != none ]; then "cfg_$1"; sleep 1.5; else links=$(other_links); fi
	rps=$(ip netns exec $NSA taskset -c 0 wrk -t1 -c8 -d"${T}s" "http://$IPB:8080/index.html" 2>&1 |
		awk '/^Requests\/sec/ {printf "%.0f", $2}')
	gbps=$(ip netns exec $NSA iperf3 -c $IPB -p 5201 -t "$T" -A 0,1 -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))' 2>/dev/null)
	[ "$1" != none ] && rec_stop
	echo "${rps:-0} ${gbps:-0} $links"
}

t_start=$(date +%s)
echo "hookfloor: $PAIRS pairs x ${T}s wrk + ${T}s iperf3 per configuration, $(nproc) CPUs, kernel $(uname -r)" >&2
for cfg in "${CONFIGS[@]}"; do
	for i in $(seq "$PAIRS"); do
		if [ $((i % 2)) = 1 ]; then a=$(run none); b=$(run "$cfg"); else b=$(run "$cfg"); a=$(run none); fi
		echo "$cfg $i $a $b" >> "$TMP/pairs"
		echo "  $cfg pair $i: none $a | with $b" >&2
	done
done

# table: ratio with/none per pair, median and range per configuration
python3 - "$TMP/pairs" "${CONFIGS[@]}" <<'PY'
import statistics, sys
rows = {}
for l in open(sys.argv[1]):
    cfg, i, r0, g0, links, r1, g1, _ = l.split()
    rows.setdefault(cfg, []).append((float(r0), float(g0), int(links), float(r1), float(g1)))
def fmt(xs):
    return "%.3f  %.3f-%.3f" % (statistics.median(xs), min(xs), max(xs)) if xs else "n/a"
print("%-14s %5s  %-20s %-20s %s" % ("config", "pairs", "wrk req/s ratio", "iperf3 Gbit/s ratio", "other_links(max)"))
print("%-14s %5s  %-20s %-20s" % ("", "", "median  min-max", "median  min-max"))
for cfg in sys.argv[2:]:
    r = rows.get(cfg, [])
    wrk = [x[3] / x[0] for x in r if x[0] > 0 and x[3] > 0]
    ipf = [x[4] / x[1] for x in r if x[1] > 0 and x[4] > 0]
    print("%-14s %5d  %-20s %-20s %d" % (cfg, len(r), fmt(wrk), fmt(ipf), max((x[2] for x in r), default=0)))
base_r = [x[0] for v in rows.values() for x in v]
base_g = [x[1] for v in rows.values() for x in v]
if base_r:
    print("baseline (none runs): wrk median %.0f req/s, iperf3 median %.2f Gbit/s" %
          (statistics.median(base_r), statistics.median(base_g)))
PY
echo "hookfloor: $(( $(date +%s) - t_start )) s" >&2
