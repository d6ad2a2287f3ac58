#!/usr/bin/env python3
"""Looks at the DeLag traces themselves (labels used, no miner run): why a
latency-sub-interval method (--mode icpe) scores lower on TrainTicket.

Per system, means over the files:
  * unlabelled share of I: requests with anomaly = 0 among those with latency
    in I = [min, max] of the labelled ones (the interval the miner is given;
    ICPE'20 counts every request of I as one to explain);
  * signature matches: share of the unlabelled requests, inside and outside
    I, slow on *every* RPC of an injected problem's signature (its requests'
    median >= nominal median + max(5 sigma, 5 ms); "slow" = > nominal median
    + 3 sigma; sigma = 1.4826 MAD of the unlabelled requests, floored at 1 ms);
  * one-cut bound: the best F any method whose clusters are latency
    sub-intervals could reach with perfect patterns and the best single cut
    (ICPE'20 §4.3 scoring).
With --drop-nominal-in-i DIR it also writes a copy of the files without the
unlabelled requests inside I (to rerun a mode on: what those requests cost).

usage: delag_diag.py --data DIR|TAR.zst [--step K] [--drop-nominal-in-i OUTDIR]
Exit status: 0, 2 on a usage error."""
import argparse, csv, os, statistics as st, subprocess, sys, tempfile


def robust(v):
    m = st.median(v)
    return m, max(1.4826 * st.median([abs(x - m) for x in v]), 1.0)


def one_cut_bound(d):
    v = sorted((r[0], int(r[-1])) for r in d if r[-1])
    n = len(v)
    na = sum(1 for _, a in v if a == 1)
    nb = n - na
    best = max(na, nb)
    ca = cb = 0
    for _, a in v:
        ca += a == 1
        cb += a == 2
        best = max(best, ca + (nb - cb), cb + (na - ca))
    r = best / n
    return 2 * r / (1 + r)


def diag(d):
    lab = [r for r in d if r[-1]]
    lo, hi = min(r[0] for r in lab), max(r[0] for r in lab)
    nom = [r for r in d if not r[-1]]
    ncol = len(d[0]) - 2
    stats = [robust([r[j] for r in nom]) for j in range(1, ncol + 1)]
    sig = []
    for a in (1, 2):
        g = [r for r in d if r[-1] == a]
        s = [j for j in range(1, ncol + 1)
             if st.median(r[j] for r in g) > stats[j - 1][0] + max(5 * stats[j - 1][1], 5)]
        if s:
            sig.append(s)

    def match(r):
        return any(all(r[j] > stats[j - 1][0] + 3 * stats[j - 1][1] for j in s) for s in sig)
    inside = [r for r in nom if lo <= r[0] <= hi]
    outside = [r for r in nom if not lo <= r[0] <= hi]
    return (len(inside) / (len(inside) + len(lab)),
            sum(map(match, inside)) / max(len(inside), 1),
            sum(map(match, outside)) / max(len(outside), 1),
            one_cut_bound(d), (lo, hi))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--data', required=True)
    ap.add_argument('--step', type=int, default=1)
    ap.add_argument('--drop-nominal-in-i')
    args = ap.parse_args()
    data = args.data
    tmp = None
    if os.path.isfile(data):
        tmp = tempfile.mkdtemp(prefix='np-delag-diag.')
        subprocess.run(['tar', '--zstd', '-xf', data, '-C', tmp], check=True)
        data = tmp
    print('| system | files | unlabelled share of I | unlabelled in I matching a signature | '
          'unlabelled outside I matching | one-cut bound F |')
    print('|---|---|---|---|---|---|')
    for system in ('eshopper', 'trainticket'):
        files = sorted(f for f in os.listdir(os.path.join(data, system)) if f.endswith('.csv'))[::args.step]
        res = []
        for name in files:
            with open(os.path.join(data, system, name), newline='') as f:
                rows = list(csv.reader(f))
            d = [[float(x) for x in r] for r in rows[1:]]
            res.append(diag(d))
            if args.drop_nominal_in_i:
                lo, hi = res[-1][4]
                os.makedirs(os.path.join(args.drop_nominal_in_i, system), exist_ok=True)
                with open(os.path.join(args.drop_nominal_in_i, system, name), 'w', newline='') as o:
                    csv.writer(o).writerows([rows[0]] + [r for r, x in zip(rows[1:], d)
                                                         if x[-1] or not lo <= x[0] <= hi])
        m = [st.mean(x[k] for x in res) for k in range(4)]
        print(f'| {system} | {len(res)} | {m[0]:.3f} | {m[1]:.3f} | {m[2]:.3f} | {m[3]:.3f} |')
    if tmp:
        subprocess.run(['rm', '-rf', tmp])
    return 0


if __name__ == '__main__':
    sys.exit(main())
