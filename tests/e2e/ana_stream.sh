#!/bin/bash
# npanalyze --window (the streamed analysis, issue 23) against the in-memory
# analysis of the same recordings, which is the ground truth here:
#  - genfix, 6 hosts (3 pairs, clocks chained by sync exchanges, one pair
#    with retransmissions and losses): the stream's packets, copies, flows,
#    sent, received, lost and retransmitted packets equal the in-memory
#    loss / pkt_flows tables' sums, the loss, loss_hops, pkt_flows and
#    (sorted) lost_packets tables are the same; every decomp row, of flow
#    "all" and of each top flow, has the same count and host and its
#    p50 ... max within the sketch's stated error (0.79 % each, so 1.6 %
#    apart), its mean, share_mean and share_p99 within 1e-6; the jitter rows have the
#    same packets, min, max and RFC 3550 figures (within 1e-6) and their
#    |jitter| p50/p99 within 1.6 %; every per-interval series point is the
#    same (jitter p99 within 1.6 %); the windows' packets add up to the run's; the
#    clock offsets of the chain equal the in-memory ones within 1 us; the
#    same with --ref naming another host than the first input;
#    --threads 1 and 2 write the same bytes;
#  - --window auto: in memory when it fits --mem (the same bytes as without
#    it), streamed when it does not, with the predicted and the actual peak
#    under --mem; a --mem no window fits is refused (exit 2), and --window
#    with --from is a usage error; a horizon smaller than a host's
#    wall-clock error is warned about;
#  - two chunks of one input damaged: the streamed run says what the
#    in-memory one says, and once, aggregated, that several windows read
#    damage (not once per window);
#  - with root and iperf3: a real two-namespace recording (veth, a TCP
#    transfer, clock sync) analysed both ways, the same comparisons.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ana_stream
T=$E2E_TMP
GENFIX=$NP_BUILD/tools/genfix
[ -x "$NPANALYZE" ] && [ -x "$GENFIX" ] && [ -x "$NPREPORT" ] || e2e_skip "npanalyze, npreport or tools/genfix not built"

