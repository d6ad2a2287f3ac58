#!/bin/bash
# txn with thousands of connections at once: 1500 keep-alive connections
# over loopback in a namespace, 40 requests each (tests/tools/
# tx_manyconn.py), latencies over many sketch buckets per connection,
# closes of all of them within a second at the end: what the snapshot's
# flush, the closes' flushes and the sketch map must all get right at
# scale. Ground truth: the requests the client completed. Every one must
# be a transaction in each role, in the counts and in the latency sketches.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init txn_manyconn
NS=tmc$$
e2e_need_root
# Off by default: about 1 run in 20 records the client role 64-196
# transactions short (counts and sketch alike): hub_state runs skipped by
# the tp_btf recursion guard (bpf_prog_info recursion_misses 54 in such a
# run) lose closes, and with them what the connection gathered since the
# last snapshot (notes/j24i.md). A suite that fails at random helps no
# one; a test weakened to pass would hide the loss. (The other kind, counts
# exact and both sketches short, was the snapshot dropping the buckets of
# connections that closed between its counter read and its sketch read:
# fixed, notes/j24m.md; rec_txn.sh's churn check reproduces it.)
[ "${NP_E2E_STRESS:-0}" = 1 ] || e2e_skip "a stress test: NP_E2E_STRESS=1 runs it"
[ -x "$NPREC" ] || e2e_skip "nprec not built"
NPR="python3 $E2E_ROOT/tests/tools/rc_npr.py"
N=1500 K=40
ns_add $NS || e2e_skip "cannot create a namespace"
ulimit -n 16384 2>/dev/null || e2e_skip "cannot raise the file limit"

bg "$NPREC" -q --no-flows --netns $NS -o "$E2E_TMP/m.npr"; P=$BG_PID
wait_rec "$E2E_TMP/m.npr" $P || echo "nprec did not start" >&2
DONE=$(timeout 300 ip netns exec $NS python3 "$E2E_ROOT/tests/tools/tx_manyconn.py" 18088 $N $K)
sleep 1.2
kill -INT $P; wait $P; RC=$?
check "nprec exit 0" [ "$RC" -eq 0 ]
check "client completed $((N * K)) requests (${DONE:-none})" [ "${DONE:-0}" -eq $((N * K)) ]
"$NPREPORT" dump "$E2E_TMP/m.npr" | $NPR txn > "$E2E_TMP/m.txn"
echo "$(cut -c1-120 "$E2E_TMP/m.txn")" >&2
# role count events http p50 p99 bytes_req bytes_resp sketch_count paths
read -r _ CC _ _ _ _ _ _ CSK _ < <(grep '^client' "$E2E_TMP/m.txn")
read -r _ SC _ _ _ _ _ _ SSK _ < <(grep '^server' "$E2E_TMP/m.txn")
check "client role: ${CC:-none} transactions = requests" [ "${CC:-0}" = "${DONE:-x}" ]
check "server role: ${SC:-none} transactions = requests" [ "${SC:-0}" = "${DONE:-x}" ]
check "client sketch holds every transaction (${CSK:-none})" [ "${CSK:-0}" = "${DONE:-x}" ]
check "server sketch holds every transaction (${SSK:-none})" [ "${SSK:-0}" = "${DONE:-x}" ]
# sketch counts that waited for their connection's row in vain, a full
# sketch map, a failed flush: all counted lost, none expected here
TL=$("$NPREPORT" dump "$E2E_TMP/m.npr" | $NPR lost txn)
check "txn lost ${TL:-?}" [ "${TL:-x}" = 0 ]
e2e_finish
