# bench/recpaced.sh: perf script -F comm,pid,ip,sym in, -F comm,ip,sym out,
# one recorder's view. Variables: me (the recorder's PID), tags (its BPF
# programs' tags, space-separated). Other nprec processes are renamed
# "other-nprec"; a sample whose chain has a BPF program of another tag is
# renamed "foreign-bpf" (outside bench/recshare.py's --workload), so
# neither counts as this recorder's.
BEGIN { n = split(tags, t, " "); for (i = 1; i <= n; i++) mine[t[i]] = 1 }
function flush(   i) {
	if (head == "")
		return
	if (foreign)
		head = "foreign-bpf"
	print head
	for (i = 1; i <= nl; i++)
		print line[i]
	print ""
	head = ""; nl = 0; foreign = 0
}
/^[^ \t]/ {
	flush()
	p = $NF; $NF = ""; sub(/ +$/, "")
	head = ($0 ~ /^nprec/ && p != me) ? "other-" $0 : $0
	next
}
/^[ \t]*$/ { flush(); next }
{
	line[++nl] = $0
	if (match($2, /^bpf_prog_[0-9a-f]+_/) && !(substr($2, 10, RLENGTH - 10) in mine))
		foreign = 1
}
END { flush() }
