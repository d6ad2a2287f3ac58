#!/usr/bin/env python3
"""Scores `npanalyze patterns` on the public DeLag traces (ICPE'20 §4.3 rule).

For every file the ground-truth column `anomaly` is stripped into a temporary
copy that alone reaches the miner; the labels are kept here to score:
  * interval given to the miner: [min, max] latency of the labelled requests
    (closed: HI = max + 0.001 ms, since --interval is [LO, HI));
  * for each injected problem the distinct output pattern (cluster of
    requests) that matches it best, over all assignments of distinct patterns
    to problems; G = requests of the chosen clusters carrying their problem's
    label, precision = G / sum of the chosen clusters' sizes, recall = G / all
    labelled requests, F = harmonic mean.
With --auto, the default mode also runs without --interval: the share of the
labelled requests inside the interval it chose, and F on that run.

Prints per mode and system: mean / median F, share of files with F >= 0.9,
wall seconds per file and per 10 000 requests, CPU seconds (user + sys of
the process) per 10 000 requests (one process per file, --threads 1 unless
--threads says otherwise), and the load average.

usage: delag_score.py --npanalyze BIN --data DIR|TAR.zst [--modes set,icpe,...]
                      [--systems eshopper,trainticket] [--step K] [--auto] [--threads N]
                      [--extra 'OPTIONS'] [--csv-out F] [--verbose]
Exit status: 0, 1 when a run fails, 2 on a usage error."""
import argparse, csv, itertools, os, re, resource, statistics, subprocess, sys, tarfile, tempfile, time

def score(lab, clusters):
    pats = sorted({a for a in lab if a})
    npos = sum(1 for a in lab if a)
    clusters = [set(c) for c in clusters if c]
    best = 0.0
    k = min(len(pats), len(clusters))
    # fewer clusters than problems: any k of the problems may be the matched ones
    pairs = ((probs, chosen) for probs in itertools.combinations(pats, k)
             for chosen in itertools.permutations(range(len(clusters)), k))
    for probs, chosen in pairs:
        g = sum(sum(1 for i in clusters[c] if lab[i] == probs[j]) for j, c in enumerate(chosen))
        size = sum(len(clusters[c]) for c in chosen)
        if g:
            p, r = g / size, g / npos
            best = max(best, 2 * p * r / (p + r))
    return best

def strip(src, dst):
    """Writes src without its anomaly column to dst; returns (labels, latencies)."""
    with open(src, newline='') as f:
        rows = list(csv.reader(f))
    h = rows[0]
    k, li = h.index('anomaly'), h.index('Latency')
    with open(dst, 'w', newline='') as o:
        w = csv.writer(o)
        for r in rows:
            w.writerow(r[:k] + r[k + 1:])
    return [int(r[k]) for r in rows[1:]], [float(r[li]) for r in rows[1:]]

def run(args, inp, mode, interval):
    cmd = [args.npanalyze, 'patterns', '--csv', inp, '--ids', '0', '--threads', str(args.threads)]
    if mode != 'default':
        cmd += ['--mode', mode]
    cmd += args.extra.split()
    if interval:
        cmd += ['--interval', '%.3f:%.3f' % interval]
    t0, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    dt, r1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode:
        return None, None, (dt, cpu), p.stderr.strip()
    clusters = [[int(x) for x in l.split()[1:]] for l in p.stdout.splitlines()
                if l.strip().startswith('requests:')]
    m = re.search(r'I = \[([0-9.]+) ms, ([0-9.]+) ms\)', p.stdout)
    iv = (float(m.group(1)), float(m.group(2))) if m else None
    return clusters, iv, (dt, cpu), ''

