#!/bin/bash
# bench/e2e_probe.sh: counters of one recorder under bench/e2e_pairs.sh's
# saturated load (wrk -t1 -c32 on CPU 0, nginx on CPU 1, veth between two
# namespaces), per request, for claims that do not depend on the machine's
# load: context switches and migrations on each CPU (perf stat -C, software
# events), the recorder process's wakeups (schedstat timeslices), and with
# PROBE_STATS=1 the run count and run time of each of its BPF programs
# (BPF_ENABLE_STATS held during the phase: adds two clock reads per run, so
# req/s of those phases is not comparable to the others').
# Modes (PROBE_MODES, default "none nprec"): none, nprec (NP_BUILD's, args
# from NPREC_ARGS), alt (NPREC_ALT's nprec, same args), and NAME:ARGS
# (NP_BUILD's nprec with ARGS, ':' as separator, '+' for spaces).
# Per mode per round, rounds mirrored: requests, req/s, cs/req and mig/req
# on CPU 0 and 1, recorder slices per 1000 requests. Env: ROUNDS (3),
# PROBE_T (3), PROBE_CONNS (wrk connections, 32), NP_BUILD (build/), PROBE_NS (e2ep).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
ROUNDS=${ROUNDS:-3} T=${PROBE_T:-3} CONNS=${PROBE_CONNS:-32}
PFX=${PROBE_NS:-e2ep}
NSA=$PFX-a NSB=$PFX-b IPA=10.77.33.1 IPB=10.77.33.2
MODES=(${PROBE_MODES:-none nprec})
TMP=$(mktemp -d /tmp/np-e2e-probe.XXXXXX)
PIDS=() REC_PIDS=()
. "$ROOT/bench/txn_lib.sh"   # txn_traps (txn_cleanup on exit: REC_PIDS, PIDS, namespaces, $TMP), txn_setup_nginx
txn_traps
. "$ROOT/bench/rec_lib.sh"
txn_setup_nginx "$PFX"
sleep 1
NGW=$(pgrep -P "$NGM" | head -1)
taskset -pc 1 "$NGW" >/dev/null && taskset -pc 1 "$NGM" >/dev/null || exit 1

if [ -n "${PROBE_STATS:-}" ]; then
	python3 "$ROOT/bench/bpfstats_hold.py" "$TMP/stats.ready" & PIDS+=($!)
	for _ in $(seq 50); do [ -e "$TMP/stats.ready" ] && break; sleep 0.1; done
fi

start() {
	local m=$1 bin=$NP_BUILD/nprec args=${NPREC_ARGS:-}
	case $m in
	none) return;;
	nprec) ;;
	alt) bin=$NPREC_ALT;;
	*:*) args=${m#*:}; args=${args//+/ };;
	esac
	# shellcheck disable=SC2086
	"$bin" -q $args -o "$TMP/r.npr" 2>>"$TMP/rec.err" & REC_PIDS=($!)
	rec_wait_ready
}
slices() { [ ${#REC_PIDS[@]} -gt 0 ] && cat /proc/${REC_PIDS[0]}/task/*/schedstat 2>/dev/null | awk '{s+=$3} END {print s+0}' || echo 0; }
measure() {
	local m=$1 r=$2 s0 s1 n
	start "$m"
	ip netns exec $NSA taskset -c 0 wrk -t1 -c"$CONNS" -d1s "http://$IPB:8080/index.html" >/dev/null 2>&1
	[ -n "${PROBE_STATS:-}" ] && [ ${#REC_PIDS[@]} -gt 0 ] && python3 "$ROOT/bench/recprogs.py" "${REC_PIDS[@]}" | sort > "$TMP/p0"
	s0=$(slices)
	perf stat -x, -e context-switches,cpu-migrations -C 0 -o "$TMP/ps0" -- sleep "$((T + 1))" &
	local pa=$!
	perf stat -x, -e context-switches,cpu-migrations -C 1 -o "$TMP/ps1" -- sleep "$((T + 1))" &
	local pb=$!
	ip netns exec $NSA taskset -c 0 wrk -t1 -c"$CONNS" -d"${T}s" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	s1=$(slices)
	wait $pa $pb
	n=$(awk '/requests in/ {print $1}' "$TMP/wrk.out")
	local cs0 mg0 cs1 mg1
	cs0=$(awk -F, '$3=="context-switches" {print $1}' "$TMP/ps0"); mg0=$(awk -F, '$3=="cpu-migrations" {print $1}' "$TMP/ps0")
	cs1=$(awk -F, '$3=="context-switches" {print $1}' "$TMP/ps1"); mg1=$(awk -F, '$3=="cpu-migrations" {print $1}' "$TMP/ps1")
	if [ -n "${PROBE_STATS:-}" ] && [ ${#REC_PIDS[@]} -gt 0 ]; then
		python3 "$ROOT/bench/recprogs.py" "${REC_PIDS[@]}" | sort > "$TMP/p1"
		join "$TMP/p1" "$TMP/p0" | awk -v m="$m" -v n="$n" '{printf "  prog %s %-24s runs/req %6.2f ns/req %7.0f ns/run %5.0f\n", m, $1, ($2-$4)/n, ($3-$5)/n, ($2-$4) ? ($3-$5)/($2-$4) : 0}'
	fi
	for p in "${REC_PIDS[@]}"; do kill -INT "$p"; wait "$p"; done
	REC_PIDS=()
	awk -v m="$m" -v r="$r" -v n="$n" -v t="$T" -v c0="$cs0" -v g0="$mg0" -v c1="$cs1" -v g1="$mg1" -v s=$((s1 - s0)) \
		'BEGIN {printf "%-22s %d %8d %8.0f cs0/kreq %7.2f cs1/kreq %7.2f mig/kreq %5.2f %5.2f recslices/kreq %6.2f\n", m, r, n, n/t, 1000*c0/n, 1000*c1/n, 1000*g0/n, 1000*g1/n, 1000*s/n}' | tee -a "$TMP/rows"
	rm -f "$TMP/r.npr"
}
echo "e2e_probe: load $(cut -d' ' -f1-3 /proc/loadavg)"
M=${#MODES[@]}
for r in $(seq "$ROUNDS"); do
	for ((j = 0; j < M; j++)); do
		if [ $((r % 2)) = 1 ]; then m=${MODES[$j]}; else m=${MODES[$((M - 1 - j))]}; fi
		measure "$m" "$r"
	done
done
echo "e2e_probe: load at the end $(cut -d' ' -f1-3 /proc/loadavg); medians:"
python3 - "$TMP/rows" "${MODES[@]}" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
for m in sys.argv[2:]:
    r = [x for x in rows if x[0] == m]
    if not r: continue
    rps = [float(x[3]) for x in r]
    print("%-22s req/s %8.0f [%6.0f..%6.0f] cs0/kreq %6.2f cs1/kreq %6.2f recslices/kreq %6.2f" % (m, st.median(rps), min(rps), max(rps),
          st.median(float(x[5]) for x in r), st.median(float(x[7]) for x in r), st.median(float(x[12]) for x in r)))
PY
