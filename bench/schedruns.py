#!/usr/bin/env python3
"""The recorder's runs per CPU from `perf sched timehist` (stdin), and the
run-queue delay they left a victim task (e.g. nginx) on its CPU.

A timehist line is one switch-out: time, [cpu], task[tid], wait time, sch
delay (wakeup to run), run time (ms). A victim run that directly follows a
recorder run on the same CPU and had a scheduling delay waited (at least in
part) behind the recorder: that delay is charged to the recorder.

Tasks are told apart by pid (timehist's comm[tid] or comm[tid/pid]): on a
shared machine other processes of the same name run too.

usage: perf sched timehist -i F | schedruns.py [--label L] --rec PID... [--victim NAME:CPU:PID ...]
"""
import argparse
import re
import sys

TASK = re.compile(r"^.*\[(\d+)(?:/(\d+))?\]$")
LINE = re.compile(r"^\s*([\d.]+)\s+\[(\d+)\]\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--rec", action="append", default=[], help="the recorder's pid (repeatable)")
    ap.add_argument("--victim", action="append", default=[], help="NAME:CPU:PID (repeatable)")
    a = ap.parse_args()
    recs = set(a.rec)
    victims = {}   # (name, cpu, pid) -> [runs, sch delay, runs after rec, delay after rec, max after rec]
    for v in a.victim:
        name, cpu, pid = v.split(":")
        victims[(name, int(cpu), pid)] = [0, 0.0, 0, 0.0, 0.0]
    runs = {}          # cpu -> [n, sum_ms, max_ms, n_over_1ms]
    prev = {}          # cpu -> task of the previous line
    t0 = t1 = None
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        t, cpu, task = float(m.group(1)), int(m.group(2)), m.group(3)
        sch, run = float(m.group(5)), float(m.group(6))
        t0 = t if t0 is None else t0
        t1 = t
        pm = TASK.match(task)
        pid = (pm.group(2) or pm.group(1)) if pm else ""
        isrec = pid in recs
        if isrec:
            r = runs.setdefault(cpu, [0, 0.0, 0.0, 0])
            r[0] += 1
            r[1] += run
            r[2] = max(r[2], run)
            r[3] += run > 1.0
        vic = next((v for (vn, vc, vp), v in victims.items() if vc == cpu and vp == pid), None)
        if vic:
            vic[0] += 1
            vic[1] += sch
            if prev.get(cpu) and sch > 0:
                vic[2] += 1
                vic[3] += sch
                vic[4] = max(vic[4], sch)
        prev[cpu] = isrec
    span = (t1 - t0) if t0 is not None and t1 > t0 else 0
    print("sched %s (%.1f s): recorder (pid %s) runs per CPU: %s" % (a.label, span, ",".join(sorted(recs)), "; ".join(
        "cpu%d %d runs (%.0f/s) %.1f ms, mean %.0f us, max %.2f ms, >1ms %d" % (
            c, r[0], r[0] / span if span else 0, r[1], 1000 * r[1] / r[0], r[2], r[3])
        for c, r in sorted(runs.items())) or "none"))
    for (name, cpu, pid), v in victims.items():
        print("sched %s: %s on cpu%d: %d runs, sch delay %.1f ms; after a recorder run: %d runs, %.1f ms, max %.2f ms" % (
            a.label, name, cpu, v[0], v[1], v[2], v[3], v[4]))


if __name__ == "__main__":
    main()
