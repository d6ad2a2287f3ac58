#!/usr/bin/env python3
"""Talks to an nprec --sync-listen like a stranger, a forger and a replayer
(tests/e2e/sec_clocksync.sh). Written from docs/CLOCKSYNC-EXCHANGE.md alone:
Python's struct, hmac and hashlib, not np's code. Prints key=value lines.

usage: cs_attack.py HOST PORT KEYFILE|- MODE
  MODE keyed:   the listener has KEYFILE as --sync-key
  MODE plain:   the listener has no key
"""
import hashlib, hmac, socket, struct, sys, time

MAGIC = 0x4E505359
REQ, REPLY, REPORT = 1, 2, 3
FMT = "<IBBBBIIQQQQQ"          # 56 bytes, MAC over them (version 2)


def key_of(path):
    if path == "-":
        return None
    return hashlib.blake2b(open(path, "rb").read(), digest_size=32).digest()


def msg(typ, seq, sender, t, key):
    body = struct.pack(FMT, MAGIC, typ, 2, 1 if key else 0, 0, seq, 0, sender, *t)
    mac = hmac.new(key, body, hashlib.sha512).digest()[:32] if key else bytes(32)
    return body + mac


def parse(d, key):
    if len(d) != 88:
        return None
    f = struct.unpack(FMT, d[:56])
    if key and not hmac.compare_digest(hmac.new(key, d[:56], hashlib.sha512).digest()[:32], d[56:]):
        return "badmac"
    return {"type": f[1], "seq": f[5], "sender": f[7], "t": list(f[8:12])}


def ask(sock, dst, m, wait=0.5):
    """Sends m, returns the datagrams that came back within wait seconds."""
    sock.sendto(m, dst)
    got, end = [], time.time() + wait
    while time.time() < end:
        sock.settimeout(max(end - time.time(), 0.01))
        try:
            got.append(sock.recv(2048))
        except (socket.timeout, BlockingIOError):
            pass
    return got


def mono():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def main():
    host, port, keyfile, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    key = key_of(keyfile)
    wrong = hashlib.blake2b(b"not the key", digest_size=32).digest()
    dst = (host, port)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 0))
    # the listener is up when a proper request is answered
    up = False
    for i in range(100):
        if ask(s, dst, msg(REQ, 1000 + i, 0x2222, (mono(), 0, 0, 0), key), 0.1):
            up = True
            break
    print("listener_up=%d" % up)
    time.sleep(0.3)
    # a stranger: no MAC; another: a MAC with the wrong key
    print("stranger_replies=%d" % sum(len(ask(s, dst, msg(REQ, 1, 0x3333, (mono(), 0, 0, 0), None), 0.2)) for _ in range(5)))
    print("wrongkey_replies=%d" % sum(len(ask(s, dst, msg(REQ, 2, 0x4444, (mono(), 0, 0, 0), wrong), 0.2)) for _ in range(5)))
    # the forged reports: sender 0x1111, T1 = 10^12, never requested
    for k in range(5):
        s.sendto(msg(REPORT, 7 + k, 0x1111, (10**12, 10**12 + 5, 10**12 + 6, 10**12 + 9), None), dst)
        s.sendto(msg(REPORT, 7 + k, 0x1111, (10**12, 10**12 + 5, 10**12 + 6, 10**12 + 9), wrong), dst)
    # a report with a valid MAC (when keyed) for a request never made
    for k in range(2):
        s.sendto(msg(REPORT, 500 + k, 0x2222, (10**12, 10**12 + 5, 10**12 + 6, 10**12 + 9), key), dst)
    # one honest exchange, then its report replayed three times
    t1 = mono()
    back = ask(s, dst, msg(REQ, 77, 0x2222, (t1, 0, 0, 0), key), 0.5)
    rep = [parse(d, key) for d in back]
    good = [r for r in rep if isinstance(r, dict) and r["type"] == REPLY and r["seq"] == 77 and r["t"][0] == t1]
    print("honest_replies=%d" % len(good))
    if good:
        t = good[0]["t"]
        report = msg(REPORT, 77, 0x2222, (t1, t[1], t[2], mono()), key)
        for _ in range(4):
            s.sendto(report, dst)
            time.sleep(0.05)
        print("honest_t1=%d" % t1)
    time.sleep(0.3)


if __name__ == "__main__":
    main()
