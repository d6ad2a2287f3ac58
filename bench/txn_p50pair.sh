#!/bin/bash
# The client p50 check of tests/e2e/rec_txn.sh, build A against build B, in
# alternating turns (A B B A ...): nginx serving a 128 KiB file in one
# namespace, tests/tools/rc_httpc (BENCH_K requests over 4 keep-alive
# connections) in another, over veth. Per turn one build records as
# rec_txn's first phase does: nprec --txn-events all --netns of the client,
# one of the server, and the client's tcp_sendmsg_locked recorder
# (NPREC_TEST_TXN_SENDMSG=1); then the client role's recorded p50 (the
# sketch's, tests/tools/rc_npr.py txn) against rc_httpc's own p50, in ns
# and %. rec_txn requires |recorded - own| <= 5 % of own.
# Usage: NPREC_A=<build dir> NPREC_B=<build dir> bash bench/txn_p50pair.sh
#   (a build dir holds nprec, npreport and tools/rc_httpc)
# Env: ROUNDS (4), BENCH_K (3000), BENCH_NS (p50p: namespace prefix), ALONE=1 (the client
#      namespace's recorder only), ENV_A / ENV_B (environment of that build's recorders, e.g.
#      ENV_B=NPREC_TEST_TXN_CLIENT_CACHE=1: a client's response reads stamped from the
#      socket's cache, j27c's stamps). Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
declare -A DIR=([A]=${NPREC_A:?NPREC_A=<build dir A>} [B]=${NPREC_B:?NPREC_B=<build dir B>})
declare -A ENVS=([A]=${ENV_A:-} [B]=${ENV_B:-})
ROUNDS=${ROUNDS:-4} K=${BENCH_K:-3000}
NSA=${BENCH_NS:-p50p}-a NSB=${BENCH_NS:-p50p}-b
IPA=10.77.44.1 IPB=10.77.44.2
TMP=$(mktemp -d /tmp/np-bench-p50p.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
command -v nginx >/dev/null || { echo "nginx missing" >&2; exit 1; }
txn_setup_nginx "${BENCH_NS:-p50p}"
head -c 131072 /dev/zero | tr '\0' x > "$TMP/www/big.html"
for _ in $(seq 50); do ip netns exec $NSB ss -ltn | grep -q "$IPB:8080" && break; sleep 0.1; done
sleep 0.5

# turn LABEL: one build records one rc_httpc run -> "LABEL own_p50 rec_p50 diff_ns diff_%"
turn() {
	local d=${DIR[$1]} p ps=() out own rec
	# shellcheck disable=SC2086
	env ${ENVS[$1]} "$d/nprec" -q --txn-events all --netns $NSA -o "$TMP/a.npr" 2>>"$TMP/rec.err" & p=$!
	PIDS+=("$p"); ps+=("$p")
	if [ -z "${ALONE:-}" ]; then
		# shellcheck disable=SC2086
		env ${ENVS[$1]} "$d/nprec" -q --txn-events all --netns $NSB -o "$TMP/b.npr" 2>>"$TMP/rec.err" & PIDS+=($!); ps+=($!)
		# shellcheck disable=SC2086
		env ${ENVS[$1]} NPREC_TEST_TXN_SENDMSG=1 "$d/nprec" -q --txn-events all --no-flows --no-netcpu --no-threads \
			--netns $NSA -o "$TMP/sm.npr" 2>>"$TMP/rec.err" & PIDS+=($!); ps+=($!)
	fi
	for f in a b sm; do
		[ -n "${ALONE:-}" ] && [ $f != a ] && continue
		for _ in $(seq 100); do [ -s "$TMP/$f.npr" ] && break; sleep 0.1; done
	done
	sleep 1
	out=$(ip netns exec $NSA "$d/tools/rc_httpc" -h $IPB -p 8080 -n "$K" -c 4 -u /big.html)
	sleep 1.2
	kill -INT "${ps[@]}"; wait "${ps[@]}" 2>/dev/null
	own=$(sed -n 's/.*p50_ns=\([0-9]*\).*/\1/p' <<<"$out")
	rec=$("$d/npreport" dump "$TMP/a.npr" | python3 "$ROOT/tests/tools/rc_npr.py" txn | awk '$1 == "client" {print $5}')
	rm -f "$TMP"/*.npr*
	awk -v l="$1" -v o="${own:-0}" -v r="${rec:-0}" 'BEGIN {printf "%s %d %d %+d %+.2f\n", l, o, r, r - o, o ? 100 * (r - o) / o : 0}'
}
echo "txn_p50pair: $ROUNDS rounds, K=$K; load at start $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "# round build own_p50_ns recorded_p50_ns diff_ns diff_%"
for r in $(seq "$ROUNDS"); do
	if (( r % 2 )); then o="A B"; else o="B A"; fi
	for b in $o; do echo "$r $(turn $b)" | tee -a "$TMP/rows"; done
done
echo "txn_p50pair: load at end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
awk '{d[$2] = d[$2] " " $6} END {for (b in d) print b, "diff_% per round:" d[b]}' "$TMP/rows" | sort
