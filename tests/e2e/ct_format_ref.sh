#!/usr/bin/env bash
# The container spec against an independent reader: tests/tools/npfmt_ref.py
# implements docs/FORMAT.md in Python without sharing code with
# common/container.c; on the fixtures, on damaged copies (cut at many
# offsets, bytes flipped, garbage inserted) both readers must return the same
# records and the same damage statistics. No root needed.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ct_format_ref
REF=$E2E_ROOT/tests/tools/npfmt_ref.py
FIX=$E2E_ROOT/fixtures
[ -x "$NPREPORT" ] || e2e_skip "$NPREPORT not built"
command -v zstd >/dev/null || e2e_skip "zstd command missing (make deps)"
[ -r "$FIX/rec-basic.npr" ] || e2e_skip "fixtures missing (make fixtures)"

# same_dump FILE: records and statistics of both readers agree.
same_dump() {
	local f=$1
	"$NPREPORT" dump --stats "$f" > "$E2E_TMP/c.jsonl" 2> "$E2E_TMP/c.err"
	python3 "$REF" dump "$f" > "$E2E_TMP/p.jsonl" || return 1
	python3 "$REF" stats "$f" > "$E2E_TMP/p.stats" || return 1
	python3 - "$E2E_TMP" "$f" <<'PY'
import json, re, sys
d, f = sys.argv[1], sys.argv[2]
c = [json.loads(l) for l in open(d + "/c.jsonl")]
p = [json.loads(l) for l in open(d + "/p.jsonl")]
if c != p:
    for i, (a, b) in enumerate(zip(c, p)):
        if a != b:
            print(f"{f}: record {i} differs:\n  C  {json.dumps(a)[:300]}\n  py {json.dumps(b)[:300]}", file=sys.stderr)
            break
    else:
        print(f"{f}: {len(c)} records from C, {len(p)} from the reference", file=sys.stderr)
    sys.exit(1)
st = json.load(open(d + "/p.stats"))
line = [l for l in open(d + "/c.err") if " chunks ok, " in l][-1]
m = re.search(r"(\d+) chunks ok, (\d+) bad, (\d+) bytes skipped, (\d+) records \((\d+) bad\), (not truncated|truncated), last good chunk ends at (\d+)(, file header damaged)?", line)
cst = dict(chunks_ok=int(m[1]), chunks_bad=int(m[2]), bytes_skipped=int(m[3]), records=int(m[4]),
           records_bad=int(m[5]), truncated=m[6] == "truncated", last_good_offset=int(m[7]),
           bad_file_header=m[8] is not None)
diff = {k: (cst[k], st[k]) for k in cst if cst[k] != st[k]}
if diff:
    print(f"{f}: statistics differ (C, reference): {diff}", file=sys.stderr)
    sys.exit(1)
PY
}

