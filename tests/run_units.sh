#!/usr/bin/env bash
# Runs unit test binaries. Each prints its own "N passed, N failed" as its last
# line; this sums them and prints the total last.
mode=$1; shift
tp=0; tf=0
for t in "$@"; do
	out=$("$t" 2>&1); rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
	p=$(echo "$line" | awk '{print $1+0}'); f=$(echo "$line" | awk '{print $3+0}')
	if [ -z "$line" ] || [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | tail -30 >&2
		[ -z "$line" ] && f=$((f + 1))
		[ $rc -ne 0 ] && [ "${f:-0}" -eq 0 ] && f=1
	fi
	echo "  [$mode] $(basename "$t"): ${p:-0} passed, ${f:-0} failed" >&2
	tp=$((tp + ${p:-0})); tf=$((tf + ${f:-0}))
done
echo "unit-$mode: $tp passed, $tf failed"
[ $tf -eq 0 ]
