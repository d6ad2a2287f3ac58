#!/bin/bash
# make bench-record: recorder overhead on veth between two namespaces.
# For every mode (no recorder, nprec at defaults, tcpdump -w snaplen 128 on
# both veth ends, ...): TCP throughput (iperf3 -t), HTTP request latency
# p50/p99 (wrk --latency against nginx, saturated and paced), bytes the
# recorder wrote per second, events it lost.
#
# Method. On a small noisy VM (2 vCPUs) two runs of the same saturated
# bench differ by 15-20 %, so medians per mode cannot show a 3 % loss.
# Two things make the figures resolve a few percent:
#  - Pinned endpoints (machines with >= 2 CPUs): iperf3 client on CPU 0 and
#    server on CPU 1 (-A 0,1), wrk on CPU 0, the one nginx worker on CPU 1.
#    Unpinned, the scheduler moves them around differently in every run and
#    that placement, not the recorder, dominates the variance. Recorders are
#    NOT pinned: they run wherever the scheduler puts them, as in real use,
#    so the cost of preempting the endpoints is part of what is measured.
#  - Paired measurement: every repetition measures every mode once, and each
#    mode's figure is divided by the "none" figure of the SAME repetition.
#    Slow drift of the machine (other guests, thermal, page cache) hits both
#    members of a pair alike and cancels in the ratio; the median and the
#    min-max of the per-repetition ratios over REPS repetitions are printed
#    as loss / inflation percentages. The order of modes alternates (forward
#    on odd repetitions, reverse on even ones) so a drift within a repetition
#    does not always favour the mode measured first. Absolute medians are
#    printed as well.
#
# Adding a mode: write a function mode_NAME OUTPREFIX that starts the
# recorder in the background with `rec_bg CMD...` (recorders run in the root
# namespace unless the command says `ip netns exec`; they are stopped with
# SIGINT), and append NAME to MODES (or set BENCH_MODES="none nprec NAME" in
# the environment). The recorder's output must be OUTPREFIX* files (their
# size is "written"); nprec outputs are also read for lost events.
#
# The extra bpf_stats repetition also splits the recorder's CPU by phase
# (iperf3, wrk, paced wrk): its BPF run time and process CPU as a share of
# the machine's busy CPU, a figure the host's noise does not swamp.
#
# Env: BENCH_T (seconds per measurement, 3), REPS (8), BENCH_MODES,
# BENCH_NS (namespace prefix), NP_BUILD (build/), PACE_MS (1), BENCH_RPS (1),
# NO_BPF_COST (skip the bpf_stats repetition), PERF_REPS (profiled runs
# per mode, 2), NO_PERF_SHARE (skip them), NO_PKTPATH_BENCH (skip
# bench/record_pktpath.sh at the end), NPREC_ALT (the other nprec binary of
# mode nprec_alt, for an A/B of a change in one run), DISPATCH_NS (62: the
# per-program-run dispatch cost added in the +disp% column).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec
NPREPORT=$NP_BUILD/npreport
T=${BENCH_T:-3}
REPS=${REPS:-8}
NSA=${BENCH_NS:-rc-bench}-a NSB=${BENCH_NS:-rc-bench}-b
IPA=10.77.9.1 IPB=10.77.9.2
TMP=$(mktemp -d /tmp/np-bench-record.XXXXXX)
PIDS=()

MODES=(${BENCH_MODES:-none nprec tcpdump})

