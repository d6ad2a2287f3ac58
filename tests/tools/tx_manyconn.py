#!/usr/bin/env python3
"""tx_manyconn: N keep-alive HTTP/1.1 connections over loopback, K requests
each, responses after a random delay of up to 4 ms (latencies over many
sketch buckets per connection), server and clients in this one process.
With "churn": N connections at a time, each making K requests on a new
connection apiece (connect, one request, close). Prints the number of
completed requests. Used by tests/e2e/txn_manyconn.sh (thousands of
connections with new transactions at every snapshot) and by
bench/txn_abpair.sh.
usage: tx_manyconn.py PORT N K [churn]"""
import asyncio
import random
import sys

PORT, N, K = (int(a) for a in sys.argv[1:4])
CHURN = sys.argv[4:5] == ["churn"]
done = 0


async def serve(r, w):
    try:
        while await r.readline():
            while (await r.readline()) not in (b"\r\n", b""):
                pass
            await asyncio.sleep(random.random() * 0.004)
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await w.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    w.close()


async def request(r, w, path):
    """One GET and its 2-byte response."""
    global done
    w.write(b"GET " + path + b" HTTP/1.1\r\nHost: t\r\n\r\n")
    await w.drain()
    while (await r.readline()) != b"\r\n":
        pass
    await r.readexactly(2)
    done += 1


async def client():
    r, w = await asyncio.open_connection("127.0.0.1", PORT)
    for _ in range(K):
        await request(r, w, b"/many")
        await asyncio.sleep(random.random() * 0.05)
    w.close()


async def churner():
    for _ in range(K):
        r, w = await asyncio.open_connection("127.0.0.1", PORT)
        await request(r, w, b"/churn")
        w.close()
        await w.wait_closed()


async def main():
    srv = await asyncio.start_server(serve, "127.0.0.1", PORT, backlog=4096)
    await asyncio.gather(*((churner if CHURN else client)() for _ in range(N)))
    srv.close()
    print(done)


asyncio.run(main())
