#!/usr/bin/env bash
# Missing probes, from the recording to the incident summary. nprec runs on a
# kernel without tracefs (NPREC_TEST_FILESYSTEMS, as rec_kfs.sh case D) and
# is asked for netcpu's per-syscall tracepoints first
# (NPREC_TEST_SYSCALL_HOOK=per-call, --netcpu exact: only the exact socket
# clock hooks syscalls): they cannot attach, tp_btf/sys_enter
# takes their place. The ground truth is the recording's own HEADER probe
# list (npreport dump --header-only). Checked: the analysis' probes table
# holds every probe of the header with the same state and reason; the text
# and HTML incident summaries' RECORDER line names the failed probe, its
# reason (tracefs) and its fallback. Control: a recording whose probes all
# attached (default syscall hook) is summarised without "missing probes".
# Needs root (eBPF); no network namespaces, no traffic. Runs in a mount
# namespace of its own with tracefs and debugfs unmounted there, as on a
# fresh VM: where tracefs is mounted (systemd at boot, perf record), nprec
# finds the mount and uses it whatever the kernel's filesystem list says.
if [ -z "${PROBES_E2E_INNER:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null; then
	PROBES_E2E_INNER=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init report_probes
e2e_need_root
[ -n "${PROBES_E2E_INNER:-}" ] || e2e_skip "needs unshare (util-linux) for a mount namespace of its own"
command -v findmnt > /dev/null || e2e_skip "findmnt missing"
unmount_all tracefs && unmount_all debugfs
check "this namespace has no tracefs and no debugfs" bash -c '! grep -qE " - (tracefs|debugfs) " /proc/self/mountinfo'
for b in "$NPREC" "$NPANALYZE" "$NPREPORT"; do [ -x "$b" ] || e2e_skip "build $b first"; done
command -v python3 > /dev/null || e2e_skip "python3 missing"
cd "$E2E_TMP" || exit 1
printf 'nodev\tsysfs\nnodev\tproc\nnodev\tdebugfs\nnodev\tbpf\n' > filesystems

NPREC_TEST_SYSCALL_HOOK=per-call NPREC_TEST_FILESYSTEMS=$PWD/filesystems \
	"$NPREC" -q -d 1 --netcpu exact -o nofs.npr 2> nofs.rec.err
check "nprec without tracefs exits 0" test $? -eq 0
"$NPREC" -q -d 1 --netcpu exact -o ok.npr 2> ok.rec.err
check "nprec (default hooks) exits 0" test $? -eq 0
for r in nofs ok; do
	"$NPANALYZE" -q -o $r.npa $r.npr 2> $r.ana.err
	"$NPREPORT" $r.npa -f csv -o $r-csv 2> $r.csv.err
	"$NPREPORT" $r.npa --section incident > $r.txt 2> $r.txt.err
	"$NPREPORT" $r.npa --html $r.html 2> $r.html.err
	"$NPREPORT" dump --header-only $r.npr > $r.header.json 2> /dev/null
done

# header probes vs the probes table: same set of (family, probe, state, reason)
same_probes() {
	python3 - "$1" "$2" <<'EOF'
import csv, json, sys
hdr = json.loads(open(sys.argv[1]).readline())["body"]["probes"]
want = sorted((p["family"], p["probe"], p["state"], p["reason"]) for p in hdr)
got = sorted((r["family"], r["probe"], r["state"], r["reason"])
             for r in csv.DictReader(open(sys.argv[2], newline="")))
if want != got:
    print("header:", want, "\ntable:", got, file=sys.stderr)
sys.exit(want != got or not want)
EOF
}
check "nofs: probes table = the header's probe list" same_probes nofs.header.json nofs-csv/probes.csv
check "ok: probes table = the header's probe list" same_probes ok.header.json ok-csv/probes.csv
state() { awk -F, -v f="$2" -v p="$3" '$2==f && $3==p {print $4; exit}' "$1"; }
check "nofs: per-syscall tracepoints failed in the table" \
	test "$(state nofs-csv/probes.csv netcpu 'tracepoint/syscalls/sys_enter_<socket calls>')" = failed
check "nofs: tp_btf/sys_enter attached in the table" \
	test "$(state nofs-csv/probes.csv netcpu tp_btf/sys_enter)" = attached

REC=$(tr '\n' ' ' < nofs.txt | sed 's/  */ /g' | grep -o 'RECORDER.*')
echo "nofs RECORDER: $REC" >&2
check "text: RECORDER names the failed probe and its fallback" \
	grep -qF 'netcpu: tracepoint/syscalls/sys_enter_<socket calls> failed' <<< "$REC"
check "text: ... with the reason (tracefs not mounted)" grep -qF '(tracefs not mounted)' <<< "$REC"
check "text: ... and what replaced it" grep -qF 'using tp_btf/sys_enter' <<< "$REC"
check "text: ... pointing at the probes table" grep -qF '[hosts, probes]' <<< "$REC"
check "csv: incident.csv RECORDER row says the same" \
	grep -q '^[0-9]*,recorder,.*sys_enter_<socket calls> failed.*using tp_btf/sys_enter' nofs-csv/incident.csv
check "html: the summary names the failed probe and its fallback" python3 -c '
import html, re, sys
h = open("nofs.html", encoding="utf-8").read()
s = h[h.index("<section id=\"incident\""):]
s = html.unescape(re.sub(r"<[^>]+>", "", s[:s.index("</section>")]))
sys.exit(not ("netcpu: tracepoint/syscalls/sys_enter_<socket calls> failed" in s and "using tp_btf/sys_enter" in s))'
check "control: every probe attached or skipped by design, no 'missing probes'" \
	bash -c "grep -q RECORDER ok.txt && ! grep -qi 'missing probes' ok.txt && ! grep -q ',failed,' ok-csv/probes.csv"
e2e_finish
