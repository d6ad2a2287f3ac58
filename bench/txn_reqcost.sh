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
# with NPREC_TEST_NO_HUB=1, for per-family program figures).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
REPS=${REPS:-5}
T=${BENCH_T:-3}
DISP=${DISPATCH_NS:-62}
NSA=${BENCH_NS:-txrq}-a NSB=${BENCH_NS:-txrq}-b
IPA=10.77.12.1 IPB=10.77.12.2
TMP=$(mktemp -d /tmp/np-bench-txrq.XXXXXX)
PIDS=()
declare -A OPTS=([default]="" [full]="--full" [nonc]="--no-netcpu" [full_nonc]="--full --no-netcpu")
MODES=(${MODES:-default full nonc full_nonc})
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for ns in $NSA $NSB; do ip netns pids $ns 2>/dev/null | xargs -r kill -9; ip netns del $ns 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
for t in wrk nginx iperf3; do command -v $t >/dev/null || { echo "$t missing" >&2; exit 1; }; done
[ -x "$NP_BUILD/nprec" ] || { echo "$NP_BUILD/nprec not built" >&2; exit 1; }

python3 "$ROOT/bench/bpfstats_hold.py" "$TMP/stats.ready" & PIDS+=($!)
for _ in $(seq 50); do [ -e "$TMP/stats.ready" ] && break; sleep 0.1; done
[ -e "$TMP/stats.ready" ] || { echo "cannot enable BPF statistics" >&2; exit 1; }

for ns in $NSA $NSB; do ip netns del $ns 2>/dev/null; ip netns add $ns; ip -n $ns link set lo up; done
ip link add txrqa0 netns $NSA type veth peer name txrqb0 netns $NSB
ip -n $NSA addr add $IPA/24 dev txrqa0; ip -n $NSB addr add $IPB/24 dev txrqb0
ip -n $NSA link set txrqa0 up; ip -n $NSB link set txrqb0 up
mkdir -p "$TMP/www" "$TMP/logs"; chmod 755 "$TMP" "$TMP/www"
head -c 4096 /dev/zero | tr '\0' x > "$TMP/www/index.html"
cat > "$TMP/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $TMP/nginx.pid; error_log $TMP/logs/error.log;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $TMP/logs; proxy_temp_path $TMP/logs;
  fastcgi_temp_path $TMP/logs; uwsgi_temp_path $TMP/logs; scgi_temp_path $TMP/logs;
  keepalive_requests 10000000; server { listen $IPB:8080; root $TMP/www; } }
CONF
ip netns exec $NSB nginx -e "$TMP/logs/error.log" -p "$TMP" -c "$TMP/nginx.conf" & PIDS+=($!)
ip netns exec $NSB iperf3 -s -p 5202 >/dev/null 2>&1 & PIDS+=($!)
echo "function delay() return 1 end" > "$TMP/pace.lua"
sleep 1

