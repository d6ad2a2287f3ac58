#!/usr/bin/env python3
"""Tables of bench/e2e_pairs.sh: paired losses / inflations per mode against
"none" of the same round, their median with a distribution-free 95 % interval
(order statistics of the sign test), the targets' verdicts, the raw rows.

usage: e2e_stats.py RESULTS MODE...  (E2E_DESC in the environment: a header line)
A row of RESULTS: mode round rps p50 p99 prps pp50 pp99 lost
                  run_ns wait_ns slices (saturated) run_ns wait_ns slices (paced)
                  cpus_sat cpus_paced (the recorder's allowed CPUs at the phase's end)
"""
import math
import os
import statistics as st
import sys

RPS, P50, P99, PRPS, PP50, PP99, LOST = range(2, 9)
SRUN, SWAIT, SSLC, PRUN, PWAIT, PSLC = range(9, 15)
LEVEL = 0.95


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


def fmt(xs):
    if not xs:
        return "%-30s" % "-"
    m, lo, hi, c = median_interval(xs)
    return "%6.1f [%6.1f,%6.1f] %3.0f%% n%-2d" % (m, lo, hi, 100 * c, len(xs))


def verdict(xs, limit):
    """Target 'value <= limit' for the median."""
    if not xs:
        return "no data"
    m, lo, hi, c = median_interval(xs)
    if c < LEVEL:
        return "undecided (too few pairs for a %.0f %% interval)" % (100 * LEVEL)
    if hi <= limit:
        return "met (interval %.1f..%.1f <= %g)" % (lo, hi, limit)
    if lo > limit:
        return "NOT met (interval %.1f..%.1f > %g)" % (lo, hi, limit)
    return "undecided (interval %.1f..%.1f spans %g)" % (lo, hi, limit)


def above(xs):
    """Verdict for 'median > 0' (nprec's req/s over tcpdump's, same round)."""
    if not xs:
        return "no data"
    m, lo, hi, c = median_interval(xs)
    if c >= LEVEL and lo > 0:
        return "shown (interval %.1f..%.1f > 0)" % (lo, hi)
    if c >= LEVEL and hi < 0:
        return "NOT (interval %.1f..%.1f < 0: nprec loses more)" % (lo, hi)
    return "undecided (interval %.1f..%.1f)" % (lo, hi)


def main():
    rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
    modes = sys.argv[2:]
    print(os.environ.get("E2E_DESC", ""))
    print()
    print("absolute medians over the rounds; recorder per measurement from /proc/PID/task/*/schedstat:")
    print("cpu_ms = on-CPU time, slices = times put on a CPU (wakeups and preemptions); p_ = paced phase")
    print("%-14s %8s %8s %8s %8s %8s %6s | %7s %7s | %7s %7s" % (
        "mode", "req/s", "p99_us", "p_req/s", "p_p50us", "p_p99us", "lost",
        "cpu_ms", "slices", "p_cpu", "p_slc"))
    for m in modes:
        r = [x for x in rows if x[0] == m]
        if not r:
            continue
        md = {i: st.median(float(x[i]) for x in r) for i in range(2, 15)}   # wait_ns: raw rows only

        print("%-14s %8.0f %8.1f %8.0f %8.1f %8.1f %6.0f | %7.1f %7.0f | %7.1f %7.0f" % (
            m, md[RPS], md[P99], md[PRPS], md[PP50], md[PP99], max(float(x[LOST]) for x in r),
            md[SRUN] / 1e6, md[SSLC], md[PRUN] / 1e6, md[PSLC]))
    print("(lost: the largest over the rounds)")
    print()
    print("paired vs none of the same round: median [95 % interval of the median] its coverage, n pairs")
    print("(loss = 1 - ratio, inflation = ratio - 1, in %; negative = better than none)")
    print("%-14s %-30s %-30s %-30s" % ("mode", "saturated req/s loss%", "saturated p99 infl%", "paced p99 infl%"))
    for m in modes:
        if m == "none":
            continue
        print("%-14s %s %s %s" % (m, fmt(paired(rows, m, "none", RPS, True)),
                                  fmt(paired(rows, m, "none", P99, False)),
                                  fmt(paired(rows, m, "none", PP99, False))))
    print()
    print("targets (issue 24): saturated req/s loss <= 3 %, below tcpdump's; paced p99 inflation <= 5 %")
    for m in modes:
        if not m.startswith("nprec"):
            continue
        print("%-14s req/s loss <= 3 %%: %s" % (m, verdict(paired(rows, m, "none", RPS, True), 3)))
        print("%-14s paced p99 infl <= 5 %%: %s" % (m, verdict(paired(rows, m, "none", PP99, False), 5)))
        if "tcpdump" in modes:
            # req/s of nprec over tcpdump's in the same round: > 0 = nprec loses less
            print("%-14s req/s gain over tcpdump, same round (> 0: nprec loses less): %s" % (
                m, fmt(paired(rows, m, "tcpdump", RPS, False))))
            print("%-14s   below tcpdump's loss: %s" % (m, above(paired(rows, m, "tcpdump", RPS, False))))
    print()
    print("raw rows: mode round req/s p50 p99 paced_req/s paced_p50 paced_p99 lost"
          " sat_run_ns sat_wait_ns sat_slices paced_run_ns paced_wait_ns paced_slices cpus_sat cpus_paced")
    for r in sorted(rows, key=lambda x: (int(x[1]), modes.index(x[0]) if x[0] in modes else 99)):
        print(" ".join(r))


if __name__ == "__main__":
    main()
