#!/bin/bash
# txn's cost per hub call, build A against build B, resolved to tens of ns:
# each build records alone at its defaults (or NPREC_ARGS), the two take
# turns (ABBA order over ROUNDS rounds), and in each turn one thread pinned
# to one CPU runs request/response rounds (bench/txn_rr.c, warm: no sweep;
# 100 B request, RESP-byte response, NCONN loopback TCP connections in a
# namespace of this script's own: both transaction roles, every request
# begins, answers and ends a transaction). Per turn: ns per run of THAT
# recorder's hub_send and hub_recv (their fds' run_time_ns / run_cnt,
# bench/recprogs.py; statistics on through a BPF_ENABLE_STATS fd held by
# bench/bpfstats_hold.py, the sysctl untouched) and txn_rr's median round
# (4 socket calls and their hooks, ns). Other processes' socket calls run
# the same hooks, so runs per round is printed too (4-5 when only the
# rounds ran). Summary: medians per build, and the paired difference B - A
# per round (median and how many rounds read B cheaper); with NPREC_MORE
# ("NAME=<nprec> ...": more builds, e.g. knock-outs) every build takes a
# turn each round (order reversed every other round), each against A.
# TOGETHER=1: A and B record at the same time instead (both hubs run on
# every call, the same load for both; the recorder attached second runs
# with warmer caches, so the attach order alternates every round and the
# summary also gives the difference averaged over each pair of rounds,
# one in each order). NPREC_MORE is ignored then.
# WORKLOAD=nginx (with TOGETHER=1): the load is saturated HTTP instead, as
# bench/e2e_pairs.sh's: nginx (one worker, pinned to CPU 1, 4 KiB file,
# bench/txn_lib.sh) in one namespace, wrk -t1 -c32 for BENCH_T s pinned to
# CPU 0 in another, over veth; the last column is then wrk's req/s.
# Usage: NPREC_A=<nprec> NPREC_B=<nprec> bash bench/txn_abcall.sh
# Env: NPREC_MORE, TOGETHER, WORKLOAD, BENCH_T (4), ROUNDS (8), RR (200000 rounds a turn), NCONN (64), RESP (1000),
#      SWEEP_KIB (0), NPREC_ARGS (none: defaults), CPU (0). Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
declare -A BIN=([A]=${NPREC_A:?NPREC_A=<nprec of build A>} [B]=${NPREC_B:?NPREC_B=<nprec of build B>})
NAMES=(A B)
for w in ${NPREC_MORE:-}; do BIN[${w%%=*}]=${w#*=}; NAMES+=("${w%%=*}"); done
ROUNDS=${ROUNDS:-8}
NS=txabc$$ TMP=$(mktemp -d /tmp/np-txabc.XXXXXX)
PIDS=()
NSA=${NS}a NSB=${NS}b IPA=10.77.41.1 IPB=10.77.41.2
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in $NS $NSA $NSB; do ip netns pids $n 2>/dev/null | xargs -r kill -9; ip netns del $n 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" -eq 0 ] || { echo "txn_abcall: needs root" >&2; exit 2; }
cc -O2 -o "$TMP/rr" "$ROOT/bench/txn_rr.c" || exit 1
ip netns add $NS && ip -n $NS link set lo up || exit 1
if [ "${WORKLOAD:-rr}" = nginx ]; then
	[ -n "${TOGETHER:-}" ] || { echo "txn_abcall: WORKLOAD=nginx needs TOGETHER=1" >&2; exit 2; }
	for t in nginx wrk; do command -v $t >/dev/null || { echo "txn_abcall: $t missing" >&2; exit 2; }; done
	. "$ROOT/bench/txn_lib.sh"
	txn_setup_nginx txabc
	sleep 1
	for p in $NGM $(pgrep -P $NGM); do taskset -pc 1 $p >/dev/null; done
fi
# load N: the measured load (N request/response rounds, or wrk) -> its figure
load() {
	if [ "${WORKLOAD:-rr}" = nginx ]; then
		ip netns exec $NSA taskset -c 0 wrk -t1 -c32 -d"${BENCH_T:-4}s" "http://$IPB:8080/index.html" |
			awk '/Requests\/sec/ {print int($2)}'
	else
		taskset -c "${CPU:-0}" "$TMP/rr" "$1" "${SWEEP_KIB:-0}" "${NCONN:-64}" "${RESP:-1000}" /var/run/netns/$NS
	fi
}
python3 "$ROOT/bench/bpfstats_hold.py" "$TMP/ready" & PIDS+=($!)
for _ in $(seq 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
[ -e "$TMP/ready" ] || { echo "txn_abcall: BPF_ENABLE_STATS failed" >&2; exit 1; }

# hubns PID: "send_runs send_ns recv_runs recv_ns" of that recorder's hub heads
hubns() {
	python3 "$ROOT/bench/recprogs.py" "$1" |
		awk '$1 == "hub_send" {s = $2 " " $3} $1 == "hub_recv" {r = $2 " " $3}
		     END {print (s ? s : "0 0"), (r ? r : "0 0")}'
}
# turn LABEL BIN: one recorder's turn -> row "LABEL send_ns/run recv_ns/run runs/round rr_ns"
turn() {
	local p s0 s1 rr
	# shellcheck disable=SC2086
	"$2" -q ${NPREC_ARGS:-} -o "$TMP/r.npr" 2>>"$TMP/rec.err" & p=$!
	PIDS+=($p)
	for _ in $(seq 100); do [ -s "$TMP/r.npr" ] && break; sleep 0.1; done
	sleep 1
	# warm-up (~1 s): the connections' state exists, --txn-events auto
	# has lowered its threshold (first interval), caches are warm
	taskset -c "${CPU:-0}" "$TMP/rr" 60000 0 "${NCONN:-64}" "${RESP:-1000}" /var/run/netns/$NS >/dev/null
	s0=$(hubns $p)
	rr=$(taskset -c "${CPU:-0}" "$TMP/rr" "${RR:-200000}" "${SWEEP_KIB:-0}" "${NCONN:-64}" "${RESP:-1000}" /var/run/netns/$NS)
	s1=$(hubns $p)
	kill -INT $p; wait $p 2>/dev/null
	rm -f "$TMP"/r.npr*
	awk -v l="$1" -v rr="$rr" -v n="${RR:-200000}" -v a="$s0" -v b="$s1" 'BEGIN {
		split(a, x); split(b, y)
		sc = y[1] - x[1]; rc = y[3] - x[3]
		printf "%s %.1f %.1f %.2f %s\n", l, sc ? (y[2] - x[2]) / sc : 0, rc ? (y[4] - x[4]) / rc : 0, (sc + rc) / n, rr }'
}
# start BIN: a recorder, its pid in P (waits until it writes)
start() {
	local f=$TMP/r$(( ${#PIDS[@]} )).npr
	# shellcheck disable=SC2086
	"$1" -q ${NPREC_ARGS:-} -o "$f" 2>>"$TMP/rec.err" & P=$!
	PIDS+=($P)
	for _ in $(seq 100); do [ -s "$f" ] && break; sleep 0.1; done
}
# together FIRST SECOND: both record during one run -> two rows as turn's
together() {
	local p q s0 t0 s1 t1 rr row
	start "${BIN[$1]}"; p=$P; start "${BIN[$2]}"; q=$P
	sleep 1
	# warm-up: connections known, --txn-events auto past its first interval
	if [ "${WORKLOAD:-rr}" = nginx ]; then
		ip netns exec $NSA taskset -c 0 wrk -t1 -c32 -d1s "http://$IPB:8080/index.html" >/dev/null
	else
		load 60000 >/dev/null
	fi
	s0=$(hubns $p); t0=$(hubns $q)
	rr=$(load "${RR:-200000}")
	s1=$(hubns $p); t1=$(hubns $q)
	local n=${RR:-200000}
	[ "${WORKLOAD:-rr}" = nginx ] && n=$(( ${rr:-0} * ${BENCH_T:-4} ))
	kill -INT $p $q; wait $p $q 2>/dev/null
	rm -f "$TMP"/r*.npr*
	for row in "$1 $s0 $s1" "$2 $t0 $t1"; do
		set -- $row
		awk -v l="$1" -v rr="$rr" -v n="$n" -v a="$2 $3 $4 $5" -v b="$6 $7 $8 $9" 'BEGIN {
			split(a, x); split(b, y)
			sc = y[1] - x[1]; rc = y[3] - x[3]
			printf "%s %.1f %.1f %.2f %s\n", l, sc ? (y[2] - x[2]) / sc : 0, rc ? (y[4] - x[4]) / rc : 0, n ? (sc + rc) / n : 0, rr }'
	done
}
if [ -n "${TOGETHER:-}" ]; then
	echo "txn_abcall: $ROUNDS rounds of A and B together, attach order alternating, RR=${RR:-200000} NCONN=${NCONN:-64} RESP=${RESP:-1000}; load at start $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	echo "# round build send_ns/run recv_ns/run hub_runs/round rr_median_ns (nginx: wrk req/s; runs per request)"
	for r in $(seq "$ROUNDS"); do
		if (( r % 2 )); then together A B; else together B A; fi | sed "s/^/$r /" | tee -a "$TMP/rows"
	done
fi
if [ -z "${TOGETHER:-}" ]; then
	echo "txn_abcall: $ROUNDS rounds of ${NAMES[*]}, order reversed every other, RR=${RR:-200000} NCONN=${NCONN:-64} RESP=${RESP:-1000}; load at start $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	echo "# round build send_ns/run recv_ns/run hub_runs/round rr_median_ns"
fi
[ -z "${TOGETHER:-}" ] && for r in $(seq "$ROUNDS"); do
	order=("${NAMES[@]}")
	if (( r % 2 == 0 )); then order=(); for ((i = ${#NAMES[@]} - 1; i >= 0; i--)); do order+=("${NAMES[i]}"); done; fi
	for m in "${order[@]}"; do
		echo "$r $(turn "$m" "${BIN[$m]}")" | tee -a "$TMP/rows"
	done
done
echo "txn_abcall: load at end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$TMP/rows" <<'PY'
import statistics as st, sys
rows = {}
for l in open(sys.argv[1]):
    r, b, s, v, n, rr = l.split()
    rows.setdefault(b, {})[r] = (float(s), float(v), float(n), float(rr))
names = ("send ns/run", "recv ns/run", "hub runs/round", "rr round ns")
for b in sorted(rows):
    print("%s medians: %s" % (b, "  ".join("%s %.1f" % (names[i], st.median(x[i] for x in rows[b].values())) for i in range(4))))
for b in sorted(rows):
    if b == "A":
        continue
    ks = [k for k in rows["A"] if k in rows[b]]
    for i in (0, 1, 3):
        d = [rows[b][k][i] - rows["A"][k][i] for k in ks]
        print("%s - A %-12s median %+7.1f  (%s lower in %d/%d)  [%s]" % (b, names[i], st.median(d), b, sum(x < 0 for x in d), len(d), " ".join("%+.0f" % x for x in d)))
        # pairs of rounds (1,2), (3,4) ...: one in each attach order (TOGETHER)
        pr = [(d[j] + d[j + 1]) / 2 for j in range(0, len(d) - 1, 2)]
        if pr and i != 3:
            print("%s - A %-12s pairs of rounds: mean %+7.1f  median %+7.1f  [%s]" % (b, names[i], st.mean(pr), st.median(pr), " ".join("%+.0f" % x for x in pr)))
PY
