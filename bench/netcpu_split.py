#!/usr/bin/env python3
"""Sums of the remote sampler's counts in an `npreport dump` (stdin), as
key=value tokens prefixed by argv[1]: the own timer's samples of socket
calls outside softirqs (sock) and under them (sirq), the remote samples of
the same CPUs outside / under softirqs (rsock, rsirq; rpc: under softirqs
by preempt_count, in exact mode apart from the pair's rsirq), and the samples not
taken (unknown). bench/netcpu_sampled.sh prints them (row `split`)."""
import json
import sys

KEYS = {"sock": "%s_smp", "sirq": "%s_sirq_smp", "rsock": "%s_rsmp", "rsirq": "%s_rsirq_smp",
        "rpc": "%s_rpc_sirq_smp"}


def main():
    pre = sys.argv[1] if len(sys.argv) > 1 else ""
    acc = {}
    for line in sys.stdin:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") != "netcpu":
            continue
        b = r["body"]
        for c in ("send", "recv"):
            for k, f in KEYS.items():
                acc[c + "_" + k] = acc.get(c + "_" + k, 0) + sum(b.get(f % c, []))
        acc["unknown"] = acc.get("unknown", 0) + sum(b.get("remote_unknown_smp", []))
    print(" ".join("%s%s=%d" % (pre, k, v) for k, v in sorted(acc.items())))


if __name__ == "__main__":
    main()
