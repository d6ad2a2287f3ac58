#!/bin/bash
# bench/hookcost.sh: ns per run of the recorder's programs on the socket
# hooks (hub_send / hub_recv and whatever else the recording loads), for
# several recorder configurations measured in the same run, interleaved:
# per repetition every mode once (the order reversed every other
# repetition), each mode a fresh nprec over `iperf3 -t T` then `wrk -t1 -c8
# -dT` against nginx serving 4 KiB, over veth between two namespaces
# (endpoints pinned as in bench/record.sh). Run time from the kernel's BPF
# statistics, on while a BPF_ENABLE_STATS fd is held (refcounted:
# kernel.bpf_stats_enabled is not touched; they add two clock reads to
# every run, the same in every mode). A hub head's run time includes the
# members it tail-calls. Only this nprec's programs are read (ids from its
# fdinfo), but the hooks fire for every socket on the machine: other load
# is in the figures, so compare modes of the same run only.
#
# HC_MODES: one mode per line, "LABEL BUILD [VAR=VALUE ...] [nprec args]"
# (VAR=VALUE words go to the environment), e.g.
#   def   build
#   notxn build --no-txn
#   nohub build NPREC_TEST_NO_HUB=1
# Env: NP_BUILD (build/: the default single mode), BENCH_T (3 s), REPS (4),
# BENCH_NS (hc). Prints one line per mode, phase and program: the median
# ns/run over the repetitions [min, max] and the median runs. Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
T=${BENCH_T:-3}
REPS=${REPS:-4}
NSA=${BENCH_NS:-hc}-a NSB=${BENCH_NS:-hc}-b
IPA=10.77.31.1 IPB=10.77.31.2
MODES_TXT=${HC_MODES:-"def $NP_BUILD"}
PHASES=${HC_PHASES:-iperf3 wrk rr}   # also: paced (wrk with PACE_MS, 1, between requests), cold (below)
TMP=$(mktemp -d /tmp/np-bench-hookcost.XXXXXX)
REC=
. "$ROOT/bench/txn_lib.sh"
txn_traps   # PIDS killed, namespaces and $TMP removed on exit; needs root
for t in iperf3 wrk nginx taskset bpftool python3; do
	command -v $t >/dev/null || { echo "hookcost: $t missing (make deps)" >&2; exit 1; }
done

mapfile -t MODES < <(printf '%s\n' "$MODES_TXT" | sed '/^[[:space:]]*$/d')
for m in "${MODES[@]}"; do
	read -r _ b _ <<< "$m"
	[ -x "$b/nprec" ] || { echo "hookcost: $b/nprec not built" >&2; exit 1; }
done

python3 "$ROOT/bench/bpfstats_hold.py" "$TMP/stats.ready" & PIDS+=($!)
for _ in $(seq 50); do [ -e "$TMP/stats.ready" ] && break; sleep 0.1; done
[ -e "$TMP/stats.ready" ] || { echo "hookcost: cannot enable BPF statistics" >&2; exit 1; }

# namespaces, veth, nginx in B (bench/txn_lib.sh); then as bench/record.sh:
# data to CPU 0, ACKs to CPU 1 (no reordering), the nginx worker on CPU 1
txn_setup_nginx hcv
ip netns exec $NSB sh -c "echo 1 > /sys/class/net/hcvb0/queues/rx-0/rps_cpus"
ip netns exec $NSA sh -c "echo 2 > /sys/class/net/hcva0/queues/rx-0/rps_cpus"
ip netns exec $NSB iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
# rr: HC_RR request/response pairs (100 B request, 4 KiB response) on one
# loopback TCP connection, one thread pinned to CPU 0: four socket calls a
# pair, each one a full program run, no softirq in the middle of the
# program and no other host's traffic in the connection's figures
cat > "$TMP/rr.py" <<'PY'
import socket, sys
n = int(sys.argv[1])
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1)
c = socket.create_connection(ls.getsockname()); s, _ = ls.accept()
req, resp = b"q" * 100, b"r" * 4096
for _ in range(n):
    c.sendall(req)
    got = 0
    while got < len(req): got += len(s.recv(65536))
    s.sendall(resp)
    got = 0
    while got < len(resp): got += len(c.recv(65536))
