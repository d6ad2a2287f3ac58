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
# although every run has other ephemeral ports and server pids. Each
# endpoint serves ~600 requests a run: its p99 and p999 (6 and 0.6 requests
# beyond them) are listed "not gated: too few requests (n=..., needs >=
# ...)" (min-tail 10), n being the smallest run's count = tx_httpmix's.
# Under a disturbance of the machine (see the retries below) up to seven
# more runs: f, g for the A/A, e, slow3-5 for the 2 -- 2 /slow check,
# fast2 for /fast.
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
# ep RUN PATH METRIC: RUN's server-side GET PATH METRIC in ns (its own table)
ep() {
	"$NPREPORT" compare "$T/$1.npa" "$T/$1.npa" --format csv 2>/dev/null |
		awk -F, -v k="endpoint|10.93.1.2:8090 GET $2|srv|server" -v m="$3" '$2==k && $3==m {print $13; exit}'
}
# tail_over RATIO PATH RUN...: a disturbance signature: in some RUN the
# server's own GET PATH p99 exceeds RATIO x its p50. The server sleeps a
# fixed time per path, so its tail is scheduling delay: quiet runs (5
# kept from the lead's runs at load 2-5) had /slow p99/p50 1.01-1.07 (one
# 1.37) and /fast 1.1-1.6 (one 2.6, one 5.1); under 2 CPU hogs (j31e,
# load 8-13) /slow 1.29-1.35 and /fast 3.3-6.2.
tail_over() {
	local r=$1 path=$2 run p50 p99; shift 2
	for run in "$@"; do
		p50=$(ep "$run" "$path" p50); p99=$(ep "$run" "$path" p99)
		echo "  ($run: GET $path p50 ${p50%.*} p99 ${p99%.*} ns)" >&2
		gt "${p99:-0}" "$(awk -v a="${p50:-0}" -v r="$r" 'BEGIN{print a * r}')" && return 0
	done
	return 1
}
compare_runs() { # OUT BASE-RUN... -- NEW-RUN...
	local out=$1 r args=(); shift
	for r in "$@"; do if [ "$r" = -- ]; then args+=(--); else args+=("$T/$r.npa"); fi; done
	"$NPREPORT" compare "${args[@]}" --config "$T/gate.conf" > "$T/$out"
	local rc=$?
	grep '^compare:' "$T/$out" >&2
	return $rc
}
# only_tails OUT: every REGRESSION in OUT is an endpoint's p99 or p999
only_tails() {
	grep -B1 'REGRESSION$' "$T/$1" | grep -E '^[a-z]' | grep -qvE '^transactions\.p999? \[endpoint' && return 1
	grep -q 'REGRESSION$' "$T/$1"
}
# The A/A is timing too: the fresh-clone CI of df87c3f (nothing else
# running) had /fast p99 +166 %, p999 +487 % in b d against a c (the
# server's p99 of ~600 requests a run is its ~6th slowest: a stalled
# run moves it x2-3), and slow, slow2 the same. When only endpoint
# tails are flagged while a disturbance signature is present (tail_over
# 2 /fast), the A/A is judged once more on 3 -- 3 runs, each side one
# fresh run (f, g); a compare that false-alarms on unchanged runs
# fails both. Since the min-tail rule (j32d) those p99/p999 of ~600
# requests are not gated, so only_tails never holds with the default load
# and this retry no longer runs; kept for a CMP_K large enough to gate them.
aa="a c -- b d"; aaout=aa2.txt
compare_runs $aaout a c -- b d
rc=$?
if [ $rc -ne 0 ] && only_tails $aaout && tail_over 2 /fast a b c d; then
	echo "  A/A flagged endpoint tails only on a c -- b d (a disturbance?): judging a c f -- b d g" >&2
	run f; run g
	aa="a c f -- b d g"; aaout=aa3.txt
	compare_runs $aaout a c f -- b d g
	rc=$?
fi
check "A/A, runs $aa: exit 0 (got $rc)" test $rc -eq 0
check "A/A, runs $aa: tested on runs" grep -qE ', [23]\+[23] runs' "$T/$aaout"
"$NPREPORT" compare "$T/a.npa" "$T/b.npa" > "$T/aa.txt"
echo "  single A/A pair (exit $?): $(grep '^compare:' "$T/aa.txt")" >&2
check "A/A: the endpoints are gated and tested" \
	grep -qE '^compare: ([6-9]|[1-9][0-9]) gated metrics \(([4-9]|[1-9][0-9]) tested\)' "$T/aa.txt"
check "A/A: no unmatched flows or transactions row" sh -c "! grep -qE '^  (flows|transactions) \[' '$T/aa.txt'"
# clients RUN PATH: the requests tx_httpmix made on PATH in RUN (ground truth)
clients() { awk -v p="path=$2" '$1 == p { sub("requests=", "", $2); n += $2 } END { print n + 0 }' "$T/$1.npa.client.txt"; }
nfast=$(clients a /fast); nb=$(clients b /fast); [ "$nb" -lt "$nfast" ] && nfast=$nb
shown=$(grep -A1 -F 'transactions.p99 [endpoint|10.93.1.2:8090 GET /fast|srv|server]' "$T/aa.txt" |
	grep -oE 'not gated: too few requests \(n=[0-9]+, needs >= 1000\)$')
