#!/usr/bin/env bash
# An analysis file is untrusted input to npreport (docs/SECURITY.md): its
# labels (host names, flow keys, URL paths) go into gnuplot scripts, and
# gnuplot runs `...` as a shell command even inside double quotes, and a
# newline would start a command of its own. genana puts such text into every
# flow key; rendering the plots must run none of it. No root needed.
. "$(dirname "$0")/../lib/e2e.sh"
e2e_init sec_report_labels
GENANA=$NP_BUILD/tools/genana
[ -x "$NPREPORT" ] && [ -x "$GENANA" ] || e2e_skip "build $NPREPORT and $GENANA first"
T=$E2E_TMP
i=0
for src in "10.7\`touch $T/pwned-bq\`" "10.7\$(touch $T/pwned-dollar)" \
	   $'10.7"\nsystem "touch '"$T"'/pwned-nl"\n#' $'10.7\n!touch '"$T"'/pwned-bang\n'; do
	i=$((i + 1))
	"$GENANA" -o "$T/a$i.npa" --src "$src"
	check "genana wrote analysis $i" test -s "$T/a$i.npa"
	"$NPREPORT" "$T/a$i.npa" --plots "$T/plots$i" > /dev/null 2>"$T/err$i"
	check "npreport --plots exits 0 on label $i" test $? -eq 0
	check "no script carries a backquote" bash -c "! grep -q '\`' '$T'/plots$i/*.gp"
done
check "nothing the labels asked for ran" bash -c "! ls '$T'/pwned-* 2>/dev/null | grep -q ."
if command -v gnuplot >/dev/null; then
	check "the plots were still rendered" bash -c "ls '$T'/plots1/*.png | grep -q ."
fi
e2e_finish
