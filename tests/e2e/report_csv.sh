#!/usr/bin/env bash
# Every CSV of a report loads as-is into sqlite3 (the CLI, Debian package
# sqlite3): one header row, RFC 4180 quoting, numeric columns holding numbers
# only (units in the header names). Checked on two analyses: genana's
# (tests/tools/genana) and a real incident recorded by `make demo`
# (fixtures/golden/demo-*.npa). Truth is the .npa itself read by another
# reader (npreport dump -> JSON): the row count of every table and the sum of
# every numeric column must come back from SQL. No root needed.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init report_csv
GENANA=$NP_BUILD/tools/genana
GOLD=$E2E_ROOT/fixtures/golden
[ -x "$NPREPORT" ] && [ -x "$GENANA" ] || e2e_skip "build $NPREPORT and $GENANA first"
command -v sqlite3 > /dev/null || e2e_skip "sqlite3 missing (make deps installs it)"
command -v python3 > /dev/null || e2e_skip "python3 missing"
cd "$E2E_TMP" || exit 1

"$GENANA" -o basic.npa --seed 1
"$NPREPORT" basic.npa -f csv -o basic-csv 2> basic.err
check "genana analysis: CSV written" test $? -eq 0
"$NPREPORT" "$GOLD/demo-incident.npa" "$GOLD/demo-patterns.npa" -f csv -o demo-csv 2> demo.err
check "demo analysis: CSV written" test $? -eq 0
{ "$NPREPORT" dump --type ana_table basic.npa; } > basic.jsonl
{ "$NPREPORT" dump --type ana_table "$GOLD/demo-incident.npa"
  "$NPREPORT" dump --type ana_table "$GOLD/demo-patterns.npa"; } > demo.jsonl

# Loads DIR/*.csv into DB with column types from the .npa (REAL for every
# measured column) and prints one line per check: "ok|FAIL what".
load_check() {
	python3 - "$1" "$2" "$3" <<'PY'
import csv, glob, json, math, os, subprocess, sys
csvdir, dump, db = sys.argv[1:4]
tables = {}
for line in open(dump):
    b = json.loads(line)["body"]
    tables[b["name"]] = b
TEXT_UNITS = {"str", "id", "bool", ""}
# pseudo sections: numeric columns by name
PSEUDO_NUM = {"rank", "count", "n", "min", "p50", "p90", "p99", "p999", "max", "mean", "t_ns", "value"}
def sql(script):
    r = subprocess.run(["sqlite3", "-batch", "-bail", db], input=script, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip())
    return r.stdout
def ident(s):
    return '"' + s.replace('"', '""') + '"'
nfiles = 0
for path in sorted(glob.glob(f"{csvdir}/*.csv")):
    name = os.path.basename(path)[:-4]
    header = next(csv.reader(open(path, newline="")))
    t = tables.get(name)
    if t:
        numeric = [c["unit"] not in TEXT_UNITS for c in t["cols"]]
    else:
        numeric = [h in PSEUDO_NUM or h.endswith(("_ns", "_per_s")) for h in header]
        if name in ("meta", "findings"):
            numeric = [h == "rank" for h in header]
    cols = ", ".join(f"{ident(h)} {'REAL' if n else 'TEXT'}" for h, n in zip(header, numeric))
    try:
        sql(f"CREATE TABLE {ident(name)} ({cols});\n.import --csv --skip 1 {path} {ident(name)}\n")
    except RuntimeError as e:
        print(f"FAIL {name}: sqlite3 refused the file: {e}")
        continue
    nfiles += 1
    rows = int(sql(f"SELECT count(*) FROM {ident(name)};"))
    want = len(t["rows"]) if t else sum(1 for _ in csv.reader(open(path, newline=""))) - 1
    print(("ok" if rows == want else "FAIL") + f" {name}: {rows} rows loaded, {want} expected")
    for i, (h, n) in enumerate(zip(header, numeric)):
        if not n:
            continue
        bad = int(sql(f"SELECT count(*) FROM {ident(name)} WHERE typeof({ident(h)}) NOT IN "
                      f"('integer','real') AND {ident(h)} <> '';"))
        if bad:
            print(f"FAIL {name}.{h}: {bad} cells are not numbers")
        if not t:
            continue
        got = float(sql(f"SELECT total({ident(h)}) FROM {ident(name)};") or 0)
        vals = [r[i] for r in t["rows"] if isinstance(r[i], (int, float)) and not isinstance(r[i], bool)]
        exp = math.fsum(v for v in vals if math.isfinite(v))
        if not math.isclose(got, exp, rel_tol=1e-9, abs_tol=1e-6):
            print(f"FAIL {name}.{h}: sum {got!r} in sqlite, {exp!r} in the .npa")
print(f"ok {nfiles} files loaded")
PY
}
load_check basic-csv basic.jsonl basic.db > basic.checks 2>&1
load_check demo-csv demo.jsonl demo.db > demo.checks 2>&1
cat basic.checks demo.checks >&2
check "genana CSV: every file loads, rows, types and sums agree" sh -c "! grep -qv '^ok' basic.checks && [ -s basic.checks ]"
check "demo CSV: every file loads, rows, types and sums agree" sh -c "! grep -qv '^ok' demo.checks && [ -s demo.checks ]"
check "demo CSV: at least 20 files loaded" sh -c "grep -qE '^ok (2[0-9]|[3-9][0-9]) files loaded' demo.checks"

# The numbers a person queries first, answered by SQL as the summary states them.
q() { sqlite3 -batch demo.db "$1"; }
check "SQL: 10 lost packets with NETFILTER_DROP on vm/dm-back (iptables counted 10)" \
	test "$(q "SELECT count(*) FROM lost_packets WHERE drop_reason='NETFILTER_DROP' AND last_host='vm/dm-back'")" = 10
check "SQL: vm/dm-back's slowest endpoint by p50 is /orders/checkout, 45..60 ms (50 ms injected)" \
	test "$(q "SELECT key, p50_ns BETWEEN 45e6 AND 60e6 FROM transactions WHERE level='endpoint' AND role='server' AND host='vm/dm-back' ORDER BY p50_ns DESC LIMIT 1")" = "10.78.2.2:9002 GET /orders/checkout|1"
check "SQL: clock offset of vm/dm-back within 20 µs of the injected 5 ms" \
	test "$(q "SELECT abs(offset_ns - 5000000) < 20000 FROM clock WHERE host='vm/dm-back'")" = 1
check "SQL: the incident summary's loss row names the same host and count" \
	test "$(q "SELECT host || ' ' || CAST(count AS INT) FROM incident WHERE kind='loss'")" = "vm/dm-back 10"
check "CSV line ends are CRLF (RFC 4180), none bare" python3 -c '
import glob, sys
for p in glob.glob("demo-csv/*.csv"):
    b = open(p, "rb").read()
    if b.count(b"\r\n") != b.count(b"\n") or not b.endswith(b"\r\n"): sys.exit(p)'
# The check above can fail: a unit inside a numeric cell is caught.
sed -i '2s/^\([^,]*\),\([^,]*\),\([^,]*\),\([^,]*\),/\1,\2,\3,4999953 ns,/' demo-csv/clock.csv
rm -f demo.db; load_check demo-csv demo.jsonl demo.db > bad.checks 2>&1
check "a unit inside a numeric cell is reported" grep -q '^FAIL clock.offset_ns: 1 cells are not numbers' bad.checks
e2e_finish
