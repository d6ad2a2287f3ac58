#!/usr/bin/env bash
# Seeking by time through the chunk index (docs/FORMAT.md 2.6; issue 23):
# - the index the C writer stores equals the one the spec's reader
#   (tests/tools/npfmt_ref.py) computes from the records;
# - npreport dump --from/--to prints exactly the chunks whose record times
#   meet the window (computed here from the reference reader's full dump),
#   the same with the index and on a copy without it (scanned), and on the
#   version 1 fixture;
# - npanalyze --from/--to over a genfix pair (10 ms between packets) finds
#   the 1001 packets of a 10 s window, and the analysis is the same with
#   and without the index.
# No root needed; seconds.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ct_seek
REF=$E2E_ROOT/tests/tools/npfmt_ref.py
GENFIX=$NP_BUILD/tools/genfix
[ -x "$NPREPORT" ] && [ -x "$NPANALYZE" ] && [ -x "$GENFIX" ] || e2e_skip "build npreport, npanalyze and tools first"
command -v zstd >/dev/null || e2e_skip "zstd command missing (make deps)"
cd "$E2E_TMP" || exit 1
mkdir -p ix old
"$GENFIX" -o ix --packets 20000 --flows 4 --gap 10000000 --sync 100 --chunk-events 2048 --no-truth
for h in hosta hostb; do
	python3 "$REF" index "ix/$h.npr" > "$h.index.json"
	check "$h: the stored index is the one the records give (reference reader)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s, c = d["stored"], d["scanned"]
ok = s is not None and len(s) > 10 and s == c[:-1] and c[-1][1:] == [0, 0]
if not ok: print("stored", s and s[:3], "scanned", c[:3], file=sys.stderr)
sys.exit(0 if ok else 1)' "$h.index.json"
	end=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scanned"][-1][0])' "$h.index.json")
	head -c "$end" "ix/$h.npr" > "old/$h.npr"
done

# chunks_of FILE: the chunk numbers of the JSON lines of a dump
chunks_of() { python3 -c 'import json,sys; print(" ".join(sorted({str(json.loads(l)["chunk"]) for l in open(sys.argv[1])}, key=int)))' "$1"; }

