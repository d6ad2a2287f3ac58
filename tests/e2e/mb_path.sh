#!/usr/bin/env bash
# Real traffic through a middlebox, against ground truth np does not make.
# Three namespaces mb-c (client) -> mb-b (balancer: iptables DNAT of its
# service address, HTB 200 mbit on its egress towards the server) -> mb-s
# (server: iptables drops 1 % of the packets to :8080 at INPUT). One nprec
# per namespace (--netns, --packets, TC on its veths), the three exchange
# clock-sync probes, the server's recorder shifts its clock by +3 ms.
# Loads (a few seconds each): iperf3 through the DNAT (port 5201; then
# 5202 with TSO/GSO off on the client), wrk
# against nginx through the DNAT (80 -> 8080), redis-benchmark against
# redis-server through the DNAT (6379). tcpdump -s128 on all four
# veth ends is the ground truth (tests/tools/pcapsum.py), with the iptables
# and HTB counters and the load tools' own counts.
# Checks:
#  - every recorder's tracepoint hooks saw as many packets as its TC hooks
#    and as tcpdump on the same veth, or counted what they missed;
#  - np's lost packets for the iperf3 flow do not exceed those the pcaps
#    show (+0.1 % of the packets), the HTTP flows' losses are located on
#    the server (NETFILTER_DROP) and equal the iptables counter;
#  - the balancer's HTB queue is its own decomp segment (forward_qdisc on
#    b) equal to the pcap transit b0 -> b1, and a finding names it;
#  - request counts of the service graph's wrk and redis edges equal the
#    tools' own, their request rates (at the default --txn-events auto)
#    the captures' and the tools' own; no decomp share above 100 %;
#  - the 3 ms clock shift lies inside the stated bound;
#  - npanalyze exits 0 on these inputs, refuses the same file twice and a
#    file that is not a recording (exit 2).
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init mb_path
e2e_need_root
for t in iperf3 wrk nginx tcpdump iptables tc; do
	command -v $t >/dev/null || e2e_skip "$t missing"
done
[ -x "$NPREC" ] && [ -x "$NPANALYZE" ] && [ -x "$NPREPORT" ] || e2e_skip "nprec/npanalyze/npreport not built"
PM=$NP_BUILD/tools/pktmatch
[ -x "$PM" ] || e2e_skip "tools/pktmatch not built"
PS="python3 $E2E_ROOT/tests/tools/pcapsum.py"
T=$E2E_TMP

ns_add mb-c && ns_add mb-b && ns_add mb-s || e2e_skip "cannot create namespaces"
veth_pair mb-c mb-c0 10.91.1.1/24 mb-b mb-b0 10.91.1.2/24 || e2e_skip "cannot create veth"
veth_pair mb-b mb-b1 10.91.2.1/24 mb-s mb-s0 10.91.2.2/24
ip -n mb-c route add default via 10.91.1.2
ip -n mb-s route add default via 10.91.2.1
ip netns exec mb-b sysctl -qw net.ipv4.ip_forward=1
for p in "80 8080" "5201 5201" "5202 5202" "6379 6379"; do
	set -- $p
	ip netns exec mb-b iptables -t nat -A PREROUTING -d 10.91.1.2 -p tcp --dport $1 \
		-j DNAT --to-destination 10.91.2.2:$2
done
tc -n mb-b qdisc add dev mb-b1 root handle 1: htb default 10
tc -n mb-b class add dev mb-b1 parent 1: classid 1:10 htb rate 200mbit

nginx_start mb-s "$T" 'server { listen 10.91.2.2:8080; location / { return 200 "np middlebox test\n"; } }' 512
bg ip netns exec mb-s iperf3 -s -1 -p 5201 >/dev/null
bg ip netns exec mb-s iperf3 -s -1 -p 5202 >/dev/null
REDIS=
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	REDIS=1
	bg ip netns exec mb-s redis-server --bind 10.91.2.2 --port 6379 --save "" --appendonly no \
		--protected-mode no --dir "$T" --logfile "$T/redis.log"
	RPID=$BG_PID
else
	echo "redis-server/redis-benchmark missing (.ci/packages.txt): redis checks left out" >&2
fi

