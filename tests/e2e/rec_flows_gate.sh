#!/usr/bin/env bash
# The hub's TCP gate (bpf/hub.h, issue 24). At the defaults flows reads a
# TCP connection's bytes from its socket, so its programs on
# sock_send_length / sock_recv_length have nothing to do for TCP sends, and
# for TCP receives only while some flow has no owner (and for 1 receive in
# 16, its srtt/owner samples): the hub's head then skips flows' program
# instead of entering it. UDP calls enter it as before (their bytes are
# counted per call). Ground truth: the hub's heads run for every call,
# and their run counts are the kernel's (kernel.bpf_stats_enabled, fdinfo
# run_cnt); flows' programs, entered by tail calls (which the kernel does
# not count), count their own runs under NPREC_TEST_COUNT_ENTRIES=1:
#  1. 16 MiB over TCP gt-a -> gt-b with socat (~2 000 sends and as many
#     TCP receives; the receiving socat also makes ~30 000 receives on a
#     unix socket that fail with EAGAIN, which the gate skips too): flows'
#     receive program runs for at most a quarter of the receives and for at
#     least once (its samples: 1 in 256 of the TCP ones, ~8, expected), its
#     send program for at most a tenth of the sends (none of the TCP ones;
#     what else the machine sends over UDP meanwhile enters it).
#  2. 400 UDP datagrams: flows' send program runs for each (>= 400).
#  3. A server that only sends (100 KB, then 1.5 s before it closes): its
#     passive open, claimed without an owner, is named by its first send
#     (before, no receive ever named it: no owner, and the gate stayed open
#     for every TCP receive of the machine until it closed): the gate's want
#     is 0 while it waits, both ends have their owner.
#  4. The same TCP transfer with --send-calls (no gate): flows' receive
#     program runs for every receive.
# The recorded bytes of phases 1 and 2 are checked as well (the gate must not
# lose what the sockets say). Needs root, socat, python3, bpftool.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init rec_flows_gate
e2e_need_root
[ -x "$NPREC" ] && [ -x "$NPREPORT" ] || e2e_skip "build nprec and npreport first"
for c in socat python3 bpftool; do command -v $c > /dev/null || e2e_skip "$c not installed"; done
cd "$E2E_TMP" || exit 1
NPR="python3 $E2E_ROOT/tests/tools/rc_npr.py"
ns_add gt-a && ns_add gt-b || e2e_skip "cannot create namespaces"
veth_pair gt-a gta0 10.87.9.1/24 gt-b gtb0 10.87.9.2/24
sysctl_set kernel.bpf_stats_enabled 1 || e2e_skip "no kernel.bpf_stats_enabled"
SIZE=$((16 * 1048576))
head -c $SIZE /dev/urandom > tcp.bin

tcp_transfer() {   # PORT
	bg ip netns exec gt-b socat -u TCP-LISTEN:$1,reuseaddr OPEN:/dev/null
	ns_wait_listen gt-b $1
	ip netns exec gt-a socat -u OPEN:tcp.bin TCP:10.87.9.2:$1
	wait $BG_PID 2> /dev/null
}
# map_id PID NAME: the id of BPF map NAME held by recorder PID (or its child)
map_id() {
	local fd id
	for fd in /proc/"$1"/fd/* $(pgrep -P "$1" | sed 's|.*|/proc/&/fd/*|'); do
		[ "$(readlink "$fd")" = "anon_inode:bpf-map" ] || continue
		id=$(awk '$1=="map_id:" {print $2}' "${fd%/fd/*}/fdinfo/${fd##*/}")
		bpftool map show id "$id" 2>/dev/null | grep -q " name $2 " && { echo "$id"; return; }
	done
}
# flows_in PID KEY: flows' program entries (flow_events[KEY], all CPUs) of
# recorder PID
flows_in() {
	local id
	id=$(map_id "$1" flow_events)
	[ -n "$id" ] || { echo 0; return; }
	bpftool -j map lookup id "$id" key $2 0 0 0 | python3 -c '
import json, sys
print(sum(v["value"] if isinstance(v["value"], int) else int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little")
          for v in json.load(sys.stdin)["values"]))'
}
# gate_want PID: the receive gate's want (flows without an owner) of recorder PID
gate_want() {
	local id
	id=$(map_id "$1" hub_gates)
	[ -n "$id" ] || { echo "?"; return; }
	bpftool -j map lookup id "$id" key 2 0 0 0 | python3 -c '
import json, sys
v = json.load(sys.stdin)
print(v["formatted"]["value"]["want"] if "formatted" in v else int.from_bytes(bytes(int(b, 16) for b in v["value"][:8]), "little"))'
}
# runs PID: "hub_send flows_send hub_recv flows_recv" so far
runs() { echo "$(prog_runs $1 hub_send) $(flows_in $1 4) $(prog_runs $1 hub_recv) $(flows_in $1 5)"; }
# phase PID WHAT CMD...: runs CMD, sets hs fs hr fr to what recorder PID's
# programs ran meanwhile (runs)
phase() {
	local pid=$1 what=$2 r0 r1
	shift 2
	r0=$(runs $pid)
	"$@"
	r1=$(runs $pid)
	read -r hs fs hr fr <<<"$(paste -d' ' <(tr ' ' '\n' <<<"$r0") <(tr ' ' '\n' <<<"$r1") |
		awk '{printf "%d ", $2 - $1}')"
	echo "  $what: hub_send $hs flows_send $fs hub_recv $hr flows_recv $fr" >&2
}
# rec NAME [OPTIONS]: a recorder at the root, counting flows' entries (PID in REC)
rec() {
	local out=$1
	shift
	NPREC_TEST_COUNT_ENTRIES=1 bg "$NPREC" -q "$@" -o "$out"; REC=$BG_PID
	wait_rec "$out" $REC || echo "  (nprec did not start)" >&2
	sleep 0.5
}
udp_send() {
	ip netns exec gt-a python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(("10.87.9.2", 5502))
for _ in range(400): s.send(b"u" * 500)'
}

