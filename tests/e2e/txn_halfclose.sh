#!/bin/bash
# Clients of HTTP/1.0 connections. socat writes an HTTP/1.0 request, shuts its
# sending side down at its input's end (shutdown(SHUT_WR): the FIN goes out
# behind the request) and then reads nginx's response until nginx closes.
# At the defaults txn reads a client's request from what its socket wrote
# (tcp_sock.write_seq) at the response's receive; the FIN takes a sequence
# number of its own there, which counted as a request byte (N requests of
# L bytes recorded N x (L + 1)); and the server's FIN often takes the
# connection to CLOSE before socat reads the response: the connection
# ended there, the read began a new one and the transaction was lost (10
# of 20, with and without send calls). Ground truth: the request's length, which
# this script wrote, and the bytes socat printed; a recorder with
# --send-calls (the bytes of the send calls) and the server's recording
# (its receives) as references. Then curl -0, which does not half-close:
# nginx closes first, the client reads the response in CLOSE_WAIT.
# flows, on the same connections: at the defaults a TCP flow's bytes come
# from its socket (read: bytes_received less unread, less a FIN read
# past), also what a client reads after its connection reached CLOSE; the
# owners from connect() (clients) and the first receive (nginx).
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init txn_halfclose
NSA=hc-a$$ NSB=hc-b$$
SUB=$(( $$ % 250 + 1 ))
e2e_need_root
command -v nginx >/dev/null || e2e_skip "nginx not installed"
command -v socat >/dev/null || e2e_skip "socat not installed"
[ -x "$NPREC" ] || e2e_skip "nprec not built"
NPR="python3 $E2E_ROOT/tests/tools/rc_npr.py"
N=20
IPB=10.78.$SUB.2

ns_add $NSA && ns_add $NSB || e2e_skip "cannot create namespaces"
veth_pair $NSA hca0 10.78.$SUB.1/24 $NSB hcb0 $IPB/24

mkdir -p "$E2E_TMP/www"
chmod 755 "$E2E_TMP" "$E2E_TMP/www"   # nginx workers run as nobody
head -c 1000 /dev/zero | tr '\0' y > "$E2E_TMP/www/page.txt"
nginx_start $NSB "$E2E_TMP" "server { listen $IPB:8080; root $E2E_TMP/www; }" 64
ns_wait_listen $NSB 8080 || e2e_skip "nginx did not start"