mode_none() { :; }
mode_nprec() { rec_bg "$NPREC" -q -o "$1.npr"; }
# nprec --full: every family at full detail (the default before issue 24: every transaction's event)
mode_nprec_full() { rec_bg "$NPREC" -q --full -o "$1.npr"; }
# nprec with a program on every TCP send call (the default before 2026-11-28)
mode_nprec_sendcalls() { rec_bg "$NPREC" -q --send-calls -o "$1.npr"; }
# nprec defaults without netcpu, and --full without it (txn and flows' part of the cost apart from netcpu's)
mode_nprec_nonc() { rec_bg "$NPREC" -q --no-netcpu -o "$1.npr"; }
mode_nprec_full_nonc() { rec_bg "$NPREC" -q --full --no-netcpu -o "$1.npr"; }
# nprec defaults without the netcpu stack sampler's timer (what sampling costs)
mode_nprec_nosample() { rec_bg "$NPREC" -q --sample-hz 0 -o "$1.npr"; }
# nprec with the stack sampler on its own 1 kHz cpu-clock timer (the default before the tick source)
mode_nprec_hz1k() { rec_bg "$NPREC" -q --sample-hz 1000 -o "$1.npr"; }
# nprec without --cpu-slice (its work in stretches as long as the scheduler lets it run)
mode_nprec_noslice() { rec_bg "$NPREC" -q --cpu-slice 0 -o "$1.npr"; }
# nprec without the hub: each family attaches its own program to the shared tracepoints
mode_nprec_nohub() { NPREC_TEST_NO_HUB=1 rec_bg "$NPREC" -q -o "$1.npr"; }
# nprec with the threads family's sched_switch program instead of its task iterator
mode_nprec_thrsw() { NPREC_TEST_THREADS_SWITCH=1 rec_bg "$NPREC" -q -o "$1.npr"; }
# another nprec build at defaults, for an A/B of a change in one run (NPREC_ALT=path/to/nprec)
mode_nprec_alt() { rec_bg "${NPREC_ALT:?set NPREC_ALT to the other nprec binary}" -q -o "$1.npr"; }
# nprec as a SCHED_IDLE task (candidate for the light state of --nice)
mode_nprec_idle() { rec_bg chrt -i 0 "$NPREC" -q --nice 0 -o "$1.npr"; }
# reference: what 1 kHz timer sampling on every CPU alone costs on this machine
mode_perf1k() { rec_bg perf record -q -a -F 1000 -e cpu-clock -o "$1.perf.data" -- sleep 100000; }
# diagnostic modes (BENCH_MODES="none nprec nprec_flows nprec_txn ..."): one family at a time
mode_nprec_flows() { rec_bg "$NPREC" -q --no-txn --no-netcpu --no-threads -o "$1.npr"; }
mode_nprec_txn() { rec_bg "$NPREC" -q --no-flows --no-netcpu --no-threads -o "$1.npr"; }
mode_nprec_netcpu() { rec_bg "$NPREC" -q --no-flows --no-txn --no-threads -o "$1.npr"; }
mode_nprec_threads() { rec_bg "$NPREC" -q --no-flows --no-txn --no-netcpu -o "$1.npr"; }
# nprec with the exact socket clock (every socket syscall stamped; the default samples it)
mode_nprec_ncexact() { rec_bg "$NPREC" -q --netcpu exact -o "$1.npr"; }
mode_tcpdump() {
	rec_bg ip netns exec $NSA tcpdump -q -i rcbncha0 -s 128 -w "$1.a.pcap"
	rec_bg ip netns exec $NSB tcpdump -q -i rcbnchb0 -s 128 -w "$1.b.pcap"
}
# PKTPATH modes (BENCH_MODES="none nprec nprec_packets nprec_packets16 ..."); bytes per
# packet-hook event and lost events are measured by bench/record_pktpath.sh, run at the end.
mode_nprec_packets() { rec_bg "$NPREC" -q --packets --netns $NSA -i rcbncha0 -o "$1.npr"; }
mode_nprec_packets16() { rec_bg "$NPREC" -q --packets --sample 1/16 --netns $NSA -i rcbncha0 -o "$1.npr"; }

BPF_STATS_ORIG=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
. "$ROOT/bench/txn_lib.sh"   # txn_traps (txn_cleanup on exit), txn_setup_veth, txn_rps, txn_start_nginx
txn_traps

. "$ROOT/bench/rec_lib.sh"   # rec_wait_ready, to_us, npr_lost
REC_PIDS=()
rec_bg() { "$@" 2>>"$TMP/rec.err" & REC_PIDS+=($!); PIDS+=($!); }
rec_stop() {
	local p
	for p in "${REC_PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${REC_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	REC_PIDS=()
}

