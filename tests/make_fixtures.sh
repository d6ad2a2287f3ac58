#!/usr/bin/env bash
# make fixtures: regenerates the deterministic fixtures in fixtures/ with
# tests/tools/mkfixtures (ground truth: fixtures/mkfixtures.md), then checks
# that each is small and that npreport dump reads it as expected.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NP_BUILD:-build}
gen=$build/tools/mkfixtures
if [ ! -x "$gen" ]; then
	echo "make_fixtures: $gen not built (run 'make O=$build tools')" >&2
	exit 1
fi
"$gen" fixtures
"$build/tools/mkhostile" fixtures
fail=0
for f in fixtures/rec-basic.npr fixtures/rec-truncated.npr fixtures/rec-corrupt.npr fixtures/ana-basic.npa; do
	size=$(stat -c %s "$f")
	if [ "$size" -ge 102400 ]; then
		echo "make_fixtures: $f is $size bytes (limit 100 KB)" >&2
		fail=1
	fi
	if [ -x "$build/npreport" ]; then
		rc=0
		"$build/npreport" dump "$f" >/dev/null 2>&1 || rc=$?
		want=0
		case $f in *truncated*|*corrupt*) want=1 ;; esac
		if [ $rc -ne $want ]; then
			echo "make_fixtures: npreport dump $f exited $rc, expected $want" >&2
			fail=1
		fi
	fi
done
[ $fail -eq 0 ] && echo "make_fixtures: wrote rec-basic, rec-truncated, rec-corrupt, ana-basic, $(ls fixtures/hostile | wc -l) hostile files and $(ls fixtures/fuzz/reader | wc -l) fuzz seeds into fixtures/" >&2
exit $fail
