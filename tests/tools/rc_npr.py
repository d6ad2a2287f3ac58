#!/usr/bin/env python3
"""Summaries of an nprec recording for the REC-CORE e2e tests and bench.
Reads `npreport dump FILE` JSON lines on stdin.
  rc_npr.py flows    one line per flow: laddr lport raddr rport proto tx_bytes rx_bytes tx_pkts rx_pkts retrans srtt_us(last mean)
  rc_npr.py flowsum PORT  TCP flows with PORT at either end: connections tx_bytes rx_bytes owners
                     (owners: "comm" of each connection's last row, counted, e.g. nginx:20,-:1)
  rc_npr.py txn      one line per role: role count events http p50_ns p99_ns bytes_req bytes_resp paths
  rc_npr.py drops    one line per drop reason: name count
  rc_npr.py probes   one line per probe: family probe state reason
  rc_npr.py lost [FAMILY]  total lost events from LOST records
"""
import json
import sys


def sk_lo_hi(idx):
    if idx < 64:
        return idx, idx
    shift = idx // 64 - 1
    lo = (64 + idx % 64) << shift
    return lo, lo + (1 << shift) - 1


def sk_quantile(buckets, q):
    n = sum(buckets.values())
    if n == 0:
        return 0
    rank = int(q * (n - 1) + 0.5)
    seen = 0
    for idx in sorted(buckets):
        seen += buckets[idx]
        if seen > rank:
            lo, hi = sk_lo_hi(idx)
            return (lo + hi) / 2.0
    return 0


def records(kind):
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if r.get("type") == kind:
            yield r["body"]


def flows():
    # a connection is its tuple and the time its flow opened: a tuple used
    # again (a local port reused after TIME_WAIT, under connection churn)
    # is another connection and another line
    acc = {}
    for b in records("flows"):
        opened = b.get("open_ns", [0] * b["n"])
        for i in range(b["n"]):
            k = (b["laddr"][i], b["lport"][i], b["raddr"][i], b["rport"][i], b["proto"][i], opened[i])
            a = acc.setdefault(k, [0, 0, 0, 0, 0, 0])
            a[0] += b["tx_bytes"][i]
            a[1] += b["rx_bytes"][i]
            a[2] += b["tx_pkts"][i]
            a[3] += b["rx_pkts"][i]
            a[4] += b["retrans"][i]
            if b["srtt_n"][i]:
                a[5] = b["srtt_mean_us"][i]
    for k, a in sorted(acc.items()):
        print(*k[:5], *a)


def flowsum():
    port = int(sys.argv[2])
    acc = {}
    for b in records("flows"):
        opened = b.get("open_ns", [0] * b["n"])
        for i in range(b["n"]):
            if b["proto"][i] != 6 or port not in (b["lport"][i], b["rport"][i]):
                continue
            k = (b["laddr"][i], b["lport"][i], b["raddr"][i], b["rport"][i], opened[i])
            a = acc.setdefault(k, [0, 0, "-"])
            a[0] += b["tx_bytes"][i]
            a[1] += b["rx_bytes"][i]
            if b["pid"][i]:
                a[2] = b["comm"][i] or "-"
    owners = {}
    for a in acc.values():
        owners[a[2]] = owners.get(a[2], 0) + 1
    print(len(acc), sum(a[0] for a in acc.values()), sum(a[1] for a in acc.values()),
          ",".join("%s:%d" % kv for kv in sorted(owners.items())) or "-")


def txn():
    roles = {1: "client", 2: "server"}
    acc = {}
    events = {}
    for line in sys.stdin:
        r = json.loads(line)
        b = r.get("body", {})
        if r.get("type") == "txn_stats":
            for i in range(b["n"]):
                a = acc.setdefault(b["role"][i], {"count": 0, "http": 0, "req": 0, "resp": 0,
                                                  "b": {}, "paths": set()})
                a["count"] += b["count"][i]
                a["http"] += b["http_count"][i]
                a["req"] += b["bytes_req"][i]
                a["resp"] += b["bytes_resp"][i]
                if "path" in b and b["path"][i]:
                    a["paths"].add(b["method"][i] + " " + b["path"][i])
                bl = b["lat"][i]["b"]
                for j in range(0, len(bl), 2):
                    a["b"][bl[j]] = a["b"].get(bl[j], 0) + bl[j + 1]
        elif r.get("type") == "txn_events":
            for i in range(b["n"]):
                events[b["role"][i]] = events.get(b["role"][i], 0) + 1
    for role, a in sorted(acc.items()):
        print(roles.get(role, role), a["count"], events.get(role, 0), a["http"],
              "%.0f" % sk_quantile(a["b"], 0.50), "%.0f" % sk_quantile(a["b"], 0.99),
              a["req"], a["resp"], sum(a["b"].values()), ",".join(sorted(a["paths"])) or "-")


def drops():
    acc = {}
    for b in records("drops"):
        for i in range(b["n"]):
            acc[b["reason_name"][i]] = acc.get(b["reason_name"][i], 0) + b["count"][i]
    for k, v in sorted(acc.items()):
        print(k, v)


def probes():
    for b in records("header"):
        for p in b["probes"]:
            print(p["family"], p["probe"], p["state"], p["reason"] or "-")


def lost():
    fam = sys.argv[2] if len(sys.argv) > 2 else None
    n = 0
    for b in records("lost"):
        for name, v in zip(b["family"], b["lost"]):
            if fam is None or name == fam:
                n += v
    print(n)


if __name__ == "__main__":
    {"flows": flows, "flowsum": flowsum, "txn": txn, "drops": drops, "probes": probes, "lost": lost}[sys.argv[1]]()
