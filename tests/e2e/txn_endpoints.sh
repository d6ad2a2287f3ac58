#!/bin/bash
# Per-endpoint transaction latency on keep-alive connections. A Python
# http.server (ThreadingHTTPServer, like the demo's services) serves two
# paths: /slow sleeps TX_SLOW_MS (30 ms) before answering, /fast answers at
# once. tests/tools/tx_httpmix sends K requests over C keep-alive
# connections, every connection alternating between the two paths, one
# request in flight at a time (so each server thread waits in recv() far
# longer than a scheduler tick between its requests), and prints its own
# per-path count and exact p50/p99; then KS more requests to /slow/split and
# /fast/split, each written in two parts cut inside the path. One nprec per
# namespace.
# Ground truth and checks:
#  - recorder (TXN_EVENTS): every event has its method + path, on both
#    sides, split request lines included; per-path event counts equal the
#    client's; client-role p50/p99 per path between the client's own at
#    the same rank and M ranks lower (M = requests the client was
#    preempted in, see below); server-role /slow p50 within
#    5 % of the injected delay, server-role /fast p50 below the client's.
#  - npanalyze: the endpoint rows (ip:port + GET path) per host and role
#    carry the client's per-path request counts; their p50/p99 are the
#    recorded events' own (at the rank or one either side, +-1 %), and the
#    p50 within 10 % of the client's; no endpoint without a path, and
#    per-interval series exist for each.
# The recorders run with --send-calls: the client's request lines (split
# ones too) are read from its sends. A last phase records the mix at the
# defaults (no send calls): the client's lines then come from its
# server's recording through the analysis, the two hosts aligned by their
# shared boot.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init txn_endpoints
e2e_need_root
command -v python3 >/dev/null || e2e_skip "python3 missing"
[ -x "$NPREC" ] && [ -x "$NPANALYZE" ] && [ -x "$NPREPORT" ] || e2e_skip "nprec/npanalyze/npreport not built"
MIX=$NP_BUILD/tools/tx_httpmix
[ -x "$MIX" ] || e2e_skip "tx_httpmix not built"
K=${TX_K:-400}
KS=${TX_KS:-60}     # requests written in two parts
C=${TX_C:-4}
SLOW_MS=${TX_SLOW_MS:-30}
NSC=tx-c$$ NSS=tx-s$$
SUB=$(( $$ % 250 + 1 ))
SRV=10.79.$SUB.2 PORT=8090
T=$E2E_TMP

ns_add $NSC && ns_add $NSS || e2e_skip "cannot create namespaces"
veth_pair $NSC txc$$ 10.79.$SUB.1/24 $NSS txs$$ $SRV/24 || e2e_skip "cannot create veth"

cat > "$T/srv.py" <<'PY'
import socket, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
addr, port, slow_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def log_message(self, *a):
        pass
    def do_GET(self):
        if self.path.startswith("/slow"):
            time.sleep(slow_ms / 1000.0)
        elif not self.path.startswith("/fast"):
            self.send_error(404)
            return
        body = b"x" * 200
        # one write per response: Nagle and delayed ACKs add nothing
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

