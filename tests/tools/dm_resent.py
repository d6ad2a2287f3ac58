#!/usr/bin/env python3
"""Ground truth for the demo's slow RPCs from a capture on dm-back's veth
(tcpdump -i dm-b0, before iptables' INPUT drop): one line per request to
the orders backend (DPORT, default 9002), in CLOCK_MONOTONIC ns (the
recorders' clock; OFFSET_NS = realtime - monotonic when captured):
  req_ns resp_ns resent path
req_ns: the request's first transmission; resp_ns: the first response
data segment after it on the same connection (0: none); resent: 1 when a
request segment was seen again (the drop after this capture point was
repaired by a retransmission); path: the request line's path.
  dm_resent.py PCAP OFFSET_NS [DPORT]
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcapsum import segments  # noqa: E402


def frames(path):
    """Yields (ts_ns, sport, dport, seq, payload bytes) of IPv4/TCP frames."""
    for ts, ip, tcp, tot, _ in segments(path):
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        doff = (tcp[12] >> 4) * 4
        yield ts, sport, dport, seq, ip[len(ip) - len(tcp) + doff:tot]


def main():
    pcap, off = sys.argv[1], int(sys.argv[2])
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 9002
    reqs, seen, open_req = [], {}, {}
    for ts, sport, dport, seq, data in frames(pcap):
        if not data:
            continue
        if dport == port:
            key = (sport, seq)
            if key in seen:
                seen[key][2] = 1         # a copy of a request segment again
                continue
            r = [ts - off, 0, 0, "?"]
            if data.startswith(b"GET ") or data.startswith(b"POST "):
                r[3] = data.split(b" ")[1].decode(errors="replace")
                reqs.append(r)
                open_req[sport] = r
            else:
                r = open_req.get(sport, r)   # a request's later segment
            seen[key] = r
        elif sport == port and dport in open_req:
            r = open_req.pop(dport)
            r[1] = ts - off
    for r in reqs:
        print(r[0], r[1], r[2], r[3])


if __name__ == "__main__":
    main()