echo "  /fast p99: ${shown:-gated} (clients made $(clients a /fast), $nb /fast requests)" >&2
check "A/A: /fast p99 not gated, n within 1 % of the smaller run's $nfast client requests (${shown:-gated})" \
	within "$(grep -oE 'n=[0-9]+' <<<"$shown" | tr -d n=)" "$nfast" 1
check "A/A: the p99 and p999 of both endpoints (~600 requests each) are not gated" \
	grep -qE '^compare: .*; 4 quantiles not gated \(too few requests\): ' "$T/aa.txt"
check "A/A: per-connection rows aggregated (rows: N -> M with M < N)" \
	awk '/^  rows:/ {exit !($2 > $4)}' "$T/aa.txt"

"$NPREPORT" compare "$T/a.npa" "$T/slow.npa" > "$T/slow.txt"
rc=$?
grep '^compare:' "$T/slow.txt" >&2
check "/slow +10 ms: exit 1 (got $rc)" test $rc -eq 1
check "/slow +10 ms: GET /slow p50 is a REGRESSION of about +20 %" sh -c \
	"grep -A1 -F 'transactions.p50 [endpoint|10.93.1.2:8090 GET /slow|srv|server]' '$T/slow.txt' |
	 grep -qE ' \+(1[5-9]|2[0-5])\.[0-9]%  .*REGRESSION'"
# /fast untouched: judged, like the A/A, on several runs a side against
# the spread between runs (the client alternates the paths: /fast's
# request rate may drop with it; on the single pair a vs slow a
# fresh-clone CI saw /fast's p99 at +147 %, one stall in ~11 s), and the
# /slow p50 must still be a regression there. Both are timing on a shared
# machine, so the measurement is taken once more, on three fresh /slow
# runs and one more base run (3 -- 3), when
#  - /fast is flagged on slow, slow2 (the official CI of f0dead2 ran them
#    through one disturbance: /fast p99 x2.8 in both), or
#  - /slow's p50 is not a regression there while a disturbance signature
#    (tail_over 1.2 /slow) is present: under 2 CPU hogs (j31e) a c -- slow
#    slow2 read 50.1 50.1 -- 62.1 60.6 ms, +21.9 %, p = 0.0049, but 2+2
#    runs leave 2 degrees of freedom and BH over 13 gated metrics needs
#    p <= 0.0038: q = 0.063, not significant; quiet runs give equal p50s
#    a side (sketch bins) and p ~ 0.
# A real defect (compare flags /fast, or misses +10 ms on /slow) fails on
# the second measurement as well; there is no third.
fast_flagged() {
	grep -qE ', [0-9]+\+[0-9]+ runs' "$T/$1" || return 0
	grep -A1 -E '^transactions\.p[0-9]+ \[endpoint\|10.93.1.2:8090 GET /fast' "$T/$1" | grep -q REGRESSION
}
fast_clean() { ! fast_flagged "$@"; }
slow_flagged() {
	grep -A1 -F 'transactions.p50 [endpoint|10.93.1.2:8090 GET /slow|srv|server]' "$T/$1" | grep -q REGRESSION
}
out=slow2.txt; sides="a c -- slow slow2"
compare_runs $out a c -- slow slow2
if fast_flagged $out || { ! slow_flagged $out && tail_over 1.2 /slow a c slow slow2; }; then
	echo "  /fast flagged or /slow p50 not significant on a c -- slow slow2 (a disturbance?): judging a c e -- slow3 slow4 slow5" >&2
	run slow3 CMP_SLOW_MS=60; run e; run slow4 CMP_SLOW_MS=60; sleep 10; run slow5 CMP_SLOW_MS=60
	out=slow5.txt; sides="a c e -- slow3 slow4 slow5"
	compare_runs $out a c e -- slow3 slow4 slow5
fi
check "/slow +10 ms, runs $sides: /fast latency not a regression" fast_clean $out
check "/slow +10 ms, runs $sides: GET /slow p50 still a REGRESSION" slow_flagged $out

# /fast +0.6 ms on a single pair: the block bootstrap on ~9 intervals a
# side. A make e2e under 2 CPU hogs (j31e, load 8-13) missed it (exit 0);
# when missed while a disturbance signature is present (tail_over 2 /fast:
# /fast p99 over 2x p50 in a or fast), one fresh pair c vs fast2 is
# judged instead; a compare that misses +0.6 ms misses both.
fpair="a fast"
"$NPREPORT" compare "$T/a.npa" "$T/fast.npa" > "$T/fast.txt"
rc=$?
grep '^compare:' "$T/fast.txt" >&2
if [ $rc -ne 1 ] && tail_over 2 /fast a fast; then
	echo "  /fast +0.6 ms missed on a, fast (a disturbance?): judging c, fast2" >&2
	run fast2 CMP_FAST_MS=2.6; fpair="c fast2"
	"$NPREPORT" compare "$T/c.npa" "$T/fast2.npa" > "$T/fast.txt"
	rc=$?
	grep '^compare:' "$T/fast.txt" >&2
fi
check "/fast +0.6 ms ($fpair): exit 1 (got $rc)" test $rc -eq 1
check "/fast +0.6 ms ($fpair): a GET /fast latency metric is the regression" \
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
