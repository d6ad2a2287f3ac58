#!/bin/bash
# Two recorder builds' cost on the socket hooks, paired round by round so
# that other load on the machine (which moves bench/txn_callcost.sh's
# baseline between runs by more than the difference sought) hits both
# alike. Two namespaces, each with NCONN loopback TCP connections; X
# records only the first (--netns), Y only the second; one thread pinned
# to CPU 0 does request/response rounds (100 B request, RESP-byte
# response: four socket calls, both transaction roles) alternating between
# the namespaces, a SWEEP_KIB KiB memory walk before each (cold caches, as
# between a paced server's requests), only the calls timed. Both
# recorders' programs run on every call: fully for their own namespace's
# sockets, to their filter's exit for the other's. So the difference of
# the two namespaces' median round times is X's (full - filtered) cost
# minus Y's: it resolves changes of the recorded path only. Work done
# before the filter costs the same on both sides and cancels: a hook
# whose run is mostly its lookup before the filter (txn's on
# tcp_sendmsg_locked, as it was) cannot be measured this way
# (bench/txn_callcost.sh, bench/hookcost.sh). Every repetition swaps the
# namespaces, every second one the start order. Null run (the same build
# as X and Y, 8 repetitions, load 9): median -95 ns, -261..+210.
# Env: NPREC_X, NPREC_Y ("BINARY [VAR=VALUE ...] [nprec args]"), REPS (8),
# RR (4000 rounds, half per namespace), NCONN (16), SWEEP_KIB (4096), RESP
# (4096). Prints per repetition the medians (ns) and X - Y; then the
# median of X - Y. Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
X=${NPREC_X:?NPREC_X=\"BINARY [VAR=VALUE ...] [args]\"} Y=${NPREC_Y:?NPREC_Y=...}
REPS=${REPS:-8}
NSA=txnp$$-a NSB=txnp$$-b
TMP=$(mktemp -d /tmp/np-txnp.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
for ns in $NSA $NSB; do ip netns add $ns && ip -n $ns link set lo up || exit 1; done

cat > "$TMP/nsrr.c" <<'C'
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
static long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static int full(int fd, char *b, int n)
{
	for (int got = 0, r; got < n; got += r)
		if ((r = recv(fd, b + got, n - got, 0)) <= 0)
			return -1;
	return 0;
}
static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}
/* nc connected pairs on loopback in the namespace at path */
static int pairs(const char *path, int nc, int *c, int *s)
{
	int one = 1, fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		return -1;
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (bind(ls, (void *)&a, sizeof(a)) || listen(ls, 256) || getsockname(ls, (void *)&a, &al))
		return -1;
	for (int i = 0; i < nc; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(c[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(c[i], (void *)&a, sizeof(a)) || (s[i] = accept(ls, NULL, NULL)) < 0)
			return -1;
		setsockopt(s[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return 0;
}
int main(int argc, char **argv)
{
	int n = atoi(argv[3]) / 2, sweep = atoi(argv[4]) * 1024, nc = atoi(argv[5]), resp = atoi(argv[6]);
	int c[2][256], s[2][256];
	if (n < 1 || nc < 1 || nc > 256 || resp < 1 || resp > 65536 || pairs(argv[1], nc, c[0], s[0]) ||
	    pairs(argv[2], nc, c[1], s[1]))
		return 1;
	volatile char *buf = calloc(1, (size_t)sweep + 64);
	static char req[100], out[65536], in[65536];
	long long *t[2] = { calloc(n, sizeof(long long)), calloc(n, sizeof(long long)) };
	for (int r = 0; r < 2 * n; r++) {
		for (int k = 0; k < sweep; k += 64)
			buf[k]++;
		int w = r & 1, i = (r / 2) % nc;
		long long t0 = now();
		if (send(c[w][i], req, sizeof(req), 0) != sizeof(req) || full(s[w][i], in, sizeof(req)) ||
		    send(s[w][i], out, resp, 0) != resp || full(c[w][i], in, resp))
			return 2;
		t[w][r / 2] = now() - t0;
	}
	for (int w = 0; w < 2; w++)
		qsort(t[w], n, sizeof(long long), cmp);
	printf("%lld %lld\n", t[0][n / 2], t[1][n / 2]);
	return 0;
}
C
cc -O2 -o "$TMP/nsrr" "$TMP/nsrr.c" || exit 1

cpu_ms() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.1f", s / 1e6}'; }
ready() {   # as bench/txn_cpupair.sh: file written, start-up CPU settled
	local c0 c1
	for _ in $(seq 100); do [ -s "$2" ] && break; sleep 0.1; done
	c1=$(cpu_ms "$1")
	for _ in $(seq 30); do sleep 0.5; c0=$c1; c1=$(cpu_ms "$1"); awk -v a="$c0" -v b="$c1" 'BEGIN {exit !(b - a < 5)}' && break; done
}
start() {   # start "BINARY [VAR=VALUE ...] [args]" NS OUT -> pid in $P
	local bin rest w envs=() args=()
	read -r bin rest <<< "$1"
	for w in ${rest:-}; do
		if [[ $w == [A-Z]*=* ]]; then envs+=("$w"); else args+=("$w"); fi
	done
	env "${envs[@]}" "$bin" -q "${args[@]}" --netns "$2" -o "$3" 2>>"$TMP/rec.err" & P=$!; PIDS+=($P)
}
echo "txn_nspair: X = $X; Y = $Y; $REPS repetitions, load at start $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq "$REPS"); do
	if (( rep % 2 )); then nx=$NSA ny=$NSB; else nx=$NSB ny=$NSA; fi
	if (( (rep / 2) % 2 )); then
		start "$Y" $ny "$TMP/y.npr"; py=$P; ready $py "$TMP/y.npr"
		start "$X" $nx "$TMP/x.npr"; px=$P; ready $px "$TMP/x.npr"; first=Y
	else
		start "$X" $nx "$TMP/x.npr"; px=$P; ready $px "$TMP/x.npr"
		start "$Y" $ny "$TMP/y.npr"; py=$P; ready $py "$TMP/y.npr"; first=X
	fi
	read -r ta tb < <(taskset -c 0 "$TMP/nsrr" /var/run/netns/$NSA /var/run/netns/$NSB "${RR:-4000}" \
		"${SWEEP_KIB:-4096}" "${NCONN:-16}" "${RESP:-4096}")
	kill -INT $px $py; wait $px $py 2>/dev/null
	rm -f "$TMP"/[xy].npr*
	if [ $nx = $NSA ]; then tx=$ta ty=$tb; else tx=$tb ty=$ta; fi
	echo "rep $rep ($first first) X ${tx:-?} Y ${ty:-?} X-Y $(( ${tx:-0} - ${ty:-0} ))" | tee -a "$TMP/res"
done
echo "txn_nspair: load at end $(cut -d' ' -f1-3 /proc/loadavg)"
awk '{print $NF}' "$TMP/res" | sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
	printf "median X - Y: %.0f ns a round (%d repetitions, min %d, max %d)\n", m, NR, v[1], v[NR]}'
