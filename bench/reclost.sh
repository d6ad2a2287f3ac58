#!/bin/bash
# bench/reclost.sh: lost events and the recorder's own CPU at defaults.
# RUNS recordings of nprec (NPREC_ARGS, default: none = defaults), each
# over BENCH_T s of iperf3, BENCH_T s of saturated wrk and BENCH_T s of paced wrk (nginx over
# veth between two namespaces, as bench/record.sh sets up); per run: the
# END record's lost_total, the per-family lost counts of the LOST records
# (which interval lost), and nprec's CPU (on-CPU time, /proc/PID/task/*/schedstat) per phase.
# nginx is not pinned here (bench/txn_lib.sh); iperf3 and wrk are.
# Env: RUNS (10), BENCH_T (3), NP_BUILD, NPREC (binary), NPREC_ARGS,
# IDLE_T (0: seconds of an idle phase before the load), SETTLE (1: seconds
# between nprec's start and the first phase), START_LOAD (lo or veth: a
# saturating wrk over loopback in B or over the veth, from 0.5 s before
# nprec starts to SETTLE + 0.5 s after: what start-up loses; churn: CHURN_RATE
# (2000) short loopback TCP connections a second in B over the same time, each
# a new flow on both ends), PROFILE (path prefix:
# perf record -g of nprec during the paced phase, one file per run).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=${NPREC:-$NP_BUILD/nprec}
NPREPORT=$NP_BUILD/npreport
T=${BENCH_T:-3} RUNS=${RUNS:-10} IDLE_T=${IDLE_T:-0}
NSA=rclost-a NSB=rclost-b IPA=10.77.19.1 IPB=10.77.19.2
TMP=$(mktemp -d /tmp/np-reclost.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps   # PIDS killed, namespaces and $TMP removed on exit; needs root
txn_setup_nginx rclost
# RPS as bench/record.sh: data to CPU 0, ACKs to CPU 1
ip netns exec $NSB sh -c 'echo 1 > /sys/class/net/rclostb0/queues/rx-0/rps_cpus'
ip netns exec $NSA sh -c 'echo 2 > /sys/class/net/rclosta0/queues/rx-0/rps_cpus'
ip netns exec $NSB iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
echo "function delay() return 1 end" > "$TMP/pace.lua"
cat > "$TMP/churn.py" <<'PY'
import socket, sys, threading, time
T, rate = float(sys.argv[1]), float(sys.argv[2])
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1024)
def srv():
    while True:
        s, _ = ls.accept(); s.sendall(s.recv(200)); s.close()
threading.Thread(target=srv, daemon=True).start()
n, t0 = 0, time.time()
while time.time() < t0 + T:
    if n > (time.time() - t0) * rate:
        time.sleep(0.001); continue
    c = socket.create_connection(ls.getsockname())
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")   # RST: no TIME_WAIT
    c.sendall(b"q" * 100); c.recv(200); c.close(); n += 1
PY
sleep 1
# on-CPU ns of nprec's threads: /proc/PID/schedstat, not the 10 ms ticks of utime+stime
cpu_ticks() { cat /proc/$1/task/*/schedstat 2>/dev/null | awk '{s+=$1} END {print int(s/1000)}'; }
HZ=1000000
echo "# run lost_total family@interval:lost events(per family) cpu_ms(start idle iperf3 wrk paced) gbps rps rps_paced"
for r in $(seq 1 "$RUNS"); do
	out=$TMP/r$r.npr
	if [ -n "${START_LOAD:-}" ]; then   # a saturating wrk already running when nprec starts
		if [ "$START_LOAD" = churn ]; then
			ip netns exec $NSB python3 "$TMP/churn.py" "$(( ${SETTLE:-1} + 1 ))" "${CHURN_RATE:-2000}" & wp=$!
		else
			if [ "$START_LOAD" = lo ]; then ns=$NSB; else ns=$NSA; fi
			ip netns exec $ns taskset -c 0 wrk -t1 -c8 -d"$(( ${SETTLE:-1} + 1 ))s" "http://$IPB:8080/index.html" >/dev/null 2>&1 & wp=$!
		fi
		sleep 0.5
	fi
	"$NPREC" -q ${NPREC_ARGS:-} -o "$out" 2>"$TMP/rec.err" & rp=$!
	sleep "${SETTLE:-1}"   # programs loaded and attached (~0.5 s of CPU at start)
	[ -n "${START_LOAD:-}" ] && wait $wp
	c0=$(cpu_ticks $rp)
	[ "$IDLE_T" != 0 ] && sleep "$IDLE_T"
	c1=$(cpu_ticks $rp)
	gbps=$(ip netns exec $NSA iperf3 -c $IPB -p 5201 -t "$T" -A 0,1 -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))' 2>/dev/null)
	c1b=$(cpu_ticks $rp)
	rps=$(ip netns exec $NSA taskset -c 0 wrk -t1 -c8 -d"${T}s" "http://$IPB:8080/index.html" 2>&1 | awk '/^Requests\/sec/ {printf "%.0f", $2}')
	c2=$(cpu_ticks $rp)
	[ -n "${PROFILE:-}" ] && { perf record -q --call-graph dwarf,16384 -F 2000 -p $rp -o "$PROFILE.$r" 2>/dev/null & pp=$!; }
	rpsp=$(ip netns exec $NSA taskset -c 0 wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" "http://$IPB:8080/index.html" 2>&1 | awk '/^Requests\/sec/ {printf "%.0f", $2}')
	c3=$(cpu_ticks $rp)
	[ -n "${PROFILE:-}" ] && { kill -INT $pp; wait $pp; }
	kill -INT $rp; wait $rp
	"$NPREPORT" dump "$out" 2>/dev/null | python3 -c '
import json,sys
lost=[]; end=None; i=0
for l in sys.stdin:
    d=json.loads(l)
    t=d.get("type")
    if t=="lost":
        b=d["body"]
        lost += ["%s@%d:%d" % (f, i, n) for f,n in zip(b["family"], b["lost"]) if n]
        i+=1
    elif t=="end":
        end=d["body"]
ev=",".join("%s=%d" % (f, n) for f, n in zip(end["family"], end["events"])) if end else "?"
print(end["lost_total"] if end else "?", ",".join(lost) or "-", ev, end=" ")
' 2>/dev/null
	echo "run$r cpu_ms $(( (c0)*1000/HZ )) $(( (c1-c0)*1000/HZ )) $(( (c1b-c1)*1000/HZ )) $(( (c2-c1b)*1000/HZ )) $(( (c3-c2)*1000/HZ )) gbps $gbps rps $rps $rpsp"
	grep -v "^$" "$TMP/rec.err" | head -3
done
