#!/usr/bin/env bash
# make demo: a three-host incident, recorded, analysed and reported.
#
#   dm-client  --veth-->  dm-front  --veth-->  dm-back
#   load gen              frontend :8080       users  :9001
#                         (calls both)         orders :9002 (GET /orders/checkout +50 ms)
#
# 20 % of requests are "checkout"; the orders backend delays those by 50 ms
# (the injected condition), and dm-back drops 1 % of the frontend's request
# packets to the orders backend (iptables statistic). One nprec per host
# records for DEMO_SECONDS (default 15) with packet paths and clock sync;
# dm-back's recorder clock is shifted by +5 ms. npanalyze merges the three
# recordings, `npanalyze patterns` mines the degradation patterns, npreport
# prints the report and writes CSV + plots under DEMO_OUT (default
# ./demo-out). Namespaces and processes are removed on exit and Ctrl-C.
#
# Environment: NP_BUILD (binaries, default build/), DEMO_OUT, DEMO_SECONDS,
# DEMO_RATE (requests/s, default 40), DEMO_LOSS (drop probability, default
# 0.01), DEMO_QUIET=1 (no report on stdout), DEMO_NPREC_ARGS (more nprec
# options for every recorder, e.g. --send-calls).
. "$(dirname "$0")/lib/e2e.sh"
e2e_init demo
E2E_KEEP=${E2E_KEEP:-}
OUT=${DEMO_OUT:-$E2E_ROOT/demo-out}
SECS=${DEMO_SECONDS:-15}
RATE=${DEMO_RATE:-40}
LOSS=${DEMO_LOSS:-0.01}
SVC=$E2E_ROOT/tests/tools/dm_service.py
SHIFT=5ms
MISSING=()

