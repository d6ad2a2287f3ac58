#!/usr/bin/env python3
"""A small multi-tier HTTP service for the np demo (tests/demo.sh).

  dm_service.py backend  --port P [--slow-path PREFIX --slow-ms MS]
  dm_service.py frontend --port P --users URL --orders URL
  dm_service.py load     --url URL --seconds S --rate R [--conns N]
                         [--checkout-share F] [--seed S] --out FILE.json

The frontend answers GET /api/<op> by calling two backends in turn:
GET /users/get and GET /orders/<op> (no ids in paths, so every endpoint is
one row of the analysis). The orders backend delays every request
whose path starts with --slow-path by --slow-ms: that is the injected
condition the degradation-pattern analysis must find. The load generator
keeps --conns keep-alive connections, sends --rate requests/s in total
(op "checkout" with probability --checkout-share, else "browse") and writes
its own latency figures as JSON (the ground truth for the demo checks).
Responses are written in one send with TCP_NODELAY so Nagle and delayed ACKs
add no latency of their own.
"""
import argparse
import http.client
import json
import random
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


def reply(handler, code, obj):
    body = json.dumps(obj).encode()
    head = (f"HTTP/1.1 {code} {'OK' if code == 200 else 'ERR'}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    handler.wfile.write(head + body)


class Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):
        pass


def backend(args):
    class H(Quiet):
        def do_GET(self):
            if args.slow_path and self.path.startswith(args.slow_path):
                time.sleep(args.slow_ms / 1000.0)
            reply(self, 200, {"path": self.path, "port": args.port})
    serve(args.port, H)


class Upstream:
    """One keep-alive connection per frontend thread and backend."""
    local = threading.local()

    def __init__(self, url):
        u = urlsplit(url)
        self.host, self.port = u.hostname, u.port

    def get(self, path):
        conns = getattr(Upstream.local, "conns", None)
        if conns is None:
            conns = Upstream.local.conns = {}
        for attempt in range(2):
            c = conns.get(self.port)
            if c is None:
                c = http.client.HTTPConnection(self.host, self.port, timeout=10)
                c.connect()
                c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conns[self.port] = c
            try:
                c.request("GET", path)
                r = c.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                c.close()
                conns.pop(self.port, None)
                if attempt:
                    raise


def frontend(args):
    users, orders = Upstream(args.users), Upstream(args.orders)

    class H(Quiet):
        def do_GET(self):
            u = urlsplit(self.path)
            parts = u.path.strip("/").split("/")
            if len(parts) != 2 or parts[0] != "api":
                return reply(self, 404, {"error": "no such path"})
            op = parts[1]
            try:
                s1, _ = users.get("/users/get")
                s2, _ = orders.get(f"/orders/{op}")
            except (OSError, http.client.HTTPException) as e:
                return reply(self, 502, {"error": str(e)})
            reply(self, 200 if s1 == s2 == 200 else 502, {"op": op})
    serve(args.port, H)


def serve(port, handler):
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer(("0.0.0.0", port), handler)
    print(f"dm_service: listening on :{port}", file=sys.stderr, flush=True)
    srv.serve_forever()


def pct(v, q):
    if not v:
        return None
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def load(args):
    u = urlsplit(args.url)
    rnd = random.Random(args.seed)
    plan = []        # (send time, op, id), decided up front so runs repeat
    n = int(args.seconds * args.rate)
    for i in range(n):
        op = "checkout" if rnd.random() < args.checkout_share else "browse"
        plan.append((i / args.rate, op, i))
    results, lock = [], threading.Lock()
    start = time.monotonic() + 0.2

    def worker(k):
        c = None
        for t, op, rid in plan[k::args.conns]:
            delay = start + t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t0 = time.monotonic()
            try:
                if c is None:
                    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
                    c.connect()
                    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                c.request("GET", f"/api/{op}")
                r = c.getresponse()
                r.read()
                ok = r.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                if c:
                    c.close()
                c = None
            ms = (time.monotonic() - t0) * 1000.0
            with lock:
                results.append({"op": op, "id": rid, "ok": ok, "ms": ms})

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.conns)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    summary = {"requests": len(results), "errors": sum(not r["ok"] for r in results)}
    for op in ("browse", "checkout"):
        ms = [r["ms"] for r in results if r["op"] == op and r["ok"]]
        summary[op] = {"n": len(ms), "p50_ms": pct(ms, 0.5), "p99_ms": pct(ms, 0.99)}
    allms = [r["ms"] for r in results if r["ok"]]
    summary["all"] = {"n": len(allms), "p50_ms": pct(allms, 0.5), "p99_ms": pct(allms, 0.99)}
    with open(args.out, "w") as f:
        json.dump({"summary": summary, "requests": results}, f)
    print("load: " + json.dumps(summary), file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("backend")
    b.add_argument("--port", type=int, required=True)
    b.add_argument("--slow-path", default="")
    b.add_argument("--slow-ms", type=float, default=50)
    f = sub.add_parser("frontend")
    f.add_argument("--port", type=int, required=True)
    f.add_argument("--users", required=True)
    f.add_argument("--orders", required=True)
    lg = sub.add_parser("load")
    lg.add_argument("--url", required=True)
    lg.add_argument("--seconds", type=float, default=10)
    lg.add_argument("--rate", type=float, default=40)
    lg.add_argument("--conns", type=int, default=4)
    lg.add_argument("--checkout-share", type=float, default=0.2)
    lg.add_argument("--seed", type=int, default=1)
    lg.add_argument("--out", required=True)
    a = p.parse_args()
    {"backend": backend, "frontend": frontend, "load": load}[a.cmd](a)


if __name__ == "__main__":
    main()
