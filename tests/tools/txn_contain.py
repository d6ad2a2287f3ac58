#!/usr/bin/env python3
"""Each server transaction inside its client's, from two recordings on one
machine (one clock): CLIENT.dump SERVER.dump (npreport dump output, every
event kept). Connections are paired by ports (the client's local port is
the server's remote one), transactions by order on their connection. The
client's start (its first segment's transmit, or the send's return) is at
or before the server's (the request's arrival there, or its read), and
the server's end (its last response bytes' transmit, or the send's
return) at or before the client's (its last read's return): a recorded
server time outside its client's is a wrong clock, not noise.
A server end from the clock at its send's return (bytes still unsent, or
not TCP) can fall after the client's end: the server was preempted, or
ran the client's receive inside its send (veth), before the send
returned; starts have no such case.
Prints: pairs, starts inside, ends inside, worst start excess ns, worst end excess ns,
median server/client duration ratio, the shortest server duration ns (an
end read from a stale socket clock, before the response left, would be
about the request's arrival: ~0)."""
import json
import sys


def load(path, role):
    ports, ev = {}, {}
    for line in open(path):
        r = json.loads(line)
        b = r.get("body", {})
        if r.get("type") == "txn_stats":
            for i in range(b["n"]):
                if b["role"][i] == role:
                    ports[b["conn"][i]] = (b["lport"][i], b["rport"][i])
        elif r.get("type") == "txn_events":
            t = 0
            for i in range(b["n"]):
                t += b["start_ns_d"][i]
                if b["role"][i] == role:
                    ev.setdefault(b["conn"][i], []).append((t, t + b["dur_ns"][i]))
    out = {}
    for c, xs in ev.items():
        if c in ports:
            out[ports[c]] = sorted(xs)
    return out


cl, sv = load(sys.argv[1], 1), load(sys.argv[2], 2)
pairs = sin = ein = 0
ws = we = -10**18
ratios = []
shortest = 10**18
for (lp, rp), sx in sv.items():
    cx = cl.get((rp, lp))
    if not cx or len(cx) != len(sx):
        continue
    for (cs, ce), (ss, se) in zip(cx, sx):
        pairs += 1
        ws, we = max(ws, cs - ss), max(we, se - ce)
        sin += cs <= ss
        ein += se <= ce
        shortest = min(shortest, se - ss)
        if ce > cs:
            ratios.append((se - ss) / (ce - cs))
ratios.sort()
print(pairs, sin, ein, ws if pairs else 0, we if pairs else 0,
      "%.3f" % ratios[len(ratios) // 2] if ratios else "0", shortest if pairs else 0)
