#!/usr/bin/env bash
# Runs every tests/e2e/*.sh (or those named) and sums their closing lines.
cd "$(dirname "$0")/.."
tp=0; tf=0; ts=0
scripts=("$@"); [ ${#scripts[@]} -eq 0 ] && scripts=(tests/e2e/*.sh)
for s in "${scripts[@]}"; do
	[ -f "$s" ] || continue
	log=$(mktemp); start=$(date +%s)
	timeout --kill-after=10 ${E2E_TIMEOUT:-900} bash "$s" > "$log" 2>"$log.err"; rc=$?
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	p=$(echo "$line" | sed -E 's/.*([0-9]+) passed.*/\1/;s/^$/0/')
	p=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+'); p=${p:-0}
	f=$(echo "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+'); f=${f:-0}
	sk=$(echo "$line" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+'); sk=${sk:-0}
	if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$f" -eq 0 ]; }; then f=$((f + 1)); fi
	if [ "$f" -ne 0 ]; then
		# every failed check, also those scrolled out of the tail kept below
		echo "  [e2e] $(basename "$s"): failed checks:" >&2
		grep -E '^  FAIL ' "$log.err" >&2
		echo "  [e2e] $(basename "$s"): last 40 lines of stderr:" >&2
		tail -40 "$log.err" >&2
	fi
	echo "  [e2e] $(basename "$s"): $p passed, $f failed${sk:+, $sk skipped} ($(( $(date +%s) - start )) s)" >&2
	tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + sk))
	rm -f "$log" "$log.err"
done
echo "e2e: $tp passed, $tf failed, $ts skipped"
[ $tf -eq 0 ]