ThreadingHTTPServer((addr, port), H).serve_forever()
PY
# Client and server on CPUs of their own where there are two: on a shared
# CPU the server's wakeup preempts the client at write()'s return in a
# quarter of the /fast requests (M below: 32-77 of 200 at load 3-8,
# 0-2 pinned at load 4-5), and every such request widens the client-role
# bounds by a rank.
PIN_S=() PIN_C=()
[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null && PIN_S=(taskset -c 1) PIN_C=(taskset -c 0)
bg ip netns exec $NSS "${PIN_S[@]}" python3 "$T/srv.py" $SRV $PORT $SLOW_MS
ns_wait_listen $NSS $PORT

bg "$NPREC" -q --send-calls --port $PORT --netns $NSC -o "$T/c.npr"; PC=$BG_PID
bg "$NPREC" -q --send-calls --port $PORT --netns $NSS -o "$T/s.npr"; PS=$BG_PID
wait_rec "$T/c.npr" $PC && wait_rec "$T/s.npr" $PS || echo "nprec did not start" >&2
ip netns exec $NSC "${PIN_C[@]}" "$MIX" -h $SRV -p $PORT -n "$K" -c "$C" -u /slow,/fast > "$T/client.txt"
check "client: every request answered" [ $? -eq 0 ]
# the same with every request line cut after "GET /s" (two writes 2 ms
# apart: the server's first read ends inside the path)
ip netns exec $NSC "${PIN_C[@]}" "$MIX" -h $SRV -p $PORT -n "$KS" -c 2 -s 6 -u /slow/split,/fast/split >> "$T/client.txt"
check "client (split requests): every request answered" [ $? -eq 0 ]
cat "$T/client.txt" >&2
sleep 1.2   # one snapshot interval: the last transactions are in TXN_STATS
kill -INT $PC $PS; wait $PC; RC=$?; wait $PS; RS=$?
check "nprec (client ns) exit 0" [ "$RC" -eq 0 ]
check "nprec (server ns) exit 0" [ "$RS" -eq 0 ]

# client figure: cfig PATH FIELD
cfig() { sed -n "s|^path=$1 .*$2=\([0-9]*\).*|\1|p" "$T/client.txt"; }
SLOW_NS=$((SLOW_MS * 1000000))

# ---- recorder: TXN_EVENTS per role and path (exact durations) ----
cat > "$T/ev.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from rc_npr import records    # the dump reader of the REC-CORE tests
role_want = int(sys.argv[1])
per, empty, n = {}, 0, 0
for b in records("txn_events"):
    for i in range(b["n"]):
        if b["role"][i] != role_want:
            continue
        n += 1
        key = b["method"][i] + " " + b["path"][i]
        if not b["path"][i]:
            empty += 1
        per.setdefault(key, []).append(b["dur_ns"][i])
print("all", n, empty)
for k, v in sorted(per.items()):
    v.sort()
    q = lambda p: v[int(p * (len(v) - 1) + 0.5)]
    # the values one rank either side of p50 and p99: another rank
    # convention (the sketch's) may pick a neighbour, and with ~200
    # samples of a bimodal latency neighbours can be 5 % apart
    nb = lambda p: (v[max(int(p * (len(v) - 1) + 0.5) - 1, 0)], v[min(int(p * (len(v) - 1) + 0.5) + 1, len(v) - 1)])
    print(k.replace(" ", "_"), len(v), q(0.5), q(0.99), *nb(0.5), *nb(0.99))
PY
"$NPREPORT" dump "$T/c.npr" | python3 "$T/ev.py" 1 "$E2E_ROOT/tests/tools" > "$T/c.ev"
"$NPREPORT" dump "$T/s.npr" | python3 "$T/ev.py" 2 "$E2E_ROOT/tests/tools" > "$T/s.ev"
echo "client-role events: $(tr '\n' ';' < "$T/c.ev")" >&2
echo "server-role events: $(tr '\n' ';' < "$T/s.ev")" >&2
read -r _ CN CEMPTY < <(grep '^all' "$T/c.ev")
read -r _ SN SEMPTY < <(grep '^all' "$T/s.ev")
check "client side: $((K + KS)) events (got ${CN:-0})" [ "${CN:-0}" -eq $((K + KS)) ]
check "server side: $((K + KS)) events (got ${SN:-0})" [ "${SN:-0}" -eq $((K + KS)) ]
check "client side: every event has its path (${CEMPTY:-?} empty)" [ "${CEMPTY:-1}" -eq 0 ]
check "server side: every event has its path (${SEMPTY:-?} empty)" [ "${SEMPTY:-1}" -eq 0 ]
for p in slow fast; do
	CREQ=$(cfig /$p requests) CP50=$(cfig /$p p50_ns) CP99=$(cfig /$p p99_ns)
	read -r _ n p50 p99 _ < <(grep "^GET_/$p " "$T/c.ev")
	check "client events /$p: ${n:-0} = client's $CREQ" [ "${n:-0}" -eq "$CREQ" ]
	# Per-request dominance: each recorded transaction (first send in
	# write() to the last receive in read()) lies inside the client's own
	# timing of that request, so at every rank recorded <= client. The
	# client's excess is a syscall's worth (50 us with interrupts) except
	# in the M requests during which it was preempted (involuntary context
	# switches; wakeup delays are inside both) and one the client cannot
	# see (vCPU steal, a softirq after read()'s hook: /slow p99 59.6 us
	# under the client's once, M 0), so recorded at rank k >= client at
	# rank k - M - 1, less 50 us (tx_httpmix prints loQ_ns). Before,
	# a fixed 5 % (p99: or 50 us) failed under load: /slow p99 87.0 ms
	# recorded vs the client's 97.7 ms at load 7.6.
	CPRE=$(cfig /$p preempted) CLO50=$(cfig /$p lo50_ns) CLO99=$(cfig /$p lo99_ns)
	check "client events /$p p50 ${p50:-0} in [client's ${CLO50:-?} - 50 us, ${CP50:-?}] ($CPRE of $CREQ preempted)" \
		awk -v v="${p50:-0}" -v l="${CLO50:-1e18}" -v h="${CP50:-0}" 'BEGIN{exit !(v >= l - 50000 && v <= h)}'
	check "client events /$p p99 ${p99:-0} in [client's ${CLO99:-?} - 50 us, ${CP99:-?}]" \
		awk -v v="${p99:-0}" -v l="${CLO99:-1e18}" -v h="${CP99:-0}" 'BEGIN{exit !(v >= l - 50000 && v <= h)}'
	read -r _ n p50 p99 _ < <(grep "^GET_/$p " "$T/s.ev")
	check "server events /$p: ${n:-0} = client's $CREQ" [ "${n:-0}" -eq "$CREQ" ]
	if [ $p = slow ]; then
		check "server events /slow p50 ${p50:-0} within 5 % of the ${SLOW_MS} ms delay" within "${p50:-0}" $SLOW_NS 5
	else
		check "server events /fast p50 ${p50:-0} below the client's $CP50" lt "${p50:-0}" "$CP50"
		check "server events /fast p50 ${p50:-0} far below the delay" lt "${p50:-0}" $((SLOW_NS / 10))
	fi
done

for p in slow/split fast/split; do
	CREQ=$(cfig /$p requests)
	for side in c s; do
		read -r _ n _ < <(grep "^GET_/$p " "$T/$side.ev")
		check "$side events /$p (request line split): ${n:-0} = client's $CREQ" [ "${n:-0}" -eq "$CREQ" ]
	done
done

# ---- analyzer: endpoint rows and series from the events ----
"$NPANALYZE" -o "$T/a.npa" --alias "$T/c.npr=cli" --alias "$T/s.npr=srv" "$T/c.npr" "$T/s.npr" \
	>"$T/sum.txt" 2>"$T/err.txt"
ARC=$?
check "npanalyze wrote the analysis (exit $ARC)" [ "$ARC" -le 1 -a -s "$T/a.npa" ]
check "npanalyze: no transaction-event warning" sh -c "! grep -q 'transaction events missing' '$T/sum.txt' '$T/err.txt'"
rm -rf "$T/csv"
"$NPREPORT" "$T/a.npa" --format csv -o "$T/csv" >/dev/null 2>&1
# ep HOST ROLE KEY COLUMN: a cell of the endpoint row
ep() {
	awk -F, -v h="$1" -v r="$2" -v k="$3" -v c="$4" '
		{sub(/\r$/,"")} NR==1{for(i=1;i<=NF;i++){if($i=="level")il=i;if($i=="key")ik=i;if($i=="host")ih=i;if($i=="role")ir=i;if($i==c)ic=i};next}
		$il=="endpoint" && $ih==h && $ir==r && $ik==k {print $ic; exit}' "$T/csv/transactions.csv"
}
grep '^endpoint' "$T/csv/transactions.csv" | cut -d, -f1-5,8-12 >&2
NOPATH=$(awk -F, -v s="$SRV:$PORT" '$1=="endpoint" && $2==s' "$T/csv/transactions.csv" | wc -l)
check "no endpoint row without a path ($NOPATH)" [ "$NOPATH" -eq 0 ]
for p in slow fast; do
	KEY="$SRV:$PORT GET /$p"
	CREQ=$(cfig /$p requests) CP50=$(cfig /$p p50_ns) CP99=$(cfig /$p p99_ns)
	n=$(ep cli client "$KEY" requests) p50=$(ep cli client "$KEY" p50_ns) p99=$(ep cli client "$KEY" p99_ns)
	check "cli endpoint /$p requests ${n:-0} = client's $CREQ" [ "${n:-0}" = "$CREQ" ]
	# npanalyze's figures come from the same events through a sketch
	# (<= 1 % error): within 1 % of the exact value at the rank or one
	# rank either side (the events themselves are checked against the
	# client above; two rank conventions on a bimodal sample once put
	# the sketch 4.6 % below the events' exact p50)
	read -r _ _ _ _ L50 H50 L99 H99 < <(grep "^GET_/$p " "$T/c.ev")
	check "cli endpoint /$p p50 ${p50:-0} in the events' p50 ranks [${L50:-?}, ${H50:-?}] +-1 %" \
		awk -v v="${p50:-0}" -v l="${L50:-1}" -v h="${H50:-0}" 'BEGIN{exit !(v >= l * 0.99 && v <= h * 1.01)}'
	check "cli endpoint /$p p99 ${p99:-0} in the events' p99 ranks [${L99:-?}, ${H99:-?}] +-1 %" \
		awk -v v="${p99:-0}" -v l="${L99:-1}" -v h="${H99:-0}" 'BEGIN{exit !(v >= l * 0.99 && v <= h * 1.01)}'
	check "cli endpoint /$p p50 ${p50:-0} within 10 % of client's $CP50" within "${p50:-0}" "$CP50" 10
	n=$(ep srv server "$KEY" requests) p50=$(ep srv server "$KEY" p50_ns)
	check "srv endpoint /$p requests ${n:-0} = client's $CREQ" [ "${n:-0}" = "$CREQ" ]
	if [ $p = slow ]; then
		check "srv endpoint /slow p50 ${p50:-0} within 5 % of the delay" within "${p50:-0}" $SLOW_NS 5
	else
		check "srv endpoint /fast p50 ${p50:-0} below the client's $CP50" lt "${p50:-0}" "$CP50"
	fi
	for hr in "cli|client" "srv|server"; do
		s=$(grep -c "^transactions,endpoint|$KEY|$hr,p50," "$T/csv/series.csv")
		check "series p50 of endpoint /$p on ${hr%|*} ($s samples)" gt "$s" 0
		# compare judges it: per-interval samples (column 9, base_n)
		s=$("$NPREPORT" compare "$T/a.npa" "$T/a.npa" --format csv 2>/dev/null |
			awk -F, -v k="endpoint|$KEY|$hr" '$1=="transactions" && $2==k && $3=="p99" {print $9; exit}')
		check "compare has p99 samples of endpoint /$p on ${hr%|*} (${s:-none})" ge "${s:-0}" 4
	done
done

# ---- the defaults: no send calls, the client's lines from the server's ----
# The same mix recorded by recorders at their defaults (no program on TCP
# send calls: the client's recorder reads no request line) and no
# clock-sync exchange (one boot: npanalyze aligns the two by it). The
# analysis names each client transaction from the server transaction of
# the same connection inside it: per-path client endpoint rows with the
# client's own counts, p50 within 10 % of its own.
bg "$NPREC" -q --port $PORT --netns $NSC -o "$T/dc.npr"; PC=$BG_PID
bg "$NPREC" -q --port $PORT --netns $NSS -o "$T/ds.npr"; PS=$BG_PID
wait_rec "$T/dc.npr" $PC && wait_rec "$T/ds.npr" $PS || echo "nprec (defaults) did not start" >&2
ip netns exec $NSC "${PIN_C[@]}" "$MIX" -h $SRV -p $PORT -n "$K" -c "$C" -u /slow,/fast > "$T/client2.txt"
check "defaults: every request answered" [ $? -eq 0 ]
sleep 1.2
kill -INT $PC $PS; wait $PC $PS
"$NPANALYZE" -o "$T/d.npa" --alias "$T/dc.npr=cli" --alias "$T/ds.npr=srv" "$T/dc.npr" "$T/ds.npr" \
	>"$T/dsum.txt" 2>"$T/derr.txt"
rm -rf "$T/csv"
"$NPREPORT" "$T/d.npa" --format csv -o "$T/csv" >/dev/null 2>&1
check "defaults: srv aligned to cli by their shared boot" grep -q "aligned to cli by their shared boot" "$T/csv/meta.csv"
grep '^endpoint' "$T/csv/transactions.csv" | cut -d, -f1-5,8-12 >&2
for p in slow fast; do
	KEY="$SRV:$PORT GET /$p"
	CREQ=$(sed -n "s|^path=/$p .*requests=\([0-9]*\).*|\1|p" "$T/client2.txt")
	CP50=$(sed -n "s|^path=/$p .*p50_ns=\([0-9]*\).*|\1|p" "$T/client2.txt")
	n=$(ep cli client "$KEY" requests) p50=$(ep cli client "$KEY" p50_ns)
	check "defaults: cli endpoint /$p requests ${n:-0} = client's ${CREQ:-?}" [ "${n:-0}" = "${CREQ:-x}" ]
	check "defaults: cli endpoint /$p p50 ${p50:-0} within 10 % of client's ${CP50:-?}" within "${p50:-0}" "${CP50:-1}" 10
done
e2e_finish
