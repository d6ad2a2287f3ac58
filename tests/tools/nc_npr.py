#!/usr/bin/env python3
"""Summaries of the netcpu and threads records of a recording, for
tests/e2e/rec_netcpu.sh and bench scripts. Reads `npreport dump FILE`
JSON lines on stdin and prints one line of key=value tokens.
  nc_npr.py netcpu        dur_ns=D ncpu=N netrx_ns=a,b nettx_ns=.. send_ns=.. recv_ns=..
                          netrx_n=.. send_n=.. recv_n=.. nested_ns=.. rapl=0|1
  nc_npr.py stacks        samples=N samples_netrx=N lost=N unresolved=N cat_NAME=N ...
  nc_npr.py threads PID   tids=N oncpu_ns=X nvcsw=N nivcsw=N comm=a,b cgroup=PATH|?
  nc_npr.py progs         records=N progs=N families=a,b missed=N missed_total=N
  nc_npr.py sockest [Z]   sock=MODE sirq=MODE sampler=S (the records' sock_sampler,
                          - when absent) period_ns=P, then per class (netrx,
                          nettx, send, recv):
                          CLS_exact_ns=X CLS_smp=N CLS_est_ns=E CLS_lo_ns=L CLS_hi_ns=H
                          CLS_ratio=E/X (exact figures only from --netcpu exact
                          recordings; the interval is the Poisson score interval
                          of the sample count at Z, default 1.96, as npanalyze's;
                          a class of the remote split, recv with sampler
                          remote-recv: N is the count whose interval is the
                          estimate's, not the own samples outside softirqs);
                          netrx_probe_smp=N (exact mode: samples in the pair's
                          NET_RX window outside net_rx_action), netrx_stray_smp=N
                          (walk in net_rx_action outside it), sirq_other_smp=N,
                          sirq_missed_smp=N (a softirq ran, the walk found none),
                          pc_unknown_smp=N (preempt_count unreadable: the walk decided),
                          send_cut_smp, recv_cut_smp (left out: walk cut short)
                          and netrx_win_*
                          (the same figures for netrx_smp + netrx_probe_smp)
"""
import json
import math
import sys


def records(kind):
    for line in sys.stdin:
        line = line.strip()
        if line:
            r = json.loads(line)
            if r.get("type") == kind:
                yield r["body"]


def netcpu():
    keys = ["netrx_ns", "nettx_ns", "send_ns", "recv_ns", "netrx_n", "send_n", "recv_n", "nested_ns"]
    acc = {k: [] for k in keys}
    dur = 0
    rapl = 0
    for b in records("netcpu"):
        dur += b["t1_ns"] - b["t0_ns"]
        rapl = 1 if b.get("rapl") else 0
        for k in keys:
            col = b.get(k, [])
            if len(acc[k]) < len(col):
                acc[k] += [0] * (len(col) - len(acc[k]))
            for i, v in enumerate(col):
                acc[k][i] += v
    ncpu = max((len(v) for v in acc.values()), default=0)
    out = ["dur_ns=%d" % dur, "ncpu=%d" % ncpu]
    for k in keys:
        col = acc[k] + [0] * (ncpu - len(acc[k]))
        out.append("%s=%s" % (k, ",".join(str(v) for v in col)))
    out.append("rapl=%d" % rapl)
    print(" ".join(out))


def stacks():
    tot = {"samples": 0, "samples_netrx": 0, "lost": 0, "unresolved": 0}
    cats = {}
    for b in records("netrx_stacks"):
        for k in tot:
            tot[k] += b.get(k, 0)
        for name, n in zip(b.get("cat", []), b.get("cat_samples", [])):
            cats[name] = cats.get(name, 0) + n
    out = ["%s=%d" % kv for kv in tot.items()]
    out += ["cat_%s=%d" % kv for kv in sorted(cats.items())]
    print(" ".join(out))


def threads(pid):
    tids, comms, cgids = set(), set(), set()
    oncpu = nv = ni = 0
    paths = {}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        b = r.get("body", {})
        if r.get("type") == "cgroups":
            for i, p in zip(b.get("id", []), b.get("path", [])):
                paths[i] = p
            continue
        if r.get("type") != "threads":
            continue
        tid, t = [], 0
        for d in b.get("tid_d", []):
            t += d
            tid.append(t)
        for i in range(b.get("n", 0)):
            if b["pid"][i] != pid:
                continue
            tids.add(tid[i])
            comms.add(b["comm"][i])
            cgids.add(b["cgroup_id"][i])
            oncpu += b["oncpu_ns"][i]
            nv += b["nvcsw"][i]
            ni += b["nivcsw"][i]
    cg = ",".join(sorted(str(paths.get(c) or "?") for c in cgids)) or "?"
    print("tids=%d oncpu_ns=%d nvcsw=%d nivcsw=%d comm=%s cgroup=%s" %
          (len(tids), oncpu, nv, ni, ",".join(sorted(comms)) or "?", cg))


