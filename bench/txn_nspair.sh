#!/bin/bash
# Two recorder builds' cost on the socket hooks, paired round by round so
# that other load on the machine (which moves bench/txn_callcost.sh's
# baseline between runs by more than the difference sought) hits both
# alike. Two namespaces, each with NCONN loopback TCP connections; X
# records only the first (--netns), Y only the second; one thread pinned
# to CPU 0 does request/response rounds (100 B request, RESP-byte
# response: four socket calls, both transaction roles) alternating between
# the namespaces, a SWEEP_KIB KiB memory walk before each (cold caches, as
# between a paced server's requests), only the calls timed. Both
# recorders' programs run on every call: fully for their own namespace's
# sockets, to their filter's exit for the other's. So the difference of
# the two namespaces' median round times is X's (full - filtered) cost
# minus Y's: it resolves changes of the recorded path only. Work done
# before the filter costs the same on both sides and cancels: a hook
# whose run is mostly its lookup before the filter (txn's on
# tcp_sendmsg_locked, as it was) cannot be measured this way
# (bench/txn_callcost.sh, bench/hookcost.sh). Every repetition swaps the
# namespaces, every second one the start order. Null run (the same build
# as X and Y, 8 repetitions, load 9): median -95 ns, -261..+210.
# Env: NPREC_X, NPREC_Y ("BINARY [VAR=VALUE ...] [nprec args]"), REPS (8),
# RR (4000 rounds, half per namespace), NCONN (16), SWEEP_KIB (4096), RESP
# (4096). Prints per repetition the medians (ns) and X - Y; then the
# median of X - Y. Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
X=${NPREC_X:?NPREC_X=\"BINARY [VAR=VALUE ...] [args]\"} Y=${NPREC_Y:?NPREC_Y=...}
REPS=${REPS:-8}
NSA=txnp$$-a NSB=txnp$$-b
TMP=$(mktemp -d /tmp/np-txnp.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
for ns in $NSA $NSB; do ip netns add $ns && ip -n $ns link set lo up || exit 1; done

cc -O2 -o "$TMP/nsrr" "$ROOT/bench/txn_rr.c" || exit 1

start() {   # start "BINARY [VAR=VALUE ...] [args]" NS OUT -> pid in $P
	local bin rest w envs=() args=()
	read -r bin rest <<< "$1"
	for w in ${rest:-}; do
		if [[ $w == [A-Z]*=* ]]; then envs+=("$w"); else args+=("$w"); fi
	done
	env "${envs[@]}" "$bin" -q "${args[@]}" --netns "$2" -o "$3" 2>>"$TMP/rec.err" & P=$!; PIDS+=($P)
}
echo "txn_nspair: X = $X; Y = $Y; $REPS repetitions, load at start $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq "$REPS"); do
	if (( rep % 2 )); then nx=$NSA ny=$NSB; else nx=$NSB ny=$NSA; fi
	if (( (rep / 2) % 2 )); then
		start "$Y" $ny "$TMP/y.npr"; py=$P; txn_ready $py "$TMP/y.npr"
		start "$X" $nx "$TMP/x.npr"; px=$P; txn_ready $px "$TMP/x.npr"; first=Y
	else
		start "$X" $nx "$TMP/x.npr"; px=$P; txn_ready $px "$TMP/x.npr"
		start "$Y" $ny "$TMP/y.npr"; py=$P; txn_ready $py "$TMP/y.npr"; first=X
	fi
	read -r ta tb < <(taskset -c 0 "$TMP/nsrr" "${RR:-4000}" "${SWEEP_KIB:-4096}" "${NCONN:-16}" "${RESP:-4096}" \
		/var/run/netns/$NSA /var/run/netns/$NSB)
	kill -INT $px $py; wait $px $py 2>/dev/null
	rm -f "$TMP"/[xy].npr*
	if [ $nx = $NSA ]; then tx=$ta ty=$tb; else tx=$tb ty=$ta; fi
	echo "rep $rep ($first first) X ${tx:-?} Y ${ty:-?} X-Y $(( ${tx:-0} - ${ty:-0} ))" | tee -a "$TMP/res"
done
echo "txn_nspair: load at end $(cut -d' ' -f1-3 /proc/loadavg)"
awk '{print $NF}' "$TMP/res" | sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
	printf "median X - Y: %.0f ns a round (%d repetitions, min %d, max %d)\n", m, NR, v[1], v[NR]}'
