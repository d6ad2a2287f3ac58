#!/bin/bash
# bench/tpdispatch.sh: what the hub (record/core/hookhub.c) saves per event.
# tests/tools/tpdispatch times a loop of send()+recv() on an AF_UNIX
# socketpair (one sock_send_length and one sock_recv_length event per
# iteration) with empty BPF programs on both tracepoints: none; K attached
# on their own (as each family did before the hub); one head with a chain
# of K tail-called members (the hub). And a getppid() loop with and without
# one classic syscall tracepoint attached (sys_enter_write: every syscall
# of the machine then takes the slow path). Each figure is the best of 9
# rounds; the configurations alternate ROUNDS times and the medians are
# printed, so a noisy neighbour hurts every configuration alike.
# Env: NP_BUILD (build/), ROUNDS (5). Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
TD=$NP_BUILD/tools/tpdispatch
ROUNDS=${ROUNDS:-5}
[ "$(id -u)" = 0 ] || { echo "tpdispatch.sh: needs root" >&2; exit 2; }
[ -x "$TD" ] || { echo "tpdispatch.sh: $TD not built (make tools)" >&2; exit 2; }
CONFIGS=("none 0" "alone 1" "alone 3" "chain 1" "chain 3" "syscall" "syscall on")
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
for r in $(seq "$ROUNDS"); do
	echo "round $r/$ROUNDS" >&2
	for c in "${CONFIGS[@]}"; do
		# shellcheck disable=SC2086
		"$TD" $c >>"$OUT" || exit 1
	done
done
echo "tpdispatch: median of $ROUNDS rounds (each the best of 9 loops), $(uname -r), $(nproc) CPUs"
for c in "${CONFIGS[@]}"; do
	set -- $c
	key="$1 ${2:-}"
	[ "$1" = syscall ] && key="syscall tp-${2:+on}"; [ "$key" = "syscall tp-" ] && key="syscall tp-off"
	grep -F "$key " "$OUT" | sort -k3,3n | awk -v k="$key" '{ v[NR] = $3; u = $4 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		      printf "%-14s %8.1f %s  (min %.1f, max %.1f)\n", k, m, u, v[1], v[NR] }'
done
