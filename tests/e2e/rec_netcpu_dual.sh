#!/bin/bash
# The default's own socket-time estimate against the exact clock (issue
# 24): a veth iperf3 transfer recorded by three nprec at once, the default
# `--netcpu sample:997` (each CPU's own timer), the same with receive calls
# split by the other CPU's timer (NPREC_TEST_SOCK_SAMPLER=remote-recv) and
# `--netcpu exact:997`, all netcpu alone and filtered to the server's
# address. An exact recording's own
# sampler decides softirq by the exact pair, the default's by
# preempt_count and the walk, so only a second recorder checks the
# default's rule (docs/NETCPU.md j29d: before its fix, a timer taken in the
# softirq loop after a hardirq was softirq to the default, and send read
# ~0.80 x exact). Checked against the exact clock, an independent
# measurement of the same calls:
#  - send and receive: exact, less the exact clock's own programs (its
#    probe samples x their period: the default recording has none of
#    them), within the 99.99 % Poisson interval of the default's sample
#    count x its mean period, no allowance: the tolerance is the sample
#    count's (the default before j29d's fix fails it on send). The remote
#    split's recv_smp is the count whose interval is that estimate's (the
#    call total's and the split's error: record/families/netcpu_dither.h
#    nc_split_count);
#  - the records say which sampler ran (the default: local; the remote
#    split: remote-recv on two or more CPUs, local on one) and, with the
#    remote split, hold remote samples of the receiver's calls.
# Two transfers, each under its own recorders: the first under the
# machine's congestion control (BBR on the project VM: paced), the second
# under Reno, set in the two namespaces, which TCP does not pace (skipped
# where a namespace may not set reno). Under the paced transfer both
# samplers' receive estimates have 0.25 of allowance on the high side:
# the remote split read 0.92-1.02 x in j32c's runs, 0.978-1.123 in j33a's
# and 1.136 in a CI run whose own timer read 1.007 (docs/NETCPU.md
# "j33a": why is not known, so it is not the default); a CPU's own timer finds the
# softirqs inside the receive calls 0.76-0.87 x as often as their share,
# and iperf3's receive calls spend about half their time in softirqs, so
# its socket time reads 1.03-1.23 x (docs/NETCPU.md j31d,
# bench/netcpu_timerlab.sh: TCP pacing timers armed in those softirqs cost
# a ~13 us TSC-deadline exit on this VM, except in the ~26 us before the
# CPU's next timer event, which the sampler's expiry is); under Reno
# 0.97-1.00 (j31d), no allowance.
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

# sampler FILE: the sock_sampler its records name, and its remote samples
# of the receiver's calls
sampler() {
	"$NPREPORT" dump "$1" 2>/dev/null | python3 -c '
import json, sys
mode, n = "-", 0
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "netcpu":
        b = r["body"]
        mode = b.get("sock_sampler", "-")
        n += sum(b.get("recv_rsmp", [])) + sum(b.get("recv_rsirq_smp", []))
print(mode, n)'
}

# est_check TAG NAME FILE SX RECV_ALLOW: recording FILE's socket-time
# estimates against the exact recording's sockest SX
est_check() {
	local tag=$1 name=$2 f=$3 sx=$4 recv_allow=$5 SD c ALLOW
	SD=$("$NPREPORT" dump "$f" 2>/dev/null | $NC sockest 3.89)
	check "$tag $name: the recording is sampled (sock=$(val "$SD" sock))" [ "$(val "$SD" sock)" = sampled ]
	for c in send recv; do
		ALLOW=0
		[ $c = recv ] && ALLOW=$recv_allow
		read -r N LO HI XN RB RN <<<"$(awk -v n="$(val "$SD" ${c}_smp)" -v e="$(val "$SD" ${c}_est_ns)" \
			-v x="$(val "$sx" ${c}_exact_ns)" -v xn="$(val "$sx" ${c}_smp)" -v xe="$(val "$sx" ${c}_est_ns)" \
			-v p="$(val "$sx" ${c}_probe_smp)" 'BEGIN{
			z = 3.89; per = n > 0 ? e / n : 0; xper = xn > 0 ? xe / xn : 0
			h = z * sqrt(n + z * z / 4); m = n + z * z / 2
			net = x - p * xper
			rb = x > 0 ? e / x : 0; rn = net > 0 ? e / net : 0
			printf "%d %.0f %.0f %.0f %.3f %.3f", n, (m - h) * per, (m + h) * per, net, rb, rn}')"
		echo "$tag $name $c: $N samples, $RB x exact, $RN x exact less its probes ($XN ns)" >&2
		check "$tag $name $c: enough samples (${N:-0} >= 100)" ge "${N:-0}" 100
		check "$tag $name $c: exact less probes ($XN ns) within the 99.99 % interval ($LO..$HI ns; high side x (1 + $ALLOW))" \
			awk -v x="${XN:-0}" -v lo="${LO:-0}" -v hi="${HI:-0}" -v a="$ALLOW" \
			'BEGIN { exit !(x > 0 && x * (1 + a) >= lo && x <= hi) }'
	done
}

