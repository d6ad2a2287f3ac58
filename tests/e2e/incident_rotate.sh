#!/usr/bin/env bash
# nprec --rotate on real traffic: every file of the set reads alone (own
# header, rotation index, same host identity), the set has no gap (INTERVAL
# seq continues across files) and together holds exactly the bytes sent;
# --rotate SIZE,COUNT keeps only the newest COUNT files.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init incident_rotate
e2e_need_root
[ -x "$NPREC" ] || e2e_skip "nprec not built"
. "$(dirname "$0")/../lib/incident.sh"
[ -x "$SUM" ] || e2e_skip "tests/tools/in_npsum not built"
command -v socat >/dev/null || e2e_skip "socat missing"

ns_add in-a && ns_add in-b || e2e_skip "cannot create namespaces"
veth_pair in-a in-ra 10.231.1.1/24 in-b in-rb 10.231.1.2/24
PORT=5311
bg ip netns exec in-b socat -u TCP-LISTEN:$PORT,reuseaddr,fork OPEN:/dev/null
ns_wait_listen in-b $PORT

# send N chunks of SIZE random bytes, one connection each
send() {
	local n=$1 size=$2 i
	for i in $(seq "$n"); do
		head -c "$size" /dev/urandom | ip netns exec in-a socat -u - TCP:10.231.1.2:$PORT
		sleep 0.3
	done
}

sum_of() { eval "$("$SUM" --port $PORT "$1")"; }

# ---- A: keep every file; the set is complete ----
# Only the test's namespace: the bytes to port 5311 are the test's alone
# (bench/netcpu_sampled.sh's iperf3 uses 5311 too: a helper's bench running
# beside this test put 1.9 GB of it into the set's 12 MB).
D=$E2E_TMP/a; mkdir -p "$D"
bg "$NPREC" -q -o "$D/rot.npr" -I 100ms --rotate 4K --netns in-b
REC=$BG_PID
in_wait_intervals "$D/rot.0001.npr" 1 $REC || echo "  (nprec did not start recording)" >&2
send 6 2000000
ns_wait_drained in-b $PORT
kill -TERM $REC; wait $REC; rc=$?
check "nprec --rotate exits 0 on SIGTERM (rc=$rc)" [ $rc -eq 0 ]
check "no un-numbered file with --rotate" [ ! -e "$D/rot.npr" ]
files=("$D"/rot.[0-9][0-9][0-9][0-9].npr)
nf=${#files[@]}
check "rotation produced several files ($nf)" [ "$nf" -ge 3 ]

total=0; prev_last=-1; ends=0; bad=0; host0=; boot0=; oversize=0
for k in $(seq "$nf"); do
	f=$(printf '%s/rot.%04d.npr' "$D" "$k")
	if [ ! -e "$f" ]; then bad=$((bad + 1)); echo "  missing $f" >&2; continue; fi
	sum_of "$f"
	if [ "$ok" != 1 ] || [ "$chunks_bad" != 0 ] || [ "$truncated" != 0 ] || \
	   [ "$bytes_skipped" != 0 ] || [ "$header_first" != 1 ] || [ "$n_header" != 1 ] || \
	   [ "$mode" != rotate ] || [ "$rotation_index" != "$k" ] || [ "$set" != rot ] || \
	   [ "$seq_gaps" != 0 ] || [ "$n_interval" -lt 1 ]; then
		bad=$((bad + 1)); echo "  $f: not a complete recording on its own" >&2
	fi
	[ -z "$host0" ] && host0=$hostname && boot0=$boot_id
	[ "$hostname" = "$host0" ] && [ "$boot_id" = "$boot0" ] || { bad=$((bad + 1)); echo "  $f: other host identity" >&2; }
	if [ "$prev_last" -ge 0 ] && [ "$first_seq" -ne $((prev_last + 1)) ]; then
		bad=$((bad + 1)); echo "  $f: starts at interval $first_seq after $prev_last" >&2
	fi
	prev_last=$last_seq
	sz=$(stat -c %s "$f")
	[ "$sz" -le 4096 ] || [ "$n_interval" -eq 1 ] || oversize=$((oversize + 1))
	ends=$((ends + n_end))
	total=$((total + port_rx))
	[ "$k" -eq "$nf" ] && last_reason=$end_reason
done
check "every rotated file reads alone, same host, intervals continue across files" [ $bad -eq 0 ]
check "files stay within the rotation size" [ $oversize -eq 0 ]
check "only the last file has the END record ($ends, reason ${last_reason:-})" \
	test "$ends" -eq 1 -a "${last_reason:-}" = sigterm
check "the set holds every byte sent: $total of 12000000" [ "$total" -eq 12000000 ]

if [ -x "$NPANALYZE" ] && [ -x "$NPREPORT" ]; then
	"$NPANALYZE" -q -o "$D/set.npa" "${files[@]}" > "$D/ana.out" 2>&1
	rc=$?
	check "npanalyze reads the rotated set (rc=$rc)" test $rc -le 1 -a -s "$D/set.npa"
	meta=$("$NPREPORT" dump "$D/set.npa" 2>/dev/null | grep '"type":"ana_meta"' | head -1)
	nhosts=$(printf '%s' "$meta" | grep -o '"files":[0-9]*' | wc -l)
	nfiles=$(printf '%s' "$meta" | grep -o '"files":[0-9]*' | head -1 | cut -d: -f2)
	check "npanalyze: the set is one host with $nf files (hosts $nhosts, files ${nfiles:-0})" \
		test "$nhosts" -eq 1 -a "${nfiles:-0}" -eq "$nf"
	arx=$("$NPREPORT" "$D/set.npa" --section flows --format csv 2>/dev/null |
		awk -F, -v p=":$PORT>" 'index($2, p) {s += $6} END {printf "%d", s}')
	check "npanalyze: the set's flows on port $PORT received ${arx:-0} of 12000000 bytes" \
		test "${arx:-0}" -eq 12000000
else
	echo "  (npanalyze/npreport not built: set reading by npanalyze not checked)" >&2
fi

# ---- B: --rotate SIZE,COUNT keeps the newest COUNT files ----
D=$E2E_TMP/b; mkdir -p "$D"
bg "$NPREC" -q -o "$D/keep.npr" -I 100ms --rotate 4K,2 --netns in-b
REC=$BG_PID
in_wait_intervals "$D/keep.0001.npr" 1 $REC || echo "  (nprec did not start recording)" >&2
send 5 1000000
ns_wait_drained in-b $PORT
kill -TERM $REC; wait $REC
kept=("$D"/keep.[0-9][0-9][0-9][0-9].npr)
check "COUNT=2: two files kept (${#kept[@]})" [ "${#kept[@]}" -eq 2 ]
hi=$(ls "$D" | sed -n 's/^keep\.\([0-9]\{4\}\)\.npr$/\1/p' | sort -n | tail -1)
hi=$((10#${hi:-0}))
check "COUNT=2: rotation went past 2 files (newest index $hi)" [ "$hi" -ge 3 ]
f1=$(printf '%s/keep.%04d.npr' "$D" $((hi - 1))); f2=$(printf '%s/keep.%04d.npr' "$D" "$hi")
check "COUNT=2: the kept files are the newest two" test -e "$f1" -a -e "$f2"
sum_of "$f1"; l1=$last_seq; c1=$chunks_bad
sum_of "$f2"
check "COUNT=2: kept files are valid and consecutive" \
	test "$c1" = 0 -a "$chunks_bad" = 0 -a "$first_seq" -eq $((l1 + 1)) -a "$n_end" = 1

e2e_finish
