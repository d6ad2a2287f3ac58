#!/usr/bin/env bash
# npreport compare on generated analyses (tests/tools/genana, no root): a
# known +30 % p99 regression is flagged when flows.p99 is gated (exit 1),
# not by the default gate (endpoint latency, throughput, loss, network CPU);
# two analyses from the same distribution exit 0 in >= 95 of 100 seeded
# trials; several runs a side (3 -- 3); flows with different ephemeral ports
# meet on their stable key; --config; CSV, JUnit and Markdown parse; usage
# errors exit 2.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init report_compare
GENANA=$NP_BUILD/tools/genana
[ -x "$NPREPORT" ] && [ -x "$GENANA" ] || e2e_skip "build $NPREPORT and $GENANA first"
cd "$E2E_TMP" || exit 1
FLOW='flows.p99 [tcp 10.77.1.1:*>10.77.1.2:8080]'

# +30 % on every per-interval p99 sample of the new run (30 intervals a side).
"$GENANA" -o base.npa --seed 101 --flows 1 --only-p99-series
"$GENANA" -o new.npa --seed 102 --flows 1 --only-p99-series --p99-scale 1.3
"$NPREPORT" compare base.npa new.npa > def.txt
check "default gate: flows.p99 is reported, not gated (exit 0)" test $? -eq 0
"$NPREPORT" compare base.npa new.npa --metric flows.p99 > reg.txt 2> reg.err
check "+30% p99 gated by --metric exits 1" test $? -eq 1
check "the p99 row (stable key, port 40000 -> *) is a REGRESSION" \
	sh -c "grep -A1 -F '$FLOW' reg.txt | grep -qE '\+[0-9.]+%  \(q=0\.00[0-9]*, 30\+30 intervals; min 20% and 20.0 µs\)  REGRESSION'"
delta=$(grep -A1 -F "$FLOW" reg.txt | grep -oE ' \+[0-9.]+%' | head -1 | tr -d ' +%')
check "measured change is near +30% (got ${delta:-none})" within "${delta:-0}" 30 20
check "summary line says REGRESSION" grep -qE '^compare: 1 gated metrics \(1 tested\), 1 regressions.*: REGRESSION \(flows\[' reg.txt
"$NPREPORT" compare base.npa new.npa --metric flows.p99 --threshold 50 > /dev/null
check "same change under --threshold 50 exits 0" test $? -eq 0
"$NPREPORT" compare base.npa new.npa --metric 'flows.p99@*:9999' > /dev/null
check "--metric with a key that matches nothing exits 0" test $? -eq 0
"$NPREPORT" compare new.npa base.npa --metric flows.p99 > imp.txt
check "reverse direction is an improvement, exit 0" sh -c "[ $? -eq 0 ] && grep -A1 -F '$FLOW' imp.txt | grep -q 'better'"
"$NPREPORT" compare base.npa base.npa --metric flows.p99 > self.txt
check "an analysis against itself: exit 0, nothing significant" \
	sh -c "[ $? -eq 0 ] && grep -qE '^compare: .* 0 significant changes' self.txt"

printf '# test gate\nalpha 0.05\ngate flows.p99 rel 50\n' > loose.conf
"$NPREPORT" compare base.npa new.npa --config loose.conf > /dev/null
check "--config: gate flows.p99 rel 50 exits 0" test $? -eq 0
printf 'gate flows.p99 abs 10us\ndefault on\n' > tight.conf
"$NPREPORT" compare base.npa new.npa --config tight.conf > tight.txt
check "--config: gate flows.p99 abs 10us exits 1" test $? -eq 1
printf 'alpha 0.05\ngate flows.p99 rel\n' > bad.conf
"$NPREPORT" compare base.npa new.npa --config bad.conf 2> bad.err
check "bad config exits 2 naming the line" sh -c "[ $? -eq 2 ] && grep -q 'bad.conf: line 2:' bad.err"

"$NPREPORT" compare base.npa new.npa --metric flows.p99 --format csv > reg.csv 2> reg.csv.err
check "csv compare exits 1 too" test $? -eq 1
check "csv compare parses; p99 row gated, significant REGRESSION" python3 - reg.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
r = [x for x in rows if x["table"] == "flows" and x["metric"] == "p99"]
ok = len(r) == 1 and r[0]["verdict"] == "REGRESSION" and r[0]["significant"] == "1" \
     and r[0]["gated"] == "1" and r[0]["test"] == "block-bootstrap" \
     and 20 < float(r[0]["delta_pct"]) < 40 and float(r[0]["q"]) < 0.05 and r[0]["base_samples"] == "30" \
     and r[0]["key"] == "tcp 10.77.1.1:*>10.77.1.2:8080"
