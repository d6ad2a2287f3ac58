#!/usr/bin/env python3
"""What the demo injected vs what the analysis found (tests/demo.sh).

  dm_claims.py OUTDIR [--kv]

Reads OUTDIR/csv/*.csv (npreport CSV: raw numbers in base units; incident.csv
is the report's incident summary, checked against the tables it summarises),
OUTDIR/load.json (the load generator's own figures) and
OUTDIR/iptables_dropped.txt. Prints a short table for people, or with --kv
one key=value per line for tests/e2e/demo.sh.
"""
import csv
import json
import os
import re
import sys


def rows(out, name):
    p = f"{out}/csv/{name}.csv"
    return list(csv.DictReader(open(p, newline=""))) if os.path.exists(p) else []


def claims(out):
    c = {}
    off = [r for r in rows(out, "clock") if r["host"].endswith("dm-back") and r.get("offset_ns")]
    c["back_offset_ns"] = float(off[0]["offset_ns"]) if off else None
    c["back_offset_err_ns"] = float(off[0]["offset_err_ns"]) if off and off[0].get("offset_err_ns") else None
    tx = rows(out, "transactions")

    def p50(pat, role):
        r = [x for x in tx if x["level"] == "endpoint" and pat in x["key"] and x["role"] == role]
        return float(r[0]["p50_ns"]) if r else None
    c["checkout_p50_ns"] = p50("orders/checkout", "server")
    c["browse_p50_ns"] = p50("orders/browse", "server")
    bn = [r for r in rows(out, "bottlenecks") if r["bottleneck"] == "1"]
    c["receiver_app_bottlenecks"] = sum(1 for r in bn if r["component"] == "receiver_app")
    c["bottleneck_windows"] = len({(r["source"], r["from_ns"]) for r in bn})
    # slow RPCs split over their calls: the backend's application time
    tree = [r for r in bn if r["source"] == "slow_rpc_tree"]
    c["tree_windows"] = len(tree)
    c["tree_back_app"] = sum(1 for r in tree if r["component"].startswith("app:") and r["component"].endswith("dm-back"))
    c["tree_network"] = sum(1 for r in tree if r["component"] == "network")
    # kernel drop reasons per host and flow (drops) and every lost packet (lost_packets)
    c["netfilter_drops_on_back_9002"] = sum(
        int(r["drops"]) for r in rows(out, "drops")
        if r.get("reason") == "NETFILTER_DROP" and r["host"].endswith("dm-back") and ":9002" in r["flow"])
    nf = [r for r in rows(out, "lost_packets") if r.get("drop_reason") == "NETFILTER_DROP"]
    c["netfilter_lost"] = len(nf)
    c["netfilter_lost_on_back_9002"] = sum(1 for r in nf if r["last_host"].endswith("dm-back")
                                           and ":9002" in r["flow"])
    try:
        c["iptables_dropped"] = int(open(f"{out}/iptables_dropped.txt").read().strip() or 0)
    except (OSError, ValueError):
        c["iptables_dropped"] = 0
    best, cond = 0.0, ""
    for r in rows(out, "patterns"):
        for lo, unit in re.findall(r"9002[^∈]*∈ \[([0-9.]+) (ms|µs|s)", r["conditions"]):
            v = float(lo) * {"ms": 1, "µs": 1e-3, "s": 1e3}[unit]
            if 35 <= v <= 60 and float(r["fscore_ratio"]) > best:
                best, cond = float(r["fscore_ratio"]), r["conditions"]
    c["orders_pattern_fscore"] = best
    c["orders_pattern"] = cond
    c.update(summary_claims(out, c))
    try:
        c.update(json.load(open(f"{out}/injected.json")))
    except (OSError, ValueError):
        c.update({"shift_ms": 5, "slow_ms": 50, "loss": 0.01})
    try:
        load = json.load(open(f"{out}/load.json"))["summary"]
        c["load_checkout_p50_ms"] = load["checkout"]["p50_ms"]
    except (OSError, KeyError, ValueError):
        c["load_checkout_p50_ms"] = None
    return c


def num(r, k):
    return float(r[k]) if r and r.get(k) not in (None, "") else None


