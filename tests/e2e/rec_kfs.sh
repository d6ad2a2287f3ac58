#!/bin/bash
# nprec on a machine as it comes (record/core/kfs.c, docs/NPREC.md "Kernel
# interfaces"). The test runs in a mount namespace of its own (unshare -m)
# and there unmounts tracefs, debugfs and cgroup2 wherever the host has
# them, so it does not depend on how the host was set up and leaves the
# host's mounts alone. A python load in namespace kfs-a sends exactly
# N_UDP datagrams and N_TCP TCP sends of 1000 bytes to kfs-b. Cases:
#  A. tracefs and debugfs not mounted, per-syscall tracepoints wanted
#     (--netcpu exact: only the exact socket clock hooks syscalls):
#     nprec mounts tracefs in a namespace of its own (the header says
#     "mounted", the tracepoints attach), netcpu counts exactly the load's
#     send calls with non-zero send time, flows carry exactly the bytes
#     sent, and nothing stays mounted here after nprec exits;
#  B. cgroup2 not mounted either, --packets --active-ids --rotate: nprec
#     mounts cgroup2 too, sock_ops attaches, every rotated file's header
#     says so, the threads family knows the load's cgroup path;
#  C. no CAP_SYS_ADMIN (setpriv): nothing mounted, one line per missing
#     interface on stderr, the header says "no-privilege", netcpu falls
#     back to tp_btf/sys_enter and still counts every send; a
#     perf_event_paranoid of 3 is reported as blocking;
#  D. a kernel without tracefs and cgroup2 (NPREC_TEST_FILESYSTEMS):
#     "unsupported", recording still exact; --active-ids refused (exit 4)
#     with the reason;
#  E. from nprec's own namespace: a flight-recorder dump, a SIGHUP reopen
#     and the clock-sync exchange work and their files say where they ran.
if [ -z "${KFS_E2E_INNER:-}" ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
		echo "SKIP rec_kfs: needs root and unshare (util-linux)" >&2
		echo "0 passed, 0 failed, 1 skipped"
		exit 0
	fi
	KFS_E2E_INNER=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init rec_kfs
[ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] || e2e_skip "not in a mount namespace of its own"
[ -x "$NPREC" ] || e2e_skip "nprec not built"
[ -x "$NPREPORT" ] || e2e_skip "npreport not built"
for c in socat python3 setpriv findmnt; do command -v $c >/dev/null || e2e_skip "$c not installed"; done
NPR="python3 $E2E_ROOT/tests/tools/rc_npr.py"
NC="python3 $E2E_ROOT/tests/tools/nc_npr.py"
T=$E2E_TMP
N_UDP=400 N_TCP=300 SZ=1000
PT=5811 PU=5812

mounted() { grep -q " - $1 " /proc/self/mountinfo; }
unmount_all tracefs && unmount_all debugfs
check "this namespace has no tracefs and no debugfs" bash -c '! grep -qE " - (tracefs|debugfs) " /proc/self/mountinfo'

ns_add kfs-a && ns_add kfs-b || e2e_skip "cannot create namespaces"
veth_pair kfs-a kfsa0 10.83.1.1/24 kfs-b kfsb0 10.83.1.2/24
bg ip netns exec kfs-b socat -u TCP-LISTEN:$PT,reuseaddr,fork OPEN:/dev/null
bg ip netns exec kfs-b socat -u UDP-RECV:$PU OPEN:/dev/null
for _ in $(seq 50); do ip netns exec kfs-b ss -lntu | grep -q ":$PU " && ip netns exec kfs-b ss -lnt | grep -q ":$PT " && break; sleep 0.1; done

# The load: exactly N_UDP + N_TCP send calls (blocking: each
# sends all SZ bytes); it stays 1.5 s so a snapshot sees its thread and
# writes its pid and cgroup (the /proc/self/cgroup "0::" line) to $1.
cat > "$T/load.py" <<EOF
import socket, sys, time
buf = b"x" * $SZ
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.connect(("10.83.1.2", $PU))   # connected: --port matches its socket
for _ in range($N_UDP):
    assert u.send(buf) == $SZ
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.connect(("10.83.1.2", $PT))
for _ in range($N_TCP):
    assert t.send(buf) == $SZ
t.close()
cg = [l.split("::", 1)[1].strip() for l in open("/proc/self/cgroup") if l.startswith("0::")]
open(sys.argv[1], "w").write("%d %s\n" % (__import__("os").getpid(), cg[0] if cg else "?"))
time.sleep(1.5)
EOF
load() { ip netns exec kfs-a python3 "$T/load.py" "$1"; }
wait_file() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }

