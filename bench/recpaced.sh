#!/bin/bash
# bench/recpaced.sh: where nprec's cost goes on the paced wrk phase of
# bench/record.sh (wrk -t1 -c8, PACE_MS between requests per connection,
# ~6 k requests/s, CPUs partly idle), with an A/B of two nprec builds in
# alternating order (A B B A ...) in the same minutes.
#
# Per measurement (one recorder started, settled, then T seconds of paced
# wrk), one line of figures: requests/s, the recorder process's CPU over
# the phase (ms per second, /proc/PID/schedstat: ns, not clock ticks), the
# machine's busy CPU (/proc/stat), and with BPF_STATS=1 the run time and
# run count of the recorder's BPF programs (bench/recprogs.py; adds two
# clock reads to every run). With PERF=1 the phase runs under perf record
# -a -g -F 997 (as bench/record.sh's perf repetitions) and the profile's
# recorder samples are broken down by bench/recshare.py --by-symbol; the
# perf scripts are kept in KEEP (if set) for a closer look.
#
# Env: NPREC_A (nprec binary of mode A, build/nprec), NPREC_B (of mode B;
# unset: A only), MODES ("none A B"), REPS (6), BENCH_T (3), PACE_MS (1),
# BENCH_NS (namespace prefix, rp), PERF (0), BPF_STATS (0), KEEP (dir),
# NPREC_ARGS (extra options for both builds).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NPREC_A=${NPREC_A:-$ROOT/build/nprec}
NPREC_B=${NPREC_B:-}
T=${BENCH_T:-3}
REPS=${REPS:-6}
PFX=${BENCH_NS:-rp}
NSA=$PFX-a NSB=$PFX-b
IPA=10.77.19.1 IPB=10.77.19.2
TMP=$(mktemp -d /tmp/np-recpaced.XXXXXX)
PIDS=()
MODES=(${MODES:-none A${NPREC_B:+ B}})
KEEP=${KEEP:-}
[ -n "$KEEP" ] && mkdir -p "$KEEP"

BPF_STATS_ORIG=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
. "$ROOT/bench/txn_lib.sh"   # txn_traps (txn_cleanup on exit), txn_setup_nginx, txn_rps
txn_traps
[ "$(id -u)" -eq 0 ] || { echo "recpaced: needs root" >&2; exit 1; }

. "$ROOT/bench/rec_lib.sh"   # rec_wait_ready, rec_own_samples
REC_PIDS=()

# as bench/record.sh: endpoints pinned (nginx's worker on CPU 1), RPS to the endpoints' CPUs
txn_setup_nginx $PFX 10
txn_rps $PFX
echo "function delay() return ${PACE_MS:-1} end" > "$TMP/pace.lua"
sleep 1

sched_ns() { awk '{print $1}' "/proc/$1/schedstat" 2>/dev/null || echo 0; }
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
bpf_sum() { [ "${BPF_STATS:-0}" = 1 ] && python3 "$ROOT/bench/recprogs.py" --sum "$@" | awk '{print $1, $3}' || echo "0 0"; }

