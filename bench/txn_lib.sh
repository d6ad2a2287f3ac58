# Sourced by bench/txn_usercost.sh, bench/txn_reqcost.sh, bench/reclost.sh,
# bench/hookcost.sh,
# bench/txn_cpupair.sh and bench/netcpu_sampled.sh (txn_traps only): the setup of bench/record.sh in small.
# txn_traps: on exit, PIDS killed, namespaces $NSA and $NSB and $TMP
# removed; needs root. txn_setup_nginx IFPREFIX: namespaces $NSA and
# $NSB joined by veth IFPREFIXa0 ($IPA) <-> IFPREFIXb0 ($IPB), nginx (one
# worker, keep-alive, 4 KiB index.html under $TMP) listening on $IPB:8080
# in $NSB; its master's pid in NGM and in PIDS. txn_cpu_ms PID: on-CPU ms
# of all its threads; txn_ready PID FILE: nprec has written FILE and its
# start-up is over (its CPU stopped growing).
txn_setup_nginx() {
	local a=${1}a0 b=${1}b0 ns
	for ns in $NSA $NSB; do ip netns del $ns 2>/dev/null; ip netns add $ns; ip -n $ns link set lo up; done
	ip link add $a netns $NSA type veth peer name $b netns $NSB
	ip -n $NSA addr add $IPA/24 dev $a; ip -n $NSB addr add $IPB/24 dev $b
	ip -n $NSA link set $a up; ip -n $NSB link set $b up
	mkdir -p "$TMP/www" "$TMP/logs"; chmod 755 "$TMP" "$TMP/www"
	head -c 4096 /dev/zero | tr '\0' x > "$TMP/www/index.html"
	cat > "$TMP/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $TMP/nginx.pid; error_log $TMP/logs/error.log;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $TMP/logs; proxy_temp_path $TMP/logs;
  fastcgi_temp_path $TMP/logs; uwsgi_temp_path $TMP/logs; scgi_temp_path $TMP/logs;
  keepalive_requests 10000000; server { listen $IPB:8080; root $TMP/www; } }
CONF
	ip netns exec $NSB nginx -e "$TMP/logs/error.log" -p "$TMP" -c "$TMP/nginx.conf" & NGM=$!
	PIDS+=($NGM)
}

txn_traps() {
	PIDS=()
	txn_cleanup() {
		for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
		sleep 0.3
		for ns in $NSA $NSB; do ip netns pids $ns 2>/dev/null | xargs -r kill -9; ip netns del $ns 2>/dev/null; done
		rm -rf "$TMP"
	}
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
