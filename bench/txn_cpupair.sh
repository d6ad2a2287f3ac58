#!/bin/bash
# Process CPU of two nprec builds recording at once under a paced wrk
# (the paced workload of bench/record.sh: wrk -t1 -c8, each connection
# waiting PACE_MS between requests, against nginx over veth between two
# namespaces, bench/txn_lib.sh), attach order alternating round by round.
# Both see the same load at the same moment; what differs is their own
# user-space work (snapshots, drains) and system calls. CPU is the threads'
# schedstat run time over the BENCH_T s of load, not wall time.
# Prints per round: order, CPU ms of A and B, wrk's req/s; then the
# medians and B/A. Env: NPREC_A, NPREC_B (binaries; B defaults to
# $NP_BUILD/nprec), ROUNDS (4), BENCH_T (8), PACE_MS (1), NPREC_ARGS
# (none: the defaults).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
A=${NPREC_A:?NPREC_A=<the other nprec>} B=${NPREC_B:-$NP_BUILD/nprec}
T=${BENCH_T:-8} ROUNDS=${ROUNDS:-4}
NSA=txcp$$-a NSB=txcp$$-b IPA=10.77.13.1 IPB=10.77.13.2
TMP=$(mktemp -d /tmp/np-txcp.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
txn_setup_nginx txcp
echo "function delay() return ${PACE_MS:-1} end" > "$TMP/pace.lua"
sleep 1

round() {   # round FIRST SECOND -> "cpu_first cpu_second req/s"
	"$1" -q ${NPREC_ARGS:-} -o "$TMP/1.npr" 2>/dev/null & local p1=$!; PIDS+=($p1)
	txn_ready $p1 "$TMP/1.npr"
	"$2" -q ${NPREC_ARGS:-} -o "$TMP/2.npr" 2>/dev/null & local p2=$!; PIDS+=($p2)
	txn_ready $p2 "$TMP/2.npr"
	local a0 b0 a1 b1
	a0=$(txn_cpu_ms $p1) b0=$(txn_cpu_ms $p2)
	ip netns exec $NSA wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1
	a1=$(txn_cpu_ms $p1) b1=$(txn_cpu_ms $p2)
	kill -INT $p1 $p2; wait $p1 $p2 2>/dev/null
	echo "$(awk -v x="$a0" -v y="$a1" 'BEGIN {print y - x}') $(awk -v x="$b0" -v y="$b1" 'BEGIN {print y - x}') $(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$TMP/wrk.out")"
}
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		read -r x y q < <(round "$A" "$B"); echo "round $r A-first A ${x} ms B ${y} ms wrk ${q} req/s"
		echo "$x $y" >> "$TMP/ab"
	else
		read -r y x q < <(round "$B" "$A"); echo "round $r B-first A ${x} ms B ${y} ms wrk ${q} req/s"
		echo "$x $y" >> "$TMP/ab"
	fi
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$TMP/ab" <<'PY'
import statistics as st, sys
a, b = zip(*(map(float, l.split()) for l in open(sys.argv[1])))
print("median CPU ms per %s: A %.0f, B %.0f, B/A %.2f (rounds' B/A %s)" % (
    "run", st.median(a), st.median(b), st.median(b) / max(st.median(a), 1),
    " ".join("%.2f" % (y / max(x, 1)) for x, y in zip(a, b))))
PY