[ "$(id -u)" -eq 0 ] || { echo "bench-record: needs root" >&2; exit 1; }
for t in iperf3 wrk nginx tcpdump; do
	command -v $t >/dev/null || { echo "bench-record: $t missing (make deps)" >&2; exit 1; }
done
[ -x "$NPREC" ] || { echo "bench-record: $NPREC not built" >&2; exit 1; }
NOTES=()
if [[ " ${MODES[*]} " == *" perf1k "* ]] && ! command -v perf >/dev/null; then
	NOTES+=("perf1k skipped: perf not installed")
	m2=(); for m in "${MODES[@]}"; do [ "$m" = perf1k ] || m2+=("$m"); done; MODES=("${m2[@]}")
fi

# Endpoint pinning (see the header): only with >= 2 CPUs, else nothing to separate.
NCPU=$(nproc)
if [ "$NCPU" -ge 2 ]; then
	IPERF_PIN=(-A 0,1) WRK_PIN=(taskset -c 0) NGINX_AFF=10
	PIN_NOTE="endpoints pinned: iperf3 client CPU 0 / server CPU 1, wrk CPU 0, nginx worker CPU 1; recorders unpinned"
else
	IPERF_PIN=() WRK_PIN=() NGINX_AFF=""
	PIN_NOTE="endpoints NOT pinned (1 CPU)"
fi

# ---- setup: two namespaces, veth, nginx + iperf3 server in B ----
txn_setup_veth rcbnch
# Pinned endpoints on veth reorder a bulk flow: data sent from the client's
# syscall on CPU 0 and data sent from ACK processing on CPU 1 go through two
# CPUs' backlogs, and iperf3 spent ~10k fast retransmits/s (DSACKed,
# spurious) in SACK recovery, so its throughput followed TCP's recovery
# dynamics more than CPU cost. RPS steers each direction to one CPU (data to
# the client's CPU 0, ACKs to the server's CPU 1): in order, 0 retransmits.
# BENCH_RPS=0 keeps the kernel default.
if [ "${BENCH_RPS:-1}" = 1 ] && [ "$NCPU" -ge 2 ]; then
	txn_rps rcbnch && PIN_NOTE="$PIN_NOTE; RPS: data to CPU 0, ACKs to CPU 1"
fi
txn_start_nginx "$NGINX_AFF"
ip netns exec $NSB iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
echo "function delay() return ${PACE_MS:-1} end" > "$TMP/pace.lua"
sleep 1

