#!/bin/bash
# make bench-analyze: npanalyze throughput and memory on generated recordings.
#
# Case "2h" (default PACKETS 1150000, about 10.35 M events): genfix writes
# hosta.npr + hostb.npr with PACKETS data packets (9 events per packet: 4
# hooks on the sender incl. sock_send, 3 on the receiver, and the ACK on 2
# hooks), 8 flows, a 3 ms clock offset and 20 ppm drift. npanalyze runs REPS
# times with --threads 1 and REPS times with --threads 2 under
# /usr/bin/time -v (1 and 2 threads back to back in each repetition, order
# alternating); per run: events, CPU seconds per phase (npanalyze's own
# stderr), events/s of the analysis proper (merge + match + clock +
# decompose, per core, CPU time) and of the whole run per core (CPU time),
# CPU of all threads, CPU of the main thread (the critical path when the
# workers keep up), wall time, peak RSS. Then the speed-up of 2 threads over
# 1 (median wall times; the median of the per-repetition ratios with its
# sign-test interval and the verdict on issue 23's >= 1.7x, bench/speedup.py;
# and, as wall time on a shared machine says little, 1-thread CPU over
# 2-thread main-thread CPU) and whether the .npa files are byte-identical.
#
# Case "10h" (LARGE=1, the default; LARGE=0 skips it): genfix --pair 0..4
# writes 10 hosts (5 pairs, clocks linked along a chain) with LARGE_PACKETS
# packets per pair (default 2222222: about 100 M events), analysed once with
# --threads 1 and once with --threads 2 (cmp of the two .npa). Needs about
# 70 bytes of memory per event (7 GB at 100 M events) and ~1.3 GB of disk.
#
# Both cases are then analysed streamed (npanalyze --window STREAM_WINDOW
# --horizon STREAM_HORIZON, docs/ANALYSIS.md "Streamed analysis") with
# --threads 1 and 2: CPU per pass, peak RSS, npanalyze's predicted peak,
# and whether the two .npa are byte-identical.
#
# Env: PACKETS, REPS (6: the fewest pairs with a 95 % sign-test interval),
#      LARGE (1), LARGE_PACKETS, INMEM (1; 0 skips the in-memory runs of
#      the 10h case), STREAM_WINDOW (0.25 s),
#      STREAM_HORIZON (0.02 s: genfix packets span < 2 ms, its HEADERs'
#      wall clocks are exact), NP_BUILD (build/),
#      BENCH_DIR (a temporary directory).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
PACKETS=${PACKETS:-1150000}
REPS=${REPS:-6}
LARGE=${LARGE:-1}
LARGE_PACKETS=${LARGE_PACKETS:-2222222}
STREAM_WINDOW=${STREAM_WINDOW:-0.25}
STREAM_HORIZON=${STREAM_HORIZON:-0.02}
INMEM=${INMEM:-1}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/np-bench-analyze.XXXXXX)}
trap '[ -z "${BENCH_DIR:-}" ] && rm -rf "$DIR"' EXIT
mkdir -p "$DIR" || exit 1

for b in "$NP_BUILD/npanalyze" "$NP_BUILD/tools/genfix" /usr/bin/time; do
	[ -x "$b" ] || { echo "bench-analyze: $b missing (make all tools; apt-get install time)" >&2; exit 1; }
done
GENOPT=(--flows 8 --gap 2000 --sync 400 --offset 3000000 --drift 20 --no-truth)

