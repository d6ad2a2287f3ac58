#!/usr/bin/env bash
# One run of the compare scenario (bench/compare.sh, tests/e2e/report_compare_real.sh):
# a Python HTTP server in namespace cr<pid>-s serves /slow (sleeps CMP_SLOW_MS,
# default 50) and /fast (sleeps CMP_FAST_MS, default 2) on keep-alive
# connections; tests/tools/tx_httpmix in cr<pid>-c sends CMP_K requests
# (default 1600) over CMP_C connections (default 8) alternating the two paths;
# iptables drops CMP_LOSS (default 0) of the server's packets both ways. nprec records the server namespace (1 s intervals);
# npanalyze writes OUT.npa with the server named "srv". Addresses are fixed
# (10.93.1.1 client, 10.93.1.2:8090 server) so that reruns share their keys.
#   usage: compare_run.sh OUT.npa        exit 0 ok, 1 the run failed
. "$(dirname "$0")/../tests/lib/e2e.sh"
e2e_init compare_run
OUT=$1
SLOW=${CMP_SLOW_MS:-50} FAST=${CMP_FAST_MS:-2} LOSS=${CMP_LOSS:-0}
K=${CMP_K:-300} C=${CMP_C:-2} P=${CMP_P:-4}
MIX=$NP_BUILD/tools/tx_httpmix
NSC=cr$$-c NSS=cr$$-s SRV=10.93.1.2 PORT=8090 T=$E2E_TMP
fail() { echo "compare_run: $*" >&2; exit 1; }
[ -x "$MIX" ] && [ -x "$NPREC" ] && [ -x "$NPANALYZE" ] || fail "build nprec, npanalyze and tools first"
ns_add $NSC && ns_add $NSS || fail "cannot create namespaces"
veth_pair $NSC crc$$ 10.93.1.1/24 $NSS crs$$ $SRV/24 || fail "cannot create veth"
if [ "$LOSS" != 0 ]; then
	ip netns exec $NSS iptables -A OUTPUT -p tcp --sport $PORT \
		-m statistic --mode random --probability "$LOSS" -j DROP || fail "iptables"
	ip netns exec $NSS iptables -A INPUT -p tcp --dport $PORT \
		-m statistic --mode random --probability "$LOSS" -j DROP || fail "iptables"
fi
cat > "$T/srv.py" <<'PY'
import socket, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
addr, port, slow_ms, fast_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])

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
        elif self.path.startswith("/fast"):
            time.sleep(fast_ms / 1000.0)
        else:
            self.send_error(404)
            return
        body = b"x" * 200
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

ThreadingHTTPServer((addr, port), H).serve_forever()
PY
bg ip netns exec $NSS python3 "$T/srv.py" $SRV $PORT "$SLOW" "$FAST"
for _ in $(seq 50); do ip netns exec $NSS ss -ltn | grep -q "$SRV:$PORT" && break; sleep 0.1; done
bg "$NPREC" -q -I "${CMP_INTERVAL:-1s}" --port $PORT --netns $NSS -o "$T/s.npr"; PS=$BG_PID
for _ in $(seq 100); do [ -s "$T/s.npr" ] && break; sleep 0.1; done
# tx_httpmix has one request in flight at a time: CMP_P of them in parallel
pids=()
for i in $(seq "$P"); do
	ip netns exec $NSC "$MIX" -h $SRV -p $PORT -n "$K" -c "$C" -u /slow,/fast > "$T/client$i.txt" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "client: requests failed"; done
sleep 1.2   # one snapshot interval: the last transactions are in TXN_STATS
kill -INT $PS; wait $PS || fail "nprec exited $?"
"$NPANALYZE" -q -o "$OUT" --alias "$T/s.npr=srv" "$T/s.npr" > "$T/sum.txt" 2>&1
[ $? -le 1 ] && [ -s "$OUT" ] || { cat "$T/sum.txt" >&2; fail "npanalyze failed"; }
cat "$T"/client*.txt > "$OUT.client.txt"
exit 0
