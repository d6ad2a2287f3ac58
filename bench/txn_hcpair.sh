#!/bin/bash
# Paired differences of bench/hookcost.sh's modes, per repetition: on a
# shared, loaded machine the medians of two modes move together with the
# load of the minute, and the difference within one repetition (modes run
# back to back) resolves more than the difference of the medians.
# Usage: bench/txn_hcpair.sh RAW BASE MODE... where RAW is hookcost's
# HC_RAW file (one row per mode, phase, program and repetition, in run
# order) and BASE and MODE are mode labels of that run. Prints, per phase
# and hub program, both medians and the median of MODE - BASE over the
# repetitions [min, max] with how many repetitions read MODE lower.
# A program missing from some repetition's rows cannot be paired: it is
# left out with a message.
set -u
[ $# -ge 3 ] || { echo "usage: $0 HC_RAW BASE MODE..." >&2; exit 2; }
python3 - "$@" <<'PY'
import statistics as st, sys
raw, base, modes = sys.argv[1], sys.argv[2], sys.argv[3:]
rows, phases = {}, []
for line in open(raw):
    f = line.split()
    if len(f) != 5:
        continue
    label, ph, prog, _, ns = f
    rows.setdefault((label, ph, prog), []).append(float(ns))
    if ph not in phases:
        phases.append(ph)
for ph in phases:
    for prog in ("hub_recv", "hub_send"):
        a = rows.get((base, ph, prog))
        if not a:
            continue
        for m in modes:
            b = rows.get((m, ph, prog))
            if not b:
                continue
            if len(b) != len(a):
                print("%s %s %s: %d rows against %d of %s: not paired" % (m, ph, prog, len(b), len(a), base))
                continue
            d = [y - x for x, y in zip(a, b)]
            print("%-6s - %-6s %-6s %-9s %6.0f %6.0f  diff %+5.0f [%+.0f, %+.0f]  lower %d/%d" % (
                m, base, ph, prog, st.median(a), st.median(b), st.median(d), min(d), max(d),
                sum(x < 0 for x in d), len(d)))
PY
