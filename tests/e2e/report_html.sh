#!/usr/bin/env bash
# npreport --html on a real incident (fixtures/golden/demo-*.npa, recorded by
# `make demo`: checkout +50 ms on dm-back, iptables drops on dm-back :9002,
# dm-back's clock +5 ms), opened in a real browser: headless Chromium renders
# it, its DOM is read back and checked against the CSV of the same analysis
# (every table, every row, every number), the incident summary against what
# the demo injected (fixtures/golden/demo-truth.txt), the plots are inline
# SVG, and nothing is fetched from the network. The screenshot is kept in
# $NP_BUILD/test-out/report_html/. Also checks the plots' data files against
# the same truth. Skips only when chromium is not installed (make deps
# installs it). No root needed.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init report_html
GOLD=$E2E_ROOT/fixtures/golden
ANA=("$GOLD/demo-incident.npa" "$GOLD/demo-patterns.npa")
[ -x "$NPREPORT" ] || e2e_skip "build $NPREPORT first"
command -v python3 > /dev/null || e2e_skip "python3 missing"
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || e2e_skip "chromium not installed (make deps installs it)"
OUTDIR=$NP_BUILD/test-out/report_html
mkdir -p "$OUTDIR"
cd "$E2E_TMP" || exit 1

"$NPREPORT" "${ANA[@]}" --html report.html > stdout.txt 2> html.err
check "--html exits 0" test $? -eq 0
check "--html writes nothing on stdout" test ! -s stdout.txt
check "one self-contained file: no script, no external src/href/@import" python3 -c '
import re, sys
h = open("report.html", encoding="utf-8").read()
bad = re.findall(r"<script|(?:src|href)\s*=\s*\"(?:https?:)?//|@import|<link\b", h, re.I)
sys.exit(1 if bad or len(h) < 50000 else 0)'
"$NPREPORT" "${ANA[@]}" -f csv -o csv 2> csv.err
check "CSV of the same analysis" test -s csv/clock.csv

# --- the browser ---
browse() {   # browse ARGS...: a fresh profile each time, no network
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--no-first-run --user-data-dir="$(mktemp -d "$E2E_TMP/profile.XXXXXX")" "$@" 2>> chrome.err
}
browse --dump-dom "file://$E2E_TMP/report.html" > dom.html
check "chromium renders the report (DOM dumped)" sh -c "grep -q '<h1>np analysis report</h1>' dom.html"
browse --window-size=1280,2600 --screenshot="$OUTDIR/report.png" "file://$E2E_TMP/report.html" > /dev/null
check "screenshot kept: $OUTDIR/report.png" sh -c "[ \$(stat -c %s '$OUTDIR/report.png' 2>/dev/null || echo 0) -gt 50000 ]"
cp report.html "$OUTDIR/report.html"

python3 - dom.html csv "$GOLD/demo-truth.txt" > dom.checks 2>&1 <<'PY'
import csv, glob, math, os, sys
from html.parser import HTMLParser
dom, csvdir, truthf = sys.argv[1:4]
truth = {}
for l in open(truthf):
    l = l.split("#")[0].strip()
    if "=" in l:
        k, v = l.split("=", 1); truth[k] = v.strip()

class P(HTMLParser):
    """Sections, summary items, plots, and every table's cells (raw data-v)."""
    def __init__(self):
        super().__init__(); self.ids = set(); self.items = []; self.figs = []
        self.tables = {}; self.t = None; self.row = None; self.cell = None; self.li = None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if "id" in a: self.ids.add(a["id"])
        if tag == "li" and "data-kind" in a: self.li = [a["data-kind"], ""]
        if tag == "figure": self.figs.append(a.get("data-plot"))
        if tag == "table": self.t = self.tables.setdefault(a.get("data-table"), {"cols": [], "rows": []})
        if tag == "th" and self.t is not None: self.t["cols"].append(a.get("data-col"))
        if tag == "tr" and self.t is not None: self.row = []
        if tag == "td" and self.row is not None: self.cell = [a.get("data-v"), ""]
        if tag == "svg" and self.figs: self.figs[-1] = (self.figs[-1], "svg")
    def handle_endtag(self, tag):
        if tag == "li" and self.li: self.items.append(tuple(self.li)); self.li = None
        if tag == "td" and self.cell is not None: self.row.append(self.cell); self.cell = None
        if tag == "tr" and self.row: self.t["rows"].append(self.row); self.row = None
        if tag == "table": self.t = None
    def handle_data(self, d):
        if self.li: self.li[1] += d
        if self.cell is not None: self.cell[1] += d
p = P(); p.feed(open(dom, encoding="utf-8").read())
def ok(cond, what): print(("ok   " if cond else "FAIL ") + what)

for sid in ("incident", "findings", "plots", "sec-clock", "sec-loss", "sec-txn", "sec-hoststack", "sec-patterns"):
    ok(sid in p.ids, f"section #{sid} present")
