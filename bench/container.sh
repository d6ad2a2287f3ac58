#!/bin/bash
# Container throughput (tests/tools/ctbench): packet-hook events packed into
# PKT_EVENTS records of 65536 events, one zstd chunk each, written to a file
# and read back; rates per second of process CPU time (the project machines
# are shared, wall time is not a measure). Env: NP_BUILD (build/), EVENTS
# (4194304), LEVELS ("1 3 9").
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
bin=$NP_BUILD/tools/ctbench
[ -x "$bin" ] || { echo "bench/container.sh: $bin not built (make tools)" >&2; exit 1; }
for z in ${LEVELS:-1 3 9}; do
	echo "== zstd level $z"
	"$bin" -n "${EVENTS:-4194304}" -z "$z" || exit 1
done
# seeking by time through the chunk index (bench/seek.sh; SEEK=0 skips it)
[ "${SEEK:-1}" = 0 ] || NP_BUILD=$NP_BUILD bash "$ROOT/bench/seek.sh"