# measure MODE REP: one line "mode rep rps rec_ms_per_s busy_ms bpf_ns bpf_runs"
measure() {
	local mode=$1 rep=$2 bin= pid=0 s0 s1 b0 b1 f0 f1 t0 t1 rps
	case $mode in A) bin=$NPREC_A;; B) bin=$NPREC_B;; esac
	REC_PIDS=()
	if [ -n "$bin" ]; then
		# shellcheck disable=SC2086
		"$bin" -q ${NPREC_ARGS:-} -o "$TMP/rec.npr" 2>>"$TMP/rec.err" & pid=$!
		REC_PIDS=($pid); PIDS+=($pid)
		rec_wait_ready
		sleep 1
	fi
	[ "${PERF:-0}" = 1 ] && { perf record -q -a -g -F 997 -e cpu-clock -o "$TMP/p.perf" >/dev/null 2>&1 & PERF_PID=$!; PIDS+=($PERF_PID); sleep 0.5; }
	[ "${BPF_STATS:-0}" = 1 ] && [ "$pid" != 0 ] && python3 "$ROOT/bench/recprogs.py" $pid > "$TMP/progs0"
	s0=$(sched_ns $pid); b0=$(busy_ticks); f0=$(bpf_sum $pid); t0=$(date +%s%N)
	ip netns exec $NSA taskset -c 0 wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	s1=$(sched_ns $pid); b1=$(busy_ticks); f1=$(bpf_sum $pid); t1=$(date +%s%N)
	if [ "${BPF_STATS:-0}" = 1 ] && [ "$pid" != 0 ]; then
		python3 "$ROOT/bench/recprogs.py" $pid | awk -v m=$mode 'FNR == NR { c[$1] = $2; n[$1] = $3; next }
			{ print m, $1, $2 - c[$1], $3 - n[$1] }' "$TMP/progs0" - >> "$TMP/progs"
	fi
	if [ "${PERF:-0}" = 1 ]; then
		kill -INT $PERF_PID; wait $PERF_PID 2>/dev/null
		# other recorders on the machine (other users' tests): their process
		# renamed, and samples through their BPF programs (code outside this
		# one's programs: by address, a recorder of the same build has the
		# same tags) left out of the workload, so only this recorder counts
		rec_own_samples "$TMP/p.perf" ${REC_PIDS[@]+"${REC_PIDS[@]}"} > "$TMP/p.txt"
		[ -n "$KEEP" ] && cp "$TMP/p.txt" "$KEEP/$mode.$rep.txt"
		python3 "$ROOT/bench/recshare.py" --by-symbol --workload '^(wrk|nginx|swapper|ksoftirqd/[0-9]+)$' nprec \
			< "$TMP/p.txt" | sed "s/^/$mode $rep /" >> "$TMP/bysym"
		rm -f "$TMP/p.perf" "$TMP/p.txt"
	fi
	others=$(pgrep -x nprec | grep -vcx "$pid")
	if [ "$pid" != 0 ]; then kill -INT $pid; wait $pid 2>/dev/null; fi
	rm -f "$TMP"/rec.npr*
	rps=$(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$TMP/wrk.out")
	set -- $f0 $f1
	echo "$mode $rep ${rps:-0} $(awk -v a=$s0 -v b=$s1 -v t0=$t0 -v t1=$t1 'BEGIN{printf "%.2f", (b-a)/1e6/((t1-t0)/1e9)}') \
$(( (b1 - b0) * 1000 / $(getconf CLK_TCK) )) $(( $3 - $1 )) $(( $4 - $2 )) others=$others" >> "$TMP/results"
}

[ "${BPF_STATS:-0}" = 1 ] && sysctl -qw kernel.bpf_stats_enabled=1 || sysctl -qw kernel.bpf_stats_enabled=0
echo "recpaced: $REPS x (${MODES[*]}), paced wrk ${T}s; A=$NPREC_A B=${NPREC_B:--}; perf=${PERF:-0} bpf_stats=${BPF_STATS:-0}; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq "$REPS"); do
	order=("${MODES[@]}")
	if [ $((rep % 2)) -eq 0 ]; then order=(); for ((i = ${#MODES[@]} - 1; i >= 0; i--)); do order+=("${MODES[i]}"); done; fi
	for m in "${order[@]}"; do
		measure "$m" "$rep"
		echo "  $(tail -1 "$TMP/results")" >&2
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$TMP/results" "$T" "${MODES[@]}" <<'PY'
import sys, statistics as st
t = float(sys.argv[2])
rows = [l.split() for l in open(sys.argv[1])]
print("mode  n   req/s  rec_ms/s [min,max]        busy_ms   bpf_ns/run  bpf_ms/s")
for m in sys.argv[3:]:
    r = [x for x in rows if x[0] == m]
    if not r:
        continue
    ms = sorted(float(x[3]) for x in r)
    runs = sum(int(x[6]) for x in r)
    ns = sum(int(x[5]) for x in r)
    print("%-4s %2d %7.0f %8.2f [%.2f,%.2f] %9.0f %12s %9s" % (m, len(r), st.median(float(x[2]) for x in r),
          st.median(ms), ms[0], ms[-1], st.median(float(x[4]) for x in r),
          "%.0f" % (ns / runs) if runs else "-", "%.2f" % (ns / 1e6 / len(r) / t) if runs else "-"))
PY
if [ -s "$TMP/progs" ]; then
	python3 - "$TMP/progs" "$TMP/results" "$T" <<'PY'
import sys
acc = {}
for l in open(sys.argv[1]):
    m, name, cnt, ns = l.split()
    a = acc.setdefault((m, name), [0, 0])
    a[0] += int(cnt); a[1] += int(ns)
n = {}
for l in open(sys.argv[2]):
    n[l.split()[0]] = n.get(l.split()[0], 0) + 1
t = float(sys.argv[3])
print("BPF programs per mode (bpf_stats): runs/s, ns/run, ms/s of run time (over n phases of %gs)" % t)
for (m, name), (cnt, ns) in sorted(acc.items(), key=lambda x: (x[0][0], -x[1][1])):
    if cnt:
        print("  %-4s %-24s %9.0f %7.0f %8.3f" % (m, name, cnt / n[m] / t, ns / cnt, ns / 1e6 / n[m] / t))
PY
fi
if [ -s "$TMP/bysym" ]; then
	python3 "$ROOT/bench/recshare.py" --merge-by-symbol < "$TMP/bysym"
fi