sumcol() {   # sumcol FILE COL: sum of column COL over the rows
	awk -F, -v c="$2" 'NR==1{for(i=1;i<=NF;i++)if($i==c)ci=i;next}{s+=$ci}END{printf "%.0f\n", s}' "$1"
}
# rowcmp MEM.csv STREAM.csv "EXACT" "REL" "SKETCH": line by line, the
# EXACT columns equal, REL within 1e-6 relative, SKETCH within 1.6 % (+1 ns);
# prints "ok lines_m lines_s bad first_bad"
rowcmp() {
	awk -F, -v ex="$3" -v re="$4" -v sk="$5" 'NR==FNR{a[FNR]=$0;n=FNR;next}
		{m=FNR; split(a[FNR],x,","); bad=0
		 ne=split(ex,E," "); for(i=1;i<=ne;i++) if(x[E[i]]!=$E[i]) bad=1
		 nr=split(re,R," "); for(i=1;i<=nr;i++){d=x[R[i]]-$R[i]; if(d<0)d=-d; v=x[R[i]]; if(v<0)v=-v; if(d>1e-6*v+1e-9) bad=1}
		 ns=split(sk,S," "); for(i=1;i<=ns;i++){d=x[S[i]]-$S[i]; if(d<0)d=-d; if(d>0.016*x[S[i]]+1) bad=1}
		 if(bad){nb++; if(!fb)fb=FNR}}
		END{print (nb==0 && m==n && n>0) ? 1 : 0, n, m, nb+0, fb+0}' "$1" "$2"
}
# same_run LABEL MEM.npa STREAM.npa: the streamed counts and quantiles
# against the in-memory analysis
same_run() {
	local l=$1 m=$T/$1-m s=$T/$1-s seg
	rm -rf "$m" "$s"
	"$NPREPORT" "$2" -f csv -o "$m" >/dev/null 2>&1
	"$NPREPORT" "$3" -f csv -o "$s" >/dev/null 2>&1
	local st=$s/stream.csv
	check "$l: stream table written" test -s "$st"
	for c in sent received lost retrans; do
		local a b
		a=$(sumcol "$m/loss.csv" $c); b=$(csvcol "$st" window all $c)
		check "$l: $c equal ($a in memory, $b streamed)" test "$a" = "$b"
	done
	check "$l: loss table equal flow by flow ($(wc -l <"$m/loss.csv") lines)" cmp -s "$m/loss.csv" "$s/loss.csv"
	local r
	r=$(rowcmp "$m/loss_hops.csv" "$s/loss_hops.csv" "1 2 3 4 5 6 7 8" "9" "")
	check "$l: loss_hops equal, hop_mean within 1e-6 (ok lines_m lines_s bad first: $r)" test "${r%% *}" = 1
	check "$l: lost_packets the same rows ($(wc -l <"$m/lost_packets.csv") lines)" \
		cmp -s <(sort "$m/lost_packets.csv") <(sort "$s/lost_packets.csv")
	# decomp: flow segment count mean p50 p90 p99 p999 max share_mean share_p99 host
	r=$(rowcmp "$m/decomp.csv" "$s/decomp.csv" "1 2 3 12" "4 10 11" "5 6 7 8 9")
	check "$l: decomp rows of all and of each top flow: count, host equal, quantiles within 1.6 %, mean and shares within 1e-6 (ok lines_m lines_s bad first: $r)" \
		test "${r%% *}" = 1
	local nfl
	nfl=$(awk -F, 'NR>1 && $1!="all"' "$s/decomp.csv" | wc -l)
	check "$l: per-flow decomp rows streamed ($nfl)" gt "$nfl" 0
	# jitter: flow packets min max range p50 p99 rfc3550 rfc3550_mean
	r=$(rowcmp "$m/jitter.csv" "$s/jitter.csv" "1 2 3 4 5" "8 9" "6 7")
	check "$l: jitter rows: packets, min, max, RFC 3550 equal, |jitter| p50/p99 within 1.6 % (ok lines_m lines_s bad first: $r)" \
		test "${r%% *}" = 1
	check "$l: series equal but jitter_p99_abs ($(wc -l <"$m/series.csv") lines)" \
		cmp -s <(grep -v ',jitter_p99_abs,' "$m/series.csv" | sort) <(grep -v ',jitter_p99_abs,' "$s/series.csv" | sort)
	# the p99 points ordered by key, time and value on both sides (flow keys
	# repeat across genfix pairs): order statistics keep the 1.6 %
	r=$(rowcmp <(grep ',jitter_p99_abs,' "$m/series.csv" | sort -t, -k2,2 -k5,5n -k6,6n) \
		   <(grep ',jitter_p99_abs,' "$s/series.csv" | sort -t, -k2,2 -k5,5n -k6,6n) "1 2 3 5" "" "6")
	check "$l: jitter p99 series within 1.6 % (ok lines_m lines_s bad first: $r)" \
		sh -c "[ '${r%% *}' = 1 ] || [ \"\$(grep -c jitter_p99_abs '$m/series.csv')\" = 0 ]"
	check "$l: pkt_flows table equal ($(wc -l <"$m/pkt_flows.csv") lines)" cmp -s "$m/pkt_flows.csv" "$s/pkt_flows.csv"
	local pk cp nf
	pk=$(sumcol "$m/pkt_flows.csv" packets); cp=$(csvcol "$st" window all copies)
	check "$l: packets on the wire equal ($pk, $cp)" test "$pk" = "$cp"
	nf=$(($(wc -l <"$m/loss.csv") - 1))
	check "$l: flows equal ($nf, $(csvcol "$st" window all flows))" test "$nf" = "$(csvcol "$st" window all flows)"
	local wsum
	wsum=$(awk -F, 'NR>1 && $1!="all"{s+=$5}END{print s+0}' "$st")
	check "$l: the windows' packets add up to the run's ($wsum)" test "$wsum" = "$(csvcol "$st" window all packets)"
	for seg in $(awk -F, '$1=="all"{print $2}' "$m/decomp.csv"); do
		local row
		row=$(awk -F, -v g="$seg" 'NR==FNR{if($1=="all"&&$2==g)split($0,a,",");next}
			$1=="all"&&$2==g{ok=($3==a[3]);for(i=5;i<=9;i++){if(i==6||i==7)continue;d=$i-a[i];if(d<0)d=-d;if(d>0.016*a[i]+1)ok=0}
			print ok, a[3], $3, a[5], $5, a[9], $9}' "$m/decomp.csv" "$s/decomp.csv")
		check "$l: decomp all/$seg: count equal, p50 p99 max within 1.6 % (ok count_m count_s p50_m p50_s max_m max_s: $row)" \
			test "${row%% *}" = 1
	done
}

# --- genfix: 3 pairs, pair 1 with retransmissions (and the losses behind them)
for p in 0 1 2; do
	x=(); [ $p -eq 1 ] && x=(--loss 50 --retx)
	"$GENFIX" -o "$T/rec" --pair $p --seed $((p + 3)) --packets 50000 --flows 6 --gap 100000 \
		--sync 200 --offset 3000000 --drift 20 --no-truth --chunk-events 8192 "${x[@]}" >/dev/null 2>&1 ||
		echo "genfix --pair $p failed" >&2
done
recs=("$T"/rec/p[0-9]a.npr "$T"/rec/p[0-9]b.npr)
check "genfix wrote 6 recordings (${#recs[@]})" test ${#recs[@]} -eq 6
"$NPANALYZE" --threads 2 -o "$T/mem.npa" "${recs[@]}" >/dev/null 2>"$T/merr"; rc=$?
check "in memory exits 0 or 1 (got $rc)" test $rc -le 1
for n in 1 2; do
	"$NPANALYZE" --threads $n --window 0.5 -o "$T/s$n.npa" "${recs[@]}" >/dev/null 2>"$T/serr$n"; rc=$?
	check "--window 0.5 --threads $n exits 0 or 1 (got $rc)" test $rc -le 1
done
check "streamed: --threads 1 and 2 write the same bytes" cmp -s "$T/s1.npa" "$T/s2.npa"
nw=$(grep -c "^npanalyze: window " "$T/serr1")
check "streamed in several windows ($nw)" ge "$nw" 4
same_run genfix "$T/mem.npa" "$T/s1.npa"
lost=$(csvcol "$T/genfix-s/stream.csv" window all lost)
check "genfix --retx: losses seen ($lost)" gt "${lost:-0}" 0
for h in p1a p1b p2a p2b; do
	a=$(csvcol "$T/genfix-m/clock.csv" host $h offset_ns); b=$(csvcol "$T/genfix-s/clock.csv" host $h offset_ns)
	check "clock of $h: streamed offset within 1 us of in memory ($a, $b)" \
		awk -v a="${a:-0}" -v b="${b:-x}" 'BEGIN{d=a-b; if(d<0)d=-d; exit !(b!="x" && d<=1000)}'
done

# --ref another host: windows still cut (and chunks chosen) on the first
# input's clock, mapped to the reference timeline after the fit
"$NPANALYZE" --ref p1a -o "$T/mr.npa" "${recs[@]}" >/dev/null 2>&1
"$NPANALYZE" --ref p1a --window 0.5 -o "$T/sr.npa" "${recs[@]}" >/dev/null 2>"$T/srerr"
ev1=$(sed -n 's/^npanalyze: window 2\/[0-9]*: \([0-9]*\) events read.*/\1/p' "$T/srerr")
check "--ref p1a streamed: window 2 reads part of the run (${ev1:-none} of 1349332 events)" \
	sh -c "[ -n '$ev1' ] && [ '$ev1' -lt 1000000 ]"
same_run ref "$T/mr.npa" "$T/sr.npa"

# --- two damaged chunks of p0a (30 % and 70 % into the file): the in-memory
# warnings, and the windows' once, with how many windows read damage
mkdir -p "$T/dm"
cp "${recs[@]}" "$T/dm/"
sz=$(stat -c %s "$T/dm/p0a.npr")
for frac in 30 70; do
	printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' |
		dd of="$T/dm/p0a.npr" bs=1 seek=$((sz * frac / 100)) conv=notrunc 2>/dev/null
done
"$NPANALYZE" -o "$T/dmm.npa" "$T"/dm/*.npr >"$T/dmm" 2>/dev/null
"$NPANALYZE" --window 0.5 -o "$T/dms.npa" "$T"/dm/*.npr >"$T/dms" 2>/dev/null; rc=$?
check "damaged input streamed: exit 1 (got $rc)" test $rc -eq 1
check "damaged input: every in-memory warning in the streamed summary" \
	sh -c "grep '^warning' '$T/dmm' | while IFS= read -r w; do grep -qxF \"\$w\" '$T/dms' || exit 1; done"
nagg=$(grep -c '^warning: streamed windows: [0-9]* of [0-9]* (.*checksum mismatch' "$T/dms")
nwin=$(sed -n 's/^warning: streamed windows: \([0-9]*\) of .*checksum mismatch.*/\1/p' "$T/dms")
check "the windows' checksum warnings said once ($nagg), by ${nwin:-no} windows (2 chunks: >= 2)" \
	sh -c "[ '$nagg' = 1 ] && [ '${nwin:-0}' -ge 2 ]"
same_run damaged "$T/dmm.npa" "$T/dms.npa"

# --- --window auto and --mem
"$NPANALYZE" --threads 2 --window auto --mem 4G -o "$T/a1.npa" "${recs[@]}" >/dev/null 2>&1
check "--window auto under a large --mem: the in-memory bytes" cmp -s "$T/mem.npa" "$T/a1.npa"
"$NPANALYZE" --threads 2 --window auto --mem 60M -o "$T/a2.npa" "${recs[@]}" >/dev/null 2>"$T/aerr"; rc=$?
check "--window auto --mem 60M exits 0 or 1 (got $rc)" test $rc -le 1
check "--window auto says it streamed" grep -q "streamed instead" "$T/aerr"
pred=$(sed -n 's/.*predicted peak \([0-9]*\) MB.*/\1/p' "$T/aerr" | tail -1)
peak=$(sed -n 's/.*peak memory \([0-9]*\) MB.*/\1/p' "$T/aerr" | tail -1)
check "predicted peak (${pred:-none} MB) and actual peak (${peak:-none} MB) under --mem 60M" \
	sh -c "[ -n '$pred' ] && [ -n '$peak' ] && [ $pred -le 60 ] && [ $peak -le 60 ]"
same_run auto "$T/mem.npa" "$T/a2.npa"
"$NPANALYZE" --window auto --mem 8M -o "$T/a3.npa" "${recs[@]}" >/dev/null 2>"$T/a3err"; rc=$?
check "--mem 8M: no window fits, exit 2 (got $rc), nothing written" \
	sh -c "[ $rc -eq 2 ] && [ ! -e '$T/a3.npa' ] && grep -q 'no window fits' '$T/a3err'"
"$NPANALYZE" --window 0.5 --from 0.1 -o "$T/a4.npa" "${recs[@]}" >/dev/null 2>&1; rc=$?
check "--window with --from is a usage error (got $rc)" test $rc -eq 2

# a host without HEADER (no wall clock) 3 ms off: a 4 ms horizon is warned
# about, the default 200 ms is not
"$GENFIX" -o "$T/nh" --packets 20000 --gap 100000 --offset 3000000 --no-header-b \
	--chunk-events 8192 --no-truth >/dev/null 2>&1
"$NPANALYZE" --window 0.5 --horizon 0.004 -o "$T/nh1.npa" "$T"/nh/host*.npr >"$T/nh1" 2>/dev/null; rc=$?
check "--horizon 0.004 under a 3 ms wall-clock error: warned, exit 1 (got $rc)" \
	sh -c "[ $rc -eq 1 ] && grep -q 'larger --horizon' '$T/nh1'"
"$NPANALYZE" --window 0.5 -o "$T/nh2.npa" "$T"/nh/host*.npr >"$T/nh2" 2>/dev/null
check "default horizon: no such warning" sh -c "! grep -q 'larger --horizon' '$T/nh2'"

# --- a real recording: two namespaces, veth, TCP, clock sync
if [ "$(id -u)" -eq 0 ] && command -v iperf3 >/dev/null && [ -x "$NPREC" ] &&
   ns_add ast-a && ns_add ast-b && veth_pair ast-a ast-a0 10.79.1.1/24 ast-b ast-b0 10.79.1.2/24; then
	bg ip netns exec ast-b iperf3 -s -1 -p 5302 --logfile "$T/iperf-s.txt"
	NPOPT="-d 30s -q --packets --no-flows --no-txn --no-netcpu --no-threads"
	bg "$NPREC" -o "$T/b.npr" $NPOPT --netns ast-b -i ast-b0 --port 5302 --sync-listen 7779
	BPID=$BG_PID
	bg "$NPREC" -o "$T/a.npr" $NPOPT --netns ast-a -i ast-a0 --port 5302 --sync-peer 10.79.1.2:7779
	APID=$BG_PID
	wait_rec "$T/a.npr" $APID && wait_rec "$T/b.npr" $BPID || echo "  (nprec did not start)" >&2
	sleep 1
	ip netns exec ast-a iperf3 -c 10.79.1.2 -p 5302 -t 3 -b 200M -l 16K >"$T/iperf.txt" 2>&1
	check "real: iperf3 transfer ran" [ $? -eq 0 ]
	sleep 1
	kill -INT "$APID" "$BPID"; wait "$APID"; wait "$BPID"
	"$NPANALYZE" -o "$T/rm.npa" "$T/a.npr" "$T/b.npr" >/dev/null 2>&1; rc=$?
	check "real: in memory exits 0 or 1 (got $rc)" test $rc -le 1
	"$NPANALYZE" --window 0.5 -o "$T/rs.npa" "$T/a.npr" "$T/b.npr" >/dev/null 2>"$T/rserr"; rc=$?
	check "real: --window 0.5 exits 0 or 1 (got $rc)" test $rc -le 1
	nw=$(grep -c "^npanalyze: window " "$T/rserr")
	check "real: streamed in several windows ($nw)" ge "$nw" 4
	same_run real "$T/rm.npa" "$T/rs.npa"
	"$NPANALYZE" --threads 2 --window 0.5 -o "$T/rs2.npa" "$T/a.npr" "$T/b.npr" >/dev/null 2>&1
	check "real: streamed --threads 1 and 2 write the same bytes" cmp -s "$T/rs.npa" "$T/rs2.npa"
else
	echo "  (real recording part skipped: needs root, iperf3, nprec and namespaces)" >&2
fi
e2e_finish
