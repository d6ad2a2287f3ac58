#!/usr/bin/env bash
# npreport dump and npanalyze on the hostile fixtures (fixtures/hostile/,
# ground truth in fixtures/mkfixtures.md; issue 17): dump writes valid UTF-8
# with every invalid byte as \u00XX, the 256 MiB nil chunk gives a bounded
# number of warning lines with the summary, a file of 150 problems stops at
# 100 warnings + 1, and the exit status follows FORMAT.md 1 and 8.
# No root needed; seconds.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ct_hostile
H=$E2E_ROOT/fixtures/hostile
[ -x "$NPREPORT" ] || e2e_skip "$NPREPORT not built"
[ -r "$H/utf8.npr" ] || e2e_skip "fixtures/hostile missing (make fixtures)"

# Invalid UTF-8: output is strict UTF-8, the bad strings are escaped byte by byte.
"$NPREPORT" dump "$H/utf8.npr" > "$E2E_TMP/utf8.jsonl" 2>/dev/null; rc=$?
check "utf8.npr: exit 0 ($rc)" test $rc -eq 0
check "utf8.npr: dump output is valid UTF-8" python3 -c '
import sys; open(sys.argv[1], "rb").read().decode("utf-8", "strict")' "$E2E_TMP/utf8.jsonl"
want='"bad":["\u00ed\u00a0\u0080","\u00f4\u0090\u0080\u0080","\u00e0\u0080\u0080","\u00f0\u0080\u0080\u0080","\u00f5\u0080\u0080\u0080","\u00f8\u0088\u0080\u0080\u0080","\u00fc\u0084\u0080\u0080\u0080\u0080","\u00fd","\u00c0\u0080","\u0080","a\u00e2\u0082"]'
check "utf8.npr: surrogate, > U+10FFFF, overlong, F5-FD, stray, cut short all as \\u00XX" \
	grep -qF "$want" "$E2E_TMP/utf8.jsonl"
check "utf8.npr: well-formed strings copied (U+10FFFF, U+D7FF, U+E000)" \
	grep -qF "$(printf '"\xf4\x8f\xbf\xbf","\xed\x9f\xbf","\xee\x80\x80"')" "$E2E_TMP/utf8.jsonl"
check "utf8.npr: invalid key escaped" grep -qF '"keys":{"\u00ed\u00a0\u0080":1}' "$E2E_TMP/utf8.jsonl"

# Numbers and keys.
"$NPREPORT" dump "$H/numbers.npr" > "$E2E_TMP/num.jsonl" 2>/dev/null
check "numbers.npr: floats keep a fraction or exponent" \
	grep -qF '"f":[1.0,-0.0,0.1,1e+16,1e+15,' "$E2E_TMP/num.jsonl"
check "numbers.npr: non-string keys as their JSON text, both \"1\" keys kept" \
	grep -qF '"k":{"0.1":"a","1":"b","1":"c","null":"d","[1,2]":"e","true":"f","\"ab\"":"g"}' "$E2E_TMP/num.jsonl"

# The nil bomb: 268 435 456 bad records, 11 warning lines (10 + summary) + --stats.
timeout 120 "$NPREPORT" dump --stats "$H/nil-bomb.npr" > "$E2E_TMP/bomb.out" 2> "$E2E_TMP/bomb.err"; rc=$?
check "nil-bomb.npr: exit 1 ($rc)" test $rc -eq 1
check "nil-bomb.npr: no record printed" test ! -s "$E2E_TMP/bomb.out"
n=$(grep -c '^npreport dump: ' "$E2E_TMP/bomb.err")
check "nil-bomb.npr: 11 warning lines ($n)" test "$n" -eq 11
check "nil-bomb.npr: summary line" grep -qF '... and 268435446 more like it in chunk 0 (offset 16)' "$E2E_TMP/bomb.err"
check "nil-bomb.npr: --stats counts every bad record" grep -qF '0 records (268435456 bad)' "$E2E_TMP/bomb.err"
timeout 120 "$NPANALYZE" -o "$E2E_TMP/bomb.npa" "$H/nil-bomb.npr" > "$E2E_TMP/ana.out" 2>&1; rc=$?
n=$(wc -l < "$E2E_TMP/ana.out")
check "npanalyze nil-bomb.npr: finishes ($rc), at most 40 lines ($n)" test $rc -ne 124 -a "$n" -le 40
check "npanalyze nil-bomb.npr: summary line" grep -qF '... and 268435446 more like it in chunk 0' "$E2E_TMP/ana.out"

# 150 problems in one file: 100 warnings, then one summary line.
{ head -c 68 "$H/garbage-23.npr"
  for _ in $(seq 150); do printf 'x'; tail -c +17 "$H/garbage-23.npr" | head -c 52; done; } > "$E2E_TMP/many.npr"
"$NPREPORT" dump "$E2E_TMP/many.npr" > "$E2E_TMP/many.out" 2> "$E2E_TMP/many.err"
n=$(wc -l < "$E2E_TMP/many.err"); r=$(wc -l < "$E2E_TMP/many.out")
check "150 garbage runs: 151 records ($r), 101 warning lines ($n)" test "$r" -eq 151 -a "$n" -eq 101
check "150 garbage runs: file summary" \
	grep -qF '... and 50 more like it (warnings stop after 100 per file)' "$E2E_TMP/many.err"

# Exit status (FORMAT.md 1, 8): damage 1, an unknown kind or a bare header 0.
for f in version0:1 kind7:0 header-only:0 garbage-23:1 garbage-24:1 tail-np:1 zstd-two-frames:1 zstd-dict:1; do
	"$NPREPORT" dump "$H/${f%:*}.npr" > /dev/null 2>&1; rc=$?
	check "${f%:*}.npr: exit ${f#*:} ($rc)" test $rc -eq "${f#*:}"
done
"$NPREPORT" dump --stats "$H/header-only.npr" 2> "$E2E_TMP/ho.err" > /dev/null
check "header-only.npr: last good chunk ends at 16" grep -qF 'last good chunk ends at 16' "$E2E_TMP/ho.err"

e2e_finish
