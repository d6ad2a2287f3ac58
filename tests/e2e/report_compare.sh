#!/usr/bin/env bash
# npreport compare on generated analyses (tests/tools/genana): a known +20 %
# p99 regression is flagged (exit 1); two analyses from the same distribution
# show nothing significant at alpha 0.05 in >= 95 of 100 seeded trials; CSV
# output parses; usage errors exit 2. No root needed.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init report_compare
GENANA=$NP_BUILD/tools/genana
[ -x "$NPREPORT" ] && [ -x "$GENANA" ] || e2e_skip "build $NPREPORT and $GENANA first"
cd "$E2E_TMP" || exit 1

# +20 % on every per-interval p99 sample of the new run (30 intervals a side).
"$GENANA" -o base.npa --seed 101 --flows 1 --only-p99-series
"$GENANA" -o new.npa --seed 102 --flows 1 --only-p99-series --p99-scale 1.2
"$NPREPORT" compare base.npa new.npa > reg.txt 2> reg.err
check "+20% p99 regression exits 1" test $? -eq 1
check "the p99 row is flagged REGRESSION" sh -c "grep -A1 '^flows.p99 ' reg.txt >/dev/null &&
	grep -A1 -F 'tcp 10.77.1.1:40000>10.77.1.2:8080' reg.txt | grep -qE '\+[0-9.]+% +p=0\.000 n=30\+30 REGRESSION'"
"$NPREPORT" compare base.npa new.npa --width 132 > wide.txt
check "at 132 columns key and values share a line" \
	grep -qE '^tcp 10\.77\.1\.1:40000>10\.77\.1\.2:8080 +[0-9.]+ ms ±[0-9]+% +[0-9.]+ ms ±[0-9]+% +\+[0-9.]+% +p=0\.000 n=30\+30 REGRESSION' wide.txt
delta=$(grep -oE '\+[0-9.]+% +p=0\.000 n=30\+30 REGRESSION' reg.txt | head -1 | grep -oE '^\+[0-9.]+')
check "measured change is near +20% (got ${delta:-none})" within "${delta:-0}" 20 40
check "summary line says REGRESSION" grep -qE '^compare: .*\(1 regressions beyond 5%.*: REGRESSION \(flows\[' reg.txt
"$NPREPORT" compare base.npa new.npa --threshold 50 > /dev/null
check "same change under --threshold 50 exits 0" test $? -eq 0
"$NPREPORT" compare base.npa new.npa --metric p50 > /dev/null
check "--metric p50 (no regression there) exits 0" test $? -eq 0
"$NPREPORT" compare new.npa base.npa > imp.txt
check "reverse direction is an improvement, exit 0" sh -c "[ $? -eq 0 ] && grep -q 'better' imp.txt"
"$NPREPORT" compare base.npa base.npa > self.txt
check "an analysis against itself: exit 0, nothing significant" \
	sh -c "[ $? -eq 0 ] && grep -qE '^compare: .* 0 significant changes' self.txt"

"$NPREPORT" compare base.npa new.npa --format csv > reg.csv 2> reg.csv.err
check "csv compare exits 1 too" test $? -eq 1
check "csv compare parses; p99 row significant REGRESSION" python3 - reg.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
r = [x for x in rows if x["table"] == "flows" and x["metric"] == "p99"]
ok = len(r) == 1 and r[0]["verdict"] == "REGRESSION" and r[0]["significant"] == "1" \
     and 10 < float(r[0]["delta_pct"]) < 30 and float(r[0]["p"]) < 0.05 and r[0]["base_n"] == "30"
sys.exit(0 if ok else 1)
PY
check "csv mode puts the summary line on stderr" grep -q '^compare: ' reg.csv.err

# Same distribution, 100 seeded trials.
nsig=0; nfail=0
for s in $(seq 1 100); do
	"$GENANA" -o a.npa --seed $((s * 2)) --flows 1 --only-p99-series
	"$GENANA" -o b.npa --seed $((s * 2 + 1)) --flows 1 --only-p99-series
	out=$("$NPREPORT" compare a.npa b.npa --metric p99 2>&1); rc=$?
	[ $rc -eq 0 ] || nfail=$((nfail + 1))
	echo "$out" | grep -qE '^compare: .* 0 significant changes' || nsig=$((nsig + 1))
done
echo "  same distribution: $nsig of 100 trials had a significant change, $nfail exited non-zero" >&2
check "nothing significant in >= 95 of 100 same-distribution trials ($nsig had)" test $nsig -le 5
check "exit 0 in >= 95 of 100 same-distribution trials ($nfail did not)" test $nfail -le 5

# Too few samples: warned, cannot be significant.
"$GENANA" -o f1.npa --seed 7 --flows 1 --only-p99-series --intervals 3
"$GENANA" -o f2.npa --seed 8 --flows 1 --only-p99-series --intervals 3 --p99-scale 2
"$NPREPORT" compare f1.npa f2.npa > few.txt
check "3 samples a side: exit 0 and a warning" \
	sh -c "[ $? -eq 0 ] && grep -q 'too few samples' few.txt"

# Unmatched rows are listed.
"$GENANA" -o u1.npa --seed 9 --flows 2
"$GENANA" -o u2.npa --seed 10 --flows 3
"$NPREPORT" compare u1.npa u2.npa > um.txt
check "unmatched flow listed" grep -qE 'tcp 10\.77\.1\.1:40002>10\.77\.1\.2:8080 +new only' um.txt

"$NPREPORT" compare base.npa 2> /dev/null;           check "one file: exit 2" test $? -eq 2
"$NPREPORT" compare base.npa missing.npa 2> /dev/null; check "missing file: exit 2" test $? -eq 2
"$NPREPORT" compare base.npa new.npa --alpha 7 2> /dev/null; check "bad --alpha: exit 2" test $? -eq 2
e2e_finish