# want_chunks FILE LO HI REL: chunks the window must give, from the
# reference reader's full dump: chunk 0, chunks with no time, chunks whose
# t0_ns/t1_ns/t_ns range meets [LO, HI] (REL: seconds from the first time)
want_chunks() {
	python3 "$REF" dump "$1" > full.jsonl
	python3 - full.jsonl "$2" "$3" "$4" <<'PY'
import json, sys
rng, order = {}, []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "index":
        continue
    c = r["chunk"]
    if c not in rng:
        rng[c] = None
        order.append(c)
    ts = [v for k in ("t0_ns", "t1_ns", "t_ns") for v in [r["body"].get(k)]
          if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    if ts:
        lo, hi = min(ts), max(ts)
        rng[c] = (lo, hi) if rng[c] is None else (min(lo, rng[c][0]), max(hi, rng[c][1]))
lo, hi, rel = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
if rel:
    base = next(rng[c][0] for c in order if rng[c])
    lo, hi = base + lo * 1e9, base + hi * 1e9
print(" ".join(str(c) for c in order if c == order[0] or rng[c] is None or (rng[c][1] >= lo and rng[c][0] <= hi)))
PY
}

want=$(want_chunks ix/hosta.npr 50 60 1)
"$NPREPORT" dump --stats --from 50 --to 60 ix/hosta.npr > w-ix.jsonl 2> w-ix.err
"$NPREPORT" dump --stats --from 50 --to 60 old/hosta.npr > w-old.jsonl 2> w-old.err
check "window 50-60 s: the chunks the records give ($want)" test "$(chunks_of w-ix.jsonl)" = "$want"
check "read through the index" grep -q "window read through the chunk index" w-ix.err
check "only those chunks were read ($(grep -o '[0-9]* chunks ok' w-ix.err))" \
	test "$(grep -o '^[^ ]* [0-9]* chunks ok' w-ix.err | awk '{print $2}')" -eq "$(echo "$want" | wc -w)"
check "without the index: scanned" grep -q "by reading every chunk" w-old.err
check "without the index: the same records" cmp -s w-ix.jsonl w-old.jsonl
t0=$(python3 -c 'import json,sys; print(next(e[1] for e in json.load(open(sys.argv[1]))["stored"] if e[1]))' hosta.index.json)
"$NPREPORT" dump --from $((t0 + 50000000000))ns --to $((t0 + 60000000000))ns ix/hosta.npr > w-abs.jsonl 2>/dev/null
check "absolute ns window = relative one" cmp -s w-ix.jsonl w-abs.jsonl
"$NPREPORT" dump --from 50 --to 60ns ix/hosta.npr > /dev/null 2>&1
check "mixed seconds and ns refused (exit 2)" test $? -eq 2

# the version 1 fixture: scanned, chunks from its records
FIX=$E2E_ROOT/fixtures/rec-basic.npr
want=$(want_chunks "$FIX" 2.5 3.5 1)
"$NPREPORT" dump --stats --from 2.5 --to 3.5 "$FIX" > w-fix.jsonl 2> w-fix.err
check "version 1 fixture: scanned, chunks $want" \
	sh -c "grep -q 'by reading every chunk' w-fix.err && test '$(chunks_of w-fix.jsonl)' = '$want'"
check "version 1 fixture: the records are those of a full read" python3 -c '
import json, sys
full = {}
for l in open(sys.argv[1]): full.setdefault(json.loads(l)["chunk"], []).append(l)
win = {}
for l in open(sys.argv[2]): win.setdefault(json.loads(l)["chunk"], []).append(l)
sys.exit(0 if win and all(win[c] == full[c] for c in win) else 1)' <("$NPREPORT" dump "$FIX") w-fix.jsonl

# Damaged copies: the C reader uses the index exactly when the reference
# reader finds it usable (FORMAT.md 2.6 conditions 1-6).
python3 - ix/hosta.npr hosta.index.json <<'PY'
import json, sys
d = open(sys.argv[1], "rb").read()
ix = json.load(open(sys.argv[2]))["stored"]
at = len(d) - int.from_bytes(d[-4:], "little")
c5 = ix[5][0]
def flip(b, i):
    b = bytearray(b); b[i] ^= 0x40; return bytes(b)
v = {"index-payload": flip(d, at + 30), "chunk-header": flip(d, c5 + 9),
     "chunk-payload": flip(d, c5 + 40), "garbage-after": d + b"xyz", "cut-short": d[:-1],
     "file-header": flip(d, 3)}
for k, b in v.items():
    open("v-" + k + ".npr", "wb").write(b)
PY
for v in index-payload chunk-header chunk-payload garbage-after cut-short file-header; do
	c=no; "$NPREPORT" dump --stats --from 0 --to 0 "v-$v.npr" 2>&1 >/dev/null | grep -q "through the chunk index" && c=yes
	p=$(python3 "$REF" index "v-$v.npr" | python3 -c 'import json,sys; print("no" if json.load(sys.stdin)["stored"] is None else "yes")')
	check "damaged copy ($v): index used by C ($c) = usable for the reference reader ($p)" test "$c" = "$p"
done
check "a damaged payload leaves the index usable (checked when read)" \
	sh -c "'$NPREPORT' dump --stats --from 0 --to 0 v-chunk-payload.npr 2>&1 >/dev/null | grep -q 'through the chunk index'"

# npanalyze: packets 10 ms apart from the first event: [50 s, 60 s] holds 1001
(cd ix && "$NPANALYZE" -q -o ../a-ix.npa --from 50 --to 60 hosta.npr hostb.npr > ../a-ix.txt 2>&1)
(cd old && "$NPANALYZE" -q -o ../a-old.npa --from 50 --to 60 hosta.npr hostb.npr > ../a-old.txt 2>&1)
n=$("$NPREPORT" dump --type ana_table a-ix.npa | python3 -c '
import json, sys
for l in sys.stdin:
    b = json.loads(l)["body"]
    if b["name"] == "decomp":
        print(next(r[2] for r in b["rows"] if r[0] == "all"))')
check "npanalyze window: 1001 packets ($n)" test "${n:-0}" = 1001
ev=$(sed -n 's/.*hosta .* \([0-9]*\) packet events.*/\1/p' a-ix.txt)
check "npanalyze window: read a fraction of hosta's 100000 events ($ev)" \
	sh -c "[ '${ev:-0}' -gt 15000 ] && [ '${ev:-0}' -lt 30000 ]"
check "npanalyze: the same analysis without the index" cmp -s a-ix.npa a-old.npa
e2e_finish