def summary_claims(out, c):
    """What npreport's incident summary (incident.csv) states, and whether it
    agrees with the tables read above: the same numbers, the same places."""
    inc = rows(out, "incident")
    first = lambda kind, pred=lambda r: True: next((r for r in inc if r["kind"] == kind and pred(r)), None)
    slow = first("slow_endpoint")
    down = first("slow_downstream")
    loss = first("loss")
    clk = first("clock")
    s = {
        "summary_slow_endpoint": slow["subject"] if slow else None,
        "summary_slow_added_ns": num(slow, "added_ns"),
        "summary_slow_rank": int(slow["rank"]) if slow else None,
        "summary_backend_endpoint": down["subject"] if down else None,
        "summary_backend_host": down["host"] if down else None,
        "summary_loss_service": loss["subject"] if loss else None,
        "summary_loss_host": loss["host"] if loss else None,
        "summary_loss_count": num(loss, "count"),
        "summary_clock_host": clk["host"] if clk else None,
        "summary_clock_offset_ns": num(clk, "value_ns"),
        "summary_clock_bound_ns": num(clk, "bound_ns"),
    }
    s["summary_agrees_slow"] = int(bool(slow and "checkout" in slow["subject"] and down
                                        and down["host"].endswith("dm-back") and ":9002 " in down["subject"]))
    s["summary_agrees_loss"] = int(c["netfilter_lost"] == 0 or bool(
        loss and loss["host"].endswith("dm-back") and loss["subject"].endswith(":9002")
        and s["summary_loss_count"] == c["netfilter_lost"]))
    s["summary_agrees_clock"] = int(bool(clk and clk["host"].endswith("dm-back")
                                         and s["summary_clock_offset_ns"] == c["back_offset_ns"]))
    return s


def fmt(v, scale=1.0, unit=""):
    return "not found" if v is None else f"{v / scale:.3f} {unit}".strip()


def human(c):
    lines = [
        (f"clock of dm-back shifted +{c['shift_ms']:g} ms",
         f"dm-back offset {fmt(c['back_offset_ns'], 1e3, 'us')} "
         f"(error bound {fmt(c['back_offset_err_ns'], 1e3, 'us')})  [clock]"),
        (f"orders backend delays /orders/checkout {c['slow_ms']:g} ms",
         f"endpoint p50 {fmt(c['checkout_p50_ns'], 1e6, 'ms')} (load generator: "
         f"{fmt(c['load_checkout_p50_ms'], 1, 'ms')}); the slowest RPCs on dm-front spent most of "
         f"their time in dm-back's application in {c['tree_back_app']} of {c['tree_windows']} call trees "
         f"(the network, i.e. retransmissions, in {c['tree_network']})  "
         "[transactions] [bottlenecks]"),
        (f"dm-back drops {c['loss'] * 100:g} % of requests to :9002",
         f"iptables dropped {c['iptables_dropped']}; kernel drops NETFILTER_DROP on dm-back "
         f":9002: {c['netfilter_drops_on_back_9002']}  [drops]; {c['netfilter_lost']} lost "
         f"packets traced, {c['netfilter_lost_on_back_9002']} of them last seen on dm-back "
         ":9002  [lost_packets]"),
        (f"slow requests = those whose orders call takes {c['slow_ms']:g} ms",
         (f"pattern '{c['orders_pattern']}' F = {c['orders_pattern_fscore']:.2f}  [patterns]"
          if c["orders_pattern"] else "no pattern on the orders RPC >= ~50 ms")),
    ]
    yes = lambda k: "agrees" if c[k] else "DISAGREES"
    lines[0] = (lines[0][0], lines[0][1] + f"\n      summary: {c['summary_clock_host']} "
                f"{fmt(c['summary_clock_offset_ns'], 1e3, 'us')} -> {yes('summary_agrees_clock')}")
    lines[1] = (lines[1][0], lines[1][1] + f"\n      summary (rank {c['summary_slow_rank']}): "
                f"{c['summary_slow_endpoint']} +{fmt(c['summary_slow_added_ns'], 1e6, 'ms')}, "
                f"spent in {c['summary_backend_endpoint']} on {c['summary_backend_host']} "
                f"-> {yes('summary_agrees_slow')}")
    lines[2] = (lines[2][0], lines[2][1] + f"\n      summary: {int(c['summary_loss_count'] or 0)} "
                f"packets to {c['summary_loss_service']} lost on {c['summary_loss_host']} "
                f"-> {yes('summary_agrees_loss')}")
    print("Injected condition vs what the analysis found (tables) and what the report's")
    print("incident summary says (incident.csv):")
    for what, found in lines:
        print(f"  - {what}\n      {found}")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    c = claims(sys.argv[1])
    if "--kv" in sys.argv[2:]:
        for k, v in c.items():
            print(f"{k}={'' if v is None else v}")
    else:
        human(c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
