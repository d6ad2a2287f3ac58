#!/bin/bash
# make bench-analyze: npanalyze throughput on a generated 2-host recording.
# genfix writes hosta.npr + hostb.npr with PACKETS data packets (9 events
# per packet: 4 hooks on the sender incl. sock_send, 3 on the receiver, and
# the ACK on 2 hooks), 8 flows, a 3 ms clock offset and 20 ppm drift. Then
# npanalyze runs REPS times under /usr/bin/time -v; printed per run: events,
# CPU seconds per phase (npanalyze's own stderr), events/s of the analysis
# proper (merge + match + clock + decompose, per core, CPU time) and of the
# whole run including reading (zstd + msgpack decode), and peak RSS.
#
# Env: PACKETS (1150000, about 10.35 M events), REPS (3), NP_BUILD (build/),
#      BENCH_DIR (a temporary directory).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
PACKETS=${PACKETS:-1150000}
REPS=${REPS:-3}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/np-bench-analyze.XXXXXX)}
trap '[ -z "${BENCH_DIR:-}" ] && rm -rf "$DIR"' EXIT

for b in "$NP_BUILD/npanalyze" "$NP_BUILD/tools/genfix" /usr/bin/time; do
	[ -x "$b" ] || { echo "bench-analyze: $b missing (make all tools; apt-get install time)" >&2; exit 1; }
done

echo "bench-analyze: generating $PACKETS packets into $DIR" >&2
"$NP_BUILD/tools/genfix" -o "$DIR" --packets "$PACKETS" --flows 8 --gap 2000 --sync 400 \
	--offset 3000000 --drift 20 --no-truth || exit 1
size=$(du -cb "$DIR"/host*.npr | tail -1 | cut -f1)

printf '%-4s %10s %8s %8s %8s %8s %12s %12s %8s\n' run events read_s match_s clock_s decomp_s \
	analysis_ev/s total_ev/s rss_MB
for r in $(seq 1 "$REPS"); do
	/usr/bin/time -v "$NP_BUILD/npanalyze" -o "$DIR/out.npa" "$DIR/hosta.npr" "$DIR/hostb.npr" \
		> "$DIR/summary.txt" 2> "$DIR/err.txt"
	rc=$?
	[ $rc -le 1 ] || { cat "$DIR/err.txt" >&2; exit 1; }
	awk -v run="$r" '
		/packet events from/ { ev = $2; for (i = 1; i <= NF; i++) if ($i == "in") rd = $(i + 1) }
		/match \(join/   { m = $(NF - 2) }
		/clock model/    { c = $(NF - 2) }
		/decompose,/     { d = $(NF - 2) }
		/other families/ { o = $(NF - 2) }
		/Maximum resident set size/ { rss = $NF / 1024 }
		END {
			an = m + c + d; tot = rd + an + o
			printf "%-4s %10d %8.3f %8.3f %8.3f %8.3f %12.0f %12.0f %8.0f\n", run, ev, rd, m, c, d,
				(an > 0 ? ev / an : 0), (tot > 0 ? ev / tot : 0), rss
		}' "$DIR/err.txt"
done
echo "input: $(awk -v s="$size" 'BEGIN{printf "%.1f MB", s/1e6}') compressed; machine: $(nproc) cores, $(uname -r)"
grep -E "offset" "$DIR/summary.txt" | sed 's/^ */clock: /'
