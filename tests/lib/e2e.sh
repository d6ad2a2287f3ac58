# Shared helpers for end-to-end tests (source it). Every test script:
#   . "$(dirname "$0")/../lib/e2e.sh"; e2e_init NAME
#   ... ns_add PREFIX-a; check "what" test-expression...; e2e_finish
# Namespaces and background processes registered here are removed on exit,
# also when the test fails or is interrupted.
set -u
E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NP_BUILD=${NP_BUILD:-$E2E_ROOT/build}
NPREC=$NP_BUILD/nprec
NPANALYZE=$NP_BUILD/npanalyze
NPREPORT=$NP_BUILD/npreport
E2E_PASS=0
E2E_FAIL=0
E2E_SKIP=0
E2E_NS=()
E2E_PIDS=()
E2E_LINKS=()
E2E_SYSCTLS=()

e2e_cleanup() {
	local p ns l
	# Only the test's own shell cleans up. A child forked by `bg` keeps
	# this EXIT trap (and bash's handlers for SIGHUP/SIGUSR1/...) until it
	# execs its command: a signal meant for nprec that reaches it before
	# the exec ran this cleanup inside the child and deleted the test's
	# namespaces under the running test (incident_flight, ci3).
	[ "$BASHPID" = "$$" ] || return 0
	for p in "${E2E_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${E2E_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for ns in "${E2E_NS[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	for l in "${E2E_LINKS[@]}"; do ip link del "$l" 2>/dev/null; done
	for l in "${E2E_SYSCTLS[@]}"; do sysctl -qw "$l" 2>/dev/null; done
	[ -n "${E2E_TMP:-}" ] && [ -z "${E2E_KEEP:-}" ] && rm -rf "$E2E_TMP"
}

e2e_init() {
	E2E_NAME=$1
	E2E_TMP=$(mktemp -d "/tmp/np-e2e-$1.XXXXXX")
	trap e2e_cleanup EXIT
	trap 'exit 130' INT TERM
	echo "== e2e $E2E_NAME (tmp $E2E_TMP)" >&2
}

# e2e_skip REASON: the whole test cannot run here (prints 0 passed, 0 failed).
e2e_skip() {
	echo "SKIP $E2E_NAME: $*" >&2
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}

e2e_need_root() { [ "$(id -u)" -eq 0 ] || e2e_skip "needs root"; }

# ns_add NAME: a fresh network namespace with loopback up.
ns_add() {
	ip netns del "$1" 2>/dev/null
	ip netns add "$1" || return 1
	E2E_NS+=("$1")
	ip -n "$1" link set lo up
}

# veth_pair NS1 IF1 ADDR1/PFX NS2 IF2 ADDR2/PFX
veth_pair() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" || return 1
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$4" addr add "$6" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# bg CMD...: run in background, killed at exit. Sets BG_PID.
bg() { "$@" & BG_PID=$!; E2E_PIDS+=("$BG_PID"); }

# wait_pid_exec PID NAME [SECS]: wait until process PID runs program NAME
# (/proc/PID/status Name:, at most 15 characters). Until its exec a `bg`
# child is a copy of this shell, with this shell's signal handlers.
wait_pid_exec() {
	local i n
	for i in $(seq $((${3:-60} * 10))); do
		n=$(awk '/^Name:/ {print $2; exit}' "/proc/$1/status" 2>/dev/null) || return 1
		[ -n "$n" ] || return 1
		[ "$n" = "${2:0:15}" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_rec FILE PID [SECS]: wait (up to 60 s) until nprec PID has written
# FILE's header (its families are attached by then); gives up at once when
# PID is gone. Loading the BPF families takes seconds on a loaded machine.
wait_rec() {
	local i
	for i in $(seq $((${3:-60} * 10))); do
		[ -s "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ns_wait_listen NS PORT [udp]: wait (up to 10 s) until a socket in
# namespace NS listens on PORT (TCP, or UDP bound): a server started with
# `bg` is not listening yet when bg returns, and a connection before that
# is refused.
ns_wait_listen() {
	local i o=-ltn
	[ "${3:-}" = udp ] && o=-lun
	for i in $(seq 100); do
		ip netns exec "$1" ss $o "sport = :$2" | grep -q ":$2 " && return 0
		sleep 0.1
	done
	echo "  (nothing listens on port $2 in $1 after 10 s)" >&2
	return 1
}

# ns_wait_drained NS PORT: wait (up to 10 s) until no TCP connection on
# local port PORT is left in NS: the receiving end has read every stream to
# EOF and closed it. A sender's exit says only that the data is in its
# socket buffer; a recorder stopped before the receiver read the tail
# counts fewer bytes than were sent.
# nginx_start NS DIR "SERVERS" [WORKER_CONNECTIONS] [MAIN]: nginx in namespace
# NS as a bg job (the cleanup stops it): one worker in the foreground, its
# configuration, pid, logs and temporary files in DIR (DIR/logs), no access
# log, keep-alive connections kept for 10^7 requests; SERVERS the http
# block's server lines, MAIN more top-level lines (worker_cpu_affinity).
# DIR and what it serves must be readable by the workers (nobody). Ready
# when a server listens: the caller waits with ns_wait_listen.
nginx_start() {
	local ns=$1 dir=$2 servers=$3 conns=${4:-256} main=${5:-}
	mkdir -p "$dir/logs"
	cat > "$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
$main
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections $conns; }
http {
  access_log off;
  client_body_temp_path $dir/logs; proxy_temp_path $dir/logs; fastcgi_temp_path $dir/logs;
  uwsgi_temp_path $dir/logs; scgi_temp_path $dir/logs;
  keepalive_requests 10000000;
  $servers
}
CONF
	bg ip netns exec "$ns" nginx -e "$dir/logs/error.log" -p "$dir" -c "$dir/nginx.conf"
}

ns_wait_drained() {
	local i
	for i in $(seq 100); do
		[ -z "$(ip netns exec "$1" ss -Htn state connected "sport = :$2")" ] && return 0
		sleep 0.1
	done
	echo "  (connections on port $2 in $1 still open after 10 s)" >&2
	return 1
}

# skip DESCRIPTION: a check that has nothing to look at in this run (counted
# as skipped, not passed: "0 of 0" is no evidence).
# unmount_all FSTYPE: every mount of that type, in this mount namespace only
# (a test that needs the machine as it comes runs in one of its own:
# systemd mounts tracefs at boot, a fresh VM does not, perf mounts it)
unmount_all() {
	local m
	while m=$(findmnt -rn -t "$1" -o TARGET | tail -1) && [ -n "$m" ]; do
		umount -l "$m" || return 1
	done
}

skip() { E2E_SKIP=$((E2E_SKIP + 1)); echo "  skip $1" >&2; }

# check DESCRIPTION CMD...: run CMD; pass if it exits 0.
check() {
	local d=$1; shift
	if "$@"; then
		E2E_PASS=$((E2E_PASS + 1)); echo "  ok   $d" >&2
	else
		E2E_FAIL=$((E2E_FAIL + 1)); echo "  FAIL $d" >&2
	fi
}

# within A B PCT: |A-B| <= PCT% of |B| (numbers may be floats)
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN{d=a-b; if(d<0)d=-d; m=b<0?-b:b; exit !(d<=m*p/100.0)}'; }
# ge A B / le A B / gt A B / lt A B for floats
ge() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a>=b)}'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a<=b)}'; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a>b)}'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a<b)}'; }

