#!/usr/bin/env python3
"""Tables of bench/e2e_pairs.sh.

Per mode against "none" of the same rounds, two figures each:
- pooled: saturated req/s loss = 1 - sum(mode's req/s) / sum(none's) over
  the rounds (every phase lasts the same time: the ratio of the requests);
  p99 inflation = p99 of the mode's latency histogram merged over all its
  rounds / the same of none's - 1; with a 95 % interval from a paired
  bootstrap over rounds (rounds resampled with replacement, a mode and none
  always from the same resampled rounds; 2.5 / 97.5 % points).
- per-round: the median of the per-round paired ratios with the sign
  test's distribution-free interval (order statistics x(k)..x(n+1-k)).
The verdicts use the pooled req/s loss (the narrowest interval in every
run so far) and the per-round paced p99 inflation: wrk's histograms carry
its coordinated-omission correction, which turns one stall of the machine
(hundreds of ms under load, a few ms on a quiet VM) into hundreds of
synthetic slow samples, so one stalled phase can own the merged
histogram's top 1 % (seen under load: merged p99 147 ms against per-phase
p99s of 0.3-10 ms); the per-round median ignores such a round.

usage: e2e_stats.py RESULTS HISTDIR MODE...  (E2E_DESC in the environment:
a header line; E2E_BOOT: bootstrap resamples, default 4000)
A row of RESULTS: mode round rps p50 p99 prps pp50 pp99 lost
                  run_ns wait_ns slices (saturated) run_ns wait_ns slices (paced)
                  cpus_sat cpus_paced (the recorder's allowed CPUs at the phase's end)
                  cpu0_busy cpu0_steal cpu1_busy cpu1_steal (USER_HZ ticks over the
                  saturated phase, /proc/stat) sat_requests (newer rows only)
Per mode it also prints what the CPUs did in the saturated phases: busy
ticks (user nice system irq softirq) and steal (the host running another
guest on our vCPU) of CPU 0 (wrk) and CPU 1 (nginx). On 2026-11-28 nginx's
CPU was 99-100 % busy in every mode, wrk's 72-76 %, steal 0.1-0.3 %: the
rounds' spread (none 58-93 k req/s in one run) is the host's speed, not
steal, and requests per busy tick (tried as a second estimate of the
loss) came out as wide as req/s. bench/e2e_toggle.sh compares adjacent
half-second windows instead.
"""
import bisect
import math
import os
import random
import statistics as st
import sys

RPS, P50, P99, PRPS, PP50, PP99, LOST = range(2, 9)
SRUN, SWAIT, SSLC, PRUN, PWAIT, PSLC = range(9, 15)
C0B, C0S, C1B, C1S, NREQ = range(17, 22)   # rows of 2026-11-28 on
LEVEL = 0.95
BOOT = int(os.environ.get("E2E_BOOT", "4000"))


def median_interval(xs):
    """(median, lo, hi, coverage): lo..hi = x(k)..x(n+1-k) with k the largest
    rank whose coverage 1 - 2 P(Bin(n, 1/2) <= k-1) is >= LEVEL; with too few
    values for any k, min..max and the coverage it has."""
    xs = sorted(xs)
    n = len(xs)
    cover = lambda k: 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
    k = 1
    while k + 1 <= (n + 1) // 2 and cover(k + 1) >= LEVEL:
        k += 1
    return st.median(xs), xs[k - 1], xs[n - k], cover(k)


def paired(rows, mode, base, col, loss):
    """Per round: loss = 1 - mode/base, inflation = mode/base - 1, in %."""
    b = {r[1]: r for r in rows if r[0] == base}
    out = []
    for r in rows:
        x = b.get(r[1])
        if r[0] != mode or not x or float(x[col]) <= 0 or float(r[col]) <= 0:
            continue
        q = float(r[col]) / float(x[col])
        out.append(100 * ((1 - q) if loss else (q - 1)))
    return out


def read_hist(path):
    """{latency_us: count} of one phase, or None when missing or empty."""
    try:
        h = {}
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            v, c = line.split()
            h[int(v)] = h.get(int(v), 0) + int(c)
        return h or None
    except OSError:
        return None


class Merged:
    """The histograms of one mode's rounds on a common grid, for fast
    percentiles of any weighted merge (a bootstrap resample)."""

    def __init__(self, hists):
        self.vals = sorted(set(v for h in hists for v in h))
        self.cum, self.n = [], []
        for h in hists:
            c, t = [], 0
            for v in self.vals:
                t += h.get(v, 0)
                c.append(t)
            self.cum.append(c)
            self.n.append(t)

    def pct(self, p, w):
        """wrk's percentile (smallest value whose cumulative count reaches
        round(p/100 * N + 0.5)) of the merge with round weights w."""
        rank = round(p / 100 * sum(wi * ni for wi, ni in zip(w, self.n)) + 0.5)
        use = [(wi, c) for wi, c in zip(w, self.cum) if wi]
        lo, hi = 0, len(self.vals) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if sum(wi * c[mid] for wi, c in use) >= rank:
                hi = mid
            else:
                lo = mid + 1
        return self.vals[lo]

    def above(self, v, w):
        """Share (%) of the merge's requests above v."""
        j = bisect.bisect_right(self.vals, v) - 1
        n = sum(wi * ni for wi, ni in zip(w, self.n))
        le = sum(wi * c[j] for wi, c in zip(w, self.cum)) if j >= 0 else 0
        return 100 * (n - le) / n if n else float("nan")