# every table of the CSV is in the DOM with the same rows and the same numbers
ncells = bad = 0
for path in sorted(glob.glob(f"{csvdir}/*.csv")):
    name = os.path.basename(path)[:-4]
    if name in ("meta", "findings", "series", "sketches", "incident"):
        continue
    rows = list(csv.reader(open(path, newline="")))[1:]
    t = p.tables.get(name)
    if t is None or len(t["rows"]) != len(rows):
        ok(False, f"table {name}: {len(t['rows']) if t else 'no'} rows in the DOM, {len(rows)} in the CSV"); bad += 1
        continue
    for drow, crow in zip(t["rows"], rows):
        for (raw, shown), c in zip(drow, crow):
            if raw is None:
                continue
            ncells += 1
            if not math.isclose(float(raw), float(c), rel_tol=1e-12, abs_tol=0):
                bad += 1; print(f"FAIL {name}: DOM {raw} vs CSV {c}")
ok(bad == 0 and ncells > 2000, f"every table's numbers in the DOM equal the CSV ({ncells} cells)")
# the displayed value for dm-back's clock offset, in µs as the header says
clk = p.tables["clock"]; oc = clk["cols"].index("offset")
back = [r for r in clk["rows"] if r[0][1] == truth["slow_host"]][0]
ok(abs(float(back[oc][1]) * 1e3 - float(truth["shift_ns"])) < 20000,
   f"clock table shows {truth['slow_host']} offset {back[oc][1]} µs (injected {float(truth['shift_ns'])/1e3:g} µs)")
# the summary states the injected conditions
kinds = [k for k, _ in p.items]
text = {k: t for k, t in reversed(p.items)}
ok(kinds[:2] == ["slow_endpoint", "slow_downstream"], f"summary starts with the slow endpoint and its cause: {kinds}")
ok("checkout" in text.get("slow_endpoint", "") and "+50." in text.get("slow_endpoint", ""),
   "summary: checkout +50.x ms: " + text.get("slow_endpoint", "")[:90])
ok(truth["slow_host"] in text.get("slow_downstream", "") and truth["slow_service"] in text.get("slow_downstream", ""),
   "summary: the added time is spent on " + truth["slow_host"])
ok(f" {truth['iptables_dropped']} packets to {truth['loss_service']} " in text.get("loss", "")
   and truth["loss_host"] in text.get("loss", "") and "NETFILTER_DROP" in text.get("loss", ""),
   "summary: " + text.get("loss", "")[:100])
ok(f"{truth['slow_host']} +4999.9" in text.get("clock", "") or f"{truth['slow_host']} +5000.0" in text.get("clock", ""),
   "summary: " + text.get("clock", "")[:80])
import re
links = set(re.findall(r'href="#([^"]+)"', open(dom, encoding="utf-8").read()))
ok(links and links <= p.ids, f"every summary link has its target ({sorted(links - p.ids) or 'all'} )")
svgs = [f[0] for f in p.figs if isinstance(f, tuple)]
for name in ("endpoints.svg", "latency-time.svg", "loss-pairs.svg", "clock.svg", "decomp-services-decomp.svg"):
    ok(name in svgs, f"plot {name} inline as SVG")
ok(len(svgs) <= 16, f"{len(svgs)} plots")
PY
cat dom.checks >&2
check "DOM: sections, every table's numbers = CSV, summary = injected, plots inline" \
	sh -c "grep -q '^ok' dom.checks && ! grep -qv '^ok' dom.checks"

# --- labels from the analysis are data, never markup or commands ---
if [ -x "$NP_BUILD/tools/genana" ]; then
	"$NP_BUILD/tools/genana" -o evil.npa --src '10.7<script>alert(1)</script>`touch '"$E2E_TMP"'/pwned`'
	"$NPREPORT" evil.npa --html evil.html 2> evil.err
	check "hostile labels: --html exits 0" test $? -eq 0
	check "hostile labels: escaped in the HTML (and its inline SVG), no script element" \
		sh -c "grep -q '&lt;script&gt;alert(1)' evil.html && ! grep -qi '<script' evil.html"
	check "hostile labels: nothing ran" test ! -e "$E2E_TMP/pwned"
fi

# --- the plots' data against the same truth ---
"$NPREPORT" "${ANA[@]}" -s summary -p plots > /dev/null 2> plots.err
if command -v gnuplot > /dev/null; then
	check "loss-pairs: $(awk '!/^#/ && NF {s+=$2} END {print s+0}' plots/loss-pairs.dat) lost packets front -> back (iptables counted 10)" \
		sh -c "grep -q '^# vm/dm-front -> vm/dm-back' plots/loss-pairs.dat && [ \$(awk '!/^#/ && NF {s+=\$2} END {print s+0}' plots/loss-pairs.dat) -eq 10 ]"
	check "clock: dm-back's model starts within 20 µs of +5000 µs" \
		awk '/^# vm\/dm-back/ {b=1; next} b && NF {d=$2-5000; exit !(d<20 && d>-20)}' plots/clock.dat
	check "endpoints: checkout's time is inside the server (50..60 ms), slowest first" \
		awk -F'\t' 'NR==2 {exit !($1 ~ /checkout/ && $2 >= 50 && $2 <= 60)}' plots/endpoints.dat
	check "at most 8 curves (data blocks) in every plot" sh -c '! grep -c "^# " plots/*.dat | awk -F: "\$2>8" | grep -q .'
fi
e2e_finish
