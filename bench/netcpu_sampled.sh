#!/bin/bash
# Sampled socket time (--netcpu sample, the default) against the exact
# clock (--netcpu exact) on bench-record's three workloads: iperf3, wrk
# saturated, wrk paced (1 ms between requests), nginx and iperf3 in one
# namespace, the clients in another, veth between them, endpoints pinned as
# in bench/record.sh. One `nprec --netcpu exact` recording per workload
# and repetition: in exact mode the sampler counts socket samples as well,
# so both figures come from the same socket calls, and the workload's
# variance cancels. Prints, per workload and class, the exact ns, the
# sample count, the estimate/exact ratio and whether the 95 % interval
# covers the exact value; cut: the samples left out because their stack
# walk stopped short of do_syscall_64, and the ratio had they counted (the
# figure before that check); probe: the samples in the exact clock's own
# programs (and other tracers' on its hooks), which the exact figure holds
# and the sampled one has not, and the ratio with them (docs/NETCPU.md
# "Sampled against exact"); outside: sampled time the exact clock does not
# hold (the syscall tail); calls: the exact clock's call count; ns/call:
# exact ns per call; probe/c: the probe samples' time per call (what the
# exact window holds of tracers' programs); net: (samples - outside +
# probe) over exact, the two figures over the same definition, and whether
# the 95 % interval of that count covers exact; hook links: raw tracepoint
# links on sock_send_length / sock_recv_length when the recording started
# (nprec's own hub is one; the others' programs attached earlier run inside
# the exact window: docs/NETCPU.md "What the exact window holds"). Not a
# test: figures for docs/NETCPU.md.
# Env: BENCH_T (seconds per workload, 5), REPS (2), NP_BUILD (build/), SOCK_HZ
# (the socket sampler's rate, 997: the default 97 Hz gives ~10x fewer samples),
# BENCH_NS (prefix of namespace and veth names, ncs), BENCH_NET (the veth
# pair's /24, 10.78.19), NC_ARGS (nprec options; default "--host <server>":
# the workload's sockets only; NC_ARGS= records every socket of the machine,
# as before 2026-11-26 23:00), BENCH_W (the workloads, "iperf3 wrk paced"),
# BENCH_HOG=1 (one nice-0 busy loop pinned to each CPU while a workload
# runs: the load under which iperf3 receive reads high, docs/NETCPU.md j28b,
# reproduced on a quiet machine; BENCH_HOG_CPUS: on these CPUs only),
# BENCH_DUAL=1 (a second recorder at the default --netcpu sample, netcpu
# alone, its timer at SOCK_HZ too, over the same workload: column `dflt`
# is its estimate over the exact figure. The exact recording's sampler
# decides softirq by the exact pair, the default's by preempt_count and the
# walk, so only this column checks the default's own rule: docs/NETCPU.md
# j29d; BENCH_DUAL=2: a third recorder like it in the environment ALT_ENV,
# NPREC_TEST_SOCK_SAMPLER=remote by default, column `alt/n`: an A/B in the
# same calls; NC_ENV: environment of the exact recorder, e.g.
# NPREC_TEST_SOCK_SAMPLER=remote; rows `split`: the remote sampler's
# counts, docs/NETCPU.md j32c), BENCH_CC (the namespaces' congestion
# control, e.g. reno). Row
# `nrx` per workload: NET_RX over all CPUs, the exact pair's
# ns against the exact recording's sampler (ratio, covers) and, with
# BENCH_DUAL=1, the default's (dflt/n): a CPU's own timer under-finds the
# softirqs of a busy receiving CPU (docs/NETCPU.md j31d).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NP_BUILD=${NP_BUILD:-$ROOT/build}
NPREC=$NP_BUILD/nprec NPREPORT=$NP_BUILD/npreport
T=${BENCH_T:-5}
REPS=${REPS:-2}
# BENCH_NS: prefix of the namespace and veth names (parallel runs)
BNS=${BENCH_NS:-ncs}
NSA=$BNS-bench-a NSB=$BNS-bench-b NET=${BENCH_NET:-10.78.19} IPA=$NET.1 IPB=$NET.2
# the workload's own sockets only (other helpers' traffic on a shared
# machine moved the counts by 2-10x); NC_ARGS= (empty) records the machine
FILTER_DEF="--host $IPB"
TMP=$(mktemp -d /tmp/np-bench-ncsampled.XXXXXX)
. "$ROOT/bench/txn_lib.sh"   # txn_traps (PIDS, namespaces and $TMP cleaned on exit), txn_setup_veth, txn_start_nginx
txn_traps
for t in iperf3 wrk nginx; do
	command -v $t >/dev/null || { echo "bench/netcpu_sampled.sh: $t missing" >&2; exit 1; }