PY
# cold: rr's calls with the cache made cold in between, as an application's
# own copies make it under load, but reproducibly: HC_COLD rounds (20000) of
# a 100 B send and its recv on one of HC_NCONN (16) loopback connections in
# turn, a HC_SWEEP_KIB (4096) KiB memory walk before each, pinned to CPU 0
cat > "$TMP/cold.c" <<'C'
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), sweep = atoi(argv[2]) * 1024, nc = atoi(argv[3]), one = 1, c[256], s[256];
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (nc < 1 || nc > 256 || bind(ls, (void *)&a, sizeof(a)) || listen(ls, 256) || getsockname(ls, (void *)&a, &al))
		return 1;
	for (int i = 0; i < nc; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c[i], (void *)&a, sizeof(a)) || (s[i] = accept(ls, NULL, NULL)) < 0)
			return 1;
	}
	volatile char *buf = calloc(1, (size_t)sweep + 64);
	char msg[100] = { 0 }, in[200];
	for (int r = 0; r < n; r++) {
		for (int k = 0; k < sweep; k += 64)
			buf[k]++;
		if (send(c[r % nc], msg, sizeof(msg), 0) != sizeof(msg) || recv(s[r % nc], in, sizeof(in), 0) <= 0)
			return 2;
	}
	return 0;
}
C
cc -O2 -o "$TMP/cold" "$TMP/cold.c" || exit 1
echo "function delay() return ${PACE_MS:-1} end" > "$TMP/pace.lua"
sleep 1
for p in $(pgrep -P "$NGM"); do taskset -pc 1 "$p" >/dev/null; done

