#!/usr/bin/env python3
"""The BPF programs a recorder holds, with their kernel.bpf_stats figures.

recprogs.py PID...        one line per program: name run_cnt run_time_ns
recprogs.py --sum PID...  one line: total run_time_ns of those programs, the
                          processes' own CPU (utime+stime) in clock ticks and
                          the programs' total run count

Programs are found through the processes' file descriptors (a recorder's
programs, not those of anything else on the machine); one shared by several
fds or processes counts once. Needs kernel.bpf_stats_enabled=1 for non-zero
figures."""
import json
import os
import subprocess
import sys


def prog_names():
    try:
        out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True).stdout
        return {p["id"]: p.get("name", "?") for p in json.loads(out)}
    except Exception:
        return {}


def progs(pids):
    seen = {}
    for pid in pids:
        d = "/proc/%s/fd" % pid
        try:
            fds = os.listdir(d)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(os.path.join(d, fd)) != "anon_inode:bpf-prog":
                    continue
                with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                    info = dict(l.split(":", 1) for l in f if ":" in l)
            except OSError:
                continue
            seen[int(info.get("prog_id", "0"))] = (int(info.get("run_cnt", "0")), int(info.get("run_time_ns", "0")))
    return seen


def cpu_ticks(pids):
    t = 0
    for pid in pids:
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            t += int(fields[11]) + int(fields[12])    # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return t


def main(argv):
    if argv and argv[0] == "--sum":
        pids = argv[1:]
        p = progs(pids).values()
        print(sum(ns for _, ns in p), cpu_ticks(pids), sum(cnt for cnt, _ in p))
        return
    names = prog_names()
    for pid_, (cnt, ns) in sorted(progs(argv).items()):
        if cnt:
            print(names.get(pid_, "prog%d" % pid_), cnt, ns)


main(sys.argv[1:])
