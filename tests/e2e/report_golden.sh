#!/usr/bin/env bash
# npreport on a generated analysis with known content (tests/tools/genana):
# text and CSV against the golden files in fixtures/golden/, CSV numbers
# against the .npa read independently (npreport dump -> JSON), exit codes,
# and plots with and without gnuplot. No root needed.
# UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing).
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init report_golden
GENANA=$NP_BUILD/tools/genana
GOLD=$E2E_ROOT/fixtures/golden
[ -x "$NPREPORT" ] && [ -x "$GENANA" ] || e2e_skip "build $NPREPORT and $GENANA first"
cd "$E2E_TMP" || exit 1
unset COLUMNS

"$GENANA" -o basic.npa --seed 1
check "genana writes basic.npa" test -s basic.npa
"$NPREPORT" basic.npa --width 80 --rows 0 > basic.txt 2> basic.err
check "text report exits 0" test $? -eq 0
"$NPREPORT" basic.npa --format csv -o csv 2> csv.err
check "csv report exits 0" test $? -eq 0
if [ -n "${UPDATE_GOLDEN:-}" ]; then
	cp basic.txt "$GOLD/basic.txt"; cp basic.npa "$GOLD/basic.npa"
	rm -rf "$GOLD/basic-csv"; cp -r csv "$GOLD/basic-csv"
	echo "golden files updated in $GOLD" >&2
fi
check "text matches fixtures/golden/basic.txt" diff -u "$GOLD/basic.txt" basic.txt
# The stored fixture analysis (written by an earlier build) still renders the same.
mkdir -p stored && cp "$GOLD/basic.npa" stored/basic.npa
(cd stored && "$NPREPORT" basic.npa --width 80 --rows 0 > basic.txt 2>/dev/null)
check "stored fixtures/golden/basic.npa renders as the golden text" diff -u "$GOLD/basic.txt" stored/basic.txt
check "csv matches fixtures/golden/basic-csv" diff -ru "$GOLD/basic-csv" csv
check "no text line wider than 80 columns" python3 -c '
import sys
bad = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if len(l) > 80]
for l in bad: print("too wide:", l, file=sys.stderr)
sys.exit(1 if bad else 0)' basic.txt
for s in "Findings (worst 3 of 4)" "Clock corrections [clock]" "Latency decomposition [decomp]" \
	 "Loss by segment [loss]" "Degradation patterns [patterns]" "A table no section knows [zz_custom]"; do
	check "text has '$s'" grep -qF "$s" basic.txt
done
check "sections in brief order" awk '
	/\[hosts\]/ {h=NR} /\[clock\]/ {c=NR} /\[flows\]/ {f=NR} /\[decomp\]/ {d=NR} /\[jitter\]/ {j=NR}
	/\[loss\]/ {l=NR} /\[txn\]/ {t=NR} /\[netcpu\]/ {n=NR} /\[patterns\]/ {p=NR} /\[zz_custom\]/ {z=NR}
	END { exit !(h<c && c<f && f<d && d<j && j<l && l<t && t<n && n<p && p<z) }' basic.txt
check "clock offset of back shown as -5000 µs" grep -qE '^back +-5000 ' basic.txt
# The incident summary comes first and states what genana put in the tables.
check "incident summary is the first section" sh -c "sed -n 3p basic.txt | grep -q '^Incident summary'"
check "summary: back's clock -5000.123 µs (genana's offset)" grep -q 'back -5000.123 µs' basic.txt
check "summary: 41 lost packets, NETFILTER_DROP" grep -q '41 packets lost; most (41) in back:netif_receive|back:tcp_rcv,' basic.txt
check "summary: events lost on front (3) and back (6)" grep -q 'front 3, back 6' basic.txt
check "summary CSV: clock row with the offset in ns" grep -q '^2,clock,client,back,-5000123,' csv/incident.csv

# CSV cells == the numbers stored in the .npa, read by another reader.
"$NPREPORT" dump --type ana_table basic.npa > tables.jsonl
check "csv cells equal the .npa cells (every table)" python3 - tables.jsonl csv <<'PY'
import csv, json, math, sys
bad = 0; n = 0
for line in open(sys.argv[1]):
    body = json.loads(line)["body"]
    with open(f"{sys.argv[2]}/{body['name']}.csv", newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) != len(body["rows"]) + 1:
        print("row count", body["name"], file=sys.stderr); bad += 1; continue
    for want, got in zip(body["rows"], rows[1:]):
        for w, g in zip(want, got):
            n += 1
            if w is None: ok = g == ""
            elif isinstance(w, str): ok = g == w
            else: ok = math.isclose(float(g), float(w), rel_tol=1e-12, abs_tol=0)
            if not ok:
                print(f"{body['name']}: csv {g!r} vs npa {w!r}", file=sys.stderr); bad += 1
