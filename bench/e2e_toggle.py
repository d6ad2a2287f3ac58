#!/usr/bin/env python3
"""Analysis of bench/e2e_toggle.sh: LABEL FLIPS BYTES GUARD_MS.
FLIPS: "mono_ns state" lines (state 1: programs attached from then on);
BYTES: "mono_ns tx_bytes" samples. Per window between two switches, cut
by GUARD_MS at both ends, the rate from the samples inside it (last minus
first over their time); adjacent (off, on) windows make a pair. Prints
the pooled loss 1 - sum(on) / sum(off) over the pairs with a 95 %
bootstrap interval over pairs, the median of the pairs' own losses, and
how much the windows' rates vary (the host's drift the pairing removes)."""
import bisect
import random
import statistics as st
import sys

label, flips_p, bytes_p, guard = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) * 1000000
flips = [tuple(int(x) for x in l.split()) for l in open(flips_p) if l.strip()]
samp = [tuple(int(x) for x in l.split()) for l in open(bytes_p) if len(l.split()) == 2]
ts = [t for t, _ in samp]
wins = []   # (state, rate bytes/s)
for (t0, st0), (t1, _) in zip(flips, flips[1:]):
    a, b = t0 + guard, t1 - guard
    i, j = bisect.bisect_left(ts, a), bisect.bisect_right(ts, b) - 1
    if j - i < 5:
        continue
    wins.append((st0, (samp[j][1] - samp[i][1]) * 1e9 / (samp[j][0] - samp[i][0])))
# windows before and after the wrk run (the recorder starts first) carry
# no traffic: out
if wins:
    med = st.median(r for _, r in wins)
    wins = [(s, r) for s, r in wins if r > 0.2 * med]
pairs = []
k = 0
while k + 1 < len(wins):
    (s0, r0), (s1, r1) = wins[k], wins[k + 1]
    if s0 != s1:
        pairs.append((r1, r0) if s1 == 1 else (r0, r1))   # (on, off)
        k += 2
    else:
        k += 1
if len(pairs) < 4 or min(p[1] for p in pairs) <= 0:
    print("%s: too few windows (%d pairs)" % (label, len(pairs)))
    sys.exit(0)


def loss(w):
    return 100 * (1 - sum(wi * on for wi, (on, _) in zip(w, pairs)) / sum(wi * off for wi, (_, off) in zip(w, pairs)))


rng = random.Random(24)
n = len(pairs)
reps = []
for _ in range(4000):
    w = [0] * n
    for _ in range(n):
        w[rng.randrange(n)] += 1
    reps.append(loss(w))
reps.sort()
own = sorted(100 * (1 - on / off) for on, off in pairs)
offs = [off for _, off in pairs]
print("%-6s loss %.2f %% [%.2f, %.2f] (95 %%, bootstrap over %d pairs of windows); median pair %.2f %%;"
      " off windows %.1f MB/s sent by nginx (median), CV %.1f %% between windows" % (
          label, loss([1] * n), reps[100], reps[3899], n, st.median(own),
          st.median(offs) / 1e6, 100 * st.pstdev(offs) / st.mean(offs)))
