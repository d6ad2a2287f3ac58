#!/bin/bash
# The default's own socket-time estimate against the exact clock (issue
# 24): a veth iperf3 transfer recorded by two nprec at once, one at the
# default `--netcpu sample:997`, one at `--netcpu exact:997`, both netcpu
# alone and filtered to the server's address. An exact recording's own
# sampler decides softirq by the exact pair, the default's by
# preempt_count and the walk, so only a second recorder checks the
# default's rule (docs/NETCPU.md j29d: before its fix, a timer taken in the
# softirq loop after a hardirq was softirq to the default, and send read
# ~0.80 x exact). Checked against the exact clock, an independent
# measurement of the same calls:
#  - send: exact, less the exact clock's own programs (its probe samples
#    x their period: the default recording has none of them), within the
#    99.99 % Poisson interval of the default's sample count x its mean
#    period, no allowance (the default before the fix fails it);
#  - receive: the same with 0.25 of allowance on the high side: a CPU's
#    own timer finds the softirqs inside the receive calls 0.76-0.87 x as
#    often as their share (the calls themselves at their share), and
#    iperf3's receive calls spend about half their time in softirqs, so
#    the socket time reads 1.13-1.23 x (docs/NETCPU.md j31d,
#    bench/netcpu_timerlab.sh: TCP pacing timers armed in those softirqs
#    cost a ~13 us TSC-deadline exit on this VM, except in the ~26 us
#    before the CPU's next timer event, which the sampler's expiry is).
# Two transfers, each under its own pair of recorders: the first under the
# machine's congestion control (BBR on the project VM: paced, so receive
# gets the allowance above), the second under Reno, set in the two
# namespaces, which TCP does not pace: there receive gets no allowance
# either (0.97-1.00 x exact with nprec in j31d's runs; skipped where a
# namespace may not set reno).
# The first transfer has a third recorder, the default with the remote
# split (NPREC_TEST_SOCK_SAMPLER=remote, docs/NETCPU.md j32c: not the
# default, for its own bias under Reno): on two or more CPUs its records
# must say so and hold remote samples of the sender's calls, and its
# estimates must lie within 0.3 of exact less probes (0.96-1.13 in j32c's
# runs; a remote read that found no call, or the wrong CPU's, reads ~0 or
# ~2x).
# NCD_PREFIX names the namespaces and veth ends (default ncd<pid>).
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init rec_netcpu_dual
e2e_need_root
command -v iperf3 >/dev/null || e2e_skip "iperf3 not installed"
[ -x "$NPREC" ] || e2e_skip "nprec not built"
[ -x "$NPREPORT" ] || e2e_skip "npreport not built"
NC="python3 $E2E_ROOT/tests/tools/nc_npr.py"
P=${NCD_PREFIX:-ncd$$}
NSA=$P-a NSB=$P-b IPA=10.78.32.1 IPB=10.78.32.2
ns_add $NSA && ns_add $NSB || e2e_skip "cannot create namespaces"
veth_pair $NSA ${P}a0 $IPA/24 $NSB ${P}b0 $IPB/24 || e2e_skip "cannot create veth"
PIN_S=() PIN_C=()
if [ "$(nproc)" -ge 2 ]; then PIN_S=(taskset -c 1) PIN_C=(taskset -c 0); fi

bg ip netns exec $NSB "${PIN_S[@]}" iperf3 -s -B $IPB -p 5301
ns_wait_listen $NSB 5301 || e2e_skip "iperf3 server did not listen"
ONLY=(--no-flows --no-txn --no-threads --host "$IPB")
val() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2}'; }

