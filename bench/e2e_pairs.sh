#!/bin/bash
# bench/e2e_pairs.sh: the end-to-end cost of a recorder, in timed pairs that
# can resolve a few per cent (issue 24: saturated req/s loss <= 3 % and below
# tcpdump -w -s128's, paced p99 inflation <= 5 %).
#
# Setup (as the issue's independent check): two namespaces joined by veth,
# nginx (one worker, keep-alive, 4 KiB file) pinned to CPU 1 in B, wrk
# pinned to CPU 0 in A; recorders unpinned (as in real use, so what they
# cost the endpoints' CPUs is part of what is measured).
#
# Per round, every mode once, the order rotated by one mode per round (so
# each mode is measured first, second, ... equally often); per mode: the
# recorder is started and ready (nprec: its signal handlers set) plus
# SETTLE s, then a saturated wrk (-t1 -c$E2E_CONNS, closed loop: req/s)
# and a paced wrk (-t1 -c$E2E_PACE_CONNS, each connection waiting
# PACE_MS between requests, CPUs partly idle: p99), E2E_T s each.
# Each mode's figure is divided by "none" of the SAME round (slow drift of
# the machine cancels), and per mode the median of those paired losses /
# inflations is printed with a distribution-free 95 % interval of the
# median: order statistics x(k) .. x(n+1-k) of the n pairs, k the largest
# with binomial(n, 1/2) coverage >= 95 % (the sign test's interval; 8
# rounds: min..max at 99.2 %, 9: 2nd..8th at 96.1 %, 10: 2nd..9th at 97.9 %).
# The verdict per target says "met" only when the whole interval is
# inside it, "not met" when the whole interval is outside.
# For every recorder process it also prints what the scheduler saw of it
# per phase (/proc/PID/task/*/schedstat: CPU time, run-queue wait,
# timeslices = times it was put on a CPU), figures that do not depend on
# the timing noise of a shared machine the way req/s does.
#
# Modes: none, nprec (defaults), tcpdump (-w -s128 on both veth ends),
# nprec_alt (NPREC_ALT=path: another build, added when set), and the
# scheduling experiments of issue 24 (E2E_MODES="none nprec nprec_batch
# ..."): nprec_batch (SCHED_BATCH), nprec_idle (SCHED_IDLE, --nice 0),
# nprec_cpu0 (pinned to CPU 0, away from nginx), nprec_avoid
# (NPREC_TEST_AVOID_BUSY=1: leaves the busiest CPU), nprec_lidle and
# nprec_lbatch (NPREC_TEST_LIGHT_POLICY=idle|batch: SCHED_IDLE / SCHED_BATCH
# only while --nice's light state holds), nprec_nonice (--nice 0),
# nprec_args (NPREC_ARGS="...").
# E2E_SCHED=1 also records the scheduler during each nprec phase
# (perf sched record in a private mount namespace with its own tracefs:
# never in the root namespace) and prints the recorder's runs per CPU and
# the run-queue delay they caused nginx (bench/schedruns.py). It perturbs
# what it measures: diagnostics only, not for the timed figures.
#
# Env: ROUNDS (9), E2E_T (4 s), SETTLE (1 s), E2E_CONNS (32),
# E2E_PACE_CONNS (8), PACE_MS (1), E2E_MODES, NPREC_ALT, NPREC_ARGS,
# E2E_NS (namespace prefix, e2ep), NP_BUILD (build/), E2E_SCHED.
# Default run: 9 rounds x 3 modes x ~11 s = about 5 minutes (a quiet VM; estimated
# from the per-measurement overhead seen under load, not timed quiet).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec
NPREPORT=$NP_BUILD/npreport
ROUNDS=${ROUNDS:-9} T=${E2E_T:-4} SETTLE=${SETTLE:-1}
CONNS=${E2E_CONNS:-32} PCONNS=${E2E_PACE_CONNS:-8} PACE_MS=${PACE_MS:-1}
PFX=${E2E_NS:-e2ep}
NSA=$PFX-a NSB=$PFX-b IPA=10.77.29.1 IPB=10.77.29.2
MODES=(${E2E_MODES:-none nprec tcpdump})
[ -n "${NPREC_ALT:-}" ] && [[ " ${MODES[*]} " != *" nprec_alt "* ]] && MODES+=(nprec_alt)
TMP=$(mktemp -d /tmp/np-e2e-pairs.XXXXXX)
PIDS=() REC_PIDS=()

