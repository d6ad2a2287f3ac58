#!/bin/bash
# What the recorder's socket hooks add to one request/response, measured
# from the application's side, so other processes' socket calls (which
# the machine-wide hooks also run for, and which the BPF statistics of
# bench/hookcost.sh mix in) are not in the figure: one thread pinned to
# CPU 0 does RR rounds on NCONN loopback TCP connections in a namespace of
# its own: a 100 B request sent and received, a RESP-byte response sent
# and received (four socket calls, both transaction roles). Before each
# round a SWEEP_KIB KiB memory walk evicts the caches, as the idle time
# and other work between a paced server's requests do; only the four calls
# are timed (CLOCK_MONOTONIC). Per run: the median round time. Modes run
# in turn (order reversed every other repetition), each with a fresh nprec
# ("none": without one); the cost of a mode is its median minus none's of
# the same repetition.
# Env: CC_MODES (one per line: "LABEL NPREC_BINARY [VAR=VALUE ...] [args]",
# none first: "none -"), REPS (6), RR (4000), NCONN (16), SWEEP_KIB
# (4096), RESP (4096). Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
REPS=${REPS:-6}
MODES_TXT=${CC_MODES:-"none -
def $NP_BUILD/nprec"}
NSA=txcc$$-a NSB=txcc$$-b
TMP=$(mktemp -d /tmp/np-txcc.XXXXXX)
. "$ROOT/bench/txn_lib.sh"
txn_traps
ip netns add $NSA && ip -n $NSA link set lo up || exit 1
mapfile -t MODES < <(printf '%s\n' "$MODES_TXT" | sed '/^[[:space:]]*$/d')

cat > "$TMP/rr.c" <<'C'
#include <arpa/inet.h>
#include <netinet/tcp.h>
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
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), sweep = atoi(argv[2]) * 1024, nc = atoi(argv[3]), resp = atoi(argv[4]);
	int one = 1, c[256], s[256];
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (nc < 1 || nc > 256 || resp < 1 || resp > 65536 || bind(ls, (void *)&a, sizeof(a)) || listen(ls, 256) ||
	    getsockname(ls, (void *)&a, &al))
		return 1;
	for (int i = 0; i < nc; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(c[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(c[i], (void *)&a, sizeof(a)) || (s[i] = accept(ls, NULL, NULL)) < 0)
			return 1;
		setsockopt(s[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	volatile char *buf = calloc(1, (size_t)sweep + 64);
	static char req[100], out[65536], in[65536];
	long long *t = calloc(n, sizeof(*t));
	for (int r = 0; r < n; r++) {
		for (int k = 0; k < sweep; k += 64)
			buf[k]++;
		int i = r % nc;
		long long t0 = now();
		if (send(c[i], req, sizeof(req), 0) != sizeof(req) || full(s[i], in, sizeof(req)) ||
		    send(s[i], out, resp, 0) != resp || full(c[i], in, resp))
			return 2;
		t[r] = now() - t0;
	}
	qsort(t, n, sizeof(*t), cmp);
	printf("%lld %lld %lld\n", t[n / 2], t[n / 4], t[3 * n / 4]);
	return 0;
}
C
cc -O2 -o "$TMP/rr" "$TMP/rr.c" || exit 1

# nprec has written its file and its start-up is over (CPU settled, as
# bench/txn_cpupair.sh)
cpu_ms() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.1f", s / 1e6}'; }
ready() {
	local c0 c1
	for _ in $(seq 100); do [ -s "$2" ] && break; sleep 0.1; done
	c1=$(cpu_ms "$1")
	for _ in $(seq 30); do sleep 0.5; c0=$c1; c1=$(cpu_ms "$1"); awk -v a="$c0" -v b="$c1" 'BEGIN {exit !(b - a < 5)}' && break; done
}
run() {   # run MODELINE -> "label median p25 p75"
	local label bin rest w envs=() args=() p=
	read -r label bin rest <<< "$1"
	for w in ${rest:-}; do
		if [[ $w == [A-Z]*=* ]]; then envs+=("$w"); else args+=("$w"); fi
	done
	if [ "$bin" != - ]; then
		env "${envs[@]}" "$bin" -q "${args[@]}" -o "$TMP/r.npr" 2>>"$TMP/rec.err" & p=$!; PIDS+=($p)
		ready $p "$TMP/r.npr"
	fi
	echo "$label $(ip netns exec $NSA taskset -c 0 "$TMP/rr" "${RR:-4000}" "${SWEEP_KIB:-4096}" "${NCONN:-16}" "${RESP:-4096}")"
	if [ -n "$p" ]; then kill -INT $p; wait $p 2>/dev/null; fi
	rm -f "$TMP"/r.npr*
}
echo "txn_callcost: $REPS x ${#MODES[@]} modes, load at start $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq "$REPS"); do
	order=("${MODES[@]}")
	if (( rep % 2 == 0 )); then
		order=(); for ((i = ${#MODES[@]} - 1; i >= 0; i--)); do order+=("${MODES[i]}"); done
	fi
	for m in "${order[@]}"; do echo "$rep $(run "$m")" | tee -a "$TMP/res" >&2; done
done
echo "txn_callcost: load at end $(cut -d' ' -f1-3 /proc/loadavg); $(cd "$ROOT" && git log --oneline -1 | cut -c1-50)"
for m in "${MODES[@]}"; do echo "  mode: $m"; done
# per mode: median round; minus none's of the same repetition (the hooks'
# cost a round); paired ratios of those costs against the first nprec mode
python3 - "$TMP/res" "${MODES[@]}" <<'PY'
import statistics as st, sys
med = {}
for l in open(sys.argv[1]):
    rep, label, m, _, _ = l.split()
    med.setdefault(label, {})[rep] = int(m)
order = [m.split()[0] for m in sys.argv[2:]]
base = med.get("none", {})
recs = [l for l in order if l != "none"]
for l in order:
    v = med[l]
    line = "%-6s median round %7.0f ns" % (l, st.median(v.values()))
    if l != "none" and base:
        d = [v[r] - base[r] for r in v if r in base]
        line += "   cost a round (minus none, same rep): median %5.0f ns  [%s]" % (st.median(d), " ".join("%d" % x for x in d))
    print(line)
if base and len(recs) > 1:
    a = recs[0]
    for l in recs[1:]:
        r = [(med[l][k] - base[k]) / (med[a][k] - base[k]) for k in med[l] if k in med[a] and k in base and med[a][k] > base[k]]
        if r:
            print("paired cost %s/%s: median %.2f  [%s]" % (l, a, st.median(r), " ".join("%.2f" % x for x in r)))
PY