# dual TAG LOCAL_RECV_ALLOW: one 6 s transfer under the default, exact
# and own-timer recorders, checked
dual() {
	local tag=$1 D=$E2E_TMP/$1.dflt.npr X=$E2E_TMP/$1.exact.npr L=$E2E_TMP/$1.remote.npr DP XP LP RC SENT SX S
	bg "$NPREC" -q --netcpu sample:997 "${ONLY[@]}" -o "$D"; DP=$BG_PID
	wait_rec "$D" "$DP" || e2e_skip "nprec (sample) did not start"
	NPREC_TEST_SOCK_SAMPLER=remote-recv bg "$NPREC" -q --netcpu sample:997 "${ONLY[@]}" -o "$L"; LP=$BG_PID
	wait_rec "$L" "$LP" || e2e_skip "nprec (sample, remote split) did not start"
	bg "$NPREC" -q --netcpu exact:997 "${ONLY[@]}" -o "$X"; XP=$BG_PID
	wait_rec "$X" "$XP" || e2e_skip "nprec (exact) did not start"
	sleep 1
	ip netns exec $NSA "${PIN_C[@]}" iperf3 -c $IPB -p 5301 -t 6 -J > "$E2E_TMP/$tag.json" 2>/dev/null
	RC=$?
	kill -INT "$XP" "$DP" "$LP"; wait "$XP" "$DP" "$LP" 2>/dev/null
	check "$tag: iperf3 transfer ran" [ "$RC" -eq 0 ]
	SENT=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_sent"]["bytes"]))' \
		"$E2E_TMP/$tag.json" 2>/dev/null)
	check "$tag: iperf3 sent data (${SENT:-none} bytes)" gt "${SENT:-0}" 10000000
	SX=$("$NPREPORT" dump "$X" 2>/dev/null | $NC sockest 3.89)
	check "$tag: the exact recording is exact (sock=$(val "$SX" sock))" [ "$(val "$SX" sock)" = exact ]
	S=$(sampler "$D")
	check "$tag default: the records say sock_sampler local (${S% *})" [ "${S% *}" = local ]
	S=$(sampler "$L")
	if [ "$(nproc)" -ge 2 ]; then
		check "$tag remote: the records say sock_sampler remote-recv (${S% *})" [ "${S% *}" = remote-recv ]
		check "$tag remote: remote samples of the receiver's calls (${S#* } >= 100)" ge "${S#* }" 100
	else
		check "$tag remote: one CPU, the own timer (${S% *})" [ "${S% *}" = local ]
	fi
	est_check "$tag" default "$D" "$SX" "$2"
	est_check "$tag" remote "$L" "$SX" "$2"
}

# the machine's congestion control (BBR here: paced, receive with its
# allowance)
dual "cc-$(ip netns exec $NSA sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null)" 0.25
# Reno, which TCP does not pace: no allowance
if ip netns exec $NSA sysctl -qw net.ipv4.tcp_congestion_control=reno 2>/dev/null &&
   ip netns exec $NSB sysctl -qw net.ipv4.tcp_congestion_control=reno 2>/dev/null; then
	dual cc-reno 0
else
	echo "rec_netcpu_dual: reno not settable in a namespace here: unpaced transfer skipped" >&2
fi
e2e_finish