class Pair:
    """One mode against a base over the rounds both have (rows and histograms)."""

    def __init__(self, rows, hdir, mode, base):
        m = {r[1]: r for r in rows if r[0] == mode}
        b = {r[1]: r for r in rows if r[0] == base}
        self.rounds = []
        for rd in sorted(set(m) & set(b), key=int):
            if float(m[rd][RPS]) > 0 and float(b[rd][RPS]) > 0:
                self.rounds.append(rd)
        self.rps = [(float(m[r][RPS]), float(b[r][RPS])) for r in self.rounds]
        self.h = {}
        for kind in ("sat", "paced"):
            hm = [read_hist(os.path.join(hdir, "%s.%s.%s" % (mode, r, kind))) for r in self.rounds]
            hb = [read_hist(os.path.join(hdir, "%s.%s.%s" % (base, r, kind))) for r in self.rounds]
            if all(hm) and all(hb) and hm:
                self.h[kind] = (Merged(hm), Merged(hb))

    def loss(self, w):
        return 100 * (1 - sum(wi * a for wi, (a, _) in zip(w, self.rps)) /
                      sum(wi * b for wi, (_, b) in zip(w, self.rps)))

    def gain(self, w):
        return -self.loss(w)

    def infl(self, kind, p=99):
        def f(w):
            mm, mb = self.h[kind]
            return 100 * (mm.pct(p, w) / mb.pct(p, w) - 1)
        return f

    def boot(self, stat):
        """(value on all rounds, lo, hi) of the paired bootstrap."""
        n = len(self.rounds)
        if n < 2:
            return None
        rng = random.Random(24)
        reps = []
        for _ in range(BOOT):
            w = [0] * n
            for _ in range(n):
                w[rng.randrange(n)] += 1
            reps.append(stat(w))
        reps.sort()
        a = (1 - LEVEL) / 2
        return stat([1] * n), reps[int(a * BOOT)], reps[min(BOOT - 1, int((1 - a) * BOOT))]


def sign_interval(xs):
    """(median, lo, hi) of median_interval when it reaches LEVEL, else None."""
    if not xs:
        return None
    m, lo, hi, c = median_interval(xs)
    return (m, lo, hi) if c >= LEVEL else None


def fmt_b(b):
    if not b:
        return "%-28s" % "-"
    v, lo, hi = b
    return "%6.1f [%6.1f,%6.1f] w%5.1f" % (v, lo, hi, hi - lo)


def fmt_s(xs):
    if not xs:
        return "%-28s" % "-"
    m, lo, hi, c = median_interval(xs)
    return "%6.1f [%6.1f,%6.1f] w%5.1f" % (m, lo, hi, hi - lo)


def verdict(b, limit):
    """Target 'value <= limit' on the bootstrap interval."""
    if not b:
        return "no data"
    v, lo, hi = b
    if hi <= limit:
        return "met (%.1f, interval %.1f..%.1f <= %g)" % (v, lo, hi, limit)
    if lo > limit:
        return "NOT met (%.1f, interval %.1f..%.1f > %g)" % (v, lo, hi, limit)
    return "undecided (%.1f, interval %.1f..%.1f spans %g)" % (v, lo, hi, limit)


