#!/usr/bin/env bash
# nprec --flight-recorder on real traffic:
#  - SIGUSR1 dump covers the requested window (first/last INTERVAL around the
#    trigger time), holds every byte sent inside the window and none of the
#    traffic that is older than the window;
#  - recording goes on after a dump: `nprec --trigger PIDFILE` makes a second
#    dump with the later traffic;
#  - --trigger-on 'drops>N/s' fires on real drops (iptables DROP, counted
#    independently by iptables), once for a sustained condition, and says so
#    in the TRIGGER record; stopping writes a final dump with the END record.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init incident_flight
e2e_need_root
[ -x "$NPREC" ] || e2e_skip "nprec not built"
. "$(dirname "$0")/../lib/incident.sh"
[ -x "$SUM" ] || e2e_skip "tests/tools/in_npsum not built"
command -v socat >/dev/null || e2e_skip "socat missing"
command -v iptables >/dev/null || e2e_skip "iptables missing"

ns_add in-a && ns_add in-b || e2e_skip "cannot create namespaces"
veth_pair in-a in-fa 10.231.2.1/24 in-b in-fb 10.231.2.2/24
OLD=5321 NEW=5322 LATER=5323
for p in $OLD $NEW $LATER; do
	bg ip netns exec in-b socat -u TCP-LISTEN:$p,reuseaddr,fork OPEN:/dev/null
done
for p in $OLD $NEW $LATER; do ns_wait_listen in-b $p; done

send() {   # send PORT BYTES
	head -c "$2" /dev/urandom | ip netns exec in-a socat -u - TCP:10.231.2.2:$1
}
# A flight recorder writes nothing until a trigger: a first "warm-up" dump
# tells that the families are attached and intervals are being recorded.
warm_up() {   # warm_up PID DUMPFILE
	in_wait_ready "$1" && kill -USR1 "$1" && in_wait_dump "$2"
}
WIN=3000000000 IV=250000000

# ---- SIGUSR1 and nprec --trigger ----
D=$E2E_TMP/sig; mkdir -p "$D"
bg "$NPREC" -q -o "$D/fl.npr" -I 250ms --flight-recorder 3s
REC=$BG_PID
echo $REC > "$D/nprec.pid"
in_wait_ready $REC
sleep 1
check "nothing written before a trigger" test ! -e "$D/fl.npr" -a ! -e "$D/fl.dump-0001.npr"
check "warm-up dump (recorder running)" warm_up $REC "$D/fl.dump-0001.npr"
send $OLD 2000000           # falls out of the 3 s window before the trigger
sleep 4.5
send $NEW 3000000
ns_wait_drained in-b $NEW   # the receiver reads the tail after the sender closed
t_before=$(in_now)
kill -USR1 $REC
check "SIGUSR1 dump written" in_wait_dump "$D/fl.dump-0002.npr"
eval "$("$SUM" --port $NEW "$D/fl.dump-0002.npr")"
check "dump reads cleanly" test "$ok" = 1 -a "$chunks_bad" = 0 -a "$truncated" = 0 -a "$header_first" = 1
check "dump header says flight-dump #2 ($mode $dump_index)" test "$mode" = flight-dump -a "$dump_index" = 2
check "TRIGGER record says sigusr1 ($trig_why, $trig_source)" \
	test "$n_trigger" = 1 -a "$trig_why" = sigusr1 -a "$trig_source" = external
check "trigger time is after the signal was sent" [ "$trig_t" -ge "$t_before" ]
check "dump starts at or before trigger - 3 s (first t0 $first_t0, trigger $trig_t)" \
	[ "$first_t0" -le $((trig_t - WIN)) ]
check "dump ends at or after the trigger (last t1 $last_t1)" [ "$last_t1" -ge "$trig_t" ]
# the first and the last interval may reach beyond the window, and on a
# loaded machine an interval can run longer than -I
check "dump holds only the window: $(( (last_t1 - first_t0) / 1000000 )) ms <= 3 s + 4 intervals" \
	[ $((last_t1 - first_t0)) -le $((WIN + 4 * IV)) ]
check "no interval missing inside the dump ($n_interval intervals)" test "$seq_gaps" = 0 -a "$n_interval" -ge 4
check "traffic inside the window is in the dump: $port_rx of 3000000 bytes" [ "$port_rx" -eq 3000000 ]
check "its flows fall inside the dump window" \
	test "$port_first_t" -ge "$first_t0" -a "$port_last_t" -le "$last_t1" -a "$port_first_t" -gt 0
eval "$("$SUM" --port $OLD "$D/fl.dump-0002.npr")"
check "traffic older than the window is not in the dump ($port_rx bytes)" [ "$port_rx" -eq 0 ]
seq1=$first_seq

