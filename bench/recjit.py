#!/usr/bin/env python3
"""recjit.py PID...: where the JIT put the BPF programs these processes
hold, one line per function: start end (hex, end exclusive) name.

A program's tag is a hash of its instructions: two recorders of the same
build load programs of the same tags, so a profile's bpf_prog_<tag>_NAME
frames cannot tell this recorder's from another's. Their addresses can:
bench/recpaced_own.awk takes these ranges. Programs are found through the
processes' file descriptors (fdinfo prog_id), their JIT'ed functions (a
program with BPF-to-BPF calls has several) through bpf(BPF_OBJ_GET_INFO_BY_FD).
Needs root; a program it cannot read is left out."""
import ctypes
import os
import platform
import struct
import sys

SYS_BPF = {"x86_64": 321, "aarch64": 280}.get(platform.machine(), 321)
BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD = 13, 15
INFO_LEN = 232                      # sizeof(struct bpf_prog_info), linux/bpf.h
OFF_NAME, OFF_NKSYMS, OFF_NLENS, OFF_KSYMS, OFF_LENS = 64, 104, 108, 112, 120

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    return libc.syscall(SYS_BPF, cmd, buf, 128)


def prog_ids(pid):
    ids, d = set(), "/proc/%s/fd" % pid
    try:
        fds = os.listdir(d)
    except OSError:
        return ids
    for fd in fds:
        try:
            if os.readlink(os.path.join(d, fd)) != "anon_inode:bpf-prog":
                continue
            with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            continue
    return ids


def info(fd, ksyms=None, lens=None):
    buf = ctypes.create_string_buffer(INFO_LEN)
    if ksyms is not None:
        struct.pack_into("IIQQ", buf, OFF_NKSYMS, len(ksyms) // 8, len(lens) // 4,
                         ctypes.addressof(ksyms), ctypes.addressof(lens))
    if bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("IIQ", fd, INFO_LEN, ctypes.addressof(buf))) < 0:
        return None
    return buf


def ranges(prog_id):
    fd = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("III", prog_id, 0, 0))
    if fd < 0:
        return []
    try:
        first = info(fd)
        if first is None:
            return []
        nk, nl = struct.unpack_from("II", first, OFF_NKSYMS)
        name = first.raw[OFF_NAME:OFF_NAME + 16].split(b"\0")[0].decode()
        if not nk or nk != nl:
            return []
        ksyms = ctypes.create_string_buffer(8 * nk)
        lens = ctypes.create_string_buffer(4 * nl)
        if info(fd, ksyms, lens) is None:
            return []
        return [(a, a + n, name) for a, n in zip(struct.unpack("%dQ" % nk, ksyms.raw),
                                                  struct.unpack("%dI" % nl, lens.raw))]
    finally:
        os.close(fd)


def main(pids):
    ids = set()
    for pid in pids:
        ids |= prog_ids(pid)
    for i in sorted(ids):
        for lo, hi, name in ranges(i):
            print("%x %x %s" % (lo, hi, name))


main(sys.argv[1:])
