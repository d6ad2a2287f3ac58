#!/usr/bin/env bash
# The build as a packager and a BPF-less machine see it (issue 18):
#  - make install DESTDIR=... PREFIX=/usr/local puts the binaries and the man
#    pages where they belong; the installed binaries run; uninstall removes
#    exactly what install put there;
#  - every man page renders without a warning (groff, and mandoc's lint when
#    installed) and names every long option its binary's --help lists;
#  - make unit without the BPF toolchain builds only libbpf-free code (a
#    dry run: no clang, no bpftool, no skeleton, no -lbpf), and still runs
#    the recorder's libbpf-free tests;
#  - the BPF objects are built for the machine's architecture, or ARCH=.
# Needs no root and no network; makes nothing outside its temporary directory.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init build_install
cd "$E2E_ROOT" || exit 1
command -v groff >/dev/null || e2e_skip "groff missing (groff-base)"

dest=$E2E_TMP/dest
make --no-print-directory O="$NP_BUILD" install DESTDIR="$dest" PREFIX=/usr/local \
	> "$E2E_TMP/install.log" 2>&1
check "make install exits 0" test $? -eq 0
for f in bin/npanalyze bin/npreport; do
	check "installed $f, executable" test -x "$dest/usr/local/$f"
done
pages=(man1/npanalyze.1 man1/npreport.1)
if [ -x "$NP_BUILD/nprec" ]; then
	check "installed sbin/nprec, executable" test -x "$dest/usr/local/sbin/nprec"
	pages+=(man8/nprec.8)
fi
for p in "${pages[@]}"; do
	check "installed share/man/$p" test -f "$dest/usr/local/share/man/$p"
done
version=$(cat VERSION)
check "installed npreport --version says $version" \
	grep -q "^npreport $version " <("$dest/usr/local/bin/npreport" --version 2>&1)

# help_of BINARY: the --help of the binary and of its subcommands
help_of() {
	case $1 in
	nprec) "$NP_BUILD/nprec" --help ;;
	npanalyze) "$NP_BUILD/npanalyze" --help; "$NP_BUILD/npanalyze" patterns --help ;;
	npreport) "$NP_BUILD/npreport" --help; "$NP_BUILD/npreport" dump --help ;;
	esac 2>&1
}
for p in "${pages[@]}"; do
	page=$dest/usr/local/share/man/$p
	bin=$(basename "${p%.*}")
	warn=$(groff -man -Tascii -ww -z "$page" 2>&1)
	check "$p: groff renders it without warnings${warn:+ ($warn)}" test -z "$warn"
	if command -v mandoc >/dev/null; then
		warn=$(mandoc -T lint -W warning "$page" 2>&1)
		check "$p: mandoc -T lint finds nothing${warn:+ ($warn)}" test -z "$warn"
	fi
	check "$p: man -l renders NAME and EXIT STATUS" \
		grep -qzE "NAME.*EXIT STATUS" <(MANWIDTH=100 man -l "$page" 2>/dev/null)
	check "$p: @VERSION@ replaced by $version" grep -q "np $version" "$page"
	# one long line per paragraph, so no option is broken across lines
	text=$(groff -man -Tascii -P-cbou -rLL=5000n -rHY=0 "$page" 2>/dev/null)
	opts=$(help_of "$bin" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
	missing=
	for o in $opts; do
		grep -qE -- "$o([^a-z0-9-]|\$)" <<<"$text" || missing="$missing $o"
	done
	check "$p: names all $(wc -w <<<"$opts") long options of $bin's --help${missing:+ (missing:$missing)}" \
		test -z "$missing"
done

make --no-print-directory O="$NP_BUILD" uninstall DESTDIR="$dest" PREFIX=/usr/local \
	> "$E2E_TMP/uninstall.log" 2>&1
check "make uninstall removes every installed file" \
	test -z "$(find "$dest" -type f)"

# A machine without clang, bpftool, libbpf or BTF: what make unit would run.
dry=$E2E_TMP/dry.log
make --no-print-directory -n O="$E2E_TMP/nobpf" NO_BPF=1 CLANG=/nonexistent/clang \
	BPFTOOL=/nonexistent/bpftool unit > "$dry" 2>&1
check "make -n unit without BPF exits 0" test $? -eq 0
check "make unit without BPF runs no clang and no bpftool" \
	test -z "$(grep -E '/nonexistent/|bpftool|-target bpf' "$dry")"
check "make unit without BPF includes no skeleton and links no libbpf" \
	test -z "$(grep -E 'skel\.h|-lbpf' "$dry")"
check "make unit without BPF still builds a recorder test (rtest_cli)" \
	grep -q -- "-o $E2E_TMP/nobpf/unit/rtest_cli " "$dry"
check "make unit without BPF leaves out the BPF recorder tests (rtest_netcpu)" \
	test -z "$(grep -w rtest_netcpu "$dry")"

check "plain make builds the three binaries (the default goal is all)" \
	grep -q -- "-o $E2E_TMP/dflt/npanalyze " <(make -n O="$E2E_TMP/dflt" 2>&1)

# __TARGET_ARCH_ from uname -m, or ARCH=
case $(uname -m) in
x86_64) arch=x86 ;; aarch64) arch=arm64 ;; ppc64le) arch=powerpc ;; s390x) arch=s390 ;;
riscv64) arch=riscv ;; *) arch= ;;
esac
if [ -n "$arch" ]; then
	check "BPF objects built with -D__TARGET_ARCH_$arch on $(uname -m)" \
		grep -q -- "-D__TARGET_ARCH_$arch " <(make -n O="$E2E_TMP/arch" "$E2E_TMP/arch/bpf/hub.bpf.o" 2>&1)
fi
check "ARCH=arm64 builds BPF objects with -D__TARGET_ARCH_arm64" \
	grep -q -- "-D__TARGET_ARCH_arm64 " <(make -n O="$E2E_TMP/arch" ARCH=arm64 "$E2E_TMP/arch/bpf/hub.bpf.o" 2>&1)

e2e_finish