# kfs FILE...: "ns=private tracefs=mounted cgroup2=present debugfs=absent bpffs=absent perf=allowed"
# from each file's header (one line per file)
kfs() {
	local f
	for f in "$@"; do
		"$NPREPORT" dump "$f" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "header":
        k = r["body"].get("kernel_fs", {})
        out = ["ns=%s" % k.get("mount_ns", "?")]
        out += ["%s=%s" % (n, k.get(n, {}).get("state", "?")) for n in ("tracefs", "cgroup2", "debugfs", "bpffs")]
        out.append("perf=%s" % k.get("perf_event", {}).get("state", "?"))
        print(" ".join(out))
        break'
	done
}
# all_of LINE TOKEN...: every TOKEN is a word of LINE
all_of() { local l=$1 t; shift; for t; do tr ' ' '\n' <<<"$l" | grep -qxF -- "$t" || return 1; done; }
# probes_are FILE "FAMILY PROBE STATE"...: the header's probe list has each
probes_are() {
	local f=$1 p l found; shift
	l=$("$NPREPORT" dump "$f" 2>/dev/null | $NPR probes)
	for p; do
		found=0
		while IFS= read -r line; do [[ "$line" == "$p "* ]] && found=1; done <<<"$l"
		[ $found = 1 ] || return 1
	done
}
# flow_tx FILES...: tx bytes of the load's TCP and UDP flows, summed over files
flow_tx() {
	local f
	for f in "$@"; do "$NPREPORT" dump "$f" 2>/dev/null | $NPR flows; done |
		awk -v pt=$PT -v pu=$PU '$3=="10.83.1.2" && $4==pt && $5==6 {t+=$6} $3=="10.83.1.2" && $4==pu && $5==17 {u+=$6} END{print t+0, u+0}'
}
# sends FILES...: netcpu send calls and send ns, summed over files and CPUs
sends() {
	local f
	for f in "$@"; do "$NPREPORT" dump "$f" 2>/dev/null; done | $NC netcpu |
		tr ' ' '\n' | awk -F= '$1=="send_n" || $1=="send_ns" {n=split($2,a,","); s=0; for(i=1;i<=n;i++) s+=a[i]; v[$1]=s} END{print v["send_n"]+0, v["send_ns"]+0}'
}
# record NAME ENV... -- NPREC-ARGS...: nprec from before the load until
# after it (nprec's stderr in $T/NAME.err, exit code in $T/NAME.rc)
record() {
	local name=$1; shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
	"${WRAP[@]}" env "${envs[@]}" "$NPREC" -o "$T/$name.npr" "$@" 2>"$T/$name.err" & local p=$!
	E2E_PIDS+=("$p")
	wait_file "$T/$name.npr" || for _ in $(seq 30); do ls "$T/$name".*npr >/dev/null 2>&1 && break; sleep 0.1; done
	sleep 0.3
	[ -d /proc/$p ] && cat /proc/$p/mountinfo > "$T/$name.mountinfo" 2>/dev/null
	load "$T/$name.load"
	sleep 1.2
	kill -INT $p; wait $p; echo $? > "$T/$name.rc"
	cat "$T/$name.err" >&2
}
WRAP=()
EXPECT_TX="$((N_TCP * SZ)) $((N_UDP * SZ))"
EXPECT_N=$((N_UDP + N_TCP))

# ---- A: tracefs and debugfs not mounted ----
record a NPREC_TEST_SYSCALL_HOOK=per-call -- --netcpu exact --netns kfs-a
H=$(kfs "$T/a.npr"); echo "A header: $H" >&2
check "A: nprec exit 0" [ "$(cat $T/a.rc)" = 0 ]
check "A: header says tracefs mounted in nprec's own namespace ($H)" all_of "$H" ns=private tracefs=mounted debugfs=absent
# (cgroup2 may be missing here already when the test starts: then the line names it too)
check "A: one stderr line says so" [ "$(grep -cE '^nprec: mounted tracefs at /sys/kernel/tracing(, [^ ]+ at [^ ]+)? in a mount namespace of its own' "$T/a.err")" = 1 -a "$(grep -c 'mounted' "$T/a.err")" = 1 ]
check "A: nprec saw tracefs in its namespace" grep -q ' - tracefs ' "$T/a.mountinfo"
check "A: per-syscall tracepoints attached" probes_are "$T/a.npr" "netcpu tracepoint/syscalls/sys_enter_<socket calls> attached"
S=$(sends "$T/a.npr"); echo "A sends: $S" >&2
check "A: netcpu counted the load's $EXPECT_N send calls ($S)" [ "${S% *}" = "$EXPECT_N" ]
check "A: netcpu send time > 0 ($S)" [ "${S#* }" -gt 0 ]
TX=$(flow_tx "$T/a.npr")
check "A: flows carry the bytes sent (tcp udp: $TX = $EXPECT_TX)" [ "$TX" = "$EXPECT_TX" ]
check "A: tracefs still not mounted here after nprec exited" bash -c '! grep -q " - tracefs " /proc/self/mountinfo'