cleanup() {
	local p ns
	for p in "${REC_PIDS[@]}" "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.3
	for p in "${REC_PIDS[@]}" "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for ns in $NSA $NSB; do ip netns pids $ns 2>/dev/null | xargs -r kill -9; ip netns del $ns 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { echo "e2e-pairs: needs root" >&2; exit 1; }
for t in wrk nginx tcpdump taskset chrt; do
	command -v $t >/dev/null || { echo "e2e-pairs: $t missing (make deps)" >&2; exit 1; }
done
[ -x "$NPREC" ] || { echo "e2e-pairs: $NPREC not built" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "e2e-pairs: needs 2 CPUs (nginx and wrk pinned apart)" >&2; exit 1; }
if [ -n "${E2E_SCHED:-}" ] && ! command -v perf >/dev/null; then
	echo "e2e-pairs: E2E_SCHED needs perf" >&2; exit 1
fi

. "$ROOT/bench/txn_lib.sh"   # txn_setup_nginx
. "$ROOT/bench/rec_lib.sh"   # rec_wait_ready, to_us, npr_lost

rec_bg() { "$@" 2>>"$TMP/rec.err" & REC_PIDS+=($!); }
mode_none() { :; }
mode_nprec() { rec_bg "$NPREC" -q -o "$1.npr"; }
mode_nprec_alt() { rec_bg "${NPREC_ALT:?set NPREC_ALT to the other nprec binary}" -q -o "$1.npr"; }
mode_nprec_args() { rec_bg "$NPREC" -q ${NPREC_ARGS:-} -o "$1.npr"; }
mode_nprec_batch() { rec_bg chrt -b 0 "$NPREC" -q -o "$1.npr"; }
mode_nprec_idle() { rec_bg chrt -i 0 "$NPREC" -q --nice 0 -o "$1.npr"; }
mode_nprec_cpu0() { rec_bg taskset -c 0 "$NPREC" -q -o "$1.npr"; }
# affinity away from the busiest CPU (record/core/recprio.h, rec_aff)
mode_nprec_avoid() { NPREC_TEST_AVOID_BUSY=1 rec_bg "$NPREC" -q -o "$1.npr"; }
# --nice's light state also as SCHED_IDLE / SCHED_BATCH, SCHED_OTHER while busy (recprio.h)
mode_nprec_lidle() { NPREC_TEST_LIGHT_POLICY=idle rec_bg "$NPREC" -q -o "$1.npr"; }
mode_nprec_lbatch() { NPREC_TEST_LIGHT_POLICY=batch rec_bg "$NPREC" -q -o "$1.npr"; }
mode_nprec_nonice() { rec_bg "$NPREC" -q --nice 0 -o "$1.npr"; }
mode_tcpdump() {
	rec_bg ip netns exec $NSA tcpdump -q -i ${PFX}a0 -s 128 -w "$1.a.pcap"
	rec_bg ip netns exec $NSB tcpdump -q -i ${PFX}b0 -s 128 -w "$1.b.pcap"
}
rec_stop() {
	local p
	for p in "${REC_PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${REC_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	REC_PIDS=()
}
# rec_sched: "run_ns wait_ns slices" summed over the recorders' threads
# (ip netns exec and chrt exec into the recorder, so REC_PIDS are theirs)
rec_sched() {
	local p
	for p in "${REC_PIDS[@]}"; do cat /proc/$p/task/*/schedstat 2>/dev/null; done |
		awk '{r+=$1; w+=$2; s+=$3} END {printf "%d %d %d", r, w, s}'
}

# ---- setup: veth between two namespaces, nginx pinned to CPU 1 ----
txn_setup_nginx "$PFX"
PIDS+=($NGM)
for i in $(seq 50); do
	NGW=$(pgrep -P "$NGM" | head -1)
	[ -n "$NGW" ] && break
	sleep 0.1
done
[ -n "${NGW:-}" ] || { echo "e2e-pairs: nginx did not start" >&2; exit 1; }
taskset -pc 1 "$NGW" >/dev/null && taskset -pc 1 "$NGM" >/dev/null || exit 1
echo "function delay() return $PACE_MS end" > "$TMP/pace.lua"
sleep 1

# rec_cpus: the first recorder's CPUs allowed at the end of a phase (nprec_avoid changes them)
rec_cpus() {
	[ ${#REC_PIDS[@]} -gt 0 ] && awk '/^Cpus_allowed_list:/ {print $2}' /proc/${REC_PIDS[0]}/status 2>/dev/null
}

# sched_start LABEL / sched_stop: perf sched record of the whole machine
# during a phase, in a private mount namespace where tracefs is mounted
# (perf needs it for the tracepoints; the root namespace stays as it is)
sched_start() {
	unshare -m --propagation private sh -c 'mount -t tracefs nodev /sys/kernel/tracing || exit 1
		exec perf sched record -q -o "$1"' sh "$TMP/sched.$1.data" >/dev/null 2>>"$TMP/sched.err" &
	SCHED_PID=$!
	PIDS+=($SCHED_PID)
	sleep 0.5
}
# sched_stop LABEL: ends the recording; the pids to look at go beside it
sched_stop() {
	kill -INT "$SCHED_PID" 2>/dev/null; wait "$SCHED_PID" 2>/dev/null
	echo "${REC_PIDS[*]};$NGW;$(cat "$TMP/wrk.pid")" > "$TMP/sched.$1.pids"
}

wrk_run() {   # wrk_run CONNS [LUA]: -> "req/s p50_us p99_us"
	local lua=()
	[ -n "${2:-}" ] && lua=(-s "$2")
	ip netns exec $NSA taskset -c 0 wrk -t1 -c"$1" -d"${T}s" --latency "${lua[@]}" \
		"http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1 &
	echo $! > "$TMP/wrk.pid"
	wait $!
	echo "$(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$TMP/wrk.out") $(to_us "$(awk '$1=="50%" {print $2}' "$TMP/wrk.out")") $(to_us "$(awk '$1=="99%" {print $2}' "$TMP/wrk.out")")"
}

# measure MODE ROUND: appends "mode round rps p50 p99 prps pp50 pp99 lost
# run_ns wait_ns slices (saturated) run_ns wait_ns slices (paced) cpus_sat cpus_paced"
measure() {
	local mode=$1 round=$2 out="$TMP/$1.$2" sat pac s0 s1 s2 a1 a2 lost=0 f
	"mode_$mode" "$out"
	rec_wait_ready
	sleep "$SETTLE"
	local sched=
	[ -n "${E2E_SCHED:-}" ] && [ "${mode#nprec}" != "$mode" ] && sched=1
	[ -n "$sched" ] && sched_start "$mode.$round.sat"
	s0=$(rec_sched)
	sat=$(wrk_run "$CONNS")
	s1=$(rec_sched)
	a1=$(rec_cpus)
	[ -n "$sched" ] && sched_stop "$mode.$round.sat" && sched_start "$mode.$round.paced"
	pac=$(wrk_run "$PCONNS" "$TMP/pace.lua")
	s2=$(rec_sched)
	a2=$(rec_cpus)
	[ -n "$sched" ] && sched_stop "$mode.$round.paced"
	rec_stop
	for f in "$out".npr; do [ -e "$f" ] && lost=$((lost + $(npr_lost "$NPREPORT" "$f"))); done
	[ "$mode" = tcpdump ] && lost=$(grep -ho '[0-9]* packets dropped by kernel' "$TMP/rec.err" | awk '{s+=$1} END {print s+0}')
	: > "$TMP/rec.err"
	rm -f "$out".*
	echo "$mode $round ${sat:-0 0 0} ${pac:-0 0 0} $lost" \
		"$(echo "${s0:-0 0 0} ${s1:-0 0 0} ${s2:-0 0 0}" | awk '{printf "%d %d %d %d %d %d", $4-$1, $5-$2, $6-$3, $7-$4, $8-$5, $9-$6}')" "${a1:--} ${a2:--}" >> "$TMP/results"
}

echo "e2e-pairs: $ROUNDS rounds x (${MODES[*]}), saturated wrk -t1 -c$CONNS and paced wrk -t1 -c$PCONNS" \
	"(${PACE_MS} ms between requests) ${T} s each; nginx on CPU 1, wrk on CPU 0, recorders unpinned; load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
START=$(date +%s)
M=${#MODES[@]}
for r in $(seq "$ROUNDS"); do
	for ((j = 0; j < M; j++)); do
		m=${MODES[$(( (j + r - 1) % M ))]}
		measure "$m" "$r"
		echo "  round $r $m: $(tail -1 "$TMP/results" | cut -d' ' -f3-9)" >&2
	done
done
DUR=$(($(date +%s) - START))
echo "e2e-pairs: timed part took ${DUR} s; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

E2E_DESC="$ROUNDS rounds x ${#MODES[@]} modes, ${T} s per measurement, ${DUR} s; saturated wrk -t1 -c$CONNS, paced wrk -t1 -c$PCONNS + ${PACE_MS} ms delay; nginx CPU 1, wrk CPU 0" \
	python3 "$ROOT/bench/e2e_stats.py" "$TMP/results" "${MODES[@]}"
if [ -n "${E2E_SCHED:-}" ]; then
	for f in "$TMP"/sched.*.data; do
		[ -e "$f" ] || continue
		n=${f#$TMP/sched.}; n=${n%.data}
		IFS=';' read -r rp ngw wp < "$TMP/sched.$n.pids"
		args=(--label "$n" --victim "nginx:1:$ngw" --victim "wrk:0:$wp")
		for p in $rp; do args+=(--rec "$p"); done
		unshare -m --propagation private sh -c 'mount -t tracefs nodev /sys/kernel/tracing
			exec perf sched timehist -i "$1"' sh "$f" 2>/dev/null |
			python3 "$ROOT/bench/schedruns.py" "${args[@]}"
	done
	[ -s "$TMP/sched.err" ] && { echo "perf sched messages:"; sort -u "$TMP/sched.err" | head -5; }
fi