# snap PID: "bpf_ns runs process_ns now_ns" of that recorder's programs (its fds) and process
snap() {
	local b r
	read -r b _ r < <(python3 "$ROOT/bench/recprogs.py" --sum "$1")
	echo "$b $r $(cut -d' ' -f1 /proc/$1/schedstat) $(date +%s%N)"
}
# phase MODE REP PHASE UNITS BEFORE AFTER: one result row (the differences and the duration)
phase() {
	set -- "$1" "$2" "$3" "$4" $5 $6
	echo "$1 $2 $3 $4 $((${9} - $5)) $((${10} - $6)) $((${11} - $7)) $((${12} - $8))" >> "$TMP/rows"
}
measure() {
	local mode=$1 rep=$2 p s0 s1 s2 s3 n q mb
	# MODE_nohub: the same options, each family with its own programs
	local hub=0
	[[ $mode == *_nohub ]] && hub=1
	# shellcheck disable=SC2086
	NPREC_TEST_NO_HUB=$hub "$NP_BUILD/nprec" -q ${OPTS[${mode%_nohub}]} -o "$TMP/r.npr" 2>>"$TMP/rec.err" & p=$!
	for _ in $(seq 100); do [ -s "$TMP/r.npr" ] && break; sleep 0.1; done
	sleep 1
	# idle: what the recorder spends on the rest of the machine (other
	# users' syscalls, context switches and sockets hit its global hooks),
	# subtracted per second from the phases below
	s0=$(snap $p)
	sleep "$T"
	s1=$(snap $p)
	phase "$mode" "$rep" idle 1 "$s0" "$s1"
	s0=$s1
	python3 "$ROOT/bench/recprogs.py" $p | sort > "$TMP/progs.0"
	ip netns exec $NSA wrk -t1 -c8 -d"${T}s" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	s1=$(snap $p)
	n=$(awk '/requests in/ {print $1}' "$TMP/wrk.out")
	# per program over the saturated phase (with NPREC_TEST_NO_HUB=1 each
	# family's own; with the hub, the members' time is in the hub head's)
	python3 "$ROOT/bench/recprogs.py" $p | sort | join - "$TMP/progs.0" |
		awk -v m="$mode" -v n="${n:-0}" '{print m, $1, $2 - $4, $3 - $5, n}' >> "$TMP/progs"
	ip netns exec $NSA wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	s2=$(snap $p)
	q=$(awk '/requests in/ {print $1}' "$TMP/wrk.out")
	mb=$(ip netns exec $NSA iperf3 -c $IPB -p 5202 -t "$T" -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.0f" % (json.load(sys.stdin)["end"]["sum_received"]["bytes"]/1e6))' 2>/dev/null)
	s3=$(snap $p)
	kill -INT $p; wait $p
	local lost
	lost=$("$NP_BUILD/npreport" dump --type end "$TMP/r.npr" 2>/dev/null | python3 -c 'import json,sys
print(sum(json.loads(l)["body"].get("lost_total",0) for l in sys.stdin))' 2>/dev/null)
	phase "$mode" "$rep" wrk "${n:-0}" "$s0" "$s1"
	phase "$mode" "$rep" wrk_paced "${q:-0}" "$s1" "$s2"
	phase "$mode" "$rep" iperf3 "${mb:-0}" "$s2" "$s3"
	echo "$mode $rep lost ${lost:-?}" >> "$TMP/lost"
	rm -f "$TMP/r.npr"
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
print("%-10s %-10s %-8s %3s %8s %8s %8s %18s %7s %18s %9s" % ("mode", "phase", "unit", "n", "bpf_ns", "disp_ns",
      "proc_ns", "total_ns", "runs", "net_ns", "idle_ms/s"))
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
        print("%-10s %-10s %-8s %3d %8.0f %8.0f %8.0f %7.0f [%.0f,%.0f] %7.2f %7.0f [%.0f,%.0f] %9.1f" % (m, ph,
              unit[ph], len(r), st.median(bpf), st.median(runs) * disp, st.median(proc), st.median(tot),
              min(tot), max(tot), st.median(runs), st.median(net), min(net), max(net), st.median(irate)))
pf = sys.argv[1].replace("rows", "progs")
progs = [l.split() for l in open(pf)] if os.path.exists(pf) else []
if progs:
    print()
    print("per program, saturated wrk phase: medians over repetitions of ns per run, runs and ns per request")
    print("%-10s %-22s %9s %9s %9s" % ("mode", "program", "ns/run", "runs/req", "ns/req"))
    for m in modes:
        for name in sorted({x[1] for x in progs if x[0] == m}):
            r = [x for x in progs if x[0] == m and x[1] == name and int(x[2]) > 0 and int(x[4]) > 0]
            if not r:
                continue
            print("%-10s %-22s %9.0f %9.2f %9.0f" % (m, name, st.median(int(x[3]) / int(x[2]) for x in r),
                  st.median(int(x[2]) / int(x[4]) for x in r), st.median(int(x[3]) / int(x[4]) for x in r)))
print("lost events per mode (sum over repetitions): " +
      ", ".join("%s %d" % (m, sum(int(x[3]) for x in lost if x[0] == m and x[3].isdigit())) for m in modes))
PY