say() { echo "demo: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, eBPF): run 'sudo make demo'"
command -v python3 >/dev/null || die "python3 missing (make deps installs it)"
[ -x "$NPREPORT" ] || die "$NPREPORT not built (make all)"
rm -rf "$OUT"; mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
echo "{\"shift_ms\": 5, \"slow_ms\": 50, \"loss\": $LOSS}" > "$OUT/injected.json"

# ---- the three hosts ----
ns_add dm-client && ns_add dm-front && ns_add dm-back || die "cannot create network namespaces"
veth_pair dm-client dm-c0 10.78.1.1/24 dm-front dm-f0 10.78.1.2/24 || die "cannot create veth"
veth_pair dm-front dm-f1 10.78.2.1/24 dm-back dm-b0 10.78.2.2/24 || die "cannot create veth"
ip netns exec dm-back iptables -A INPUT -p tcp --dport 9002 -m length --length 100: \
	-m statistic --mode random --probability "$LOSS" -j DROP || MISSING+=("iptables loss")

# ---- the service ----
bg ip netns exec dm-back python3 "$SVC" backend --port 9001
bg ip netns exec dm-back python3 "$SVC" backend --port 9002 --slow-path /orders/checkout --slow-ms 50
bg ip netns exec dm-front python3 "$SVC" frontend --port 8080 \
	--users http://10.78.2.2:9001 --orders http://10.78.2.2:9002
for _ in $(seq 50); do
	ip netns exec dm-client python3 -c 'import socket; socket.create_connection(("10.78.1.2", 8080), 0.2)' \
		2>/dev/null && break
	sleep 0.1
done

# ---- one recorder per host ----
# stopped with SIGINT after the load; -d only bounds a forgotten recorder.
# (SECS + 3 ended dm-back's recorder, started first, before the load did:
# the drops of the last second were counted by iptables, not recorded)
NPROPT=(-d "$((SECS + 120))s" -q --packets ${DEMO_NPREC_ARGS:-})
RECS=()
# started server side first, each once its file exists, so every sync peer
# is listening before its clients send the first probes
wait_file() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
if [ -x "$NPREC" ]; then
	bg "$NPREC" -o "$OUT/back.npr" "${NPROPT[@]}" --netns dm-back -i dm-b0 \
		--port 9001 --port 9002 --sync-listen 7702 --test-clock-shift "$SHIFT"
	P_BACK=$BG_PID
	wait_file "$OUT/back.npr"
	bg "$NPREC" -o "$OUT/front.npr" "${NPROPT[@]}" --netns dm-front -i dm-f0 -i dm-f1 \
		--port 8080 --port 9001 --port 9002 --sync-listen 7701 --sync-peer 10.78.2.2:7702
	P_FRONT=$BG_PID
	wait_file "$OUT/front.npr"
	bg "$NPREC" -o "$OUT/client.npr" "${NPROPT[@]}" --netns dm-client -i dm-c0 \
		--port 8080 --sync-peer 10.78.1.2:7701
	P_CLIENT=$BG_PID
	wait_file "$OUT/client.npr"
	sleep 1
else
	MISSING+=("nprec (not built: needs clang, bpftool, libbpf)")
fi

# ---- the load ----
say "running $SECS s of load ($RATE requests/s, 20 % checkout) ..."
ip netns exec dm-client python3 "$SVC" load --url http://10.78.1.2:8080 --seconds "$SECS" \
	--rate "$RATE" --conns 4 --out "$OUT/load.json" 2> "$OUT/load.txt" || MISSING+=("load generator failed")
cat "$OUT/load.txt" >&2
DROPPED=$(ip netns exec dm-back iptables -L INPUT -v -x -n 2>/dev/null | awk '/statistic/ {print $1; exit}')
echo "${DROPPED:-0}" > "$OUT/iptables_dropped.txt"
say "iptables dropped ${DROPPED:-?} packets on dm-back"

if [ -x "$NPREC" ]; then
	for p in "$P_CLIENT" "$P_FRONT" "$P_BACK"; do kill -INT "$p" 2>/dev/null; done
	for p in "$P_CLIENT" "$P_FRONT" "$P_BACK"; do wait "$p"; rc=$?
		[ $rc -eq 0 ] || say "nprec (pid $p) exited $rc"; done
	for h in client front back; do [ -s "$OUT/$h.npr" ] && RECS+=("$OUT/$h.npr"); done
	[ ${#RECS[@]} -eq 3 ] || MISSING+=("a recording (only ${#RECS[@]} of 3 written)")
fi

# ---- analysis and report ----
ANAS=()
if [ ${#RECS[@]} -gt 0 ] && [ -x "$NPANALYZE" ]; then
	"$NPANALYZE" -q -o "$OUT/incident.npa" "${RECS[@]}" 2> "$OUT/npanalyze.log"
	rc=$?; [ $rc -le 1 ] || MISSING+=("npanalyze failed ($rc): see $OUT/npanalyze.log")
	[ -s "$OUT/incident.npa" ] && ANAS+=("$OUT/incident.npa")
	# the SLO of the demo service: requests slower than 40 ms are degraded
	"$NPANALYZE" patterns --entry 10.78.1.2:8080 --interval 40:5000 -o "$OUT/patterns.npa" "${RECS[@]}" \
		> "$OUT/patterns.txt" 2> "$OUT/patterns.log"
	rc=$?; [ $rc -le 1 ] || MISSING+=("npanalyze patterns failed ($rc): see $OUT/patterns.log")
	[ -s "$OUT/patterns.npa" ] && ANAS+=("$OUT/patterns.npa")
elif [ ${#RECS[@]} -gt 0 ]; then
	MISSING+=("npanalyze (not built)")
fi

if [ ${#ANAS[@]} -gt 0 ]; then
	if [ -z "${DEMO_QUIET:-}" ]; then
		"$NPREPORT" "${ANAS[@]}" --rows 12     # every row: report.txt and csv/
	fi
	"$NPREPORT" "${ANAS[@]}" --rows 0 --width 120 > "$OUT/report.txt"
	"$NPREPORT" "${ANAS[@]}" --format csv -o "$OUT/csv" || MISSING+=("CSV output")
	"$NPREPORT" "${ANAS[@]}" -s summary --plots "$OUT/plots" > /dev/null || MISSING+=("plots")
	"$NPREPORT" "${ANAS[@]}" --html "$OUT/report.html" || MISSING+=("HTML report")
	echo
	python3 "$E2E_ROOT/tests/tools/dm_claims.py" "$OUT" | tee "$OUT/claims.txt"
fi

echo
say "recordings, analysis, report.txt, report.html, csv/ and plots/ are in $OUT"
if [ ${#MISSING[@]} -gt 0 ]; then
	say "INCOMPLETE: ${MISSING[*]}"
	exit 1
fi
exit 0
