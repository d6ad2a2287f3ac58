#!/usr/bin/env python3
"""Latency analysis of bench/e2e_toggle.sh PHASE=paced: LABEL FLIPS REQLOG GUARD_MS
[FLIPS REQLOG]... (more runs pooled).
FLIPS: "mono_ns state" lines (state 1: programs attached from then on);
REQLOG: "end_us latency_us" per request (CLOCK_MONOTONIC, bench/e2e_hist.lua).
A request belongs to the window between two switches that holds all of
it (start = end - latency) after GUARD_MS is cut at both ends; the rest
are left out. Adjacent (off, on) windows make a pair. Prints, for the
p50, p99 and p99.9 of all the on windows' requests against all the off
windows', the inflation on/off - 1 with a 95 % interval from a bootstrap
over the pairs (whole pairs resampled: a window's requests share its
host speed), and the mean's.

The bootstrap reads quantiles from counts above a grid of thresholds
(0.25 % apart, around each quantile of the whole run) kept per window:
a resample's quantile is where its summed counts cross the quantile's
share (linear between thresholds), without re-sorting a million latencies per
resample in pure Python."""
import bisect
import math
import random
import sys

def run_pairs(flips_p, log_p, guard):
    """the (on latencies, off latencies) of adjacent windows of one run"""
    flips = [tuple(int(x) for x in l.split()) for l in open(flips_p) if l.strip()]
    bounds = [t // 1000 for t, _ in flips]             # us
    states = [s for _, s in flips]
    wins = {}                                          # window index -> latencies (us)
    for line in open(log_p):
        f = line.split()
        if len(f) != 2:
            continue
        end, lat = float(f[0]), float(f[1])
        start = end - lat
        k = bisect.bisect_right(bounds, start) - 1
        if k < 0 or k + 1 >= len(bounds):
            continue
        if start < bounds[k] + guard or end > bounds[k + 1] - guard:
            continue
        wins.setdefault(k, []).append(lat)
    out = []
    ks = sorted(wins)
    i = 0
    while i + 1 < len(ks):
        a, b = ks[i], ks[i + 1]
        if b == a + 1 and states[a] != states[b] and len(wins[a]) >= 20 and len(wins[b]) >= 20:
            out.append((wins[b], wins[a]) if states[b] == 1 else (wins[a], wins[b]))
            i += 2
        else:
            i += 1
    return out


# LABEL FLIPS REQLOG GUARD_MS [FLIPS REQLOG]...: further runs' pairs pooled
# with the first's (the bootstrap resamples pairs of all of them)
label, guard = sys.argv[1], int(sys.argv[4]) * 1000
runs = [(sys.argv[2], sys.argv[3])] + list(zip(sys.argv[5::2], sys.argv[6::2]))
pairs = [pr for fp, lp in runs for pr in run_pairs(fp, lp, guard)]
if len(pairs) < 4:
    print("%s: too few windows (%d pairs)" % (label, len(pairs)))
    sys.exit(0)


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


QS = (("p50", 0.50), ("p99", 0.99), ("p99.9", 0.999))
STEP = 1.0025
GRID = 241                                             # thresholds: x0 * STEP^j, j = 0..GRID-1 (x0 ~26 % below)
alllat = [x for on, off in pairs for x in on + off]
grids = {}
for name, q in QS:
    x0 = quantile(alllat, q) * STEP ** (-(GRID // 2))
    grids[name] = [x0 * STEP ** j for j in range(GRID)]


def above(lat, grid):
    """counts of lat above each threshold of grid"""
    s = sorted(lat)
    n = len(s)
    return [n - bisect.bisect_right(s, g) for g in grid]


# per pair and side: n, sum of latencies, and per quantile the counts
# above its grid packed into one integer (FIELD bits a threshold), so that
# a resample's weighted sum is a few big-integer operations
FIELD = 48
MASK = (1 << FIELD) - 1


def pack(counts):
    x = 0
    for j, c in enumerate(counts):
        x |= c << (FIELD * j)
    return x


summ = []
for on, off in pairs:
    summ.append(tuple((len(v), sum(v), {name: pack(above(v, grids[name])) for name, _ in QS}) for v in (on, off)))


def side_quantile(w, side, name, q):
    """where the weighted share of requests above falls to 1 - q, between
    the grid's thresholds (counts above fall as the threshold rises)"""
    n = 0
    tot = 0
    for i, wi in enumerate(w):
        if wi:
            s = summ[i][side]
            n += wi * s[0]
            tot += wi * s[2][name]
    target = (1 - q) * n
    g = grids[name]
    prev = None
    for j in range(GRID):
        c = (tot >> (FIELD * j)) & MASK
        if c <= target:
            if prev is None or prev == c:
                return g[j]
            # linear between the two thresholds that bracket it
            return g[j - 1] + (g[j] - g[j - 1]) * (prev - target) / (prev - c)
        prev = c
    return g[-1]


def stats(w):
    out = {}
    for name, q in QS:
        out[name] = 100 * (side_quantile(w, 0, name, q) / side_quantile(w, 1, name, q) - 1)
    mon = sum(wi * summ[i][0][1] for i, wi in enumerate(w)) / sum(wi * summ[i][0][0] for i, wi in enumerate(w))
    moff = sum(wi * summ[i][1][1] for i, wi in enumerate(w)) / sum(wi * summ[i][1][0] for i, wi in enumerate(w))
    out["mean"] = 100 * (mon / moff - 1)
    return out


n = len(pairs)
rng = random.Random(24)
R = 1000
reps = {k: [] for k in ("p50", "p99", "p99.9", "mean")}
for _ in range(R):
    w = [0] * n
    for _ in range(n):
        w[rng.randrange(n)] += 1
    for k, v in stats(w).items():
        reps[k].append(v)
on_all = [x for on, _ in pairs for x in on]
off_all = [x for _, off in pairs for x in off]
point = stats([1] * n)
for name, q in QS:           # the point estimates from the latencies themselves
    point[name] = 100 * (quantile(on_all, q) / quantile(off_all, q) - 1)
lo_i, hi_i = int(0.025 * R), int(0.975 * R) - 1
parts = []
for k in ("p50", "p99", "p99.9", "mean"):
    r = sorted(reps[k])
    parts.append("%s %+.2f %% [%+.2f, %+.2f]" % (k, point[k], r[lo_i], r[hi_i]))
print("%-6s latency inflation (on/off - 1, 95 %% bootstrap over %d pairs of windows, %d + %d requests): %s;"
      " off windows' p50 %.1f us, p99 %.1f us, p99.9 %.1f us" % (
          label, n, len(on_all), len(off_all), "; ".join(parts),
          quantile(off_all, 0.5), quantile(off_all, 0.99), quantile(off_all, 0.999)))