done
PIN_C=() PIN_W=() AFF=""
if [ "$(nproc)" -ge 2 ]; then PIN_C=(-A 0,1) PIN_W=(taskset -c 0) AFF=10; fi

txn_setup_veth ${BNS}b
# BENCH_CC: the namespaces' congestion control (reno: TCP arms no pacing
# timers, whose TSC-deadline exits bias a CPU's own timer: NETCPU.md j31d);
# set before nginx listens (its connections take the listener's)
if [ -n "${BENCH_CC:-}" ]; then
	for ns in $NSA $NSB; do ip netns exec $ns sysctl -qw net.ipv4.tcp_congestion_control="$BENCH_CC" || exit 1; done
fi
txn_start_nginx "$AFF"
ip netns exec $NSB iperf3 -s -B $IPB -p 5311 >/dev/null 2>&1 & PIDS+=($!)
echo "function delay() return 1 end" > "$TMP/pace.lua"
sleep 1

workload() {
	case $1 in
	iperf3) ip netns exec $NSA iperf3 -c $IPB -p 5311 -t "$T" "${PIN_C[@]}" >/dev/null 2>&1 ;;
	wrk) ip netns exec $NSA "${PIN_W[@]}" wrk -t1 -c8 -d"${T}s" "http://$IPB:8080/index.html" >/dev/null 2>&1 ;;
	paced) ip netns exec $NSA "${PIN_W[@]}" wrk -t1 -c8 -d"${T}s" -s "$TMP/pace.lua" \
		"http://$IPB:8080/index.html" >/dev/null 2>&1 ;;
	esac
}

