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

cc -O2 -o "$TMP/rr" "$ROOT/bench/txn_rr.c" || exit 1

run() {   # run MODELINE -> "label median"
	local label bin rest w envs=() args=() p=
	read -r label bin rest <<< "$1"
	for w in ${rest:-}; do
		if [[ $w == [A-Z]*=* ]]; then envs+=("$w"); else args+=("$w"); fi
	done
	if [ "$bin" != - ]; then
		env "${envs[@]}" "$bin" -q "${args[@]}" -o "$TMP/r.npr" 2>>"$TMP/rec.err" & p=$!; PIDS+=($p)
		txn_ready $p "$TMP/r.npr"
	fi
	echo "$label $(taskset -c 0 "$TMP/rr" "${RR:-4000}" "${SWEEP_KIB:-4096}" "${NCONN:-16}" "${RESP:-4096}" /var/run/netns/$NSA)"
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
    rep, label, m = l.split()
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
