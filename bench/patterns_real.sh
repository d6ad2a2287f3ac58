#!/bin/bash
# make bench-patterns-real: npanalyze patterns on the public DeLag traces
# (../shared/data/delag-dev, 230 E-Shopper + 230 TrainTicket experiments),
# scored by the ICPE'20 §4.3 rule (tests/tools/delag_score.py; the anomaly
# column is stripped before the miner sees a file). Every mode with the
# oracle interval [min, max] of the labelled requests, then the default mode
# with the automatic interval (coverage of the labelled requests, F).
# One process per file, --threads 1, files one after the other.
# Env: MODES (default,set,icpe,beam,gaset,nsga2), STEP (1 = every file),
#      DELAG (the .tar.zst or an extracted directory), NP_BUILD (build/).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
DELAG=${DELAG:-$ROOT/../shared/data/delag-dev/delag-dev.tar.zst}
MODES=${MODES:-default,set,icpe,beam,gaset,nsga2}
STEP=${STEP:-1}
[ -x "$NP_BUILD/npanalyze" ] || { echo "bench-patterns-real: $NP_BUILD/npanalyze missing (make)" >&2; exit 1; }
[ -e "$DELAG" ] || { echo "bench-patterns-real: $DELAG missing" >&2; exit 1; }
ONE=""
command -v taskset >/dev/null && ONE="taskset -c 0"
echo "== DeLag dev split ($DELAG, every ${STEP}. file), ICPE'20 §4.3 scoring, modes $MODES"
$ONE python3 "$ROOT/tests/tools/delag_score.py" --npanalyze "$NP_BUILD/npanalyze" --data "$DELAG" \
	--modes "$MODES" --step "$STEP" --auto --threads 1
