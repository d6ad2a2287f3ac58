#!/bin/bash
# nprec flows family against ground truth, in two namespaces joined by veth,
# one nprec per namespace (--netns):
#  1. a TCP transfer of a file of known size: the sender's flow records
#     tx_bytes == size and the receiver's rx_bytes == size (payload bytes at
#     the socket, so headers and retransmissions are not counted);
#  2. UDP datagrams of known total size on a connected UDP socket: sender
#     tx_bytes == size (an unconnected socket is one flow with remote 0.0.0.0:0);
#  3. loss injected with iptables (statistic match, 3 %): the sender's flow
#     records retransmissions, the receiver's recording drops with reason
#     NETFILTER_DROP, and bytes are still exact;
#  4. filters: traffic in another namespace and on another port is absent;
#  5. 200 short connections of 1000 bytes each: 200 flows on each side,
#     bytes exact (flow slots claimed, given back after close and reused);
#     3000 of 100 bytes as fast as they go: more closes than an eighth of
#     the table, so closed flows are given back between intervals too
#     (record/families/flows.c rc_flows_reclaim): every flow, bytes exact.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init rec_flows
# per-run names: a concurrent run of the same test must not share namespaces
NSA=rc-fa$$ NSB=rc-fb$$
e2e_need_root
[ -x "$NPREC" ] || e2e_skip "nprec not built"
command -v socat >/dev/null || e2e_skip "socat not installed"
NPR="python3 $E2E_ROOT/tests/tools/rc_npr.py"

ns_add $NSA && ns_add $NSB || e2e_skip "cannot create namespaces"
veth_pair $NSA rca1 10.77.2.1/24 $NSB rcb1 10.77.2.2/24
ip -n $NSA addr add fd77:2::1/64 dev rca1 nodad
ip -n $NSB addr add fd77:2::2/64 dev rcb1 nodad
SIZE=$((8 * 1048576 + 12345))
head -c $SIZE /dev/urandom > "$E2E_TMP/send.bin"
USIZE=$((200 * 1000))
head -c $USIZE /dev/urandom > "$E2E_TMP/usend.bin"

wait_file() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_listen() { for _ in $(seq 50); do ip netns exec "$1" ss -lntu | grep -q ":$2 " && return 0; sleep 0.1; done; return 1; }

bg "$NPREC" -q --netns $NSA -o "$E2E_TMP/a.npr"; PA=$BG_PID
bg "$NPREC" -q --netns $NSB -o "$E2E_TMP/b.npr"; PB=$BG_PID
bg "$NPREC" -q --netns $NSA --port 5003 -o "$E2E_TMP/p.npr"; PP=$BG_PID
# --cgroup: a cgroup v2 group the 5007 client runs in (hybrid setups: .../unified)
CGROOT=/sys/fs/cgroup; [ -e $CGROOT/cgroup.controllers ] || CGROOT=/sys/fs/cgroup/unified
CG=""
if [ -e $CGROOT/cgroup.controllers ] && mkdir -p $CGROOT/rc-e2e-flows$$ 2>/dev/null; then
	CG=$CGROOT/rc-e2e-flows$$
	trap 'e2e_cleanup; rmdir "$CG" 2>/dev/null' EXIT   # also on failure
	bg "$NPREC" -q --cgroup rc-e2e-flows$$ -o "$E2E_TMP/cg.npr"; PC=$BG_PID
	wait_file "$E2E_TMP/cg.npr"
