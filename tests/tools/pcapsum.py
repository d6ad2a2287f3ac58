#!/usr/bin/env python3
"""Ground truth from tcpdump captures (classic pcap, Ethernet, IPv4/TCP) for
the e2e tests, independent of np's own readers.
  pcapsum.py flows PCAP
      one line per direction of a TCP connection seen:
      saddr sport daddr dport packets data_packets payload_bytes rst_packets
  pcapsum.py lost SENDER.pcap RECEIVER.pcap SPORT
      transmissions of the sender's data segments with source port SPORT
      that never reached the receiver's capture, in wire segments (MSS
      units: a GSO super-packet of which nothing arrived is as many lost
      segments as it carried). A transmission is told apart by (seq, TSval):
      a retransmission has a new TSval. Addresses and the destination port
      are not compared (DNAT rewrites them). Prints key=value lines.
  pcapsum.py transit A.pcap B.pcap SPORT
      mean and median time from capture A to capture B of the data segments
      with source port SPORT seen in both (matched by seq and TSval; B's
      clock is A's: captures on one machine). Prints key=value lines.
  pcapsum.py resent PCAP DPORT
      data segments to DPORT: transmissions, distinct sequence numbers and
      copies sent again (a drop after this capture point is repaired by a
      retransmission that passes it again). Prints key=value lines.
  pcapsum.py reqrate PCAP PORT
      on a client's capture, requests to PORT per second between request
      starts (the first transmission of each data segment to PORT):
      (n - 1) / (last start - first start), as npanalyze computes it from
      the recorders' first and last request starts. Prints key=value
      lines.
"""
import struct
import sys