def summary(fs):
    return (statistics.mean(fs), statistics.median(fs), sum(1 for f in fs if f >= 0.9) / len(fs))

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--npanalyze', required=True)
    ap.add_argument('--data', required=True)
    ap.add_argument('--modes', default='default')
    ap.add_argument('--systems', default='eshopper,trainticket')
    ap.add_argument('--step', type=int, default=1, help='every K-th file only')
    ap.add_argument('--auto', action='store_true')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--extra', default='', help='more npanalyze patterns options, e.g. "--generations 2000"')
    ap.add_argument('--csv-out')
    ap.add_argument('--verbose', action='store_true')
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='np-delag.')
    data = args.data
    if os.path.isfile(data):
        with open(os.devnull, 'w') as null:
            subprocess.run(['tar', '--zstd', '-xf', data, '-C', tmp], check=True, stderr=null)
        data = tmp
    modes = args.modes.split(',')
    res = {}           # (mode, system) -> list of (F, seconds, nrows)
    auto = {}          # system -> list of (coverage, F)
    rows_out = []
    failed = 0
    for system in args.systems.split(','):
        files = sorted(f for f in os.listdir(os.path.join(data, system)) if f.endswith('.csv'))
        for name in files[::args.step]:
            inp = os.path.join(tmp, 'in.csv')
            lab, lat = strip(os.path.join(data, system, name), inp)
            ll = [x for x, a in zip(lat, lab) if a]
            interval = (min(ll), max(ll) + 0.001)
            for mode in modes:
                cl, _, dt, err = run(args, inp, mode, interval)
                if cl is None:
                    print(f'{system}/{name} {mode}: failed: {err}', file=sys.stderr)
                    failed += 1
                    cl = []
                f = score(lab, cl)
                res.setdefault((mode, system), []).append((f, dt[0], len(lab), dt[1]))
                rows_out.append((system, name, mode, 'given', f'{f:.4f}', f'{dt[0]:.3f}', ''))
                if args.verbose:
                    print(f'{system}/{name} {mode:8s} F {f:.3f} {dt[0]:.3f} s', file=sys.stderr)
            if args.auto:
                cl, iv, dt, err = run(args, inp, modes[0], None)
                cov, f = 0.0, 0.0
                if cl is None:
                    print(f'{system}/{name} auto: failed: {err}', file=sys.stderr)
                else:
                    f = score(lab, cl)
                    cov = sum(1 for x in ll if iv and iv[0] <= x < iv[1]) / len(ll)
                auto.setdefault(system, []).append((cov, f))
                rows_out.append((system, name, modes[0], 'auto', f'{f:.4f}', f'{dt[0]:.3f}', f'{cov:.4f}'))
                if args.verbose:
                    print(f'{system}/{name} auto     F {f:.3f} coverage {cov:.3f} I {iv}', file=sys.stderr)
    print(f'load average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs); '
          'wall time depends on it, CPU time (user + sys of the process) much less')
    print('| mode | system | files | mean F | median F | F ≥ 0.9 | wall s / file | wall s / 10k requests | CPU s / 10k requests |')
    print('|---|---|---|---|---|---|---|---|---|')
    for (mode, system), v in res.items():
        mean, med, share = summary([x[0] for x in v])
        secs = statistics.mean(x[1] for x in v)
        per10k = statistics.mean(x[1] * 10000 / x[2] for x in v)
        cpu10k = statistics.mean(x[3] * 10000 / x[2] for x in v)
        print(f'| {mode} | {system} | {len(v)} | {mean:.3f} | {med:.3f} | {share:.0%} | {secs:.3f} | {per10k:.3f} | {cpu10k:.3f} |')
    if auto:
        print()
        print(f'automatic interval ({modes[0]} mode, no --interval): share of the labelled requests inside I')
        print('| system | files | min coverage | mean coverage | files ≥ 90 % | mean F | median F | F ≥ 0.9 |')
        print('|---|---|---|---|---|---|---|---|')
        for system, v in auto.items():
            cov = [x[0] for x in v]
            mean, med, share = summary([x[1] for x in v])
            print(f'| {system} | {len(v)} | {min(cov):.3f} | {statistics.mean(cov):.3f} | '
                  f'{sum(1 for c in cov if c >= 0.9) / len(cov):.0%} | {mean:.3f} | {med:.3f} | {share:.0%} |')
    if args.csv_out:
        with open(args.csv_out, 'w', newline='') as o:
            w = csv.writer(o)
            w.writerow(('system', 'file', 'mode', 'interval', 'f', 'seconds', 'coverage'))
            w.writerows(rows_out)
    subprocess.run(['rm', '-rf', tmp])
    return 1 if failed else 0

if __name__ == '__main__':
    sys.exit(main())