fi
# the raw_tp fallback (kernels that refuse tp_btf), forced here
NPREC_TEST_FORCE_RAW_TP=1 bg "$NPREC" -q --netns $NSA -o "$E2E_TMP/r.npr"; PR=$BG_PID
# without the hub (each family's programs attached on their own): same figures
NPREC_TEST_NO_HUB=1 bg "$NPREC" -q --netns $NSA -o "$E2E_TMP/h.npr"; PH=$BG_PID
# txn's join refused after flows joined: the hub dissolves those hooks,
# every family runs its own program once (flows counts each byte once)
NPREC_TEST_HUB_REFUSE=1 bg "$NPREC" -q --netns $NSA -o "$E2E_TMP/d.npr"; PD=$BG_PID
# a program on every socket send (--send-calls, the default before
# 2026-11-28): bytes sent counted per call. At the defaults (a.npr) TCP
# bytes sent are read from the sockets at snapshots and closes,
# transactions' sends at the next receive (issue 24)
bg "$NPREC" -q --send-calls --netns $NSA -o "$E2E_TMP/s.npr"; PS=$BG_PID
wait_file "$E2E_TMP/a.npr"; wait_file "$E2E_TMP/b.npr"; wait_file "$E2E_TMP/p.npr"; wait_file "$E2E_TMP/r.npr"
wait_file "$E2E_TMP/h.npr"; wait_file "$E2E_TMP/d.npr"; wait_file "$E2E_TMP/s.npr"

# 1. clean TCP transfer
bg ip netns exec $NSB socat -u TCP-LISTEN:5001,reuseaddr OPEN:"$E2E_TMP/recv.bin",creat,trunc
wait_listen $NSB 5001
ip netns exec $NSA socat -u OPEN:"$E2E_TMP/send.bin" TCP:10.77.2.2:5001
wait $BG_PID 2>/dev/null
check "ground truth: receiver got $SIZE bytes" [ "$(stat -c %s "$E2E_TMP/recv.bin")" -eq $SIZE ]

# 1b. the same over IPv6
bg ip netns exec $NSB socat -u TCP6-LISTEN:5006,reuseaddr OPEN:/dev/null
wait_listen $NSB 5006
ip netns exec $NSA socat -u OPEN:"$E2E_TMP/send.bin" TCP6:[fd77:2::2]:5006
wait $BG_PID 2>/dev/null

# 1c. a transfer from inside the cgroup and one from outside it
if [ -n "$CG" ]; then
	bg ip netns exec $NSB socat -u TCP-LISTEN:5007,reuseaddr,fork OPEN:/dev/null
	wait_listen $NSB 5007
	bash -c "echo \$\$ > $CG/cgroup.procs && exec ip netns exec $NSA socat -u OPEN:$E2E_TMP/usend.bin TCP:10.77.2.2:5007"
	ip netns exec $NSA socat -u OPEN:"$E2E_TMP/usend.bin" TCP:10.77.2.2:5007
fi

# 1d. short connections, one after the other
NSHORT=200
bg ip netns exec $NSB socat -u TCP-LISTEN:5008,reuseaddr,fork OPEN:/dev/null
wait_listen $NSB 5008
ip netns exec $NSA bash -c "for i in \$(seq $NSHORT); do head -c 1000 /dev/zero > /dev/tcp/10.77.2.2/5008; done"

# 1e. connection churn: NCHURN connections of 100 bytes, back to back
NCHURN=3000
cat > "$E2E_TMP/churn.py" <<'PY'
import socket, sys, threading
role, n = sys.argv[1], int(sys.argv[2])
if role == "server":
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("10.77.2.2", 5009)); ls.listen(1024)
    for _ in range(n):
        s, _ = ls.accept()
        while s.recv(4096): pass
        s.close()
else:
    for _ in range(n):
        c = socket.create_connection(("10.77.2.2", 5009)); c.sendall(b"c" * 100); c.close()
PY
bg ip netns exec $NSB python3 "$E2E_TMP/churn.py" server $NCHURN; PCH=$BG_PID
wait_listen $NSB 5009
ip netns exec $NSA python3 "$E2E_TMP/churn.py" client $NCHURN
wait $PCH

# 1f. a peer that closes 1.5 s after the client's close: a snapshot falls
# between the client's close and the peer's FIN (the client's close marks
# its receive side shut, which is not a FIN: its bytes read once came out
# as 2^64-1)
cat > "$E2E_TMP/slowclose.py" <<'PY'
import socket, sys, time
if sys.argv[1] == "server":
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("10.77.2.2", 5010)); ls.listen(8)
    s, _ = ls.accept()
    while s.recv(4096): pass
    time.sleep(1.5)
    s.close()
