#!/bin/bash
# Knock-out builds of flows' send/recv member, for bench/txn_abcall.sh
# (issue 24, /work/notes/j27d.md): each is this tree at HEAD with one edit,
# built in a scratch copy, its nprec copied to OUT/PREFIX_NAME/nprec.
#   ko6  flows not attached to sock_send/recv_length (hub = the others)
#   ko1  the member returns after its family check (before the slot lookup)
#   ko2  ... after the slot lookup (no sample, no counters)
#   ko3  no 1-in-FLOWS_SAMPLE_EVERY sample (lookup + atomic adds)
#   ko4  plain adds instead of atomic ones (measurement only: not exact)
#   s1   a sample on every call
# Measurement builds only: their output is wrong by design.
# Usage: bash bench/flows_knockouts.sh [NAME ...]   (default: all)
# Env: OUT (/work/builds), PREFIX (flowsko), DRY=1 (apply the edits, no build).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/work/builds} PREFIX=${PREFIX:-flowsko}
NAMES=("$@"); [ ${#NAMES[@]} -gt 0 ] || NAMES=(ko6 ko1 ko2 ko3 ko4 s1)
SCR=$(mktemp -d /tmp/np-flowsko.XXXXXX)
trap 'rm -rf "$SCR"' EXIT
# edit NAME DIR: the knock-out's edit in the copy at DIR (fails when the
# code it edits has changed, rather than building something else)
edit() {
	python3 - "$1" "$2" <<'PY'
import sys
name, d = sys.argv[1], sys.argv[2]
def sub(path, old, new):
    p = d + "/" + path
    s = open(p).read()
    if old not in s:
        sys.exit("flows_knockouts: %s: the code %s edits is not in %s" % (name, name, path))
    open(p, "w").write(s.replace(old, new, 1))
look = "\tstruct rc_flow_meta *m = flow_get(sk, btf, true, true, &slot);\n\tif (!m)\n\t\treturn 0;\n"
sample = "\tif ((m->tx_calls + m->rx_calls) % FLOWS_SAMPLE_EVERY == 0)\n"
if name == "ko6":
    for tp in ("send", "recv"):
        sub("record/families/flows.c", '{ .name = "sock_%s_length",' % tp, '{ .name = "sock_%s_length_ko",' % tp)
    sub("record/families/flows.c", ".raw_prog = s->progs.flows_send_raw, .required = true,", ".raw_prog = s->progs.flows_send_raw, .required = false,")
    sub("record/families/flows.c", ".raw_prog = s->progs.flows_recv_raw, .required = true,", ".raw_prog = s->progs.flows_recv_raw, .required = false,")
elif name == "ko1":
    sub("bpf/flows.bpf.c", look, "\treturn 0;\n" + look)
elif name == "ko2":
    sub("bpf/flows.bpf.c", look, look + "\treturn 0;\n")
elif name == "ko3":
    sub("bpf/flows.bpf.c", sample, "\tif (0)\n")
elif name == "ko4":
    for f in ("tx_bytes, ret", "tx_calls, 1", "rx_bytes, ret", "rx_calls, 1"):
        a, b = f.split(", ")
        sub("bpf/flows.bpf.c", "__sync_fetch_and_add(&m->%s, %s);" % (a, b), "m->%s += %s;" % (a, b))
elif name == "s1":
    sub("bpf/flows.h", "#define FLOWS_SAMPLE_EVERY 16", "#define FLOWS_SAMPLE_EVERY 1")
else:
    sys.exit("flows_knockouts: unknown build " + name)
PY
}
for n in "${NAMES[@]}"; do
	rm -rf "$SCR/src"; mkdir "$SCR/src"
	git -C "$ROOT" archive HEAD | tar -x -C "$SCR/src"
	edit "$n" "$SCR/src"
	[ -n "${DRY:-}" ] && { echo "flows_knockouts: $n: edit applies"; continue; }
	make -C "$SCR/src" -j2 build/nprec >"$SCR/$n.log" 2>&1 || { tail -20 "$SCR/$n.log" >&2; exit 1; }
	mkdir -p "$OUT/${PREFIX}_$n"
	cp "$SCR/src/build/nprec" "$OUT/${PREFIX}_$n/nprec"
	echo "flows_knockouts: $OUT/${PREFIX}_$n/nprec"
done