# the other programs on the exact clock's end hook (raw tracepoint links
# of other tracers, e.g. other nprec runs): the kernel runs those attached
# before ours inside the exact window (docs/NETCPU.md "What the exact
# window holds")
hook_links() { bpftool link list 2>/dev/null | grep -c "tp '$1'"; }
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), T=${T}s, REPS=$REPS, SOCK_HZ=${SOCK_HZ:-997}, NC_ARGS='${NC_ARGS-$FILTER_DEF}', BENCH_HOG=${BENCH_HOG:-0}${BENCH_HOG_CPUS:+ on CPUs $BENCH_HOG_CPUS}, BENCH_DUAL=${BENCH_DUAL:-0}, cc $(ip netns exec $NSA sysctl -n net.ipv4.tcp_congestion_control)"
printf "%-7s %-4s %3s %14s %7s %14s %7s %-10s %5s %9s %5s %11s %7s %6s %8s %8s %7s %-10s %-15s %-15s %s\n" workload cls rep exact_ns samples est_ns ratio "95% covers" cut "ratio+cut" probe "ratio+probe" outside calls "ns/call" "probe/c" net "net covers" "dflt/n" "alt/n" "hook links"
for rep in $(seq "$REPS"); do
	for w in ${BENCH_W:-iperf3 wrk paced}; do
		dp="" ap=""
		if [ "${BENCH_DUAL:-0}" -ge 1 ]; then
			# shellcheck disable=SC2086
			"$NPREC" -q --netcpu sample:"${SOCK_HZ:-997}" --no-flows --no-txn --no-threads \
				${NC_ARGS-$FILTER_DEF} -o "$TMP/$w.dflt.npr" & dp=$!
			PIDS+=("$dp")
			for _ in $(seq 100); do [ -s "$TMP/$w.dflt.npr" ] && break; sleep 0.1; done
		fi
		if [ "${BENCH_DUAL:-0}" -ge 2 ]; then
			# shellcheck disable=SC2086
			env ${ALT_ENV:-NPREC_TEST_SOCK_SAMPLER=remote} "$NPREC" -q --netcpu sample:"${SOCK_HZ:-997}" \
				--no-flows --no-txn --no-threads ${NC_ARGS-$FILTER_DEF} -o "$TMP/$w.alt.npr" & ap=$!
			PIDS+=("$ap")
			for _ in $(seq 100); do [ -s "$TMP/$w.alt.npr" ] && break; sleep 0.1; done
		fi
		# shellcheck disable=SC2086
		env ${NC_ENV:-} "$NPREC" -q --netcpu exact:"${SOCK_HZ:-997}" ${NC_ARGS-$FILTER_DEF} -o "$TMP/$w.npr" & rp=$!
		PIDS+=($rp)
		for _ in $(seq 100); do [ -s "$TMP/$w.npr" ] && break; sleep 0.1; done
		sleep 1
		links="$(hook_links sock_send_length)/$(hook_links sock_recv_length)"
		hogs=()
		if [ "${BENCH_HOG:-0}" = 1 ]; then
			for c in ${BENCH_HOG_CPUS:-$(seq 0 $(($(nproc) - 1)))}; do
				taskset -c "$c" sh -c 'while :; do :; done' & hogs+=($!)
			done
			PIDS+=("${hogs[@]}")
		fi
		workload $w
		[ ${#hogs[@]} -gt 0 ] && { kill "${hogs[@]}"; wait "${hogs[@]}" 2>/dev/null; }
		kill -INT $rp; wait $rp 2>/dev/null
		dflt=""
		if [ -n "$dp" ]; then
			kill -INT $dp; wait $dp 2>/dev/null
			# the default's estimates, renamed dflt_*: sent along with the exact recording's
			dflt=$("$NPREPORT" dump "$TMP/$w.dflt.npr" | python3 "$ROOT/tests/tools/nc_npr.py" sockest |
				tr ' ' '\n' | grep -E '^(send|recv|netrx)_(smp|est_ns|cut_smp)=' | sed 's/^/dflt_/' | tr '\n' ' ')
			dflt="$dflt $("$NPREPORT" dump "$TMP/$w.dflt.npr" | python3 "$ROOT/bench/netcpu_split.py" split_dflt_)"
			rm -f "$TMP/$w.dflt.npr"
		fi
		if [ -n "$ap" ]; then
			kill -INT $ap; wait $ap 2>/dev/null
			dflt="$dflt $("$NPREPORT" dump "$TMP/$w.alt.npr" | python3 "$ROOT/tests/tools/nc_npr.py" sockest |
				tr ' ' '\n' | grep -E '^(send|recv|netrx)_(smp|est_ns|cut_smp)=' | sed 's/^/alt_/' | tr '\n' ' ')"
			dflt="$dflt $("$NPREPORT" dump "$TMP/$w.alt.npr" | python3 "$ROOT/bench/netcpu_split.py" split_alt_)"
			rm -f "$TMP/$w.alt.npr"
		fi
		"$NPREPORT" dump "$TMP/$w.npr" > "$TMP/$w.json"
		dflt="$dflt $(python3 "$ROOT/bench/netcpu_split.py" split_exact_ < "$TMP/$w.json")"
		{ python3 "$ROOT/tests/tools/nc_npr.py" sockest < "$TMP/$w.json"
		  python3 "$ROOT/tests/tools/nc_npr.py" netcpu < "$TMP/$w.json"; echo "$dflt"; } | python3 -c '
import math, sys
kv = dict(t.split("=") for t in sys.stdin.read().split())
def ci(n, z=1.96):
    m, h = n + z * z / 2, z * math.sqrt(n + z * z / 4)
    return m - h, m + h
links = sys.argv[3].split("/")
for i, c in enumerate(("send", "recv")):
    x, n, e = int(kv[c + "_exact_ns"]), int(kv[c + "_smp"]), int(kv[c + "_est_ns"])
    lo, hi = int(kv[c + "_lo_ns"]), int(kv[c + "_hi_ns"])
    cut = int(kv.get(c + "_cut_smp", 0))
    p = int(kv["period_ns"])
    per = e / n if n else p
    pr, out = int(kv.get(c + "_probe_smp", 0)), int(kv.get(c + "_outside_smp", 0))
    calls = sum(int(v) for v in kv.get(c + "_n", "0").split(","))
    # net: the sampled time over the exact clock less the tracers time the
    # kernel ran inside it (probe) and plus the syscall tail it leaves out
    # (outside), i.e. the count of samples in the exact window over exact
    m = n - out + pr
    nlo, nhi = ci(m)
    dn, de = int(kv.get("dflt_" + c + "_smp", -1)), int(kv.get("dflt_" + c + "_est_ns", 0))
    # /n+cut: the count, and the samples left out as a tracer program (the
    # walk stopped short, or the remote task ran a BPF program)
    dc, lc = int(kv.get("dflt_" + c + "_cut_smp", 0)), int(kv.get("alt_" + c + "_cut_smp", 0))
    dflt = "%.3f/%d+%d" % (de / x, dn, dc) if dn >= 0 and x else "-"
    ln, le = int(kv.get("alt_" + c + "_smp", -1)), int(kv.get("alt_" + c + "_est_ns", 0))
    local = "%.3f/%d+%d" % (le / x, ln, lc) if ln >= 0 and x else "-"
    print("%-7s %-4s %3s %14d %7d %14d %7.3f %-10s %5d %9.3f %5d %11.3f %7d %7d %6.0f %8.0f %7.3f %-10s %-15s %-15s %s" % (
          sys.argv[1], c, sys.argv[2], x, n, e,
          e / x if x else 0, "yes" if lo <= x <= hi else "NO", cut, (e + cut * p) / x if x else 0,
          pr, (e + pr * p) / x if x else 0, out, calls, x / calls if calls else 0,
          pr * per / calls if calls else 0, m * per / x if x else 0,
          "yes" if nlo * per <= x <= nhi * per else "NO", dflt, local, links[i]))
# NET_RX (all CPUs): the exact pair against the exact recording sampler
# (walk) and the default recorder (preempt_count and walk); a CPU own
# timer under-finds the softirqs of a busy receiving CPU (docs/NETCPU.md j31d)
x, n, e = int(kv["netrx_exact_ns"]), int(kv["netrx_smp"]), int(kv["netrx_est_ns"])
dn, de = int(kv.get("dflt_netrx_smp", -1)), int(kv.get("dflt_netrx_est_ns", 0))
ln, le = int(kv.get("alt_netrx_smp", -1)), int(kv.get("alt_netrx_est_ns", 0))
lo, hi = int(kv["netrx_lo_ns"]), int(kv["netrx_hi_ns"])
print("%-7s %-4s %3s %14d %7d %14d %7.3f %-10s %5s %9s %5s %11.3f  (+probe: the pair own programs) %s" % (
      sys.argv[1], "nrx", sys.argv[2], x, n, e, e / x if x else 0, "yes" if lo <= x <= hi else "NO",
      "-", "-", kv.get("netrx_probe_smp", "-"), float(kv.get("netrx_win_ratio", 0)),
      ("dflt/n %.3f/%d" % (de / x, dn) if dn >= 0 and x else "") +
      (" alt/n %.3f/%d" % (le / x, ln) if ln >= 0 and x else "")))
# the remote sampler split (bench/netcpu_split.py) of each recorder that
# ran it: own timer sock/sirq, remote rsock/rsirq; adj: a sampled
# recorder figure had its split counted the exact pair own cost (inside
# softirqs by preempt_count, outside the pair window: the exact
# recorder rpc - rsirq) as call time, as the exact clock does
for r in ("dflt", "alt"):
    for c in ("send", "recv"):
        g = lambda r, k: int(kv.get("split_%s_%s_%s" % (r, c, k), 0))
        rd, re = g(r, "rsock") + g(r, "rsirq"), g("exact", "rsock") + g("exact", "rsirq")
        x, de = int(kv[c + "_exact_ns"]), int(kv.get(r + "_" + c + "_est_ns", 0))
        if rd and re and x and de:
            fd, pe = g(r, "rsirq") / rd, (g("exact", "rpc") - g("exact", "rsirq")) / re
            kv["adj_%s_%s" % (r, c)] = "%.3f" % (de / x * (1 - fd + pe) / (1 - fd))
for r in ("dflt", "alt", "exact"):
    for c in ("send", "recv"):
        g = lambda k: int(kv.get("split_%s_%s_%s" % (r, c, k), 0))
        if g("rsock") + g("rsirq") == 0:
            continue
        lc, rc = g("sock") + g("sirq"), g("rsock") + g("rsirq")
        print("%-7s %-4s %3s split %-5s own %d+%d (sirq %.3f) remote %d+%d (sirq %.3f, by preempt_count %.3f)" % (
              sys.argv[1], c, sys.argv[2], r, g("sock"), g("sirq"), g("sirq") / lc if lc else 0,
              g("rsock"), g("rsirq"), g("rsirq") / rc, g("rpc") / rc) +
              (" %s/x adj %s" % (r, kv["adj_%s_%s" % (r, c)]) if "adj_%s_%s" % (r, c) in kv else ""))' "$w" "$rep" "$links"
		rm -f "$TMP/$w.npr" "$TMP/$w.json"
	done
done
