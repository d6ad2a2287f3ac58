#!/usr/bin/env python3
"""An independent reader of the np container, written from docs/FORMAT.md
alone (no code shared with common/container.c), to check that the spec is
complete and that the C reader follows it.

  npfmt_ref.py dump FILE       JSON lines like `npreport dump FILE`
  npfmt_ref.py stats FILE      one JSON object: the reader statistics (section 4.2)
  npfmt_ref.py backward FILE   chunk start offsets found by walking the trailers
                               from the end (section 2.3), in file order
  npfmt_ref.py quantiles FILE  p50/p90/p99 of every sketch (ANA_SKETCH bodies and
                               TXN_STATS `lat` entries) per section 5, one JSON per line
  npfmt_ref.py index FILE      the chunk index of section 2.6: {"stored": the entries
                               [offset, t_lo, t_hi] of the file's INDEX record found from
                               the end (null if none or unusable), "scanned": the same
                               computed from the records of every good chunk}

Needs only the Python standard library and the `zstd` command (zstd package).
"""
import json
import math
import re
import struct
import subprocess
import sys
import zlib

FILE_MAGIC = b"NPFILE\r\n"
CHUNK_MAGIC = b"NPCK"
MAX_ULEN = 268435456
MAX_CLEN = MAX_ULEN + 65536

NAMES = {1: "header", 2: "probes", 3: "interval", 4: "end", 5: "lost", 6: "trigger", 7: "index", 8: "progs",
         10: "netcpu", 11: "netrx_stacks", 12: "threads", 13: "cgroups", 14: "flows",
         15: "drops", 16: "txn_stats", 17: "txn_events", 18: "power", 20: "pkt_events",
         21: "pkt_flows", 22: "stack_ewma", 23: "alerts", 24: "sync", 25: "baseline",
         64: "ana_meta", 65: "ana_table", 66: "ana_series", 67: "ana_sketch", 68: "ana_finding"}


class Bad(Exception):
    pass


# ---- MessagePack (only what a reader needs: decode one object) ----

class Bin(bytes):
    pass


MAX_NESTING = 32   # containers, the record array included (FORMAT.md 4.2)
MAX_OBJS = 32 << 20   # objects per record, containers, keys and values each (FORMAT.md 4.2)
NOBJ = [0]            # objects decoded in the current record


def mp_decode(buf, pos, depth=0):
    """Returns (object, next position); raises Bad on malformed input."""
    NOBJ[0] += 1
    if pos >= len(buf):
        raise Bad("short")
    b = buf[pos]
    pos += 1

    def take(n):
        nonlocal pos
        if pos + n > len(buf):
            raise Bad("short")
        v = buf[pos:pos + n]
        pos += n
        return v

    def seq(n, is_map):
        nonlocal pos
        if depth + 1 > MAX_NESTING:
            raise Bad("nested too deep")
        if n * (2 if is_map else 1) > len(buf) - pos:
            raise Bad("count larger than the bytes left")
        if is_map:
            out = []
            for _ in range(n):
                k, pos = mp_decode(buf, pos, depth + 1)
                v, pos = mp_decode(buf, pos, depth + 1)
                out.append((k, v))
            return out
        out = []
        for _ in range(n):
            v, pos = mp_decode(buf, pos, depth + 1)
            out.append(v)
        return out

    if b <= 0x7f:
        return b, pos
    if b >= 0xe0:
        return b - 256, pos
    if 0x80 <= b <= 0x8f:
        return dict_or_pairs(seq(b & 0x0f, True)), pos
    if 0x90 <= b <= 0x9f:
        return seq(b & 0x0f, False), pos
    if 0xa0 <= b <= 0xbf:
        return take(b & 0x1f).decode("utf-8", "surrogateescape"), pos
    if b == 0xc0:
        return None, pos
    if b == 0xc2:
        return False, pos
    if b == 0xc3:
        return True, pos
    if b in (0xc4, 0xc5, 0xc6):
        n = int.from_bytes(take(1 << (b - 0xc4)), "big")
        return Bin(take(n)), pos
    if b in (0xc7, 0xc8, 0xc9):
        n = int.from_bytes(take(1 << (b - 0xc7)), "big")
        return Bin(take(n + 1)[1:]), pos
    if b == 0xca:
        return struct.unpack(">f", take(4))[0], pos
    if b == 0xcb:
        return struct.unpack(">d", take(8))[0], pos
    if 0xcc <= b <= 0xcf:
        return int.from_bytes(take(1 << (b - 0xcc)), "big"), pos
    if 0xd0 <= b <= 0xd3:
        return int.from_bytes(take(1 << (b - 0xd0)), "big", signed=True), pos
    if 0xd4 <= b <= 0xd8:
        return Bin(take(1 + (1 << (b - 0xd4)))[1:]), pos
    if b in (0xd9, 0xda, 0xdb):
        n = int.from_bytes(take(1 << (b - 0xd9)), "big")
        return take(n).decode("utf-8", "surrogateescape"), pos
    if b in (0xdc, 0xdd):
        return seq(int.from_bytes(take(2 if b == 0xdc else 4), "big"), False), pos
    if b in (0xde, 0xdf):
        return dict_or_pairs(seq(int.from_bytes(take(2 if b == 0xde else 4), "big"), True)), pos
    raise Bad("reserved byte 0xc1")


