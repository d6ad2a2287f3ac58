#!/usr/bin/env bash
# npanalyze on real HTTP recordings: nginx in namespace an-hs, wrk in an-hc,
# one nprec per namespace with the default families (flows, transactions,
# network CPU, threads) plus the clock-sync exchange. Checked against wrk's
# own count: the server endpoint's requests in the transactions table, the
# service graph edge wrk -> nginx and its rate, the entry point and the
# bottleneck vertex, the critical path, and network CPU rows for both hosts.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init ana_http
e2e_need_root
command -v wrk >/dev/null || e2e_skip "wrk missing"
command -v nginx >/dev/null || e2e_skip "nginx missing"
[ -x "$NPREC" ] && [ -x "$NPANALYZE" ] || e2e_skip "nprec or npanalyze not built"

ns_add an-hc && ns_add an-hs || e2e_skip "cannot create namespaces"
veth_pair an-hc an-hc0 10.78.2.1/24 an-hs an-hs0 10.78.2.2/24 || e2e_skip "cannot create veth"
T=$E2E_TMP
mkdir -p "$T/www"
head -c 2000 /dev/urandom > "$T/www/x.bin"
cat > "$T/ng.conf" <<EOF
daemon off; user root; worker_processes 1; pid $T/ng.pid; error_log $T/ng.err;
events { worker_connections 256; }
http { access_log off; server { listen 10.78.2.2:8081; root $T/www; } }
EOF
bg ip netns exec an-hs nginx -c "$T/ng.conf"
sleep 0.5
NPOPT="-d 30s -q --port 8081"
bg "$NPREC" -o "$T/s.npr" $NPOPT --netns an-hs -i an-hs0 --sync-listen 7781
SPID=$BG_PID
bg "$NPREC" -o "$T/c.npr" $NPOPT --netns an-hc -i an-hc0 --sync-peer 10.78.2.2:7781
CPID=$BG_PID
for _ in $(seq 50); do [ -s "$T/s.npr" ] && [ -s "$T/c.npr" ] && break; sleep 0.1; done
sleep 1.5
ip netns exec an-hc wrk -t1 -c2 -d3s http://10.78.2.2:8081/x.bin >"$T/wrk.txt" 2>&1
check "wrk ran" [ $? -eq 0 ]
check "nginx answered 200 (no error responses)" sh -c "! grep -q 'Non-2xx' '$T/wrk.txt'"
reqs=$(awk '/requests in/{print $1}' "$T/wrk.txt")
secs=$(awk '/requests in/{gsub("s,","",$4); print $4}' "$T/wrk.txt")
sleep 2
kill -INT "$CPID" "$SPID"; wait "$CPID"; crc=$?; wait "$SPID"; src=$?
check "nprec client exited 0 ($crc)" [ "$crc" -eq 0 ]
check "nprec server exited 0 ($src)" [ "$src" -eq 0 ]

"$NPANALYZE" -o "$T/h.npa" --alias "$T/c.npr=client" --alias "$T/s.npr=server" \
	"$T/c.npr" "$T/s.npr" >"$T/sum.txt" 2>"$T/err.txt"
rc=$?
cat "$T/sum.txt" >&2
check "npanalyze wrote the analysis (exit $rc)" [ "$rc" -le 1 -a -s "$T/h.npa" ]
rm -rf "$T/csv"
"$NPREPORT" "$T/h.npa" --format csv -o "$T/csv" >/dev/null 2>&1
# row of table $1 whose columns $2 and $3 are $4 and $5: column $6
cell2() {
	awk -F, -v a="$2" -v b="$3" -v va="$4" -v vb="$5" -v c="$6" '
		{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i==a)ia=i;if($i==b)ib=i;if($i==c)ic=i};next}
		$ia==va && $ib==vb {print $ic; exit}' "$T/csv/$1.csv"
}
srv=$(awk -F, '{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i=="level")l=i;if($i=="role")r=i;if($i=="requests")q=i;if($i=="host")h=i};next}
	$l=="endpoint" && $r=="server" && $h=="server" {s+=$q} END{print s+0}' "$T/csv/transactions.csv")
check "server endpoint requests within 5 % of wrk's ($srv vs $reqs)" within "$srv" "${reqs:-1}" 5
cli=$(awk -F, '{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i=="level")l=i;if($i=="role")r=i;if($i=="requests")q=i;if($i=="host")h=i};next}
	$l=="endpoint" && $r=="client" && $h=="client" {s+=$q} END{print s+0}' "$T/csv/transactions.csv")
check "client endpoint requests within 5 % of wrk's ($cli vs $reqs)" within "$cli" "${reqs:-1}" 5
edge_from=$(awk -F, '{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i=="kind")k=i;if($i=="from")f=i;if($i=="to")t=i};next}
	$k=="edge" && $f ~ /^client:wrk/ && $t ~ /^server:nginx/ {print $f; exit}' "$T/csv/service_graph.csv")
check "service graph edge wrk -> nginx ($edge_from)" [ -n "$edge_from" ]
rate=$(awk -F, '{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i=="kind")k=i;if($i=="from")f=i;if($i=="to")t=i;if($i=="rate")r=i};next}
	$k=="edge" && $f ~ /^client:wrk/ && $t ~ /^server:nginx/ {print $r; exit}' "$T/csv/service_graph.csv")
check "edge carries requests (rate ${rate:-none}/s)" gt "${rate:-0}" 10
entry=$(awk -F, '{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i=="kind")k=i;if($i=="from")f=i;if($i=="entry")e=i};next}
	$k=="vertex" && $f ~ /^client:wrk/ {print $e; exit}' "$T/csv/service_graph.csv")
check "wrk is the entry point ($entry)" [ "$entry" = 1 ]
bott=$(awk -F, '{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i=="kind")k=i;if($i=="from")f=i;if($i=="bottleneck")b=i};next}
	$k=="vertex" && $b==1 {print $f; exit}' "$T/csv/service_graph.csv")
check "bottleneck vertex is nginx ($bott)" sh -c "echo '$bott' | grep -q '^server:nginx'"
check "critical path wrk -> nginx" grep -q "client:wrk.*server:nginx" "$T/csv/critical_path.csv"
check "network CPU of both hosts" sh -c "grep -q '^client,' '$T/csv/netcpu.csv' && grep -q '^server,' '$T/csv/netcpu.csv'"
check "clock of the server aligned" sh -c "grep -q '^server,client,accurate' '$T/csv/clock.csv'"
e2e_finish
