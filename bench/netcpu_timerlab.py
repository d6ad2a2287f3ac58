#!/usr/bin/env python3
"""Analysis of a bench/netcpu_timerlab.sh timeline (docs/NETCPU.md j31d).

Usage: netcpu_timerlab.py FILE TIMER_CPU CALL_CPU

From the events of bench/netcpu_timerlab.bpf.c (32 bytes each) it builds,
on CALL_CPU, three interval sets of the logged process:
  call    its socket calls, syscall entry to sock_*_length (the exact
          clock's bounds);
  sirq    the softirqs (any vector) that ran inside those calls;
  socket  call minus sirq: what both netcpu figures call socket time
          (the exact clock stops under any softirq).
Then, at every expiry of TIMER_CPU's cpu-clock timer (user mode sampled
too, so the whole grid) shifted by d, whether CALL_CPU is in each set,
against the set's share of the time: hits / (share x expiries). A
timer independent of the workload reads 1 at every d within the count's
error (printed). d = 0 is what a sampler on TIMER_CPU counts (the state
at the expiry: the guest is stopped from ~2 us before it to the
interrupt, so its program sees the same state). `pre` repeats d = -2.5
us with the time of every [E - 2 us, E + 25 us] taken out of the shares:
the state before the stop, against the time outside the stops (if only
the stop's time were misattributed this would read 1). Also printed: the
expiry-to-interrupt delay (local_timer_entry on TIMER_CPU) and the event
rate on CALL_CPU around the expiries, and, for the hrtimers armed on
TIMER_CPU (by function, from /proc/kallsyms), the time from the arming to
the CPU's next logged event when the armed expiry comes before the
timer's next expiry (the guest must rewrite its TSC deadline) and when it
does not.
"""
import bisect
import collections
import math
import struct
import sys

SMP, CALL0, CALL1, SI0, SI1, LTIMER, HRSTART = 1, 2, 3, 4, 5, 6, 7
SHIFTS_US = (-100, -50, -20, -10, -5, 0, 10, 20, 50)


def load(path):
    raw = open(path, "rb").read()
    ev = [struct.unpack_from("<QQQIHBB", raw, o) for o in range(0, len(raw) - 31, 32)]
    ev.sort(key=lambda e: e[0])
    return ev


def intervals(ev, cpu):
    """call and softirq intervals on cpu (calls of the logged process)."""
    calls, sirqs, c0, s0 = [], [], None, None
    for ts, _, _, _, c, ty, _ in ev:
        if ty == CALL0:
            c0 = ts
        elif ty == CALL1 and c0 is not None:
            calls.append((c0, ts))
            c0 = None
        elif c == cpu and ty == SI0:
            s0 = ts
        elif c == cpu and ty == SI1 and s0 is not None:
            sirqs.append((s0, ts))
            s0 = None
    return calls, sirqs


def clip(outer, inner):
    """the parts of inner inside outer (both sorted, inner disjoint)"""
    out, j = [], 0
    for s, e in outer:
        while j < len(inner) and inner[j][1] <= s:
            j += 1
        k = j
        while k < len(inner) and inner[k][0] < e:
            out.append((max(s, inner[k][0]), min(e, inner[k][1])))
            k += 1
    return out


