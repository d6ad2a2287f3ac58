#!/usr/bin/env python3
"""Include-graph check: lists the #include edges that point up the layers.

The layers: common/ is the ground floor (formats, codecs) that all three
tools share; record/ (the recorder) sits on it; bpf/ (the kernel side) shares
only wire definitions with user space; analyze/ and report/ (the offline
tools, libbpf-free) sit on common/ and never reach into the recorder or the
kernel side. A folder may include its own files and any folder not listed
for it in UPWARD (a neutral wire-header folder, say). Every "..." include is
resolved as the compiler does (the including file's folder, then the -I
folders of the Makefile); a <bpf/...> include that is not in the tree is
libbpf and counts as bpf/.

Prints one line per offending edge (FILE:LINE: FROM -> TO (included as ...))
and a closing "incgraph: N upward edges"; exits 1 when there is any.
Usage: incgraph.py [-IDIR]... [ROOT]   (the Makefile passes its INCLUDES;
ROOT defaults to the checkout of this script)
"""
import os
import re
import sys

UPWARD = {
    'common': ('bpf', 'record', 'analyze', 'report'),
    'analyze': ('record', 'bpf'),
    'report': ('record', 'bpf'),
    'bpf': ('common', 'record', 'analyze', 'report'),
}
# Headers every layer may include: common/npwire.h is the BPF-safe wire header
# (hook ids, packet-ID layout, txn roles, sketch index) bpf/ shares with the rest.
NEUTRAL = ('common/npwire.h',)
INCLUDE_DIRS = ['common', 'record', 'analyze', 'report', 'bpf']  # without -I: the Makefile's
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer(root, path):
    """Top folder of path relative to root, or None outside the tree."""
    rel = os.path.relpath(path, root)
    return None if rel.startswith('..') else rel.split(os.sep)[0]


def resolve(root, src, quote, name):
    """The file an include names, or None (system header)."""
    dirs = [os.path.dirname(src)] if quote == '"' else []
    dirs += [os.path.join(root, d) for d in INCLUDE_DIRS]
    for d in dirs:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return cand
    return None


def sources(root):
    for top in sorted(UPWARD):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield os.path.join(dirpath, f)


def upward_edges(root):
    for src in sources(root):
        frm = layer(root, src)
        banned = UPWARD.get(frm, ())
        if not banned:
            continue
        with open(src, errors='replace') as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                quote, name = m.groups()
                target = resolve(root, src, quote, name)
                if target:
                    to, shown = layer(root, target), os.path.relpath(target, root)
                elif name.startswith('bpf/'):
                    to, shown = 'bpf', '<%s> (libbpf)' % name
                else:
                    continue
                if to in banned and shown not in NEUTRAL:
                    yield '%s:%d: %s -> %s: %s' % (os.path.relpath(src, root), lineno,
                                                   frm, to, shown)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    incs = [a[2:] for a in sys.argv[1:] if a.startswith('-I')]
    rest = [a for a in sys.argv[1:] if not a.startswith('-I')]
    if incs:
        INCLUDE_DIRS[:] = incs
    root = os.path.abspath(rest[0] if rest else os.path.join(here, '..', '..'))
    edges = list(upward_edges(root))
    for e in edges:
        print(e)
    print('incgraph: %d upward edges' % len(edges))
    return 1 if edges else 0


if __name__ == '__main__':
    sys.exit(main())
