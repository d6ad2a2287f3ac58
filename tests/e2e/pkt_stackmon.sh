#!/usr/bin/env bash
# perfmon host-stack components. Namespaces: pod (pk-p) -- host (pk-h, the
# recorder, veth pk-hv + external pk-he) -- remote node (pk-x). A ping-pong
# RPC (32 KB each way, 200 us apart) runs from the pod to the remote node.
#  1. --profile-baseline records the P99 of RTT/RNST1/CNST/RNST2;
#  2. --baseline --scale 10 at the same load: at most 1 % of calls raise a
#     kept alert (perfmon picks X = 3 on quiet servers; test machines run
#     other jobs: a CI run on a busy VM kept 11 RTT alerts in 10496 calls,
#     scheduler stalls of the RPC peers. The anomalies below are 30-100x
#     the baseline and hit nearly every call);
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
calls() { local x; x=$(awk -F= '$1=="calls"{print $2}' "$T/$1.rpc" 2>/dev/null); echo "${x:-0}"; }
# few NAME KIND: the kept alerts of KIND are at most 1 % of the run's calls.
few() { local k; k=$(v "kept_$2" "$1"); [ "$k" != missing ] && le "$((k * 100))" "$(calls "$1")"; }
v() { local x; x=$(awk -F= -v k="$1" '$1==k{print $2}' "$T/$2.txt" 2>/dev/null); echo "${x:-missing}"; }

run profile --profile-baseline "$T/base.npb"
check "profiling run ok" [ $? -eq 0 ]
check "baseline file written (mode 0600)" [ "$(stat -c %a "$T/base.npb" 2>/dev/null)" = 600 ]
"$PM" alerts "$T/base.npb" >"$T/base.txt"
check "baseline RTT P99 of inter-node flows > 0 ($(v inter_rtt_p99_ns base) ns)" gt "$(v inter_rtt_p99_ns base)" 0
check "baseline CNST P99 > 0 ($(v inter_cnst_p99_ns base) ns)" gt "$(v inter_cnst_p99_ns base)" 0
check "baseline RNST1 and RNST2 P99 > 0" gt "$(awk -v a="$(v inter_rnst1_p99_ns base)" -v b="$(v inter_rnst2_p99_ns base)" 'BEGIN{print (a>0 && b>0)}')" 0
check "STACK_EWMA rows written" gt "$(v ewma_rows profile)" 0

# The idle check needs an idle machine: an attempt counts only if the
# client's own p99 stays within 3x the profiling run's (a 1 ms stall of
# the RPC peers is a real slow call, and perfmon rightly reports it).
# Up to five attempts; a quiet attempt with kept alerts over 1 % of its
# calls fails. Finding none is a busy machine, not a defect of perfmon, so
# the idle checks are then skipped, said so on the summary line (the
# fresh-clone CI of 1714c0a found all three attempts at 873-954 us against
# the profile's 134 us, steal 2.0 %, and failed two checks on the noise).
p99() { awk -F= '$1=="p99_us"{print $2}' "$T/$1.rpc" 2>/dev/null; }
quiet=
for a in 1 2 3 4 5; do
	run idle --baseline "$T/base.npb" --scale 10 || break
	le "$(p99 idle)" "$(awk -v p="$(p99 profile)" 'BEGIN{print 3 * p}')" && { quiet=1; break; }
	echo "  (idle attempt $a: client p99 $(p99 idle) us > 3x profile's $(p99 profile) us: machine busy, again)" >&2
done
check "idle run ok" [ -s "$T/idle.txt" ]
if [ -n "$quiet" ]; then
	for c in rtt rnst1 cnst rnst2; do
		check "idle: $c alerts kept <= 1 % of calls ($(v kept_$c idle) of $(calls idle))" few idle $c
	done
else
	skip "idle: alerts kept <= 1 % of calls: no quiet attempt in 5 (client p99 over 3x the profile's each time)"
fi

ip netns exec pk-h tc qdisc add dev pk-he root tbf rate 40mbit burst 16kb latency 400ms
run extlimit --baseline "$T/base.npb" --scale 10
check "ext rate limit run ok" [ $? -eq 0 ]
ip netns exec pk-h tc qdisc del dev pk-he root
check "ext rate limit: RTT alerts kept on > half the calls ($(v kept_rtt extlimit) of $(calls extlimit))" gt "$(v kept_rtt extlimit)" "$(($(calls extlimit) / 2))"
check "ext rate limit: CNST alerts <= 1 % of calls ($(v kept_cnst extlimit))" few extlimit cnst

ip netns exec pk-h tc qdisc add dev pk-hv root tbf rate 40mbit burst 16kb latency 400ms
run podlimit --baseline "$T/base.npb" --scale 10
check "pod rate limit run ok" [ $? -eq 0 ]
ip netns exec pk-h tc qdisc del dev pk-hv root
check "pod-side rate limit: CNST alerts kept on > half the calls ($(v kept_cnst podlimit) of $(calls podlimit))" gt "$(v kept_cnst podlimit)" "$(($(calls podlimit) / 2))"
check "pod-side rate limit: RTT alerts <= 1 % of calls ($(v kept_rtt podlimit))" few podlimit rtt
e2e_finish
