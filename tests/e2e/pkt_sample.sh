#!/usr/bin/env bash
# Consistent sampling and active IDs. Client -> router -> server namespaces
# (router segments the client's GSO sends), one nprec per end host with
# --sample 1/16 --active-ids. Checks: both recorders sampled the same data
# (every sampled segment the server saw matches a sampled client send, and
# every sampled client send was sampled by the server in full), about 1/16
# of the segments were kept, and the server read, for every segment, the
# active ID the client's sock_ops program wrote on it. The client also
# probes a clock-sync peer that does not listen: reported, recording goes on.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init pkt_sample
e2e_need_root
command -v iperf3 >/dev/null || e2e_skip "iperf3 missing"
command -v ethtool >/dev/null || e2e_skip "ethtool missing"
PM=$NP_BUILD/tools/pktmatch
[ -x "$NPREC" ] && [ -x "$PM" ] || e2e_skip "nprec or tools/pktmatch not built"

ns_add pk-c && ns_add pk-r && ns_add pk-s || e2e_skip "cannot create namespaces"
veth_pair pk-c pk-c0 10.77.1.1/24 pk-r pk-r0 10.77.1.2/24
veth_pair pk-r pk-r1 10.77.2.1/24 pk-s pk-s0 10.77.2.2/24
ip -n pk-c route add default via 10.77.1.2
ip -n pk-s route add default via 10.77.2.1
ip netns exec pk-r sysctl -qw net.ipv4.ip_forward=1
ip netns exec pk-r ethtool -K pk-r1 tso off gso off >/dev/null 2>&1

T=$E2E_TMP
bg ip netns exec pk-s iperf3 -s -1 -p 5201
NPOPT="-d 40s -q --packets --sample 1/16 --active-ids --no-flows --no-txn --no-netcpu --no-threads --port 5201"
bg "$NPREC" -o "$T/s.npr" $NPOPT --netns pk-s -i pk-s0
SPID=$BG_PID
bg "$NPREC" -o "$T/c.npr" $NPOPT --netns pk-c -i pk-c0 --sync-peer 10.77.2.2:7799 2>"$T/c.err"
CPID=$BG_PID
wait_rec "$T/s.npr" $SPID && wait_rec "$T/c.npr" $CPID || echo "  (nprec did not start)" >&2
sleep 1
ip netns exec pk-c iperf3 -c 10.77.2.2 -p 5201 -n 120M -l 64K >"$T/iperf.txt" 2>&1
check "iperf3 ran" [ $? -eq 0 ]
sleep 1
kill -INT "$CPID" "$SPID"; wait "$CPID"; crc=$?; wait "$SPID"; src=$?
check "both nprec exited 0 ($crc, $src)" [ "$crc" -eq 0 -a "$src" -eq 0 ]
check "unreachable sync peer reported ($(head -c 120 "$T/c.err"))" grep -q "clocksync: peer 10.77.2.2:7799 unreachable" "$T/c.err"

PKTMATCH_VERBOSE=1 "$PM" paths -s dev_xmit -r netif_receive "$T/c.npr" "$T/s.npr" >"$T/m.txt"
cat "$T/m.txt" >&2
v() { local x; x=$(awk -F= -v k="$1" '$1==k{print $2}' "$T/$2" 2>/dev/null); echo "${x:-missing}"; }
check "server kept sampled data segments ($(v recv_data m.txt))" gt "$(v recv_data m.txt)" 50
check "every sampled server segment was sampled by the client ($(v unmatched m.txt) not)" \
	[ "$(v unmatched m.txt)" = 0 ]
check "every sampled client send was sampled in full by the server ($(v send_fully_seen m.txt)/$(v send_data m.txt))" \
	[ "$(v send_fully_seen m.txt)" = "$(v send_data m.txt)" ]
check "no false matches" [ "$(v false m.txt)" = 0 ]

"$PM" stats "$T/s.npr" >"$T/st.txt"
seen=$(v seen st.txt); so=$(v sampled_out st.txt)
frac=$(awk -v a="$seen" -v b="$so" 'BEGIN{print (a>0 ? (a-b)/a : 0)}')
echo "server kept fraction $frac" >&2
check "about 1/16 kept on the server ($frac)" within "$frac" 0.0625 75

"$PM" aids "$T/c.npr" "$T/s.npr" >"$T/a.txt"
cat "$T/a.txt" >&2
check "client wrote active IDs ($(v aid_tx a.txt))" gt "$(v aid_tx a.txt)" 100
check "server read active IDs ($(v aid_rx a.txt))" gt "$(v aid_rx a.txt)" 100
check "every ID read is the one written on that segment ($(v aid_same a.txt)/$(v aid_rx a.txt))" \
	[ "$(v aid_same a.txt)" = "$(v aid_rx a.txt)" ]
check "no ID differs ($(v aid_differ a.txt))" [ "$(v aid_differ a.txt)" = 0 ]
e2e_finish