print(f"{n} cells compared", file=sys.stderr)
sys.exit(1 if bad or n < 100 else 0)
PY
check "one section to stdout" sh -c "'$NPREPORT' basic.npa -f csv -s loss | head -1 | grep -q '^from,to,sent,lost,loss_rate_ratio,reason'"
check "series csv holds every sample (13 series x 30)" \
	test "$(wc -l < csv/series.csv)" -eq $((13 * 30 + 1))

# A real incident (make demo, fixtures/golden/demo-*.npa) at 100 columns:
# golden text, no line wider, no row split, host prefix 'vm/' left out.
cp "$GOLD/demo-incident.npa" "$GOLD/demo-patterns.npa" .   # relative names in the text
"$NPREPORT" demo-incident.npa demo-patterns.npa --width 100 --rows 8 > demo.txt 2> demo.err
check "demo text report exits 0" test $? -eq 0
[ -n "${UPDATE_GOLDEN:-}" ] && cp demo.txt "$GOLD/demo.txt"
check "demo text matches fixtures/golden/demo.txt" diff -u "$GOLD/demo.txt" demo.txt
check "demo text: no line wider than 100 columns" python3 -c '
import sys
bad = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if len(l) > 100]
for l in bad: print("too wide:", l, file=sys.stderr)
sys.exit(1 if bad else 0)' demo.txt
check "demo text: no table split into parts" sh -c "! grep -q '(part ' demo.txt"
check "demo text: host prefix said once, left out of the tables" \
	sh -c "grep -q \"common prefix 'vm/'\" demo.txt && grep -qE '^dm-back +vm/dm-client|^dm-back +dm-client' demo.txt"
check "demo text: the 4 connections to :9002 fold into one drops row of 10 NETFILTER_DROP (iptables counted 10)" \
	sh -c "'$NPREPORT' demo-incident.npa -s drops --width 140 | grep -qE '^dm-back +tcp 10\.78\.2\.1:\*>10\.78\.2\.2:9002 \(4 conns\) +NETFILTER_DROP +10\$'"
check "folding never applies where counts do not add up (loss has a ratio: 24 rows stay)" \
	sh -c "'$NPREPORT' demo-incident.npa -s loss --rows 0 --width 140 | awk '/\[loss\]/ {t=1; next} t && /^tcp / {n++} t && /^\$/ {exit} END {exit !(n==24)}'"
check "demo text: --wide keeps every column of clock_pairs on one row" \
	sh -c "'$NPREPORT' '$GOLD/demo-incident.npa' --wide -s clock_pairs | grep -qE '^dm-front +dm-back +accurate +4999.944 .* 6.06 +4999.76\$'"

# Exit codes.
"$NPREPORT" --help > /dev/null;            check "--help exits 0" test $? -eq 0
"$NPREPORT" --version | grep -q npreport;   check "--version" test $? -eq 0
"$NPREPORT" nonexistent.npa 2> /dev/null;   check "missing file exits 2" test $? -eq 2
"$NPREPORT" /etc/passwd 2> /dev/null;       check "not an analysis exits 2" test $? -eq 2
"$NPREPORT" basic.npa -s nosuch 2> /dev/null; check "unknown section exits 2" test $? -eq 2
"$NPREPORT" basic.npa -f csv 2> /dev/null > /dev/null; check "csv to stdout needs one section (2)" test $? -eq 2
head -c 6000 basic.npa > trunc.npa
"$NPREPORT" trunc.npa > trunc.txt 2> trunc.err
check "truncated analysis: exit 1, warned, partial report" \
	sh -c "[ $? -eq 1 ] && grep -q WARNING trunc.txt && grep -q 'not read' trunc.err"

# Plots: with gnuplot (PNG + SVG non-trivial), and without (one notice).
if command -v gnuplot > /dev/null; then
	"$NPREPORT" basic.npa -s summary -p plots > /dev/null 2> plots.err
	check "plots exit 0" test $? -eq 0
	for p in cdf-decomp decomp-bars-decomp netcpu-netcpu-net_rx loss-loss-loss_rate patterns-hist-patterns; do
		check "$p.png non-trivial" test "$(stat -c %s plots/$p.png 2>/dev/null || echo 0)" -gt 5000
		check "$p.svg non-trivial" sh -c "test \$(stat -c %s plots/$p.svg) -gt 5000 && grep -q '<svg' plots/$p.svg"
	done
	check "png is a PNG" sh -c "head -c 8 plots/cdf-decomp.png | grep -q PNG"
else
	echo "  (gnuplot not installed: image checks skipped)" >&2
fi
NP_GNUPLOT= "$NPREPORT" basic.npa -p noplots > nog.txt 2> nog.err
check "without gnuplot: exit 0 and the text report" sh -c "[ $? -eq 0 ] && grep -q 'Findings' nog.txt"
check "without gnuplot: exactly one notice" test "$(grep -c 'gnuplot not found' nog.err)" -eq 1
check "without gnuplot: scripts and data, no images" \
	sh -c "ls noplots/*.gp >/dev/null && ls noplots/*.dat >/dev/null && ! ls noplots/*.png 2>/dev/null"
e2e_finish
