#!/usr/bin/env bash
# --max-cpu PCT: nprec's own CPU is recorded in every INTERVAL, and the
# packet sampling divisor goes up while the recorder is over budget; every
# change of rate is in the recording (INTERVAL sample_div / sample_div_prev)
# and agrees with the CPU recorded next to it. A budget that is never
# reached changes nothing.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init incident_maxcpu
e2e_need_root
[ -x "$NPREC" ] || e2e_skip "nprec not built"
. "$(dirname "$0")/../lib/incident.sh"
[ -x "$SUM" ] || e2e_skip "tests/tools/in_npsum not built"
command -v iperf3 >/dev/null || e2e_skip "iperf3 missing"

ns_add in-a && ns_add in-b || e2e_skip "cannot create namespaces"
veth_pair in-a in-ma 10.231.5.1/24 in-b in-mb 10.231.5.2/24
IPORT=5361
bg ip netns exec in-b iperf3 -s -p $IPORT >/dev/null
ns_wait_listen in-b $IPORT

run() {   # run FILE MAXCPU: 3 s of busy recording
	bg "$NPREC" -q -o "$1" -I 250ms --packets --max-cpu "$2"
	local rec=$BG_PID
	in_wait_intervals "$1" 1 $rec || echo "  (nprec did not start recording)" >&2
	ip netns exec in-a iperf3 -c 10.231.5.2 -p $IPORT -t 3 >/dev/null
	kill -TERM $rec; wait $rec
}

D=$E2E_TMP
run "$D/low.npr" 0.1
eval "$("$SUM" --max-cpu 0.1 "$D/low.npr")"
echo "  low budget: $n_interval intervals, $cpu_over over budget, divisor up to $div_max, $div_changes changes" >&2
check "self cost recorded in every interval, file valid" test "$chunks_bad" = 0 -a "$n_interval" -ge 4
check "over budget the sampling divisor rises (max $div_max)" test "$cpu_over" -ge 1 -a "$div_max" -ge 2
check "every change of rate is recorded ($div_changes intervals changed, controller counted $div_changes_total)" \
	test "$div_changes" -ge 1 -a "$div_changes" -eq "$div_changes_total"
check "each recorded change agrees with the recorded CPU ($div_disagree disagree)" [ "$div_disagree" -eq 0 ]

run "$D/high.npr" 400
eval "$("$SUM" --max-cpu 400 "$D/high.npr")"
check "a budget never reached changes nothing (divisor $div_max, $div_changes changes)" \
	test "$chunks_bad" = 0 -a "$cpu_over" = 0 -a "$div_max" = 1 -a "$div_changes" = 0

e2e_finish
