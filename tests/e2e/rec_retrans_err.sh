#!/usr/bin/env bash
# flows' retransmissions against the kernel's own count, also when some
# retransmission attempts fail. Newer kernels (this VM's 6.18) give
# tcp:tcp_retransmit_skb an err argument and fire it for attempts that sent
# nothing too; flows counts those as nothing, and the others by their
# segments (tcp_skb_pcount), as TcpRetransSegs does. Counted per event
# instead, flows had 52 where TcpRetransSegs had 53 (and 40/41) in phase 2:
# a retransmission can carry two segments even with GSO off.
# Namespace rre-a sends to rre-b twice, segmentation offloads off on the
# sender (one segment per retransmission, as TcpRetransSegs counts them):
#  1. 20 KB to port 5411 through a tbf qdisc of 16 kbit/s on the sender's
#     veth: the retransmission timer fires while the original segment still
#     waits in the qdisc, and the attempt fails with -EBUSY (nstat
#     TcpExtTCPSpuriousRtxHostQueues counts these, with the loss probes that
#     find the same). Before err was read, flows counted 3 where
#     TcpRetransSegs was 2 in each of 3 runs of this phase.
#  2. 2 MB to port 5412 with 3 % of the segments dropped by an iptables
#     statistic rule in rre-b: real retransmissions.
# Ground truth: TcpRetransSegs of rre-a (nstat) over the run, read after the
# recorders stopped. rre-a only connects (no SYN-ACK retransmissions, which
# TcpRetransSegs counts and tcp_retransmit_skb does not see). Checked for the
# tp_btf programs and for the raw_tp fallback (err is read by position):
# the sum of the flows' retrans equals TcpRetransSegs, less at most the
# recorder's program runs the kernel skipped (recursion_misses of its
# retransmit program: a run on a CPU where it is already running is not
# made, and the flow table cannot count what its program did not see).
# Needs root (namespaces, eBPF), tc with tbf, iptables statistic match.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init rec_retrans_err
e2e_need_root
[ -x "$NPREC" ] && [ -x "$NPREPORT" ] || e2e_skip "build nprec and npreport first"
for c in socat iptables nstat ethtool tc bpftool python3; do command -v $c > /dev/null || e2e_skip "$c not installed"; done
cd "$E2E_TMP" || exit 1
NPR="python3 $E2E_ROOT/tests/tools/rc_npr.py"
ns_add rre-a && ns_add rre-b || e2e_skip "cannot create namespaces"
veth_pair rre-a rrea0 10.87.1.1/24 rre-b rreb0 10.87.1.2/24
ip netns exec rre-a ethtool -K rrea0 tso off gso off > /dev/null 2>&1
ip netns exec rre-a tc qdisc add dev rrea0 root tbf rate 16kbit burst 3000 limit 200000 \
	|| e2e_skip "tbf qdisc unavailable"
ip netns exec rre-b iptables -A INPUT -p tcp --dport 5412 -m statistic --mode random --probability 0.03 -j DROP \
	|| e2e_skip "iptables statistic match unavailable"
head -c 20000 /dev/urandom > slow.bin
head -c $((2 * 1048576)) /dev/urandom > lossy.bin
mib() { ip netns exec rre-a nstat -az "$1" | awk -v k="$1" '$1==k {print $2}'; }
send() {   # PORT FILE
	bg ip netns exec rre-b socat -u TCP-LISTEN:$1,reuseaddr OPEN:/dev/null
	ns_wait_listen rre-b $1
	ip netns exec rre-a socat -u OPEN:$2 TCP:10.87.1.2:$1
	wait $BG_PID 2> /dev/null
}

bg "$NPREC" -q --netns rre-a --no-txn --no-netcpu --no-threads -o b.npr; PB=$BG_PID
NPREC_TEST_FORCE_RAW_TP=1 bg "$NPREC" -q --netns rre-a --no-txn --no-netcpu --no-threads -o r.npr; PR=$BG_PID
wait_rec b.npr $PB && wait_rec r.npr $PR || echo "  (nprec did not start)" >&2
R0=$(mib TcpRetransSegs); H0=$(mib TcpExtTCPSpuriousRtxHostQueues); F0=$(mib TcpExtTCPRetransFail)
send 5411 slow.bin
ip netns exec rre-a tc qdisc del dev rrea0 root
send 5412 lossy.bin
sleep 1.2
MB=$(prog_misses $PB flows_retrans_btf); MR=$(prog_misses $PR flows_retrans_raw)
kill -INT $PB $PR; wait $PB; RB=$?; wait $PR; RR=$?
R1=$(mib TcpRetransSegs); H1=$(mib TcpExtTCPSpuriousRtxHostQueues); F1=$(mib TcpExtTCPRetransFail)
NSTAT=$((R1 - R0)); HOSTQ=$((H1 - H0))
echo "rre-a: TcpRetransSegs $NSTAT, TCPSpuriousRtxHostQueues $HOSTQ, TCPRetransFail $((F1 - F0)); skipped runs: btf $MB raw $MR" >&2
check "nprec exit 0 (tp_btf, raw_tp)" test "$RB" -eq 0 -a "$RR" -eq 0
check "ground truth: attempts found the segment still queued ($HOSTQ)" test "$HOSTQ" -gt 0
check "ground truth: the drops caused retransmissions ($NSTAT)" test "$NSTAT" -ge 10
for v in b r; do
	"$NPREPORT" dump $v.npr | $NPR flows > $v.flows
	cat $v.flows >&2
	ALL=$(awk '{s += $10} END {print s + 0}' $v.flows)
	M=$MB; [ $v = r ] && M=$MR
	check "$v.npr: flows' retrans ($ALL) = TcpRetransSegs ($NSTAT), less at most $M skipped runs" \
		test "$ALL" -le "$NSTAT" -a "$ALL" -ge $((NSTAT - M))
	check "$v.npr: the lossy flow's bytes ($(awk '$4==5412 {print $6}' $v.flows))" \
		test "$(awk '$4==5412 {print $6}' $v.flows)" = $((2 * 1048576))
done
e2e_finish