class Map(dict):
    """A msgpack map: a dict for lookups (section 3.1) that also keeps every
    pair in order (section 8 prints them all, duplicates included)."""
    pairs = ()


def dict_or_pairs(pairs):
    m = Map()
    for k, v in pairs:
        if isinstance(k, str):
            m.setdefault(k, v)        # section 3.1: a repeated key, the first counts
    m.pairs = pairs
    return m


# Strings keep bytes that are not well-formed UTF-8 as surrogate escapes
# (U+DC80..U+DCFF); section 8 writes each such byte as \u00XX.
def json_string(s):
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif c < 0x20 or c == 0x7f:
            out.append("\\u%04x" % c)
        elif 0xdc80 <= c <= 0xdcff:
            out.append("\\u%04x" % (c - 0xdc00))
        else:
            out.append(ch)
    return "".join(out) + '"'


def json_float(v):
    """Section 8: shortest of %.15g/%.16g/%.17g that reads back, with '.' or 'e'."""
    if v != v or v in (float("inf"), float("-inf")):
        return "null"
    for prec in (15, 16, 17):
        t = "%.*g" % (prec, v)
        if float(t) == v and math.copysign(1, float(t)) == math.copysign(1, v):
            break
    return t if ("." in t or "e" in t) else t + ".0"


def json_text(o):
    """The JSON text section 8 prints for o (used for non-string map keys)."""
    if o is None:
        return "null"
    if o is True or o is False:
        return "true" if o else "false"
    if isinstance(o, Bin):
        return '"' + o.hex() + '"'
    if isinstance(o, int):
        return str(o)
    if isinstance(o, float):
        return json_float(o)
    if isinstance(o, str):
        return json_string(o)
    if isinstance(o, Map):
        return "{" + ",".join(json_key(k) + ":" + json_text(v) for k, v in o.pairs) + "}"
    return "[" + ",".join(json_text(x) for x in o) + "]"


def json_key(k):
    return json_string(k) if isinstance(k, str) else json_string(json_text(k))


