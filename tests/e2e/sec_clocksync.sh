#!/usr/bin/env bash
# The authenticated clock-sync exchange (issue 25, docs/CLOCKSYNC-EXCHANGE.md).
# In one namespace, a listener and a client nprec share a --sync-key while
# tests/tools/cs_attack.py (Python's hmac/hashlib, written from the doc)
# plays a stranger, a forger with the wrong key, the issue's five forged
# reports and a replayer of an honest report. Ground truth is what the script
# sent: the listener must answer only the keyed requests, store only the one
# honest exchange and count every refused datagram by its reason. Without a
# key the exchange still works, and npanalyze marks the pair unauthenticated.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init sec_clocksync
e2e_need_root
[ -x "$NPREC" ] && [ -x "$NPANALYZE" ] || e2e_skip "build nprec and npanalyze first"
T=$E2E_TMP
NS=secsync-ns
ATTACK="python3 $E2E_ROOT/tests/tools/cs_attack.py"
LIGHT="--no-txn --no-flows --no-netcpu --no-threads -q"
ns_add $NS || e2e_skip "cannot create a network namespace"
ip -n $NS addr add 10.251.0.1/32 dev lo

head -c 32 /dev/urandom > "$T/key"
chmod 644 "$T/key"
ip netns exec $NS "$NPREC" -o "$T/x.npr" -d 1 $LIGHT --sync-listen 7831 --sync-key "$T/key" 2>"$T/mode.err"
rc=$?
check "a group/world-readable key is refused (exit $rc, usage)" test $rc -eq 2
check "the refusal says why" grep -q "too open" "$T/mode.err"
chmod 600 "$T/key"

# sums of the listener's NP_REC_SYNC records: refusal counters (totals since
# start, so the last record's), rows per peer id
sync_facts() {
	"$NPREPORT" dump --type sync "$1" | python3 -c '
import json, sys
rows, last = [], {}
for line in sys.stdin:
    b = json.loads(line)["body"]
    last = b
    for i in range(b["n"]):
        rows.append((b["role"][i], b["peer_id"][i], b["t1"][i], b.get("authenticated", [False] * b["n"])[i]))
for k, v in last.get("rejected", {}).items():
    print("rejected_%s=%d" % (k, v))
print("auth=%s" % last.get("auth", "absent"))
print("rows=%d" % len(rows))
print("rows_forger=%d" % sum(1 for r in rows if r[1] == 0x1111 or r[2] == 10**12))
print("rows_python=%d" % sum(1 for r in rows if r[1] == 0x2222))
print("python_t1=%d" % next((r[2] for r in rows if r[1] == 0x2222), 0))
print("rows_unauth=%d" % sum(1 for r in rows if not r[3]))'
}
val() { awk -F= -v k="$1" '$1==k{print $2}' "$2"; }
# csv_ends FILE SUFFIX: a row ends with SUFFIX (the CSV has CRLF line ends)
csv_ends() { tr -d '\r' < "$1" | grep -q -- "$2\$"; }

# ---- keyed ----
bg ip netns exec $NS "$NPREC" -o "$T/lk.npr" -d 9 $LIGHT --sync-listen 7831 --sync-key "$T/key" \
	--sync-bind 127.0.0.1
