#!/bin/sh
# bpfdeps.sh CC INCLUDES -- SRC...: what each C source needs from the BPF
# toolchain, for the Makefile. Prints one word per need:
#   SRC:NAME.skel.h   SRC includes the skeleton build/NAME.skel.h
#   SRC:libbpf        SRC needs libbpf to compile or to link
# One preprocessor pass (-M -MG -nostdinc: every header is listed, found or
# not, and no system directory is searched) follows the project's own
# headers, so a skeleton or libbpf header included through another header
# counts. A <bpf/...> header that is not in the tree is libbpf's. To link,
# SRC needs what it calls: a header foo.h is taken to be implemented by
# foo.c next to it, so SRC needs libbpf also when a header it includes is
# implemented by a source that needs libbpf (transitively, among the SRCs).
# Skeletons are not looked for in build/, so the answer is the same before
# and after they are generated.
cc=$1; shift
incs=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do incs="$incs $1"; shift; done
shift
[ $# -eq 0 ] && exit 0
# shellcheck disable=SC2086
"$cc" -M -MG -nostdinc $incs "$@" 2>/dev/null |
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
awk '
function exists(f,   line, r) { r = (getline line < f) >= 0; close(f); return r }
{
	src = $2; srcs[src] = 1
	for (i = 3; i <= NF; i++) {
		d = $i
		if (d ~ /\.skel\.h$/) { n = split(d, p, "/"); print src ":" p[n]; bpf[src] = 1 }
		else if (exists(d)) dep[src, ++nd[src]] = d
		else if (d ~ /^bpf\//) bpf[src] = 1
	}
}
END {
	for (changed = 1; changed; ) {
		changed = 0
		for (s in srcs) {
			if (bpf[s]) continue
			for (k = 1; k <= nd[s]; k++) {
				c = dep[s, k]; sub(/\.h$/, ".c", c)
				if ((c in srcs) && bpf[c]) { bpf[s] = 1; changed = 1; break }
			}
		}
	}
	for (s in bpf) if (bpf[s]) print s ":libbpf"
}'
