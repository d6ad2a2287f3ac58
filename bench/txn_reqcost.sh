#!/bin/bash
# The recorder's own CPU per unit of work, per nprec option set: BPF run
# time of THIS recorder's programs (BPF_ENABLE_STATS fd held for the run,
# the global sysctl untouched), a dispatch cost per program run
# (DISPATCH_NS, 62 ns: bench/tpdispatch.sh on the project VM) and the
# recorder process's on-CPU time (/proc/PID/schedstat, ns), during
#   wrk       wrk -t1 -c8 saturated against nginx (4 KiB), per request
#   wrk_paced the same with 1 ms between requests per connection, per request
#   iperf3    iperf3 -t, per MB received
# over veth between two namespaces (the setup of bench/record.sh).
#
# Why this and not only bench/record.sh's profile share: on a machine shared
# with other users, a system-wide profile counts their recorders too (other
# nprec instances hook the same tracepoints: the "none" control reads
# 19-56 % there under such load) and their compilers in the denominator.
# Per-request CPU of one recorder's own programs and process is what that
# recorder adds to every request whatever else runs; it is inflated by
# cache pressure from the other load, the same for every mode of the run.
# Modes alternate in order every repetition; medians over REPS.
# Env: NP_BUILD (build/), REPS (5), BENCH_T (3), BENCH_NS (txrq), DISPATCH_NS (62),
# MODES ("default full nonc full_nonc", names of the option sets below; NAME_nohub:
# with NPREC_TEST_NO_HUB=1, for per-family program figures; NAME_alt: the nprec
# at NPREC_ALT instead (NAME_alt2: NPREC_ALT2), to compare builds in the same run).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
REPS=${REPS:-5}
T=${BENCH_T:-3}
DISP=${DISPATCH_NS:-62}
NSA=${BENCH_NS:-txrq}-a NSB=${BENCH_NS:-txrq}-b
IPA=10.77.12.1 IPB=10.77.12.2
TMP=$(mktemp -d /tmp/np-bench-txrq.XXXXXX)
declare -A OPTS=([default]="" [full]="--full" [nonc]="--no-netcpu" [full_nonc]="--full --no-netcpu")
# modes none (no recorder) and tcpdump (-w -s 128 on both veth ends) as well
MODES=(${MODES:-default full nonc full_nonc})
. "$ROOT/bench/txn_lib.sh"
txn_traps
for t in wrk nginx iperf3; do command -v $t >/dev/null || { echo "$t missing" >&2; exit 1; }; done
[ -x "$NP_BUILD/nprec" ] || { echo "$NP_BUILD/nprec not built" >&2; exit 1; }

python3 "$ROOT/bench/bpfstats_hold.py" "$TMP/stats.ready" & PIDS+=($!)
for _ in $(seq 50); do [ -e "$TMP/stats.ready" ] && break; sleep 0.1; done
[ -e "$TMP/stats.ready" ] || { echo "cannot enable BPF statistics" >&2; exit 1; }

txn_setup_nginx txrq
ip netns exec $NSB iperf3 -s -p 5202 >/dev/null 2>&1 & IPS=$!; PIDS+=($IPS)
echo "function delay() return 1 end" > "$TMP/pace.lua"
sleep 1
# the server side's CPU: nginx's worker, the iperf3 server, ksoftirqd (the
# clients' is taken by /usr/bin/time); softirq work in idle context is missed
WORK_PIDS="$(pgrep -P $NGM | tr '\n' ' ') $IPS $(pgrep -x 'ksoftirqd/[0-9]+' | tr '\n' ' ')"

