#!/bin/bash
# A/B of two nprec builds' BPF cost per program run, both recording at once
# (the same load, the same moment), then again with the attach order
# swapped: the recorder attached second runs right after the first on
# every hook, with warm caches, and read 10-20 % cheaper per run in either
# role on the project VM, so only the mean of the two orders compares
# builds. Load, in a namespace of its own over loopback
# (tests/tools/tx_manyconn.py): CHURN_N requests each on a new connection
# (50 at a time), then 200 keep-alive connections x 100 requests. Run
# time from a BPF_ENABLE_STATS fd (bench/bpfstats_hold.py; the sysctl is
# untouched); tail-called programs count in their hub's figure.
# Prints per build and program: runs, ns/run in each order, mean.
# Env: NPREC_A, NPREC_B (binaries; B defaults to $NP_BUILD/nprec),
# CHURN_N (20000), NPREC_ARGS (--no-flows).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
A=${NPREC_A:?NPREC_A=<the other nprec>} B=${NPREC_B:-$NP_BUILD/nprec}
NS=txab$$ TMP=$(mktemp -d /tmp/np-txab.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns pids $NS 2>/dev/null | xargs -r kill -9; ip netns del $NS 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
python3 "$ROOT/bench/bpfstats_hold.py" "$TMP/ready" & PIDS+=($!)
for _ in $(seq 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
ip netns add $NS && ip -n $NS link set lo up || exit 1
ulimit -n 16384

# id name run_cnt run_time_ns of every loaded program
progs() {
	bpftool prog show --json | python3 -c 'import json,sys
for p in json.load(sys.stdin): print(p["id"], p.get("name","?"), p.get("run_cnt",0), p.get("run_time_ns",0))'
}

# one order: $1 attached first, $2 second; prints "label prog runs ns/run"
pair() {
	local first=$1 second=$2 l1=$3 l2=$4 base mid
	base=$(progs | awk '{print $1}' | sort -n | tail -1)
	$first -q ${NPREC_ARGS:---no-flows} --netns $NS -o "$TMP/1.npr" & local p1=$!; PIDS+=($p1)
	sleep 4
	mid=$(progs | awk '{print $1}' | sort -n | tail -1)
	$second -q ${NPREC_ARGS:---no-flows} --netns $NS -o "$TMP/2.npr" & local p2=$!; PIDS+=($p2)
	sleep 4
	progs | sort > "$TMP/s0"
	ip netns exec $NS python3 "$ROOT/tests/tools/tx_manyconn.py" 18090 50 $(( ${CHURN_N:-20000} / 50 )) churn >/dev/null
	ip netns exec $NS python3 "$ROOT/tests/tools/tx_manyconn.py" 18091 200 100 >/dev/null
	progs | sort > "$TMP/s1"
	kill -INT $p1 $p2; wait $p1 $p2
	join "$TMP/s0" "$TMP/s1" | awk -v b="$base" -v m="$mid" -v l1="$l1" -v l2="$l2" \
		'$1 > b && $6 > $3 { printf "%s %s %d %.0f\n", ($1 > m ? l2 : l1), $2, $6 - $3, ($7 - $4) / ($6 - $3) }'
}
{ pair "$A" "$B" A B | sed 's/$/ first_A/'; pair "$B" "$A" B A | sed 's/$/ first_B/'; } > "$TMP/all"
echo "build program runs(first run) ns/run(A attached first) ns/run(B attached first) mean"
awk '{ k = $1 " " $2; if ($5 == "first_A") { x[k] = $4; r[k] = $3 } else y[k] = $4 }
     END { for (k in x) if (k in y) printf "%-24s %9d %7d %7d %7.0f\n", k, r[k], x[k], y[k], (x[k] + y[k]) / 2 }' "$TMP/all" | sort -k2,2 -k1,1
