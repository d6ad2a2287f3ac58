#!/bin/bash
# npanalyze command line on the committed multi-host fixture (written by
# tests/tools/genfix, truth in fixtures/multihost-truth.txt): exit codes,
# stdout = summary only, --ref, --alias, --flow, --from/--to, --dry-run,
# rotated sets grouped as one host, damaged inputs, npreport renders it.
# No root needed.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ana_cli
FX=$E2E_ROOT/fixtures
A=$FX/multihost-a.npr
B=$FX/multihost-b.npr
TRUTH=$FX/multihost-truth.txt
T=$E2E_TMP
[ -x "$NPANALYZE" ] || e2e_skip "$NPANALYZE not built"
truth() { sed -n "s/^$1=//p" "$TRUTH"; }
report_csv() { rm -rf "$2"; "$NPREPORT" "$1" --format csv -o "$2" >/dev/null 2>&1; }

# help / version / usage errors
check "--help exits 0" sh -c "'$NPANALYZE' --help >/dev/null"
check "--version prints the version" sh -c "'$NPANALYZE' --version | grep -q '^npanalyze '"
"$NPANALYZE" >/dev/null 2>&1; rc=$?
check "no input exits 2 (got $rc)" test $rc -eq 2
"$NPANALYZE" --bogus "$A" >/dev/null 2>&1; rc=$?
check "unknown option exits 2 (got $rc)" test $rc -eq 2
"$NPANALYZE" -o "$T/x.npa" /nonexistent.npr >/dev/null 2>"$T/err"; rc=$?
check "unreadable input exits 2 (got $rc)" test $rc -eq 2
check "unreadable input named in the error" grep -q nonexistent "$T/err"

# the normal run: exit 0, summary on stdout, progress only on stderr
"$NPANALYZE" -o "$T/a.npa" "$A" "$B" >"$T/out" 2>"$T/err"; rc=$?
check "clean fixture exits 0 (got $rc)" test $rc -eq 0
check "summary names both hosts" sh -c "grep -q 'hosta' '$T/out' && grep -q 'hostb' '$T/out'"
check "progress is not on stdout" sh -c "! grep -q 'reading' '$T/out'"
check "progress is on stderr" grep -q reading "$T/err"
check "analysis file is 0600" test "$(stat -c %a "$T/a.npa")" = 600
report_csv "$T/a.npa" "$T/csv"
off=$(csvcol "$T/csv/clock.csv" host hostb offset_ns)
check "offset recovered within 20 us ($off vs $(truth offset_ns))" within "$off" "$(truth offset_ns)" 0.67
check "npreport renders the analysis" sh -c "'$NPREPORT' '$T/a.npa' | grep -q 'Clock model'"
lost=$(awk -F, 'NR>1{s+=$4}END{print s+0}' "$T/csv/loss.csv")
check "every lost packet counted ($lost vs $(truth lost))" test "$lost" = "$(truth lost)"
retx=$(awk -F, 'NR>1{s+=$6}END{print s+0}' "$T/csv/loss.csv")
check "retransmissions counted apart ($retx vs $(truth retx))" test "$retx" = "$(truth retx)"
p50=$(csvcol "$T/csv/transactions.csv" level endpoint p50_ns)
check "transaction p50 within 1 % ($p50 vs $(truth txn.p50))" within "$p50" "$(truth txn.p50)" 1

# --ref hostb: hosta's offset is the negative
"$NPANALYZE" -q -o "$T/r.npa" --ref hostb "$A" "$B" >/dev/null 2>&1
report_csv "$T/r.npa" "$T/rcsv"
roff=$(csvcol "$T/rcsv/clock.csv" host hosta offset_ns)
check "--ref hostb gives hosta offset -3 ms ($roff)" within "$roff" "-$(truth offset_ns)" 0.67

# --alias renames a host
"$NPANALYZE" -q -n --alias "$B=server" "$A" "$B" >"$T/al" 2>&1
check "--alias FILE=NAME names the host" grep -q "server" "$T/al"

# --flow keeps only matching flows
"$NPANALYZE" -q -o "$T/f.npa" --flow ':40001>' "$A" "$B" >/dev/null 2>&1
report_csv "$T/f.npa" "$T/fcsv"
check "--flow filter keeps the flow" grep -q '40001>' "$T/fcsv/pkt_flows.csv"
check "--flow filter drops the others" sh -c "! grep -q '40000>' '$T/fcsv/pkt_flows.csv'"

# --from/--to: a window of 0.1 s holds fewer packets
"$NPANALYZE" -q -o "$T/w.npa" --from 0.1 --to 0.2 "$A" "$B" >/dev/null 2>&1
report_csv "$T/w.npa" "$T/wcsv"
all=$(csvcol "$T/csv/decomp.csv" segment total count)
win=$(csvcol "$T/wcsv/decomp.csv" segment total count)
check "--from/--to narrows the packets ($win of $all)" sh -c "[ '${win:-0}' -gt 0 ] && [ '${win:-0}' -lt '${all:-0}' ]"

# --dry-run writes nothing
"$NPANALYZE" -q -n -o "$T/dry.npa" "$A" "$B" >/dev/null 2>&1
check "--dry-run writes no file" test ! -e "$T/dry.npa"

# a rotated set (two files, one identity) is one host
python3 - "$B" "$T/rot" <<'EOF' 2>/dev/null || cp "$B" "$T/rot.0001.npr"
import struct, sys
data = open(sys.argv[1], 'rb').read()
hdr, pos, chunks = data[:16], 16, []
while pos + 24 <= len(data):
    clen = struct.unpack_from('<I', data, pos + 8)[0]
    chunks.append(data[pos:pos + 24 + clen + 4]); pos += 24 + clen + 4
half = len(chunks) // 2
open(sys.argv[2] + '.0001.npr', 'wb').write(hdr + b''.join(chunks[:half]))
open(sys.argv[2] + '.0002.npr', 'wb').write(hdr + chunks[0] + b''.join(chunks[half:]))
EOF
if [ -e "$T/rot.0002.npr" ]; then
	"$NPANALYZE" -q -n "$A" "$T/rot.0001.npr" "$T/rot.0002.npr" >"$T/rot" 2>&1
	check "rotated set grouped as one host" grep -q "^hosts: 2 " "$T/rot"
	check "rotated host has 2 files" grep -q "2 file(s)" "$T/rot"
fi

# damaged input: truncated copy of hostb -> warning, exit 1, analysis written
head -c $(( $(stat -c %s "$B") * 2 / 3 )) "$B" > "$T/trunc.npr"
"$NPANALYZE" -o "$T/d.npa" "$A" "$T/trunc.npr" >"$T/dout" 2>&1; rc=$?
check "truncated input exits 1 (got $rc)" test $rc -eq 1
check "truncated input warned" grep -q "truncated" "$T/dout"
check "analysis written despite damage" test -s "$T/d.npa"

# garbage never crashes; a file with no np header or chunk anywhere is not
# a recording: refused (exit 2) as tcpdump -r refuses a non-capture
head -c 50000 /dev/urandom > "$T/garbage.npr"
"$NPANALYZE" -o "$T/g.npa" "$A" "$T/garbage.npr" >/dev/null 2>&1; rc=$?
check "garbage input refused, not a recording (exit $rc)" test $rc -eq 2

e2e_finish