# remote_check TAG FILE SX: the remote split's recording FILE against the
# exact recording's sockest SX
remote_check() {
	local tag=$1 f=$2 sx=$3 S SR c R
	S=$("$NPREPORT" dump "$f" 2>/dev/null | python3 -c '
import json, sys
mode, n = "-", 0
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "netcpu":
        b = r["body"]
        mode = b.get("sock_sampler", "-")
        n += sum(b.get("send_rsmp", [])) + sum(b.get("send_rsirq_smp", []))
print(mode, n)')
	if [ "$(nproc)" -lt 2 ]; then
		check "$tag remote: one CPU, the local sampler (${S% *})" [ "${S% *}" = local ]
		return
	fi
	check "$tag remote: the records say sock_sampler remote (${S% *})" [ "${S% *}" = remote ]
	check "$tag remote: remote samples of the sender's calls (${S#* } >= 100)" ge "${S#* }" 100
	SR=$("$NPREPORT" dump "$f" 2>/dev/null | $NC sockest 3.89)
	for c in send recv; do
		R=$(awk -v e="$(val "$SR" ${c}_est_ns)" -v x="$(val "$sx" ${c}_exact_ns)" \
			-v xn="$(val "$sx" ${c}_smp)" -v xe="$(val "$sx" ${c}_est_ns)" -v p="$(val "$sx" ${c}_probe_smp)" \
			'BEGIN { net = x - p * (xn > 0 ? xe / xn : 0); printf "%.3f", (net > 0 ? e / net : 0) }')
		check "$tag remote $c: $R x exact less probes, within 0.3" \
			awk -v r="$R" 'BEGIN { exit !(r >= 0.7 && r <= 1.3) }'
	done
}

# dual TAG RECV_ALLOW [remote]: one 6 s transfer under the two recorders
# (and the remote split's, a third), checked
dual() {
	local tag=$1 recv_allow=$2 D=$E2E_TMP/$1.dflt.npr X=$E2E_TMP/$1.exact.npr DP XP RC SENT SD SX c ALLOW
	local RF=$E2E_TMP/$1.remote.npr RP=""
	bg "$NPREC" -q --netcpu sample:997 "${ONLY[@]}" -o "$D"; DP=$BG_PID
	wait_rec "$D" "$DP" || e2e_skip "nprec (sample) did not start"
	if [ "${3:-}" = remote ]; then
		NPREC_TEST_SOCK_SAMPLER=remote bg "$NPREC" -q --netcpu sample:997 "${ONLY[@]}" -o "$RF"; RP=$BG_PID
		wait_rec "$RF" "$RP" || e2e_skip "nprec (sample, remote split) did not start"
	fi
	bg "$NPREC" -q --netcpu exact:997 "${ONLY[@]}" -o "$X"; XP=$BG_PID
	wait_rec "$X" "$XP" || e2e_skip "nprec (exact) did not start"
	sleep 1
	ip netns exec $NSA "${PIN_C[@]}" iperf3 -c $IPB -p 5301 -t 6 -J > "$E2E_TMP/$tag.json" 2>/dev/null
	RC=$?
	kill -INT "$XP" "$DP" $RP; wait "$XP" "$DP" $RP 2>/dev/null
	check "$tag: iperf3 transfer ran" [ "$RC" -eq 0 ]
	SENT=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_sent"]["bytes"]))' \
		"$E2E_TMP/$tag.json" 2>/dev/null)
	check "$tag: iperf3 sent data (${SENT:-none} bytes)" gt "${SENT:-0}" 10000000
	SD=$("$NPREPORT" dump "$D" 2>/dev/null | $NC sockest 3.89)
	SX=$("$NPREPORT" dump "$X" 2>/dev/null | $NC sockest 3.89)
	check "$tag: the default recording is sampled (sock=$(val "$SD" sock))" [ "$(val "$SD" sock)" = sampled ]
	check "$tag: the exact recording is exact (sock=$(val "$SX" sock))" [ "$(val "$SX" sock)" = exact ]
	for c in send recv; do
		ALLOW=0
		[ $c = recv ] && ALLOW=$recv_allow
		read -r N LO HI XN RB RN <<<"$(awk -v n="$(val "$SD" ${c}_smp)" -v e="$(val "$SD" ${c}_est_ns)" \
			-v x="$(val "$SX" ${c}_exact_ns)" -v xn="$(val "$SX" ${c}_smp)" -v xe="$(val "$SX" ${c}_est_ns)" \
			-v p="$(val "$SX" ${c}_probe_smp)" 'BEGIN{
			z = 3.89; per = n > 0 ? e / n : 0; xper = xn > 0 ? xe / xn : 0
			h = z * sqrt(n + z * z / 4); m = n + z * z / 2
			net = x - p * xper
			rb = x > 0 ? e / x : 0; rn = net > 0 ? e / net : 0
			printf "%d %.0f %.0f %.0f %.3f %.3f", n, (m - h) * per, (m + h) * per, net, rb, rn}')"
		echo "$tag $c: default $N samples, $RB x exact, $RN x exact less its probes ($XN ns)" >&2
		check "$tag $c: enough default samples (${N:-0} >= 100)" ge "${N:-0}" 100
		# the default's estimate, with its interval, against exact less probes
		check "$tag $c: exact less probes ($XN ns) within the default's 99.99 % interval ($LO..$HI ns; high side x (1 + $ALLOW))" \
			awk -v x="${XN:-0}" -v lo="${LO:-0}" -v hi="${HI:-0}" -v a="$ALLOW" \
			'BEGIN { exit !(x > 0 && x * (1 + a) >= lo && x <= hi) }'
	done
	if [ -n "$RP" ]; then remote_check "$tag" "$RF" "$SX"; fi
}

# the machine's congestion control (BBR here: paced, receive with its allowance)
dual "cc-$(ip netns exec $NSA sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null)" 0.25 remote
# Reno, which TCP does not pace: no allowance on either side
if ip netns exec $NSA sysctl -qw net.ipv4.tcp_congestion_control=reno 2>/dev/null &&
   ip netns exec $NSB sysctl -qw net.ipv4.tcp_congestion_control=reno 2>/dev/null; then
	dual cc-reno 0
else
	echo "rec_netcpu_dual: reno not settable in a namespace here: unpaced transfer skipped" >&2
fi
e2e_finish
