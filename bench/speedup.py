#!/usr/bin/env python3
"""The 2-thread speed-up of bench/analyze.sh, from pairs of runs.

This VM's walls move by 20-40 % between minutes with nothing else running
(1.62-2.24 s for one build at 1 thread in ten runs, no steal), so the ratio
of medians over separate blocks of runs depends on which minutes each block
got. Here every repetition runs --threads 1 and --threads 2 back to back
(order alternating), and the figure is the median of the per-repetition
ratios wall(1) / wall(2) with the sign test's distribution-free interval
(e2e_stats.median_interval): a target is shown only when the whole
interval is at or above it.

usage: speedup.py ROWS CASE TARGET
ROWS: bench/analyze.sh's rows.txt (case threads run ... wall in column 11).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_stats import LEVEL, median_interval  # noqa: E402


def main():
    rows, case, target = sys.argv[1], sys.argv[2], float(sys.argv[3])
    wall = {}
    for line in open(rows):
        f = line.split()
        if len(f) >= 11 and f[0] == case:
            wall[(f[1], f[2])] = float(f[10])
    runs = sorted({r for _, r in wall}, key=int)
    ratios = [wall[("1", r)] / wall[("2", r)] for r in runs
              if ("1", r) in wall and ("2", r) in wall and wall[("2", r)] > 0]
    if not ratios:
        print(f"{case}: no pairs")
        return
    m, lo, hi, cover = median_interval(ratios)
    if cover < LEVEL:
        verdict = f"undecided ({len(ratios)} pairs give no {LEVEL:.0%} interval; REPS >= 6)"
    elif lo >= target:
        verdict = "shown"
    elif hi < target:
        verdict = "NOT reached"
    else:
        verdict = "undecided (the interval spans it)"
    print(f"{case}: speed-up of 2 threads, per pair of runs: median {m:.2f}x, "
          f"{cover:.0%} interval [{lo:.2f}, {hi:.2f}] over {len(ratios)} pairs "
          f"(each {min(ratios):.2f}-{max(ratios):.2f}x); target >= {target}x: {verdict}")


if __name__ == "__main__":
    main()