# ---- one measurement ----
measure() {   # measure MODE REP [RESULTS] -> appends "mode rep gbps p50 p99 rps written_Bps lost p50paced p99paced"
	local mode=$1 rep=$2 out="$TMP/$1.$2" results=${3:-$TMP/results} t0 t1
	rm -f "$out".*
	"mode_${mode//-/_}" "$out"
	rec_wait_ready
	sleep 1   # recorder attached and settled
	t0=$(date +%s.%N)
	local gbps p50 p99 rps cost= prof=
	[ "$rep" = cost ] && cost=1
	[ "$rep" = perf ] && prof=1
	[ -n "$cost" ] && phase_mark "$mode" start
	[ -n "$prof" ] && perf_start
	gbps=$(ip netns exec $NSA iperf3 -c $IPB -p 5201 -t "$T" "${IPERF_PIN[@]}" -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))' 2>/dev/null)
	[ -n "$cost" ] && phase_mark "$mode" iperf3
	[ -n "$prof" ] && perf_stop "$mode" iperf3 && perf_start
	ip netns exec $NSA "${WRK_PIN[@]}" wrk -t1 -c8 -d"${T}s" --latency "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	[ -n "$cost" ] && phase_mark "$mode" wrk
	[ -n "$prof" ] && perf_stop "$mode" wrk && perf_start
	p50=$(to_us "$(awk '$1=="50%" {print $2}' "$TMP/wrk.out")")
	p99=$(to_us "$(awk '$1=="99%" {print $2}' "$TMP/wrk.out")")
	rps=$(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$TMP/wrk.out")
	# paced: every connection waits PACE_MS between requests (wrk's delay()),
	# ~7 k requests/s that leave the CPUs partly idle, so the p99 is the
	# request's own path and not the queueing of a saturated machine
	ip netns exec $NSA "${WRK_PIN[@]}" wrk -t1 -c8 -d"${T}s" --latency -s "$TMP/pace.lua" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	[ -n "$cost" ] && phase_mark "$mode" wrk_paced
	[ -n "$prof" ] && perf_stop "$mode" wrk_paced
	local q50 q99
	q50=$(to_us "$(awk '$1=="50%" {print $2}' "$TMP/wrk.out")")
	q99=$(to_us "$(awk '$1=="99%" {print $2}' "$TMP/wrk.out")")
	[ -n "$cost" ] && bpf_cost "$mode" "$rep"
	rec_stop
	t1=$(date +%s.%N)
	local bytes=0 lost=0 f
	for f in "$out".*; do [ -e "$f" ] && bytes=$((bytes + $(stat -c %s "$f"))); done
	for f in "$out".*.npr "$out".npr; do
		[ -e "$f" ] || continue
		l=$(npr_lost "$NPREPORT" "$f")
		lost=$((lost + ${l:-0}))
	done
	if [ "$mode" = tcpdump ]; then lost=$(grep -ho '[0-9]* packets dropped by kernel' "$TMP/rec.err" | awk '{s+=$1} END {print s+0}'); fi
	: > "$TMP/rec.err"
	local bps
	bps=$(awk -v b=$bytes -v t0=$t0 -v t1=$t1 'BEGIN{printf "%.0f", b/(t1-t0)}')
	echo "$mode $rep ${gbps:-0} ${p50:-0} ${p99:-0} ${rps:-0} $bps $lost ${q50:-0} ${q99:-0}" >> "$results"
	rm -f "$out".*
}

