# Helpers of the incident e2e tests (tests/e2e/incident_*.sh); source after
# tests/lib/e2e.sh.
SUM=$NP_BUILD/tools/in_npsum

# in_wait_ready PID: wait (up to 60 s) until nprec has installed its signal
# handlers (SIGHUP and SIGUSR1 caught): before that, these signals would
# kill it. Loading the BPF families can take seconds on a busy machine.
# PID must run nprec first: before its exec the `bg` child is a copy of the
# test's shell, and bash (EXIT trap set) catches SIGHUP and SIGUSR1 too, so
# its mask alone looked ready; the SIGUSR1 that followed killed the child
# (incident_flight phase 3 in ci3: "nprec" died of SIGUSR1).
in_wait_ready() {
	local i mask
	wait_pid_exec "$1" nprec || return 1
	for i in $(seq 600); do
		mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
		[ -n "$mask" ] || return 1
		(( (16#$mask & 0x201) == 0x201 )) && return 0
		sleep 0.1
	done
	return 1
}

# in_wait_intervals FILE N [PID]: wait (up to 60 s) until FILE holds N
# intervals; gives up at once when process PID is gone.
in_wait_intervals() {
	local i n
	for i in $(seq 600); do
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && return 1
		n=$("$SUM" "$1" 2>/dev/null | sed -n 's/^n_interval=//p')
		[ "${n:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# in_wait_dump FILE: wait (up to 10 s) for a complete flight-recorder dump
# (its TRIGGER record is the last one written).
in_wait_dump() {
	local i
	for i in $(seq 100); do
		[ -s "$1" ] && "$SUM" "$1" | grep -q '^n_trigger=1$' && return 0
		sleep 0.1
	done
	return 1
}

in_now() { "$SUM" --now; }
