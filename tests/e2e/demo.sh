#!/usr/bin/env bash
# The demo (tests/demo.sh), shortened to 8 s of load, with its claims checked
# against what was injected: the +5 ms clock shift of dm-back is recovered,
# the orders backend's 50 ms checkout delay shows as the slow endpoint and as
# the receiver-application bottleneck, the iptables drops are located on
# dm-back with the netfilter drop reason, a degradation pattern conditions on
# the orders RPC taking >= ~50 ms, and the report, CSV and plots are written.
# The recorders run at their defaults (no program on TCP send calls: the
# clients' request lines are named from the servers' recordings);
# demo_sendcalls.sh runs the same with --send-calls.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init demo_e2e
e2e_need_root
command -v python3 >/dev/null || e2e_skip "python3 missing"
[ -x "$NPREC" ] && [ -x "$NPANALYZE" ] && [ -x "$NPREPORT" ] || e2e_skip "nprec/npanalyze/npreport not built"
OUT=$E2E_TMP/out
# Ground truth for the slow RPCs: a capture of the orders backend's port on
# dm-back's veth, before iptables' INPUT drop (a dropped request and its
# retransmission both pass it). Started once the demo made the veth, before
# its recorders and load; stopped once the demo wrote report.txt, seconds
# after the load (stopped when the load ended, a capture at load 9 missed
# its last 0.3 s: 34 packets libpcap had not handed over yet, lost at the
# signal; --immediate-mode hands each one over at once).
CAP=$E2E_TMP/back.pcap
# (up, not only there: tcpdump refuses a device that is down)
( for _ in $(seq 600); do ip -n dm-back link show up dev dm-b0 2>/dev/null | grep -q dm-b0 && break; sleep 0.05; done
  exec ip netns exec dm-back tcpdump -i dm-b0 --immediate-mode -U -s 512 -w "$CAP" 'tcp port 9002' ) 2> "$E2E_TMP/tcpdump.err" &
CAP_PID=$!
( while [ ! -e "$OUT/report.txt" ] && kill -0 $CAP_PID 2>/dev/null; do sleep 0.2; done
  kill -INT $CAP_PID 2>/dev/null ) &
MONO_OFF=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
DEMO_OUT=$OUT DEMO_SECONDS=${DEMO_SECONDS:-8} DEMO_LOSS=0.03 DEMO_QUIET=1 NP_BUILD=$NP_BUILD \
	DEMO_NPREC_ARGS=${DEMO_NPREC_ARGS:-} \
	bash "$E2E_ROOT/tests/demo.sh" > "$E2E_TMP/demo.out" 2> "$E2E_TMP/demo.err"
rc=$?
tail -5 "$E2E_TMP/demo.err" >&2
check "demo completed (exit $rc)" test $rc -eq 0
check "report.txt written" test -s "$OUT/report.txt"
check "CSV written" test -s "$OUT/csv/clock.csv"
if command -v gnuplot >/dev/null; then
	check "plots written (PNG + SVG)" sh -c "ls $OUT/plots/*.png >/dev/null && ls $OUT/plots/*.svg >/dev/null"
fi
# The tables and plots hold addresses and process names: private like the
# recordings (0600), whatever the umask the demo ran under.
check "CSV and plot files are not readable by group or others (umask $(umask))" \
	sh -c "test -z \"\$(find '$OUT/csv' '$OUT/plots' '$OUT/report.html' -type f -perm /077 2>/dev/null)\" && ls '$OUT/csv' | grep -q ."
check "no namespace left behind by the demo" sh -c "! ip netns list | grep -q '^dm-'"

# Every claim from the CSV (raw numbers), against the injected ground truth.
python3 "$E2E_ROOT/tests/tools/dm_claims.py" "$OUT" --kv > "$E2E_TMP/claims.txt"
cat "$E2E_TMP/claims.txt" >&2
v() { awk -F= -v k="$1" '$1==k{print $2}' "$E2E_TMP/claims.txt"; }
off=$(v back_offset_ns)
check "clock shift of dm-back recovered: $off ns vs 5000000 (<= 20 us off)" \
	sh -c "[ -n '$off' ] && awk -v o='$off' 'BEGIN{d=o-5000000; if(d<0)d=-d; exit !(d<=20000)}'"
check "orders/checkout p50 on dm-back near the injected 50 ms ($(v checkout_p50_ns) ns; load gen says $(v load_checkout_p50_ms) ms)" \
	sh -c "awk -v p='$(v checkout_p50_ns)' 'BEGIN{exit !(p!=\"\" && p>=49e6 && p<=60e6)}'"