# bpf_cost MODE REP: run time of the recorder's BPF programs (kernel.bpf_stats_enabled),
# a figure the load on the machine does not blur: ns per event and CPU share.
bpf_cost() {
	[ ${#REC_PIDS[@]} -gt 0 ] || return 0
	python3 "$ROOT/bench/recprogs.py" "${REC_PIDS[@]}" | sed "s/^/$1 $2 /" >> "$TMP/bpfcost"
}

# phase_mark MODE PHASE (cost repetition only): the recorder's BPF time and
# process CPU so far, and the machine's busy CPU (/proc/stat user, nice,
# system, irq, softirq: not idle, iowait or steal), to split them by phase.
phase_mark() {
	[ ${#REC_PIDS[@]} -gt 0 ] || return 0
	echo "$1 $2 $(python3 "$ROOT/bench/recprogs.py" --sum "${REC_PIDS[@]}") $(awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat)" >> "$TMP/phases"
}

# perf_start / perf_stop MODE PHASE (perf repetition only): a system-wide
# cpu-clock profile of the phase, and the share of its busy samples that
# are the recorder's (bench/recshare.py: samples through the recorder's
# kernel entry points or in its own process). The same rule for every
# recorder, so nprec's figure includes tracepoint dispatch and the syscall
# slow path, and tcpdump's its AF_PACKET copies; "none" runs both rules as
# a control (it should be ~0).
# Samples counted: the endpoints', idle-context softirq (swapper,
# ksoftirqd) and the recorders' own; other processes of a shared machine
# (RECSHARE_ALL=1 counts every process, as before 2026-11-25), among them
# other recorders (nprec, tcpdump) and samples through BPF programs this
# mode's recorder does not hold (rec_own_samples, as bench/recpaced.sh):
# before 2026-11-27 "none" read up to 9.75 % while another nprec ran.
SHARE_WORKLOAD='^(wrk|nginx|iperf3|swapper|ksoftirqd/[0-9]+)$'
[ "${RECSHARE_ALL:-0}" = 1 ] && SHARE_WORKLOAD='.'
perf_start() {
	perf record -q -a -g -F 997 -e cpu-clock -o "$TMP/phase.perf" >/dev/null 2>&1 & PERF_PID=$!
	PIDS+=($PERF_PID)
	sleep 0.5
}
perf_stop() {
	local rules=nprec
	kill -INT "$PERF_PID" 2>/dev/null; wait "$PERF_PID" 2>/dev/null
	case $1 in none) rules="nprec tcpdump";; tcpdump) rules=tcpdump;; esac
	if [ ! -s "$TMP/phase.perf" ]; then
		echo "bench-record: perf record wrote no profile for $1 $2 (perf_event_paranoid?)" >&2
		return 0
	fi
	rec_own_samples "$TMP/phase.perf" ${REC_PIDS[@]+"${REC_PIDS[@]}"} |
		python3 "$ROOT/bench/recshare.py" --workload "$SHARE_WORKLOAD" $rules |
		sed "s/^/$1 $2 /" >> "$TMP/shares"
	rm -f "$TMP/phase.perf"
}

# set_order REP: the modes of repetition REP in $order, forward on odd
# repetitions and reversed on even ones (drift within a repetition cancels)
set_order() {
	order=("${MODES[@]}")
	if [ $(($1 % 2)) -eq 0 ]; then order=(); for ((i = ${#MODES[@]} - 1; i >= 0; i--)); do order+=("${MODES[i]}"); done; fi
}

# kernel.bpf_stats_enabled adds two clock reads to every BPF program run
# (~40-80 ns here, over 1 us per HTTP request with ~20 runs): the timed
# repetitions run without it, and the per-program cost is read in one extra
# repetition per recorder mode whose throughput and latency are not used.
sysctl -qw kernel.bpf_stats_enabled=0 2>/dev/null
echo "bench-record: $REPS x (${MODES[*]}), iperf3 -t $T and wrk -t1 -c8 -d${T}s each, veth $NSA <-> $NSB; $PIN_NOTE" >&2
START=$(date +%s)
for rep in $(seq "$REPS"); do
	set_order "$rep"
	for m in "${order[@]}"; do
		measure "$m" "$rep"
		echo "  rep $rep $m: $(tail -1 "$TMP/results" | cut -d' ' -f3-)" >&2
	done
done
if [ -z "${NO_BPF_COST:-}" ]; then
	sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null
	for m in "${MODES[@]}"; do
		# tcpdump too: its process CPU per phase (it runs no BPF; its
		# kernel side, the AF_PACKET copy per packet, is in no column)
		case $m in nprec*|tcpdump) measure "$m" cost "$TMP/results.cost"
			echo "  cost rep $m (bpf_stats on): $(tail -1 "$TMP/results.cost" | cut -d' ' -f3-)" >&2;; esac
	done
	sysctl -qw kernel.bpf_stats_enabled=0 2>/dev/null
fi
if [ -z "${NO_PERF_SHARE:-}" ] && command -v perf >/dev/null; then
	for r in $(seq "${PERF_REPS:-2}"); do
		set_order "$r"
		for m in "${order[@]}"; do
			case $m in perf1k) continue;; esac
			measure "$m" perf "$TMP/results.perf"
			echo "  perf rep $r $m: $(grep -c "^$m " "$TMP/shares" 2>/dev/null) phase profiles so far" >&2
		done
	done
elif [ -z "${NO_PERF_SHARE:-}" ]; then
	NOTES+=("perf repetition skipped: perf not installed")
fi

# ---- tables: absolute medians, and paired ratios to "none" of the same repetition ----
[ -s "$TMP/results" ] && PIN_NOTE="$PIN_NOTE" DUR=$(($(date +%s) - START)) python3 - "$TMP/results" "$REPS" "$T" "${MODES[@]}" <<'PY'
import os, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
reps, t, modes = int(sys.argv[2]), sys.argv[3], sys.argv[4:]
# columns of a row: mode rep gbps p50 p99 rps written_Bps lost p50paced p99paced
G, P50, P99, RPS, BPS, LOST, Q50, Q99 = range(2, 10)
print("%d repetitions x %d modes, %ss per measurement, timed part took %ss; %s" % (reps, len(modes), t,
      os.environ["DUR"], os.environ["PIN_NOTE"]))
print("saturated: wrk -t1 -c8 closed loop; paced: wrk -t1 -c8 with %s ms between requests per connection"
      % os.environ.get("PACE_MS", "1"))
print()
print("absolute medians over the repetitions")
print("%-16s %9s %8s %8s %8s %8s %8s %11s %6s" % ("mode", "tcp_Gb/s", "req/s", "p50_us", "p99_us",
      "p50pace", "p99pace", "written_B/s", "lost"))
for m in modes:
    r = [x for x in rows if x[0] == m]
    if not r:
        continue
    md = {i: st.median(float(x[i]) for x in r) for i in range(2, 10)}
    print("%-16s %9.2f %8.0f %8.1f %8.1f %8.1f %8.1f %11.0f %6.0f" % (m, md[G], md[RPS], md[P50], md[P99],
          md[Q50], md[Q99], md[BPS], md[LOST]))
# paired: ratio to the "none" measurement of the same repetition, per repetition
base = {x[1]: x for x in rows if x[0] == "none"}
def paired(m, i, loss):
    rs = []
    for x in rows:
        b = base.get(x[1])
        if x[0] != m or not b or float(b[i]) <= 0 or float(x[i]) <= 0:
            continue
        rs.append(float(x[i]) / float(b[i]))
    if not rs:
        return "%-24s" % "-"
    pct = sorted(((1 - r) if loss else (r - 1)) * 100 for r in rs)
    return "%6.1f [%5.1f,%5.1f] n%-2d" % (st.median(pct), pct[0], pct[-1], len(pct))
if base:
    print()
    print("paired, per repetition vs none of the same repetition: median [min,max] of the percentages, n pairs")
    print("(loss = 1 - ratio, inflation = ratio - 1; negative = better than none)")
    print("%-16s %-24s %-24s %-24s %-24s" % ("mode", "tcp_Gb/s loss%", "req/s loss%", "p99 infl%", "p99pace infl%"))
    for m in modes:
        if m == "none":
            continue
        print("%-16s %s %s %s %s" % (m, paired(m, G, True), paired(m, RPS, True), paired(m, P99, False),
              paired(m, Q99, False)))
PY
for n in "${NOTES[@]}"; do echo "note: $n"; done

# ---- BPF programs: ns per event, events/s, share of one core ----
if [ -s "$TMP/bpfcost" ]; then
python3 - "$TMP/bpfcost" "$T" 1 <<'PY'
import sys
t, reps = float(sys.argv[2]), int(sys.argv[3])
acc = {}
for l in open(sys.argv[1]):
    mode, rep, name, cnt, ns = l.split()
    a = acc.setdefault((mode, name), [0, 0])
    a[0] += int(cnt); a[1] += int(ns)
print()
print("BPF programs of the recorder (one extra repetition per mode with kernel.bpf_stats_enabled=1; %d rep; time = 2 x %gs of traffic + ~1.5 s setup)" % (reps, t))
print("%-18s %-24s %12s %10s %12s" % ("mode", "program", "events/rep", "ns/event", "cpu_ms/rep"))
for (mode, name), (cnt, ns) in sorted(acc.items(), key=lambda x: (x[0][0], -x[1][1])):
    print("%-18s %-24s %12.0f %10.0f %12.1f" % (mode, name, cnt / reps, ns / cnt, ns / reps / 1e6))
tot = {}
for (mode, name), (cnt, ns) in acc.items():
    tot[mode] = tot.get(mode, 0) + ns
for mode, ns in sorted(tot.items()):
    print("%-18s %-24s %12s %10s %12.1f" % (mode, "TOTAL", "", "", ns / reps / 1e6))
PY
fi

# ---- the recorder's share of the CPU the machine spent, per phase ----
# Low-noise where iperf3's throughput is not (it swings +-40 % between runs
# here): on CPU-bound traffic the throughput a recorder costs is at least
# the CPU it takes from the endpoints. BPF time is the programs' own run
# time (bpf_stats also adds its two clock reads to it, and the per-program
# dispatch of each tracepoint is not in it).
if [ -s "$TMP/phases" ]; then
DISPATCH_NS=${DISPATCH_NS:-62} python3 - "$TMP/phases" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
disp = float(os.environ["DISPATCH_NS"])
rows = [l.split() for l in open(sys.argv[1])]
print()
print("recorder CPU per phase (cost repetition, bpf_stats on): BPF programs' run time and the recorder's")
print("own process CPU, as a share of the machine's busy CPU time in that phase (/proc/stat, steal excluded);")
print("+disp%%: BPF share with %g ns of dispatch per program run added (bench-tpdispatch's figure on the" % disp)
print("project VM, DISPATCH_NS to change it); none of them has the syscall slow path (~40 ns a syscall)")
print("%-18s %-10s %10s %10s %10s %8s %8s %10s %8s" % ("mode", "phase", "busy_ms", "runs", "bpf_ms", "bpf%",
      "+disp%", "user_ms", "user%"))
prev = {}
for mode, phase, bpf_ns, rec_t, runs, busy_t in rows:
    cur = (int(bpf_ns), int(rec_t), int(runs), int(busy_t))
    p = prev.get(mode)
    prev[mode] = cur
    if phase == "start" or p is None:
        continue
    busy = (cur[3] - p[3]) * 1000.0 / hz
    bpf = (cur[0] - p[0]) / 1e6
    user = (cur[1] - p[1]) * 1000.0 / hz
    n = cur[2] - p[2]
    if busy <= 0:
        continue
    print("%-18s %-10s %10.0f %10d %10.1f %8.2f %8.2f %10.1f %8.2f" % (mode, phase, busy, n, bpf, 100 * bpf / busy,
          100 * (bpf + n * disp / 1e6) / busy, user, 100 * user / busy))
PY
fi

# ---- the recorder's share of busy CPU from the profiles (perf repetition) ----
if [ -s "$TMP/shares" ]; then
python3 - "$TMP/shares" <<'PY'
import sys
acc, order = {}, []
for l in open(sys.argv[1]):
    mode, phase, rule, busy, rec, k, p = l.split()
    key = (mode, phase, rule)
    if key not in acc:
        acc[key] = [0, 0, 0, 0, []]
        order.append(key)
    a = acc[key]
    a[0] += int(busy); a[1] += int(k); a[2] += int(p); a[3] += 1
    a[4].append(100.0 * int(rec) / int(busy) if int(busy) else 0)
print()
print("recorder share of busy CPU per phase from system-wide cpu-clock profiles (perf repetitions,")
print("perf record -a -g -F 997, bpf_stats off; bench/recshare.py): samples through the recorder's kernel")
print("entry points (nprec: tracepoint dispatch, its programs, the syscall slow path; tcpdump: AF_PACKET")
print("delivery and copies) or in its own process, over samples not idle, summed over n profiles (per")
print("profile in brackets); none: both rules, a control")
print("%-18s %-10s %8s %8s %8s %8s %3s %8s  %s" % ("mode", "phase", "busy", "rule", "kernel", "process", "n",
      "share%", "per profile"))
for key in order:
    busy, k, p, n, each = acc[key]
    print("%-18s %-10s %8d %8s %8d %8d %3d %8.2f  [%s]" % (key[0], key[1], busy, key[2], k, p, n,
          100.0 * (k + p) / busy if busy else 0, " ".join("%.2f" % e for e in each)))
PY
fi

# packet-path tracing: throughput loss, bytes per packet-hook event, lost events
if [ -z "${NO_PKTPATH_BENCH:-}" ]; then bash "$ROOT/bench/record_pktpath.sh"; fi
