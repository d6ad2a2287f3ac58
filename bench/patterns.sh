#!/bin/bash
# make bench-patterns: npanalyze patterns on the ICPE 2020 methodology
# (§4.2-4.3) with tests/tools/patgen.
#  1. accuracy: mean/std of precision, recall and F over SESSIONS normal and
#     SESSIONS noised sessions of 1000 requests, per mode, with the paper's
#     interval I = [Lmin, Lmax] of the affected requests; k-means (k = 2..6,
#     best k by the score, as the paper ran it) as the RQ1 baseline;
#  2. run time on one core (taskset, --threads 1) for 1k/10k/100k requests;
#  3. peak memory of the CLI (npanalyze patterns --csv) for 1k/10k/100k;
#  plus the same accuracy on harder sessions (--spread 2.5) and with the
#  automatic interval.
# Env: SESSIONS (30), MODES (cover,set,icpe,icpe:mad,beam,gaset,nsga2,kmeans), NP_BUILD (build/).
# The benchmark that counts is bench/patterns_real.sh (public DeLag traces).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
PATGEN=$NP_BUILD/tools/patgen
NPANALYZE=$NP_BUILD/npanalyze
SESSIONS=${SESSIONS:-30}
MODES=${MODES:-cover,set,icpe,icpe:mad,beam,gaset,nsga2,kmeans}
TMP=$(mktemp -d /tmp/np-bench-patterns.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -x "$PATGEN" ] || { echo "bench-patterns: $PATGEN missing (make tools)" >&2; exit 1; }
ONE=""
command -v taskset >/dev/null && ONE="taskset -c 0"

echo "== accuracy: $SESSIONS normal + $SESSIONS noised sessions x 1000 requests (modes $MODES)"
echo "   (icpe = the paper's GA with the authors' bandwidth rule; :mad = robust-sigma bandwidth)"
$ONE "$PATGEN" eval --sessions "$SESSIONS" --n 1000 --modes "$MODES" --threads 1 --quiet

echo
echo "== harder sessions: RPC time sigmas x2.5 (latency modes overlap), same methodology"
$ONE "$PATGEN" eval --sessions "$SESSIONS" --n 1000 --modes cover,set,beam,icpe:mad,nsga2,kmeans --spread 2.5 --threads 1 --quiet

echo
echo "== automatic interval instead of the paper's [Lmin, Lmax] (cover and set modes; k-means keeps the oracle interval)"
$ONE "$PATGEN" eval --sessions "$SESSIONS" --n 1000 --modes cover,set --auto --threads 1 --quiet
$ONE "$PATGEN" eval --sessions "$SESSIONS" --n 1000 --modes cover,set --auto --spread 2.5 --threads 1 --quiet

echo
echo "== run time on one core (--threads 1), one normal and one noised session per size"
$ONE "$PATGEN" time --sizes 1000,10000,100000 --modes cover,set,icpe:mad,icpe --threads 1
$ONE "$PATGEN" time --sizes 1000,10000,100000 --modes cover,set,icpe:mad,icpe --threads 1 --noise | tail -n +2
echo "   cover on 2 threads (the model built per RPC in parallel, the beam's candidates of a round too)"
"$PATGEN" time --sizes 10000,100000 --modes cover --threads 2 | tail -n +2

if [ -x "$NPANALYZE" ] && [ -x /usr/bin/time ]; then
	echo
	echo "== CLI end to end (CSV import + analysis + .npa), one core: wall s, peak RSS"
	for n in 1000 10000 100000; do
		"$PATGEN" csv --n "$n" --seed 7 --noise -o "$TMP/s$n.csv" > /dev/null
		/usr/bin/time -f "%e %M" -o "$TMP/t$n" $ONE "$NPANALYZE" patterns --csv "$TMP/s$n.csv" \
			--threads 1 -o "$TMP/s$n.npa" > "$TMP/o$n" 2>&1 || { echo "npanalyze patterns failed:"; cat "$TMP/o$n"; }
		read -r secs kb < "$TMP/t$n"
		printf "requests %7d  wall %6.3f s  peak RSS %7.1f MB  patterns %d\n" "$n" "$secs" \
			"$(echo "$kb / 1024" | bc -l)" "$(grep -c '^pattern ' "$TMP/o$n")"
	done
fi