# run CASE THREADS RUN OUT.npa FILES...: one analysis, one row.
run() {
	local case=$1 th=$2 r=$3 out=$4
	shift 4
	/usr/bin/time -v "$NP_BUILD/npanalyze" --threads "$th" -o "$out" "$@" \
		> "$DIR/summary.txt" 2> "$DIR/err.txt"
	local rc=$?
	[ $rc -le 1 ] || { cat "$DIR/err.txt" >&2; exit 1; }
	awk -v cs="$case" -v th="$th" -v run="$r" '
		function cpu(   i) { for (i = 1; i <= NF; i++) if ($i == "CPU") return $(i - 2); return 0 }
		function mn(   i) { for (i = 1; i <= NF; i++) if ($i == "main") return $(i - 2); return 0 }
		/packet events from/ { ev = $2; rd = cpu(); mm += mn() }
		/match \(join/   { m = cpu(); mm += mn() }
		/clock model/    { c = cpu(); mm += mn() }
		/decompose,/     { d = cpu(); mm += mn() }
		/other families/ { o = cpu(); mm += mn() }
		/Elapsed \(wall clock\)/ { n = split($NF, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
		/Maximum resident set size/ { rss = $NF / 1024 }
		END {
			an = m + c + d; tot = rd + an + o
			printf "%-4s %3s %3s %10d %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %11.2f %11.2f %8.0f %6.0f\n",
				cs, th, run, ev, rd, m, c, d, tot, mm, w, (an > 0 ? ev / an / 1e6 : 0),
				(tot > 0 ? ev / tot / 1e6 : 0), rss, (ev > 0 ? rss * 1048576 / ev : 0)
		}' "$DIR/err.txt" | tee -a "$DIR/rows.txt"
}

# srun CASE THREADS OUT.npa FILES...: one streamed analysis (--window
# STREAM_WINDOW --horizon STREAM_HORIZON), one row: CPU per pass (skeleton,
# pass 1 = clock points, pass 2 = decomposition), CPU of all threads, wall,
# peak RSS, npanalyze's predicted peak, windows.
srun() {
	local case=$1 th=$2 out=$3
	shift 3
	/usr/bin/time -v "$NP_BUILD/npanalyze" --threads "$th" --window "$STREAM_WINDOW" \
		--horizon "$STREAM_HORIZON" -o "$out" "$@" > "$DIR/summary.txt" 2> "$DIR/err.txt"
	local rc=$?
	[ $rc -le 1 ] || { cat "$DIR/err.txt" >&2; exit 1; }
	awk -v cs="$case" -v th="$th" '
		function cpu(   i) { for (i = 1; i <= NF; i++) if ($i == "CPU") return $(i - 2); return 0 }
		/packet events from .* streamed in/ { ev = $2; nw = $(NF - 9) }
		/stream skeleton/ { sk = cpu() }
		/stream pass 1/   { p1 = cpu() }
		/stream pass 2/   { p2 = cpu() }
		/predicted peak/  { for (i = 1; i <= NF; i++) if ($i == "peak" && $(i - 1) == "predicted") pp = $(i + 1) }
		/User time/       { u = $NF }
		/System time/     { sy = $NF }
		/Elapsed \(wall clock\)/ { n = split($NF, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
		/Maximum resident set size/ { rss = $NF / 1024 }
		END {
			printf "%-4s %3s %10d %5d %7.2f %7.2f %7.2f %7.2f %7.2f %8.0f %8.0f %6.0f\n", cs, th, ev, nw,
				sk, p1, p2, u + sy, w, rss, pp, (ev > 0 ? rss * 1048576 / ev : 0)
		}' "$DIR/err.txt" | tee -a "$DIR/srows.txt"
}

sheader() {
	printf '%-4s %3s %10s %5s %7s %7s %7s %7s %7s %8s %8s %6s\n' case thr events wins \
		skel_s pass1_s pass2_s cpu_s wall_s rss_MB pred_MB B/ev
}

header() {
	printf '%-4s %3s %3s %10s %7s %7s %7s %7s %7s %7s %7s %11s %11s %8s %6s\n' case thr run events \
		read_s match_s clock_s decomp_s cpu_s main_s wall_s analysis_M/s cpu_M/s/core rss_MB B/ev
}

median_col() {   # median of column $3 of case $1, threads $2
	awk -v cs="$1" -v th="$2" -v c="$3" '$1 == cs && $2 == th { print $c }' "$DIR/rows.txt" | sort -n |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'
}

echo "bench-analyze: generating $PACKETS packets into $DIR/2h" >&2
"$NP_BUILD/tools/genfix" -o "$DIR/2h" --packets "$PACKETS" "${GENOPT[@]}" || exit 1
size=$(du -cb "$DIR"/2h/host*.npr | tail -1 | cut -f1)
: > "$DIR/rows.txt"
header
# 1 and 2 threads back to back in each repetition, the order alternating,
# so that the pair shares the machine's minute (bench/speedup.py)
for r in $(seq 1 "$REPS"); do
	order="1 2"; [ $((r % 2)) = 0 ] && order="2 1"
	for th in $order; do
		run 2h "$th" "$r" "$DIR/2h-t$th.npa" "$DIR/2h/hosta.npr" "$DIR/2h/hostb.npr"
	done
done
w1=$(median_col 2h 1 11); w2=$(median_col 2h 2 11)
c1=$(median_col 2h 1 9); m2=$(median_col 2h 2 10)
same=$(cmp -s "$DIR/2h-t1.npa" "$DIR/2h-t2.npa" && echo byte-identical || echo DIFFERENT)
sp=$(awk -v a="$w1" -v b="$w2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "2h: median wall --threads 1 ${w1} s, --threads 2 ${w2} s: speed-up ${sp}x; .npa of 1 and 2 threads $same"
python3 "$ROOT/bench/speedup.py" "$DIR/rows.txt" 2h 1.7
cp=$(awk -v a="$c1" -v b="$m2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "2h: CPU of 1 thread ${c1} s / main-thread CPU of 2 threads ${m2} s = ${cp}x (speed-up on idle cores if the workers keep up)"
echo "input: $(awk -v s="$size" 'BEGIN{printf "%.1f MB", s/1e6}') compressed; machine: $(nproc) cores, $(uname -r)"
grep -E "offset" "$DIR/summary.txt" | sed 's/^ */clock: /'
echo "2h streamed (--window $STREAM_WINDOW --horizon $STREAM_HORIZON):"
sheader
for th in 1 2; do
	srun 2h "$th" "$DIR/2hS-t$th.npa" "$DIR/2h/hosta.npr" "$DIR/2h/hostb.npr"
done
same=$(cmp -s "$DIR/2hS-t1.npa" "$DIR/2hS-t2.npa" && echo byte-identical || echo DIFFERENT)
echo "2h streamed: .npa of 1 and 2 threads $same"

[ "$LARGE" = 1 ] || exit 0
echo "bench-analyze: generating 5 pairs x $LARGE_PACKETS packets into $DIR/10h" >&2
for p in 0 1 2 3 4; do
	"$NP_BUILD/tools/genfix" -o "$DIR/10h" --pair $p --seed $((p + 1)) --packets "$LARGE_PACKETS" \
		"${GENOPT[@]}" || exit 1
done
rm -rf "$DIR/2h"
size=$(du -cb "$DIR"/10h/p*.npr | tail -1 | cut -f1)
if [ "$INMEM" = 1 ]; then
	header
	for th in 1 2; do
		run 10h "$th" 1 "$DIR/10h-t$th.npa" "$DIR"/10h/p*.npr
	done
	same=$(cmp -s "$DIR/10h-t1.npa" "$DIR/10h-t2.npa" && echo byte-identical || echo DIFFERENT)
	echo "10h: .npa of 1 and 2 threads $same; input $(awk -v s="$size" 'BEGIN{printf "%.1f MB", s/1e6}') compressed"
	grep -c "accurate" "$DIR/summary.txt" | sed 's/^/10h: hosts aligned besides the reference: /'
fi
echo "10h streamed (--window $STREAM_WINDOW --horizon $STREAM_HORIZON):"
sheader
for th in 1 2; do
	srun 10h "$th" "$DIR/10hS-t$th.npa" "$DIR"/10h/p*.npr
done
same=$(cmp -s "$DIR/10hS-t1.npa" "$DIR/10hS-t2.npa" && echo byte-identical || echo DIFFERENT)
echo "10h streamed: .npa of 1 and 2 threads $same"