# client_socat, client_curl: one request each, the response to stdout
REQ='GET /page.txt HTTP/1.0\r\nHost: np-test\r\nUser-Agent: halfclose\r\n\r\n'
# -t 5: socat's wait for the response after its own shutdown
client_socat() { printf "$REQ" | ip netns exec $NSA socat -t 5 - TCP:$IPB:8080; }
client_curl() { ip netns exec $NSA curl -s -0 -i -H "User-Agent: halfclose" http://$IPB:8080/page.txt; }
CURLREQ="GET /page.txt HTTP/1.0\r\nHost: $IPB:8080\r\nAccept: */*\r\nUser-Agent: halfclose\r\n\r\n"

# round NAME L: N requests by client_NAME of L bytes each, recorded at
# the defaults (d: no send program), with --send-calls (s) and on the
# server (b)
round() {
	local name=$1 L=$2 f B GOT=0 OK=0
	rm -f "$E2E_TMP"/[dsb].npr
	bg "$NPREC" -q --txn-events all --no-threads --netns $NSA -o "$E2E_TMP/d.npr"; PD=$BG_PID
	bg "$NPREC" -q --send-calls --txn-events all --no-flows --no-threads --netns $NSA -o "$E2E_TMP/s.npr"; PS=$BG_PID
	bg "$NPREC" -q --txn-events all --no-threads --netns $NSB -o "$E2E_TMP/b.npr"; PB=$BG_PID
	for f in d:$PD s:$PS b:$PB; do wait_rec "$E2E_TMP/${f%%:*}.npr" "${f#*:}" || echo "nprec (${f%%:*}) did not start" >&2; done
	for _ in $(seq $N); do
		B=$(client_$name | wc -c)
		GOT=$((GOT + B))
		[ "$B" -gt 1000 ] && OK=$((OK + 1))
	done
	check "$name read $N responses with the 1000-byte page ($OK)" [ "$OK" -eq $N ]
	sleep 1.2   # a snapshot after the last close
	kill -INT $PD $PS $PB; wait $PD; RD=$?; wait $PS; RS=$?; wait $PB; RB=$?
	check "$name: nprec exit 0 (defaults $RD, --send-calls $RS, server $RB)" [ "$RD$RS$RB" = 000 ]
	# role count events http p50 p99 bytes_req bytes_resp sketch_count paths
	for f in d s b; do "$NPREPORT" dump "$E2E_TMP/$f.npr" | $NPR txn > "$E2E_TMP/$f.txn"; echo "$name $f: $(cut -c1-100 "$E2E_TMP/$f.txn")" >&2; done
	read -r _ DC _ _ _ _ DREQ DRESP _ < <(grep '^client' "$E2E_TMP/d.txn")
	read -r _ SC _ _ _ _ SREQ SRESP _ < <(grep '^client' "$E2E_TMP/s.txn")
	read -r _ BC _ _ _ _ BREQ _ _ < <(grep '^server' "$E2E_TMP/b.txn")
	local EXP=$((N * L))
	check "$name, defaults: $N client transactions (${DC:-none})" [ "${DC:-0}" -eq $N ]
	check "$name, defaults: request bytes = $N x $L = $EXP, no FIN among them (${DREQ:-none})" [ "${DREQ:-0}" -eq $EXP ]
	check "$name, defaults: response bytes = what the client printed, $GOT (${DRESP:-none})" [ "${DRESP:-0}" -eq $GOT ]
	check "$name, --send-calls: $N client transactions, $EXP request bytes (${SC:-none}, ${SREQ:-none})" \
		[ "${SC:-0}" -eq $N -a "${SREQ:-0}" -eq $EXP ]
	check "$name, --send-calls: response bytes $GOT (${SRESP:-none})" [ "${SRESP:-0}" -eq $GOT ]
	check "$name, server: $N transactions, $EXP request bytes (${BC:-none}, ${BREQ:-none})" \
		[ "${BC:-0}" -eq $N -a "${BREQ:-0}" -eq $EXP ]
	# connections tx rx owners
	local FC FT FR FO SC2 ST SR SO
	read -r FC FT FR FO < <("$NPREPORT" dump "$E2E_TMP/d.npr" | $NPR flowsum 8080)
	read -r SC2 ST SR SO < <("$NPREPORT" dump "$E2E_TMP/b.npr" | $NPR flowsum 8080)
	echo "$name flows: client $FC $FT $FR $FO; server $SC2 $ST $SR $SO" >&2
	check "$name, client flows: $N connections, sent $EXP, read $GOT ($FC, ${FT:-none}, ${FR:-none})" \
		[ "${FC:-0}" -eq $N -a "${FT:-0}" -eq $EXP -a "${FR:-0}" -eq $GOT ]
	check "$name, server flows: $N connections, read $EXP, sent $GOT ($SC2, ${SR:-none}, ${ST:-none})" \
		[ "${SC2:-0}" -eq $N -a "${SR:-0}" -eq $EXP -a "${ST:-0}" -eq $GOT ]
	check "$name, flow owners: $name:$N on the client ($FO), nginx:$N on the server ($SO)" \
		[ "$FO" = "$name:$N" -a "$SO" = "nginx:$N" ]
}

# socat shuts its side down after the request: the half-close
round socat "$(printf "$REQ" | wc -c)"
# curl -0 keeps its side open; nginx closes first (HTTP/1.0)
round curl "$(printf "$CURLREQ" | wc -c)"
e2e_finish