# csvcol FILE KEYCOL KEY COL: the COL cell of the first row whose KEYCOL is KEY
csvcol() {
	awk -F, -v kc="$2" -v k="$3" -v c="$4" 'NR==1{for(i=1;i<=NF;i++){if($i==kc)ki=i;if($i==c)ci=i};next}
		$ki==k{print $ci; exit}' "$1"
}

e2e_finish() {
	local sk=
	[ "$E2E_SKIP" -gt 0 ] && sk=", $E2E_SKIP skipped"
	echo "$E2E_PASS passed, $E2E_FAIL failed$sk"
	[ "$E2E_FAIL" -eq 0 ]
}

# sysctl_set KEY VALUE: set a sysctl for the test, its value put back on exit.
sysctl_set() {
	local old
	old=$(sysctl -n "$1" 2>/dev/null) || return 1
	E2E_SYSCTLS+=("$1=$old")
	sysctl -qw "$1=$2"
}

# prog_runs PID NAME: the runs of BPF program NAME held by process PID or
# its children (fdinfo run_cnt: counted while kernel.bpf_stats_enabled is 1).
prog_runs() {
	local fd id n=0
	for fd in /proc/"$1"/fd/* $(pgrep -P "$1" | sed 's|.*|/proc/&/fd/*|'); do
		[ "$(readlink "$fd")" = "anon_inode:bpf-prog" ] || continue
		id=$(awk '$1=="prog_id:" {print $2}' "${fd%/fd/*}/fdinfo/${fd##*/}")
		bpftool prog show id "$id" 2>/dev/null | grep -q " name ${2:0:15}" || continue
		n=$((n + $(awk '$1=="run_cnt:" {print $2 + 0}' "${fd%/fd/*}/fdinfo/${fd##*/}")))
	done
	echo $n
}

# prog_misses PID NAME: the runs the kernel skipped of BPF program NAME
# held by process PID or its children (nprec's BPF is in its privileged
# child): recursion_misses, a program already running on that CPU is not
# run again there. Bounds what a recorder cannot have counted.
prog_misses() {
	local fd id n=0
	for fd in /proc/"$1"/fd/* $(pgrep -P "$1" | sed 's|.*|/proc/&/fd/*|'); do
		[ "$(readlink "$fd")" = "anon_inode:bpf-prog" ] || continue
		id=$(awk '$1=="prog_id:" {print $2}' "${fd%/fd/*}/fdinfo/${fd##*/}")
		bpftool prog show id "$id" 2>/dev/null | grep -q " name ${2:0:15}" || continue   # the name, or its first 15 characters
		n=$((n + $(awk '$1=="recursion_misses:" {print $2 + 0}' "${fd%/fd/*}/fdinfo/${fd##*/}")))
	done
	echo $n
}