def line_text(o):
    """A parsed value: bytes that were not UTF-8 become U+00XX, as JSON
    readers parse \\u00XX; every pair of a map is kept, so a repeated name
    takes the last value as JSON parsers do with the C output."""
    if isinstance(o, Bin):
        return o.hex()
    if isinstance(o, float):
        return None if o != o or o in (float("inf"), float("-inf")) else o
    if isinstance(o, str):
        return "".join(chr(ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff else c for c in o)
    if isinstance(o, list):
        return [line_text(x) for x in o]
    if isinstance(o, Map):
        d = {}
        for k, v in o.pairs:
            d[line_text(k) if isinstance(k, str) else line_text(json_text(k))] = line_text(v)
        return d
    return o


# ---- the container ----

def u16(d, p):
    return struct.unpack_from("<H", d, p)[0]


def u32(d, p):
    return struct.unpack_from("<I", d, p)[0]


def zstd_frame_size(frame):
    """Bytes of the zstd frame at the start of frame (RFC 8878 3.1.1), or None."""
    if len(frame) < 6:
        return None
    fhd = frame[4]
    single, did, fcs_flag = (fhd >> 5) & 1, (0, 1, 2, 4)[fhd & 3], fhd >> 6
    pos = 5 + (0 if single else 1) + did + (1 if single else 0, 2, 4, 8)[fcs_flag]
    while True:
        if pos + 3 > len(frame):
            return None
        bh = int.from_bytes(frame[pos:pos + 3], "little")
        last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
        if btype == 3:
            return None
        pos += 3 + (1 if btype == 1 else bsize)
        if last:
            break
    pos += 4 if (fhd >> 2) & 1 else 0
    return pos if pos <= len(frame) else None


def frame_ok(payload, ulen):
    """Section 2.2: exactly one zstd frame (not skippable, no dictionary id,
    nothing after it) whose Frame_Content_Size is ulen."""
    if frame_content_size(payload) != ulen or zstd_frame_size(payload) != len(payload):
        return False
    fhd = payload[4]
    off, n = 5 + (0 if (fhd >> 5) & 1 else 1), (0, 1, 2, 4)[fhd & 3]
    return int.from_bytes(payload[off:off + n], "little") == 0


def zstd_decompress(frame):
    r = subprocess.run(["zstd", "-q", "-d", "-c"], input=frame, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        raise Bad("zstd")
    return r.stdout


def frame_content_size(frame):
    """Frame_Content_Size of a zstd frame header (RFC 8878 3.1.1.1), or None."""
    if len(frame) < 5 or frame[:4] != b"\x28\xb5\x2f\xfd":
        return None
    fhd = frame[4]
    fcs_flag, single, did_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[did_flag]
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0 or pos + size > len(frame):
        return None
    v = int.from_bytes(frame[pos:pos + size], "little")
    return v + 256 if size == 2 else v


# One-byte MessagePack objects (fixints, nil, false, true): never a record.
SCALARS = re.compile(rb"[\x00-\x7f\xc0\xc2\xc3\xe0-\xff]+")


class Reader:
    def __init__(self, data):
        self.d = data
        self.st = dict(chunks_ok=0, chunks_bad=0, bytes_skipped=0, records=0, records_bad=0,
                       truncated=False, last_good_offset=0, bad_file_header=False)
        if len(data) < 16 or data[:8] != FILE_MAGIC:
            self.st["bad_file_header"] = True
            self.kind, self.pos = 0, 0
        else:
            self.kind, self.pos = u16(data, 10), 16
            if u16(data, 8) == 0:                # section 1: version 0 = damaged
                self.st["bad_file_header"] = True
            else:
                self.st["last_good_offset"] = 16  # section 4.2: a good header alone is valid

    def _next_magic(self, frm):
        i = self.d.find(CHUNK_MAGIC, frm)
        return len(self.d) if i < 0 else i

    def _resync(self):
        nxt = self._next_magic(self.pos + 1)
        self.st["bytes_skipped"] += nxt - self.pos
        self.pos = nxt

    def _tail(self, left):
        self.st["truncated"] = True
        self.st["bytes_skipped"] += left
        self.pos = len(self.d)

    def chunks(self):
        """Yields (offset, payload bytes) of good chunks, applying section 4.2."""
        d = self.d
        while self.pos < len(d):
            pos, left = self.pos, len(d) - self.pos
            if left < 24 or d[pos:pos + 4] != CHUNK_MAGIC:
                if left < 24 and d[pos:pos + 4] == CHUNK_MAGIC[:min(left, 4)]:
                    self._tail(left)
                    return
                self._resync()
                continue
            if u32(d, pos + 20) != zlib.crc32(d[pos:pos + 20]):
                self._resync()
                continue
            clen, ulen = u32(d, pos + 8), u32(d, pos + 12)
            if ulen > MAX_ULEN or clen > MAX_CLEN:
                self.st["chunks_bad"] += 1
                self._resync()
                continue
            total = 24 + clen + 4
            if total > left:
                if self._next_magic(pos + 1) == len(d):
                    self._tail(left)
                    return
                self.st["chunks_bad"] += 1
                self._resync()
                continue
            payload = d[pos + 24:pos + 24 + clen]
            if u32(d, pos + 16) != zlib.crc32(payload):
                self.st["chunks_bad"] += 1
                self._resync()
                continue
            try:
                if not frame_ok(payload, ulen):
                    raise Bad("not one zstd frame of ulen bytes")
                raw = zstd_decompress(payload)
                if len(raw) != ulen:
                    raise Bad("size")
            except Bad:
                self.st["chunks_bad"] += 1
                self._resync()
                continue
            self.pos = pos + total
            self.st["chunks_ok"] += 1
            self.st["last_good_offset"] = self.pos
            yield pos, raw

    def records(self):
        for off, raw in self.chunks():
            p = 0
            while p < len(raw):
                m = SCALARS.match(raw, p)   # a run of one-byte non-records: speed only
                if m:
                    self.st["records_bad"] += m.end() - p
                    p = m.end()
                    continue
                try:
                    NOBJ[0] = 0
                    obj, p = mp_decode(raw, p)
                except (Bad, RecursionError):
                    self.st["records_bad"] += 1
                    break
                if NOBJ[0] > MAX_OBJS:       # well-formed but too large: skipped alone
                    self.st["records_bad"] += 1
                    continue
                if (not isinstance(obj, list) or len(obj) < 3 or not isinstance(obj[0], int)
                        or isinstance(obj[0], bool) or not 0 <= obj[0] <= 0xffff
                        or not isinstance(obj[1], int) or isinstance(obj[1], bool)
                        or not 0 <= obj[1] <= 0xffff or not isinstance(obj[2], Map)):
                    self.st["records_bad"] += 1
                    continue
                self.st["records"] += 1
                yield off, self.st["chunks_ok"] - 1, obj[0], obj[1], obj[2]


def backward(data):
    """Chunk starts found from the end through the trailers (section 2.3)."""
    out, end = [], len(data)
    while end > 16:
        n = u32(data, end - 4)
        start = end - n
        if n < 28 or start < 16 or data[start:start + 4] != CHUNK_MAGIC:
            break
        if u32(data, start + 20) != zlib.crc32(data[start:start + 20]):
            break
        out.append(start)
        end = start
    return sorted(out)


# ---- the chunk index (section 2.6) ----

TIME_KEYS = ("t0_ns", "t1_ns", "t_ns")


def is_uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def scanned_spans(data):
    """[offset, t_lo, t_hi] of every good chunk, times from its records."""
    r, spans = Reader(data), {}
    for off, raw in r.chunks():
        spans.setdefault(off, [off, 0, 0])
    r = Reader(data)
    for off, chunk, t, v, body in r.records():
        times = [body[k] for k in TIME_KEYS if is_uint(body.get(k)) and body[k] > 0]
        if times:
            s = spans[off]
            s[1] = min(times + ([s[1]] if s[1] else []))
            s[2] = max(times + [s[2]])
    return [spans[k] for k in sorted(spans)]


def undelta(col, n):
    if not isinstance(col, list) or len(col) != n:
        raise Bad("column")
    out, acc = [], 0
    for i, x in enumerate(col):
        if not is_uint(x) if i == 0 else not isinstance(x, int) or isinstance(x, bool):
            raise Bad("value")
        acc = x if i == 0 else (acc + x) % 2**64
        out.append(acc)
    return out


def stored_index(data):
    """The INDEX record of the last chunk, checked as section 2.6 says."""
    if len(data) < 16 + 2 * 33 or data[:8] != FILE_MAGIC or u16(data, 8) == 0:
        return None
    total = u32(data, len(data) - 4)
    at = len(data) - total
    if total < 33 or at < 16 + 33 or data[at:at + 4] != CHUNK_MAGIC:
        return None
    if u32(data, at + 20) != zlib.crc32(data[at:at + 20]) or u16(data, at + 4) != 7:
        return None
    clen, ulen = u32(data, at + 8), u32(data, at + 12)
    payload = data[at + 24:at + 24 + clen]
    try:
        if (24 + clen + 4 != total or ulen > 128 << 20 or u32(data, at + 16) != zlib.crc32(payload)
                or not frame_ok(payload, ulen)):
            raise Bad("chunk")
        raw = zstd_decompress(payload)
        NOBJ[0] = 0
        rec, end = mp_decode(raw, 0)
        if (len(raw) != ulen or end != len(raw) or NOBJ[0] > MAX_OBJS or not isinstance(rec, list)
                or len(rec) < 3 or rec[0] != 7 or not is_uint(rec[1]) or rec[1] > 0xffff
                or not isinstance(rec[2], Map)):
            raise Bad("record")
        b = rec[2]
        n = b.get("n")
        if not is_uint(n) or b.get("end") != at or n > 4 << 20 or n > (at - 16) // 33:
            raise Bad("n")
        cols = [undelta(b.get(k), n) for k in ("off_d", "lo_d", "hi_d")]
    except (Bad, RecursionError):
        return None
    spans = [list(e) for e in zip(*cols)]
    for i, (off, lo, hi) in enumerate(spans):
        nxt = spans[i + 1][0] if i + 1 < n else at
        if (i == 0 and off != 16) or nxt < off or nxt - off < 33:
            return None
        if (lo or hi) and (lo == 0 or lo > hi):
            return None
        # the chunk is there: magic, header CRC, length up to the next one
        if (data[off:off + 4] != CHUNK_MAGIC or u32(data, off + 20) != zlib.crc32(data[off:off + 20])
                or 24 + u32(data, off + 8) + 4 != nxt - off):
            return None
    return spans


# ---- the latency sketch (section 5) ----

def sk_bounds(idx):
    if idx < 128:
        return idx, idx
    s = idx // 64 - 1
    lo = (64 + idx % 64) << s
    return lo, lo + (1 << s) - 1


def sk_quantile(sk, q):
    b = sk.get("b") or []
    counts = {}
    for i in range(0, len(b) - 1, 2):
        if isinstance(b[i], int) and 0 <= b[i] < 3776 and isinstance(b[i + 1], int) and b[i + 1] > 0:
            counts[b[i]] = counts.get(b[i], 0) + b[i + 1]
    n = sum(counts.values())
    if n == 0:
        return 0
    lo_all, hi_all = sk_bounds(min(counts))[0], sk_bounds(max(counts))[1]
    mn, mx = sk.get("min"), sk.get("max")
    if not (isinstance(mn, int) and isinstance(mx, int) and lo_all <= mn <= mx <= hi_all):
        mn, mx = lo_all, hi_all
    if q <= 0:
        return mn
    if q >= 1:
        return mx
    rank = max(1, math.ceil(q * n))
    acc = 0
    for idx in sorted(counts):
        acc += counts[idx]
        if acc >= rank:
            lo, hi = sk_bounds(idx)
            return min(max(lo + (hi - lo) // 2, mn), mx)
    return mx


def quantiles(r):
    for off, chunk, t, v, body in r.records():
        sks = []
        if t == 67 and isinstance(body.get("sketch"), dict):
            sks.append(({"table": body.get("table"), "key": body.get("key"),
                         "metric": body.get("metric")}, body["sketch"]))
        if t == 16 and isinstance(body.get("lat"), list):
            conns = body.get("conn") if isinstance(body.get("conn"), list) else []
            for i, sk in enumerate(body["lat"]):
                if isinstance(sk, dict):
                    sks.append(({"conn": conns[i] if i < len(conns) else None, "chunk": chunk}, sk))
        for ident, sk in sks:
            out = dict(type=NAMES.get(t), **ident)
            out.update({f"p{int(q * 100)}": sk_quantile(sk, q) for q in (0.5, 0.9, 0.99)})
            print(json.dumps(out))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("dump", "stats", "backward", "quantiles", "index"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    if sys.argv[1] == "backward":
        print(json.dumps(backward(data)))
        return 0
    if sys.argv[1] == "index":
        print(json.dumps({"stored": stored_index(data), "scanned": scanned_spans(data)}))
        return 0
    r = Reader(data)
    if sys.argv[1] == "quantiles":
        quantiles(r)
        return 0
    for off, chunk, t, v, body in r.records():
        if sys.argv[1] == "dump":
            line = {"type": NAMES.get(t), "type_id": t, "version": v, "chunk": chunk,
                    "offset": off, "body": line_text(body)}
            print(json.dumps(line, separators=(",", ":"), ensure_ascii=False))
    if sys.argv[1] == "stats":
        print(json.dumps(r.st))
    return 0


if __name__ == "__main__":
    sys.exit(main())
