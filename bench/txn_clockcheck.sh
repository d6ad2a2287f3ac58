#!/bin/bash
# How far the socket's cached TCP clock that txn stamps its server-side
# requests and responses with (bpf/txn.bpf.c sk_clock) is from the hook's
# own clock read, on real traffic (a client's response reads read the
# clock: rx_resp all "refused"; NPREC_TEST_TXN_CLIENT_CACHE=1 in the
# environment stamps them from the cache, to see how far their copy is
# from the read's end, e.g. LOADS=big SIDE=client): nprec at its
# defaults with NPREC_TEST_TXN_CLOCKCHECK=1 (every send/receive hook also
# reads the clock and counts now - stamp) during each load, over veth
# between two namespaces (the setup of bench/txn_lib.sh):
#   nginx    wrk -t1 -c32 saturated against nginx (4 KiB), nginx on CPU 1, wrk on CPU 0
#   paced    the same with 1 ms between a connection's requests
#   iperf3   iperf3 -t BENCH_T (bulk: only the *_other rows fill)
#   iperf3r  iperf3 -R (the server sends)
#   big      tests/tools/rc_httpc -c4 (BENCH_K requests, 20000) of a 128 KiB file: rec_txn's
#            load, a response read in several reads (the client's response end)
# Per load, nprec's report lines (record/families/txn.c rc_txn_clock_report):
# "txn clockcheck KIND calls N refused N after_now N ns p50 .. max ..".
# refused: calls where the stamp was not provably this call's (clock read
# instead); after_now: stamps later than the hook's read (must be 0).
# Env: NP_BUILD (build/), LOADS ("nginx paced iperf3 iperf3r"; big on request), BENCH_T (5), BENCH_K (20000), BENCH_NS (txck),
# SIDE (all: the machine; server / client: nprec --netns of that side only).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
T=${BENCH_T:-5}
NSA=${BENCH_NS:-txck}-a NSB=${BENCH_NS:-txck}-b
IPA=10.77.43.1 IPB=10.77.43.2
TMP=$(mktemp -d /tmp/np-bench-txck.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
for t in wrk nginx iperf3; do command -v $t >/dev/null || { echo "$t missing" >&2; exit 1; }; done
[ -x "$NP_BUILD/nprec" ] || { echo "$NP_BUILD/nprec not built" >&2; exit 1; }
txn_setup_nginx "${BENCH_NS:-txck}"
head -c 131072 /dev/zero | tr '\0' x > "$TMP/www/big.html"
ip netns exec $NSB iperf3 -s -p 5203 >/dev/null 2>&1 & PIDS+=($!)
echo "function delay() return 1 end" > "$TMP/pace.lua"
sleep 1
for p in $NGM $(pgrep -P $NGM); do taskset -pc 1 $p >/dev/null; done

run_load() {
	case $1 in
	nginx) ip netns exec $NSA taskset -c 0 wrk -t1 -c32 -d"${T}s" "http://$IPB:8080/index.html" ;;
	paced) ip netns exec $NSA taskset -c 0 wrk -t1 -c32 -d"${T}s" -s "$TMP/pace.lua" "http://$IPB:8080/index.html" ;;
	iperf3) ip netns exec $NSA iperf3 -c $IPB -p 5203 -t "$T" ;;
	iperf3r) ip netns exec $NSA iperf3 -c $IPB -p 5203 -t "$T" -R ;;
	big) ip netns exec $NSA "$NP_BUILD/tools/rc_httpc" -h $IPB -p 8080 -n "${BENCH_K:-20000}" -c 4 -u /big.html ;;
	esac | awk '/Requests\/sec/ {print "  wrk req/s", $2} /receiver$/ {print "  iperf3", $7, $8} /^requests=/ {print "  rc_httpc", $0}'
}

case ${SIDE:-all} in
server) SIDE_ARGS="--netns $NSB" ;;
client) SIDE_ARGS="--netns $NSA" ;;
*) SIDE_ARGS= ;;
esac
echo "txn_clockcheck: side ${SIDE:-all}; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
for l in ${LOADS:-nginx paced iperf3 iperf3r}; do
	echo "== $l"
	NPREC_TEST_TXN_CLOCKCHECK=1 "$NP_BUILD/nprec" -q $SIDE_ARGS -o "$TMP/r.npr" 2> "$TMP/err" & P=$!
	PIDS+=($P)
	txn_ready $P "$TMP/r.npr"
	run_load "$l"
	kill -INT $P; wait $P 2>/dev/null
	grep '^txn clockcheck' "$TMP/err" | sed 's/^/  /'
	rm -f "$TMP"/r.npr*
done
echo "txn_clockcheck: load at end $(cut -d' ' -f1-3 /proc/loadavg)"