def absolute(rows, hdir, modes):
    print("absolute: req/s = median over the rounds; p50/p99/p99.9 of the histogram merged over the rounds;")
    print("recorder per measurement from /proc/PID/task/*/schedstat (medians): cpu_ms = on-CPU time,")
    print("slices = times put on a CPU (wakeups and preemptions); p_ = paced phase;")
    print("p_>none99 = share of the mode's paced requests slower than none's merged paced p99 (none: ~1 %)")
    print("%-16s %7s %7s %7s %7s %7s %7s %7s %6s %6s | %6s %6s | %6s %6s" % (
        "mode", "req/s", "p99_us", "p_req/s", "p_p50", "p_p99", "p_p99.9", "p_>n99", "lost", "rounds",
        "cpu_ms", "slices", "p_cpu", "p_slc"))
    base = None
    hb = [read_hist(os.path.join(hdir, "none.%s.paced" % r[1])) for r in rows if r[0] == "none"]
    if hb and all(hb):
        base = Merged(hb)
    for m in modes:
        r = [x for x in rows if x[0] == m]
        if not r:
            continue
        md = {i: st.median(float(x[i]) for x in r) for i in range(2, 15)}
        hs = [read_hist(os.path.join(hdir, "%s.%s.sat" % (m, x[1]))) for x in r]
        hp = [read_hist(os.path.join(hdir, "%s.%s.paced" % (m, x[1]))) for x in r]
        s99 = p50 = p99 = p999 = ab = float("nan")
        if all(hs):
            s99 = Merged(hs).pct(99, [1] * len(hs))
        if all(hp):
            mp = Merged(hp)
            w = [1] * len(hp)
            p50, p99, p999 = mp.pct(50, w), mp.pct(99, w), mp.pct(99.9, w)
            if base:
                ab = mp.above(base.pct(99, [1] * len(hb)), w)
        print("%-16s %7.0f %7.0f %7.0f %7.0f %7.0f %7.0f %7.2f %6.0f %6d | %6.1f %6.0f | %6.1f %6.0f" % (
            m, md[RPS], s99, md[PRPS], p50, p99, p999, ab, max(float(x[LOST]) for x in r), len(r),
            md[SRUN] / 1e6, md[SSLC], md[PRUN] / 1e6, md[PSLC]))
    print("(lost: the largest over the rounds; nprec_stop loses by design)")
    for m in modes:
        r = [x for x in rows if x[0] == m and len(x) > NREQ]
        if r:
            tot = lambda i: sum(float(x[i]) for x in r)
            dur = sum(float(x[NREQ]) / float(x[RPS]) for x in r if float(x[RPS]) > 0)   # s, wrk's own
            print("%-16s saturated phases: CPU 0 (wrk) busy %.0f ticks, steal %.0f; CPU 1 (nginx) busy %.0f,"
                  " steal %.0f; %.0f requests in %.1f s of wrk's time (busy/wrk's time: CPU 0 %.0f %%, CPU 1 %.0f %%)" % (
                      m, tot(C0B), tot(C0S), tot(C1B), tot(C1S), tot(NREQ), dur,
                      tot(C0B) / max(dur, 1e-9), tot(C1B) / max(dur, 1e-9)))


def main():
    rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
    hdir = sys.argv[2]
    modes = sys.argv[3:]
    print(os.environ.get("E2E_DESC", ""))
    print()
    absolute(rows, hdir, modes)
    print()
    print("against none of the same rounds, in % (loss = 1 - ratio, inflation = ratio - 1; negative = better")
    print("than none): value [95 % interval] w = its width in points.")
    print("pooled = ratio of the sums (req/s) or of the merged histograms' p99, paired bootstrap over rounds")
    print("(%d resamples); per-round = median of the per-round ratios, sign-test interval (the first version's)" % BOOT)
    print("%-16s %-28s %-28s %-28s" % ("mode", "sat req/s loss", "paced p99 infl", "sat p99 infl"))
    pairs = {}
    for m in modes:
        if m == "none":
            continue
        pr = pairs[m] = Pair(rows, hdir, m, "none")
        pp = pr.boot(pr.infl("paced")) if "paced" in pr.h else None
        sp = pr.boot(pr.infl("sat")) if "sat" in pr.h else None
        print("%-16s %s %s %s  n%d" % (m + " pooled", fmt_b(pr.boot(pr.loss)), fmt_b(pp), fmt_b(sp),
                                       len(pr.rounds)))
        print("%-16s %s %s %s" % (m + " per-round", fmt_s(paired(rows, m, "none", RPS, True)),
                                  fmt_s(paired(rows, m, "none", PP99, False)),
                                  fmt_s(paired(rows, m, "none", P99, False))))
    print()
    print("targets (issue 24): saturated req/s loss <= 3 % (pooled), below tcpdump's;"
          " paced p99 inflation <= 5 % (per-round)")
    for m in modes:
        if not m.startswith("nprec") or m not in pairs:
            continue
        pr = pairs[m]
        print("%-16s req/s loss <= 3 %% (pooled): %s" % (m, verdict(pr.boot(pr.loss), 3)))
        xs = paired(rows, m, "none", PP99, False)
        print("%-16s paced p99 infl <= 5 %% (per-round): %s" % (m, verdict(sign_interval(xs), 5)))
        if "paced" in pr.h:
            print("%-16s   (merged histograms, stall-sensitive: %s)" % (
                m, verdict(pr.boot(pr.infl("paced")), 5)))
        if "tcpdump" in modes:
            pt = Pair(rows, hdir, m, "tcpdump")
            b = pt.boot(pt.gain)
            if b:
                s = ("shown" if b[1] > 0 else "NOT (nprec loses more)" if b[2] < 0 else "undecided")
                print("%-16s req/s over tcpdump's, same rounds (> 0: nprec loses less): %s: %s" % (
                    m, fmt_b(b), s))
    print()
    print("raw rows: mode round req/s p50 p99 paced_req/s paced_p50 paced_p99 lost"
          " sat_run_ns sat_wait_ns sat_slices paced_run_ns paced_wait_ns paced_slices cpus_sat cpus_paced"
          " [cpu0_busy cpu0_steal cpu1_busy cpu1_steal sat_requests]")
    for r in sorted(rows, key=lambda x: (int(x[1]), modes.index(x[0]) if x[0] in modes else 99)):
        print(" ".join(r))


if __name__ == "__main__":
    main()
