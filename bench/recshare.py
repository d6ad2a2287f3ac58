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

usage: recshare.py [--workload REGEX] [--by-symbol] RULE... < perf-script-output
       recshare.py --merge-by-symbol < lines of --by-symbol output, each led by "MODE REP "
  RULE: nprec | tcpdump (the entry points and process name of each)
  --workload REGEX: count only samples of processes whose name matches (the
    benchmark's endpoints, idle-context softirq) or of a recorder's own
    process: on a machine shared with other work (compilers of other
    users), their busy samples would otherwise dilute the share
prints, per rule: RULE busy_samples rec_samples rec_kernel rec_process
  --by-symbol: after that line, where the rule's samples are, one line per
    RULE KIND NAME SAMPLES, KIND one of
      prog   kernel samples by the leafmost BPF program on the chain
             (bpf_prog_<tag>_NAME -> NAME; "-" when none: the dispatch or
             syscall slow path only)
      entry  kernel samples by the kernel function that called into the
             recorder's outermost frame (the tracepoint's site, the perf
             event overflow, the syscall entry)
      kleaf  kernel samples by their leaf frame (a program, a helper, ...)
      pleaf  own-process samples by their leaf frame
      pcall  own-process samples by what they were doing: "user:LEAF" in
             user space; in a system call, the call and the function it
             was in ("bpf/map_lookup_elem"); else "kernel:LEAF"
  --merge-by-symbol: sums such lines over repetitions, per mode: a table
    per kind with samples and their share of the mode's busy samples
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


def samples(stream, ips=None):
    """(comm, [symbol, ...] leaf first) per sample; with a list for ips,
    that list holds the sample's addresses in the same order."""
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
                if not syms and ips is not None:
                    ips.clear()
                syms.append(f[1].split("+")[0].strip())
                if ips is not None:
                    ips.append(int(f[0], 16) if re.match(r"^[0-9a-f]+$", f[0]) else 0)
    if comm is not None:
        yield comm, syms


KERNEL_IP = 0xffff800000000000


def prog_name(sym):
    m = re.match(r"^bpf_prog_[0-9a-f]+_(\w+)$", sym)
    return m.group(1) if m else sym


def by_symbol(rx, syms, ips, irq, out):
    """Adds the sample's keys to out[kind][key] (see the docstring)."""
    def add(kind, key):
        d = out.setdefault(kind, {})
        d[key] = d.get(key, 0) + 1
    if first(rx, syms) < irq:
        progs = [s for s in syms[:irq] if s.startswith("bpf_prog_")]
        add("prog", prog_name(progs[0]) if progs else "-")
        outer = max(i for i in range(irq) if rx.match(syms[i]))
        add("entry", syms[outer + 1] if outer + 1 < len(syms) else "-")
        add("kleaf", prog_name(syms[0]))
    else:
        add("pleaf", syms[0] if syms else "-")
        add("pcall", proc_call(syms, ips))


def proc_call(syms, ips):
    """What an own-process sample was doing: "user:LEAF" in user space, the
    system call and the function it was in ("bpf/map_lookup_elem"), or
    "kernel:LEAF" (faults, interrupts)."""
    if not ips or ips[0] < KERNEL_IP:
        return "user:" + (syms[0] if syms else "-")
    for i, s in enumerate(syms):
        if s in ("do_syscall_64", "x64_sys_call"):
            chain = [x for x in syms[:i] if not re.match(r"^(x64_sys_call|__x64_sys_|__sys_|ksys_|"
                                                        r"__do_sys_|do_sys_)", x)]
            call = re.sub(r"^(__x64_sys_|__sys_|ksys_)", "", syms[i - 1]) if i else "?"
            return "%s/%s" % (call, chain[-1] if chain else "-")
    return "kernel:" + syms[0]


def merge():
    """--merge-by-symbol: per mode and kind, samples summed over the profiles."""
    busy, acc, reps = {}, {}, {}
    for line in sys.stdin:
        f = line.split()
        if len(f) == 7 and f[3].isdigit():    # MODE REP RULE busy rec kernel process
            busy[f[0]] = busy.get(f[0], 0) + int(f[3])
            reps.setdefault(f[0], set()).add(f[1])
        elif len(f) == 6:         # MODE REP RULE KIND NAME SAMPLES
            d = acc.setdefault((f[0], f[3]), {})
            d[f[4]] = d.get(f[4], 0) + int(f[5])
    for mode in busy:
        print("%s: %d profiles, %d busy samples" % (mode, len(reps[mode]), busy[mode]))
        for kind in ("prog", "entry", "kleaf", "pcall", "pleaf"):
            d = acc.get((mode, kind), {})
            if not d:
                continue
            tot = sum(d.values())
            print("  %-6s %6d samples %6.2f %% of busy" % (kind, tot, 100.0 * tot / busy[mode]))
            for k, n in sorted(d.items(), key=lambda x: -x[1])[:15]:
                print("    %-44s %6d %6.2f %%" % (k, n, 100.0 * n / busy[mode]))
    return 0


def main():
    rules, only, bysym = sys.argv[1:], None, False
    if rules == ["--merge-by-symbol"]:
        return merge()
    while len(rules) >= 1 and rules[0] in ("--workload", "--by-symbol"):
        if rules[0] == "--by-symbol":
            bysym, rules = True, rules[1:]
        elif len(rules) >= 2:
            only, rules = re.compile(rules[1]), rules[2:]
        else:
            break
    own = {RULES[r][1] for r in rules if r in RULES}
    if not rules or any(r not in RULES for r in rules):
        sys.stderr.write(__doc__)
        return 2
    busy = 0
    hit = {r: [0, 0] for r in rules}      # kernel entry point, own process
    sym = {r: {} for r in rules}          # --by-symbol: kind -> key -> samples
    ips = []
    for comm, syms in samples(sys.stdin, ips):
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
            else:
                continue
            if bysym:
                by_symbol(rx, syms, ips, irq, sym[r])
    for r in rules:
        k, p = hit[r]
        print("%s %d %d %d %d" % (r, busy, k + p, k, p))
        for kind, d in sorted(sym[r].items()):
            for key, n in sorted(d.items(), key=lambda x: -x[1]):
                # one field: --merge-by-symbol splits on white space
                print("%s %s %s %d" % (r, kind, re.sub(r"\s+", "_", key), n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