sys.exit(0 if ok else 1)
PY
check "csv mode puts the summary line on stderr" grep -q '^compare: ' reg.csv.err
"$NPREPORT" compare base.npa new.npa --metric flows.p99 --metric flows.p50 --format junit > reg.xml
check "junit exits 1" test $? -eq 1
check "junit parses: 2 testcases, 1 failure on flows p99" python3 - reg.xml <<'PY'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = s.findall("testcase")
fails = [c for c in cases if c.find("failure") is not None]
ok = len(cases) == 2 and s.get("failures") == "1" and len(fails) == 1 \
     and fails[0].get("classname") == "np.compare.flows" and fails[0].get("name").startswith("p99 [")
sys.exit(0 if ok else 1)
PY
"$NPREPORT" compare base.npa new.npa --metric flows.p99 --format markdown > reg.md
check "markdown: a table row with the regression" grep -qE '^\| \*\*REGRESSION\*\* \| flows\.p99 \| tcp 10\.77\.1\.1:\\\*>10\.77\.1\.2:8080 \| [0-9.]+ ms \| [0-9.]+ ms \| \+[0-9.]+% \|' reg.md

# Same distribution, 100 seeded trials.
nfail=0
for s in $(seq 1 100); do
	"$GENANA" -o a.npa --seed $((s * 2)) --flows 1 --only-p99-series
	"$GENANA" -o b.npa --seed $((s * 2 + 1)) --flows 1 --only-p99-series
	"$NPREPORT" compare a.npa b.npa --metric p99 > /dev/null 2>&1 || nfail=$((nfail + 1))
done
echo "  same distribution: $nfail of 100 trials exited non-zero" >&2
check "exit 0 in >= 95 of 100 same-distribution trials ($nfail did not)" test $nfail -le 5

# Several runs a side: the run-level values (table p99) are t-tested.
for k in 1 2 3; do
	"$GENANA" -o b$k.npa --seed $((200 + k)) --flows 1 --only-p99-series
	"$GENANA" -o n$k.npa --seed $((300 + k)) --flows 1 --only-p99-series --p99-scale 1.3
	"$GENANA" -o s$k.npa --seed $((400 + k)) --flows 1 --only-p99-series
done
"$NPREPORT" compare b1.npa b2.npa b3.npa -- n1.npa n2.npa n3.npa --metric flows.p99 > multi.txt
check "3 -- 3 runs, +30 %: exit 1, tested on runs" \
	sh -c "[ $? -eq 1 ] && grep -A1 -F '$FLOW' multi.txt | grep -q '3+3 runs.*REGRESSION'"
"$NPREPORT" compare b1.npa b2.npa b3.npa -- s1.npa s2.npa s3.npa --metric flows.p99 > multi0.txt
check "3 -- 3 runs of one distribution: exit 0" test $? -eq 0
"$NPREPORT" compare --metric flows.p99 b1.npa -- n1.npa n2.npa > /dev/null
check "1 -- 2 runs parse (options before the files)" test $? -le 1

# Flows with other ephemeral ports meet on one stable row.
"$GENANA" -o u1.npa --seed 9 --flows 2
"$GENANA" -o u2.npa --seed 10 --flows 3
"$NPREPORT" compare u1.npa u2.npa > um.txt
check "2 and 3 flows from ephemeral ports: no unmatched flows row" sh -c "! grep -q '^  flows \[' um.txt"
check "aggregation said in the header" grep -qE '^  rows: [0-9]+ -> [0-9]+ stable rows' um.txt

"$NPREPORT" compare base.npa 2> /dev/null;           check "one file: exit 2" test $? -eq 2
"$NPREPORT" compare base.npa -- 2> /dev/null;        check "nothing after --: exit 2" test $? -eq 2
"$NPREPORT" compare base.npa missing.npa 2> /dev/null; check "missing file: exit 2" test $? -eq 2
"$NPREPORT" compare base.npa new.npa --alpha 7 2> /dev/null; check "bad --alpha: exit 2" test $? -eq 2
"$NPREPORT" compare base.npa new.npa --format xml 2> /dev/null; check "bad --format: exit 2" test $? -eq 2
"$NPREPORT" compare base.npa new.npa --min-tail -1 2> /dev/null; check "bad --min-tail: exit 2" test $? -eq 2
"$NPREPORT" base.npa --min-tail 5 > /dev/null 2> mt.err
check "--min-tail in report mode: exit 2, named" sh -c "[ $? -eq 2 ] && grep -q -- '--min-tail is for compare only' mt.err"
printf 'default on\nmin-tail 5ms\n' > mt.conf
"$NPREPORT" compare base.npa new.npa --config mt.conf 2> mt.err
check "config 'min-tail 5ms': exit 2 naming line 2" sh -c "[ $? -eq 2 ] && grep -q 'mt.conf: line 2: min-tail' mt.err"
# genana's flows rows count `packets`, not requests: min-tail leaves flows.p99 gated
"$NPREPORT" compare base.npa new.npa --metric flows.p99 --min-tail 1000 > /dev/null
check "--min-tail on a row without a request count keeps the gate (exit 1)" test $? -eq 1
e2e_finish