def poisson_ci(n, z):
    """Score interval of a Poisson count n (analyze/ana_families.c nc_ci)."""
    c = n + z * z / 2.0
    h = z * math.sqrt(n + z * z / 4.0)
    return max(0.0, c - h), c + h


def est_tokens(c, n, ex, period, z):
    """period: what one sample stands for on average (its own timer period,
    the rate being dithered)."""
    lo, hi = poisson_ci(n, z)
    return ["%s_exact_ns=%d" % (c, ex), "%s_smp=%d" % (c, n), "%s_est_ns=%d" % (c, n * period),
            "%s_lo_ns=%d" % (c, lo * period), "%s_hi_ns=%d" % (c, hi * period),
            "%s_ratio=%.4f" % (c, n * period / ex if ex else 0)]


def sockest(z):
    classes = (("netrx", "sirq"), ("nettx", "sirq"), ("send", "sock"), ("recv", "sock"))
    acc = {"netrx_probe_smp": 0, "netrx_stray_smp": 0, "sirq_other_smp": 0, "sirq_missed_smp": 0,
           "send_cut_smp": 0, "recv_cut_smp": 0, "pc_unknown_smp": 0,
           "send_probe_smp": 0, "recv_probe_smp": 0, "send_outside_smp": 0, "recv_outside_smp": 0}
    for c, _ in classes:
        acc[c + "_ns"] = acc[c + "_smp"] = acc[c + "_smp_ns"] = 0
    period, mode, samplers = 0, {"sock": "?", "sirq": "?"}, set()
    for b in records("netcpu"):
        for m in mode:
            mode[m] = b.get(m, "exact")
        samplers.add(b.get("sock_sampler", "-"))
        period = b.get("smp_period_ns", period)
        for k in acc:
            acc[k] += sum(b.get(k, []))
        # recordings before the dithered rate: samples x the fixed period
        for c, _ in classes:
            if c + "_smp_ns" not in b:
                acc[c + "_smp_ns"] += sum(b.get(c + "_smp", [])) * b.get("smp_period_ns", 0)

    def per(c):
        n = acc[c + "_smp"]
        return acc[c + "_smp_ns"] / n if n else period
    out = ["sock=%s" % mode["sock"], "sirq=%s" % mode["sirq"], "sampler=%s" % (",".join(sorted(samplers)) or "-"),
           "period_ns=%d" % period]
    for c, m in classes:
        ex = acc[c + "_ns"] if mode[m] == "exact" else 0
        out += est_tokens(c, acc[c + "_smp"], ex, per(c), z)
    out += ["%s=%d" % (k, acc[k]) for k in ("netrx_probe_smp", "netrx_stray_smp", "sirq_other_smp",
                                            "sirq_missed_smp", "send_cut_smp", "recv_cut_smp",
                                            "pc_unknown_smp", "send_probe_smp", "recv_probe_smp",
                                            "send_outside_smp", "recv_outside_smp")]
    ex = acc["netrx_ns"] if mode["sirq"] == "exact" else 0
    out += est_tokens("netrx_win", acc["netrx_smp"] + acc["netrx_probe_smp"], ex, per("netrx"), z)
    # socket samples plus those in the exact clock's own programs (probe)
    for c in ("send", "recv"):
        ex = acc[c + "_ns"] if mode["sock"] == "exact" else 0
        out += est_tokens(c + "_win", acc[c + "_smp"] + acc[c + "_probe_smp"], ex, per(c), z)
    print(" ".join(out))


def progs():
    """The last PROGS record's programs; skipped runs summed over all."""
    rows, missed, nrec = [], 0, 0
    for b in records("progs"):
        nrec += 1
        rows = list(zip(b.get("prog", []), b.get("family", []), b.get("missed_total", [])))
        missed += sum(b.get("missed", []))
    fams = sorted({f for _, f, _ in rows})
    print("records=%d progs=%d families=%s missed=%d missed_total=%d" %
          (nrec, len(rows), ",".join(fams) or "-", missed, sum(t for _, _, t in rows)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "netcpu":
        netcpu()
    elif cmd == "stacks":
        stacks()
    elif cmd == "progs":
        progs()
    elif cmd == "sockest":
        sockest(float(sys.argv[2]) if len(sys.argv) > 2 else 1.96)
    elif cmd == "threads" and len(sys.argv) == 3:
        threads(int(sys.argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
