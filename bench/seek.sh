#!/bin/bash
# --from/--to through the chunk index (docs/FORMAT.md 2.6): a 5-minute window
# of a 2-hour 2-host recording from genfix (PACKETS data packets spaced so
# that they span SPAN seconds, 9 events per packet, chunks of CHUNK events),
# read by `npreport dump` and analysed by `npanalyze -n`, against the full
# read; then the same window on copies without the index (old files, a
# crash: every chunk is decompressed to find the window's). Printed per
# case: chunks read (dump --stats), wall and CPU seconds (user + system,
# /usr/bin/time), peak RSS, and CPU time as a share of the full read.
#
# Env: PACKETS (720000), SPAN (7200 s), FROM (3600), TO (3900), CHUNK (4096),
#      NP_BUILD (build/), BENCH_DIR (a temporary directory).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
PACKETS=${PACKETS:-720000}
SPAN=${SPAN:-7200}
FROM=${FROM:-3600}
TO=${TO:-3900}
CHUNK=${CHUNK:-4096}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/np-bench-seek.XXXXXX)}
trap '[ -z "${BENCH_DIR:-}" ] && rm -rf "$DIR"' EXIT

for b in "$NP_BUILD/npanalyze" "$NP_BUILD/npreport" "$NP_BUILD/tools/genfix" /usr/bin/time; do
	[ -x "$b" ] || { echo "bench/seek.sh: $b missing (make all tools; apt-get install time)" >&2; exit 1; }
done
gap=$(( SPAN * 1000000000 / PACKETS ))
echo "bench/seek.sh: generating $PACKETS packets over $SPAN s into $DIR" >&2
"$NP_BUILD/tools/genfix" -o "$DIR" --packets "$PACKETS" --flows 8 --gap "$gap" --sync 400 \
	--offset 3000000 --drift 20 --chunk-events "$CHUNK" --no-truth || exit 1
# copies without the index: cut at the INDEX chunk (its "end")
for h in hosta hostb; do
	end=$("$NP_BUILD/npreport" dump --type index "$DIR/$h.npr" | sed -n 's/.*"end":\([0-9]*\).*/\1/p')
	[ -n "$end" ] || { echo "bench/seek.sh: $h.npr has no chunk index" >&2; exit 1; }
	head -c "$end" "$DIR/$h.npr" > "$DIR/$h-old.npr"
done

# run NAME CMD...: one line; the full read's CPU time is the reference of its tool
declare -A full
run() {
	local name=$1 tool=$2; shift 2
	/usr/bin/time -f '%e %U %S %M' -o "$DIR/time.txt" "$@" > /dev/null 2> "$DIR/err.txt"
	local rc=$?
	[ $rc -le 1 ] || { echo "bench/seek.sh: $name failed ($rc)" >&2; cat "$DIR/err.txt" >&2; exit 1; }
	local chunks
	chunks=$(awk '/ chunks ok,/ { s += $2 } END { print s + 0 }' "$DIR/err.txt")
	read -r wall usr sys rss < "$DIR/time.txt"
	local cpu
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	[ -z "${full[$tool]:-}" ] && full[$tool]=$cpu
	printf '%-34s %7s %8s %8s %8s %9s\n' "$name" "$( [ "$chunks" -gt 0 ] && echo "$chunks" || echo -)" \
		"$wall" "$cpu" "$(( rss / 1024 ))" \
		"$(awk -v c="$cpu" -v f="${full[$tool]}" 'BEGIN { printf "%.1f %%", (f > 0 ? 100 * c / f : 0) }')"
}

size=$(du -cb "$DIR"/hosta.npr "$DIR"/hostb.npr | tail -1 | cut -f1)
echo "input: 2 hosts, $(awk -v s="$size" 'BEGIN{printf "%.1f MB", s/1e6}') compressed," \
	"$SPAN s, window ${FROM}-${TO} s; machine: $(nproc) cores, $(uname -r)"
printf '%-34s %7s %8s %8s %8s %9s\n' case chunks wall_s cpu_s rss_MB cpu_share
D="$NP_BUILD/npreport dump --stats --type end"
run "dump, full read"                  dump $D "$DIR/hosta.npr" "$DIR/hostb.npr"
run "dump --from/--to, index"          dump $D --from "$FROM" --to "$TO" "$DIR/hosta.npr" "$DIR/hostb.npr"
run "dump --from/--to, no index"       dump $D --from "$FROM" --to "$TO" "$DIR/hosta-old.npr" "$DIR/hostb-old.npr"
A="$NP_BUILD/npanalyze -n -q"
run "npanalyze, full"                  ana $A "$DIR/hosta.npr" "$DIR/hostb.npr"
run "npanalyze --from/--to, index"     ana $A --from "$FROM" --to "$TO" "$DIR/hosta.npr" "$DIR/hostb.npr"
run "npanalyze --from/--to, no index"  ana $A --from "$FROM" --to "$TO" "$DIR/hosta-old.npr" "$DIR/hostb-old.npr"