send $LATER 1000000
ns_wait_drained in-b $LATER
"$NPREC" --trigger "$D/nprec.pid" 2>"$D/trigger.err"
rc=$?
check "nprec --trigger PIDFILE exits 0 (rc=$rc)" [ $rc -eq 0 ]
check "second dump written, recording went on" in_wait_dump "$D/fl.dump-0003.npr"
eval "$("$SUM" --port $LATER "$D/fl.dump-0003.npr")"
check "second dump is valid and later ($first_seq > $seq1)" \
	test "$chunks_bad" = 0 -a "$dump_index" = 3 -a "$first_seq" -gt "$seq1"
check "second dump holds the later traffic: $port_rx of 1000000" [ "$port_rx" -eq 1000000 ]
kill -TERM $REC; wait $REC; rc=$?
check "flight recorder exits 0 on SIGTERM (rc=$rc)" [ $rc -eq 0 ]
eval "$("$SUM" "$D/fl.dump-0004.npr")"
check "stop writes a final dump with END ($trig_source, $end_reason)" \
	test "$chunks_bad" = 0 -a "$trig_source" = stop -a "$n_end" = 1 -a "$end_reason" = sigterm

# ---- --trigger-on 'drops>N/s' ----
D=$E2E_TMP/cond; mkdir -p "$D"
DPORT=5330
ip netns exec in-b iptables -A INPUT -p udp --dport $DPORT -j DROP
head -c 2000000 /dev/zero > "$D/payload"
bg "$NPREC" -q -o "$D/c.npr" -I 250ms --flight-recorder 2s --trigger-on 'drops>200/s' --netns in-b
REC=$BG_PID
check "warm-up dump (recorder running)" warm_up $REC "$D/c.dump-0001.npr"
sleep 1
check "no condition dump without drops" test ! -e "$D/c.dump-0002.npr"
# 2000 datagrams of 1000 bytes, all dropped by iptables in in-b
ip netns exec in-a socat -b 1000 -u OPEN:"$D/payload" UDP:10.231.2.2:$DPORT
check "condition dump written" in_wait_dump "$D/c.dump-0002.npr"
sleep 1
kill -TERM $REC; wait $REC
dropped=$(ip netns exec in-b iptables -L INPUT -v -x -n | awk -v p="dpt:$DPORT" '$0 ~ p {print $1}')
eval "$("$SUM" "$D/c.dump-0002.npr")"
check "condition dump is valid and names the condition ($trig_why)" \
	test "$chunks_bad" = 0 -a "$trig_expr" = 'drops>200/s' -a "$trig_source" = condition
check "condition dump ends with the interval that fired ($last_t1 = $trig_t)" [ "$last_t1" -eq "$trig_t" ]
check "condition dump holds drops that crossed the threshold ($drops, iptables $dropped)" \
	test "$drops" -ge 50 -a "$drops" -le $((dropped + 20))
eval "$("$SUM" "$D/c.dump-0003.npr")"
check "one dump per condition firing, the next is the stop dump ($trig_source)" \
	test "$trig_source" = stop -a ! -e "$D/c.dump-0004.npr"
check "stop dump holds every dropped packet: $drops vs iptables $dropped" \
	test "$drops" -ge "$dropped" -a "$drops" -le $((dropped + 20)) -a "$dropped" -eq 2000

# ---- --trigger-on 'retrans>N/s' ----
# 5 % of the segments to RPORT are dropped in in-b: the sender in in-a
# retransmits; the kernel's own counter (nstat TcpRetransSegs of in-a) is the
# independent count. FLOWS counts retransmit calls, one per (possibly
# multi-segment) skb, so it is at most the segment count.
D=$E2E_TMP/retrans; mkdir -p "$D"
RPORT=5324
bg ip netns exec in-b socat -u TCP-LISTEN:$RPORT,reuseaddr,fork OPEN:/dev/null
ns_wait_listen in-b $RPORT
ip netns exec in-b iptables -A INPUT -p tcp --dport $RPORT -m statistic --mode random --probability 0.05 -j DROP
bg "$NPREC" -q -o "$D/r.npr" -I 250ms --flight-recorder 5s --trigger-on 'retrans>20/s' --netns in-a
REC=$BG_PID
check "warm-up dump (recorder running)" warm_up $REC "$D/r.dump-0001.npr"
ip netns exec in-a nstat -n >/dev/null     # reset the in-a counters history
send $RPORT 20000000
check "retransmission condition dump written" in_wait_dump "$D/r.dump-0002.npr"
sleep 0.5
segs=$(ip netns exec in-a nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ {print $2}')
kill -TERM $REC; wait $REC
eval "$("$SUM" "$D/r.dump-0002.npr")"
check "retrans condition dump names the condition ($trig_why)" \
	test "$chunks_bad" = 0 -a "$trig_expr" = 'retrans>20/s' -a "$trig_source" = condition
check "retransmissions in the dump ($retrans) are real: 0 < dump <= kernel TcpRetransSegs ($segs)" \
	test "$retrans" -ge 1 -a "$retrans" -le "${segs:-0}"

e2e_finish
