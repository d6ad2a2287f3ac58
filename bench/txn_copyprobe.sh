#!/bin/bash
# Where the TCP socket's cached clock (tcp_clock_cache: bpf/txn.bpf.c
# sk_clock) stands when a receive returns, against the receive's last copy
# to the user, on rec_txn's load: tests/tools/rc_httpc (BENCH_K requests
# over 4 keep-alive connections) reading a 128 KiB file (BENCH_FILE_KIB)
# from nginx over veth, its reads probed by bench/txn_copyprobe.bpf.c
# (tp_btf on tcp:tcp_rcv_space_adjust, sock:sock_recv_length and
# net:net_dev_queue; built here with clang and bpftool into a temporary
# directory). Answers whether the cache stamps a read's last copy (on a
# kernel that refreshes it in tcp_rcv_space_adjust, it lies just after
# the copy in every read) and how far the read's return is from it.
# NP_BUILD=<build dir> also runs rec_txn's three recorders of that build
# during the load (their programs on the hook lie between the copy and
# the return).
# Env: NP_BUILD (build/), RECORDERS=1, BENCH_K (5000), BENCH_FILE_KIB (128), BENCH_NS (txcp). Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NSA=${BENCH_NS:-txcp}-a NSB=${BENCH_NS:-txcp}-b
IPA=10.77.46.1 IPB=10.77.46.2
TMP=$(mktemp -d /tmp/np-bench-txcp.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
[ -s "$NP_BUILD/vmlinux.h" ] || { echo "$NP_BUILD/vmlinux.h missing (make)" >&2; exit 1; }
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -mcpu=v3 -Wall -Werror -I"$NP_BUILD" \
	-c "$ROOT/bench/txn_copyprobe.bpf.c" -o "$TMP/txn_copyprobe.bpf.o" &&
	bpftool gen skeleton "$TMP/txn_copyprobe.bpf.o" > "$TMP/txn_copyprobe.skel.h" &&
	cc -O2 -Wall -Wextra -Werror -I"$TMP" -o "$TMP/probe" "$ROOT/bench/txn_copyprobe.c" -lbpf -lelf || exit 1
txn_setup_nginx "${BENCH_NS:-txcp}"
head -c $(( ${BENCH_FILE_KIB:-128} * 1024 )) /dev/zero | tr '\0' x > "$TMP/www/big.html"
for _ in $(seq 50); do ip netns exec $NSB ss -ltn | grep -q "$IPB:8080" && break; sleep 0.1; done
if [ -n "${RECORDERS:-}" ]; then
	"$NP_BUILD/nprec" -q --txn-events all --netns $NSA -o "$TMP/a.npr" & PIDS+=($!)
	"$NP_BUILD/nprec" -q --txn-events all --netns $NSB -o "$TMP/b.npr" & PIDS+=($!)
	NPREC_TEST_TXN_SENDMSG=1 "$NP_BUILD/nprec" -q --txn-events all --no-flows --no-netcpu --no-threads \
		--netns $NSA -o "$TMP/sm.npr" & PIDS+=($!)
	for f in a b sm; do for _ in $(seq 100); do [ -s "$TMP/$f.npr" ] && break; sleep 0.1; done; done
	sleep 1
fi
mkfifo "$TMP/go"
# the client waits for the probe: its pid is the probe's filter
ip netns exec $NSA bash -c "read < $TMP/go; exec $NP_BUILD/tools/rc_httpc -h $IPB -p 8080 -n ${BENCH_K:-5000} -c 4 -u /big.html" &
C=$!; PIDS+=("$C")
"$TMP/probe" $C > "$TMP/probe.out" & P=$!; PIDS+=("$P")
for _ in $(seq 100); do grep -q ready "$TMP/probe.out" && break; sleep 0.1; done
echo "txn_copyprobe: kernel $(uname -r), ${BENCH_FILE_KIB:-128} KiB, recorders ${RECORDERS:-none}; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo go > "$TMP/go"
wait $C
kill -INT $P; wait $P
grep -v '^ready' "$TMP/probe.out"
