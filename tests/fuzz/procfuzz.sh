#!/usr/bin/env bash
# tests/fuzz/procfuzz.sh SECONDS: process-level fuzz of the three binaries
# (npanalyze, npreport, npreport compare; also npreport dump) built with
# ASan+UBSan (make fuzz builds build/asan/*), on structure-aware mutants of
# the fixtures from build/tools/npmutate: valid file header, chunk framing,
# zstd and CRCs around mutated MessagePack, so the mutations reach the
# record decoders and the analysis. An analysis npanalyze writes from a
# mutant is rendered and compared too.
#
# A sanitizer report, a signal or a 20 s hang is a failure: the mutant and
# the command are kept in $PROCFUZZ_BUILD/procfuzz-crashes/. Mutants are
# numbered by seed (PROCFUZZ_SEED, default from the clock, printed), so
# `npmutate SEED 1 DIR FIXTURES...` rebuilds one. Ends with "procfuzz: N
# runs on M mutants, K failed"; exit 1 if K > 0.
secs=${1:-60}
cd "$(dirname "$0")/../.."
B=${PROCFUZZ_BUILD:-build}
ANA=$B/asan/npanalyze REP=$B/asan/npreport MUT=$B/tools/npmutate
for x in "$ANA" "$REP" "$MUT"; do
	[ -x "$x" ] || { echo "procfuzz: $x not built (make fuzz builds it)" >&2; exit 2; }
done
SEEDS=(fixtures/rec-basic.npr fixtures/multihost-a.npr fixtures/multihost-b.npr
       fixtures/ana-basic.npa fixtures/golden/basic.npa)
[ -r fixtures/golden/demo-incident.npa ] && SEEDS+=(fixtures/golden/demo-incident.npa)
BASE=fixtures/golden/basic.npa
export ASAN_OPTIONS=exitcode=86:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=exitcode=86:print_stacktrace=1:halt_on_error=1
seed=${PROCFUZZ_SEED:-$(( $(date +%s) % 100000 * 1000 ))}
work=$(mktemp -d)
crashes=$B/procfuzz-crashes
trap 'rm -rf "$work"' EXIT
runs=0 fails=0 mutants=0

# run MUTANT CMD...: one process; a sanitizer report, signal or hang fails.
run() {
	local m=$1; shift
	runs=$((runs + 1))
	timeout 20 "$@" > /dev/null 2> "$work/err"
	local rc=$?
	if [ $rc -eq 86 ] || [ $rc -ge 124 ] || grep -qE 'Sanitizer|runtime error:' "$work/err"; then
		fails=$((fails + 1))
		mkdir -p "$crashes"
		cp "$m" "$crashes/"
		printf '%s\n' "rc=$rc: $*" >> "$crashes/$(basename "$m").cmd"
		echo "procfuzz: FAILED (rc $rc): $*" >&2
		grep -E 'ERROR|runtime error|SUMMARY|#[0-9] ' "$work/err" | head -15 >&2
	fi
}

echo "procfuzz: seed $seed, $secs s" >&2
end=$((SECONDS + secs))
while [ $SECONDS -lt $end ]; do
	rm -f "$work"/mut-* "$work"/o.npa
	"$MUT" "$seed" 8 "$work" "${SEEDS[@]}" || { echo "procfuzz: npmutate failed" >&2; exit 2; }
	for m in "$work"/mut-*; do
		[ $SECONDS -lt $end ] || break
		mutants=$((mutants + 1))
		run "$m" "$REP" dump "$m"
		case $m in
		*.npr)
			rm -f "$work/o.npa"
			# alone, or with a second host (the cross-host code)
			second=(); [ $((mutants % 2)) -eq 0 ] && second=(fixtures/multihost-b.npr)
			run "$m" "$ANA" -q -o "$work/o.npa" "$m" "${second[@]}"
			if [ -s "$work/o.npa" ]; then
				run "$m" "$REP" -r 0 -w 120 "$work/o.npa"
				run "$m" "$REP" compare "$BASE" "$work/o.npa"
			fi ;;
		*.npa)
			run "$m" "$REP" -r 0 -w 120 --legend "$m"
			run "$m" "$REP" --wide --html "$work/r.html" "$m"
			run "$m" "$REP" -f csv -o "$work/csv" "$m"
			run "$m" "$REP" compare "$BASE" "$m"
			run "$m" "$REP" compare "$m" "$m" --format csv ;;
		esac
	done
	seed=$((seed + 8))
done
echo "procfuzz: $runs runs on $mutants mutants, $fails failed" >&2
[ $fails -eq 0 ]