# schedstat_sum PID...: their on-CPU ns
schedstat_sum() {
	local t=0 p v
	for p in "$@"; do read -r v _ < "/proc/$p/schedstat" 2>/dev/null && t=$((t + v)); done
	echo $t
}
# snap: "bpf_ns runs recorder_process_ns now_ns server_side_ns" for the recorder pids in RP
snap() {
	local b=0 r=0
	# shellcheck disable=SC2086
	[ -n "$RP" ] && read -r b _ r < <(python3 "$ROOT/bench/recprogs.py" --sum $RP)
	# shellcheck disable=SC2086
	echo "$b $r $(schedstat_sum $RP) $(date +%s%N) $(schedstat_sum $WORK_PIDS)"
}
# phase MODE REP PHASE UNITS CLIENT_NS BEFORE AFTER: one result row (differences, duration,
# the workload's CPU: server side plus the client's)
phase() {
	set -- "$1" "$2" "$3" "$4" "$5" $6 $7
	echo "$1 $2 $3 $4 $((${11} - $6)) $((${12} - $7)) $((${13} - $8)) $((${14} - $9)) $((${15} - ${10} + $5))" >> "$TMP/rows"
}
# timed CMD...: runs it, its user+system CPU in ns into $TMP/cpu_ns
timed() {
	/usr/bin/time -f "%U %S" -o "$TMP/time" "$@"
	awk '{printf "%.0f\n", ($1 + $2) * 1e9}' "$TMP/time" > "$TMP/cpu_ns"
}
# progs_phase MODE PHASE UNITS: per program, runs and run time since the last
# call (with NPREC_TEST_NO_HUB=1 each family's own; with the hub, the members'
# time is in the hub head's) into $TMP/progs, and a new base
progs_phase() {
	[ -n "$RP" ] || return 0
	# shellcheck disable=SC2086
	python3 "$ROOT/bench/recprogs.py" $RP | sort > "$TMP/progs.1"
	[ -n "$2" ] && join "$TMP/progs.1" "$TMP/progs.0" |
		awk -v m="$1" -v ph="$2" -v n="${3:-0}" '{print m, ph, $1, $2 - $4, $3 - $5, n}' >> "$TMP/progs"
	mv "$TMP/progs.1" "$TMP/progs.0"
}
rec_start() {   # MODE: the recorder of that mode, its pids in RP
	local mode=$1 hub=0 bin=$NP_BUILD/nprec
	RP=""
	case $mode in
	none) return 0;;
	tcpdump)
		ip netns exec $NSA tcpdump -q -i txrqa0 -s 128 -w "$TMP/a.pcap" 2>>"$TMP/rec.err" & RP="$!"
		ip netns exec $NSB tcpdump -q -i txrqb0 -s 128 -w "$TMP/b.pcap" 2>>"$TMP/rec.err" & RP="$RP $!"
		sleep 1; return 0;;
	esac
	# MODE_nohub: the same options, each family with its own programs
	[[ $mode == *_alt ]] && { bin=$NPREC_ALT; mode=${mode%_alt}; }
	[[ $mode == *_alt2 ]] && { bin=$NPREC_ALT2; mode=${mode%_alt2}; }
	[[ $mode == *_nohub ]] && hub=1
	# shellcheck disable=SC2086
	NPREC_TEST_NO_HUB=$hub "$bin" -q ${OPTS[${mode%_nohub}]} -o "$TMP/r.npr" 2>>"$TMP/rec.err" & RP=$!
	for _ in $(seq 100); do [ -s "$TMP/r.npr" ] && break; sleep 0.1; done
}
measure() {
	local mode=$1 rep=$2 s0 s1 s2 s3 n q mb c1 c2 c3 lost=0
	rec_start "$mode"
	sleep 1
	# idle: what the recorder spends on the rest of the machine (other
	# users' syscalls, context switches and sockets hit its global hooks),
	# subtracted per second from the phases below
	s0=$(snap)
	sleep "$T"
	s1=$(snap)
	phase "$mode" "$rep" idle 1 0 "$s0" "$s1"
	s0=$s1
	progs_phase "$mode" "" 0
	timed ip netns exec $NSA wrk -t1 -c8 -d"${T}s" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	s1=$(snap); c1=$(cat "$TMP/cpu_ns")
	n=$(awk '/requests in/ {print $1}' "$TMP/wrk.out")
	progs_phase "$mode" wrk "$n"
	timed ip netns exec $NSA wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	s2=$(snap); c2=$(cat "$TMP/cpu_ns")
	q=$(awk '/requests in/ {print $1}' "$TMP/wrk.out")
	progs_phase "$mode" wrk_paced "$q"
	timed ip netns exec $NSA iperf3 -c $IPB -p 5202 -t "$T" -J > "$TMP/iperf.json" 2>/dev/null
	s3=$(snap); c3=$(cat "$TMP/cpu_ns")
	mb=$(python3 -c 'import json,sys; print("%.0f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]/1e6))' \
		"$TMP/iperf.json" 2>/dev/null)
	progs_phase "$mode" iperf3 "$mb"
	# shellcheck disable=SC2086
	[ -n "$RP" ] && kill -INT $RP && wait $RP
	[ -s "$TMP/r.npr" ] && lost=$("$NP_BUILD/npreport" dump --type end "$TMP/r.npr" 2>/dev/null | python3 -c 'import json,sys
print(sum(json.loads(l)["body"].get("lost_total",0) for l in sys.stdin))' 2>/dev/null)
	phase "$mode" "$rep" wrk "${n:-0}" "${c1:-0}" "$s0" "$s1"
	phase "$mode" "$rep" wrk_paced "${q:-0}" "${c2:-0}" "$s1" "$s2"
	phase "$mode" "$rep" iperf3 "${mb:-0}" "${c3:-0}" "$s2" "$s3"
	echo "$mode $rep lost ${lost:-?}" >> "$TMP/lost"
	rm -f "$TMP/r.npr" "$TMP"/*.pcap
}

echo "txn_reqcost: $REPS x (${MODES[*]}), ${T}s per phase; $(uptime)" >&2
for rep in $(seq "$REPS"); do
	order=("${MODES[@]}")
	if [ $((rep % 2)) -eq 0 ]; then order=(); for ((i = ${#MODES[@]} - 1; i >= 0; i--)); do order+=("${MODES[i]}"); done; fi
	for m in "${order[@]}"; do
		measure "$m" "$rep"
		echo "  rep $rep $m: $(grep "^$m $rep " "$TMP/rows" | cut -d' ' -f3- | tr '\n' ';')" >&2
	done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
DISP=$DISP python3 - "$TMP/rows" "$TMP/lost" "${MODES[@]}" <<'PY'
import os, sys, statistics as st
disp = float(os.environ["DISP"])
rows = [l.split() for l in open(sys.argv[1])]
lost = [l.split() for l in open(sys.argv[2])]
modes = sys.argv[3:]
unit = {"wrk": "request", "wrk_paced": "request", "iperf3": "MB"}
print("recorder CPU per unit of work, medians over repetitions [min, max]: BPF run time of its programs,")
print("+%g ns dispatch per program run, its process's on-CPU time; runs = program runs per unit;" % disp)
print("net_ns: total less the recorder's idle-phase rate (other users' activity on its global hooks)")
print("over the phase's duration, per unit; idle_ms/s: that rate in ms of CPU per second")
print("work_ns: the workload's own CPU per unit (clients' by /usr/bin/time, nginx worker, iperf3 server,")
print("ksoftirqd; the recorder's programs run inside it); share%: net_ns / (work_ns + proc_ns)")
print("%-10s %-10s %-8s %3s %8s %8s %8s %18s %7s %18s %9s %8s %7s" % ("mode", "phase", "unit", "n", "bpf_ns",
      "disp_ns", "proc_ns", "total_ns", "runs", "net_ns", "idle_ms/s", "work_ns", "share%"))
def cost(x):
    return int(x[4]) + int(x[5]) * disp + int(x[6])
idle = {(x[0], x[1]): cost(x) / (int(x[7]) / 1e9) for x in rows if x[2] == "idle"}
for ph in ("wrk", "wrk_paced", "iperf3"):
    for m in modes:
        r = [x for x in rows if x[0] == m and x[2] == ph and int(x[3]) > 0]
        if not r:
            continue
        per = lambda i: [int(x[i]) / int(x[3]) for x in r]
        bpf, runs, proc = per(4), per(5), per(6)
        tot = [cost(x) / int(x[3]) for x in r]
        net = [(cost(x) - idle.get((x[0], x[1]), 0) * int(x[7]) / 1e9) / int(x[3]) for x in r]
        irate = [idle.get((x[0], x[1]), 0) / 1e6 for x in r]
        work = per(8)
        share = [100 * a / (w + p) if w + p > 0 else 0 for a, w, p in zip(net, work, proc)]
        print("%-10s %-10s %-8s %3d %8.0f %8.0f %8.0f %7.0f [%.0f,%.0f] %7.2f %7.0f [%.0f,%.0f] %9.1f %8.0f %7.2f" % (
              m, ph, unit[ph], len(r), st.median(bpf), st.median(runs) * disp, st.median(proc), st.median(tot),
              min(tot), max(tot), st.median(runs), st.median(net), min(net), max(net), st.median(irate),
              st.median(work), st.median(share)))
# end to end in CPU: the workload's CPU per unit plus the recorder process's, against "none" of the
# same repetition (tcpdump's kernel copies are only visible this way)
if "none" in modes:
    print()
    print("CPU per unit against none of the same repetition: (work_ns + proc_ns) / work_ns(none) - 1, in %,")
    print("median [min, max] over repetitions")
    print("%-12s %-22s %-22s %-22s" % ("mode", "wrk", "wrk_paced", "iperf3"))
    base = {(x[1], x[2]): int(x[8]) / int(x[3]) for x in rows if x[0] == "none" and int(x[3]) > 0}
    for m in modes:
        if m == "none":
            continue
        cells = []
        for ph in ("wrk", "wrk_paced", "iperf3"):
            v = sorted(100 * ((int(x[8]) + int(x[6])) / int(x[3]) / base[(x[1], ph)] - 1) for x in rows
                       if x[0] == m and x[2] == ph and int(x[3]) > 0 and base.get((x[1], ph)))
            cells.append("%6.1f [%5.1f,%5.1f]" % (st.median(v), v[0], v[-1]) if v else "-")
        print("%-12s %-22s %-22s %-22s" % (m, *cells))
pf = sys.argv[1].replace("rows", "progs")
progs = [l.split() for l in open(pf)] if os.path.exists(pf) else []
if progs:
    print()
    print("per program and phase: medians over repetitions of ns per run, runs and ns per unit (request, MB)")
    print("%-10s %-10s %-22s %9s %9s %9s" % ("mode", "phase", "program", "ns/run", "runs/unit", "ns/unit"))
    for ph in ("wrk", "wrk_paced", "iperf3"):
        for m in modes:
            for name in sorted({x[2] for x in progs if x[0] == m and x[1] == ph}):
                r = [x for x in progs if x[0] == m and x[1] == ph and x[2] == name and int(x[3]) > 0 and int(x[5]) > 0]
                if not r:
                    continue
                print("%-10s %-10s %-22s %9.0f %9.2f %9.0f" % (m, ph, name, st.median(int(x[4]) / int(x[3]) for x in r),
                      st.median(int(x[3]) / int(x[5]) for x in r), st.median(int(x[4]) / int(x[5]) for x in r)))
print("lost events per mode (sum over repetitions): " +
      ", ".join("%s %d" % (m, sum(int(x[3]) for x in lost if x[0] == m and x[3].isdigit())) for m in modes))
PY
