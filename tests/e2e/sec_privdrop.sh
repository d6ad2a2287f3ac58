#!/usr/bin/env bash
# nprec's privilege drop (issue 25, docs/NPREC.md "Privileges"): once
# attached, a running nprec is an unprivileged user (uid of "nprec", else
# "nobody") with no capability left in CapEff/CapPrm (CAP_BPF at most, on
# kernels that need it for map reads), its file helper is root with only
# CAP_DAC_OVERRIDE+CAP_FOWNER chrooted into the output directory, and what
# happens after the drop still works in a root-only (0700) directory:
# SIGHUP reopen, rotation, flight-recorder dumps, TC filters detached at exit.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init sec_privdrop
e2e_need_root
[ -x "$NPREC" ] || e2e_skip "build nprec first"
T=$E2E_TMP
chmod 700 "$T"
NS=secpriv-ns
LIGHT="--no-txn --no-netcpu --no-threads -q"
CAP_BPF=$((1 << 39))
CAP_NET_ADMIN=$((1 << 12)); CAP_SYS_ADMIN=$((1 << 21))
WANT_UID=$(id -u nprec 2>/dev/null || id -u nobody)

field() { awk -v k="$1:" '$1==k{print $2}' "/proc/$2/status" 2>/dev/null; }
# waits until PID runs as another user than root (the drop is done)
wait_drop() {
	for _ in $(seq 100); do
		[ -n "$(field Uid "$1")" ] && [ "$(field Uid "$1")" != 0 ] && return 0
		sleep 0.1
	done
	return 1
}
hexmask() { echo $((16#$1)); }
# waits (up to 10 s) for a file nprec writes at its next loop tick after a
# signal: a fixed sleep is too short on a loaded machine
wait_written() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
mode_owner() { stat -c '%a %u' "$1"; }

# ---- a plain recording: status, helper, SIGHUP reopen ----
bg "$NPREC" -o "$T/r.npr" -d 6 $LIGHT
P=$BG_PID
check "nprec switched user" wait_drop $P
check "uid is $WANT_UID (nprec or nobody)" test "$(field Uid $P)" = "$WANT_UID"
eff=$(hexmask "$(field CapEff $P)"); prm=$(hexmask "$(field CapPrm $P)")
echo "nprec CapEff $(field CapEff $P) CapPrm $(field CapPrm $P) CapBnd $(field CapBnd $P)" >&2
check "CapEff holds nothing but CAP_BPF" test $((eff & ~CAP_BPF)) -eq 0
check "CapPrm holds nothing but CAP_BPF" test $((prm & ~CAP_BPF)) -eq 0
check "NoNewPrivs set" test "$(field NoNewPrivs $P)" = 1
H=$(pgrep -P $P | head -1)
check "file helper runs" test -n "$H"
check "helper: uid 0, CapEff = DAC_OVERRIDE+FOWNER (0xa)" \
	test "$(field Uid "$H")" = 0 -a "$(hexmask "$(field CapEff "$H")")" -eq 10
check "helper is chrooted into the output directory" test "$(readlink /proc/"$H"/root)" = "$T"
sleep 1
mv "$T/r.npr" "$T/r.moved.npr"
kill -HUP $P
wait_written "$T/r.npr"
check "SIGHUP after the move: a new file at the path" test -s "$T/r.npr"
check "  root's, mode 600, in the root-only directory" test "$(mode_owner "$T/r.npr")" = "600 0"
wait $P; check "nprec exited 0" test $? -eq 0
check "the new file ends with END" bash -c "'$NPREPORT' dump --type end '$T/r.npr' | grep -q '\"end\"'"
check "the moved file is a complete recording start" bash -c "'$NPREPORT' dump --type header '$T/r.moved.npr' | grep -q header"

# ---- rotation ----
"$NPREC" -o "$T/rot.npr" -d 2 -I 250ms --rotate 1K $LIGHT
check "rotation exited 0" test $? -eq 0
n=$(ls "$T"/rot.*.npr 2>/dev/null | wc -l)
check "rotation wrote files after the drop ($n >= 3)" test "$n" -ge 3
check "every rotated file mode 600, root's" bash -c "for f in '$T'/rot.*.npr; do [ \"\$(stat -c '%a %u' \$f)\" = '600 0' ] || exit 1; done"

# ---- flight recorder dump on SIGUSR1 ----
bg "$NPREC" -o "$T/fl.npr" -d 5 --flight-recorder 10 $LIGHT
F=$BG_PID
wait_drop $F
sleep 1.5
kill -USR1 $F
wait_written "$T/fl.dump-0001.npr"
check "SIGUSR1 dump written after the drop" test -s "$T/fl.dump-0001.npr"
wait $F; check "flight recorder exited 0" test $? -eq 0
check "the dump is a readable recording" bash -c "'$NPREPORT' dump --type trigger '$T/fl.dump-0001.npr' | grep -q sigusr1"

# ---- -Z root keeps root; an unknown user stops nprec ----
bg "$NPREC" -o "$T/root.npr" -d 3 -Z root $LIGHT
R=$BG_PID
# the drop would follow the output's open at once: checked after it, or
# the check could pass on a recorder still loading its programs
wait_written "$T/root.npr"
sleep 0.5
check "-Z root: uid 0, capabilities kept" \
	test "$(field Uid $R)" = 0 -a "$(field CapEff $R)" = "$(field CapBnd $R)"
wait $R
"$NPREC" -o "$T/bad.npr" -d 1 -Z no-such-user-np25 $LIGHT 2>"$T/bad.err"
rc=$?
check "-Z unknown user: exit 3 (privileges)" test $rc -eq 3
check "  saying so" grep -q "no such user" "$T/bad.err"

# ---- TC filters: detached at exit by the kept (permitted only) capabilities ----
ns_add $NS || e2e_skip "cannot create a network namespace"
bg ip netns exec $NS "$NPREC" -o "$T/tc.npr" -d 4 --packets -i lo $LIGHT
C=$BG_PID
wait_drop $C
sleep 0.5
eff=$(hexmask "$(field CapEff $C)"); prm=$(hexmask "$(field CapPrm $C)")
check "--packets: NET_ADMIN+SYS_ADMIN permitted, not effective" \
	test $((prm & ~CAP_BPF)) -eq $((CAP_NET_ADMIN | CAP_SYS_ADMIN)) -a $((eff & ~CAP_BPF)) -eq 0
check "TC filter attached while recording" bash -c "ip netns exec $NS tc filter show dev lo ingress | grep -q bpf"
wait $C; check "--packets run exited 0" test $? -eq 0
check "no TC filter left after exit" bash -c "! ip netns exec $NS tc filter show dev lo ingress | grep -q . && ! ip netns exec $NS tc filter show dev lo egress | grep -q ."
e2e_finish