# until nprec set its SIGHUP and SIGUSR1 handlers (attached, output open)
rec_wait_ready() {
	local i mask
	for i in $(seq 150); do
		[ -e /proc/$REC ] || return 1
		mask=$(awk '/^SigCgt:/ {print $2}' /proc/$REC/status 2>/dev/null)
		[ -n "$mask" ] && (( (16#$mask & 0x201) == 0x201 )) && return 0
		sleep 0.1
	done
	return 1
}
# The signal handlers are set before every family has loaded (seen here:
# txn's programs appeared seconds after, under load): until the set of
# nprec's programs is the same for 1 s, at most 30 s.
rec_wait_loaded() {
	local i same=0 prev= cur
	for i in $(seq 120); do
		[ -e /proc/$REC ] || return 1
		cur=$(grep -h '^prog_id:' /proc/"$REC"/fdinfo/* 2>/dev/null | sort -u | tr -d '\n')
		if [ -n "$cur" ] && [ "$cur" = "$prev" ]; then
			same=$((same + 1)); (( same >= 4 )) && return 0
		else
			same=0
		fi
		prev=$cur
		sleep 0.25
	done
	return 1
}
# "name run_time_ns run_cnt" of this nprec's programs
snap() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$REC"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un | tr '\n' ' ')
	bpftool prog show | awk -v ids=" $ids" '/^[0-9]+: / {
		id = $1; sub(":", "", id); if (index(ids, " " id " ") == 0) next
		t = 0; c = 0
		for (i = 1; i <= NF; i++) { if ($i == "name") n = $(i + 1); if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
		print n, t, c }' | sort
}
# delta LABEL PHASE BEFORE AFTER -> "label phase prog runs ns_per_run"
delta() {
	join "$3" "$4" | awk -v l="$1" -v ph="$2" '{ dt = $4 - $2; dn = $5 - $3
		if (dn > 0) printf "%s %s %s %d %.1f\n", l, ph, $1, dn, dt / dn }'
}
measure() {   # measure MODELINE
	local label build w envs=() args=()
	read -r label build rest <<< "$1"
	for w in ${rest:-}; do
		if [[ $w == [A-Z]*=* ]]; then envs+=("$w"); else args+=("$w"); fi
	done
	env "${envs[@]}" "$build/nprec" -q "${args[@]}" -o "$TMP/rec.npr" 2>>"$TMP/rec.err" & REC=$!
	PIDS+=($REC)
	rec_wait_ready && rec_wait_loaded || { echo "hookcost: $label: nprec did not start" >&2; tail -3 "$TMP/rec.err" >&2; exit 1; }
	local ph i=0
	snap > "$TMP/s0"
	for ph in $PHASES; do
		case $ph in
		iperf3) ip netns exec $NSA iperf3 -c $IPB -p 5201 -t "$T" -A 0,1 >/dev/null 2>&1 ;;
		wrk) ip netns exec $NSA taskset -c 0 wrk -t1 -c8 -d"${T}s" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1 ;;
		# paced as bench/record.sh: every connection waits PACE_MS between requests
		paced) ip netns exec $NSA taskset -c 0 wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" "http://$IPB:8080/index.html" > "$TMP/wrk.out" 2>&1 ;;
		rr) ip netns exec $NSA taskset -c 0 python3 "$TMP/rr.py" "${HC_RR:-100000}" ;;
		cold) ip netns exec $NSA taskset -c 0 "$TMP/cold" "${HC_COLD:-20000}" "${HC_SWEEP_KIB:-4096}" "${HC_NCONN:-16}" ;;
		*) echo "hookcost: unknown phase $ph" >&2; exit 1 ;;
		esac
		snap > "$TMP/s$((i + 1))"
		delta "$label" "$ph" "$TMP/s$i" "$TMP/s$((i + 1))" >> "$TMP/results"
		i=$((i + 1))
	done
	[ -n "${HC_DEBUGDIR:-}" ] && cp "$TMP"/s[0-9] "$HC_DEBUGDIR"/
	kill -INT $REC; wait $REC 2>/dev/null; REC=
	rm -f "$TMP"/rec.npr*
}

L0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "hookcost: $REPS x ${#MODES[@]} modes, iperf3 -t $T and wrk -t1 -c8 -d${T}s each, load at start $L0" >&2
for rep in $(seq "$REPS"); do
	order=("${MODES[@]}")
	if (( rep % 2 == 0 )); then
		order=(); for ((i = ${#MODES[@]} - 1; i >= 0; i--)); do order+=("${MODES[i]}"); done
	fi
	for m in "${order[@]}"; do measure "$m"; done
	echo "hookcost: repetition $rep done" >&2
done
L1=$(cut -d' ' -f1-3 /proc/loadavg)
[ -n "${HC_RAW:-}" ] && cp "$TMP/results" "$HC_RAW" && cp "$TMP/rec.err" "$HC_RAW.err"   # every repetition's rows

echo "hookcost: $REPS repetitions, $(cd "$ROOT" && git log --oneline -1 | cut -c1-50); load average at start $L0, at end $L1"
for m in "${MODES[@]}"; do echo "  mode: $m"; done
printf "%-10s %-7s %-18s %10s %9s %18s\n" mode phase program runs ns/run "[min, max]"
# median per mode, phase, program; modes in the order given
python3 - "$TMP/results" "$PHASES" "${MODES[@]}" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    l, ph, p, n, ns = line.split()
    rows.setdefault((l, ph, p), []).append((int(n), float(ns)))
order = [m.split()[0] for m in sys.argv[3:]]
for ph in sys.argv[2].split():
    for l in order:
        for (l2, ph2, p), v in sorted(rows.items(), key=lambda kv: -statistics.median(n for n, _ in kv[1])):
            if l2 != l or ph2 != ph:
                continue
            ns = [x for _, x in v]
            if statistics.median(n for n, _ in v) < 1000:
                continue
            print("%-10s %-7s %-18s %10d %9.1f %18s" % (l, ph, p, statistics.median(n for n, _ in v),
                  statistics.median(ns), "[%.0f, %.0f]" % (min(ns), max(ns))))
PY