check "orders/browse p50 stays fast ($(v browse_p50_ns) ns)" \
	sh -c "awk -v p='$(v browse_p50_ns)' 'BEGIN{exit !(p!=\"\" && p>0 && p<10e6)}'"
wait $CAP_PID 2>/dev/null
# The slowest RPCs are front transactions that called dm-back, split over
# that call (slow_rpc_tree). Which of them waited for a retransmission
# comes from the capture, not from their duration (under 150 ms or not:
# under load 8 the injected 50 ms stretched to 130 ms, 157 ms in all, and
# a browse RPC took 263 ms with no drop): each tree is the orders request
# inside the transaction nearest both its ends (sent soonest after it
# began, answered soonest before it ended: the one answered last matched a
# concurrent checkout answered 4 ms after this RPC's own resent request).
# A request resent after a drop waited >= 200 ms (RTO): the network is the
# cause. A checkout RPC not resent holds the injected 50 ms in
# dm-back's application. (Whether that is the largest part is not checked:
# under load the rest of such an RPC grew past 50 ms, and dm-back's time in
# the capture is no measure of its application's: a checkout spent 407 ms
# there, not resent, 51 ms of it in the application.)
python3 "$E2E_ROOT/tests/tools/dm_resent.py" "$CAP" "$MONO_OFF" > "$E2E_TMP/resent.txt" 2>&1
read -r nt nm nl nl_net nc nc_50 < <(python3 - "$OUT/csv/bottlenecks.csv" "$E2E_TMP/resent.txt" <<'PY' 2> "$E2E_TMP/trees.txt" || echo "0 0 0 0 0 0"
import csv, sys
reqs = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4 and f[0].lstrip("-").isdigit():
        reqs.append((int(f[0]), int(f[1]), f[2] == "1", f[3]))
trees = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["source"] != "slow_rpc_tree":
        continue
    t = trees.setdefault((int(r["from_ns"]), int(r["to_ns"])), {"name": None, "back": 0})
    if r["bottleneck"] == "1":
        t["name"] = r["component"]
    if r["component"].startswith("app:") and r["component"].endswith("dm-back"):
        t["back"] = int(r["d_i_ns"])
nm = nl = nl_net = nc = nc_50 = 0
for (lo, hi), t in trees.items():
    inside = [q for q in reqs if q[0] >= lo and 0 < q[1] <= hi]
    if not inside:
        print(lo, hi, t["name"], t["back"], "no orders request inside", file=sys.stderr)
        continue
    nm += 1
    q = min(inside, key=lambda q: (q[0] - lo) + (hi - q[1]))
    if q[2]:
        nl += 1
        nl_net += t["name"] == "network"
    elif q[3].startswith("/orders/checkout"):
        nc += 1
        nc_50 += t["back"] >= 50000000
    print(lo, hi, t["name"], t["back"], q, file=sys.stderr)
print(len(trees), nm, nl, nl_net, nc, nc_50)
PY
)
cat "$E2E_TMP/trees.txt" >&2
check "slow RPCs split over their calls ($nt call trees)" test "${nt:-0}" -gt 0
check "every slow RPC matched to its orders request in dm-back's capture ($nm of $nt)" test "${nm:-0}" -eq "${nt:-0}"
# Either set can be empty: on a quiet machine every slow RPC was resent (no
# checkout RPC among them), in a run without drops none was. "0 of 0" is
# no evidence: skipped, not passed.
if [ "${nl:-0}" -gt 0 ]; then
	check "the network named for the RPCs whose orders request was resent, per the capture ($nl_net of $nl)" \
		test "${nl_net:-0}" -eq "$nl"
else
	skip "the network named for the resent RPCs: no slow RPC's orders request was resent in this run"
fi
if [ "${nc:-0}" -gt 0 ]; then
	check "checkout RPCs not resent: dm-back's application holds the injected 50 ms ($nc_50 of $nc)" \
		test "${nc_50:-0}" -eq "$nc"
else
	skip "checkout RPCs not resent hold the injected 50 ms: none among the slow RPCs (all of them resent)"
fi
if [ "$(v iptables_dropped)" -gt 0 ]; then
	# the kernel's drop reason counts vs iptables' own counter (both count
	# every drop of the rule while the recorders run)
	check "drops located: NETFILTER_DROP on dm-back :9002 = $(v netfilter_drops_on_back_9002), iptables counted $(v iptables_dropped)" \
		within "$(v netfilter_drops_on_back_9002)" "$(v iptables_dropped)" 20
	check "lost packets traced to dm-back :9002 ($(v netfilter_lost_on_back_9002) of $(v netfilter_lost) with NETFILTER_DROP)" \
		sh -c "[ '$(v netfilter_lost)' -ge 1 ] && [ '$(v netfilter_lost_on_back_9002)' = '$(v netfilter_lost)' ]"