else:
    c = socket.create_connection(("10.77.2.2", 5010)); c.sendall(b"s" * 1000); c.close()
PY
bg ip netns exec $NSB python3 "$E2E_TMP/slowclose.py" server; PSC=$BG_PID
wait_listen $NSB 5010
ip netns exec $NSA python3 "$E2E_TMP/slowclose.py" client
wait $PSC

# 2. UDP datagrams (sender side is exact; the receiver may drop)
bg ip netns exec $NSB socat -u UDP-RECV:5002 OPEN:/dev/null
wait_listen $NSB 5002
ip netns exec $NSA socat -u OPEN:"$E2E_TMP/usend.bin" UDP:10.77.2.2:5002

# 3. TCP with 3 % of incoming segments dropped at the receiver
ip netns exec $NSB iptables -A INPUT -p tcp --dport 5003 -m statistic --mode random --probability 0.03 -j DROP \
	|| echo "iptables failed" >&2
bg ip netns exec $NSB socat -u TCP-LISTEN:5003,reuseaddr OPEN:/dev/null
wait_listen $NSB 5003
ip netns exec $NSA socat -u OPEN:"$E2E_TMP/send.bin" TCP:10.77.2.2:5003
wait $BG_PID 2>/dev/null

# 4. traffic the filters must exclude: loopback inside $NSB
bg ip netns exec $NSB socat -u TCP-LISTEN:5004,reuseaddr OPEN:/dev/null
wait_listen $NSB 5004
ip netns exec $NSB socat -u OPEN:"$E2E_TMP/usend.bin" TCP:127.0.0.1:5004

sleep 1.2
kill -INT $PA $PB $PP $PR $PH $PD $PS ${PC:-}; wait $PA; RA=$?; wait $PB; RB=$?; wait $PP; wait $PR; wait $PH; wait $PD; wait $PS
[ -n "${PC:-}" ] && wait $PC
check "nprec exit 0 (both namespaces)" [ "$RA" -eq 0 -a "$RB" -eq 0 ]

"$NPREPORT" dump "$E2E_TMP/a.npr" | $NPR flows > "$E2E_TMP/a.flows"
"$NPREPORT" dump "$E2E_TMP/b.npr" | $NPR flows > "$E2E_TMP/b.flows"
cat "$E2E_TMP/a.flows" "$E2E_TMP/b.flows" >&2
# columns: laddr lport raddr rport proto tx_bytes rx_bytes tx_pkts rx_pkts retrans
f1a=$(awk '$3=="10.77.2.2" && $4==5001 && $5==6' "$E2E_TMP/a.flows")
f1b=$(awk '$1=="10.77.2.2" && $2==5001 && $5==6' "$E2E_TMP/b.flows")
check "sender flow tx_bytes == $SIZE ($(awk '{print $6}' <<<"$f1a"))" [ "$(awk '{print $6}' <<<"$f1a")" = "$SIZE" ]
check "receiver flow rx_bytes == $SIZE ($(awk '{print $7}' <<<"$f1b"))" [ "$(awk '{print $7}' <<<"$f1b")" = "$SIZE" ]
check "sender flow: no payload received" [ "$(awk '{print $7}' <<<"$f1a")" = "0" ]
check "sender flow: >= size/65536 segments out" [ "$(awk '{print $8}' <<<"$f1a")" -ge $((SIZE / 65536)) ]
check "sender flow: srtt sampled, 0 < srtt < 100 ms ($(awk '{print $11}' <<<"$f1a") us)" \
	bash -c "[ '$(awk '{print $11}' <<<"$f1a")' -gt 0 ] && [ '$(awk '{print $11}' <<<"$f1a")' -lt 100000 ]"
