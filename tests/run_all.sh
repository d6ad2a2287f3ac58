#!/usr/bin/env bash
# make test: unit tests (plain, then ASan+UBSan), a short fuzz run, the
# end-to-end tests (root), and one closing "N passed, N failed" line.
cd "$(dirname "$0")/.."
O=${O:-build}
export NP_BUILD=${NP_BUILD:-$PWD/$O}
tp=0; tf=0
# Every failed check and suite, repeated just above the closing line: a CI
# service often keeps only a log's tail, and the failures scroll far above it.
failures=$(mktemp)
trap 'rm -f "$failures"' EXIT
run() {
	local log line p f
	log=$(mktemp)
	# Stream to stderr as it runs; keep a copy to read the closing line.
	"$@" 2>&1 | tee "$log" >&2
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	grep -E '^ *FAIL|FAILED|^ *\[[a-z0-9-]+\] [^:]+: [0-9]+ passed, [1-9][0-9]* failed' "$log" >> "$failures"
	rm -f "$log"
	p=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+'); p=${p:-0}
	f=$(echo "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+'); f=${f:-1}
	tp=$((tp + p)); tf=$((tf + f))
}
run make --no-print-directory O="$O" unit
run make --no-print-directory O="$O" unit-asan
run make --no-print-directory O="$O" fuzz-short FUZZ_SHORT_SECONDS=${FUZZ_SHORT_SECONDS:-60}
if [ "$(id -u)" -eq 0 ]; then
	run tests/run_e2e.sh
else
	echo "e2e tests skipped: they need root (network namespaces, eBPF)" >&2
fi
if [ -s "$failures" ]; then
	echo "what failed ($(wc -l < "$failures") lines; the first 15):" >&2
	head -15 "$failures" >&2
fi
echo "$tp passed, $tf failed"
[ $tf -eq 0 ]