TDPIDS=()
FILT="tcp port 5201 or tcp port 5202 or tcp port 80 or tcp port 8080 or tcp port 6379"
for x in c:mb-c0 b:mb-b0 b:mb-b1 s:mb-s0; do
	ns=mb-${x%%:*} ifc=${x#*:}
	bg ip netns exec $ns tcpdump -i $ifc -s128 -nn -U -w "$T/$ifc.pcap" $FILT 2>"$T/$ifc.tcpdump"
	TDPIDS+=("$BG_PID")
done

# the default --txn-events auto: after 2000 events an interval the events of
# 1 in 16 connections only; the request rates below come from every
# connection's first and last request start in TXN_STATS all the same
NPOPT="-d 60s -q --packets --no-netcpu --no-threads --port 5201 --port 5202 --port 80 --port 8080 --port 6379"
bg "$NPREC" -o "$T/s.npr" $NPOPT --netns mb-s -i mb-s0 --sync-listen 7841 --test-clock-shift 3ms
SPID=$BG_PID
bg "$NPREC" -o "$T/b.npr" $NPOPT --netns mb-b -i mb-b0 -i mb-b1 --sync-listen 7842 \
	--sync-peer 10.91.2.2:7841
BPID=$BG_PID
bg "$NPREC" -o "$T/c.npr" $NPOPT --netns mb-c -i mb-c0 --sync-peer 10.91.1.2:7842 \
	--sync-peer 10.91.2.2:7841
CPID=$BG_PID
# the header is written once every hook is attached: on a loaded machine
# three recorders take seconds to verify and attach their programs
ready() {
	local f
	for f in s.npr b.npr c.npr; do [ -s "$T/$f" ] || return 1; done
	for f in mb-c0 mb-b0 mb-b1 mb-s0; do grep -q listening "$T/$f.tcpdump" || return 1; done
}
for _ in $(seq 600); do ready && break; sleep 0.1; done
ready || { check "recorders and tcpdump ready within 60 s" false; e2e_finish; exit 1; }
sleep 1
# the drop rule goes in once every recorder is attached: all its drops are recordable
ip netns exec mb-s iptables -A INPUT -p tcp --dport 8080 -m statistic --mode random \
	--probability 0.01 -j DROP || e2e_skip "iptables statistic match unavailable"

ip netns exec mb-c iperf3 -c 10.91.1.2 -p 5201 -t ${MB_SECS:-3} -J >"$T/iperf.json" 2>"$T/iperf.err"
check "iperf3 through the DNAT ran" [ $? -eq 0 ]
# the same with TSO/GSO off on the client: one wire segment per skb, ten
# times the packet rate through every hook
if command -v ethtool >/dev/null && ip netns exec mb-c ethtool -K mb-c0 tso off gso off >/dev/null 2>&1; then
	ip netns exec mb-c iperf3 -c 10.91.1.2 -p 5202 -t 2 -J >"$T/iperf2.json" 2>"$T/iperf2.err"
	check "iperf3 with GSO off through the DNAT ran" [ $? -eq 0 ]
	ip netns exec mb-c ethtool -K mb-c0 tso on gso on >/dev/null 2>&1
fi
ip netns exec mb-c wrk -t1 -c8 -d${MB_SECS:-3}s http://10.91.1.2/ >"$T/wrk.txt" 2>&1
check "wrk through the DNAT ran" [ $? -eq 0 ]
if [ -n "$REDIS" ]; then
	ip netns exec mb-c redis-benchmark -h 10.91.1.2 -p 6379 -c 8 -n ${MB_REDIS_N:-10000} -t set,get \
		--csv >"$T/redis.csv" 2>"$T/redis.err"
	check "redis-benchmark through the DNAT ran" [ $? -eq 0 ]
fi
sleep 1.5

IPT=$(ip netns exec mb-s iptables -L INPUT -v -x -n | awk '/statistic/ {print $1; exit}')
HTB=$(tc -n mb-b -s qdisc show dev mb-b1 | awk '/dropped/ {gsub(",","",$7); print $7; exit}')
kill -INT "$CPID" "$BPID" "$SPID"; wait "$CPID"; crc=$?; wait "$BPID"; brc=$?; wait "$SPID"; src=$?
check "nprec c/b/s exited 0 ($crc/$brc/$src)" [ "$crc$brc$src" = 000 ]
kill -INT "${TDPIDS[@]}"; wait "${TDPIDS[@]}" 2>/dev/null
kd=$(cat "$T"/*.tcpdump | awk '/dropped by kernel/ {s += $1} END {print s + 0}')
check "tcpdump dropped no packets ($kd)" [ "$kd" = 0 ]
REQ=$(awk '/requests in/ {print $1}' "$T/wrk.txt")
echo "iptables dropped $IPT, HTB dropped $HTB, wrk made $REQ requests" >&2

# ---- each recorder against tcpdump on its own veths ----
# inbound packets of the test's ports per veth (tcpdump sees them before TC)
pin() { $PS flows "$T/$1.pcap" | awk -v a="$2" '$3 == a {n += $5} END {print n + 0}'; }
hk() { awk -F= -v k="hook_$2" '$1 == k {print $2}' "$T/$1.stats"; }
for h in c b s; do "$PM" stats "$T/$h.npr" > "$T/$h.stats"; done
PC=$(pin mb-c0 10.91.1.1) PS0=$(pin mb-s0 10.91.2.2)
PB=$(( $(pin mb-b0 10.91.1.2) + $(pin mb-b0 10.91.2.2) + $(pin mb-b1 10.91.1.1) + $(pin mb-b1 10.91.2.1) ))
check "client TC ingress ($(hk c tc_ingress)) == tcpdump on mb-c0 ($PC)" [ "$(hk c tc_ingress)" = "$PC" ]
check "server TC ingress ($(hk s tc_ingress)) == tcpdump on mb-s0 ($PS0)" [ "$(hk s tc_ingress)" = "$PS0" ]
check "balancer TC ingress ($(hk b tc_ingress)) == tcpdump on mb-b0 + mb-b1 ($PB)" [ "$(hk b tc_ingress)" = "$PB" ]
# every TC ingress packet without a netif_receive event is counted by the
# recorder (missed_netif_receive), none vanishes silently
for h in c b s; do
	gap=$(( $(hk $h tc_ingress) - $(hk $h netif_receive) ))
	mis=$(awk -F= '$1 == "missed_netif_receive" {print $2}' "$T/$h.stats")
	echo "$h: tc_ingress $(hk $h tc_ingress) netif_receive $(hk $h netif_receive) tcp_rcv $(hk $h tcp_rcv)" >&2
	grep '^prog_missed_' "$T/$h.stats" | sed "s/^/$h: /" >&2
	# transmit: TC egress runs just before net_dev_queue; a skipped run is
	# counted at the CPU's next TC egress (the last one per CPU cannot be)
	txgap=$(( $(hk $h tc_egress) - $(hk $h dev_queue) ))
	txmis=$(awk -F= '$1 == "missed_dev_queue" {print $2}' "$T/$h.stats")
	check "$h: transmit events missing at dev_queue ($txgap) == counted missed (${txmis:-0}, + at most one per CPU)" \
		[ "$txgap" -ge "${txmis:-0}" -a "$txgap" -le $(( ${txmis:-0} + $(nproc) )) ]
	check "$h: receive events missing at netif_receive ($gap) == counted missed (${mis:-0})" \
		[ "$gap" = "${mis:-0}" ]
done

# ---- the analysis ----
"$NPANALYZE" -o "$T/x.npa" --alias "$T/c.npr=c" --alias "$T/b.npr=b" --alias "$T/s.npr=s" \
	--ref c "$T/c.npr" "$T/b.npr" "$T/s.npr" >"$T/sum.txt" 2>"$T/err.txt"
rc=$?
grep -i warning "$T/sum.txt" >&2
# exit 0 = only notes; skipped hook runs grow with the machine's load
# (0.1 % at load 3, up to 1-2 % at load 8 with the other tests running):
# above 1 % they are a warning and exit 1 is right. Any other warning fails.
NW=$(grep -c '^warning:' "$T/sum.txt")
OW=$(grep '^warning:' "$T/sum.txt" | grep -vc 'did not run the packet-hook tracepoint programs\|packet-hook program runs\|socket hooks recorded no event')
check "npanalyze wrote the analysis, exit $rc agrees with its summary ($NW warnings)" \
	sh -c "[ -s '$T/x.npa' ] && { [ '$rc' = 0 -a '$NW' = 0 ] || [ '$rc' = 1 -a '$NW' -gt 0 ]; }"
check "no warning but counted skipped or unrecorded hook events ($OW)" [ "$OW" = 0 ]
"$NPREPORT" "$T/x.npa" --format csv -o "$T/csv" >/dev/null 2>&1
IPORT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["start"]["connected"][0]["local_port"])' "$T/iperf.json")
$PS lost "$T/mb-c0.pcap" "$T/mb-s0.pcap" "$IPORT" > "$T/ilost.kv"
$PS resent "$T/mb-s0.pcap" 8080 > "$T/hresent.kv"
kv() { awk -F= -v k="$2" '$1 == k {print $2}' "$1"; }
ISENT=$(kv "$T/ilost.kv" sent_segments) ILOST=$(kv "$T/ilost.kv" lost_segments)
HRES=$(kv "$T/hresent.kv" resent)
lossrow() { awk -F, -v f="$1" -v c="$2" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i ~ "^" c) k = i; next}
	$1 ~ f {s += $k} END {print s + 0}' "$T/csv/loss.csv"; }
NLI=$(lossrow ":$IPORT>10.91.1.2:5201\$" lost) NUI=$(lossrow ":$IPORT>10.91.1.2:5201\$" unrecorded)
NLH=$(lossrow ">10.91.1.2:80\$" lost)
echo "iperf3: $ISENT segments sent, pcap lost $ILOST, np lost $NLI (unrecorded $NUI);" \
	"http: pcap resent $HRES, np lost $NLH" >&2
check "iperf3: np's lost ($NLI) <= pcap lost ($ILOST) + 0.1 % of $ISENT segments" \
	le "$NLI" "$(awk -v l="$ILOST" -v s="$ISENT" 'BEGIN {print l + s / 1000}')"
check "http: np's lost ($NLH) == data segments the server's veth saw again ($HRES), within 2 %" \
	sh -c "[ '$HRES' -gt 0 ] && awk -v a='$NLH' -v b='$HRES' 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= b * 0.02 + 1)}'"
NFL=$(awk -F, 'NR > 1 && $1 ~ />10.91.1.2:80$/ && $10 ~ /^NETFILTER_DROP/' "$T/csv/lost_packets.csv" | wc -l)
# (1 run in ~8 joined 110 of 111: a drop recorded with a time the join
# window did not reach)
check "http: lost packets located with NETFILTER_DROP ($NFL of $NLH, >= 97 %)" \
	sh -c "[ '$NLH' -gt 0 ] && [ \$(( $NFL * 100 )) -ge \$(( $NLH * 97 )) ]"
# counts across tables and against the pcaps (issue 19 item 5)
pf() { awk -F, -v f="$1" -v c="$2" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i ~ "^" c) k = i; next}
	$1 == f {print $k + 0; exit}' "$T/csv/$3.csv"; }
pcapn() { $PS flows "$T/mb-c0.pcap" | awk -v s="$1" -v d="$2" '$2 == s && $4 == d {print $5}'; }
DF="tcp 10.91.1.1:$IPORT>10.91.1.2:5201" AF="tcp 10.91.2.2:5201>10.91.1.1:$IPORT"
NPD=$(pf "$DF" packets pkt_flows) NPA=$(pf "$AF" packets pkt_flows)
PD=$(pcapn "$IPORT" 5201) PA=$(pcapn 5201 "$IPORT")
check "iperf3 data packets: pkt_flows $NPD vs pcap $PD (1 %)" within "${NPD:-0}" "${PD:-1}" 1
check "iperf3 ACKs (pure ACKs with one key each count): pkt_flows $NPA vs pcap $PA (1 %)" \
	within "${NPA:-0}" "${PA:-1}" 1
if [ -s "$T/iperf2.json" ]; then
	IP2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["start"]["connected"][0]["local_port"])' "$T/iperf2.json")
	$PS lost "$T/mb-c0.pcap" "$T/mb-s0.pcap" "$IP2" > "$T/ilost2.kv"
	S2=$(kv "$T/ilost2.kv" sent_segments) L2=$(kv "$T/ilost2.kv" lost_segments)
	DF2="tcp 10.91.1.1:$IP2>10.91.1.2:5202" AF2="tcp 10.91.2.2:5202>10.91.1.1:$IP2"
	NL2=$(lossrow ":$IP2>10.91.1.2:5202\$" lost) NU2=$(lossrow ":$IP2>10.91.1.2:5202\$" unrecorded)
	echo "iperf3 GSO off: $S2 segments, pcap lost $L2, np lost $NL2 (unrecorded $NU2)" >&2
	check "GSO off: np's lost ($NL2) <= pcap lost ($L2) + 0.1 % of $S2 segments" \
		le "$NL2" "$(awk -v l="$L2" -v s="$S2" 'BEGIN {print l + s / 1000}')"
	# the ACKs include the storm of identical RSTs (one key, 89-170 copies)
	# the server sends to the segments in flight when iperf3 closes
	N2=$(pf "$DF2" packets pkt_flows) P2=$(pcapn "$IP2" 5202)
	NA2=$(pf "$AF2" packets pkt_flows) PA2=$(pcapn 5202 "$IP2")
	check "GSO off: data packets pkt_flows $N2 vs pcap $P2, ACKs and RSTs $NA2 vs $PA2 (1 %)" \
		sh -c "awk -v a='${N2:-0}' -v b='${P2:-1}' -v c='${NA2:-0}' -v d='${PA2:-1}' \
			'BEGIN {x = a - b; y = c - d; exit !((x < 0 ? -x : x) <= b / 100 && (y < 0 ? -y : y) <= d / 100)}'"
fi
JP=$(pf "$DF" packets jitter)
check "jitter from most data packets ($JP of $NPD), not those with a sock_send range" \
	ge "${JP:-0}" "$(( ${NPD:-0} * 9 / 10 ))"
IBPS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' "$T/iperf.json")
TP=$(pf "$DF" throughput pkt_flows)
check "iperf3 throughput: pkt_flows $TP vs iperf3 $IBPS bit/s (5 %)" within "${TP:-0}" "${IBPS:-1}" 5
# the kernel skips transmit tracepoint programs for a few skbs too; no TC
# hook follows a dequeue, so the recorder counts an accepted packet whose
# dequeue it did not see (qdisc_deq missed, over every flow through b)
QL=$(awk -F, -v f="$DF" '$1 == f && $2 == "b:qdisc_enq" {print $6; exit}' "$T/csv/loss_hops.csv")
QM=$(awk -F= '$1 == "missed_qdisc_deq" {print $2}' "$T/b.stats")
check "balancer qdisc_enq -> qdisc_deq: $QL lost <= HTB dropped ${HTB:-?} + dequeues counted missed (${QM:-0})" \
	le "${QL:-999999}" "$(( ${HTB:-0} + ${QM:-0} ))"
# the count against b's events, packet by packet (sport len seq end ack
# tsval ipid flags): enqueued packets without a dequeue event
QE=$("$PM" events "$T/b.npr" | awk '$2 == "qdisc_enq" || $2 == "qdisc_deq" {
	k = $6 " " $12 " " $14 " " $16 " " $18 " " $20 " " $22 " " $24; n[k] += $2 == "qdisc_enq" ? 1 : -1 }
	END {for (k in n) if (n[k] > 0) s += n[k]; print s + 0}')
check "b: dequeues counted missed (${QM:-0}) == enqueued packets without a dequeue event ($QE), within 2 % + 2" \
	sh -c "awk -v a='${QM:-0}' -v b='$QE' 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= b * 0.02 + 2)}'"
# the balancer's HTB queue, against the time between its two veths' captures
# (tcpdump taps after netif_receive and at start_xmit: the pcap transit is
# the whole time through b)
$PS transit "$T/mb-b0.pcap" "$T/mb-b1.pcap" "$IPORT" > "$T/btransit.kv"
BQ=$(kv "$T/btransit.kv" mean_ns)
dseg() { awk -F, -v f="$1" -v s="$2" '{sub(/\r$/, "")} NR == 1 {for (i = 1; i <= NF; i++) {if ($i ~ /^mean/) k = i; if ($i == "host") h = i}; next}
	$1 == f && $2 == s {print $k, $h; exit}' "$T/csv/decomp.csv"; }
read -r FQ FQH <<<"$(dseg "$DF" forward_qdisc)"
read -r FS _ <<<"$(dseg "$DF" forward_stack)"
read -r FD _ <<<"$(dseg "$DF" forward_device)"
read -r WI _ <<<"$(dseg "$DF" wire)"
FT=$(awk -v a="${FS:-0}" -v b="${FQ:-0}" -v c="${FD:-0}" 'BEGIN {print a + b + c}')
echo "iperf3 through the balancer: pcap mb-b0 -> mb-b1 mean $BQ ns; np forward_stack $FS, forward_qdisc $FQ, forward_device $FD (sum $FT), wire $WI ns" >&2
check "the balancer's queue is its own decomp segment: forward_qdisc on ${FQH:-?} mean ${FQ:-none} ns vs pcap mb-b0 -> mb-b1 ${BQ:-none} ns (15 %)" \
	sh -c "[ '$FQH' = b ] && awk -v a='${FQ:-0}' -v b='${BQ:-1}' 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= b * 0.15)}'"
check "the balancer's three segments add up to the pcap transit through b ($FT vs $BQ ns, 5 %)" \
	within "$FT" "${BQ:-1}" 5
check "the wire (both veth links) is no longer the balancer's queue (${WI:-none} ns < 10 % of ${BQ:-1})" \
	awk -v w="${WI:-1e18}" -v b="${BQ:-1}" 'BEGIN {exit !(w < b / 10)}'
cut -d, -f3 "$T/csv/findings.csv" >&2
check "a finding names the balancer's qdisc" grep -q "forwarding host's qdisc on b" "$T/csv/findings.csv"
check "a finding names the drops on the server" grep -q "dropped on s (NETFILTER_DROP)" "$T/csv/findings.csv"
# the service graph joins the client's connections to the server through
# the DNAT (before: the client's edge ended at a vertex 10.91.1.2:80 and
# the server saw an external "client 10.91.1.1")
GE=$(awk -F, '$1 == "edge" && $2 ~ /^c:/ && $3 ~ /^s:/' "$T/csv/service_graph.csv" | wc -l)
GX=$(grep -c 'client 10.91.1.1\|,10.91.1.2:80,' "$T/csv/service_graph.csv")
check "service graph: edges client -> server through the DNAT ($GE), no dangling service or client vertex ($GX)" \
	[ "$GE" -ge 1 -a "$GX" = 0 ]
# the edge into a server process: nginx's worker, redis-server
gcol() { awk -F, -v to="$1" -v c="$2" '{sub(/\r$/, "")} NR == 1 {for (i = 1; i <= NF; i++) if ($i ~ "^" c) k = i; next}
	$1 == "edge" && $3 == to {print $k + 0; exit}' "$T/csv/service_graph.csv"; }
NGW=$(ps --ppid "$(cat "$T/nginx.pid")" -o pid= | tr -d ' ' | head -1)
GR=$(gcol "s:pid[$NGW]" requests)
check "service graph: requests on the wrk edge ($GR) == wrk's count ($REQ) within 1 %" within "${GR:-0}" "${REQ:-1}" 1
# request rates over one time base (issue 19 item 6: 2.32 k/s in the graph,
# 5.42 k/s in transactions, 6.07 k/s by wrk): requests per second between
# request starts, (n - 1) / (last start - first start), from every
# connection's first and last start in TXN_STATS (ana_reqrate), although
# --txn-events auto kept the events of 1 in 16 connections only (checked);
# pcapsum.py reqrate the same on the client's capture (the first
# transmission of each request segment).
check "the server's recorder sampled transaction events (ev_sample 16)" \
	bash -c "'$NPREPORT' dump --type txn_stats '$T/s.npr' | grep -q '\"ev_sample\":16'"
$PS reqrate "$T/mb-c0.pcap" 80 > "$T/wrate.kv"
WRATE=$(kv "$T/wrate.kv" rate)
WOWN=$(awk '/Requests\/sec/ {print $2}' "$T/wrk.txt")
GAR=$(gcol "s:pid[$NGW]" active_rate)
txr() { awk -F, -v l="$1" -v k="$2" -v h="$3" '{sub(/\r$/, "")} NR == 1 {for (i = 1; i <= NF; i++) if ($i ~ /^rate/) c = i; next}
	$1 == l && $2 == k && $3 == h {print $c + 0; exit}' "$T/csv/transactions.csv"; }
TXS=$(txr endpoint "10.91.2.2:8080 GET /" s) TXC=$(txr endpoint "10.91.1.2:80 GET /" c)
echo "http request rate: pcap $WRATE/s, graph $GAR/s, transactions server $TXS/s client $TXC/s, wrk $WOWN/s" >&2
check "request rate: service graph ($GAR/s) == the client's capture ($WRATE/s) within 1 %" within "${GAR:-0}" "${WRATE:-1}" 1
all_within1() { within "$1" "$3" 1 && within "$2" "$3" 1; }
check "request rate: transactions server ($TXS/s) and client ($TXC/s) endpoints == the graph's within 1 %" \
	all_within1 "${TXS:-0}" "${TXC:-0}" "${GAR:-1}"
# wrk's own Requests/sec: its count (the graph's within 1 %: checked
# above) over its wall time, which holds every request start and more: its
# connects (under a ms), and after the last start the responses wrk
# waited for until its stop timer ended the run. With the server's 1 %
# drop rule (~110 drops in 3 s over 8 connections) each connection waits
# out a retransmission timeout (~200 ms) about 5 times a second: all 8
# wait at once for ~145 ms of every ~210 (the capture of one run). When
# the run ends in such a wait, no request starts in its last 150-200 ms:
# 5.1 % of 3 s in 1 of 11 runs
# (the 8 last requests dropped at INPUT, resent after wrk's FIN), past the
# 5 % this check allowed. That time is in the client's capture: from the
# last first transmission of a request to the first FIN or RST after it.
# So: from 1 % below wrk's rate to 1 % above its count over its wall time
# less that tail. (The graph's server rows see the first and last start
# late by nginx's wakeup: 2 ms in one run, 0.08 % below wrk's.)
WTAIL=$(tcpdump -r "$T/mb-c0.pcap" -nn -tt -S 'tcp dst port 80' 2>/dev/null | awk '
	$7 ~ /[FR]/ {c[++nc] = $1}
	/ seq [0-9]+:[0-9]+,/ {match($0, / seq [0-9]+:/); k = $3 substr($0, RSTART, RLENGTH)
		if (!(k in seen)) {seen[k] = 1; l = $1}}
	END {for (i = 1; i <= nc; i++) if (c[i] > l) {printf "%.4f", c[i] - l; exit}}')
WMAX=$(awk -v n="${REQ:-0}" -v r="${WOWN:-0}" -v i="${WTAIL:-0}" 'BEGIN {if (n > 0 && r > 0 && n / r > i) printf "%.2f", n / (n / r - i) * 1.01}')
check "request rate: the graph's ($GAR/s) from 1 % below wrk's own ($WOWN/s) to 1 % above its count over its wall time less the capture's ${WTAIL:-?} s after the last request start (${WMAX:-?}/s)" \
	awk -v g="${GAR:-0}" -v w="${WOWN:-0}" -v m="${WMAX:-0}" 'BEGIN {exit !(w > 0 && g >= w * 0.99 && g <= m)}'
if [ -n "$REDIS" ]; then
	RR=$(gcol "s:pid[$RPID]" requests)
	RN=$(( ${MB_REDIS_N:-10000} * 2 ))
	check "service graph: requests on the redis edge ($RR) == redis-benchmark's $RN (+ its CONFIG GET) within 1 %" \
		within "${RR:-0}" "$RN" 1
	RRT=$(gcol "s:pid[$RPID]" active_rate)
	$PS reqrate "$T/mb-c0.pcap" 6379 > "$T/rrate.kv"
	RPC=$(kv "$T/rrate.kv" rate)
	# redis-benchmark's own: each test's requests over its time in whole
	# ms, from before its clients connect to the last reply (4-5 ms more
	# than the test's request starts span in one run); the graph's span
	# holds instead the CONFIG GET before the tests and the switch from
	# SET to GET (2 + 6 ms there): 0.02 % apart that run, and each part
	# can grow by ms on a loaded machine. Held to 2 %.
	ROWN=$(awk -F'"' -v n="${MB_REDIS_N:-10000}" '$2 == "SET" || $2 == "GET" {k++; t += n / $4}
		END {if (k == 2 && t > 0) printf "%.2f", 2 * n / t}' "$T/redis.csv")
	echo "redis request rate: pcap $RPC/s, graph $RRT/s, redis-benchmark SET+GET $ROWN/s" >&2
	check "request rate: the redis edge ($RRT/s) == redis-benchmark's own SET+GET ($ROWN/s) within 2 %" \
		within "${RRT:-0}" "${ROWN:-1}" 2
	check "request rate: the redis edge ($RRT/s) == the client's capture ($RPC/s) within 1 %" within "${RRT:-0}" "${RPC:-1}" 1
fi
# no segment holds more than its whole path (the issue saw share_mean
# 102 % and 196 % for redis flows: clamped negative segments)
SH=$(awk -F, '{sub(/\r$/, "")} NR == 1 {for (i = 1; i <= NF; i++) {if ($i ~ /^share_mean/) a = i; if ($i ~ /^share_p99/) b = i}; next}
	{if ($a + 0 > m) m = $a + 0; if ($b + 0 > m) m = $b + 0} END {print m + 0}' "$T/csv/decomp.csv")
check "decomp: no share_mean or share_p99 above 100 % (max $SH)" awk -v m="$SH" 'BEGIN {exit !(m <= 100.001)}'
SS=$(grep -c ':sock_send' "$T/csv/loss_hops.csv")
check "loss_hops compares no sock_send ranges with packets ($SS rows)" [ "$SS" = 0 ]
P0=$(awk -F, 'NR > 1 && ($1 ~ /:0>/ || $2 == $3)' "$T/csv/pkt_flows.csv" | wc -l)
check "no phantom flow rows (port 0, or sender == receiver) ($P0)" [ "$P0" = 0 ]
off=$(csvcol "$T/csv/clock.csv" host s offset_ns)
err=$(csvcol "$T/csv/clock.csv" host s offset_err_ns)
drift=$(csvcol "$T/csv/clock.csv" host s drift_ppm)
via=$(csvcol "$T/csv/clock.csv" host s via)
# one machine: the true offset is 3 ms at every time and the true drift 0;
# the mapping's error at the end of a 20 s span must stay inside the bound
check "server's +3 ms shift inside the stated bound at every time ($off ns, drift $drift ppm, +- $err ns)" \
	awk -v o="${off:-0}" -v d="${drift:-0}" -v e="${err:-0}" \
	'BEGIN{x=o-3000000; if(x<0)x=-x; y=d<0?-d:d; exit !(x + y * 20000 <= e && e > 0)}'
check "server aligned through the balancer, not the direct pair (via '$via')" [ "$via" = b ]

# ---- inputs that are not a set of recordings ----
"$NPANALYZE" -o "$T/y.npa" "$T/c.npr" "$T/c.npr" >/dev/null 2>"$T/twice.txt"; rc=$?
check "the same recording twice refused, exit 2 ($rc: $(tail -1 "$T/twice.txt"))" [ "$rc" = 2 ]
cp "$T/c.npr" "$T/c-copy.npr"
"$NPANALYZE" -o "$T/y.npa" "$T/c.npr" "$T/c-copy.npr" >/dev/null 2>"$T/twice2.txt"; rc=$?
check "... also under another name, exit 2 ($rc)" [ "$rc" = 2 ]
"$NPANALYZE" -o "$T/y.npa" /etc/passwd >/dev/null 2>"$T/passwd.txt"; rc=$?
check "a file that is not a recording refused, exit 2, one line ($rc: $(cat "$T/passwd.txt"))" \
	[ "$rc" = 2 -a "$(grep -vc '^npanalyze: reading' "$T/passwd.txt")" = 1 ]
"$NPANALYZE" -o "$T/y.npa" "$T/c.npr" "$T/nosuch.npr" >/dev/null 2>"$T/missing.txt"; rc=$?
check "a missing input refused, exit 2 ($rc)" [ "$rc" = 2 ]
e2e_finish
