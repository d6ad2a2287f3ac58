#!/usr/bin/env bash
# perfmon host-stack components. Namespaces: pod (pk-p) -- host (pk-h, the
# recorder, veth pk-hv + external pk-he) -- remote node (pk-x). A ping-pong
# RPC (32 KB each way, 200 us apart) runs from the pod to the remote node.
#  1. --profile-baseline records the P99 of RTT/RNST1/CNST/RNST2;
#  2. --baseline --scale 10 at the same load: no alert survives (perfmon
#     picks X = 3 on quiet servers; test machines run other jobs, and the
#     anomalies below are 30-100x the baseline);
#  3. TBF on the host's external link (requests queue after the ext TC hook,
#     inside the RTT but outside RNST/CNST): RTT alerts, no CNST alerts;
#  4. TBF on the pod's veth toward the pod (responses queue after the veth
#     TC hook, inside CNST only): CNST alerts, no RTT alerts.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init pkt_stackmon
e2e_need_root
PM=$NP_BUILD/tools/pktmatch
RPC=$NP_BUILD/tools/pkrpc
[ -x "$NPREC" ] && [ -x "$PM" ] && [ -x "$RPC" ] || e2e_skip "nprec, tools/pktmatch or tools/pkrpc not built"

ns_add pk-p && ns_add pk-h && ns_add pk-x || e2e_skip "cannot create namespaces"
veth_pair pk-p pk-p0 10.77.3.2/24 pk-h pk-hv 10.77.3.1/24
veth_pair pk-h pk-he 10.77.4.1/24 pk-x pk-x0 10.77.4.2/24
ip -n pk-p route add default via 10.77.3.1
ip -n pk-x route add default via 10.77.4.1
ip netns exec pk-h sysctl -qw net.ipv4.ip_forward=1
T=$E2E_TMP
bg ip netns exec pk-x "$RPC" server 7100 32768
ns_wait_listen pk-x 7100

# run NAME NPREC-OPTIONS...: 4 s of RPCs recorded on the host.
run() {
	local name=$1; shift
	bg "$NPREC" -o "$T/$name.npr" -d 30s -q --no-flows --no-txn --no-netcpu --no-threads \
		--netns pk-h -i pk-hv -i pk-he "$@"
	local pid=$BG_PID
	wait_rec "$T/$name.npr" $pid || echo "  (nprec did not start)" >&2
	sleep 0.5
	ip netns exec pk-p "$RPC" client 10.77.4.2 7100 32768 32768 4 200 >"$T/$name.rpc" 2>&1
	sleep 0.5
	kill -INT "$pid"; wait "$pid"
	local rc=$?
	"$PM" alerts "$T/$name.npr" >"$T/$name.txt"
	echo "== $name: nprec rc $rc; rpc $(tr '\n' ' ' <"$T/$name.rpc")" >&2
	grep -E '^(kept|raised|filtered|ewma|inter_)' "$T/$name.txt" | tr '\n' ' ' >&2; echo >&2
	return $rc
}
v() { local x; x=$(awk -F= -v k="$1" '$1==k{print $2}' "$T/$2.txt" 2>/dev/null); echo "${x:-missing}"; }

run profile --profile-baseline "$T/base.npb"
check "profiling run ok" [ $? -eq 0 ]
check "baseline file written (mode 0600)" [ "$(stat -c %a "$T/base.npb" 2>/dev/null)" = 600 ]
"$PM" alerts "$T/base.npb" >"$T/base.txt"
check "baseline RTT P99 of inter-node flows > 0 ($(v inter_rtt_p99_ns base) ns)" gt "$(v inter_rtt_p99_ns base)" 0
check "baseline CNST P99 > 0 ($(v inter_cnst_p99_ns base) ns)" gt "$(v inter_cnst_p99_ns base)" 0
check "baseline RNST1 and RNST2 P99 > 0" gt "$(awk -v a="$(v inter_rnst1_p99_ns base)" -v b="$(v inter_rnst2_p99_ns base)" 'BEGIN{print (a>0 && b>0)}')" 0
check "STACK_EWMA rows written" gt "$(v ewma_rows profile)" 0

run idle --baseline "$T/base.npb" --scale 10
check "idle run ok" [ $? -eq 0 ]
for c in rtt rnst1 cnst rnst2; do
	check "idle: no $c alert kept ($(v kept_$c idle))" [ "$(v kept_$c idle)" = 0 ]
done

ip netns exec pk-h tc qdisc add dev pk-he root tbf rate 40mbit burst 16kb latency 400ms
run extlimit --baseline "$T/base.npb" --scale 10
check "ext rate limit run ok" [ $? -eq 0 ]
ip netns exec pk-h tc qdisc del dev pk-he root
check "ext rate limit: RTT alerts kept ($(v kept_rtt extlimit))" gt "$(v kept_rtt extlimit)" 10
check "ext rate limit: no CNST alert ($(v kept_cnst extlimit))" [ "$(v kept_cnst extlimit)" = 0 ]

ip netns exec pk-h tc qdisc add dev pk-hv root tbf rate 40mbit burst 16kb latency 400ms
run podlimit --baseline "$T/base.npb" --scale 10
check "pod rate limit run ok" [ $? -eq 0 ]
ip netns exec pk-h tc qdisc del dev pk-hv root
check "pod-side rate limit: CNST alerts kept ($(v kept_cnst podlimit))" gt "$(v kept_cnst podlimit)" 10
check "pod-side rate limit: no RTT alert ($(v kept_rtt podlimit))" [ "$(v kept_rtt podlimit)" = 0 ]
e2e_finish
