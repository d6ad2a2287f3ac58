#!/bin/bash
# make bench: the benchmarks that need no real traffic, one after another,
# each printing its own table (docs/BENCHMARKS.md says which command gave
# which figures). The recorder's overhead (bench-record, bench-hookfloor),
# the compare gate (bench-compare) and the public-trace scores
# (bench-patterns-real) take 20-40 min each and want a quiet machine: run
# them on their own, or here with BENCH_ALL=1.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export NP_BUILD=${NP_BUILD:-$ROOT/build}
benches="container analyze patterns"
[ "${BENCH_ALL:-0}" = 1 ] && benches="$benches patterns_real record hookfloor compare"
failed=0
for b in $benches; do
	echo "=== bench/$b.sh ($(date -u +%H:%M:%S) UTC)"
	bash "$ROOT/bench/$b.sh" || { echo "bench/$b.sh failed" >&2; failed=$((failed + 1)); }
done
[ "$failed" = 0 ]