def minus(outer, inner):
    """outer less inner (inner inside outer)"""
    out, j = [], 0
    for s, e in outer:
        cur = s
        while j < len(inner) and inner[j][1] <= s:
            j += 1
        k = j
        while k < len(inner) and inner[k][0] < e:
            if inner[k][0] > cur:
                out.append((cur, inner[k][0]))
            cur = max(cur, inner[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


class Set:
    def __init__(self, iv):
        self.iv, self.st = iv, [s for s, _ in iv]

    def has(self, t):
        i = bisect.bisect_right(self.st, t) - 1
        return i >= 0 and self.iv[i][0] <= t < self.iv[i][1]

    def time(self, t0, t1, holes=()):
        n = sum(min(e, t1) - max(s, t0) for s, e in self.iv if e > t0 and s < t1)
        for hs, he in holes:
            i = max(0, bisect.bisect_right(self.st, hs) - 1)
            while i < len(self.iv) and self.iv[i][0] < he:
                n -= max(0, min(he, self.iv[i][1]) - max(hs, self.iv[i][0]))
                i += 1
        return n


def nearest(grid, t):
    i = bisect.bisect_right(grid, t)
    return min((t - grid[j] for j in (i - 1, i) if 0 <= j < len(grid)), key=abs)


def main():
    ev = load(sys.argv[1])
    tcpu, ccpu = int(sys.argv[2]), int(sys.argv[3])
    grid = sorted(set(e[1] for e in ev if e[5] == SMP and e[4] == tcpu))
    if len(grid) < 100:
        sys.exit("netcpu_timerlab.py: %d expiries on CPU %d" % (len(grid), tcpu))
    calls, sirqs = intervals(ev, ccpu)
    sets = (("call", Set(calls)), ("sirq", Set(clip(calls, sirqs))), ("socket", Set(minus(calls, clip(calls, sirqs)))))
    t0, t1 = grid[0], grid[-1]
    span = t1 - t0
    period = span / (len(grid) - 1)
    print("timer on CPU %d: %d expiries, mean period %.1f us; calls on CPU %d: %d" %
          (tcpu, len(grid), period / 1e3, ccpu, len(calls)))
    holes = [(x - 2000, x + 25000) for x in grid]
    print("%-7s %7s %7s %6s  %s  %s" % ("set", "share", "hits", "+-2se", " ".join("%7s" % ("d=%+d" % d) for d in SHIFTS_US), "pre"))
    for name, s in sets:
        share = s.time(t0, t1) / span
        exp = share * len(grid)
        row = []
        for d in SHIFTS_US:
            hits = sum(1 for x in grid if s.has(x + d * 1000))
            row.append(hits / exp if exp else 0)
        pre_share = s.time(t0, t1, holes) / (span - len(holes) * 27000)
        pre = sum(1 for x in grid if s.has(x - 2500)) / (pre_share * len(grid)) if pre_share else 0
        hits0 = sum(1 for x in grid if s.has(x))
        print("%-7s %7.4f %7d %6.3f  %s  %5.3f" % (name, share, hits0, 2 / math.sqrt(exp) if exp else 0,
                                                " ".join("%7.3f" % r for r in row), pre))
    lt = [e[0] for e in ev if e[5] == LTIMER and e[4] == tcpu]
    delay = sorted(d for d in (nearest(grid, t) for t in lt) if 0 <= d < 100000)
    if delay:
        q = lambda f: delay[int(f * (len(delay) - 1))] / 1e3
        print("expiry -> local_timer_entry on CPU %d: p10 %.1f p50 %.1f p90 %.1f us (%d of %d)" %
              (tcpu, q(.1), q(.5), q(.9), len(delay), len(lt)))
    h = collections.Counter(nearest(grid, e[0]) // 4000 for e in ev if e[4] == ccpu and e[5] != SMP)
    base = sum(h[k] for k in range(-10, -5)) / 5 or 1
    print("events on CPU %d per 4 us around the expiry, / their rate 40-20 us before: %s" %
          (ccpu, " ".join("%+d:%.2f" % (k * 4, h[k] / base) for k in range(-8, 7))))
    arming(ev, grid, tcpu)


def kallsyms():
    out = {}
    try:
        for line in open("/proc/kallsyms"):
            a, t, name = line.split()[:3]
            if t in "tT":
                out[int(a, 16)] = name
    except OSError:
        pass
    return out


def arming(ev, grid, tcpu):
    """hrtimer_start on tcpu: the gap to the next event there, by whether
    the armed expiry needs a reprogram (before the timer's next expiry)"""
    ks = kallsyms()
    on = [e for e in ev if e[4] == tcpu]
    gaps = collections.defaultdict(list)
    for i, e in enumerate(on[:-1]):
        if e[5] != HRSTART:
            continue
        fn = ks.get(e[2], hex(e[2]))
        j = bisect.bisect_right(grid, e[0])
        if fn in ("perf_swevent_hrtimer", "tick_nohz_handler") or j >= len(grid):
            continue
        if on[i + 1][0] >= grid[j] - 2000:     # the next event is past the stop
            continue
        gaps[(fn, e[1] < grid[j])].append(on[i + 1][0] - e[0])
    for (fn, rep), g in sorted(gaps.items(), key=lambda x: -len(x[1]))[:6]:
        g.sort()
        print("hrtimer %-24s %-13s n=%6d, to the next event on CPU %d: median %.2f us" %
              (fn, "reprogram" if rep else "no reprogram", len(g), tcpu, g[len(g) // 2] / 1e3))


if __name__ == "__main__":
    main()
