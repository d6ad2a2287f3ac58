#!/usr/bin/env bash
# tests/run_fuzz.sh SECONDS FUZZER... : runs each libFuzzer target for its share
# of SECONDS on its seed corpus (fixtures/fuzz/NAME, copied to a scratch dir).
# With PROCFUZZ_BUILD set (make fuzz / fuzz-short), the process-level fuzz of
# the binaries (tests/fuzz/procfuzz.sh) takes one more share of SECONDS.
# FUZZ_SEED=N fixes every fuzzer's seed (make test's short run does, so that
# CI repeats itself; new inputs come from `make fuzz`, which draws seeds
# from the clock).
secs=$1; shift
seedopt=(); [ -n "${FUZZ_SEED:-}" ] && seedopt=(-seed="$FUZZ_SEED")
[ -n "${FUZZ_SEED:-}" ] && export PROCFUZZ_SEED=${PROCFUZZ_SEED:-$((FUZZ_SEED * 1000))}
cd "$(dirname "$0")/.."
proc=0; [ -n "$PROCFUZZ_BUILD" ] && proc=1
n=$(( $# + proc )); [ $n -eq 0 ] && { echo "fuzz: 0 passed, 0 failed"; exit 0; }
each=$(( secs / n )); [ $each -lt 5 ] && each=5
pass=0; fail=0
if [ $proc -eq 1 ]; then
	if tests/fuzz/procfuzz.sh "$each"; then
		pass=$((pass + 1)); echo "  [fuzz] procfuzz: ok ($each s)" >&2
	else
		fail=$((fail + 1)); echo "  [fuzz] procfuzz: FAILED (inputs in $PROCFUZZ_BUILD/procfuzz-crashes)" >&2
	fi
fi
for f in "$@"; do
	name=$(basename "$f")
	corpus=$(mktemp -d); seeds=fixtures/fuzz/${name#fuzz_}
	[ -d "$seeds" ] && cp -r "$seeds/." "$corpus/"
	[ -d fixtures ] && find fixtures -maxdepth 1 -name '*.np[ra]' -exec cp {} "$corpus/" \;
	# the hostile files too, but not the 256 MiB nil chunk (a second per run)
	[ -d fixtures/hostile ] && find fixtures/hostile -name '*.npr' -size -4k -exec cp {} "$corpus/" \;
	if "$f" "${seedopt[@]}" -max_total_time="$each" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 \
		"$corpus" > "$corpus.log" 2>&1; then
		pass=$((pass + 1)); echo "  [fuzz] $name: ok ($each s)" >&2
	else
		fail=$((fail + 1)); echo "  [fuzz] $name: FAILED" >&2; tail -40 "$corpus.log" >&2
		cp -f crash-* leak-* timeout-* build/ 2>/dev/null
	fi
	rm -rf "$corpus" "$corpus.log" crash-* leak-* timeout-* oom-* 2>/dev/null
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
