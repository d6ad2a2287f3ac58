#!/bin/bash
# Incident features under load: what a flight recorder costs in memory and
# how long a dump takes, next to a plain recording of the same traffic.
# iperf3 over a veth pair between two namespaces, nprec --packets (the
# heaviest output), interval 1 s.
#
#   plain   nprec -o F --packets                      bytes/s written, CPU, RSS
#   flight  nprec --flight-recorder W --packets        RSS (ring in memory), then
#           SIGUSR1: dump latency (signal -> complete file), dump size
#
# Env: BENCH_T (seconds of traffic, 20), BENCH_W (flight window s, 10),
# NP_BUILD (build/). Prints one table (markdown) on stdout.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec
NPREPORT=$NP_BUILD/npreport
SUM=$NP_BUILD/tools/in_npsum
T=${BENCH_T:-20}
W=${BENCH_W:-10}
NSA=in-bench-a NSB=in-bench-b
TMP=$(mktemp -d /tmp/np-bench-incident.XXXXXX)
[ -n "${BENCH_KEEP:-}" ] && echo "bench/incident.sh: keeping $TMP" >&2
PIDS=()

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.2
	ip netns del $NSA 2>/dev/null; ip netns del $NSB 2>/dev/null
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
for b in "$NPREC" "$NPREPORT" "$SUM"; do
	[ -x "$b" ] || { echo "bench/incident.sh: $b not built" >&2; exit 2; }
done

ip netns add $NSA; ip netns add $NSB
ip link add in-bna netns $NSA type veth peer name in-bnb netns $NSB
ip -n $NSA addr add 10.231.9.1/24 dev in-bna; ip -n $NSB addr add 10.231.9.2/24 dev in-bnb
ip -n $NSA link set in-bna up; ip -n $NSB link set in-bnb up
ip -n $NSA link set lo up; ip -n $NSB link set lo up
ip netns exec $NSB iperf3 -s -p 5391 >/dev/null 2>&1 & PIDS+=($!)
sleep 0.3

now() { "$SUM" --now; }
wait_intervals() {
	local i
	for i in $(seq 600); do
		[ "$("$SUM" "$1" | sed -n 's/^n_interval=//p')" -ge 1 ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# median of a numeric INTERVAL key over a file
imedian() {
	"$NPREPORT" dump --type interval "$2" 2>/dev/null | grep -o "\"$1\":[0-9.e+-]*" |
		cut -d: -f2 | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print 0}'
}
ilast() {
	"$NPREPORT" dump --type interval "$2" 2>/dev/null | grep -o "\"$1\":[0-9.e+-]*" | tail -1 | cut -d: -f2
}

# ---- plain ----
"$NPREC" -q -o "$TMP/plain.npr" --packets & REC=$!; PIDS+=($REC)
wait_intervals "$TMP/plain.npr"
ip netns exec $NSA iperf3 -c 10.231.9.2 -p 5391 -t "$T" >/dev/null
kill -TERM $REC; wait $REC
p_size=$(stat -c %s "$TMP/plain.npr")
p_cpu=$(imedian self_cpu_pct "$TMP/plain.npr")
p_rss=$(ilast self_rss_bytes "$TMP/plain.npr")
p_n=$("$SUM" "$TMP/plain.npr" | sed -n 's/^n_interval=//p')

# ---- flight ----
"$NPREC" -q -o "$TMP/fl.npr" --packets --flight-recorder "${W}s" & REC=$!; PIDS+=($REC)
sleep 3   # no file to watch before a dump: give the families time to attach
ip netns exec $NSA iperf3 -c 10.231.9.2 -p 5391 -t "$T" >/dev/null
t0=$(now)
kill -USR1 $REC
for i in $(seq 300); do
	"$SUM" "$TMP/fl.dump-0001.npr" 2>/dev/null | grep -q '^n_trigger=1$' && break
	sleep 0.02
done
t1=$(now)
d_size=$(stat -c %s "$TMP/fl.dump-0001.npr" 2>/dev/null || echo 0)
eval "$("$SUM" "$TMP/fl.dump-0001.npr")"
d_span=$(( (last_t1 - first_t0) / 1000000 ))
d_rss=$(ilast self_rss_bytes "$TMP/fl.dump-0001.npr")
d_cpu=$(imedian self_cpu_pct "$TMP/fl.dump-0001.npr")
kill -TERM $REC; wait $REC

awk -v T="$T" -v W="$W" -v ps="$p_size" -v pn="$p_n" -v pc="$p_cpu" -v pr="$p_rss" \
    -v ds="$d_size" -v dn="$n_interval" -v dspan="$d_span" -v dr="$d_rss" -v dc="$d_cpu" \
    -v lat=$(( (t1 - t0) / 1000000 )) 'BEGIN {
	printf "| mode | intervals | output | MB/s of recording | nprec CPU (median, %% of a core) | nprec RSS MB |\n"
	printf "|---|---|---|---|---|---|\n"
	printf "| plain `--packets`, %d s | %d | %.1f MB file | %.2f | %.2f | %.0f |\n", T, pn, ps/1e6, ps/1e6/(pn?pn:1), pc, pr/1e6
	printf "| `--flight-recorder %ds --packets` | %d in dump (%.1f s) | %.1f MB dump | — | %.2f | %.0f |\n", W, dn, dspan/1000, ds/1e6, dc, dr/1e6
	printf "\nSIGUSR1 -> complete dump file: %d ms (includes waiting for the end of the interval in progress, <= 1 s)\n", lat
	printf "ring memory ~ RSS(flight) - RSS(plain) = %.0f MB for %.1f MB of chunks\n", (dr-pr)/1e6, ds/1e6
}'
