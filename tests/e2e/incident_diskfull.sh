#!/usr/bin/env bash
# Size bounds and a filling disk:
#  - a 2 MB tmpfs fills up under a busy recording (packet paths, iperf3):
#    nprec stops with a clear message (what happened, how much was kept),
#    exits non-zero, and the file is valid up to its last complete chunk;
#  - --max-size stops cleanly (exit 0, END reason max-size) with the file
#    within the bound.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init incident_diskfull
e2e_need_root
[ -x "$NPREC" ] || e2e_skip "nprec not built"
. "$(dirname "$0")/../lib/incident.sh"
[ -x "$SUM" ] || e2e_skip "tests/tools/in_npsum not built"
command -v iperf3 >/dev/null || e2e_skip "iperf3 missing"

ns_add in-a && ns_add in-b || e2e_skip "cannot create namespaces"
veth_pair in-a in-ea 10.231.4.1/24 in-b in-eb 10.231.4.2/24
IPORT=5351
bg ip netns exec in-b iperf3 -s -p $IPORT >/dev/null
ns_wait_listen in-b $IPORT

MNT=$E2E_TMP/tiny
mkdir -p "$MNT"
mount -t tmpfs -o size=2m,mode=0700 in-tiny "$MNT" || e2e_skip "cannot mount a tmpfs"
trap 'umount -l "$MNT" 2>/dev/null; e2e_cleanup' EXIT

# rec_load FILE ERR NPREC-OPTIONS...: nprec with an iperf3 paced at 800M
# that starts once the recorder has written its header (every family
# attached). Started before it, the traffic of the recorder's start-up
# (seconds on a loaded machine: the verifier) all went into the first
# 250 ms interval, which alone could be over the bound: 0 intervals kept
# (CI). Sets rc to nprec's exit code.
rec_load() {
	local f=$1 err=$2 npid ipc
	shift 2
	bg timeout 60 "$NPREC" -q -o "$f" "$@" 2> "$err"
	npid=$BG_PID
	wait_rec "$f" $npid || echo "  (nprec wrote no header)" >&2
	bg ip netns exec in-a iperf3 -c 10.231.4.2 -p $IPORT -t 30 -b 800M >/dev/null
	ipc=$BG_PID
	wait $npid; rc=$?
	kill $ipc 2>/dev/null; wait $ipc 2>/dev/null
}

# ---- disk full ----
rec_load "$MNT/full.npr" "$E2E_TMP/full.err" -I 250ms --packets
msg=$(cat "$E2E_TMP/full.err")
echo "  nprec said: $msg" >&2
check "disk full: nprec exits non-zero (rc=$rc)" test $rc -ne 0 -a $rc -ne 124
check "disk full: the message names the cause" grep -q "No space left on device" "$E2E_TMP/full.err"
check "disk full: the message says how much was kept" grep -qE "kept [0-9]+ bytes, [0-9]+ intervals" "$E2E_TMP/full.err"
eval "$("$SUM" "$MNT/full.npr")"
size=$(stat -c %s "$MNT/full.npr")
kept=$(sed -nE 's/.*kept ([0-9]+) bytes.*/\1/p' "$E2E_TMP/full.err" | head -1)
check "disk full: file valid to its last complete chunk (bad $chunks_bad, truncated $truncated)" \
	test "$ok" = 1 -a "$chunks_bad" = 0 -a "$truncated" = 0 -a "$bytes_skipped" = 0 -a "$header_first" = 1
check "disk full: the reported size is the file size ($kept = $size)" test "${kept:-x}" = "$size"
check "disk full: it recorded until the disk was full ($size bytes, $n_interval intervals)" \
	test "$size" -gt 1000000 -a "$n_interval" -ge 1 -a "$seq_gaps" = 0

# ---- --max-size ----
rm -f "$MNT/full.npr"
# Only the test's namespace here (~10 KB an interval: 600K in ~15 s). The
# whole host's traffic is not bounded by the test: on the shared dev VM a
# neighbour's benches put 300-600 KB into one 250 ms interval, which the
# 600K cannot hold (0 intervals, a 2179-byte file: 2 of 6 runs at load
# 2.5-5.7). The 2 MB disk above has room for such an interval.
rec_load "$MNT/max.npr" "$E2E_TMP/max.err" -I 250ms --packets --max-size 600K --netns in-a
eval "$("$SUM" "$MNT/max.npr")"
size=$(stat -c %s "$MNT/max.npr")
check "--max-size: clean stop, exit 0 (rc=$rc)" [ $rc -eq 0 ]
check "--max-size: file within 600K ($size bytes)" [ "$size" -le 614400 ]
check "--max-size: valid file with END reason max-size ($end_reason)" \
	test "$chunks_bad" = 0 -a "$truncated" = 0 -a "$n_end" = 1 -a "$end_reason" = max-size
check "--max-size: it did record ($n_interval intervals)" test "$n_interval" -ge 1 -a "$seq_gaps" = 0

e2e_finish
