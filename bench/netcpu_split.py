#!/usr/bin/env python3
"""Sums of the remote sampler's counts in an `npreport dump` (stdin), as
key=value tokens prefixed by argv[1]: the own timer's samples of socket
calls outside softirqs (sock) and under them (sirq), the remote samples of
the same CPUs outside / under softirqs (rsock, rsirq; rpc: under softirqs
by preempt_count, in exact mode apart from the pair's rsirq), and the samples not
taken (unknown). bench/netcpu_sampled.sh prints them (row `split`).
A class split remotely in a record (`sock_sampler` `remote-recv`: receive;
`remote`: both) has in `*_smp` the count whose interval is the estimate's,
not the own samples outside softirqs, which that record does not hold: it
adds to cnt (its own samples under softirqs to own_sirq) and counts in
remote_recs, not in sock or sirq, so that the row's own split is that of
the records the own timer split only (0+0 when none)."""
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
        smp = b.get("sock_sampler", "local")
        for c in ("send", "recv"):
            remote = smp == "remote" or (smp == "remote-recv" and c == "recv")
            for k, f in KEYS.items():
                if remote and k in ("sock", "sirq"):
                    k = "cnt" if k == "sock" else "own_sirq"
                acc[c + "_" + k] = acc.get(c + "_" + k, 0) + sum(b.get(f % c, []))
            acc[c + "_remote_recs"] = acc.get(c + "_remote_recs", 0) + int(remote)
        acc["unknown"] = acc.get("unknown", 0) + sum(b.get("remote_unknown_smp", []))
    print(" ".join("%s%s=%d" % (pre, k, v) for k, v in sorted(acc.items())))


if __name__ == "__main__":
    main()