check "receiver flow: segments in > 0" [ "$(awk '{print $9}' <<<"$f1b")" -gt 0 ]

fsc=$(awk '$3=="10.77.2.2" && $4==5010 && $5==6 {tx += $6; rx += $7} END {print tx + 0, rx + 0}' "$E2E_TMP/a.flows")
check "client closing before its peer: 1000 bytes sent, 0 read ($fsc)" [ "$fsc" = "1000 0" ]
fsc=$(awk '$1=="10.77.2.2" && $2==5010 && $5==6 {tx += $6; rx += $7} END {print tx + 0, rx + 0}' "$E2E_TMP/b.flows")
check "its peer: 0 bytes sent, 1000 read ($fsc)" [ "$fsc" = "0 1000" ]

f6=$(awk '$3=="fd77:2::2" && $4==5006 && $5==6' "$E2E_TMP/a.flows")
check "IPv6 sender flow tx_bytes == $SIZE ($(awk '{print $6}' <<<"$f6"))" [ "$(awk '{print $6}' <<<"$f6")" = "$SIZE" ]

"$NPREPORT" dump "$E2E_TMP/r.npr" | $NPR flows > "$E2E_TMP/r.flows"
fr=$(awk '$3=="10.77.2.2" && $4==5001 && $5==6' "$E2E_TMP/r.flows")
check "raw_tp fallback: sender tx_bytes == $SIZE ($(awk '{print $6}' <<<"$fr"))" [ "$(awk '{print $6}' <<<"$fr")" = "$SIZE" ]
check "raw_tp fallback: retransmissions seen" [ "$(awk '$4==5003 {print $10}' "$E2E_TMP/r.flows")" -gt 0 ]
"$NPREPORT" dump "$E2E_TMP/h.npr" | $NPR flows > "$E2E_TMP/h.flows"
fh=$(awk '$3=="10.77.2.2" && $4==5001 && $5==6' "$E2E_TMP/h.flows")
check "without the hub: sender tx_bytes == $SIZE ($(awk '{print $6}' <<<"$fh"))" [ "$(awk '{print $6}' <<<"$fh")" = "$SIZE" ]
check "without the hub: header says each family attached its own" bash -c "'$NPREPORT' dump '$E2E_TMP/h.npr' | $NPR probes | grep -x 'flows tp_btf/sock_send_length attached -' >/dev/null"
"$NPREPORT" dump "$E2E_TMP/d.npr" | $NPR flows > "$E2E_TMP/d.flows"
fd_=$(awk '$3=="10.77.2.2" && $4==5001 && $5==6' "$E2E_TMP/d.flows")
check "hub dissolved: sender tx_bytes == $SIZE ($(awk '{print $6}' <<<"$fd_"))" [ "$(awk '{print $6}' <<<"$fd_")" = "$SIZE" ]
"$NPREPORT" dump "$E2E_TMP/d.npr" | $NPR probes > "$E2E_TMP/d.probes"
check "hub dissolved: header says so for sock_send_length" grep -q '^hub tp_btf/sock_send_length failed a family could not join' "$E2E_TMP/d.probes"
check "raw_tp fallback: header says raw_tp" bash -c "'$NPREPORT' dump '$E2E_TMP/r.npr' | $NPR probes | grep 'flows raw_tp/sock_send_length attached' >/dev/null"

# with a program on every send (--send-calls): the same bytes, counted per call
"$NPREPORT" dump "$E2E_TMP/s.npr" > "$E2E_TMP/s.dump"
$NPR flows < "$E2E_TMP/s.dump" > "$E2E_TMP/s.flows"
$NPR probes < "$E2E_TMP/s.dump" > "$E2E_TMP/s.probes"
fs=$(awk '$3=="10.77.2.2" && $4==5001 && $5==6' "$E2E_TMP/s.flows")
check "--send-calls: flows and txn share sock_send_length, no socket iterator for flows" \
	bash -c "[ \$(grep -cE '^(flows|txn) tp_btf/sock_send_length attached shared program [(]hub[)]\$' '$E2E_TMP/s.probes') = 2 ] &&
		 ! grep -q '^flows iter/bpf_sk_storage_map attached' '$E2E_TMP/s.probes'"