rec d.npr; PD=$REC
phase $PD "TCP phase (defaults)" tcp_transfer 5501
check "TCP phase: the hub's heads ran for the transfer's calls (sends $hs, receives $hr >= 1000)" \
	bash -c "[ $hs -ge 1000 ] && [ $hr -ge 1000 ]"
check "TCP phase: flows' receive program entered for <= 1/4 of the receives ($fr of $hr)" [ $((fr * 4)) -le "$hr" ]
check "TCP phase: ... and for its 1-in-256 samples (>= 1)" [ "$fr" -ge 1 ]
check "TCP phase: flows' send program entered for <= 1/10 of the sends ($fs of $hs)" [ $((fs * 10)) -le "$hs" ]

bg ip netns exec gt-b socat -u UDP-RECV:5502 OPEN:/dev/null
ns_wait_listen gt-b 5502 udp
phase $PD "UDP phase (defaults)" udp_send
check "UDP phase: flows' send program entered for each of 400 datagrams ($fs)" [ "$fs" -ge 400 ]

cat > sendonly.py <<'PY'
import socket, sys, time
if sys.argv[1] == "server":
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("10.87.9.2", 5504)); ls.listen(8)
    s, _ = ls.accept()
    s.sendall(b"d" * 100000)
    time.sleep(1.5)
    s.close()
else:
    c = socket.create_connection(("10.87.9.2", 5504))
    while c.recv(65536): pass
PY
bg ip netns exec gt-b python3 sendonly.py server; PSO=$BG_PID
ns_wait_listen gt-b 5504
bg ip netns exec gt-a python3 sendonly.py client; PCO=$BG_PID
sleep 0.8
want=$(gate_want $PD)
wait $PCO; wait $PSO
check "a server that only sends: named by its send, no flow waits for an owner (want $want)" [ "$want" = 0 ]

sleep 1.2
kill -INT $PD; wait $PD
check "nprec exit 0" [ $? -eq 0 ]
"$NPREPORT" dump d.npr | $NPR flows > d.flows
sum() { awk -v p=$1 -v c=$2 -v side=$3 '$5==6 && ((side=="c" && $4==p) || (side=="s" && $2==p)) {n += $c} END {print n + 0}' d.flows; }
check "TCP phase recorded: client sent $SIZE ($(sum 5501 6 c)), server read $SIZE ($(sum 5501 7 s))" \
	bash -c "[ $(sum 5501 6 c) = $SIZE ] && [ $(sum 5501 7 s) = $SIZE ]"
check "UDP phase recorded: 200000 bytes sent ($(awk '$4==5502 && $5==17 {n += $6} END {print n + 0}' d.flows))" \
	[ "$(awk '$4==5502 && $5==17 {n += $6} END {print n + 0}' d.flows)" = 200000 ]
"$NPREPORT" dump d.npr | $NPR probes > d.probes
so=$("$NPREPORT" dump d.npr | $NPR flowsum 5504)
check "a server that only sends: 2 flows, 100000 bytes each way, both owned by python3 ($so)" \
	[ "$so" = "2 100000 100000 python3:2" ]
check "header says the gate is on" grep -q '^flows hub TCP gate attached TCP sends skip flows' d.probes

rec s.npr --send-calls; PS=$REC
phase $PS "TCP phase (--send-calls)" tcp_transfer 5503
check "--send-calls: no gate, flows' receive program ran for every receive ($fr of $hr)" \
	bash -c "[ $hr -ge 1000 ] && [ $((fr * 100)) -ge $((hr * 95)) ]"
kill -INT $PS; wait $PS

e2e_finish
