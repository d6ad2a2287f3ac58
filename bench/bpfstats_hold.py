#!/usr/bin/env python3
"""bpfstats_hold.py READYFILE: switch BPF run-time statistics on through a
BPF_ENABLE_STATS file descriptor and hold it until killed (touches
READYFILE once on). kernel.bpf_stats_enabled is not touched, so a
concurrent benchmark that set it keeps its setting; the statistics add two
clock reads to every program run while any such fd is open."""
import ctypes
import signal
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("I", 0), 16)   # BPF_STATS_RUN_TIME
fd = libc.syscall(321, 32, attr, 16)                           # bpf(BPF_ENABLE_STATS), x86-64
if fd < 0:
    sys.exit("BPF_ENABLE_STATS: errno %d" % ctypes.get_errno())
open(sys.argv[1], "w").close()
signal.pause()