check "--send-calls: sender tx_bytes == $SIZE ($(awk '{print $6}' <<<"$fs"))" [ "$(awk '{print $6}' <<<"$fs")" = "$SIZE" ]
check "--send-calls: IPv6 sender tx_bytes == $SIZE" \
	[ "$(awk '$3=="fd77:2::2" && $4==5006 && $5==6 {print $6}' "$E2E_TMP/s.flows")" = "$SIZE" ]
check "--send-calls: lossy transfer tx_bytes == $SIZE, retransmissions > 0" \
	[ "$(awk '$4==5003 && $5==6 {print $6, ($10 > 0)}' "$E2E_TMP/s.flows")" = "$SIZE 1" ]
check "--send-calls: short connections: $NSHORT sender flows, $((NSHORT * 1000)) bytes" \
	[ "$(awk '$4==5008 && $5==6 {n++; b+=$6} END {print n+0, b+0}' "$E2E_TMP/s.flows")" = "$NSHORT $((NSHORT * 1000))" ]
check "--send-calls: churn: $NCHURN sender flows, $((NCHURN * 100)) bytes" \
	[ "$(awk '$4==5009 && $5==6 {n++; b+=$6} END {print n+0, b+0}' "$E2E_TMP/s.flows")" = "$NCHURN $((NCHURN * 100))" ]
check "--send-calls: nothing lost" [ "$($NPR lost flows < "$E2E_TMP/s.dump")" = "0" ]
check "--send-calls: UDP sender tx_bytes == $USIZE" \
	[ "$(awk '$3=="10.77.2.2" && $4==5002 && $5==17 {print $6}' "$E2E_TMP/s.flows")" = "$USIZE" ]

# at the defaults, no program on TCP sends: the senders' bytes from their sockets
"$NPREPORT" dump "$E2E_TMP/a.npr" | $NPR probes > "$E2E_TMP/a.probes"
check "defaults: txn has no send program, flows reads TCP sockets" \
	bash -c "grep -q '^txn sock_send_length skipped not hooked' '$E2E_TMP/a.probes' &&
		 grep -q '^flows iter/bpf_sk_storage_map attached' '$E2E_TMP/a.probes'"

fu=$(awk '$3=="10.77.2.2" && $4==5002 && $5==17' "$E2E_TMP/a.flows")
check "UDP sender tx_bytes == $USIZE ($(awk '{print $6}' <<<"$fu"))" [ "$(awk '{print $6}' <<<"$fu")" = "$USIZE" ]
check "UDP sender datagrams > 0" [ "$(awk '{print $8}' <<<"$fu")" -gt 0 ]

f3a=$(awk '$3=="10.77.2.2" && $4==5003 && $5==6' "$E2E_TMP/a.flows")
check "lossy transfer: retransmissions > 0 ($(awk '{print $10}' <<<"$f3a"))" [ "$(awk '{print $10}' <<<"$f3a")" -gt 0 ]
check "lossy transfer: tx_bytes still == $SIZE" [ "$(awk '{print $6}' <<<"$f3a")" = "$SIZE" ]
"$NPREPORT" dump "$E2E_TMP/b.npr" | $NPR drops > "$E2E_TMP/b.drops"
cat "$E2E_TMP/b.drops" >&2
check "receiver: drops with reason NETFILTER_DROP" awk '$1=="NETFILTER_DROP" && $2>0 {f=1} END {exit !f}' "$E2E_TMP/b.drops"
IPT=$(ip netns exec $NSB iptables -L INPUT -v -x -n | awk '/statistic/ {print $1}')
ND=$(awk '$1=="NETFILTER_DROP" {print $2}' "$E2E_TMP/b.drops")
check "NETFILTER_DROP count ($ND) == iptables rule count ($IPT)" [ "${ND:-x}" = "${IPT:-y}" ]

