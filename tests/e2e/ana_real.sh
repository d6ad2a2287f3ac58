#!/usr/bin/env bash
# npanalyze on real recordings: two namespaces an-a / an-b joined by a veth
# pair, one nprec per namespace with packet paths and the clock-sync
# exchange; the recorder in an-b shifts every timestamp by +3 ms
# (--test-clock-shift). A TCP transfer a -> b, then npanalyze merges both:
# the +3 ms shift is recovered within 20 us, the true offset and drift (0:
# both namespaces share one clock) lie inside the stated bounds, the clock
# pair is accurate,
# data packets are matched across the hosts and their wire segment on veth
# lies between 0 and 1 ms; npreport renders the analysis.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ana_real
e2e_need_root
command -v iperf3 >/dev/null || e2e_skip "iperf3 missing"
[ -x "$NPREC" ] && [ -x "$NPANALYZE" ] || e2e_skip "nprec or npanalyze not built"

ns_add an-a && ns_add an-b || e2e_skip "cannot create namespaces"
veth_pair an-a an-a0 10.78.1.1/24 an-b an-b0 10.78.1.2/24 || e2e_skip "cannot create veth"

T=$E2E_TMP
bg ip netns exec an-b iperf3 -s -1 -p 5301
NPOPT="-d 30s -q --packets --no-flows --no-txn --no-netcpu --no-threads"
bg "$NPREC" -o "$T/b.npr" $NPOPT --netns an-b -i an-b0 --port 5301 \
	--sync-listen 7778 --test-clock-shift 3ms
BPID=$BG_PID
bg "$NPREC" -o "$T/a.npr" $NPOPT --netns an-a -i an-a0 --port 5301 --sync-peer 10.78.1.2:7778
APID=$BG_PID
wait_rec "$T/a.npr" $APID && wait_rec "$T/b.npr" $BPID || echo "  (nprec did not start)" >&2
sleep 1
ip netns exec an-a iperf3 -c 10.78.1.2 -p 5301 -n 20M -l 16K >"$T/iperf.txt" 2>&1
check "iperf3 transfer ran" [ $? -eq 0 ]
sleep 2
kill -INT "$APID" "$BPID"; wait "$APID"; arc=$?; wait "$BPID"; brc=$?
check "nprec a exited 0 ($arc)" [ "$arc" -eq 0 ]
check "nprec b exited 0 ($brc)" [ "$brc" -eq 0 ]

"$NPANALYZE" -o "$T/ab.npa" --alias "$T/a.npr=a" --alias "$T/b.npr=b" --ref a \
	"$T/a.npr" "$T/b.npr" >"$T/sum.txt" 2>"$T/err.txt"
rc=$?
cat "$T/sum.txt" >&2
check "npanalyze wrote the analysis (exit $rc)" [ "$rc" -le 1 -a -s "$T/ab.npa" ]
rm -rf "$T/csv"
"$NPREPORT" "$T/ab.npa" --format csv -o "$T/csv" >/dev/null 2>&1
q=$(csvcol "$T/csv/clock.csv" host b quality)
off=$(csvcol "$T/csv/clock.csv" host b offset_ns)
err=$(csvcol "$T/csv/clock.csv" host b offset_err_ns)
check "clock of b is accurate ($q)" [ "$q" = accurate ]
check "+3 ms shift recovered within 20 us ($off ns, bound $err ns)" \
	lt "$(awk -v o="${off:-0}" 'BEGIN{d=o-3000000; print d<0?-d:d}')" 20000
# one machine, one clock: the true drift is 0 and the true offset exactly
# 3 ms; both must lie inside the bounds the analysis states
dlo=$(csvcol "$T/csv/clock_pairs.csv" host_a a drift_lo_ppm)
dhi=$(csvcol "$T/csv/clock_pairs.csv" host_a a drift_hi_ppm)
check "true drift 0 inside the stated drift bounds [$dlo, $dhi] ppm" \
	sh -c "[ -n '$dlo' ] && awk -v l='$dlo' -v h='$dhi' 'BEGIN{exit !(l<=0 && h>=0)}'"
check "true offset inside the stated bound ($off +- $err ns)" \
	awk -v o="${off:-0}" -v e="${err:-0}" 'BEGIN{d=o-3000000; if(d<0)d=-d; exit !(d<=e)}'
drift=$(csvcol "$T/csv/clock.csv" host b drift_ppm)
check "drift estimate small on a 3 s recording ($drift ppm)" \
	lt "$(awk -v d="${drift:-99}" 'BEGIN{print d<0?-d:d}')" 10
nsync=$(csvcol "$T/csv/clock_pairs.csv" host_a a sync_count)
check "sync exchanges paired across the recordings ($nsync)" ge "${nsync:-0}" 50
# data flow a -> b: the decomp row of the flow towards port 5301
wire50=$(awk -F, 'NR==1{for(i=1;i<=NF;i++){if($i=="flow")f=i;if($i=="segment")s=i;if($i=="p50_ns")p=i;if($i=="count")c=i};next}
	$f ~ />10\.78\.1\.2:5301$/ && $s=="wire" {print $p; exit}' "$T/csv/decomp.csv")
wiren=$(awk -F, 'NR==1{for(i=1;i<=NF;i++){if($i=="flow")f=i;if($i=="segment")s=i;if($i=="count")c=i};next}
	$f ~ />10\.78\.1\.2:5301$/ && $s=="wire" {print $c; exit}' "$T/csv/decomp.csv")
check "data packets matched across hosts (${wiren:-0})" gt "${wiren:-0}" 100
check "wire segment on veth between 0 and 1 ms (p50 ${wire50:-none} ns)" \
	sh -c "[ -n '$wire50' ] && awk -v w='$wire50' 'BEGIN{exit !(w>=0 && w<1000000)}'"
check "npreport renders it" sh -c "'$NPREPORT' '$T/ab.npa' | grep -q 'Latency decomposition'"
e2e_finish