# ---- B: cgroup2 not mounted either; rotation ----
unmount_all cgroup2
check "this namespace has no cgroup2" bash -c '! grep -q " - cgroup2 " /proc/self/mountinfo'
record b -- --netns kfs-a --packets --active-ids -I 250ms --rotate 8K
FILES=("$T"/b.*.npr)
echo "B files: ${FILES[*]}" >&2
check "B: nprec exit 0" [ "$(cat $T/b.rc)" = 0 ]
check "B: rotated (${#FILES[@]} files)" [ ${#FILES[@]} -ge 2 ]
HB=$(kfs "${FILES[@]}" | sort -u); echo "B headers: $HB" >&2
check "B: every file's header the same ($HB)" [ "$(wc -l <<<"$HB")" = 1 ]
check "B: header says tracefs and cgroup2 mounted" all_of "$HB" ns=private tracefs=mounted cgroup2=mounted
check "B: one stderr line names both" grep -qE 'mounted tracefs at [^ ]+, cgroup2 at [^ ]+ in a mount namespace of its own' "$T/b.err"
check "B: sock_ops attached (--active-ids)" probes_are "${FILES[0]}" "pktpath sock_ops/active-ids attached"
TX=$(flow_tx "${FILES[@]}")
check "B: flows over the rotated set carry the bytes sent ($TX)" [ "$TX" = "$EXPECT_TX" ]
read -r LPID LCG < "$T/b.load"
TH=$(for f in "${FILES[@]}"; do "$NPREPORT" dump "$f" 2>/dev/null; done | $NC threads "$LPID")
echo "B load $LPID in $LCG: $TH" >&2
check "B: threads know the load's cgroup path ($LCG)" grep -q "cgroup=$LCG\$" <<<"$TH"
"$NPREC" -q -d 1 --cgroup / -o "$T/cg.npr" 2>"$T/cg.err"; RC=$?
CGID=$("$NPREPORT" dump --header-only "$T/cg.npr" 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["body"]["config"]["cgroup_id"])' 2>/dev/null)
check "B: --cgroup / resolves in the cgroup2 nprec mounted (exit $RC, cgroup_id ${CGID:-?})" [ $RC -eq 0 -a "${CGID:-0}" -gt 0 ]
check "cgroup2 still not mounted here after nprec exited" bash -c '! grep -q " - cgroup2 " /proc/self/mountinfo'

# ---- C: no right to mount; a paranoid perf setting ----
echo 3 > "$T/paranoid"
WRAP=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin)
record c NPREC_TEST_SYSCALL_HOOK=per-call NPREC_TEST_PERF_PARANOID="$T/paranoid" -- --netcpu exact --port $PT --port $PU
WRAP=()
HC=$(kfs "$T/c.npr"); echo "C header: $HC" >&2
check "C: nprec without CAP_SYS_ADMIN exit 0" [ "$(cat $T/c.rc)" = 0 ]
check "C: header: nothing mounted, no privilege ($HC)" all_of "$HC" ns=host tracefs=no-privilege cgroup2=no-privilege perf=blocked
check "C: stderr: tracefs line" grep -q '^nprec: tracefs is not mounted and nprec may not mount it (needs CAP_SYS_ADMIN): classic tracepoints are off' "$T/c.err"
check "C: stderr: cgroup2 line" grep -q '^nprec: cgroup2 is not mounted and nprec may not mount it (needs CAP_SYS_ADMIN): --cgroup, --active-ids' "$T/c.err"
check "C: stderr: perf_event_paranoid line" grep -q '^nprec: kernel.perf_event_paranoid is 3 and nprec lacks CAP_SYS_ADMIN' "$T/c.err"
check "C: no mount line" bash -c "! grep -q 'mounted .* namespace of its own' '$T/c.err'"
check "C: per-call tracepoints failed, tp_btf/sys_enter attached" \
	probes_are "$T/c.npr" "netcpu tracepoint/syscalls/sys_enter_<socket calls> failed" "netcpu tp_btf/sys_enter attached"
check "C: the failed probe's reason names tracefs" \
	grep -q 'sys_enter_<socket calls> failed .*(tracefs not mounted)' <<<"$("$NPREPORT" dump "$T/c.npr" 2>/dev/null | $NPR probes)"
S=$(sends "$T/c.npr"); echo "C sends: $S" >&2
check "C: netcpu still counted the $EXPECT_N send calls ($S)" [ "${S% *}" = "$EXPECT_N" ]
TX=$(flow_tx "$T/c.npr")
check "C: flows carry the bytes sent ($TX)" [ "$TX" = "$EXPECT_TX" ]

# ---- D: a kernel without tracefs and cgroup2 ----
printf 'nodev\tsysfs\nnodev\tproc\nnodev\tdebugfs\nnodev\tbpf\n' > "$T/filesystems"
record d NPREC_TEST_SYSCALL_HOOK=per-call NPREC_TEST_FILESYSTEMS="$T/filesystems" -- --netcpu exact --netns kfs-a
HD=$(kfs "$T/d.npr"); echo "D header: $HD" >&2
check "D: nprec exit 0" [ "$(cat $T/d.rc)" = 0 ]
check "D: header: unsupported, host namespace ($HD)" all_of "$HD" ns=host tracefs=unsupported cgroup2=unsupported
check "D: stderr says the kernel has no tracefs" grep -q '^nprec: this kernel has no tracefs' "$T/d.err"
S=$(sends "$T/d.npr")
check "D: netcpu counted the $EXPECT_N send calls on tp_btf/sys_enter ($S)" [ "${S% *}" = "$EXPECT_N" ]
TX=$(flow_tx "$T/d.npr")
check "D: flows carry the bytes sent ($TX)" [ "$TX" = "$EXPECT_TX" ]
NPREC_TEST_FILESYSTEMS="$T/filesystems" "$NPREC" -q -d 1 --packets --active-ids -o "$T/d2.npr" 2>"$T/d2.err"; RC=$?
cat "$T/d2.err" >&2
check "D: --active-ids without cgroup2 refused with exit 4 ($RC)" [ $RC -eq 4 ]
check "D: ... saying there is no cgroup v2 hierarchy" grep -q 'no cgroup v2 hierarchy' "$T/d2.err"
NPREC_TEST_FILESYSTEMS="$T/filesystems" "$NPREC" -q -d 1 --cgroup / -o "$T/d3.npr" 2>"$T/d3.err"; RC=$?
cat "$T/d3.err" >&2
check "D: --cgroup without cgroup2 refused with exit 2, one line ($RC)" [ $RC -eq 2 -a "$(wc -l <"$T/d3.err")" = 1 ]

# ---- E: flight dump, SIGHUP reopen, clock-sync exchange from nprec's namespace ----
# (tracefs, debugfs and cgroup2 are all unmounted here now)
bg "$NPREC" -q -o "$T/f.npr" -I 250ms --flight-recorder 3s --netns kfs-a; PF=$BG_PID
bg "$NPREC" -q -o "$T/h.npr" --netns kfs-a; PH=$BG_PID
bg "$NPREC" -q -o "$T/ss.npr" --netns kfs-b --sync-listen 7791; PS=$BG_PID
bg "$NPREC" -q -o "$T/sc.npr" --netns kfs-a --sync-peer 10.83.1.2:7791; PC=$BG_PID
wait_file "$T/h.npr"; wait_file "$T/ss.npr"; wait_file "$T/sc.npr"
sleep 1.5
kill -USR1 $PF
mv "$T/h.npr" "$T/h.old.npr"; kill -HUP $PH
wait_file "$T/f.dump-0001.npr"; wait_file "$T/h.npr"
load "$T/e.load"
sleep 1.2
kill -INT $PF $PH $PC $PS; wait $PF; RF=$?; wait $PH; RH=$?; wait $PC; RC=$?; wait $PS; RS=$?
check "E: flight, SIGHUP and sync recorders exit 0 ($RF $RH $RC $RS)" [ "$RF$RH$RC$RS" = 0000 ]
HE=$(kfs "$T/f.dump-0001.npr" "$T/h.old.npr" "$T/h.npr" "$T/sc.npr" "$T/ss.npr" | sort | uniq -c); echo "E headers: $HE" >&2
check "E: flight dump, both SIGHUP files, sync peers: all say tracefs and cgroup2 mounted in a private namespace" \
	[ "$(kfs "$T/f.dump-0001.npr" "$T/h.old.npr" "$T/h.npr" "$T/sc.npr" "$T/ss.npr" | grep -c 'ns=private tracefs=mounted cgroup2=mounted')" = 5 ]
TX=$(flow_tx "$T/h.old.npr" "$T/h.npr")
check "E: flows across the SIGHUP reopen carry the bytes sent ($TX)" [ "$TX" = "$EXPECT_TX" ]
# sync_rows FILE ROLE: exchanges of that role in the file's SYNC records
sync_rows() {
	"$NPREPORT" dump "$1" 2>/dev/null | python3 -c '
import json, sys
print(sum(b["role"].count(sys.argv[1]) for b in (json.loads(l)["body"] for l in sys.stdin if "\"type\":\"sync\"" in l)))' "$2"
}
NSC=$(sync_rows "$T/sc.npr" client); NSS=$(sync_rows "$T/ss.npr" server)
check "E: clock-sync exchanges made (client $NSC, server $NSS)" [ "${NSC:-0}" -gt 0 -a "${NSS:-0}" -gt 0 ]

e2e_finish