def frames(path):
    """Yields (ts_ns, ip, orig) of the IPv4 frames of an Ethernet capture:
    ip = the frame from the IP header on, orig = the frame's original length.
    Also the demo's reader (dm_resent.py)."""
    with open(path, "rb") as f:
        gh = f.read(24)
        if len(gh) < 24:
            return
        magic = struct.unpack("<I", gh[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            e = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            e = ">"
        else:
            raise SystemExit(f"{path}: not a pcap file")
        nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
        if struct.unpack(e + "I", gh[20:24])[0] != 1:
            raise SystemExit(f"{path}: link type is not Ethernet")
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            sec, frac, incl, orig = struct.unpack(e + "IIII", rh)
            d = f.read(incl)
            if len(d) < incl:
                return
            if len(d) < 14 + 20 or d[12:14] != b"\x08\x00":
                continue
            yield sec * 10**9 + frac * (1 if nano else 1000), d[14:], orig


def segments(path):
    """Yields (ts_ns, ip, tcp, tot, orig) of the TCP frames: ip and tcp = the
    frame from each header on, tot = the IP header's total length."""
    for ts_ns, ip, orig in frames(path):
        ihl = (ip[0] & 15) * 4
        if ip[9] == 6 and len(ip) >= ihl + 20:
            yield ts_ns, ip, ip[ihl:], struct.unpack(">H", ip[2:4])[0], orig


def packets(path):
    """Yields (ts_ns, saddr, sport, daddr, dport, seq, ack, flags, tsval, payload)."""
    for ts_ns, ip, tcp, tot, orig in segments(path):
        ihl = (ip[0] & 15) * 4
        sport, dport, seq, ack = struct.unpack(">HHII", tcp[:12])
        doff = (tcp[12] >> 4) * 4
        flags = tcp[13]
        tsval = None
        o = 20
        while o < doff and o < len(tcp):
            k = tcp[o]
            if k == 0:
                break
            if k == 1:
                o += 1
                continue
            if o + 1 >= len(tcp):
                break
            ln = tcp[o + 1]
            if k == 8 and ln == 10 and o + 6 <= len(tcp):
                tsval = struct.unpack(">I", tcp[o + 2:o + 6])[0]
            if ln < 2:
                break
            o += ln
        # GSO super-packets carry tot_len 0 or that of the whole skb;
        # the frame's original length is the truth
        ipl = tot if tot else orig - 14
        ipl = max(ipl, orig - 14)
        payload = max(0, ipl - ihl - doff)
        yield (ts_ns, ip[12:16], sport, ip[16:20], dport, seq, ack, flags,
               tsval, payload)


def dotted(a):
    return ".".join(str(b) for b in a)


def flows(path):
    acc = {}
    for p in packets(path):
        k = (dotted(p[1]), p[2], dotted(p[3]), p[4])
        a = acc.setdefault(k, [0, 0, 0, 0])
        a[0] += 1
        a[1] += p[9] > 0
        a[2] += p[9]
        a[3] += (p[7] & 0x04) != 0
    for k, a in sorted(acc.items()):
        print(*k, *a)


def lost(snd, rcv, sport):
    sport = int(sport)
    got = {}          # tsval -> list of (seq, end) received
    for p in packets(rcv):
        if p[2] == sport and p[9] > 0:
            got.setdefault(p[8], []).append((p[5], (p[5] + p[9]) & 0xFFFFFFFF))
    sent = lost_seg = lost_bytes = 0
    mss = 0
    tx = []
    for p in packets(snd):
        if p[2] == sport and p[9] > 0:
            tx.append((p[5], p[9], p[8]))
    for seq, ln, ts in tx:
        mss = max(mss, min(ln, 1448))
    for seq, ln, ts in tx:
        nseg = (ln + mss - 1) // mss
        sent += nseg
        # bytes of [seq, seq+ln) the receiver got with the same TSval
        cov = 0
        for s, e in got.get(ts, ()):
            lo, hi = max(0, (s - seq) & 0xFFFFFFFF), (e - seq) & 0xFFFFFFFF
            if lo >= 1 << 31:
                lo = 0
            if hi >= 1 << 31 or hi == 0:
                continue
            cov += max(0, min(hi, ln) - min(lo, ln))
        miss = max(0, ln - cov)
        lost_bytes += miss
        lost_seg += (miss + mss - 1) // mss
    print(f"sent_segments={sent}\nlost_segments={lost_seg}\nlost_bytes={lost_bytes}\nmss={mss}")


def resent(path, dport):
    dport = int(dport)
    n, seqs = 0, {}
    for p in packets(path):
        if p[4] == dport and p[9] > 0:
            n += 1
            k = (p[1], p[2], p[5])
            seqs[k] = seqs.get(k, 0) + 1
    print(f"data_tx={n}\ndistinct={len(seqs)}\nresent={n - len(seqs)}")


def transit(a, b, sport):
    sport = int(sport)
    first = {}
    for p in packets(a):
        if p[2] == sport and p[9] > 0:
            first.setdefault((p[5], p[8]), p[0])
    d = []
    for p in packets(b):
        k = (p[5], p[8])
        if p[2] == sport and p[9] > 0 and k in first:
            d.append(p[0] - first.pop(k))
    d.sort()
    n = len(d)
    mean = sum(d) / n if n else 0
    print(f"matched={n}\nmean_ns={mean:.0f}\np50_ns={d[n // 2] if n else 0}")


def reqrate(path, port):
    port = int(port)
    seen, t = set(), []
    for p in packets(path):
        if p[4] == port and p[9] > 0 and (p[1], p[2], p[5]) not in seen:
            seen.add((p[1], p[2], p[5]))
            t.append(p[0])
    t.sort()
    n = len(t)
    span = t[n - 1] - t[0] if n >= 2 else 0
    rate = (n - 1) * 1e9 / span if span > 0 else 0
    print(f"requests={n}\nspan_ns={span}\nrate={rate:.2f}")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "flows":
        flows(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "transit":
        transit(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "resent":
        resent(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "reqrate":
        reqrate(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "lost":
        lost(*sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
