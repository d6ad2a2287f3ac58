#!/usr/bin/env python3
"""The recorder's runs per CPU from `perf sched timehist` (stdin), and the
run-queue delay they left a victim task (e.g. nginx) on its CPU.

A timehist line is one switch-out: time, [cpu], task[tid], wait time, sch
delay (wakeup to run), run time (ms). A victim run that directly follows a
recorder run on the same CPU and had a scheduling delay waited (at least in
part) behind the recorder: that delay is charged to the recorder.

usage: perf sched timehist -i F | schedruns.py [--label L] [--rec nprec] [--victim nginx] [--cpu 1]
"""
import argparse
import re
import sys

LINE = re.compile(r"^\s*([\d.]+)\s+\[(\d+)\]\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--rec", default="nprec")
    ap.add_argument("--victim", default="nginx")
    ap.add_argument("--cpu", type=int, default=1, help="the victim's CPU")
    a = ap.parse_args()
    runs = {}          # cpu -> [n, sum_ms, max_ms, n_over_1ms]
    prev = {}          # cpu -> task of the previous line
    vic = [0, 0.0, 0, 0.0, 0.0]   # victim runs, sch delay total, runs after rec, delay after rec, max after rec
    t0 = t1 = None
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        t, cpu, task = float(m.group(1)), int(m.group(2)), m.group(3)
        sch, run = float(m.group(5)), float(m.group(6))
        t0 = t if t0 is None else t0
        t1 = t
        if task.startswith(a.rec):
            r = runs.setdefault(cpu, [0, 0.0, 0.0, 0])
            r[0] += 1
            r[1] += run
            r[2] = max(r[2], run)
            r[3] += run > 1.0
        elif task.startswith(a.victim) and cpu == a.cpu:
            vic[0] += 1
            vic[1] += sch
            if prev.get(cpu, "").startswith(a.rec) and sch > 0:
                vic[2] += 1
                vic[3] += sch
                vic[4] = max(vic[4], sch)
        prev[cpu] = task
    span = (t1 - t0) if t0 is not None and t1 > t0 else 0
    print("sched %s (%.1f s): recorder '%s' runs per CPU: %s" % (a.label, span, a.rec, "; ".join(
        "cpu%d %d runs (%.0f/s) %.1f ms, mean %.0f us, max %.2f ms, >1ms %d" % (
            c, r[0], r[0] / span if span else 0, r[1], 1000 * r[1] / r[0], r[2], r[3])
        for c, r in sorted(runs.items())) or "none"))
    print("sched %s: %s on cpu%d: %d runs, sch delay %.1f ms; after a recorder run: %d runs, %.1f ms, max %.2f ms" % (
        a.label, a.victim, a.cpu, vic[0], vic[1], vic[2], vic[3], vic[4]))


if __name__ == "__main__":
    main()
