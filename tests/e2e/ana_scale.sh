#!/bin/bash
# npanalyze at scale (issue 23): 20 hosts (genfix --pair 0..9) whose clocks
# are linked only along the chain p0a - p0b - p1a - p1b - ... - p9b by sync
# exchanges. Truth: every "a" host runs on true time (offset 0 from the
# reference p0a), every "b" host at +3 ms and +20 ppm. Checked: all 20
# aligned, each through its chain predecessor, offsets within the stated
# bound of the truth; the analysis is byte-identical for --threads 1, 2 and
# 3 (about 400 000 packets: the join's partitions and the decomposition's
# parallel passes, which start at 65 536 packets, both run), also with a
# damaged chunk (same warnings); the live progress line stays off when stderr is not a terminal; --mem
# refuses a limit below the predicted peak before analysing.
# No root needed.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ana_scale
T=$E2E_TMP
GENFIX=$NP_BUILD/tools/genfix
[ -x "$NPANALYZE" ] && [ -x "$GENFIX" ] || e2e_skip "npanalyze or tools/genfix not built"

for p in 0 1 2 3 4 5 6 7 8 9; do
	"$GENFIX" -o "$T/rec" --pair $p --seed $((p + 1)) --packets 20000 --flows 8 --gap 2000 \
		--sync 200 --offset 3000000 --drift 20 --no-truth >/dev/null 2>&1 || echo "genfix --pair $p failed" >&2
done
recs=("$T"/rec/p[0-9]a.npr "$T"/rec/p[0-9]b.npr)
check "genfix wrote 20 recordings (${#recs[@]})" test ${#recs[@]} -eq 20

for n in 1 2 3; do
	"$NPANALYZE" --threads $n -o "$T/t$n.npa" "${recs[@]}" >"$T/out$n" 2>"$T/err$n"; rc=$?
	check "--threads $n exits 0 (got $rc)" test $rc -eq 0
done
check "--threads 1 and 2 write the same bytes" cmp -s "$T/t1.npa" "$T/t2.npa"
check "--threads 1 and 3 write the same bytes" cmp -s "$T/t1.npa" "$T/t3.npa"
check "no progress bar (\\r) when stderr is a file" sh -c "! grep -q $'\r' '$T/err2'"
check "peak memory printed" grep -q "peak memory" "$T/err1"
"$NPANALYZE" --threads 0 -n "${recs[@]}" >/dev/null 2>&1; rc=$?
check "--threads 0 is a usage error (got $rc)" test $rc -eq 2

# --mem: 1.8 M events need ~100 MB; 50 MB is refused while reading, 2 GB is not
"$NPANALYZE" --mem 50M -o "$T/m.npa" "${recs[@]}" >/dev/null 2>"$T/merr"; rc=$?
check "--mem 50M refused with exit 2 (got $rc)" test $rc -eq 2
check "--mem refusal says why" grep -q "more than --mem" "$T/merr"
check "--mem refusal writes no analysis" test ! -e "$T/m.npa"
"$NPANALYZE" --mem 2G -q -o "$T/m2.npa" "${recs[@]}" >/dev/null 2>&1; rc=$?
check "--mem 2G analyses (exit $rc), same bytes" sh -c "[ $rc -eq 0 ] && cmp -s '$T/t1.npa' '$T/m2.npa'"

# chunks decoded ahead on workers (--threads 2+): a damaged chunk is still
# reported by the reader, in order, with the text of a serial read. One
# byte of the fourth chunk's payload flipped (one the workers decode ahead
# when they keep up): its checksum fails.
cp "${recs[0]}" "$T/dmg.npr"
off=$("$NPREPORT" dump "$T/dmg.npr" 2>/dev/null | grep -o '"offset":[0-9]*' | cut -d: -f2 | sort -un | sed -n 4p)
printf '\x5a' | dd of="$T/dmg.npr" bs=1 seek=$((off + 40)) conv=notrunc status=none
for n in 1 3; do
	"$NPANALYZE" --threads $n -o "$T/d$n.npa" "$T/dmg.npr" "${recs[@]:1}" >/dev/null 2>&1
	"$NPREPORT" dump "$T/d$n.npa" 2>/dev/null | grep -o '"warnings":\[[^]]*\]' >"$T/dwarn$n"
done
check "damaged chunk at offset $off reported" grep -q "chunk checksum mismatch at offset $off" "$T/dwarn1"
check "damaged chunk: same warnings with --threads 1 and 3" cmp -s "$T/dwarn1" "$T/dwarn3"
check "damaged chunk: --threads 1 and 3 write the same bytes" cmp -s "$T/d1.npa" "$T/d3.npa"

"$NPREPORT" "$T/t1.npa" --format csv -o "$T/csv" >/dev/null 2>&1
C=$T/csv/clock.csv
aligned=$(awk -F, 'NR>1 && ($3=="accurate" || $3=="reference")' "$C" | wc -l)
check "all 20 hosts aligned ($aligned)" test "$aligned" -eq 20
# offset within its bound of the truth: a hosts 0, b hosts 3 ms
bad=$(awk -F, 'NR>1 && $1!="p0a" { want = ($1 ~ /b$/) ? 3000000 : 0; d = $4 - want; if (d < 0) d = -d;
	if (d > $6 + 1) print $1 }' "$C")
check "every offset within its bound of the truth (${bad:-all})" test -z "$bad"
far=$(awk -F, '$1=="p9b"{print $4}' "$C")
check "p9b, 19 links away, at +3 ms within 20 us ($far)" within "$far" 3000000 0.67
# the chain: pNa via p(N-1)b, pNb via pNa (p0b and p1a's predecessor is p0a/p0b)
via=$(awk -F, 'NR>1 && $1!="p0a" && $1!="p0b" { n = substr($1, 2, 1); s = substr($1, 3, 1);
	want = (s == "a") ? "p" (n - 1) "b" : "p" n "a"; if ($7 != want) print $1 "<-" $7 }' "$C")
check "each host aligned through its chain predecessor (${via:-all})" test -z "$via"

e2e_finish
