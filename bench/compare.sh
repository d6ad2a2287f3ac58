#!/usr/bin/env bash
# make bench-compare: is npreport compare a CI gate that can be trusted?
# Records real reruns of one scenario (bench/compare_run.sh: a Python HTTP
# server with a 50 ms /slow and a 2 ms /fast endpoint, nprec on the server,
# about 11 s per run) and compares pairs of single runs with the default gate:
#   A/A loss 0      (base run, another base run)          -> exit 0 wanted
#   A/A loss 1 %    (two runs with 1 % packet loss)        -> exit 0 wanted
#   A/B slow +10 ms (/slow 50 -> 60 ms)                    -> exit 1 naming GET /slow
#   A/B fast +20 %  (/fast 2 -> 2.6 ms: +20 % of its p99)  -> exit 1 naming GET /fast
#   A/B loss +1 %   (loss 0 -> 1 %)                        -> exit 1 naming 10.93.1.2:8090
# and the several-runs form (3 base runs -- 3 new runs) on the same files
# (multi-aa1: 3 runs at 1 % loss -- 3 others).
# Runs are kept in BENCH_DIR (default /tmp/np-bench-compare) and reused, so a
# changed npreport can be judged again without recording: BENCH_REUSE=1.
# usage: bench/compare.sh [PAIRS]   (default 20; about 25 min for 20)
cd "$(dirname "$0")/.." || exit 1
NP_BUILD=${NP_BUILD:-$PWD/build}
P=${1:-20}
DIR=${BENCH_DIR:-/tmp/np-bench-compare}
mkdir -p "$DIR"
run() {   # run NAME ENV...
	local out=$DIR/$1.npa; shift
	[ -s "$out" ] && return 0
	env "$@" NP_BUILD="$NP_BUILD" bash bench/compare_run.sh "$out" 2>> "$DIR/runs.log" ||
		echo "bench-compare: run $out failed (see $DIR/runs.log)" >&2
}
if [ -z "${BENCH_REUSE:-}" ]; then
	for i in $(seq 1 "$P"); do
		echo "bench-compare: round $i of $P" >&2
		run a0-$i-x CMP_LOSS=0;    run a0-$i-y CMP_LOSS=0
		run a1-$i-x CMP_LOSS=0.01; run a1-$i-y CMP_LOSS=0.01
		run slow-$i CMP_SLOW_MS=60
		run fast-$i CMP_FAST_MS=2.6
	done
fi
NPREPORT=$NP_BUILD/npreport
# judge NAME WANT_RC NAME_PATTERN BASE... -- NEW...: one comparison
judge() {
	local name=$1 want=$2 pat=$3 f out rc; shift 3
	for f in "$@"; do [ "$f" = -- ] || [ -s "$f" ] || { echo "$name missing" >> "$DIR/judged.txt"; return; }; done
	out=$("$NPREPORT" compare "$@" 2>&1); rc=$?
	local ok=0
	if [ "$want" -eq 0 ]; then [ $rc -eq 0 ] && ok=1
	else [ $rc -eq 1 ] && echo "$out" | grep '^compare:' | grep -qF -- "$pat" && ok=1; fi
	echo "$name rc=$rc ok=$ok $(echo "$out" | grep '^compare:' | cut -c1-300)" >> "$DIR/judged.txt"
}
: > "$DIR/judged.txt"
for i in $(seq 1 "$P"); do
	judge "aa0-$i" 0 "" "$DIR/a0-$i-x.npa" "$DIR/a0-$i-y.npa"
	judge "aa1-$i" 0 "" "$DIR/a1-$i-x.npa" "$DIR/a1-$i-y.npa"
	judge "slow-$i" 1 "GET /slow" "$DIR/a0-$i-x.npa" "$DIR/slow-$i.npa"
	judge "fast-$i" 1 "GET /fast" "$DIR/a0-$i-x.npa" "$DIR/fast-$i.npa"
	judge "loss-$i" 1 "10.93.1.2:8090" "$DIR/a0-$i-x.npa" "$DIR/a1-$i-x.npa"
done
# several runs a side: 3 -- 3 from consecutive rounds
for i in $(seq 1 3 $((P - 2))); do
	b=(); a=(); s=(); f=(); l=(); l2=()
	for k in $i $((i + 1)) $((i + 2)); do
		b+=("$DIR/a0-$k-x.npa"); a+=("$DIR/a0-$k-y.npa"); s+=("$DIR/slow-$k.npa")
		f+=("$DIR/fast-$k.npa"); l+=("$DIR/a1-$k-x.npa"); l2+=("$DIR/a1-$k-y.npa")
	done
	judge "multi-aa0-$i" 0 "" "${b[@]}" -- "${a[@]}"
	judge "multi-aa1-$i" 0 "" "${l[@]}" -- "${l2[@]}"
	judge "multi-slow-$i" 1 "GET /slow" "${b[@]}" -- "${s[@]}"
	judge "multi-fast-$i" 1 "GET /fast" "${b[@]}" -- "${f[@]}"
	judge "multi-loss-$i" 1 "10.93.1.2:8090" "${b[@]}" -- "${l[@]}"
done
echo "bench-compare: $P pairs per case, default gate, npreport $("$NPREPORT" --version)"
for c in aa0 aa1 slow fast loss multi-aa0 multi-aa1 multi-slow multi-fast multi-loss; do
	n=$(grep -c "^$c-" "$DIR/judged.txt"); ok=$(grep "^$c-" "$DIR/judged.txt" | grep -c ' ok=1')
	nz=$(grep "^$c-" "$DIR/judged.txt" | grep -vc ' rc=0')
	printf '  %-11s %2d of %2d as wanted (%d non-zero exits)\n' "$c" "$ok" "$n" "$nz"
done
echo "every comparison: $DIR/judged.txt"
