#!/usr/bin/env python3
"""Paced requests against what ran on the CPUs meanwhile (issue 24: why does
nprec inflate the paced p99?).

Input: `perf sched timehist` of a paced phase recorded with -k CLOCK_MONOTONIC
(stdin), and the phase's request log of bench/e2e_hist.lua (E2E_REQLOG_FILE:
"end_us latency_us" per request, CLOCK_MONOTONIC). A timehist line is one
switch-out: time, [cpu], task[tid/pid], wait, sch delay, run time (ms), so a
task's run on a CPU is [time - run, time].

For the recorder's runs (--rec PID) and, for context, the runs of every other
task that is neither the workload (--app PID) nor idle, it prints how many
requests had such a run on one of the two CPUs within a fixed window from
their start ([start, start + --window us], the same for every request: a
window as long as the request itself would favour slow requests, which
overlap more of anything), their latency against the others', and how
over-represented they are among the slowest 1 % (lift = share among the
slowest 1 % / share among all; 1 = chance).

usage: perf sched timehist -i F | e2e_coincide.py --reqlog FILE --rec PID... --app PID... [--label L]
"""
import argparse
import bisect
import re
import sys

TASK = re.compile(r"^.*\[(\d+)(?:/(\d+))?\]$")
LINE = re.compile(r"^\s*([\d.]+)\s+\[(\d+)\]\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs) + 0.5) - 1))]


class Runs:
    """Sorted, merged [start, end] intervals (µs) with overlap queries."""

    def __init__(self, iv):
        iv.sort()
        self.s, self.e = [], []
        for a, b in iv:
            if self.s and a <= self.e[-1]:
                self.e[-1] = max(self.e[-1], b)
            else:
                self.s.append(a)
                self.e.append(b)

    def overlap(self, a, b):
        """µs of [a, b] covered."""
        i = bisect.bisect_right(self.e, a)
        t = 0.0
        while i < len(self.s) and self.s[i] < b:
            t += min(b, self.e[i]) - max(a, self.s[i])
            i += 1
        return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reqlog", required=True)
    ap.add_argument("--rec", action="append", default=[])
    ap.add_argument("--app", action="append", default=[])
    ap.add_argument("--label", default="")
    ap.add_argument("--window", type=float, default=200.0, help="us from a request's start")
    a = ap.parse_args()
    reqs = []
    for line in open(a.reqlog):
        f = line.split()
        if len(f) == 2:
            reqs.append((float(f[0]) - float(f[1]), float(f[0]), float(f[1])))
    if not reqs:
        print("coincide %s: no requests logged" % a.label)
        return
    t0, t1 = min(r[0] for r in reqs), max(r[1] for r in reqs)
    rec, other, runlen = [], [], []
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        end = float(m.group(1)) * 1e6
        run = float(m.group(6)) * 1e3
        if end < t0 or end - run > t1 or run <= 0:
            continue
        pm = TASK.match(m.group(3))
        pid = (pm.group(2) or pm.group(1)) if pm else ""
        if pid in a.rec:
            rec.append((end - run, end))
            runlen.append(run)
        elif pid not in a.app and pid != "0" and not m.group(3).startswith("<idle>"):
            other.append((end - run, end))
    span = (t1 - t0) / 1e6
    lats = [r[2] for r in reqs]
    p99 = pct(lats, 99)
    print("coincide %s: %d requests in %.1f s, latency p50 %.0f p99 %.0f us (client clock, Lua callbacks included)" % (
        a.label, len(reqs), span, pct(lats, 50), p99))
    if runlen:
        print("coincide %s: recorder runs on the two CPUs: %d (%.0f/s), %.1f ms in all (%.2f %% of 2 CPUs),"
              " run length p50 %.0f p90 %.0f max %.0f us, %d over 100 us" % (
                  a.label, len(runlen), len(runlen) / span, sum(runlen) / 1e3, 100 * sum(runlen) / 1e6 / span / 2,
                  pct(runlen, 50), pct(runlen, 90), max(runlen), sum(1 for x in runlen if x > 100)))
    tail = [r for r in reqs if r[2] > p99]
    for name, iv in (("recorder", rec), ("other tasks", other)):
        runs = Runs(iv)
        near = lambda r: runs.overlap(r[0], r[0] + a.window) > 0
        hit = [r for r in reqs if near(r)]
        miss = [r[2] for r in reqs if not near(r)]
        th = sum(1 for r in tail if near(r))
        share = len(hit) / len(reqs)
        print("coincide %s: requests with a run of %s in their first %.0f us: %d (%.2f %%), latency p50 %.0f p99 %.0f us;"
              " the others p50 %.0f p99 %.0f; among the slowest 1 %% (> %.0f us): %d of %d (%.1f %%, lift %.1f)" % (
                  a.label, name, a.window, len(hit), 100 * share, pct([r[2] for r in hit], 50), pct([r[2] for r in hit], 99),
                  pct(miss, 50), pct(miss, 99), p99, th, len(tail), 100 * th / max(1, len(tail)),
                  (th / max(1, len(tail))) / share if share else float("nan")))


if __name__ == "__main__":
    main()
