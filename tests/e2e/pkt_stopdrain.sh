#!/usr/bin/env bash
# Events still in the packet ring when nprec stops are written or counted
# lost, never dropped in silence. The recorder is stopped (SIGSTOP) during
# an iperf3 run with GSO off, so its ring fills; it is told to end while
# stopped, then continued: the stop's drain has a full ring, every drain
# stops after 256 events (NPREC_TEST_PK_DRAIN_NS=0) and has no time to keep
# more (NPREC_TEST_PK_FINAL_KEEP_NS=0), so the rest is counted. Ground truth: the
# kernel's own per-hook "seen" counters; the traffic has ended before the
# stop, so each seen event is written, sampled out, lost in the kernel (the
# ring was full) or dropped by the recorder (user_dropped). Before the
# fix the stop's drain took 100 ms of events and freed the rest with the
# ring: seen exceeded written + lost by the backlog.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init pkt_stopdrain
e2e_need_root
command -v iperf3 >/dev/null || e2e_skip "iperf3 missing"
command -v ethtool >/dev/null || e2e_skip "ethtool missing"
PM=$NP_BUILD/tools/pktmatch
[ -x "$NPREC" ] && [ -x "$PM" ] || e2e_skip "nprec or tools/pktmatch not built"

ns_add psd-a && ns_add psd-b || e2e_skip "cannot create namespaces"
veth_pair psd-a psd-a0 10.77.41.1/24 psd-b psd-b0 10.77.41.2/24
ip netns exec psd-a ethtool -K psd-a0 tso off gso off >/dev/null 2>&1

T=$E2E_TMP
bg ip netns exec psd-b iperf3 -s -1 -p 5241
NPREC_TEST_PK_DRAIN_NS=0 NPREC_TEST_PK_FINAL_KEEP_NS=0 bg "$NPREC" -o "$T/b.npr" -d 60s \
	--packets --no-flows --no-txn --no-netcpu --no-threads --port 5241 --netns psd-b -i psd-b0 2>"$T/np.err"
NP=$BG_PID
wait_rec "$T/b.npr" $NP || echo "  (nprec did not start)" >&2
sleep 0.5
ip netns exec psd-a iperf3 -c 10.77.41.2 -p 5241 -t 2 >"$T/iperf.txt" 2>&1 &
IP=$!
sleep 0.5
kill -STOP "$NP"
wait "$IP"
check "iperf3 ran" [ $? -eq 0 ]
kill -INT "$NP"; kill -CONT "$NP"; wait "$NP"; rc=$?
check "nprec exited 0 ($rc)" [ "$rc" -eq 0 ]

"$PM" stats "$T/b.npr" >"$T/st.txt"
cat "$T/st.txt" >&2
v() { local x; x=$(awk -F= -v k="$1" '$1==k{print $2}' "$T/st.txt" 2>/dev/null); echo "${x:-missing}"; }
seen=$(v seen); ev=$(v events); lost=$(v lost); so=$(v sampled_out)
"$NPREPORT" dump --type pkt_events "$T/b.npr" 2>/dev/null | grep -o '"user_dropped":[0-9]*' |
	awk -F: '{s += $2} END {print s + 0}' >"$T/ud.txt"
ud=$(cat "$T/ud.txt")
echo "seen $seen written $ev lost $lost (user-dropped $ud) sampled out $so" >&2
check "a backlog at the stop was counted, not kept (user-dropped $ud)" gt "$ud" 0
check "every event the kernel saw is written or counted lost ($seen = $ev + $lost + $ud + $so)" \
	[ "$seen" = "$((ev + lost + ud + so))" ]
e2e_finish