LK=$BG_PID
ns_wait_listen $NS 7831 udp   # the client's first exchanges need the listener
bg ip netns exec $NS "$NPREC" -o "$T/ck.npr" -d 6 $LIGHT --sync-peer 127.0.0.1:7831 --sync-key "$T/key"
CK=$BG_PID
ip netns exec $NS $ATTACK 127.0.0.1 7831 "$T/key" keyed > "$T/attack.txt"
cat "$T/attack.txt" >&2
wait $CK; check "keyed client exited 0" test $? -eq 0
wait $LK; check "keyed listener exited 0" test $? -eq 0
sync_facts "$T/lk.npr" > "$T/lk.txt"; cat "$T/lk.txt" >&2
check "listener answered the keyed probe" test "$(val listener_up "$T/attack.txt")" = 1
check "a stranger's 5 requests got no reply" test "$(val stranger_replies "$T/attack.txt")" = 0
check "5 requests with the wrong key got no reply" test "$(val wrongkey_replies "$T/attack.txt")" = 0
check "the honest keyed request got one verified reply" test "$(val honest_replies "$T/attack.txt")" = 1
check "refused without MAC: 5 requests + 5 forged reports" test "$(val rejected_unauthenticated "$T/lk.txt")" = 10
check "refused for a bad MAC: 5 requests + 5 reports" test "$(val rejected_bad_mac "$T/lk.txt")" = 10
check "2 keyed reports of requests never answered refused" test "$(val rejected_unmatched "$T/lk.txt")" = 2
check "the honest report replayed 3 times: 3 refused" test "$(val rejected_replayed "$T/lk.txt")" = 3
check "no forged exchange stored (sender 0x1111, T1 = 10^12)" test "$(val rows_forger "$T/lk.txt")" = 0
check "the honest exchange stored once" test "$(val rows_python "$T/lk.txt")" = 1
check "  with the T1 the script sent" test "$(val python_t1 "$T/lk.txt")" = "$(val honest_t1 "$T/attack.txt")"
check "every stored exchange authenticated" test "$(val rows_unauth "$T/lk.txt")" = 0
check "the record says hmac-sha512-256" test "$(val auth "$T/lk.txt")" = hmac-sha512-256
sync_facts "$T/ck.npr" > "$T/ck.txt"
check "client stored >= 100 authenticated exchanges ($(val rows "$T/ck.txt"))" \
	test "$(val rows "$T/ck.txt")" -ge 100 -a "$(val rows_unauth "$T/ck.txt")" = 0
"$NPANALYZE" "$T/ck.npr" "$T/lk.npr" -o "$T/k.npa" >"$T/k.err" 2>&1
"$NPREPORT" "$T/k.npa" --format csv -o "$T/kcsv" 2>/dev/null
check "clock_pairs: authenticated" csv_ends "$T/kcsv/clock_pairs.csv" ,authenticated

# ---- without a key (loopback, namespaces): still works, marked ----
bg ip netns exec $NS "$NPREC" -o "$T/lp.npr" -d 7 $LIGHT --sync-listen 7833 --sync-bind 127.0.0.1
LP=$BG_PID
ns_wait_listen $NS 7833 udp
bg ip netns exec $NS "$NPREC" -o "$T/cp.npr" -d 4 $LIGHT --sync-peer 127.0.0.1:7833
CP=$BG_PID
ip netns exec $NS $ATTACK 127.0.0.1 7833 - plain > "$T/attack2.txt"
ip netns exec $NS python3 - 10.251.0.1 7833 > "$T/bind.txt" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1.0)
s.sendto(struct.pack("<IBBBBIIQQQQQ", 0x4E505359, 1, 2, 0, 0, 1, 0, 5, 1, 0, 0, 0) + bytes(32),
         (sys.argv[1], int(sys.argv[2])))
try: s.recv(2048); print("reply")
except OSError: print("none")
PY
wait $CP; check "plain client exited 0" test $? -eq 0
wait $LP; check "plain listener exited 0" test $? -eq 0
sync_facts "$T/lp.npr" > "$T/lp.txt"; cat "$T/lp.txt" >&2
check "--sync-bind 127.0.0.1: nothing answers on 10.251.0.1" test "$(cat "$T/bind.txt")" = none
check "without a key a stranger is answered (5)" test "$(val stranger_replies "$T/attack2.txt")" = 5
check "forged reports still refused: never requested (12)" test "$(val rejected_unmatched "$T/lp.txt")" = 12
check "replays still refused (3)" test "$(val rejected_replayed "$T/lp.txt")" = 3
check "no forged exchange stored" test "$(val rows_forger "$T/lp.txt")" = 0
check "the record says auth none" test "$(val auth "$T/lp.txt")" = none
check "every stored exchange unauthenticated" test "$(val rows_unauth "$T/lp.txt")" = "$(val rows "$T/lp.txt")"
"$NPANALYZE" "$T/cp.npr" "$T/lp.npr" -o "$T/p.npa" >"$T/p.err" 2>&1
"$NPREPORT" "$T/p.npa" --format csv -o "$T/pcsv" 2>/dev/null
check "clock table marks the pair unauthenticated" csv_ends "$T/pcsv/clock.csv" ,unauthenticated
check "clock_pairs marks it unauthenticated" csv_ends "$T/pcsv/clock_pairs.csv" ,unauthenticated
check "npanalyze says so in the findings" grep -q "^finding .*sync exchanges unauthenticated" "$T/p.err"
check "the keyed pair has no such finding" bash -c "! grep -q '^finding .*unauthenticated' '$T/k.err'"
e2e_finish
