# Sourced by bench/record.sh, bench/recpaced.sh and bench/e2e_pairs.sh:
# waiting for a started recorder, wrk's latency units, nprec's lost events,
# a profile's samples of one's own recorders.

# rec_wait_ready: until every nprec in REC_PIDS is past its start-up
# (families attached, output open: a .npr file among its descriptors, and
# the start-up drainer thread gone, so one thread left), at most 15 s: a
# fixed sleep let a slow start-up (the verifier, ~1 s of CPU) run into the
# first measurement and count as recording cost. (Its signal handlers are
# set before the families open, so they say nothing about readiness.)
rec_wait_ready() {
	local p i c
	for p in "${REC_PIDS[@]}"; do
		for i in $(seq 150); do
			c=$(cat /proc/$p/comm 2>/dev/null) || break
			case $c in
			nprec*)   # also a copy such as NPREC_ALT=/tmp/nprec-base
				[ "$(ls /proc/$p/task 2>/dev/null | wc -l)" = 1 ] &&
					ls -l /proc/$p/fd 2>/dev/null | grep -q '\.npr' && break;;
			tcpdump|perf) break;;
			*)   # the shell or chrt before their exec, or another recorder
				[ "$i" -gt 10 ] && break;;
			esac
			sleep 0.1
		done
	done
}

# to_us VALUE: wrk latency with unit -> microseconds
to_us() { awk -v v="$1" 'BEGIN{ u=v; sub(/[0-9.]+/, "", u); n=v+0;
	if (u=="ns") n/=1000; else if (u=="ms") n*=1000; else if (u=="s") n*=1e6; printf "%.1f", n }'; }

# npr_lost NPREPORT FILE: the END record's lost_total of a recording (0 without END)
npr_lost() {
	"$1" dump --type end "$2" 2>/dev/null | python3 -c 'import json,sys
print(sum(json.loads(l)["body"].get("lost_total",0) for l in sys.stdin))' 2>/dev/null || echo 0
}

# rec_own_samples PERFDATA [PID...]: `perf script -F comm,ip,sym` of a
# system-wide profile (bench/recshare.py's input) in which only these
# recorders (and their children, nprec's file helper) count as recorders:
# other nprec or tcpdump processes on the machine (other users' tests) are
# renamed, and samples through BPF programs these do not hold (by the JIT'ed
# code's address, bench/recjit.py) are marked foreign
# (bench/recpaced_own.awk), so recshare.py's --workload leaves both out.
# Call it while the recorders still run.
rec_own_samples() {
	local data=$1 p pids= ranges=
	shift
	for p in "$@"; do pids="$pids $p $(pgrep -P "$p" | tr '\n' ' ')"; done
	# shellcheck disable=SC2086
	[ -n "$pids" ] && ranges=$(python3 "$ROOT/bench/recjit.py" $pids | awk '{printf "%s %s ", $1, $2}')
	perf script -i "$data" -F comm,pid,ip,sym 2>/dev/null |
		awk -v me="$pids" -v ranges="$ranges" -f "$ROOT/bench/recpaced_own.awk"
}
