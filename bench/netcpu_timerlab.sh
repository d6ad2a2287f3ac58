#!/bin/bash
# Where a cpu-clock timer's expiries fall in a socket call (docs/NETCPU.md
# j31d): the question behind the sampled socket time's excess on iperf3
# receive. Not nprec: a probe of its own (bench/netcpu_timerlab.bpf.c, .c,
# built here into a temp dir with clang, bpftool and cc against
# build/vmlinux.h) logs the iperf3 server's (or client's) socket calls,
# every softirq and the expiries of a cpu-clock timer at a fixed rate, and
# bench/netcpu_timerlab.py tells, at the expiries, how often the call, the
# softirqs inside it and the call less them (socket time, as netcpu
# defines it) are running, against their share of the time. veth iperf3,
# server pinned to CPU 1, client to CPU 0, as tests/e2e/rec_netcpu_dual.sh.
# Env: BENCH_T (s, 6); HZ (the timer's rate, 4999); TIMER_CPU (1: the
# server's CPU; 0: the client's, i.e. the receiver seen from the other
# CPU's expiries; both: a timer on each, as nprec has, and both views);
# SIDE (recv: the server's reads; send: the client's writes, on CPU 0);
# BENCH_HOG=1 (a busy loop pinned to each CPU); BENCH_NS / BENCH_NET
# (names, /24); NP_BUILD (for vmlinux.h); TL_RESTART_US=N (restart the
# timers every N us at a random period, 0.5-1.5 x); TL_PIN=CPU (pin the
# probe process, which does those restarts); KEEP=DIR (keep the timeline
# there); IPERF_ARGS (more iperf3 client options, e.g. "-C cubic": the
# congestion control, bbr by default here, whose pacing timers matter);
# TL_CC (the namespaces' default congestion control, e.g. cubic: no BBR
# socket, so no TCP pacing timers).
# Not a test: figures for docs/NETCPU.md.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
T=${BENCH_T:-6} HZ=${HZ:-4999} TCPU=${TIMER_CPU:-1} SIDE=${SIDE:-recv}
BNS=${BENCH_NS:-nctl}
NSA=$BNS-tl-a NSB=$BNS-tl-b NET=${BENCH_NET:-10.78.21} IPA=$NET.1 IPB=$NET.2
TMP=$(mktemp -d /tmp/np-bench-timerlab.XXXXXX)
. "$ROOT/bench/txn_lib.sh"   # txn_traps: PIDS, namespaces and $TMP cleaned on exit
txn_traps
[ "$(nproc)" -ge 2 ] || { echo "netcpu_timerlab.sh: needs 2 CPUs" >&2; exit 1; }
for t in iperf3 clang bpftool cc; do
	command -v $t >/dev/null || { echo "netcpu_timerlab.sh: $t missing" >&2; exit 1; }
done
[ -f "$NP_BUILD/vmlinux.h" ] || { echo "netcpu_timerlab.sh: $NP_BUILD/vmlinux.h missing (make)" >&2; exit 1; }
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$NP_BUILD" -c "$ROOT/bench/netcpu_timerlab.bpf.c" \
	-o "$TMP/timerlab.bpf.o" && bpftool gen skeleton "$TMP/timerlab.bpf.o" name timerlab_bpf \
	> "$TMP/timerlab.skel.h" && cc -O2 -I"$TMP" -o "$TMP/timerlab" "$ROOT/bench/netcpu_timerlab.c" \
	-lbpf -lelf -lz || exit 1

for ns in $NSA $NSB; do ip netns del $ns 2>/dev/null; ip netns add $ns; ip -n $ns link set lo up; done
ip link add ${BNS}tla0 netns $NSA type veth peer name ${BNS}tlb0 netns $NSB
ip -n $NSA addr add $IPA/24 dev ${BNS}tla0; ip -n $NSB addr add $IPB/24 dev ${BNS}tlb0
ip -n $NSA link set ${BNS}tla0 up; ip -n $NSB link set ${BNS}tlb0 up
if [ -n "${TL_CC:-}" ]; then
	for ns in $NSA $NSB; do ip netns exec $ns sysctl -qw net.ipv4.tcp_congestion_control="$TL_CC" || exit 1; done
fi
ip netns exec $NSB taskset -c 1 iperf3 -s -B $IPB -p 5312 >/dev/null 2>&1 & SRV=$!
PIDS+=("$SRV")
sleep 1
hogs=()
if [ "${BENCH_HOG:-0}" = 1 ]; then
	for c in 0 1; do taskset -c $c sh -c 'while :; do :; done' & hogs+=($!); done
	PIDS+=("${hogs[@]}")
fi
# shellcheck disable=SC2086
ip netns exec $NSA taskset -c 0 iperf3 -c $IPB -p 5312 -t "$T" ${IPERF_ARGS:-} >/dev/null 2>&1 & CLI=$!
PIDS+=("$CLI")
HZ0=0 HZ1=0
case $TCPU in 0) HZ0=$HZ ;; 1) HZ1=$HZ ;; *) HZ0=$HZ HZ1=$HZ ;; esac
if [ "$SIDE" = send ]; then set -- $CLI 1 1 0; else set -- $SRV 0 0 1; fi
${TL_PIN:+taskset -c $TL_PIN} "$TMP/timerlab" "$1" "$2" "$3" $HZ0 $HZ1 "$TMP/tl.bin" & TL=$!
PIDS+=("$TL")
wait $CLI
kill -INT $TL; wait $TL
[ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}"
echo "# $(date -u +%FT%TZ) $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), T=${T}s, HZ=$HZ on CPU $TCPU, SIDE=$SIDE (calls on CPU $4), BENCH_HOG=${BENCH_HOG:-0}${TL_RESTART_US:+, TL_RESTART_US=$TL_RESTART_US}${IPERF_ARGS:+, IPERF_ARGS=$IPERF_ARGS}, cc $(ip netns exec $NSA sysctl -n net.ipv4.tcp_congestion_control)"
for c in 0 1; do
	[ "$TCPU" = $c ] || [ "$TCPU" = both ] && python3 "$ROOT/bench/netcpu_timerlab.py" "$TMP/tl.bin" $c "$4"
done
[ -n "${KEEP:-}" ] && cp "$TMP/tl.bin" "$KEEP/"
exit 0