else
	echo "  (iptables dropped nothing in this short run: loss checks skipped)" >&2
fi
# The pattern's lower bound on the orders RPC is 35-60 ms (the injected
# 50 ms), or lower only as far as the capture shows browse orders calls
# that neither the injection nor a drop slowed: under load 10 eleven took
# >= 17 ms at dm-back, and the miner rightly put the bound at 17.2 ms, the
# edge of the browse calls (F 0.67), which dm_claims' 35-60 ms rejected.
read -r pat_f pat_lo pat_slow < <(python3 - "$OUT/csv/patterns.csv" "$E2E_TMP/resent.txt" <<'PY' 2>/dev/null || echo "0 - 0"
import csv, re, sys
slow = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4 and f[0].isdigit() and int(f[1]) > 0 and f[2] == "0" and not f[3].startswith("/orders/checkout"):
        slow.append((int(f[1]) - int(f[0])) / 1e6)
best, lo_best, n_best = 0.0, "-", 0
for r in csv.DictReader(open(sys.argv[1])):
    for lo, unit in re.findall(r"9002[^∈]*∈ \[([0-9.]+) (ms|µs|s)", r["conditions"]):
        b = float(lo) * {"ms": 1, "µs": 1e-3, "s": 1e3}[unit]
        n = sum(1 for d in slow if b <= d < 35)
        if b <= 60 and (b >= 35 or n > 0) and float(r["fscore_ratio"]) > best:
            best, lo_best, n_best = float(r["fscore_ratio"]), lo + " " + unit, n
print(best, lo_best.replace(" ", ""), n_best)
PY
)
check "a degradation pattern conditions on the orders RPC >= ~50 ms (F = $pat_f, bound $pat_lo; $pat_slow browse orders calls from the bound to 35 ms, not resent, in the capture)" \
	sh -c "awk -v f='$pat_f' 'BEGIN{exit !(f>=0.5)}'"
check "text report names the shifted host's clock" grep -q 'dm-back' "$OUT/report.txt"
# The report's incident summary (incident.csv), written from the analysis
# alone, states the injected conditions and agrees with the tables above.
check "summary: slow endpoint $(v summary_slow_endpoint) +$(v summary_slow_added_ns) ns (injected 50 ms), spent on $(v summary_backend_host)" \
	sh -c "[ '$(v summary_agrees_slow)' = 1 ] && awk -v a='$(v summary_slow_added_ns)' 'BEGIN{exit !(a>=45e6 && a<=60e6)}'"
check "summary: clock of $(v summary_clock_host) off by $(v summary_clock_offset_ns) ns, as the clock table" \
	test "$(v summary_agrees_clock)" = 1
check "summary: $(v summary_loss_count) packets to $(v summary_loss_service) lost on $(v summary_loss_host), as lost_packets" \
	test "$(v summary_agrees_loss)" = 1
check "text report starts with the incident summary" sh -c "head -5 '$OUT/report.txt' | grep -q '^Incident summary'"

# Ctrl-C in the middle: SIGINT to the demo's whole process group, as a
# terminal sends it; namespaces and processes must be gone right after.
python3 - "$E2E_ROOT" "$E2E_TMP/int" > "$E2E_TMP/int.txt" 2>&1 <<'PY'
import os, signal, subprocess, sys, time
root, out = sys.argv[1], sys.argv[2]
env = dict(os.environ, DEMO_SECONDS="20", DEMO_OUT=out, DEMO_QUIET="1")
p = subprocess.Popen(["bash", f"{root}/tests/demo.sh"], env=env, start_new_session=True,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(150):                       # until the load runs
    if os.path.exists(f"{out}/client.npr"):
        break
    time.sleep(0.1)
time.sleep(2)
os.killpg(p.pid, signal.SIGINT)
print("exit", p.wait(timeout=60))
PY
cat "$E2E_TMP/int.txt" >&2
check "Ctrl-C: demo exits 130" grep -q '^exit 130' "$E2E_TMP/int.txt"
check "Ctrl-C: no dm- namespace left" sh -c "! ip netns list | grep -q '^dm-'"
# (bracketed letters so pgrep does not find the sh -c running it)
check "Ctrl-C: no service or recorder left" sh -c "! pgrep -f 'dm_servic[e].py|npre[c] -o $E2E_TMP/int' >/dev/null"
e2e_finish