check "short connections: $NSHORT sender flows, $((NSHORT * 1000)) bytes" \
	[ "$(awk '$4==5008 && $5==6 {n++; b+=$6} END {print n+0, b+0}' "$E2E_TMP/a.flows")" = "$NSHORT $((NSHORT * 1000))" ]
check "short connections: $NSHORT receiver flows, $((NSHORT * 1000)) bytes" \
	[ "$(awk '$2==5008 && $5==6 {n++; b+=$7} END {print n+0, b+0}' "$E2E_TMP/b.flows")" = "$NSHORT $((NSHORT * 1000))" ]
check "churn: $NCHURN sender flows, $((NCHURN * 100)) bytes" \
	[ "$(awk '$4==5009 && $5==6 {n++; b+=$6} END {print n+0, b+0}' "$E2E_TMP/a.flows")" = "$NCHURN $((NCHURN * 100))" ]
check "churn: $NCHURN receiver flows, $((NCHURN * 100)) bytes" \
	[ "$(awk '$2==5009 && $5==6 {n++; b+=$7} END {print n+0, b+0}' "$E2E_TMP/b.flows")" = "$NCHURN $((NCHURN * 100))" ]
check "--netns: $NSB loopback flow absent from $NSA recording" bash -c "! grep -q ' 5004 ' '$E2E_TMP/a.flows'"
check "--netns: $NSB loopback flow present in $NSB recording" grep -q "127.0.0.1 5004 " "$E2E_TMP/b.flows"
"$NPREPORT" dump "$E2E_TMP/p.npr" | $NPR flows > "$E2E_TMP/p.flows"
check "--port 5003: only port-5003 flows recorded" bash -c "[ -s '$E2E_TMP/p.flows' ] && awk '\$2!=5003 && \$4!=5003 {exit 1}' '$E2E_TMP/p.flows'"
check "nothing lost (no LRU evictions)" [ "$("$NPREPORT" dump "$E2E_TMP/a.npr" | $NPR lost flows)" = "0" ]
if [ -n "$CG" ]; then
	"$NPREPORT" dump "$E2E_TMP/cg.npr" | $NPR flows > "$E2E_TMP/cg.flows"
	cat "$E2E_TMP/cg.flows" >&2
	check "--cgroup: exactly the one 5007 client flow from inside the cgroup" \
		[ "$(awk '$4==5007 && $6==200000' "$E2E_TMP/cg.flows" | wc -l)" -eq 1 ]
	check "--cgroup: nothing from outside it (server side, other transfers)" \
		[ "$(awk '$4!=5007' "$E2E_TMP/cg.flows" | wc -l)" -eq 0 ]
	rmdir "$CG" 2>/dev/null
fi
check "header lists attached probes" grep -q 'flows tp_btf/sock_send_length attached' "$E2E_TMP/a.probes"
# one program per shared tracepoint: every family on it joined the hub
# (netcpu joins the socket hooks and sched_switch only with --netcpu
# exact; txn sock_send_length only with --send-calls: checked above)
NHUB=$(grep -cE '^(flows|txn) tp_btf/sock_recv_length attached shared program [(]hub[)]$|^threads tp_btf/sched_switch attached shared program [(]hub[)]$' "$E2E_TMP/a.probes")
# without hardware counters threads reads the scheduler's figures with a
# task iterator and has no sched_switch program
if grep -qE '^threads iter/task attached' "$E2E_TMP/a.probes"; then
	check "threads: no sched_switch program without hardware counters" \
		grep -qE '^threads tp_btf/sched_switch skipped' "$E2E_TMP/a.probes"
	WANT=2
else
	WANT=3
fi
check "hub: flows and txn share sock_recv_length (threads sched_switch) ($NHUB of $WANT)" [ "$NHUB" = "$WANT" ]
e2e_finish
