# Sourced by the benches that run traffic between two namespaces
# (bench/record.sh, recpaced.sh, hookfloor.sh, netcpu_sampled.sh,
# txn_*.sh, reclost.sh, hookcost.sh, e2e_pairs.sh, e2e_probe.sh): the
# setup of bench/record.sh, in pieces.
# txn_setup_veth IFPREFIX: fresh namespaces $NSA and $NSB joined by veth
# IFPREFIXa0 ($IPA/24) <-> IFPREFIXb0 ($IPB/24).
# txn_start_nginx [AFFINITY]: nginx (one worker, keep-alive, 4 KiB
# index.html under $TMP) listening on $IPB:8080 in $NSB, its worker pinned
# by worker_cpu_affinity AFFINITY ("10": CPU 1) when given; its master's
# pid in NGM and in PIDS. txn_setup_nginx IFPREFIX [AFFINITY]: both.
# txn_rps IFPREFIX: as bench/record.sh, what arrives at B (data) handled
# on CPU 0, what arrives at A (ACKs) on CPU 1.
# txn_traps: txn_cleanup on exit; needs root. txn_cpu_ms PID: on-CPU ms of all its threads;
# txn_ready PID FILE: nprec has written FILE and its start-up is over (its
# CPU stopped growing).
txn_setup_veth() {
	local a=${1}a0 b=${1}b0 ns
	for ns in $NSA $NSB; do ip netns del $ns 2>/dev/null; ip netns add $ns; ip -n $ns link set lo up; done
	ip link add $a netns $NSA type veth peer name $b netns $NSB
	ip -n $NSA addr add $IPA/24 dev $a; ip -n $NSB addr add $IPB/24 dev $b
	ip -n $NSA link set $a up; ip -n $NSB link set $b up
}

txn_start_nginx() {
	mkdir -p "$TMP/www" "$TMP/logs"; chmod 755 "$TMP" "$TMP/www"
	head -c 4096 /dev/zero | tr '\0' x > "$TMP/www/index.html"
	cat > "$TMP/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $TMP/nginx.pid; error_log $TMP/logs/error.log;
${1:+worker_cpu_affinity $1;}
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $TMP/logs; proxy_temp_path $TMP/logs;
  fastcgi_temp_path $TMP/logs; uwsgi_temp_path $TMP/logs; scgi_temp_path $TMP/logs;
  keepalive_requests 10000000; server { listen $IPB:8080; root $TMP/www; } }
CONF
	ip netns exec $NSB nginx -e "$TMP/logs/error.log" -p "$TMP" -c "$TMP/nginx.conf" & NGM=$!
	PIDS+=($NGM)
}

txn_setup_nginx() { txn_setup_veth "$1"; txn_start_nginx "${2:-}"; }

txn_rps() {
	ip netns exec $NSB sh -c "echo 1 > /sys/class/net/${1}b0/queues/rx-0/rps_cpus" &&
	ip netns exec $NSA sh -c "echo 2 > /sys/class/net/${1}a0/queues/rx-0/rps_cpus"
}

# txn_cleanup: REC_PIDS (when set) and PIDS stopped (SIGTERM, then SIGKILL), the namespaces'
# processes killed and the namespaces removed, kernel.bpf_stats_enabled
# back to BPF_STATS_ORIG when the script set that, $TMP removed
txn_cleanup() {
	local p ns
	for p in ${REC_PIDS[@]+"${REC_PIDS[@]}"} "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.3
	for p in ${REC_PIDS[@]+"${REC_PIDS[@]}"} "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for ns in $NSA $NSB; do ip netns pids $ns 2>/dev/null | xargs -r kill -9; ip netns del $ns 2>/dev/null; done
	[ -n "${BPF_STATS_ORIG:-}" ] && sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_ORIG" 2>/dev/null
	rm -rf "$TMP"
}

txn_traps() {
	PIDS=()
	trap txn_cleanup EXIT
	trap 'exit 130' INT TERM
	[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
}

# on-CPU time of all its threads (schedstat: ns, not clock ticks)
txn_cpu_ms() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.1f", s / 1e6}'; }
txn_ready() {
	local c0 c1
	for _ in $(seq 100); do [ -s "$2" ] && break; sleep 0.1; done
	c1=$(txn_cpu_ms "$1")
	for _ in $(seq 30); do sleep 0.5; c0=$c1; c1=$(txn_cpu_ms "$1"); awk -v a="$c0" -v b="$c1" 'BEGIN {exit !(b - a < 5)}' && break; done
}
