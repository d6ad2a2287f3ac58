#!/bin/bash
# Per-program kernel cost of the transactions family (--no-flows --no-netcpu
# --no-threads): ns per run and runs of each txn BPF program, from the
# kernel's BPF run-time statistics, during
#   1. dd with 64-byte blocks /dev/zero -> /dev/null (BENCH_DD blocks: pure
#      read/write syscalls, no socket: what the syscall hooks cost every
#      process on the machine), then
#   2. BENCH_REQ keep-alive HTTP requests (tests/tools/tx_httpmix, 2
#      connections) to a Python http.server on loopback in a namespace.
# Statistics are switched on through a BPF_ENABLE_STATS file descriptor
# held for the run (kernel.bpf_stats_enabled is not touched, so a
# concurrent benchmark that set it keeps its setting); they add two clock
# reads per run. Not a test: it prints figures (docs/BENCHMARKS.md, section
# "transactions"). Env: NP_BUILD (build/), BENCH_DD (1000000), BENCH_REQ (3000).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
DD=${BENCH_DD:-1000000}
REQ=${BENCH_REQ:-3000}
TMP=$(mktemp -d /tmp/np-bench-txhook.XXXXXX)
NS=tx-hc$$
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns pids $NS 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del $NS 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$NP_BUILD/nprec" ] && [ -x "$NP_BUILD/tools/tx_httpmix" ] || { echo "$NP_BUILD: nprec/tx_httpmix not built" >&2; exit 1; }

python3 "$ROOT/bench/bpfstats_hold.py" "$TMP/stats.ready" & PIDS+=($!)
for _ in $(seq 50); do [ -e "$TMP/stats.ready" ] && break; sleep 0.1; done
[ -e "$TMP/stats.ready" ] || { echo "cannot enable BPF statistics" >&2; exit 1; }

ip netns add $NS && ip -n $NS link set lo up || exit 1
cat > "$TMP/srv.py" <<'PY'
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
ThreadingHTTPServer(("127.0.0.1", 8099), H).serve_forever()
PY
ip netns exec $NS python3 "$TMP/srv.py" & PIDS+=($!)
for _ in $(seq 50); do   # the server listening (the requests below would be refused)
	ip netns exec $NS bash -c 'exec 3<>/dev/tcp/127.0.0.1/8099' 2>/dev/null && break
	sleep 0.1
done
"$NP_BUILD/nprec" -q --no-flows --no-netcpu --no-threads -o "$TMP/h.npr" & P=$!; PIDS+=($P)
for _ in $(seq 100); do [ -s "$TMP/h.npr" ] && break; sleep 0.1; done
sleep 0.5

# this nprec's programs only: ids from the fdinfo of its open fds
ids() {
	for f in /proc/$P/fdinfo/*; do sed -n 's/^prog_id:[[:space:]]*//p' "$f"; done | sort -un
}
snap() {
	for id in $(ids); do
		bpftool prog show id "$id" 2>/dev/null | head -1 |
			sed -n 's/.* name \([^ ]*\) .*run_time_ns \([0-9]*\) run_cnt \([0-9]*\).*/\1 \2 \3/p'
	done | sort
}
report() {   # $1 before, $2 after, $3 label
	join "$1" "$2" | awk -v l="$3" '{dt=$4-$2; dn=$5-$3; if (dn > 0 && $1 ~ /^txn/)
		printf "%-22s %-18s %10d runs %8.0f ns/run\n", l, $1, dn, dt/dn}'
}
snap > "$TMP/s0"
dd if=/dev/zero of=/dev/null bs=64 count="$DD" 2>/dev/null
snap > "$TMP/s1"
ip netns exec $NS "$NP_BUILD/tools/tx_httpmix" -h 127.0.0.1 -p 8099 -n "$REQ" -c 2 -u /a,/b >/dev/null
snap > "$TMP/s2"
echo "build: $NP_BUILD ($(cd "$ROOT" && git log --oneline -1 | cut -c1-60))"
report "$TMP/s0" "$TMP/s1" "dd $DD x 64 B"
report "$TMP/s1" "$TMP/s2" "http $REQ requests"
kill -INT $P; wait $P 2>/dev/null
