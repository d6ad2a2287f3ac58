#!/bin/bash
# Sampled socket time (--netcpu sample, the default) against the exact
# clock (--netcpu exact) on bench-record's three workloads: iperf3, wrk
# saturated, wrk paced (1 ms between requests), nginx and iperf3 in one
# namespace, the clients in another, veth between them, endpoints pinned as
# in bench/record.sh. One `nprec --netcpu exact` recording per workload
# and repetition: in exact mode the sampler counts socket samples as well,
# so both figures come from the same socket calls, and the workload's
# variance cancels. Prints, per workload and class, the exact ns, the
# sample count, the estimate/exact ratio and whether the 95 % interval
# covers the exact value; cut: the samples left out because their stack
# walk stopped short of do_syscall_64, and the ratio had they counted (the
# figure before that check); probe: the samples in the exact clock's own
# programs (and other tracers' on its hooks), which the exact figure holds
# and the sampled one has not, and the ratio with them (docs/NETCPU.md
# "Sampled against exact"); outside: sampled time the exact clock does not
# hold (the syscall tail). Not a test: figures for docs/NETCPU.md.
# Env: BENCH_T (seconds per workload, 5), REPS (2), NP_BUILD (build/), SOCK_HZ
# (the socket sampler's rate, 997: the default 97 Hz gives ~10x fewer samples),
# NC_ARGS (more nprec options, e.g. "--sample-hz 1000"; default: the
# tick source at HZ).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec NPREPORT=$NP_BUILD/npreport
T=${BENCH_T:-5}
REPS=${REPS:-2}
NSA=ncs-bench-a NSB=ncs-bench-b IPA=10.78.19.1 IPB=10.78.19.2
TMP=$(mktemp -d /tmp/np-bench-ncsampled.XXXXXX)
. "$ROOT/bench/txn_lib.sh"   # txn_traps: PIDS, namespaces and $TMP cleaned on exit
txn_traps
for t in iperf3 wrk nginx; do
	command -v $t >/dev/null || { echo "bench/netcpu_sampled.sh: $t missing" >&2; exit 1; }
done
PIN_C=() PIN_W=() AFF=""
if [ "$(nproc)" -ge 2 ]; then PIN_C=(-A 0,1) PIN_W=(taskset -c 0) AFF="worker_cpu_affinity 10;"; fi

for ns in $NSA $NSB; do ip netns del $ns 2>/dev/null; ip netns add $ns; ip -n $ns link set lo up; done
ip link add ncsba0 netns $NSA type veth peer name ncsbb0 netns $NSB
ip -n $NSA addr add $IPA/24 dev ncsba0; ip -n $NSB addr add $IPB/24 dev ncsbb0
ip -n $NSA link set ncsba0 up; ip -n $NSB link set ncsbb0 up
mkdir -p "$TMP/www" "$TMP/logs"; chmod 755 "$TMP" "$TMP/www"
head -c 4096 /dev/zero | tr '\0' x > "$TMP/www/index.html"
cat > "$TMP/nginx.conf" <<CONF
daemon off;
worker_processes 1;
$AFF
pid $TMP/nginx.pid;
error_log $TMP/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/logs; proxy_temp_path $TMP/logs; fastcgi_temp_path $TMP/logs;
  uwsgi_temp_path $TMP/logs; scgi_temp_path $TMP/logs;
  keepalive_requests 10000000;
  server { listen $IPB:8080; root $TMP/www; }
}
CONF
ip netns exec $NSB nginx -e "$TMP/logs/error.log" -p "$TMP" -c "$TMP/nginx.conf" & PIDS+=($!)
ip netns exec $NSB iperf3 -s -B $IPB -p 5311 >/dev/null 2>&1 & PIDS+=($!)
echo "function delay() return 1 end" > "$TMP/pace.lua"
sleep 1

workload() {
	case $1 in
	iperf3) ip netns exec $NSA iperf3 -c $IPB -p 5311 -t "$T" "${PIN_C[@]}" >/dev/null 2>&1 ;;
	wrk) ip netns exec $NSA "${PIN_W[@]}" wrk -t1 -c8 -d"${T}s" "http://$IPB:8080/index.html" >/dev/null 2>&1 ;;
	paced) ip netns exec $NSA "${PIN_W[@]}" wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" \
		"http://$IPB:8080/index.html" >/dev/null 2>&1 ;;
	esac
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), T=${T}s, REPS=$REPS, SOCK_HZ=${SOCK_HZ:-997}, NC_ARGS='${NC_ARGS:-}'"
printf "%-7s %-4s %3s %14s %7s %14s %7s %-10s %5s %9s %5s %11s %s\n" workload cls rep exact_ns samples est_ns ratio "95% covers" cut "ratio+cut" probe "ratio+probe" outside
for rep in $(seq "$REPS"); do
	for w in iperf3 wrk paced; do
		# shellcheck disable=SC2086
		"$NPREC" -q --netcpu exact:"${SOCK_HZ:-997}" ${NC_ARGS:-} -o "$TMP/$w.npr" & rp=$!
		PIDS+=($rp)
		for _ in $(seq 100); do [ -s "$TMP/$w.npr" ] && break; sleep 0.1; done
		sleep 1
		workload $w
		kill -INT $rp; wait $rp 2>/dev/null
		"$NPREPORT" dump "$TMP/$w.npr" | python3 "$ROOT/tests/tools/nc_npr.py" sockest |
			python3 -c '
import sys
kv = dict(t.split("=") for t in sys.stdin.read().split())
for c in ("send", "recv"):
    x, n, e = int(kv[c + "_exact_ns"]), int(kv[c + "_smp"]), int(kv[c + "_est_ns"])
    lo, hi = int(kv[c + "_lo_ns"]), int(kv[c + "_hi_ns"])
    cut = int(kv.get(c + "_cut_smp", 0))
    p = int(kv["period_ns"])
    pr, out = int(kv.get(c + "_probe_smp", 0)), int(kv.get(c + "_outside_smp", 0))
    print("%-7s %-4s %3s %14d %7d %14d %7.3f %-10s %5d %9.3f %5d %11.3f %d" % (sys.argv[1], c, sys.argv[2], x, n, e,
          e / x if x else 0, "yes" if lo <= x <= hi else "NO", cut, (e + cut * p) / x if x else 0,
          pr, (e + pr * p) / x if x else 0, out))' "$w" "$rep"
		rm -f "$TMP/$w.npr"
	done
done
