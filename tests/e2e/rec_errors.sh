#!/bin/bash
# nprec's error paths and command-line contract: exit codes and one-line
# messages (documented in docs/NPREC.md), file mode, clean stops.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init rec_errors
e2e_need_root
[ -x "$NPREC" ] || e2e_skip "nprec not built"
T=$E2E_TMP

# expect_fail CODE PATTERN CMD...: exit status CODE, one stderr line matching PATTERN
expect_fail() {
	local code=$1 pat=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"; local rc=$?
	if [ "$rc" -ne "$code" ]; then echo "    exit $rc, want $code: $(cat "$T/err")" >&2; return 1; fi
	if [ "$(wc -l <"$T/err")" -ne 1 ]; then echo "    not one line: $(cat "$T/err")" >&2; return 1; fi
	grep -q -- "$pat" "$T/err" || { echo "    message: $(cat "$T/err")" >&2; return 1; }
}

chmod 1777 "$T"
if command -v setpriv >/dev/null; then
	check "unprivileged: exit 3 'need root or CAP_BPF+CAP_PERFMON'" expect_fail 3 "need root or CAP_BPF+CAP_PERFMON" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$NPREC" -o "$T/np.npr" -d 1
	check "unprivileged: no file left behind" [ ! -e "$T/np.npr" ]
	# root without the BPF capabilities (bounding set dropped) is refused the same way
	check "root without CAP_BPF/CAP_SYS_ADMIN: exit 3" expect_fail 3 "need root or CAP_BPF" \
		setpriv --inh-caps=-all --bounding-set=-bpf,-perfmon,-sys_admin "$NPREC" -o "$T/np2.npr" -d 1
fi
check "no -o: exit 2" expect_fail 2 "no output file" "$NPREC"
check "bad port: exit 2" expect_fail 2 "invalid value '70000' for --port" "$NPREC" -o "$T/x.npr" --port 70000
check "bad duration: exit 2" expect_fail 2 "invalid value '5parsecs' for -d" "$NPREC" -o "$T/x.npr" -d 5parsecs
check "unknown option: exit 2" expect_fail 2 "unknown option --bogus" "$NPREC" --bogus
check "missing netns: exit 2" expect_fail 2 "cannot open network namespace /var/run/netns/rc-nonexistent" \
	"$NPREC" -o "$T/x.npr" --netns rc-nonexistent
check "output directory missing: exit 5" expect_fail 5 "cannot create /nonexistent-rc/x.npr" \
	"$NPREC" -q -d 1 -o /nonexistent-rc/x.npr
check "every family off: exit 2" expect_fail 2 "nothing to record: every family is off" \
	"$NPREC" -q -d 1 --no-flows --no-txn --no-netcpu --no-threads -o "$T/none.npr"
check "no kernel BTF: exit 4 'kernel BTF missing'" expect_fail 4 "kernel BTF missing (/nonexistent-btf: No such file or directory): use a kernel built with CONFIG_DEBUG_INFO_BTF=y" \
	env NPREC_TEST_BTF=/nonexistent-btf "$NPREC" -q -d 1 -o "$T/nobtf.npr"
# a kernel without the socket tracepoints (Linux < 6.3), emulated
NPREC_TEST_MISSING_TP=sock_send_length,sock_recv_length "$NPREC" -d 1.1 -o "$T/old.npr" 2> "$T/old.err"; RC=$?
check "kernel lacking the socket tracepoints: recording goes on without flows/txn (exit $RC)" [ "$RC" -eq 0 ]
check "... and says so on stderr" grep -q "flows family off: kernel lacks tracepoint sock_send_length" "$T/old.err"
check "... and in the header" bash -c "'$NPREPORT' dump '$T/old.npr' | python3 '$E2E_ROOT/tests/tools/rc_npr.py' probes | grep -q '^txn sock_recv_length skipped tracepoint not in this kernel'"
check "... no family can run: exit 4, one line on what is missing" expect_fail 4 "every family is off; txn: kernel lacks tracepoint sock_recv_length" \
	env NPREC_TEST_MISSING_TP=sock_send_length,sock_recv_length "$NPREC" -q -d 1 --no-netcpu --no-threads -o "$T/old2.npr"
# with --send-calls txn needs sock_send_length too
check "... --send-calls: txn says sock_send_length is missing" expect_fail 4 "every family is off; txn: kernel lacks tracepoint sock_send_length" \
	env NPREC_TEST_MISSING_TP=sock_send_length "$NPREC" -q -d 1 --send-calls --no-netcpu --no-threads -o "$T/old3.npr"
check "--trigger of a dead pid: exit 1" expect_fail 1 "cannot signal nprec pid" "$NPREC" --trigger 999999999
check "--help: exit 0, lists options" bash -c "'$NPREC' --help | grep -q -- '--netns NAME|PATH'"
check "--version: exit 0" bash -c "'$NPREC' --version | grep -q '^nprec '"

# a normal short run: mode 0600, stops by itself, END record says why
"$NPREC" -q -d 1.5 -o "$T/d.npr"; RC=$?
check "-d 1.5: exit 0" [ "$RC" -eq 0 ]
check "output mode 0600" [ "$(stat -c %a "$T/d.npr")" = "600" ]
check "END reason duration" bash -c "'$NPREPORT' dump --type end '$T/d.npr' | grep -q '\"reason\":\"duration\"'"
check "one INTERVAL record per second" [ "$("$NPREPORT" dump --type interval "$T/d.npr" | wc -l)" -eq 2 ]

"$NPREC" -q -d 1.1 --no-txn -o "$T/nt.npr"
check "header: a family turned off is listed with its reason" \
	bash -c "'$NPREPORT' dump '$T/nt.npr' | python3 '$E2E_ROOT/tests/tools/rc_npr.py' probes | grep -q '^txn (family) skipped disabled by --no-txn'"
check "--no-txn: no transaction records" bash -c "! '$NPREPORT' dump '$T/nt.npr' | grep -q '\"type\":\"txn_'"

# SIGTERM finishes a valid file
"$NPREC" -q -o "$T/t.npr" & P=$!
for _ in $(seq 100); do [ -s "$T/t.npr" ] && break; sleep 0.1; done
sleep 0.5; kill -TERM $P; wait $P; RC=$?
check "SIGTERM: exit 0" [ "$RC" -eq 0 ]
check "SIGTERM: END reason sigterm, file reads clean" bash -c "'$NPREPORT' dump --type end '$T/t.npr' | grep -q '\"reason\":\"sigterm\"'"

# progress line: on a terminal only
if command -v script >/dev/null; then
	script -qec "'$NPREC' -d 1.2 -o '$T/p1.npr'" /dev/null > "$T/tty.out" 2>&1
	check "progress line on a tty" grep -q "ev/s" "$T/tty.out"
	script -qec "'$NPREC' -q -d 1.2 -o '$T/p2.npr'" /dev/null > "$T/tty2.out" 2>&1
	check "no progress line with -q" bash -c "! grep -q 'ev/s' '$T/tty2.out'"
fi
"$NPREC" -d 1.2 -o "$T/p3.npr" 2> "$T/notty.err"
check "no progress line when stderr is not a tty" bash -c "! grep -q 'ev/s' '$T/notty.err'"
e2e_finish
