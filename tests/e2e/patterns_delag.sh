#!/usr/bin/env bash
# npanalyze patterns (default mode) on a few public DeLag experiments
# (../shared/data/delag-dev), scored against their labels with the ICPE'20
# §4.3 rule (tests/tools/delag_score.py; the anomaly column is stripped
# before the miner sees a file). Each file holds two injected problems that
# slow requests into one latency range; the TrainTicket ones are cases the
# cover rules once lost (156: a slowed mode cut by a mean-shift threshold,
# 184: a cluster the decision-list order enlarged, 080: one cause straddling
# a threshold split in two). A regression guard on development files, not
# an accuracy figure: docs/BENCHMARKS.md has those (make bench-patterns-real).
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init patterns_delag
command -v python3 >/dev/null || e2e_skip "python3 missing"
[ -x "$NPANALYZE" ] || e2e_skip "npanalyze not built"
TAR=${DELAG:-$E2E_ROOT/../shared/data/delag-dev/delag-dev.tar.zst}
[ -f "$TAR" ] || e2e_skip "$TAR missing"
FILES="eshopper/050.csv eshopper/051.csv trainticket/156.csv trainticket/184.csv trainticket/080.csv"
tar --zstd -xf "$TAR" -C "$E2E_TMP" $FILES 2> "$E2E_TMP/tar.err"
check "the experiments extracted" test -s "$E2E_TMP/trainticket/080.csv"
python3 "$E2E_ROOT/tests/tools/delag_score.py" --npanalyze "$NPANALYZE" --data "$E2E_TMP" \
	--csv-out "$E2E_TMP/f.csv" > "$E2E_TMP/table.txt" 2> "$E2E_TMP/score.err"
check "scorer ran every file (exit $?)" test -s "$E2E_TMP/f.csv"
cat "$E2E_TMP/table.txt" >&2
f() { awk -F, -v s="$1" -v n="$2" '$1==s && $2==n {print $5}' "$E2E_TMP/f.csv"; }
for n in 050 051; do
	check "E-Shopper $n: both problems found, F $(f eshopper $n.csv) >= 0.95" ge "$(f eshopper $n.csv)" 0.95
done
for n in 156 184 080; do
	check "TrainTicket $n: F $(f trainticket $n.csv) >= 0.85" ge "$(f trainticket $n.csv)" 0.85
done
# the miner never sees the labels: the copy it reads lacks the anomaly
# column and keeps every other one
python3 -c "import sys; sys.path.insert(0, '$E2E_ROOT/tests/tools'); import delag_score as d
d.strip('$E2E_TMP/trainticket/080.csv', '$E2E_TMP/stripped.csv')"
check "the copy the miner reads has no anomaly column" \
	sh -c "! head -1 '$E2E_TMP/stripped.csv' | grep -q anomaly"
check "and one column fewer than the labelled file" test \
	"$(head -1 "$E2E_TMP/stripped.csv" | tr ',' '\n' | wc -l)" -eq \
	"$(( $(head -1 "$E2E_TMP/trainticket/080.csv" | tr ',' '\n' | wc -l) - 1 ))"
e2e_finish
