#!/usr/bin/env bash
# npreport compare on real reruns (root): seven runs of bench/compare_run.sh
# (a Python HTTP server with a 50 ms /slow and a 2 ms /fast endpoint in a
# namespace, recorded by nprec, ~11 s each): four unchanged runs, two with
# /slow at 60 ms, /fast at 2.6 ms, and 1 % packet loss. With the default gate:
#   A/A, 2 runs -- 2 runs     -> exit 0 (judged against the spread between
#                                runs; a single pair false-alarmed in 1 of 20
#                                in bench-compare, too often for make test;
#                                throughput minimum 20 % by a gate config)
#   /slow +10 ms              -> exit 1, GET /slow's p50 named
#   /fast +0.6 ms (+20 % p99) -> exit 1, GET /fast named
#   loss 0 -> 1 %             -> exit 1, the service pair's drop rate named
# and the rows of two runs meet: no unmatched flows/transactions row
# although every run has other ephemeral ports and server pids.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init report_compare_real
e2e_need_root
command -v python3 >/dev/null || e2e_skip "python3 missing"
command -v iptables >/dev/null || e2e_skip "iptables missing"
[ -x "$NPREC" ] && [ -x "$NPANALYZE" ] && [ -x "$NPREPORT" ] && [ -x "$NP_BUILD/tools/tx_httpmix" ] ||
	e2e_skip "nprec/npanalyze/npreport/tools not built"
RUN=$E2E_ROOT/bench/compare_run.sh
T=$E2E_TMP
run() { # name [VAR=value]
	local name=$1; shift
	env "$@" NP_BUILD="$NP_BUILD" bash "$RUN" "$T/$name.npa" 2> "$T/$name.log"
	check "run $name recorded and analysed" test -s "$T/$name.npa"
}
# Interleaved so that a side's two runs are ~30 s apart: the official CI of
# f0dead2 ran slow and slow2 back to back through one disturbance of the
# machine (both runs: server CPU per request x7, /fast p99 x2.8), which the
# 2 -- 2 test rightly found significant.
run a; run slow CMP_SLOW_MS=60; run b; run fast CMP_FAST_MS=2.6
run c; run slow2 CMP_SLOW_MS=60; run d; run loss CMP_LOSS=0.01
# The gate config a CI repository would keep for this scenario: its request
# count and rate swing more than the default 10 % between unchanged runs
# (the closed-loop client's count depends on when the recorder started: a
# fresh-clone make test saw GET /slow's rate at -11.0 % in an A/A 2 -- 2),
# so throughput needs 20 % here; every other family keeps its default.
printf 'default on\nfamily throughput rel 20%%\n' > "$T/gate.conf"
"$NPREPORT" compare "$T/a.npa" "$T/c.npa" -- "$T/b.npa" "$T/d.npa" --config "$T/gate.conf" > "$T/aa2.txt"
rc=$?
grep '^compare:' "$T/aa2.txt" >&2
check "A/A, 2 -- 2 runs: exit 0 (got $rc)" test $rc -eq 0
check "A/A, 2 -- 2 runs: tested on runs" grep -q ', 2+2 runs' "$T/aa2.txt"
"$NPREPORT" compare "$T/a.npa" "$T/b.npa" > "$T/aa.txt"
echo "  single A/A pair (exit $?): $(grep '^compare:' "$T/aa.txt")" >&2
check "A/A: the endpoints are gated and tested" \
	grep -qE '^compare: ([6-9]|[1-9][0-9]) gated metrics \(([4-9]|[1-9][0-9]) tested\)' "$T/aa.txt"
check "A/A: no unmatched flows or transactions row" sh -c "! grep -qE '^  (flows|transactions) \[' '$T/aa.txt'"
check "A/A: per-connection rows aggregated (rows: N -> M with M < N)" \
	awk '/^  rows:/ {exit !($2 > $4)}' "$T/aa.txt"

"$NPREPORT" compare "$T/a.npa" "$T/slow.npa" > "$T/slow.txt"
rc=$?
grep '^compare:' "$T/slow.txt" >&2
check "/slow +10 ms: exit 1 (got $rc)" test $rc -eq 1
check "/slow +10 ms: GET /slow p50 is a REGRESSION of about +20 %" sh -c \
	"grep -A1 -F 'transactions.p50 [endpoint|10.93.1.2:8090 GET /slow|srv|server]' '$T/slow.txt' |
	 grep -qE ' \+(1[5-9]|2[0-5])\.[0-9]%  .*REGRESSION'"
# /fast untouched: judged, like the A/A, on two runs a side against the
# spread between runs (the client alternates the paths: /fast's request
# rate may drop with it; on the single pair a vs slow a fresh-clone CI saw
# /fast's p99 at +147 %, one stall in ~11 s). It is timing on a shared
# machine: when both runs of the new side met a disturbance, one more pair
# of /slow runs 10 s apart is judged, and the check fails only if that pair
# flags /fast too; a real /fast regression flags both.
fast_flagged() {
	"$NPREPORT" compare "$T/a.npa" "$T/c.npa" -- "$T/$1.npa" "$T/$2.npa" --config "$T/gate.conf" > "$T/$3"
	grep '^compare:' "$T/$3" >&2
	grep -q ', 2+2 runs' "$T/$3" || return 0
	grep -A1 -E '^transactions\.p[0-9]+ \[endpoint\|10.93.1.2:8090 GET /fast' "$T/$3" | grep -q REGRESSION
}
fast_clean() { ! fast_flagged "$@"; }
pair="slow slow2 slow2.txt"
if fast_flagged $pair; then
	echo "  /fast flagged on slow, slow2 (a disturbance?): judging slow3, slow4" >&2
	run slow3 CMP_SLOW_MS=60; sleep 10; run slow4 CMP_SLOW_MS=60
	pair="slow3 slow4 slow4.txt"
fi
check "/slow +10 ms, 2 -- 2 runs: /fast latency not a regression (${pair% *})" fast_clean $pair
check "/slow +10 ms, 2 -- 2 runs: GET /slow p50 still a REGRESSION" sh -c \
	"grep -A1 -F 'transactions.p50 [endpoint|10.93.1.2:8090 GET /slow|srv|server]' '$T/${pair##* }' | grep -q REGRESSION"

"$NPREPORT" compare "$T/a.npa" "$T/fast.npa" > "$T/fast.txt"
rc=$?
grep '^compare:' "$T/fast.txt" >&2
check "/fast +0.6 ms: exit 1 (got $rc)" test $rc -eq 1
check "/fast +0.6 ms: a GET /fast latency metric is the regression" \
	sh -c "grep '^compare:' '$T/fast.txt' | grep -q 'GET /fast'"

"$NPREPORT" compare "$T/a.npa" "$T/loss.npa" --format junit > "$T/loss.xml"
rc=$?
check "loss 1 %: exit 1 (got $rc)" test $rc -eq 1
check "loss 1 %: the JUnit failure is the drop rate of 10.93.1.2:8090" python3 - "$T/loss.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
f = [c.get("name") for c in s.findall("testcase") if c.find("failure") is not None]
print("  failures:", f, file=sys.stderr)
sys.exit(0 if any(n.startswith("drop_rate [srv|tcp 10.93.1.2:8090>") for n in f) else 1)
PY
e2e_finish