for f in "$FIX"/*.np[ra] "$FIX"/hostile/*.npr; do
	check "${f#"$FIX"/}: both readers agree" same_dump "$f"
done

# The backward walk through the trailers finds the chunks the forward read found.
fwd=$("$NPREPORT" dump "$FIX/rec-basic.npr" | python3 -c 'import json,sys; print(json.dumps(sorted({json.loads(l)["offset"] for l in sys.stdin})))')
bwd=$(python3 "$REF" backward "$FIX/rec-basic.npr")
check "backward walk = forward chunks ($bwd)" test "$fwd" = "$bwd"

# Damage: cuts at 40 offsets, 20 flipped bytes, garbage with false magics.
size=$(stat -c %s "$FIX/rec-basic.npr")
bad=0
for i in $(seq 1 40); do
	cut=$(( (i * 7919 * 13) % size ))
	head -c "$cut" "$FIX/rec-basic.npr" > "$E2E_TMP/cut.npr"
	same_dump "$E2E_TMP/cut.npr" || { bad=$((bad + 1)); echo "    cut at $cut" >&2; }
done
check "40 truncated copies: both readers agree" test $bad -eq 0
bad=0
for i in $(seq 1 20); do
	off=$(( (i * 104729) % size ))
	cp "$FIX/rec-basic.npr" "$E2E_TMP/flip.npr"
	printf "$(printf '\\x%02x' $(( (i * 37) % 256 )))" | dd of="$E2E_TMP/flip.npr" bs=1 seek="$off" conv=notrunc status=none
	same_dump "$E2E_TMP/flip.npr" || { bad=$((bad + 1)); echo "    byte at $off" >&2; }
done
check "20 copies with a changed byte: both readers agree" test $bad -eq 0
{ head -c 3000 "$FIX/rec-basic.npr"; printf 'NPCKxxxxNPCK'; head -c 200 /dev/zero; tail -c +3001 "$FIX/rec-basic.npr"; } > "$E2E_TMP/garbage.npr"
check "garbage with false magics: both readers agree" same_dump "$E2E_TMP/garbage.npr"

# Section 5 (sketch) implemented independently: the reference reader's
# quantiles equal the C library's (the p50/p99 cells of ana-basic's txn
# table) and are within 0.79 % of the exact latencies (fixtures/mkfixtures.md).
q=$(python3 "$REF" quantiles "$FIX/ana-basic.npa" | head -1)
tab=$("$NPREPORT" dump --type ana_table "$FIX/ana-basic.npa" | grep '"name":"txn"')
py_p50=$(printf '%s' "$q" | python3 -c 'import json,sys; print(json.load(sys.stdin)["p50"])')
py_p99=$(printf '%s' "$q" | python3 -c 'import json,sys; print(json.load(sys.stdin)["p99"])')
py_p90=$(printf '%s' "$q" | python3 -c 'import json,sys; print(json.load(sys.stdin)["p90"])')
c_p50=$(printf '%s' "$tab" | python3 -c 'import json,sys; print(json.load(sys.stdin)["body"]["rows"][0][2])')
c_p99=$(printf '%s' "$tab" | python3 -c 'import json,sys; print(json.load(sys.stdin)["body"]["rows"][0][3])')
check "sketch p50/p99: reference $py_p50/$py_p99 = C $c_p50/$c_p99" test "$py_p50 $py_p99" = "$c_p50 $c_p99"
check "sketch p50 $py_p50 within 0.79 % of 1490000" within "$py_p50" 1490000 0.79
check "sketch p90 $py_p90 within 0.79 % of 1890000" within "$py_p90" 1890000 0.79
check "sketch p99 $py_p99 within 0.79 % of 1980000" within "$py_p99" 1980000 0.79

# npreport dump options and exit status.
n=$("$NPREPORT" dump --type flows --type 24 "$FIX/rec-basic.npr" | wc -l)
check "--type flows --type 24: 10 records ($n)" test "$n" -eq 10
out=$("$NPREPORT" dump --header-only "$FIX/rec-basic.npr")
check "--header-only: one header line" test "$(printf '%s\n' "$out" | grep -c '"type":"header"')" -eq 1 -a "$(printf '%s\n' "$out" | wc -l)" -eq 1
n=$("$NPREPORT" dump "$FIX/rec-basic.npr" "$FIX/ana-basic.npa" | grep -c '"file":')
check "two files: every line names its file ($n)" test "$n" -eq 82
"$NPREPORT" dump "$FIX/rec-basic.npr" >/dev/null 2>&1; rc0=$?
"$NPREPORT" dump "$FIX/rec-corrupt.npr" >/dev/null 2>"$E2E_TMP/w"; rc1=$?
"$NPREPORT" dump "$E2E_TMP/nonexistent.npr" >/dev/null 2>&1; rc2=$?
"$NPREPORT" dump --type nosuchtype "$FIX/rec-basic.npr" >/dev/null 2>&1; rc3=$?
check "exit status 0 / 1 / 2 / 2 ($rc0 $rc1 $rc2 $rc3)" test "$rc0$rc1$rc2$rc3" = 0122
check "damage warnings on stderr" grep -q "checksum mismatch" "$E2E_TMP/w"

e2e_finish
