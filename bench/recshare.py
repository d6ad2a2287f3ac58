#!/usr/bin/env python3
"""recshare.py: a recorder's share of the machine's busy CPU from a
system-wide cpu-clock profile (perf record -a -g), read as `perf script -F
comm,ip,sym` on stdin.

bpf_stats (bench/recprogs.py) times the recorder's BPF programs only. It
leaves out what running them costs around them: the tracepoint dispatch,
the perf record a classic syscall tracepoint builds before its program, the
syscall slow path every syscall takes once a syscall tracepoint is on. And
it cannot see tcpdump's kernel side at all (the AF_PACKET copy of every
packet). A sample whose kernel call chain passes through one of the
recorder's entry points, or that ran in the recorder's own process, is the
recorder's (interrupt and softirq work that interrupted it is not: that is
the traffic's); the same rule applied to both recorders, in the same run,
makes their figures comparable. Samples whose leaf is an idle halt are idle; the
rest are busy.

usage: recshare.py [--workload REGEX] RULE... < perf-script-output
  RULE: nprec | tcpdump (the entry points and process name of each)
  --workload REGEX: count only samples of processes whose name matches (the
    benchmark's endpoints, idle-context softirq) or of a recorder's own
    process: on a machine shared with other work (compilers of other
    users), their busy samples would otherwise dilute the share
prints, per rule: RULE busy_samples rec_samples rec_kernel rec_process
"""
import re
import sys

RULES = {
    # tp_btf/raw_tp dispatch and programs, classic tracepoint programs
    # (syscalls), the syscall slow path they switch on, perf_event programs
    "nprec": (re.compile(r"^(bpf_trace_run\d+|__bpf_trace_run|bpf_prog_\w+|trace_call_bpf|"
                         r"perf_syscall_enter|perf_syscall_exit|syscall_trace_enter|"
                         r"syscall_exit_work|bpf_overflow_handler|bpf_iter_\w+)$"), "nprec"),
    # AF_PACKET delivery on receive and the copy of every sent packet
    "tcpdump": (re.compile(r"^(tpacket_rcv|packet_rcv|packet_rcv_spkt|dev_queue_xmit_nit)$"),
                "tcpdump"),
}
IDLE = re.compile(r"^(pv_native_safe_halt|native_safe_halt|default_idle|cpu_idle_poll|"
                  r"acpi_safe_halt|acpi_idle_do_entry|mwait_idle\w*|intel_idle\w*|"
                  r"poll_idle|io_idle)$")

# interrupt and softirq work that merely ran in the recorder's context or
# interrupted its kernel code (the network softirq of the traffic, RPS
# IPIs): not the recorder's. A recorder frame counts only when it is
# leafward of every such frame (its own softirq programs are).
IRQ = re.compile(r"^(handle_softirqs|__do_softirq|asm_sysvec_\w+|asm_common_interrupt)$")


def first(rx, syms):
    """Index of the leafmost frame rx matches, len(syms) if none."""
    for i, s in enumerate(syms):
        if rx.match(s):
            return i
    return len(syms)


def samples(stream):
    """(comm, [symbol, ...] leaf first) per sample."""
    comm, syms = None, []
    for line in stream:
        if not line.strip():
            if comm is not None:
                yield comm, syms
            comm, syms = None, []
        elif line[0] not in " \t":
            if comm is not None:
                yield comm, syms
            comm, syms = line.strip(), []
        else:
            f = line.split(None, 1)
            if len(f) == 2:
                syms.append(f[1].split("+")[0].strip())
    if comm is not None:
        yield comm, syms


def main():
    rules, only = sys.argv[1:], None
    if len(rules) >= 2 and rules[0] == "--workload":
        only, rules = re.compile(rules[1]), rules[2:]
    own = {RULES[r][1] for r in rules if r in RULES}
    if not rules or any(r not in RULES for r in rules):
        sys.stderr.write(__doc__)
        return 2
    busy = 0
    hit = {r: [0, 0] for r in rules}      # kernel entry point, own process
    for comm, syms in samples(sys.stdin):
        if syms and IDLE.match(syms[0]):
            continue
        if only and comm not in own and not only.match(comm):
            continue
        busy += 1
        irq = first(IRQ, syms)
        for r in rules:
            rx, name = RULES[r]
            if first(rx, syms) < irq:
                hit[r][0] += 1
            elif comm == name and irq == len(syms):
                hit[r][1] += 1
    for r in rules:
        k, p = hit[r]
        print("%s %d %d %d %d" % (r, busy, k + p, k, p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
